"""The durable queue where two of its own moves meet: a forget while a queue takes over the segment a
killed process left (a real process), and a segment being created while another queue sweeps up after
processes that died creating theirs.

The moments in between are made to last with a gate in the one call that stands in them (the
take-over's read of the dead segment; the creator's lock) — the only stand-in: files, locks and the
other process are real.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from queue_helpers import Note, Target, leave_dead, note, on_disk, started_queues

from hermes_ctx_plugins.storage import segments
from hermes_ctx_plugins.storage.queue import SUFFIX, DurableQueue, forget_left

pytestmark = pytest.mark.skipif(not hasattr(os, "pread"), reason="POSIX files")


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    return tmp_path / "queue"


@pytest.fixture
def target(folder: Path) -> Target:
    return Target(folder)


@pytest.fixture
def queues(folder: Path, target: Target) -> Iterator[Callable[..., DurableQueue[Note]]]:
    yield from started_queues(folder, target, close_timeout=5, batch_size=1)


def bobs(record: Note) -> bool:
    return bool(record["owner"] == "bob")


def test_a_forget_while_a_dead_process_segment_is_taken_over_lets_none_of_its_records_through(
        queues: Callable[..., DurableQueue[Note]], target: Target, folder: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A killed process left alice's note and then bob's. The next queue is reading that segment when
    bob is forgotten: forget (this queue, then the files stopped queues left) must not return before
    those records are somewhere it looks. Alice's note is being applied meanwhile (the target holds
    it), so bob's is never in hand when forget runs: it must never be applied."""
    leave_dead(folder, [note("alice", "alice's plan"), note("bob", "bob's secret")])
    [dead] = folder.glob(f"*{SUFFIX}")
    assert b"bob's secret" in dead.read_bytes()

    reading, read = threading.Event(), threading.Event()
    real_pread = os.pread

    def pread(fd: int, length: int, offset: int) -> bytes:
        if threading.current_thread().name == "notes-writer" and not reading.is_set():
            reading.set()  # the take-over holds the dead segment and reads it ...
            assert read.wait(30)  # ... for as long as the test says
        return real_pread(fd, length, offset)

    monkeypatch.setattr(os, "pread", pread)
    target.gate.clear()  # alice's note, once taken over, stays in hand until forget has returned
    queue = queues()
    assert reading.wait(30), "the next queue is taking the dead segment over"

    returned: list[int] = []
    forgetting = threading.Thread(target=lambda: returned.append(
        queue.forget(bobs, wait=10) + forget_left(folder, queue.consumer, bobs)))
    forgetting.start()
    # Without the fix forget returns at once, before the records reach the queue; with it, forget waits
    # for the take-over, which goes on when the read is let through (how long this join lasts only
    # decides whether a broken forget is caught, never whether a correct one passes).
    forgetting.join(1.0)
    read.set()
    forgetting.join(30)
    disk = on_disk(folder)

    target.gate.set()
    assert queue.flush(10)
    assert target.texts() == ["alice's plan"], "bob's note never applied; alice's applied, once"
    assert b"bob's secret" not in disk, "nor left on disk when forget returned"
    assert returned == [1], "forget found it: in the queue that took it over"
    assert not dead.exists()


@pytest.fixture
def sweep_during_creation(folder: Path, monkeypatch: pytest.MonkeyPatch) -> Callable[[str], None]:
    """``arm(how)``: the next segment this process creates meets another queue's sweep between
    creating its temporary file and locking it — ``"before"``: the sweep deletes it before the
    creator tries the lock; ``"during"``: the sweep holds the lock when the creator tries it."""
    real_lock = segments._try_lock

    def arm(how: str) -> None:
        armed = [True]

        def try_lock(fd: int) -> bool:
            temps = [p for p in folder.glob(f".*{SUFFIX}.tmp") if p.stat().st_ino == os.fstat(fd).st_ino]
            if not (armed[0] and temps):
                return real_lock(fd)
            armed[0] = False
            if how == "before":
                segments.sweep_creations(folder)  # what a queue starting in another process does
                return real_lock(fd)
            sweeper = os.open(temps[0], os.O_RDWR)  # that sweep, caught holding the temporary file
            assert real_lock(sweeper)
            try:
                return real_lock(fd)
            finally:
                temps[0].unlink()
                os.close(sweeper)

        monkeypatch.setattr(segments, "_try_lock", try_lock)

    return arm


@pytest.mark.parametrize("how", ["before", "during"])
def test_a_segment_swept_while_being_created_is_created_again_and_the_queue_works(
        queues: Callable[..., DurableQueue[Note]], target: Target, folder: Path,
        sweep_during_creation: Callable[[str], None], how: str) -> None:
    folder.mkdir()
    sweep_during_creation(how)
    queue = queues()
    queue.put(note("alice", "kept"))
    [segment] = folder.glob(f"*{SUFFIX}")
    assert b"kept" in segment.read_bytes() and not list(folder.glob(f".*{SUFFIX}.tmp"))
    assert queue.flush(10) and target.texts() == ["kept"]
    queues().flush(10)  # another queue's take-over: the new segment is held, so it is left alone
    queue.put(note("alice", "after"))
    assert queue.flush(10) and target.texts() == ["kept", "after"] and segment.exists()


@pytest.mark.parametrize("stops", ["before", "while listed"])
def test_an_ordered_queue_sees_what_a_queue_stopping_as_it_starts_hands_over(
        tmp_path: Path, stops: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A queue stopping hands what it could not apply to the backlog, then retires its segment. A starting ordered
    queue looked for the backlog first and the segments second, unlocked: a hand-over between the two looked like
    nothing left, and the new session's first record went to the service before the last session's (a red-team
    pass). Whatever moment the stop falls at, one of the two looks sees the record."""
    from queue_helpers import Notes

    from hermes_ctx_plugins.storage import leftovers
    folder, backlog = tmp_path / "q", tmp_path / "backlog.jsonl"
    down = Target(folder)
    down.down = True
    stopping = DurableQueue(folder, Notes(down), backlog=backlog, ordered=True)
    stopping.start()
    stopping.put(note("u", "OLD"))
    time.sleep(0.2)  # its writer tried the service, which is down
    target = Target(folder)

    class SlowToOpen(Notes):  # its writer makes a client first (an SDK's), while the first record is put
        def open(self) -> Any:
            time.sleep(0.2)
            return super().open()

    starting = DurableQueue(folder, SlowToOpen(target), backlog=backlog, ordered=True)
    if stops == "before":
        stopping.close(0.1)
    else:
        listed = leftovers._segment_names

        def stop_while_listed(directory: Path) -> list[str]:
            monkeypatch.setattr(leftovers, "_segment_names", listed)
            stopping.close(0.1)
            return listed(directory)

        monkeypatch.setattr(leftovers, "_segment_names", stop_while_listed)
    starting.start()
    starting.put(note("u", "NEW"))
    starting.flush(5)
    starting.close(2)
    assert [n["text"] for n in target.applied] == ["OLD", "NEW"]


@pytest.mark.parametrize("ordered", [True, False])
def test_a_folder_named_like_a_segment_is_passed_over(tmp_path: Path, ordered: bool) -> None:
    """A folder named like a segment (made by hand, or a tool copying a tree) made every take-over fail with
    IsADirectoryError: nothing was ever applied again (a red-team pass)."""
    import json

    from queue_helpers import Notes
    folder, backlog = tmp_path / "q", tmp_path / "backlog.jsonl"
    folder.mkdir()
    (folder / f"{1000:020d}-1-aaaaaaaa{SUFFIX}").mkdir()
    (folder / f"{1001:020d}-1-bbbbbbbb{SUFFIX}").write_bytes(json.dumps(note("u", "OLD")).encode() + b"\n")
    target = Target(folder)
    queue = DurableQueue(folder, Notes(target), backlog=backlog, ordered=ordered)
    queue.start()
    queue.put(note("u", "NEW"))
    assert queue.flush(5)
    queue.close(2)
    assert sorted(target.texts()) == ["NEW", "OLD"] and queue.last_error == ""


def test_an_ordered_start_takes_over_for_a_bounded_time_and_the_writer_the_rest(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each left file costs two fsyncs: 3,000 of them held a turn's first write 9 s in an ordered start (a red-team
    pass). The start takes files over for ORDERED_WAIT in all; the writer takes the rest over, each record once."""
    import json

    from queue_helpers import Notes

    from hermes_ctx_plugins.storage import queue as queue_module
    folder = tmp_path / "q"
    folder.mkdir()
    for i in range(200):
        (folder / f"{1000 + i:020d}-1-{i:08x}{SUFFIX}").write_bytes(json.dumps(note("u", f"OLD{i}")).encode() + b"\n")
    monkeypatch.setattr(queue_module, "ORDERED_WAIT", 0.0)  # the time is up before the first file
    target = Target(folder)
    queue = DurableQueue(folder, Notes(target), backlog=tmp_path / "backlog.jsonl", ordered=True)
    queue.start()
    assert len(list(folder.glob(f"*{SUFFIX}"))) > 150  # left for the writer, not taken over by the start
    queue.put(note("u", "NEW"))
    assert queue.flush(10)
    queue.close(2)
    applied = target.texts()
    assert sorted(applied) == sorted([f"OLD{i}" for i in range(200)] + ["NEW"])

"""The durable write-behind queue itself (``storage/queue.py``), with real segment and progress files.

The consumer here is the smallest honest one (``queue_helpers.py``): notes (``{"owner", "text"}``)
applied to a list, the progress in ``ProgressFiles`` beside the segments, as the remote providers keep theirs. What
ctx-local and the remote providers add on top is tested with them (``test_local_queue.py``,
``test_remote_queue_crash.py``).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from queue_helpers import Notes, Target, note, on_disk, started_queues

from hermes_ctx_plugins.storage.queue import SUFFIX, forget_left, inspect, left_behind
from hermes_ctx_plugins.testing import wait_until


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    return tmp_path / "queue"


@pytest.fixture
def target(folder: Path) -> Target:
    return Target(folder)


@pytest.fixture
def queues(folder: Path, target: Target) -> Iterator[Any]:
    """``start(**settings)``: a started queue of notes in ``folder``; all closed after the test."""
    yield from started_queues(folder, target, close_timeout=0)


def test_a_record_is_in_its_segment_when_put_returns_and_nothing_is_left_after_a_clean_close(
        queues: Any, target: Target, folder: Path) -> None:
    target.gate.clear()  # the writer cannot apply anything yet
    queue = queues()
    queue.put(note("alice", "kept before applied"))
    [segment] = folder.glob(f"*{SUFFIX}")
    assert b"kept before applied" in segment.read_bytes() and target.applied == []
    target.gate.set()
    assert queue.flush(10) and target.texts() == ["kept before applied"]
    assert queue.close(5)
    assert list(folder.iterdir()) == [], "a clean close retires the segment and its progress"


def test_a_stopping_queue_hands_over_what_it_could_not_apply_and_the_next_takes_it_over(
        queues: Any, target: Target, folder: Path) -> None:
    backlog = folder.parent / "backlog.jsonl"
    target.down = True
    first = queues(backlog=backlog)
    for n in range(3):
        first.put(note("alice", f"waiting {n}"))
    assert wait_until(lambda: target.attempts)
    assert first.close(0.2) is False and first.pending == 3
    assert [json.loads(line)["text"] for line in backlog.read_text().splitlines()] == [f"waiting {n}" for n in range(3)]
    assert oct(backlog.stat().st_mode & 0o777) == "0o600"
    assert not list(folder.glob(f"*{SUFFIX}")), "its segment went with the hand-over"
    assert left_behind(folder, target.progress(), backlog) == 3

    target.down = False
    second = queues(backlog=backlog)
    assert second.flush(10)
    assert target.texts() == [f"waiting {n}" for n in range(3)], "each once, in order"
    assert not backlog.exists() and left_behind(folder, target.progress(), backlog) == 0


def test_a_full_queue_drops_its_oldest_and_says_so_once_per_spell(queues: Any, target: Target) -> None:
    target.down = True
    queue = queues(limit=3)
    for n in range(5):
        queue.put(note("alice", f"note {n}"))
    assert queue.pending == 3 and queue.stats.dropped == 2
    consumer = queue.consumer
    assert isinstance(consumer, Notes) and consumer.overflows == 1
    target.down = False
    assert queue.flush(10)
    applied = target.texts()
    # the newest are kept; of the oldest, one the writer had in hand when the queue filled may survive
    assert applied[1:] == ["note 3", "note 4"] and applied[0] in ("note 0", "note 1", "note 2"), applied
    queue.put(note("alice", "note 5"))
    assert queue.flush(10) and consumer.overflows == 1, "no overflow in between: nothing more to say"


def test_a_record_that_keeps_failing_is_quarantined_and_never_holds_up_the_rest(
        queues: Any, target: Target) -> None:
    target.poison, target.refused = {"poison"}, {"refused"}
    queue = queues(max_retries=3)
    for text in ("before", "poison", "refused", "after"):
        queue.put(note("alice", text))
    assert queue.flush(10)
    assert target.texts() == ["before", "after"]
    assert [(json.loads(raw)["text"], error, attempts) for raw, error, attempts in target.quarantined] == [
        ("poison", "ValueError: cannot take poison", 3), ("refused", "PermissionError: refused refused", 1)]
    assert queue.stats.quarantined == 2 and queue.stats.applied == 2


def test_an_outage_keeps_everything_and_the_target_gets_each_record_once_when_back(
        queues: Any, target: Target) -> None:
    target.down = True
    queue = queues(batch_size=2)
    for n in range(5):
        queue.put(note("alice", f"note {n}"))
    assert wait_until(lambda: len(target.attempts) >= 4), "retried while down"
    assert queue.flush(0.2) is False and queue.last_error == "ConnectionError: the target is down"
    target.down = False
    assert queue.flush(10) and target.texts() == [f"note {n}" for n in range(5)]
    assert queue.last_error == "" and target.quarantined == []


def test_forget_racing_puts_never_applies_a_forgotten_record(queues: Any, target: Target, folder: Path) -> None:
    """Notes of alice and bob are put by another thread while the target applies them slowly; alice
    is forgotten midway. None of hers accepted before forget began is applied after it returned (nor
    left on disk); every one of bob's is applied exactly once; hers accepted after it are applied."""
    target.delay = 0.002
    queue = queues(batch_size=4)
    forgetting, forgotten = threading.Event(), threading.Event()
    before: list[str] = []  # alice's notes put before forget began
    after: list[str] = []  # and those put once it had returned
    bobs: list[str] = []

    def putter() -> None:
        for n in range(400):
            owner = "alice" if n % 2 else "bob"
            text = f"{owner} note {n}"
            done = forgotten.is_set()
            queue.put(note(owner, text))
            if owner == "bob":
                bobs.append(text)
            elif done:
                after.append(text)
            elif not forgetting.is_set():
                before.append(text)

    thread = threading.Thread(target=putter)
    thread.start()
    assert wait_until(lambda: len(target.applied) >= 40), "the target is applying"
    forgetting.set()
    removed = queue.forget(lambda n: n["owner"] == "alice", wait=10)
    applied_when_forgotten = len(target.texts())
    forgotten.set()
    disk = on_disk(folder)
    thread.join(30)
    assert queue.flush(30)

    texts = target.texts()
    assert removed > 0
    late = set(texts[applied_when_forgotten:]) & set(before)
    assert not late, f"forgotten notes applied after forget returned: {sorted(late)[:3]}"
    assert not [text for text in before if f'"{text}"'.encode() in disk], "no forgotten note stays on disk"
    assert sorted(t for t in texts if t.startswith("bob")) == sorted(bobs), "bob's: all, each once"
    assert set(after) <= set(texts), "a note put after forgetting is applied"
    assert len(texts) == len(set(texts))


def test_forget_leaves_nothing_of_the_user_in_the_running_queues_files(queues: Any, target: Target,
                                                                       folder: Path) -> None:
    queue = queues()
    queue.put(note("alice", "alice applied"))
    queue.put(note("bob", "bob applied"))
    assert queue.flush(10) and b"alice applied" in on_disk(folder), "the premise: applied, still in the segment"
    target.down = True
    queue.put(note("alice", "alice waiting"))
    queue.put(note("bob", "bob waiting"))
    assert queue.forget(lambda n: n["owner"] == "alice", wait=1) == 1
    assert b"alice" not in on_disk(folder) and b"bob waiting" in on_disk(folder)
    target.down = False
    assert queue.flush(10) and target.texts() == ["alice applied", "bob applied", "bob waiting"]


def test_forget_left_clears_a_user_from_stopped_queues_files_applied_or_not(
        queues: Any, target: Target, folder: Path) -> None:
    backlog = folder.parent / "backlog.jsonl"
    # a queue that handed what it could not apply over to the backlog
    target.down = True
    handing = queues(backlog=backlog)
    handing.put(note("alice", "alice handed over"))
    handing.put(note("bob", "bob handed over"))
    assert handing.close(0.1) is False and backlog.exists()
    # and one (without a backlog) that stopped with notes unapplied: its segment stays, applied ones too
    target.down = False
    left = queues()
    left.put(note("alice", "alice applied"))
    assert left.flush(10)
    target.down = True
    left.put(note("alice", "alice waiting"))
    left.put(note("bob", "bob waiting"))
    assert left.close(0.1) is False
    [segment] = folder.glob(f"*{SUFFIX}")
    assert b"alice applied" in segment.read_bytes(), "the premise: applied text stays until the segment goes"

    removed = forget_left(folder, Notes(target), lambda n: n["owner"] == "alice", backlog=backlog)
    assert removed == 2, "her waiting notes: one in the segment, one in the backlog (the applied one was applied)"
    assert b"alice" not in on_disk(folder, backlog)
    assert b"bob waiting" in on_disk(folder) and b"bob handed over" in backlog.read_bytes()
    assert [state.waiting for state in inspect(folder, target.progress())] == [1]

    target.down = False
    assert queues(backlog=backlog).flush(10)
    assert target.texts() == ["alice applied", "bob waiting", "bob handed over"], "segments first, then the backlog"

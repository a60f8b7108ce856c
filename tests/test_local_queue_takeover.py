"""ctx-local's queue taking over the segment of a process killed while the take-over was under way:
the segment is replayed from the progress its queue had reached when it was claimed, so a memory that
process stored — and the user removed since — does not come back (a real process and real SQLite)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import threading
from collections.abc import Iterable, Sequence
from pathlib import Path

import pytest

from hermes_ctx_plugins.memory.local.queue import SUFFIX, WriteBehindQueue
from hermes_ctx_plugins.storage.records import Record
from hermes_ctx_plugins.storage.sqlite.memory import LocalStore

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")

# A process whose queue stores one turn when told, then queues another its store never takes, and is killed.
CHILD = textwrap.dedent("""
    import sys, threading, time
    from pathlib import Path
    from hermes_ctx_plugins.memory.local.queue import WriteBehindQueue
    from hermes_ctx_plugins.storage.records import Record
    from hermes_ctx_plugins.storage.sqlite.memory import LocalStore

    db, folder = Path(sys.argv[1]), Path(sys.argv[2])
    stuck = threading.Event()

    class Store(LocalStore):
        def write(self, records, **kwargs):
            if stuck.is_set():
                threading.Event().wait()  # never returns: what is queued now stays in the segment
            return super().write(records, **kwargs)

    def turn(text):
        return Record(key=text, kind="turn", user_id="alice", chat_id="c1", session_id="s1", user_text=text,
                      assistant_text="ok", created_at=time.time())

    queue = WriteBehindQueue(folder, lambda: Store(db))
    queue.start()
    assert queue.flush(30)
    print("started", flush=True)
    sys.stdin.readline()
    queue.put(turn("stored, then removed by the user"))
    assert queue.flush(30)
    stuck.set()
    queue.put(turn("queued, never stored by it"))
    print("stored", flush=True)
    time.sleep(3600)
""")


class PausedSink:
    """The taking-over queue's store, pausing after its first read of the progress until ``go`` is set."""

    def __init__(self, store: LocalStore) -> None:
        self.store = store
        self.read, self.go = threading.Event(), threading.Event()

    def progress(self) -> dict[str, int]:
        found = self.store.progress()
        if not self.read.is_set():
            self.read.set()
            assert self.go.wait(30)
        return found

    def write(self, records: Sequence[Record], *, segment: str = "", offset: int = 0) -> int:
        return self.store.write(records, segment=segment, offset=offset)

    def quarantine(self, segment: str, offset: int, raw: str, error: str, attempts: int) -> None:
        self.store.quarantine(segment, offset, raw, error, attempts)

    def drop_progress(self, segments: Iterable[str]) -> None:
        self.store.drop_progress(segments)

    def close(self) -> None:
        pass


def test_a_take_over_replays_from_the_progress_reached_when_it_claims_the_segment(tmp_path: Path) -> None:
    db, folder = tmp_path / "memory.db", tmp_path / "memory.db.queue"
    child = subprocess.Popen([sys.executable, "-c", CHILD, str(db), str(folder)], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert child.stdout is not None and child.stdin is not None
    store = LocalStore(db)
    sink = PausedSink(store)
    taking = threading.Thread(target=lambda: WriteBehindQueue(folder, lambda: LocalStore(db)).replay(sink))
    try:
        assert child.stdout.readline() == "started\n", child.stderr.read() if child.stderr else ""
        taking.start()  # another queue starts taking over what stopped queues left ...
        assert sink.read.wait(30), "... and has read how far each segment is stored: the running one, not at all"
        child.stdin.write("go\n")
        child.stdin.flush()
        assert child.stdout.readline() == "stored\n"
    finally:
        os.kill(child.pid, signal.SIGKILL)
        child.communicate()

    # the user removes the stored memory (what ctx_memory_forget does)
    [stored] = list(store.memories(user_id="alice"))
    assert stored.user_text == "stored, then removed by the user"
    assert store.forget([stored.id], namespace="", user_id="alice", chat_id="c1") == [stored.id]

    sink.go.set()  # the take-over goes on: the killed process's segment is nobody's now
    taking.join(30)
    assert [m.user_text for m in store.memories(user_id="alice")] == ["queued, never stored by it"], \
        "the removed memory stays removed; the turn the killed process never stored is stored now"
    assert not list(folder.glob(f"*{SUFFIX}")), "the segment was taken over and deleted"
    store.close()

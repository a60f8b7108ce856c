"""The smallest honest consumer of the durable queue, shared by its test modules and the processes
they start: notes (``{"owner", "text"}``) applied to a list, the progress in :class:`ProgressFiles`
beside the segments, as the remote providers keep theirs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

from hermes_ctx_plugins.storage.queue import Consumer, DurableQueue, Failure, ProgressFiles

Note = dict[str, Any]


class Target:
    """Where notes go: a list, with switches for the failures a real target has."""

    def __init__(self, directory: Path) -> None:
        self.files = ProgressFiles(directory)
        self.applied: list[Note] = []
        self.quarantined: list[tuple[str, str, int]] = []
        self.attempts: list[str] = []
        #: down: every write fails as an outage
        self.down = False
        #: texts that fail by themselves (retried, then quarantined) / are refused (quarantined at once)
        self.poison: set[str] = set()
        self.refused: set[str] = set()
        #: seconds each write takes; cleared: writes wait until it is set
        self.delay = 0.0
        self.gate = threading.Event()
        self.gate.set()
        self.lock = threading.Lock()

    def write(self, records: Sequence[Note], *, segment: str = "", offset: int = 0) -> int:
        assert self.gate.wait(30)
        self.attempts.extend(note["text"] for note in records)
        if self.down:
            raise ConnectionError("the target is down")
        for note in records:
            if note["text"] in self.refused:
                raise PermissionError(f"refused {note['text']}")
            if note["text"] in self.poison:
                raise ValueError(f"cannot take {note['text']}")
        time.sleep(self.delay)
        with self.lock:
            self.applied.extend(records)
        self.files.record(segment, offset)
        return len(records)

    def quarantine(self, segment: str, offset: int, raw: str, error: str, attempts: int) -> None:
        self.quarantined.append((raw, error, attempts))
        self.files.record(segment, offset)

    def progress(self) -> dict[str, int]:
        return self.files.progress()

    def drop_progress(self, segments: Iterable[str]) -> None:
        self.files.drop_progress(segments)

    def close(self) -> None:
        pass

    def texts(self) -> list[str]:
        with self.lock:
            return [note["text"] for note in self.applied]


class Notes(Consumer[Note]):
    name = "notes"
    backoff = 0.01
    max_backoff = 0.05

    def __init__(self, target: Target) -> None:
        self.target = target
        self.overflows = 0

    def encode(self, record: Note) -> bytes:
        return json.dumps(record).encode("ascii")

    def decode(self, line: bytes) -> Note:
        note = json.loads(line)
        if not isinstance(note, dict):
            raise ValueError("not a note")
        return note

    def open(self) -> Target:
        return self.target

    def failure(self, exc: Exception) -> Failure:
        if isinstance(exc, ConnectionError):
            return Failure.OUTAGE
        return Failure.REJECT if isinstance(exc, PermissionError) else Failure.RECORD

    def overflowed(self) -> None:
        self.overflows += 1


def note(owner: str, text: str) -> Note:
    return {"owner": owner, "text": text}


def on_disk(folder: Path, *more: Path) -> bytes:
    """Everything the queue's files hold."""
    files = [p for p in folder.rglob("*") if p.is_file()] + [p for p in more if p.exists()]
    return b"".join(p.read_bytes() for p in files)


# A process that queues notes and dies (os._exit) before any is applied: its target never opens.
DYING = """
import json, os, sys
from pathlib import Path
from queue_helpers import Notes, Target
from hermes_ctx_plugins.storage.queue import DurableQueue

folder, settings, notes = Path(sys.argv[1]), json.loads(sys.argv[2]), json.loads(sys.argv[3])
target = Target(folder)
target.gate.clear()
queue = DurableQueue(folder, Notes(target), **settings)
queue.start()
for note in notes:
    queue.put(note)
os._exit(9)
"""


def leave_dead(folder: Path, notes: Sequence[Note], **settings: Any) -> None:
    """Run a process that queues ``notes`` (in a queue with ``settings``) and dies holding them all."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(Path(__file__).parent), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run([sys.executable, "-c", DYING, str(folder), json.dumps(settings), json.dumps(list(notes))],
                          capture_output=True, text=True, env=env, timeout=60)
    assert done.returncode == 9, done.stderr


def started_queues(folder: Path, target: Target, *, close_timeout: float,
                   **defaults: Any) -> Iterator[Callable[..., DurableQueue[Note]]]:
    """A fixture body: ``start(**settings)`` starts a queue of notes in ``folder`` (``defaults``
    under ``settings``); afterwards the target is released (up, ungated) and every queue closed."""
    made: list[DurableQueue[Note]] = []

    def start(**settings: Any) -> DurableQueue[Note]:
        queue = DurableQueue(folder, Notes(target), **{**defaults, **settings})
        queue.start()
        made.append(queue)
        return queue

    yield start
    target.down = False
    target.gate.set()
    for queue in made:
        queue.close(close_timeout)

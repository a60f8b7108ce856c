"""The files of a durable queue's log (see :mod:`~hermes_ctx_plugins.storage.queue`).

A *segment* (``<time>-<pid>-<random>.seg``) holds records one line each, appended by the one queue
that holds its ``flock``; a segment nobody holds was left by a queue that stopped. Its progress —
how far it is applied — is kept by the sink; :class:`ProgressFiles` keeps it for sinks without
transactions of their own. What a status command shows of the files stopped queues left
(:func:`inspect`, :func:`left_behind`) is here too; taking them over and forgetting in them is in
:mod:`~hermes_ctx_plugins.storage.leftovers`.

Names are made durable like contents: a segment's creation, and every deletion, syncs the folder,
so a power cut can neither lose a segment records were moved into nor bring back one that was
retired (whose progress is dropped next) or rewritten without a forgotten user's records.
"""

from __future__ import annotations

import contextlib
import os
import sys
import time
import uuid
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from .applying import Sink
from .files import atomic_write, locked, sync_folder

if sys.platform == "win32":
    import msvcrt
else:
    import fcntl

T = TypeVar("T")

SUFFIX = ".seg"
_PROGRESS = ".done"
_READ_CHUNK = 1 << 20
#: attempts at creating a segment whose temporary file another process's sweep deleted
_CREATE_TRIES = 5
#: a record as read back: its end offset, its line (always ending in a newline), and why it cannot be
#: applied (a line a crash cut short) or None
Entry = tuple[int, bytes, Exception | None]


@dataclass
class Segment:
    """A segment this process holds: its name, path, open (locked) descriptor and size."""

    name: str
    path: Path
    fd: int
    size: int = 0


def create_segment(directory: Path) -> Segment:
    """A new, empty segment in ``directory``, locked by this process, its name on the disk."""
    for _ in range(_CREATE_TRIES):
        segment = _new_segment(directory)
        if segment is not None:
            sync_folder(directory)
            return segment
    raise OSError(f"cannot create a queue segment in {directory}: its temporary file was deleted "
                  f"{_CREATE_TRIES} times while being created")


def _new_segment(directory: Path) -> Segment | None:
    """A new segment; None when another process's :func:`sweep_creations` deleted it first."""
    name = f"{time.time_ns():020d}-{os.getpid()}-{uuid.uuid4().hex[:8]}{SUFFIX}"
    path = directory / name
    # Locked before it has its real name, so no queue can take it for a dead one's. Until it is
    # locked a queue starting elsewhere can take its temporary file for one a process died creating
    # and delete it: we lose the lock to that sweep, or the rename finds no file. Then: a new name.
    temp = directory / f".{name}.tmp"
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_APPEND, 0o600)
    try:
        held = _try_lock(fd)
        if held and sys.platform != "win32":
            os.replace(temp, path)
    except FileNotFoundError:
        held = False  # swept before we held it: the rename found no file
    except BaseException:
        os.close(fd)
        temp.unlink(missing_ok=True)
        raise
    if not held:
        os.close(fd)
        temp.unlink(missing_ok=True)  # the sweep holding it deletes it too
        return None
    if sys.platform == "win32":  # pragma: no cover - an open file cannot be renamed there
        os.close(fd)
        os.replace(temp, path)
        fd = os.open(path, os.O_WRONLY | os.O_APPEND)
        _try_lock(fd)
    return Segment(name=name, path=path, fd=fd)


def sweep_creations(directory: Path) -> None:
    """Delete the temporary files of segments whose process died while creating them (one being
    created now may be deleted too: its creator then starts again with a new name)."""
    for temp in directory.glob(f".*{SUFFIX}.tmp"):
        if (fd := claim(temp)) is not None:
            temp.unlink(missing_ok=True)
            os.close(fd)


def claim(path: Path) -> int | None:
    """Open and lock a file nobody holds; None when a live process has it (or it just went)."""
    try:
        fd = os.open(path, os.O_RDWR)
    except FileNotFoundError:
        return None
    if _try_lock(fd):
        try:
            if os.fstat(fd).st_ino == os.stat(path).st_ino:
                return fd
        except FileNotFoundError:
            pass  # its owner finished and deleted it after we opened it
    os.close(fd)
    return None


def exclusive(directory: Path, *, wait: bool = True) -> contextlib.AbstractContextManager[None]:
    """Hold the lock of the queue folder ``directory`` (a sidecar beside it), across processes and
    threads: taking files over, handing records over and forgetting hold it, so each sees the others'
    work whole — never records read out of a file but not yet queued elsewhere. ``wait=False``: raise
    :class:`BlockingIOError` when another holds it."""
    return locked(directory, wait=wait)


def retire(path: Path, sink: Sink[T] | None) -> None:
    """Delete a segment, then its progress (else the next scan forgets it)."""
    # the file first, for good: progress without its file is known to be done; the reverse would replay it
    path.unlink(missing_ok=True)
    sync_folder(path.parent)
    if sink is not None:
        sink.drop_progress([path.name])


def write_all(fd: int, data: bytes, *, sync: bool = False) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]
    if sync:
        os.fsync(fd)


def read_lines(fd: int, offset: int) -> Iterator[tuple[int, bytes, bool]]:
    """``(end offset, line, complete)`` for each record from ``offset``; the last may be incomplete."""
    size = os.fstat(fd).st_size
    position = min(offset, size)
    rest = b""
    while position < size:
        chunk = os.pread(fd, min(_READ_CHUNK, size - position), position)
        if not chunk:
            break
        position += len(chunk)
        data = rest + chunk
        start = 0
        base = position - len(data)
        while (newline := data.find(b"\n", start)) != -1:
            yield base + newline + 1, data[start:newline + 1], True
            start = newline + 1
        rest = data[start:]
    if rest:
        yield position, rest, False


def entries(fd: int, offset: int = 0) -> list[Entry]:
    """The records of a file from ``offset``; one a crash cut short is completed and carries the
    error it will be quarantined with."""
    torn = ValueError("incomplete record: the process writing it died in the middle of the write")
    return [(end, line, None) if complete else (end, line + b"\n", torn)
            for end, line, complete in read_lines(fd, offset)]


def file_entries(path: Path) -> list[Entry] | None:
    """:func:`entries` of the file at ``path``; None when there is none."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        return None
    try:
        return entries(fd)
    finally:
        os.close(fd)


class ProgressFiles:
    """Progress for a sink without transactions: one small file per segment (``<segment>.done``,
    holding the offset), replaced atomically, and only by the process holding that segment — so no
    lock is needed besides the segment's own."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory

    def record(self, segment: str, offset: int) -> None:
        atomic_write(self.directory / f"{segment}{_PROGRESS}", str(offset).encode("ascii"))

    def progress(self) -> dict[str, int]:
        found = {}
        for path in self.directory.glob(f"*{SUFFIX}{_PROGRESS}"):
            with contextlib.suppress(OSError, ValueError):  # gone meanwhile; never half-written
                found[path.name.removesuffix(_PROGRESS)] = int(path.read_text(encoding="ascii"))
        return found

    def drop_progress(self, segments: Iterable[str]) -> None:
        for name in segments:
            (self.directory / f"{name}{_PROGRESS}").unlink(missing_ok=True)


@dataclass(frozen=True)
class SegmentState:
    """What a status command shows about one queue segment."""

    path: Path
    waiting: int
    #: a running queue holds it (the next queue to start takes it over once that one stops)
    live: bool


def each_segment(directory: Path) -> Iterator[tuple[Path, int]]:
    """Every segment in ``directory`` with a descriptor open for reading (closed after its turn)."""
    for path in sorted(directory.glob(f"*{SUFFIX}")):
        if not path.is_file():  # a folder named like one
            continue
        try:
            fd = os.open(path, os.O_RDONLY)
        except FileNotFoundError:
            continue  # retired meanwhile
        try:
            yield path, fd
        finally:
            os.close(fd)


def inspect(directory: Path, progress: dict[str, int]) -> list[SegmentState]:
    """The segments in ``directory`` and how many records each still has to apply."""
    states = []
    for path, fd in each_segment(directory):
        live = not _try_lock(fd)
        if not live and sys.platform != "win32":  # closing the file releases msvcrt's lock
            fcntl.flock(fd, fcntl.LOCK_UN)
        states.append(SegmentState(path, sum(1 for _ in read_lines(fd, progress.get(path.name, 0))), live))
    return states


def left_behind(directory: Path, progress: dict[str, int], backlog: Path | None = None) -> int:
    """Records stopped queues left to apply: in the segments nobody holds, and in the backlog."""
    count = sum(state.waiting for state in inspect(directory, progress) if not state.live)
    return count + len((file_entries(backlog) if backlog is not None else None) or [])


def _try_lock(fd: int) -> bool:
    try:
        if sys.platform == "win32":  # pragma: no cover
            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
        else:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return False
    return True

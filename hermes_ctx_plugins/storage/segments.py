"""The files of a durable queue's log (see :mod:`~hermes_ctx_plugins.storage.queue`).

A *segment* (``<time>-<pid>-<random>.seg``) holds records one line each, appended by the one queue
that holds its ``flock``; a segment nobody holds was left by a queue that stopped. Its progress —
how far it is applied — is kept by the sink; :class:`ProgressFiles` keeps it for sinks without
transactions of their own. What a status command shows and what forgetting a user needs of the files
stopped queues left (:func:`inspect`, :func:`left_behind`, :func:`forget_left`) are here too.
"""

from __future__ import annotations

import contextlib
import os
import sys
import time
import uuid
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar, cast

from .applying import Consumer, Sink
from .files import atomic_write, locked

if sys.platform == "win32":
    import msvcrt
else:
    import fcntl

T = TypeVar("T")

SUFFIX = ".seg"
_PROGRESS = ".done"
_READ_CHUNK = 1 << 20
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
    """A new, empty segment in ``directory``, locked by this process."""
    name = f"{time.time_ns():020d}-{os.getpid()}-{uuid.uuid4().hex[:8]}{SUFFIX}"
    path = directory / name
    # Locked before it has its real name, so no other process can take it for a dead one.
    temp = directory / f".{name}.tmp"
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_APPEND, 0o600)
    if not _try_lock(fd):  # pragma: no cover - nobody else knows the name yet
        os.close(fd)
        raise OSError(f"cannot lock the new queue segment {temp}")
    if sys.platform == "win32":  # pragma: no cover - an open file cannot be renamed there
        os.close(fd)
        os.replace(temp, path)
        fd = os.open(path, os.O_WRONLY | os.O_APPEND)
        _try_lock(fd)
    else:
        os.replace(temp, path)
    return Segment(name=name, path=path, fd=fd)


def sweep_creations(directory: Path) -> None:
    """Delete the temporary files of segments whose process died while creating them."""
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


def retire(path: Path, sink: Sink[T] | None) -> None:
    """Delete a segment, then its progress (else the next scan forgets it)."""
    # the file first: progress without its file is known to be done; the reverse would replay it
    path.unlink(missing_ok=True)
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


def forget_left(directory: Path, consumer: Consumer[T], match: Callable[[T], bool], *,
                backlog: Path | None = None) -> int:
    """Take the records ``match`` selects — and undecodable ones, which would only be quarantined —
    out of the files stopped queues left; how many were waiting. A segment holding a selected record,
    applied or not (its text must not stay on disk), is replaced by one with its other waiting
    records; the backlog is rewritten. Files a running queue holds are out of reach.

    :raises OSError: a file could not be rewritten (what it holds may remain)
    """
    removed = 0
    if backlog is not None:
        with locked(backlog):
            waiting = file_entries(backlog)
            kept = [line for _, line, error in waiting or [] if not _selected(consumer, line, error, match)]
            removed = len(waiting or []) - len(kept)
            if waiting is not None and not kept:
                backlog.unlink()
            elif removed:
                atomic_write(backlog, b"".join(kept))
    if not directory.is_dir():
        return removed
    sink = consumer.open()
    try:
        progress = sink.progress()
        for path in sorted(directory.glob(f"*{SUFFIX}")):
            fd = claim(path)
            if fd is None:
                continue
            try:
                removed += _forget_in_segment(path, fd, progress.get(path.name, 0), consumer, match, sink)
            finally:
                os.close(fd)
    finally:
        sink.close()
    return removed


def _forget_in_segment(path: Path, fd: int, offset: int, consumer: Consumer[T], match: Callable[[T], bool],
                       sink: Sink[T]) -> int:
    every = [(end, line, _selected(consumer, line, error, match)) for end, line, error in entries(fd)]
    if not any(selected for _, _, selected in every):
        return 0
    waiting = [(line, selected) for end, line, selected in every if end > offset]
    kept = b"".join(line for line, selected in waiting if not selected)
    if kept:
        replacement = create_segment(path.parent)
        try:
            write_all(replacement.fd, kept, sync=True)
        finally:
            os.close(replacement.fd)  # released: the next queue to start takes it over
    retire(path, sink)
    return sum(1 for _, selected in waiting if selected)


def _selected(consumer: Consumer[T], line: bytes, error: Exception | None, match: Callable[[T], bool]) -> bool:
    if error is not None:
        return True
    value, error = consumer.read(line)
    return error is not None or match(cast(T, value))


def _try_lock(fd: int) -> bool:
    try:
        if sys.platform == "win32":  # pragma: no cover
            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
        else:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return False
    return True

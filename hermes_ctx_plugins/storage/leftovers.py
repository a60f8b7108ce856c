"""What queues that stopped left in a durable queue's folder (see :mod:`~hermes_ctx_plugins.storage.queue`):
taking it over, and forgetting a user in it.

Left are the segments no process holds — their queue stopped before applying everything, or died —
and the *backlog* file a stopping queue hands what it could not apply to. Both work under the
folder's lock (:func:`~hermes_ctx_plugins.storage.segments.exclusive`): a take-over moves a file's
records into the taking queue before anyone can forget in the folder again, so a forget finds each
record either still in its file or already in a queue — never in between, in neither.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Protocol, TypeVar, cast

from .applying import Consumer, Sink
from .files import atomic_write, locked, sync_folder
from .segments import (
    SUFFIX,
    Entry,
    claim,
    create_segment,
    entries,
    exclusive,
    file_entries,
    retire,
    sweep_creations,
    write_all,
)

log = logging.getLogger("hermes_ctx_plugins.storage.queue")

T = TypeVar("T")
T_co = TypeVar("T_co", covariant=True)


class Forgetting(Protocol[T_co]):
    """A queue of this process a forget reaches (a :class:`~hermes_ctx_plugins.storage.queue.DurableQueue`)."""

    def forget_held(self, match: Callable[[T_co], bool], wait: float) -> int:
        """Take the records ``match`` selects out of the queue, holding the folder's lock; how many."""
        ...


def take_over(directory: Path, own: str, sink: Sink[T], absorb: Callable[[Sequence[Entry]], int],
              backlog: Path | None = None, *, wait: bool = True, until: float | None = None) -> int:
    """Give ``absorb`` what queues that stopped left in ``directory`` — each segment nobody holds but
    ``own`` from its progress on, then the ``backlog`` — deleting each file once absorbed; how many
    records ``absorb`` took. ``absorb`` must have them safely elsewhere when it returns. ``wait=False``: raise
    :class:`BlockingIOError` at once when another process holds the folder's lock. ``until``: a
    :func:`time.monotonic` time after which no further file is begun (what is left stays for the next look; each
    file costs two fsyncs, and thousands of them held a turn for seconds; a red-team pass)."""
    taken = 0
    with exclusive(directory, wait=wait):
        # Progress first, the listing second: a segment with progress but no file was then really
        # deleted (files exist before their first progress), so its progress can go.
        progress = sink.progress()
        present = set(_segment_names(directory))
        sink.drop_progress([name for name in progress if name not in present])
        sweep_creations(directory)
        for name in sorted(present - {own}):
            if until is not None and time.monotonic() > until:
                return taken  # the rest, the backlog after them, at the next look: their order kept
            path = directory / name
            fd = claim(path)
            if fd is None:
                continue  # a live queue holds it
            try:
                # its progress read now that nobody else applies it: its queue (maybe running when the
                # progress was read above) may have applied more since, and what it applied may since
                # have been removed from the target: replaying it would bring that back
                taken += absorb(entries(fd, sink.progress().get(name, 0)))
                retire(path, sink)
            finally:
                os.close(fd)
        if backlog is not None:
            with locked(backlog):
                found = file_entries(backlog)
                if found is not None:
                    taken += absorb(found)
                    backlog.unlink()
                    sync_folder(backlog.parent)
    return taken


def hand_over(backlog: Path, lines: Sequence[bytes], name: str) -> None:
    """Append ``lines`` — what the stopping queue ``name`` could not apply — to ``backlog``, on the
    disk (name included) before the caller deletes its segment."""
    append_backlog(backlog, lines)
    log.warning("%s: %d queued records not applied yet; kept in %s for the next start", name, len(lines), backlog)


def append_backlog(backlog: Path, lines: Sequence[bytes]) -> None:
    """Append ``lines`` (each ending in a newline) to ``backlog``, on the disk when this returns; a running
    queue of the folder takes them over at its next look (:func:`take_over`)."""
    with locked(backlog):
        fd = os.open(backlog, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        try:
            write_all(fd, b"".join(lines), sync=True)
        finally:
            os.close(fd)
        sync_folder(backlog.parent)


def forget_queued(directory: Path, consumer: Consumer[T], match: Callable[[T], bool], *,
                  queues: Callable[[], Iterable[Forgetting[T]]], backlog: Path | None = None,
                  wait: float) -> tuple[int, int]:
    """Take the records ``match`` selects out of this process's queues of ``directory`` — running or
    closing, as ``queues()`` lists them (see ``DurableQueue.forget``) — and out of the files stopped
    queues left there and in ``backlog`` (:func:`forget_left`); how many (the queues held, the files
    held).

    All under the folder's lock, and ``queues()`` is asked once it is held: a queue started
    meanwhile takes files over only after they are cleared, and a closing one hands its records
    over either before (the files have them) or after (it no longer has them).

    :raises OSError: the lock cannot be taken, or a file cannot be rewritten
    """
    if _never_used(directory, backlog):  # no queue ever ran here (it would have made the folder)
        return 0, 0
    with exclusive(directory):
        queued = sum(queue.forget_held(match, wait) for queue in queues())
        return queued, _forget_left(directory, consumer, match, backlog=backlog)


def forget_left(directory: Path, consumer: Consumer[T], match: Callable[[T], bool], *,
                backlog: Path | None = None) -> int:
    """Take the records ``match`` selects — and undecodable ones, which would only be quarantined —
    out of the files stopped queues left; how many were waiting. A segment holding a selected record,
    applied or not (its text must not stay on disk), is replaced by one with its other waiting
    records; the backlog is rewritten. Files a running queue holds are out of reach.

    :raises OSError: a file could not be rewritten (what it holds may remain)
    """
    if _never_used(directory, backlog):
        return 0
    with exclusive(directory):
        return _forget_left(directory, consumer, match, backlog=backlog)


def _forget_left(directory: Path, consumer: Consumer[T], match: Callable[[T], bool], *,
                 backlog: Path | None = None) -> int:
    removed = 0
    if backlog is not None:
        with locked(backlog):
            waiting = file_entries(backlog)
            kept = [line for _, line, error in waiting or [] if not _selected(consumer, line, error, match)]
            removed = len(waiting or []) - len(kept)
            if waiting is not None and not kept:
                backlog.unlink()
                sync_folder(backlog.parent)
            elif removed:
                atomic_write(backlog, b"".join(kept))
    if not directory.is_dir():
        return removed
    sink = consumer.open()
    try:
        for name in _segment_names(directory):
            path = directory / name
            fd = claim(path)
            if fd is None:
                continue
            try:  # its progress read once held: a queue stopping meanwhile may have applied more
                removed += _forget_in_segment(path, fd, sink.progress().get(name, 0), consumer, match, sink)
            finally:
                os.close(fd)
    finally:
        sink.close()
    return removed


def _never_used(directory: Path, backlog: Path | None) -> bool:
    """Whether there is nothing to forget: forgetting creates nothing, not even the folder's lock."""
    return not directory.is_dir() and (backlog is None or not backlog.exists())


def left_behind_here(directory: Path, own: str, backlog: Path | None) -> bool:
    """Whether a stopped queue may have left records in ``directory``: a segment other than ``own``, or the
    ``backlog`` (a listing, nothing opened or locked: what :func:`take_over` would look at). The segments are
    listed first: a queue stopping meanwhile writes the backlog before it retires its segment, so one of the two
    looks sees what it hands over (the other order missed a hand-over between them; a red-team pass)."""
    return any(name != own for name in _segment_names(directory)) or (backlog is not None and backlog.exists())


def _segment_names(directory: Path) -> list[str]:
    """The segments' names: files only (a folder named like one, made by hand, stopped every take-over)."""
    return sorted(path.name for path in directory.glob(f"*{SUFFIX}") if path.is_file())


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

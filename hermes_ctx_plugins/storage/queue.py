"""One durable write-behind queue, for every provider that writes behind a turn.

``put`` appends the record — one line — to this process's *segment* file in the queue folder
(``<time>-<pid>-<random>.seg``, held with ``flock`` for as long as the queue runs) and returns; one
writer thread applies the records in order, in batches of at most ``batch_size`` records and
``batch_bytes`` bytes, through the :class:`Sink` its :class:`Consumer` opens. The sink records how far
each segment is applied — its *progress*, a byte offset per segment name — in the same transaction
as the records when it has transactions (ctx-local's store), else in a small file beside the segment
(:class:`~hermes_ctx_plugins.storage.segments.ProgressFiles`). So:

* an accepted record survives the process being killed: it is in the file before ``put`` returns
  (with ``fsync``, forced to the disk as well: it survives a power cut too — the segment's name is on
  the disk from its creation, and a record moved to another file is on the disk before its old
  file is deleted);
* a queue that starts — and, while idle, every :data:`RESCAN_SECONDS` — takes over what other queues
  left: the segments no process holds (their queue stopped before applying everything, or died),
  from their progress on, and the *backlog* file into which a stopping queue with a ``backlog`` hands
  what it could not apply. Their records are appended to its own segment, then the file is deleted,
  so each process works through one log;
* a failure is classified by the consumer (:class:`Failure`): an outage of the target keeps
  everything queued and retries with back-off for as long as it takes; a record failing by itself is
  retried up to ``max_retries`` times, a rejected one (or a line that cannot be decoded) not at all,
  and is then *quarantined*: the sink keeps or reports it and the progress moves past it, so it is
  never in the way of the records after it;
* once at least ``rotate_bytes`` of a segment, and at least half of it, is done with (applied,
  quarantined, dropped) — checked when the writer has drained the queue and when a full queue drops
  records — the queue goes on in a fresh segment holding only the records still queued and deletes
  the old one (then its progress); at a clean stop it is deleted: files never grow without end;
* ``limit`` bounds the backlog, in memory and so on disk: a full queue drops its oldest records that
  are not being applied, and takes over at most ``limit`` of what stopped queues left (the newest);
* :meth:`DurableQueue.forget` takes the records a predicate selects out of this process's queue (its
  segment is rewritten with the rest), :func:`forget_left` out of the files stopped queues left, and
  :func:`forget_queued` out of both at once. Rewritten, not marked with a tombstone: a tombstone would
  leave the user's text on disk, and a queue taking the file over after a crash would have to find
  and honour it. Forgetting, taking files over and handing records over hold the folder's lock, so
  a forget never misses records on their way from a file into a queue.

Delivery is exactly once when the sink records progress with what it applies, and at least once
otherwise: a crash between applying a record and recording the progress applies it again at replay,
as does a crash in the instant between writing a file's records elsewhere (a takeover, a rewrite,
a hand-over) and deleting the file. Order is kept within a process; records taken over follow the
ones the process queued before.

Over 500 lines because the producer, the writer thread, the take-over and forgetting share one lock and
one state (what is pending, being applied, taken over): apart, each would reach into the others' insides.
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Generic, TypeVar, cast

from ..errors import HermesCtxError
from .applying import BatchApplier, Consumer, Failure, Item, QueueStats, Sink, close_quietly, first_batch
from .files import sync_folder
from .leftovers import forget_left, forget_queued, hand_over, left_behind_here, take_over
from .segments import (
    SUFFIX,
    Entry,
    ProgressFiles,
    Segment,
    SegmentState,
    create_segment,
    exclusive,
    inspect,
    left_behind,
    read_lines,
    retire,
    write_all,
)

__all__ = ["BATCH_BYTES", "RESCAN_SECONDS", "SUFFIX", "Consumer", "DurableQueue", "Failure", "ProgressFiles",
           "QueueClosedError", "QueueStats", "SegmentState", "Sink", "forget_left", "forget_queued", "inspect",
           "left_behind", "read_lines"]

log = logging.getLogger("hermes_ctx_plugins.storage.queue")

T = TypeVar("T")

#: how often an idle writer looks again for what queues that stopped left
RESCAN_SECONDS = 60.0
#: queued bytes per batch, besides ``batch_size`` records: a sink with a write lock (a database)
#: holds it for a bounded time, so another process's write waits at most that long
BATCH_BYTES = 1 << 20
#: a record to append: its line, the record itself when known, why it cannot be applied when known
_Entry = tuple[bytes, T | None, Exception | None]


class QueueClosedError(HermesCtxError, RuntimeError):
    """The queue is not running; nothing can be put into it."""


#: the longest an ordered queue's start waits for another process holding its folder (see ``ordered``)
ORDERED_WAIT = 3.0


class _Stopped(Exception):
    """The stop deadline passed while the writer was waiting to retry."""


class DurableQueue(Generic[T]):
    """A durable, crash-safe, multi-process write-behind queue (see the module docs).

    :param directory: the queue folder (segments, and progress files when the sink keeps them there)
    :param backlog: the file a stopping queue hands what it could not apply to (None: its segment
        stays as it is, for the next queue to take over)
    :param stats: counters to add to (a fresh :class:`QueueStats` by default)
    :param linger: seconds the writer lets records gather before it applies fewer than ``batch_size`` (one
        transaction for many, a writer woken a fraction as often); ``flush`` and ``close`` cut it short
    :param ordered: records are applied in the order they were put across queues too: when stopped queues left
        records, :meth:`start` takes them over before it returns, so a record put next is behind them (a memory
        service's writes; taken over on the writer thread, a new session's first turn reached the service before the
        turns the last session left, 7 runs of 10 in a red-team pass). It opens a sink of its own for that, on the
        caller's thread, and waits :data:`ORDERED_WAIT` at most for another process holding the folder.
    """

    def __init__(self, directory: Path, consumer: Consumer[T], *, batch_size: int = 1024,
                 batch_bytes: int = BATCH_BYTES, max_retries: int = 5, fsync: bool = False,
                 rotate_bytes: int = 8 << 20, limit: int | None = None, backlog: Path | None = None,
                 stats: QueueStats | None = None, linger: float = 0.0, ordered: bool = False) -> None:
        self.directory = directory
        self.ordered = ordered
        self.consumer = consumer
        self.batch_size = batch_size
        self.batch_bytes = batch_bytes
        self.fsync = fsync
        self.rotate_bytes = rotate_bytes
        self.limit = limit
        self.backlog = backlog
        self.stats = stats if stats is not None else QueueStats()
        #: the last failure of the target, or ``""`` while it works
        self.last_error = ""
        self._applier = BatchApplier(consumer, self.stats, max_retries=max_retries, pause=self._pause)
        self._cond = threading.Condition()
        self._pending: deque[Item[T]] = deque()
        self._applying: tuple[Item[T], ...] = ()
        self._segment: Segment | None = None
        #: bytes of the segment no longer queued (applied, quarantined, dropped): see _compact_due
        self._dead = 0
        self._thread: threading.Thread | None = None
        self._stopping_at: float | None = None
        self._seq = 0
        self._scanned = False
        self._scan_seq = 0
        self._rescan_at = 0.0
        self._retry_at = 0.0
        self._full = False
        #: when the first record still queued was put; the last record a flush (or a close) waits for
        self.linger, self._gathering_since, self._flushed = linger, 0.0, 0

    # ------------------------------------------------------------------------------------ producer

    def start(self) -> None:
        """Create this process's segment (with ``ordered``, what stopped queues left first) and start the writer
        thread."""
        self._open()
        if self.ordered:
            self._take_over_first()
        self._thread = threading.Thread(target=self._run, name=f"{self.consumer.name}-writer", daemon=True)
        self._thread.start()

    def _take_over_first(self) -> None:
        """:meth:`start`'s take-over for ``ordered``: only when a stopped queue left something (a listing; the usual
        start waits for nothing), taking :data:`ORDERED_WAIT` at most in all, waiting for another process holding the
        folder (one taking files over holds it briefly; a forget may hold it long: a red-team pass saw a turn wait
        15 s) and taking files over (thousands of them held a turn 9 s). What is left then, or on a failure, the
        writer takes over, behind this session's first records."""
        with self._cond:
            own = self._segment.name if self._segment is not None else ""
        if not left_behind_here(self.directory, own, self.backlog):
            return
        sink: Sink[T] | None = None
        deadline = time.monotonic() + ORDERED_WAIT
        try:
            sink = self.consumer.open()
            while True:
                try:
                    self._take_over(sink, wait=False, until=deadline)  # the turn waits ORDERED_WAIT at most in all
                    return
                except BlockingIOError:
                    if time.monotonic() >= deadline:
                        log.warning("%s: another process held the queue folder for %g s; what stopped queues left "
                                    "is taken over behind this session's first records", self.consumer.name,
                                    ORDERED_WAIT)
                        return
                    time.sleep(0.02)
        except Exception as exc:  # the writer tries again (the order is then as before)
            log.warning("%s could not take over what stopped queues left before its first record: %s",
                        self.consumer.name, exc)
        finally:
            if sink is not None:
                close_quietly(sink)

    def put(self, record: T) -> None:
        """Append ``record`` durably and return; the writer applies it soon after.

        :raises QueueClosedError: the queue is not running
        """
        line = self.consumer.encode(record) + b"\n"
        with self._cond:
            self._append([(line, record, None)])
            overflowed = self._trim()
            if self._retry_at > time.monotonic() and self.consumer.wakes(record):
                self._retry_at = 0.0  # the writer's wait for the next attempt ends now
                self._cond.notify_all()
        if overflowed:
            self.consumer.overflowed()

    @property
    def pending(self) -> int:
        """Records of this queue not yet applied (nor quarantined, dropped or forgotten); once closed,
        those it left for the next queue."""
        return len(self._pending)

    def following(self, count: int = 1) -> list[T]:
        """The first ``count`` records queued behind those being applied, in order (a consumer may try them to tell
        a record that fails alone from a target that fails); lines holding no record are passed over."""
        with self._cond:
            busy = {id(item) for item in self._applying}
            found = (item for item in self._pending if id(item) not in busy and item.decoded(self.consumer))
            return [cast(T, item.value) for item, _ in zip(found, range(count), strict=False)]

    def flush(self, timeout: float) -> bool:
        """Wait until everything put so far, and what the queue took over, is applied; False on timeout."""
        deadline = time.monotonic() + timeout
        with self._cond:
            target = self._flushed = self._seq
            self._cond.notify_all()  # a lingering writer starts now
            while not (self._scanned and (not self._pending or self._pending[0].seq > max(target, self._scan_seq))):
                left = deadline - time.monotonic()
                if left <= 0 or self._segment is None or self._thread is None or not self._thread.is_alive():
                    return self._segment is None and not self._pending
                self._cond.wait(left)
        return True

    def close(self, timeout: float, *, grace: float = 5.0) -> bool:
        """Apply for at most ``timeout`` seconds, stop the writer, release the segment; whether
        everything was applied. What was not is handed to the backlog, or stays in the segment; the
        next queue to start takes it over.

        :param grace: how much longer a sink call in progress may take (a database's busy timeout);
            after that the writer is left to finish on its own and this thread takes its last step
        """
        with self._cond:
            if self._segment is None:
                return not self._pending
            self._stopping_at = time.monotonic() + timeout
            self._flushed = self._seq  # no lingering while stopping
            self._cond.notify_all()
        if self._thread is not None:
            self._thread.join(timeout + grace)
        self._finish(None)  # does nothing once the writer has taken this step itself
        with self._cond:
            return not self._pending

    def restart(self, timeout: float, sink: Sink[T] | None = None) -> bool:
        """Wait until everything put so far is applied, then go on in a fresh segment and delete the
        old one, so no record lingers in a file once applied (forgetting a user needs that); False
        when it could not within ``timeout`` or the queue is closing. ``sink``, if given, forgets
        the old segment's progress now (else the next scan does)."""
        if not self.flush(timeout):
            return False
        with self._cond:
            if self._segment is None or self._stopping_at is not None:
                return False
            old = self._swap()
        if sink is not None:
            sink.drop_progress([old])
        return True

    def forget(self, match: Callable[[T], bool], *, wait: float) -> int:
        """Take every queued record ``match`` selects (and any that cannot be decoded, which would
        only be quarantined) out of this queue, and replace its segment by one holding only the
        records still queued (applied ones are in it too); how many were taken out. A selected
        record already being applied is waited for (at most ``wait`` seconds), so it cannot reach
        the target after the caller deleted its copy there. Records this queue is taking over from
        a file meanwhile are waited for and taken out too. (:func:`forget_queued` also clears what
        stopped queues left.)"""
        with exclusive(self.directory):
            return self.forget_held(match, wait)

    def forget_held(self, match: Callable[[T], bool], wait: float) -> int:
        """:meth:`forget` for a caller holding the folder's lock (:func:`forget_queued`)."""
        with self._cond:
            kept = deque(item for item in self._pending if not self._selected(item, match))
            removed = len(self._pending) - len(kept)
            self._pending = kept
            self._full = self._full and bool(kept)
            # closed: what it left is in its files (counted by forget_left), a batch maybe still applying
            closed = self._segment is None
            if self._segment is not None and self._segment.size:  # applied records are in it too
                self._swap()
            self._cond.notify_all()
            deadline = time.monotonic() + wait
            while any(self._selected(item, match) for item in self._applying):
                left = deadline - time.monotonic()
                if left <= 0:
                    break
                self._cond.wait(left)
        return 0 if closed else removed

    def _selected(self, item: Item[T], match: Callable[[T], bool]) -> bool:
        return not item.decoded(self.consumer) or match(cast(T, item.value))

    def replay(self, sink: Sink[T]) -> None:
        """Take over what stopped queues left and apply it now, in the calling thread, through
        ``sink`` (for a queue that is not started: forgetting a user needs every record stored first)."""
        self._open()
        try:
            self._take_over(sink)
            self._drain(sink)
        finally:
            self._finish(sink)

    # ------------------------------------------------------------------------------------ the log

    def _open(self) -> None:
        self.directory.mkdir(parents=True, exist_ok=True, mode=0o700)
        segment = create_segment(self.directory)
        with self._cond:
            self._segment = segment

    def _append(self, batch: Sequence[_Entry[T]], *, sync: bool = False) -> None:
        """Append the entries to the segment and queue them (holding the lock). A failed write is
        cut off again, so no torn line precedes the next one."""
        segment = self._segment
        if segment is None or self._stopping_at is not None:
            raise QueueClosedError(f"the {self.consumer.name} write queue is closed")
        try:
            write_all(segment.fd, b"".join(line for line, _, _ in batch), sync=self.fsync or sync)
        except OSError:
            with contextlib.suppress(OSError):
                os.ftruncate(segment.fd, segment.size)
            raise
        self._gathering_since = self._gathering_since if self._pending else time.monotonic()
        for line, value, error in batch:
            segment.size += len(line)
            self._seq += 1
            self._pending.append(Item(self._seq, segment.size, line, value, error))
        self._cond.notify_all()

    def _trim(self) -> bool:
        """Drop the oldest records not being applied beyond ``limit`` (holding the lock); whether
        this starts a spell of dropping (the consumer is told once per spell)."""
        if self.limit is None or len(self._pending) <= self.limit:
            return False
        busy = {id(item) for item in self._applying}
        excess = len(self._pending) - self.limit
        kept: deque[Item[T]] = deque()
        dropped_items: list[Item[T]] = []
        for item in self._pending:
            if len(dropped_items) < excess and id(item) not in busy:
                dropped_items.append(item)
            else:
                kept.append(item)
        self._pending = kept
        self._dead += sum(len(item.line) for item in dropped_items)
        first = self._dropped(len(dropped_items))
        if self._compact_due():  # the writer may be waiting out an outage: no rotation comes meanwhile
            try:
                self._swap()
            except OSError as exc:  # the record is queued all the same; the next drop tries again
                log.warning("%s could not rewrite its segment without the dropped records: %s", self.consumer.name,
                            exc)
        return first

    def _dropped(self, count: int) -> bool:
        """Count ``count`` records a full queue dropped (holding the lock); whether this starts a
        spell of dropping."""
        self.stats.add(dropped=count)
        first, self._full = not self._full, True
        return first

    def _compact_due(self) -> bool:
        """Whether the segment should be rewritten with only its queued records (holding the lock):
        ``rotate_bytes`` of it, and at least half, is done with."""
        segment = self._segment
        return (segment is not None and self._stopping_at is None and self._dead >= self.rotate_bytes
                and 2 * self._dead >= segment.size)

    def _swap(self) -> str:
        """Go on in a fresh segment holding the records still queued and delete the old one (holding
        the lock); the old one's name. A batch being applied keeps its old offsets: its progress
        goes to the old name, which the next scan forgets."""
        old = cast(Segment, self._segment)
        new = create_segment(self.directory)
        data = b"".join(item.line for item in self._pending)
        try:
            if data:
                write_all(new.fd, data, sync=True)
        except BaseException:
            new.path.unlink(missing_ok=True)
            os.close(new.fd)
            raise
        for item in self._pending:
            new.size += len(item.line)
            item.end = new.size
        self._segment, self._dead = new, 0
        old.path.unlink(missing_ok=True)
        os.close(old.fd)
        sync_folder(self.directory)  # gone for good: a forgotten user's records must not come back
        return old.name

    # ------------------------------------------------------------------------------------ the writer

    def _run(self) -> None:
        sink: Sink[T] | None = None
        failures = 0
        try:
            while self._wait_for_work():
                try:
                    if sink is None:
                        sink = self.consumer.open()
                    if not self._scanned:
                        self._take_over(sink)
                    self._drain(sink)
                    self._rotate(sink)
                except _Stopped:
                    break
                except Exception as exc:
                    failures += 1
                    self._failed(exc, failures)
                    if sink is not None:  # opened again: the target may be replaced or repaired meanwhile
                        close_quietly(sink)
                        sink = None
                else:
                    if failures:
                        self.last_error = ""
                        self.consumer.failing(None)
                    failures = 0
            self._finish(sink)
        finally:
            if sink is not None:
                close_quietly(sink)

    def _wait_for_work(self) -> bool:
        """Block until there is something to do (True) or the writer should stop (False)."""
        with self._cond:
            while True:
                now = time.monotonic()
                # Stopping: when all is applied, past the deadline, or at once while the target fails
                # (waiting would not help; what is queued is safe for the next queue to take over).
                if self._stopping_at is not None and (now >= self._stopping_at or not self._pending
                                                      or self.last_error):
                    return False
                wake = [self._stopping_at] if self._stopping_at is not None else []
                if now < self._retry_at:
                    self._cond.wait(min([self._retry_at, *wake]) - now)
                    continue
                if self._scanned and now >= self._rescan_at:
                    self._scanned = False
                if not self._scanned:
                    return True
                if self._pending:
                    ready = self._gathering_since + self.linger
                    if now >= ready or self._pending[0].seq <= self._flushed or len(self._pending) >= self.batch_size:
                        return True
                    self._cond.wait(ready - now)
                    continue
                self._cond.wait(min([self._rescan_at, *wake]) - now)

    def _failed(self, exc: Exception, failures: int) -> None:
        message = f"{type(exc).__name__}: {exc}"
        if message != self.last_error:
            self.consumer.failing(exc)
        self.last_error = message
        with self._cond:
            self._retry_at = time.monotonic() + self.consumer.retry_delay(exc, failures)

    def _past_deadline(self) -> bool:
        return self._stopping_at is not None and time.monotonic() >= self._stopping_at

    def _pause(self, seconds: float) -> None:
        end = time.monotonic() + seconds
        with self._cond:
            while (left := end - time.monotonic()) > 0:
                if self._past_deadline():
                    raise _Stopped
                self._cond.wait(left)

    def _drain(self, sink: Sink[T]) -> None:
        last = self._seq  # what is put meanwhile waits for the writer's next look (it may linger)
        while not self._past_deadline():
            with self._cond:
                batch = first_batch(self._pending, self.batch_size, self.batch_bytes)
                if not batch or self._segment is None or batch[0].seq > last:
                    return
                name, ends = self._segment.name, [item.end for item in batch]
                self._applying = tuple(batch)
            try:
                self._applier.apply(sink, name, batch, ends)
            finally:
                with self._cond:
                    self._applying = ()
                    self._cond.notify_all()  # forget() may wait for this batch
            with self._cond:
                for item in batch:  # forget() may have taken some out meanwhile; the rest lead the queue
                    if self._pending and self._pending[0] is item:
                        self._pending.popleft()
                        self._dead += len(item.line)
                self._full = self._full and bool(self._pending)
                self._cond.notify_all()

    def _rotate(self, sink: Sink[T]) -> None:
        """Go on in a fresh segment once most of ours is done with, so files never grow without end."""
        with self._cond:
            if not self._compact_due():
                return
            old = self._swap()
        sink.drop_progress([old])

    def _finish(self, sink: Sink[T] | None) -> None:
        """The writer's last step (close()'s, when the writer is stuck): release the segment —
        deleted when all was applied, else handed to the backlog, or left for the next queue."""
        if self._segment is None:
            return  # taken already
        with contextlib.ExitStack() as stack:
            # a forget waits until the hand-over is done (the backlog then has the records), or this
            # waits for the forget (they are no longer queued); without the lock, release all the same
            with contextlib.suppress(OSError):
                stack.enter_context(exclusive(self.directory))
            self._release(sink)

    def _release(self, sink: Sink[T] | None) -> None:
        with self._cond:
            segment, self._segment = self._segment, None
            leftover = [item.line for item in self._pending
                        if item.value is None or not self.consumer.applied_ahead(item.value)]
        if segment is None:
            return
        try:
            if leftover and self.backlog is not None:
                hand_over(self.backlog, leftover, self.consumer.name)
            if not leftover or self.backlog is not None:
                retire(segment.path, sink)
        except Exception as exc:  # what is left stays in the segment: the next queue takes it over
            log.error("%s could not hand over %d queued records (they stay in %s): %s", self.consumer.name,
                      len(leftover), segment.path, exc)
        finally:
            os.close(segment.fd)

    # ------------------------------------------------------------------------------------ taking over

    def _take_over(self, sink: Sink[T], *, wait: bool = True, until: float | None = None) -> None:
        """Append to our segment what queues that stopped left, from their progress on, and delete
        their files (``wait=False``: :class:`BlockingIOError` when another process holds the folder; ``until``: no
        file begun after that time, see :func:`~hermes_ctx_plugins.storage.leftovers.take_over`)."""
        with self._cond:
            own = self._segment.name if self._segment is not None else ""
        taken = take_over(self.directory, own, sink, self._absorb, self.backlog, wait=wait, until=until)
        # stopped at ``until`` with files left: the writer's next pass takes the rest over
        complete = until is None or time.monotonic() <= until or not left_behind_here(self.directory, own, self.backlog)
        with self._cond:
            if complete:
                self._scanned = True
                self._scan_seq = self._seq
                self._rescan_at = time.monotonic() + RESCAN_SECONDS
            self._cond.notify_all()
        if taken:
            log.warning("%s took over %d queued records left by queues that stopped", self.consumer.name, taken)

    def _absorb(self, found: Sequence[Entry]) -> int:
        """Queue records read from a file another queue left (at most ``limit``, the newest)."""
        if not found:
            return 0
        with self._cond:
            if self._segment is None or self._stopping_at is not None:
                raise _Stopped  # the file stays for the next queue
            excess = 0 if self.limit is None else max(len(found) - self.limit, 0)
            # forced to the disk: the file they come from is deleted next
            self._append([(line, None, error) for _, line, error in found[excess:]], sync=True)
            overflowed = self._trim()
            if excess:
                overflowed = self._dropped(excess) or overflowed
        if overflowed:
            self.consumer.overflowed()
        return len(found)

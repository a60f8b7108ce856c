"""What a durable queue's records are, where they go, and how a batch of them is applied.

A consumer of :class:`~hermes_ctx_plugins.storage.queue.DurableQueue` supplies a :class:`Consumer`:
how a record is written as a line and read back, the :class:`Sink` records are applied through (which
also keeps how far each segment is applied), and what a failure means (:class:`Failure`).
:class:`BatchApplier` is the one place that decides what happens to a batch: one sink call, or —
when a record in it fails — each record alone, retried, and quarantined when it keeps failing.
"""

from __future__ import annotations

import logging
import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import Generic, Protocol, TypeVar, cast

log = logging.getLogger("hermes_ctx_plugins.storage.queue")

T = TypeVar("T")
T_contra = TypeVar("T_contra", contravariant=True)

#: records decoded between two chances for other threads to run
_YIELD_EVERY = 8


class Failure(Enum):
    """What a failure to apply records means, as the consumer classifies it."""

    #: the target as a whole fails: everything stays queued, retried with back-off until it works
    OUTAGE = "outage"
    #: this record failed: retried up to ``max_retries`` times, then quarantined
    RECORD = "record"
    #: this record will never be taken: quarantined at once
    REJECT = "reject"


class Sink(Protocol[T_contra]):
    """Where a queue's records go, and where it keeps how far each segment is applied (its progress)."""

    def write(self, records: Sequence[T_contra], *, segment: str = "", offset: int = 0) -> int:
        """Apply ``records`` and record ``segment`` as applied up to ``offset``; how many were new
        (the others were applied before). Raise to fail the whole batch."""
        ...

    def quarantine(self, segment: str, offset: int, raw: str, error: str, attempts: int) -> None:
        """Give up on one record (``raw``: its line as shown) and record the progress past it."""
        ...

    def progress(self) -> dict[str, int]:
        """How far each segment has been applied, in bytes."""
        ...

    def drop_progress(self, segments: Iterable[str]) -> None:
        """Forget the progress of ``segments`` (their files are gone)."""
        ...

    def close(self) -> None:
        ...


class Consumer(ABC, Generic[T]):
    """What a queue's records are and where they go. :meth:`encode` runs in ``put``'s thread, the
    rest in the writer thread (or in the caller of ``replay``, ``forget`` and ``forget_left``)."""

    #: names the writer thread (``<name>-writer``) and the queue in messages
    name = "queue"
    #: the first pause after a failure, in seconds, doubling per failure up to ``max_backoff``
    backoff = 0.05
    max_backoff = 5.0
    #: what the log adds when a record is quarantined (where to see it, what became of it)
    quarantine_note = ""

    @abstractmethod
    def encode(self, record: T) -> bytes:
        """``record`` as one line, without the newline."""

    @abstractmethod
    def decode(self, line: bytes) -> T:
        """The record a line holds; raises when it holds none."""

    @abstractmethod
    def open(self) -> Sink[T]:
        """A sink to apply records through (opened again after an outage)."""

    def read(self, line: bytes) -> tuple[T | None, Exception | None]:
        """``(record, None)``, or ``(None, why not)`` for a line that holds none."""
        try:
            return self.decode(line), None
        except Exception as exc:  # bad JSON or Unicode, a value no record takes: that record's fault
            return None, exc

    def failure(self, exc: Exception) -> Failure:
        """What ``exc``, raised by the sink, means (by default: an outage)."""
        return Failure.OUTAGE

    def retry_delay(self, exc: BaseException, failures: int) -> float:
        """How long to wait before the next attempt, after ``failures`` in a row."""
        return float(min(self.backoff * 2 ** (failures - 1), self.max_backoff))

    def failing(self, error: BaseException | None) -> None:
        """Told when the target starts failing (again whenever the error changes) and, with
        ``None``, when it works again."""

    def shown(self, line: bytes) -> str:
        """What a quarantined record's line is kept as."""
        return line.rstrip(b"\n").decode("utf-8", "replace")

    def applied_ahead(self, record: T) -> bool:
        """Whether ``record``, still queued, was applied already, ahead of its turn (a stopping queue then hands it
        over no more: the next would apply it again; the service's writes sent ahead of a stuck one)."""
        return False

    def wakes(self, record: T) -> bool:
        """Whether ``record``, just put, ends the wait before the next attempt (by default: no; the service's
        writes: another user's write behind one whose owner alone is rate-limited)."""
        return False

    def overflowed(self) -> None:
        """Told (outside the queue's lock) the first time a full queue drops records."""


@dataclass
class QueueStats:
    """What queues did; one instance may be shared by the queues a consumer starts one after another."""

    #: records the sink took as new
    applied: int = 0
    #: records the sink already had (applied again after a crash)
    duplicates: int = 0
    #: records given up on
    quarantined: int = 0
    #: records a full queue dropped
    dropped: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def add(self, **counts: int) -> None:
        with self._lock:
            for name, count in counts.items():
                setattr(self, name, getattr(self, name) + count)


@dataclass(eq=False)
class Item(Generic[T]):
    """A queued record: the order it came in, its end offset in its segment, its line (with the
    newline), the record once decoded, or why it cannot be applied."""

    seq: int
    end: int
    line: bytes
    value: T | None = None
    error: Exception | None = None

    def decoded(self, consumer: Consumer[T]) -> bool:
        """Decode the line unless done; whether it holds a record."""
        if self.value is None and self.error is None:
            self.value, self.error = consumer.read(self.line)
        return self.error is None


class BatchApplier(Generic[T]):
    """Applies batches for one queue: in one sink call when it can, each record alone when one fails.

    :param pause: waits that long before a retry (raising to give up when the queue must stop)
    """

    def __init__(self, consumer: Consumer[T], stats: QueueStats, *, max_retries: int,
                 pause: Callable[[float], None]) -> None:
        self.consumer = consumer
        self.stats = stats
        self.max_retries = max_retries
        self.pause = pause

    def apply(self, sink: Sink[T], segment: str, batch: Sequence[Item[T]], ends: Sequence[int]) -> None:
        """Apply ``batch`` (item ``i`` ends at ``ends[i]`` in ``segment``). Returns once every record
        is applied or quarantined; raises on an outage, leaving the batch to be tried again."""
        values: list[T] = []
        for number, item in enumerate(batch, 1):
            if item.decoded(self.consumer):
                values.append(cast(T, item.value))
            if number % _YIELD_EVERY == 0:
                # Let a thread calling put() have the GIL now, not after the interpreter's 5 ms switch
                # interval: that wait was most of the enqueue's p99.
                time.sleep(0)
        if len(values) == len(batch):
            try:
                self._applied(sink.write(values, segment=segment, offset=ends[-1]), len(values))
                return
            except Exception as exc:
                kind = self.consumer.failure(exc)
                if kind is Failure.OUTAGE:
                    raise
                if len(batch) == 1:  # that was the record's first attempt
                    self._apply_one(sink, segment, batch[0], ends[0], exc, kind)
                    return
                log.warning("%s: a batch of %d queued records failed (%s); applying them one by one",
                            self.consumer.name, len(batch), exc)
        for item, end in zip(batch, ends, strict=True):
            self._apply_one(sink, segment, item, end)

    def _apply_one(self, sink: Sink[T], segment: str, item: Item[T], end: int,
                   failed: Exception | None = None, kind: Failure | None = None) -> None:
        attempt, error = (1, failed) if failed is not None else (0, item.error)
        if item.error is not None:
            kind = Failure.REJECT  # an undecodable line never gets better
        while kind is None or (kind is Failure.RECORD and attempt < self.max_retries):
            if attempt:
                self.pause(self.consumer.retry_delay(cast(Exception, error), attempt))
            attempt += 1
            try:
                self._applied(sink.write([cast(T, item.value)], segment=segment, offset=end), 1)
                return
            except Exception as exc:
                kind = self.consumer.failure(exc)
                if kind is Failure.OUTAGE:
                    raise
                error = exc
        reason = f"{type(error).__name__}: {error}"
        attempts = max(attempt, 1)
        sink.quarantine(segment, end, self.consumer.shown(item.line), reason, attempts)
        self.stats.add(quarantined=1)
        note = f" ({self.consumer.quarantine_note})" if self.consumer.quarantine_note else ""
        log.error("%s quarantined a queued record after %d attempt(s): %s%s", self.consumer.name, attempts, reason,
                  note)

    def _applied(self, new: int, total: int) -> None:
        self.stats.add(applied=new, duplicates=total - new)


def first_batch(pending: Iterable[Item[T]], limit: int, max_bytes: int) -> list[Item[T]]:
    """The first records of ``pending`` for one batch: at most ``limit`` of them, and no more than
    ``max_bytes`` (but always one, however big)."""
    batch: list[Item[T]] = []
    size = 0
    for item in pending:
        if len(batch) == limit or (batch and size + len(item.line) > max_bytes):
            break
        batch.append(item)
        size += len(item.line)
    return batch


def close_quietly(sink: Sink[T]) -> None:
    """Close ``sink``; a failure is logged, never raised (closing a broken target must not stop the writer)."""
    try:
        sink.close()
    except Exception as exc:
        log.debug("closing a queue's sink failed: %s", exc)

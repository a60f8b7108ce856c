"""The write queue of a remote memory provider (see :mod:`~hermes_ctx_plugins.memory.remote.base`).

``sync_turn`` only enqueues (already redacted) writes; one daemon thread delivers them in order,
holds them while the provider's breaker is open and resends them when it closes. A full queue drops
its oldest write and says so; writes still unsent at shutdown are spooled to
``$HERMES_HOME/ctx_plugins/<name>/queue.jsonl`` and resent by the next process. Every change to
the spool (append, claim, a forgotten user's records taken out) holds its lock, so processes never
lose each other's records.
"""

from __future__ import annotations

import json
import logging
import os
import threading
import time
import uuid
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..file.store import atomic_write, locked

if TYPE_CHECKING:
    from .base import RemoteOptions

log = logging.getLogger("hermes_ctx_plugins.memory")

Write = dict[str, Any]
#: whether a queued write belongs to the user being forgotten
WriteMatch = Callable[[Write], bool]


class ServiceUnavailable(RuntimeError):
    """The provider's circuit breaker is open: the call was not made."""


@dataclass
class WriteStats:
    """What the write queue did since the provider started."""

    sent: int = 0
    #: dropped because the queue was full
    dropped: int = 0
    #: refused as invalid, by the service or before sending (never retried)
    rejected: int = 0


class WriteQueue:
    """A provider's bounded queue of writes, delivered in order by one daemon thread (``<name>-writer``).

    :param send: delivers one write through the breaker; raises :class:`ServiceUnavailable` while it is
        open, anything else when the delivery failed
    :param is_client_error: whether a failure is the service refusing the write (dropped, never retried)
    :param retry_after: the Retry-After the service sent with a failure, in seconds, if any
    :param paused_for: how long the breaker still keeps calls off, in seconds (0: calls may go)
    :param on_overflow: called (outside the lock) the first time a full queue drops a write
    """

    def __init__(self, name: str, spool_path: Path, options: RemoteOptions, *,
                 send: Callable[[Write], None], is_client_error: Callable[[BaseException], bool],
                 retry_after: Callable[[BaseException], float | None], paused_for: Callable[[], float],
                 on_overflow: Callable[[], None]) -> None:
        self.name = name
        self.spool_path = spool_path
        self.options = options
        self._send = send
        self._is_client_error = is_client_error
        self._retry_after = retry_after
        self._paused_for = paused_for
        self._on_overflow = on_overflow
        self.stats = WriteStats()
        self._lock = threading.Lock()
        self._wakeup = threading.Condition(self._lock)
        self._queue: deque[Write] = deque()
        self._writer: threading.Thread | None = None
        self._writer_generation = -1
        self._sending: Write | None = None
        self._generation = 0
        self._flush_until: float | None = None
        self._overflow_reported = False

    @property
    def queued(self) -> int:
        """Writes waiting in this process."""
        with self._lock:
            return len(self._queue)

    def put(self, write: Write) -> None:
        """Queue ``write`` for delivery (dropping the oldest unsent one when the queue is full)."""
        overflow = False
        with self._lock:
            if len(self._queue) >= self.options.queue_limit:
                # The oldest write that is not being sent right now (that one may still arrive).
                oldest = 1 if len(self._queue) > 1 and self._queue[0] is self._sending else 0
                del self._queue[oldest]
                self.stats.dropped += 1
                overflow, self._overflow_reported = not self._overflow_reported, True
            self._queue.append(write)
            self._ensure_writer_locked()
            self._wakeup.notify_all()
        if overflow:
            self._on_overflow()

    def reject(self) -> None:
        """Count a write refused before it was queued: no request could ever carry it."""
        with self._lock:
            self.stats.rejected += 1

    def resume(self) -> None:
        """Start resending the writes a previous process spooled, if there are any."""
        if self.spool_path.exists():
            with self._lock:
                self._ensure_writer_locked()

    def flush(self, timeout: float) -> bool:
        """Wait (at most ``timeout`` seconds) until every write queued so far has left the queue:
        sent, refused by the service, or spooled by a concurrent :meth:`shutdown`; whether they did."""
        deadline = time.monotonic() + timeout
        with self._lock:
            waiting = list(self._queue)  # kept referenced, so their ids stay theirs while we wait
            pending = {id(write) for write in waiting}
            while any(id(write) in pending for write in self._queue):
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._wakeup.wait(left)
        return True

    def forget(self, match: WriteMatch, *, wait: float) -> tuple[int, int]:
        """Take every write ``match`` selects out of this queue and out of the spool on disk;
        ``(queued, spooled)`` removed. A matching write already being sent is waited for (at most
        ``wait`` seconds), so it cannot reach the service after the caller deleted the user there.

        :raises OSError: the spool could not be rewritten (the user's spooled writes may remain)
        """
        with self._lock:
            kept = [write for write in self._queue if not match(write)]
            queued = len(self._queue) - len(kept)
            self._queue.clear()
            self._queue.extend(kept)
            in_flight = self._sending if self._sending is not None and match(self._sending) else None
            deadline = time.monotonic() + wait
            while in_flight is not None and self._sending is in_flight:
                left = deadline - time.monotonic()
                if left <= 0:
                    break
                self._wakeup.wait(left)
        return queued, self._forget_spooled(match)

    def shutdown(self) -> int:
        """Deliver what is queued (at most ``flush_timeout``), spool the rest; how many were spooled.

        The queue stays usable: the next :meth:`put` or :meth:`resume` starts a new writer.
        """
        with self._lock:
            writer = self._writer
            self._flush_until = time.monotonic() + self.options.flush_timeout
            self._wakeup.notify_all()
        if writer is not None:
            writer.join(self.options.flush_timeout)
        with self._lock:
            self._generation += 1  # a writer still stuck in a request is stale from now on
            leftover = list(self._queue)
            self._queue.clear()
            self._writer = None
            self._flush_until = None
        self._spool(leftover)
        return len(leftover)

    # ------------------------------------------------------------------ the writer

    def _ensure_writer_locked(self) -> None:
        if self._writer is not None and self._writer.is_alive() and self._writer_generation == self._generation:
            return
        self._load_spool_locked()
        self._writer_generation = self._generation
        self._writer = threading.Thread(target=self._write_loop, args=(self._generation,),
                                        name=f"{self.name}-writer", daemon=True)
        self._writer.start()

    def _write_loop(self, generation: int) -> None:
        failures = 0
        while True:
            with self._lock:
                while generation == self._generation and not self._queue and self._flush_until is None:
                    self._wakeup.wait()
                flushing = self._flush_until is not None
                if generation != self._generation or not self._queue:
                    return
                if flushing and time.monotonic() >= (self._flush_until or 0.0):
                    return
                write = self._queue[0]
            wait = self._paused_for()
            if wait > 0:
                if flushing:
                    return  # the service is down: what is left gets spooled
                self._sleep(generation, wait)
                continue
            try:
                self._send_one(write)
            except ServiceUnavailable:
                if flushing:
                    return
                self._sleep(generation, 0.1)  # another call holds the probe; wait for its verdict
                continue
            except Exception as exc:
                if self._is_client_error(exc):
                    log.error("%s refused a write, which is dropped (not retried): %s: %s",
                              self.name, type(exc).__name__, exc)
                    self._done(write, rejected=True)
                    continue
                if flushing:
                    return
                failures += 1
                self._sleep(generation, self._retry_delay(exc, failures))
                continue
            failures = 0
            self._done(write, rejected=False)

    def _send_one(self, write: Write) -> None:
        with self._lock:
            self._sending = write  # a full queue drops another write meanwhile: this one may still arrive
        try:
            self._send(write)
        finally:
            with self._lock:
                self._sending = None
                self._wakeup.notify_all()  # forget() may wait for this write

    def _done(self, write: Write, *, rejected: bool) -> None:
        with self._lock:
            for index, queued in enumerate(self._queue):
                if queued is write:
                    del self._queue[index]
                    break
            if rejected:
                self.stats.rejected += 1
            else:
                self.stats.sent += 1
            if not self._queue:
                self._overflow_reported = False
            self._wakeup.notify_all()  # flush() waits for writes to leave

    def _retry_delay(self, exc: BaseException, failures: int) -> float:
        delay = min(0.5 * 2.0 ** (failures - 1), 30.0)
        after = self._retry_after(exc)
        if after is not None:
            delay = max(delay, min(after, self.options.retry_after_cap))
        # Never longer than a cool-down: the breaker decides about long pauses.
        return min(delay, max(self.options.cooldown_seconds, 0.05))

    def _sleep(self, generation: int, seconds: float) -> None:
        deadline = time.monotonic() + seconds
        with self._lock:
            while generation == self._generation and self._flush_until is None:
                left = deadline - time.monotonic()
                if left <= 0:
                    return
                self._wakeup.wait(left)

    # ------------------------------------------------------------------ the spool

    def spooled(self) -> int:
        """Writes a previous process left on disk, not yet resent."""
        try:
            with self.spool_path.open(encoding="utf-8") as handle:
                return sum(1 for line in handle if line.strip())
        except OSError:
            return 0

    def _spool(self, writes: Sequence[Write]) -> None:
        if not writes:
            return
        path = self.spool_path
        try:
            with locked(path):
                fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
                with os.fdopen(fd, "a", encoding="utf-8") as handle:
                    handle.write("".join(_spool_line(w) for w in writes))
        except OSError as exc:
            log.error("%s: %d writes could not be delivered or saved (%s); they are lost",
                      self.name, len(writes), exc)
            return
        log.warning("%s: %d writes not delivered yet; kept in %s and resent by the next session",
                    self.name, len(writes), path)

    def _load_spool_locked(self) -> None:
        path = self.spool_path
        if not path.exists():
            return
        claimed = path.with_name(f"queue.{os.getpid()}.{uuid.uuid4().hex[:8]}.claim")
        try:
            with locked(path):
                os.replace(path, claimed)  # claim it: two processes never resend the same file
        except OSError:
            return
        try:
            lines = claimed.read_text(encoding="utf-8").splitlines()
            claimed.unlink()
        except OSError as exc:
            log.error("%s: cannot read the spooled writes in %s: %s", self.name, claimed, exc)
            return
        loaded = []
        for line in lines:
            try:
                item = json.loads(line)
            except ValueError:
                log.error("%s: skipping a corrupt spooled write in %s", self.name, path)
                continue
            if isinstance(item, dict):
                loaded.append(item)
        self._queue.extendleft(reversed(loaded))
        while len(self._queue) > self.options.queue_limit:
            self._queue.popleft()
            self.stats.dropped += 1
        if loaded:
            log.info("%s: resending %d writes spooled by an earlier session", self.name, len(loaded))

    def _forget_spooled(self, match: WriteMatch) -> int:
        """Rewrite the spool without the records ``match`` selects (and the unreadable ones, which
        are never resent anyway and may be the user's); how many matched."""
        path = self.spool_path
        if not path.exists():
            return 0
        with locked(path):
            try:
                lines = path.read_text(encoding="utf-8").splitlines()
            except FileNotFoundError:  # claimed meanwhile: its writes are in some queue now
                return 0
            kept, removed = [], 0
            for line in lines:
                try:
                    item = json.loads(line)
                except ValueError:
                    continue
                if not isinstance(item, dict):
                    continue
                if match(item):
                    removed += 1
                else:
                    kept.append(_spool_line(item))
            if len(kept) != len(lines):
                if kept:
                    atomic_write(path, "".join(kept).encode("utf-8"))
                else:
                    path.unlink()
        return removed


def _spool_line(write: Write) -> str:
    # ASCII JSON: a lone surrogate in a write (an id, a text) is kept as an escape, never an
    # encoding error that would lose the whole batch
    return json.dumps(write) + "\n"

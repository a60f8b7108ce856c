"""How a remote memory provider queues its writes: the durable queue
(:mod:`hermes_ctx_plugins.storage.queue`) delivering them to the service.

``sync_turn`` only puts (already redacted) writes: each is appended to this process's segment under
``$HERMES_HOME/ctx_plugins/<name>/queue/`` and forced to the disk before ``sync_turn`` returns, so a
crash loses none. One daemon thread (``<name>-writer``) sends them in order, one per batch, through
the provider's circuit breaker, and after each records how far the segment is delivered (a progress
file beside it). While the breaker is open the writes wait; at most ``queue_limit`` are kept (a full
queue drops its oldest and says so). A queue that stops with writes unsent hands them to
``queue.jsonl`` beside the folder; the next queue to start — in this process or another — takes them
over, with the segments of processes that died.

Delivery is at least once. Neither Mem0's ``add`` nor Honcho's message and conclusion calls take an
idempotency key, so a crash between the service accepting a write and the progress file recording it
(a few milliseconds) sends that write again at the next start. A write the service refuses (a client
error) is dropped and counted, never retried.

**One write the service keeps failing** (a 403 from a firewall that dislikes its text, a 500 from the one
shard it goes to) must not hold up every user's writes behind it, nor open the breaker and so stop recall
for everyone. Once it has failed twice in a row over :data:`STUCK_FOR` seconds (a brief failure is an
outage like any, order kept), one other request (:meth:`RemoteProvider.ping`, not through the breaker)
asks whether the service answers at all; when it does, the breaker hears that the service is up (recall
goes on) and the write is tried once more, then *set aside* —
appended to ``queue.jsonl`` with when it was first set aside, on the disk before its place in the queue is
given up — and the queue goes on; the queue takes it back at its next look for left-over writes (a minute
later), behind what came meanwhile. At most one write is set aside per :data:`PARK_INTERVAL` unless
others were delivered since (a write path down while the service answers is an outage, not a run of bad
writes: the writes wait, calls every ``PARK_INTERVAL``, recall stays up). A write still failing
:data:`PARK_FOR` after it was first set aside is dropped, counted as refused and logged. So a bad write
costs order (it is delivered after later ones), never another write; when the service does not answer,
the failure is an outage as before.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...errors import HermesCtxError
from ...storage.leftovers import append_backlog
from ...storage.queue import Consumer, Failure, ProgressFiles, QueueStats

log = logging.getLogger("hermes_ctx_plugins.memory")

Write = dict[str, Any]
#: whether a queued write belongs to the user being forgotten
WriteMatch = Callable[[Write], bool]


#: failures in a row of one write after which the service is asked whether it answers other requests
STUCK_AFTER = 2
#: seconds one write must have been failing, the service answering, before it is set aside (a brief
#: failure of the write path keeps the writes' order)
STUCK_FOR = 20.0
#: at most one write is set aside per this many seconds, unless others were delivered since
PARK_INTERVAL = 30.0
#: a write set aside this long ago (seconds) that still fails is dropped
PARK_FOR = 24 * 3600.0
#: the key a set-aside write carries its first set-aside time under (never sent to the service)
PARKED = "_set_aside_at"


class ServiceUnavailable(HermesCtxError, RuntimeError):
    """The provider's circuit breaker is open: the call was not made."""


class _Deferred(HermesCtxError, RuntimeError):
    """A write keeps failing while the service answers, and another was set aside a moment ago: wait."""

    def __init__(self, message: str, wait: float) -> None:
        super().__init__(message)
        self.wait = wait


class _GivenUp(HermesCtxError, RuntimeError):
    """A write set aside for :data:`PARK_FOR` still fails: dropped (counted as refused)."""


@dataclass
class WriteStats(QueueStats):
    """What the write queues of a provider did since it started."""

    #: writes set aside (and queued again later) because the service kept failing them while it answered
    set_aside: int = 0

    @property
    def sent(self) -> int:
        """Writes the service took."""
        return self.applied

    @property
    def rejected(self) -> int:
        """Writes refused as invalid, by the service or before sending (never retried)."""
        return self.quarantined


class ServiceWrites(Consumer[Write]):
    """A provider's writes: JSON lines, sent one at a time.

    :param send: delivers one write through the breaker; raises :class:`ServiceUnavailable` while it
        is open, anything else when the delivery failed
    :param is_client_error: whether a failure is the service refusing the write (dropped, never retried)
    :param retry_after: the Retry-After the service sent with a failure, in seconds, if any
    :param paused_for: how long the breaker still keeps calls off, in seconds (0: calls may go)
    :param on_overflow: called the first time a full queue drops a write
    :param cooldown: the breaker's cool-down: no retry waits longer (the breaker decides long pauses)
    :param answers: whether the service answers a request other than the write (see the module docs);
        ``None``: never asked, a failing write is an outage
    :param backlog: where a write set aside goes (``queue.jsonl``: the queue takes it over again)
    :param stats: counts the writes set aside
    """

    quarantine_note = "the service refused it: it is dropped, not retried"

    def __init__(self, name: str, directory: Path, *, send: Callable[[Write], None],
                 is_client_error: Callable[[BaseException], bool],
                 retry_after: Callable[[BaseException], float | None], paused_for: Callable[[], float],
                 on_overflow: Callable[[], None], retry_after_cap: float, cooldown: float,
                 answers: Callable[[], bool] | None = None, backlog: Path | None = None,
                 stats: WriteStats | None = None, clock: Callable[[], float] = time.time) -> None:
        self.name = name
        self.directory = directory
        self._send = send
        self._answers = answers
        self._backlog = backlog
        self._stats = stats
        self._clock = clock
        #: the write failing now (as encoded), how many times in a row, since when
        self._failing: tuple[bytes, int, float] | None = None
        #: when a write was last set aside, and whether one was delivered since
        self._parked_at = float("-inf")
        self._delivered_since = True
        self._is_client_error = is_client_error
        self._retry_after = retry_after
        self._paused_for = paused_for
        self._on_overflow = on_overflow
        self.retry_after_cap = retry_after_cap
        self.cooldown = cooldown

    def encode(self, record: Write) -> bytes:
        # ASCII JSON: a lone surrogate in a write (an id, a text) is kept as an escape, never an
        # encoding error that would lose the write
        return json.dumps(record).encode("ascii")

    def decode(self, line: bytes) -> Write:
        write = json.loads(line)
        if not isinstance(write, dict):
            raise ValueError(f"a queued write must be a JSON object, not {type(write).__name__}")
        return write

    def open(self) -> _Delivery:
        return _Delivery(self.deliver, ProgressFiles(self.directory))

    def deliver(self, write: Write) -> None:
        """Send ``write``, or set it aside when the service keeps failing it alone (see the module docs);
        raises when it is neither."""
        sent = {key: value for key, value in write.items() if key != PARKED}
        try:
            self._send(sent)
        except Exception as exc:
            if not self._stuck(write, exc):
                raise
            try:  # once more, now that the service answered: it may be back since this write failed (an outage ending)
                self._send(sent)
            except Exception as again:
                if isinstance(again, ServiceUnavailable) or self._is_client_error(again):
                    raise
                self._set_aside(write, again)
                return
        self._failing, self._delivered_since = None, True

    def _stuck(self, write: Write, exc: Exception) -> bool:
        """Whether ``write`` keeps failing while the service answers: :data:`STUCK_AFTER` times in a row over
        :data:`STUCK_FOR` seconds, or once for a write set aside before; only then is the service asked (and
        an answer tells the breaker it is up: a write path failing for long while the service answers does
        not keep recall stopped)."""
        if self._answers is None or self._backlog is None or isinstance(exc, ServiceUnavailable) \
                or self._is_client_error(exc):
            return False
        key, now = self.encode(write), self._clock()
        known = self._failing if self._failing is not None and self._failing[0] == key else None
        count, since = (known[1] + 1, known[2]) if known is not None else (1, now)
        self._failing = (key, count, since)
        if PARKED not in write and (count < STUCK_AFTER or now - since < STUCK_FOR):
            return False  # a brief failure: an outage, as any (the breaker decides)
        return self._answers()

    def _set_aside(self, write: Write, exc: Exception) -> None:
        now = self._clock()
        first = write.get(PARKED)
        first = float(first) if isinstance(first, (int, float)) and not isinstance(first, bool) else now
        if now - first >= PARK_FOR:
            raise _GivenUp(f"the service kept failing this write for {PARK_FOR / 3600:g} h while it answered other "
                           f"requests (last: {type(exc).__name__}: {exc})") from exc
        wait = self._parked_at + PARK_INTERVAL - now
        if not self._delivered_since and wait > 0:
            raise _Deferred(f"the service keeps failing writes while it answers other requests "
                            f"({type(exc).__name__}: {exc})", wait) from exc
        assert self._backlog is not None  # _stuck said so
        append_backlog(self._backlog, [self.encode({**write, PARKED: first}) + b"\n"])
        self._failing, self._parked_at, self._delivered_since = None, now, False
        if self._stats is not None:
            self._stats.add(set_aside=1)
        log.warning("%s: the service keeps failing one write (%s: %s) while it answers other requests; it is set "
                    "aside in %s and sent again after the writes queued behind it", self.name, type(exc).__name__,
                    exc, self._backlog)

    def failure(self, exc: Exception) -> Failure:
        return Failure.REJECT if isinstance(exc, _GivenUp) or self._is_client_error(exc) else Failure.OUTAGE

    def retry_delay(self, exc: BaseException, failures: int) -> float:
        if isinstance(exc, _Deferred):
            return exc.wait
        if isinstance(exc, ServiceUnavailable):
            # open: wait out the cool-down; else another call holds the probe: wait for its verdict
            return self._paused_for() or 0.1
        delay = min(0.5 * 2.0 ** (failures - 1), 30.0)
        after = self._retry_after(exc)
        if after is not None:
            delay = max(delay, min(after, self.retry_after_cap))
        return min(delay, max(self.cooldown, 0.05))

    def overflowed(self) -> None:
        self._on_overflow()


class _Delivery:
    """The sink: sends each write, then records the progress in the segment's progress file."""

    def __init__(self, send: Callable[[Write], None], progress: ProgressFiles) -> None:
        self._send = send
        self._progress = progress

    def write(self, records: Sequence[Write], *, segment: str = "", offset: int = 0) -> int:
        for write in records:  # one per batch (batch_size 1), so the progress follows every send
            self._send(write)
        try:
            self._progress.record(segment, offset)
        except OSError as exc:  # sent all the same: failing here would send it again at every retry
            log.warning("cannot record a delivered write in %s (%s); a crash before the next one is "
                        "recorded sends it again", self._progress.directory, exc)
        return len(records)

    def quarantine(self, segment: str, offset: int, raw: str, error: str, attempts: int) -> None:
        self._progress.record(segment, offset)

    def progress(self) -> dict[str, int]:
        return self._progress.progress()

    def drop_progress(self, segments: Iterable[str]) -> None:
        self._progress.drop_progress(segments)

    def close(self) -> None:
        """Nothing to release: the SDK client is the provider's."""

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
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from ...errors import HermesCtxError
from ...storage.queue import Consumer, Failure, ProgressFiles, QueueStats

log = logging.getLogger("hermes_ctx_plugins.memory")

Write = dict[str, Any]
#: whether a queued write belongs to the user being forgotten
WriteMatch = Callable[[Write], bool]


class ServiceUnavailable(HermesCtxError, RuntimeError):
    """The provider's circuit breaker is open: the call was not made."""


class WriteStats(QueueStats):
    """What the write queues of a provider did since it started."""

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
    """

    quarantine_note = "the service refused it: it is dropped, not retried"

    def __init__(self, name: str, directory: Path, *, send: Callable[[Write], None],
                 is_client_error: Callable[[BaseException], bool],
                 retry_after: Callable[[BaseException], float | None], paused_for: Callable[[], float],
                 on_overflow: Callable[[], None], retry_after_cap: float, cooldown: float) -> None:
        self.name = name
        self.directory = directory
        self._send = send
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
        return _Delivery(self._send, ProgressFiles(self.directory))

    def failure(self, exc: Exception) -> Failure:
        return Failure.REJECT if self._is_client_error(exc) else Failure.OUTAGE

    def retry_delay(self, exc: BaseException, failures: int) -> float:
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

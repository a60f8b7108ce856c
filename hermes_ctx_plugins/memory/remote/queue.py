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

**One write the service keeps failing** (a 403 from a firewall that dislikes its text, a 500 from the one shard it
goes to) must not hold up every user's writes behind it, nor open the breaker and so stop recall for everyone. Once
it has failed :data:`STUCK_AFTER` times in a row over :data:`STUCK_FOR` seconds (a shorter failure is an outage like
any, order kept) it is *stuck*: tried again quietly (its failures no longer count against the breaker), and then the
writes queued behind it are tried in order until one is taken (at most :data:`LOOKAHEAD`: a user sending a refused
text again is no outage; not through the breaker's gate, so also while it is open): when one is taken,
the service works and only this write fails, so it is *set aside* — appended to ``queue.jsonl`` with when it was
first set aside, on the disk before its place in the queue is given up — and the queue goes on (the write tried
ahead is not sent again). The queue takes it back at its next look for left-over writes (a minute later), behind
what came meanwhile; failing again then, it is set aside again as soon as a write behind it is taken. When the writes
behind fail too, the service is failing: an outage, the writes wait in order. With no write behind it, a stuck
write holds nobody up: it is tried again every :data:`LONE_RETRY` seconds, and as soon as (within :data:`LONE_POLL`
seconds) a write is queued behind it. A write still failing :data:`PARK_FOR` after it was first set aside is
dropped, counted as refused and logged. So a bad write costs order (it is delivered after later ones), never another
write. A forget of its owner running meanwhile is never undone by it (:meth:`ServiceWrites.forgetting`).

**One user limited** (a Bridge: one provider for every user of a deployment). The writes tried ahead of a stuck one
are other owners' when any are queued (:data:`SCAN_BEHIND`): one user's limit fails every write of theirs, and tried
ahead they made it an outage for all. A write refused with a Retry-After (a rate limit, usually per caller) is set
aside at its first failure once another owner's write behind it is taken (one, tried once a write), and another
owner's write put while the queue waits out that limit ends the wait (once a write: a limit on everyone costs one
request more, not one at each failure and each put); while an owner's write was set aside in the last
:data:`OWNER_FAILING_FOR` seconds, their next one is treated as stuck at once. Writes sent ahead are not handed over
again when the queue stops (:meth:`ServiceWrites.applied_ahead`).
"""

from __future__ import annotations

import contextlib
import json
import logging
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...errors import HermesCtxError
from ...isolation import error_text
from ...storage.leftovers import append_backlog
from ...storage.queue import Consumer, Failure, ProgressFiles, QueueStats
from ...storage.segments import exclusive

log = logging.getLogger("hermes_ctx_plugins.memory")

Write = dict[str, Any]
#: whether a queued write belongs to the user being forgotten
WriteMatch = Callable[[Write], bool]


#: failures in a row of one write, over :data:`STUCK_FOR` seconds at least, after which it is *stuck*: the write
#: queued behind it is tried (a failure shorter than that is an outage like any: order kept)
STUCK_AFTER = 3
STUCK_FOR = 3.0
#: writes behind a stuck one tried, in order, until one is taken (two or three bad writes in a row, a user sending a
#: refused text again, are not an outage); all failing, the service is failing
LOOKAHEAD = 3
#: how far behind a stuck write other owners' writes are looked for: one user's limit (a 429 for their id, a
#: shard of theirs down) fails all of that user's writes, and tried ahead they said "outage" for everyone
SCAN_BEHIND = 64
#: seconds between two tries of a stuck write with no write behind it; how often the queue looks for one meanwhile
LONE_RETRY = 30.0
LONE_POLL = 2.0
#: a write set aside this long ago (seconds) that still fails is dropped
PARK_FOR = 24 * 3600.0
#: for this long (seconds) after an owner's write was set aside, their next write is tried as a stuck one at once
OWNER_FAILING_FOR = 60.0
#: the key a set-aside write carries its first set-aside time under (never sent to the service)
PARKED = "_set_aside_at"


class ServiceUnavailable(HermesCtxError, RuntimeError):
    """The provider's circuit breaker is open: the call was not made."""


class _Deferred(HermesCtxError, RuntimeError):
    """A stuck write with no write behind it waits for its next try (:data:`LONE_RETRY`), not sent meanwhile."""

    def __init__(self, message: str, wait: float) -> None:
        super().__init__(message)
        self.wait = wait


class _GivenUp(HermesCtxError, RuntimeError):
    """A write set aside :data:`PARK_FOR` ago still fails: dropped (counted as refused)."""


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
    :param send_ahead: delivers one write ignoring an open breaker (success and failure still tell it): the
        write behind a stuck one (see the module docs); ``None``: a failing write is always an outage
    :param send_quietly: delivers one write ignoring an open breaker, its failure not counted: a stuck write
    :param following: the first ``n`` writes queued behind the one being delivered
    :param owner_of: whose a write is (``None``: nobody's in particular): the writes tried ahead of a stuck one are
        other owners', when there are any within :data:`SCAN_BEHIND`
    :param backlog: where a write set aside goes (``queue.jsonl``: the queue takes it over again)
    :param stats: counts the writes set aside
    :param problem: what makes a decoded object no write of this provider (``None``: it is one)
    """

    quarantine_note = "the service refused it: it is dropped, not retried"

    def __init__(self, name: str, directory: Path, *, send: Callable[[Write], None],
                 is_client_error: Callable[[BaseException], bool],
                 retry_after: Callable[[BaseException], float | None], paused_for: Callable[[], float],
                 on_overflow: Callable[[], None], retry_after_cap: float, cooldown: float,
                 send_ahead: Callable[[Write], None] | None = None,
                 send_quietly: Callable[[Write], None] | None = None,
                 following: Callable[[int], list[Write]] = lambda n: [], backlog: Path | None = None,
                 stats: WriteStats | None = None, clock: Callable[[], float] = time.time,
                 owner_of: Callable[[Write], str | None] = lambda write: None,
                 problem: Callable[[Write], str | None] = lambda write: None) -> None:
        self.name = name
        self._problem = problem
        self._owner_of = owner_of
        self.directory = directory
        self._send = send
        self._send_ahead = send_ahead
        self._send_quietly = send_quietly or send
        self._following = following
        self._backlog = backlog
        self._stats = stats
        self._clock = clock
        #: the write failing now (as encoded), how many times in a row, since when, when it is tried next while alone
        self._failing: tuple[bytes, int, float, float] | None = None
        #: the owner whose stuck write was set aside last, and when: their next write is tried as a stuck one at once
        self._owner_failing: tuple[str, float] | None = None
        #: the owner of the write that failed for a limit with no other owner's write behind it: another owner's
        #: write put meanwhile ends the wait once (:meth:`wakes`), then it is tried ahead (:meth:`_limited_alone`)
        self._limited: tuple[str, bytes] | None = None
        #: the last write another owner's write was tried ahead of for its limit, and that a put woke the queue for
        self._probed: bytes | None = None
        self._woken: bytes | None = None
        #: the writes tried ahead of a stuck one and taken (the queue's very objects, so never another one with the
        #: same content): not sent again when their turn comes
        self._sent_ahead: list[Write] = []
        #: forgets running or that ran while a delivery was under way: [match, the tick it ended at or None]
        self._forgets: list[list[Any]] = []
        self._tick = 0
        self._delivering: dict[int, int] = {}  # thread -> the tick its delivery started at
        self._forgets_lock = threading.Lock()
        #: the write being sent ahead of a stuck one (no longer "being applied" for the queue): a forget of its
        #: owner waits for it, as it waits for the write being delivered
        self._ahead: Write | None = None
        self._ahead_done = threading.Condition(self._forgets_lock)
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
        # an object that is no write of this provider (``{}``, a damaged line that still parses) cannot be sent:
        # undecodable, so set aside at once, not retried as a failing service at every start (a review)
        if (problem := self._problem(write)) is not None:
            raise ValueError(f"not a {self.name} write: {problem}")
        return write

    def open(self) -> _Delivery:
        return _Delivery(self.deliver, ProgressFiles(self.directory))

    @contextlib.contextmanager
    def forgetting(self, match: WriteMatch, wait: float = 10.0) -> Iterator[None]:
        """Around a forget of the writes ``match`` selects: a delivery under way meanwhile (which the forget
        may give up waiting for) never sets one of them aside, to come back after the forget; none is sent ahead
        of a stuck write meanwhile, and one being sent ahead is waited for (at most ``wait`` seconds), so it
        cannot reach the service after the forget deleted its copy there."""
        entry: list[Any] = [match, None]
        with self._forgets_lock:
            self._forgets.append(entry)
        try:
            yield
        finally:
            with self._forgets_lock:
                deadline = time.monotonic() + wait
                while self._ahead is not None and match(self._ahead):
                    left = deadline - time.monotonic()
                    if left <= 0:
                        break
                    self._ahead_done.wait(left)
                self._tick += 1
                entry[1] = self._tick
                oldest = min(self._delivering.values(), default=self._tick)
                self._forgets = [f for f in self._forgets if f[1] is None or f[1] > oldest]

    def deliver(self, write: Write) -> bool:
        """Send ``write`` (True), or set it aside when it alone keeps failing (False; see the module docs);
        raises when it is neither."""
        me = threading.get_ident()
        with self._forgets_lock:
            self._delivering[me] = self._tick
        try:
            return self._deliver(write, me)
        finally:
            with self._forgets_lock:
                self._delivering.pop(me, None)

    def _deliver(self, write: Write, me: int) -> bool:
        key = self.encode(write)
        for i, sent in enumerate(self._sent_ahead):
            if sent is write:
                del self._sent_ahead[i]
                return True
        known = self._failing if self._failing is not None and self._failing[0] == key else None
        now = self._clock()
        stuck = self._send_ahead is not None and known is not None and (
            PARKED in write or (known[1] >= STUCK_AFTER and now - known[2] >= STUCK_FOR))
        owner = self._owner_of(write)
        if not stuck and self._send_ahead is not None and owner is not None and self._owner_failing is not None and (
                self._owner_failing[0] == owner and now - self._owner_failing[1] < OWNER_FAILING_FOR):
            # the owner's last write was set aside a moment ago: this one is tried once, then set aside as well if
            # it fails and another owner's write behind it is taken (one user's limit costs the others one try)
            stuck, known = True, known or (key, STUCK_AFTER, now, 0.0)
        if not stuck:
            try:
                self._send(_sendable(write))
            except Exception as exc:
                if not isinstance(exc, ServiceUnavailable) and not self._is_client_error(exc):
                    self._failing = (key, known[1] + 1, known[2], 0.0) if known else (key, 1, now, 0.0)
                    if self._limited_alone(write, key, owner, exc, me):  # set aside at once: others' writes go on
                        self._set_aside(write, exc, me)
                        return False
                raise
            self._limited = None
            self._failing = None
            return True
        assert known is not None and self._send_ahead is not None
        # stuck: tried quietly (its failures tell the breaker nothing more), and only now and then while alone
        if now < known[3] and not self._behind(write):
            raise _Deferred("a write keeps failing and nothing waits behind it", min(LONE_POLL, known[3] - now))
        try:
            self._send_quietly(_sendable(write))
        except Exception as exc:
            if self._is_client_error(exc):
                raise
            self._failing = (key, known[1] + 1, known[2], now + LONE_RETRY)
            behind = self._behind(write)
            if not behind:
                raise _Deferred(f"a write keeps failing ({error_text(exc)[0]}) and nothing waits behind it",
                                LONE_POLL) from exc
            if not self._try_ahead(behind, me):  # all failing too: the service does (an outage)
                raise exc from None
            try:  # once more: an outage may have ended between the two (then only these two swap places)
                self._send_quietly(_sendable(write))
            except Exception as again:
                if self._is_client_error(again):
                    raise
                self._set_aside(write, again, me)
                return False
        self._failing = None
        if self._owner_failing is not None and self._owner_failing[0] == owner:
            self._owner_failing = None
        return True

    def applied_ahead(self, record: Write) -> bool:
        return any(record is sent for sent in self._sent_ahead)

    def wakes(self, record: Write) -> bool:
        limited, self._limited = self._limited, None  # once a write: a limit on everyone is not hammered at each put
        if limited is not None and self._owner_of(record) != limited[0]:
            self._woken = limited[1]
            return True
        self._limited = limited
        return False

    def _limited_alone(self, write: Write, key: bytes, owner: str | None, exc: Exception, me: int) -> bool:
        """Whether ``write`` failed for a limit of its owner's: the service asked to wait (a Retry-After: a rate
        limit, commonly per caller) and another owner's write behind it, tried ahead, is taken. Waiting out that
        limit held every user's writes for up to three times the Retry-After (a Bridge: one user's 429s). Asked
        once a write, with one other write: a limit on everyone costs one request more, not one at each failure and
        each put (a red-team pass: twelve refused requests in a second where the code before sent one a
        Retry-After). With no other owner's write queued yet, the next one put ends the wait (once a write)."""
        if self._send_ahead is None or owner is None or self._retry_after(exc) is None or self._probed == key:
            return False
        others = [w for w in self._behind(write) if self._owner_of(w) != owner]
        if not others:
            if self._woken != key:
                self._limited = (owner, key)
            return False
        self._probed = key
        return self._try_ahead(others[:1], me)

    def _behind(self, write: Write) -> list[Write]:
        """The writes behind ``write`` (being delivered) not yet sent ahead of it, at most :data:`LOOKAHEAD`: other
        owners' first (a user's limit fails every write of theirs: tried ahead, they made it an outage for all; a
        red-team pass of a Bridge), else its owner's own."""
        behind = [w for w in self._following(SCAN_BEHIND + len(self._sent_ahead))
                  if not any(w is sent for sent in self._sent_ahead)]
        owner = self._owner_of(write)
        others = [w for w in behind if self._owner_of(w) != owner] if owner is not None else []
        return (others or behind)[:LOOKAHEAD]

    def _try_ahead(self, behind: Sequence[Write], me: int) -> bool:
        """Try ``behind`` in order past the breaker's gate until one is taken (or refused as invalid: the service
        answered); whether one was. One whose owner a forget is forgetting, or forgot since this delivery started
        (``behind`` was read before it: a red-team pass saw a forgotten user's write sent ahead after the forget
        deleted their memories), is not sent; one being sent is waited for by such a forget."""
        send = self._send_ahead
        assert send is not None
        for write in behind:
            with self._forgets_lock:
                started = self._delivering.get(me, self._tick)
                if any((f[1] is None or f[1] > started) and f[0](write) for f in self._forgets):
                    continue
                self._ahead = write
            try:
                send(_sendable(write))
            except Exception as exc:
                if self._is_client_error(exc):  # sent again at its turn, refused and dropped then
                    return True
                continue
            else:
                self._sent_ahead = [*self._sent_ahead[-15:], write]
                return True
            finally:
                with self._forgets_lock:
                    self._ahead = None
                    self._ahead_done.notify_all()
        return False

    def _set_aside(self, write: Write, exc: Exception, me: int) -> None:
        now = self._clock()
        first = write.get(PARKED)
        first = float(first) if isinstance(first, (int, float)) and not isinstance(first, bool) else now
        self._failing = None
        if now - first >= PARK_FOR:
            raise _GivenUp(f"the service kept failing this write for {PARK_FOR / 3600:g} h while it took others "
                           f"(last: {error_text(exc)[0]})") from exc
        assert self._backlog is not None
        # under the folder's lock, as a forget clears queue.jsonl under it: either the forget finds the write there,
        # or this finds the forget and leaves the write out
        with exclusive(self.directory):
            if self._forgotten(write, me):
                log.info("%s: a write being set aside was forgotten meanwhile; it is not kept", self.name)
                return
            append_backlog(self._backlog, [self.encode({**write, PARKED: first}) + b"\n"])
        owner = self._owner_of(write)
        self._owner_failing = None if owner is None else (owner, now)
        if self._stats is not None:
            self._stats.add(set_aside=1)
        log.warning("%s: the service keeps failing one write (%s) while it takes the others; it is set aside "
                    "in %s and sent again after the writes queued behind it", self.name, error_text(exc)[0],
                    self._backlog)

    def _forgotten(self, write: Write, me: int) -> bool:
        """Whether a forget that ran (or runs) since this delivery started selects ``write``."""
        with self._forgets_lock:
            started = self._delivering.get(me, self._tick)
            matches = [f[0] for f in self._forgets if f[1] is None or f[1] > started]
        return any(match(write) for match in matches)

    def failure(self, exc: Exception) -> Failure:
        return Failure.REJECT if isinstance(exc, _GivenUp) or self._is_client_error(exc) else Failure.OUTAGE

    def retry_delay(self, exc: BaseException, failures: int) -> float:
        if isinstance(exc, _Deferred):
            return exc.wait
        if isinstance(exc, ServiceUnavailable):
            # open: wait out the cool-down; else another call holds the probe: wait for its verdict
            return self._paused_for() or 0.1
        if self._failing is not None:  # the back-off of the write failing now, not of those before it (set aside)
            failures = min(failures, self._failing[1])
        delay = min(0.5 * 2.0 ** (failures - 1), 30.0)
        after = self._retry_after(exc)
        if after is not None:
            delay = max(delay, min(after, self.retry_after_cap))
        return min(delay, max(self.cooldown, 0.05))

    def overflowed(self) -> None:
        self._on_overflow()


def _sendable(write: Write) -> Write:
    """``write`` as the service is sent it (without when it was set aside)."""
    return {key: value for key, value in write.items() if key != PARKED} if PARKED in write else write


class _Delivery:
    """The sink: sends each write, then records the progress in the segment's progress file."""

    def __init__(self, send: Callable[[Write], bool], progress: ProgressFiles) -> None:
        self._send = send
        self._progress = progress

    def write(self, records: Sequence[Write], *, segment: str = "", offset: int = 0) -> int:
        sent = 0
        for write in records:  # one per batch (batch_size 1), so the progress follows every send
            sent += self._send(write)  # a write set aside is not sent (nor counted as sent)
        try:
            self._progress.record(segment, offset)
        except OSError as exc:  # sent all the same: failing here would send it again at every retry
            log.warning("cannot record a delivered write in %s (%s); a crash before the next one is "
                        "recorded sends it again", self._progress.directory, exc)
        return sent

    def quarantine(self, segment: str, offset: int, raw: str, error: str, attempts: int) -> None:
        self._progress.record(segment, offset)

    def progress(self) -> dict[str, int]:
        return self._progress.progress()

    def drop_progress(self, segments: Iterable[str]) -> None:
        self._progress.drop_progress(segments)

    def close(self) -> None:
        """Nothing to release: the SDK client is the provider's."""

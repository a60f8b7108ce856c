"""Fault isolation: one helper through which the host calls every plugin and provider.

A call that raises (``SystemExit`` too: a plugin calling ``sys.exit()`` must not end hermes) is logged
with the owner's name and counted, and the caller gets a default instead of the exception. After
``threshold`` consecutive failures the owner is suspended for ``cooldown`` seconds; then one probe call
is let through: success closes the breaker, failure suspends it again. Every transition is reported
once through ``on_event`` and the log, never swallowed silently.

**Time limits.** An owner given a limit (:meth:`FaultIsolator.limit`: the host gives one to every
strategy, provider and plugin that is not built in) is called on a worker thread of its own (the same
one call after call while it is free; another while it is busy, so one user's slow call does not hold
another's) and waited for at most that long; past it the call has failed (``PluginTimeout``) and the
caller goes on with the default. The call is not stopped — Python cannot stop a thread — so it is left
to finish, its result dropped; with :data:`MAX_OVERDUE` such calls still running, the owner is not
called until one returns. A write (``bounded=False``: storing a turn, a shutdown's flush) is never
abandoned: losing it would be worse than waiting.

**One user's failures are that user's.** A call may name its *party* (a memory provider's calls: the
deployment and user they are made for, :func:`party_of`). When every failure of a run that reaches the
threshold is one party's — a provider failing on one user's data, an id it cannot take — while another user's
call succeeded within the cool-down and no other user was suspended alone since anybody's last success, only
that party's calls are suspended for the cool-down, every other user's go on, and a new run starts; the
party's first call after it is its probe. Otherwise — failures of more than one party, nobody else served (a
single user), or users suspended alone one after another — the owner is suspended for all as before (a
service down fails everyone). A call naming no party counts as another party. A side call (``resets=False``)
let through as the owner's probe tells nothing: the next call probes again.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import contextvars
import errno
import functools
import logging
import queue
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from .errors import PluginRaisedBaseException, PluginTimeout
from .events import SessionInfo

log = logging.getLogger("hermes_ctx_plugins")

T = TypeVar("T")


#: the most calls of one owner left running past their limit; past it the owner is not called until one returns
MAX_OVERDUE = 4
#: how long an owner's worker thread waits for its next call before it ends (the next call starts another)
WORKER_IDLE_SECONDS = 60.0


class _Worker:
    """A daemon thread running one owner's bounded calls, one at a time; kept while it is free, so that
    calls made one after another run on the same thread (a plugin's per-thread state, such as a sqlite3
    connection, keeps working). It ends after :data:`WORKER_IDLE_SECONDS` without a call (a host dropped
    leaves no thread behind, nor the provider its last call held)."""

    def __init__(self, name: str, *, reusable: bool) -> None:
        self.reusable = reusable
        self._busy = False
        self._ended = False
        self._lock = threading.Lock()
        self._jobs: queue.SimpleQueue[Callable[[], None] | None] = queue.SimpleQueue()
        self.thread = threading.Thread(target=self._serve, name=name, daemon=True)
        self.thread.start()

    def take(self) -> bool:
        """Reserve the worker for one call; ``False`` when it is busy or has ended."""
        with self._lock:
            if self._busy or self._ended:
                return False
            self._busy = True
            return True

    @property
    def ended(self) -> bool:
        return self._ended

    def run(self, fn: Callable[..., T], args: tuple[Any, ...], kwargs: dict[str, Any]) -> concurrent.futures.Future[T]:
        """Run ``fn`` on this (reserved) worker with the caller's context variables; its future."""
        future: concurrent.futures.Future[T] = concurrent.futures.Future()
        context = contextvars.copy_context()  # as a direct call has them

        def job() -> None:
            try:
                result = context.run(fn, *args, **kwargs)
            except BaseException as exc:  # handed to the caller, whatever it is
                self._free()
                # a plugin's CancelledError, GeneratorExit, KeyboardInterrupt...: no signal reaches this thread,
                # so it is that plugin's failure, never one that ends the caller's turn
                future.set_exception(PluginRaisedBaseException.of(exc))
            else:
                self._free()  # before the caller wakes: its next call finds this thread free
                future.set_result(result)

        self._jobs.put(job)
        return future

    def _free(self) -> None:
        with self._lock:
            self._busy = False

    def stop(self) -> None:
        """End the thread once it is free (after the call it runs, if any)."""
        with self._lock:
            self._ended = True
        self._jobs.put(None)

    def _serve(self) -> None:
        while True:
            try:
                job = self._jobs.get(timeout=WORKER_IDLE_SECONDS)
            except queue.Empty:
                with self._lock:
                    if self._busy:  # reserved this very moment: its job is on the way
                        continue
                    self._ended = True
                return
            if job is None:  # stopped
                return
            job()
            del job  # the call's arguments (a provider's method, a turn's text) are not kept while idle
            if not self.reusable:
                return


#: the most characters of an exception's text a status, an event or a log line carries
ERROR_TEXT_CHARS = 500


#: credentials the package was configured with (a memory service's API key): never shown in an error's text
_KNOWN_SECRETS: set[str] = set()


def known_secret(value: str) -> None:
    """Have :func:`error_text` redact ``value`` wherever an error repeats it (8 characters or more), as it is,
    percent-encoded (an error page echoing a URL), in base64 (a Basic header's user part, a token's payload) and with
    any of its characters written as a JSON ``\\u`` escape (a serializer escaping ``-``)."""
    if isinstance(value, str) and len(value) >= 8 and value not in _KNOWN_SECRETS:  # (asked at every client made)
        import base64
        from urllib.parse import quote

        encoded = quote(value, safe="")
        forms = {value, encoded, re.sub("%[0-9A-F]{2}", lambda hexed: hexed[0].lower(), encoded)}
        with contextlib.suppress(UnicodeEncodeError):  # a lone surrogate: as it is only
            raw = value.encode("utf-8")
            for coded in (base64.b64encode(raw).decode("ascii"), base64.urlsafe_b64encode(raw).decode("ascii")):
                forms.update({coded, coded.rstrip("=")})
        _KNOWN_SECRETS.update(forms)


@functools.lru_cache(maxsize=64)
def _escaped_form(secret: str) -> re.Pattern[str]:
    """``secret`` with any of its characters written as a JSON ``\\u`` escape (either case of hex)."""
    return re.compile("".join(f"(?:{re.escape(c)}|\\\\u(?i:{ord(c):04x}))" for c in secret))


_LAST_WORD = re.compile(r"\S+\Z")


def _chained(exc: BaseException) -> bool:
    """Whether ``exc`` carries a cause or context of its own (whose text a traceback shows too, unread here)."""
    return exc.__cause__ is not None or (exc.__context__ is not None and not exc.__suppress_context__)


#: the errors of an operating system refusing a file operation for what the machine is, not for a bug
_REFUSALS = frozenset({errno.EACCES, errno.EPERM, errno.EROFS, errno.ENOSPC, errno.EDQUOT})


def error_text(exc: BaseException, limit: int = ERROR_TEXT_CHARS) -> tuple[str, bool]:
    """``"<type>: <message>"`` of ``exc`` fit to show anyone: on one line, secrets redacted, at most ``limit``
    characters; and whether nothing but white space was changed (then its traceback, which repeats the message, may
    be logged too). A service's error page echoing the API key, or 5 MB of HTML, reached the status events,
    status.json and the log whole (a red-team pass)."""
    from .safety.engine.redact import redact_secrets  # (not at import: most processes never fail)

    raw = f"{type(exc).__name__}: {exc}"
    known = raw
    # in the whole text first: a key the cut below would split is never half shown (a copy: providers add keys from
    # their threads while another thread's failure is read here)
    secrets = tuple(_KNOWN_SECRETS)
    for secret in secrets:
        if secret in known:
            known = known.replace(secret, "[REDACTED:api-key]")
    window = limit * 2 + 6 * max(map(len, secrets), default=0)  # what may be shown (a key escaped is 6x as long)
    if secrets and "\\u" in known[:window]:
        shown = known[:window]
        for secret in secrets:
            shown = _escaped_form(secret).sub("[REDACTED:api-key]", shown)
        known = shown + known[window:]
    head = known[:limit * 2]
    redacted = redact_secrets(head)  # with its lines as they came (a .pgpass line is one only on a line of its own)
    if len(known) > len(head) and not known[len(head)].isspace():
        redacted = _LAST_WORD.sub("", redacted)  # the cut went through it: it may be half a secret, too short to read
    flat = " ".join(redacted.split())
    cut = flat if len(flat) <= limit else flat[:limit - 1] + "\u2026"
    # the traceback repeats the message (and its causes'): logged only for a short one nothing was redacted in
    return cut, known is raw and redacted == head and len(raw) <= limit and not _chained(exc)


@dataclass
class Health:
    """The failure record of one plugin or provider."""

    calls: int = 0
    failures: int = 0
    consecutive_failures: int = 0
    last_error: str = ""
    #: monotonic time until which calls are skipped, or ``None`` when not suspended
    suspended_until: float | None = None
    probing: bool = False
    #: the party every failure of the current run is of (see the module docs); ``None`` with ``mixed``
    party: str | None = None
    #: the current run holds failures of more than one party (or of calls naming none)
    mixed: bool = False
    #: the last two distinct parties whose calls succeeded, and when (the latest first): whether another user
    #: is served is what tells one user's failures from a provider down
    served: tuple[tuple[str, float], ...] = ()
    #: the parties suspended alone since the last success of anybody's (a second one: a provider down)
    alone_since_ok: frozenset[str] = frozenset()


@dataclass(frozen=True)
class StatusEvent:
    """A user-visible status change (a plugin suspended or back, compression blocked, ...)."""

    kind: str
    source: str
    message: str
    #: for an event of one user's calls alone (suspended for, or resumed for, that user): their party
    #: (:func:`party_of`); ``None``: the source as a whole
    party: str | None = None


#: suspended parties kept before those whose cool-down ended are dropped
MAX_PARTIES = 1024


def party_of(session: SessionInfo) -> str:
    """Whom a memory provider's call is made for, as :meth:`FaultIsolator.call`'s ``party``: the session's
    deployment namespace and user, exactly (the namespace's length first: no two owners share a party)."""
    return f"{len(session.deployment)}:{session.deployment}:{session.user_id}"


class FaultIsolator:
    """Calls functions on behalf of named owners, isolating and circuit-breaking their failures."""

    def __init__(
        self,
        *,
        threshold: int = 5,
        cooldown: float = 120.0,
        clock: Callable[[], float] = time.monotonic,
        on_event: Callable[[StatusEvent], None] | None = None,
    ) -> None:
        self.threshold = threshold
        self.cooldown = cooldown
        self.clock = clock
        self.on_event = on_event
        self._health: dict[str, Health] = {}
        self._suspended: set[str] = set()
        #: (owner, party) -> monotonic time until which that party's calls are skipped
        self._parties: dict[tuple[str, str], float] = {}
        #: parties let through again after their cool-down: a failure suspends them again at once (a probe's)
        self._party_probes: set[tuple[str, str]] = set()
        self._lock = threading.Lock()
        #: owner -> the longest a call may take (seconds); owners without one are called directly
        self._limits: dict[str, float] = {}
        #: owner -> its calls past their limit, still running: (what, since when, its limit)
        self._overdue: dict[str, dict[object, tuple[str, float, float]]] = {}
        #: owner -> the thread its bounded calls run on while it is free (a plugin may keep per-thread state)
        self._workers: dict[str, _Worker] = {}

    def close(self) -> None:
        """End the owners' worker threads (each after the call it runs, if any); a later call starts another."""
        with self._lock:
            workers, self._workers = list(self._workers.values()), {}
        for worker in workers:
            worker.stop()

    def limit(self, owner: str, seconds: float | None) -> None:
        """Bound every later call on behalf of ``owner`` to ``seconds`` (``None``: no bound)."""
        if seconds is None:
            self._limits.pop(owner, None)
        else:
            self._limits[owner] = seconds

    def health(self, owner: str) -> Health:
        with self._lock:
            return Health(**vars(self._health.get(owner, Health())))

    def call(self, owner: str, fn: Callable[..., T], /, *args: Any, default: T, resets: bool = True,
             timeout: float | None = None, bounded: bool = True, party: str | None = None, **kwargs: Any) -> T:
        """``fn(*args, **kwargs)``, or ``default`` if it raises, takes longer than ``owner``'s limit, or
        ``owner`` is suspended.

        :param resets: whether a success ends a run of failures. ``False`` for an owner's cheap side
            calls (a strategy's ``should_compress``), which must not hide that its real job keeps
            failing: only a successful ``compress`` clears a strategy's failures.
        :param timeout: this call's limit in place of the owner's (a compaction may take longer than a
            recall).
        :param bounded: ``False`` for a call that must not be abandoned (a write: storing a turn, a shutdown's
            flush): waited for however long it takes (on the owner's worker thread, like its other calls).
        :param party: whom the call is made for (:func:`party_of`): failures all of one party suspend that
            party's calls only (see the module docs)
        """
        probe = owner in self._suspended  # let through, this call is the owner's probe
        if not self.admit(owner, party):
            return default
        limit = timeout if timeout is not None else self._limits.get(owner)
        try:  # an unbounded call of a limited owner runs on its worker too (one thread for its state), waited for
            result = fn(*args, **kwargs) if limit is None else self._bounded(
                owner, limit if bounded else None, fn, args, kwargs)
        except (Exception, SystemExit) as exc:  # isolating plugin failures is this helper's whole job
            self.record_failure(owner, exc, party=party)
            return default
        if resets:
            self.record_success(owner, party=party)
        elif probe:  # a side call let through as the probe tells nothing: the next call probes again
            self._release_probe(owner)
        return result

    def _bounded(self, owner: str, limit: float | None, fn: Callable[..., T], args: tuple[Any, ...],
                 kwargs: dict[str, Any]) -> T:
        """``fn(*args, **kwargs)`` on the owner's worker thread (or, while that one is busy, a thread of its
        own), waited for ``limit`` seconds at most (``None``: as long as it takes).

        :raises PluginTimeout: it did not return in time, or :data:`MAX_OVERDUE` calls of the owner past their
            limit still run (a hung plugin costs that many threads, not one per turn).
        """
        with self._lock:
            overdue = self._overdue.setdefault(owner, {})
            if len(overdue) >= MAX_OVERDUE and limit is not None:  # a write is never refused
                what, since, was = min(overdue.values(), key=lambda item: item[1])
                raise PluginTimeout(f"not called: {len(overdue)} of its calls are still running past their limit "
                                    f"(the oldest, its {what}, for {self.clock() - since:.0f} s, over its {was:g} s)")
            worker = self._workers.get(owner)
            if worker is None or not worker.take():  # busy with another call (another user's, or overdue)
                worker = _Worker(f"hermes-ctx {owner}", reusable=worker is None or worker.ended)
                if worker.reusable:
                    self._workers[owner] = worker
                worker.take()
        what = f"call of {getattr(fn, '__qualname__', None) or getattr(fn, '__name__', 'its function')}"
        started = self.clock()
        future = worker.run(fn, args, kwargs)
        try:
            return future.result(limit)
        except concurrent.futures.TimeoutError:
            with self._lock:
                key = object()
                overdue[key] = (what, started, limit or 0.0)  # (only a limit times out)
            future.add_done_callback(lambda _: overdue.pop(key, None))
            raise PluginTimeout(f"{what} did not return within {limit:g} s; the turn went on without it") from None

    def record_success(self, owner: str, *, party: str | None = None) -> None:
        if party is not None and self._party_probes:
            with self._lock:
                probed = (owner, party) in self._party_probes
                self._party_probes.discard((owner, party))
            if probed:  # that user's probe after their cool-down worked: they are told, as they were told of it
                self._emit("resumed", owner, f"{owner} is working again for this user; resumed", party=party)
        health = self._health.get(owner)
        if health is None:
            # The hot path: an owner that never failed costs one dict lookup per call.
            self._health.setdefault(owner, Health(calls=1, served=() if party is None else ((party, self.clock()),)))
            return
        health.calls += 1
        if party is not None:
            health.served = ((party, self.clock()), *[item for item in health.served if item[0] != party][:1])
        if health.alone_since_ok:
            health.alone_since_ok = frozenset()
        if health.consecutive_failures or health.probing:
            with self._lock:
                # a call made past the breaker's gate (a remote write queue's) may close it too: that is a recovery
                recovered = health.probing or owner in self._suspended
                health.consecutive_failures = 0
                health.suspended_until = None
                health.probing = False
                health.party, health.mixed = None, False
                self._suspended.discard(owner)
            if recovered:
                self._emit("resumed", owner, f"{owner} is working again; resumed")

    def record_failure(self, owner: str, exc: BaseException, *, party: str | None = None) -> None:
        """Count a failure of ``owner`` (also for errors found outside :meth:`call`), made for ``party``."""
        error, whole = error_text(exc)
        with self._lock:
            health = self._health.setdefault(owner, Health())
            health.calls += 1
            health.failures += 1
            if not health.consecutive_failures:
                health.party, health.mixed = party, party is None
            elif party is None or party != health.party:
                health.mixed = True
            health.consecutive_failures += 1
            in_a_row = health.consecutive_failures
            party_probe = party is not None and (owner, party) in self._party_probes
            if party_probe:
                self._party_probes.discard((owner, party))  # type: ignore[arg-type]
            health.last_error = error
            was_probe = health.probing
            health.probing = False
            reached = was_probe or health.consecutive_failures >= self.threshold
            now = self.clock()
            # one user's failures are theirs only while another user is served (within the cool-down), and while no
            # other user was suspended alone since anybody's last success: else the provider is down for all
            lone = party is not None and any(who != party and now - when <= self.cooldown
                                             for who, when in health.served) \
                and not (health.alone_since_ok - {party})
            trip = reached and (health.mixed or not lone)
            alone = None if trip else party if (reached and not health.mixed) or party_probe else None
            if trip:
                health.suspended_until = self.clock() + self.cooldown
                self._suspended.add(owner)
            elif alone is not None:
                health.alone_since_ok = health.alone_since_ok | {alone}
                if len(self._parties) >= MAX_PARTIES:  # the cool-downs that ended go (each user's, if never seen again)
                    self._parties = {key: until for key, until in self._parties.items() if until > now}
                    if len(self._party_probes) >= MAX_PARTIES:  # (cleared with them: a user whose cool-down had
                        self._party_probes.clear()              # ended was never told it works again)
                self._parties[(owner, alone)] = now + self.cooldown
                # a new run: another user's failures need the whole threshold (with this one's calls held, one
                # timeout of anyone else's would suspend it for everyone), a real outage reaches it soon enough
                health.consecutive_failures, health.party, health.mixed = 0, None, False
        # the traceback repeats the message: only when it is the message as it came (no secret in it, not huge), and
        # not for the machine's refusals (a folder this user may not write, a full disk: the message says it all, and
        # a newcomer took eight lines of traceback for a bug of ours)
        traced = whole and not (isinstance(exc, OSError) and exc.errno in _REFUSALS)
        log.warning("%s failed (%d in a row): %s", owner, in_a_row, error, exc_info=exc if traced else None)
        if alone is not None:
            self._emit("suspended", owner,
                       f"{owner} suspended for this user for {self.cooldown:g}s after {in_a_row} "
                       f"consecutive failures of this user's calls (last: {error}); other users' go on", party=alone)
        if trip:
            self._emit(
                "suspended", owner,
                f"{owner} suspended for {self.cooldown:g}s after {health.consecutive_failures} "
                f"consecutive failures (last: {error})",
            )

    def admit(self, owner: str, party: str | None = None) -> bool:
        """Whether a call on behalf of ``owner`` (made for ``party``) may go ahead now.

        ``True`` when ``owner`` is not suspended, or for the one probe call let through after the
        cool-down. For callers that run the call themselves (a background queue, a call whose
        client errors must not count): each admitted call must end in :meth:`record_success` or
        :meth:`record_failure`, or a probe would stay in flight for ever.
        """
        if party is not None and self._parties and not self._party_admitted(owner, party):
            return False
        return owner not in self._suspended or self._admit_probe(owner)

    def _party_admitted(self, owner: str, party: str) -> bool:
        with self._lock:
            until = self._parties.get((owner, party))
            if until is None:
                return True
            if self.clock() < until:
                return False
            del self._parties[(owner, party)]  # its cool-down is over: a failure again suspends it again at once
            self._party_probes.add((owner, party))
            return True

    def _admit_probe(self, owner: str) -> bool:
        with self._lock:
            health = self._health[owner]
            if health.probing or health.suspended_until is None:
                return False
            if self.clock() < health.suspended_until:
                return False
            health.probing = True
            return True

    def _release_probe(self, owner: str) -> None:
        with self._lock:
            health = self._health.get(owner)
            if health is not None and owner in self._suspended:
                health.probing = False

    def status(self, owner: str) -> str:
        """A short human-readable state: ``ok``, ``failing …`` or ``suspended …`` (for everyone, or for the users
        whose calls alone kept failing)."""
        with self._lock:
            health = self._health.get(owner)
            if health is None or not health.failures:
                return "ok"
            if health.consecutive_failures and health.suspended_until is not None:
                left = max(0.0, health.suspended_until - self.clock())
                when = f"probe in {left:.0f}s" if left else "probe on next call"
                return (f"suspended after {health.consecutive_failures} consecutive failures, "
                        f"{when} (last: {health.last_error})")
            now = self.clock()
            alone = sum(1 for (who, _), until in self._parties.items() if who == owner and until > now)
            if alone:
                return (f"suspended for {alone} user{'s' if alone != 1 else ''} whose calls kept failing, other "
                        f"users' go on (last: {health.last_error})")
            if not health.consecutive_failures:
                plural = "s" if health.failures != 1 else ""
                return f"ok ({health.failures} earlier failure{plural}, last: {health.last_error})"
            return f"failing: {health.consecutive_failures} consecutive (last: {health.last_error})"

    def _emit(self, kind: str, owner: str, message: str, *, party: str | None = None) -> None:
        log.warning("%s", message)
        if self.on_event is not None:
            try:
                self.on_event(StatusEvent(kind=kind, source=owner, message=message, party=party))
            except Exception:  # a broken status display must not break the turn either
                log.exception("status callback failed for %r", message)

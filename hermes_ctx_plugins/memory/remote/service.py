"""The service layer of a remote memory provider: what its SDK calls run inside.

* **availability without the network**: the SDK is importable (looked up, not imported) and the
  provider is configured; :meth:`ServiceProvider.availability` says why not;
* **a circuit breaker** (:class:`~hermes_ctx_plugins.isolation.FaultIsolator`, one owner per
  provider) around every call (:meth:`ServiceProvider.call`): after ``failure_threshold``
  consecutive failures calls stop for ``cooldown_seconds``, then one probe decides. Client errors
  (a 404, a 422) prove the service is up and never count;
* **bounded waits** (:meth:`ServiceProvider.run_bounded`): a caller waits a set time, never longer;
* **one id per owner**: a session's memories are stored under :meth:`ServiceProvider.owner_id`,
  one-to-one with its (namespace, user) (:func:`~hermes_ctx_plugins.scope.service_id`), so no user,
  namespace or configured fixed id ever aliases another;
* **texts fitted before they are sent**: a turn's texts, tool results and the tools' text arguments
  go through :func:`~hermes_ctx_plugins.memory.remote.text.fit` with the option bounding their kind;
  a missing, mistyped or hostile tool argument is a :class:`~hermes_ctx_plugins.memory.remote.text.ToolError`
  naming it, the value and what is valid, never counted as a service failure.

What hermes sees of a provider — the write queue, recall, tools, forgetting, status — is
:class:`~hermes_ctx_plugins.memory.remote.base.RemoteProvider`, built on this.
"""

from __future__ import annotations

import contextvars
import importlib.util
import logging
import threading
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, ClassVar, TypeVar

from ...config import hermes_home, plugin_options
from ...errors import ConfigError
from ...events import SessionInfo, Turn
from ...isolation import FaultIsolator, StatusEvent, known_secret
from ...safety.judge import policy_for
from ...safety.policy import Decision
from ...scope import is_service_id, service_id
from ..base import MemoryProvider
from .options import RemoteOptions
from .queue import ServiceUnavailable
from .text import ID_CHARS, ToolError, fit, shown

log = logging.getLogger("hermes_ctx_plugins.memory")

T = TypeVar("T")

#: statuses that mean "the request was wrong", not "the service is failing"
CLIENT_ERROR_STATUSES = frozenset({400, 404, 409, 413, 422})
#: the longest a shutdown, or the interpreter's exit, waits for an SDK import still running on a thread
SDK_IMPORT_WAIT = 30.0


class _SdkImports:
    """The services' SDKs being imported, on recall and tool threads (the first call of a process imports one: mem0's
    takes ~3 s). An interpreter exiting in the middle of one killed the thread inside its extension modules: the
    process ended in SIGABRT ("FATAL: exception not rethrown"; a red-team pass, 10 runs of 10). A shutdown and the
    exit wait for them, :data:`SDK_IMPORT_WAIT` at most."""

    def __init__(self) -> None:
        self._done = threading.Condition()
        self._running = 0
        self._hooked = False
        #: when waiting gives up, once anybody waited (every later wait ends then too: shutdowns and the exit
        #: together wait SDK_IMPORT_WAIT at most, not each of them; a red-team pass saw 30 s twice)
        self._until: float | None = None

    def __enter__(self) -> None:
        with self._done:
            self._running += 1
            if not self._hooked:
                import atexit
                import os

                atexit.register(self.wait)
                if hasattr(os, "register_at_fork"):  # a child has none of its parent's import threads
                    os.register_at_fork(after_in_child=self._forked)
                self._hooked = True

    def _forked(self) -> None:
        self._done = threading.Condition()
        self._running, self._until = 0, None

    def __exit__(self, *exc: object) -> None:
        with self._done:
            self._running -= 1
            if not self._running:  # a later import is waited for afresh (a red-team pass: the exit did not)
                self._until = None
            self._done.notify_all()

    def wait(self, timeout: float = SDK_IMPORT_WAIT) -> bool:
        """Whether no import runs now (after waiting for those that did, at most ``timeout`` seconds counted from the
        first wait of the process that found one running)."""
        import time

        with self._done:
            if not self._running:
                return True
            if self._until is None:
                self._until = time.monotonic() + timeout
            return self._done.wait_for(lambda: not self._running, max(0.0, self._until - time.monotonic()))


#: the one record of SDK imports in progress (an import is the process's, not a provider's)
SDK_IMPORTS = _SdkImports()


def key_problem(key: str) -> str:
    """Why ``key`` cannot be sent as an API key in an HTTP header, or ``""``, never quoting the key:
    the HTTP stack would otherwise fail every request with an error that prints it (into the log,
    ``hermes-ctx doctor`` and the model's tool answers)."""
    for position, char in enumerate(key, 1):
        if "!" <= char <= "~":
            continue
        what = ("a line break" if char in "\r\n" else "a space or tab" if char in " \t"
                else "a control character" if not char.isprintable() or ord(char) < 128 else "a non-ASCII character")
        return (f"it holds {what} at character {position} of {len(key)} (an API key is printable ASCII "
                "without spaces: paste only the key, without 'Token' or 'Bearer' or a trailing newline)")
    return ""


#: whom the calls of this thread are made for (:meth:`ServiceProvider.for_user`); ``None``: nobody in particular
_PARTY: contextvars.ContextVar[str | None] = contextvars.ContextVar("hermes_ctx_service_party", default=None)


class ServiceProvider(MemoryProvider):
    """A memory provider whose memory lives in a remote service (see the module docs).

    Subclasses set :attr:`sdk_module`, :attr:`sdk_package` and :attr:`extra` and implement
    :meth:`configuration_problem`, :meth:`target`, :meth:`http_status` and :meth:`close_client`;
    every id they send for an owner is :meth:`owner_id`.
    """

    options_class: ClassVar[type[Any] | None] = RemoteOptions
    #: the module the SDK installs (looked up, never imported, by :meth:`availability`)
    sdk_module: ClassVar[str] = ""
    #: its PyPI name and our extra that installs it
    sdk_package: ClassVar[str] = ""
    extra: ClassVar[str] = ""
    #: the provider's tools, for recall modes that offer them (see :func:`tool_schema`)
    tools: ClassVar[tuple[dict[str, Any], ...]] = ()
    #: the longest id the service takes; longer owners are stored under a hash (see ``service_id``)
    id_max_chars: ClassVar[int] = 100
    #: the options holding ids used verbatim, which :meth:`check_fixed_id` validates
    fixed_id_options: ClassVar[tuple[str, ...]] = ("user_id", "default_user_id")
    #: the options holding the service's address (empty: the default or an environment variable)
    url_options: ClassVar[tuple[str, ...]] = ()
    #: the text arguments of :attr:`tools` and their kind: ``fact`` (stored: cut to ``max_fact_chars``,
    #: marked, refused when hostile) or ``query`` (searched or asked: cut to ``max_query_chars``)
    text_arguments: ClassVar[Mapping[str, str]] = {}
    #: the keys of a queued write that stay in this process (what finds its owner again), never sent
    local_keys: ClassVar[tuple[str, ...]] = ()
    #: why :meth:`text_value` refuses a hostile fact, after "refused: the text looks like <kinds>; "
    refusal_reason: ClassVar[str] = "it would be shown to future sessions, so it must not carry instructions"
    options: RemoteOptions

    def __init__(self, options: Any = None, **kwargs: Any) -> None:
        super().__init__(options, **kwargs)
        for key in self.fixed_id_options:
            self.check_fixed_id(key)
        self._top_ids: tuple[str, str] | None = None  # :meth:`_top_settings_ids`
        self._check_shared_top_ids()
        for key in self.url_options:
            self.check_url(key)
        self.home = Path(self.hermes_home or hermes_home())
        self.state_dir = self.home / "ctx_plugins" / self.name
        self.breaker = FaultIsolator(threshold=self.options.failure_threshold,
                                     cooldown=self.options.cooldown_seconds, on_event=self.breaker_event)
        self._warned_unusable = False
        self._sdk_found: bool | None = None
        # Calls in flight, and released clients waiting for them to finish before closing: hermes shuts
        # memory down at the end of every agent while other sessions of the process still use it.
        self._calls_lock = threading.Lock()
        self._calls = 0
        self._retired: list[Callable[[], None]] = []

    # ------------------------------------------------------------------ what subclasses implement

    def configuration_problem(self) -> str:
        """Why the provider cannot work as configured (no API key, ...), or ``""``."""
        return ""

    def target(self) -> str:
        """Where the memory lives, for messages (a URL, ``oss``)."""
        return ""

    def http_status(self, exc: BaseException) -> int | None:
        """The HTTP status of the service's answer that ``exc`` reports, if it carries one."""
        return None

    def is_client_error(self, exc: BaseException) -> bool:
        """Whether ``exc`` is the service refusing the request (4xx other than auth and rate limits)."""
        return self.http_status(exc) in CLIENT_ERROR_STATUSES

    def retry_after(self, exc: BaseException) -> float | None:
        """The Retry-After the service sent with ``exc``, in seconds, if any."""
        return None

    def close_client(self) -> None:
        """Release the SDK client (it is built again, lazily, on the next call)."""

    def check(self) -> None:
        """One real request to the service, through the breaker (``hermes-ctx doctor``)."""

    def id_problem(self, value: str) -> str:
        """Why ``value`` cannot be an id at this service, or ``""`` (subclasses add their rules)."""
        if len(value) > self.id_max_chars:
            return f"it is longer than {self.id_max_chars} characters"
        if value == "*" or not value.isprintable() or any(c.isspace() for c in value):
            return "'*', spaces and control characters are not valid in an id"
        return ""

    def check_url(self, key: str) -> None:
        """Raise :class:`ConfigError` unless option ``key`` is empty or an http(s) URL with a host."""
        value = getattr(self.options, key)
        if not value:
            return
        import httpx  # here: importing the package must not load the HTTP stack

        try:
            url = httpx.URL(value)
        except (httpx.InvalidURL, TypeError, ValueError) as exc:
            problem = str(exc)
        else:
            problem = "" if url.scheme in ("http", "https") and url.host else "it is no http(s) URL with a host"
        if problem:
            raise ConfigError(f"{value!r} is not the service's address: {problem}", value=value,
                              path=f"ctx_plugins.options.{self.name}.{key}",
                              expected="an http(s) URL such as https://memory.example.com (or empty)")

    def check_api_key(self, key: str = "api_key") -> None:
        """Raise :class:`ConfigError` (never quoting the key) unless option ``key`` is empty or an
        API key an HTTP header can carry (see :func:`key_problem`)."""
        problem = key_problem(getattr(self.options, key))
        if problem:
            raise ConfigError(f"the API key is not valid: {problem}", value="<hidden>",
                              path=f"ctx_plugins.options.{self.name}.{key}",
                              expected="the service's API key, printable ASCII without spaces (or empty)")
        known_secret(getattr(self.options, key))  # an error page echoing it: redacted wherever it is shown

    def check_fixed_id(self, key: str, *, required: bool = False) -> None:
        """Raise :class:`ConfigError` unless option ``key`` (an id used verbatim; empty: unset,
        unless ``required``) is valid at the service and can never be a user's own id."""
        value = getattr(self.options, key)
        if is_service_id(value):
            problem = (f"{value!r} is the form real users' ids are stored in (u<user>, d<namespace>-u<user>, "
                       "anon, h<hash>), so it would share their memories")
        elif value or required:
            reason = self.id_problem(value) if value else "it is empty"
            problem = f"{value!r} is not a valid id: {reason}" if reason else ""
        else:
            problem = ""
        if problem:
            raise ConfigError(problem, value=value, path=f"ctx_plugins.options.{self.name}.{key}",
                              expected="an id valid at the service that is not u<...>, d<...>-..., anon or h<hash>")

    # ------------------------------------------------------------------ availability

    def availability(self) -> tuple[bool, str]:
        """``(usable, why)`` without touching the network: the SDK is installed and config complete."""
        if self._sdk_found is None:
            self._sdk_found = importlib.util.find_spec(self.sdk_module) is not None
        if not self._sdk_found:
            return False, (f"the {self.sdk_package} package is not installed; "
                           f"install it with: pip install 'hermes-ctx-plugins[{self.extra}]'")
        problem = self.configuration_problem()
        return (False, problem) if problem else (True, self.target())

    def is_available(self) -> bool:
        return self.availability()[0]

    def _usable(self) -> bool:
        usable, why = self.availability()
        if not usable and not self._warned_unusable:
            self._warned_unusable = True
            log.warning("memory provider %s is selected but cannot work: %s", self.name, why)
        return usable

    # ------------------------------------------------------------------ helpers for subclasses

    def turn_text(self, text: str) -> str:
        """A turn's user message or reply as it may be sent (see :func:`fit`, ``max_turn_chars``)."""
        return fit(text, self.options.max_turn_chars).strip()

    def owner_id(self, session: SessionInfo) -> str:
        """The id ``session``'s memories are stored under at the service (see :meth:`owner_for`)."""
        return self.owner_for(session.deployment, self.options.user_id or session.user_id)

    def owner_for(self, deployment: str, user_id: str) -> str:
        """The id the memories of ``user_id`` in namespace ``deployment`` are stored under.

        One-to-one: :func:`~hermes_ctx_plugins.scope.service_id` of the pair, except the configured
        ids of the top-level namespace, used verbatim so existing single-user stores keep their
        memories: ``default_user_id`` for its anonymous user and the fixed ``user_id``. Neither can
        be a ``service_id`` (checked at start), so no real user ever maps onto them.
        """
        if not deployment:
            fixed, default = self._top_level_ids()
            if not user_id and default:
                return default
            if user_id and user_id == fixed:
                return user_id
        return service_id(deployment, user_id, max_chars=self.id_max_chars)

    def _top_level_ids(self) -> tuple[str, str]:
        """``(user_id, default_user_id)`` of the top-level namespace's settings: this provider's own, unless it is a
        deployment's writing under a namespace of its own -- then the top level's (``ctx_plugins.options.<name>``
        before the deployment's). A review: a deployment whose fixed ``user_id`` was the top level's
        ``default_user_id`` made ``forget --user <that id>`` delete the top level's anonymous user's memories."""
        config = self.config
        if config.deployment is None or config.memory_namespace == "":
            return self.options.user_id, self.options.default_user_id
        return self._top_settings_ids()

    def _top_settings_ids(self) -> tuple[str, str]:
        """``(user_id, default_user_id)`` of this provider's top-level settings (``ctx_plugins.options.<name>``)."""
        if self._top_ids is None:
            raw = dict(self.config.top_options.get(self.name) or {})
            try:
                top = plugin_options(self.name, type(self).options_class, raw)
            except ConfigError:  # the top level's own options are refused (its provider says so): the defaults'
                top = plugin_options(self.name, type(self).options_class, {})
            self._top_ids = (top.user_id, top.default_user_id)
        return self._top_ids

    def _check_shared_top_ids(self) -> None:
        """A deployment writing in the top-level namespace must not use the top level's anonymous id as its fixed one,
        or the top level's fixed id as its anonymous one: one's users would be stored, recalled and forgotten as the
        other's (a review)."""
        config = self.config
        if config.deployment is None or config.memory_namespace != "":
            return
        fixed, default = self._top_settings_ids()
        where = f"ctx_plugins.deployments.{config.deployment}.options.{self.name}"
        # an anonymous id is used only where no fixed one is (a review: a deployment inheriting a top level whose
        # user_id and default_user_id were both "team" was refused)
        own_fixed, own_default = self.options.user_id, "" if self.options.user_id else self.options.default_user_id
        for key, value, other, role in (("user_id", own_fixed, "" if fixed else default, "default_user_id"),
                                        ("default_user_id", own_default, fixed, "user_id")):
            if value and value == other:
                raise ConfigError(f"{value!r} is the top level's {role} in the namespace this deployment shares with it"
                                  f" (memory.namespace ''): its users would be stored as the top level's", value=value,
                                  path=f"{where}.{key}", expected=f"an id other than the top level's {role}")

    @staticmethod
    def chat_key(session: SessionInfo) -> str:
        """The chat ``session`` belongs to: its chat id, else the gateway session key, else ``""``."""
        return session.chat_id or str(session.extra.get("gateway_session_key") or "")

    def text_argument(self, args: Mapping[str, Any], key: str, *, required: bool = True) -> str:
        """Tool argument ``key`` (one of :attr:`text_arguments`) as it may be sent; ``""`` when it is
        optional and missing. See :meth:`text_value`."""
        value = args.get(key)
        if value is None and not required:
            return ""
        return self.text_value(value, key)

    def text_value(self, value: Any, key: str, *, label: str = "") -> str:
        """A text the model passed as argument ``key`` (named ``label`` in errors), fitted to the
        limit of its kind (see :attr:`text_arguments` and :func:`fit`), stripped.

        :raises ToolError: it is missing, empty or not a string, or a fact that looks hostile.
        """
        label = label or key
        if value is None or value == "":
            raise ToolError(f"{label} is required")
        if not isinstance(value, str):
            raise ToolError(f"{label} must be a string, not {type(value).__name__} {shown(value)}")
        fact = self.text_arguments[key] == "fact"
        limit = self.options.max_fact_chars if fact else self.options.max_query_chars
        text = fit(value, limit, mark=fact).strip()
        if not text:
            raise ToolError(f"{label} is empty")
        if fact:
            findings = [f for f in policy_for(self.config).unsafe(text) if f.kind != "secret"]
            if findings:
                unsafe = ", ".join(sorted({f.kind for f in findings}))
                why = Decision("block", tuple(findings)).explain()
                raise ToolError(f"refused: the text looks like {unsafe} ({why}); {self.refusal_reason}")
        return text

    def cut_notes(self, args: Mapping[str, Any]) -> list[str]:
        """What a tool's answer tells the model about its text arguments that were cut."""
        notes = []
        for key, kind in self.text_arguments.items():
            value = args.get(key)
            texts = [value] if isinstance(value, str) else value if isinstance(value, list) else []
            longest = max((len(t) for t in texts if isinstance(t, str)), default=0)
            limit = self.options.max_fact_chars if kind == "fact" else self.options.max_query_chars
            if longest > limit:
                what = key if isinstance(value, str) else f"a line of {key}"
                done = "stored, marked as cut" if kind == "fact" else "used"
                notes.append(f"{what} was {longest:,} characters; only the first {limit:,} were {done}")
        return notes

    def tool_results(self, turn: Turn) -> list[tuple[str, str]]:
        """``(tool name, redacted result)`` of the turn's tool calls, when configured to send them."""
        if not self.options.include_tool_results:
            return []
        results = [(fit(call.name, ID_CHARS), fit(call.result, self.options.tool_result_chars))
                   for call in turn.tool_calls if call.result]
        return [(name, text) for name, text in results if text]

    def call(self, fn: Callable[..., T], /, *args: Any, gate: bool = True, count_failure: bool = True,
             counted_for: str | None = None, **kwargs: Any) -> T:
        """``fn(*args, **kwargs)`` through the breaker; raises :class:`ServiceUnavailable` when open.

        :param gate: ``False``: made while the breaker is open too (the write queue's test of the write behind a
            stuck one: its answer is what the breaker needs to hear); its success and failure are counted
        :param count_failure: ``False``: a failure is not counted (a write known to fail alone, tried again)
        :param counted_for: the party its success and failure are counted for, without holding the call when
            that party is paused (the writer's: a write is its owner's, yet must not hold up everyone's behind it)
        """
        gated_for = _PARTY.get()
        party = counted_for if counted_for is not None else gated_for
        if gate and not self.breaker.admit(self.name, gated_for):
            raise ServiceUnavailable(f"{self.name} is paused: {self.breaker.status(self.name)}")
        with self._calls_lock:
            self._calls += 1
        try:
            result = fn(*args, **kwargs)
        except BaseException as exc:
            if isinstance(exc, Exception) and self.is_client_error(exc):
                self.breaker.record_success(self.name, party=party)  # the service answered: it is up
            elif count_failure:
                self.breaker.record_failure(self.name, exc, party=party)
            raise
        finally:
            with self._calls_lock:
                self._calls -= 1
                retired, self._retired = (self._retired, []) if not self._calls else ([], self._retired)
            for close in retired:
                _quietly(close)
        self.breaker.record_success(self.name, party=party)
        return result

    def party_for(self, owner: str) -> str | None:
        """The breaker's party of the calls made for service id ``owner`` (``None``: nobody in particular, as
        with option ``user_id`` storing every user under one id)."""
        return None if not owner or self.options.user_id else f"owner:{owner}"

    def for_user(self, session: SessionInfo, fn: Callable[[], T]) -> T:
        """``fn()``, its :meth:`call` made for ``session``'s user: the breaker suspends a user whose calls alone
        keep failing for that user only (:mod:`hermes_ctx_plugins.isolation`); the writer's calls are held for
        nobody but counted for their write's owner (:meth:`party_for`, the same party as its searches)."""
        token = _PARTY.set(self.party_for(self.owner_id(session)))
        try:
            return fn()
        finally:
            _PARTY.reset(token)

    def retire(self, close: Callable[[], None]) -> None:
        """Run ``close`` (releasing a client) now, or once the calls in flight have finished with it."""
        with self._calls_lock:
            if self._calls:
                self._retired.append(close)
                return
        _quietly(close)

    def run_bounded(self, fn: Callable[[], T], wait: float, what: str) -> T:
        """``fn()`` on a daemon thread (``<name>-<what>``), awaited at most ``wait`` seconds: its
        result or exception, or :class:`TimeoutError` (it then finishes, or not, on its own)."""
        outcome: dict[str, Any] = {}
        done = threading.Event()

        def run() -> None:
            try:
                outcome["result"] = fn()
            except BaseException as exc:  # handed to the waiting caller, who decides
                outcome["error"] = exc
            finally:
                done.set()

        threading.Thread(target=run, name=f"{self.name}-{what}", daemon=True).start()
        if not done.wait(wait):
            raise TimeoutError(f"{self.name} did not finish within {wait:g}s")
        if "error" in outcome:
            raise outcome["error"]
        result: T = outcome["result"]
        return result

    def breaker_event(self, event: StatusEvent) -> None:
        """Told when the breaker suspends calls or lets them through again."""

    def paused_for(self) -> float:
        """How long the breaker still keeps calls off, in seconds (0: calls may go)."""
        health = self.breaker.health(self.name)
        if health.suspended_until is None:
            return 0.0
        return max(0.0, float(health.suspended_until - self.breaker.clock()))


def _quietly(close: Callable[[], None]) -> None:
    try:
        close()
    except Exception as exc:  # closing a broken client must not break anything else
        log.debug("closing a memory service client failed: %s", exc)


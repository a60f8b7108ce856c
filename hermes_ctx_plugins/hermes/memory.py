"""Our memory providers as hermes ``MemoryProvider`` plugins.

hermes finds memory providers only as directories (bundled ``plugins/memory/<name>/`` or
``$HERMES_HOME/plugins/<name>/``), never through entry points. So for each of our external
providers we write a two-line shim package there whose ``register`` hands hermes a
:class:`HermesMemoryAdapter`; ``memory.provider: <name>`` in hermes' config then selects it.
Every call into our provider goes through the host's fault isolation: a provider that raises
(or has been suspended) answers empty and never breaks the user's turn.
"""

from __future__ import annotations

import functools
import json
import logging
import threading
import time
import weakref
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from types import MappingProxyType
from typing import Any

from agent.memory_provider import MemoryProvider as HermesMemoryProvider

from ..errors import HermesCtxError, InvalidSession
from ..events import SessionInfo, Turn, id_text, tool_calls_since_last_user
from ..host import MAX_RECALL_CHARS, UNBOUNDED_METHODS, bounded_text, foreign_code, read_only
from ..isolation import StatusEvent, error_text, party_of
from ..manager import Host, load_host
from ..memory.base import MemoryProvider
from . import bare_schemas, sendable
from .runtime import installed
from .shims import BUNDLED_MEMORY_PROVIDERS as BUNDLED_MEMORY_PROVIDERS
from .shims import ShimReport as ShimReport
from .shims import shim_path as shim_path
from .shims import shim_text as shim_text
from .shims import write_shims as write_shims

log = logging.getLogger("hermes_ctx_plugins.hermes")
#: the most characters of a tool result a memory provider that is not built in hands the model
MAX_TOOL_RESULT_CHARS = 64_000

#: What ``hermes memory status`` / ``hermes memory setup NAME`` show and ask for our built-in remote
#: providers (hermes' ``get_config_schema``): the API key, kept as hermes keeps secrets, in
#: ``$HERMES_HOME/.env``, which hermes loads at start and the providers read when
#: ``ctx_plugins.options.<name>.api_key`` is empty. Without a schema hermes lists a provider as "no setup needed".
_SETUP: Mapping[str, tuple[Mapping[str, Any], ...]] = MappingProxyType({
    "ctx-mem0": (MappingProxyType({
        "key": "api_key", "description": "Mem0 API key (or ctx_plugins.options.ctx-mem0.api_key)",
        "secret": True, "required": True, "env_var": "MEM0_API_KEY", "url": "https://app.mem0.ai"}),),
    "ctx-honcho": (MappingProxyType({
        "key": "api_key", "description": "Honcho API key (not needed for a self-hosted server: "
                                         "ctx_plugins.options.ctx-honcho.base_url)",
        "secret": True, "required": False, "env_var": "HONCHO_API_KEY", "url": "https://app.honcho.dev"}),),
})


def shim_register(name: str) -> Callable[[Any], None]:
    """The ``register(ctx)`` a shim exposes: hands hermes an adapter for our provider ``name``."""

    def register(ctx: Any) -> None:
        ctx.register_memory_provider(HermesMemoryAdapter(name))

    return register


class HermesMemoryAdapter(HermesMemoryProvider):
    """One of our providers, speaking hermes' ``MemoryProvider`` protocol."""

    def __init__(self, provider_name: str, host: Host | None = None) -> None:
        self._name = provider_name
        self._host = host
        self._provider: MemoryProvider | None = None
        self._session = SessionInfo(session_id="")
        self._turn_number = 0
        #: hermes' way to show a warning to the user (its CLI passes one to initialize)
        self._warn: Callable[[str], Any] | None = None
        #: why this agent's memory is off: hermes gave initialize an id that is no id (its calls answer nothing)
        self._refused = ""

    @property
    def name(self) -> str:
        return self._name

    # -- wiring ------------------------------------------------------------------------------
    def _find_host(self) -> Host | None:
        """The host of the runtime hermes' own plugin loading built, else one of ours from hermes'
        config (kept: hermes loaded this provider without our plugin, e.g. ``hermes memory status``)."""
        runtime = installed()
        host = self._host or (runtime.host if runtime is not None else None)
        if host is None:
            try:
                host = self._host = load_host()
            except HermesCtxError as exc:
                log.error("memory provider %r is not usable: %s", self._name, exc)
                return None
        return host

    def _active(self, host: Host) -> MemoryProvider | None:
        return self._provider or next((p for p in host.memory_providers if p.name == self._name), None)

    def _resolve(self) -> tuple[Host, MemoryProvider] | None:
        """Host and provider, activating the provider: only for hermes really using it."""
        host = None if self._refused else self._find_host()
        if host is None:
            return None
        try:
            provider = self._active(host) or host.activate_provider(self._name)
        except HermesCtxError as exc:
            log.error("memory provider %r is not usable: %s", self._name, exc)
            return None
        if provider is not self._provider:  # outages and recoveries, shown to the user once each; held weakly: the
            provider.attach(status_callback=_status_of(weakref.ref(self)))  # provider must not keep a dropped agent
        self._host, self._provider = host, provider
        with host.provider_users_lock:
            host.provider_users.setdefault(provider.name, weakref.WeakSet()).add(self)
        return host, provider

    def _release(self) -> bool:
        """This agent is done with its provider; whether other agents of this process may still use it."""
        host, provider = self._host, self._provider
        if host is None or provider is None:
            return False
        with host.provider_users_lock:
            users = host.provider_users.get(provider.name)
            if users is None:
                return False
            users.discard(self)
            return bool(users)

    def _status(self, event: StatusEvent) -> None:
        if self._host is not None:
            self._host.forward_status(event)
        if self._warn is not None:
            try:
                self._warn(f"memory: {event.message}")
            except Exception:  # hermes' display must not break memory
                log.exception("hermes' warning callback failed")

    def _call(self, method: str, *args: Any, default: Any = None, **kwargs: Any) -> Any:
        resolved = self._resolve()
        if resolved is None:
            return default
        host, provider = resolved
        if foreign_code(provider):  # another plugin's provider reads copies of hermes' messages
            args = tuple(map(read_only, args))
        return host.isolator.call(f"memory:{self._name}", getattr(provider, method), *args, default=default,
                                  bounded=method not in UNBOUNDED_METHODS, party=party_of(self._session), **kwargs)

    def _text(self, method: str, *args: Any, limit: int, **kwargs: Any) -> str:
        """``method``'s answer as text for the prompt (:func:`~hermes_ctx_plugins.host.bounded_text`)."""
        resolved = self._resolve()
        if resolved is None:
            return ""
        host, provider = resolved
        owner, party, foreign = f"memory:{self._name}", party_of(self._session), foreign_code(provider)
        if foreign:
            args = tuple(map(read_only, args))
        answer = host.isolator.call(owner, getattr(provider, method), *args, default="", party=party, **kwargs)
        return sendable(bounded_text(answer, owner=owner, foreign=foreign, what=method, limit=limit,
                                     fail=functools.partial(host.isolator.record_failure, party=party)))

    # -- hermes' MemoryProvider --------------------------------------------------------------
    def get_config_schema(self) -> list[dict[str, Any]]:
        """What hermes' memory setup asks for (see :data:`_SETUP`); ``[]``: nothing to set up."""
        return [dict(field) for field in _SETUP.get(self._name, ())]

    def is_available(self) -> bool:
        """Whether hermes could use this provider if ``memory.provider`` named it: registered, enabled,
        and its own check (packages, credentials; never the network) passes.

        Free of side effects, because hermes asks it of every provider it lists (``hermes memory
        status``, the dashboard, an embedding service's enumeration): nothing is activated, no host
        state changes, no failure is counted. Activation, and the one-external-provider slot, wait
        until hermes really uses the provider (its tools, :meth:`initialize`). An active provider
        answers itself; one that is not active answers on a detached instance that is then dropped:
        constructing a provider opens nothing (no threads, files or connections before first use).
        A suspended provider still counts as available: the suspension ends, an agent's life does not.
        """
        host = self._find_host()
        if host is None:
            return False
        record = next((r for r in host.plugins() if r.kind == "memory" and r.name == self._name), None)
        if record is None or not record.enabled:
            return False
        try:
            provider = self._active(host) or host.provider_instance(self._name)
            if not foreign_code(provider):
                return bool(provider.is_available())
            # another plugin's check: hermes asks it while it builds every agent, so it is bounded (it must
            # not touch the network, but one that does would hold every agent's construction)
            answer: list[bool] = []
            raised: list[Exception] = []

            def ask() -> None:
                try:
                    answer.append(bool(provider.is_available()))
                except Exception as exc:  # told below: a thread's exception reaches no one
                    raised.append(exc)

            worker = threading.Thread(target=ask, daemon=True, name=f"hermes-ctx memory:{self._name} is_available")
            worker.start()
            worker.join(host.config.plugins.call_timeout_seconds)
            if raised:
                log.warning("memory provider %r is not available: its is_available() raised %s", self._name,
                            error_text(raised[0])[0])
            elif not answer:
                log.warning("memory provider %r is not available: its is_available() did not answer within %g s",
                            self._name, host.config.plugins.call_timeout_seconds)
            return bool(answer and answer[0])
        except Exception as exc:  # one that cannot even be built (bad options) is not available
            log.warning("memory provider %r is not available: %s: %s", self._name, type(exc).__name__, exc)
            return False

    def initialize(self, session_id: str, **kwargs: Any) -> None:
        warn = kwargs.get("warning_callback")
        if callable(warn):
            self._warn = warn
        home = kwargs.get("hermes_home")
        known = {"user_id", "chat_id", "platform", "hermes_home", "parent_session_id"}
        try:
            self._session = SessionInfo(
                session_id=str(session_id or ""), user_id=_given(kwargs.get("user_id"), "user_id"),
                chat_id=chat_of(kwargs.get("chat_id"), kwargs.get("gateway_session_key"), kwargs.get("platform"),
                                session_id),
                platform=_given(kwargs.get("platform"), "platform"),
                hermes_home=Path(home) if home else None,
                parent_session_id=_given(kwargs.get("parent_session_id"), "parent_session_id"),
                extra={k: v for k, v in kwargs.items() if k not in known and isinstance(v, (str, int, float, bool))},
            )
        except InvalidSession as exc:  # memory off for this agent: hermes keeps the provider after a failed
            # initialize, and its calls ran as the anonymous user every such agent shared (a review)
            self._refused = str(exc)
            log.error("memory provider %r is off for this agent: %s", self._name, exc)
            return
        self._refused = ""
        resolved = self._resolve()
        if resolved is not None:  # the host's namespace, like every session a provider gets from it
            self._session = resolved[0].scoped(self._session)
        self._call("on_session_start", self._session)

    def system_prompt_block(self) -> str:
        return self._text("system_prompt_block", session=self._session, limit=MAX_RECALL_CHARS)

    def prefetch(self, query: str, *, session_id: str = "") -> str:
        return self._text("prefetch", query, session=self._session, limit=MAX_RECALL_CHARS)

    def queue_prefetch(self, query: str, *, session_id: str = "") -> None:
        self._call("queue_prefetch", query, session=self._session)

    def sync_turn(self, user_content: str, assistant_content: str, *, session_id: str = "",
                  messages: Sequence[dict[str, Any]] | None = None, **_: Any) -> None:
        history = tuple(messages or ())
        self._call("sync_turn", Turn(
            session=self._session, turn_number=self._turn_number, user_text=user_content or "",
            assistant_text=assistant_content or "", tool_calls=tool_calls_since_last_user(history),
            messages=history))

    def get_tool_schemas(self) -> list[dict[str, Any]]:
        return bare_schemas(self._call("get_tool_schemas", default=[]))

    def handle_tool_call(self, tool_name: str, args: dict[str, Any], **kwargs: Any) -> str:
        error = json.dumps({"error": f"memory provider {self._name} is unavailable right now"})
        return self._text("handle_tool_call", tool_name, args, session=self._session, limit=MAX_TOOL_RESULT_CHARS) \
            or error

    def shutdown(self) -> None:
        # Other agents' turns may be in the provider's queue and reader right now: shutting it down under them lost
        # their turns (a red-team pass: 16-28 of 600 turns of four gateway users while agents were evicted). While
        # other agents may use it, what is queued is delivered and the provider stays open: hermes drops agents without
        # shutting their memory down (a model or route change, the API server's per-request agents), and its one-shot
        # mode ends the process without atexit, so waiting for the last shutdown lost the queue at exit (a review).
        # A flush that timed out (a service down) is not waited for again for a minute: hermes' gateway stops its cached
        # agents one after another, and 5 s each passed systemd's stop timeout (a review: 55 s for 12 agents).
        if self._release():
            host, provider = self._host, self._provider
            if host is None or provider is None or time.monotonic() < host.provider_stalled.get(provider.name, 0.0):
                return
            try:
                if not provider.flush(_FLUSH_SECONDS):
                    host.provider_stalled[provider.name] = time.monotonic() + 60.0
                    log.warning("memory provider %r: writes are still queued after %g s; they are sent later, or at "
                                "its next start", self._name, _FLUSH_SECONDS)
            except Exception:  # never hermes' teardown
                log.exception("memory provider %r could not deliver its queued writes", self._name)
            return
        self._call("shutdown")
        self._release()  # _call found the provider again

    def on_turn_start(self, turn_number: int, message: str, **kwargs: Any) -> None:
        self._turn_number = turn_number

    def on_session_end(self, messages: list[dict[str, Any]]) -> None:
        self._call("on_session_end", self._session, messages)

    def on_session_switch(self, new_session_id: str, *, parent_session_id: str = "", reset: bool = False,
                          **kwargs: Any) -> None:
        # hermes names the switch (reason, rewound) but not the session's other fields: what initialize was given
        # stays (the API server's gateway_session_key is its channel: a compaction must not move the channel's memory)
        if self._refused:  # its memory stays off (the id it would carry over is none: the anonymous user's)
            return
        carried = {key: value for key, value in self._session.extra.items() if key not in _SWITCH_ONLY}
        self.initialize(new_session_id, parent_session_id=parent_session_id, user_id=self._session.user_id,
                        chat_id=self._session.chat_id, platform=self._session.platform,
                        hermes_home=self._session.hermes_home, **{**carried, **kwargs})

    def on_pre_compress(self, messages: list[dict[str, Any]]) -> str:
        return self._text("on_pre_compress", messages, limit=MAX_RECALL_CHARS)

    def on_delegation(self, task: str, result: str, **kwargs: Any) -> None:
        self._call("on_delegation", task, result, session=self._session)

    def on_memory_write(self, action: str, target: str, content: str, metadata: Any = None) -> None:
        self._call("on_memory_write", action, target, content)


#: how long an agent's memory shutdown waits for the queue while other agents use the provider
_FLUSH_SECONDS = 2.0


def _status_of(adapter: weakref.ref[HermesMemoryAdapter]) -> Callable[[StatusEvent], None]:
    """The status callback a provider keeps: the adapter's, held weakly."""

    def status(event: StatusEvent) -> None:
        held = adapter()
        if held is not None:
            held._status(event)

    return status


#: what hermes says of one session switch, not of the session (not carried to the next switch)
_SWITCH_ONLY = frozenset({"reason", "rewound"})


def chat_of(chat_id: Any, gateway_session_key: Any, platform: Any, session_id: Any) -> str:
    """The chat a session of hermes belongs to: the chat id hermes names. Its API server (the gateway's
    OpenAI-compatible platform) names none, nor a user: a client's channel is its session key
    (X-Hermes-Session-Key, "a stable per-channel identifier that scopes long-term memory"; ctx-mem0/ctx-honcho read
    it so too), and a client sending none is its conversation (its session id: a red-team pass found every such
    client sharing one chat, and recalling the others' turns)."""
    chat = _given(chat_id, "chat_id") or _given(gateway_session_key, "chat_id")
    if not chat and platform == "api_server":
        return _given(session_id, "session_id")
    return chat


def _given(value: Any, field: str) -> str:
    """A session field hermes passes to ``initialize``, as text: ``None`` and ``""`` are none given, an int or a UUID
    its text (a platform's user id ``0`` is a user, not the anonymous one ``str(value or "")`` made it), anything else
    refused (:func:`~hermes_ctx_plugins.events.id_text`: ``str(b"zed")`` is the user ``"b'zed'"``)."""
    return "" if value is None else id_text(value, field)

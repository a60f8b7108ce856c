"""Our memory providers as hermes ``MemoryProvider`` plugins.

hermes finds memory providers only as directories (bundled ``plugins/memory/<name>/`` or
``$HERMES_HOME/plugins/<name>/``), never through entry points. So for each of our external
providers we write a two-line shim package there whose ``register`` hands hermes a
:class:`HermesMemoryAdapter`; ``memory.provider: <name>`` in hermes' config then selects it.
Every call into our provider goes through the host's fault isolation: a provider that raises
(or has been suspended) answers empty and never breaks the user's turn.
"""

from __future__ import annotations

import logging
import os
import tempfile
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agent.memory_provider import MemoryProvider as HermesMemoryProvider

from ..errors import HermesCtxError
from ..events import SessionInfo, Turn, tool_calls_since_last_user
from ..isolation import StatusEvent
from ..manager import Host, load_host
from ..memory.base import MemoryProvider
from . import bare_schemas

log = logging.getLogger("hermes_ctx_plugins.hermes")

#: Provider directories hermes bundles; a user directory of the same name is never loaded.
BUNDLED_MEMORY_PROVIDERS = frozenset({
    "mem0", "honcho", "retaindb", "holographic", "hindsight", "openviking", "supermemory", "byterover",
})
_SHIM = (
    '"""hermes-ctx-plugins MemoryProvider shim for {name!r}: written by hermes-ctx, safe to delete."""\n'
    "from hermes_ctx_plugins.hermes.memory import shim_register as _shim; register = _shim({name!r})\n"
)


@dataclass(frozen=True)
class ShimReport:
    """What :func:`write_shims` did, per provider name."""

    written: tuple[str, ...] = ()
    unchanged: tuple[str, ...] = ()
    #: a different file is already there: left alone, hermes will load that one instead
    conflicts: tuple[Path, ...] = ()
    #: the name is one of hermes' bundled providers, which always win
    shadowed: tuple[str, ...] = ()


def write_shims(hermes_home: Path, names: Iterable[str]) -> ShimReport:
    """Make each provider in ``names`` discoverable by hermes, idempotently and never destructively."""
    written, unchanged, conflicts, shadowed = [], [], [], []
    for name in sorted(set(names)):
        if name in BUNDLED_MEMORY_PROVIDERS:
            shadowed.append(name)
            continue
        path = hermes_home / "plugins" / name / "__init__.py"
        text = _SHIM.format(name=name)
        try:
            existing = path.read_text(encoding="utf-8") if path.exists() else None
        except OSError:
            existing = ""
        if existing == text:
            unchanged.append(name)
            continue
        if existing is not None:
            conflicts.append(path)
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".shim-")
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.replace(tmp, path)
        written.append(name)
    for path in conflicts:
        log.warning("not writing the hermes-ctx memory shim %s: a different file is there; "
                    "move it away if hermes should load our provider %r", path, path.parent.name)
    for name in shadowed:
        log.warning("our memory provider %r has the name of a provider bundled with hermes, which hermes "
                    "always loads instead; rename it to use it through memory.provider", name)
    return ShimReport(tuple(written), tuple(unchanged), tuple(conflicts), tuple(shadowed))


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

    @property
    def name(self) -> str:
        return self._name

    # -- wiring ------------------------------------------------------------------------------
    def _resolve(self) -> tuple[Host, MemoryProvider] | None:
        if self._provider is not None and self._host is not None:
            return self._host, self._provider
        try:
            from . import plugin  # the host hermes' own plugin loading built, when it did

            host = self._host or plugin.HOST or load_host()
            provider = next((p for p in host.memory_providers if p.name == self._name), None)
            if provider is None:
                provider = host.activate_provider(self._name)
        except HermesCtxError as exc:
            log.error("memory provider %r is not usable: %s", self._name, exc)
            return None
        self._host, self._provider = host, provider
        if hasattr(provider, "status_callback"):  # outages and recoveries, shown to the user once each
            provider.status_callback = self._status
        return host, provider

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
        return host.isolator.call(f"memory:{self._name}", getattr(provider, method), *args,
                                  default=default, **kwargs)

    # -- hermes' MemoryProvider --------------------------------------------------------------
    def is_available(self) -> bool:
        """Config and registration only: never the network (hermes calls this at start-up)."""
        resolved = self._resolve()
        return resolved is not None and bool(self._call("is_available", default=False))

    def initialize(self, session_id: str, **kwargs: Any) -> None:
        warn = kwargs.get("warning_callback")
        if callable(warn):
            self._warn = warn
        home = kwargs.get("hermes_home")
        known = {"user_id", "chat_id", "platform", "hermes_home", "parent_session_id"}
        self._session = SessionInfo(
            session_id=session_id or "", user_id=str(kwargs.get("user_id") or ""),
            chat_id=str(kwargs.get("chat_id") or ""), platform=str(kwargs.get("platform") or ""),
            hermes_home=Path(home) if home else None,
            parent_session_id=str(kwargs.get("parent_session_id") or ""),
            extra={k: v for k, v in kwargs.items() if k not in known and isinstance(v, (str, int, float, bool))},
        )
        resolved = self._resolve()
        if resolved is not None:  # the host's namespace, like every session a provider gets from it
            self._session = resolved[0].scoped(self._session)
        self._call("on_session_start", self._session)

    def system_prompt_block(self) -> str:
        return str(self._call("system_prompt_block", session=self._session, default="") or "")

    def prefetch(self, query: str, *, session_id: str = "") -> str:
        return str(self._call("prefetch", query, session=self._session, default="") or "")

    def queue_prefetch(self, query: str, *, session_id: str = "") -> None:
        self._call("queue_prefetch", query, session=self._session)

    def sync_turn(self, user_content: str, assistant_content: str, *, session_id: str = "",
                  messages: Sequence[dict[str, Any]] | None = None, **_: Any) -> None:
        history = list(messages or ())
        self._call("sync_turn", Turn(
            session=self._session, turn_number=self._turn_number, user_text=user_content or "",
            assistant_text=assistant_content or "", tool_calls=tool_calls_since_last_user(history),
            messages=tuple(history)))

    def get_tool_schemas(self) -> list[dict[str, Any]]:
        return bare_schemas(self._call("get_tool_schemas", default=[]))

    def handle_tool_call(self, tool_name: str, args: dict[str, Any], **kwargs: Any) -> str:
        error = f'{{"error": "memory provider {self._name} is unavailable right now"}}'
        return str(self._call("handle_tool_call", tool_name, args, session=self._session, default=error))

    def shutdown(self) -> None:
        self._call("shutdown")

    def on_turn_start(self, turn_number: int, message: str, **kwargs: Any) -> None:
        self._turn_number = turn_number

    def on_session_end(self, messages: list[dict[str, Any]]) -> None:
        self._call("on_session_end", self._session, messages)

    def on_session_switch(self, new_session_id: str, *, parent_session_id: str = "", reset: bool = False,
                          **kwargs: Any) -> None:
        self.initialize(new_session_id, parent_session_id=parent_session_id, user_id=self._session.user_id,
                        chat_id=self._session.chat_id, platform=self._session.platform,
                        hermes_home=self._session.hermes_home, **kwargs)

    def on_pre_compress(self, messages: list[dict[str, Any]]) -> str:
        return str(self._call("on_pre_compress", messages, default="") or "")

    def on_delegation(self, task: str, result: str, **kwargs: Any) -> None:
        self._call("on_delegation", task, result, session=self._session)

    def on_memory_write(self, action: str, target: str, content: str, metadata: Any = None) -> None:
        self._call("on_memory_write", action, target, content)

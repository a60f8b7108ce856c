"""The base class every memory provider derives from."""

from __future__ import annotations

import json
from collections.abc import Callable, Collection, Sequence
from pathlib import Path
from typing import Any, ClassVar

from ..config import Config, plugin_options
from ..events import Forgotten, Message, SessionInfo, Turn
from ..isolation import StatusEvent


class MemoryProvider:
    """A store of cross-session memory: what it recalls goes into the model's context.

    Shaped after hermes' own ``MemoryProvider`` so the adapter stays thin. Every method has a
    no-op default; a provider overrides what it supports. Rules the host relies on:

    * construction and :meth:`is_available` never touch the network, and construction opens
      nothing (no threads, files or connections before first use): the host builds detached
      instances to ask them questions (hermes lists every provider's availability) and drops them;
    * :meth:`prefetch` returns quickly (the host waits for another plugin's provider at most
      ``ctx_plugins.call_timeout_seconds``, and adds at most 16,000 characters of its text);
    * :meth:`sync_turn` may run on a background thread;
    * nothing a provider raises ever reaches the user's turn: the host logs, counts and, after
      repeated failures, suspends the provider for a cool-down.
    """

    #: the provider's name in config; letters, digits, ``-``, ``_`` and ``.``
    name: ClassVar[str] = ""
    #: external providers count against the one-external-provider limit
    external: ClassVar[bool] = True
    #: one line shown by ``hermes-ctx plugins``
    description: ClassVar[str] = ""
    #: a frozen dataclass for ``ctx_plugins.options.<name>``, or ``None`` for a plain mapping
    options_class: ClassVar[type[Any] | None] = None
    #: where to report what the user should see (an outage, a recovery, a full queue); see :meth:`attach`
    status_callback: Callable[[StatusEvent], None] | None = None

    def __init__(self, options: Any = None, *, hermes_home: Path | None = None,
                 config: Config | None = None) -> None:
        #: the whole config, for providers that need more than their options (read-only)
        self.config = config or Config()
        self.options = plugin_options(type(self).name, type(self).options_class, options)
        self.hermes_home = hermes_home

    def attach(self, *, status_callback: Callable[[StatusEvent], None]) -> None:
        """Called by the host right after it builds a provider to use, and again by a host that takes
        it over (hermes' adapter, which also shows the events as hermes warnings).

        :param status_callback: receives the status events the user should see, each once (an outage
            and the recovery, not every failed call).

        The default keeps it in :attr:`status_callback`; a provider that reports through something
        else (a queue, a client) overrides this and passes it on.
        """
        self.status_callback = status_callback

    def is_available(self) -> bool:
        """Whether the provider can work here (credentials, packages); never uses the network."""
        return True

    def on_session_start(self, session: SessionInfo) -> None:
        """Called when a conversation starts; ``session`` scopes everything stored after it."""

    def system_prompt_block(self, *, session: SessionInfo | None = None) -> str:
        """Static text for ``session``'s system prompt, fixed for the session (keeps the prefix
        cache); ``None`` only from hosts that serve one session per provider."""
        return ""

    def prefetch(self, query: str, *, session: SessionInfo) -> str:
        """Return what is worth recalling for ``query``, formatted for the model; may be empty."""
        return ""

    def queue_prefetch(self, query: str, *, session: SessionInfo) -> None:
        """Start fetching for the next turn in the background (optional)."""

    def sync_turn(self, turn: Turn) -> None:
        """Store a finished turn."""

    def on_pre_compress(self, messages: Sequence[Message]) -> str:
        """Called before the conversation is compressed; returns text the summary must keep."""
        return ""

    def on_memory_write(self, action: str, target: str, content: str) -> None:
        """Mirror a write the host's own memory tool made (``add`` / ``replace`` / ``remove``)."""

    def on_delegation(self, task: str, result: str, *, session: SessionInfo) -> None:
        """A sub-agent finished ``task`` with ``result`` (hermes' delegate tool)."""

    def on_session_end(self, session: SessionInfo, messages: Sequence[Message]) -> None:
        """Called when the conversation really ends (may precede the last :meth:`sync_turn`)."""

    def get_tool_schemas(self) -> list[dict[str, Any]]:
        """OpenAI function schemas of the tools this provider offers the model."""
        return []

    def handle_tool_call(self, name: str, args: dict[str, Any], *, session: SessionInfo | None = None) -> str:
        """Run one of this provider's tools; returns the tool result text (JSON by convention)."""
        return json.dumps({"error": f"{self.name} has no tool named {name!r}"})

    def flush(self, timeout: float = 5.0) -> bool:
        """Wait until every write accepted so far is stored (at most ``timeout`` seconds); whether
        it was. Providers that write behind (a queue, a thread) override it; tests and
        ``forget_user`` rely on it."""
        return True

    def forget_user(self, user_id: str, *, namespaces: Collection[str] | None = None) -> list[Forgotten]:
        """Remove everything this provider holds of ``user_id`` (compared exactly), wherever it
        keeps it: stored memories, queued and spooled writes, the service's copy.

        Called by ``Host.forget_user`` / ``hermes-ctx forget --user``, possibly from another
        process than the one serving the user.

        :param namespaces: the deployments' memory namespaces to clear; ``None`` = every one
            (a store that cannot list them uses :meth:`Config.memory_namespaces`).
        :returns: one :class:`Forgotten` per store touched. Never raises for a store that cannot
            be cleared: that store's entry carries the ``error``.
        """
        return [Forgotten(store=self.name, removed=None, error=f"{self.name} cannot forget a user")]

    def shutdown(self) -> None:
        """Flush and release resources; called once when the host stops."""

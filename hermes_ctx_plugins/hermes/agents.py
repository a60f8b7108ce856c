"""Which hermes agent a call is for, and what our plugin tells that agent's user.

hermes 0.19.0 hands plugins no agent: hooks get a session id, the context engine gets messages,
plugin commands get only their arguments. Two things need the agent all the same:

- **status events** (a compaction done, a summary that failed, a provider's breaker open) belong in
  hermes' own ``status_callback`` — how its CLI, TUI and gateway show "compacting…" — never in model
  output;
- **hermes' memory switches**: an agent built with ``skip_memory=True`` runs no memory, and ours must
  not either.

:class:`Agents` keeps a weak index from session id to the live agent. The context engine (a deep
copy per agent) learns its agent when hermes calls its ``on_session_start``: both of hermes' call
sites (``agent_init``'s ``agent`` and an ``AIAgent`` method's ``self``) hold the agent whose
``context_compressor`` is that very copy, and :func:`find_caller_agent` reads it from the calling
frames. A Bridge tells us its agents directly. The index never keeps an agent alive.
"""

from __future__ import annotations

import contextlib
import logging
import sys
import threading
import weakref
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from ..isolation import StatusEvent
from . import sendable

log = logging.getLogger("hermes_ctx_plugins.status")

#: our event kinds that say something went wrong or is held back: hermes' "warn" status (the others
#: are its "lifecycle" ones, like its own "compacting…" notice)
WARNING_KINDS = frozenset({"failed", "blocked", "suspended", "plugin-failed", "unavailable", "overflow"})

#: how far up the stack :func:`find_caller_agent` looks (hermes' call sites are 1 to 3 frames up)
_FRAMES = 8


def find_caller_agent(engine: object) -> Any | None:
    """The hermes agent whose ``context_compressor`` is ``engine``, found in the frames calling us."""
    frame = sys._getframe(1)
    for _ in range(_FRAMES):
        frame = frame.f_back  # type: ignore[assignment]
        if frame is None:
            return None
        for name in ("agent", "self"):
            candidate = frame.f_locals.get(name)
            if candidate is not None and candidate is not engine and \
                    getattr(candidate, "context_compressor", None) is engine:
                return candidate
    return None


def deliver(agent: Any, event: StatusEvent) -> None:
    """Show ``event`` to ``agent``'s user the way hermes shows its own status lines: through the
    agent's ``status_callback`` (``"warn"`` or ``"lifecycle"``) when the CLI, TUI or a gateway set
    one; without one (plain ``hermes chat``) only a warning is printed, through hermes' own
    ``_emit_warning``, so a healthy run's output stays the model's answer. Never raises."""
    kind = "warn" if event.kind in WARNING_KINDS else "lifecycle"
    message = sendable(f"hermes-ctx: {event.message}")  # a gateway sends it on: no lone surrogate
    try:
        callback = getattr(agent, "status_callback", None)
        if callable(callback):
            callback(kind, message)
        elif kind == "warn":
            emit = getattr(agent, "_emit_warning", None)
            if callable(emit):
                emit(message)
    except Exception:  # the user's display must never break a turn
        log.debug("hermes' status callback failed for %r", message, exc_info=True)


@dataclass
class Compaction:
    """One compaction this process ran (numbers only: ``/ctx`` may be asked in a shared gateway)."""

    when: float
    strategy: str
    messages_before: int
    messages_after: int
    tokens_before: int
    tokens_after: int
    removed: int = 0
    fallback: bool = False


class Agents:
    """Live hermes agents by session id (weak), the agent the current thread works for, and the
    compactions this process ran."""

    def __init__(self) -> None:
        self._by_session: weakref.WeakValueDictionary[str, Any] = weakref.WeakValueDictionary()
        self._current = threading.local()
        self._lock = threading.Lock()
        self.compactions = 0
        self.tokens_saved = 0
        self.last: Compaction | None = None

    def remember(self, session_id: str, agent: Any) -> None:
        if not session_id or agent is None:
            return
        try:
            with self._lock:
                self._by_session[session_id] = agent
        except TypeError:  # an object that cannot be weakly referenced: not kept
            log.debug("hermes-ctx cannot track agent %r", agent)

    def agent_for(self, session_id: str) -> Any | None:
        """The live agent running ``session_id`` (``None``: none known, or it is gone)."""
        with self._lock:
            return self._by_session.get(session_id) if session_id else None

    def live(self) -> list[Any]:
        """Every distinct live agent (one agent may have run several session ids)."""
        with self._lock:
            agents = list(self._by_session.values())
        unique: dict[int, Any] = {id(a): a for a in agents}
        return list(unique.values())

    @contextlib.contextmanager
    def acting_for(self, agent: Any | None) -> Iterator[None]:
        """Status events raised on this thread meanwhile go to ``agent``'s user."""
        previous = getattr(self._current, "agent", None)
        self._current.agent = agent
        try:
            yield
        finally:
            self._current.agent = previous

    def on_event(self, event: StatusEvent) -> None:
        """A status event of the host: logged (hermes' ``agent.log`` gets it) and shown to the user
        of the agent this thread works for, if any."""
        log.info("%s: %s", event.source, event.message)
        agent = getattr(self._current, "agent", None)
        if agent is not None:
            deliver(agent, event)

    def record(self, compaction: Compaction) -> None:
        with self._lock:
            self.compactions += 1
            self.tokens_saved += max(0, compaction.tokens_before - compaction.tokens_after)
            self.last = compaction

"""hermes' plugin hooks, mapped onto our lifecycle hooks.

Every callback accepts ``**kwargs`` (hermes adds ``telemetry_schema_version`` and grows its hook
signatures) and never raises into hermes: our host already isolates each plugin, and anything
that still goes wrong here is logged.

Of hermes' hooks only ``pre_llm_call`` names the user (``sender_id``); the others name the session,
and the runtime's session table says whose it is. A turn runs from ``pre_llm_call`` to hermes'
``on_session_end`` hook (which fires after every turn, not at the conversation's end). The hooks that
store the user's words — ``post_llm_call`` (the turn) and ``on_session_finalize`` (the conversation's
end) — store nothing when the table no longer knows the owner
(:meth:`~hermes_ctx_plugins.hermes.runtime.SessionTable.knows_owner`).
"""

from __future__ import annotations

import functools
import logging
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from ..events import Request, Response, SessionInfo, Turn, Usage, id_text, tool_calls_since_last_user
from . import sendable
from .speakers import said

if TYPE_CHECKING:
    from ..manager import Host
    from .runtime import Runtime

log = logging.getLogger("hermes_ctx_plugins.hermes")

T = TypeVar("T")


def _never_raises(method: Callable[..., T]) -> Callable[..., T | None]:
    """A hook callback that never raises into hermes, and whose status events (a provider's outage
    while recalling, say) reach the user of the agent running the hook's session."""
    @functools.wraps(method)
    def wrapper(self: HookDispatcher, *args: Any, **kwargs: Any) -> T | None:
        try:
            agent = self.runtime.agent_for(str(kwargs.get("session_id") or ""))
            with self.runtime.agents.acting_for(agent):
                return method(self, *args, **kwargs)
        except Exception:  # a bug of ours must not break the user's turn either
            log.exception("hermes-ctx hook %s failed", method.__name__)
            return None

    return wrapper


#: the hook through which :func:`~hermes_ctx_plugins.hermes.runtime.installed` finds the runtime in
#: hermes' plugin registry (every registration of ours registers it)
ANCHOR_HOOK = "pre_llm_call"


class HookDispatcher:
    """hermes' hook callbacks: turns their keyword arguments into our value objects and calls the
    host each session is routed to (:meth:`Runtime.route <hermes_ctx_plugins.hermes.runtime.Runtime.route>`)."""

    def __init__(self, runtime: Runtime) -> None:
        self.runtime = runtime
        #: whether the first turn of an agent no Bridge bound was looked at for providers listed but not run
        self._unrun_said = False

    def callbacks(self) -> dict[str, Callable[..., Any]]:
        return {
            "on_session_start": self.on_session_start,
            ANCHOR_HOOK: self.pre_llm_call,
            "post_api_request": self.post_api_request,
            "post_llm_call": self.post_llm_call,
            "on_session_end": self.on_session_end,
            "on_session_finalize": self.on_session_finalize,
            # /new and /reset end the conversation just like an exit does; the next one starts
            # with on_session_start once hermes builds its prompt.
            "on_session_reset": self.on_session_finalize,
        }

    def session_for(self, session_id: str = "", model: str = "", platform: str = "", sender_id: Any = None,
                    **_: Any) -> SessionInfo:
        """The session as far as hermes has told us, filling in what this hook left out (a hook
        without ``sender_id`` does not say who the user is; ``""`` says: the anonymous user)."""
        self.runtime.serving()
        # hermes passes platform user ids as ints too: a user id is text, compared exactly
        user_id = None if sender_id is None else id_text(sender_id)
        return self.runtime.sessions.observe(session_id or "", user_id=user_id, platform=platform or "",
                                             model=model or "")

    def owner_known(self, session: SessionInfo, what: str) -> bool:
        """Whether ``what`` of ``session`` may be stored as ``session``'s owner's; when not, says
        why (a warning the first time for a session the table had to drop)."""
        sessions = self.runtime.sessions
        if sessions.knows_owner(session.session_id):
            return True
        if sessions.forgot(session.session_id):
            log.warning("hermes-ctx: the %s of session %r is not stored: more than %d sessions passed through "
                        "this process since its user was named, so who it belongs to is no longer known "
                        "(storing it as the anonymous user's would give it to someone else)",
                        what, session.session_id, sessions.max_sessions)
        else:
            log.info("hermes-ctx: the %s of session %r is not stored: no hook has named its user",
                     what, session.session_id)
        return False

    @_never_raises
    def on_session_start(self, **kwargs: Any) -> None:
        session = self.session_for(**kwargs)
        host, driven = self.runtime.route(session.session_id)
        host.session_start(session, exclude=driven)

    @_never_raises
    def pre_llm_call(self, *, user_message: str = "", conversation_history: list[dict[str, Any]] | None = None,
                     **kwargs: Any) -> dict[str, str] | None:
        """Collect context from our plugins and memory providers for the outgoing user message."""
        session = self.session_for(**kwargs)
        host, driven = self.runtime.route(session.session_id)
        if not self._unrun_said and self.runtime.sessions.binding(session.session_id) is None:
            self._unrun_said = True  # hermes' own agent (a Bridge's runs the list): said once, to the operator (stderr:
            for message in unrun_memory(host):  # a gateway's status line is its first user's chat; a review)
                print(f"hermes-ctx-plugins: {message}", file=sys.stderr)
        history = conversation_history or []
        if kwargs.get("sender_id") is not None:  # who sent this turn's message (hermes keeps it last in the history)
            last = history[-1] if history and isinstance(history[-1], dict) else {}
            stored = said(last) if last.get("role") == "user" else None
            self.runtime.sessions.heard(session.session_id, id_text(kwargs["sender_id"]),  # as told: "" is nobody's
                                        [t for t in (user_message, stored) if isinstance(t, str)])
        turn = self.runtime.sessions.start_turn(session.session_id)
        # no token_estimate: counted only if a plugin reads it (the history grows every turn, and
        # looking at all of it each turn would cost time that grows with it)
        request = Request(session=session, messages=history, model=session.model, turn_number=turn,
                          user_message=user_message or "")
        host.pre_request(request)
        recalled = host.prefetch(user_message or "", session=session, exclude=driven)
        if recalled:
            request.add_context(recalled, source="memory")
        return {"context": sendable(request.context)} if request.contributions else None

    @_never_raises
    def post_api_request(self, *, usage: dict[str, Any] | None = None, **kwargs: Any) -> None:
        session = self.session_for(**kwargs)
        host, _ = self.runtime.route(session.session_id)
        response = kwargs.get("response")
        message = response.get("message") if isinstance(response, dict) else None
        turn = self.runtime.sessions.turn(session.session_id)
        host.post_response(Response(session=session, model=session.model, usage=Usage.from_mapping(usage),
                                    assistant_message=message if isinstance(message, dict) else None,
                                    turn_number=turn), feed_compressor=False)

    @_never_raises
    def post_llm_call(self, *, user_message: str = "", assistant_response: str = "",
                      conversation_history: list[dict[str, Any]] | None = None, **kwargs: Any) -> None:
        session = self.session_for(**kwargs)
        if not self.owner_known(session, "turn"):
            return
        host, driven = self.runtime.route(session.session_id)
        history = conversation_history or []
        host.turn_finalized(Turn(
            session=session, turn_number=self.runtime.sessions.turn(session.session_id),
            user_text=user_message or "", assistant_text=assistant_response or "",
            tool_calls=tool_calls_since_last_user(history), messages=tuple(history)), exclude=driven)

    @_never_raises
    def on_session_end(self, *, session_id: str = "", **_: Any) -> None:
        """The end of a turn (hermes fires it after every one; the conversation's is ``on_session_finalize``)."""
        self.runtime.sessions.end_turn(session_id or "")

    @_never_raises
    def on_session_finalize(self, **kwargs: Any) -> None:
        session = self.session_for(**kwargs)
        if self.owner_known(session, "session end"):
            host, driven = self.runtime.route(session.session_id)
            host.session_end(session, kwargs.get("messages") or (), exclude=driven)
        self.runtime.sessions.end(session.session_id)


def unrun_memory(host: Host) -> list[str]:
    """External providers of ours that ``ctx_plugins.memory.providers`` lists but hermes' ``memory.provider`` does
    not select: for hermes' own agents they store and recall nothing (README), and nothing said so (a newcomer walk:
    Mem0 listed there, no memory sent, no word on the terminal or in the log). Logged too. Asked at the first turn of
    an agent no Bridge bound: a Bridge runs that list (at hermes' start it was a false alarm there; a review), with or
    without our context engine."""
    external = {r.name for r in host.registry if r.kind == "memory" and r.external}
    chosen = host.config.memory.provider
    unrun = [name for name in host.config.provider_names if name in external and name != chosen]
    if not unrun:
        return []
    message = (f"ctx_plugins.memory.providers lists {', '.join(map(repr, unrun))}, which inside hermes runs only as "
               f"hermes' memory.provider (now {chosen or 'none'!r}): it stores and recalls nothing for this agent; "
               f"set memory.provider: {unrun[0]} (one at most), or leave the list to a Bridge")
    log.warning("%s", message)
    return [message]

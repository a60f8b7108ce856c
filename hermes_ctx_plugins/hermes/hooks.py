"""hermes' plugin hooks, mapped onto our lifecycle hooks.

Every callback accepts ``**kwargs`` (hermes adds ``telemetry_schema_version`` and grows its hook
signatures) and never raises into hermes: our host already isolates each plugin, and anything
that still goes wrong here is logged.
"""

from __future__ import annotations

import dataclasses
import functools
import logging
import threading
from collections.abc import Callable
from typing import Any, TypeVar

from ..errors import HermesCtxError
from ..events import Request, Response, SessionInfo, Turn, Usage, tool_calls_since_last_user
from ..manager import Host
from ..scope import describe
from ..tokens import get_counter

log = logging.getLogger("hermes_ctx_plugins.hermes")

T = TypeVar("T")


def _never_raises(method: Callable[..., T]) -> Callable[..., T | None]:
    @functools.wraps(method)
    def wrapper(*args: Any, **kwargs: Any) -> T | None:
        try:
            return method(*args, **kwargs)
        except Exception:  # a bug of ours must not break the user's turn either
            log.exception("hermes-ctx hook %s failed", method.__name__)
            return None

    return wrapper


#: session id -> (the deployment host, who the session is, the agent that holds it) a Bridge bound
#: it to (see ``bridge``)
_SESSION_HOSTS: dict[str, tuple[Host, SessionInfo, int]] = {}
_SESSION_LOCK = threading.Lock()


class SessionInUseError(HermesCtxError, ValueError):
    """A session id is already bound to another owner: hermes' hooks tell us only the session id, so
    two live agents of different owners may not share one."""


def bind_session(session: SessionInfo, host: Host, *, holder: int) -> None:
    """Route hermes' hooks for ``session`` to ``host`` instead of the process-wide one.

    A bound session's memory is driven by ``host`` alone (the Bridge builds its agents without
    hermes' memory manager), and ``session`` says who it is before hermes' first hook does.

    :param holder: the agent holding the binding (``id(agent)``): only it can release it.
    :raises SessionInUseError: another holder has bound this session id to another owner.
    """
    with _SESSION_LOCK:
        bound = _SESSION_HOSTS.get(session.session_id)
        if bound is not None and bound[2] != holder and (
                bound[0] is not host or bound[1].user_id != session.user_id):
            raise SessionInUseError(
                f"session id {session.session_id!r} is already in use by another agent of "
                f"{describe(bound[1].deployment, bound[1].user_id)}; give every agent its own session id "
                "(hooks know a turn's owner only by it), or release the other agent first")
        _SESSION_HOSTS[session.session_id] = (host, session, holder)


def unbind_session(session_id: str, *, holder: int) -> None:
    """Forget a binding, if ``holder`` holds it (another agent that took the id over keeps it)."""
    with _SESSION_LOCK:
        bound = _SESSION_HOSTS.get(session_id)
        if bound is not None and bound[2] == holder:
            del _SESSION_HOSTS[session_id]


def bound_session(session_id: str) -> SessionInfo | None:
    """Who a Bridge-bound session is (``None``: not bound)."""
    bound = _SESSION_HOSTS.get(session_id)
    return bound[1] if bound is not None else None


class HookBridge:
    """Holds the host and turns hermes' hook keyword arguments into our value objects."""

    def __init__(self, host: Host) -> None:
        self.default_host = host
        self._turns: dict[str, int] = {}
        # pre_llm_call is the only hook that says who the user is (sender_id): remember it for
        # the hooks of the same session that do not.
        self._sessions: dict[str, SessionInfo] = {}

    def host_for(self, session_id: str) -> tuple[Host, set[str]]:
        """The session's host, and the providers hermes' memory manager drives itself (through
        our shim, for the one its memory.provider selects) so these hooks must not drive them too."""
        bound = _SESSION_HOSTS.get(session_id)
        if bound is not None:
            return bound[0], set()
        host = self.default_host
        return host, {host.config.memory.provider} - {""}

    def callbacks(self) -> dict[str, Callable[..., Any]]:
        return {
            "on_session_start": self.on_session_start,
            "pre_llm_call": self.pre_llm_call,
            "post_api_request": self.post_api_request,
            "post_llm_call": self.post_llm_call,
            "on_session_finalize": self.on_session_finalize,
            # /new and /reset end the conversation just like an exit does; the next one starts
            # with on_session_start once hermes builds its prompt.
            "on_session_reset": self.on_session_finalize,
        }

    def session_for(self, session_id: str = "", model: str = "", platform: str = "", sender_id: Any = "",
                    **_: Any) -> SessionInfo:
        """The session as far as hermes has told us, filling in what this hook left out."""
        bound = bound_session(session_id or "")
        if bound is not None:  # a Bridge fixed who this session is: hooks cannot change it
            return dataclasses.replace(bound, platform=platform or bound.platform, model=model or bound.model)
        known = self._sessions.get(session_id or "") or SessionInfo(session_id=session_id or "")
        # hermes passes platform user ids as ints too: a user id is text, compared exactly
        user_id = str(sender_id) if sender_id not in (None, "") else known.user_id
        session = dataclasses.replace(known, user_id=user_id, platform=platform or known.platform,
                                      model=model or known.model)
        if session != self._sessions.get(session.session_id):
            self._sessions[session.session_id] = session
        return session

    @_never_raises
    def on_session_start(self, **kwargs: Any) -> None:
        session = self.session_for(**kwargs)
        host, driven = self.host_for(session.session_id)
        host.session_start(session, exclude=driven)

    @_never_raises
    def pre_llm_call(self, *, user_message: str = "", conversation_history: list[dict[str, Any]] | None = None,
                     **kwargs: Any) -> dict[str, str] | None:
        """Collect context from our plugins and memory providers for the outgoing user message."""
        session = self.session_for(**kwargs)
        host, driven = self.host_for(session.session_id)
        history = conversation_history or []
        turn = self._turns[session.session_id] = self._turns.get(session.session_id, 0) + 1
        # Counting the history every turn is incremental (memoised per message), and it keeps the
        # counter warm for the compaction that will eventually come.
        estimate = get_counter(session.model).count_messages(history)
        request = Request(session=session, messages=history, model=session.model, token_estimate=estimate,
                          turn_number=turn, user_message=user_message or "")
        host.pre_request(request)
        recalled = host.prefetch(user_message or "", session=session, exclude=driven)
        if recalled:
            request.add_context(recalled, source="memory")
        return {"context": request.context} if request.contributions else None

    @_never_raises
    def post_api_request(self, *, usage: dict[str, Any] | None = None, **kwargs: Any) -> None:
        session = self.session_for(**kwargs)
        host, _ = self.host_for(session.session_id)
        response = kwargs.get("response")
        message = response.get("message") if isinstance(response, dict) else None
        host.post_response(Response(session=session, model=session.model, usage=Usage.from_mapping(usage),
                                         assistant_message=message if isinstance(message, dict) else None,
                                         turn_number=self._turns.get(session.session_id, 0)), feed_compressor=False)

    @_never_raises
    def post_llm_call(self, *, user_message: str = "", assistant_response: str = "",
                      conversation_history: list[dict[str, Any]] | None = None, **kwargs: Any) -> None:
        session = self.session_for(**kwargs)
        host, driven = self.host_for(session.session_id)
        history = conversation_history or []
        host.turn_finalized(Turn(
            session=session, turn_number=self._turns.get(session.session_id, 0),
            user_text=user_message or "", assistant_text=assistant_response or "",
            tool_calls=tool_calls_since_last_user(history), messages=tuple(history)), exclude=driven)

    @_never_raises
    def on_session_finalize(self, **kwargs: Any) -> None:
        session = self.session_for(**kwargs)
        host, driven = self.host_for(session.session_id)
        host.session_end(session, kwargs.get("messages") or (), exclude=driven)
        self._turns.pop(session.session_id, None)
        self._sessions.pop(session.session_id, None)

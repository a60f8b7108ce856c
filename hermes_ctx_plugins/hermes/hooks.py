"""hermes' plugin hooks, mapped onto our lifecycle hooks.

Every callback accepts ``**kwargs`` (hermes adds ``telemetry_schema_version`` and grows its hook
signatures) and never raises into hermes: our host already isolates each plugin, and anything
that still goes wrong here is logged.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable
from typing import Any, TypeVar

from ..events import Request, Response, SessionInfo, Turn, Usage, tool_calls_since_last_user
from ..manager import Host
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


class HookBridge:
    """Holds the host and turns hermes' hook keyword arguments into our value objects."""

    def __init__(self, host: Host) -> None:
        self.host = host
        self._turns: dict[str, int] = {}
        # The provider hermes' memory.provider selects is driven by hermes' memory manager
        # (through our shim): not through these hooks as well.
        self._hermes_driven = {host.config.memory.provider} - {""}

    def callbacks(self) -> dict[str, Callable[..., Any]]:
        return {
            "on_session_start": self.on_session_start,
            "pre_llm_call": self.pre_llm_call,
            "post_api_request": self.post_api_request,
            "post_llm_call": self.post_llm_call,
            "on_session_finalize": self.on_session_finalize,
        }

    @staticmethod
    def _session(session_id: str = "", model: str = "", platform: str = "", sender_id: str = "",
                 **_: Any) -> SessionInfo:
        return SessionInfo(session_id=session_id or "", user_id=sender_id or "", platform=platform or "",
                           model=model or "")

    @_never_raises
    def on_session_start(self, **kwargs: Any) -> None:
        self.host.session_start(self._session(**kwargs), exclude=self._hermes_driven)

    @_never_raises
    def pre_llm_call(self, *, user_message: str = "", conversation_history: list[dict[str, Any]] | None = None,
                     **kwargs: Any) -> dict[str, str] | None:
        """Collect context from our plugins and memory providers for the outgoing user message."""
        session = self._session(**kwargs)
        history = conversation_history or []
        turn = self._turns[session.session_id] = self._turns.get(session.session_id, 0) + 1
        # Counting the history every turn is incremental (memoised per message), and it keeps the
        # counter warm for the compaction that will eventually come.
        estimate = get_counter(session.model).count_messages(history)
        request = Request(session=session, messages=history, model=session.model, token_estimate=estimate,
                          turn_number=turn, user_message=user_message or "")
        self.host.pre_request(request)
        recalled = self.host.prefetch(user_message or "", session=session, exclude=self._hermes_driven)
        if recalled:
            request.add_context(recalled, source="memory")
        return {"context": request.context} if request.contributions else None

    @_never_raises
    def post_api_request(self, *, usage: dict[str, Any] | None = None, **kwargs: Any) -> None:
        session = self._session(**kwargs)
        response = kwargs.get("response")
        message = response.get("message") if isinstance(response, dict) else None
        self.host.post_response(Response(session=session, model=session.model, usage=Usage.from_mapping(usage),
                                         assistant_message=message if isinstance(message, dict) else None,
                                         turn_number=self._turns.get(session.session_id, 0)))

    @_never_raises
    def post_llm_call(self, *, user_message: str = "", assistant_response: str = "",
                      conversation_history: list[dict[str, Any]] | None = None, **kwargs: Any) -> None:
        session = self._session(**kwargs)
        history = conversation_history or []
        self.host.turn_finalized(Turn(
            session=session, turn_number=self._turns.get(session.session_id, 0),
            user_text=user_message or "", assistant_text=assistant_response or "",
            tool_calls=tool_calls_since_last_user(history), messages=tuple(history)), exclude=self._hermes_driven)

    @_never_raises
    def on_session_finalize(self, **kwargs: Any) -> None:
        session = self._session(**kwargs)
        self.host.session_end(session, kwargs.get("messages") or (), exclude=self._hermes_driven)
        self._turns.pop(session.session_id, None)

"""Fake plugins, a fake compressor and fake memory providers, for tests of plugins and hosts."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Collection, Iterable, Iterator
from typing import Any

from ..compression.base import CompressionResult, CompressorStrategy
from ..events import Forgotten, Message, Request, Response, SessionInfo, Turn
from ..hookspecs import LIFECYCLE_HOOKS, hookimpl
from ..manager import Host
from ..memory.base import MemoryProvider


class RecordingPlugin:
    """Implements every lifecycle hook and records ``(hook_name, value)`` in :attr:`calls`."""

    def __init__(self, context: str | None = None) -> None:
        #: returned from ``pre_request`` (``None`` contributes nothing)
        self.context = context
        self.calls: list[tuple[str, Any]] = []
        self._lock = threading.Lock()

    def _record(self, hook: str, value: Any) -> None:
        with self._lock:
            self.calls.append((hook, value))

    def hooks_called(self) -> list[str]:
        return [hook for hook, _ in self.calls]

    @hookimpl
    def session_start(self, session: SessionInfo) -> None:
        self._record("session_start", session)

    @hookimpl
    def pre_request(self, request: Request) -> str | None:
        self._record("pre_request", request)
        return self.context

    @hookimpl
    def post_response(self, response: Response) -> None:
        self._record("post_response", response)

    @hookimpl
    def turn_finalized(self, turn: Turn) -> None:
        self._record("turn_finalized", turn)


class FailingPlugin(RecordingPlugin):
    """A :class:`RecordingPlugin` whose named hooks record the call, then raise ``error``."""

    def __init__(self, hooks: Iterable[str] = LIFECYCLE_HOOKS, error: Exception | None = None) -> None:
        super().__init__(context="never delivered")
        self.failing = set(hooks)
        self.error = error or RuntimeError("FailingPlugin failed on purpose")

    def _record(self, hook: str, value: Any) -> None:
        super()._record(hook, value)
        if hook in self.failing:
            raise self.error


class FakeCompressor(CompressorStrategy):
    """Keeps the first message and the last ``keep_last`` (option), dropping the middle.

    Tool results are never separated from the assistant message that called them.
    """

    name = "fake"
    description = "test double: drops the middle of the conversation"

    def compress(
        self,
        messages: list[Message],
        *,
        current_tokens: int | None = None,
        focus_topic: str | None = None,
        force: bool = False,
        memory_context: str = "",
    ) -> CompressionResult:
        keep = int(self.options.get("keep_last", 4))
        start = max(1, len(messages) - keep)
        while start > 1 and messages[start].get("role") == "tool":
            start -= 1
        dropped = messages[1:start]
        if not dropped:
            return CompressionResult.unchanged(messages)
        summary = f"[{len(dropped)} earlier messages dropped]"
        marker = {"role": "user", "content": summary}
        return CompressionResult(messages=[*messages[:1], marker, *messages[start:]],
                                 removed=tuple(dropped), summary=summary)


class FakeMemoryProvider(MemoryProvider):
    """Keeps finished turns in memory, per ``user_id`` (:attr:`turns`); recalls those of the session's
    user and deployment sharing a word with the query."""

    name = "fake-memory"
    description = "test double: in-memory turns, scoped per deployment and user"

    def __init__(self, options: Any = None, **kwargs: Any) -> None:
        super().__init__(options, **kwargs)
        #: every stored turn by user id (each turn's session says its deployment)
        self.turns: dict[str, list[Turn]] = {}
        self.sessions: list[SessionInfo] = []
        self.shut_down = False

    def on_session_start(self, session: SessionInfo) -> None:
        self.sessions.append(session)

    def sync_turn(self, turn: Turn) -> None:
        self.turns.setdefault(turn.session.user_id, []).append(turn)

    def prefetch(self, query: str, *, session: SessionInfo) -> str:
        words = {w for w in query.lower().split() if len(w) > 3}
        hits = [t for t in self.turns.get(session.user_id, [])
                if t.session.deployment == session.deployment
                and words & set(f"{t.user_text} {t.assistant_text}".lower().split())]
        return "\n".join(f"- {t.user_text} -> {t.assistant_text}" for t in hits)

    def forget_user(self, user_id: str, *, namespaces: Collection[str] | None = None) -> list[Forgotten]:
        turns = self.turns.pop(user_id, [])
        kept = [t for t in turns if namespaces is not None and t.session.deployment not in namespaces]
        if kept:
            self.turns[user_id] = kept
        return [Forgotten(store=self.name, removed=len(turns) - len(kept))]

    def shutdown(self) -> None:
        self.shut_down = True


class FakeBuiltinMemory(FakeMemoryProvider):
    """Like :class:`FakeMemoryProvider` but not external (it never counts against the limit)."""

    name = "fake-local"
    external = False


class FakesPlugin:
    """A plugin registering :class:`FakeCompressor` and the fake memory providers."""

    @hookimpl
    def register_compressors(self, register: Any) -> None:
        register(FakeCompressor)

    @hookimpl
    def register_memory_providers(self, register: Any) -> None:
        register(FakeMemoryProvider)
        register(FakeBuiltinMemory)


@contextlib.contextmanager
def registered(host: Host, plugin: object, name: str | None = None) -> Iterator[str]:
    """Register ``plugin`` on ``host`` inside the block, and always unregister it afterwards."""
    plugin_name = host.add_plugin(plugin, name)
    try:
        yield plugin_name
    finally:
        host.remove_plugin(plugin_name)

"""Fakes for testing plugins and hosts, public so third-party plugin authors can reuse them.

* :class:`RecordingPlugin` records every lifecycle hook call;
* :class:`FailingPlugin` raises in the hooks you name;
* :class:`FakeCompressor` / :class:`FakeMemoryProvider` are small but honest implementations of
  the two base classes (the provider keeps per-user scopes apart);
* :func:`registered` adds a plugin to a host for the duration of a ``with`` block;
* :class:`StubOpenAIServer` is a loopback OpenAI-compatible server answering from a script;
* :func:`make_transcript` generates deterministic, valid agent transcripts;
* :func:`loopback_only` makes any connection or name lookup outside 127.0.0.0/8 and ::1 fail;
* :class:`Mem0StubServer` / :class:`HonchoStubServer` are stateful loopback Mem0 and Honcho services
  with scriptable faults (:class:`LoopbackService` is their base), :func:`wait_until` polls for
  background work.
"""

from __future__ import annotations

import contextlib
import ipaddress
import socket
import threading
from collections.abc import Iterable, Iterator
from typing import Any

from .compression.base import CompressionResult, CompressorStrategy
from .events import Message, Request, Response, SessionInfo, Turn
from .hookspecs import LIFECYCLE_HOOKS, hookimpl
from .manager import Host
from .memory.base import MemoryProvider
from .stub_server import RecordedRequest, StubOpenAIServer
from .stubs import HonchoStubServer, LoopbackService, Mem0StubServer, ServiceRequest, wait_until

__all__ = [
    "FailingPlugin", "FakeBuiltinMemory", "FakeCompressor", "FakeMemoryProvider", "FakesPlugin",
    "HonchoStubServer", "LoopbackService", "Mem0StubServer", "NetworkBlocked", "RecordedRequest",
    "RecordingPlugin", "ServiceRequest", "StubOpenAIServer", "loopback_only", "make_transcript", "registered",
    "wait_until",
]


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
    """Keeps finished turns in memory, per ``user_id``; recalls those sharing a word with the query."""

    name = "fake-memory"
    description = "test double: in-memory turns, scoped per user"

    def __init__(self, options: Any = None, **kwargs: Any) -> None:
        super().__init__(options, **kwargs)
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
                if words & set(f"{t.user_text} {t.assistant_text}".lower().split())]
        return "\n".join(f"- {t.user_text} -> {t.assistant_text}" for t in hits)

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


# ---------------------------------------------------------------- generated transcripts

_WORDS: tuple[str, ...] = ("deploy", "config", "parser", "cache", "timeout", "retry", "schema", "index", "token",
          "server", "client", "build", "migrate", "release", "branch", "commit", "review", "latency")
_TOOLS: tuple[str, ...] = ("terminal", "read_file", "search_files", "write_file", "patch", "web_search")


def make_transcript(
    seed: int,
    turns: int = 20,
    *,
    system: bool = True,
    tool_rounds: int = 3,
    output_lines: int = 60,
    images: bool = True,
    multipart: bool = True,
    reasoning: bool = True,
    end_mid_turn: bool = False,
) -> list[dict[str, Any]]:
    """A deterministic, valid agent transcript in OpenAI chat format.

    Each turn: a user message (sometimes multi-part, sometimes with an image), up to
    ``tool_rounds`` assistant messages with one to three tool calls each followed by their
    results (long shell output, file contents, JSON, sometimes a repeat of an earlier output),
    then a final assistant answer. Roles alternate as strict backends require.
    """
    import json
    import random

    rng = random.Random(seed)
    messages: list[dict[str, Any]] = []
    if system:
        messages.append({"role": "system", "content": "You are a careful coding agent."})
    outputs: list[str] = []
    call_number = 0

    def words(n: int) -> str:
        return " ".join(rng.choice(_WORDS) for _ in range(n))

    def tool_output(tool: str) -> str:
        if outputs and rng.random() < 0.15:
            return rng.choice(outputs)  # the same file read twice
        lines = rng.randint(output_lines // 4, output_lines)
        if tool == "terminal":
            body = "\n".join(f"[{i:04d}] {words(6)} ok" for i in range(lines))
            text = json.dumps({"output": body, "exit_code": rng.choice((0, 0, 0, 1))})
        elif tool in ("read_file", "write_file", "patch"):
            text = "\n".join(f"def f_{i}(x):\n    return x * {i}  # {words(3)}" for i in range(lines))
        else:
            text = json.dumps({"total_count": lines, "matches": [f"src/{words(1)}_{i}.py:{i}" for i in range(lines)]})
        if rng.random() < 0.1:
            text += f"\nError: {words(4)} failed at src/{words(1)}.py:{rng.randint(1, 999)}"
        outputs.append(text)
        return text

    for turn in range(turns):
        ask = f"turn {turn}: please {words(8)} in src/{rng.choice(_WORDS)}.py"
        if multipart and rng.random() < 0.2:
            parts: list[dict[str, Any]] = [{"type": "text", "text": ask}]
            if images and rng.random() < 0.5:
                parts.append({"type": "image_url",
                              "image_url": {"url": f"data:image/png;base64,{'iVBORw0KGgo' * 20}{turn}"}})
            messages.append({"role": "user", "content": parts})
        else:
            messages.append({"role": "user", "content": ask})
        last_turn = turn == turns - 1
        for _ in range(rng.randint(0, tool_rounds)):
            calls: list[dict[str, Any]] = []
            for _ in range(rng.randint(1, 3)):
                call_number += 1
                tool = rng.choice(_TOOLS)
                arguments = {"command": f"make {words(2)}"} if tool == "terminal" else {
                    "path": f"src/{rng.choice(_WORDS)}_{call_number}.py"}
                if tool == "write_file":
                    arguments["content"] = "\n".join(words(10) for _ in range(rng.randint(5, 80)))
                calls.append({"id": f"call_{call_number}", "type": "function",
                              "function": {"name": tool, "arguments": json.dumps(arguments)}})
            assistant: dict[str, Any] = {"role": "assistant", "content": words(5) if rng.random() < 0.5 else None,
                                         "tool_calls": calls}
            if reasoning and rng.random() < 0.3:
                assistant["reasoning_content"] = f"thinking about {words(12)}"
            messages.append(assistant)
            for call in calls:
                messages.append({"role": "tool", "tool_call_id": call["id"],
                                 "content": tool_output(call["function"]["name"])})
        if last_turn and end_mid_turn and messages[-1]["role"] == "tool":
            break
        messages.append({"role": "assistant", "content": f"done with turn {turn}: {words(10)}"})
    return messages


# ---------------------------------------------------------------- network guard

_real_connect = socket.socket.connect
_real_connect_ex = socket.socket.connect_ex
_real_getaddrinfo = socket.getaddrinfo


class NetworkBlocked(RuntimeError):
    """A test tried to reach an address outside the loopback range."""


def is_loopback(host: Any) -> bool:
    if isinstance(host, bytes):
        host = host.decode()
    if not isinstance(host, str):
        return False
    if host in ("localhost", ""):
        return True
    try:
        return ipaddress.ip_address(host.split("%")[0]).is_loopback
    except ValueError:
        return False


def check_address(sock: socket.socket, address: Any) -> None:
    if sock.family == getattr(socket, "AF_UNIX", None):
        return
    host = address[0] if isinstance(address, tuple) else address
    if not is_loopback(host):
        raise NetworkBlocked(f"test tried to connect to {address!r}; only loopback is allowed")


def _guarded_connect(self: socket.socket, address: Any) -> None:
    check_address(self, address)
    return _real_connect(self, address)


def _guarded_connect_ex(self: socket.socket, address: Any) -> int:
    check_address(self, address)
    return _real_connect_ex(self, address)


def _guarded_getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> Any:
    # Refuse to resolve outside names too: a DNS lookup is already traffic leaving the machine.
    if host is not None and not is_loopback(host):
        raise NetworkBlocked(f"test tried to resolve {host!r}; only loopback is allowed")
    return _real_getaddrinfo(host, *args, **kwargs)


@contextlib.contextmanager
def loopback_only() -> Iterator[None]:
    """Inside the block, connecting to or resolving anything but loopback raises NetworkBlocked."""
    saved = (socket.socket.connect, socket.socket.connect_ex, socket.getaddrinfo)
    socket.socket.connect = _guarded_connect  # type: ignore[method-assign,assignment]
    socket.socket.connect_ex = _guarded_connect_ex  # type: ignore[method-assign,assignment]
    socket.getaddrinfo = _guarded_getaddrinfo
    try:
        yield
    finally:
        socket.socket.connect, socket.socket.connect_ex, socket.getaddrinfo = saved  # type: ignore[method-assign]

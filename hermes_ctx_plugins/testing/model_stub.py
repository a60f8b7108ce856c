"""A loopback OpenAI-compatible server that answers from a script, for tests and benchmarks.

It is a real HTTP server (``ThreadingHTTPServer`` on ``127.0.0.1``, random free port) speaking the
``/v1/chat/completions`` wire format the way hosted endpoints do, so a real client (httpx, the
``openai`` SDK, a whole hermes ``AIAgent``) can be pointed at it::

    with StubOpenAIServer() as server:
        server.reply("Hello!")                                   # next answer
        server.tool_call("read_file", {"path": "a.py"})          # the one after
        server.fail(status=503, message="overloaded")            # then an HTTP error
        client = openai.OpenAI(base_url=server.base_url, api_key="k")
        ...
        assert server.chat_requests[0].headers["authorization"] == "Bearer k"

Scripted answers are consumed in order, one per ``POST /v1/chat/completions``; once the script is
empty ``responder(request_json) -> str`` answers. ``delay`` holds the next answer back, ``hang``
never answers, ``garbage`` sends raw bytes and ``drop`` closes the connection half-way. Requests
with ``"stream": true`` get SSE ``chat.completion.chunk`` events (chunked transfer encoding), a
final ``"choices": []`` chunk carrying ``usage`` (always sent: hermes reads a stream's usage only
from there) and ``data: [DONE]``. ``GET /v1/models`` lists the model; every other route is a 404
with an OpenAI-style error body, which is what hermes' start-up probes (``/api/v1/models``,
``/api/tags``, ``/v1/props``, ``/props``, ``/version``, ``/api/show``) take as "not that server".
"""

from __future__ import annotations

import itertools
import json
import re
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any

from .stubs.base import LoopbackHandler, LoopbackServer

__all__ = ["RecordedRequest", "StubOpenAIServer", "echo_responder", "estimate_prompt_tokens"]

Responder = Callable[[dict[str, Any]], str]
TokenCounter = Callable[[dict[str, Any]], int]

_CHAT_PATH = "/v1/chat/completions"
_MODELS_PATH = "/v1/models"
_PIECE = re.compile(r"\s*\S+\s*|\s+")


@dataclass(frozen=True)
class RecordedRequest:
    """One request the stub received. ``headers`` keys are lower-case."""

    method: str
    path: str
    headers: dict[str, str]
    #: the parsed JSON body, or ``None`` when there was none or it was not JSON
    body: Any
    raw: bytes = field(repr=False)


# The script: what the next chat completion request gets.
@dataclass(frozen=True)
class _Reply:
    text: str
    reasoning: str | None = None
    tool_calls: tuple[tuple[str, str, str], ...] = ()  # (id, name, arguments JSON)
    prompt_tokens: int | None = None


@dataclass(frozen=True)
class _Fail:
    status: int
    message: str
    error_type: str
    code: str | None
    headers: Mapping[str, str]


@dataclass(frozen=True)
class _Hold:
    seconds: float | None  # None: never answer


@dataclass(frozen=True)
class _Garbage:
    body: bytes
    status: int
    content_type: str


@dataclass(frozen=True)
class _Drop:
    text: str
    before_headers: bool


_Step = _Reply | _Fail | _Hold | _Garbage | _Drop


def echo_responder(request: dict[str, Any]) -> str:
    """The default answer: deterministic, and mentions the start of the last user message."""
    for message in reversed(request.get("messages") or []):
        if isinstance(message, dict) and message.get("role") == "user":
            return f"stub reply to: {_text_of(message.get('content'))[:200]}"
    return "stub reply"


def estimate_prompt_tokens(request: dict[str, Any]) -> int:
    """The default ``usage.prompt_tokens``: characters / 4 of the messages and tools, as JSON."""
    payload = [request.get("messages") or [], request.get("tools") or []]
    return max(1, len(json.dumps(payload, ensure_ascii=False)) // 4)


def _text_of(content: Any) -> str:
    if isinstance(content, list):
        return " ".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return "" if content is None else str(content)


class StubOpenAIServer:
    """A scripted OpenAI-compatible chat completions server on ``127.0.0.1`` (see the module docs).

    :param model: the model id ``GET /v1/models`` lists (responses echo the requested model)
    :param responder: answers chat requests when the script is empty
    :param prompt_tokens: computes ``usage.prompt_tokens`` from the request JSON
    :param hang_limit: the longest a ``hang`` or ``delay`` holds a request, in seconds
    """

    def __init__(
        self,
        *,
        model: str = "stub-model",
        responder: Responder = echo_responder,
        prompt_tokens: TokenCounter = estimate_prompt_tokens,
        hang_limit: float = 30.0,
    ) -> None:
        self.model = model
        self.responder = responder
        self.prompt_tokens = prompt_tokens
        self.hang_limit = hang_limit
        self._lock = threading.Lock()
        self._script: deque[_Step] = deque()
        self._requests: list[RecordedRequest] = []
        self._busy = 0.0
        self._ids = itertools.count(1)
        self._closed = False
        self._httpd: LoopbackServer[StubOpenAIServer] = LoopbackServer(self, _Handler)
        self.host = "127.0.0.1"
        self.port: int = self._httpd.port
        self.base_url = f"http://{self.host}:{self.port}/v1"
        self._httpd.serve_in_background(f"stub-openai-{self.port}")

    # -- scripting --------------------------------------------------------------------------------

    def reply(self, text: str, *, reasoning: str | None = None, prompt_tokens: int | None = None) -> None:
        """Answer the next request with ``text`` (and ``reasoning_content``, when given)."""
        self._push(_Reply(text, reasoning=reasoning, prompt_tokens=prompt_tokens))

    def tool_call(
        self,
        name: str,
        arguments: Mapping[str, Any] | str,
        *,
        call_id: str | None = None,
        content: str = "",
        prompt_tokens: int | None = None,
    ) -> None:
        """Answer the next request with one tool call (``arguments`` as a dict or a JSON string)."""
        args = arguments if isinstance(arguments, str) else json.dumps(arguments)
        call = (call_id or f"call_stub_{next(self._ids)}", name, args)
        self._push(_Reply(content, tool_calls=(call,), prompt_tokens=prompt_tokens))

    def fail(
        self,
        status: int = 500,
        message: str = "stub failure",
        *,
        error_type: str | None = None,
        code: str | None = None,
        retry_after: float | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        """Answer the next request with HTTP ``status`` and an OpenAI-style ``{"error": …}`` body."""
        extra = dict(headers or {})
        if retry_after is not None:
            extra["Retry-After"] = f"{retry_after:g}"
        kind = error_type or ("invalid_request_error" if status < 500 else "server_error")
        self._push(_Fail(status, message, kind, code, extra))

    def delay(self, seconds: float) -> None:
        """Hold the next request ``seconds`` (at most ``hang_limit``) before the step after this one
        (or the responder) answers it; a client that gives up meanwhile gets nothing."""
        self._push(_Hold(seconds))

    def hang(self) -> None:
        """Never answer the next request: hold it until the client gives up, the server closes or
        ``hang_limit`` passes, then close the connection."""
        self._push(_Hold(None))

    def garbage(self, body: bytes, *, status: int = 200, content_type: str = "application/json") -> None:
        """Answer the next request with ``body`` verbatim (malformed JSON, an HTML page, …)."""
        self._push(_Garbage(body, status, content_type))

    def drop(self, text: str = "partial answer", *, before_headers: bool = False) -> None:
        """Close the connection half-way through the next answer.

        Streaming: the role chunk and ``text`` as content deltas, then no finish, usage or
        ``[DONE]`` and no final zero-length chunk. Non-streaming: the headers and half the JSON
        body. ``before_headers=True`` closes before sending anything at all.
        """
        self._push(_Drop(text, before_headers))

    def _push(self, step: _Step) -> None:
        with self._lock:
            self._script.append(step)

    def _next_step(self) -> _Step | None:
        with self._lock:
            return self._script.popleft() if self._script else None

    # -- inspection -------------------------------------------------------------------------------

    @property
    def requests(self) -> list[RecordedRequest]:
        """Every request received so far, oldest first (a copy)."""
        with self._lock:
            return list(self._requests)

    @property
    def chat_requests(self) -> list[RecordedRequest]:
        """Only the ``POST /v1/chat/completions`` requests."""
        return [r for r in self.requests if r.method == "POST" and r.path == _CHAT_PATH]

    @property
    def pending(self) -> int:
        """How many scripted steps have not been consumed yet."""
        with self._lock:
            return len(self._script)

    @property
    def busy_seconds(self) -> float:
        """Total time spent handling requests (summed over concurrent requests), delays included."""
        with self._lock:
            return self._busy

    def _record(self, request: RecordedRequest) -> None:
        with self._lock:
            self._requests.append(request)

    def _add_busy(self, seconds: float) -> None:
        with self._lock:
            self._busy += seconds

    # -- lifecycle --------------------------------------------------------------------------------

    def close(self) -> None:
        """Stop serving, cut open connections and join every thread. Idempotent."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
        self._httpd.stop()

    def __enter__(self) -> StubOpenAIServer:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "closed" if self._closed else "open"
        return f"<StubOpenAIServer {self.base_url} {state}>"


class _Handler(LoopbackHandler):
    server_version = "StubOpenAI/1.0"
    server: LoopbackServer[StubOpenAIServer]

    @property
    def _stub(self) -> StubOpenAIServer:
        return self.server.owner

    def serve(self, method: str) -> None:
        started = time.perf_counter()
        try:
            raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            path = self.path.split("?", 1)[0].rstrip("/") or "/"
            try:
                body = json.loads(raw) if raw else None
            except ValueError:
                body = None
            headers = {key.lower(): value for key, value in self.headers.items()}
            self._stub._record(RecordedRequest(method, path, headers, body, raw))
            if method == "GET" and path == _MODELS_PATH:
                model = {"id": self._stub.model, "object": "model", "created": 0, "owned_by": "stub"}
                self._send_json(200, {"object": "list", "data": [model]})
            elif method == "POST" and path == _CHAT_PATH:
                if isinstance(body, dict):
                    self._complete(body)
                else:
                    self._send_error(400, "request body is not a JSON object", "invalid_request_error")
            else:
                self._send_error(404, f"no route for {method} {path}", "invalid_request_error", "not_found")
        finally:
            self._stub._add_busy(time.perf_counter() - started)

    # -- the chat completion ----------------------------------------------------------------------

    def _complete(self, request: dict[str, Any]) -> None:
        stub = self._stub
        # Take the holds and the answer they hold back together, so a client that gives up
        # mid-delay takes its answer with it instead of leaving it to the next request.
        holds: list[float | None] = []
        step = stub._next_step()
        while isinstance(step, _Hold):
            holds.append(step.seconds)
            step = None if step.seconds is None else stub._next_step()
        for seconds in holds:
            if not self.hold(stub.hang_limit if seconds is None else min(seconds, stub.hang_limit)):
                return self._abandon()
        if None in holds:
            return self._abandon()
        if step is None:
            try:
                step = _Reply(stub.responder(request))
            except Exception as exc:
                return self._send_error(500, f"stub responder raised {exc!r}", "server_error")
        stream = bool(request.get("stream"))
        if isinstance(step, _Fail):
            self._send_error(step.status, step.message, step.error_type, step.code, step.headers)
        elif isinstance(step, _Garbage):
            self.send_body(step.status, step.body, step.content_type)
        elif isinstance(step, _Drop):
            if not step.before_headers:
                self._send_partial(request, step.text, stream)
            self._abandon()
        elif stream:
            self._send_stream(request, step)
        else:
            self._send_json(200, self._completion(request, step))

    def _abandon(self) -> None:
        self.close_connection = True

    def _usage(self, request: dict[str, Any], step: _Reply) -> dict[str, int]:
        prompt = step.prompt_tokens if step.prompt_tokens is not None else self._stub.prompt_tokens(request)
        calls = "".join(name + args for _, name, args in step.tool_calls)
        produced = step.text + (step.reasoning or "") + calls
        completion = max(1, len(produced) // 4)
        return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}

    def _envelope(self, request: dict[str, Any], obj: str) -> dict[str, Any]:
        return {
            "id": f"chatcmpl-stub-{next(self._stub._ids)}",
            "object": obj,
            "created": int(time.time()),
            "model": request.get("model") or self._stub.model,
            "system_fingerprint": "fp_stub",
        }

    def _completion(self, request: dict[str, Any], step: _Reply) -> dict[str, Any]:
        message: dict[str, Any] = {"role": "assistant", "content": step.text or None, "refusal": None}
        if step.reasoning is not None:
            message["reasoning_content"] = step.reasoning
        if step.tool_calls:
            message["tool_calls"] = [
                {"id": call_id, "type": "function", "function": {"name": name, "arguments": args}}
                for call_id, name, args in step.tool_calls
            ]
        choice = {
            "index": 0,
            "message": message,
            "logprobs": None,
            "finish_reason": "tool_calls" if step.tool_calls else "stop",
        }
        return {
            **self._envelope(request, "chat.completion"),
            "choices": [choice],
            "usage": self._usage(request, step),
        }

    def _send_stream(self, request: dict[str, Any], step: _Reply) -> None:
        envelope = self._envelope(request, "chat.completion.chunk")
        self._start_stream()
        for delta in _deltas(step):
            self._send_event(_chunk(envelope, delta))
        finish = "tool_calls" if step.tool_calls else "stop"
        self._send_event(_chunk(envelope, {}, finish))
        self._send_event({**envelope, "choices": [], "usage": self._usage(request, step)})
        self._write_chunk(b"data: [DONE]\n\n")
        self.wfile.write(b"0\r\n\r\n")

    def _send_partial(self, request: dict[str, Any], text: str, stream: bool) -> None:
        step = _Reply(text)
        if stream:
            envelope = self._envelope(request, "chat.completion.chunk")
            self._start_stream()
            for delta in _deltas(step):
                self._send_event(_chunk(envelope, delta))
            return
        body = json.dumps(self._completion(request, step)).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body[: len(body) // 2])

    # -- the wire ---------------------------------------------------------------------------------

    def _start_stream(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream; charset=utf-8")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()

    def _send_event(self, event: dict[str, Any]) -> None:
        self._write_chunk(b"data: " + json.dumps(event, ensure_ascii=False).encode() + b"\n\n")

    def _write_chunk(self, data: bytes) -> None:
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))

    def _send_error(
        self,
        status: int,
        message: str,
        error_type: str,
        code: str | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        error = {"error": {"message": message, "type": error_type, "param": None, "code": code}}
        self._send_json(status, error, headers)

    def _send_json(self, status: int, obj: Any, headers: Mapping[str, str] | None = None) -> None:
        self.send_body(status, json.dumps(obj, ensure_ascii=False).encode(), "application/json", headers)


def _deltas(step: _Reply) -> list[dict[str, Any]]:
    """The ``delta`` objects of a streamed answer, before the finishing chunk."""
    deltas: list[dict[str, Any]] = [{"role": "assistant", "content": ""}]
    deltas += [{"reasoning_content": piece} for piece in _PIECE.findall(step.reasoning or "")]
    deltas += [{"content": piece} for piece in _PIECE.findall(step.text)]
    for index, (call_id, name, args) in enumerate(step.tool_calls):
        opening = {"index": index, "id": call_id, "type": "function"}
        deltas.append({"tool_calls": [{**opening, "function": {"name": name, "arguments": ""}}]})
        third = max(1, -(-len(args) // 3))
        deltas += [
            {"tool_calls": [{"index": index, "function": {"arguments": args[i : i + third]}}]}
            for i in range(0, len(args), third)
        ]
    return deltas


def _chunk(envelope: dict[str, Any], delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
    return {**envelope, "choices": [choice]}

"""A loopback OpenAI-compatible server that answers from a script, for tests and benchmarks.

It is a :class:`~hermes_ctx_plugins.testing.LoopbackService` speaking the ``/v1/chat/completions``
wire format the way hosted endpoints do, so a real client (httpx, the ``openai`` SDK, a whole
hermes ``AIAgent``) can be pointed at it::

    with StubOpenAIServer() as server:
        server.reply("Hello!")                                   # next answer
        server.tool_call("read_file", {"path": "a.py"})          # the one after
        server.fail(503, "overloaded")                           # then an HTTP error
        client = openai.OpenAI(base_url=server.base_url, api_key="k")
        ...
        assert server.chat_requests[0].headers["authorization"] == "Bearer k"

Scripted answers and faults are consumed in order, one per ``POST /v1/chat/completions`` (a fault
given a ``path`` applies to that path instead); once the script is empty
``responder(request_json) -> str`` answers. The faults are every stub's (``fail``, ``hang``,
``delay``, ``garbage``, ``drop``, see :mod:`.loopback`): ``delay`` holds back the answer scripted
after it, ``drop()`` cuts it half-way. Requests with ``"stream": true`` get SSE
``chat.completion.chunk`` events (chunked transfer encoding), a final ``"choices": []`` chunk
carrying ``usage`` (always sent: hermes reads a stream's usage only from there) and
``data: [DONE]``; a dropped stream stops before the finishing chunk. ``GET /v1/models`` lists the
model; every other route is a 404 with an OpenAI-style error body, which is what hermes' start-up
probes (``/api/v1/models``, ``/api/tags``, ``/v1/props``, ``/props``, ``/version``, ``/api/show``)
take as "not that server".
"""

from __future__ import annotations

import itertools
import json
import re
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from .loopback import LoopbackService, Reply, ServiceRequest

__all__ = ["StubOpenAIServer", "echo_responder", "estimate_prompt_tokens"]

Responder = Callable[[dict[str, Any]], str]
TokenCounter = Callable[[dict[str, Any]], int]

_CHAT_PATH = "/v1/chat/completions"
_CHAT_ROUTE = rf"^{_CHAT_PATH}/?$"
_MODELS_PATH = "/v1/models"
_PIECE = re.compile(r"\s*\S+\s*|\s+")


@dataclass(frozen=True)
class _Reply:
    """A scripted (or the responder's) answer to one chat completion request."""

    text: str
    reasoning: str | None = None
    tool_calls: tuple[tuple[str, str, str], ...] = ()  # (id, name, arguments JSON)
    prompt_tokens: int | None = None


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


class StubOpenAIServer(LoopbackService):
    """A scripted OpenAI-compatible chat completions server on ``127.0.0.1`` (see the module docs).

    ``base_url`` (``http://127.0.0.1:<port>/v1``) is what an OpenAI client takes.

    :param model: the model id ``GET /v1/models`` lists (responses echo the requested model)
    :param responder: answers chat requests when the script is empty
    :param prompt_tokens: computes ``usage.prompt_tokens`` from the request JSON
    :param api_keys: the keys accepted as ``Authorization: Bearer <key>``; ``None`` (the default): any
    :param hang_limit: the longest a ``hang`` or ``delay`` holds a request, in seconds
    :param context_length: the model's window: a request whose ``prompt_tokens`` exceed it is refused
        as OpenAI refuses it (HTTP 400, code ``context_length_exceeded``); ``None``: no limit
    """

    base_path = "/v1"
    server_version = "StubOpenAI/1.0"
    script_path = _CHAT_ROUTE

    def __init__(
        self,
        *,
        model: str = "stub-model",
        responder: Responder = echo_responder,
        prompt_tokens: TokenCounter = estimate_prompt_tokens,
        api_keys: tuple[str, ...] | None = None,
        hang_limit: float = 30.0,
        context_length: int | None = None,
        port: int = 0,
    ) -> None:
        self.model = model
        self.context_length = context_length
        self.responder = responder
        self.prompt_tokens = prompt_tokens
        self._ids = itertools.count(1)
        super().__init__(api_keys=api_keys, auth_scheme="Bearer", hang_limit=hang_limit, port=port)

    # -- scripting --------------------------------------------------------------------------------

    def reply(self, text: str, *, reasoning: str | None = None, prompt_tokens: int | None = None) -> None:
        """Answer the next request with ``text`` (and ``reasoning_content``, when given)."""
        self._script_reply(_Reply(text, reasoning=reasoning, prompt_tokens=prompt_tokens))

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
        self._script_reply(_Reply(content, tool_calls=(call,), prompt_tokens=prompt_tokens))

    def fail(self, status: int = 500, message: str = "stub failure", *, times: int = 1, path: str | None = None,
             retry_after: float | None = None, headers: Mapping[str, str] | None = None,
             error_type: str | None = None, code: str | None = None) -> None:
        """Answer the next ``times`` requests with HTTP ``status`` and an OpenAI-style ``{"error": …}``
        body: ``message``, ``type`` (``error_type``; by default ``invalid_request_error`` below 500,
        ``server_error`` from 500) and ``code``. The other keywords are every stub's (see :mod:`.loopback`)."""
        self._fail(status, _error(status, message, error_type, code), times=times, path=path,
                   retry_after=retry_after, headers=headers)

    def _script_reply(self, step: _Reply) -> None:
        self._script_answer(lambda request: self._chat(request, step))

    # -- inspection -------------------------------------------------------------------------------

    @property
    def chat_requests(self) -> list[ServiceRequest]:
        """Only the ``POST /v1/chat/completions`` requests."""
        return self.requests_to("POST", _CHAT_ROUTE)

    # -- routes -----------------------------------------------------------------------------------

    def error_body(self, status: int, message: str = "") -> Any:
        return _error(status, message or f"HTTP {status}")

    def handle(self, request: ServiceRequest) -> Reply:
        path = request.path.rstrip("/") or "/"
        if request.method == "GET" and path == _MODELS_PATH:
            model = {"id": self.model, "object": "model", "created": 0, "owned_by": "stub"}
            return Reply(200, _json({"object": "list", "data": [model]}))
        if request.method == "POST" and path == _CHAT_PATH:
            return self._chat(request, None)
        return Reply(404, _error(404, f"no route for {request.method} {path}", code="not_found"))

    def _chat(self, request: ServiceRequest, step: _Reply | None) -> Reply:
        """The chat completion answering ``request``: ``step``, else the responder's."""
        body = request.body
        if not isinstance(body, dict):
            return Reply(400, _error(400, "request body is not a JSON object"))
        if self.context_length is not None:
            prompt = self.prompt_tokens(body)
            if prompt > self.context_length:
                return Reply(400, _error(400, f"This model's maximum context length is {self.context_length} tokens. "
                                              f"However, your messages resulted in {prompt} tokens. Please reduce "
                                              "the length of the messages.", code="context_length_exceeded",
                                         param="messages"))
        if step is None:
            step = _Reply(self.responder(body))
        if not body.get("stream"):
            return Reply(200, _json(self._completion(body, step)))
        envelope = self._envelope(body, "chat.completion.chunk")
        finish = "tool_calls" if step.tool_calls else "stop"
        return Reply(200, events=[_chunk(envelope, delta) for delta in _deltas(step)],
                     final_events=[_chunk(envelope, {}, finish),
                                   {**envelope, "choices": [], "usage": self._usage(body, step)}, "[DONE]"])

    def _usage(self, request: dict[str, Any], step: _Reply) -> dict[str, int]:
        prompt = step.prompt_tokens if step.prompt_tokens is not None else self.prompt_tokens(request)
        calls = "".join(name + args for _, name, args in step.tool_calls)
        produced = step.text + (step.reasoning or "") + calls
        completion = max(1, len(produced) // 4)
        return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}

    def _envelope(self, request: dict[str, Any], obj: str) -> dict[str, Any]:
        return {
            "id": f"chatcmpl-stub-{next(self._ids)}",
            "object": obj,
            "created": int(time.time()),
            "model": request.get("model") or self.model,
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


def _json(obj: Any) -> bytes:
    """A JSON body as hosted endpoints send it: UTF-8, not ASCII-escaped."""
    return json.dumps(obj, ensure_ascii=False).encode()


def _error(status: int, message: str, error_type: str | None = None, code: str | None = None,
           param: str | None = None) -> bytes:
    """OpenAI's error body."""
    kind = error_type or ("invalid_request_error" if status < 500 else "server_error")
    return _json({"error": {"message": message, "type": kind, "param": param, "code": code}})


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

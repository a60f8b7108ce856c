"""The loopback OpenAI stub, driven by a plain httpx client and by the official ``openai`` SDK; and the one
fault API every loopback stub (OpenAI-compatible, Mem0, Honcho) shares, driven the same way on all three."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import httpx
import openai
import pytest

from hermes_ctx_plugins.testing import (
    HonchoStubServer,
    LoopbackService,
    Mem0StubServer,
    StubOpenAIServer,
    wait_until,
)

MESSAGES: list[Any] = [{"role": "system", "content": "be brief"}, {"role": "user", "content": "hello stub"}]


@pytest.fixture
def server() -> Iterator[StubOpenAIServer]:
    with StubOpenAIServer() as stub:
        yield stub


@pytest.fixture
def http(server: StubOpenAIServer) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=server.base_url, timeout=5) as client:
        yield client


@pytest.fixture
def sdk(server: StubOpenAIServer) -> Iterator[openai.OpenAI]:
    with openai.OpenAI(base_url=server.base_url, api_key="sk-test", max_retries=0, timeout=5) as client:
        yield client


def sse_events(body: str) -> list[str]:
    assert body.endswith("\n\n")
    return [block.removeprefix("data: ") for block in body.split("\n\n") if block]


# -- non-streaming --------------------------------------------------------------------------------


def test_non_streaming_reply_has_the_full_wire_shape(server: StubOpenAIServer, http: httpx.Client) -> None:
    server.reply("Hi there.")
    response = http.post("/chat/completions", json={"model": "gpt-x", "messages": MESSAGES})
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/json"
    data = response.json()
    assert data["object"] == "chat.completion"
    assert data["id"].startswith("chatcmpl-") and isinstance(data["created"], int)
    assert data["model"] == "gpt-x"
    assert data["choices"] == [
        {
            "index": 0,
            "message": {"role": "assistant", "content": "Hi there.", "refusal": None},
            "logprobs": None,
            "finish_reason": "stop",
        }
    ]
    usage = data["usage"]
    assert usage["prompt_tokens"] > 0 and usage["completion_tokens"] > 0
    assert usage["total_tokens"] == usage["prompt_tokens"] + usage["completion_tokens"]


def test_sdk_non_streaming_reply_and_reasoning(server: StubOpenAIServer, sdk: openai.OpenAI) -> None:
    server.reply("The answer.", reasoning="first I think")
    completion = sdk.chat.completions.create(model="m", messages=MESSAGES)
    message = completion.choices[0].message
    assert message.content == "The answer."
    assert message.model_extra == {"reasoning_content": "first I think"}
    assert completion.usage is not None and completion.usage.prompt_tokens > 0


def test_sdk_non_streaming_tool_call(server: StubOpenAIServer, sdk: openai.OpenAI) -> None:
    server.tool_call("read_file", {"path": "src/app.py", "limit": 40}, call_id="call_1")
    completion = sdk.chat.completions.create(model="m", messages=MESSAGES)
    choice = completion.choices[0]
    assert choice.finish_reason == "tool_calls"
    assert choice.message.content is None
    assert choice.message.tool_calls is not None
    (call,) = choice.message.tool_calls
    assert call.id == "call_1" and call.type == "function"
    assert call.function.name == "read_file"
    assert json.loads(call.function.arguments) == {"path": "src/app.py", "limit": 40}


# -- streaming -------------------------------------------------------------------------------------


def test_raw_stream_is_sse_ending_with_usage_chunk_and_done(
    server: StubOpenAIServer, http: httpx.Client
) -> None:
    server.reply("one two three", prompt_tokens=1234)
    response = http.post("/chat/completions", json={"model": "m", "messages": MESSAGES, "stream": True})
    assert response.headers["content-type"].startswith("text/event-stream")
    assert response.headers["transfer-encoding"] == "chunked"
    events = sse_events(response.text)
    assert events[-1] == "[DONE]"
    chunks = [json.loads(event) for event in events[:-1]]
    assert all(chunk["object"] == "chat.completion.chunk" for chunk in chunks)
    assert len({chunk["id"] for chunk in chunks}) == 1
    assert chunks[0]["choices"][0]["delta"] == {"role": "assistant", "content": ""}
    assert chunks[-2]["choices"][0]["finish_reason"] == "stop"
    final = chunks[-1]
    assert final["choices"] == []
    assert final["usage"]["prompt_tokens"] == 1234
    content = "".join(chunk["choices"][0]["delta"].get("content", "") for chunk in chunks[:-1])
    assert content == "one two three"
    assert len(chunks) > 4  # the text arrived in several deltas


def test_sdk_stream_reassembles_text_and_reports_usage(server: StubOpenAIServer, sdk: openai.OpenAI) -> None:
    text = "Streaming works,\nacross lines and   spaces."
    server.reply(text, reasoning="hmm")
    stream = sdk.chat.completions.create(
        model="m", messages=MESSAGES, stream=True, stream_options={"include_usage": True}
    )
    chunks = list(stream)
    with_choices = [chunk for chunk in chunks if chunk.choices]
    assert "".join(chunk.choices[0].delta.content or "" for chunk in with_choices) == text
    reasoning = "".join(
        (chunk.choices[0].delta.model_extra or {}).get("reasoning_content", "") for chunk in with_choices
    )
    assert reasoning == "hmm"
    assert with_choices[-1].choices[0].finish_reason == "stop"
    assert not chunks[-1].choices and chunks[-1].usage is not None
    assert chunks[-1].usage.total_tokens > chunks[-1].usage.prompt_tokens > 0


def test_sdk_stream_reassembles_a_tool_call(server: StubOpenAIServer, sdk: openai.OpenAI) -> None:
    arguments = {"command": "pytest -q tests/", "timeout": 30, "env": {"A": "b"}}
    server.tool_call("terminal", arguments, content="Running the tests.")
    calls: dict[int, dict[str, str]] = {}
    finish = None
    content = ""
    for chunk in sdk.chat.completions.create(model="m", messages=MESSAGES, stream=True):
        if not chunk.choices:
            continue
        delta = chunk.choices[0].delta
        content += delta.content or ""
        for piece in delta.tool_calls or []:
            call = calls.setdefault(piece.index, {"id": "", "name": "", "arguments": ""})
            call["id"] = piece.id or call["id"]
            if piece.function is not None:
                call["name"] = piece.function.name or call["name"]
                call["arguments"] += piece.function.arguments or ""
        finish = chunk.choices[0].finish_reason or finish
    assert finish == "tool_calls"
    assert content == "Running the tests."
    assert list(calls) == [0]
    assert calls[0]["id"].startswith("call_") and calls[0]["name"] == "terminal"
    assert json.loads(calls[0]["arguments"]) == arguments


# -- errors and misbehaviour -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("status", "error_class"),
    [
        (400, openai.BadRequestError),
        (401, openai.AuthenticationError),
        (403, openai.PermissionDeniedError),
        (404, openai.NotFoundError),
        (429, openai.RateLimitError),
        (500, openai.InternalServerError),
        (503, openai.InternalServerError),
    ],
)
def test_failures_surface_as_sdk_exceptions(
    server: StubOpenAIServer, sdk: openai.OpenAI, status: int, error_class: type[openai.APIStatusError]
) -> None:
    server.fail(status=status, message=f"scripted {status}", code="some_code")
    with pytest.raises(error_class) as raised:
        sdk.chat.completions.create(model="m", messages=MESSAGES)
    assert raised.value.status_code == status
    assert raised.value.body == {
        "message": f"scripted {status}",
        "type": "invalid_request_error" if status < 500 else "server_error",
        "param": None,
        "code": "some_code",
    }


def test_failure_on_a_streaming_request_is_an_http_error(
    server: StubOpenAIServer, sdk: openai.OpenAI
) -> None:
    server.fail(status=404, message="The model `m` does not exist", code="model_not_found")
    with pytest.raises(openai.NotFoundError, match="does not exist"):
        sdk.chat.completions.create(model="m", messages=MESSAGES, stream=True)


def test_retry_after_header(server: StubOpenAIServer, http: httpx.Client) -> None:
    server.fail(status=429, message="slow down", retry_after=7, headers={"X-Extra": "yes"})
    response = http.post("/chat/completions", json={"model": "m", "messages": MESSAGES})
    assert response.status_code == 429
    assert response.headers["retry-after"] == "7"
    assert response.headers["x-extra"] == "yes"


def test_garbage_is_sent_verbatim(server: StubOpenAIServer, http: httpx.Client, sdk: openai.OpenAI) -> None:
    server.garbage(b'{"choices": [', status=200)
    response = http.post("/chat/completions", json={"model": "m", "messages": MESSAGES})
    assert (response.status_code, response.content) == (200, b'{"choices": [')
    server.garbage(b"<html>Bad gateway</html>", status=502, content_type="text/html")
    response = http.post("/chat/completions", json={"model": "m", "messages": MESSAGES})
    assert response.status_code == 502
    assert response.headers["content-type"] == "text/html"
    server.garbage(b"{not json")
    with pytest.raises(json.JSONDecodeError):
        sdk.chat.completions.create(model="m", messages=MESSAGES)


def test_dropped_stream_breaks_mid_body(server: StubOpenAIServer, sdk: openai.OpenAI) -> None:
    server.drop()
    server.reply("partial words here")
    stream = sdk.chat.completions.create(model="m", messages=MESSAGES, stream=True)
    received = ""
    with pytest.raises(httpx.RemoteProtocolError, match="incomplete chunked read"):
        for chunk in stream:
            received += chunk.choices[0].delta.content or ""
    assert received == "partial words here"


def test_dropped_non_streaming_answer(
    server: StubOpenAIServer, http: httpx.Client, sdk: openai.OpenAI
) -> None:
    server.drop()
    server.reply("half of this")
    with pytest.raises(httpx.RemoteProtocolError):
        http.post("/chat/completions", json={"model": "m", "messages": MESSAGES})
    server.drop(before_headers=True)
    with pytest.raises(openai.APIConnectionError):
        sdk.chat.completions.create(model="m", messages=MESSAGES)
    server.reply("still alive")
    assert (
        sdk.chat.completions.create(model="m", messages=MESSAGES).choices[0].message.content == "still alive"
    )


def test_delay_holds_the_next_answer(server: StubOpenAIServer, http: httpx.Client) -> None:
    server.delay(0.2)
    server.reply("late")
    started = time.monotonic()
    response = http.post("/chat/completions", json={"model": "m", "messages": MESSAGES})
    assert time.monotonic() - started >= 0.2
    assert response.json()["choices"][0]["message"]["content"] == "late"
    # the server thread adds its busy time after the reply is on the wire (the client can be faster)
    assert wait_until(lambda: server.busy_seconds >= 0.2, 5)
    assert server.pending == 0


def test_delay_longer_than_the_client_timeout(server: StubOpenAIServer, sdk: openai.OpenAI) -> None:
    server.delay(5)
    server.reply("never seen")
    started = time.monotonic()
    with pytest.raises(openai.APITimeoutError):
        sdk.with_options(timeout=0.2).chat.completions.create(model="m", messages=MESSAGES)
    assert time.monotonic() - started < 2
    # the abandoned request consumed its answer; the server serves the next one promptly
    server.reply("next")
    assert sdk.chat.completions.create(model="m", messages=MESSAGES).choices[0].message.content == "next"


def test_hang_until_the_client_gives_up(server: StubOpenAIServer, http: httpx.Client) -> None:
    server.hang()
    with pytest.raises(httpx.ReadTimeout):
        http.post("/chat/completions", json={"model": "m", "messages": MESSAGES}, timeout=0.2)
    deadline = time.monotonic() + 2
    while server.busy_seconds == 0 and time.monotonic() < deadline:  # the handler notices the client left
        time.sleep(0.01)
    assert 0.2 <= server.busy_seconds < 1.5


def test_hang_is_bounded_by_hang_limit() -> None:
    with StubOpenAIServer(hang_limit=0.2) as server, httpx.Client(timeout=5) as client:
        server.hang()
        started = time.monotonic()
        with pytest.raises(httpx.RemoteProtocolError):
            client.post(f"{server.base_url}/chat/completions", json={"model": "m", "messages": MESSAGES})
        assert 0.2 <= time.monotonic() - started < 2


def test_close_releases_a_hanging_request_quickly() -> None:
    server = StubOpenAIServer()
    server.hang()
    errors: list[BaseException] = []

    def call() -> None:
        with httpx.Client(timeout=10) as client:
            try:
                client.post(f"{server.base_url}/chat/completions", json={"model": "m", "messages": MESSAGES})
            except httpx.HTTPError as exc:
                errors.append(exc)

    caller = threading.Thread(target=call)
    caller.start()
    while not server.requests:
        time.sleep(0.01)
    started = time.monotonic()
    server.close()
    caller.join(5)
    assert time.monotonic() - started < 2
    assert not caller.is_alive()
    assert len(errors) == 1 and isinstance(errors[0], httpx.RemoteProtocolError)


# -- defaults, recording, routes -------------------------------------------------------------------


def test_default_responder_echoes_deterministically(server: StubOpenAIServer, sdk: openai.OpenAI) -> None:
    first = sdk.chat.completions.create(model="m", messages=MESSAGES).choices[0].message.content
    second = sdk.chat.completions.create(model="m", messages=MESSAGES).choices[0].message.content
    assert first == second == "stub reply to: hello stub"


def test_custom_responder_and_token_counter(sdk: openai.OpenAI) -> None:
    def responder(request: dict[str, Any]) -> str:
        return f"{len(request['messages'])} messages"

    with (
        StubOpenAIServer(responder=responder, prompt_tokens=lambda request: 90_000) as server,
        openai.OpenAI(base_url=server.base_url, api_key="k", max_retries=0) as client,
    ):
        completion = client.chat.completions.create(model="m", messages=MESSAGES)
        assert completion.choices[0].message.content == "2 messages"
        assert completion.usage is not None and completion.usage.prompt_tokens == 90_000
        server.reply("scripted wins", prompt_tokens=5)
        completion = client.chat.completions.create(model="m", messages=MESSAGES)
        assert completion.choices[0].message.content == "scripted wins"
        assert completion.usage is not None and completion.usage.prompt_tokens == 5


def test_default_prompt_tokens_grow_with_the_request(server: StubOpenAIServer, http: httpx.Client) -> None:
    def prompt_tokens(content: str) -> int:
        body = {"model": "m", "messages": [{"role": "user", "content": content}]}
        return int(http.post("/chat/completions", json=body).json()["usage"]["prompt_tokens"])

    short, long = prompt_tokens("x" * 40), prompt_tokens("x" * 4000)
    assert long - short == (4000 - 40) // 4


def test_responder_errors_become_a_500() -> None:
    def broken(request: dict[str, Any]) -> str:
        raise KeyError("oops")

    with StubOpenAIServer(responder=broken) as server:
        response = httpx.post(f"{server.base_url}/chat/completions", json={"model": "m", "messages": []})
    assert response.status_code == 500
    assert "KeyError" in response.json()["error"]["message"]


def test_requests_are_recorded_with_headers(server: StubOpenAIServer, sdk: openai.OpenAI) -> None:
    server.reply("ok")
    sdk.chat.completions.create(model="m", messages=MESSAGES, temperature=0.3)
    (request,) = server.requests
    assert (request.method, request.path) == ("POST", "/v1/chat/completions")
    assert request.headers["authorization"] == "Bearer sk-test"
    assert request.body == {"model": "m", "messages": MESSAGES, "temperature": 0.3}
    assert json.loads(request.raw) == request.body
    assert server.chat_requests == [request]


def test_recording_is_thread_safe(server: StubOpenAIServer, http: httpx.Client) -> None:
    def call(index: int) -> str:
        body = {"model": "m", "messages": [{"role": "user", "content": f"q{index}"}]}
        return str(http.post("/chat/completions", json=body).json()["id"])

    with ThreadPoolExecutor(8) as pool:
        ids = list(pool.map(call, range(32)))
    assert len(set(ids)) == 32
    contents = sorted(r.body["messages"][0]["content"] for r in server.chat_requests)
    assert contents == sorted(f"q{i}" for i in range(32))


def test_models_route_and_hermes_probes(server: StubOpenAIServer, http: httpx.Client) -> None:
    models = http.get("/models").json()
    assert models["object"] == "list" and [m["id"] for m in models["data"]] == ["stub-model"]
    root = server.base_url.removesuffix("/v1")
    for method, url in [("GET", "/api/v1/models"), ("POST", "/api/show"), ("GET", "/v1/nothing")]:
        response = http.request(method, root + url, json={"name": "m"} if method == "POST" else None)
        assert response.status_code == 404
        assert "error" in response.json()
    response = http.post("/chat/completions", content=b"not json")
    assert response.status_code == 400
    assert [(r.method, r.path) for r in server.requests] == [
        ("GET", "/v1/models"),
        ("GET", "/api/v1/models"),
        ("POST", "/api/show"),
        ("GET", "/v1/nothing"),
        ("POST", "/v1/chat/completions"),
    ]
    assert server.requests[-1].body is None


# -- lifecycle -------------------------------------------------------------------------------------


def test_close_is_idempotent_fast_and_leaves_no_threads() -> None:
    before = set(threading.enumerate())
    server = StubOpenAIServer()
    assert server.base_url.startswith("http://127.0.0.1:") and server.base_url.endswith("/v1")
    client = httpx.Client(timeout=5)
    client.post(f"{server.base_url}/chat/completions", json={"model": "m", "messages": MESSAGES})
    # the client still holds an idle keep-alive connection: close must cut it, not wait for it
    started = time.monotonic()
    server.close()
    server.close()
    assert time.monotonic() - started < 1
    assert set(threading.enumerate()) <= before
    assert "closed" in repr(server)
    with pytest.raises(httpx.TransportError):
        client.post(f"{server.base_url}/chat/completions", json={"model": "m", "messages": MESSAGES})
    client.close()


# -- one fault API on every stub -------------------------------------------------------------------


@dataclass(frozen=True)
class Service:
    """A stub and two of its routes that answer 200, as ``(method, path, JSON body)``."""

    make: Callable[[], LoopbackService]
    auth: str
    main: tuple[str, str, Any]
    other: tuple[str, str, Any]
    #: a ``path`` regex matching ``other`` and not ``main``
    other_route: str
    headers: dict[str, str] = field(default_factory=dict)


SERVICES = {
    "openai": Service(StubOpenAIServer, "Bearer any-key",
                      ("POST", "/v1/chat/completions", {"model": "m", "messages": MESSAGES}),
                      ("GET", "/v1/models", None), "/models$"),
    "mem0": Service(Mem0StubServer, "Token m0-test-key", ("GET", "/v1/ping/", None),
                    ("POST", "/v3/memories/", {"filters": {"user_id": "alice"}}), "^/v3/memories/$"),
    "honcho": Service(HonchoStubServer, "Bearer honcho-test-key", ("POST", "/v3/workspaces", {"id": "ws"}),
                      ("POST", "/v3/workspaces/ws/peers", {"id": "alice"}), "/peers$"),
}


@pytest.mark.parametrize("kind", list(SERVICES))
def test_a_fault_for_several_requests_takes_one_turn_per_request(kind: str) -> None:
    """``delay(s, times=3)`` holds each of the next three requests once — not the first one three times."""
    service = SERVICES[kind]
    method, path, body = service.main
    with service.make() as stub, httpx.Client(timeout=5, headers={"Authorization": service.auth}) as client:
        stub.delay(0.01, times=3)
        for left in (2, 1, 0):
            assert client.request(method, f"http://127.0.0.1:{stub.port}{path}", json=body).status_code == 200
            assert stub.pending_faults == left


@pytest.mark.parametrize("kind", list(SERVICES))
def test_one_fault_api_behaves_the_same_on_every_stub(kind: str) -> None:
    service = SERVICES[kind]
    with service.make() as stub, httpx.Client(timeout=5, headers={"Authorization": service.auth}) as client:

        def call(route: str = "main", timeout: float = 5) -> httpx.Response:
            method, path, body = service.main if route == "main" else service.other
            return client.request(method, f"http://127.0.0.1:{stub.port}{path}", json=body, timeout=timeout)

        assert call().status_code == 200  # (and Honcho's workspace exists from here on)

        stub.fail(503, "overloaded", times=2, path=service.other_route, retry_after=7)
        assert call().status_code == 200, "a fault with a path leaves other routes alone"
        for _ in range(2):
            failed = call("other")
            assert (failed.status_code, failed.headers["retry-after"]) == (503, "7")
            assert "overloaded" in failed.text
        assert call("other").status_code == 200, "times=2: the third request is served"

        stub.fail(500)
        stub.garbage(b"<html>oops", status=502, content_type="text/html")
        assert call().status_code == 500, "faults are met in the order they were scripted"
        garbage = call()
        assert (garbage.status_code, garbage.content, garbage.headers["content-type"]) == (502, b"<html>oops",
                                                                                           "text/html")

        stub.hang()
        with pytest.raises(httpx.ReadTimeout):
            call(timeout=0.3)
        stub.delay(30)
        with pytest.raises(httpx.ReadTimeout):
            call(timeout=0.3)
        stub.delay(0.1)
        assert call().status_code == 200, "a delayed answer arrives"

        stub.drop()
        with pytest.raises(httpx.RemoteProtocolError):  # half the body, then the connection closes
            call()
        stub.drop(before_headers=True)
        with pytest.raises(httpx.RemoteProtocolError, match="without sending a response"):
            call()
        assert stub.pending_faults == 0

        stub.stop()
        with pytest.raises(httpx.ConnectError):
            call()
        stub.start()
        assert call().status_code == 200, "serving again, on the same port"
        assert len(stub.requests) == 13, "every request that reached the stub is recorded, faulted or not"


def test_a_write_whose_client_gave_up_during_a_delay_is_never_applied() -> None:
    with Mem0StubServer() as stub, httpx.Client(headers={"Authorization": "Token m0-test-key"}) as client:

        def add(text: str, timeout: float) -> httpx.Response:
            body = {"messages": [{"role": "user", "content": text}], "user_id": "alice", "infer": False}
            return client.post(f"{stub.base_url}/v3/memories/add/", json=body, timeout=timeout)

        stub.delay(30, path="/add/")
        with pytest.raises(httpx.ReadTimeout):
            add("given up on", timeout=0.3)
        assert add("delivered", timeout=5).status_code == 200
        assert stub.memories_of(user_id="alice") == ["delivered"]


def test_a_request_over_the_window_is_refused_as_openai_refuses_it() -> None:
    with StubOpenAIServer(context_length=1_000) as stub:
        sdk = openai.OpenAI(base_url=stub.base_url, api_key="k", max_retries=0)
        short = sdk.chat.completions.create(model="stub-model", messages=[{"role": "user", "content": "hi"}])
        assert short.choices[0].message.content
        with pytest.raises(openai.BadRequestError) as refused:
            sdk.chat.completions.create(model="stub-model", messages=[{"role": "user", "content": "word " * 2_000}])
        error = refused.value.body
        assert isinstance(error, dict) and error["code"] == "context_length_exceeded"
        assert error["param"] == "messages" and "maximum context length is 1000 tokens" in error["message"]

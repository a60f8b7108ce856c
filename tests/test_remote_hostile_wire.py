"""ctx-mem0 and ctx-honcho against services misbehaving on the wire: a body trickled a byte at a time, a
search answer ignoring its limit, a negative Retry-After, an API key no header can carry."""

from __future__ import annotations

import gzip
import json
import threading
import time
import zlib
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from remote_helpers import FAST, HONCHO_KEY, MEM0_KEY

from hermes_ctx_plugins import ConfigError, SessionInfo, Turn
from hermes_ctx_plugins.memory.remote.honcho import HonchoProvider
from hermes_ctx_plugins.memory.remote.mem0 import Mem0Provider
from hermes_ctx_plugins.testing import HonchoStubServer, Mem0StubServer

ALICE = SessionInfo(session_id="s1", user_id="alice")
KEY = "m0-Q7xR2mVb9KpL4sT8wZ1nY6cH3dF5gJ0aTopSecret"


class _Trickle(BaseHTTPRequestHandler):
    """Answers Mem0's ping; every other request gets its headers, then one byte of body every 0.1 s."""

    protocol_version = "HTTP/1.1"

    def log_message(self, *args: Any) -> None:
        pass

    def _answer(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        if self.path.startswith("/v1/ping"):
            body = json.dumps({"status": "ok", "org_id": "o", "project_id": "p"}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(10**6))
        self.end_headers()
        deadline = time.monotonic() + 20
        try:
            while time.monotonic() < deadline and not self.server.stopping.is_set():  # type: ignore[attr-defined]
                self.wfile.write(b" ")
                self.wfile.flush()
                time.sleep(0.1)
        except OSError:
            pass

    do_GET = do_POST = do_PUT = do_DELETE = _answer


def _serve(handler: type[BaseHTTPRequestHandler]) -> Iterator[str]:
    """A loopback server answering with ``handler``, for a fixture: its URL."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    server.stopping = threading.Event()  # type: ignore[attr-defined]
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.stopping.set()  # type: ignore[attr-defined]
    server.shutdown()
    server.server_close()


@pytest.fixture
def trickle() -> Iterator[str]:
    yield from _serve(_Trickle)


class _TrickleHeaders(_Trickle):
    """Answers Mem0's ping; every other request gets its status line, then one header byte every 0.1 s."""

    def _answer(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        if self.path.startswith("/v1/ping"):
            return super()._answer()
        self.wfile.write(b"HTTP/1.1 200 OK\r\nX-Slow: ")
        deadline = time.monotonic() + 20
        try:
            while time.monotonic() < deadline and not self.server.stopping.is_set():  # type: ignore[attr-defined]
                self.wfile.write(b"a")
                self.wfile.flush()
                time.sleep(0.1)
        except OSError:
            pass

    do_GET = do_POST = do_PUT = do_DELETE = _answer


@pytest.fixture
def trickle_headers() -> Iterator[str]:
    yield from _serve(_TrickleHeaders)


def _build(cls: type[Any], url: str, tmp_path: Path, **options: Any) -> Any:
    settings = ({"api_key": MEM0_KEY, "host": url, "infer": False} if cls is Mem0Provider else
                {"api_key": HONCHO_KEY, "base_url": url, "workspace_id": "ws", "max_retries": 0})
    return cls({**settings, **FAST, "cooldown_seconds": 60, **options}, hermes_home=tmp_path / "hermes")


@pytest.mark.parametrize("server", ["trickle", "trickle_headers"])
@pytest.mark.parametrize("cls", [Mem0Provider, HonchoProvider])
def test_a_body_or_headers_trickled_within_each_read_timeout_still_fail_the_request_in_time(
        cls: type[Any], server: str, request: pytest.FixtureRequest, tmp_path: Path) -> None:
    """The headers too: httpx reads them inside the transport, before any body bound applies."""
    provider = _build(cls, request.getfixturevalue(server), tmp_path)
    try:
        started = time.monotonic()
        answer = json.loads(provider.handle_tool_call(provider.tools[1]["function"]["name"] if cls is HonchoProvider
                                                      else "ctx_mem0_search", {"query": "cat"}, session=ALICE))
        took = time.monotonic() - started
        assert answer["success"] is False
        assert "did not answer within" not in answer["error"], answer  # the request ended, not only our wait
        assert took < FAST["tool_wait"]
        health = provider.breaker.health(provider.name)
        assert health.failures >= 1 and ("longer than" in health.last_error or "timed out" in health.last_error), health
    finally:
        provider.shutdown()


def test_a_trickling_service_does_not_wedge_the_writer_for_ever(trickle: str, tmp_path: Path) -> None:
    provider = _build(Mem0Provider, trickle, tmp_path, failure_threshold=2)
    try:
        provider.sync_turn(Turn(session=ALICE, turn_number=1, user_text="my cat is Tom", assistant_text="ok"))
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and not provider.breaker.health(provider.name).suspended_until:
            time.sleep(0.05)
        assert "suspended" in provider.status()["breaker"], "doctor must see the outage"
        assert provider.queued == 1  # kept, not lost
    finally:
        provider.shutdown()


def test_mem0_search_answers_at_most_top_k_even_when_the_service_ignores_it(mem0: Mem0StubServer,
                                                                           tmp_path: Path) -> None:
    provider = _build(Mem0Provider, mem0.base_url, tmp_path)
    try:
        owner = provider.owner_id(ALICE)
        for i in range(30):
            mem0.seed(f"cat fact {i}", user_id=owner)
        # the stub honours top_k; a service that does not answers with everything it has
        items = [{"id": f"m{i}", "memory": f"cat fact {i}", "user_id": owner} for i in range(30)]
        mem0.garbage(json.dumps({"results": items}).encode(), path="/search")
        answer = json.loads(provider.handle_tool_call("ctx_mem0_search", {"query": "cat", "top_k": 3}, session=ALICE))
        assert answer["count"] == 3 and len(answer["results"]) == 3, answer
    finally:
        provider.shutdown()


def test_honcho_negative_retry_after_is_a_rate_limit_not_a_sleep_error(honcho: HonchoStubServer,
                                                                       tmp_path: Path) -> None:
    provider = _build(HonchoProvider, honcho.base_url, tmp_path, max_retries=1)
    try:
        honcho.fail(429, "slow down", path="/search", headers={"Retry-After": "-5"}, times=5)
        answer = json.loads(provider.handle_tool_call("ctx_honcho_search", {"query": "cat"}, session=ALICE))
        assert answer["success"] is False
        assert "sleep length" not in answer["error"] and "RateLimitError" in answer["error"], answer
        assert len(honcho.requests_to("POST", r"/search")) == 2  # retried, as for any 429
    finally:
        provider.shutdown()


@pytest.mark.parametrize("cls", [Mem0Provider, HonchoProvider])
@pytest.mark.parametrize("bad", [KEY + "\n", KEY + "\r", " " + KEY, KEY + "é", "Token " + KEY])
def test_an_api_key_no_header_can_carry_is_a_config_error_that_never_quotes_it(
        cls: type[Any], bad: str, tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as caught:
        _build(cls, "http://127.0.0.1:9", tmp_path, api_key=bad)
    error = caught.value
    assert error.path == f"ctx_plugins.options.{cls.name}.api_key"
    assert "printable ASCII" in str(error) and "Q7xR2mVb" not in str(error) and "Q7xR2mVb" not in repr(error.value)


@pytest.mark.parametrize("cls,env", [(Mem0Provider, "MEM0_API_KEY"), (HonchoProvider, "HONCHO_API_KEY")])
def test_an_api_key_from_the_environment_no_header_can_carry_makes_the_provider_unusable_saying_why(
        cls: type[Any], env: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(env, KEY + "\r\n")
    provider = _build(cls, "http://127.0.0.1:9", tmp_path, api_key="")
    try:
        usable, why = provider.availability()
        assert not usable and env in why and "line break" in why and "Q7xR2mVb" not in why
        answer = provider.handle_tool_call(provider.tools[0]["function"]["name"], {"query": "x"}, session=ALICE)
        assert "Q7xR2mVb" not in answer
    finally:
        provider.shutdown()


@pytest.mark.parametrize("cls", [Mem0Provider, HonchoProvider])
def test_a_service_that_moved_says_where_to(cls: type[Any], mem0: Mem0StubServer, honcho: HonchoStubServer,
                                            tmp_path: Path) -> None:
    """A redirect is not followed (it would carry the API key to another host); the error was only "HTTP 301", with
    no hint that the configured address (http:// for an https:// service, say) is what to change (a red-team pass)."""
    stub = mem0 if cls is Mem0Provider else honcho
    stub.fail(301, "moved", headers={"Location": "https://memory.example.invalid/v2"}, times=50)
    provider = _build(cls, stub.base_url, tmp_path)
    try:
        tool = "ctx_mem0_search" if cls is Mem0Provider else provider.tools[1]["function"]["name"]
        answer = json.loads(provider.handle_tool_call(tool, {"query": "cat"}, session=ALICE))
        assert answer["success"] is False, answer
        health = provider.breaker.health(provider.name)
        assert "https://memory.example.invalid/v2" in health.last_error and "address" in health.last_error, health
    finally:
        provider.shutdown()


def _encoded(body: bytes, encoding: str) -> bytes:
    if encoding == "gzip":
        return gzip.compress(body, mtime=0)
    return zlib.compress(body) if encoding == "deflate" else body


class _Encoded(_Trickle):
    """Answers Mem0's ping plainly; every other request with ``self.server.body`` sent in ``self.server.encoding``."""

    def _answer(self) -> None:
        if self.path.startswith("/v1/ping"):
            return super()._answer()
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.server.asked.append(self.headers.get("Accept-Encoding"))  # type: ignore[attr-defined]
        encoding = self.server.encoding  # type: ignore[attr-defined]
        body = _encoded(self.server.body, encoding)  # type: ignore[attr-defined]
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Encoding", encoding)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_GET = do_POST = do_PUT = do_DELETE = _answer


@pytest.fixture
def encoded() -> Iterator[Any]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Encoded)
    server.daemon_threads = True
    server.stopping, server.asked = threading.Event(), []  # type: ignore[attr-defined]
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    server.url = f"http://127.0.0.1:{server.server_address[1]}"  # type: ignore[attr-defined]
    yield server
    server.stopping.set()  # type: ignore[attr-defined]
    server.shutdown()
    server.server_close()


@pytest.mark.parametrize("encoding", ["gzip", "deflate"])
def test_a_compressed_answer_is_read_and_bounded_as_decoded(encoded: Any, encoding: str) -> None:
    """httpx decodes gzip after the transport: a 50 KB answer decoded to 48 MB past the 32 MB cap (a red-team pass).
    The bound now counts what is decoded; an ordinary compressed answer still reads as it did."""
    import httpx

    from hermes_ctx_plugins.memory.remote.transport import BoundedAnswers

    encoded.encoding = encoding
    with httpx.Client(transport=BoundedAnswers(httpx.HTTPTransport(), seconds=5, max_bytes=1 << 20)) as client:
        encoded.body = json.dumps({"results": [{"memory": "my cat is Tom"}] * 1_000}).encode()
        assert client.post(encoded.url + "/v3/memories/search/", json={}).json()["results"][0] == {
            "memory": "my cat is Tom"}
        encoded.body = b" " * (3 << 20)  # 3 MB of spaces: a few KB on the wire
        assert len(_encoded(encoded.body, encoding)) < 1 << 16
        with pytest.raises(httpx.ReadError, match="larger than 1,048,576 bytes"):
            client.post(encoded.url + "/v3/memories/search/", json={}).read()
        encoded.encoding = "br"
        encoded.body = b"{}"
        with pytest.raises(httpx.DecodingError, match="'br'; asked for gzip, deflate or none"):
            client.post(encoded.url + "/v3/memories/search/", json={})
    assert set(encoded.asked) == {"gzip, deflate"}


def test_a_compressed_answer_over_the_cap_fails_the_providers_request(encoded: Any, tmp_path: Path) -> None:
    from hermes_ctx_plugins.memory.remote.transport import MAX_ANSWER_BYTES

    encoded.encoding, encoded.body = "gzip", b"0" * (MAX_ANSWER_BYTES + 1)
    provider = _build(Mem0Provider, encoded.url, tmp_path, timeout=30, tool_wait=60)  # 32 MB decoded on a busy CI
    try:
        answer = json.loads(provider.handle_tool_call("ctx_mem0_search", {"query": "cat"}, session=ALICE))
        assert answer["success"] is False
        assert f"larger than {MAX_ANSWER_BYTES:,} bytes" in provider.breaker.health(provider.name).last_error
    finally:
        provider.shutdown()

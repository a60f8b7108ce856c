"""A stateful loopback HTTP service with scriptable faults: the base of the Mem0 and Honcho stubs.

It is a real HTTP/1.1 server (``ThreadingHTTPServer`` on ``127.0.0.1``, random free port) that a
real SDK can be pointed at. A subclass implements :meth:`LoopbackService.handle` for its routes;
this class records every request, checks the API key, and applies scripted faults first::

    stub.fail(503, times=3)                    # the next three requests get a 503
    stub.fail(429, retry_after=3600)           # a 429 with an (absurd) Retry-After
    stub.fail(401, path="/search")             # only requests whose path matches the regex
    stub.hang()                                # never answer (until the client gives up)
    stub.delay(2.0)                            # answer normally, two seconds late
    stub.garbage(b"{not json")                 # a 200 whose body is not JSON
    stub.drop()                                # close the connection without answering
    stub.stop(); ...; stub.start()             # refuse connections, then serve again (same port)

Faults are consumed in order; ``times`` is how many matching requests one fault answers.

:class:`LoopbackServer` and :class:`LoopbackHandler` are the HTTP plumbing (tracked connections and
threads, stop that cuts and joins them, ``hold`` for hangs and delays), shared with
:class:`~hermes_ctx_plugins.testing.model_stub.StubOpenAIServer`.
"""

from __future__ import annotations

import json
import re
import select
import socket
import sys
import threading
import time
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any, Generic, TypeVar
from urllib.parse import parse_qsl, urlsplit

__all__ = ["LoopbackHandler", "LoopbackServer", "LoopbackService", "Reply", "ServiceRequest", "relevance",
           "wait_until", "words"]

OwnerT = TypeVar("OwnerT")

_POLL_SECONDS = 0.02


@dataclass(frozen=True)
class ServiceRequest:
    """One request a stub received. ``headers`` keys are lower-case; ``path`` excludes the query."""

    method: str
    path: str
    query: dict[str, str]
    headers: dict[str, str]
    #: the parsed JSON body, or ``None`` when there was none or it was not JSON
    body: Any
    raw: bytes = field(repr=False)


@dataclass(frozen=True)
class Reply:
    """What a route answers: a status, a JSON-able body (or raw bytes) and extra headers."""

    status: int
    body: Any = None
    headers: Mapping[str, str] = field(default_factory=dict)


@dataclass
class _Fault:
    kind: str  # status | hang | delay | garbage | drop
    times: int
    path: re.Pattern[str] | None
    reply: Reply | None = None
    seconds: float = 0.0


class LoopbackService:
    """A scripted, stateful HTTP service on ``127.0.0.1`` (see the module docs).

    :param api_keys: the keys the service accepts; ``None`` disables authentication
    :param auth_scheme: the ``Authorization`` scheme clients use (``Bearer``, ``Token``)
    :param hang_limit: the longest a ``hang`` or ``delay`` holds a request, in seconds
    """

    #: paths (regexes) that need no API key
    public_paths: tuple[str, ...] = ()

    def __init__(self, *, api_keys: tuple[str, ...] | None = ("test-key",), auth_scheme: str = "Bearer",
                 hang_limit: float = 30.0) -> None:
        self.api_keys = api_keys
        self.auth_scheme = auth_scheme
        self.hang_limit = hang_limit
        self.lock = threading.RLock()
        self._faults: deque[_Fault] = deque()
        self._requests: list[ServiceRequest] = []
        self._closed = False
        self.port = 0
        self._server: LoopbackServer[LoopbackService] | None = None
        self.start()
        self.base_url = f"http://127.0.0.1:{self.port}"

    # -- scripting faults -------------------------------------------------------------------------

    def fail(self, status: int = 500, body: Any = None, *, times: int = 1, retry_after: float | None = None,
             headers: Mapping[str, str] | None = None, path: str | None = None) -> None:
        """Answer the next ``times`` requests (matching ``path``) with HTTP ``status``."""
        extra = dict(headers or {})
        if retry_after is not None:
            extra["Retry-After"] = f"{retry_after:g}"
        reply = Reply(status, self.error_body(status) if body is None else body, extra)
        self._push(_Fault("status", times, _pattern(path), reply=reply))

    def hang(self, *, times: int = 1, path: str | None = None) -> None:
        """Never answer the next ``times`` requests: hold each until the client gives up."""
        self._push(_Fault("hang", times, _pattern(path)))

    def delay(self, seconds: float, *, times: int = 1, path: str | None = None) -> None:
        """Answer the next ``times`` requests normally, ``seconds`` late."""
        self._push(_Fault("delay", times, _pattern(path), seconds=seconds))

    def garbage(self, body: bytes = b'{"results": [', *, status: int = 200, times: int = 1,
                path: str | None = None) -> None:
        """Answer the next ``times`` requests with ``body`` verbatim as ``application/json``."""
        self._push(_Fault("garbage", times, _pattern(path), reply=Reply(status, body)))

    def drop(self, *, times: int = 1, path: str | None = None) -> None:
        """Close the connection of the next ``times`` requests without answering."""
        self._push(_Fault("drop", times, _pattern(path)))

    def clear_faults(self) -> None:
        with self.lock:
            self._faults.clear()

    def _push(self, fault: _Fault) -> None:
        with self.lock:
            self._faults.append(fault)

    def _take_fault(self, path: str) -> _Fault | None:
        with self.lock:
            for fault in self._faults:
                if fault.path is None or fault.path.search(path):
                    fault.times -= 1
                    if fault.times <= 0:
                        self._faults.remove(fault)
                    return fault
        return None

    # -- what subclasses implement ----------------------------------------------------------------

    def handle(self, request: ServiceRequest) -> Reply:
        """Answer one authenticated request (called under no lock; take :attr:`lock` for state)."""
        return Reply(404, self.error_body(404))

    def error_body(self, status: int, message: str = "") -> Any:
        """The service's error body for ``status``."""
        return {"detail": message or f"HTTP {status}"}

    # -- inspection -------------------------------------------------------------------------------

    @property
    def requests(self) -> list[ServiceRequest]:
        """Every request received so far, oldest first (a copy)."""
        with self.lock:
            return list(self._requests)

    @property
    def pending_faults(self) -> int:
        """How many scripted fault answers have not been used yet."""
        with self.lock:
            return sum(f.times for f in self._faults)

    def requests_to(self, method: str, path_regex: str) -> list[ServiceRequest]:
        """The requests with ``method`` whose path matches ``path_regex``."""
        pattern = re.compile(path_regex)
        return [r for r in self.requests if r.method == method and pattern.search(r.path)]

    # -- lifecycle --------------------------------------------------------------------------------

    def start(self) -> None:
        """Serve (again, on the same port after :meth:`stop`)."""
        with self.lock:
            if self._server is not None:
                return
            self._server = LoopbackServer(self, _Handler, self.port)
            self.port = self._server.port
            self._server.serve_in_background(f"{type(self).__name__}-{self.port}")

    def stop(self) -> None:
        """Stop serving: open connections are cut and new ones refused, until :meth:`start`."""
        with self.lock:
            server, self._server = self._server, None
        if server is not None:
            server.stop()

    def close(self) -> None:
        """Stop for good and join every thread. Idempotent."""
        self._closed = True
        self.stop()

    def __enter__(self) -> LoopbackService:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "closed" if self._closed else ("serving" if self._server is not None else "stopped")
        return f"<{type(self).__name__} {self.base_url} {state}>"

    # -- the wire ---------------------------------------------------------------------------------

    def _authorized(self, request: ServiceRequest) -> bool:
        if self.api_keys is None or any(re.search(p, request.path) for p in self.public_paths):
            return True
        scheme, _, key = request.headers.get("authorization", "").partition(" ")
        return scheme.lower() == self.auth_scheme.lower() and key.strip() in self.api_keys

    def _serve(self, handler: _Handler, method: str) -> None:
        raw = handler.rfile.read(int(handler.headers.get("Content-Length") or 0))
        parts = urlsplit(handler.path)
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = None
        request = ServiceRequest(method, parts.path, dict(parse_qsl(parts.query, keep_blank_values=True)),
                                 {k.lower(): v for k, v in handler.headers.items()}, body, raw)
        with self.lock:
            self._requests.append(request)
        fault = self._take_fault(request.path)
        if fault is not None:
            if fault.kind in ("hang", "delay"):
                seconds = self.hang_limit if fault.kind == "hang" else min(fault.seconds, self.hang_limit)
                if not handler.hold(seconds) or fault.kind == "hang":
                    handler.close_connection = True
                    return
            elif fault.kind == "drop":
                handler.close_connection = True
                return
            elif fault.reply is not None:
                handler.send(fault.reply)
                return
        if not self._authorized(request):
            handler.send(Reply(401, self.error_body(401, "Invalid API key")))
            return
        try:
            reply = self.handle(request)
        except Exception as exc:  # a bug in a stub route shows up as a 500 the test can read
            reply = Reply(500, self.error_body(500, f"stub route raised {exc!r}"))
        handler.send(reply)


def _pattern(path: str | None) -> re.Pattern[str] | None:
    return None if path is None else re.compile(path)


class LoopbackServer(ThreadingHTTPServer, Generic[OwnerT]):
    """A threaded HTTP server on ``127.0.0.1`` for a stub (its ``owner``), serving on a daemon thread.

    It tracks its connections and handler threads, so :meth:`stop` can cut the connections (idle
    keep-alive ones included) and join the threads. They are daemons all the same, so a stub nobody
    closed never keeps the interpreter alive.
    """

    allow_reuse_address = True
    daemon_threads = True

    def __init__(self, owner: OwnerT, handler: type[LoopbackHandler], port: int = 0) -> None:
        self.owner = owner
        #: set by :meth:`stop`: requests held by a ``hang`` or ``delay`` let go at once
        self.stopping = threading.Event()
        self._connections: set[socket.socket] = set()
        self._handlers: list[threading.Thread] = []
        self._track_lock = threading.Lock()
        self._thread: threading.Thread | None = None
        super().__init__(("127.0.0.1", port), handler)  # port 0: the OS picks a free one

    @property
    def port(self) -> int:
        return int(self.server_address[1])

    def serve_in_background(self, name: str) -> None:
        """Serve on a daemon thread called ``name``."""
        self._thread = threading.Thread(target=self.serve_forever, kwargs={"poll_interval": 0.01},  # bounds stop()
                                        name=name, daemon=True)
        self._thread.start()

    def stop(self, join_timeout: float = 5.0) -> None:
        """Stop serving, close the socket, cut open connections and join every thread."""
        self.stopping.set()
        self.shutdown()
        self.server_close()
        self.cut_connections(join_timeout)
        if self._thread is not None:
            self._thread.join()

    def process_request(self, request: Any, client_address: Any) -> None:
        handler = threading.Thread(target=self.process_request_thread, args=(request, client_address),
                                   daemon=True)
        with self._track_lock:
            self._connections.add(request)
            self._handlers = [t for t in self._handlers if t.is_alive()]
            self._handlers.append(handler)
        handler.start()

    def shutdown_request(self, request: Any) -> None:
        with self._track_lock:
            self._connections.discard(request)
        super().shutdown_request(request)

    def cut_connections(self, join_timeout: float) -> None:
        with self._track_lock:
            connections, handlers = list(self._connections), list(self._handlers)
        for connection in connections:
            try:
                connection.shutdown(socket.SHUT_RDWR)
            except OSError:  # already closed by its handler
                pass
        for handler in handlers:
            handler.join(join_timeout)

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client that went away (timeout, cancelled stream, closed server) is expected here.
        if not isinstance(sys.exc_info()[1], OSError):
            super().handle_error(request, client_address)


class LoopbackHandler(BaseHTTPRequestHandler):
    """The request handler of a :class:`LoopbackServer`: quiet, HTTP/1.1, every method to :meth:`serve`."""

    protocol_version = "HTTP/1.1"
    #: headers and body leave in separate writes: without TCP_NODELAY the body waits for the client's
    #: delayed ACK of the headers, about 40 ms per request
    disable_nagle_algorithm = True
    server: LoopbackServer[Any]

    def log_message(self, format: str, *args: Any) -> None:  # keep test output clean
        pass

    def do_GET(self) -> None:
        self.serve("GET")

    def do_POST(self) -> None:
        self.serve("POST")

    def do_PUT(self) -> None:
        self.serve("PUT")

    def do_DELETE(self) -> None:
        self.serve("DELETE")

    def serve(self, method: str) -> None:
        """Answer one request."""
        raise NotImplementedError

    def send_body(self, status: int, body: bytes, content_type: str = "application/json",
                  headers: Mapping[str, str] | None = None) -> None:
        """Answer with ``status`` and ``body`` (``Content-Length`` framed) plus extra ``headers``."""
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body)

    def hold(self, seconds: float) -> bool:
        """Wait ``seconds``; ``False`` as soon as the server stops or the client disconnects."""
        deadline = time.monotonic() + seconds
        while (remaining := deadline - time.monotonic()) > 0:
            if self.server.stopping.wait(min(_POLL_SECONDS, remaining)) or self._client_gone():
                return False
        return True

    def _client_gone(self) -> bool:
        try:
            readable, _, _ = select.select([self.connection], [], [], 0)
            return bool(readable) and self.connection.recv(1, socket.MSG_PEEK) == b""
        except OSError:
            return True


class _Handler(LoopbackHandler):
    server_version = "LoopbackService/1.0"
    server: LoopbackServer[LoopbackService]

    def do_PATCH(self) -> None:
        self.serve("PATCH")

    def serve(self, method: str) -> None:
        self.server.owner._serve(self, method)

    def send(self, reply: Reply) -> None:
        body = reply.body if isinstance(reply.body, bytes) else (
            b"" if reply.body is None and reply.status == 204 else json.dumps(reply.body).encode())
        try:
            self.send_body(reply.status, body, headers=reply.headers)
        except OSError:  # the client gave up meanwhile
            self.close_connection = True


_WORD = re.compile(r"[^\W_]{3,}")
_STOPWORDS = frozenset(
    "the and for are but not you your yours what which who whom this that these those was were will with "
    "have has had from they them their there here about into than then when where why how all any can "
    "did does doing just like also its it's our out over some such very".split())


def words(text: str) -> set[str]:
    """The content words of ``text`` (lower case, three letters or more, no stop words)."""
    return {w for w in _WORD.findall(text.lower()) if w not in _STOPWORDS}


def relevance(query: str, text: str) -> float:
    """The share of the query's content words that occur in ``text`` (0 to 1): the stubs' "search"."""
    wanted = words(query)
    return len(wanted & words(text)) / len(wanted) if wanted else 0.0


def wait_until(predicate: Any, timeout: float = 5.0, interval: float = 0.01) -> bool:
    """Poll ``predicate()`` until it is true or ``timeout`` seconds pass; returns its last verdict.

    For background work (a write queue, a worker thread) that a test waits on without sleeping blindly.
    """
    deadline = time.monotonic() + timeout
    while True:
        if predicate():
            return True
        if time.monotonic() >= deadline:
            return bool(predicate())
        time.sleep(interval)

"""The HTTP plumbing under every loopback stub: a threaded server on ``127.0.0.1`` and its wire formats.

:class:`LoopbackServer` is a real HTTP/1.1 server (``ThreadingHTTPServer``, random free port) that
tracks its connections and handler threads, so stopping it cuts idle keep-alive connections and
requests held by a fault, then joins every thread. :class:`LoopbackHandler` reads each request into
a :class:`ServiceRequest`, hands it to the server's owner (a
:class:`~hermes_ctx_plugins.testing.LoopbackService`), and writes the owner's :class:`Reply` as a
JSON or raw body, or as a server-sent event stream; it can cut any of them half-way.
"""

from __future__ import annotations

import json
import select
import socket
import sys
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Protocol
from urllib.parse import parse_qsl, urlsplit

__all__ = ["LoopbackHandler", "LoopbackServer", "Reply", "ServiceRequest"]

#: how often a held request checks whether its client left or the server stops
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
    """What a stub answers: a status and a JSON-able body (``bytes``: sent verbatim), or an event stream.

    With ``events`` the answer is ``text/event-stream`` in chunked transfer encoding: each event is
    one ``data:`` line (a JSON-able object, or a ``str`` sent as it is, such as ``"[DONE]"``), then
    ``final_events`` the same way. A stream cut half-way stops after ``events``.
    """

    status: int
    body: Any = None
    headers: Mapping[str, str] = field(default_factory=dict)
    content_type: str = "application/json"
    events: Sequence[Any] | None = None
    final_events: Sequence[Any] = ()


class Owner(Protocol):
    """What a :class:`LoopbackServer` serves for."""

    #: the ``Server`` header it answers with
    server_version: str

    def serve(self, handler: LoopbackHandler, method: str) -> None: ...


class LoopbackServer(ThreadingHTTPServer):
    """A threaded HTTP server on ``127.0.0.1`` serving for ``owner`` on a daemon thread.

    Handler threads are daemons all the same, so a stub nobody closed never keeps the interpreter alive.
    """

    allow_reuse_address = True
    daemon_threads = True

    def __init__(self, owner: Owner, port: int = 0) -> None:
        self.owner = owner
        #: set by :meth:`stop`: requests held by a ``hang`` or ``delay`` let go at once
        self.stopping = threading.Event()
        self._connections: set[socket.socket] = set()
        self._handlers: list[threading.Thread] = []
        self._track_lock = threading.Lock()
        self._thread: threading.Thread | None = None
        super().__init__(("127.0.0.1", port), LoopbackHandler)  # port 0: the OS picks a free one

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
        with self._track_lock:
            connections, handlers = list(self._connections), list(self._handlers)
        for connection in connections:
            try:
                connection.shutdown(socket.SHUT_RDWR)
            except OSError:  # already closed by its handler
                pass
        for handler in handlers:
            handler.join(join_timeout)
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

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client that went away (timeout, cancelled stream, closed server) is expected here.
        if not isinstance(sys.exc_info()[1], OSError):
            super().handle_error(request, client_address)


class LoopbackHandler(BaseHTTPRequestHandler):
    """The request handler of a :class:`LoopbackServer`: quiet, HTTP/1.1, every method to the owner."""

    protocol_version = "HTTP/1.1"
    #: headers and body leave in separate writes: without TCP_NODELAY the body waits for the client's
    #: delayed ACK of the headers, about 40 ms per request
    disable_nagle_algorithm = True
    server: LoopbackServer

    def log_message(self, format: str, *args: Any) -> None:  # keep test output clean
        pass

    def version_string(self) -> str:
        return f"{self.server.owner.server_version} {self.sys_version}"

    def do_GET(self) -> None:
        self.server.owner.serve(self, "GET")

    def do_POST(self) -> None:
        self.server.owner.serve(self, "POST")

    def do_PUT(self) -> None:
        self.server.owner.serve(self, "PUT")

    def do_PATCH(self) -> None:
        self.server.owner.serve(self, "PATCH")

    def do_DELETE(self) -> None:
        self.server.owner.serve(self, "DELETE")

    def read_request(self, method: str) -> ServiceRequest:
        """The request being served, body read and parsed."""
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        parts = urlsplit(self.path)
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = None
        return ServiceRequest(method, parts.path, dict(parse_qsl(parts.query, keep_blank_values=True)),
                              {k.lower(): v for k, v in self.headers.items()}, body, raw)

    def hold(self, seconds: float) -> bool:
        """Wait ``seconds``; ``False`` as soon as the server stops or the client disconnects."""
        deadline = time.monotonic() + seconds
        while (remaining := deadline - time.monotonic()) > 0:
            if self.server.stopping.wait(min(_POLL_SECONDS, remaining)) or self._client_gone():
                return False
        return True

    def abandon(self) -> None:
        """Close the connection without (finishing the) answer."""
        self.close_connection = True

    def send(self, reply: Reply, *, cut: bool = False) -> None:
        """Answer with ``reply``; ``cut``: only half of it (the events before ``final_events``), then close."""
        try:
            if reply.events is not None:
                self._send_events(reply, cut)
            else:
                self._send_body(reply, cut)
        except OSError:  # the client gave up meanwhile
            self.abandon()
        if cut:
            self.abandon()

    def _send_body(self, reply: Reply, cut: bool) -> None:
        if isinstance(reply.body, bytes):
            body = reply.body
        else:
            body = b"" if reply.body is None and reply.status == 204 else json.dumps(reply.body).encode()
        self.send_response(reply.status)
        self.send_header("Content-Type", reply.content_type)
        self.send_header("Content-Length", str(len(body)))
        self._send_headers(reply.headers)
        self.wfile.write(body[: len(body) // 2] if cut else body)

    def _send_events(self, reply: Reply, cut: bool) -> None:
        self.send_response(reply.status)
        self.send_header("Content-Type", "text/event-stream; charset=utf-8")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self._send_headers(reply.headers)
        events = list(reply.events or ())
        for event in events if cut else [*events, *reply.final_events]:
            data = event if isinstance(event, str) else json.dumps(event, ensure_ascii=False)
            self._write_chunk(b"data: " + data.encode() + b"\n\n")
        if not cut:
            self.wfile.write(b"0\r\n\r\n")  # the last chunk: a cut stream never gets it

    def _send_headers(self, headers: Mapping[str, str]) -> None:
        for name, value in headers.items():
            self.send_header(name, value)
        self.end_headers()

    def _write_chunk(self, data: bytes) -> None:
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))

    def _client_gone(self) -> bool:
        try:
            readable, _, _ = select.select([self.connection], [], [], 0)
            return bool(readable) and self.connection.recv(1, socket.MSG_PEEK) == b""
        except OSError:
            return True

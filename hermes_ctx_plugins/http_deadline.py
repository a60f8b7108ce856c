"""A deadline for the whole of an HTTP answer: its status line and headers too, not only its body.

httpx's timeouts bound each read, not the answer: a server trickling its headers a byte at a time, or sending
``100 Continue`` every few tenths of a second, each within the read timeout, held a request for as long as it
wished. :func:`bounded_reads` gives an ``httpx.HTTPTransport`` connections whose reads and writes end by the
deadline :func:`answer_deadline` sets for the request being made on this thread. Used by the summary client
(:mod:`.chat`) and the memory services' transport (:mod:`.memory.remote.transport`); apart, so that httpx (0.1-0.2 s
to import) is loaded when a client is built.
"""

from __future__ import annotations

import contextlib
import contextvars
import time
from collections.abc import Iterable, Iterator
from typing import Any

import httpcore
import httpx

#: when the answer being read on this thread must have come, if bounded
_DEADLINE: contextvars.ContextVar[float | None] = contextvars.ContextVar("hermes_ctx_answer_deadline", default=None)


def bounded_reads(transport: httpx.HTTPTransport) -> httpx.HTTPTransport:
    """``transport``, its connections' reads and writes ending by the deadline of :func:`answer_deadline`."""
    pool = getattr(transport, "_pool", None)  # httpcore's pool: its network backend opens the connections
    backend = getattr(pool, "_network_backend", None)
    if isinstance(backend, httpcore.NetworkBackend) and not isinstance(backend, _DeadlineBackend):
        pool._network_backend = _DeadlineBackend(backend)  # type: ignore[union-attr]
    return transport


@contextlib.contextmanager
def answer_deadline(deadline: float) -> Iterator[None]:
    """Reads and writes on this thread's connections (made through :func:`bounded_reads`) end by ``deadline``
    (``time.monotonic()``) while in this block."""
    token = _DEADLINE.set(deadline)
    try:
        yield
    finally:
        _DEADLINE.reset(token)


def _left(timeout: float | None, what: str) -> float | None:
    deadline = _DEADLINE.get()
    if deadline is None:
        return timeout
    left = deadline - time.monotonic()
    if left <= 0:
        raise (httpcore.ReadTimeout if what == "read" else httpcore.WriteTimeout)(
            "the answer did not come in time" if what == "read" else "the request could not be sent in time")
    return left if timeout is None else min(timeout, left)


class _DeadlineBackend(httpcore.NetworkBackend):
    """httpcore's network backend whose connections' reads end by the deadline of the request being answered."""

    def __init__(self, inner: httpcore.NetworkBackend) -> None:
        self.inner = inner

    def connect_tcp(self, host: str, port: int, timeout: float | None = None, local_address: str | None = None,
                    socket_options: Iterable[Any] | None = None) -> httpcore.NetworkStream:
        return _DeadlineStream(self.inner.connect_tcp(host, port, timeout, local_address, socket_options))

    def connect_unix_socket(self, path: str, timeout: float | None = None,
                            socket_options: Iterable[Any] | None = None) -> httpcore.NetworkStream:
        return _DeadlineStream(self.inner.connect_unix_socket(path, timeout, socket_options))

    def sleep(self, seconds: float) -> None:
        self.inner.sleep(seconds)


class _DeadlineStream(httpcore.NetworkStream):
    def __init__(self, inner: httpcore.NetworkStream) -> None:
        self.inner = inner

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self.inner.read(max_bytes, _left(timeout, "read"))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self.inner.write(buffer, _left(timeout, "write"))

    def close(self) -> None:
        self.inner.close()

    def start_tls(self, ssl_context: Any, server_hostname: str | None = None,
                  timeout: float | None = None) -> httpcore.NetworkStream:
        return _DeadlineStream(self.inner.start_tls(ssl_context, server_hostname, timeout))

    def get_extra_info(self, info: str) -> Any:
        return self.inner.get_extra_info(info)

"""The httpx transports ``ctx-mem0`` and ``ctx-honcho`` give their SDKs: apart, so that httpx (0.1-0.2 s to import)
is loaded when a client is built, not whenever the provider is registered."""

from __future__ import annotations

import contextvars
import time
import zlib
from collections.abc import Iterable, Iterator
from typing import Any

import httpcore
import httpx

from ...chat import ACCEPTED_ENCODINGS, answer_decoder

#: the largest answer read from a memory service; a larger one is an error (a broken or hostile server)
MAX_ANSWER_BYTES = 32 << 20
#: when the answer being read on this thread must have come (its status line and headers), if bounded
_DEADLINE: contextvars.ContextVar[float | None] = contextvars.ContextVar("hermes_ctx_answer_deadline", default=None)


class CappedRetryAfter(httpx.BaseTransport):
    """An httpx transport that caps a response's ``Retry-After`` at ``cap`` seconds.

    honcho-ai sleeps for whatever ``Retry-After`` says before retrying, inside the call; this keeps
    that sleep bounded whatever the server sends (seconds or an HTTP date). A negative value, which
    the SDK would pass to ``time.sleep`` (an error hiding the 429), becomes 0.
    """

    def __init__(self, inner: httpx.BaseTransport, cap: float) -> None:
        self.inner = inner
        self.cap = cap

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        response = self.inner.handle_request(request)
        value = response.headers.get("Retry-After")
        if value is not None:
            try:
                seconds = float(value)
            except ValueError:
                seconds = float("inf")  # an HTTP date: could be any time
            if not 0 <= seconds <= self.cap:
                response.headers["Retry-After"] = "0" if seconds < 0 else f"{self.cap:g}"
        return response

    def close(self) -> None:
        self.inner.close()


class BoundedAnswers(httpx.BaseTransport):
    """An httpx transport whose answers' bodies take at most ``seconds`` from the request's start
    and ``max_bytes`` in all.

    httpx's timeouts bound each read, not the whole answer: a server trickling its body (or its
    headers) a byte at a time, each within the timeout, held a request (and the provider's writer
    thread) for ever, with the breaker seeing no failure. Past either bound the read fails as a
    timeout or network error, which the SDKs report and the breaker counts. The headers are bounded
    through the connections ``inner`` (an ``httpx.HTTPTransport``) opens: their reads wait no longer
    than the deadline (:class:`_DeadlineBackend`).
    """

    def __init__(self, inner: httpx.BaseTransport, *, seconds: float, max_bytes: int = MAX_ANSWER_BYTES) -> None:
        self.inner = inner
        self.seconds = seconds
        self.max_bytes = max_bytes
        pool = getattr(inner, "_pool", None)  # httpcore's pool: its network backend opens the connections
        if isinstance(getattr(pool, "_network_backend", None), httpcore.NetworkBackend):
            pool._network_backend = _DeadlineBackend(pool._network_backend)  # type: ignore[union-attr]

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        deadline = time.monotonic() + self.seconds
        request.headers["Accept-Encoding"] = ACCEPTED_ENCODINGS  # not br or zstd, which httpx offers when installed
        token = _DEADLINE.set(deadline)
        try:
            response = self.inner.handle_request(request)
        finally:
            _DEADLINE.reset(token)
        moved = response.headers.get("location") if 300 <= response.status_code < 400 else None
        if moved:  # not followed (it would carry the API key elsewhere): the SDKs said only "HTTP 301"
            response.close()
            raise httpx.ConnectError(
                f"the service answered {response.status_code} and points to {moved[:200]!r}: set the provider's "
                "address to it (a redirect is not followed)", request=request)
        # decoded here, within the bound (httpx would decode after it, unbounded: a 50 KB gzip answer decoded to
        # 48 MB past the cap, a red-team pass found); an answer in another encoding is an error
        try:
            decoder = answer_decoder(response.headers.get("content-encoding", ""))
        except ValueError as exc:
            response.close()
            raise httpx.DecodingError(str(exc), request=request) from None
        if decoder is not None:
            del response.headers["content-encoding"]  # httpx must not decode it again
        response.stream = _BoundedStream(response.stream, request, deadline, self, decoder)
        return response

    def close(self) -> None:
        self.inner.close()


class _BoundedStream(httpx.SyncByteStream):
    """The answer's body, its bytes as read and (with ``decoder``: a gzip or deflate answer) as decoded each bounded
    by ``max_bytes``, all of it by the deadline; decoded at most a bound's worth at a time."""

    def __init__(self, inner: httpx.SyncByteStream | httpx.AsyncByteStream, request: httpx.Request, deadline: float,
                 bounds: BoundedAnswers, decoder: Any = None) -> None:
        self.inner = inner
        self.request = request
        self.deadline = deadline
        self.bounds = bounds
        self.decoder = decoder

    def __iter__(self) -> Iterator[bytes]:
        assert isinstance(self.inner, httpx.SyncByteStream)
        read = decoded = 0
        for chunk in self.inner:
            read += len(chunk)
            self._check(read)
            if self.decoder is None:
                yield chunk
                continue
            while chunk:
                try:
                    out = self.decoder.decompress(chunk, self.bounds.max_bytes - decoded + 1)
                except zlib.error as exc:
                    raise httpx.DecodingError(f"the answer is not the gzip or deflate it says ({exc})",
                                              request=self.request) from exc
                decoded += len(out)
                self._check(decoded)
                yield out
                chunk = self.decoder.unconsumed_tail
        if self.decoder is not None:
            yield self.decoder.flush()

    def _check(self, size: int) -> None:
        if size > self.bounds.max_bytes:
            raise httpx.ReadError(f"the answer is larger than {self.bounds.max_bytes:,} bytes", request=self.request)
        if time.monotonic() > self.deadline:
            raise httpx.ReadTimeout(f"the answer took longer than {self.bounds.seconds:g}s", request=self.request)

    def close(self) -> None:
        if isinstance(self.inner, httpx.SyncByteStream):
            self.inner.close()


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
        deadline = _DEADLINE.get()
        if deadline is not None:
            left = deadline - time.monotonic()
            if left <= 0:
                raise httpcore.ReadTimeout("the answer's status line and headers did not come in time")
            timeout = left if timeout is None else min(timeout, left)
        return self.inner.read(max_bytes, timeout)

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self.inner.write(buffer, timeout)

    def close(self) -> None:
        self.inner.close()

    def start_tls(self, ssl_context: Any, server_hostname: str | None = None,
                  timeout: float | None = None) -> httpcore.NetworkStream:
        return _DeadlineStream(self.inner.start_tls(ssl_context, server_hostname, timeout))

    def get_extra_info(self, info: str) -> Any:
        return self.inner.get_extra_info(info)

"""The httpx transports ``ctx-mem0`` and ``ctx-honcho`` give their SDKs: apart, so that httpx (0.1-0.2 s to import)
is loaded when a client is built, not whenever the provider is registered."""

from __future__ import annotations

import time
import zlib
from collections.abc import Iterator
from typing import Any

import httpx

from ...chat import ACCEPTED_ENCODINGS, answer_decoder
from ...http_deadline import answer_deadline, bounded_reads

#: the largest answer read from a memory service; a larger one is an error (a broken or hostile server)
MAX_ANSWER_BYTES = 32 << 20


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
    than the deadline (:func:`hermes_ctx_plugins.http_deadline.bounded_reads`).
    """

    def __init__(self, inner: httpx.BaseTransport, *, seconds: float, max_bytes: int = MAX_ANSWER_BYTES) -> None:
        self.inner = inner
        self.seconds = seconds
        self.max_bytes = max_bytes
        if isinstance(inner, httpx.HTTPTransport):
            bounded_reads(inner)

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        deadline = time.monotonic() + self.seconds
        request.headers["Accept-Encoding"] = ACCEPTED_ENCODINGS  # not br or zstd, which httpx offers when installed
        with answer_deadline(deadline):
            response = self.inner.handle_request(request)
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

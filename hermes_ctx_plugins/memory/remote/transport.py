"""The httpx transport ``ctx-honcho`` gives the Honcho SDK: apart, so that httpx (0.1-0.2 s to import) is
loaded when a Honcho client is built, not whenever the provider is registered."""

from __future__ import annotations

import httpx


class CappedRetryAfter(httpx.BaseTransport):
    """An httpx transport that caps a response's ``Retry-After`` at ``cap`` seconds.

    honcho-ai sleeps for whatever ``Retry-After`` says before retrying, inside the call; this keeps
    that sleep bounded whatever the server sends (seconds or an HTTP date).
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
            if not seconds <= self.cap:
                response.headers["Retry-After"] = f"{self.cap:g}"
        return response

    def close(self) -> None:
        self.inner.close()

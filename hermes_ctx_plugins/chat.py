"""Stage 4's model call: one non-streaming chat completion to any OpenAI-compatible endpoint.

The request never carries ``max_tokens`` / ``max_completion_tokens``: a capped summariser cuts its
summary mid-section, so the length budget lives in the prompt. The answer comes back with every
``<think>`` / ``<thinking>`` / ``<reasoning>`` block removed; ``reasoning_content`` is never used.
The client does not retry: each failure is a :class:`SummaryError` whose ``retry_on_main_model``
tells the caller's failure ladder what to do next::

    SummaryError (HermesCtxError)          .kind .retry_on_main_model .url .model .status
    ├── SummaryModelUnavailable   404, 5xx but 504, a "model not found" body    → retry on main
    ├── SummaryTimeout            connect/read timeout, total deadline, 408, 504 → retry on main
    ├── SummaryRateLimited        429; .retry_after seconds when the server said → retry on main
    ├── SummaryRequestRejected    any other 4xx (400 context too long, 413, 422) → retry on main
    ├── SummaryBadResponse        malformed JSON, no choices, empty text,
    │                             connection dropped mid-response                → retry on main
    ├── SummaryAuthError          401, 402, 403                                  → abort
    └── SummaryNetworkError       connection refused, DNS failure, no route      → abort

A 429 is not waited out here: another model usually has its own quota, and the caller's cooldown
(at least ``retry_after``) protects the summary model afterwards.
"""

from __future__ import annotations

import bisect
import email.utils
import functools
import json
import re
import time
import weakref
import zlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import TracebackType
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

from .errors import HermesCtxError

if TYPE_CHECKING:  # imported where a URL is read or a request made: httpx loads rich and click (0.1-0.2 s)
    import ssl

    import httpx

_RESERVED_KEYS = frozenset({"model", "messages", "stream"})
_CAPPING_KEYS = frozenset({"max_tokens", "max_completion_tokens", "max_output_tokens"})
_MODEL_MISSING = re.compile(
    r"model_not_found|model\b.{0,80}\b(not found|does not exist)|no available channel", re.I
)
#: the most bytes of an answer read: far more than any model writes in one completion (128k tokens of Chinese,
#: JSON-escaped, are about 1 MB), far less than what would hold the process for seconds (a red-team pass: a
#: server answering 150 MB at once held a judge's thread, and with it every other, for 11 s and 9.5 GB)
MAX_ANSWER_BYTES = 8 * 1024 * 1024
#: the encodings an answer may come in, decoded here within that bound (:func:`answer_decoder`)
ACCEPTED_ENCODINGS = "gzip, deflate"


def answer_decoder(encoding: str) -> Any:
    """A decoder for an answer's ``Content-Encoding`` that its reader calls with a bound on what it gives
    (``decompress(data, max_length)``: httpx decodes a read whole, however much it grows), ``None`` for none.

    :raises ValueError: an encoding not asked for (stacked ones, ``br``, ...), named
    """
    encoding = encoding.strip().lower()
    if encoding in ("", "identity"):
        return None
    if encoding not in ("gzip", "x-gzip", "deflate"):
        raise ValueError(f"the answer came encoded as {encoding[:40]!r}; asked for {ACCEPTED_ENCODINGS} or none")
    return zlib.decompressobj(32 + zlib.MAX_WBITS)  # a gzip or a zlib header, told apart by zlib
_TAGS = r"think|thinking|reasoning"
# Tags are found by searches that each read on from where the last stopped, never by a lazy ``.*?`` tried from every
# opening tag (quadratic: 96 KB of "<think>" held a judge's thread, and every other, for 10 s; a red-team pass).
_OPEN_NAME = re.compile(rf"<({_TAGS})\b", re.I)
_CLOSE = re.compile(rf"</({_TAGS})\s*>", re.I)
# An open tag at the start of a line that is never closed: the rest is reasoning (a cut-off answer).
_LINE_OPEN = re.compile(rf"(?:\A|\n)[ \t]*<(?:{_TAGS})\b", re.I)


def strip_reasoning(text: str) -> str:
    """``text`` without reasoning blocks, trimmed: each opening tag with the first closing tag of its name after it
    (``<think …>…</think>``); then, when a closing tag comes before any opening one, everything up to it (chat
    templates that open the block themselves leave only its closing tag); then, from an opening tag at the start of a
    line that was never closed, the rest (a cut-off answer). Linear in time and memory (the lazy patterns it
    replaced kept ~75 bytes per character, and took time quadratic in the tags)."""
    text = _closed_blocks_removed(text)
    closer = _CLOSE.search(text)
    if closer is not None and _OPEN_NAME.search(text, 0, closer.start()) is None:
        text = text[closer.end():]
    line = _LINE_OPEN.search(text)  # the first: a later one has a tag's end after it only if this one has
    if line is not None and text.find(">", line.end()) != -1:
        text = text[:line.start()]
    return text.strip()


def _closed_blocks_removed(text: str) -> str:
    """``text`` without each ``<name …>`` … ``</name>`` (the first closing tag of that name after it; a name's case
    does not matter), read left to right as a regular expression's ``sub`` would."""
    closers: dict[str, list[re.Match[str]]] = {}  # by name, in order
    for m in _CLOSE.finditer(text):
        closers.setdefault(m[1].lower(), []).append(m)
    if not closers:
        return text
    starts = {name: [m.start() for m in found] for name, found in closers.items()}
    kept, at, search = [], 0, 0
    while (opener := _OPEN_NAME.search(text, search)) is not None:
        end = text.find(">", opener.end())
        if end == -1:
            break  # no tag ends after it, nor after any later one
        name = opener[1].lower()
        k = bisect.bisect_left(starts.get(name, ()), end + 1)
        if k == len(starts.get(name, ())):
            search = opener.start() + 1  # never closed: the next opening tag is tried
            continue
        kept.append(text[at:opener.start()])
        at = search = closers[name][k].end()
    kept.append(text[at:])
    return "".join(kept)


@dataclass(frozen=True)
class SummaryModel:
    """Where the summary comes from.

    ``base_url`` follows the ``openai`` SDK and hermes: it is the API root including ``/v1`` (or
    the provider's equivalent, e.g. ``…/api/paas/v4``) and ``/chat/completions`` is appended. A
    bare ``http://host:port`` gets ``/v1`` added; a URL already ending in ``/chat/completions`` is
    used as is. ``timeout`` bounds each connect/read/write and the whole exchange.
    ``extra_body`` is merged into every request; it may not set the model, messages, streaming or
    any output cap.
    """

    base_url: str
    model: str
    api_key: str = field(default="", repr=False)
    timeout: float = 120.0
    extra_body: Mapping[str, Any] = field(default_factory=dict, hash=False)
    #: what the model is for, in error messages ("summary", "review")
    purpose: str = "summary"

    def __post_init__(self) -> None:
        import httpx

        url = httpx.URL(self.base_url)
        if url.scheme not in ("http", "https") or not url.host:
            raise ValueError(f"summary model base_url must be an http(s) URL, got {self.base_url!r}")
        if not self.model:
            raise ValueError("summary model name is empty")
        if not self.timeout > 0:
            raise ValueError(f"summary model timeout must be > 0 seconds, got {self.timeout!r}")
        forbidden = sorted(set(self.extra_body) & (_RESERVED_KEYS | _CAPPING_KEYS))
        if forbidden:
            raise ValueError(
                f"summary model extra_body may not set {', '.join(forbidden)}: the client sets model, "
                "messages and stream itself, and the summary output is never capped on the wire"
            )
        object.__setattr__(self, "extra_body", dict(self.extra_body))

    @property
    def url(self) -> str:
        """The chat completions URL requests go to."""
        import httpx

        base = self.base_url.rstrip("/")
        if base.endswith("/chat/completions"):
            return base
        if not httpx.URL(base).path.strip("/"):
            base += "/v1"
        return f"{base}/chat/completions"


class SummaryError(HermesCtxError):
    """The summary model did not produce a summary.

    :ivar kind: a short machine-readable name of the failure class
    :ivar retry_on_main_model: ``True``: try the main model next; ``False``: abort the compaction
    :ivar url: the chat completions URL
    :ivar model: the model asked
    :ivar status: the HTTP status, when there was a response
    """

    kind: ClassVar[str] = "error"
    retry_on_main_model: ClassVar[bool] = True

    def __init__(self, problem: str, *, url: str, model: str, status: int | None = None,
                 purpose: str = "summary") -> None:
        self.url = url
        self.model = model
        self.status = status
        http = f"HTTP {status}: " if status is not None else ""
        super().__init__(f"{purpose} model {model!r} at {url}: {http}{problem}")


_E = TypeVar("_E", bound=SummaryError)


class SummaryModelUnavailable(SummaryError):
    kind = "unavailable"


class SummaryTimeout(SummaryError):
    kind = "timeout"


class SummaryRateLimited(SummaryError):
    """:ivar retry_after: seconds the server asked to wait (``Retry-After``), or ``None``"""

    kind = "rate_limited"
    retry_after: float | None = None


class SummaryRequestRejected(SummaryError):
    kind = "rejected"


class SummaryBadResponse(SummaryError):
    kind = "bad_response"


class SummaryAuthError(SummaryError):
    kind = "auth"
    retry_on_main_model = False


class SummaryNetworkError(SummaryError):
    kind = "network"
    retry_on_main_model = False


@functools.cache
def _tls_context() -> ssl.SSLContext:
    """httpx's default TLS context, made once per process and shared by every client this module makes.

    Making one loads the CA bundle (~80 ms), and hermes deep-copies engines per agent: a pipeline's
    steps, built anew in each copy, paid that on every agent's first compaction. ``SSL_CERT_FILE`` /
    ``SSL_CERT_DIR`` are read when it is made, as httpx reads them when a client is made.
    """
    import httpx

    return httpx.create_ssl_context()


class SummaryClient:
    """Asks a :class:`SummaryModel` for a completion. Owns its httpx client unless given one."""

    def __init__(self, model: SummaryModel, *, http: httpx.Client | None = None) -> None:
        self.model = model
        self._given_http = http
        self._own_http: httpx.Client | None = None

    def complete(self, messages: list[dict[str, Any]], *, temperature: float | None = None) -> str:
        """Return the assistant's text for ``messages``, reasoning stripped.

        :raises SummaryError: a subclass naming what went wrong; never a raw httpx exception
        """
        body: dict[str, Any] = {"model": self.model.model, "messages": messages, "stream": False}
        body.update(self.model.extra_body)
        if temperature is not None:
            body["temperature"] = temperature
        status, headers, content = self._post(body)
        if status >= 400:
            raise self._status_error(status, headers, content)
        text = strip_reasoning(_text(self._message(content, status).get("content")))
        if not text:
            raise self._error(SummaryBadResponse, "empty answer once reasoning is stripped", status)
        return text

    def chat(self, messages: list[dict[str, Any]], *, tools: list[dict[str, Any]] | None = None,
             temperature: float | None = None) -> dict[str, Any]:
        """The assistant message for ``messages`` offered ``tools``: ``content`` (reasoning stripped,
        may be empty) and ``tool_calls`` exactly as the model sent them (validating them is the
        caller's job: it knows which tools exist).

        :raises SummaryError: as :meth:`complete`, except that an empty answer is not an error
        """
        body: dict[str, Any] = {"model": self.model.model, "messages": messages, "stream": False}
        body.update(self.model.extra_body)
        if tools:
            body["tools"] = tools
            body["tool_choice"] = "auto"
        if temperature is not None:
            body["temperature"] = temperature
        status, headers, content = self._post(body)
        if status >= 400:
            raise self._status_error(status, headers, content)
        message = self._message(content, status)
        calls = message.get("tool_calls")
        return {"role": "assistant", "content": strip_reasoning(_text(message.get("content"))),
                "tool_calls": calls if isinstance(calls, list) else []}

    def _post(self, body: dict[str, Any]) -> tuple[int, httpx.Headers, bytes]:
        import httpx

        url, limit = self.model.url, self.model.timeout
        headers = {"Accept": "application/json", "Content-Type": "application/json",
                   "Accept-Encoding": ACCEPTED_ENCODINGS}
        if self.model.api_key:
            headers["Authorization"] = f"Bearer {self.model.api_key}"
        from .http_deadline import answer_deadline

        http = self._http()  # built first: making the client (an SSL context, ~0.2 s on a loaded machine) is no part
        deadline = time.monotonic() + limit  # of the answer's time (a 0.2 s deadline was spent before the request left)
        try:  # the deadline bounds the status line and headers too (our own client's connections read by it)
            with answer_deadline(deadline), http.stream(
                    "POST", url, content=_utf8_json(body), headers=headers, timeout=limit) as response:
                decoder = self._decoder(response)
                parts, size = [], 0
                # A proxy that trickles keep-alive bytes never trips the read timeout: bound the total. The raw bytes
                # are read and decoded here, a bound's worth at a time (httpx decodes a read whole, however much it
                # grows: "gzip, gzip" took 739 bytes to 637 MB before a cap on decoded bytes saw them; a red-team pass)
                for raw in response.iter_raw():
                    while raw:
                        part = raw if decoder is None else self._decoded(decoder, raw, MAX_ANSWER_BYTES - size + 1)
                        raw = b"" if decoder is None else decoder.unconsumed_tail
                        parts.append(part)
                        size += len(part)
                        if size > MAX_ANSWER_BYTES:  # no answer is this long: a broken or hostile server
                            raise self._error(SummaryBadResponse, f"the answer is longer than {MAX_ANSWER_BYTES:,} "
                                              "bytes (no completion is): not read further", response.status_code)
                    if time.monotonic() > deadline:
                        raise self._error(SummaryTimeout, f"no complete answer within {limit:g} s")
                if decoder is not None:
                    parts.append(decoder.flush())
                return response.status_code, response.headers, b"".join(parts)
        except httpx.TimeoutException as exc:
            raise self._error(SummaryTimeout, f"timed out after {limit:g} s ({exc!r})") from exc
        except (httpx.ConnectError, httpx.ProxyError) as exc:
            raise self._error(SummaryNetworkError, f"cannot connect ({exc})") from exc
        except httpx.HTTPError as exc:
            raise self._error(SummaryBadResponse, f"connection broke mid-response ({exc!r})") from exc

    def _decoder(self, response: httpx.Response) -> Any:
        try:
            return answer_decoder(response.headers.get("content-encoding", ""))
        except ValueError as exc:
            raise self._error(SummaryBadResponse, str(exc), response.status_code) from None

    def _decoded(self, decoder: Any, raw: bytes, most: int) -> bytes:
        try:
            return bytes(decoder.decompress(raw, most))
        except zlib.error as exc:
            raise self._error(SummaryBadResponse, f"the answer is not the gzip or deflate it says ({exc})") from exc

    def _status_error(self, status: int, headers: httpx.Headers, content: bytes) -> SummaryError:
        detail = _error_detail(content)
        if status in (401, 402, 403):
            return self._error(SummaryAuthError, detail, status)
        if status == 429:
            limited = self._error(SummaryRateLimited, detail, status)
            limited.retry_after = _retry_after(headers.get("retry-after"))
            return limited
        if status in (408, 504):
            return self._error(SummaryTimeout, detail, status)
        if status == 404 or status >= 500 or _MODEL_MISSING.search(detail):
            return self._error(SummaryModelUnavailable, detail, status)
        return self._error(SummaryRequestRejected, detail, status)

    def _message(self, content: bytes, status: int) -> dict[str, Any]:
        try:
            data = json.loads(content)
        except (ValueError, RecursionError) as exc:  # RecursionError: nested deeper than Python's parser goes
            raise self._error(SummaryBadResponse, f"malformed JSON: {_snippet(content)}", status) from exc
        choices = data.get("choices") if isinstance(data, dict) else None
        if not choices or not isinstance(choices, list) or not isinstance(choices[0], dict):
            # Some proxies wrap an upstream failure in a 200; a missing model still means "unavailable".
            missing = (
                isinstance(data, dict) and "error" in data and _MODEL_MISSING.search(_error_detail(content))
            )
            cls = SummaryModelUnavailable if missing else SummaryBadResponse
            raise self._error(cls, f"no choices in the answer: {_snippet(content)}", status)
        message = choices[0].get("message")
        return message if isinstance(message, dict) else {}  # legacy shapes: treated as an empty answer

    def _error(self, cls: type[_E], problem: str, status: int | None = None) -> _E:
        return cls(problem, url=self.model.url, model=self.model.model, status=status, purpose=self.model.purpose)

    def _http(self) -> httpx.Client:
        import httpx

        if self._given_http is not None:
            return self._given_http
        if self._own_http is None:
            from .http_deadline import bounded_reads

            # a server trickling its headers, or sending "100 Continue" every few tenths of a second, held a
            # compaction (and hermes' turn) past the timeout for as long as it wished (a red-team pass)
            self._own_http = httpx.Client(transport=bounded_reads(httpx.HTTPTransport(verify=_tls_context())))
            # hermes deep-copies and drops engines freely: close the sockets with the last reference.
            weakref.finalize(self, self._own_http.close)
        return self._own_http

    def close(self) -> None:
        """Close the httpx client this object created (never one it was given)."""
        if self._own_http is not None:
            self._own_http.close()
            self._own_http = None

    def __enter__(self) -> SummaryClient:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def __deepcopy__(self, memo: dict[int, Any]) -> SummaryClient:
        # hermes deep-copies the context engine per agent; an open httpx client cannot be copied.
        return SummaryClient(self.model, http=self._given_http)


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # content parts; "thinking"/"reasoning" parts are not text
        texts = (
            part.get("text") for part in content if isinstance(part, dict) and part.get("type") == "text"
        )
        return "".join(text for text in texts if isinstance(text, str))
    return ""


def _error_detail(content: bytes) -> str:
    try:
        error = json.loads(content).get("error")
    except (ValueError, AttributeError):
        return _snippet(content) or "(empty body)"
    if isinstance(error, dict):
        parts = [str(error[key]) for key in ("message", "code") if error.get(key)]
        return " ".join(parts)[:300] or _snippet(content)
    return str(error)[:300] if error else _snippet(content)


def _snippet(content: bytes) -> str:
    text = content.decode("utf-8", "replace").strip()
    return text if len(text) <= 200 else text[:197] + "..."


def _retry_after(value: str | None) -> float | None:
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        return max(0.0, email.utils.parsedate_to_datetime(value).timestamp() - time.time())
    except (TypeError, ValueError):
        return None


def _utf8_json(body: dict[str, Any]) -> bytes:
    """``body`` as UTF-8 JSON, whatever its strings hold: hermes keeps lone surrogates in its history
    (it cleans only the copy it sends), which UTF-8 cannot encode; a split pair is joined and a lone
    one becomes U+FFFD, as tiktoken reads them."""
    text = json.dumps(body, ensure_ascii=False)
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace").encode("utf-8")

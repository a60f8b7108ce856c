"""A stateful loopback HTTP service with scriptable faults: the engine of every stub in this package.

A :class:`LoopbackService` is a real HTTP/1.1 server on ``127.0.0.1`` (random free port, see
:mod:`.server`) that a real client or SDK can be pointed at. A subclass implements
:meth:`LoopbackService.handle` for its routes; the engine records every request, checks the API
key, and plays the script first. Every stub (the OpenAI-compatible model, Mem0, Honcho) has the
same faults, spelled the same way::

    stub.fail(503, times=3)                    # the next three requests get a 503
    stub.fail(429, retry_after=3600)           # a 429 with an (absurd) Retry-After
    stub.fail(401, path="/search")             # only requests whose path matches the regex
    stub.hang()                                # never answer (until the client gives up)
    stub.delay(2.0)                            # answer two seconds late
    stub.garbage(b"{not json")                 # a 200 whose body is not JSON
    stub.drop()                                # cut the answer half-way and close the connection
    stub.drop(before_headers=True)             # close the connection without answering
    stub.stop(); ...; stub.start()             # refuse connections, then serve again (same port)

Every fault takes ``times`` (how many matching requests it answers) and ``path`` (a regex the
request's path must match; by default every path, the OpenAI stub: its chat completions route).
Scripted steps are played in order. ``delay`` and ``drop()`` act on the answer the request gets
otherwise: the next scripted step it matches, or else the route. That answer is taken when the
request arrives, so a client that gives up during a delay takes it along; the route itself runs
only once the delay is over, so a write whose client gave up was never applied.
"""

from __future__ import annotations

import re
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import TracebackType
from typing import Any, Self

from .server import LoopbackHandler, LoopbackServer, Reply, ServiceRequest

__all__ = ["LoopbackService", "Reply", "ServiceRequest", "relevance", "wait_until", "words"]

Respond = Callable[[ServiceRequest], Reply]


# -- the script: what the next matching requests get ----------------------------------------------

@dataclass
class _Step:
    times: int
    path: re.Pattern[str] | None


@dataclass
class _Canned(_Step):
    """``fail`` and ``garbage``: this reply, whatever the request."""

    reply: Reply


@dataclass
class _Hold(_Step):
    """``delay`` (seconds) and ``hang`` (``None``: never answer)."""

    seconds: float | None


@dataclass
class _Drop(_Step):
    before_headers: bool


@dataclass
class _Answer(_Step):
    """A scripted answer of a subclass (the OpenAI stub's ``reply``), computed from the request."""

    respond: Respond


@dataclass
class _Plan:
    """How one request is answered: after ``wait`` seconds, by ``step`` (``None``: the route)."""

    wait: float = 0.0
    cut: bool = False
    step: _Step | None = None


class LoopbackService:
    """A scripted, stateful HTTP service on ``127.0.0.1`` (see the module docs).

    :param api_keys: the keys the service accepts; ``None`` disables authentication
    :param auth_scheme: the ``Authorization`` scheme clients use (``Bearer``, ``Token``)
    :param hang_limit: the longest a ``hang`` or ``delay`` holds a request, in seconds
    """

    host = "127.0.0.1"
    #: the ``Server`` header of every answer
    server_version = "LoopbackService/1.0"
    #: appended to ``http://host:port`` to make :attr:`base_url`
    base_path = ""
    #: paths (regexes) that need no API key
    public_paths: tuple[str, ...] = ()
    #: the requests (a path regex) a scripted step applies to when it names no ``path``; ``None``: all
    script_path: str | None = None

    def __init__(self, *, api_keys: tuple[str, ...] | None = ("test-key",), auth_scheme: str = "Bearer",
                 hang_limit: float = 30.0, port: int = 0) -> None:
        self.api_keys = api_keys
        self.auth_scheme = auth_scheme
        self.hang_limit = hang_limit
        self.lock = threading.RLock()
        self._script: deque[_Step] = deque()
        self._requests: list[ServiceRequest] = []
        self._busy = 0.0
        self._closed = False
        self.port = port  # 0: a free one, which the OS picks
        self._server: LoopbackServer | None = None
        self.start()
        self.base_url = f"http://{self.host}:{self.port}{self.base_path}"

    # -- scripting faults -------------------------------------------------------------------------

    def fail(self, status: int = 500, message: str = "", *, times: int = 1, path: str | None = None,
             retry_after: float | None = None, headers: Mapping[str, str] | None = None) -> None:
        """Answer the next ``times`` requests (matching ``path``) with HTTP ``status`` and the service's
        error body saying ``message``; ``retry_after`` (seconds) becomes a ``Retry-After`` header."""
        self._fail(status, self.error_body(status, message), times=times, path=path, retry_after=retry_after,
                   headers=headers)

    def hang(self, *, times: int = 1, path: str | None = None) -> None:
        """Never answer the next ``times`` requests: hold each until the client gives up, the service
        stops or ``hang_limit`` passes, then close the connection."""
        self._push(_Hold(times, self._pattern(path), None))

    def delay(self, seconds: float, *, times: int = 1, path: str | None = None) -> None:
        """Answer the next ``times`` requests ``seconds`` (at most ``hang_limit``) late."""
        self._push(_Hold(times, self._pattern(path), seconds))

    def garbage(self, body: bytes = b"{not json", *, status: int = 200, content_type: str = "application/json",
                times: int = 1, path: str | None = None) -> None:
        """Answer the next ``times`` requests with ``body`` verbatim (malformed JSON, an HTML page, …)."""
        self._push(_Canned(times, self._pattern(path), Reply(status, body, content_type=content_type)))

    def drop(self, *, before_headers: bool = False, times: int = 1, path: str | None = None) -> None:
        """Close the connection of the next ``times`` requests half-way through their answer.

        Half-way: the headers and half the body; a stream without its final events (an OpenAI
        stream: no finish, usage or ``[DONE]``) and without the zero-length chunk that ends it.
        ``before_headers=True`` closes before sending anything (the request is not handled at all).
        """
        self._push(_Drop(times, self._pattern(path), before_headers))

    def clear_faults(self) -> None:
        """Forget every fault not met yet (scripted answers stay)."""
        with self.lock:
            self._script = deque(step for step in self._script if isinstance(step, _Answer))

    def _fail(self, status: int, body: Any, *, times: int, path: str | None, retry_after: float | None,
              headers: Mapping[str, str] | None) -> None:
        extra = dict(headers or {})
        if retry_after is not None:
            extra["Retry-After"] = f"{retry_after:g}"
        self._push(_Canned(times, self._pattern(path), Reply(status, body, extra)))

    def _script_answer(self, respond: Respond) -> None:
        """Answer the next request to :attr:`script_path` that reaches the route with ``respond(request)``."""
        self._push(_Answer(1, self._pattern(None), respond))

    def _pattern(self, path: str | None) -> re.Pattern[str] | None:
        path = self.script_path if path is None else path
        return None if path is None else re.compile(path)

    def _push(self, step: _Step) -> None:
        with self.lock:
            self._script.append(step)

    def _take(self, path: str, taken: list[_Step]) -> _Step | None:
        for step in self._script:
            if any(step is other for other in taken):  # one request uses each fault at most once
                continue
            if step.path is None or step.path.search(path):
                step.times -= 1
                if step.times <= 0:
                    self._script.remove(step)
                return step
        return None

    def _plan(self, path: str) -> _Plan:
        """Take the steps that answer a request to ``path``: delays and half-way drops, then its answer."""
        plan, taken = _Plan(), list[_Step]()
        with self.lock:
            while True:
                step = self._take(path, taken)
                if step is not None:
                    taken.append(step)
                if isinstance(step, _Hold) and step.seconds is not None:
                    plan.wait += min(step.seconds, self.hang_limit)
                elif isinstance(step, _Drop) and not step.before_headers:
                    plan.cut = True
                else:
                    plan.step = step
                    return plan

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

    def requests_to(self, method: str, path_regex: str) -> list[ServiceRequest]:
        """The requests with ``method`` whose path matches ``path_regex``."""
        pattern = re.compile(path_regex)
        return [r for r in self.requests if r.method == method and pattern.search(r.path)]

    @property
    def pending(self) -> int:
        """How many scripted answers and faults have not been used yet."""
        with self.lock:
            return sum(step.times for step in self._script)

    @property
    def pending_faults(self) -> int:
        """How many scripted fault answers have not been used yet."""
        with self.lock:
            return sum(step.times for step in self._script if not isinstance(step, _Answer))

    @property
    def busy_seconds(self) -> float:
        """Total time spent handling requests (summed over concurrent requests), delays included."""
        with self.lock:
            return self._busy

    # -- lifecycle --------------------------------------------------------------------------------

    def start(self) -> None:
        """Serve (again, on the same port after :meth:`stop`)."""
        with self.lock:
            if self._server is not None:
                return
            self._server = LoopbackServer(self, self.port)
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

    def __enter__(self) -> Self:
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

    def serve(self, handler: LoopbackHandler, method: str) -> None:
        """Answer one request: record it, play the script, else check the key and run the route."""
        started = time.perf_counter()
        try:
            request = handler.read_request(method)
            with self.lock:
                self._requests.append(request)
            self._answer(handler, request)
        finally:
            with self.lock:
                self._busy += time.perf_counter() - started

    def _answer(self, handler: LoopbackHandler, request: ServiceRequest) -> None:
        plan = self._plan(request.path)
        step = plan.step
        never = isinstance(step, _Drop) or (isinstance(step, _Hold) and step.seconds is None)
        wait = plan.wait + (self.hang_limit if isinstance(step, _Hold) else 0.0)
        if (wait > 0 and not handler.hold(wait)) or never:
            handler.abandon()
        elif isinstance(step, _Canned):
            handler.send(step.reply, cut=plan.cut)
        elif not self._authorized(request):
            handler.send(Reply(401, self.error_body(401, "Invalid API key")), cut=plan.cut)
        else:
            handler.send(self._route(request, step), cut=plan.cut)

    def _route(self, request: ServiceRequest, step: _Step | None) -> Reply:
        try:
            return step.respond(request) if isinstance(step, _Answer) else self.handle(request)
        except Exception as exc:  # a bug in a stub route shows up as a 500 the test can read
            return Reply(500, self.error_body(500, f"stub route raised {exc!r}"))


# -- the stubs' "search" ------------------------------------------------------------------------

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


def wait_until(predicate: Callable[[], Any], timeout: float = 5.0, interval: float = 0.01) -> bool:
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

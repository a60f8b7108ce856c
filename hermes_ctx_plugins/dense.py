"""What ctx-local's dense recall and the archive's hybrid ``ctx_search`` share: the background thread
that embeds stored texts lacking a vector, the result of one dense search, and the z-score fusion of a
lexical score with a cosine.

**Writing** (:class:`Backfill`): texts are stored exactly as without an embedder (the writer never waits
for a model); a thread of its own, at the lowest CPU priority, then embeds them in small batches —
first those whose keys the writer handed over (:meth:`Backfill.stored`), then, newest first, every one
without a vector of the current model: what a crash, an older version or a model change left. A text
the embedder refuses alone is stored with an empty vector (never tried again); a store failure is
waited out. The store is anything with the four methods of :class:`VectorStore` (a
:class:`~hermes_ctx_plugins.storage.base.MemoryBackend`, an
:class:`~hermes_ctx_plugins.storage.base.ArchiveBackend`); a subclass says how an item's id and text are
read, which failures are the store's, and what the log calls them.

**Fusion** (:func:`fused`): each candidate's lexical score (BM25) and cosine are z-scored over the
texts the caller's scope sees — the lexical score is 0 for every text that is not a lexical
candidate, the cosine is known for all — and mixed ``(1 - w) * z(lexical) + w * z(cosine)``. A text
holding a rare word of the question (an id, an error code, a name) scores far above the mean, and a
cosine's z counts down to :data:`DENSE_Z_FLOOR` only, so it stays first whatever the model thinks of it;
a paraphrase without a shared word gets in on its cosine alone. ``w`` was measured per use: ctx-local's
in README's ctx-local section, the archive's in its archive section. ctx-local weighs a question that
names something exactly (:func:`names_exactly`: an id, a path, a name) with a lower ``w`` of its own.

Two processes walking one backlog share it (:data:`LEAP_BATCHES`), and a question goes to a thread of its
own where the embedder may hang (:class:`QuestionThread`), never queued behind a stuck one.

numpy is imported only through :func:`~hermes_ctx_plugins.embedding.numpy`, when an embedder is configured.
The module is over 500 lines: the backfill, the question thread and the fusion share their constants and
are read together; splitting them would scatter one mechanism over three files.
"""

from __future__ import annotations

import collections
import logging
import math
import os
import queue
import re
import threading
import time
from collections.abc import Callable, Hashable, Sequence
from concurrent import futures
from concurrent.futures import Future
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from . import embedding
from .embedding import Embedder
from .errors import EmbedderFailure

if TYPE_CHECKING:
    from .embedding import Matrix

#: an idle thread walks the backlog again after this many seconds: items stored that it was not handed
#: (another process's, an archive spool another host imported) and items of a batch that failed
REWALK_SECONDS = 600.0
#: a backlog walk that finds another process storing the vectors it just made (two processes on one store
#: walk one backlog newest first, in step) moves this many batches further down before its next batch, and
#: leaves what it passed to the other; they meet again about once per this many batches each
LEAP_BATCHES = 8
#: texts embedded per batch: about 30 ms each here, so a batch holds a core for a few tenths of a second
BATCH = 8
#: keys taken from the writer per look-up
KEYS_PER_LOOKUP = 256
#: keys handed over by the writer and not embedded yet, at most
MAX_PENDING_KEYS = 100_000
#: the lowest z-score a cosine counts for in :func:`fused`: an embedding unlike the question's is weak
#: evidence against a text (an identifier, a code, a name mean little to the model), while a rare word
#: of the question in it is strong evidence for it — so the dense side can lift a text far, but sink it
#: only this far
DENSE_Z_FLOOR = -1.0
#: below this many embedded items in a scope, their mean and spread say little (a user with three
#: memories): the lexical z-scores are taken over this many (so a sole exact match stays an outlier),
#: and the dense side offers no candidates of its own — a paraphrase is found by meaning from the
#: tenth item on; without it, any question brought whatever few items there are (a z-score is relative)
MIN_POPULATION = 10


class VectorStore(Protocol):
    """What :class:`Backfill` needs of a store (both store interfaces have it)."""

    @property
    def dense(self) -> bool:
        """Whether the store keeps vectors at all."""

    def unembedded(self, model: str, *, keys: Any = None, below: int | None = None, limit: int = 16) -> Sequence[Any]:
        """Items without a vector of ``model``: those under ``keys``, else those with an id below ``below``."""

    def put_vectors(self, model: str, vectors: Sequence[tuple[int, bytes]]) -> int:
        """Store ``(id, vector)`` pairs; ``b""`` marks an item that cannot be embedded."""

    def close(self) -> None:
        """Release the connection."""


# ------------------------------------------------------------------------------------------------ writing


class Backfill:
    """The thread that embeds stored items lacking a vector of the embedder's model. A subclass says
    what an item's id and text are (:meth:`ident`, :meth:`text`), which exceptions are the store's
    (:attr:`outage`) and what the log calls things."""

    #: the thread's name
    thread_name = "embed"
    #: the exceptions meaning the store as a whole cannot be used now (waited out, the connection reopened
    #: unless the exception's ``reason`` is ``locked``)
    outage: tuple[type[Exception], ...] = ()
    log = logging.getLogger("hermes_ctx_plugins")
    #: the log's words: ``%s`` the exception; then the retry delay; then the item's id
    waiting = "embedding waits for the store (%s)"
    failing = "embedding failed; retrying in %.0f s"
    refused = "#%d could not be embedded; it is found by its words only"

    def __init__(self, embedder: Embedder, open_store: Callable[[], VectorStore], *, batch: int = BATCH,
                 backoff: float = 1.0) -> None:
        self.embedder = embedder
        self.open_store = open_store
        self.batch = batch
        self.backoff = backoff
        # bounded: a writer storing faster than the model embeds drops the oldest keys, whose items the
        # backlog walk of a later start embeds (they still lack a vector)
        self._keys: collections.deque[Hashable] = collections.deque(maxlen=MAX_PENDING_KEYS)
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._idle = threading.Event()
        self._mutex = threading.Lock()
        self._done = False
        #: the backlog is to be walked again from the top (:meth:`walk_again`)
        self._again = False
        #: the backlog's walk, newest first: the items below this id are next (None: from the top)
        self._below: int | None = None
        #: the last backlog batch's vectors were (partly) stored already, by another process: leap ahead
        self._crowded = False
        #: this walk leapt over items (left to the other walker): it is walked once more at its end
        self._leapt = False
        self._thread: threading.Thread | None = None
        #: items embedded by this process, and those that could not be (stored as b"")
        self.embedded = 0
        self.skipped = 0

    def ident(self, item: Any) -> int:
        """An item's id, under which its vector is stored."""
        return int(item.id)

    def text(self, item: Any) -> str:
        """What of an item is embedded (cut and cleaned by the embedder)."""
        return str(item.text)

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name=self.thread_name, daemon=True)
        self._thread.start()

    def stored(self, keys: Sequence[Hashable]) -> None:
        """The writer stored items under ``keys``: embed them next (called on the writer's thread)."""
        with self._mutex:
            if self._done:  # stopped for good (a backend without vectors, a close): nothing waits for it
                return
            self._keys.extend(keys)
            self._idle.clear()
        self._wake.set()

    def walk_again(self) -> None:
        """Walk the backlog again, from the newest item down: items were stored whose keys this thread
        was not handed (imported from elsewhere, e.g. an archive's spool)."""
        with self._mutex:
            if self._done:
                return
            self._again = True
            self._idle.clear()
        self._wake.set()

    def wait_idle(self, timeout: float) -> bool:
        """Wait until nothing is left to embed, or the thread stopped (tests and benchmarks); False if
        not within ``timeout``."""
        return self._idle.wait(timeout)

    def close(self, timeout: float = 5.0) -> None:
        self._stop.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout)

    def _run(self) -> None:
        if hasattr(os, "setpriority"):  # Linux: a thread's own nice value; hermes' threads go first
            try:
                os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), 19)
            except OSError:
                pass
        box: list[VectorStore | None] = [None]
        try:
            self._work(box)
        finally:
            with self._mutex:
                self._done = True
                self._idle.set()
            if box[0] is not None:
                box[0].close()

    def _work(self, box: list[VectorStore | None]) -> None:
        """The loop: ``box`` holds the thread's connection (its caller closes it)."""
        backlog = True
        while not self._stop.is_set():
            self._wake.clear()  # a wake-up from here on is seen by the wait below
            with self._mutex:
                if self._again:
                    self._again, self._below, backlog = False, None, True
                    self._crowded = self._leapt = False
            try:
                store = box[0] = box[0] or self.open_store()
                if not store.dense:  # this backend keeps no vectors: nothing to do, ever
                    return
                if self._step(store, backlog):
                    continue
            except self.outage as exc:
                self.log.warning(self.waiting, exc)
                self._walk_from_top()  # the ids of the failed batch were taken: the walk finds them again
                if getattr(exc, "reason", None) != "locked" and box[0] is not None:
                    box[0].close()
                    box[0] = None
                self._stop.wait(self.backoff)
                continue
            except Exception:  # the embedder's, or a store refusing a vector: later, not in a loop
                self.log.exception(self.failing, 60 * self.backoff)
                self._walk_from_top()
                self._stop.wait(60 * self.backoff)
                continue
            backlog = False
            with self._mutex:
                if not self._keys and not self._again:
                    self._idle.set()
            if not self._wake.wait(REWALK_SECONDS):  # idle that long: what others stored is walked to
                self._walk_from_top()

    def _walk_from_top(self) -> None:
        with self._mutex:
            self._again = True

    def _step(self, store: VectorStore, backlog: bool) -> bool:
        """Embed one piece of work: the keys the writer handed over, else (``backlog``) the next items
        lacking a vector below :attr:`_below` (moved past them first, so an item that keeps failing is
        not tried forever). False when there was nothing to do."""
        model = self.embedder.model_id
        with self._mutex:
            keys = [self._keys.popleft() for _ in range(min(len(self._keys), KEYS_PER_LOOKUP))]
        if keys:
            while (rows := store.unembedded(model, keys=keys, limit=self.batch)) and not self._stop.is_set():
                self._embed(store, rows)
            return True
        if not backlog:
            return False
        leap = LEAP_BATCHES if self._crowded else 1
        # newest first; after a leap, the oldest batch of the window: the newer ones are the other walker's next
        window = list(store.unembedded(model, below=self._below, limit=self.batch * leap))
        rows = window[-self.batch:]
        if not rows:
            if self._leapt:  # what was leapt over was left to another walker: walk once more to see it got there
                self._below, self._crowded, self._leapt = None, False, False
                return True
            return False
        self._leapt = self._leapt or len(window) > len(rows)
        self._below = min(self.ident(item) for item in rows)
        self._crowded = self._embed(store, rows) < len(rows)
        return True

    def _embed(self, store: VectorStore, rows: Sequence[Any]) -> int:
        """Embed ``rows`` and store their vectors; a batch the embedder refuses is tried one item at a
        time, and an item it refuses alone is stored without one (``b""``: never tried again). How many
        vectors were stored (fewer than ``rows``: another process stored the others first, or an item was
        forgotten meanwhile)."""
        model = self.embedder.model_id
        try:
            # a zero row (a text the model made nothing of: NaN, infinite) is stored as none (b"")
            vectors = [embedding.to_bytes(v) if v.any() else b""
                       for v in self.embedder.passages([self.text(item) for item in rows])]
        except Exception:
            if len(rows) > 1:
                return sum(self._embed(store, [item]) for item in rows)
            self.log.warning(self.refused, self.ident(rows[0]), exc_info=True)
            vectors = [b""]
            self.skipped += 1
        else:
            self.embedded += len(rows)
        return self.put(store, model, rows, vectors)

    def put(self, store: VectorStore, model: str, rows: Sequence[Any], vectors: Sequence[bytes]) -> int:
        """Store the ``vectors`` made of ``rows``, each under its item's id; how many were stored."""
        return store.put_vectors(model, [(self.ident(item), vector)
                                         for item, vector in zip(rows, vectors, strict=True)])


# ------------------------------------------------------------------------------------------------ reading


#: questions whose vectors a :class:`QuestionVectors` remembers
QUERIES_REMEMBERED = 64


class QuestionVectors:
    """Questions' vectors, the last :data:`QUERIES_REMEMBERED` remembered (a search tool call often asks
    what the prefetch just did); thread-safe."""

    def __init__(self, embedder: Embedder) -> None:
        self.embedder = embedder
        self._lock = threading.Lock()
        self._remembered: collections.OrderedDict[str, Matrix] = collections.OrderedDict()

    def vector(self, question: str) -> Matrix:
        with self._lock:
            vector = self._remembered.get(question)
            if vector is not None:
                self._remembered.move_to_end(question)
                return vector
        vector = self.embedder.query(question)
        with self._lock:
            self._remembered[question] = vector
            while len(self._remembered) > QUERIES_REMEMBERED:
                self._remembered.popitem(last=False)
        return vector

    def clear(self) -> None:
        """Forget every remembered vector (benchmarks: each question embedded as if new)."""
        with self._lock:
            self._remembered.clear()


def asked(vector_of: Callable[[str], Matrix], question: str, *, inline: bool, made_in: int,
          thread: QuestionThread, timeout: float) -> Future[Any]:
    """``question``'s vector by ``vector_of`` (or its exception), as a done future — unless not within
    ``timeout``.

    ``inline`` (an embedder computing in this process, :attr:`~.embedding.E5Small.in_process`): on the
    caller's thread in the process ``made_in`` (a pid). The model's OpenMP threads want both
    cores, and its work is slower from any other thread — a thread of its own made a prefetch's p50
    14 → 25 ms here, overlapped with the word search or not (a region stalls while one of its threads is
    descheduled; two threads' teams contend). In a process forked from it, on ``thread``, waited for
    ``timeout`` at most: OpenMP hangs in a forked child on the thread that used it in the parent. Any
    other embedder (a function, maybe calling a service that stops answering) always on ``thread``."""
    if inline and made_in == os.getpid():
        done: Future[Any] = Future()
        try:
            done.set_result(vector_of(question))
        except Exception as exc:  # the caller logs it and searches by words
            done.set_exception(exc)
        return done
    if (busy := thread.busy_for()) > timeout:  # still on an earlier question: this one would only wait behind it
        stuck: Future[Any] = Future()
        stuck.set_exception(TimeoutError(f"the embedder has been on an earlier question for {busy:.0f} s"))
        return stuck
    future = thread.ask(vector_of, question)
    futures.wait([future], timeout)
    return future


class QuestionThread:
    """The thread :func:`asked` embeds questions on in a forked process (a stuck embedder holds it, not
    the caller). One long-lived thread, made again in each process, not one per question: each new
    thread calling the model pays for a new OpenMP team."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._lock = threading.Lock()
        self._queue: queue.SimpleQueue[tuple[Callable[[str], Matrix], str, Future[Any]] | None] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._pid = 0
        #: when this process's thread began the question it is on (None: waiting for one)
        self._since: float | None = None

    def busy_for(self) -> float:
        """Seconds this process's thread has been on its current question (0: none): an embedder that
        stopped answering holds it, and a question asked meanwhile would only wait behind it."""
        with self._lock:
            since = self._since if self._pid == os.getpid() else None
        return 0.0 if since is None else time.monotonic() - since

    def ask(self, vector_of: Callable[[str], Matrix], question: str) -> Future[Any]:
        """``question``'s vector, as a future (cancel it when no longer wanted: a queued one is skipped)."""
        future: Future[Any] = Future()
        with self._lock:
            if self._thread is None or self._pid != os.getpid():
                self._pid, self._queue, self._since = os.getpid(), queue.SimpleQueue(), None
                self._thread = threading.Thread(target=self._run, args=(self._queue,), name=self.name, daemon=True)
                self._thread.start()
            self._queue.put((vector_of, question, future))
        return future

    def close(self) -> None:
        with self._lock:
            if self._thread is not None:
                self._queue.put(None)
                self._thread = None

    def _run(self, waiting: queue.SimpleQueue[tuple[Callable[[str], Matrix], str, Future[Any]] | None]) -> None:
        while (item := waiting.get()) is not None:
            vector_of, question, future = item
            if not future.set_running_or_notify_cancel():  # its caller stopped waiting
                continue
            with self._lock:
                self._since = time.monotonic()
            try:
                future.set_result(vector_of(question))
            except Exception as exc:  # handed to the caller, who logs it
                future.set_exception(exc)
            except BaseException as exc:  # a library's sys.exit(): re-raised on hermes' thread it would end the turn
                future.set_exception(EmbedderFailure(f"the embedder raised {type(exc).__name__}: {exc}"))
            finally:
                with self._lock:
                    self._since = None


@dataclass(frozen=True, eq=False)
class Dense:
    """What one dense search found in the caller's scope."""

    #: the best ids, best first, with their cosines
    best: list[tuple[int, float]]
    #: over the items the scope sees that have a vector: how many, and their cosines' mean and standard deviation
    count: int
    mean: float
    std: float
    #: those items' ids and cosines (arrays), for :meth:`cosines`
    ids: Any = None
    scores: Any = None

    def cosines(self, idents: Sequence[int]) -> dict[int, float]:
        """The cosines of those of ``idents`` the scope sees with a vector: one pass over the scope's ids (a dict
        of all of them, 12,500 for an owner at 100k turns, cost 1-2 ms a search; a fusion asks for ~40)."""
        if self.ids is None or not idents:
            return {}
        np = embedding.numpy()
        found = np.flatnonzero(np.isin(self.ids, np.asarray(list(idents), np.int64)))
        return dict(zip(self.ids[found].tolist(), self.scores[found].tolist(), strict=True))


NOTHING = Dense([], 0, 0.0, 0.0)


def ranked(np: Any, scores: Any, ids: Any, limit: int) -> Dense:
    """The dense search's answer from ``scores`` (cosines) of the items ``ids``, both arrays of the
    items the caller's scope sees: the best ``limit``, every cosine, and their statistics."""
    count = len(ids)
    if not count:
        return NOTHING
    # a cosine of unit vectors lies in [-1, 1]: anything else (NaN from an older version's vector, a
    # corrupt blob of huge values whose square would overflow the spread to infinity) says nothing
    scores = np.where(np.isfinite(scores) & (np.abs(scores) <= 1.001), scores, np.float32(-1))
    top = np.argpartition(-scores, limit - 1)[:limit] if count > limit else np.arange(count)
    top = top[np.argsort(-scores[top], kind="stable")]
    best = [(int(ids[i]), float(scores[i])) for i in top]
    return Dense(best, count, float(scores.mean()), float(scores.std()), ids, scores)


def appended(np: Any, columns: Sequence[Any], size: int, rows: Sequence[Any]) -> list[Any]:
    """``columns`` (arrays whose first axis is the row, ``None`` before the first rows) with ``rows`` (one
    value per column, each as many rows long) written from row ``size`` on: grown by doubling when they
    are full, so a cache adding a vector or two per search copies nothing most of the time."""
    needed = size + len(rows[0])
    held = columns[0]
    out = list(columns)
    if held is None or needed > len(held):
        capacity = max(needed, 2 * (0 if held is None else len(held)), 64)
        out = []
        for old, new in zip(columns, rows, strict=True):
            value = np.asarray(new)
            grown = np.zeros((capacity, *value.shape[1:]), value.dtype)
            if old is not None:
                grown[:size] = old[:size]
            out.append(grown)
    for column, new in zip(out, rows, strict=True):
        column[size:needed] = new
    return out


def dims(model: str) -> int:
    """The dimensions a model id names last (``.../384``), 0 when it names none."""
    tail = model.rpartition("/")[2]
    return int(tail) if tail.isdigit() else 0


def usable(vectors: Sequence[Any], model: str) -> tuple[list[Any], int]:
    """The stored ``vectors`` (each with a ``vector`` of float32 bytes) of one width — the model's, when
    its id names it, else the first's — and that width."""
    wanted = dims(model)
    kept = [v for v in vectors if len(v.vector) == 4 * wanted] if wanted else list(vectors)
    if not kept:
        return [], 0
    width = len(kept[0].vector) // 4
    return [v for v in kept if len(v.vector) == 4 * width], width


# ------------------------------------------------------------------------------------------------ fusion


def fused(lexical: Sequence[tuple[int, float]], others: Sequence[int], dense: Dense, *,
          weight: float) -> list[tuple[int, float]]:
    """The fused z-score (module docs) of each lexical candidate ``(id, score)``, in their order, then
    of each id of ``others`` that is not one of them (a dense candidate), in its order. ``dense``: the
    dense search of the same scope (its count is the population; a candidate without a cosine — not
    embedded yet — counts as average). At ``weight`` 0 the dense candidates are left out."""
    population = max(dense.count, len(lexical), MIN_POPULATION)
    total = sum(score for _, score in lexical)
    mean = total / population
    spread = math.sqrt(max(sum(score ** 2 for _, score in lexical) / population - mean * mean, 0.0))

    def z_lexical(score: float) -> float:
        return (score - mean) / spread if spread > 0 else 0.0

    seen = {ident for ident, _ in lexical}
    cosines = dense.cosines([*seen, *(ident for ident in others if ident not in seen)])

    def z_dense(ident: int) -> float:
        cosine = cosines.get(ident)
        if cosine is None or dense.std <= 1e-9:
            return 0.0
        return max((cosine - dense.mean) / dense.std, DENSE_Z_FLOOR)

    scored = [(ident, (1 - weight) * z_lexical(score) + weight * z_dense(ident)) for ident, score in lexical]
    if dense.count >= MIN_POPULATION and weight > 0:  # at 0 they would all score alike: by words only
        scored += [(ident, (1 - weight) * z_lexical(0.0) + weight * z_dense(ident)) for ident in others
                   if ident not in seen]
    return scored


#: what names something exactly in a question: a token of three or more characters holding a digit ("QX-48213",
#: "8443", "v2.3"), words joined by "_" or written in camelCase, a path or dotted name ("src/app.py"), a span in
#: backticks, a capitalised word after a lower-case one ("the trip to Riga"; the sentence's first word is not one),
#: or an acronym ("FIV", "AWS", "IBAN")
_EXACT = re.compile(r"(?<![\w./:-])(?=[\w./:-]*\d)[\w./:-]{3,}|[A-Za-z0-9]_[A-Za-z0-9]|\b[a-z]+[A-Z]|"
                    r"[A-Za-z0-9]/[A-Za-z0-9]|\b\w{2,}\.[a-z]{1,4}\b|`[^`\n]+`|(?<=[a-z,;:] )[A-Z][a-z]|"
                    r"\b[A-Z]{2,}\b")


def names_exactly(question: str) -> bool:
    """Whether ``question`` names something a word search finds better than a model's sense of meaning
    (:data:`_EXACT`). Chinese has no such mark: a Chinese question is never taken to name something exactly.
    Only the part the model reads is looked at (:data:`~.embedding.EMBED_CHARS`): a pasted megabyte costs
    what its first lines do."""
    return _EXACT.search(question, 0, embedding.EMBED_CHARS) is not None

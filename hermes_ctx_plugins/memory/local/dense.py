"""ctx-local's dense recall: vectors made in the background, a per-owner cache of them, and their
fusion with BM25.

**Writing.** Rows are stored exactly as without an embedder (the write-behind queue's drain does not
wait for a model); :class:`Backfill`, a thread of its own at the lowest CPU priority, then embeds
them in small batches: first the records this process's writer just stored (it hands over their
keys), then, newest first, every memory without a vector of the current model — what a crash, an
older version or a model change left. Nothing is lost if the process dies mid-way: a memory without a
vector is simply embedded later. Each vector is stored under its memory's id, the owner copied from
that memory's row by the store, so one user's turn never lands in another's index; forgetting a
memory deletes its vector in the same transaction.

**Reading.** :class:`DenseIndex` keeps, per store and owner (namespace, user), a float32 matrix of
the owner's vectors, caught up before each search with the vectors stored since (by position) and
rebuilt when the store's vector generation says one was deleted or replaced. The question is
embedded (the last few are remembered: a search tool call often asks what the prefetch did),
compared with every vector the caller's chat scope sees, and the best become candidates beside BM25's.

**Fusion** (:func:`fuse`): each candidate's BM25 and cosine are z-scored over the owner's visible
memories — BM25 is 0 for every memory that is not a lexical candidate, cosine is known for all — and
mixed ``(1 - w) * z(bm25) + w * z(cosine)``. A memory holding a rare word of the question (an id, an
error code, a name) has a BM25 far above the owner's mean, and a cosine's z counts down to
:data:`DENSE_Z_FLOOR` only, so it stays first whatever the model thinks of it; a paraphrase without a
shared word gets in on its cosine alone. Why z-scores and this ``w``: the
README's ctx-local section (measured on the tune half of ``benchmarks/recall_eval``).
"""

from __future__ import annotations

import collections
import logging
import math
import os
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from ...storage import Hit, LocalStoreError, Memory, MemoryBackend
from . import embedding
from .embedding import Embedder

if TYPE_CHECKING:
    from .embedding import Matrix

log = logging.getLogger("hermes_ctx_plugins.memory.local")

#: memories embedded per batch: about 30 ms each here, so a batch holds a core for a few tenths of a second
BATCH = 8
#: keys taken from the writer per look-up
KEYS_PER_LOOKUP = 256
#: keys handed over by the writer and not embedded yet, at most
MAX_PENDING_KEYS = 100_000
#: vectors the cache keeps over all owners (1.5 KB each at 384 dimensions); the owners used longest
#: ago are dropped first
MAX_CACHED = 100_000
#: the lowest z-score a cosine counts for in :func:`fuse`: an embedding unlike the question's is weak
#: evidence against a memory (an identifier, a code, a name mean little to the model), while a rare word
#: of the question in it is strong evidence for it — so the dense side can lift a memory far, but sink it
#: only this far
DENSE_Z_FLOOR = -1.0
#: questions whose vectors are remembered
QUERIES_REMEMBERED = 64


# ------------------------------------------------------------------------------------------------ writing


class Backfill:
    """The thread that embeds stored memories lacking a vector of the embedder's model."""

    def __init__(self, embedder: Embedder, open_store: Callable[[], MemoryBackend], *, batch: int = BATCH,
                 backoff: float = 1.0) -> None:
        self.embedder = embedder
        self.open_store = open_store
        self.batch = batch
        self.backoff = backoff
        # bounded: a writer storing faster than the model embeds drops the oldest keys, whose memories the
        # backlog walk of a later start embeds (they still lack a vector)
        self._keys: collections.deque[str] = collections.deque(maxlen=MAX_PENDING_KEYS)
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._idle = threading.Event()
        self._mutex = threading.Lock()
        self._done = False
        #: the backlog's walk, newest first: the memories below this id are next (None: from the top)
        self._below: int | None = None
        self._thread: threading.Thread | None = None
        #: memories embedded by this process, and those that could not be (stored as b"")
        self.embedded = 0
        self.skipped = 0

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="ctx-local-embed", daemon=True)
        self._thread.start()

    def stored(self, keys: Sequence[str]) -> None:
        """The writer stored records under ``keys``: embed them next (called on the writer's thread)."""
        with self._mutex:
            if self._done:  # stopped for good (a backend without vectors, a close): nothing waits for it
                return
            self._keys.extend(keys)
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
        box: list[MemoryBackend | None] = [None]
        try:
            self._work(box)
        finally:
            with self._mutex:
                self._done = True
                self._idle.set()
            if box[0] is not None:
                box[0].close()

    def _work(self, box: list[MemoryBackend | None]) -> None:
        """The loop: ``box`` holds the thread's connection (its caller closes it)."""
        backlog = True
        while not self._stop.is_set():
            self._wake.clear()  # a wake-up from here on is seen by the wait below
            try:
                store = box[0] = box[0] or self.open_store()
                if not store.dense:  # this backend keeps no vectors: nothing to do, ever
                    return
                if self._step(store, backlog):
                    continue
            except LocalStoreError as exc:
                log.warning("ctx-local: embedding waits for the memory database (%s)", exc)
                if exc.reason != "locked" and box[0] is not None:
                    box[0].close()
                    box[0] = None
                self._stop.wait(self.backoff)
                continue
            except Exception:  # the embedder's, or a store refusing a vector: later, not in a loop
                log.exception("ctx-local: embedding failed; retrying in %.0f s", 60 * self.backoff)
                self._stop.wait(60 * self.backoff)
                continue
            backlog = False
            with self._mutex:
                if not self._keys:
                    self._idle.set()
            self._wake.wait()

    def _step(self, store: MemoryBackend, backlog: bool) -> bool:
        """Embed one piece of work: the keys the writer handed over, else (``backlog``) the next memories
        lacking a vector below :attr:`_below` (moved past them first, so a memory that keeps failing is
        not tried forever). False when there was nothing to do."""
        model = self.embedder.model_id
        with self._mutex:
            keys = [self._keys.popleft() for _ in range(min(len(self._keys), KEYS_PER_LOOKUP))]
        if keys:
            while (rows := store.unembedded(model, keys=keys, limit=self.batch)) and not self._stop.is_set():
                self._embed(store, rows)
            return True
        rows = store.unembedded(model, below=self._below, limit=self.batch) if backlog else []
        if not rows:
            return False
        self._below = min(memory.id for memory in rows)
        self._embed(store, rows)
        return True

    def _embed(self, store: MemoryBackend, rows: Sequence[Memory]) -> None:
        """Embed ``rows`` and store their vectors; a batch the embedder refuses is tried one memory at
        a time, and a memory it refuses alone is stored without one (``b""``: never tried again)."""
        model = self.embedder.model_id
        try:
            vectors = [embedding.to_bytes(v) for v in self.embedder.passages([m.text for m in rows])]
        except Exception:
            if len(rows) > 1:
                for memory in rows:
                    self._embed(store, [memory])
                return
            log.warning("ctx-local: memory #%d could not be embedded; it is recalled by its words only",
                        rows[0].id, exc_info=True)
            vectors = [b""]
            self.skipped += 1
        else:
            self.embedded += len(rows)
        store.put_vectors(model, [(memory.id, vector) for memory, vector in zip(rows, vectors, strict=True)])


# ------------------------------------------------------------------------------------------------ reading


@dataclass
class _Owned:
    """One owner's cached vectors: row ``i`` of ``matrix`` is memory ``ids[i]``."""

    model: str
    generation: int
    seq: int = 0
    size: int = 0
    ids: Any = None
    matrix: Any = None
    #: each row's chat, as a number (``chats`` maps chat ids to them), and whether it is seen in every chat
    chat_codes: Any = None
    everywhere: Any = None
    chats: dict[str, int] = field(default_factory=dict)

    def add(self, np: Any, seqs: Sequence[int], ids: Sequence[int], matrix: Matrix, chats: Sequence[str],
            everywhere: Sequence[bool]) -> None:
        """Append rows, growing the arrays by doubling (a search adds a turn or two: no full copy each time)."""
        count = len(ids)
        needed = self.size + count
        if self.matrix is None or needed > len(self.ids):
            capacity = max(needed, 2 * (0 if self.ids is None else len(self.ids)), 64)
            grown = (np.zeros(capacity, np.int64), np.zeros((capacity, matrix.shape[1]), np.float32),
                     np.zeros(capacity, np.int32), np.zeros(capacity, bool))
            if self.matrix is not None:
                for new, old in zip(grown, (self.ids, self.matrix, self.chat_codes, self.everywhere), strict=True):
                    new[:self.size] = old[:self.size]
            self.ids, self.matrix, self.chat_codes, self.everywhere = grown
        end = self.size + count
        self.ids[self.size:end] = ids
        self.matrix[self.size:end] = matrix
        self.chat_codes[self.size:end] = [self.chats.setdefault(chat, len(self.chats)) for chat in chats]
        self.everywhere[self.size:end] = everywhere
        self.size, self.seq = end, max(self.seq, *seqs)


@dataclass(frozen=True)
class Dense:
    """What one dense search found in the caller's scope."""

    #: the best memory ids, best first, with their cosines
    best: list[tuple[int, float]]
    #: the cosine of every memory the scope sees that has a vector
    cosine: dict[int, float]
    #: over those memories: how many, and their cosines' mean and standard deviation
    count: int
    mean: float
    std: float


class DenseIndex:
    """Dense search over one store's vectors, cached per owner (thread-safe)."""

    def __init__(self, embedder: Embedder, *, max_cached: int = MAX_CACHED) -> None:
        self.embedder = embedder
        self.max_cached = max_cached
        self._np = embedding.numpy()
        self._lock = threading.Lock()
        self._owners: collections.OrderedDict[tuple[str, str], _Owned] = collections.OrderedDict()
        self._queries: collections.OrderedDict[str, Matrix] = collections.OrderedDict()

    def query_vector(self, question: str) -> Matrix:
        with self._lock:
            vector = self._queries.get(question)
            if vector is not None:
                self._queries.move_to_end(question)
                return vector
        vector = self.embedder.query(question)
        with self._lock:
            self._queries[question] = vector
            while len(self._queries) > QUERIES_REMEMBERED:
                self._queries.popitem(last=False)
        return vector

    def search(self, store: MemoryBackend, target: Matrix, *, namespace: str, user_id: str, chat_id: str,
               share_across_chats: bool, limit: int) -> Dense:
        """The owner's memories the chat scope sees, compared with the question's vector ``target``.

        :raises LocalStoreError: the store cannot be read.
        """
        np = self._np
        with self._lock:
            owned = self._caught_up(store, namespace, user_id)
            size = owned.size
            if not size:
                return Dense([], {}, 0, 0.0, 0.0)
            # numpy's own loop, not BLAS: OpenBLAS's threads, spinning after a product, took the cores
            # the model's threads embed the next question on (a prefetch's p50 doubled); ~1 ms per 12,500 rows
            scores = np.einsum("ij,j->i", owned.matrix[:size], target)
            ids = owned.ids[:size]
            if not share_across_chats:
                code = owned.chats.get(chat_id, -1)
                seen = owned.everywhere[:size] | (owned.chat_codes[:size] == code)
                scores, ids = scores[seen], ids[seen]
        count = len(ids)
        if not count:
            return Dense([], {}, 0, 0.0, 0.0)
        top = np.argpartition(-scores, limit - 1)[:limit] if count > limit else np.arange(count)
        top = top[np.argsort(-scores[top], kind="stable")]
        cosine = dict(zip(ids.tolist(), scores.tolist(), strict=True))
        best = [(int(ids[i]), float(scores[i])) for i in top]
        return Dense(best, cosine, count, float(scores.mean()), float(scores.std()))

    def _caught_up(self, store: MemoryBackend, namespace: str, user_id: str) -> _Owned:
        """The owner's cache entry with every vector stored so far (under the lock)."""
        np = self._np
        model = self.embedder.model_id
        generation = store.vector_generation()
        key = (namespace, user_id)
        owned = self._owners.get(key)
        if owned is None or owned.generation != generation or owned.model != model:
            owned = self._owners[key] = _Owned(model, generation)
        self._owners.move_to_end(key)
        new = store.vectors(model, namespace=namespace, user_id=user_id, after=owned.seq)
        dims = _dims(model)
        usable = [v for v in new if len(v.vector) == 4 * dims] if dims else new
        if usable:
            width = len(usable[0].vector) // 4
            usable = [v for v in usable if len(v.vector) == 4 * width]
            owned.add(np, [v.seq for v in usable], [v.memory_id for v in usable],
                      embedding.from_bytes([v.vector for v in usable], width), [v.chat_id for v in usable],
                      [v.visibility == "user" for v in usable])
        self._evict()
        return owned

    def _evict(self) -> None:
        total = sum(o.size for o in self._owners.values())
        while total > self.max_cached and len(self._owners) > 1:
            _, dropped = self._owners.popitem(last=False)
            total -= dropped.size


def _dims(model: str) -> int:
    """The dimensions a model id names last (``.../384``), 0 when it names none."""
    tail = model.rpartition("/")[2]
    return int(tail) if tail.isdigit() else 0


# ------------------------------------------------------------------------------------------------ fusion


def fuse(hits: Sequence[Hit], dense: Dense, memories: Sequence[Memory], *, weight: float) -> list[Hit]:
    """BM25 hits and the dense search's best as one candidate list, best first, each with its fused
    z-score (module docs) as a positive relevance (:func:`_positive`). Above the owner's average that
    is 1 + z: the 1 keeps :func:`~.recall.relevant`'s floor (a share of the best) from cutting what a
    z-score near 0 says is still better than most (measured on the tune half: more evidence shown).
    ``memories``: the dense-only candidates, as the store gives them."""
    if not dense.count:
        return list(hits)
    population = max(dense.count, len(hits))
    total = sum(h.relevance for h in hits)
    mean = total / population
    spread = math.sqrt(max(sum(h.relevance ** 2 for h in hits) / population - mean * mean, 0.0))

    def z_lexical(relevance: float) -> float:
        return (relevance - mean) / spread if spread > 0 else 0.0

    def z_dense(memory_id: int) -> float:
        cosine = dense.cosine.get(memory_id)  # none yet: not embedded, counted as average
        if cosine is None or dense.std <= 1e-9:
            return 0.0
        return max((cosine - dense.mean) / dense.std, DENSE_Z_FLOOR)

    scored = [(h, (1 - weight) * z_lexical(h.relevance) + weight * z_dense(h.memory.id)) for h in hits]
    lexical = {h.memory.id for h in hits}
    scored += [(Hit(m, 0.0), (1 - weight) * z_lexical(0.0) + weight * z_dense(m.id))
               for m in memories if m.id not in lexical]
    fused = [replace(hit, relevance=_positive(score)) for hit, score in scored]
    fused.sort(key=lambda h: (-h.relevance, h.memory.id))
    return fused


def _positive(score: float) -> float:
    """A fused z-score as a positive relevance, in the same order: 1 + z above the average, e^z below it
    (in (0, 1]: :func:`~.recall.relevant`'s floor, a share of the best, drops those unless nothing
    better was found — a user with a handful of memories has no meaningful average)."""
    return 1.0 + score if score > 0 else math.exp(max(score, -50.0))

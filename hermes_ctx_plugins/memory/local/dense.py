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
README's ctx-local section (measured on the tune half of ``benchmarks/recall_eval``). The background
thread and the fusion's arithmetic are shared with the archive's hybrid search
(:mod:`hermes_ctx_plugins.dense`); what is ctx-local's own is here.
"""

from __future__ import annotations

import collections
import logging
import math
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from ... import dense as shared
from ... import embedding
from ...dense import BATCH, DENSE_Z_FLOOR, KEYS_PER_LOOKUP, MAX_PENDING_KEYS, QUERIES_REMEMBERED, Dense
from ...embedding import Embedder
from ...storage import Hit, LocalStoreError, Memory, MemoryBackend

if TYPE_CHECKING:
    from ...embedding import Matrix

__all__ = ["BATCH", "DENSE_Z_FLOOR", "KEYS_PER_LOOKUP", "MAX_CACHED", "MAX_PENDING_KEYS", "QUERIES_REMEMBERED",
           "Backfill", "Dense", "DenseIndex", "fuse"]

log = logging.getLogger("hermes_ctx_plugins.memory.local")

#: vectors the cache keeps over all owners (1.5 KB each at 384 dimensions); the owners used longest
#: ago are dropped first
MAX_CACHED = 100_000


# ------------------------------------------------------------------------------------------------ writing


class Backfill(shared.Backfill):
    """The thread that embeds stored memories lacking a vector of the embedder's model
    (:class:`hermes_ctx_plugins.dense.Backfill`), from the memory store ``open_store`` opens."""

    thread_name = "ctx-local-embed"
    outage = (LocalStoreError,)
    log = log
    waiting = "ctx-local: embedding waits for the memory database (%s)"
    failing = "ctx-local: embedding failed; retrying in %.0f s"
    refused = "ctx-local: memory #%d could not be embedded; it is recalled by its words only"

    def text(self, item: Memory) -> str:
        return item.text

    def put(self, store: Any, model: str, rows: Sequence[Memory], vectors: Sequence[bytes]) -> int:
        # each under its memory's id only while that id still holds that memory (its key): SQLite gives the
        # id of the newest memory, once it is forgotten, to the next one stored — another user's, maybe
        stored: int = store.put_vectors(model, [(item.id, vector) for item, vector in zip(rows, vectors, strict=True)],
                                        keys=[item.key for item in rows])
        return stored


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
    #: each memory id's row
    rows: dict[int, int] = field(default_factory=dict)

    def add(self, np: Any, seqs: Sequence[int], ids: Sequence[int], matrix: Matrix, chats: Sequence[str],
            everywhere: Sequence[bool]) -> None:
        """Append rows (:func:`hermes_ctx_plugins.dense.appended`)."""
        codes = [self.chats.setdefault(chat, len(self.chats)) for chat in chats]
        self.rows.update(zip(ids, range(self.size, self.size + len(ids)), strict=True))
        self.ids, self.matrix, self.chat_codes, self.everywhere = shared.appended(
            np, (self.ids, self.matrix, self.chat_codes, self.everywhere), self.size,
            (np.asarray(ids, np.int64), matrix, np.asarray(codes, np.int32), np.asarray(everywhere, bool)))
        self.size, self.seq = self.size + len(ids), max(self.seq, *seqs)


class DenseIndex:
    """Dense search over one store's vectors, cached per owner (thread-safe)."""

    def __init__(self, embedder: Embedder, *, max_cached: int = MAX_CACHED) -> None:
        self.embedder = embedder
        self.max_cached = max_cached
        self._np = embedding.numpy()
        self._lock = threading.Lock()
        self._owners: collections.OrderedDict[tuple[str, str], _Owned] = collections.OrderedDict()
        self._questions = shared.QuestionVectors(embedder)

    def query_vector(self, question: str) -> Matrix:
        return self._questions.vector(question)

    def population(self, store: MemoryBackend, *, namespace: str, user_id: str) -> int:
        """How many vectors the owner has in ``store`` (every chat): none, and a question need not be embedded.
        -1 when the embedder cannot say which vectors are its own before it answers once (a function embedder,
        never called on the caller's thread: the question is embedded on its own, and that tells).

        :raises LocalStoreError: the store cannot be read.
        """
        if not embedding.model_known(self.embedder):
            return -1
        with self._lock:
            return self._caught_up(store, namespace, user_id).size

    def search(self, store: MemoryBackend, target: Matrix, *, namespace: str, user_id: str, chat_id: str,
               share_across_chats: bool, limit: int, caught_up: bool = False) -> Dense:
        """The owner's memories the chat scope sees, compared with the question's vector ``target``.
        ``caught_up``: :meth:`population` just brought the owner's cache up to date (a vector stored since
        waits for the next search), so the store is not asked again.

        :raises LocalStoreError: the store cannot be read.
        """
        np = self._np
        with self._lock:
            owned = self._owners.get((namespace, user_id)) if caught_up else None
            if owned is None or owned.model != self.embedder.model_id:  # not cached (evicted meanwhile): read
                owned = self._caught_up(store, namespace, user_id)
            size = owned.size
            if not size:
                return shared.NOTHING
            # numpy's own loop, not BLAS: OpenBLAS's threads, spinning after a product, took the cores
            # the model's threads embed the next question on (a prefetch's p50 doubled); ~1 ms per 12,500 rows
            scores = np.einsum("ij,j->i", owned.matrix[:size], target)
            ids = owned.ids[:size]
            if not share_across_chats:
                code = owned.chats.get(chat_id, -1)
                seen = owned.everywhere[:size] | (owned.chat_codes[:size] == code)
                scores, ids = scores[seen], ids[seen]
        return shared.ranked(np, scores, ids, limit)

    def vectors(self, *, namespace: str, user_id: str, ids: Sequence[int]) -> dict[int, Matrix]:
        """The cached vectors of those of ``ids`` the owner has (:meth:`search` brought them up to date)."""
        with self._lock:
            owned = self._owners.get((namespace, user_id))
            if owned is None or owned.model != self.embedder.model_id:
                return {}
            return {ident: owned.matrix[row] for ident in ids if (row := owned.rows.get(ident)) is not None}

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
        usable, width = shared.usable(new, model)
        if usable:
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


# ------------------------------------------------------------------------------------------------ fusion


def fuse(hits: Sequence[Hit], dense: Dense, memories: Sequence[Memory], *, weight: float) -> list[Hit]:
    """BM25 hits and the dense search's best as one candidate list, best first, each with its fused
    z-score (module docs) as a positive relevance (:func:`_positive`). Above the owner's average that
    is 1 + z: the 1 keeps :func:`~.recall.relevant`'s floor (a share of the best) from cutting what a
    z-score near 0 says is still better than most (measured on the tune half: more evidence shown).
    ``memories``: the dense-only candidates, as the store gives them."""
    if not dense.count:
        return list(hits)
    scores = shared.fused([(h.memory.id, h.relevance) for h in hits], [m.id for m in memories], dense, weight=weight)
    candidates = {h.memory.id: h for h in hits}
    candidates.update((m.id, Hit(m, 0.0)) for m in memories if m.id not in candidates)
    fused = [replace(candidates[ident], relevance=_positive(score)) for ident, score in scores]
    fused.sort(key=lambda h: (-h.relevance, h.memory.id))
    return fused


def _positive(score: float) -> float:
    """A fused z-score as a positive relevance, in the same order: 1 + z above the average, e^z below it
    (in (0, 1]: :func:`~.recall.relevant`'s floor, a share of the best, drops those unless nothing
    better was found — a user with a handful of memories has no meaningful average)."""
    if not math.isfinite(score):
        return math.exp(-50.0) if score != math.inf else 1.0e9
    return 1.0 + score if score > 0 else math.exp(max(score, -50.0))

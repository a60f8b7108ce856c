"""The archive's hybrid ``ctx_search``: archived messages embedded in the background, a per-scope cache
of their vectors, and the fusion of BM25 with cosine (``ctx_plugins.archive.embedder``; "" = off, and
then nothing here runs and numpy is never imported).

**Writing.** :meth:`Archiver.apply <hermes_ctx_plugins.archive.archiver.Archiver.apply>` records a
compaction as it always did and hands the new message ids to :class:`Backfill` — the thread ctx-local's
dense recall uses too (:class:`hermes_ctx_plugins.dense.Backfill`), at the lowest CPU priority — so a
compaction never waits for the model. It embeds those messages, newest first, then walks the backlog
of every message without a vector of the current model (what a crash, an older version, a model
change or the spool left). A message's text is :func:`~hermes_ctx_plugins.storage.message_text`; the
embedder reads its first :data:`~hermes_ctx_plugins.embedding.EMBED_CHARS` characters, cleaned. The
vector is stored under the message's own id and deleted with it, in the same transaction, by every
path that deletes messages (:class:`~hermes_ctx_plugins.storage.base.ArchiveBackend`).

**Reading.** :class:`ArchiveIndex` keeps, per :class:`~hermes_ctx_plugins.storage.Scope`, a float32
matrix of exactly the vectors the store returns for that scope (the store applies the scope, in the
same SQL as its search), caught up before each search by position and rebuilt when the store's
vector generation says one was deleted or replaced — so a purged or forgotten message can never
come back from the cache. :meth:`Hybrid.search` embeds the question (:func:`hermes_ctx_plugins.dense.asked`:
on the caller's thread but in a forked process), then BM25 searches (:data:`LEXICAL_CANDIDATES`
candidates); the question is compared with every vector of the scope, and both are fused with
:func:`hermes_ctx_plugins.dense.fused` (weight ``dense_weight``). A
message found only by its meaning is fetched through :meth:`ArchiveBackend.get
<hermes_ctx_plugins.storage.base.ArchiveBackend.get>` under the same scope and shown with its first
:data:`SNIPPET_CHARS` characters; it is shown only when its fused score is the scope's average or better.
The question failing to embed (an error, or not within :data:`QUESTION_EMBED_SECONDS`) or the vectors
failing to load leaves the lexical answer, logged, never an error to the model.
"""

from __future__ import annotations

import collections
import dataclasses
import logging
import os
import re
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .. import dense as shared
from .. import embedding
from ..embedding import Embedder
from ..storage import ArchiveBackend, ArchiveError, ArchiveHit, Scope, Stored, message_text
from ..storage.text import printable

if TYPE_CHECKING:
    from ..embedding import Matrix

log = logging.getLogger("hermes_ctx_plugins.archive")

#: the option the embedder is named by (its errors name it)
OPTION = "ctx_plugins.archive.embedder"
#: lexical candidates asked of the store before fusion (a search shows at most 20)
LEXICAL_CANDIDATES = 40
#: the dense side's best, the candidates it adds
DENSE_CANDIDATES = 40
#: how long a search waits for the question's embedding before answering by the words alone
QUESTION_EMBED_SECONDS = 2.0
#: the characters of a message found only by its meaning shown as its snippet
SNIPPET_CHARS = 200
#: vectors the cache keeps over all scopes (1.5 KB each at 384 dimensions); the scopes searched longest
#: ago are dropped first
MAX_CACHED = 100_000
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]+")


class Backfill(shared.Backfill):
    """Embeds archived messages lacking a vector (:class:`hermes_ctx_plugins.dense.Backfill`)."""

    thread_name = "ctx-archive-embed"
    outage = (ArchiveError,)
    log = log
    waiting = "archive: embedding waits for the archive (%s)"
    failing = "archive: embedding failed; retrying in %.0f s"
    refused = "archive: message #%d could not be embedded; ctx_search finds it by its words only"

    def text(self, item: Stored) -> str:
        return message_text(item.message)


@dataclass
class _Seen:
    """One scope's cached vectors: row ``i`` of ``matrix`` is message ``ids[i]``."""

    model: str
    generation: int
    seq: int = 0
    size: int = 0
    ids: Any = None
    matrix: Any = None

    def add(self, np: Any, seqs: Sequence[int], ids: Sequence[int], matrix: Matrix) -> None:
        """Append rows (:func:`hermes_ctx_plugins.dense.appended`)."""
        self.ids, self.matrix = shared.appended(np, (self.ids, self.matrix), self.size,
                                                (np.asarray(ids, np.int64), matrix))
        self.size, self.seq = self.size + len(ids), max(self.seq, *seqs)


def _key(scope: Scope) -> Scope:
    """The cache key of ``scope``: the scope itself, except that every session of one user is one
    scope whichever session asks (the store ignores the session then)."""
    if scope.all_sessions and scope.user_id is not None and not scope.everything:
        return dataclasses.replace(scope, session_id="")
    return scope


class ArchiveIndex:
    """Dense search over one archive's vectors, cached per scope (thread-safe)."""

    def __init__(self, embedder: Embedder, *, max_cached: int = MAX_CACHED) -> None:
        self.embedder = embedder
        self.max_cached = max_cached
        self._np = embedding.numpy(OPTION)
        self._lock = threading.Lock()
        self._scopes: collections.OrderedDict[Scope, _Seen] = collections.OrderedDict()
        self._questions = shared.QuestionVectors(embedder)

    def query_vector(self, question: str) -> Matrix:
        return self._questions.vector(question)

    def search(self, store: ArchiveBackend, target: Matrix, scope: Scope, *, limit: int) -> shared.Dense:
        """The messages ``scope`` sees compared with the question's vector ``target``.

        :raises ArchiveError: the store cannot be read.
        """
        np = self._np
        with self._lock:
            seen = self._caught_up(store, scope)
            if not seen.size:
                return shared.NOTHING
            # numpy's own loop, not BLAS (see memory/local/dense.py: BLAS threads spinning took the cores)
            scores = np.einsum("ij,j->i", seen.matrix[:seen.size], target)
            ids = seen.ids[:seen.size]
        return shared.ranked(np, scores, ids, limit)

    def _caught_up(self, store: ArchiveBackend, scope: Scope) -> _Seen:
        """The scope's cache entry with every vector stored so far (under the lock)."""
        model = self.embedder.model_id
        generation = store.vector_generation()
        key = _key(scope)
        seen = self._scopes.get(key)
        if seen is None or seen.generation != generation or seen.model != model:
            seen = self._scopes[key] = _Seen(model, generation)
        self._scopes.move_to_end(key)
        usable, width = shared.usable(store.vectors(model, scope, after=seen.seq), model)
        if usable:
            matrix = embedding.from_bytes([v.vector for v in usable], width)
            finite = self._np.isfinite(matrix).all(axis=1)  # an embedder's inf or nan would spoil every z-score
            ids = [v.message_id for v, ok in zip(usable, finite.tolist(), strict=True) if ok]
            seen.add(self._np, [v.seq for v in usable], ids, matrix[finite])  # the position moves past them all
        total = sum(s.size for s in self._scopes.values())
        while total > self.max_cached and len(self._scopes) > 1:
            _, dropped = self._scopes.popitem(last=False)
            total -= dropped.size
        return seen


class Hybrid:
    """The archive's dense side: the thread embedding what is archived, the index, the fused search."""

    def __init__(self, embedder: Embedder, open_store: Callable[[], ArchiveBackend], *, weight: float,
                 lexical: int = LEXICAL_CANDIDATES, candidates: int = DENSE_CANDIDATES) -> None:
        self.embedder = embedder
        self.open_store = open_store
        self.weight = weight
        self.lexical = lexical
        self.candidates = candidates
        self.index = ArchiveIndex(embedder)
        self._lock = threading.Lock()
        self._backfill: Backfill | None = None
        self._pid = 0
        self._no_dense_said = False
        #: a compaction went to the spool: once the archive takes compactions again, what it imported
        #: from there is embedded by walking the backlog again
        self._spooled = False
        self._made_in = os.getpid()
        self._questions = shared.QuestionThread("ctx-archive-question")

    def _started(self) -> Backfill:
        """The backfill thread of this process (started on first use: after a fork, anew)."""
        with self._lock:
            if self._backfill is None or self._pid != os.getpid():
                self._pid = os.getpid()
                self._backfill = Backfill(self.embedder, self.open_store)
                self._backfill.start()
            return self._backfill

    def imported(self) -> None:
        """Spooled compactions were imported outside a compaction (a search): walk the backlog for them."""
        self._started().walk_again()

    def recorded(self, ids: Sequence[int], *, imported: bool = False) -> None:
        """A compaction was archived as ``ids`` (``[]``: it went to the spool): embed them next.
        ``imported``: spooled compactions were imported first (maybe another host's): walk the backlog."""
        backfill = self._started()
        if not ids:
            self._spooled = True
            return
        backfill.stored(ids)
        if imported:
            backfill.walk_again()
        if self._spooled:
            self._spooled = False
            backfill.walk_again()

    def flush(self, timeout: float = 5.0) -> bool:
        """Wait until every archived message has its vector (tests, benchmarks); False if not within ``timeout``."""
        return self._started().wait_idle(timeout)

    def close(self) -> None:
        with self._lock:
            backfill, self._backfill = self._backfill, None
        if backfill is not None:  # what it has not embedded yet is embedded at the next start
            backfill.close()
        self._questions.close()

    def search(self, store: ArchiveBackend, text: str, scope: Scope, *, limit: int) -> list[ArchiveHit]:
        """The best ``limit`` messages ``scope`` sees for ``text``, lexical and dense candidates fused.

        :raises ArchiveError: the store cannot be searched (as a lexical search would).
        """
        self._started()  # the backlog of messages archived before an embedder was set
        if self.weight <= 0:  # by words only: the question's vector would weigh nothing
            return store.search(text, scope, limit=max(limit, self.lexical))[:limit]
        # before the words are searched, not beside it (see :func:`hermes_ctx_plugins.dense.asked`)
        asked = shared.asked(self.index.query_vector, text, inline=getattr(self.embedder, "in_process", False),
                             made_in=self._made_in, thread=self._questions, timeout=QUESTION_EMBED_SECONDS)
        hits = store.search(text, scope, limit=max(limit, self.lexical))
        if not store.dense:
            if not self._no_dense_said:
                self._no_dense_said = True
                log.warning("archive: the %s storage backend keeps no embeddings; ctx_search stays lexical",
                            type(store).__name__)
            return hits[:limit]
        try:
            vector = asked.result(0)  # waited for above
            if not self.index._np.isfinite(vector).all():
                raise ValueError("the embedder answered with a vector that is not finite")
        except Exception:  # the embedder's failure or delay: the words alone answer
            asked.cancel()  # not started yet (behind a stuck one): skipped
            log.warning("archive: the ctx_search query was not embedded (an error, or not within %.0f s); "
                        "searched by its words only", QUESTION_EMBED_SECONDS, exc_info=True)
            return hits[:limit]
        try:
            found = self.index.search(store, vector, scope, limit=self.candidates)
        except ArchiveError as exc:
            log.warning("archive: the vectors could not be read (%s); ctx_search answered by words only", exc)
            return hits[:limit]
        if not found.count:  # nothing embedded yet in this scope
            return hits[:limit]
        return self._fused(store, hits, found, scope, limit)

    def _fused(self, store: ArchiveBackend, hits: list[ArchiveHit], found: shared.Dense, scope: Scope,
               limit: int) -> list[ArchiveHit]:
        # a search of short terms only scores nothing: each of its matches holds every term asked
        lexical = [(h.id, h.relevance or 1.0) for h in hits]
        scored = shared.fused(lexical, [ident for ident, _ in found.best], found, weight=self.weight)
        by_id = {h.id: h for h in hits}
        # best first; ties newest first, as a lexical search orders them. A message only the dense side
        # found must be no worse than the scope's average (a fused score of 0 or more) to be shown at all
        order = sorted(((ident, score) for ident, score in scored if ident in by_id or score >= 0),
                       key=lambda item: (-item[1], -item[0]))
        wanted = [ident for ident, _ in order[:2 * limit] if ident not in by_id]
        if wanted:  # fetched under the same scope: the cache can never show what the scope does not see
            by_id.update((s.id, _hit(s)) for s in store.get(wanted, scope))
        return [by_id[ident] for ident, _ in order if ident in by_id][:limit]


def _hit(stored: Stored) -> ArchiveHit:
    """A message found only by its meaning, as a search result: its first characters as the snippet."""
    text = " ".join(_CONTROL.sub(" ", printable(message_text(stored.message)[:4 * SNIPPET_CHARS])).split())
    snippet = text[:SNIPPET_CHARS] + ("…" if len(text) > SNIPPET_CHARS else "")
    return ArchiveHit(stored.id, stored.session_id, stored.compaction_id, stored.role, stored.created, snippet,
                      stored.namespace)

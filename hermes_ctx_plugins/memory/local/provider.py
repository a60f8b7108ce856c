"""``ctx-local``: the provider hermes talks to — the write path, prefetch and the tools (its options:
:mod:`.options`).

Over 500 lines because the write path, recall and forgetting share the queue, the store and their lock.
"""

from __future__ import annotations

import json
import logging
import os
import threading
import time
import uuid
from collections.abc import Callable, Collection
from concurrent.futures import Future
from pathlib import Path
from typing import Any

from ... import dense as shared_dense
from ... import embedding, scope
from ...config import Config, hermes_home
from ...events import Forgotten, SessionInfo, Turn
from ...isolation import StatusEvent
from ...safety.judge import policy_for
from ...safety.policy import Decision, Policy
from ...storage import (
    Hit,
    LocalStoreError,
    Memory,
    MemoryBackend,
    Record,
    backend_name,
    json_text,
    memory_exists,
    on_server,
    open_memory,
)
from ...storage import memory_problem as store_problem
from ...storage import text as query
from ...storage.queue import QueueClosedError
from ...tokens import get_counter
from ..base import MemoryProvider
from . import arguments, dense, recall
from .in_context import InContext
from .options import NAME, LocalOptions, resolve_path
from .queue import WriteBehindQueue, held_records, turn_key, with_verdict
from .schemas import PARAMETERS, TOOL_SCHEMAS

log = logging.getLogger("hermes_ctx_plugins.memory.local")

#: BM25 candidates read per query before ranking
CANDIDATES = 40
#: how long a tool's write waits for another process's write lock. A writer's transaction is short —
#: the write-behind queue's batches are bounded by ``queue.BATCH_BYTES`` — so this outlasts a drain many
#: times over; only a long maintenance job (a compaction of a big file) holds the lock longer.
TOOL_BUSY_SECONDS = 10.0
#: how long the write-behind writer waits for another process's write lock before it counts as a
#: failure (logged, retried after a back-off). Each writer holds the lock for one batch, at most a few
#: hundred milliseconds, so six processes draining at once wait up to a second or so for their turn;
#: a shutdown waiting out a lock that is never released waits this much past its drain timeout.
WRITER_BUSY_SECONDS = 2.0
#: in a forked process, how long a prefetch or search waits for the question's embedding (made on a
#: thread of its own there, see ``LocalProvider._ask``) before it recalls by the words alone
QUESTION_EMBED_SECONDS = 2.0
_REPORT_EVERY = 300.0


_SYSTEM_NOTE = (
    "Long-term memory (ctx-local): excerpts of earlier conversations that match the user's message are "
    "added to it under 'Recalled from earlier conversations', each with its #id and date. Use "
    "ctx_memory_search to look further back, ctx_memory_remember to keep a durable fact, and "
    "ctx_memory_forget to delete a memory the user wants gone."
)


class LocalProvider(MemoryProvider):
    """Embedded long-term memory in one SQLite file: no server, no account, no network."""

    name = NAME
    description = "long-term memory in a local SQLite file (ranked recall, durable write-behind queue)"
    options_class = LocalOptions

    def __init__(self, options: Any = None, **kwargs: Any) -> None:
        super().__init__(options, **kwargs)
        self.path = resolve_path(self.options.path, Path(self.hermes_home or hermes_home()))
        self.queue_dir = self.path.with_name(f"{self.path.name}.queue")
        embedder = embedding.load(self.options.embedder, threads=self.options.embed_threads)  # checked either way
        # dense_weight 0: recall by words only, so nothing is embedded (no question, no stored memory)
        self._embedder = embedder if self.options.dense_weight > 0 else None
        self._dense = dense.DenseIndex(self._embedder) if self._embedder is not None else None
        self._questions = shared_dense.QuestionThread("ctx-local-question")
        self._pid_made = os.getpid()
        self._backfill: dense.Backfill | None = None
        self._no_dense_said = False
        model = self.config.model.name or None  # the tokenizer loads at the first recall (0.1-0.9 s), not here:
        self._line_tokens = recall.LineCounts(make=lambda: get_counter(model).count_text)  # `check` builds one
        self._in_context = InContext()  # what of each conversation its prompt still holds: not recalled
        self._asked: tuple[dense.DenseIndex, str, int, Future[Any]] | None = None  # the last question's vector: _ask
        self._lock = threading.Lock()
        self._reader: MemoryBackend | None = None
        self._tool_writer: MemoryBackend | None = None
        self._queue: WriteBehindQueue | None = None
        self._pid = os.getpid()
        self._session = SessionInfo(session_id="")
        self._reported: dict[str, float] = {}
        self._policy: tuple[Config, Policy] | None = None  # (config, its recall policy): _recall_policy

    # -- resources, opened on first use and again after shutdown ---------------------------------
    def _open(self, busy_timeout: float) -> MemoryBackend:
        """A connection to the memory store (``ctx_plugins.storage.backend`` says which kind)."""
        return open_memory(self.config, self.path, busy_timeout=busy_timeout)

    def _store(self) -> MemoryBackend:
        with self._lock:
            if self._reader is None:
                # Recall must be quick: wait little for a lock (WAL readers rarely need one at all).
                self._reader = self._open(0.25)
                if self._embedder is not None:
                    # a cache per connection: a reopened location may be another database (the file
                    # moved aside and made anew), whose ids and vector generations restart
                    self._dense = dense.DenseIndex(self._embedder)
            return self._reader

    def _tool_store(self) -> MemoryBackend:
        """The connection the tools write with: one of its own, so a write waiting for another
        process's lock (up to :data:`TOOL_BUSY_SECONDS`) never holds up recall on the reader's."""
        with self._lock:
            if self._tool_writer is not None:
                return self._tool_writer
        opened = self._open(TOOL_BUSY_SECONDS)  # may wait that long itself
        with self._lock:
            current = self._tool_writer
            if current is None:
                self._tool_writer = opened
                return opened
        opened.close()  # another thread opened one meanwhile
        return current

    def _writer(self) -> WriteBehindQueue:
        with self._lock:
            if self._queue is None or self._pid != os.getpid():
                self._pid = os.getpid()
                if self._embedder is not None:  # before the queue, which hands it what it stores
                    self._backfill = dense.Backfill(self._embedder, lambda: self._open(WRITER_BUSY_SECONDS))
                    self._backfill.start()
                queue = self._new_queue()
                try:
                    queue.start()  # kept once started: one that could not start (a folder this user may not write)
                except OSError as exc:  # nothing said is kept: the user is told, not only the log (a newcomer walk:
                    self._cannot_keep(exc)  # a path under a file, every turn lost, doctor and the turn saying nothing)
                    raise
                self._queue = queue  # said "the write queue is closed" at every later turn, not why
            return self._queue

    def _cannot_keep(self, exc: OSError) -> None:
        """Tell the user (hermes' warning line, once per five minutes per error) that the turns are not being kept."""
        message = (f"{NAME} cannot keep what is said: its write queue {self.queue_dir} cannot be created ({exc}); "
                   "no turn is stored until it can (check ctx_plugins.options.ctx-local.path)")
        now = time.monotonic()
        if now - self._reported.get(message, -_REPORT_EVERY) < _REPORT_EVERY:
            return
        self._reported[message] = now
        callback = self.status_callback
        if callback is not None:
            try:
                callback(StatusEvent(kind="unavailable", source=NAME, message=message))
            except Exception:  # a broken status display must not break memory
                log.exception("status callback failed for %r", message)

    def _new_queue(self) -> WriteBehindQueue:
        options = self.options
        return WriteBehindQueue(
            self.queue_dir, lambda: self._open(WRITER_BUSY_SECONDS), batch_size=options.batch_size,
            max_retries=options.max_retries, backoff=options.retry_backoff_seconds, fsync=options.fsync,
            max_text_chars=options.max_turn_chars, on_stored=self._backfill.stored if self._backfill else None)

    def _unusable(self, exc: LocalStoreError, *, tool_writer: bool = False) -> None:
        """Log a database failure (once per five minutes per message) and, unless the file was only
        locked, reopen the connection that met it — the reader's, or the ``tool_writer``'s — next
        time (the file may be replaced or repaired meanwhile)."""
        if exc.reason != "locked":
            with self._lock:
                if tool_writer:
                    store, self._tool_writer = self._tool_writer, None
                else:
                    store, self._reader = self._reader, None
            if store is not None:
                store.close()
        now = time.monotonic()
        if now - self._reported.get(str(exc), -_REPORT_EVERY) >= _REPORT_EVERY:
            self._reported[str(exc)] = now
            effect = ("a memory tool's write failed and the model was told so" if tool_writer
                      else "recall is off until it works again; the turn goes on without it")
            log.error("%s (%s)", exc, effect)

    def flush(self, timeout: float = 5.0) -> bool:
        """Wait until every queued turn is stored and, with an embedder, every stored memory has its
        vector; False if that took longer than ``timeout``."""
        deadline = time.monotonic() + timeout
        with self._lock:
            queue, backfill = self._queue, self._backfill
        if queue is not None and not queue.flush(timeout):
            return False
        return backfill is None or backfill.wait_idle(max(deadline - time.monotonic(), 0.0))

    def forget_user(self, user_id: str, *, namespaces: Collection[str] | None = None) -> list[Forgotten]:
        """Delete every memory of ``user_id`` (compared exactly) in ``namespaces`` (None: all) from
        the database file and its index, with the user's quarantined and queued records.

        In order: this process's queue is drained and continued in a fresh segment file (the old
        one, which still holds stored records, is deleted); what stopped processes left queued is
        stored; then the user's rows, index entries and quarantined records are deleted in one
        transaction, and the file is compacted (index optimised, VACUUM with ``secure_delete``,
        WAL checkpointed and truncated), so the deleted text is gone from the file, not just
        unreachable.

        What it cannot clear: a segment file another *running* process holds (it appends to it and
        alone knows how far it is stored), and a record of the user this process accepts while
        forgetting. Their records of the user are stored once drained, and the file keeps them
        until that process stops. The returned entry's ``error`` names such files, so run it again
        once those processes have stopped (or the user's sessions have ended).
        """
        backend, server = backend_name(self.config, "memory"), on_server(self.config)
        # a server's rows are named by the path, which is no file there (a review: the report named a local file)
        label = f"{NAME} {f'{backend}, the rows of {self.path}' if server else self.path}"
        left = [Forgotten(store=f"{NAME} {self.path}", removed=None, error=(
            "a SQLite file from before the switch to the server is still there and holds memories this forget did "
            "not reach: `hermes-ctx storage migrate --from sqlite --to " + backend + "` then forget again, or delete "
            "it"))] if server and self.path.is_file() else []
        if not memory_exists(self.config, self.path) and not self.queue_dir.is_dir():
            return [Forgotten(store=label, removed=0, detail="nothing stored yet"), *left]
        try:
            memories, quarantined, compacted, late_dropped = self._forget(user_id, namespaces)
            held = held_records(self.queue_dir, user_id, namespaces)
        except Exception as exc:  # a report, never a raise: the caller goes on with other stores
            return [Forgotten(store=label, removed=None, error=str(exc) or type(exc).__name__), *left]
        where = "every namespace" if namespaces is None else f"namespace(s) {', '.join(map(repr, sorted(namespaces)))}"
        who = scope.describe("", user_id)
        detail = f"{memories} memories and {quarantined} quarantined records of {who} in {where}"
        errors = [] if compacted is None else [
            f"deleted, but the file could not be compacted now ({compacted}); their text can linger in free pages "
            "and the search index until it is (`hermes-ctx memory forget` compacts it)"]
        files = ", ".join(f"{path} ({count})" for path, count in held.items())
        if held and late_dropped:  # a fleet pass: on a worker that never stops, forget never reported success
            detail += f"; {sum(held.values())} more in queue files running processes write ({files}): the store " \
                      "drops them when they arrive (it remembers the forget)"
        elif held:
            errors.append(f"queue files still being written to hold records of this user: {files}; those may "
                          "still be stored — forget again once the processes writing them have stopped")
        return [Forgotten(store=label, removed=memories + quarantined, detail=detail, error="; ".join(errors)), *left]

    def _forget(self, user_id: str, namespaces: Collection[str] | None) -> tuple[int, int, str | None, bool]:
        """:meth:`forget_user`'s work: (memories, quarantined records, why compaction failed or None, whether the
        store drops the user's late writes)."""
        with self._lock:
            own = self._queue if self._pid == os.getpid() else None
        store = self._open(5.0)
        try:
            if own is not None:  # not in time: held_records reports what stays in its file
                own.restart_segment(store, self.options.drain_timeout_seconds)
            self._new_queue().replay_dead(store)
            memories, quarantined = store.forget_user(user_id, namespaces)
            try:
                store.compact()
            except LocalStoreError as exc:
                return memories, quarantined, str(exc), store.drops_late_writes
            return memories, quarantined, None, store.drops_late_writes
        finally:
            store.close()

    # -- lifecycle --------------------------------------------------------------------------------
    def is_available(self) -> bool:
        return True  # stdlib sqlite3 only; a broken file is reported when it is used, turns stay queued

    def availability(self) -> tuple[bool, str]:
        """What ``hermes-ctx doctor`` says of it (hermes asks :meth:`is_available`, which stays True: turns queue
        while the store is broken): a store file that cannot be read is unavailable, and why (it said "available"
        of a file overwritten with garbage; a README audit)."""
        problem = store_problem(self.config, self.path)
        return problem is None, problem or ""

    def on_session_start(self, session: SessionInfo) -> None:
        self._session = session
        if session.extra.get("reason") == "compression":  # hermes compacted the conversation, before this turn's recall
            self._in_context.compacted(session)
        else:  # a new agent (given any history, or none: a Bridge rebuilding one), /undo, /new, /resume: learnt anew
            self._in_context.forget(session)
        self._writer()  # replays what a crashed process left, in the background

    def system_prompt_block(self, *, session: SessionInfo | None = None) -> str:
        return _SYSTEM_NOTE

    def sync_turn(self, turn: Turn) -> None:
        if not (turn.user_text.strip() or turn.assistant_text.strip()):
            return
        session = turn.session  # put() redacts the texts and cuts them to max_turn_chars before the queue file
        record = Record(key=turn_key(turn), kind="turn", namespace=session.deployment, user_id=session.user_id,
                        chat_id=session.chat_id, session_id=session.session_id, user_text=turn.user_text,
                        assistant_text=turn.assistant_text, source=f"turn:{session.platform or 'cli'}",
                        created_at=time.time())
        try:
            self._writer().put(record)
        except QueueClosedError:  # the last agent's shutdown closed it between _writer() and put(): a new one
            self._writer().put(record)
        self._in_context.update(session, turn.messages)  # after: what recall leaves out never costs a turn

    def prefetch(self, query_text: str, *, session: SessionInfo) -> str:
        terms = query.query_terms(query_text)
        if not terms:
            return ""
        if (ranked := self._searched(query_text, terms, session, CANDIDATES)) is None:
            return ""
        ranked = recall.distinct(ranked, terms, limit=self.options.max_results, policy=self._recall_policy())
        # what is left is judged by itself: the prompt holding the best matches (this conversation's own turns, say)
        # is when the others are what the block is for
        options = self.options
        chosen = recall.relevant(ranked, options.max_results, terms)  # found once: each reads the memories' words
        return recall.block(ranked, terms, budget_tokens=options.budget_tokens, max_results=options.max_results,
                            count=self._line_tokens, more=self._like_best(query_text, chosen, terms, session),
                            policy=self._recall_policy(), chosen=chosen,
                            order=self._newest_first(query_text, terms, session))

    def _newest_first(self, question: str, terms: list[str],
                      session: SessionInfo) -> Callable[[list[recall.Ranked]], list[recall.Ranked]] | None:
        """How the block's memories are put in order after they are chosen (:func:`recall.newest_first`): with the
        built-in model's vectors, of two that say the same thing, the newer first. ``None`` (relevance alone) with
        no such model, or for a question naming something exactly (what holds it stays first)."""
        index = self._dense
        same = getattr(index.embedder, "same_meaning", None) if index is not None else None
        if index is None or same is None or shared_dense.names_exactly(question):
            return None

        def order(chosen: list[recall.Ranked]) -> list[recall.Ranked]:
            vectors = index.vectors(namespace=session.deployment, user_id=session.user_id,
                                    ids=[item.memory.id for item in chosen])
            return recall.newest_first(chosen, vectors, terms, same=same)

        return order

    def _recall_policy(self) -> Policy:
        """``policy_for(self.config).for_recall``, kept for that config (policy_for's cache hashes all of it)."""
        if self._policy is None or self._policy[0] is not self.config:
            self._policy = (self.config, policy_for(self.config).for_recall)
        return self._policy[1]

    def _like_best(self, question: str, chosen: list[recall.Ranked], terms: list[str],
                   session: SessionInfo) -> list[recall.Ranked]:
        """Memories like the best match, to spend the budget the relevant ones (``chosen``: :func:`.recall.relevant`)
        leave (relevance feedback, see :mod:`.recall`): a second search, in the same scope, made only when the
        relevant memories cannot fill the block."""
        options = self.options
        if not chosen or recall.fills(chosen, budget_tokens=options.budget_tokens, max_results=options.max_results):
            return []
        extra = recall.feedback_terms(recall.leading(chosen, terms).memory, terms)
        # no more candidates than the block can still show (those already chosen may come back)
        # lexical only: the dense candidates of the question were in the first search already
        return (self._searched(question, extra, session, options.max_results, hybrid=False) or []) if extra else []

    def _searched(self, question: str, terms: list[str], session: SessionInfo, limit: int, *,
                  hybrid: bool = True) -> list[recall.Ranked] | None:
        """:meth:`_search` without what the conversation's prompt already holds (:mod:`.in_context`). When that took
        out more than half of a full list of candidates, the search is made once more, reading four times as many
        more (at most :data:`CANDIDATES` * 4): a long conversation on one topic would otherwise leave the block
        empty (a few left out leave enough: the block shows fewer memories than a search reads)."""
        def unheld(found: list[recall.Ranked]) -> list[recall.Ranked]:
            return [item for item in found if not self._in_context.holds(session, item.memory, question)]

        found = self._search(question, terms, session, limit, hybrid=hybrid)
        if found is None:
            return None
        kept = unheld(found)
        if 2 * len(kept) >= len(found) or len(found) < limit:
            return kept
        found = self._search(question, terms, session, limit + min(4 * (len(found) - len(kept)), 4 * CANDIDATES),
                             hybrid=hybrid)
        return None if found is None else unheld(found)

    def _search(self, question: str, terms: list[str], session: SessionInfo,
                limit: int = CANDIDATES, *, hybrid: bool = True) -> list[recall.Ranked] | None:
        options = self.options
        weight, asked, known = options.dense_weight, None, 0
        try:
            store = self._store()
            index = self._dense
            if hybrid and index is not None:
                if shared_dense.names_exactly(question):  # the words asked for must win there
                    weight = min(weight, options.exact_dense_weight)
                # 0: by words only (the model's candidates would all score alike, and fill the block); a backend
                # keeping no vectors, or an owner without any yet, has nothing to compare the question with
                if weight > 0 and self._dense_on(store):
                    known = index.population(store, namespace=session.deployment, user_id=session.user_id)
                    asked = self._ask(index, question) if known else None
            hits = store.search(terms, namespace=session.deployment, user_id=session.user_id,
                                chat_id=session.chat_id, share_across_chats=options.share_across_chats, limit=limit)
            if asked is not None and index is not None:
                hits = self._hybrid(store, index, asked, hits, session, limit, weight, caught_up=known > 0)
        except LocalStoreError as exc:
            self._unusable(exc)
            return None
        ranked = recall.rank(hits, chat_id=session.chat_id, share_across_chats=options.share_across_chats,
                             half_life_days=options.recency_half_life_days, recency_weight=options.recency_weight)
        # the question's own candidates (not relevance feedback's) are read for a date it asks about
        return recall.anchored(question, terms, ranked) if hybrid else ranked

    def _ask(self, index: dense.DenseIndex, question: str) -> Future[Any]:
        """``question``'s vector (:func:`shared_dense.asked`: the built-in model on the caller's thread but in a
        forked process; a function embedder on a thread of its own, waited for a bounded time). The last question's
        is kept: a search made again for it (:meth:`_searched`) does not embed it twice -- unless embedding it failed
        (an error, a timeout, a busy embedder): asked again (a retry), it is embedded again."""
        last, pid = self._asked, os.getpid()
        if last is not None and last[0] is index and last[1] == question and last[2] == pid and not _failed(last[3]):
            return last[3]
        asked = shared_dense.asked(index.query_vector, question, inline=getattr(index.embedder, "in_process", False),
                                   made_in=self._pid_made, thread=self._questions, timeout=QUESTION_EMBED_SECONDS)
        self._asked = (index, question, pid, asked)  # a forked process embeds its own
        return asked

    def _dense_on(self, store: MemoryBackend) -> bool:
        """Whether ``store`` keeps embeddings; says once when it does not (recall stays lexical)."""
        if not store.dense and not self._no_dense_said:
            self._no_dense_said = True
            log.warning("ctx-local: the %s storage backend keeps no embeddings; recall stays lexical (the embedder "
                        "option is ignored)", type(store).__name__)
        return store.dense

    def _hybrid(self, store: MemoryBackend, index: dense.DenseIndex, asked: Future[Any], hits: list[Hit],
                session: SessionInfo, limit: int, weight: float, *, caught_up: bool = False) -> list[Hit]:
        """BM25's ``hits`` fused with the best of the owner's memories by embedding (:func:`.dense.fuse`);
        the lexical hits alone when the question (``asked``: its embedding under way) cannot be
        embedded within :data:`QUESTION_EMBED_SECONDS`."""
        try:
            vector = asked.result(0)  # waited for in _search
        except Exception:  # the embedder's failure or delay, not the store's: recall goes on by words
            asked.cancel()  # not started yet (behind a stuck one): skipped
            log.warning("ctx-local: the question was not embedded (an error, or not within %.0f s); recalled by "
                        "its words only", QUESTION_EMBED_SECONDS, exc_info=True)
            return hits
        found = index.search(store, vector, namespace=session.deployment, user_id=session.user_id,
                             chat_id=session.chat_id, share_across_chats=self.options.share_across_chats, limit=limit,
                             caught_up=caught_up)
        lexical = {hit.memory.id for hit in hits}
        others = [memory for memory in store.get([memory_id for memory_id, _ in found.best if memory_id not in lexical])
                  if self._sees(memory, session)]
        return dense.fuse(hits, found, others, weight=weight)

    def _sees(self, memory: Memory, session: SessionInfo) -> bool:
        """Whether ``session``'s scope sees ``memory`` (the dense path's ids are checked again against
        the rows they read: an id is a position in one database, and the owner is what counts)."""
        chat_seen = self.options.share_across_chats or memory.visibility == "user" or memory.chat_id == session.chat_id
        return memory.namespace == session.deployment and memory.user_id == session.user_id and chat_seen

    def shutdown(self) -> None:
        with self._lock:
            queue, self._queue = self._queue, None
            backfill, self._backfill = self._backfill, None
            stores = (self._reader, self._tool_writer)
            self._reader = self._tool_writer = None
        if queue is not None and not queue.close(self.options.drain_timeout_seconds):
            log.warning("ctx-local: %d memories are still queued in %s; they are stored at the next start",
                        queue.pending, self.queue_dir)
        if backfill is not None:  # what it has not embedded yet is embedded at the next start
            backfill.close()
        self._questions.close()
        for store in stores:
            if store is not None:
                store.close()

    # -- tools ------------------------------------------------------------------------------------
    def get_tool_schemas(self) -> list[dict[str, Any]]:
        return TOOL_SCHEMAS

    def handle_tool_call(self, name: str, args: dict[str, Any], *, session: SessionInfo | None = None) -> str:
        """Run one of the tools. Whatever the model passes, this answers and never raises for it: a
        bad argument (checked against the tool's schema) and a database that refuses the call come
        back as ``{"success": false, "error": ...}`` naming the problem — the model's mistake is not
        the provider failing."""
        session = session or self._session
        handlers = {"ctx_memory_search": self._tool_search, "ctx_memory_remember": self._tool_remember,
                    "ctx_memory_forget": self._tool_forget}
        handler = handlers.get(name) if isinstance(name, str) else None
        if handler is None:
            return _error(f"{self.name} has no tool named {arguments.describe(name)}; it has {', '.join(handlers)}")
        try:
            parsed = arguments.parse(args, PARAMETERS[name])
        except arguments.ArgumentError as exc:
            return _error(str(exc))
        return handler(parsed, session)

    def _tool_search(self, args: dict[str, Any], session: SessionInfo) -> str:
        text, limit = args["query"], args["limit"]
        terms = query.query_terms(text)
        if not terms:
            return json_text({"results": [], "note": "the query has no searchable words (stop words, one-letter "
                                                     f"words and words over {query.MAX_TERM_CHARS} characters "
                                                     "are not searched)"})
        ranked = self._search(text, terms, session)
        if ranked is None:
            return _error(f"the memory database {self.path} cannot be read right now (see the log)")
        results = [{"id": r.memory.id, "kind": r.memory.kind, "provenance": recall.provenance(r.memory),
                    "text": recall.shown_text(r.memory, terms, 600, r.verdict, self._recall_policy())}
                   for r in ranked[:limit]]
        return json_text({"results": results})

    def _tool_remember(self, args: dict[str, Any], session: SessionInfo) -> str:
        fact, visibility = args["fact"].strip(), args["scope"]
        decision = policy_for(self.config).screen(fact)
        if decision.withheld():
            findings, why = decision.findings, Decision("block", decision.findings).explain()
            return _error("refused: the text looks like " + ", ".join(sorted({f.kind for f in findings}))
                          + f" ({why}); memory is shown to future sessions, so it must not carry instructions "
                            "or secrets")
        record = Record(
            key=f"fact:{uuid.uuid4().hex}", kind="fact", namespace=session.deployment, user_id=session.user_id,
            chat_id=session.chat_id, session_id=session.session_id, fact_text=fact, visibility=visibility,
            source="remember", created_at=time.time())
        try:
            # a text the judge cleared keeps that verdict: recall, which asks no judge, shows it (as the file's does)
            memory = self._tool_store().add(with_verdict(record.redacted(), cleared=fact if decision.judged else ""))
        except LocalStoreError as exc:
            return self._write_failed(exc, "the fact was not saved")
        except Exception as exc:  # the record's own (is_store_failure is False), as the queue takes it: a value
            # the store refuses (PostgreSQL: an id past a btree entry's ~2.7 kB) fails this fact, never the provider
            # (raised, it counted against ctx-local for every user of the process, and suspended it)
            detail = " ".join(str(exc).split())[:300] or type(exc).__name__
            log.warning("ctx-local: a fact was refused by the memory store: %s", detail, exc_info=True)
            return _error(f"the fact was not saved: the memory store refuses it ({detail})")
        if self._embedder is not None:  # the embedding thread starts with the writer: a fact saved before any
            self._writer()  # turn, or after shutdown(), gets its vector too
        with self._lock:
            backfill = self._backfill
        if backfill is not None:
            backfill.stored([record.key])
        return json_text({"success": True, "id": memory.id, "scope": visibility})

    def _tool_forget(self, args: dict[str, Any], session: SessionInfo) -> str:
        ids = sorted(set(args["ids"]))
        chat = None if self.options.share_across_chats else session.chat_id
        try:
            forgotten = self._tool_store().forget(ids, namespace=session.deployment, user_id=session.user_id,
                                                  chat_id=chat)
        except LocalStoreError as exc:
            return self._write_failed(exc, "nothing was deleted")
        missing = sorted(set(ids) - set(forgotten))
        result: dict[str, Any] = {"success": bool(forgotten), "forgotten": forgotten}
        if missing:
            result["not_found"] = missing  # absent, or another scope's: the same answer either way
        return json_text(result)

    def _write_failed(self, exc: LocalStoreError, outcome: str) -> str:
        """A tool's answer when the database refused its write: ``outcome``, and why."""
        self._unusable(exc, tool_writer=True)
        if exc.reason == "locked":
            return _error(f"{outcome}: another process kept the memory database {self.path} locked for more than "
                          f"{TOOL_BUSY_SECONDS:g} s (a long maintenance job?); try again in a minute")
        return _error(f"{outcome}: {exc}")


def _failed(asked: Future[Any]) -> bool:
    """Whether the embedding ``asked`` for ended without a vector (one still under way has not failed yet)."""
    return asked.done() and (asked.cancelled() or asked.exception(0) is not None)


def _error(message: str) -> str:
    return json.dumps({"success": False, "error": message})

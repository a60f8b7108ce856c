"""``ctx-local``: the provider hermes talks to — options, the write path, prefetch and the tools."""

from __future__ import annotations

import hashlib
import json
import logging
import os
import threading
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...config import hermes_home
from ...errors import ConfigError
from ...events import SessionInfo, Turn
from ...tokens import get_counter
from .. import scan
from ..base import MemoryProvider
from . import query, recall
from .queue import WriteBehindQueue
from .store import LocalStore, LocalStoreError, Record

log = logging.getLogger("hermes_ctx_plugins.memory.local")

NAME = "ctx-local"
DEFAULT_PATH = "ctx-local/memory.db"
#: BM25 candidates read per query before ranking
CANDIDATES = 40
#: a remembered fact longer than this is a document, not a fact
MAX_FACT_CHARS = 2_000
_REPORT_EVERY = 300.0


def _bounded(default: Any, **bounds: float) -> Any:
    return field(default=default, metadata=bounds)


@dataclass(frozen=True)
class LocalOptions:
    """``ctx_plugins.options.ctx-local``."""

    #: the SQLite file; relative paths are under ``$HERMES_HOME``, ``~`` and ``$HERMES_HOME`` expand
    path: str = DEFAULT_PATH
    #: the most tokens one prefetch adds to the user message
    budget_tokens: int = _bounded(800, lo=50, hi=32_000)
    #: the most memories one prefetch shows
    max_results: int = _bounded(8, lo=1, hi=50)
    #: a memory this many days old counts half as recent as a new one
    recency_half_life_days: float = _bounded(30.0, above=0)
    #: how much recency moves the ranking (0 = not at all, 1 = an old memory can drop to nothing)
    recency_weight: float = _bounded(0.3, lo=0, hi=1)
    #: False: a user's memories stay in the chat they were made in (facts saved "for the user"
    #: excepted); True: every chat of the user sees them all
    share_across_chats: bool = False
    #: attempts for a queued record that fails by itself, before it is quarantined
    max_retries: int = _bounded(5, lo=1, hi=100)
    #: first retry pause; doubles per attempt
    retry_backoff_seconds: float = _bounded(0.05, above=0, hi=60)
    #: how long shutdown waits for the queue to drain (what is left is stored at the next start)
    drain_timeout_seconds: float = _bounded(5.0, lo=0, hi=600)
    #: records per write transaction
    batch_size: int = _bounded(1024, lo=1, hi=10_000)
    #: force every queued turn to disk (survives power loss, costs a disk flush per turn)
    fsync: bool = False
    #: longer user or assistant texts are cut to this many characters (and say so)
    max_turn_chars: int = _bounded(200_000, lo=1_000, hi=50_000_000)
    #: ``package.module:function`` mapping texts to vectors, to re-rank candidates; "" = off
    embedder: str = ""


def resolve_path(raw: str, home: Path) -> Path:
    """The database path an option value names; raises ConfigError for one that cannot work."""
    where = f"ctx_plugins.options.{NAME}.path"
    text = raw.strip()
    if not text or "\x00" in text:
        raise ConfigError(f"{raw!r} is not a file path", path=where, value=raw,
                          expected=f"a file path such as {DEFAULT_PATH!r} (relative to $HERMES_HOME)")
    text = text.replace("${HERMES_HOME}", str(home)).replace("$HERMES_HOME", str(home))
    path = Path(text).expanduser()
    path = path if path.is_absolute() else home / path
    if path.is_dir():
        raise ConfigError(f"{str(path)!r} is a directory", path=where, value=raw,
                          expected=f"a file path, e.g. {str(path / 'memory.db')!r}")
    return path


def turn_key(turn: Turn) -> str:
    """The idempotency key of a turn: the same turn synced (or replayed) twice is stored once."""
    digest = hashlib.sha256()
    for part in (turn.session.session_id, str(turn.turn_number), turn.user_text, turn.assistant_text):
        digest.update(part.encode("utf-8", "surrogatepass"))
        digest.update(b"\x00")
    return "turn:" + digest.hexdigest()[:32]


def clean(text: str, limit: int) -> str:
    """``text`` as valid UTF-8 (a lone surrogate becomes ``?``), cut to ``limit`` characters with a note."""
    text = text.encode("utf-8", "replace").decode("utf-8")
    if len(text) > limit:
        text = f"{text[:limit]}\n[… {len(text) - limit:,} more characters not stored]"
    return text


TOOL_SCHEMAS: list[dict[str, Any]] = [
    {"type": "function", "function": {
        "name": "ctx_memory_search",
        "description": ("Search long-term memory: earlier conversations with this user and facts saved with "
                        "ctx_memory_remember. Use it when the user refers to something from a past session that "
                        "is not in the recalled context. Returns excerpts with their ids and dates."),
        "parameters": {"type": "object", "properties": {
            "query": {"type": "string", "description": "Keywords or a question."},
            "limit": {"type": "integer", "minimum": 1, "maximum": 20, "description": "Results (default 5)."}},
            "required": ["query"]}}},
    {"type": "function", "function": {
        "name": "ctx_memory_remember",
        "description": ("Save one durable fact to long-term memory (a preference, a decision, a name, a "
                        "setting) so future sessions recall it. One short self-contained sentence; no secrets."),
        "parameters": {"type": "object", "properties": {
            "fact": {"type": "string", "description": f"The fact, at most {MAX_FACT_CHARS} characters."},
            "scope": {"type": "string", "enum": ["chat", "user"],
                      "description": "'chat' (default): recalled in this chat only; 'user': in all of the "
                                     "user's chats."}},
            "required": ["fact"]}}},
    {"type": "function", "function": {
        "name": "ctx_memory_forget",
        "description": ("Delete memories by id (the #numbers shown in recalled context or search results), "
                        "for example when the user asks you to forget something or a memory is wrong."),
        "parameters": {"type": "object", "properties": {
            "ids": {"type": "array", "items": {"type": "integer"}, "minItems": 1}},
            "required": ["ids"]}}},
]
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
        self._embed = recall.load_embedder(self.options.embedder) if self.options.embedder else None
        self._counter = get_counter(self.config.model.name or None)
        self._lock = threading.Lock()
        self._reader: LocalStore | None = None
        self._queue: WriteBehindQueue | None = None
        self._pid = os.getpid()
        self._session = SessionInfo(session_id="")
        self._reported: dict[str, float] = {}

    # -- resources, opened on first use and again after shutdown ---------------------------------
    def _store(self) -> LocalStore:
        with self._lock:
            if self._reader is None:
                # Recall must be quick: wait little for a lock (WAL readers rarely need one at all).
                self._reader = LocalStore(self.path, busy_timeout=0.25)
            return self._reader

    def _writer(self) -> WriteBehindQueue:
        with self._lock:
            if self._queue is None or self._pid != os.getpid():
                options = self.options
                self._pid = os.getpid()
                self._queue = WriteBehindQueue(
                    self.queue_dir, lambda: LocalStore(self.path, busy_timeout=1.0), batch_size=options.batch_size,
                    max_retries=options.max_retries, backoff=options.retry_backoff_seconds, fsync=options.fsync)
                self._queue.start()
            return self._queue

    def _unusable(self, exc: LocalStoreError) -> None:
        """Log a database failure (once per five minutes per message) and reopen next time."""
        with self._lock:
            reader, self._reader = self._reader, None
        if reader is not None:
            reader.close()
        now = time.monotonic()
        if now - self._reported.get(str(exc), -_REPORT_EVERY) >= _REPORT_EVERY:
            self._reported[str(exc)] = now
            log.error("%s (recall is off until then; the turn goes on without it)", exc)

    def flush(self, timeout: float = 10.0) -> bool:
        """Wait until every queued turn is stored; False if that took longer than ``timeout``."""
        with self._lock:
            queue = self._queue
        return True if queue is None else queue.flush(timeout)

    # -- lifecycle --------------------------------------------------------------------------------
    def is_available(self) -> bool:
        return True  # stdlib sqlite3 only; a broken file is reported when it is used, turns stay queued

    def on_session_start(self, session: SessionInfo) -> None:
        self._session = session
        self._writer()  # replays what a crashed process left, in the background

    def system_prompt_block(self, *, session: SessionInfo | None = None) -> str:
        return _SYSTEM_NOTE

    def sync_turn(self, turn: Turn) -> None:
        if not (turn.user_text.strip() or turn.assistant_text.strip()):
            return
        session = turn.session
        limit = self.options.max_turn_chars
        self._writer().put(Record(
            key=turn_key(turn), kind="turn", user_id=session.user_id, chat_id=session.chat_id,
            session_id=session.session_id, user_text=clean(turn.user_text, limit),
            assistant_text=clean(turn.assistant_text, limit), source=f"turn:{session.platform or 'cli'}",
            created_at=time.time()))

    def prefetch(self, query_text: str, *, session: SessionInfo) -> str:
        terms = query.query_terms(query_text)
        if not terms:
            return ""
        ranked = self._search(query_text, terms, session)
        if ranked is None:
            return ""
        return recall.block(ranked, terms, budget_tokens=self.options.budget_tokens,
                            max_results=self.options.max_results, count=self._counter.count_text)

    def _search(self, question: str, terms: list[str], session: SessionInfo) -> list[recall.Ranked] | None:
        options = self.options
        try:
            hits = self._store().search(terms, user_id=session.user_id, chat_id=session.chat_id,
                                        share_across_chats=options.share_across_chats, limit=CANDIDATES)
        except LocalStoreError as exc:
            self._unusable(exc)
            return None
        ranked = recall.rank(hits, chat_id=session.chat_id, share_across_chats=options.share_across_chats,
                             half_life_days=options.recency_half_life_days, recency_weight=options.recency_weight)
        return recall.rerank(question, ranked, self._embed) if self._embed is not None else ranked

    def shutdown(self) -> None:
        with self._lock:
            queue, self._queue = self._queue, None
            reader, self._reader = self._reader, None
        if queue is not None and not queue.close(self.options.drain_timeout_seconds):
            log.warning("ctx-local: %d memories are still queued in %s; they are stored at the next start",
                        queue.pending, self.queue_dir)
        if reader is not None:
            reader.close()

    # -- tools ------------------------------------------------------------------------------------
    def get_tool_schemas(self) -> list[dict[str, Any]]:
        return TOOL_SCHEMAS

    def handle_tool_call(self, name: str, args: dict[str, Any], *, session: SessionInfo | None = None) -> str:
        session = session or self._session
        handlers = {"ctx_memory_search": self._tool_search, "ctx_memory_remember": self._tool_remember,
                    "ctx_memory_forget": self._tool_forget}
        handler = handlers.get(name)
        if handler is None:
            return _error(f"{self.name} has no tool named {name!r}; it has {', '.join(handlers)}")
        if not isinstance(args, dict):
            return _error(f"arguments must be an object, got {type(args).__name__}")
        try:
            return handler(args, session)
        except LocalStoreError as exc:
            self._unusable(exc)
            return _error(str(exc))

    def _tool_search(self, args: dict[str, Any], session: SessionInfo) -> str:
        text, limit = args.get("query"), args.get("limit", 5)
        if not isinstance(text, str) or not text.strip():
            return _error(f"'query' must be non-empty text, got {text!r:.60}")
        if not isinstance(limit, int) or isinstance(limit, bool) or not 1 <= limit <= 20:
            return _error(f"'limit' must be a whole number from 1 to 20, got {limit!r:.60}")
        terms = query.query_terms(text)
        if not terms:
            return json.dumps({"results": [], "note": "the query has no searchable words (only stop words)"})
        ranked = self._search(text, terms, session)
        if ranked is None:
            return _error(f"the memory database {self.path} cannot be read right now (see the log)")
        results = [{"id": r.memory.id, "kind": r.memory.kind, "provenance": recall.provenance(r.memory),
                    "text": recall.shown_text(r.memory, terms, 600)} for r in ranked[:limit]]
        return json.dumps({"results": results}, ensure_ascii=False)

    def _tool_remember(self, args: dict[str, Any], session: SessionInfo) -> str:
        fact, visibility = args.get("fact"), args.get("scope", "chat")
        if not isinstance(fact, str) or not fact.strip():
            return _error(f"'fact' must be non-empty text, got {fact!r:.60}")
        if len(fact) > MAX_FACT_CHARS:
            return _error(f"'fact' has {len(fact):,} characters; at most {MAX_FACT_CHARS:,} (one fact, not a document)")
        if visibility not in ("chat", "user"):
            return _error(f"'scope' must be 'chat' or 'user', got {visibility!r:.60}")
        findings = scan.scan(fact)
        if findings:
            return _error("refused: the text looks like " + ", ".join(sorted({f.kind for f in findings}))
                          + "; memory is shown to future sessions, so it must not carry instructions or secrets")
        memory = self._store().add(Record(
            key=f"fact:{uuid.uuid4().hex}", kind="fact", user_id=session.user_id, chat_id=session.chat_id,
            session_id=session.session_id, fact_text=clean(fact.strip(), MAX_FACT_CHARS), visibility=visibility,
            source="remember", created_at=time.time()).redacted())
        return json.dumps({"success": True, "id": memory.id, "scope": visibility})

    def _tool_forget(self, args: dict[str, Any], session: SessionInfo) -> str:
        ids = args.get("ids")
        if isinstance(ids, int) and not isinstance(ids, bool):
            ids = [ids]
        if (not isinstance(ids, list) or not ids
                or not all(isinstance(i, int) and not isinstance(i, bool) for i in ids)):
            return _error(f"'ids' must be a non-empty list of memory ids (whole numbers), got {ids!r:.60}")
        chat = None if self.options.share_across_chats else session.chat_id
        forgotten = self._store().forget(ids, user_id=session.user_id, chat_id=chat)
        missing = sorted(set(ids) - set(forgotten))
        result: dict[str, Any] = {"success": bool(forgotten), "forgotten": forgotten}
        if missing:
            result["not_found"] = missing  # absent, or another scope's: the same answer either way
        return json.dumps(result)


def _error(message: str) -> str:
    return json.dumps({"success": False, "error": message})

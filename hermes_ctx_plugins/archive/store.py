"""The archive: every message a compaction removed, verbatim (secrets redacted), in SQLite.

One file (WAL, so readers never wait for the writer and several hermes processes can share it).
Each compaction is a row in ``compactions``; each removed message a row in ``messages`` with its
session, user, order, role, tool-call pairing and the compaction that removed it. An FTS5 index
with the trigram tokenizer makes any substring of three characters or more searchable — exact
identifiers (a SHA prefix, a path fragment) and Chinese alike — ranked by BM25.

If the database cannot be written (locked past the timeout, corrupt, disk full), the removed
messages go to a JSON-lines spool next to it (appended and fsynced) and are imported at the next
successful write: a compaction never loses what it removed.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import sqlite3
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import HermesCtxError
from ..events import Message
from ..memory.scan import redact_secrets
from . import query as fts_query

log = logging.getLogger("hermes_ctx_plugins.archive")

_SCHEMA = """
CREATE TABLE IF NOT EXISTS compactions (
    id INTEGER PRIMARY KEY,
    session_id TEXT NOT NULL,
    user_id TEXT NOT NULL,
    strategy TEXT NOT NULL,
    created REAL NOT NULL,
    removed INTEGER NOT NULL,
    tokens_before INTEGER NOT NULL,
    tokens_after INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS messages (
    id INTEGER PRIMARY KEY,
    compaction_id INTEGER NOT NULL REFERENCES compactions(id) ON DELETE CASCADE,
    session_id TEXT NOT NULL,
    user_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    position INTEGER NOT NULL,
    role TEXT NOT NULL,
    tool_call_id TEXT NOT NULL DEFAULT '',
    call_ids TEXT NOT NULL DEFAULT '',
    text TEXT NOT NULL,
    message TEXT NOT NULL,
    created REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS messages_session ON messages(session_id, seq);
CREATE INDEX IF NOT EXISTS messages_user ON messages(user_id);
CREATE INDEX IF NOT EXISTS compactions_created ON compactions(created);
CREATE VIRTUAL TABLE IF NOT EXISTS messages_fts USING fts5(
    text, content='messages', content_rowid='id', tokenize='trigram');
CREATE TRIGGER IF NOT EXISTS messages_ai AFTER INSERT ON messages BEGIN
    INSERT INTO messages_fts(rowid, text) VALUES (new.id, new.text);
END;
CREATE TRIGGER IF NOT EXISTS messages_ad AFTER DELETE ON messages BEGIN
    INSERT INTO messages_fts(messages_fts, rowid, text) VALUES ('delete', old.id, old.text);
END;
"""


class ArchiveError(HermesCtxError):
    """The archive cannot be used; the message names the file and what went wrong."""


@dataclass(frozen=True)
class Scope:
    """Whose archive a search or an expansion may see."""

    session_id: str
    #: ``None`` = any user of the session (the command line only)
    user_id: str | None = ""
    #: every session of ``user_id`` instead of just ``session_id`` (needs a user id)
    all_sessions: bool = False
    #: the whole archive: for its owner at the command line, never for a model
    everything: bool = False


@dataclass(frozen=True)
class Hit:
    id: int
    session_id: str
    compaction_id: int
    role: str
    created: float
    snippet: str


@dataclass(frozen=True)
class Stored:
    """One archived message as it was (secrets redacted)."""

    id: int
    session_id: str
    user_id: str
    compaction_id: int
    seq: int
    role: str
    message: Message


def message_text(message: Message) -> str:
    """What a message says, as searchable text: content, tool calls (name and arguments)."""
    parts = []
    content = message.get("content")
    if isinstance(content, str):
        parts.append(content)
    elif isinstance(content, list):
        parts += [p["text"] for p in content if isinstance(p, dict) and isinstance(p.get("text"), str)]
    for call in message.get("tool_calls") or ():
        function = call.get("function") if isinstance(call, dict) else None
        if isinstance(function, dict):
            parts.append(f"{function.get('name', '')}({function.get('arguments', '')})")
    return "\n".join(parts)


def _call_ids(message: Message) -> str:
    ids = [c.get("id") for c in message.get("tool_calls") or () if isinstance(c, dict)]
    return " ".join(i for i in ids if isinstance(i, str))


def _redacted(message: Message) -> Message:
    """A JSON-safe copy of ``message`` with secrets redacted from every string in it."""

    def walk(value: Any) -> Any:
        if isinstance(value, str):
            return redact_secrets(value)
        if isinstance(value, dict):
            return {str(k): walk(v) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return [walk(v) for v in value]
        if value is None or isinstance(value, (int, float, bool)):
            return value
        return str(value)

    return walk(message)  # type: ignore[no-any-return]


class ArchiveStore:
    """One archive file; safe to share between threads (one connection behind a lock)."""

    def __init__(self, path: Path, *, retention_days: float = 30.0, max_megabytes: float = 256.0,
                 timeout: float = 5.0) -> None:
        self.path = Path(path)
        self.spool = self.path.with_name(self.path.name + ".spool.jsonl")
        self.retention_days = retention_days
        self.max_megabytes = max_megabytes
        self._timeout = timeout
        self._lock = threading.RLock()
        self._db: sqlite3.Connection | None = None

    # -- connection ---------------------------------------------------------------------------
    def _connect(self) -> sqlite3.Connection:
        if self._db is not None:
            return self._db
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            db = sqlite3.connect(self.path, timeout=self._timeout, check_same_thread=False,
                                 isolation_level=None)
        except (OSError, sqlite3.Error) as exc:
            raise ArchiveError(f"cannot open the archive {self.path}: {exc}") from exc
        try:
            db.execute(f"PRAGMA busy_timeout = {int(self._timeout * 1000)}")
            if db.execute("PRAGMA auto_vacuum").fetchone()[0] == 0 and not self._has_tables(db):
                db.execute("PRAGMA auto_vacuum = INCREMENTAL")  # only effective before the first table
            db.execute("PRAGMA journal_mode = WAL")
            db.execute("PRAGMA foreign_keys = ON")
            db.executescript(_SCHEMA)
        except sqlite3.Error as exc:
            db.close()
            raise ArchiveError(f"the archive {self.path} is not usable ({exc}); move it away to start a new "
                               "one, or repair it with `sqlite3 <file> .recover`") from exc
        self._db = db
        return db

    @staticmethod
    def _has_tables(db: sqlite3.Connection) -> bool:
        return bool(db.execute("SELECT count(*) FROM sqlite_master WHERE type = 'table'").fetchone()[0] > 0)

    @contextlib.contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            db = self._connect()
            try:
                db.execute("BEGIN IMMEDIATE")
                yield db
                db.execute("COMMIT")
            except BaseException:
                with contextlib.suppress(sqlite3.Error):
                    db.execute("ROLLBACK")
                raise

    def close(self) -> None:
        with self._lock:
            if self._db is not None:
                self._db.close()
                self._db = None

    # -- writing ------------------------------------------------------------------------------
    def record(self, *, session_id: str, user_id: str, strategy: str, removed: Sequence[tuple[int, Message]],
               tokens_before: int = 0, tokens_after: int = 0) -> list[int]:
        """Archive one compaction's removed messages (``(position, message)``); returns their ids.

        Never raises: when the database cannot take them, they are spooled to a file instead
        (and ``[]`` is returned) so nothing is lost.
        """
        entry = {"session_id": session_id, "user_id": user_id, "strategy": strategy,
                 "created": time.time(), "tokens_before": tokens_before, "tokens_after": tokens_after,
                 "removed": [[position, _redacted(message)] for position, message in removed]}
        try:
            self._import_spool()
            return self._insert(entry)
        except (ArchiveError, sqlite3.Error, OSError) as exc:
            log.error("could not archive %d removed messages in %s (%s); kept in %s until it works again",
                      len(removed), self.path, exc, self.spool)
            self._spool(entry)
            return []

    def _insert(self, entry: dict[str, Any]) -> list[int]:
        with self._transaction() as db:
            cursor = db.execute(
                "INSERT INTO compactions (session_id, user_id, strategy, created, removed, tokens_before, "
                "tokens_after) VALUES (?, ?, ?, ?, ?, ?, ?)",
                (entry["session_id"], entry["user_id"], entry["strategy"], entry["created"],
                 len(entry["removed"]), entry["tokens_before"], entry["tokens_after"]))
            compaction = cursor.lastrowid
            seq = db.execute("SELECT coalesce(max(seq), 0) FROM messages WHERE session_id = ?",
                             (entry["session_id"],)).fetchone()[0]
            ids = []
            for position, message in entry["removed"]:
                seq += 1
                cursor = db.execute(
                    "INSERT INTO messages (compaction_id, session_id, user_id, seq, position, role, tool_call_id, "
                    "call_ids, text, message, created) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (compaction, entry["session_id"], entry["user_id"], seq, position,
                     str(message.get("role") or ""), str(message.get("tool_call_id") or ""),
                     _call_ids(message), message_text(message),
                     json.dumps(message, ensure_ascii=False), entry["created"]))
                ids.append(int(cursor.lastrowid or 0))
        self._enforce_limits()
        return ids

    def _spool(self, entry: dict[str, Any]) -> None:
        try:
            self.spool.parent.mkdir(parents=True, exist_ok=True)
            with open(self.spool, "a", encoding="utf-8") as handle:
                handle.write(json.dumps(entry, ensure_ascii=False) + "\n")
                handle.flush()
                os.fsync(handle.fileno())
        except OSError as exc:
            log.critical("the removed messages could be neither archived nor spooled to %s (%s): they are lost "
                         "from the archive", self.spool, exc)

    def _import_spool(self) -> None:
        if not self.spool.exists():
            return
        with self._lock:
            working = self.spool.with_suffix(".importing")
            if not working.exists():
                os.replace(self.spool, working)
            lines = working.read_text(encoding="utf-8").splitlines()
            for line in lines:
                try:
                    entry = json.loads(line)
                except ValueError:  # a torn last line of a process killed mid-append
                    log.warning("skipping an unreadable line in %s", working)
                    continue
                self._insert(entry)
            working.unlink()
            log.info("imported %d spooled compactions into %s", len(lines), self.path)

    # -- limits -------------------------------------------------------------------------------
    def _enforce_limits(self) -> None:
        purged = 0
        if self.retention_days:
            purged += self.purge(older_than_days=self.retention_days)
        if self.max_megabytes:
            while self.size_bytes() > self.max_megabytes * 1_000_000:
                with self._transaction() as db:
                    # never the newest: what was just archived stays, even alone over the bound
                    oldest = db.execute("SELECT id FROM compactions WHERE id < (SELECT max(id) FROM compactions) "
                                        "ORDER BY created, id LIMIT 1").fetchone()
                    if oldest is None:
                        break
                    db.execute("DELETE FROM messages WHERE compaction_id = ?", oldest)
                    db.execute("DELETE FROM compactions WHERE id = ?", oldest)
                purged += 1
                self._vacuum()
        if purged:
            log.info("archive %s: purged %d old compactions (retention %g days, bound %g MB)",
                     self.path, purged, self.retention_days, self.max_megabytes)

    def _vacuum(self) -> None:
        with self._lock:
            db = self._connect()
            db.execute("PRAGMA incremental_vacuum")
            db.execute("PRAGMA wal_checkpoint(TRUNCATE)")

    def size_bytes(self) -> int:
        with self._lock:
            db = self._connect()
            pages = db.execute("PRAGMA page_count").fetchone()[0] - db.execute("PRAGMA freelist_count").fetchone()[0]
            return int(pages * db.execute("PRAGMA page_size").fetchone()[0])

    def purge(self, *, session_id: str | None = None, user_id: str | None = None,
              older_than_days: float | None = None, everything: bool = False) -> int:
        """Delete compactions (and their messages) matching all given conditions; returns how many."""
        where: list[str] = []
        args: list[Any] = []
        if session_id is not None:
            where.append("session_id = ?")
            args.append(session_id)
        if user_id is not None:
            where.append("user_id = ?")
            args.append(user_id)
        if older_than_days is not None:
            where.append("created < ?")
            args.append(time.time() - older_than_days * 86400)
        if not where and not everything:
            raise ArchiveError("purge needs a session, a user, an age or everything=True")
        condition = " AND ".join(where) or "1"
        with self._transaction() as db:
            ids = [row[0] for row in db.execute(f"SELECT id FROM compactions WHERE {condition}", args)]
            for chunk in range(0, len(ids), 500):
                marks = ",".join("?" * len(ids[chunk:chunk + 500]))
                db.execute(f"DELETE FROM messages WHERE compaction_id IN ({marks})", ids[chunk:chunk + 500])
                db.execute(f"DELETE FROM compactions WHERE id IN ({marks})", ids[chunk:chunk + 500])
        if ids:
            self._vacuum()
        return len(ids)

    # -- reading ------------------------------------------------------------------------------
    @staticmethod
    def _scope_sql(scope: Scope, alias: str = "m") -> tuple[str, list[str]]:
        if scope.everything:
            return "1", []
        if scope.all_sessions and scope.user_id:
            return f"{alias}.user_id = ?", [scope.user_id]
        if scope.user_id is None:
            return f"{alias}.session_id = ?", [scope.session_id]
        # Rows archived before the host learnt the session's user carry an empty user id; they
        # belong to this session all the same (a session is one conversation).
        return f"{alias}.session_id = ? AND {alias}.user_id IN (?, '')", [scope.session_id, scope.user_id]

    def search(self, text: str, scope: Scope, *, limit: int = 5) -> list[Hit]:
        """The best matches for ``text`` (BM25 over any 3+ character substring), newest first on ties."""
        match, likes = fts_query.build(text)
        if not match and not likes:
            return []
        where, args = self._scope_sql(scope)
        with self._lock:
            db = self._connect()
            if match:
                rows = db.execute(
                    "SELECT m.id, m.session_id, m.compaction_id, m.role, m.created, "
                    "snippet(messages_fts, 0, '«', '»', '…', 48) FROM messages_fts JOIN messages m "
                    f"ON m.id = messages_fts.rowid WHERE messages_fts MATCH ? AND {where} "
                    "ORDER BY bm25(messages_fts), m.id DESC LIMIT ?", [match, *args, limit]).fetchall()
            else:  # only terms too short for trigrams (two Chinese characters, say)
                conditions = " AND ".join("m.text LIKE ? ESCAPE '\\'" for _ in likes)
                rows = db.execute(
                    "SELECT m.id, m.session_id, m.compaction_id, m.role, m.created, substr(m.text, 1, 160) "
                    f"FROM messages m WHERE {conditions} AND {where} ORDER BY m.id DESC LIMIT ?",
                    [*likes, *args, limit]).fetchall()
        return [Hit(*row) for row in rows]

    def get(self, ids: Sequence[int], scope: Scope) -> list[Stored]:
        """The archived messages with these ids that ``scope`` may see, in archive order."""
        if not ids:
            return []
        where, args = self._scope_sql(scope)
        marks = ",".join("?" * len(ids))
        with self._lock:
            rows = self._connect().execute(
                "SELECT m.id, m.session_id, m.user_id, m.compaction_id, m.seq, m.role, m.message FROM messages m "
                f"WHERE m.id IN ({marks}) AND {where} ORDER BY m.session_id, m.seq", [*ids, *args]).fetchall()
        return [Stored(r[0], r[1], r[2], r[3], r[4], r[5], json.loads(r[6])) for r in rows]

    def partners(self, stored: Stored, scope: Scope) -> list[Stored]:
        """The other half of ``stored``'s tool-call pairs (results of its calls, or its call)."""
        where, args = self._scope_sql(scope)
        message = stored.message
        with self._lock:
            db = self._connect()
            if message.get("tool_calls"):
                ids = _call_ids(message).split()
                if not ids:
                    return []
                marks = ",".join("?" * len(ids))
                rows = db.execute(
                    "SELECT m.id, m.session_id, m.user_id, m.compaction_id, m.seq, m.role, m.message FROM messages m "
                    f"WHERE m.session_id = ? AND m.tool_call_id IN ({marks}) AND {where} ORDER BY m.seq",
                    [stored.session_id, *ids, *args]).fetchall()
            elif message.get("tool_call_id"):
                pattern = "%" + str(message["tool_call_id"]).replace("\\", "\\\\").replace("%", "\\%") \
                    .replace("_", "\\_") + "%"
                rows = db.execute(
                    "SELECT m.id, m.session_id, m.user_id, m.compaction_id, m.seq, m.role, m.message FROM messages m "
                    f"WHERE m.session_id = ? AND m.call_ids LIKE ? ESCAPE '\\' AND {where} ORDER BY m.seq",
                    [stored.session_id, pattern, *args]).fetchall()
            else:
                return []
        found = [Stored(r[0], r[1], r[2], r[3], r[4], r[5], json.loads(r[6])) for r in rows]
        if message.get("tool_call_id"):  # LIKE may over-match a prefix: check the exact id
            found = [s for s in found if str(message["tool_call_id"]) in _call_ids(s.message).split()]
        return found

    def stats(self) -> dict[str, Any]:
        with self._lock:
            db = self._connect()
            compactions, sessions, users = db.execute(
                "SELECT count(*), count(DISTINCT session_id), count(DISTINCT user_id) FROM compactions").fetchone()
            messages, oldest, newest = db.execute(
                "SELECT count(*), min(created), max(created) FROM messages").fetchone()
        return {"path": str(self.path), "compactions": compactions, "messages": messages, "sessions": sessions,
                "users": users, "oldest": oldest, "newest": newest, "bytes": self.size_bytes(),
                "spooled": self.spool.exists(), "retention_days": self.retention_days,
                "max_megabytes": self.max_megabytes}

"""The archive: every message a compaction removed, verbatim (secrets redacted), in SQLite.

One file (WAL, so readers never wait for the writer and several hermes processes can share it).
Each compaction is a row in ``compactions``; each removed message a row in ``messages`` with its
session, user, order, role, tool-call pairing and the compaction that removed it. An FTS5 index
with the trigram tokenizer makes any substring of three characters or more searchable — exact
identifiers (a SHA prefix, a path fragment) and Chinese alike — ranked by BM25.

Every row belongs to one deployment namespace and user (see :mod:`hermes_ctx_plugins.scope`);
reads are always scoped to them. Ids and text are written in *stored* form
(:func:`~hermes_ctx_plugins.scope.to_stored`: only ``\\`` and lone surrogates are escaped) and
read back with :func:`~hermes_ctx_plugins.scope.from_stored`, so any string round-trips exactly
and two different ids never compare equal.

If the database cannot be written (locked past the timeout, corrupt, disk full), the removed
messages go to a JSON-lines spool next to it (see :mod:`.spool`) and are imported at the next
successful write: a compaction never loses what it removed.
"""

from __future__ import annotations

import contextlib
import json
import logging
import sqlite3
import threading
import time
from collections.abc import Collection, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...archive import query as fts_query
from ...archive.spool import VERSION as SPOOL_VERSION
from ...archive.spool import Entry, Spool
from ...config import Config, hermes_home
from ...errors import HermesCtxError
from ...events import Forgotten, Message
from ...safety.scan import redact_secrets
from ...scope import from_stored, to_stored

log = logging.getLogger("hermes_ctx_plugins.archive")

#: ``PRAGMA user_version`` of the current layout; 0 is the first one (no namespace, raw text)
SCHEMA_VERSION = 2

# ``namespace`` comes last so a migrated file and a new one have the same columns in the same order
_SCHEMA = (
    """CREATE TABLE IF NOT EXISTS compactions (
        id INTEGER PRIMARY KEY,
        session_id TEXT NOT NULL,
        user_id TEXT NOT NULL,
        strategy TEXT NOT NULL,
        created REAL NOT NULL,
        removed INTEGER NOT NULL,
        tokens_before INTEGER NOT NULL,
        tokens_after INTEGER NOT NULL,
        namespace TEXT NOT NULL DEFAULT ''
    )""",
    """CREATE TABLE IF NOT EXISTS messages (
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
        created REAL NOT NULL,
        namespace TEXT NOT NULL DEFAULT ''
    )""",
    "CREATE INDEX IF NOT EXISTS messages_scoped_session ON messages(namespace, session_id, seq)",
    "CREATE INDEX IF NOT EXISTS messages_scoped_user ON messages(namespace, user_id)",
    "CREATE INDEX IF NOT EXISTS compactions_owner ON compactions(user_id, namespace, session_id)",
    "CREATE INDEX IF NOT EXISTS compactions_created ON compactions(created)",
    """CREATE VIRTUAL TABLE IF NOT EXISTS messages_fts USING fts5(
        text, content='messages', content_rowid='id', tokenize='trigram')""",
    """CREATE TRIGGER IF NOT EXISTS messages_ai AFTER INSERT ON messages BEGIN
        INSERT INTO messages_fts(rowid, text) VALUES (new.id, new.text);
    END""",
    """CREATE TRIGGER IF NOT EXISTS messages_ad AFTER DELETE ON messages BEGIN
        INSERT INTO messages_fts(messages_fts, rowid, text) VALUES ('delete', old.id, old.text);
    END""",
)
#: the text columns the first layout wrote raw; the current one holds them in stored form
_RAW_COLUMNS = {"compactions": ("session_id", "user_id", "strategy"),
                "messages": ("session_id", "user_id", "role", "tool_call_id", "call_ids", "text", "message")}
#: what :meth:`Stored.from_row` reads
_COLUMNS = "m.id, m.session_id, m.user_id, m.namespace, m.compaction_id, m.seq, m.role, m.message"


class ArchiveError(HermesCtxError):
    """The archive cannot be used; the message names the file and what went wrong."""


@dataclass(frozen=True)
class Scope:
    """Whose archive a search or an expansion may see: always one deployment namespace's."""

    session_id: str
    #: ``None`` = any user of the session (the command line only)
    user_id: str | None = ""
    #: every session of ``user_id`` instead of just ``session_id`` (needs a user id)
    all_sessions: bool = False
    #: the whole archive, every namespace: for its owner at the command line, never for a model
    everything: bool = False
    #: the deployment namespace (:attr:`SessionInfo.deployment <hermes_ctx_plugins.events.SessionInfo>`)
    namespace: str = ""


@dataclass(frozen=True)
class Hit:
    id: int
    session_id: str
    compaction_id: int
    role: str
    created: float
    snippet: str
    namespace: str


@dataclass(frozen=True)
class Stored:
    """One archived message as it was (secrets redacted)."""

    id: int
    session_id: str
    user_id: str
    namespace: str
    compaction_id: int
    seq: int
    role: str
    message: Message

    @classmethod
    def from_row(cls, row: Sequence[Any]) -> Stored:
        """A row of :data:`_COLUMNS`."""
        id_, session_id, user_id, namespace, compaction_id, seq, role, message = row
        return cls(id_, from_stored(session_id), from_stored(user_id), from_stored(namespace), compaction_id, seq,
                   from_stored(role), json.loads(from_stored(message)))


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


def _searchable(text: str) -> str:
    """``text`` as the full-text index is given it: in stored form, and without NUL characters, at
    which the index would stop reading (the message itself is kept exactly, in its JSON)."""
    return to_stored(text).replace("\x00", " ")


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
        self.spool = Spool(self.path.with_name(self.path.name + ".spool.jsonl"))
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
            self._ensure_schema(db)
        except sqlite3.Error as exc:
            db.close()
            raise ArchiveError(f"the archive {self.path} is not usable ({exc}); move it away to start a new "
                               "one, or repair it with `sqlite3 <file> .recover`") from exc
        except BaseException:
            db.close()
            raise
        self._db = db
        return db

    @staticmethod
    def _has_tables(db: sqlite3.Connection) -> bool:
        return bool(db.execute("SELECT count(*) FROM sqlite_master WHERE type = 'table'").fetchone()[0] > 0)

    def _ensure_schema(self, db: sqlite3.Connection) -> None:
        """Create the tables, or bring a file of the first layout up to date (once: whichever
        process takes the write lock first migrates, the others find it done)."""
        version = db.execute("PRAGMA user_version").fetchone()[0]
        if version == SCHEMA_VERSION:
            return
        if version > SCHEMA_VERSION:
            raise ArchiveError(f"the archive {self.path} has layout {version}, newer than this hermes-ctx-plugins "
                               f"reads (up to {SCHEMA_VERSION}); upgrade hermes-ctx-plugins, or set "
                               "ctx_plugins.archive.path to another file")
        db.execute("BEGIN IMMEDIATE")
        try:
            if db.execute("PRAGMA user_version").fetchone()[0] < SCHEMA_VERSION and self._has_tables(db):
                _migrate_first_layout(db)
            for statement in _SCHEMA:
                db.execute(statement)
            db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
            db.execute("COMMIT")
        except BaseException:
            with contextlib.suppress(sqlite3.Error):
                db.execute("ROLLBACK")
            raise

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
               tokens_before: int = 0, tokens_after: int = 0, namespace: str = "") -> list[int]:
        """Archive one compaction's removed messages (``(position, message)``) for the owner
        ``(namespace, user_id)``; returns their ids.

        Never raises: when the database cannot take them, they are spooled to a file instead
        (and ``[]`` is returned) so nothing is lost.
        """
        entry: Entry = {
            "v": SPOOL_VERSION, "namespace": to_stored(namespace), "session_id": to_stored(session_id),
            "user_id": to_stored(user_id), "strategy": to_stored(strategy), "created": time.time(),
            "tokens_before": tokens_before, "tokens_after": tokens_after,
            "removed": [[position, to_stored(json.dumps(_redacted(message), ensure_ascii=False))]
                        for position, message in removed]}
        try:
            self.spool.import_into(self._insert)
            return self._insert(entry)
        except Exception as exc:  # whatever keeps the database from taking them, the spool does
            log.error("could not archive %d removed messages in %s (%s); kept in %s until it works again",
                      len(removed), self.path, exc, self.spool.path)
            try:
                self.spool.append(entry)
            except OSError as error:
                log.critical("the removed messages could be neither archived nor spooled to %s (%s): they are "
                             "lost from the archive", self.spool.path, error)
            return []

    def _insert(self, entry: Entry) -> list[int]:
        """Write one spool-form entry (everything in it already in stored form)."""
        owner = (entry["namespace"], entry["session_id"], entry["user_id"])
        with self._transaction() as db:
            cursor = db.execute(
                "INSERT INTO compactions (namespace, session_id, user_id, strategy, created, removed, tokens_before, "
                "tokens_after) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (*owner, entry["strategy"], entry["created"], len(entry["removed"]), entry["tokens_before"],
                 entry["tokens_after"]))
            compaction = cursor.lastrowid
            seq = db.execute("SELECT coalesce(max(seq), 0) FROM messages WHERE namespace = ? AND session_id = ?",
                             owner[:2]).fetchone()[0]
            ids = []
            for position, stored in entry["removed"]:
                message = json.loads(from_stored(stored))
                seq += 1
                cursor = db.execute(
                    "INSERT INTO messages (namespace, session_id, user_id, compaction_id, seq, position, role, "
                    "tool_call_id, call_ids, text, message, created) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (*owner, compaction, seq, position, to_stored(str(message.get("role") or "")),
                     to_stored(str(message.get("tool_call_id") or "")), to_stored(_call_ids(message)),
                     _searchable(message_text(message)), stored, entry["created"]))
                ids.append(int(cursor.lastrowid or 0))
        self._enforce_limits()
        return ids

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
                    self._delete_compactions(db, list(oldest))
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

    @staticmethod
    def _delete_compactions(db: sqlite3.Connection, ids: Sequence[int]) -> int:
        """Delete these compactions and their messages (the trigger drops their index entries);
        returns how many messages went."""
        messages = 0
        for chunk in range(0, len(ids), 500):
            some = ids[chunk:chunk + 500]
            marks = ",".join("?" * len(some))
            messages += db.execute(f"DELETE FROM messages WHERE compaction_id IN ({marks})", some).rowcount
            db.execute(f"DELETE FROM compactions WHERE id IN ({marks})", some)
        return messages

    def purge(self, *, session_id: str | None = None, user_id: str | None = None,
              older_than_days: float | None = None, everything: bool = False,
              namespace: str | None = None) -> int:
        """Delete compactions (and their messages) matching all given conditions; returns how many.

        Ids are compared exactly; ``namespace`` narrows the session and user conditions to one
        deployment namespace (``None``: every namespace). To erase a user for good, spool and
        the file's free pages included, use :meth:`forget_user`.
        """
        where: list[str] = []
        args: list[Any] = []
        for column, value in (("session_id", session_id), ("user_id", user_id), ("namespace", namespace)):
            if value is not None:
                where.append(f"{column} = ?")
                args.append(to_stored(value))
        if older_than_days is not None:
            where.append("created < ?")
            args.append(time.time() - older_than_days * 86400)
        if not where and not everything:
            raise ArchiveError("purge needs a session, a user, an age or everything=True")
        condition = " AND ".join(where) or "1"
        with self._transaction() as db:
            ids = [row[0] for row in db.execute(f"SELECT id FROM compactions WHERE {condition}", args)]
            self._delete_compactions(db, ids)
        if ids:
            self._vacuum()
        return len(ids)

    # -- forgetting a user --------------------------------------------------------------------
    def forget_user(self, user_id: str, *, namespaces: Collection[str] | None = None) -> list[Forgotten]:
        """Remove everything the archive holds of ``user_id`` in ``namespaces`` (``None``: every
        namespace): the user's archived messages, their compactions and full-text index entries,
        and the user's compactions waiting in the spool (both spool files are rewritten
        atomically, keeping everyone else's). The database file is then rewritten so the deleted
        text is gone from its bytes, not merely unlinked: the full-text index is merged, the file
        VACUUMed, and the write-ahead log checkpointed and truncated.

        ``user_id`` is compared exactly (``""`` is the anonymous user). Messages archived before
        hermes told the host a session's user carry an empty user id. Those of a session in which
        the user's own messages are archived (or spooled) belong to that conversation — ctx_search
        shows them to the user — and are removed with them. Any others cannot be attributed to a
        user from what the archive holds: they are kept, and the report's ``detail`` counts them
        (forgetting the anonymous user ``""`` removes them).

        Safe to run in another process than the ones archiving (the command line): the spool and
        the database have cross-process locks. Never raises for a store failure: the one
        :class:`Forgotten` returned says what was removed and, in ``error``, what could not be
        (the user's text may then still be in the file).

        :raises TypeError: ``namespaces`` is a single string (a caller's mistake, not a store's).
        """
        if isinstance(namespaces, str):
            raise TypeError(f"namespaces must be a collection of namespace names or None (every namespace), "
                            f"got the string {namespaces!r}; pass [{namespaces!r}]")
        owner = _Owner(to_stored(user_id), None if namespaces is None else {to_stored(n) for n in namespaces})
        exists = self._db is not None or self.path.exists()  # forgetting never creates an archive
        removed, notes, errors = 0, [], []
        if exists:
            try:
                owner.sessions |= self._sessions_of(owner)
            except (ArchiveError, sqlite3.Error) as exc:
                errors.append(f"the archive could not be read: {exc}")
                exists = False
        try:
            owner.sessions |= {(e["namespace"], e["session_id"]) for e in self.spool.entries()
                               if owner.spoke_in(e["namespace"], e["user_id"])}
            spooled = self.spool.forget(lambda e: owner.owns(e["namespace"], e["session_id"], e["user_id"]))
        except OSError as exc:
            errors.append(f"the spool {self.spool.path} could not be cleared: {exc}")
        else:
            removed += spooled
            if spooled:
                notes.append(f"{spooled} of them from the spool {self.spool.path}")
        if exists:
            try:
                archived, unattributed = self._forget_archived(owner)
                removed += archived
                if unattributed:
                    notes.append(f"{unattributed} messages archived before their session's user was known, in "
                                 "sessions without any of this user's messages, cannot be attributed and were kept")
                if archived:
                    errors += self._erase_deleted()
            except (ArchiveError, sqlite3.Error, OSError) as exc:
                errors.append(f"the archive could not be cleared: {exc}")
        return [Forgotten(store=f"archive {self.path}", removed=removed, detail="; ".join(notes),
                          error="; ".join(errors))]

    def _sessions_of(self, owner: _Owner) -> set[tuple[str, str]]:
        """The (namespace, session) pairs in which the user has archived messages of their own."""
        with self._lock:
            rows = self._connect().execute(
                "SELECT DISTINCT namespace, session_id FROM compactions WHERE user_id = ?", (owner.user,)).fetchall()
        return {(namespace, session) for namespace, session in rows if owner.spoke_in(namespace, owner.user)}

    def _forget_archived(self, owner: _Owner) -> tuple[int, int]:
        """Delete the user's compactions; returns (messages removed, unattributable messages kept)."""
        with self._transaction() as db:
            rows = db.execute("SELECT id, namespace, session_id, user_id FROM compactions WHERE user_id IN (?, '')",
                              (owner.user,)).fetchall()
            removed = self._delete_compactions(db, [row[0] for row in rows if owner.owns(*row[1:])])
            kept = 0
            if owner.user:
                kept = sum(count for namespace, count in db.execute(
                    "SELECT namespace, count(*) FROM messages WHERE user_id = '' GROUP BY namespace")
                    if owner.spaces is None or namespace in owner.spaces)
        return removed, kept

    def _erase_deleted(self) -> list[str]:
        """Rewrite the file so deleted rows leave no bytes behind; returns what could not be done."""
        with self._lock:
            db = self._connect()
            # FTS5 only marks deletions until its segments are merged; VACUUM rewrites every page
            # (freed ones still held the text); TRUNCATE empties the WAL, which held it too
            db.execute("INSERT INTO messages_fts(messages_fts) VALUES ('optimize')")
            db.execute("VACUUM")
            busy = db.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()[0]
        if busy:
            return [f"another process is reading {self.path}, so its write-ahead log could not be emptied: the "
                    "deleted text stays in the -wal file until the next checkpoint (run the command again)"]
        return []

    # -- reading ------------------------------------------------------------------------------
    @staticmethod
    def _scope_sql(scope: Scope, alias: str = "m") -> tuple[str, list[str]]:
        if scope.everything:
            return "1", []
        namespace = to_stored(scope.namespace)
        if scope.all_sessions and scope.user_id:
            return f"{alias}.namespace = ? AND {alias}.user_id = ?", [namespace, to_stored(scope.user_id)]
        if scope.user_id is None:
            return f"{alias}.namespace = ? AND {alias}.session_id = ?", [namespace, to_stored(scope.session_id)]
        # Rows archived before the host learnt the session's user carry an empty user id; they
        # belong to this session all the same (a session is one conversation).
        return (f"{alias}.namespace = ? AND {alias}.session_id = ? AND {alias}.user_id IN (?, '')",
                [namespace, to_stored(scope.session_id), to_stored(scope.user_id)])

    def search(self, text: str, scope: Scope, *, limit: int = 5) -> list[Hit]:
        """The best matches for ``text`` (BM25 over any 3+ character substring), newest first on ties."""
        match, likes = fts_query.build(_searchable(text))  # the query spelt as the text is stored
        if not match and not likes:
            return []
        where, args = self._scope_sql(scope)
        with self._lock:
            db = self._connect()
            if match:
                rows = db.execute(
                    "SELECT m.id, m.session_id, m.compaction_id, m.role, m.created, "
                    "snippet(messages_fts, 0, '«', '»', '…', 48), m.namespace FROM messages_fts JOIN messages m "
                    f"ON m.id = messages_fts.rowid WHERE messages_fts MATCH ? AND {where} "
                    "ORDER BY bm25(messages_fts), m.id DESC LIMIT ?", [match, *args, limit]).fetchall()
            else:  # only terms too short for trigrams (two Chinese characters, say)
                conditions = " AND ".join("m.text LIKE ? ESCAPE '\\'" for _ in likes)
                rows = db.execute(
                    "SELECT m.id, m.session_id, m.compaction_id, m.role, m.created, substr(m.text, 1, 160), "
                    f"m.namespace FROM messages m WHERE {conditions} AND {where} ORDER BY m.id DESC LIMIT ?",
                    [*likes, *args, limit]).fetchall()
        return [Hit(id_, from_stored(session_id), compaction_id, from_stored(role), created, from_stored(snippet),
                    from_stored(namespace))
                for id_, session_id, compaction_id, role, created, snippet, namespace in rows]

    def get(self, ids: Sequence[int], scope: Scope) -> list[Stored]:
        """The archived messages with these ids that ``scope`` may see, in archive order."""
        if not ids:
            return []
        where, args = self._scope_sql(scope)
        marks = ",".join("?" * len(ids))
        with self._lock:
            rows = self._connect().execute(
                f"SELECT {_COLUMNS} FROM messages m WHERE m.id IN ({marks}) AND {where} "
                "ORDER BY m.namespace, m.session_id, m.seq", [*ids, *args]).fetchall()
        return [Stored.from_row(row) for row in rows]

    def partners(self, stored: Stored, scope: Scope) -> list[Stored]:
        """The other half of ``stored``'s tool-call pairs (results of its calls, or its call)."""
        where, args = self._scope_sql(scope)
        where = f"m.namespace = ? AND m.session_id = ? AND {where}"
        args = [to_stored(stored.namespace), to_stored(stored.session_id), *args]
        message = stored.message
        with self._lock:
            db = self._connect()
            if message.get("tool_calls"):
                ids = [to_stored(i) for i in _call_ids(message).split()]
                if not ids:
                    return []
                marks = ",".join("?" * len(ids))
                rows = db.execute(f"SELECT {_COLUMNS} FROM messages m WHERE m.tool_call_id IN ({marks}) AND {where} "
                                  "ORDER BY m.seq", [*ids, *args]).fetchall()
            elif message.get("tool_call_id"):
                pattern = "%" + to_stored(str(message["tool_call_id"])).replace("\\", "\\\\") \
                    .replace("%", "\\%").replace("_", "\\_") + "%"
                rows = db.execute(f"SELECT {_COLUMNS} FROM messages m WHERE m.call_ids LIKE ? ESCAPE '\\' "
                                  f"AND {where} ORDER BY m.seq", [pattern, *args]).fetchall()
            else:
                return []
        found = [Stored.from_row(row) for row in rows]
        if message.get("tool_call_id"):  # LIKE may over-match a prefix: check the exact id
            found = [s for s in found if str(message["tool_call_id"]) in _call_ids(s.message).split()]
        return found

    def stats(self) -> dict[str, Any]:
        with self._lock:
            db = self._connect()
            compactions, sessions = db.execute(
                "SELECT count(*), count(DISTINCT namespace || char(0) || session_id) FROM compactions").fetchone()
            users, namespaces = db.execute(
                "SELECT count(*), count(DISTINCT namespace) FROM (SELECT DISTINCT namespace, user_id FROM compactions)"
            ).fetchone()
            messages, oldest, newest = db.execute(
                "SELECT count(*), min(created), max(created) FROM messages").fetchone()
        return {"path": str(self.path), "compactions": compactions, "messages": messages, "sessions": sessions,
                "users": users, "namespaces": namespaces, "oldest": oldest, "newest": newest,
                "bytes": self.size_bytes(), "spooled": self.spool.pending(), "retention_days": self.retention_days,
                "max_megabytes": self.max_megabytes}


class _Owner:
    """Whose rows :meth:`ArchiveStore.forget_user` removes (everything in stored form)."""

    def __init__(self, user: str, spaces: set[str] | None) -> None:
        self.user = user
        self.spaces = spaces
        #: (namespace, session) pairs in which the user's own messages are archived or spooled
        self.sessions: set[tuple[str, str]] = set()

    def spoke_in(self, namespace: str, user: str) -> bool:
        """Whether a row of ``user`` in ``namespace`` is the user's own."""
        return user == self.user and (self.spaces is None or namespace in self.spaces)

    def owns(self, namespace: str, session: str, user: str) -> bool:
        """Whether a row is the user's: their own, or unattributed in one of their sessions."""
        return self.spoke_in(namespace, user) or (user == "" and (namespace, session) in self.sessions)


def _migrate_first_layout(db: sqlite3.Connection) -> None:
    """The first layout (``user_version`` 0) to the current one, inside the caller's transaction.

    Every existing row is the top level's (namespace ``''``), and the text columns are rewritten
    in stored form. The first layout could not hold a lone surrogate at all (the insert failed),
    so only ``\\`` changes, and only rows containing one are touched; the full-text index is
    rebuilt if any searchable text did.
    """
    db.create_function("to_stored", 1, to_stored, deterministic=True)
    text_changed = 0
    for table, columns in _RAW_COLUMNS.items():
        present = {row[1] for row in db.execute(f"PRAGMA table_info({table})")}
        if not present:
            continue
        if "namespace" not in present:
            db.execute(f"ALTER TABLE {table} ADD COLUMN namespace TEXT NOT NULL DEFAULT ''")
        for column in columns:
            changed = db.execute(f"UPDATE {table} SET {column} = to_stored({column}) "
                                 f"WHERE instr({column}, '\\') > 0").rowcount
            text_changed += changed if (table, column) == ("messages", "text") else 0
    db.execute("DROP INDEX IF EXISTS messages_session")  # replaced by the namespaced indexes
    db.execute("DROP INDEX IF EXISTS messages_user")
    fts = db.execute("SELECT 1 FROM sqlite_master WHERE name = 'messages_fts'").fetchone()
    if text_changed and fts:
        db.execute("INSERT INTO messages_fts(messages_fts) VALUES ('rebuild')")


def store_for(config: Config) -> ArchiveStore:
    """The archive ``config`` names (``ctx_plugins.archive.path``, default ``$HERMES_HOME/ctx_archive.db``)."""
    settings = config.plugins.archive
    path = Path(settings.path).expanduser() if settings.path else hermes_home() / "ctx_archive.db"
    return ArchiveStore(path, retention_days=settings.retention_days, max_megabytes=settings.max_megabytes)

"""The SQLite file behind ``ctx-local``: memories, their FTS5 index, queue progress and quarantine.

One table holds every memory verbatim (secrets already redacted) with its owner — deployment
namespace, user, chat — time and source; an external-content FTS5 table indexes the normalised text
(:mod:`.query`) and the owner's scope tokens, kept in step by triggers, so deleting a row deletes
its index entries in the same transaction. Ids and texts are kept exactly, lone surrogates included
(as :func:`~hermes_ctx_plugins.scope.to_stored` text), and compared exactly.
``queue_progress`` records, per queue segment, how far the write-behind queue has been applied —
written in the same transaction as the rows it applied, which is what makes replay exact.

Every SQLite failure that is the database's fault (locked, damaged, not a database, disk full,
read-only) becomes a :class:`LocalStoreError` naming the file and what to do; errors caused by one
record stay what they are, so the queue can tell a bad record from a bad database.
"""

from __future__ import annotations

import dataclasses
import json
import re
import sqlite3
import threading
import time
from collections.abc import Collection, Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from ...errors import HermesCtxError
from ...memory.local import query
from ...safety.scan import redact_secrets
from ...scope import from_stored, to_stored

SCHEMA_VERSION = 2
#: how much of each side of a candidate is read for ranking and excerpts (huge turns stay on disk)
CANDIDATE_CHARS = 8_000
#: how far past a cut a text is redacted (an armoured private key is a few thousand characters)
CUT_MARGIN = 8_192

# Every text column but search_text and scope_text holds scope.to_stored(value): the exact value,
# lone surrogates included (a UTF-8 store cannot hold those as they are), compared exactly in SQL.
# New columns are appended last, so a migrated table and a new one have the same layout.
_TABLES = (
    "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    """CREATE TABLE IF NOT EXISTS memories (
        id INTEGER PRIMARY KEY,
        key TEXT NOT NULL UNIQUE,
        kind TEXT NOT NULL CHECK (kind IN ('turn', 'fact')),
        user_id TEXT NOT NULL,
        chat_id TEXT NOT NULL,
        session_id TEXT NOT NULL,
        visibility TEXT NOT NULL CHECK (visibility IN ('chat', 'user')),
        user_text TEXT NOT NULL,
        assistant_text TEXT NOT NULL,
        fact_text TEXT NOT NULL,
        source TEXT NOT NULL,
        created_at REAL NOT NULL,
        search_text TEXT NOT NULL,
        scope_text TEXT NOT NULL,
        namespace TEXT NOT NULL DEFAULT ''
    )""",
    # bm25 over the text only: the scope column filters, it must not rank
    """CREATE VIRTUAL TABLE IF NOT EXISTS memories_fts USING fts5 (
        search_text, scope_text, content='memories', content_rowid='id',
        tokenize='porter unicode61 remove_diacritics 2'
    )""",
    """CREATE TRIGGER IF NOT EXISTS memories_ai AFTER INSERT ON memories BEGIN
        INSERT INTO memories_fts (rowid, search_text, scope_text) VALUES (new.id, new.search_text, new.scope_text);
    END""",
    """CREATE TRIGGER IF NOT EXISTS memories_ad AFTER DELETE ON memories BEGIN
        INSERT INTO memories_fts (memories_fts, rowid, search_text, scope_text)
            VALUES ('delete', old.id, old.search_text, old.scope_text);
    END""",
    "CREATE TABLE IF NOT EXISTS queue_progress (segment TEXT PRIMARY KEY, offset INTEGER NOT NULL)",
    # namespace and user_id: the record's owner as far as it can be read (NULL: unknown)
    """CREATE TABLE IF NOT EXISTS quarantine (
        id INTEGER PRIMARY KEY,
        segment TEXT NOT NULL,
        offset INTEGER NOT NULL,
        record TEXT NOT NULL,
        error TEXT NOT NULL,
        attempts INTEGER NOT NULL,
        quarantined_at REAL NOT NULL,
        namespace TEXT,
        user_id TEXT
    )""",
)
_FTS_SETTINGS = (
    "INSERT INTO memories_fts (memories_fts, rank) VALUES ('rank', 'bm25(1.0, 0.0)')",
    # merge index segments in larger steps: ~20% faster writes, queries unchanged
    "INSERT INTO memories_fts (memories_fts, rank) VALUES ('automerge', 8)",
    "INSERT INTO memories_fts (memories_fts, rank) VALUES ('crisismerge', 32)",
)
_OWNER_INDEX = "CREATE INDEX IF NOT EXISTS memories_owner ON memories (user_id, namespace)"
#: version 1 → 2: namespaces; ids and texts as stored text; scope tokens that include the
#: namespace (the index is rebuilt from them); quarantined records' owners
_MIGRATE_1 = (
    "ALTER TABLE memories ADD COLUMN namespace TEXT NOT NULL DEFAULT ''",
    "ALTER TABLE quarantine ADD COLUMN namespace TEXT",
    "ALTER TABLE quarantine ADD COLUMN user_id TEXT",
    # the right-hand sides see the row as it was: the scope is derived from the original ids
    "UPDATE memories SET key = ctx_stored(key), user_id = ctx_stored(user_id), chat_id = ctx_stored(chat_id),"
    " session_id = ctx_stored(session_id), user_text = ctx_stored(user_text),"
    " assistant_text = ctx_stored(assistant_text), fact_text = ctx_stored(fact_text), source = ctx_stored(source),"
    " scope_text = ctx_scope_text(namespace, user_id, chat_id, visibility)",
    "UPDATE quarantine SET namespace = ctx_owner(record, 0), user_id = ctx_owner(record, 1)",
    "INSERT INTO memories_fts (memories_fts) VALUES ('rebuild')",
)
#: the columns a :class:`Memory` is read from, in its field order
_COLUMNS = ("id", "key", "kind", "namespace", "user_id", "chat_id", "session_id", "visibility", "user_text",
            "assistant_text", "fact_text", "source", "created_at")
_INSERT = ("INSERT INTO memories (key, kind, user_id, chat_id, session_id, visibility, user_text, assistant_text,"
           " fact_text, source, created_at, search_text, scope_text, namespace)"
           " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?) ON CONFLICT (key) DO NOTHING")
_QUARANTINE = ("SELECT id, segment, offset, record, error, attempts, quarantined_at, namespace, user_id "
               "FROM quarantine")
# the owner at the start of a queued record's JSON line: this version's order, then version 1's
_JSON_TEXT = r'"(?:[^"\\]|\\.)*"'
_OWNER = re.compile(rf'\{{"namespace":({_JSON_TEXT}),"user_id":({_JSON_TEXT})'
                    rf'|\{{"key":{_JSON_TEXT},"kind":{_JSON_TEXT},"user_id":({_JSON_TEXT})')


class LocalStoreError(HermesCtxError):
    """The memory database cannot be used right now; the message names the file and what to do.

    :ivar path: the database file
    :ivar reason: ``locked``, ``damaged``, ``full``, ``read-only``, ``unsupported`` or ``unavailable``
    """

    def __init__(self, path: Path, reason: str, detail: str, hint: str) -> None:
        self.path = path
        self.reason = reason
        super().__init__(f"ctx-local memory database {path}: {detail}; {hint}")


def store_error(path: Path, exc: BaseException) -> LocalStoreError:
    """Translate a SQLite error about the database (not about a record) into a clear one."""
    detail = str(exc) or type(exc).__name__
    text = detail.lower()
    if "locked" in text or "busy" in text:
        return LocalStoreError(path, "locked", detail, "another process holds a lock on it")
    if "not a database" in text or "malformed" in text or "corrupt" in text:
        return LocalStoreError(path, "damaged", detail, "the file is damaged or is not a ctx-local database; move it "
                               "aside and a new one is created (queued turns are kept and stored into it)")
    if "full" in text:
        return LocalStoreError(path, "full", detail, "free some disk space; queued turns are kept until then")
    if "readonly" in text or "read-only" in text or "permission" in text or "unable to open" in text:
        return LocalStoreError(path, "read-only", detail, "check that the file and its folder are writable")
    if "fts5" in text:
        return LocalStoreError(path, "unsupported", detail, f"this Python's SQLite {sqlite3.sqlite_version} "
                               "lacks FTS5; use a Python built with a standard SQLite")
    return LocalStoreError(path, "unavailable", detail, "memory is skipped until the database works again")


def is_store_failure(exc: BaseException) -> bool:
    """Whether ``exc`` is about the database as a whole (retry later), not about one record."""
    if isinstance(exc, LocalStoreError):
        return True
    return isinstance(exc, sqlite3.DatabaseError) and not isinstance(
        exc, (sqlite3.IntegrityError, sqlite3.DataError, sqlite3.InterfaceError, sqlite3.ProgrammingError))


@dataclass(frozen=True)
class Record:
    """One memory on its way into the store (what the write-behind queue carries)."""

    key: str
    kind: str
    user_id: str
    chat_id: str
    session_id: str
    user_text: str = ""
    assistant_text: str = ""
    fact_text: str = ""
    visibility: str = "chat"
    source: str = "turn"
    created_at: float = 0.0
    #: the memory namespace of the deployment (:attr:`SessionInfo.deployment`)
    namespace: str = ""

    @classmethod
    def from_json(cls, data: Any) -> Record:
        """A record from its decoded JSON form; raises ValueError naming what is wrong."""
        if not isinstance(data, dict):
            raise ValueError(f"a queued record must be a JSON object, got {type(data).__name__}")
        try:
            record = cls(**data)
        except TypeError as exc:
            raise ValueError(f"malformed queued record: {exc}") from None
        for name in ("key", "kind", "user_id", "chat_id", "session_id", "user_text", "assistant_text",
                     "fact_text", "visibility", "source", "namespace"):
            if not isinstance(getattr(record, name), str):
                raise ValueError(f"queued record field {name!r} must be text, got {getattr(record, name)!r:.40}")
        if not isinstance(record.created_at, (int, float)) or isinstance(record.created_at, bool):
            raise ValueError(f"queued record field 'created_at' must be a number, got {record.created_at!r:.40}")
        if record.kind not in ("turn", "fact") or record.visibility not in ("chat", "user") or not record.key:
            raise ValueError(f"queued record has kind {record.kind!r}, visibility {record.visibility!r}, "
                             f"key {record.key!r}; expected turn|fact, chat|user and a key")
        return record

    def as_json(self) -> dict[str, Any]:
        """The JSON form, its owner first: :func:`owner_of` reads it even from a torn line."""
        return {"namespace": self.namespace, "user_id": self.user_id, **asdict(self)}

    def redacted(self, limit: int | None = None) -> Record:
        """This record with every secret in its texts replaced by ``[REDACTED:<kind>]`` and, given
        a ``limit``, each text longer than that cut to it (see :func:`stored_text`)."""
        return dataclasses.replace(self, user_text=stored_text(self.user_text, limit),
                                   assistant_text=stored_text(self.assistant_text, limit),
                                   fact_text=stored_text(self.fact_text, limit))

    def row(self) -> tuple[Any, ...]:
        """The INSERT parameters: the values as stored text, the index text and scope tokens derived."""
        body = self.fact_text if self.kind == "fact" else f"{self.user_text}\n{self.assistant_text}"
        texts = (self.key, self.kind, self.user_id, self.chat_id, self.session_id, self.visibility, self.user_text,
                 self.assistant_text, self.fact_text, self.source)
        return (*map(to_stored, texts), float(self.created_at), query.index_text(body),
                query.scope_text(self.namespace, self.user_id, self.chat_id, self.visibility),
                to_stored(self.namespace))


def stored_text(text: str, limit: int | None = None) -> str:
    """``text`` as it may touch the disk: every secret replaced by ``[REDACTED:<kind>]`` and, when
    it is longer than ``limit`` characters, cut to that with a note saying so.

    Only what is kept is redacted, so a huge paste costs no more than ``limit`` characters' worth —
    plus :data:`CUT_MARGIN` past the cut, so a secret the cut runs through is still seen whole (a
    secret cut first could be a piece no rule recognises) and replaced.
    """
    if limit is None or len(text) <= limit:
        return redact_secrets(text)
    kept = redact_secrets(text[:limit + CUT_MARGIN])[:limit]
    return f"{kept}\n[… {len(text) - limit:,} more characters not stored]"


def owner_of(line: str) -> tuple[str, str] | None:
    """``(namespace, user_id)`` of a queued record's JSON line, read from its start — so a line a
    crash cut short, or one undecodable further on, is still attributed; None if it names none."""
    match = _OWNER.match(line)
    if match is None:
        return None
    try:
        if match[1] is not None:
            return json.loads(match[1]), json.loads(match[2])
        return "", json.loads(match[3])  # version 1 had no namespaces
    except ValueError:
        return None


def json_text(data: Any, **options: Any) -> str:
    """``data`` as JSON that always encodes to UTF-8 and decodes to exactly ``data``: non-ASCII
    stays readable, unless a lone surrogate (which UTF-8 cannot carry) makes it ``\\u`` escapes."""
    text = json.dumps(data, ensure_ascii=False, **options)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return json.dumps(data, **options)
    return text


@dataclass(frozen=True)
class Memory:
    """A stored memory (texts may be cut to :data:`CANDIDATE_CHARS` when read as a search candidate)."""

    id: int
    key: str
    kind: str
    namespace: str
    user_id: str
    chat_id: str
    session_id: str
    visibility: str
    user_text: str
    assistant_text: str
    fact_text: str
    source: str
    created_at: float

    @classmethod
    def from_row(cls, row: Sequence[Any]) -> Memory:
        """A memory from a row of :data:`_COLUMNS`, its texts given back exactly as they came."""
        values: list[Any] = [from_stored(value) if isinstance(value, str) else value for value in row]
        return cls(*values)

    @property
    def text(self) -> str:
        if self.kind == "fact":
            return self.fact_text
        return f"User: {self.user_text}\nAssistant: {self.assistant_text}"

    def as_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["created"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(self.created_at))
        return data


@dataclass(frozen=True)
class Hit:
    """A search candidate: the memory and its BM25 relevance (higher is better)."""

    memory: Memory
    relevance: float


@dataclass(frozen=True)
class Quarantined:
    """A queued record that kept failing, kept with its error instead of being dropped."""

    id: int
    segment: str
    offset: int
    record: str
    error: str
    attempts: int
    quarantined_at: float
    #: whose it is, when that can be read from the record (None: unknown)
    namespace: str | None
    user_id: str | None


class LocalStore:
    """One connection to the memory database; every method is safe to call from any thread."""

    def __init__(self, path: Path, *, busy_timeout: float = 2.0) -> None:
        self.path = path
        self._lock = threading.Lock()
        if sqlite3.sqlite_version_info < (3, 35, 0):
            raise LocalStoreError(path, "unsupported", f"this Python's SQLite is {sqlite3.sqlite_version}",
                                  "ctx-local needs SQLite 3.35 or newer (FTS5, RETURNING); use a newer Python")
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise LocalStoreError(path, "read-only", f"cannot create its folder: {exc}",
                                  "check ctx_plugins.options.ctx-local.path and the permissions") from None
        try:
            self._conn = sqlite3.connect(path, timeout=busy_timeout, isolation_level=None, check_same_thread=False)
        except sqlite3.Error as exc:
            raise store_error(path, exc) from None
        try:
            self._setup()
        except sqlite3.Error as exc:
            self._conn.close()
            raise store_error(path, exc) from None
        except BaseException:
            self._conn.close()
            raise

    def _setup(self) -> None:
        conn = self._conn
        # secure_delete: a forgotten memory is overwritten on disk, not just unlinked.
        conn.execute("PRAGMA secure_delete = ON")
        conn.execute("PRAGMA synchronous = NORMAL")
        conn.execute("PRAGMA cache_size = -16000")
        conn.execute("PRAGMA temp_store = MEMORY")
        version = self._version()
        if version == SCHEMA_VERSION:
            return
        mode = conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
        if mode.lower() != "wal":
            raise LocalStoreError(self.path, "unsupported", f"journal mode {mode!r}",
                                  "the file system does not support SQLite's WAL mode; use a local disk")
        conn.execute("BEGIN IMMEDIATE")
        try:
            self._upgrade(self._version())  # again: another process may have upgraded it meanwhile
            conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise

    def _version(self) -> int:
        version = int(self._conn.execute("PRAGMA user_version").fetchone()[0])
        if version > SCHEMA_VERSION:
            raise LocalStoreError(self.path, "unsupported", f"schema version {version}",
                                  f"it was written by a newer hermes-ctx-plugins (this one reads {SCHEMA_VERSION});"
                                  " upgrade, or point ctx_plugins.options.ctx-local.path elsewhere")
        return version

    def _upgrade(self, version: int) -> None:
        """Bring a version ``version`` database to :data:`SCHEMA_VERSION` (inside a transaction)."""
        conn = self._conn
        if version == 0:
            statements: Sequence[str] = (*_TABLES, *_FTS_SETTINGS)
        elif version == 1:
            conn.create_function("ctx_stored", 1, to_stored, deterministic=True)
            conn.create_function("ctx_scope_text", 4, query.scope_text, deterministic=True)
            conn.create_function("ctx_owner", 2, _stored_owner_part, deterministic=True)
            statements = _MIGRATE_1
        else:
            statements = ()
        for statement in (*statements, _OWNER_INDEX):
            conn.execute(statement)

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    def _run(self, fn: Any, *args: Any) -> Any:
        """Call ``fn(conn, *args)`` under the lock, translating database failures."""
        with self._lock:
            try:
                return fn(self._conn, *args)
            except BaseException as exc:
                # Whatever failed — a record SQLite cannot take included — no transaction may stay
                # open: the next write would fail to begin, and so would every one after it.
                if self._conn.in_transaction:
                    self._conn.execute("ROLLBACK")
                if isinstance(exc, sqlite3.Error) and is_store_failure(exc):
                    raise store_error(self.path, exc) from None
                raise

    # ---------------------------------------------------------------------------------- writing

    def write(self, records: Sequence[Record], *, segment: str = "", offset: int = 0) -> int:
        """Store ``records`` (duplicates by key are skipped) and, when ``segment`` is given, record
        that the queue has been applied up to ``offset`` — atomically. Returns how many were new."""
        return self.write_rows([r.row() for r in records], segment=segment, offset=offset)

    def write_rows(self, rows: Sequence[tuple[Any, ...]], *, segment: str = "", offset: int = 0) -> int:
        """:meth:`write` for rows already made by :meth:`Record.row`."""

        def run(conn: sqlite3.Connection) -> int:
            conn.execute("BEGIN IMMEDIATE")
            cursor = conn.executemany(_INSERT, rows)
            if segment:
                conn.execute("INSERT INTO queue_progress (segment, offset) VALUES (?, ?) ON CONFLICT (segment) "
                             "DO UPDATE SET offset = excluded.offset", (segment, offset))
            conn.execute("COMMIT")
            return max(cursor.rowcount, 0)

        return int(self._run(run))

    def add(self, record: Record) -> Memory:
        """Store one record at once and return it as stored (the existing one for a known key)."""
        self.write([record])
        row = self._run(lambda conn: conn.execute(
            f"SELECT {', '.join(_COLUMNS)} FROM memories WHERE key = ?", (to_stored(record.key),)).fetchone())
        return Memory.from_row(row)

    def quarantine(self, segment: str, offset: int, raw: str, error: str, attempts: int) -> None:
        """Keep a record that keeps failing, with its error and (when readable) its owner, and move
        the queue past it (atomically)."""
        owner = owner_of(raw)
        namespace, user_id = (None, None) if owner is None else (to_stored(owner[0]), to_stored(owner[1]))

        def run(conn: sqlite3.Connection) -> None:
            conn.execute("BEGIN IMMEDIATE")
            conn.execute("INSERT INTO quarantine (segment, offset, record, error, attempts, quarantined_at, namespace,"
                         " user_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                         (segment, offset, raw, error, attempts, time.time(), namespace, user_id))
            conn.execute("INSERT INTO queue_progress (segment, offset) VALUES (?, ?) ON CONFLICT (segment) "
                         "DO UPDATE SET offset = excluded.offset", (segment, offset))
            conn.execute("COMMIT")

        self._run(run)

    def progress(self) -> dict[str, int]:
        """How far each queue segment has been applied."""
        rows = self._run(lambda conn: conn.execute("SELECT segment, offset FROM queue_progress").fetchall())
        return {segment: int(offset) for segment, offset in rows}

    def drop_progress(self, segments: Iterable[str]) -> None:
        names = [(s,) for s in segments]
        if names:
            self._run(lambda conn: conn.executemany("DELETE FROM queue_progress WHERE segment = ?", names))

    # ---------------------------------------------------------------------------------- reading

    def search(self, terms: Sequence[str], *, namespace: str, user_id: str, chat_id: str,
               share_across_chats: bool, limit: int) -> list[Hit]:
        """The best ``limit`` memories for ``terms`` by BM25, only from the caller's scope.

        The scope is enforced twice: by the scope tokens inside the FTS5 expression, and again by
        plain SQL on the stored ids, so no query text can reach another namespace's, user's or
        chat's rows.
        """
        if not terms:
            return []
        expression = query.match_expression(
            terms, query.scope_query(namespace, user_id, chat_id, share_across_chats=share_across_chats))
        chat_clause = "" if share_across_chats else "AND (m.chat_id = ? OR m.visibility = 'user')"
        cut = {"user_text", "assistant_text", "fact_text"}
        columns = ", ".join(f"substr(m.{c}, 1, {CANDIDATE_CHARS})" if c in cut else f"m.{c}" for c in _COLUMNS)
        sql = (
            f"SELECT {columns}, f.score "
            "FROM (SELECT rowid AS id, rank AS score FROM memories_fts WHERE memories_fts MATCH ? "
            "ORDER BY rank LIMIT ?) AS f JOIN memories m ON m.id = f.id "
            f"WHERE m.namespace = ? AND m.user_id = ? {chat_clause} ORDER BY f.score"
        )
        params: list[Any] = [expression, limit, to_stored(namespace), to_stored(user_id)]
        if not share_across_chats:
            params.append(to_stored(chat_id))
        rows = self._run(lambda conn: conn.execute(sql, params).fetchall())
        return [Hit(Memory.from_row(row[:-1]), -float(row[-1])) for row in rows]

    def get(self, ids: Iterable[int]) -> list[Memory]:
        wanted = [int(i) for i in ids]
        if not wanted:
            return []
        marks = ",".join("?" * len(wanted))
        rows = self._run(lambda conn: conn.execute(
            f"SELECT {', '.join(_COLUMNS)} FROM memories WHERE id IN ({marks}) ORDER BY id", wanted).fetchall())
        return [Memory.from_row(row) for row in rows]

    def memories(self, *, namespace: str | None = None, user_id: str | None = None, chat_id: str | None = None,
                 session_id: str | None = None) -> Iterator[Memory]:
        """Every stored memory matching the filters, oldest first (streams; for export)."""
        where, params = _filters(namespace, user_id, chat_id, session_id)
        with self._lock:
            try:
                cursor = self._conn.execute(f"SELECT {', '.join(_COLUMNS)} FROM memories {where} ORDER BY id", params)
                rows = cursor.fetchmany(500)
                while rows:
                    for row in rows:
                        yield Memory.from_row(row)
                    rows = cursor.fetchmany(500)
            except sqlite3.Error as exc:
                if is_store_failure(exc):
                    raise store_error(self.path, exc) from None
                raise

    def scopes(self, namespace: str | None = None) -> list[tuple[str, str]]:
        """Every (user id, chat id) that has memories (in ``namespace``; None: in any)."""
        where, params = _filters(namespace, None, None, None)
        rows = self._run(lambda conn: conn.execute(
            f"SELECT DISTINCT user_id, chat_id FROM memories {where}", params).fetchall())
        return [(from_stored(user), from_stored(chat)) for user, chat in rows]

    def quarantined(self, namespace: str | None = None) -> list[Quarantined]:
        """Quarantined records (of ``namespace`` and those whose owner is unknown; None: all)."""
        where, params = ("", []) if namespace is None else (
            "WHERE namespace = ? OR namespace IS NULL", [to_stored(namespace)])
        rows = self._run(lambda conn: conn.execute(f"{_QUARANTINE} {where} ORDER BY id", params).fetchall())
        return [Quarantined(*row[:7], *(None if v is None else from_stored(v) for v in row[7:])) for row in rows]

    def stats(self, namespace: str | None = None) -> dict[str, Any]:
        """Counts of what is stored (in ``namespace``; None: in the whole file)."""
        where, params = _filters(namespace, None, None, None)
        quarantine = ("", []) if namespace is None else ("WHERE namespace = ? OR namespace IS NULL", params)

        def run(conn: sqlite3.Connection) -> dict[str, Any]:
            def one(sql: str, args: list[Any] = params) -> Any:
                return conn.execute(sql, args).fetchone()

            kinds = dict(conn.execute(f"SELECT kind, count(*) FROM memories {where} GROUP BY kind", params).fetchall())
            scopes = one(f"SELECT count(*) FROM (SELECT DISTINCT user_id, chat_id FROM memories {where})")[0]
            sessions = one(f"SELECT count(DISTINCT session_id) FROM memories {where}")[0]
            span = one(f"SELECT min(created_at), max(created_at) FROM memories {where}")
            quarantined = one(f"SELECT count(*) FROM quarantine {quarantine[0]}", quarantine[1])[0]
            return {"turns": kinds.get("turn", 0), "facts": kinds.get("fact", 0), "scopes": scopes,
                    "sessions": sessions, "oldest": span[0], "newest": span[1], "quarantined": quarantined}

        return dict(self._run(run))

    # ---------------------------------------------------------------------------------- forgetting

    def forget(self, ids: Iterable[int], *, namespace: str | None = None, user_id: str | None = None,
               chat_id: str | None = None) -> list[int]:
        """Delete memories (and their index entries) by id; with a scope, only that scope's. Returns
        the ids actually deleted."""
        wanted = sorted({int(i) for i in ids})
        if not wanted:
            return []
        marks = ",".join("?" * len(wanted))
        where, params = _filters(namespace, user_id, None, None)
        clause = f"{where} AND" if where else "WHERE"
        if chat_id is not None:
            clause += " (chat_id = ? OR visibility = 'user') AND"
            params.append(to_stored(chat_id))
        sql = f"DELETE FROM memories {clause} id IN ({marks}) RETURNING id"

        def run(conn: sqlite3.Connection) -> list[int]:
            conn.execute("BEGIN IMMEDIATE")
            deleted = [row[0] for row in conn.execute(sql, [*params, *wanted]).fetchall()]
            conn.execute("COMMIT")
            return sorted(deleted)

        return list(self._run(run))

    def forget_where(self, *, namespace: str | None = None, user_id: str | None = None, chat_id: str | None = None,
                     session_id: str | None = None) -> int:
        """Delete every memory matching the filters (at least one of user, chat, session)."""
        if user_id is None and chat_id is None and session_id is None:
            raise ValueError("forget needs ids, a user, a chat or a session")
        where, params = _filters(namespace, user_id, chat_id, session_id)

        def run(conn: sqlite3.Connection) -> int:
            conn.execute("BEGIN IMMEDIATE")
            count = conn.execute(f"DELETE FROM memories {where}", params).rowcount
            conn.execute("COMMIT")
            return int(count)

        return int(self._run(run))

    def forget_user(self, user_id: str, namespaces: Collection[str] | None = None) -> tuple[int, int]:
        """Delete ``user_id``'s memories, their index entries and the user's quarantined records in
        ``namespaces`` (None: every one), in one transaction. Returns (memories, quarantined)."""
        clause, params = "user_id = ?", [to_stored(user_id)]
        if namespaces is not None:
            names = sorted({to_stored(n) for n in namespaces})
            if not names:
                return 0, 0
            clause += f" AND namespace IN ({','.join('?' * len(names))})"
            params += names

        def run(conn: sqlite3.Connection) -> tuple[int, int]:
            conn.execute("BEGIN IMMEDIATE")
            memories = conn.execute(f"DELETE FROM memories WHERE {clause}", params).rowcount
            quarantined = conn.execute(f"DELETE FROM quarantine WHERE {clause}", params).rowcount
            conn.execute("COMMIT")
            return int(memories), int(quarantined)

        counts: tuple[int, int] = self._run(run)
        return counts

    def compact(self) -> None:
        """Rewrite the index and fold the WAL back, so forgotten text leaves the file for good."""

        def run(conn: sqlite3.Connection) -> bool:
            conn.execute("INSERT INTO memories_fts (memories_fts) VALUES ('optimize')")
            conn.execute("VACUUM")
            busy, _, _ = conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
            return not busy

        if not self._run(run):  # a reader kept the WAL, and the old pages in it, alive
            raise LocalStoreError(self.path, "locked", "another connection is reading, so the WAL could not be "
                                  "checkpointed and truncated", "try again when it is idle")


def _filters(namespace: str | None, user_id: str | None, chat_id: str | None,
             session_id: str | None) -> tuple[str, list[Any]]:
    """The WHERE clause selecting exactly these values (None: any)."""
    parts, params = [], []
    for column, value in (("namespace", namespace), ("user_id", user_id), ("chat_id", chat_id),
                          ("session_id", session_id)):
        if value is not None:
            parts.append(f"{column} = ?")
            params.append(to_stored(value))
    return ("WHERE " + " AND ".join(parts)) if parts else "", params


def _stored_owner_part(record: str, part: int) -> str | None:
    """For the migration: the stored namespace (0) or user id (1) of a quarantined record."""
    owner = owner_of(record)
    return None if owner is None else to_stored(owner[part])

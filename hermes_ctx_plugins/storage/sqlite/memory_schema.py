"""The layout of ctx-local's SQLite file: tables, FTS5 index, migrations, connection settings, and
what a SQLite failure means for the user.

One table holds every memory verbatim with its owner — deployment namespace, user, chat — time and
source; an external-content FTS5 table indexes the normalised text
(:func:`~hermes_ctx_plugins.storage.text.index_text`) and the owner's scope tokens
(:mod:`.fts`), kept in step by triggers, so deleting a row deletes its index entries in the same
transaction. ``queue_progress`` records, per queue segment, how far the write-behind queue has been
applied. Every text column but ``search_text`` and ``scope_text`` holds
:func:`~hermes_ctx_plugins.scope.to_stored` text: the exact value, lone surrogates included (a UTF-8
store cannot hold those as they are), compared exactly in SQL.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TypeVar

from ...scope import to_stored
from ..base import LocalStoreError
from ..records import owner_of
from . import fts
from .opening import CopyRoomError, read_only, retry_locked, say_unfolded, with_its_wal
from .state import file_changed, sqlite_state

_T = TypeVar("_T")

SCHEMA_VERSION = 4

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
        namespace TEXT NOT NULL DEFAULT '',
        verdict TEXT NOT NULL DEFAULT ''
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
#: ctx-local's optional embeddings (:mod:`hermes_ctx_plugins.embedding`): one vector per
#: memory at most, its owner copied from the memory's row when stored (so a user's vectors are read by
#: an index, without the memories table); ``seq`` orders them for a cache that catches up. A trigger
#: deletes a memory's vector with it, in the same statement — a foreign key would only do so on
#: connections that turned ``PRAGMA foreign_keys`` on — and every vector deleted or replaced bumps
#: ``meta.vector_generation``, which tells such a cache to start over.
_VECTORS = (
    """CREATE TABLE IF NOT EXISTS memory_vectors (
        seq INTEGER PRIMARY KEY,
        memory_id INTEGER NOT NULL UNIQUE,
        namespace TEXT NOT NULL,
        user_id TEXT NOT NULL,
        model TEXT NOT NULL,
        vector BLOB NOT NULL
    )""",
    "CREATE INDEX IF NOT EXISTS memory_vectors_owner ON memory_vectors (user_id, namespace, seq)",
    "INSERT OR IGNORE INTO meta (key, value) VALUES ('vector_generation', '0')",
    """CREATE TRIGGER IF NOT EXISTS memories_vectors_ad AFTER DELETE ON memories BEGIN
        DELETE FROM memory_vectors WHERE memory_id = old.id;
    END""",
    """CREATE TRIGGER IF NOT EXISTS memory_vectors_ad AFTER DELETE ON memory_vectors BEGIN
        UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'vector_generation';
    END""",
    """CREATE TRIGGER IF NOT EXISTS memory_vectors_au AFTER UPDATE ON memory_vectors BEGIN
        UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'vector_generation';
    END""",
)
_FTS_SETTINGS = (
    "INSERT INTO memories_fts (memories_fts, rank) VALUES ('rank', 'bm25(1.0, 0.0)')",
    # merge index segments in larger steps: ~20% faster batch writes (a store written a turn at a time
    # is kept in few segments by the merge each write ends with: memory.MERGE_PAGES)
    "INSERT INTO memories_fts (memories_fts, rank) VALUES ('automerge', 8)",
    "INSERT INTO memories_fts (memories_fts, rank) VALUES ('crisismerge', 32)",
    # that merge merges a level of two segments (set only here: changing an FTS5 setting of a file in use
    # fails the next query of every other connection once)
    "INSERT INTO memories_fts (memories_fts, rank) VALUES ('usermerge', 2)",
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
#: version 2 → 3: each memory's safety verdict (:mod:`~hermes_ctx_plugins.storage.verdicts`); rows
#: stored before have none, so recall scans them as it always did
_MIGRATE_2 = ("ALTER TABLE memories ADD COLUMN verdict TEXT NOT NULL DEFAULT ''",)
#: version 3 → 4: the embeddings table (:data:`_VECTORS`); no memory changes, none has a vector yet


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


def is_database_failure(exc: BaseException) -> bool:
    """Whether a SQLite error is about the database as a whole, not about the record at hand."""
    return isinstance(exc, sqlite3.DatabaseError) and not isinstance(
        exc, (sqlite3.IntegrityError, sqlite3.DataError, sqlite3.InterfaceError, sqlite3.ProgrammingError))


def connect(path: Path, busy_timeout: float, *, read_only: bool = False) -> sqlite3.Connection:
    """A connection to the memory database at ``path``, created or brought up to date; ``read_only``: an existing
    one of the current layout, opened without writing anything (a copy the user cannot write: a backup, another
    user's home), every write failing with reason ``read-only``.

    :raises LocalStoreError: the file cannot be opened, is damaged, or is of a newer layout.
    """
    if sqlite3.sqlite_version_info < (3, 35, 0):
        raise LocalStoreError(path, "unsupported", f"this Python's SQLite is {sqlite3.sqlite_version}",
                              "ctx-local needs SQLite 3.35 or newer (FTS5, RETURNING); use a newer Python")
    if read_only:
        return _connect_read_only(path, busy_timeout)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise LocalStoreError(path, "read-only", f"cannot create its folder: {exc}",
                              "check ctx_plugins.options.ctx-local.path and the permissions") from None
    try:
        conn = sqlite3.connect(path, timeout=busy_timeout, isolation_level=None, check_same_thread=False)
    except sqlite3.Error as exc:
        raise store_error(path, exc) from None
    _prepared(conn, path, lambda: retry_locked(lambda: _setup(conn, path), busy_timeout))
    return conn


def _prepared(conn: sqlite3.Connection, path: Path, prepare: Callable[[], _T]) -> _T:
    """``prepare()`` on the new connection ``conn``, closed if it fails (a SQLite failure said as the store's)."""
    try:
        return prepare()
    except sqlite3.Error as exc:
        conn.close()
        raise store_error(path, exc) from None
    except BaseException:
        conn.close()
        raise


def _unreadable(path: Path, exc: BaseException) -> LocalStoreError:
    """:func:`store_error`, but for a copy that could not be made (:class:`.opening.CopyRoomError`): no fault of the
    store's, and nothing to do to it."""
    if isinstance(exc, CopyRoomError):
        return LocalStoreError(path, "unavailable", str(exc), "the store is fine: set TMPDIR to a writable folder "
                               "with room for the copy (or read it as the user who writes it)")
    return store_error(path, exc)


def _connect_read_only(path: Path, busy_timeout: float) -> sqlite3.Connection:
    """:func:`connect` with ``read_only`` (:func:`.opening.read_only`); its first read made again, a moment apart, when
    it fails as damage (torn by a process writing the file, which damage never stops being; a review): damage only
    when the file stayed as it was through every try (a checkpoint paused part-way tore each try, CI)."""
    changed = False
    for attempt in range(4):
        time.sleep(0.05 * attempt)
        before = sqlite_state(path)
        try:
            conn = read_only(path, busy_timeout)
        except (sqlite3.Error, OSError) as exc:
            raise _unreadable(path, exc) from None
        try:
            version = _version(conn, path)
            break
        except sqlite3.Error as exc:
            conn.close()
            error = store_error(path, exc)
            if error.reason != "damaged":
                raise error from None
            changed = changed or file_changed(before, sqlite_state(path, settle=False))
            if attempt == 3:
                raise (kept_changing(path, exc) if changed else error) from None
        except BaseException:
            conn.close()
            raise
    if version == 0 and getattr(conn, "folder", None) is None:
        # no table in the file alone: a store its owner opened and has not checkpointed yet has them in its -wal (a
        # review); an older layout is refused from the file, not copied whole to be refused (a review: 152 MB in /tmp
        # a command, and a /tmp too small for it changed the advice to "move it away")
        try:
            again = with_its_wal(path, busy_timeout)
            if again is not None:  # (the copy held first: a Ctrl-C from here on removes it, below)
                conn, before_copy = again, conn
                before_copy.close()
                version = _version(conn, path)
        except (sqlite3.Error, OSError) as exc:
            conn.close()
            raise _unreadable(path, exc) from None
        except BaseException:
            conn.close()
            raise
    say_unfolded(path, conn)
    if version != SCHEMA_VERSION:
        conn.close()
        raise LocalStoreError(path, "read-only", f"schema version {version}, older than this hermes-ctx-plugins "
                              f"reads ({SCHEMA_VERSION}), and it cannot be written by this user to bring it up to date",
                              "open it once as a user who can write it (any hermes-ctx memory command does)")
    return conn


def kept_changing(path: Path, failed: object) -> LocalStoreError:
    """A store read without its locks (this user cannot write it) whose reads ``failed`` or came back torn every time
    while a process wrote the file."""
    return LocalStoreError(path, "locked", f"{failed or 'the file changed during every read'}: the file kept changing "
                           "while it was read (a process is writing it)", "run the command again")


def _setup(conn: sqlite3.Connection, path: Path) -> None:
    # secure_delete: a forgotten memory is overwritten on disk, not just unlinked.
    conn.execute("PRAGMA secure_delete = ON")
    conn.execute("PRAGMA synchronous = NORMAL")
    conn.execute("PRAGMA cache_size = -16000")
    conn.execute("PRAGMA temp_store = MEMORY")
    if _version(conn, path) == SCHEMA_VERSION:
        return
    mode = conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
    if mode.lower() != "wal":
        raise LocalStoreError(path, "unsupported", f"journal mode {mode!r}",
                              "the file system does not support SQLite's WAL mode; use a local disk")
    conn.execute("BEGIN IMMEDIATE")
    try:
        _upgrade(conn, _version(conn, path))  # again: another process may have upgraded it meanwhile
        conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise


def _version(conn: sqlite3.Connection, path: Path) -> int:
    version = int(conn.execute("PRAGMA user_version").fetchone()[0])
    if version > SCHEMA_VERSION:
        raise LocalStoreError(path, "unsupported", f"schema version {version}",
                              f"it was written by a newer hermes-ctx-plugins (this one reads {SCHEMA_VERSION});"
                              " upgrade, or point ctx_plugins.options.ctx-local.path elsewhere")
    return version


def _upgrade(conn: sqlite3.Connection, version: int) -> None:
    """Bring a version ``version`` database to :data:`SCHEMA_VERSION` (inside a transaction)."""
    if version == 0:
        statements: Sequence[str] = (*_TABLES, *_FTS_SETTINGS)
    elif version == 1:
        conn.create_function("ctx_stored", 1, to_stored, deterministic=True)
        conn.create_function("ctx_scope_text", 4, fts.scope_text, deterministic=True)
        conn.create_function("ctx_owner", 2, _stored_owner_part, deterministic=True)
        statements = (*_MIGRATE_1, *_MIGRATE_2)
    elif version == 2:
        statements = _MIGRATE_2
    else:
        statements = ()
    if version < SCHEMA_VERSION:
        statements = (*statements, *_VECTORS)
    for statement in (*statements, _OWNER_INDEX):
        conn.execute(statement)


def _stored_owner_part(record: str, part: int) -> str | None:
    """For the migration: the stored namespace (0) or user id (1) of a quarantined record."""
    owner = owner_of(record)
    return None if owner is None else to_stored(owner[part])

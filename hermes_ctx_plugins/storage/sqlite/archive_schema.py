"""The layout of the archive's SQLite file, how a connection is set up, and the migration from the
first layout.

Each compaction is a row in ``compactions``; each removed message a row in ``messages`` with its
session, user, order, role, tool-call pairing and the compaction that removed it. An FTS5 index with
the trigram tokenizer makes any substring of three characters or more searchable — exact identifiers
(a SHA prefix, a path fragment) and Chinese alike. Ids and text are written in *stored* form
(:func:`~hermes_ctx_plugins.scope.to_stored`), so any string round-trips exactly and two different
ids never compare equal.

``archive_vectors`` holds the optional embeddings of the hybrid ``ctx_search`` (one per message at most,
keyed by the message's id, :mod:`hermes_ctx_plugins.archive.dense`): a trigger deletes a message's
vector with it, in the same statement — whichever path deletes messages (a purge by age, size,
session or user, ``forget_user``), and whether or not the connection turned foreign keys on — and
every vector deleted or replaced bumps ``archive_meta.vector_generation``, which tells a cache of them
to start over.
"""

from __future__ import annotations

import contextlib
import sqlite3
from pathlib import Path

from ...scope import to_stored
from ..base import ArchiveError, archive_unusable
from .opening import CopyRoomError, read_only, retry_locked, say_unfolded, with_its_wal

#: ``PRAGMA user_version`` of the current layout; 0 is the first one (no namespace, raw text), 2 the
#: namespaced one, 3 adds the index on ``messages(compaction_id)`` (purging old compactions and the
#: cascade from ``compactions`` scanned the whole table without it), 4 adds ``archive_vectors`` (nothing
#: else changes: every message is kept, and gains its vector in the background when an embedder is set)
SCHEMA_VERSION = 4
#: the first version whose text columns are in stored form (older files are rewritten once)
_STORED_FORM = 2

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
    "CREATE INDEX IF NOT EXISTS messages_compaction ON messages(compaction_id)",
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
    # version 4: the embeddings (see the module docs)
    """CREATE TABLE IF NOT EXISTS archive_vectors (
        seq INTEGER PRIMARY KEY,
        message_id INTEGER NOT NULL UNIQUE,
        model TEXT NOT NULL,
        vector BLOB NOT NULL
    )""",
    "CREATE TABLE IF NOT EXISTS archive_meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL)",
    "INSERT OR IGNORE INTO archive_meta (key, value) VALUES ('vector_generation', 0)",
    """CREATE TRIGGER IF NOT EXISTS messages_vectors_ad AFTER DELETE ON messages BEGIN
        DELETE FROM archive_vectors WHERE message_id = old.id;
    END""",
    """CREATE TRIGGER IF NOT EXISTS archive_vectors_ad AFTER DELETE ON archive_vectors BEGIN
        UPDATE archive_meta SET value = value + 1 WHERE key = 'vector_generation';
    END""",
    """CREATE TRIGGER IF NOT EXISTS archive_vectors_au AFTER UPDATE ON archive_vectors BEGIN
        UPDATE archive_meta SET value = value + 1 WHERE key = 'vector_generation';
    END""",
)
#: the text columns the first layout wrote raw; the current one holds them in stored form
_RAW_COLUMNS = {"compactions": ("session_id", "user_id", "strategy"),
                "messages": ("session_id", "user_id", "role", "tool_call_id", "call_ids", "text", "message")}


def connect(path: Path, timeout: float, *, read_only: bool = False) -> sqlite3.Connection:
    """A connection to the archive at ``path`` (WAL, foreign keys on), created or brought up to date; ``read_only``:
    an existing one of the current layout, opened without writing anything (a copy this user cannot write), every
    write failing.

    :raises ArchiveError: it cannot be opened, is damaged, or is of a newer layout.
    """
    if read_only:
        return _connect_read_only(path, timeout)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        db = sqlite3.connect(path, timeout=timeout, check_same_thread=False, isolation_level=None)
    except (OSError, sqlite3.Error) as exc:
        raise ArchiveError(f"cannot open the archive {path}: {exc}") from exc
    try:
        db.execute(f"PRAGMA busy_timeout = {int(timeout * 1000)}")
        retry_locked(lambda: _set_up(db, path), timeout)
    except sqlite3.Error as exc:
        db.close()
        if "locked" in str(exc).lower() or "busy" in str(exc).lower():
            raise ArchiveError(f"the archive {path} stayed locked by another process for {timeout:g} s "
                               "(a long maintenance job?); nothing in it was changed") from exc
        raise ArchiveError(archive_unusable(path, exc)) from exc
    except BaseException:
        db.close()
        raise
    return db


def _unreadable(path: Path, exc: BaseException) -> str:
    """:func:`~..base.archive_unusable`, but for a copy that could not be made (:class:`.opening.CopyRoomError`): no
    fault of the archive's, and nothing to do to it (a review: the advice was to move a healthy archive away)."""
    if isinstance(exc, CopyRoomError):
        return f"the archive cannot be read by this user now: {exc}; the archive is fine: set TMPDIR to a writable " \
               "folder with room for the copy (or read it as the user who writes it)"
    return archive_unusable(path, exc)


def _connect_read_only(path: Path, timeout: float) -> sqlite3.Connection:
    """:func:`connect` with ``read_only`` (:func:`.opening.read_only`)."""
    try:
        db = read_only(path, timeout)
    except (OSError, sqlite3.Error) as exc:
        raise ArchiveError(_unreadable(path, exc)) from exc
    try:
        version = db.execute("PRAGMA user_version").fetchone()[0]
        if version == 0 and getattr(db, "folder", None) is None and not _has_tables(db):
            # no table in the file alone: an archive its owner opened and has not checkpointed yet has them in its -wal
            # (an older layout is refused from the file, not copied whole to be refused; layout 0, the first one, is
            # version 0 with tables: a review)
            again = with_its_wal(path, timeout)
            if again is not None:  # (the copy held first: a Ctrl-C from here on removes it, below)
                db, before_copy = again, db
                before_copy.close()
                version = db.execute("PRAGMA user_version").fetchone()[0]
    except (sqlite3.Error, OSError) as exc:
        db.close()
        raise ArchiveError(_unreadable(path, exc)) from exc
    except BaseException:
        db.close()
        raise
    say_unfolded(path, db)
    if version > SCHEMA_VERSION:
        db.close()
        raise ArchiveError(f"the archive {path} has layout {version}, newer than this hermes-ctx-plugins reads (up to "
                           f"{SCHEMA_VERSION}); upgrade hermes-ctx-plugins to read it")
    if version != SCHEMA_VERSION:
        db.close()
        raise ArchiveError(f"the archive {path} has layout {version}, older than this hermes-ctx-plugins reads "
                           f"({SCHEMA_VERSION}), and it cannot be written by this user to bring it up to date: open it "
                           "once as a user who can write it")
    return db


def _set_up(db: sqlite3.Connection, path: Path) -> None:
    if db.execute("PRAGMA auto_vacuum").fetchone()[0] == 0 and not _has_tables(db):
        db.execute("PRAGMA auto_vacuum = INCREMENTAL")  # only effective before the first table
    db.execute("PRAGMA journal_mode = WAL")
    db.execute("PRAGMA foreign_keys = ON")
    _ensure_schema(db, path)


def _has_tables(db: sqlite3.Connection) -> bool:
    return bool(db.execute("SELECT count(*) FROM sqlite_master WHERE type = 'table'").fetchone()[0] > 0)


def _ensure_schema(db: sqlite3.Connection, path: Path) -> None:
    """Create the tables, or bring an older file up to date (once: whichever process takes the write
    lock first migrates, the others find it done). The statements of ``_SCHEMA`` are idempotent, so a
    later version's additions (an index) are made by running them again."""
    version = db.execute("PRAGMA user_version").fetchone()[0]
    if version == SCHEMA_VERSION:
        return
    if version > SCHEMA_VERSION:
        raise ArchiveError(f"the archive {path} has layout {version}, newer than this hermes-ctx-plugins "
                           f"reads (up to {SCHEMA_VERSION}); upgrade hermes-ctx-plugins, or set "
                           "ctx_plugins.archive.path to another file")
    db.execute("BEGIN IMMEDIATE")
    try:
        if db.execute("PRAGMA user_version").fetchone()[0] < _STORED_FORM and _has_tables(db):
            _migrate_first_layout(db)
        for statement in _SCHEMA:
            db.execute(statement)
        db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        db.execute("COMMIT")
    except BaseException:
        with contextlib.suppress(sqlite3.Error):
            db.execute("ROLLBACK")
        raise


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

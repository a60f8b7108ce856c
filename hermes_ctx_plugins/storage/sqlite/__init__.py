"""The SQLite backend (the default): one file per store, ctx-local's under its ``path`` option and the
archive at ``ctx_plugins.archive.path``, both under ``$HERMES_HOME`` unless set elsewhere.

* :mod:`.memory` / :mod:`.memory_schema` — ctx-local's memories: queries / layout and migrations;
* :mod:`.archive` / :mod:`.archive_schema` — the archive: queries and its spool / layout and migrations;
* :mod:`.fts` — FTS5 match expressions and ctx-local's scope tokens.
* :mod:`.opening` — a new connection waits out the locks SQLite reports without waiting itself.
"""

from __future__ import annotations

from pathlib import Path

from ...config import Config
from .archive import ArchiveStore
from .memory import LocalStore

__all__ = ["ArchiveStore", "LocalStore", "memory_exists", "memory_problem", "open_archive", "open_memory"]


def open_memory(path: Path, *, config: Config, busy_timeout: float) -> LocalStore:
    return LocalStore(path, busy_timeout=busy_timeout)


def memory_exists(path: Path, *, config: Config) -> bool:
    return path.exists()


def memory_problem(path: Path, *, config: Config) -> str | None:
    """Why the memory store at ``path`` cannot be used (damaged, not a ctx-local database, unreadable), read
    without writing anything; ``None`` when it can, or does not exist yet (it is created at first use)."""
    import sqlite3

    from .memory_schema import store_error

    if not path.exists():
        return None
    try:
        conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True, timeout=2.0)
        try:
            tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        finally:
            conn.close()
    except (sqlite3.Error, OSError, ValueError) as exc:
        return str(store_error(path, exc))
    if tables and "memories" not in tables:
        return str(store_error(path, sqlite3.DatabaseError("not a database of ctx-local (no memories table)")))
    return None


def open_archive(path: Path, *, config: Config) -> ArchiveStore:
    settings = config.plugins.archive
    return ArchiveStore(path, retention_days=settings.retention_days, max_megabytes=settings.max_megabytes)

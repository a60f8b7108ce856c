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
from ..base import side_files_advice
from .archive import ArchiveStore
from .memory import LocalStore

__all__ = ["ArchiveStore", "LocalStore", "memory_exists", "memory_problem", "open_archive", "open_memory"]


def open_memory(path: Path, *, config: Config, busy_timeout: float) -> LocalStore:
    return LocalStore(path, busy_timeout=busy_timeout)


def open_memory_read_only(path: Path, *, config: Config, busy_timeout: float) -> LocalStore:
    """The existing store at ``path``, read without writing anything (a copy this user cannot write)."""
    return LocalStore(path, busy_timeout=busy_timeout, read_only=True)


def memory_exists(path: Path, *, config: Config) -> bool:
    try:
        return path.exists()
    except OSError as exc:  # its folder cannot be entered (a review: a traceback)
        from .memory_schema import store_error

        raise store_error(path, exc) from None


def memory_problem(path: Path, *, config: Config) -> str | None:
    """Why the memory store at ``path`` cannot be used (damaged, not a ctx-local database, written by a newer
    release, unreadable, or not there and not creatable by this user), read without writing anything; ``None`` when
    it can, or does not exist yet and can be created (it is at first use). A store no process has open (no ``-wal``
    beside it) is read as an immutable file, so reading it makes no ``-wal`` / ``-shm``; its pages are checked for at
    most :data:`CHECK_SECONDS` (a red-team pass: damage past the first page, a newer schema and the two files made by
    reading all went unseen)."""
    import os

    from .memory_schema import store_error

    if path.is_symlink() and not path.exists():  # the store's own path a link to nothing (a review)
        return (f"ctx-local memory database {path}: a link to {os.readlink(path)}, which is not there: turns wait "
                "in its write queue until it is (a folder not mounted yet?)")
    if not path.exists():  # created at first use, with its write queue beside it: can it be? (a newcomer walk: a path
        # under a file said "available" and every turn was lost)
        folder = next((p for p in path.parents if os.path.lexists(p)), path.parent)  # (a link: where it points)
        if not folder.is_dir() or not os.access(folder, os.W_OK | os.X_OK):
            why = ("is a link to nothing (a folder not mounted yet?)" if folder.is_symlink() and not folder.exists()
                   else "is not a folder" if not folder.is_dir() else "cannot be written by this user")
            return (f"ctx-local memory database {path}: no store yet, and this user cannot create it ({folder} {why}): "
                    "no turn is kept until it can; set ctx_plugins.options.ctx-local.path to a file in a folder this "
                    "user can write")
        return None
    if not os.access(path, os.R_OK | os.W_OK) or not os.access(path.parent, os.W_OK | os.X_OK):
        return str(store_error(path, PermissionError("the file or its folder is read-only for this user")))
    others = [side.name for side in (Path(f"{path}-wal"), Path(f"{path}-shm"))
              if side.exists() and not os.access(side, os.R_OK | os.W_OK)]
    if others:  # left by a process of another user's: every write fails until they go (a review)
        return str(store_error(path, PermissionError(side_files_advice(others))))
    idle = not Path(f"{path}-wal").exists() and not Path(f"{path}-shm").exists()
    problem = _read_problem(path, immutable=idle)
    if problem is not None and idle and (Path(f"{path}-wal").exists() or Path(f"{path}-shm").exists()):
        problem = _read_problem(path, immutable=False)  # a writer started meanwhile: asked again the ordinary way
    return problem


#: how long ``hermes-ctx doctor`` checks a memory store's pages (a large one is checked in part)
CHECK_SECONDS = 2.0


def _read_problem(path: Path, *, immutable: bool) -> str | None:
    import sqlite3
    import time

    from .memory_schema import SCHEMA_VERSION, store_error

    mode = "immutable=1" if immutable else "mode=ro"
    try:
        conn = sqlite3.connect(f"{path.resolve().as_uri()}?{mode}", uri=True, timeout=2.0)
        try:
            tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
            version = int(conn.execute("PRAGMA user_version").fetchone()[0])
            deadline = time.monotonic() + CHECK_SECONDS
            conn.set_progress_handler(lambda: time.monotonic() > deadline, 10_000)
            try:
                checked = conn.execute("PRAGMA quick_check(1)").fetchone()[0]
            except sqlite3.OperationalError as exc:  # interrupted: a large store, checked in part
                checked = "ok" if "interrupt" in str(exc).lower() else str(exc)
        finally:
            conn.close()
    except (sqlite3.Error, OSError, ValueError) as exc:
        return str(store_error(path, exc))
    if tables and "memories" not in tables:
        return str(store_error(path, sqlite3.DatabaseError("not a database of ctx-local (no memories table)")))
    if version > SCHEMA_VERSION:
        return (f"ctx-local memory database {path}: schema version {version}: it was written by a newer "
                f"hermes-ctx-plugins (this one reads {SCHEMA_VERSION}); upgrade, or point "
                "ctx_plugins.options.ctx-local.path elsewhere")
    if checked != "ok":
        return str(store_error(path, sqlite3.DatabaseError(f"database disk image is malformed ({checked})")))
    return None


def open_archive(path: Path, *, config: Config) -> ArchiveStore:
    settings = config.plugins.archive
    return ArchiveStore(path, retention_days=settings.retention_days, max_megabytes=settings.max_megabytes)


def open_archive_read_only(path: Path, *, config: Config) -> ArchiveStore:
    """The existing archive at ``path``, read without writing anything (a copy this user cannot write)."""
    settings = config.plugins.archive
    return ArchiveStore(path, retention_days=settings.retention_days, max_megabytes=settings.max_megabytes,
                        read_only=True)

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

__all__ = ["ArchiveStore", "LocalStore", "memory_exists", "open_archive", "open_memory"]


def open_memory(path: Path, *, config: Config, busy_timeout: float) -> LocalStore:
    return LocalStore(path, busy_timeout=busy_timeout)


def memory_exists(path: Path, *, config: Config) -> bool:
    return path.exists()


def open_archive(path: Path, *, config: Config) -> ArchiveStore:
    settings = config.plugins.archive
    return ArchiveStore(path, retention_days=settings.retention_days, max_megabytes=settings.max_megabytes)

"""The PostgreSQL backend (``ctx_plugins.storage.backend: postgres``): both stores on one server that
every worker of a fleet reaches, so a user's memories and archive are the same whichever worker
serves them. Needs the extra ``postgres`` (``psycopg`` 3 and ``psycopg-pool``).

* :mod:`.connection` — the server a config names, one pool per process, locations, failures named;
* :mod:`.schema` — the tables, versioned migrations under an advisory lock;
* :mod:`.memory` — ctx-local's memories; :mod:`.archive` — the archive;
* :mod:`.text` — strings as PostgreSQL's ``text`` takes them.

What stays on each machine: ctx-local's write-behind queue and the archive's spool (files beside the
location, as with SQLite), and the queue's id (``<path>.pg-queue``).
"""

from __future__ import annotations

from pathlib import Path

from ...config import Config
from .archive import PostgresArchive
from .connection import DSN_ENV, Server, fail, location_key
from .memory import PostgresMemory

__all__ = ["DSN_ENV", "PostgresArchive", "PostgresMemory", "Server", "memory_exists", "open_archive", "open_memory",
           "release"]


def open_memory(path: Path, *, config: Config, busy_timeout: float) -> PostgresMemory:
    return PostgresMemory(path, Server.of(config), busy_timeout=busy_timeout)


def memory_exists(path: Path, *, config: Config) -> bool:
    server = Server.of(config)
    try:
        with server.connection() as conn:
            return conn.execute("SELECT 1 FROM stores WHERE location = %s AND kind = 'memory'",
                                (location_key(path),)).fetchone() is not None
    except Exception as exc:
        fail(server.shown, exc)


def open_archive(path: Path, *, config: Config) -> PostgresArchive:
    settings = config.plugins.archive
    return PostgresArchive(path, lambda: Server.of(config), retention_days=settings.retention_days,
                           max_megabytes=settings.max_megabytes)


def release() -> None:
    """Close every connection pool of this process (the next use opens a new one)."""
    Server.close_all()

"""The PostgreSQL backend (``ctx_plugins.storage.backend: postgres``): both stores on one server that
every worker of a fleet reaches, so a user's memories and archive are the same whichever worker
serves them. Needs the extra ``postgres`` (``psycopg`` 3 and ``psycopg-pool``).

* :mod:`.connection` — the server a config names, one pool per process, locations, failures named;
* :mod:`.schema` — the tables, versioned migrations under an advisory lock;
* :mod:`.memory` — ctx-local's memories; :mod:`.archive` — the archive;
* :mod:`.documents` — the ``file`` provider's MEMORY.md / USER.md (each worker's file a mirror);
* :mod:`.text` — strings as PostgreSQL's ``text`` takes them.

What stays on each machine: ctx-local's write-behind queue and the archive's spool (files beside the
location, as with SQLite), and the queue's id (``<path>.pg-queue``).
"""

from __future__ import annotations

import os
from pathlib import Path

from ...config import Config
from ..base import LocalStoreError
from .archive import PostgresArchive
from .connection import DSN_ENV, Server, fail, location_key
from .documents import PostgresDocuments, open_documents
from .memory import PostgresMemory

__all__ = ["DSN_ENV", "PostgresArchive", "PostgresDocuments", "PostgresMemory", "Server", "check", "memory_exists",
           "open_archive", "open_documents", "open_memory", "release"]


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


def identity(config: Config) -> str:
    """The server and schema ``config`` names, as a digest (see :func:`hermes_ctx_plugins.storage.identity`)."""
    import hashlib

    named = config.plugins.storage.dsn or os.environ.get(DSN_ENV, "")
    return hashlib.blake2b(repr((named, config.plugins.storage.schema)).encode("utf-8", "surrogatepass"),
                           digest_size=16).hexdigest()


def configured(config: Config) -> list[tuple[str, bool, str]]:
    """``hermes-ctx doctor --no-probe``'s line for the server ``config`` names, without reaching it: a failed
    ``connection`` line when none is named or the driver is missing; nothing otherwise."""
    from . import connection

    if connection._MISSING is not None:
        return [("connection", False, f"the PostgreSQL driver is not installed ({connection._MISSING}); "
                                      "pip install 'hermes-ctx-plugins[postgres]'")]
    try:
        connection.dsn_of(config)
    except LocalStoreError as exc:
        return [("connection", False, str(exc))]
    return []


def check(config: Config) -> list[tuple[str, bool, str]]:
    """``hermes-ctx doctor``'s lines for the server ``config`` names: ``(what, ok, detail)`` for the
    connection, the schema version and the pool. Creates nothing. Never raises: a server that cannot
    be reached is one failed ``connection`` line naming it (password hidden) and what to do."""
    try:
        server = Server.of(config)
    except LocalStoreError as exc:  # no server named, or no driver
        return [("connection", False, str(exc))]
    from . import connection

    problem = connection.dsn_problem(server.dsn)
    if problem:  # said without a connection attempt (whose error would quote the string) and without its text
        return [("connection", False, f"ctx_plugins.storage.dsn (or ${DSN_ENV}) is not a valid connection string "
                                      f"({problem}): postgresql://user:password@host:5432/dbname, with a % in the "
                                      "password written %25")]
    try:  # a connection of its own first: the pool would only say that it got none in time, not why
        import psycopg

        timeout = max(1, int(config.plugins.storage.connect_timeout))
        psycopg.connect(server.dsn, autocommit=True, connect_timeout=timeout).close()
        figures = server.check()
    except Exception as exc:
        detail = " ".join(str(exc).split()) or type(exc).__name__
        return [("connection", False, f"cannot reach {server.shown}: {detail}; {_remedy(detail)}")]
    found, expected, schema = figures["schema_version"], figures["expected_version"], figures["schema"]
    if found > expected:
        schema_line = (False, f"{schema} is at version {found}, newer than this hermes-ctx-plugins knows ({expected}): "
                              "upgrade it, or set ctx_plugins.storage.schema to another schema")
    elif found < expected:
        now = "not created yet" if found == 0 else f"at version {found}"
        schema_line = (True, f"{schema} {now}: brought to version {expected} at its first use")
    else:
        schema_line = (True, f"{schema} at version {found}")
    if figures["standby"]:
        schema_line = (False, f"{figures['server']} is a read-only standby: point the DSN at the primary")
    elif figures["privileges"]:
        schema_line = (False, figures["privileges"])
    return [("connection", True, f"{figures['server']} (PostgreSQL {figures['server_version']})"),
            ("schema", *schema_line),
            ("pool", True, f"{figures['pool_size']} of at most {figures['pool_max']} connections open, "
                           f"{figures['pool_available']} idle, {figures['requests_waiting']} requests waiting")]


def _remedy(detail: str) -> str:
    """What to do about a failed connection, from what libpq said."""
    where = f"ctx_plugins.storage.dsn (or ${DSN_ENV})"
    if "database" in detail and "does not exist" in detail:
        return f"create the database (createdb), or point {where} at one that exists"
    if ("role" in detail and "does not exist" in detail) or "authentication failed" in detail:
        return f"check the user and password in {where}, or create the role"
    if "connection info string" in detail or ("invalid" in detail and "dsn" in detail.lower()):
        return f"{where} is not a valid connection string: postgresql://user:password@host:5432/dbname"
    return f"start the server, or point {where} at one that runs"


def release() -> None:
    """Close every connection pool of this process (the next use opens a new one)."""
    Server.close_all()

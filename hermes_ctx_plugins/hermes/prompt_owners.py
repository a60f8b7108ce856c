"""Whose memory a session's stored system prompt holds: a Bridge handing a session id to another owner.

hermes keeps each session's system prompt in its session database (``state.db``) and, when an agent continues a
conversation (``conversation_history`` given), sends that stored prompt again verbatim -- for the provider's prompt
cache. The prompt holds the frozen snapshot of the owner's MEMORY.md / USER.md. A Bridge may give a released session
id to another owner's agent (an id reused, a hand-off in a support queue, a group chat's next speaker): hermes then
sent the first owner's profile in the second owner's prompt, turn after turn, and never the second owner's own (a
red-team pass, session 29). hermes' session rows carry no owner for a Bridge's agents.

:class:`PromptOwners` remembers, per session database and session id, which owner the Bridge last applied an agent
for (a digest of the deployment's namespace and the user id, compared exactly; never the id itself). When
:meth:`~hermes_ctx_plugins.hermes.bridge.DeploymentPlan.apply` binds an id to another owner than the one recorded --
or to an id whose stored prompt nobody recorded (made before this release, or by another program) -- the stored
prompt is cleared, and hermes builds the new owner's at its next turn (a prefix-cache miss once; hermes logs that
the stored prompt was empty). The record is a small SQLite file in a ``ctx_plugins`` folder beside the session
database (``$HERMES_HOME/ctx_plugins`` for hermes' own ``state.db``), shared by every process using that database;
rows unused for :data:`KEEP_DAYS` days are dropped.
"""

from __future__ import annotations

import hashlib
import logging
import sqlite3
import threading
import time
from collections import OrderedDict
from pathlib import Path
from typing import Any

from ..events import SessionInfo

log = logging.getLogger(__name__)

#: days a session id's record is kept after its last use
KEEP_DAYS = 90
#: seconds between two droppings of the rows unused for KEEP_DAYS
PRUNE_EVERY = 86_400.0
#: records (session-database folders) whose connection stays open; the least recently used beyond are closed
MAX_OPEN = 8
_SCHEMA = ("CREATE TABLE IF NOT EXISTS owners (state_db TEXT NOT NULL, session_id TEXT NOT NULL, owner TEXT NOT NULL,"
           " used REAL NOT NULL, PRIMARY KEY (state_db, session_id)) WITHOUT ROWID")


def owner_digest(session: SessionInfo) -> str:
    """The owner of ``session`` as the record keeps it: the deployment's namespace and the user id, exactly (a lone
    surrogate included), in one digest."""
    namespace, user = (part.encode("utf-8", "surrogatepass") for part in (session.deployment, session.user_id))
    if b"\0" not in namespace and b"\0" not in user:
        raw = namespace + b"\0" + user  # the record's form since it was made
    else:  # ("sup\0x", "bob") and ("sup", "x\0bob") were one owner (a red-team pass): the namespace's length parts
        # them, after two NULs no NUL-free owner's form starts with
        raw = b"\0\0" + len(namespace).to_bytes(8, "big") + namespace + user
    return hashlib.sha256(raw).hexdigest()


class PromptOwners:
    """The record in ``path`` (created at first use). A record that cannot be read is set aside and made anew once; one
    another process holds locked is waited for 1 s at most (then the stored prompt is not trusted)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()
        #: held across one apply's read, clear and record (a red-team pass: two owners applying agents on one id at
        #: once recorded in the wrong order, and one kept the other's prompt for good)
        self.applying = threading.Lock()
        self._conn: sqlite3.Connection | None = None
        self._rebuilt = False
        self._pruned = 0.0  # when rows unused for KEEP_DAYS were last dropped

    def _connection(self) -> sqlite3.Connection:
        if self._conn is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            conn = sqlite3.connect(self.path, timeout=1.0, isolation_level=None, check_same_thread=False)
            try:
                conn.execute("PRAGMA journal_mode=WAL")
                conn.execute(_SCHEMA)
            except BaseException:
                conn.close()
                raise
            self._conn = conn
        if time.time() - self._pruned > PRUNE_EVERY:  # at open and once a day: a Bridge runs for weeks (it ran
            self._pruned = time.time()              # only at open; a red-team pass)
            self._conn.execute("DELETE FROM owners WHERE used < ?", (time.time() - KEEP_DAYS * 86_400,))
        return self._conn

    def _run(self, sql: str, params: tuple[Any, ...]) -> list[Any]:
        with self._lock:
            try:
                return self._connection().execute(sql, params).fetchall()
            except sqlite3.DatabaseError as exc:
                if isinstance(exc, sqlite3.OperationalError) or self._rebuilt:  # locked, full, read-only: as it is
                    raise
                self._rebuilt = True  # not a database (any more): set aside once, a new one made
                if self._conn is not None:
                    self._conn.close()
                    self._conn = None
                self.path.replace(self.path.with_name(f"{self.path.name}.broken-{time.time_ns()}"))
                log.warning("the record of session owners %s could not be read (%s): set aside, a new one made",
                            self.path, exc)
                return self._connection().execute(sql, params).fetchall()

    def owner(self, state_db: str, session_id: str) -> str | None:
        """The owner digest recorded for ``session_id`` of ``state_db`` (``None``: none)."""
        rows = self._run("SELECT owner FROM owners WHERE state_db = ? AND session_id = ?",
                         (state_db, _stored(session_id)))
        return str(rows[0][0]) if rows else None

    def record(self, state_db: str, session_id: str, owner: str) -> None:
        self._run("INSERT INTO owners (state_db, session_id, owner, used) VALUES (?, ?, ?, ?) ON CONFLICT "
                  "(state_db, session_id) DO UPDATE SET owner = excluded.owner, used = excluded.used",
                  (state_db, _stored(session_id), owner, time.time()))

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None


def _stored(session_id: str) -> str:
    """A session id as SQLite can store it (a lone surrogate escaped: hermes' ids are plain, a Bridge's may not be)."""
    return session_id.encode("utf-8", "surrogatepass").decode("utf-8", "backslashreplace")


class PromptOwnerRecords:
    """The records, one per folder of a session database (the record lives beside the prompts it speaks for: two
    hermes homes sharing one ``state.db`` share it too); one set per runtime (the hermes room keeps no state in its
    modules)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._records: OrderedDict[Path, PromptOwners] = OrderedDict()  # the most recently used last

    def of(self, folder: Path) -> PromptOwners:
        """The record of ``folder``: one object per folder for the runtime's life (its ``applying`` lock is the
        folder's); the connections of all but the :data:`MAX_OPEN` most recently used are closed, opened again at
        their next use (each holds three files open: a process serving many hermes homes ran out of descriptors;
        a red-team pass)."""
        with self._lock:
            found = self._records.get(folder)
            if found is None:
                found = self._records[folder] = PromptOwners(folder / "ctx_plugins" / "prompt_owners.db")
            self._records.move_to_end(folder)
            idle = list(self._records.values())[:-MAX_OPEN]
        for record in idle:
            record.close()
        return found

    def close(self) -> None:
        with self._lock:
            records, self._records = list(self._records.values()), OrderedDict()
        for record in records:
            record.close()


def forget_foreign_prompt(records: PromptOwnerRecords, agent: Any, session: SessionInfo) -> bool:
    """Clear the stored system prompt of ``agent``'s session in hermes' session database when it may hold another
    owner's memory (see the module docstring); whether it was cleared. The owner is recorded only once the stored
    prompt is known to be theirs or gone: a clear that failed (hermes' database locked) is tried again at the next
    apply (a red-team pass: recorded first, one failed clear left the first owner's prompt in every later turn).
    Never raises: the turn goes on."""
    db = getattr(agent, "_session_db", None)
    if db is None:
        return False
    owner = owner_digest(session)
    owners: PromptOwners | None = None
    state_db: Path | None = None
    located = getattr(db, "db_path", None)
    try:
        if located and str(located) != ":memory:":
            state_db = Path(located).resolve()
            owners = records.of(state_db.parent)
    except (OSError, RuntimeError, TypeError) as exc:
        log.warning("the session database of session %r cannot be located (%s): its stored prompt is not trusted",
                    session.session_id, exc)
    if owners is None:  # no record to ask: the stored prompt is not trusted (cleared at every apply)
        return bool(_clear(db, session))
    with owners.applying:
        return _forget_foreign(owners, str(state_db), db, session, owner)


def _forget_foreign(owners: PromptOwners, state_db: str, db: Any, session: SessionInfo, owner: str) -> bool:
    recorded: str | None = None
    try:
        recorded = owners.owner(state_db, session.session_id)
    except (OSError, sqlite3.Error) as exc:  # our record cannot say: the stored prompt is not trusted
        log.warning("the record of session owners (%s) cannot be used: %s", owners.path, exc)
    if recorded == owner:
        return False
    cleared = _clear(db, session)
    if cleared is None:  # hermes' database could not be asked: tried again at the next apply, nothing recorded
        return False
    try:
        owners.record(state_db, session.session_id, owner)
    except (OSError, sqlite3.Error) as exc:
        log.warning("the record of session owners (%s) cannot be written: %s", owners.path, exc)
    return cleared


def _clear(db: Any, session: SessionInfo) -> bool | None:
    """Clear the stored system prompt of ``session`` in hermes' session database ``db``: whether there was one;
    ``None`` when the database could not be asked (logged)."""
    try:
        row = db.get_session(session.session_id)
        if not (row and row.get("system_prompt")):
            return False
        db.update_system_prompt(session.session_id, None)
    except Exception as exc:  # hermes' database: logged, tried again at the next apply
        log.warning("could not check the stored system prompt of session %r for its owner: %s", session.session_id,
                    exc)
        return None
    log.info("session %r was last applied for another owner (or for none we recorded): its stored system prompt is "
             "cleared, and hermes builds this owner's", session.session_id)
    return True

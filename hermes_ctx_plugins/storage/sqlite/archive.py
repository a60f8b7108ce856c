"""The archive in one SQLite file: the SQLite implementation of
:class:`~hermes_ctx_plugins.storage.base.ArchiveBackend` (its layout: :mod:`.archive_schema`).

WAL, so readers never wait for the writer and several hermes processes can share the file. Search is
FTS5 over the trigram index, ranked by BM25. Every row belongs to one deployment namespace and user
(see :mod:`hermes_ctx_plugins.scope`); reads are always scoped to them, in SQL.

If the database cannot be written (locked past the timeout, corrupt, disk full), the removed
messages go to a JSON-lines spool next to it (see :mod:`hermes_ctx_plugins.storage.spool`) and are
imported at the next successful write: a compaction never loses what it removed.

Over 500 lines because it is one class, the SQLite side of the whole archive contract (writing through the
spool, the limits, forgetting with erasure, search, the embeddings, stats), every part on one connection and
its lock.
"""

from __future__ import annotations

import contextlib
import functools
import json
import logging
import secrets
import sqlite3
import threading
import time
from collections.abc import Callable, Collection, Iterator, Sequence
from pathlib import Path
from typing import Any, TypeVar

from ...events import Forgotten, Message
from ...scope import from_stored, to_stored
from .. import archive_text
from ..base import ArchiveBackend, ArchiveError, ArchiveVector, purge_condition
from ..ranking import LEADING_CHARS
from ..records import ArchiveHit, ArchiveStats, ForgetScope, Scope, Stored, call_ids, message_text, searchable
from ..spool import (
    Entry,
    Spool,
    entry_of,
    forgets,
    import_pending,
    make_entry,
    owners_of,
    redacted,
    repeated,
    spool_path,
    tail_of,
)
from . import fts
from .archive_schema import connect
from .opening import OpenedFile, one_moment
from .state import file_changed, sqlite_state

log = logging.getLogger("hermes_ctx_plugins.archive")

#: what :func:`_stored` reads
_COLUMNS = "m.id, m.session_id, m.user_id, m.namespace, m.compaction_id, m.seq, m.role, m.message, m.created"
#: the most ids one :meth:`ArchiveStore.unembedded` looks up (SQLite binds 32,766 values at most)
_MAX_KEYS = 1_000


def _stored(row: Sequence[Any]) -> Stored:
    """A message from a row of :data:`_COLUMNS`."""
    id_, session_id, user_id, namespace, compaction_id, seq, role, message, created = row
    return Stored(id_, from_stored(session_id), from_stored(user_id), from_stored(namespace), compaction_id, seq,
                  from_stored(role), json.loads(from_stored(message)), created)


_T = TypeVar("_T")

#: how many times a read of an archive this user cannot write is made, a moment apart, while a process changes it
READ_TRIES = 4


def _whole(read: Callable[..., _T]) -> Callable[..., _T]:
    """A read of the store, made whole on an archive opened read-only (this user cannot write it; read as immutable,
    without SQLite's locks): made again from a new opening while the file changed since the opening (a checkpoint by
    the owner's process pairs two moments, in one read or between the pages SQLite kept from an earlier one), up to
    :data:`READ_TRIES` times, then "kept changing". A failure with the file unchanged is the file's. Each read is
    checked alone, not a command's formatting around them (a review: ``archive show`` of 3 MB never succeeded while
    the owner compacted every half second)."""

    @functools.wraps(read)
    def whole(self: ArchiveStore, *args: Any, **kwargs: Any) -> _T:
        if not self._read_only or self._reading:  # a read inside a read (stats' size): checked by the outer one
            return read(self, *args, **kwargs)  # (checked alone, it reopened the store under the outer one, whose
        with self._lock:  # check then compared the file with the new opening: counts of two moments, a review)
            self._reading = True
            try:
                for attempt in range(READ_TRIES):
                    time.sleep(0.05 * attempt)
                    if self._state is not None and file_changed(self._state, sqlite_state(self.path, settle=False)):
                        self.close()
                    try:
                        result = read(self, *args, **kwargs)
                    except (sqlite3.DatabaseError, ArchiveError):
                        if self._state is None or not file_changed(self._state, sqlite_state(self.path,
                                                                                              settle=False)):
                            raise
                    else:
                        if self._state is not None and not file_changed(self._state, sqlite_state(self.path,
                                                                                                  settle=False)):
                            return result
                    self.close()
            finally:
                self._reading = False
        raise ArchiveError(f"the archive {self.path} kept changing while it was read (a process is writing it): run "
                           "the command again")

    return whole


class ArchiveStore(ArchiveBackend):
    """One archive file; safe to share between threads (one connection behind a lock, opened on first use)."""

    def __init__(self, path: Path, *, retention_days: float = 30.0, max_megabytes: float = 256.0,
                 timeout: float = 5.0, read_only: bool = False) -> None:
        """:param read_only: an existing archive read without writing anything (:func:`~.archive_schema.connect`)."""
        self.path = Path(path)
        self._read_only = read_only
        self.spool = Spool(spool_path(self.path))
        self.retention_days = retention_days
        self.max_megabytes = max_megabytes
        self._timeout = timeout
        self._lock = threading.RLock()
        self._db: sqlite3.Connection | None = None
        self._opened: OpenedFile | None = None
        #: read-only: the file's state before the connection opened it, and whether a read is being checked
        #: (:func:`_whole`)
        self._state: tuple[int, ...] | None = None
        self._reading = False

    def _connect(self) -> sqlite3.Connection:
        if self._db is not None and self._opened is not None and self._opened.replaced():
            log.warning("the archive %s was deleted or replaced while it was open: what is archived from now on "
                        "goes into the file now at that path (a new one if none is)", self.path)
            self.close()
        if self._db is None:
            self._state = sqlite_state(self.path) if self._read_only else None
            self._db = connect(self.path, self._timeout, read_only=self._read_only)
            self._opened = OpenedFile(self.path)
        return self._db

    def exists(self) -> bool:
        return self._db is not None or self.path.exists()

    def incarnation(self) -> str:
        """A random number the file keeps from the first time it is asked; "" while there is no file."""
        if not self.exists():
            return ""
        try:
            with self._transaction() as db:
                db.execute("INSERT OR IGNORE INTO archive_meta (key, value) VALUES ('incarnation', ?)",
                           (secrets.randbits(62),))
                return str(db.execute("SELECT value FROM archive_meta WHERE key = 'incarnation'").fetchone()[0])
        except sqlite3.Error as exc:
            raise ArchiveError(f"the archive {self.path} cannot be read: {exc}") from exc

    @contextlib.contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            db = self._connect()
            try:
                db.execute("BEGIN IMMEDIATE")
                yield db
                db.execute("COMMIT")
            except BaseException as exc:
                with contextlib.suppress(sqlite3.Error):
                    db.execute("ROLLBACK")
                if isinstance(exc, sqlite3.Error) and not _locked(exc):
                    # a connection opened while the file could not be written is read-only for good (SQLite
                    # falls back to it silently): the next write opens a new one, which can once it can
                    self.close()
                raise

    def close(self) -> None:
        with self._lock:
            if self._db is not None:
                self._db.close()
                self._db = None

    # -- writing ------------------------------------------------------------------------------
    def record(self, *, session_id: str, user_id: str, strategy: str, removed: Sequence[tuple[int, Message]],
               tokens_before: int = 0, tokens_after: int = 0, namespace: str = "",
               cited: Callable[[int], bool] | None = None, owners: Sequence[str] | None = None) -> list[int]:
        """Before anything else, what the spool holds is imported; when the database cannot take
        these, they are spooled (fsynced) instead."""
        clean = [(position, redacted(message)) for position, message in removed]
        compaction = make_entry(namespace=namespace, session_id=session_id, user_id=user_id, strategy=strategy,
                                removed=clean, tokens_before=tokens_before, tokens_after=tokens_after, owners=owners)
        messages = [message for _, message in clean]

        def insert(entry: Entry) -> list[int]:  # this compaction's messages are at hand: not decoded again
            if entry is compaction:
                return self._insert(entry, messages=messages, cited=cited)
            # one the spool held: the conversation it was made from is gone, so whether it cites the compaction
            # before it cannot be told; stored as it is (a later compaction is never merged into an earlier one)
            return self._insert(entry, once=False)

        return self.spool.deliver(compaction, insert, store=self.path)

    def import_spooled(self, *, wait: bool = True) -> int:
        return import_pending(self.spool, lambda entry: self._insert(entry, once=False), self.path, wait=wait)

    def restore(self, entry: Entry) -> list[int]:
        try:
            return self._insert(entry, limits=False, once=False)
        except sqlite3.Error as exc:
            raise ArchiveError(f"the archive {self.path} cannot be written: {exc}") from exc

    def compactions(self) -> Iterator[Entry]:
        after = 0
        while True:  # a page at a time: the lock is not held while the caller works
            with self._lock:
                try:
                    db = self._connect()
                    rows = db.execute("SELECT id, namespace, session_id, user_id, strategy, created, tokens_before, "
                                      "tokens_after FROM compactions WHERE id > ? ORDER BY id LIMIT 200",
                                      (after,)).fetchall()
                    removed: dict[int, list[tuple[int, str]]] = {row[0]: [] for row in rows}
                    owners: dict[int, list[str]] = {row[0]: [] for row in rows}
                    for compaction, position, message, user in db.execute(
                            "SELECT compaction_id, position, message, user_id FROM messages WHERE compaction_id > ? "
                            "AND compaction_id <= ? ORDER BY compaction_id, seq", (after, rows[-1][0] if rows else 0)):
                        removed[compaction].append((position, message))
                        owners[compaction].append(user)
                except sqlite3.Error as exc:
                    raise ArchiveError(f"the archive {self.path} cannot be read: {exc}") from exc
            if not rows:
                return
            for id_, namespace, session_id, user_id, strategy, created, before, after_tokens in rows:
                yield entry_of(namespace=namespace, session_id=session_id, user_id=user_id, strategy=strategy,
                               created=created, tokens_before=before, tokens_after=after_tokens, removed=removed[id_],
                               owners=owners[id_])
            after = rows[-1][0]

    def _insert(self, entry: Entry, *, limits: bool = True, messages: Sequence[Message] | None = None,
                once: bool = True, cited: Callable[[int], bool] | None = None) -> list[int]:
        """Write one spool-form entry (everything in it already in stored form), then apply the
        retention and the size bound if ``limits``. ``messages``: the entry's messages decoded, if
        the caller has them. ``once``: the session's latest compaction made again is not stored again
        (:func:`~hermes_ctx_plugins.storage.spool.repeated`); a restore copies what it is given."""
        owner = (entry["namespace"], entry["session_id"], entry["user_id"])
        with self._transaction() as db:
            again = self._latest_again(db, owner, entry["removed"]) if once else []
            if again and cited is not None and cited(again[0][0]):
                again = []  # the conversation cites that compaction: a later one, which repeats its messages
            kept = repeated([message for _, message in again], entry["removed"])
            if kept and kept == len(entry["removed"]):
                return [id_ for id_, _ in again]  # the same compaction again: nothing new to store
            entry = tail_of(entry, kept)
            messages = messages[kept:] if messages is not None else None
            cursor = db.execute(
                "INSERT INTO compactions (namespace, session_id, user_id, strategy, created, removed, tokens_before, "
                "tokens_after) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (*owner, entry["strategy"], entry["created"], len(entry["removed"]), entry["tokens_before"],
                 entry["tokens_after"]))
            compaction = cursor.lastrowid
            seq = db.execute("SELECT coalesce(max(seq), 0) FROM messages WHERE namespace = ? AND session_id = ?",
                             owner[:2]).fetchone()[0]
            # ids are never reused (SQLite would reuse a deleted largest rowid): a vector the embedding thread
            # made of a message purged meanwhile must never land on a new message under its id
            last = db.execute("SELECT max(coalesce((SELECT max(id) FROM messages), 0), coalesce((SELECT value FROM "
                              "archive_meta WHERE key = 'last_message_id'), 0))").fetchone()[0]
            ids = [id_ for id_, _ in again[:kept]]
            for n, ((position, stored), speaker) in enumerate(zip(entry["removed"], owners_of(entry), strict=True)):
                message = messages[n] if messages is not None else json.loads(from_stored(stored))
                seq += 1
                last += 1
                db.execute(
                    "INSERT INTO messages (id, namespace, session_id, user_id, compaction_id, seq, position, role, "
                    "tool_call_id, call_ids, text, message, created) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (last, *owner[:2], speaker, compaction, seq, position, to_stored(str(message.get("role") or "")),
                     to_stored(str(message.get("tool_call_id") or "")), to_stored(" ".join(call_ids(message))),
                     searchable(message_text(message)), stored, entry["created"]))
                ids.append(last)
            db.execute("INSERT INTO archive_meta (key, value) VALUES ('last_message_id', ?) ON CONFLICT (key) "
                       "DO UPDATE SET value = max(value, excluded.value)", (last,))
        if limits:
            self._enforce_limits()
        return ids

    @staticmethod
    def _latest_again(db: sqlite3.Connection, owner: tuple[str, str, str],
                      removed: Sequence[Sequence[Any]]) -> list[tuple[int, str]]:
        """The ids and messages of the owner's latest compaction, when it opens as ``removed`` does (read whole
        only then: a compaction may hold megabytes)."""
        latest = db.execute("SELECT max(id) FROM compactions WHERE namespace = ? AND session_id = ? AND user_id = ?",
                            owner).fetchone()[0]
        first = db.execute("SELECT message FROM messages WHERE compaction_id = ? ORDER BY seq LIMIT 1",
                           (latest,)).fetchone() if latest is not None and removed else None
        if first is None or first[0] != removed[0][1]:
            return []
        return db.execute("SELECT id, message FROM messages WHERE compaction_id = ? ORDER BY seq", (latest,)).fetchall()

    # -- limits -------------------------------------------------------------------------------
    def _enforce_limits(self) -> None:
        purged = 0
        if self.retention_days:
            purged += self.purge(older_than_days=self.retention_days)
        if self.max_megabytes and self.size_bytes() > self.max_megabytes * 1_000_000:
            purged += self._shrink()
        if purged:
            log.info("archive %s: purged %d old compactions (retention %g days, bound %g MB)",
                     self.path, purged, self.retention_days, self.max_megabytes)

    def _shrink(self) -> int:
        """Delete the oldest compactions while the archive is over its bound, in one transaction,
        and give the space back to the file system once; returns how many went. The size counts the
        pages in use, and a delete frees its pages at once, so it is read again after each delete
        without a vacuum in between."""
        deleted = 0
        with self._transaction() as db:
            while self.size_bytes() > self.max_megabytes * 1_000_000:
                # never the newest: what was just archived stays, even alone over the bound
                oldest = db.execute("SELECT id FROM compactions WHERE id < (SELECT max(id) FROM compactions) "
                                    "ORDER BY created, id LIMIT 1").fetchone()
                if oldest is None:
                    break
                self._delete_compactions(db, list(oldest))
                deleted += 1
        if deleted:
            self._vacuum()
        return deleted

    def _vacuum(self) -> None:
        with self._lock:
            db = self._connect()
            db.execute("PRAGMA incremental_vacuum")
            db.execute("PRAGMA wal_checkpoint(TRUNCATE)")

    @_whole
    def size_bytes(self) -> int:
        with self._lock:
            db = self._connect()
            pages = db.execute("PRAGMA page_count").fetchone()[0] - db.execute("PRAGMA freelist_count").fetchone()[0]
            return int(pages * db.execute("PRAGMA page_size").fetchone()[0])

    @staticmethod
    def _delete_compactions(db: sqlite3.Connection, ids: Sequence[int]) -> int:
        """Delete these compactions and their messages (the trigger drops their index entries);
        returns how many messages went."""
        messages = 0
        for chunk in range(0, len(ids), 500):
            some = ids[chunk:chunk + 500]
            marks = ",".join("?" * len(some))
            messages += db.execute(f"DELETE FROM messages WHERE compaction_id IN ({marks})", some).rowcount
            db.execute(f"DELETE FROM compactions WHERE id IN ({marks})", some)
        return messages

    def purge(self, *, session_id: str | None = None, user_id: str | None = None,
              older_than_days: float | None = None, everything: bool = False,
              namespace: str | None = None) -> int:
        condition, args = purge_condition(session_id=session_id, user_id=user_id, namespace=namespace,
                                          older_than_days=older_than_days, everything=everything, mark="?",
                                          written=to_stored)
        with self._transaction() as db:
            ids = [row[0] for row in db.execute(f"SELECT id FROM compactions WHERE {condition}", args)]
            self._delete_compactions(db, ids)
        if ids:
            self._vacuum()
        return len(ids)

    # -- forgetting a user --------------------------------------------------------------------
    def forget_user(self, user_id: str, *, namespaces: Collection[str] | None = None) -> list[Forgotten]:
        """The spool's entries of the user go too (both spool files rewritten atomically, keeping
        everyone else's), and the database file is rewritten so the deleted text is gone from its
        bytes, not merely unlinked: the full-text index merged, the file VACUUMed, the write-ahead
        log checkpointed and truncated. Safe to run in another process than the ones archiving (the
        command line): the spool and the database have cross-process locks."""
        owner = ForgetScope.of(user_id, namespaces, written=to_stored)
        exists = self.exists()  # forgetting never creates an archive
        removed, notes, errors = 0, [], []
        if exists:
            try:
                owner.sessions |= self._sessions_of(owner)
            except ArchiveError as exc:  # its message says what (a file this user cannot write, a damaged one)
                errors.append(str(exc))
                exists = False
            except sqlite3.Error as exc:
                errors.append(f"the archive could not be read: {exc}")
                exists = False
        try:
            owner.sessions |= {(e["namespace"], e["session_id"]) for e in self.spool.entries()
                               if any(owner.spoke_in(e["namespace"], user) for user in set(owners_of(e)))}
            spooled = self.spool.forget(lambda e: forgets(e, owner), user=user_id)
        except OSError as exc:
            errors.append(f"the spool {self.spool.path} could not be cleared: {exc}")
        else:
            removed += spooled
            if spooled:
                notes.append(f"{spooled} of them from the spool {self.spool.path}")
        if exists:
            try:
                archived, unattributed = self._forget_archived(owner)
                removed += archived
                if unattributed:
                    notes.append(ForgetScope.kept_note(unattributed))
                if archived:
                    errors += self._erase_deleted()
            except (ArchiveError, sqlite3.Error, OSError) as exc:
                errors.append(f"the archive could not be cleared: {exc}")
        return [Forgotten(store=f"archive {self.path}", removed=removed, detail="; ".join(notes),
                          error="; ".join(errors))]

    def _sessions_of(self, owner: ForgetScope) -> set[tuple[str, str]]:
        """The (namespace, session) pairs in which the user has archived messages of their own."""
        with self._lock:
            rows = self._connect().execute(  # a shared session's messages are each their speaker's: see record
                "SELECT DISTINCT namespace, session_id FROM compactions WHERE user_id = ? UNION "
                "SELECT DISTINCT namespace, session_id FROM messages WHERE user_id = ?", (owner.user,) * 2).fetchall()
        return {(namespace, session) for namespace, session in rows if owner.spoke_in(namespace, owner.user)}

    def _forget_archived(self, owner: ForgetScope) -> tuple[int, int]:
        """Delete the user's compactions; returns (messages removed, unattributable messages kept)."""
        with self._transaction() as db:
            rows = db.execute("SELECT id, namespace, session_id, user_id FROM compactions WHERE user_id IN (?, '')",
                              (owner.user,)).fetchall()
            chosen = {row[0] for row in rows if owner.owns(*row[1:])}
            chosen |= {compaction for compaction, namespace, session, user in db.execute(  # holding a turn of theirs,
                "SELECT DISTINCT compaction_id, namespace, session_id, user_id FROM messages WHERE user_id IN (?, '')",
                (owner.user,)) if owner.owns(namespace, session, user)}  # or nobody's in a session of theirs
            removed = self._delete_compactions(db, sorted(chosen))
            kept = 0
            if owner.user:
                kept = sum(count for namespace, count in db.execute(
                    "SELECT namespace, count(*) FROM messages WHERE user_id = '' GROUP BY namespace")
                    if owner.spaces is None or namespace in owner.spaces)
        return removed, kept

    def _erase_deleted(self) -> list[str]:
        """Rewrite the file so deleted rows leave no bytes behind; returns what could not be done."""
        with self._lock:
            db = self._connect()
            # FTS5 only marks deletions until its segments are merged; VACUUM rewrites every page
            # (freed ones still held the text); TRUNCATE empties the WAL, which held it too
            db.execute("INSERT INTO messages_fts(messages_fts) VALUES ('optimize')")
            db.execute("VACUUM")
            busy = db.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()[0]
        if busy:
            return [f"another process is reading {self.path}, so its write-ahead log could not be emptied: the "
                    "deleted text stays in the -wal file until the next checkpoint (run the command again)"]
        return []

    # -- reading ------------------------------------------------------------------------------
    @staticmethod
    def _scope_sql(scope: Scope, alias: str = "m") -> tuple[str, list[str]]:
        if scope.everything:
            return "1", []
        namespace = to_stored(scope.namespace)
        if scope.all_sessions and scope.user_id is not None:
            return f"{alias}.namespace = ? AND {alias}.user_id = ?", [namespace, to_stored(scope.user_id)]
        sessions = [to_stored(s) for s in scope.sessions]
        within = f"{alias}.session_id IN ({', '.join('?' * len(sessions))})"
        if scope.user_id is None:
            return f"{alias}.namespace = ? AND {within}", [namespace, *sessions]
        return (f"{alias}.namespace = ? AND {within} AND {alias}.user_id = ?",  # exactly: see Scope.sees
                [namespace, *sessions, to_stored(scope.user_id)])

    @_whole
    def search(self, text: str, scope: Scope, *, limit: int = 5) -> list[ArchiveHit]:
        phrases, short = archive_text.phrases(searchable(text))  # the query spelt as the text is stored
        if not phrases and not short:
            return []
        where, args = self._scope_sql(scope)
        with self._lock:
            db = self._connect()
            if phrases:
                match = fts.archive_match(phrases)
                found = db.execute(
                    "SELECT m.id, m.session_id, m.compaction_id, m.role, m.created, length(m.text), m.namespace, "
                    "-bm25(messages_fts) FROM messages_fts JOIN messages m ON m.id = messages_fts.rowid "
                    f"WHERE messages_fts MATCH ? AND {where} ORDER BY bm25(messages_fts), m.id DESC LIMIT ?",
                    [match, *args, limit]).fetchall()
                snippets = fts.snippets(db, match, phrases, [(row[0], row[5]) for row in found])
                rows = [(*row[:5], snippets.get(row[0], ""), *row[6:]) for row in found]
            else:  # only terms too short for trigrams (two Chinese characters, say)
                likes = fts.like_patterns(short)
                conditions = " AND ".join("m.text LIKE ? ESCAPE '\\'" for _ in likes)
                rows = db.execute(
                    "SELECT m.id, m.session_id, m.compaction_id, m.role, m.created, "
                    f"substr(m.text, 1, {LEADING_CHARS}), m.namespace, 0.0 FROM messages m WHERE {conditions} "
                    f"AND {where} ORDER BY m.id DESC LIMIT ?",
                    [*likes, *args, limit]).fetchall()
        return [ArchiveHit(id_, from_stored(session_id), compaction_id, from_stored(role), created,
                           from_stored(snippet), from_stored(namespace), float(relevance))
                for id_, session_id, compaction_id, role, created, snippet, namespace, relevance in rows]

    # -- embeddings -------------------------------------------------------------------------
    dense = True

    def unembedded(self, model: str, *, keys: Sequence[int] | None = None, below: int | None = None,
                   limit: int = 16) -> list[Stored]:
        lacking = "NOT EXISTS (SELECT 1 FROM archive_vectors v WHERE v.message_id = m.id AND v.model = ?)"
        if keys is not None:
            wanted = [int(key) for key in keys][:_MAX_KEYS]
            if not wanted:
                return []
            sql = (f"SELECT {_COLUMNS} FROM messages m WHERE m.id IN ({','.join('?' * len(wanted))}) AND {lacking} "
                   "ORDER BY m.id DESC LIMIT ?")
            args: list[Any] = [*wanted, model, limit]
        else:
            # newest first down the rowid, so a backlog is walked once, however many have vectors
            bound, args = ("m.id < ? AND", [below]) if below is not None else ("", [])
            sql = f"SELECT {_COLUMNS} FROM messages m WHERE {bound} {lacking} ORDER BY m.id DESC LIMIT ?"
            args += [model, limit]
        with self._lock:
            try:
                rows = self._connect().execute(sql, args).fetchall()
            except sqlite3.Error as exc:
                raise ArchiveError(f"the archive {self.path} cannot be read: {exc}") from exc
        return [_stored(row) for row in rows]

    def put_vectors(self, model: str, vectors: Sequence[tuple[int, bytes]]) -> int:
        if not vectors:
            return 0
        # a message deleted meanwhile selects nothing: no vector without its message
        sql = ("INSERT INTO archive_vectors (message_id, model, vector) SELECT id, ?, ? FROM messages WHERE id = ?"
               " ON CONFLICT (message_id) DO UPDATE SET model = excluded.model, vector = excluded.vector"
               # the same model's vector again (two hosts walking one backlog) is left alone: replacing it
               # would bump the generation and void every cache for nothing
               " WHERE archive_vectors.model <> excluded.model")
        try:
            with self._transaction() as db:
                return sum(db.execute(sql, (model, bytes(vector), int(ident))).rowcount for ident, vector in vectors)
        except sqlite3.Error as exc:
            raise ArchiveError(f"the archive {self.path} cannot be written: {exc}") from exc

    @_whole
    def vectors(self, model: str, scope: Scope, *, after: int = 0) -> list[ArchiveVector]:
        where, args = self._scope_sql(scope)
        with self._lock:
            try:
                rows = self._connect().execute(
                    "SELECT v.seq, v.message_id, v.vector FROM archive_vectors v JOIN messages m "
                    "ON m.id = v.message_id WHERE v.seq > ? AND v.model = ? AND length(v.vector) > 0 "
                    f"AND {where} ORDER BY v.seq",
                    [int(after), model, *args]).fetchall()
            except sqlite3.Error as exc:
                raise ArchiveError(f"the archive {self.path} cannot be read: {exc}") from exc
        return [ArchiveVector(seq, ident, vector) for seq, ident, vector in rows]

    @_whole
    def vector_generation(self) -> int:
        with self._lock:
            try:
                row = self._connect().execute(
                    "SELECT value FROM archive_meta WHERE key = 'vector_generation'").fetchone()
            except sqlite3.Error as exc:
                raise ArchiveError(f"the archive {self.path} cannot be read: {exc}") from exc
        return int(row[0]) if row else 0

    @_whole
    def get(self, ids: Sequence[int], scope: Scope) -> list[Stored]:
        if not ids:
            return []
        where, args = self._scope_sql(scope)
        marks = ",".join("?" * len(ids))
        with self._lock:
            rows = self._connect().execute(
                f"SELECT {_COLUMNS} FROM messages m WHERE m.id IN ({marks}) AND {where} "
                "ORDER BY m.namespace, m.session_id, m.seq", [*ids, *args]).fetchall()
        return [_stored(row) for row in rows]

    @_whole
    def partners(self, stored: Stored, scope: Scope) -> list[Stored]:
        where, args = self._scope_sql(scope)
        where = f"m.namespace = ? AND m.session_id = ? AND {where}"
        args = [to_stored(stored.namespace), to_stored(stored.session_id), *args]
        message = stored.message
        with self._lock:
            db = self._connect()
            if message.get("tool_calls"):
                ids = [to_stored(i) for i in call_ids(message)]
                if not ids:
                    return []
                marks = ",".join("?" * len(ids))
                rows = db.execute(f"SELECT {_COLUMNS} FROM messages m WHERE m.tool_call_id IN ({marks}) AND {where} "
                                  "ORDER BY m.seq", [*ids, *args]).fetchall()
            elif message.get("tool_call_id"):
                [pattern] = fts.like_patterns([to_stored(str(message["tool_call_id"]))])
                rows = db.execute(f"SELECT {_COLUMNS} FROM messages m WHERE m.call_ids LIKE ? ESCAPE '\\' "
                                  f"AND {where} ORDER BY m.seq", [pattern, *args]).fetchall()
            else:
                return []
        found = [_stored(row) for row in rows]
        if message.get("tool_call_id"):  # LIKE may over-match a prefix: check the exact id
            found = [s for s in found if str(message["tool_call_id"]) in call_ids(s.message)]
        return found

    @property
    def spool_imports(self) -> int:
        return self.spool.imported

    @_whole
    def stats(self) -> ArchiveStats:
        with self._lock:
            db = self._connect()
            with one_moment(db):  # the three counts of one moment (a process archiving meanwhile)
                compactions, sessions = db.execute(
                    "SELECT count(*), count(DISTINCT namespace || char(0) || session_id) FROM compactions").fetchone()
                users, namespaces = db.execute("SELECT count(*), count(DISTINCT namespace) FROM "
                                               "(SELECT DISTINCT namespace, user_id FROM compactions)").fetchone()
                messages, oldest, newest = db.execute(
                    "SELECT count(*), min(created), max(created) FROM messages").fetchone()
        return {"path": str(self.path), "compactions": compactions, "messages": messages, "sessions": sessions,
                "users": users, "namespaces": namespaces, "oldest": oldest, "newest": newest,
                "bytes": self.size_bytes(), "spooled": self.spool.count(lock=False), "spool": self.spool.where(),
                "retention_days": self.retention_days, "max_megabytes": self.max_megabytes}


def _locked(exc: sqlite3.Error) -> bool:
    """Whether ``exc`` says another connection holds a lock (SQLITE_BUSY / SQLITE_LOCKED: wait, keep the
    connection), not that this one cannot do what it was asked (read-only, I/O, a damaged file: reopen)."""
    code = getattr(exc, "sqlite_errorcode", None)
    if code is not None:
        return code & 0xFF in (5, 6)
    text = str(exc).lower()
    return "locked" in text or "busy" in text


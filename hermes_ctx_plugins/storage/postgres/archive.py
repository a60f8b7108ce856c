"""The archive on a PostgreSQL server: the PostgreSQL implementation of
:class:`~hermes_ctx_plugins.storage.base.ArchiveBackend` (its tables: :mod:`.schema`).

A search finds each phrase as a substring of the case-folded text (``LIKE``, served by a trigram
index where the server has ``pg_trgm``) and ranks and quotes as
:mod:`~hermes_ctx_plugins.storage.ranking` defines — what SQLite's FTS5 trigram index computes — with
the statistics of every message of the location. A compaction the server refuses (down, full, a lock
held too long) goes to the spool beside the location, on this machine, and is imported at the next
write that works (:meth:`Spool.deliver <hermes_ctx_plugins.storage.spool.Spool.deliver>`). Writes of
one location are serialised by an advisory lock, so each session's ``seq`` grows without gaps or
doubles whichever worker archives. ``size_bytes`` counts the live rows of the location (the byte
length of each message's JSON and text), never the table's size on disk.

Over 500 lines for the reason its SQLite twin is: one class, the whole archive contract, on one server's rows.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable, Collection, Iterator, Sequence
from pathlib import Path
from typing import Any

from ...events import Forgotten, Message
from ...scope import from_stored, to_stored
from .. import archive_text
from ..base import ArchiveBackend, ArchiveError, ArchiveVector, purge_condition
from ..ranking import LEADING_CHARS, bm25, folded, snippet, substring_count
from ..records import ArchiveHit, ArchiveStats, ForgetScope, Scope, Stored, call_ids, message_text, searchable
from ..spool import (
    Entry,
    Spool,
    UnstorableEntry,
    entry_of,
    forgets,
    import_pending,
    make_entry,
    owners_of,
    redacted,
    repeated,
    spool_path,
)
from .connection import Server, fail, location_key, refused, unbounded
from .schema import lock_id
from .text import stored

log = logging.getLogger("hermes_ctx_plugins.archive")

_COLUMNS = "m.id, m.session_id, m.user_id, m.namespace, m.compaction_id, m.seq, m.role, m.message, m.created"


def _pg(value: str) -> str:
    """A value already in :func:`~hermes_ctx_plugins.scope.to_stored` form (the spool's) as PostgreSQL keeps it."""
    return value.replace("\x00", "\\u0000")


def _spooled(value: str) -> str:
    """A value as PostgreSQL keeps it, back in the spool's stored form (the inverse of :func:`_pg`)."""
    return to_stored(from_stored(value))


def _stored(row: Sequence[Any]) -> Stored:
    id_, session_id, user_id, namespace, compaction_id, seq, role, message, created = row
    return Stored(id_, from_stored(session_id), from_stored(user_id), from_stored(namespace), compaction_id, seq,
                  from_stored(role), json.loads(from_stored(message)), created)


def _like(text: str) -> str:
    return "%" + text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"


class PostgresArchive(ArchiveBackend):
    """The archive of one location on a PostgreSQL server; any thread may call it. Connects at first use."""

    def __init__(self, path: Path, server_of: Callable[[], Server], *, retention_days: float = 30.0,
                 max_megabytes: float = 256.0) -> None:
        self.path = Path(path)
        self.location = location_key(self.path)
        self.spool = Spool(spool_path(self.path))
        self.retention_days = retention_days
        self.max_megabytes = max_megabytes
        self._server_of = server_of  # the pool is made at the first use, not when the archive is opened

    @property
    def _server(self) -> Server:
        return self._server_of()

    @property
    def _where(self) -> str:
        return f"{self.location} on {self._server.shown}"

    def _lock_id(self) -> int:
        return lock_id("hermes-ctx archive", self._server.schema, self.location)

    def _fetch(self, sql: str, args: Sequence[Any] | dict[str, Any] = ()) -> list[tuple[Any, ...]]:
        try:
            with self._server.connection() as conn:
                return conn.execute(sql, args).fetchall()
        except ArchiveError:
            raise
        except Exception as exc:
            fail(self._where, exc, archive=True)

    def close(self) -> None:
        """Nothing of its own to release: the connections belong to the process's pool."""

    def incarnation(self) -> str:
        """When the server's row naming this archive was made (at its first compaction): "" before."""
        rows = self._fetch("SELECT created FROM stores WHERE location = %s AND kind = 'archive'", (self.location,))
        return repr(float(rows[0][0])) if rows else ""

    def exists(self) -> bool:
        try:
            return bool(self._fetch("SELECT 1 FROM stores WHERE location = %s AND kind = 'archive'", (self.location,)))
        except Exception:
            if self.spool.pending():  # what the server refused waits in the spool: an archive all the same
                return True
            raise  # a server that cannot answer is not "no archive yet"

    # -- writing ------------------------------------------------------------------------------------
    def record(self, *, session_id: str, user_id: str, strategy: str, removed: Sequence[tuple[int, Message]],
               tokens_before: int = 0, tokens_after: int = 0, namespace: str = "",
               cited: Callable[[int], bool] | None = None, owners: Sequence[str] | None = None) -> list[int]:
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
        return self._insert(entry, limits=False, once=False)

    def compactions(self) -> Iterator[Entry]:
        after = 0
        while True:  # a page at a time
            rows = self._fetch("SELECT id, namespace, session_id, user_id, strategy, created, tokens_before, "
                               "tokens_after FROM compactions WHERE location = %s AND id > %s ORDER BY id LIMIT 200",
                               (self.location, after))
            if not rows:
                return
            removed: dict[int, list[tuple[int, str]]] = {row[0]: [] for row in rows}
            owners: dict[int, list[str]] = {row[0]: [] for row in rows}
            for compaction, position, message, user in self._fetch(
                    "SELECT compaction_id, position, message, user_id FROM messages WHERE compaction_id = ANY(%s) "
                    "ORDER BY compaction_id, seq", ([row[0] for row in rows],)):
                removed[compaction].append((position, _spooled(message)))
                owners[compaction].append(_spooled(user))
            for id_, namespace, session_id, user_id, strategy, created, before, after_tokens in rows:
                yield entry_of(namespace=_spooled(namespace), session_id=_spooled(session_id),
                               user_id=_spooled(user_id), strategy=_spooled(strategy), created=created,
                               tokens_before=before, tokens_after=after_tokens, removed=removed[id_],
                               owners=owners[id_])
            after = rows[-1][0]

    def _insert(self, entry: Entry, *, limits: bool = True, messages: Sequence[Message] | None = None,
                once: bool = True, cited: Callable[[int], bool] | None = None) -> list[int]:
        """Write one spool-form entry, then apply the retention and the size bound if ``limits``.
        ``messages``: the entry's messages decoded, if the caller has them. ``once``: the session's latest
        compaction made again is not stored again (:func:`~hermes_ctx_plugins.storage.spool.repeated`)."""
        owner = (_pg(entry["namespace"]), _pg(entry["session_id"]), _pg(entry["user_id"]))
        rows = []
        speakers = [_pg(user) for user in owners_of(entry)]
        for n, (position, text) in enumerate(entry["removed"]):
            message = messages[n] if messages is not None else json.loads(from_stored(text))
            body = searchable(message_text(message))
            role, call = str(message.get("role") or ""), str(message.get("tool_call_id") or "")
            rows.append((position, stored(role), stored(call), [stored(i) for i in call_ids(message)], _pg(text), body,
                         folded(body), speakers[n]))
        try:
            with self._server.transaction(lock=self._lock_id(), lock_timeout=5.0) as conn:
                if any(self._forgotten(conn, (*owner[:2], user), entry["created"])  # any speaker's: see forget_user
                       for user in dict.fromkeys((owner[2], *speakers))):
                    log.info("archive %s: a compaction of a user forgotten since it was made is dropped", self._where)
                    return []
                conn.execute("INSERT INTO stores (location, kind, created) VALUES (%s, 'archive', %s) "
                             "ON CONFLICT DO NOTHING", (self.location, time.time()))
                again = self._latest_again(conn, owner, rows[0][4] if rows else None) if once else []
                if again and cited is not None and cited(int(again[0][0])):
                    again = []  # the conversation cites that compaction: a later one, which repeats its messages
                kept = repeated([message for _, message in again], [(p, text) for p, _, _, _, text, _, _, _ in rows])
                if kept and kept == len(rows):
                    return [int(id_) for id_, _ in again]  # the same compaction again: nothing new to store
                rows = rows[kept:]
                compaction = conn.execute(
                    "INSERT INTO compactions (location, namespace, session_id, user_id, strategy, created, removed, "
                    "tokens_before, tokens_after) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s) RETURNING id",
                    (self.location, *owner, _pg(entry["strategy"]), entry["created"], len(rows),
                     entry["tokens_before"], entry["tokens_after"])).fetchone()[0]  # type: ignore[index]
                seq = conn.execute("SELECT coalesce(max(seq), 0) FROM messages WHERE location = %s AND namespace = %s "
                                   "AND session_id = %s", (self.location, *owner[:2])).fetchone()[0]  # type: ignore[index]
                ids = [int(id_) for id_, _ in again[:kept]]
                with conn.cursor() as cursor:
                    for position, role, tool_call_id, calls, text, body, fold, speaker in rows:
                        seq += 1
                        cursor.execute(
                            "INSERT INTO messages (location, compaction_id, namespace, session_id, user_id, seq, "
                            "position, role, tool_call_id, call_ids, message, text, folded, length, size, created) "
                            "VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s) RETURNING id",
                            (self.location, compaction, *owner[:2], speaker, seq, position, role, tool_call_id, calls,
                             text, body, fold, max(len(fold) - 2, 0),
                             len(text.encode("utf-8")) + len(body.encode("utf-8")), entry["created"]))
                        ids.append(int(cursor.fetchone()[0]))  # type: ignore[index]
        except Exception as exc:
            if refused(exc):  # a value the server refuses: it would refuse it forever
                raise UnstorableEntry(f"the archive {self._where} refuses it: {' '.join(str(exc).split())}") from exc
            fail(self._where, exc, archive=True)  # the store's (a newer schema, another encoding): spooled, retried
        if limits:
            self._enforce_limits(compaction)
        return ids

    def _latest_again(self, conn: Any, owner: tuple[str, str, str], first: str | None) -> list[Any]:
        """The ids and messages of the owner's latest compaction, when it opens with ``first`` (read whole only
        then: a compaction may hold megabytes)."""
        latest = conn.execute("SELECT max(id) FROM compactions WHERE location = %s AND namespace = %s AND "
                              "session_id = %s AND user_id = %s", (self.location, *owner)).fetchone()[0]
        if latest is None or first is None:
            return []
        opening = conn.execute("SELECT message FROM messages WHERE location = %s AND compaction_id = %s ORDER BY seq "
                               "LIMIT 1", (self.location, latest)).fetchone()
        if opening is None or opening[0] != first:
            return []
        return list(conn.execute("SELECT id, message FROM messages WHERE location = %s AND compaction_id = %s "
                                 "ORDER BY seq", (self.location, latest)).fetchall())

    def _enforce_limits(self, newest: int) -> None:
        purged = 0
        if self.retention_days:
            purged += self.purge(older_than_days=self.retention_days)
        bound = self.max_megabytes * 1_000_000
        while self.max_megabytes and (excess := self.size_bytes() - bound) > 0:  # again only if others wrote
            oldest = self._oldest_over(excess, newest)
            if not oldest:
                break
            purged += self._delete("id = ANY(%s)", [oldest])[0]
        if purged:
            log.info("archive %s: purged %d old compactions (retention %g days, bound %g MB)",
                     self._where, purged, self.retention_days, self.max_megabytes)

    def _oldest_over(self, excess: float, newest: int) -> list[int]:
        """The oldest compactions (never ``newest``: what was just archived stays, even alone over
        the bound) that hold ``excess`` bytes between them, oldest first: each one while those
        before it hold less, in one query rather than a size query per deletion."""
        rows = self._fetch(
            "SELECT id FROM (SELECT c.id, sum(coalesce(s.size, 0)) OVER (ORDER BY c.created, c.id) "
            "- coalesce(s.size, 0) AS before FROM compactions c LEFT JOIN (SELECT compaction_id, sum(size) AS size "
            "FROM messages WHERE location = %s GROUP BY compaction_id) s ON s.compaction_id = c.id "
            "WHERE c.location = %s AND c.id <> %s) sized WHERE before < %s",
            (self.location, self.location, newest, excess))
        return [row[0] for row in rows]

    def _delete(self, condition: str, args: Sequence[Any]) -> tuple[int, int]:
        """Delete the compactions matching ``condition`` with their messages; (compactions, messages)."""
        try:
            with self._server.transaction(lock=self._lock_id(), lock_timeout=5.0) as conn:
                ids = [r[0] for r in conn.execute(f"SELECT id FROM compactions WHERE location = %s AND {condition}",
                                                  (self.location, *args)).fetchall()]
                if not ids:
                    return 0, 0
                messages = conn.execute("DELETE FROM messages WHERE compaction_id = ANY(%s)", (ids,)).rowcount
                conn.execute("DELETE FROM compactions WHERE id = ANY(%s)", (ids,))
                return len(ids), messages
        except Exception as exc:
            fail(self._where, exc, archive=True)

    def size_bytes(self) -> int:
        return int(self._fetch("SELECT (SELECT coalesce(sum(size), 0) FROM messages WHERE location = %s) + "
                               "(SELECT coalesce(sum(length(vector)), 0) FROM archive_vectors WHERE location = %s)",
                               (self.location, self.location))[0][0])

    def purge(self, *, session_id: str | None = None, user_id: str | None = None,
              older_than_days: float | None = None, everything: bool = False,
              namespace: str | None = None) -> int:
        condition, args = purge_condition(session_id=session_id, user_id=user_id, namespace=namespace,
                                          older_than_days=older_than_days, everything=everything, mark="%s",
                                          written=stored)
        return self._delete(condition, args)[0]

    # -- forgetting a user --------------------------------------------------------------------------
    def forget_user(self, user_id: str, *, namespaces: Collection[str] | None = None) -> list[Forgotten]:
        """The spool's entries of the user go too. What the server keeps of deleted rows until a
        ``VACUUM`` reuses their space is the server's (see :mod:`.memory`)."""
        owner = ForgetScope.of(user_id, namespaces, written=stored)
        removed, notes, errors = 0, [], []
        exists = False
        try:  # asked of the server itself: a server that cannot answer is an error, never "nothing stored"
            exists = bool(self._fetch("SELECT 1 FROM stores WHERE location = %s AND kind = 'archive'",
                                      (self.location,)))
            if exists:
                rows = self._fetch(  # a shared session's messages are each their speaker's: see record
                    "SELECT DISTINCT namespace, session_id FROM compactions WHERE location = %s AND user_id = %s UNION "
                    "SELECT DISTINCT namespace, session_id FROM messages WHERE location = %s AND user_id = %s",
                    (self.location, owner.user) * 2)
                owner.sessions |= {(ns, s) for ns, s in rows if owner.spoke_in(ns, owner.user)}
        except ArchiveError as exc:
            errors.append(f"the archive could not be read: {exc}")
            exists = False
        try:
            owner.sessions |= {(_pg(e["namespace"]), _pg(e["session_id"])) for e in self.spool.entries()
                               if any(owner.spoke_in(_pg(e["namespace"]), _pg(user)) for user in set(owners_of(e)))}
            spooled = self.spool.forget(lambda e: forgets(e, owner, _pg), user=user_id)
        except OSError as exc:
            errors.append(f"the spool {self.spool.path} could not be cleared: {exc}")
        else:
            removed += spooled
            if spooled:
                notes.append(f"{spooled} of them from the spool {self.spool.path}")
        if not errors:
            try:
                self._tombstone(owner)
            except ArchiveError as exc:
                errors.append(f"other workers' spools are not covered: {exc}")
        if exists:
            try:
                rows = self._fetch("SELECT id, namespace, session_id, user_id FROM compactions WHERE location = %s "
                                   "AND user_id IN (%s, '')", (self.location, owner.user))
                chosen = sorted({row[0] for row in rows if owner.owns(*row[1:])} | {
                    compaction for compaction, namespace, session, user in self._fetch(  # holding a turn of theirs,
                        "SELECT DISTINCT compaction_id, namespace, session_id, user_id FROM messages "
                        "WHERE location = %s AND user_id IN (%s, '')", (self.location, owner.user))
                    if owner.owns(namespace, session, user)})  # or nobody's in a session of theirs
                if chosen:
                    removed += self._delete("id = ANY(%s)", [chosen])[1]
                if owner.user:
                    kept = sum(count for namespace, count in self._fetch(
                        "SELECT namespace, count(*) FROM messages WHERE location = %s AND user_id = '' "
                        "GROUP BY namespace", (self.location,))
                        if owner.spaces is None or namespace in owner.spaces)
                    if kept:
                        notes.append(ForgetScope.kept_note(kept))
                if chosen:
                    with self._server.connection() as conn, unbounded(conn):
                        conn.execute("VACUUM messages")
                        conn.execute("VACUUM archive_vectors")
            except (ArchiveError, OSError) as exc:
                errors.append(f"the archive could not be cleared: {exc}")
            except Exception as exc:
                errors.append(f"the deleted rows' space was not vacuumed ({exc}); run VACUUM on the server")
        return [Forgotten(store=f"archive {self._where}", removed=removed, detail="; ".join(notes),
                          error="; ".join(errors))]

    def _tombstone(self, owner: ForgetScope) -> None:
        """Remember the forget, so a compaction of the user made before it — waiting in another
        worker's spool now, imported later — is dropped when it arrives (see :meth:`_forgotten`)."""
        now = time.time()
        spaces: list[str | None] = [*sorted(owner.spaces)] if owner.spaces is not None else [None]
        rows: list[tuple[str | None, str | None, str]] = [(ns, None, owner.user) for ns in spaces]
        rows += [(ns, session, "") for ns, session in sorted(owner.sessions)]  # their unattributed messages
        try:
            with self._server.transaction(lock=self._lock_id(), lock_timeout=5.0) as conn, conn.cursor() as cursor:
                cursor.executemany("INSERT INTO archive_forgotten (location, namespace, session_id, user_id, at) "
                                   "VALUES (%s, %s, %s, %s, %s)", [(self.location, *row, now) for row in rows])
        except Exception as exc:
            fail(self._where, exc, archive=True)

    def _forgotten(self, conn: Any, owner: tuple[str, str, str], created: float) -> bool:
        """Whether a compaction of ``owner`` (namespace, session, user) made at ``created`` was
        forgotten since: its user in its namespace, or, unattributed, in a session of a forgotten user."""
        namespace, session, user = owner
        return conn.execute(
            "SELECT 1 FROM archive_forgotten WHERE location = %s AND at >= %s AND ("
            "(user_id = %s AND session_id IS NULL AND (namespace IS NULL OR namespace = %s)) OR "
            "(%s = '' AND user_id = '' AND namespace = %s AND session_id = %s)) LIMIT 1",
            (self.location, created, user, namespace, user, namespace, session)).fetchone() is not None

    # -- reading ------------------------------------------------------------------------------------
    @staticmethod
    def _scope_sql(scope: Scope) -> tuple[str, list[Any]]:
        if scope.everything:
            return "TRUE", []
        namespace = stored(scope.namespace)
        if scope.all_sessions and scope.user_id is not None:
            return "m.namespace = %s AND m.user_id = %s", [namespace, stored(scope.user_id)]
        sessions = [stored(s) for s in scope.sessions]
        if scope.user_id is None:
            return "m.namespace = %s AND m.session_id = ANY(%s)", [namespace, sessions]
        return ("m.namespace = %s AND m.session_id = ANY(%s) AND m.user_id = %s",  # exactly: see Scope.sees
                [namespace, sessions, stored(scope.user_id)])

    def search(self, text: str, scope: Scope, *, limit: int = 5) -> list[ArchiveHit]:
        phrases, short = archive_text.phrases(searchable(text))
        if not phrases and not short:
            return []
        where, args = self._scope_sql(scope)
        if phrases:
            found = self._ranked([folded(p) for p in phrases], where, args, limit)
        else:
            conditions = " AND ".join("strpos(m.folded, %s) > 0" for _ in short)
            rows = self._fetch(
                f"SELECT m.id, m.session_id, m.compaction_id, m.role, m.created, left(m.text, {LEADING_CHARS}), "
                f"m.namespace FROM messages m WHERE m.location = %s AND {conditions} AND {where} "
                "ORDER BY m.id DESC LIMIT %s", [self.location, *(folded(s) for s in short), *args, limit])
            found = [(*row[:5], row[5], row[6], 0.0) for row in rows]
        return [ArchiveHit(id_, from_stored(session_id), compaction_id, from_stored(role), created,
                           from_stored(shown), from_stored(namespace), relevance)
                for id_, session_id, compaction_id, role, created, shown, namespace, relevance in found]

    def _ranked(self, phrases: list[str], where: str, args: list[str], limit: int) -> list[tuple[Any, ...]]:
        likes = [_like(p) for p in phrases]
        counts = ", ".join("count(*) FILTER (WHERE m.folded LIKE %s)" for _ in likes)
        # OR, not LIKE ANY: a trigram index serves each LIKE, not an array of them
        anywhere = "(" + " OR ".join("m.folded LIKE %s" for _ in likes) + ")"
        totals = self._fetch("SELECT count(*), coalesce(sum(m.length), 0) FROM messages m WHERE m.location = %s",
                             (self.location,))[0]
        if not totals[0]:
            return []
        documents = self._fetch(f"SELECT {counts} FROM messages m WHERE m.location = %s AND {anywhere}",
                                [*likes, self.location, *likes])[0]
        rows = self._fetch(
            "SELECT m.id, m.session_id, m.compaction_id, m.role, m.created, m.text, m.namespace, m.folded, m.length "
            f"FROM messages m WHERE m.location = %s AND {anywhere} AND {where}",
            [self.location, *likes, *args])
        average = totals[1] / totals[0]
        scored = []
        for row in rows:
            frequencies = [substring_count(row[7], p) for p in phrases]
            if any(frequencies):
                scored.append((-bm25(frequencies, documents, totals[0], row[8], average), -row[0], row))
        scored.sort(key=lambda item: item[:2])
        return [(*row[:5], snippet(row[5], phrases), row[6], -score) for score, _, row in scored[:limit]]

    # -- embeddings (schema version 7: ``archive_vectors``, deleted with their message by the cascade) -----
    dense = True

    def unembedded(self, model: str, *, keys: Sequence[int] | None = None, below: int | None = None,
                   limit: int = 16) -> list[Stored]:
        lacking = "NOT EXISTS (SELECT 1 FROM archive_vectors v WHERE v.message_id = m.id AND v.model = %(model)s)"
        args: dict[str, Any] = {"location": self.location, "model": model, "limit": limit}
        if keys is not None:
            args["keys"] = [int(key) for key in keys]
            where = "m.id = ANY(%(keys)s)"
        else:
            args["below"] = below
            where = "TRUE" if below is None else "m.id < %(below)s"
        rows = self._fetch(f"SELECT {_COLUMNS} FROM messages m WHERE m.location = %(location)s AND {where} "
                           f"AND {lacking} ORDER BY m.id DESC LIMIT %(limit)s", args)
        return [_stored(row) for row in rows]

    def put_vectors(self, model: str, vectors: Sequence[tuple[int, bytes]]) -> int:
        """Under the location's write lock: positions are then taken in the order they commit, so a
        cache catching up past a position never misses one committed later with a smaller one."""
        if not vectors:
            return 0
        sql = ("INSERT INTO archive_vectors (message_id, location, model, vector) SELECT id, location, %s, %s "
               "FROM messages WHERE id = %s AND location = %s "
               "ON CONFLICT (message_id) DO UPDATE SET model = excluded.model, vector = excluded.vector "
               # the same model's vector again (two hosts walking one backlog) is left alone (no generation bump)
               "WHERE archive_vectors.model <> excluded.model")
        try:
            with self._server.transaction(lock=self._lock_id(), lock_timeout=5.0) as conn:
                return sum(conn.execute(sql, (model, bytes(vector), int(ident), self.location)).rowcount
                           for ident, vector in vectors)
        except Exception as exc:
            fail(self._where, exc, archive=True)

    def vectors(self, model: str, scope: Scope, *, after: int = 0) -> list[ArchiveVector]:
        where, args = self._scope_sql(scope)
        rows = self._fetch("SELECT v.seq, v.message_id, v.vector FROM archive_vectors v JOIN messages m "
                           "ON m.id = v.message_id WHERE v.location = %s AND v.seq > %s AND v.model = %s "
                           f"AND length(v.vector) > 0 AND m.location = %s AND {where} ORDER BY v.seq",
                           [self.location, int(after), model, self.location, *args])
        return [ArchiveVector(int(seq), int(ident), bytes(vector)) for seq, ident, vector in rows]

    def vector_generation(self) -> int:
        rows = self._fetch("SELECT generation FROM archive_vector_generations WHERE location = %s", (self.location,))
        return int(rows[0][0]) if rows else 0

    def get(self, ids: Sequence[int], scope: Scope) -> list[Stored]:
        if not ids:
            return []
        where, args = self._scope_sql(scope)
        rows = self._fetch(f"SELECT {_COLUMNS} FROM messages m WHERE m.location = %s AND m.id = ANY(%s) AND {where} "
                           'ORDER BY m.namespace COLLATE "C", m.session_id COLLATE "C", m.seq',
                           [self.location, [int(i) for i in ids], *args])
        return [_stored(row) for row in rows]

    def partners(self, stored_message: Stored, scope: Scope) -> list[Stored]:
        message = stored_message.message
        where, args = self._scope_sql(scope)
        where = f"m.location = %s AND m.namespace = %s AND m.session_id = %s AND {where}"
        args = [self.location, stored(stored_message.namespace), stored(stored_message.session_id), *args]
        if message.get("tool_calls"):
            ids = [stored(i) for i in call_ids(message)]
            if not ids:
                return []
            rows = self._fetch(f"SELECT {_COLUMNS} FROM messages m WHERE m.tool_call_id = ANY(%s) AND {where} "
                               "ORDER BY m.seq", [ids, *args])
        elif message.get("tool_call_id"):
            rows = self._fetch(f"SELECT {_COLUMNS} FROM messages m WHERE m.call_ids @> ARRAY[%s]::text[] AND {where} "
                               "ORDER BY m.seq", [stored(str(message["tool_call_id"])), *args])
        else:
            return []
        return [_stored(row) for row in rows]

    @property
    def spool_imports(self) -> int:
        return self.spool.imported

    def stats(self) -> ArchiveStats:
        try:
            row = self._fetch(
                "SELECT count(*), count(DISTINCT (namespace, session_id)), count(DISTINCT (namespace, user_id)), "
                "count(DISTINCT namespace) FROM compactions WHERE location = %s", (self.location,))[0]
            messages, oldest, newest = self._fetch(
                "SELECT count(*), min(created), max(created) FROM messages WHERE location = %s", (self.location,))[0]
            size = self.size_bytes()
        except ArchiveError:
            raise
        return {"path": str(self.path), "compactions": int(row[0]), "messages": int(messages),
                "sessions": int(row[1]), "users": int(row[2]), "namespaces": int(row[3]), "oldest": oldest,
                "newest": newest, "bytes": size, "spooled": self.spool.count(lock=False), "spool": self.spool.where(),
                "retention_days": self.retention_days, "max_megabytes": self.max_megabytes}


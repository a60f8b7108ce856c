"""ctx-local's memory store in one SQLite file: the SQLite implementation of
:class:`~hermes_ctx_plugins.storage.base.MemoryBackend` (its layout: :mod:`.memory_schema`).

WAL, so readers never wait for the writer and several hermes processes share the file. A search is
one FTS5 query ranked by BM25, then its candidates' rows read, its scope enforced twice: by the owner's scope tokens
inside the MATCH expression (:mod:`.fts`) and again by plain SQL on the stored ids. The last ranking is kept while
nothing is written, for the same search asking for more (:class:`_Ranking`). A batch from the queue and
the segment progress it reaches are one transaction, which is what makes replay exact.

Every SQLite failure that is the database's fault (locked, damaged, not a database, disk full,
read-only) becomes a :class:`~hermes_ctx_plugins.storage.base.LocalStoreError` naming the file and
what to do; errors caused by one record stay what they are, so the queue can tell a bad record from
a bad database.

Over 500 lines because every method goes through one connection, one lock and one translation of failures
(:meth:`LocalStore._run`, which also reopens a file deleted or replaced under it): the writing, searching,
forgetting and vector halves share them.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import secrets
import sqlite3
import threading
import time
from collections.abc import Collection, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

from ...scope import from_stored, to_stored
from .. import text as query
from ..base import LocalStoreError, MemoryBackend, Vector
from ..records import CANDIDATE_CHARS, Hit, Memory, MemoryStats, Quarantined, Record, namespaces_asked, owner_of
from . import fts
from .memory_schema import connect, is_database_failure, kept_changing, store_error
from .opening import OpenedFile, one_moment
from .state import file_changed, sqlite_state

log = logging.getLogger("hermes_ctx_plugins")

#: the columns a :class:`Memory` is read from, in its field order
_COLUMNS = ("id", "key", "kind", "namespace", "user_id", "chat_id", "session_id", "visibility", "user_text",
            "assistant_text", "fact_text", "source", "created_at")
_INSERT = ("INSERT INTO memories (key, kind, user_id, chat_id, session_id, visibility, user_text, assistant_text,"
           " fact_text, source, created_at, search_text, scope_text, namespace, verdict) VALUES ")
_ROW_MARKS = "(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)"
_QUARANTINE = ("SELECT id, segment, offset, record, error, attempts, quarantined_at, namespace, user_id "
               "FROM quarantine")
_PROGRESS = ("INSERT INTO queue_progress (segment, offset) VALUES (?, ?) ON CONFLICT (segment) "
             "DO UPDATE SET offset = excluded.offset")
#: records made into rows between two chances for other threads to run
_YIELD_EVERY = 8
#: rows per INSERT statement. Binding them is one call holding the GIL and storing them one call
#: releasing it; ``executemany`` takes the GIL back after every row, and with a busy thread beside it
#: (hermes' own, calling ``sync_turn``) each row waited for that thread's switch interval.
_CHUNK_ROWS = 32
#: the most keys one :meth:`LocalStore.unembedded` looks up (SQLite binds 32,766 values at most)
_MAX_KEYS = 1_000
#: the most memories one search ranks (see :meth:`LocalStore.search`)
RANKED_ROWS = 2_000
#: the most candidates a search keeps of its ranking (ids and ranks), for the same search asking for more
#: (:class:`_Ranking`): the provider's second search reads at most 200
KEPT_RANKING = 200
#: Every write transaction adds a segment to the FTS5 index, and a search looks each of its terms up in
#: every segment. FTS5's own automerge merges in steps as big as what was written, so a store written a
#: turn at a time (as a live session writes it) kept tens of segments (21 at 300 turns, 42 at 3,000), and
#: that lookup was most of a small store's search. So each write ends by merging up to this many pages
#: wherever a level holds ``usermerge`` segments (2 in a file made since; 4, FTS5's default, in an older
#: one — changing it there would fail the next query of every other connection once): a few segments
#: stay, about log2 of the writes (3 at 300 turns, 5 at 3,000; 6 and 9 with 4), and each memory is
#: rewritten about that many times over its life. Results do not change (BM25 reads the index's
#: statistics, whatever its segments).
MERGE_PAGES = 64
_MERGE = f"INSERT INTO memories_fts (memories_fts, rank) VALUES ('merge', {MERGE_PAGES})"
#: a search candidate's columns, its texts cut to ``CANDIDATE_CHARS``; a text holding a NUL is cut as bytes (UTF-8 takes
#: at most 4 a character), since substr() of a text stops at a NUL: what followed it was lost from recall
_CANDIDATE_COLUMNS = ", ".join(
    f"CASE WHEN instr(m.{c}, char(0)) THEN substr(CAST(m.{c} AS BLOB), 1, {4 * CANDIDATE_CHARS}) "
    f"ELSE substr(m.{c}, 1, {CANDIDATE_CHARS}) END" if c.endswith("_text") else f"m.{c}" for c in _COLUMNS)
#: whether any text of a candidate holds a NUL (and so comes as bytes: :func:`_nul_cut`)
_HAS_NUL = " OR ".join(f"instr(m.{c}, char(0))" for c in _COLUMNS if c.endswith("_text"))


def row(record: Record) -> tuple[Any, ...]:
    """The INSERT parameters of ``record``: its values as stored text, the index text and scope tokens."""
    texts = (record.key, record.kind, record.user_id, record.chat_id, record.session_id, record.visibility,
             record.user_text, record.assistant_text, record.fact_text, record.source)
    return (*map(to_stored, texts), float(record.created_at), query.index_text(record.body),
            fts.scope_text(record.namespace, record.user_id, record.chat_id, record.visibility),
            to_stored(record.namespace), record.verdict)


def _memory(values: Sequence[Any]) -> Memory:
    """A memory from a row of :data:`_COLUMNS` (the id, its texts, the time), its texts given back
    exactly as they came."""
    # from_stored only where it changes something: a recall makes 40 of these, 11 texts each
    fields: list[Any] = [from_stored(value) if "\\" in value else value for value in values[1:-1]]
    return Memory(*[values[0], *fields, values[-1]])


class LocalStore(MemoryBackend):
    """One connection to the memory database; every method is safe to call from any thread."""

    def __init__(self, path: Path, *, busy_timeout: float = 2.0, read_only: bool = False) -> None:
        """:param busy_timeout: seconds a call waits for another connection's write lock before it
            fails with reason ``locked``. :param read_only: an existing store read without writing anything
            (:func:`~.memory_schema.connect`)."""
        self.path = path
        self._lock = threading.Lock()
        self._busy_timeout = busy_timeout
        self._read_only = read_only
        #: read-only: the file's state when opened (a read torn by a writer starting meanwhile is said as such)
        self._state = sqlite_state(path) if read_only else None
        self._conn = connect(path, busy_timeout, read_only=read_only)
        self._opened = OpenedFile(path)
        #: the last search's ranking (:meth:`_search`)
        self._ranking: _Ranking | None = None

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    def _run(self, fn: Any, *args: Any) -> Any:
        """Call ``fn(conn, *args)`` under the lock, translating database failures."""
        with self._lock:
            try:
                if self._opened.replaced():  # deleted or replaced while open: its writes would be lost with it
                    log.warning("the memory database %s was deleted or replaced while it was open: what is stored "
                                "from now on goes into the file now at that path (a new one if none is)", self.path)
                    self._conn.close()  # first: its WAL is folded into the old file and removed, never read anew
                    self._ranking = None
                    # failing, the next call tries again
                    self._conn = connect(self.path, self._busy_timeout, read_only=self._read_only)
                    self._opened = OpenedFile(self.path)
                result = fn(self._conn, *args)
                if self._read_only and self._torn():  # read as immutable while a process wrote it: maybe two moments
                    return self._read_again(fn, args, None)
                return result
            except BaseException as exc:
                # Whatever failed — a record SQLite cannot take included — no transaction may stay
                # open: the next write would fail to begin, and so would every one after it.
                with contextlib.suppress(sqlite3.ProgrammingError):  # closed: a reopening above failed
                    if self._conn.in_transaction:
                        self._conn.execute("ROLLBACK")
                if is_database_failure(exc):
                    # read-only: also SQLite finding the -shm it may not write in need of a writer (a moment, while the
                    # owner's process folds its -wal in)
                    if self._read_only and store_error(self.path, exc).reason in ("damaged", "read-only"):
                        return self._read_again(fn, args, exc)
                    raise store_error(self.path, exc) from None
                raise

    def _torn(self) -> bool:
        """Whether the file itself changed since this read-only store opened it: a read as immutable reads it alone,
        and a process that only opens and closes the store changes its -wal and -shm, not it (a review: real damage
        was said as "kept changing")."""
        return self._state is not None and file_changed(self._state, sqlite_state(self.path, settle=False))

    def _read_again(self, fn: Any, args: tuple[Any, ...], failed: BaseException | None) -> Any:
        """A read of a file opened read-only that failed as damage (``failed``) or succeeded while the file changed
        (``None``): read again from a new opening, a moment apart, four times at most. Damage fails every time while the
        file stays as it is; a read torn by a process writing it does not (reviews: torn reads were "damaged ... move it
        aside", one in some thousands came back silently from two moments, and a write the file's timestamp did not
        show yet was taken for damage)."""
        changed = failed is None or self._torn()
        for attempt in range(4):
            time.sleep(0.05 * attempt)  # a moment, for the process writing it to finish
            with contextlib.suppress(sqlite3.Error):
                self._conn.close()
            self._state = sqlite_state(self.path)
            self._ranking = None
            self._conn = connect(self.path, self._busy_timeout, read_only=True)
            try:
                result = fn(self._conn, *args)
            except sqlite3.Error as exc:
                if not is_database_failure(exc) or store_error(self.path, exc).reason not in ("damaged", "read-only"):
                    raise store_error(self.path, exc) if is_database_failure(exc) else exc from None
                failed, changed = exc, changed or self._torn()
                continue
            if not self._torn():
                return result
            failed, changed = None, True
        if failed is not None and not changed:
            raise store_error(self.path, failed) from None
        raise kept_changing(self.path, failed) from None

    # ---------------------------------------------------------------------------------- writing

    def write(self, records: Sequence[Record], *, segment: str = "", offset: int = 0) -> int:
        rows = []
        for number, record in enumerate(records, 1):
            record.check()
            rows.append(row(record))
            if number % _YIELD_EVERY == 0:
                # The queue's writer thread runs this: let a thread calling put() have the GIL now,
                # not after the interpreter's 5 ms switch interval (that wait was most of put's p99).
                time.sleep(0)
        return self.write_rows(rows, segment=segment, offset=offset)

    def write_rows(self, rows: Sequence[tuple[Any, ...]], *, segment: str = "", offset: int = 0) -> int:
        """:meth:`write` for rows already made by :func:`row`: one transaction."""

        def run(conn: sqlite3.Connection) -> int:
            conn.execute("BEGIN IMMEDIATE")
            added = 0
            for start in range(0, len(rows), _CHUNK_ROWS):
                chunk = rows[start:start + _CHUNK_ROWS]
                added += conn.execute(_insert(len(chunk)), [value for one in chunk for value in one]).rowcount
            if added:
                conn.execute(_MERGE)
            if segment:
                conn.execute(_PROGRESS, (segment, offset))
            conn.execute("COMMIT")
            return added

        return int(self._run(run))

    def add(self, record: Record) -> Memory:
        self.write([record])
        stored = self._run(lambda conn: conn.execute(
            f"SELECT {', '.join(_COLUMNS)} FROM memories WHERE key = ?", (to_stored(record.key),)).fetchone())
        return _memory(stored)

    def quarantine(self, segment: str, offset: int, raw: str, error: str, attempts: int) -> None:
        owner = owner_of(raw)
        namespace, user_id = (None, None) if owner is None else (to_stored(owner[0]), to_stored(owner[1]))

        def run(conn: sqlite3.Connection) -> None:
            conn.execute("BEGIN IMMEDIATE")
            conn.execute("INSERT INTO quarantine (segment, offset, record, error, attempts, quarantined_at, namespace,"
                         " user_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                         (segment, offset, raw, error, attempts, time.time(), namespace, user_id))
            conn.execute(_PROGRESS, (segment, offset))
            conn.execute("COMMIT")

        self._run(run)

    def progress(self) -> dict[str, int]:
        rows = self._run(lambda conn: conn.execute("SELECT segment, offset FROM queue_progress").fetchall())
        return {segment: int(offset) for segment, offset in rows}

    def incarnation(self) -> str:
        """A random text the file keeps from the first time it is asked (a deleted file's successor draws anew)."""
        def read(conn: sqlite3.Connection) -> str:
            conn.execute("INSERT OR IGNORE INTO meta (key, value) VALUES ('incarnation', ?)", (secrets.token_hex(16),))
            return str(conn.execute("SELECT value FROM meta WHERE key = 'incarnation'").fetchone()[0])

        return str(self._run(read))

    def drop_progress(self, segments: Iterable[str]) -> None:
        names = [(s,) for s in segments]
        if names:
            self._run(lambda conn: conn.executemany("DELETE FROM queue_progress WHERE segment = ?", names))

    # ---------------------------------------------------------------------------------- reading

    def search(self, terms: Sequence[str], *, namespace: str, user_id: str, chat_id: str,
               share_across_chats: bool, limit: int) -> list[Hit]:
        """The scope is enforced twice: by the scope tokens inside the FTS5 expression, and again by
        plain SQL on the stored ids, so no query text can reach another namespace's, user's or
        chat's rows.

        BM25 costs FTS5 a few microseconds per matching row, so at most :data:`RANKED_ROWS` are
        ranked. When more of the owner's memories match (a common word, in a big store; counting
        them costs far less than ranking), only the question's rarest terms are searched: those the
        fewest of the owner's memories hold, together at most :data:`RANKED_ROWS` (but always one),
        so an old memory holding a rare term is still found; the words left out are those most of the
        owner's memories hold. Past :data:`RANKED_ROWS` matches even so, the newest are ranked."""
        if not terms:
            return []
        scope = fts.scope_query(namespace, user_id, chat_id, share_across_chats=share_across_chats)
        owner = [to_stored(namespace), to_stored(user_id), *([] if share_across_chats else [to_stored(chat_id)])]
        hits: list[Hit] = self._run(self._search, tuple(terms), tuple(scope), tuple(owner), limit)
        return hits

    def _search(self, conn: sqlite3.Connection, terms: tuple[str, ...], scope: tuple[str, ...],
                owner: tuple[str, ...], limit: int) -> list[Hit]:
        """:meth:`search` on ``conn``: the ranking kept from the last search when it asked the same of the same file
        (nothing written since, by this connection or another), else a new one; the candidates' rows read once."""
        version = (conn.execute("PRAGMA data_version").fetchone()[0], conn.total_changes)
        kept = self._ranking
        if (kept is None or kept.asked != (terms, scope, owner) or kept.version != version
                or (limit > len(kept.ranked) and not kept.whole)):
            searched = list(terms)
            if len(searched) > 1 and _too_many(conn, searched, scope):
                searched = _rarest(conn, searched, scope) or searched
            wanted = max(limit, KEPT_RANKING)
            ranked = _ranking(conn, searched, scope, wanted)
            kept = self._ranking = _Ranking((terms, scope, owner), version, ranked, len(ranked) < wanted)
        return kept.hits(conn, limit)

    def get(self, ids: Iterable[int]) -> list[Memory]:
        wanted = [int(i) for i in ids]
        if not wanted:
            return []
        marks = ",".join("?" * len(wanted))
        rows = self._run(lambda conn: conn.execute(
            f"SELECT {', '.join(_COLUMNS)} FROM memories WHERE id IN ({marks}) ORDER BY id", wanted).fetchall())
        return [_memory(row) for row in rows]

    def memories(self, *, namespace: str | None = None, user_id: str | None = None, chat_id: str | None = None,
                 session_id: str | None = None) -> Iterator[Memory]:
        # One page at a time under the lock, yielded outside it (by id, so writes in between are fine):
        # a reader that stops half-way (a closed pipe, a full disk) must not keep the store locked, or
        # the close() in its own cleanup would wait for the lock forever.
        where, params = _filters(namespace, user_id, chat_id, session_id)
        page = f"SELECT {', '.join(_COLUMNS)} FROM memories {where} {'AND' if where else 'WHERE'} id > ? " \
               "ORDER BY id LIMIT 500"
        last = 0
        while True:
            rows = self._run(lambda conn, after: conn.execute(page, [*params, after]).fetchall(), last)
            if not rows:
                return
            for row in rows:
                yield _memory(row)
            last = rows[-1][0]

    def scopes(self, namespace: str | None = None) -> list[tuple[str, str]]:
        where, params = _filters(namespace, None, None, None)
        rows = self._run(lambda conn: conn.execute(
            f"SELECT DISTINCT user_id, chat_id FROM memories {where}", params).fetchall())
        return [(from_stored(user), from_stored(chat)) for user, chat in rows]

    def namespaces(self, *, user_id: str | None = None, chat_id: str | None = None,
                   session_id: str | None = None) -> dict[str, int]:
        where, params = _filters(None, user_id, chat_id, session_id)
        rows = self._run(lambda conn: conn.execute(
            f"SELECT namespace, count(*) FROM memories {where} GROUP BY namespace", params).fetchall())
        return {from_stored(namespace): count for namespace, count in rows}

    def quarantined(self, namespace: str | None = None) -> list[Quarantined]:
        where, params = ("", []) if namespace is None else (
            "WHERE namespace = ? OR namespace IS NULL", [to_stored(namespace)])
        rows = self._run(lambda conn: conn.execute(f"{_QUARANTINE} {where} ORDER BY id", params).fetchall())
        return [Quarantined(*row[:7], *(None if v is None else from_stored(v) for v in row[7:])) for row in rows]

    def stats(self, namespace: str | None = None) -> MemoryStats:
        """Counts of what is stored; ``bytes``: the database file and every file ``<path>*`` beside it
        (its WAL and shared-memory index)."""
        where, params = _filters(namespace, None, None, None)
        quarantine = ("", []) if namespace is None else ("WHERE namespace = ? OR namespace IS NULL", params)

        def run(conn: sqlite3.Connection) -> MemoryStats:
            def one(sql: str, args: list[Any] = params) -> Any:
                return conn.execute(sql, args).fetchone()

            with one_moment(conn):
                kinds = dict(conn.execute(f"SELECT kind, count(*) FROM memories {where} GROUP BY kind",
                                          params).fetchall())
                scopes = one(f"SELECT count(*) FROM (SELECT DISTINCT user_id, chat_id FROM memories {where})")[0]
                sessions = one(f"SELECT count(DISTINCT session_id) FROM memories {where}")[0]
                span = one(f"SELECT min(created_at), max(created_at) FROM memories {where}")
                quarantined = one(f"SELECT count(*) FROM quarantine {quarantine[0]}", quarantine[1])[0]
            files = sum(p.stat().st_size for p in self.path.parent.glob(f"{self.path.name}*") if p.is_file())
            return {"turns": kinds.get("turn", 0), "facts": kinds.get("fact", 0), "scopes": scopes,
                    "sessions": sessions, "oldest": span[0], "newest": span[1], "quarantined": quarantined,
                    "bytes": files}

        report: MemoryStats = self._run(run)
        return report

    # ---------------------------------------------------------------------------------- embeddings

    dense = True

    def unembedded(self, model: str, *, keys: Sequence[str] | None = None, below: int | None = None,
                   limit: int = 16) -> list[Memory]:
        lacking = "NOT EXISTS (SELECT 1 FROM memory_vectors v WHERE v.memory_id = m.id AND v.model = ?)"
        columns = ", ".join(f"m.{c}" for c in _COLUMNS)
        if keys is not None:
            wanted = [to_stored(key) for key in keys][:_MAX_KEYS]
            if not wanted:
                return []
            sql = (f"SELECT {columns} FROM memories m WHERE m.key IN ({','.join('?' * len(wanted))}) AND {lacking}"
                   " ORDER BY m.id DESC LIMIT ?")
            args: list[Any] = [*wanted, model, limit]
        else:
            # newest first down the rowid, so a backlog is walked once, however many rows have vectors
            bound, args = ("m.id < ? AND", [below]) if below is not None else ("", [])
            sql = f"SELECT {columns} FROM memories m WHERE {bound} {lacking} ORDER BY m.id DESC LIMIT ?"
            args += [model, limit]
        rows = self._run(lambda conn: conn.execute(sql, args).fetchall())
        return [_memory(row) for row in rows]

    def put_vectors(self, model: str, vectors: Sequence[tuple[int, bytes]], *,
                    keys: Sequence[str] | None = None) -> int:
        # the owner comes from the memory's own row; a memory forgotten meanwhile selects nothing, and so
        # does the memory SQLite gave its id next (its key differs: ids of a deleted newest row are reused)
        sql = ("INSERT INTO memory_vectors (memory_id, namespace, user_id, model, vector)"
               " SELECT id, namespace, user_id, ?, ? FROM memories WHERE id = ? AND (? IS NULL OR key = ?)"
               " ON CONFLICT (memory_id) DO UPDATE SET model = excluded.model, vector = excluded.vector"
               # the same model's vector again (two processes walking one backlog) is left alone: replacing
               # it would bump the generation and void every reader's cache for nothing
               " WHERE memory_vectors.model <> excluded.model")
        wanted = [None if keys is None else to_stored(keys[n]) for n in range(len(vectors))]
        args = [(model, bytes(vector), int(memory_id), key, key)
                for (memory_id, vector), key in zip(vectors, wanted, strict=True)]

        def run(conn: sqlite3.Connection) -> int:
            conn.execute("BEGIN IMMEDIATE")
            stored = sum(conn.execute(sql, one).rowcount for one in args)
            conn.execute("COMMIT")
            return stored

        return int(self._run(run)) if args else 0

    def vectors(self, model: str, *, namespace: str, user_id: str, after: int = 0) -> list[Vector]:
        sql = ("SELECT v.seq, v.memory_id, m.chat_id, m.visibility, v.vector FROM memory_vectors v"
               " JOIN memories m ON m.id = v.memory_id"
               " WHERE v.user_id = ? AND v.namespace = ? AND v.seq > ? AND v.model = ? AND length(v.vector) > 0"
               " ORDER BY v.seq")
        rows = self._run(lambda conn: conn.execute(
            sql, (to_stored(user_id), to_stored(namespace), int(after), model)).fetchall())
        return [Vector(seq, memory_id, from_stored(chat) if "\\" in chat else chat, visibility, vector)
                for seq, memory_id, chat, visibility, vector in rows]

    def vector_generation(self) -> int:
        row = self._run(lambda conn: conn.execute(
            "SELECT value FROM meta WHERE key = 'vector_generation'").fetchone())
        return int(row[0])

    # ---------------------------------------------------------------------------------- forgetting

    def forget(self, ids: Iterable[int], *, namespace: str | None = None, user_id: str | None = None,
               chat_id: str | None = None) -> list[int]:
        wanted = sorted({int(i) for i in ids})
        if not wanted:
            return []
        marks = ",".join("?" * len(wanted))
        where, params = _filters(namespace, user_id, None, None)
        clause = f"{where} AND" if where else "WHERE"
        if chat_id is not None:
            clause += " (chat_id = ? OR visibility = 'user') AND"
            params.append(to_stored(chat_id))
        sql = f"DELETE FROM memories {clause} id IN ({marks}) RETURNING id"

        def run(conn: sqlite3.Connection) -> list[int]:
            conn.execute("BEGIN IMMEDIATE")
            deleted = [row[0] for row in conn.execute(sql, [*params, *wanted]).fetchall()]
            conn.execute("COMMIT")
            return sorted(deleted)

        return list(self._run(run))

    def forget_where(self, *, namespace: str | None = None, user_id: str | None = None, chat_id: str | None = None,
                     session_id: str | None = None) -> int:
        if user_id is None and chat_id is None and session_id is None:
            raise ValueError("forget needs ids, a user, a chat or a session")
        where, params = _filters(namespace, user_id, chat_id, session_id)

        def run(conn: sqlite3.Connection) -> int:
            conn.execute("BEGIN IMMEDIATE")
            count = conn.execute(f"DELETE FROM memories {where}", params).rowcount
            conn.execute("COMMIT")
            return int(count)

        return int(self._run(run))

    def forget_user(self, user_id: str, namespaces: Collection[str] | None = None) -> tuple[int, int]:
        clause, params = "user_id = ?", [to_stored(user_id)]
        asked = namespaces_asked(namespaces, to_stored)
        if asked is not None:
            names = sorted(asked)
            if not names:
                return 0, 0
            clause += f" AND namespace IN ({','.join('?' * len(names))})"
            params += names

        def run(conn: sqlite3.Connection) -> tuple[int, int]:
            conn.execute("BEGIN IMMEDIATE")
            memories = conn.execute(f"DELETE FROM memories WHERE {clause}", params).rowcount
            quarantined = conn.execute(f"DELETE FROM quarantine WHERE {clause}", params).rowcount
            conn.execute("COMMIT")
            return int(memories), int(quarantined)

        counts: tuple[int, int] = self._run(run)
        return counts

    def compact(self) -> None:
        """Rewrite the index and fold the WAL back, so forgotten text leaves the file for good."""

        def run(conn: sqlite3.Connection) -> bool:
            conn.execute("INSERT INTO memories_fts (memories_fts) VALUES ('optimize')")
            conn.execute("VACUUM")
            busy, _, _ = conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
            return not busy

        if not self._run(run):  # a reader kept the WAL, and the old pages in it, alive
            raise LocalStoreError(self.path, "locked", "another connection is reading, so the WAL could not be "
                                  "checkpointed and truncated", "try again when it is idle")


@functools.lru_cache(maxsize=_CHUNK_ROWS)
def _insert(count: int) -> str:
    """The INSERT statement of ``count`` rows; a key stored already (or earlier in them) is skipped."""
    return _INSERT + ",".join([_ROW_MARKS] * count) + " ON CONFLICT (key) DO NOTHING"


def _matches(conn: sqlite3.Connection, terms: Sequence[str], scope: Sequence[str]) -> int:
    """How many memories in the scope hold any of ``terms``, counted up to ``RANKED_ROWS + 1``."""
    count = "SELECT count(*) FROM (SELECT rowid FROM memories_fts WHERE memories_fts MATCH ? LIMIT ?)"
    found: int = conn.execute(count, (fts.match_expression(terms, scope), RANKED_ROWS + 1)).fetchone()[0]
    return found


def _too_many(conn: sqlite3.Connection, terms: Sequence[str], scope: Sequence[str]) -> bool:
    """Whether more than :data:`RANKED_ROWS` memories in the scope hold any of ``terms``. A store
    whose largest id is no more than that cannot have more rows (ids are distinct positive
    integers): then nothing is counted."""
    largest = conn.execute("SELECT max(id) FROM memories").fetchone()[0] or 0
    return largest > RANKED_ROWS and _matches(conn, terms, scope) > RANKED_ROWS


def _rarest(conn: sqlite3.Connection, terms: Sequence[str], scope: Sequence[str]) -> list[str]:
    """The rarest of ``terms`` in the scope, in their order (see :meth:`LocalStore.search`); none when
    no memory of the scope holds any."""
    held = {term: _matches(conn, [term], scope) for term in terms}
    chosen: set[str] = set()
    total = 0
    for term in sorted((term for term in terms if held[term]), key=held.__getitem__):
        if chosen and total + held[term] > RANKED_ROWS:
            break
        chosen.add(term)
        total += held[term]
    return [term for term in terms if term in chosen]


def _ranking(conn: sqlite3.Connection, terms: Sequence[str], scope: Sequence[str],
             limit: int) -> list[tuple[int, float]]:
    """The ids and BM25 ranks (lower is better) of the best ``limit`` among the newest :data:`RANKED_ROWS` memories of
    the scope holding any of ``terms``, best first."""
    # The innermost query reads the matches newest first and stops after RANKED_ROWS, computing BM25
    # ("rank") for those only: ordering by rank in it would rank every match (and FTS5 takes twice as
    # long to sort by rank itself). Ties: oldest first, as every backend orders them.
    sql = ("SELECT id, score FROM ("
           " SELECT rowid AS id, rank AS score FROM memories_fts WHERE memories_fts MATCH ?"
           " ORDER BY rowid DESC LIMIT ?)"
           " ORDER BY score, id LIMIT ?")
    return conn.execute(sql, [fts.match_expression(terms, scope), RANKED_ROWS, limit]).fetchall()


class _Ranking:
    """One search's ranking (:func:`_ranking`), kept by its store with the candidates' rows read from it so far: the
    provider asks again for more of the same when the conversation's prompt holds most of what it found, and the
    rows it read already are not read again (``version``: the file's ``data_version`` and the connection's own
    changes when it was made; ``whole``: it holds every memory there was to rank)."""

    __slots__ = ("asked", "ranked", "rows", "version", "whole")

    def __init__(self, asked: tuple[Any, ...], version: tuple[int, int], ranked: list[tuple[int, float]],
                 whole: bool) -> None:
        self.asked = asked
        self.version = version
        self.ranked = ranked
        self.whole = whole
        #: by id: the candidate read for it, or None when its row is not the owner's (the scope tokens said it was)
        self.rows: dict[int, Hit | None] = {}

    def hits(self, conn: sqlite3.Connection, limit: int) -> list[Hit]:
        """The best ``limit`` of the ranking that are the owner's (plain SQL on the stored ids: the second check of
        the scope), their rows read where they were not yet."""
        best = self.ranked[:limit]
        unread = [(memory_id, score) for memory_id, score in best if memory_id not in self.rows]
        if unread:
            owner = self.asked[2]
            chat_clause = "AND (m.chat_id = ? OR m.visibility = 'user')" if len(owner) > 2 else ""
            marks = ",".join("?" * len(unread))
            sql = (f"SELECT {_CANDIDATE_COLUMNS}, {_HAS_NUL}, m.verdict FROM memories m WHERE m.id IN ({marks})"
                   f" AND m.namespace = ? AND m.user_id = ? {chat_clause}")
            read = {row[0]: row for row in conn.execute(sql, [*(memory_id for memory_id, _ in unread), *owner])}
            for memory_id, score in unread:
                row = read.get(memory_id)
                self.rows[memory_id] = None if row is None else Hit(
                    _memory(_nul_cut(row[:-2]) if row[-2] else row[:-2]), -float(score), row[-1])
        return [hit for hit in (self.rows[memory_id] for memory_id, _ in best) if hit is not None]


def _nul_cut(values: Sequence[Any]) -> list[Any]:
    """A candidate row whose texts holding a NUL came as the bytes of their start: those texts, cut to
    ``CANDIDATE_CHARS`` (a character the byte cut split is dropped: stored texts are UTF-8, lone surrogates escaped)."""
    return [value.decode("utf-8", "ignore")[:CANDIDATE_CHARS] if isinstance(value, bytes) else value
            for value in values]


def _filters(namespace: str | None, user_id: str | None, chat_id: str | None,
             session_id: str | None) -> tuple[str, list[Any]]:
    """The WHERE clause selecting exactly these values (None: any)."""
    parts, params = [], []
    for column, value in (("namespace", namespace), ("user_id", user_id), ("chat_id", chat_id),
                          ("session_id", session_id)):
        if value is not None:
            parts.append(f"{column} = ?")
            params.append(to_stored(value))
    return ("WHERE " + " AND ".join(parts)) if parts else "", params



"""ctx-local's memories on a PostgreSQL server: the PostgreSQL implementation of
:class:`~hermes_ctx_plugins.storage.base.MemoryBackend` (its tables: :mod:`.schema`).

**Search** finds candidates in SQL — the caller's scope, and any word of the query in the memory's
``words`` (a GIN index) — and ranks them as :mod:`~hermes_ctx_plugins.storage.ranking` defines,
with the statistics FTS5 uses (every memory of the location counts, whoever owns it; the totals
are kept in ``memory_totals`` by every write and delete): PostgreSQL's own ``ts_rank`` is not BM25,
and results must order as SQLite's do. A phrase of several words counts, for its document
frequency, the memories holding its words in a row, as FTS5 does.

**Writes** of one location are serialised by a transaction-level advisory lock, so ids grow in the
order memories are committed (what ``memories()`` promises), and a batch, its totals and its queue
progress are one transaction. Keys are unique per location: a turn replayed by any worker is
skipped. The progress is kept per write-behind queue (:func:`~.connection.queue_id`), since every
worker's queue names its segments alike.

**Forgetting a user** also records when (``forgotten``): a record of that user created before then
and still waiting in any worker's queue is skipped when it arrives, so a forget racing the writes
of other workers holds (clocks of the workers must agree to within the time a turn waits in a
queue: seconds).

**Compact** runs ``VACUUM`` on the tables: the space of deleted rows is marked free, and their
bytes stay in the server's files until it is reused (``VACUUM FULL`` rewrites them; the WAL and
base backups keep them as the server's retention says) — a server is not a file the package owns.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Collection, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

from .. import text as query
from ..base import MemoryBackend, Vector
from ..ranking import K1, B, bm25, inverse_frequency, memory_length, phrase_count
from ..records import CANDIDATE_CHARS, Hit, Memory, MemoryStats, Quarantined, Record, namespaces_asked, owner_of
from . import vectors as stored_vectors
from .connection import Server, fail, location_key, queue_id, unbounded
from .schema import lock_id
from .text import stored, unstored

log = logging.getLogger("hermes_ctx_plugins.storage.postgres")

_COLUMNS = ("id, key, kind, namespace, user_id, chat_id, session_id, visibility, user_text, assistant_text, "
            "fact_text, source, created_at")
_CUT_COLUMNS = (f"id, key, kind, namespace, user_id, chat_id, session_id, visibility, left(user_text, "
                f"{CANDIDATE_CHARS}), left(assistant_text, {CANDIDATE_CHARS}), left(fact_text, {CANDIDATE_CHARS}), "
                "source, created_at")
_INSERT = """
WITH incoming AS (
    SELECT * FROM jsonb_to_recordset(%(rows)s::jsonb) AS r(
        key text, kind text, namespace text, user_id text, chat_id text, session_id text, visibility text,
        user_text text, assistant_text text, fact_text text, source text, created_at double precision,
        words jsonb, length integer, n bigint, verdict text)
), kept AS (
    SELECT r.* FROM incoming r WHERE NOT EXISTS (
        SELECT 1 FROM forgotten f WHERE f.location = %(location)s AND f.user_id = r.user_id
        AND (f.namespace IS NULL OR f.namespace = r.namespace) AND f.at >= r.created_at)
), added AS (
    INSERT INTO memories (location, key, kind, namespace, user_id, chat_id, session_id, visibility, user_text,
                          assistant_text, fact_text, source, created_at, words, length, verdict)
    SELECT %(location)s, key, kind, namespace, user_id, chat_id, session_id, visibility, user_text, assistant_text,
           fact_text, source, created_at, ARRAY(SELECT jsonb_array_elements_text(words)), length, verdict FROM kept
    ORDER BY n
    ON CONFLICT (location, key) DO NOTHING
    RETURNING length
)
SELECT count(*), coalesce(sum(length), 0) FROM added
"""
_TOTALS = """
INSERT INTO memory_totals (location, documents, words) VALUES (%s, %s, %s)
ON CONFLICT (location) DO UPDATE SET documents = memory_totals.documents + excluded.documents,
                                     words = memory_totals.words + excluded.words
RETURNING documents
"""
_PROGRESS = """
INSERT INTO queue_progress (location, queue, segment, "offset") VALUES (%s, %s, %s, %s)
ON CONFLICT (location, queue, segment) DO UPDATE SET "offset" = excluded."offset"
"""


def _escaped_like(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def _doubled(before: int, after: int) -> bool:
    """Whether a location's memories passed a power of two from 1,024 on (when statistics go stale)."""
    return after >= 1024 and after.bit_length() > max(before, 0).bit_length()


def _created_at(raw: str) -> float:
    """When a queued line was made; unreadable: as old as can be (any forget of its owner covers it)."""
    try:
        made = json.loads(raw).get("created_at")
        return float(made) if isinstance(made, int | float) and not isinstance(made, bool) else float("-inf")
    except (ValueError, AttributeError, TypeError):
        return float("-inf")


def _memory(values: Sequence[Any]) -> Memory:
    texts: list[Any] = [unstored(v) if isinstance(v, str) else v for v in values]
    return Memory(*texts)


def _row(record: Record) -> dict[str, Any]:
    words = query.tokens(query.index_text(record.body))
    # a word no query asks (longer than a query term may be: a pasted blob) is indexed as "": a GIN
    # entry has a size limit, and one such word would otherwise refuse the whole memory
    indexed = [w if len(w) <= query.MAX_TERM_CHARS else "" for w in words]
    return {"key": stored(record.key), "kind": record.kind, "namespace": stored(record.namespace),
            "user_id": stored(record.user_id), "chat_id": stored(record.chat_id),
            "session_id": stored(record.session_id), "visibility": record.visibility,
            "user_text": stored(record.user_text), "assistant_text": stored(record.assistant_text),
            "fact_text": stored(record.fact_text), "source": stored(record.source),
            "created_at": float(record.created_at), "words": [stored(w) for w in indexed],
            "length": memory_length(len(words), record.visibility), "verdict": record.verdict}


class PostgresMemory(MemoryBackend):
    """ctx-local's memories of one location on a PostgreSQL server; any thread may call it."""

    drops_late_writes = True  # a forget leaves a tombstone (see _delete)

    def __init__(self, path: Path, server: Server, *, busy_timeout: float = 2.0) -> None:
        self.path = Path(path)
        self.location = location_key(self.path)
        self._server = server
        self._busy = busy_timeout
        # a connection from the pool comes at once, or after a connect; a server that is down is
        # known within this (recall is skipped, writes stay queued)
        self._wait = max(busy_timeout, 0.5)
        self._where = f"{server.shown} ({self.location})"
        self._queue = queue_id(self.path)
        self._lock_id = lock_id("hermes-ctx memories", server.schema, self.location)
        try:
            with server.transaction(lock_timeout=busy_timeout, wait=self._wait) as conn:
                conn.execute("INSERT INTO stores (location, kind, created) VALUES (%s, 'memory', %s) "
                             "ON CONFLICT DO NOTHING", (self.location, time.time()))
        except Exception as exc:
            fail(self._where, exc)

    def close(self) -> None:
        """Nothing of its own to release: the connections belong to the process's pool."""

    def incarnation(self) -> str:
        """When the server's row naming this store was made (at its first opening): a dropped schema's successor
        has another."""
        rows = self._fetch("SELECT created FROM stores WHERE location = %s AND kind = 'memory'", (self.location,))
        return repr(float(rows[0][0])) if rows else ""

    # -- writing ------------------------------------------------------------------------------------
    def write(self, records: Sequence[Record], *, segment: str = "", offset: int = 0) -> int:
        for record in records:
            record.check()
        firsts = {record.key: record for record in reversed(records)}  # the first of each key wins
        rows = [{**_row(record), "n": n} for n, record in enumerate(records) if firsts[record.key] is record]
        try:
            with self._server.transaction(lock=self._lock_id, lock_timeout=self._busy, wait=self._wait) as conn:
                new, words, stored_now = (0, 0, 0)
                if rows:
                    new, words = conn.execute(_INSERT, {"rows": json.dumps(rows), "location": self.location}
                                              ).fetchone()  # type: ignore[misc]
                    if new:
                        stored_now = conn.execute(_TOTALS, (self.location, new, words)).fetchone()[0]  # type: ignore[index]
                if segment:
                    conn.execute(_PROGRESS, (self.location, self._queue, stored(segment), offset))
        except Exception as exc:
            fail(self._where, exc)
        if new and _doubled(stored_now - new, stored_now):
            self._analyze()
        return int(new)

    def _analyze(self) -> None:
        """Refresh the planner's statistics of the table: until they exist it plans a search without
        the words index (a store filled in one go is otherwise searched slowly until autovacuum
        analyses it, a minute or more later). Best effort: autovacuum does it in the end."""
        try:
            with self._server.connection(wait=self._wait) as conn:
                conn.execute("ANALYZE memories")
        except Exception as exc:  # a lock, a privilege: the statistics come later, searches still work
            log.info("PostgreSQL: ANALYZE memories skipped (%s)", " ".join(str(exc).split()))

    def add(self, record: Record) -> Memory:
        self.write([record])
        try:
            with self._server.connection(wait=self._wait) as conn:
                row = conn.execute(f"SELECT {_COLUMNS} FROM memories WHERE location = %s AND key = %s",
                                   (self.location, stored(record.key))).fetchone()
        except Exception as exc:
            fail(self._where, exc)
        if row is None:  # forgotten before it arrived (see the module docs): what it would have been
            return Memory(0, record.key, record.kind, record.namespace, record.user_id, record.chat_id,
                          record.session_id, record.visibility, record.user_text, record.assistant_text,
                          record.fact_text, record.source, float(record.created_at))
        return _memory(row)

    def quarantine(self, segment: str, offset: int, raw: str, error: str, attempts: int) -> None:
        """A line of a user forgotten after it was made is not kept (the forget holds here as for
        :meth:`write`); the progress moves all the same."""
        owner = owner_of(raw)
        namespace, user = (stored(owner[0]), stored(owner[1])) if owner else (None, None)
        try:
            with self._server.transaction(lock=self._lock_id, lock_timeout=self._busy, wait=self._wait) as conn:
                if user is None or not conn.execute(
                        "SELECT 1 FROM forgotten WHERE location = %s AND user_id = %s AND (namespace IS NULL "
                        "OR namespace = %s) AND at >= %s LIMIT 1",
                        (self.location, user, namespace, _created_at(raw))).fetchone():
                    conn.execute('INSERT INTO quarantine (location, queue, segment, "offset", record, error, '
                                 "attempts, quarantined_at, namespace, user_id) "
                                 "VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s)",
                                 (self.location, self._queue, stored(segment), offset, stored(raw), stored(error),
                                  attempts, time.time(), namespace, user))
                conn.execute(_PROGRESS, (self.location, self._queue, stored(segment), offset))
        except Exception as exc:
            fail(self._where, exc)

    def progress(self) -> dict[str, int]:
        rows = self._fetch('SELECT segment, "offset" FROM queue_progress WHERE location = %s AND queue = %s',
                           (self.location, self._queue))
        return {unstored(segment): int(offset) for segment, offset in rows}

    def drop_progress(self, segments: Iterable[str]) -> None:
        names = [stored(s) for s in segments]
        if names:
            self._run("DELETE FROM queue_progress WHERE location = %s AND queue = %s AND segment = ANY(%s)",
                      (self.location, self._queue, names))

    # -- reading ------------------------------------------------------------------------------------
    def _fetch(self, sql: str, args: Sequence[Any] | dict[str, Any]) -> list[tuple[Any, ...]]:
        try:
            with self._server.connection(wait=self._wait) as conn:
                return conn.execute(sql, args).fetchall()
        except Exception as exc:
            fail(self._where, exc)

    def _run(self, sql: str, args: Sequence[Any]) -> int:
        try:
            with self._server.transaction(lock=self._lock_id, lock_timeout=self._busy, wait=self._wait) as conn:
                return conn.execute(sql, args).rowcount
        except Exception as exc:
            fail(self._where, exc)

    def search(self, terms: Sequence[str], *, namespace: str, user_id: str, chat_id: str,
               share_across_chats: bool, limit: int) -> list[Hit]:
        phrases = [phrase for phrase in (tuple(query.tokens(term)) for term in terms) if phrase]
        if not phrases or limit <= 0:
            return []
        phrases = [tuple(stored(w) for w in phrase) for phrase in phrases]
        args: dict[str, Any] = {
            "location": self.location, "every": sorted({w for phrase in phrases for w in phrase}),
            "namespace": stored(namespace), "user_id": stored(user_id), "chat_id": stored(chat_id),
            "share": share_across_chats, "limit": limit}
        try:  # one snapshot: the totals, the counts and the rows all of one moment, whoever writes meanwhile
            with self._server.connection(wait=self._wait) as conn, conn.transaction():
                conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
                totals = conn.execute("SELECT documents, words FROM memory_totals WHERE location = %s",
                                      (self.location,)).fetchone()
                if not totals or not totals[0]:
                    return []
                documents = self._documents(conn, phrases)
                if all(len(phrase) == 1 for phrase in phrases):
                    return self._ranked_in_sql(conn, phrases, documents, totals, args)
                return self._ranked_here(conn, phrases, documents, totals, args)
        except Exception as exc:
            fail(self._where, exc)

    def _documents(self, conn: Any, phrases: list[tuple[str, ...]]) -> list[int]:
        """How many of the location's memories hold each phrase: a word's count from ``memory_words``;
        a phrase of several words counted over the memories holding them, in a row as FTS5 counts."""
        words = [phrase[0] for phrase in phrases if len(phrase) == 1]
        known = dict(conn.execute("SELECT word, documents FROM memory_words WHERE location = %s AND word = ANY(%s)",
                                  (self.location, words)).fetchall()) if words else {}
        longer = [phrase for phrase in phrases if len(phrase) > 1]
        counted: dict[tuple[str, ...], int] = {}
        if longer:
            args: dict[str, Any] = {"location": self.location, "every": sorted({w for p in longer for w in p})}
            filters = []
            for i, phrase in enumerate(longer):
                args[f"p{i}"], args[f"r{i}"] = list(phrase), "% " + _escaped_like(" ".join(phrase)) + " %"
                filters.append(f"count(*) FILTER (WHERE words @> %(p{i})s "
                               f"AND ' ' || array_to_string(words, ' ') || ' ' LIKE %(r{i})s)")
            row = conn.execute(f"SELECT {', '.join(filters)} FROM memories WHERE location = %(location)s "
                               "AND words && %(every)s", args).fetchone()
            counted = {phrase: int(n) for phrase, n in zip(longer, row, strict=True)}
        return [int(known.get(phrase[0], 0)) if len(phrase) == 1 else counted[phrase] for phrase in phrases]

    _SCOPE = ("location = %(location)s AND namespace = %(namespace)s AND user_id = %(user_id)s "
              "AND (%(share)s OR chat_id = %(chat_id)s OR visibility = 'user') AND words && %(every)s")

    def _ranked_in_sql(self, conn: Any, phrases: list[tuple[str, ...]], documents: list[int],
                       totals: tuple[int, int], args: dict[str, Any]) -> list[Hit]:
        """BM25 computed by the server over the caller's candidates, term by term in the order and
        with the operations of :func:`~hermes_ctx_plugins.storage.ranking.bm25` (the idf from here):
        the same scores to the last bit, and only the best ``limit`` rows come back."""
        count, average = totals[0], totals[1] / totals[0]
        args.update(avg=average, k1=K1, k1p1=K1 + 1, b=B, one_b=1 - B)
        frequencies, parts = [], []
        for i, ((word,), n) in enumerate(zip(phrases, documents, strict=True)):
            args[f"w{i}"], args[f"idf{i}"] = word, inverse_frequency(count, n)
            frequencies.append(f"coalesce(cardinality(array_positions(words, %(w{i})s::text)), 0) AS f{i}")
            parts.append(f"(CASE WHEN f{i} > 0 THEN %(idf{i})s::float8 * f{i} * %(k1p1)s::float8 / (f{i} + "
                         f"%(k1)s::float8 * (%(one_b)s::float8 + %(b)s::float8 * length / %(avg)s::float8)) "
                         "ELSE 0 END)")
        # OFFSET 0 keeps the frequencies computed once per row (inlined, each is evaluated per use)
        rows = conn.execute(
            f"SELECT {_CUT_COLUMNS}, verdict, s.score FROM (SELECT id, {' + '.join(parts)} AS score FROM "
            f"(SELECT id, length, {', '.join(frequencies)} FROM memories WHERE {self._SCOPE} OFFSET 0) c "
            "ORDER BY score DESC, id LIMIT %(limit)s) s JOIN memories m USING (id) WHERE s.score > 0 "
            "ORDER BY s.score DESC, id", args).fetchall()
        return [Hit(_memory(row[:-2]), float(row[-1]), row[-2]) for row in rows]

    def _ranked_here(self, conn: Any, phrases: list[tuple[str, ...]], documents: list[int],
                     totals: tuple[int, int], args: dict[str, Any]) -> list[Hit]:
        """BM25 here, for a query holding a phrase of several words (their positions matter)."""
        candidates = conn.execute(f"SELECT id, words, length FROM memories WHERE {self._SCOPE}", args).fetchall()
        scored = []
        average = totals[1] / totals[0]
        for id_, words, length in candidates:
            frequencies = [phrase_count(words, phrase) if len(phrase) > 1 else words.count(phrase[0])
                           for phrase in phrases]
            if any(frequencies):
                scored.append((bm25(frequencies, documents, totals[0], length, average), id_))
        scored.sort(key=lambda item: (-item[0], item[1]))
        best = scored[:args["limit"]]
        rows = {row[0]: row for row in conn.execute(
            f"SELECT {_CUT_COLUMNS}, verdict FROM memories WHERE id = ANY(%s)", ([i for _, i in best],)).fetchall()}
        return [Hit(_memory(rows[i][:-1]), score, rows[i][-1]) for score, i in best if i in rows]

    def get(self, ids: Iterable[int]) -> list[Memory]:
        wanted = sorted({int(i) for i in ids})
        if not wanted:
            return []
        rows = self._fetch(f"SELECT {_COLUMNS} FROM memories WHERE location = %s AND id = ANY(%s) ORDER BY id",
                           (self.location, wanted))
        return [_memory(row) for row in rows]

    # -- embeddings (:mod:`.vectors`) ------------------------------------------------------------------
    dense = True

    def unembedded(self, model: str, *, keys: Sequence[str] | None = None, below: int | None = None,
                   limit: int = 16) -> list[Memory]:
        return [_memory(row) for row in stored_vectors.unembedded(self, model, keys, below, limit, _COLUMNS)]

    def put_vectors(self, model: str, vectors: Sequence[tuple[int, bytes]], *,
                    keys: Sequence[str] | None = None) -> int:
        return stored_vectors.put_vectors(self, model, vectors, keys)

    def vectors(self, model: str, *, namespace: str, user_id: str, after: int = 0) -> list[Vector]:
        return stored_vectors.vectors(self, model, namespace, user_id, after)

    def vector_generation(self) -> int:
        return stored_vectors.vector_generation(self)

    @staticmethod
    def _filters(namespace: str | None, user_id: str | None, chat_id: str | None,
                 session_id: str | None) -> tuple[str, list[Any]]:
        where, args = [], []
        for column, value in (("namespace", namespace), ("user_id", user_id), ("chat_id", chat_id),
                              ("session_id", session_id)):
            if value is not None:
                where.append(f"{column} = %s")
                args.append(stored(value))
        return "".join(f" AND {w}" for w in where), args

    def memories(self, *, namespace: str | None = None, user_id: str | None = None, chat_id: str | None = None,
                 session_id: str | None = None) -> Iterator[Memory]:
        where, args = self._filters(namespace, user_id, chat_id, session_id)
        after = 0
        while True:  # in pages by id: an export of millions is never read at once, nor holds a connection
            rows = self._fetch(f"SELECT {_COLUMNS} FROM memories WHERE location = %s AND id > %s{where} "
                               "ORDER BY id LIMIT 500", (self.location, after, *args))
            yield from (_memory(row) for row in rows)
            if len(rows) < 500:
                return
            after = rows[-1][0]

    def scopes(self, namespace: str | None = None) -> list[tuple[str, str]]:
        where, args = self._filters(namespace, None, None, None)
        rows = self._fetch(f"SELECT DISTINCT user_id, chat_id FROM memories WHERE location = %s{where}",
                           (self.location, *args))
        return [(unstored(user), unstored(chat)) for user, chat in rows]

    def namespaces(self, *, user_id: str | None = None, chat_id: str | None = None,
                   session_id: str | None = None) -> dict[str, int]:
        where, args = self._filters(None, user_id, chat_id, session_id)
        rows = self._fetch(f"SELECT namespace, count(*) FROM memories WHERE location = %s{where} GROUP BY namespace",
                           (self.location, *args))
        return {unstored(namespace): int(count) for namespace, count in rows}

    def quarantined(self, namespace: str | None = None) -> list[Quarantined]:
        where, args = "", [self.location]
        if namespace is not None:
            where = " AND (namespace = %s OR namespace IS NULL)"
            args.append(stored(namespace))
        rows = self._fetch('SELECT id, segment, "offset", record, error, attempts, quarantined_at, namespace, user_id '
                           f"FROM quarantine WHERE location = %s{where} ORDER BY id", args)
        found = []
        for row in rows:
            values: list[Any] = [unstored(v) if isinstance(v, str) else v for v in row]
            found.append(Quarantined(*values))
        return found

    def stats(self, namespace: str | None = None) -> MemoryStats:
        where, args = self._filters(namespace, None, None, None)
        row = self._fetch(
            "SELECT count(*) FILTER (WHERE kind = 'turn'), count(*) FILTER (WHERE kind = 'fact'), "
            "count(DISTINCT (user_id, chat_id)), count(DISTINCT session_id), min(created_at), max(created_at) "
            f"FROM memories WHERE location = %s{where}", (self.location, *args))[0]
        size = self._fetch(
            "SELECT coalesce(sum(pg_column_size(m.*)), 0) FROM memories m WHERE location = %s", (self.location,))[0][0]
        return {"turns": int(row[0]), "facts": int(row[1]), "scopes": int(row[2]), "sessions": int(row[3]),
                "oldest": row[4], "newest": row[5], "quarantined": len(self.quarantined(namespace)),
                "bytes": int(size)}

    # -- forgetting ---------------------------------------------------------------------------------
    def _delete(self, condition: str, args: Sequence[Any], *, tombstones: Sequence[tuple[str | None, str]] = (),
                quarantine: tuple[str, Sequence[Any]] | None = None) -> tuple[list[int], int]:
        """Delete the memories matching ``condition`` (and quarantined records matching ``quarantine``),
        keep the totals true, and record a tombstone; returns (ids deleted, quarantined deleted)."""
        try:
            with self._server.transaction(lock=self._lock_id, lock_timeout=self._busy, wait=self._wait) as conn:
                gone = conn.execute(f"DELETE FROM memories WHERE location = %s AND {condition} RETURNING id, length",
                                    (self.location, *args)).fetchall()
                if gone:
                    conn.execute(_TOTALS, (self.location, -len(gone), -sum(length for _, length in gone)))
                quarantined = 0
                if quarantine is not None:
                    quarantined = conn.execute(f"DELETE FROM quarantine WHERE location = %s AND {quarantine[0]}",
                                               (self.location, *quarantine[1])).rowcount
                now = time.time()
                for namespace, user in tombstones:
                    conn.execute("INSERT INTO forgotten (location, namespace, user_id, at) VALUES (%s, %s, %s, %s)",
                                 (self.location, namespace, user, now))
        except Exception as exc:
            fail(self._where, exc)
        return sorted(i for i, _ in gone), quarantined

    def forget(self, ids: Iterable[int], *, namespace: str | None = None, user_id: str | None = None,
               chat_id: str | None = None) -> list[int]:
        wanted = sorted({int(i) for i in ids})
        if not wanted:
            return []
        where, args = self._filters(namespace, user_id, None, None)
        if chat_id is not None:
            where += " AND (chat_id = %s OR visibility = 'user')"
            args.append(stored(chat_id))
        return self._delete(f"id = ANY(%s){where}", [wanted, *args])[0]

    def forget_where(self, *, namespace: str | None = None, user_id: str | None = None, chat_id: str | None = None,
                     session_id: str | None = None) -> int:
        if user_id is None and chat_id is None and session_id is None:
            raise ValueError("forget needs ids, a user, a chat or a session")
        where, args = self._filters(namespace, user_id, chat_id, session_id)
        # a whole user forgotten holds against other workers' late writes, as forget_user does; a
        # chat or session of theirs has no tombstone (it would drop their other chats' writes too)
        tombstones: list[tuple[str | None, str]] = []
        if user_id is not None and chat_id is None and session_id is None:
            tombstones.append((None if namespace is None else stored(namespace), stored(user_id)))
        return len(self._delete("TRUE" + where, args, tombstones=tombstones)[0])

    def forget_user(self, user_id: str, namespaces: Collection[str] | None = None) -> tuple[int, int]:
        spaces = namespaces_asked(namespaces, stored)
        if spaces is not None and not spaces:
            return 0, 0
        user = stored(user_id)
        if spaces is None:
            gone, quarantined = self._delete("user_id = %s", [user], tombstones=[(None, user)],
                                             quarantine=("user_id = %s", [user]))
        else:
            chosen = sorted(spaces)
            gone, quarantined = self._delete(
                "user_id = %s AND namespace = ANY(%s)", [user, chosen], tombstones=[(s, user) for s in chosen],
                quarantine=("user_id = %s AND namespace = ANY(%s)", [user, chosen]))
        return len(gone), quarantined

    def compact(self) -> None:
        try:
            with self._server.connection(wait=self._wait) as conn, unbounded(conn):
                conn.execute("VACUUM memories")
                conn.execute("VACUUM quarantine")
        except Exception as exc:
            fail(self._where, exc)

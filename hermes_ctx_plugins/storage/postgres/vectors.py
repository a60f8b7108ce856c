"""ctx-local's embeddings on a PostgreSQL server: the vector methods of
:class:`~hermes_ctx_plugins.storage.base.MemoryBackend` for :class:`~.memory.PostgresMemory`.

``memory_vectors`` (schema version 6, :mod:`.schema`) holds one vector per memory as ``bytea``
(float32, little-endian), its row deleted with the memory by ``ON DELETE CASCADE``; a statement
trigger bumps the location's ``vector_generations`` row whenever vectors are deleted or replaced, and
a location's vectors are written one transaction at a time (:data:`_SERIAL`), so positions become
visible in order.
Not pgvector: ctx-local compares a question with an owner's vectors in its own process, from a
cache it catches up by position (``seq``), so the server only stores and streams them — a column
type any server has does that; pgvector would add an extension to install for no query it runs.
The owner's rows are found by ``owner`` (a 64-bit hash of namespace and user: a btree entry of a
long id could not be indexed) and then compared exactly.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ..base import Vector
from .connection import fail
from .text import stored, unstored

if TYPE_CHECKING:
    from .memory import PostgresMemory

#: the owner hash, of a memory's stored namespace and user id (the length keeps "ab" + "c" apart from "a" + "bc")
OWNER = "hashtextextended(length({ns})::text || ':' || {ns} || {user}, 0)"
_PUT = ("INSERT INTO memory_vectors (memory_id, location, namespace, user_id, owner, model, vector)"
        f" SELECT id, location, namespace, user_id, {OWNER.format(ns='namespace', user='user_id')}, %s, %s"
        " FROM memories WHERE id = %s AND location = %s AND (%s::text IS NULL OR key = %s::text)"
        " ON CONFLICT (memory_id) DO UPDATE SET model = excluded.model, vector = excluded.vector"
        # the same model's vector again (two processes walking one backlog) is left alone: replacing it
        # would bump the generation and void every reader's cache for nothing
        " WHERE memory_vectors.model <> excluded.model")
#: one writer of a location's vectors at a time (held to its commit): a ``seq`` is taken when a row is
#: inserted but seen when its transaction commits, so without this a later seq could be seen first and a
#: cache that caught up to it would skip the earlier one for good
_SERIAL = "SELECT pg_advisory_xact_lock(hashtextextended('hermes-ctx memory_vectors:' || %s, 0))"
_VECTORS = ("SELECT v.seq, v.memory_id, m.chat_id, m.visibility, v.vector FROM memory_vectors v"
            " JOIN memories m ON m.id = v.memory_id"
            f" WHERE v.location = %(location)s AND v.owner = {OWNER.format(ns='%(ns)s', user='%(user)s')}"
            " AND v.namespace = %(ns)s AND v.user_id = %(user)s AND v.seq > %(after)s AND v.model = %(model)s"
            " AND length(v.vector) > 0 ORDER BY v.seq")


def unembedded(store: PostgresMemory, model: str, keys: Sequence[str] | None, below: int | None,
               limit: int, columns: str) -> list[tuple[Any, ...]]:
    lacking = "NOT EXISTS (SELECT 1 FROM memory_vectors v WHERE v.memory_id = m.id AND v.model = %(model)s)"
    args: dict[str, Any] = {"location": store.location, "model": model, "limit": limit}
    if keys is not None:
        args["keys"] = [stored(key) for key in keys]
        where = "m.key = ANY(%(keys)s)"
    else:
        args["below"] = below
        where = "TRUE" if below is None else "m.id < %(below)s"
    return store._fetch(f"SELECT {columns} FROM memories m WHERE m.location = %(location)s AND {where}"
                        f" AND {lacking} ORDER BY m.id DESC LIMIT %(limit)s", args)


def put_vectors(store: PostgresMemory, model: str, vectors: Sequence[tuple[int, bytes]],
                keys: Sequence[str] | None = None) -> int:
    if not vectors:
        return 0
    try:
        with store._server.transaction(lock_timeout=store._busy, wait=store._wait) as conn:
            return put_in(conn, store.location, model, vectors, keys)
    except Exception as exc:
        fail(store._where, exc)


def put_in(conn: Any, location: str, model: str, vectors: Sequence[tuple[int, bytes]],
           keys: Sequence[str] | None = None) -> int:
    """:func:`put_vectors`' statements, in the caller's transaction ``conn`` (serialised per location:
    :data:`_SERIAL`)."""
    conn.execute(_SERIAL, (location,))
    wanted = [None if keys is None else stored(keys[n]) for n in range(len(vectors))]
    return sum(conn.execute(_PUT, (model, bytes(vector), int(memory_id), location, key, key)).rowcount
               for (memory_id, vector), key in zip(vectors, wanted, strict=True))


def vectors(store: PostgresMemory, model: str, namespace: str, user_id: str, after: int) -> list[Vector]:
    rows = store._fetch(_VECTORS, {"location": store.location, "ns": stored(namespace), "user": stored(user_id),
                                   "after": int(after), "model": model})
    return [Vector(int(seq), int(memory_id), unstored(chat), visibility, bytes(vector))
            for seq, memory_id, chat, visibility, vector in rows]


def vector_generation(store: PostgresMemory) -> int:
    rows = store._fetch("SELECT generation FROM vector_generations WHERE location = %s", (store.location,))
    return int(rows[0][0]) if rows else 0


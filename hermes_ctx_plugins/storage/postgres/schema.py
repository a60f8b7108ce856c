"""The tables on the server, created and migrated by the package: versioned, idempotent, and safe
when several workers start at once.

Everything lives in one schema (``ctx_plugins.storage.schema``, default ``hermes_ctx``); its table
``schema_version`` holds the version its tables are at. :func:`migrate` takes a transaction-level
advisory lock for the schema, reads the version, applies each later step in that one transaction and
records the new version — so two workers starting together migrate once, one after the other, and a
worker that finds the schema newer than it knows refuses to write into it.

Every row carries ``location`` (:func:`~.connection.location_key`): one server holds any number of
stores, as one folder holds any number of SQLite files. Text is stored with
:func:`~.text.stored` (PostgreSQL text takes neither NUL nor a lone surrogate).

Version 1:

* ``memories`` — ctx-local's memories: the owner, texts, ``words`` (the words of the body as
  :func:`~hermes_ctx_plugins.storage.text.tokens` cuts them, GIN-indexed; what search matches and
  BM25 counts) and ``length`` (BM25's, :func:`~hermes_ctx_plugins.storage.ranking.memory_length`);
  ``UNIQUE (location, key)`` is the idempotency key.
  ``memory_totals`` keeps each location's number of memories and words, for BM25's statistics.
* ``queue_progress`` — how far each worker's write-behind queue (``queue``: its id) is applied.
* ``forgotten`` — when a user was forgotten (and in which namespace, ``NULL``: every one): a write
  of theirs created before then is skipped when it arrives late from another worker's queue.
* ``quarantine`` — queued lines that kept failing, with their errors.
* ``stores`` — which locations were created (``memory_exists``, ``ArchiveBackend.exists``).
* ``compactions`` / ``messages`` — the archive; ``messages.folded`` is the searchable text
  case-folded, trigram-indexed (``pg_trgm``) when the server has that extension.

Version 2:

* ``documents`` — the file provider's MEMORY.md / USER.md (:mod:`.documents`): the bytes of each
  (``NULL``: forgotten) and ``revision``, from the sequence ``document_revisions`` (never reused, not
  even after a forget; ``0``: the row exists but was never written).

Version 3: the small tables indexed by location alone (an id longer than a btree entry holds could
not be indexed), and ``archive_forgotten`` — the archive's forgets, as ``forgotten`` is ctx-local's.

Version 4: ``memory_words`` — how many of a location's memories hold each word (BM25's document
counts), kept by statement triggers on ``memories`` and filled from the rows already there.

Version 5: ``memories.verdict`` — each memory's safety verdict (:mod:`~hermes_ctx_plugins.storage.verdicts`;
rows stored before have none, so recall scans them as it always did).

Version 6: ``memory_vectors`` and ``vector_generations`` — ctx-local's embeddings (:mod:`.vectors`).

Version 7: ``archive_vectors`` and ``archive_vector_generations`` — the archive's embeddings (the hybrid
``ctx_search``, :mod:`.archive`): one per message, deleted with it by ``ON DELETE CASCADE``.

Every start also makes the archive's trigram index where it is missing (``pg_trgm`` in ``public``).
"""

from __future__ import annotations

import hashlib
import logging
from typing import Any

from ..base import LocalStoreError

log = logging.getLogger("hermes_ctx_plugins.storage.postgres")

#: the version this package's tables are at
SCHEMA_VERSION = 7

_V1 = (
    """CREATE TABLE IF NOT EXISTS stores (
        location text NOT NULL, kind text NOT NULL, created double precision NOT NULL,
        PRIMARY KEY (location, kind))""",
    """CREATE TABLE IF NOT EXISTS memories (
        id bigserial PRIMARY KEY, location text NOT NULL, key text NOT NULL, kind text NOT NULL,
        namespace text NOT NULL, user_id text NOT NULL, chat_id text NOT NULL, session_id text NOT NULL,
        visibility text NOT NULL, user_text text NOT NULL, assistant_text text NOT NULL,
        fact_text text NOT NULL, source text NOT NULL, created_at double precision NOT NULL,
        words text[] NOT NULL, length integer NOT NULL,
        UNIQUE (location, key))""",
    "CREATE INDEX IF NOT EXISTS memories_owner ON memories (location, namespace, user_id, chat_id)",
    "CREATE INDEX IF NOT EXISTS memories_session ON memories (location, session_id)",
    "CREATE INDEX IF NOT EXISTS memories_words ON memories USING gin (words)",
    """CREATE TABLE IF NOT EXISTS memory_totals (
        location text PRIMARY KEY, documents bigint NOT NULL, words bigint NOT NULL)""",
    """CREATE TABLE IF NOT EXISTS queue_progress (
        location text NOT NULL, queue text NOT NULL, segment text NOT NULL, "offset" bigint NOT NULL,
        PRIMARY KEY (location, queue, segment))""",
    """CREATE TABLE IF NOT EXISTS quarantine (
        id bigserial PRIMARY KEY, location text NOT NULL, queue text NOT NULL, segment text NOT NULL,
        "offset" bigint NOT NULL, record text NOT NULL, error text NOT NULL, attempts integer NOT NULL,
        quarantined_at double precision NOT NULL, namespace text, user_id text)""",
    """CREATE TABLE IF NOT EXISTS forgotten (
        location text NOT NULL, namespace text, user_id text NOT NULL, at double precision NOT NULL)""",
    "CREATE INDEX IF NOT EXISTS forgotten_user ON forgotten (location, user_id)",
    "CREATE INDEX IF NOT EXISTS quarantine_location ON quarantine (location, namespace, user_id)",
    """CREATE TABLE IF NOT EXISTS compactions (
        id bigserial PRIMARY KEY, location text NOT NULL, namespace text NOT NULL, session_id text NOT NULL,
        user_id text NOT NULL, strategy text NOT NULL, created double precision NOT NULL,
        removed integer NOT NULL, tokens_before integer NOT NULL, tokens_after integer NOT NULL)""",
    "CREATE INDEX IF NOT EXISTS compactions_owner ON compactions (location, namespace, session_id, user_id)",
    "CREATE INDEX IF NOT EXISTS compactions_user ON compactions (location, user_id)",
    "CREATE INDEX IF NOT EXISTS compactions_created ON compactions (location, created)",
    """CREATE TABLE IF NOT EXISTS messages (
        id bigserial PRIMARY KEY, location text NOT NULL,
        compaction_id bigint NOT NULL REFERENCES compactions (id) ON DELETE CASCADE,
        namespace text NOT NULL, session_id text NOT NULL, user_id text NOT NULL, seq integer NOT NULL,
        position integer NOT NULL, role text NOT NULL, tool_call_id text NOT NULL, call_ids text[] NOT NULL,
        message text NOT NULL, text text NOT NULL, folded text NOT NULL, length integer NOT NULL,
        size bigint NOT NULL, created double precision NOT NULL)""",
    "CREATE INDEX IF NOT EXISTS messages_session ON messages (location, namespace, session_id, seq)",
    "CREATE INDEX IF NOT EXISTS messages_user ON messages (location, namespace, user_id)",
    "CREATE INDEX IF NOT EXISTS messages_compaction ON messages (compaction_id)",
    "CREATE INDEX IF NOT EXISTS messages_tool_call ON messages (location, tool_call_id)",
    "CREATE INDEX IF NOT EXISTS messages_call_ids ON messages USING gin (call_ids)",
)
#: the file provider's MEMORY.md / USER.md (:mod:`.documents`)
_V2 = (
    "CREATE SEQUENCE IF NOT EXISTS document_revisions",
    """CREATE TABLE IF NOT EXISTS documents (
        location text PRIMARY KEY, content bytea, revision bigint NOT NULL, updated double precision NOT NULL)""",
)
#: btree entries hold at most ~2.7 kB: an index on an id column would refuse one long incompressible
#: id and stop every write of the location, so the small tables are indexed by location alone; the
#: archive's forgets are remembered like the memories' (a spooled compaction of a forgotten user,
#: imported later by another worker, is dropped)
_V3 = (
    "DROP INDEX IF EXISTS quarantine_location",
    "CREATE INDEX IF NOT EXISTS quarantine_by_location ON quarantine (location)",
    "DROP INDEX IF EXISTS forgotten_user",
    "CREATE INDEX IF NOT EXISTS forgotten_by_location ON forgotten (location)",
    """CREATE TABLE IF NOT EXISTS archive_forgotten (
        location text NOT NULL, namespace text, session_id text, user_id text NOT NULL,
        at double precision NOT NULL)""",
    "CREATE INDEX IF NOT EXISTS archive_forgotten_by_location ON archive_forgotten (location)",
)
#: how many of a location's memories hold each word: BM25's document counts read with one indexed
#: lookup instead of a scan of every memory holding a query word (kept by statement triggers, whoever
#: writes or deletes; ``{schema}`` is the schema's quoted name)
_V4 = (
    """CREATE TABLE IF NOT EXISTS memory_words (
        location text NOT NULL, word text NOT NULL, documents bigint NOT NULL, PRIMARY KEY (location, word))""",
    """CREATE OR REPLACE FUNCTION memory_words_added() RETURNS trigger LANGUAGE plpgsql
       SET search_path = {schema}, public AS $$
    BEGIN
      INSERT INTO memory_words (location, word, documents)
      SELECT a.location, d.word, count(*) FROM added a, LATERAL (SELECT DISTINCT unnest(a.words) AS word) d
      GROUP BY 1, 2
      ON CONFLICT (location, word) DO UPDATE SET documents = memory_words.documents + excluded.documents;
      RETURN NULL;
    END $$""",
    """CREATE OR REPLACE FUNCTION memory_words_gone() RETURNS trigger LANGUAGE plpgsql
       SET search_path = {schema}, public AS $$
    BEGIN
      UPDATE memory_words m SET documents = m.documents - g.n FROM (
        SELECT a.location, d.word, count(*) AS n FROM gone a, LATERAL (SELECT DISTINCT unnest(a.words) AS word) d
        GROUP BY 1, 2) g
      WHERE m.location = g.location AND m.word = g.word;
      RETURN NULL;
    END $$""",
    "DROP TRIGGER IF EXISTS memories_added ON memories",
    """CREATE TRIGGER memories_added AFTER INSERT ON memories REFERENCING NEW TABLE AS added
       FOR EACH STATEMENT EXECUTE FUNCTION memory_words_added()""",
    "DROP TRIGGER IF EXISTS memories_gone ON memories",
    """CREATE TRIGGER memories_gone AFTER DELETE ON memories REFERENCING OLD TABLE AS gone
       FOR EACH STATEMENT EXECUTE FUNCTION memory_words_gone()""",
    """INSERT INTO memory_words (location, word, documents)
       SELECT m.location, d.word, count(*) FROM memories m, LATERAL (SELECT DISTINCT unnest(m.words) AS word) d
       GROUP BY 1, 2 ON CONFLICT DO NOTHING""",
    "ANALYZE memories",
)
_V5 = ("ALTER TABLE memories ADD COLUMN IF NOT EXISTS verdict text NOT NULL DEFAULT ''",)
#: ctx-local's embeddings (:mod:`.vectors`): deleted with their memory; a statement trigger per kind of
#: change (a trigger with transition tables takes one event) bumps the location's generation
_V6 = (
    """CREATE TABLE IF NOT EXISTS memory_vectors (
        seq bigserial PRIMARY KEY,
        memory_id bigint NOT NULL UNIQUE REFERENCES memories (id) ON DELETE CASCADE,
        location text NOT NULL, namespace text NOT NULL, user_id text NOT NULL, owner bigint NOT NULL,
        model text NOT NULL, vector bytea NOT NULL)""",
    "CREATE INDEX IF NOT EXISTS memory_vectors_owner ON memory_vectors (location, owner, seq)",
    "CREATE TABLE IF NOT EXISTS vector_generations (location text PRIMARY KEY, generation bigint NOT NULL)",
    """CREATE OR REPLACE FUNCTION memory_vectors_changed() RETURNS trigger LANGUAGE plpgsql
       SET search_path = {schema}, public AS $$
    BEGIN
      INSERT INTO vector_generations (location, generation) SELECT DISTINCT location, 1 FROM changed
      ON CONFLICT (location) DO UPDATE SET generation = vector_generations.generation + 1;
      RETURN NULL;
    END $$""",
    "DROP TRIGGER IF EXISTS memory_vectors_gone ON memory_vectors",
    """CREATE TRIGGER memory_vectors_gone AFTER DELETE ON memory_vectors REFERENCING OLD TABLE AS changed
       FOR EACH STATEMENT EXECUTE FUNCTION memory_vectors_changed()""",
    "DROP TRIGGER IF EXISTS memory_vectors_replaced ON memory_vectors",
    """CREATE TRIGGER memory_vectors_replaced AFTER UPDATE ON memory_vectors REFERENCING OLD TABLE AS changed
       FOR EACH STATEMENT EXECUTE FUNCTION memory_vectors_changed()""",
)
#: the archive's embeddings, as ctx-local's: deleted with their message (whichever path deletes it), a
#: statement trigger per kind of change bumping the location's generation
_V7 = (
    """CREATE TABLE IF NOT EXISTS archive_vectors (
        seq bigserial PRIMARY KEY,
        message_id bigint NOT NULL UNIQUE REFERENCES messages (id) ON DELETE CASCADE,
        location text NOT NULL, model text NOT NULL, vector bytea NOT NULL)""",
    "CREATE INDEX IF NOT EXISTS archive_vectors_location ON archive_vectors (location, seq)",
    """CREATE TABLE IF NOT EXISTS archive_vector_generations (
        location text PRIMARY KEY, generation bigint NOT NULL)""",
    """CREATE OR REPLACE FUNCTION archive_vectors_changed() RETURNS trigger LANGUAGE plpgsql
       SET search_path = {schema}, public AS $$
    BEGIN
      INSERT INTO archive_vector_generations (location, generation) SELECT DISTINCT location, 1 FROM changed
      ON CONFLICT (location) DO UPDATE SET generation = archive_vector_generations.generation + 1;
      RETURN NULL;
    END $$""",
    "DROP TRIGGER IF EXISTS archive_vectors_gone ON archive_vectors",
    """CREATE TRIGGER archive_vectors_gone AFTER DELETE ON archive_vectors REFERENCING OLD TABLE AS changed
       FOR EACH STATEMENT EXECUTE FUNCTION archive_vectors_changed()""",
    "DROP TRIGGER IF EXISTS archive_vectors_replaced ON archive_vectors",
    """CREATE TRIGGER archive_vectors_replaced AFTER UPDATE ON archive_vectors REFERENCING OLD TABLE AS changed
       FOR EACH STATEMENT EXECUTE FUNCTION archive_vectors_changed()""",
)
#: each version's statements, applied in order in one transaction (``{schema}``: the schema's quoted name)
STEPS: dict[int, tuple[str, ...]] = {1: _V1, 2: _V2, 3: _V3, 4: _V4, 5: _V5, 6: _V6, 7: _V7}


def lock_id(*parts: str) -> int:
    """A signed 64-bit advisory lock id for ``parts`` (stable across processes and versions)."""
    digest = hashlib.blake2b("\x00".join(parts).encode("utf-8", "surrogatepass"), digest_size=8).digest()
    return int.from_bytes(digest, "big", signed=True)


def quote_ident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def current_version(conn: Any, schema: str) -> int:
    """The version the schema's tables are at (0: not created yet)."""
    found = conn.execute("SELECT to_regclass(%s)", (f"{quote_ident(schema)}.schema_version",)).fetchone()[0]
    if found is None:
        return 0
    row = conn.execute(f"SELECT max(version) FROM {quote_ident(schema)}.schema_version").fetchone()
    return int(row[0] or 0)


def migrate(conn: Any, schema: str, *, wait: float | None = None) -> int:
    """Bring ``schema`` to :data:`SCHEMA_VERSION` (see the module docs); returns the version found.

    A schema already current (its trigram index made, or the server without ``pg_trgm``) is left as it is
    without taking the migration lock: another worker migrating, building the index or frozen half way
    through holds it, and a worker starting meanwhile must not wait on it in its users' turns. ``wait``:
    the longest the migration lock is waited for (``None``: as long as it is held).

    :raises LocalStoreError: the schema is of a newer version (reason ``unsupported``).
    :raises psycopg.errors.LockNotAvailable: the lock was not had within ``wait`` (reason ``locked``).
    """
    name = quote_ident(schema)
    found = current_version(conn, schema)
    if found == SCHEMA_VERSION and not _trigram_missing(conn, schema):
        return found
    with conn.transaction():
        bound = 0 if wait is None else max(1, int(wait * 1000))  # ms; 0: no bound
        conn.execute(f"SET LOCAL statement_timeout = 0; SET LOCAL lock_timeout = {bound}")
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (lock_id("hermes-ctx schema", schema),))
        conn.execute("SET LOCAL lock_timeout = 0")  # the lock is ours: an index on a big table takes what it takes
        conn.execute(f"CREATE SCHEMA IF NOT EXISTS {name}")
        conn.execute(f"CREATE TABLE IF NOT EXISTS {name}.schema_version (version integer NOT NULL, "
                     "migrated double precision NOT NULL DEFAULT extract(epoch FROM now()))")
        found = current_version(conn, schema)
        if found > SCHEMA_VERSION:
            raise LocalStoreError(f"postgres schema {schema}", "unsupported", f"schema version {found}",
                                  f"it was written by a newer hermes-ctx-plugins (this one knows {SCHEMA_VERSION}); "
                                  "upgrade, or set ctx_plugins.storage.schema to another schema")
        conn.execute(f"SET LOCAL search_path TO {name}, public")
        for version in range(found + 1, SCHEMA_VERSION + 1):
            for statement in STEPS[version]:
                conn.execute(statement.replace("{schema}", name))
            conn.execute(f"INSERT INTO {name}.schema_version (version) VALUES (%s)", (version,))
        _trigram_index(conn, schema)
    return found


def _trigram_missing(conn: Any, schema: str) -> bool:
    """Whether the archive's trigram index is missing where the server could make it (``pg_trgm`` available)."""
    if conn.execute("SELECT to_regclass(%s)", (f"{quote_ident(schema)}.messages_folded",)).fetchone()[0]:
        return False
    return conn.execute("SELECT 1 FROM pg_available_extensions WHERE name = 'pg_trgm'").fetchone() is not None


def _trigram_index(conn: Any, schema: str) -> None:
    """The archive's trigram index, made at every start where it is missing: ``pg_trgm`` lives in
    ``public`` (created there if the role may; another schema's migration never owns it), and a
    server or role without it leaves the archive searched without an index, said once per start."""
    if conn.execute("SELECT to_regclass(%s)", (f"{quote_ident(schema)}.messages_folded",)).fetchone()[0]:
        return
    try:
        with conn.transaction():  # a savepoint: a missing extension leaves the migration standing
            conn.execute("CREATE EXTENSION IF NOT EXISTS pg_trgm WITH SCHEMA public")
            home = conn.execute("SELECT extnamespace::regnamespace::text FROM pg_extension "
                                "WHERE extname = 'pg_trgm'").fetchone()[0]
            conn.execute(f"CREATE INDEX IF NOT EXISTS messages_folded ON {quote_ident(schema)}.messages "
                         f"USING gin (folded {home}.gin_trgm_ops)")
    except Exception as exc:
        log.warning("PostgreSQL schema %s: no trigram index for the archive (%s); it is searched without one",
                    schema, " ".join(str(exc).split()))

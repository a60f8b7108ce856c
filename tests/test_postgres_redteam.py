"""An adversarial review of the PostgreSQL backend, on a real embedded server.

Two kinds of tests live here:

* **Found in review (fixed)**: each reproduced a way an operator, a user or an attacker broke the
  backend (a long word or id stopping every user's memory, a forget not holding against another
  worker's spool or quarantine, doctor saying OK to a role that cannot create the schema, …); its
  docstring names the defect and what it cost. One, letters newer than SQLite's Unicode tables, is
  a known difference, marked ``xfail``.
* **Held in review**: attacks that were tried and that the backend withstood, kept as regression
  tests (isolation under hostile ids, SQL text built from config, ranking as SQLite's).

Every "X never sees it" is paired with "the owner does see it".
"""

from __future__ import annotations

import json
import logging
import random
import secrets
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest

from hermes_ctx_plugins import SessionInfo, Turn, storage
from hermes_ctx_plugins.config import Config, load_config
from hermes_ctx_plugins.memory.local import LocalProvider
from hermes_ctx_plugins.storage import (
    ArchiveBackend,
    LocalStoreError,
    MemoryBackend,
    Record,
    Scope,
    is_store_failure,
    json_text,
)
from hermes_ctx_plugins.storage import text as memory_query
from hermes_ctx_plugins.testing.postgres import EmbeddedPostgres

EVE = SessionInfo(session_id="s-eve", user_id="eve", chat_id="dm")
BOB = SessionInfo(session_id="s-bob", user_id="bob", chat_id="dm")


def on_postgres(dsn: str, tmp_path: Path | None = None, **storage_settings: Any) -> Config:
    settings: dict[str, Any] = {"storage": {"backend": "postgres", "dsn": dsn, **storage_settings}}
    if tmp_path is not None:
        settings["archive"] = {"path": str(tmp_path / "archive.db")}
    return load_config({"ctx_plugins": settings})


def fact(text: str, *, user: str = "alice", chat: str = "c1", namespace: str = "", key: str = "",
         created: float = 1_700_000_000.0) -> Record:
    return Record(key=key or f"fact:{secrets.token_hex(8)}", kind="fact", namespace=namespace, user_id=user,
                  chat_id=chat, session_id="s1", visibility="chat", fact_text=text, source="test", created_at=created)


def found(store: MemoryBackend, question: str, *, user: str = "alice", chat: str = "c1",
          namespace: str = "") -> list[str]:
    hits = store.search(memory_query.query_terms(question), namespace=namespace, user_id=user, chat_id=chat,
                        share_across_chats=False, limit=20)
    return [hit.memory.fact_text for hit in hits]


@pytest.fixture
def memory(postgres_dsn: str, tmp_path: Path) -> Iterator[MemoryBackend]:
    store = storage.open_memory(on_postgres(postgres_dsn), tmp_path / "memory.db")
    yield store
    store.close()


@pytest.fixture
def archive(postgres_dsn: str, tmp_path: Path) -> Iterator[ArchiveBackend]:
    store = storage.open_archive(on_postgres(postgres_dsn, tmp_path, connect_timeout=1))
    yield store
    store.close()


# == defects: one user stops everyone ==================================================================


def test_a_long_word_in_a_turn_is_stored_as_sqlite_stores_it(memory: MemoryBackend, tmp_path: Path) -> None:
    """Found in review (fixed) (availability, every user): a memory holding one "word" past ~2.7 kB — a pasted hex
    blob, an Ethereum calldata, a long hash chain — exceeds the GIN index's entry size on ``words``;
    the server's ProgramLimitExceeded is reported as reason ``unavailable`` (an outage), so the
    write-behind queue retries that batch for ever and no later turn of anyone at that location is
    stored. SQLite stores the memory (and finds it by its other words)."""
    blob = "0x" + secrets.token_hex(1600)
    pasted = fact(f"please decode this calldata {blob} for me")
    sqlite = storage.open_memory(load_config({}), tmp_path / "sqlite" / "memory.db")
    try:
        sqlite.write([pasted])
        assert found(sqlite, "decode the calldata") == [pasted.fact_text]
    finally:
        sqlite.close()
    try:
        memory.write([pasted])
    except Exception as exc:
        # whatever else happens, one record must never look like the server being down
        assert not is_store_failure(exc), f"a record's own problem reported as an outage: {exc}"
        raise
    assert found(memory, "decode the calldata") == [pasted.fact_text]


def test_one_users_pasted_blob_does_not_stop_every_users_memory(postgres_dsn: str, tmp_path: Path) -> None:
    """Found in review (fixed) (availability, every user): the consequence of the above through ctx-local's queue —
    eve pastes a 3.2 kB hex string, bob then tells his own fact: bob's turn is never stored (the
    queue retries eve's batch "until the server answers again", which it already does) and bob's
    recall stays empty, at this worker and every other, across restarts."""
    provider = LocalProvider({}, hermes_home=tmp_path / "hermes", config=on_postgres(postgres_dsn))
    try:
        provider.sync_turn(Turn(session=EVE, turn_number=1, assistant_text="sure",
                                user_text="decode this calldata 0x" + secrets.token_hex(1600)))
        provider.sync_turn(Turn(session=BOB, turn_number=1, user_text="my bike is a green Brompton",
                                assistant_text="noted"))
        assert provider.flush(20), "the queue is stuck behind eve's turn"
        assert "Brompton" in provider.prefetch("which bike do I have?", session=BOB)
        assert "Brompton" not in provider.prefetch("which bike do I have?", session=EVE)
    finally:
        provider.shutdown()


def test_a_long_user_id_is_the_records_problem_not_an_outage(memory: MemoryBackend) -> None:
    """Found in review (fixed) (availability, every user): a user, chat, session id or namespace past ~2.7 kB (a
    Bridge passing a platform's opaque token as the user id; SQLite takes any length) exceeds the
    btree entry size of ``memories_owner`` / ``UNIQUE (location, key)``; reported as ``unavailable``
    it wedges the queue for everyone as above. Either store it, or raise it as the record's own
    error (the queue then quarantines that one record and goes on)."""
    long_id = secrets.token_hex(1500)
    try:
        memory.write([fact("a fact of a user with a long id", user=long_id)])
    except Exception as exc:
        assert not is_store_failure(exc), f"a record's own problem reported as an outage: {exc}"
    memory.write([fact("bob's own fact about kettles", user="bob")])
    assert found(memory, "kettles", user="bob") == ["bob's own fact about kettles"]


def test_one_compaction_the_server_refuses_does_not_spool_every_later_one(archive: ArchiveBackend) -> None:
    """Found in review (fixed) (archive lost to search, every user): a compaction the server refuses for what it
    holds (here a 3 kB user id: ``compactions_owner`` btree entry too large) goes to the spool —
    and since every later ``record`` first imports the spool and stops at its first failure, every
    later compaction of every user at this location is spooled too, for ever: ``ctx_search`` never
    finds them, and no other worker ever sees them."""
    archive.record(session_id="s-eve", user_id=secrets.token_hex(1500), strategy="window",
                   removed=[(0, {"role": "user", "content": "hello there"})])
    archive.record(session_id="s-bob", user_id="bob", strategy="window",
                   removed=[(0, {"role": "user", "content": "bob's plan: move to Porto in May"})])
    hits = archive.search("Porto", Scope(session_id="s-bob", user_id="bob"))
    assert [h.session_id for h in hits] == ["s-bob"]
    assert archive.search("Porto", Scope(session_id="s-eve", user_id="eve")) == []


def test_a_pool_every_connection_of_which_is_in_use_is_not_called_the_server_down(
        postgres_dsn: str, tmp_path: Path) -> None:
    """A fleet pass: 24 users' turns at once in one Bridge process, pool_size 4; recall was skipped for some and the
    log said "no connection to the server", the server answering all along. The error says what happened."""
    from hermes_ctx_plugins.storage.postgres.connection import Server

    config = on_postgres(postgres_dsn, pool_size=1, connect_timeout=1, schema="rt_pool_busy")  # its own pool
    store = storage.open_memory(config, tmp_path / "memory.db")
    store.write([fact("the kiln key is in the blue tin")])
    try:
        with Server.of(config).connection():  # the one connection, lent out
            with pytest.raises(LocalStoreError) as busy:
                found(store, "kiln key")
        assert "every connection of this process's pool was in use (1;" in str(busy.value)
        assert "pool_size" in str(busy.value) and "no connection to the server" not in str(busy.value)
        assert "until the server answers again" not in str(busy.value)
        assert found(store, "kiln key") == ["the kiln key is in the blue tin"]  # lent back: it answers
    finally:
        store.close()


@pytest.mark.parametrize("backend", ["postgres", "sqlite"])
def test_forget_on_a_live_worker_reports_success_where_the_store_drops_late_writes(
        backend: str, postgres_dsn: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A fleet pass: ``forget --user`` on a worker that is serving (its queue file is being written) exited 1,
    "forget again once the processes writing them have stopped" -- on a fleet they never stop. PostgreSQL drops
    such a late write when it arrives (its tombstone), so that is a note there; SQLite stores it: still an error."""
    from hermes_ctx_plugins.memory.local import provider as local_provider

    config = on_postgres(postgres_dsn, schema=f"rt_live_{backend}") if backend == "postgres" else load_config({})
    provider = LocalProvider({}, hermes_home=tmp_path, config=config)
    try:
        provider.sync_turn(Turn(session=EVE, turn_number=1, user_text="eve's locker is 4471", assistant_text="ok"))
        assert provider.flush(10)
        live = tmp_path / "ctx-local" / "memory.db.queue" / "another-process.seg"
        monkeypatch.setattr(local_provider, "held_records", lambda *a: {live: 2})  # a running worker's segment
        [report] = provider.forget_user("eve")
        assert report.removed == 1
        if backend == "postgres":
            assert report.ok and "2 more in queue files running processes write" in report.detail, report
        else:
            assert not report.ok and "forget again once the processes writing them have stopped" in report.error
    finally:
        provider.shutdown()


# == defects: a forget that does not hold ==============================================================


def test_an_archive_forget_holds_against_another_workers_spool(
        postgres: EmbeddedPostgres, postgres_dsn: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Found in review (fixed) (privacy: forgotten text comes back): the archive has no tombstones. Worker B
    compacts alice's session while the server restarts, so her messages wait in B's own spool;
    alice is then forgotten through worker A (which clears the server and A's spool only); B's
    next compaction — of anyone — imports its spool, and alice's messages are back in the shared
    archive, searchable by her session, after the forget reported them removed."""
    config = on_postgres(postgres_dsn, connect_timeout=1)
    workers = {}
    for name in ("a", "b"):  # two workers, each its own HERMES_HOME: one location on the server
        home = tmp_path / name
        monkeypatch.setenv("HERMES_HOME", str(home))
        workers[name] = storage.open_archive(config)
    a, b = workers["a"], workers["b"]
    secret = {"role": "user", "content": "alice's secret: the safe code is 4471"}
    with postgres.down():
        b.record(session_id="s-alice", user_id="alice", strategy="window", removed=[(0, secret)])
    assert b.stats()["spooled"] == 1
    a.record(session_id="s-alice", user_id="alice", strategy="window",
             removed=[(1, {"role": "user", "content": "alice again: the safe is behind the painting"})])
    alice = Scope(session_id="s-alice", user_id="alice")
    assert a.search("safe", alice)  # the owner sees hers before the forget
    [report] = a.forget_user("alice")
    assert report.removed == 1 and not report.error
    b.record(session_id="s-bob", user_id="bob", strategy="window",
             removed=[(0, {"role": "user", "content": "bob likes kettles"})])
    assert a.search("kettles", Scope(session_id="s-bob", user_id="bob"))  # bob's arrived
    assert a.search("safe code 4471", alice) == [], "alice's forgotten messages came back from B's spool"


def test_a_forget_holds_against_a_shared_threads_compaction_in_another_workers_spool(
        postgres: EmbeddedPostgres, postgres_dsn: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The same with a thread several users speak in: the compaction waiting in B's spool is bob's, alice's turns
    in it are hers (each message its speaker's); forgetting alice through A must drop it when B imports it."""
    config = on_postgres(postgres_dsn, connect_timeout=1)
    workers = {}
    for name in ("a", "b"):
        monkeypatch.setenv("HERMES_HOME", str(tmp_path / name))
        workers[name] = storage.open_archive(config)
    a, b = workers["a"], workers["b"]
    turns = [(0, {"role": "user", "content": "[alice] the safe code is 4471"}),
             (1, {"role": "user", "content": "[bob] noted, the safe"})]
    with postgres.down():
        b.record(session_id="thread", user_id="bob", strategy="window", removed=turns, owners=["alice", "bob"])
    a.record(session_id="thread", user_id="alice", strategy="window",
             removed=[(2, {"role": "user", "content": "[alice] the safe is behind the painting"})])
    [report] = a.forget_user("alice")
    assert report.removed == 1 and not report.error
    b.record(session_id="s-bob", user_id="bob", strategy="window",
             removed=[(0, {"role": "user", "content": "bob likes kettles"})])
    assert a.search("kettles", Scope(session_id="s-bob", user_id="bob"))  # B's spool was imported
    everything = Scope(session_id="", everything=True)
    assert a.search("4471", everything) == [], "alice's forgotten turn came back from B's spool"


def test_a_quarantined_line_of_a_forgotten_user_is_not_kept(memory: MemoryBackend) -> None:
    """Found in review (fixed) (privacy): the tombstone a ``forget_user`` leaves skips a forgotten user's late write
    from another worker's queue — but not the same line arriving as a quarantine (another worker
    gave up on it after the forget): the forgotten user's text is then kept in ``quarantine`` and
    shown by ``hermes-ctx memory quarantined`` / counted by stats, after the forget returned."""
    before = time.time() - 30
    late = fact("alice's address is 12 Elm Street", created=before)
    memory.write([fact("alice's first fact", created=before - 30)])
    assert memory.forget_user("alice") == (1, 0)
    assert memory.write([late]) == 0  # the tombstone holds for a late write ...
    memory.quarantine("seg-000001", 120, json_text(late.as_json()), "ValueError: kept failing", 3)
    assert memory.progress()["seg-000001"] == 120  # the queue moves on either way
    assert [q.record for q in memory.quarantined() if "Elm Street" in q.record] == []  # ... and for this


# == defects: the operator is told something untrue ====================================================


def test_doctor_fails_when_the_role_cannot_create_the_schema(postgres: EmbeddedPostgres,
                                                                    tmp_path: Path) -> None:
    """Found in review (fixed) (doctor says OK, first use fails): a role without CREATE on the database (the usual
    application role) gets three OK lines — connection, "schema not created yet: brought to
    version 2 at its first use", pool — while that first use fails with "permission denied for
    database": memory is skipped and every compaction spooled. Doctor should check the privilege
    it will need (and ``pg_is_in_recovery()``)."""
    dsn = postgres.database("rt_doctor_role")
    try:
        with psycopg.connect(dsn, autocommit=True) as conn:
            conn.execute("DROP ROLE IF EXISTS rt_app")
            conn.execute("CREATE ROLE rt_app LOGIN")
        config = on_postgres(dsn.replace("postgres:@", "rt_app:@", 1))
        with pytest.raises(storage.LocalStoreError, match="permission denied"):
            storage.open_memory(config, tmp_path / "memory.db")
        lines = storage.check(config)
        assert not all(ok for _, ok, _ in lines), lines
    finally:
        storage.release()
        postgres.drop("rt_doctor_role")


def test_a_second_schema_on_one_database_gets_its_trigram_index(postgres: EmbeddedPostgres,
                                                                       tmp_path: Path) -> None:
    """Found in review (fixed) (archive search a full scan, for good): ``CREATE EXTENSION pg_trgm`` runs with the
    migrated schema first on ``search_path``, so the extension lands in the FIRST schema migrated
    on the database; a second schema (a second tenant, or ``ctx_plugins.storage.schema`` changed)
    then cannot see ``gin_trgm_ops``, its ``messages_folded`` index fails (only a warning), version
    1 is recorded as done, and it is never tried again. (Dropping the first schema with CASCADE
    also drops the extension under every other schema.)"""
    dsn = postgres.database("rt_two_schemas")
    try:
        for schema in ("tenant_a", "tenant_b"):
            store = storage.open_archive(on_postgres(dsn, tmp_path, schema=schema))
            store.record(session_id="s1", user_id="u", strategy="window",
                         removed=[(0, {"role": "user", "content": "hello there"})])
        with psycopg.connect(dsn) as conn:
            indexed = {row[0] for row in conn.execute(
                "SELECT schemaname FROM pg_indexes WHERE indexname = 'messages_folded'").fetchall()}
        assert indexed == {"tenant_a", "tenant_b"}
    finally:
        storage.release()
        postgres.drop("rt_two_schemas")


# == defects: results that differ from SQLite ==========================================================


@pytest.mark.xfail(strict=True, reason="known: the words of ctx-local fold case with Python's Unicode tables, "
                   "newer than FTS5's unicode61; PostgreSQL and the in-memory backend find these, SQLite does not")
@pytest.mark.parametrize("stored_text, asked", [
    ("ᲡᲐᲥᲐᲠᲗᲕᲔᲚᲝ trip", "საქართველო"),  # Georgian Mtavruli capitals (Unicode 11), asked in Mkhedruli
    ("ᎾᎪᏃ".lower() + " notes", "ᎾᎪᏃ"),  # Cherokee small letters (Unicode 8), asked in capitals
])
def test_letters_newer_than_sqlites_tables_match_as_in_sqlite(memory: MemoryBackend, tmp_path: Path,
                                                                     stored_text: str, asked: str) -> None:
    """Found in review (fixed) (low; results differ from SQLite): ``storage.text.tokens`` folds case with Python's
    Unicode tables, FTS5 with its own older ones, so letters cased after them (Georgian Mtavruli,
    Cherokee small letters, some Latin additions) are one word on PostgreSQL and two on SQLite —
    a different result set and, through the document lengths, different scores for the whole
    location. The module claims agreement "on letters and digits of any script"."""
    sqlite = storage.open_memory(load_config({}), tmp_path / "sqlite" / "memory.db")
    try:
        for store in (sqlite, memory):
            store.write([fact(stored_text, key="k1"), fact("unrelated words", key="k2")])
        assert found(memory, asked) == found(sqlite, asked)
    finally:
        sqlite.close()


# == held: kept as regression tests ====================================================================

HOSTILE_IDS = ["", "\x00", "a\x00b", "\ud800", "\\", "\\\\", "\\u0000", "%", "_", "a%", "a_", "é", "e\u0301",
               "İ", "i̇", "ß", "SS", "ss", "*", "'; DROP TABLE memories; --", "x" * 10_000]


def test_hostile_ids_see_and_forget_only_their_own(memory: MemoryBackend) -> None:
    """Held in review: ids that are NUL, lone surrogates, backslashes, LIKE metacharacters, equal after NFC or
    casefold, SQL text, or 10 kB (compressible) each see exactly their own memories, and forgetting
    one forgets no other; every owner still finds their own."""
    memory.write([fact(f"the kettle note number {i}", user=uid, chat=uid, namespace=uid, key=f"k{i}")
                  for i, uid in enumerate(HOSTILE_IDS)])
    for i, uid in enumerate(HOSTILE_IDS):
        assert found(memory, "kettle note", user=uid, chat=uid, namespace=uid) == [f"the kettle note number {i}"]
        assert [m.user_id for m in memory.memories(user_id=uid)] == [uid]
    victim = HOSTILE_IDS.index("%")
    assert memory.forget_user("%") == (1, 0)
    assert memory.forget_user("_", [""]) == (0, 0)  # "_" owns nothing in namespace "": nothing goes
    for i, uid in enumerate(HOSTILE_IDS):
        expected = [] if i == victim else [f"the kettle note number {i}"]
        assert found(memory, "kettle note", user=uid, chat=uid, namespace=uid) == expected, repr(uid)


def test_hostile_ids_in_the_archive_see_only_their_own(archive: ArchiveBackend) -> None:
    """Held in review: the archive's scopes under the same hostile ids (short ones: see the defect on long
    ones), and a search text full of LIKE metacharacters matches literally."""
    ids = [uid for uid in HOSTILE_IDS if len(uid) < 100 and uid]
    for uid in ids:
        archive.record(session_id=uid, user_id=uid, namespace=uid, strategy="window",
                       removed=[(0, {"role": "user", "content": f"50%_off\\deal for {uid!r}"})])
    for uid in ids:
        hits = archive.search("50%_off\\deal", Scope(session_id=uid, user_id=uid, namespace=uid))
        assert [(h.session_id, h.namespace) for h in hits] == [(uid, uid)], repr(uid)
    assert archive.search("50x_off", Scope(session_id="%", user_id="%", namespace="%")) == []


def test_a_schema_name_is_quoted_never_run(postgres_dsn: str, tmp_path: Path) -> None:
    """Held in review: ``ctx_plugins.storage.schema`` reaches SQL text only quoted: a name that is SQL makes
    a schema of that name and runs nothing."""
    victim = storage.open_memory(on_postgres(postgres_dsn, schema="rt_victim"), tmp_path / "memory.db")
    victim.write([fact("still here")])
    hostile = 'x"; DROP SCHEMA rt_victim CASCADE; --'
    storage.open_memory(on_postgres(postgres_dsn, schema=hostile), tmp_path / "memory.db").write([fact("mine")])
    assert found(victim, "still here") == ["still here"]
    with psycopg.connect(postgres_dsn) as conn:
        assert conn.execute("SELECT 1 FROM pg_namespace WHERE nspname = %s", (hostile,)).fetchone()


def test_memory_ranking_equals_sqlites_on_a_mixed_script_corpus(memory: MemoryBackend, tmp_path: Path) -> None:
    """Held in review: 300 memories of accented, German, Turkish, Greek, CJK, ligature and fullwidth words,
    2 users, 2 chats, both visibilities; 200 random questions: the same memories with the same
    BM25 scores as SQLite's FTS5, in the same order."""
    vocab = ["apple", "apples", "running", "café", "cafe", "Straße", "strasse", "İstanbul", "istanbul", "北京大学",
             "大学", "naïve", "σοφία", "ΣΟΦΊΑ", "ß", "résumé", "\uff46\uff55\uff4c\uff4c", "full", "ﬁle", "file",
             "Ⅻ", "2024", "²", "k\u0301", "a\u0308b", "\u00e4b", "don't", "e-mail", "hello", "world"]
    pick = random.Random(15)
    records = [Record(key=f"k{i}", kind=pick.choice(["fact", "turn"]), user_id=pick.choice(["alice", "bob"]),
                      chat_id=pick.choice(["c1", "c2"]), session_id="s1", visibility=pick.choice(["chat", "user"]),
                      user_text=" ".join(pick.choices(vocab, k=pick.randint(1, 6))), assistant_text="ok",
                      fact_text=" ".join(pick.choices(vocab, k=pick.randint(1, 12))), created_at=1.0)
               for i in range(300)]
    sqlite = storage.open_memory(load_config({}), tmp_path / "sqlite" / "memory.db")
    try:
        for store in (sqlite, memory):
            store.write(records)
        for _ in range(200):
            terms = memory_query.query_terms(" ".join(pick.choices(vocab, k=pick.randint(1, 4))))
            expected, got = ([(h.memory.key, round(h.relevance, 6)) for h in store.search(
                terms, namespace="", user_id="alice", chat_id="c1", share_across_chats=False, limit=10)]
                for store in (sqlite, memory))
            assert got == expected, terms
    finally:
        sqlite.close()


def test_archive_ranking_equals_sqlites_for_phrases(archive: ArchiveBackend, tmp_path: Path) -> None:
    """Held in review: the archive's phrase search (terms of three characters or more: trigram LIKE, BM25 in
    Python) returns the same messages in the same order as SQLite's FTS5 trigram index, on text with
    'İ', 'ß'/'ẞ', final sigma, ligatures, LIKE metacharacters and backslashes."""
    vocab = ["Straße", "STRASSE", "ẞig", "İstanbul", "istanbul", "Éclair", "éclair", "Ωmega", "ωmega", "σοφός",
             "北京大学", "x_y%z", "a\\b\\c", "100_000", "ﬁle", "file", "\uff21\uff22\uff23", "abc", "C++", "e-mail"]
    pick = random.Random(15)
    sqlite = storage.open_archive(load_config({"ctx_plugins": {"archive": {"path": str(tmp_path / "sqlite.db")}}}))
    try:
        for _ in range(12):
            removed = [(i, {"role": "user", "content": " ".join(pick.choices(vocab, k=pick.randint(1, 10)))})
                       for i in range(10)]
            for store in (sqlite, archive):
                store.record(session_id="s1", user_id="alice", strategy="window", removed=removed)
        scope = Scope(session_id="s1", user_id="alice")

        def seqs(store: ArchiveBackend, question: str) -> list[int]:
            # the message's place in the session: ids differ between the stores, places do not
            hits = store.search(question, scope, limit=8)
            place = {stored.id: stored.seq for stored in store.get([h.id for h in hits], scope)}
            return [place[h.id] for h in hits]

        asked = 0
        for _ in range(200):
            question = " ".join(pick.choices(vocab, k=pick.randint(1, 3)))
            expected = seqs(sqlite, question)
            asked += bool(expected)
            assert seqs(archive, question) == expected, question
        assert asked > 100
    finally:
        sqlite.close()


def test_another_users_writes_never_make_a_search_fail(memory: MemoryBackend, postgres_dsn: str,
                                                       tmp_path: Path) -> None:
    """A search read the store's totals and the words' counts in two statements: a write committed between them
    made a word's count exceed the total, and ``log`` of a negative number raised ValueError out of alice's
    search while bob's facts were written (635 of 14,508 searches; through hermes ctx-local was suspended for
    everyone for 120 s). The reads are one snapshot now, and a count over the total is taken as the total."""
    import threading

    writer = storage.open_memory(on_postgres(postgres_dsn), tmp_path / "memory.db")
    writer.write([fact("the kettle note", user="bob"), fact("alice's kettle is blue")])
    stop, written = threading.Event(), [0]

    def write() -> None:
        while not stop.is_set():
            writer.write([fact(f"the kettle note {written[0]}", user="bob")])
            written[0] += 1

    thread = threading.Thread(target=write)
    thread.start()
    failures: list[str] = []
    try:
        deadline = time.monotonic() + 6
        while time.monotonic() < deadline and not failures:
            for question in ("kettle", "kettle note", "blue kettle"):
                try:
                    assert found(memory, question) == ["alice's kettle is blue"]
                except Exception as exc:
                    failures.append(f"{question}: {type(exc).__name__}: {exc}")
    finally:
        stop.set()
        thread.join()
        writer.close()
    assert failures == [] and written[0] > 20


def test_a_count_read_at_another_moment_than_the_total_ranks_and_never_raises() -> None:
    from hermes_ctx_plugins.storage.ranking import MIN_IDF, bm25, inverse_frequency
    assert inverse_frequency(5, 7) == inverse_frequency(5, 5) == MIN_IDF
    assert bm25([1], [7], 5, 10, 10.0) > 0


@pytest.fixture(autouse=True)
def _quiet_spool_errors(caplog: pytest.LogCaptureFixture) -> None:
    """The spool logs each refused compaction at ERROR; that is expected noise here."""
    caplog.set_level(logging.CRITICAL, logger="hermes_ctx_plugins.archive")


# == session 16's red-team pass: a database that cannot hold the text, a read that waits as long as a lock ============

def test_a_database_not_encoded_utf8_is_refused_naming_it_and_its_encoding(postgres: EmbeddedPostgres,
                                                                            tmp_path: Path) -> None:
    """A LATIN1 database took ASCII turns, then one user's "300€" stopped every user's writes (its quarantine failed
    too), across restarts, while ``doctor`` said all was well."""
    from hermes_ctx_plugins.storage import postgres as backend

    with psycopg.connect(postgres.dsn(), autocommit=True) as conn:
        conn.execute("DROP DATABASE IF EXISTS latin_one WITH (FORCE)")
        conn.execute("CREATE DATABASE latin_one ENCODING 'LATIN1' LC_COLLATE 'C' LC_CTYPE 'C' TEMPLATE template0")
    config = on_postgres(postgres.dsn("latin_one"), connect_timeout=2)
    try:
        lines = {what: (ok, detail) for what, ok, detail in backend.check(config)}
        assert lines["schema"][0] is False and "LATIN1" in lines["schema"][1] and "latin_one" in lines["schema"][1]
        with pytest.raises(Exception, match="LATIN1") as failure:
            storage.open_memory(config, tmp_path / "memory.db").search(["bike"], namespace="", user_id="bob",
                                                                       chat_id="c1", share_across_chats=False, limit=5)
        assert is_store_failure(failure.value) and "UTF8" in str(failure.value)
    finally:
        storage.release()
        with psycopg.connect(postgres.dsn(), autocommit=True) as conn:
            conn.execute("DROP DATABASE IF EXISTS latin_one WITH (FORCE)")


def test_a_read_gives_up_on_a_lock_an_operator_holds_and_the_turn_goes_on(postgres_dsn: str, tmp_path: Path) -> None:
    """An operator's ``VACUUM FULL`` (an ACCESS EXCLUSIVE lock) held every prefetch, search and ctx_search for as long
    as it lasted: reads set no lock wait. Now a read gives up while the lock is still held."""
    import threading

    config = on_postgres(postgres_dsn, connect_timeout=2)
    provider = LocalProvider({}, hermes_home=tmp_path, config=config)
    provider.sync_turn(Turn(session=EVE, turn_number=1, user_text="my bike is a green Brompton", assistant_text="ok"))
    assert provider.flush(20)
    assert "Brompton" in provider.prefetch("which bike do I ride?", session=EVE)  # the owner does see it
    answered: list[str] = []
    locker = psycopg.connect(postgres_dsn, autocommit=True)
    try:
        locker.execute("BEGIN")
        locker.execute("LOCK TABLE hermes_ctx.memories IN ACCESS EXCLUSIVE MODE")
        worker = threading.Thread(target=lambda: answered.append(provider.prefetch("which bike?", session=EVE)),
                                  daemon=True)
        worker.start()
        worker.join(120)  # the lock is held all along: without a lock wait the read would still be waiting
        assert answered == [""], "the read did not give up while the table was locked"
    finally:
        locker.execute("ROLLBACK")
        locker.close()
        provider.shutdown()


@pytest.mark.parametrize("schema", ["tenant_" + "x" * 60 + "_acme", "", "a\x00b", "pg_temp", "information_schema"])
def test_a_schema_name_postgresql_would_cut_or_refuse_is_a_config_error(schema: str) -> None:
    """Two tenants' 76- and 78-character schemas shared their first 63 bytes: PostgreSQL cut both to one schema,
    and one tenant recalled the other's users; "" and NUL failed as "no connection to the server"."""
    from hermes_ctx_plugins import ConfigError

    with pytest.raises(ConfigError, match=r"ctx_plugins\.storage\.schema") as refused:
        load_config({"ctx_plugins": {"storage": {"backend": "postgres", "dsn": "postgresql://x@127.0.0.1/db",
                                                 "schema": schema}}})
    assert repr(schema)[:20] in str(refused.value)


def test_a_worker_starting_while_another_holds_the_migration_lock_answers_its_users(postgres_dsn: str,
                                                                                    tmp_path: Path) -> None:
    """Found in review (fixed) (availability, every user of a worker): every process took the schema's migration lock
    at its first use, even with the schema current, and waited for it with no bound. Another worker holding it — one
    migrating a big store in a rolling upgrade, building the archive's trigram index, or frozen half way through —
    held a freshly started worker's first prefetch (the user's turn) for as long as it lasted. Now a current schema is
    used without the lock, and one that needs migrating waits for the lock at most a few seconds (memory skipped,
    reason ``locked``); it migrates at a later use once the lock is free."""
    import threading

    from hermes_ctx_plugins.storage.postgres.schema import lock_id

    schema = "miglock_" + secrets.token_hex(4)
    config = on_postgres(postgres_dsn, schema=schema, connect_timeout=2)
    provider = LocalProvider({}, hermes_home=tmp_path, config=config)
    provider.sync_turn(Turn(session=EVE, turn_number=1, user_text="my kayak is a red Prijon", assistant_text="ok"))
    assert provider.flush(20)
    provider.shutdown()

    def first_prefetch_of_a_new_process() -> tuple[list[str], threading.Thread]:
        storage.release()  # as a process starting: a pool of its own, the schema not yet checked
        fresh = LocalProvider({}, hermes_home=tmp_path, config=config)
        answered: list[str] = []
        turn = threading.Thread(target=lambda: answered.append(fresh.prefetch("which kayak?", session=EVE)),
                                daemon=True)
        turn.start()
        turn.join(30)
        return answered, turn

    holder = psycopg.connect(postgres_dsn, autocommit=True)
    try:
        holder.execute("BEGIN")
        holder.execute("SELECT pg_advisory_xact_lock(%s)", (lock_id("hermes-ctx schema", schema),))
        answered, turn = first_prefetch_of_a_new_process()
        assert not turn.is_alive(), "a new worker's turn waited on another worker's migration lock"
        assert "Prijon" in answered[0]  # the schema was current: nothing to wait for
        with psycopg.connect(postgres_dsn, autocommit=True) as admin:  # the schema one version behind
            admin.execute(f"DELETE FROM {schema}.schema_version WHERE version = (SELECT max(version) FROM "
                          f"{schema}.schema_version)")
        answered, turn = first_prefetch_of_a_new_process()
        assert not turn.is_alive(), "a worker that must migrate waited on the lock with no bound"
        assert answered == [""]  # memory skipped this turn, the turn went on
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    answered, turn = first_prefetch_of_a_new_process()  # the lock free: migrated, and recalled
    assert "Prijon" in answered[0]
    storage.release()


def test_a_fact_the_server_refuses_fails_that_fact_not_ctx_local_for_everyone(postgres_dsn: str,
                                                                               tmp_path: Path) -> None:
    """Found in review (fixed) (turns lost, every user of a worker): for a user whose id is a long opaque token
    (past a btree entry's ~2.7 kB; SQLite stores it), ``ctx_memory_remember`` raised the server's
    ProgramLimitExceeded out of the provider. Through hermes' adapter each raise was a failure of
    ``memory:ctx-local`` for the whole process: five in a row (a model retrying) suspended ctx-local for 120 s, and
    every other user's turns in that time were never stored, their recall skipped. Now the tool answers that this fact
    was not saved, and nobody else's memory is touched."""
    from hermes_ctx_plugins import load_host
    from hermes_ctx_plugins.hermes.memory import HermesMemoryAdapter

    host = load_host({"memory": {"provider": "ctx-local"},
                      "ctx_plugins": {"storage": {"backend": "postgres", "dsn": postgres_dsn,
                                                  "schema": "longid_" + secrets.token_hex(4)}}})
    long_id = secrets.token_hex(1500)
    eve = HermesMemoryAdapter("ctx-local", host=host)
    eve.initialize("s-eve", platform="bridge", user_id=long_id, hermes_home=str(tmp_path))
    bob = HermesMemoryAdapter("ctx-local", host=host)
    bob.initialize("s-bob", platform="bridge", user_id="bob", hermes_home=str(tmp_path))
    for attempt in range(6):
        answer = json.loads(eve.handle_tool_call("ctx_memory_remember", {"fact": f"locker {attempt}", "scope": "user"}))
        assert answer["success"] is False and "refuses" in answer["error"], answer
    assert host.isolator.health("memory:ctx-local").suspended_until is None
    bob.sync_turn("the spare key hangs by the boiler", "noted")
    provider = host.activate_provider("ctx-local")
    assert provider.flush(20)
    assert "boiler" in bob.prefetch("where is the spare key?")
    host.shutdown()

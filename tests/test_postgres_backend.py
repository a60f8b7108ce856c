"""The PostgreSQL backend on a real server: it ranks as SQLite does, names every failure, holds the
write-behind queue through an outage, migrates once when workers start together, and carries the
archive end to end."""

from __future__ import annotations

import json
import multiprocessing
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest

from hermes_ctx_plugins import SessionInfo, Turn, load_host, storage
from hermes_ctx_plugins.config import Config, load_config
from hermes_ctx_plugins.memory.local import LocalProvider
from hermes_ctx_plugins.storage import LocalStoreError, Record
from hermes_ctx_plugins.storage import text as memory_query
from hermes_ctx_plugins.storage.postgres import PostgresArchive, PostgresMemory
from hermes_ctx_plugins.storage.postgres.schema import SCHEMA_VERSION
from hermes_ctx_plugins.testing import make_transcript
from hermes_ctx_plugins.testing.postgres import EmbeddedPostgres
from hermes_ctx_plugins.tokens import get_counter

ALICE = SessionInfo(session_id="s-alice", user_id="alice", chat_id="dm")
BOB = SessionInfo(session_id="s-bob", user_id="bob", chat_id="dm")


def on_postgres(dsn: str, **storage_settings: Any) -> Config:
    return load_config({"ctx_plugins": {"storage": {"backend": "postgres", "dsn": dsn, **storage_settings}}})


def fact(text: str, key: str | None = None, user: str = "alice", created: float = 1000.0) -> Record:
    return Record(key=key or f"fact:{text}", kind="fact", namespace="", user_id=user, chat_id="c1", session_id="s1",
                  visibility="user", user_text="", assistant_text="", fact_text=text, source="test",
                  created_at=created)


@pytest.fixture
def store(postgres_dsn: str, tmp_path: Path) -> Iterator[PostgresMemory]:
    opened = storage.open_memory(on_postgres(postgres_dsn), tmp_path / "memory.db")
    assert isinstance(opened, PostgresMemory)
    yield opened
    opened.close()


# -- ranking: as SQLite's FTS5 ------------------------------------------------------------------------


def test_it_ranks_a_corpus_as_sqlite_does(postgres_dsn: str, tmp_path: Path) -> None:
    words = ["kettle", "teapot", "descaling", "cups", "saucer", "office", "vinegar", "boiled", "repair", "kitchen"]
    corpus = [" ".join(words[(i * 7 + j * 3) % len(words)] for j in range(1 + i % 9)) + f" note {i}"
              for i in range(300)]
    corpus += ["the kettle boiled dry", "we bought a new teapot and a new kettle for the office kitchen today"]
    sqlite_store = storage.open_memory(load_config({}), tmp_path / "memory.db")
    pg_store = storage.open_memory(on_postgres(postgres_dsn), tmp_path / "memory.db")
    try:
        for opened in (sqlite_store, pg_store):
            opened.write([fact(text, key=f"k{i}") for i, text in enumerate(corpus)])
        for question in ("kettle", "teapot kettle", "descaling kettle vinegar", "cups", "new kettle", "note 17"):
            terms = memory_query.query_terms(question)
            sqlite_hits, pg_hits = (opened.search(terms, namespace="", user_id="alice", chat_id="c1",
                                                  share_across_chats=False, limit=15)
                                    for opened in (sqlite_store, pg_store))
            assert pg_hits, question
            # the same scores (BM25 with FTS5's statistics); ties may come in either order
            assert [round(h.relevance, 6) for h in pg_hits] == [round(h.relevance, 6) for h in sqlite_hits], question
            assert {h.memory.fact_text for h in pg_hits if h.relevance > pg_hits[-1].relevance} == {
                h.memory.fact_text for h in sqlite_hits if h.relevance > sqlite_hits[-1].relevance}, question
    finally:
        sqlite_store.close()
        pg_store.close()


def test_texts_with_nul_and_lone_surrogates_come_back_exactly(store: PostgresMemory) -> None:
    odd = "a\x00b \ud800 c\\u0000d \\ e"
    store.write([fact(odd, key="odd\x00key\udfff", user="u\x00\ud800")])
    [memory] = store.memories(user_id="u\x00\ud800")
    assert memory.fact_text == odd and memory.key == "odd\x00key\udfff"
    assert list(store.memories(user_id="u")) == [] and list(store.memories(user_id="u\x00")) == []


# -- failures are named -------------------------------------------------------------------------------


def test_no_server_named_says_where_to_name_one(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("HERMES_CTX_POSTGRES_DSN", raising=False)
    with pytest.raises(LocalStoreError) as raised:
        storage.open_memory(on_postgres(""), tmp_path / "memory.db")
    assert raised.value.reason == "unsupported"
    assert "ctx_plugins.storage.dsn" in str(raised.value) and "HERMES_CTX_POSTGRES_DSN" in str(raised.value)


def test_an_unreachable_server_is_unavailable_and_its_password_never_shown(tmp_path: Path) -> None:
    dsn = f"postgresql://hermes:s3cret-pw@/nowhere?host={tmp_path / 'no-socket-here'}"
    started = time.monotonic()
    with pytest.raises(LocalStoreError) as raised:
        storage.open_memory(on_postgres(dsn, connect_timeout=2), tmp_path / "memory.db", busy_timeout=0.5)
    assert raised.value.reason == "unavailable"
    assert "s3cret-pw" not in str(raised.value) and "***" in str(raised.value)
    assert time.monotonic() - started < 30  # bounded by the wait, not hung


def test_a_schema_of_a_newer_version_is_refused_and_left_alone(postgres_dsn: str, tmp_path: Path) -> None:
    with psycopg.connect(postgres_dsn, autocommit=True) as conn:
        conn.execute("CREATE SCHEMA future")
        conn.execute("CREATE TABLE future.schema_version (version integer NOT NULL, migrated double precision)")
        conn.execute("INSERT INTO future.schema_version VALUES (%s, 0)", (SCHEMA_VERSION + 1,))
    with pytest.raises(LocalStoreError) as raised:
        storage.open_memory(on_postgres(postgres_dsn, schema="future"), tmp_path / "memory.db")
    assert raised.value.reason == "unsupported" and f"schema version {SCHEMA_VERSION + 1}" in str(raised.value)
    with psycopg.connect(postgres_dsn) as conn:
        tables = conn.execute("SELECT count(*) FROM information_schema.tables WHERE table_schema = 'future'").fetchone()
    assert tables == (1,)  # nothing was created in it


def _open_in_a_process(dsn: str, schema: str, home: str, done: Any) -> None:
    os.environ["HERMES_HOME"] = home
    store = storage.open_memory(on_postgres(dsn, schema=schema), Path(home) / f"m{os.getpid()}.db")
    store.write([fact(f"from {os.getpid()}")])
    done.put(os.getpid())


def test_workers_starting_together_migrate_once(postgres_dsn: str, tmp_path: Path) -> None:
    spawn = multiprocessing.get_context("spawn")
    done = spawn.Queue()
    workers = [spawn.Process(target=_open_in_a_process, args=(postgres_dsn, "together", str(tmp_path), done))
               for _ in range(4)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(120)
    assert [w.exitcode for w in workers] == [0, 0, 0, 0]
    assert len({done.get(timeout=5) for _ in workers}) == 4
    with psycopg.connect(postgres_dsn) as conn:
        # each version's step applied once, in order, by whichever worker came first
        assert conn.execute("SELECT version FROM together.schema_version ORDER BY version").fetchall() == [
            (version,) for version in range(1, SCHEMA_VERSION + 1)]
        assert conn.execute("SELECT count(*) FROM together.memories").fetchone() == (4,)


def test_tables_dropped_under_a_running_process_are_made_again(postgres_dsn: str, tmp_path: Path) -> None:
    config = on_postgres(postgres_dsn, schema="dropped")
    first = storage.open_memory(config, tmp_path / "memory.db")
    first.write([fact("before the drop")])
    with psycopg.connect(postgres_dsn, autocommit=True) as conn:
        conn.execute("DROP SCHEMA dropped CASCADE")
    with pytest.raises(LocalStoreError):  # the call that meets the missing tables fails, named
        first.write([fact("meets the drop")])
    again = storage.open_memory(config, tmp_path / "memory.db")
    again.write([fact("after the drop")])
    assert [m.fact_text for m in again.memories()] == ["after the drop"]


# -- ctx-local on PostgreSQL, through an outage ---------------------------------------------------------


def test_ctx_local_holds_turns_through_an_outage_and_stores_each_once(
        postgres: EmbeddedPostgres, postgres_dsn: str, tmp_path: Path) -> None:
    config = on_postgres(postgres_dsn)
    provider = LocalProvider({}, hermes_home=tmp_path / "hermes", config=config)
    try:
        provider.sync_turn(Turn(session=ALICE, turn_number=1, user_text="my bike is a green Brompton",
                                assistant_text="noted"))
        assert provider.flush(30)
        with postgres.down():
            # the turn goes on: recall is skipped, the write is accepted (fsynced to the queue)
            assert provider.prefetch("my bike", session=ALICE) == ""
            provider.sync_turn(Turn(session=ALICE, turn_number=2, user_text="the spare key hangs by the boiler",
                                    assistant_text="noted"))
            assert not provider.flush(1.5)  # waits in the queue while the server is down
        assert provider.flush(60)
        recalled = provider.prefetch("where is the spare key? and which bike?", session=ALICE)
        assert "boiler" in recalled and "Brompton" in recalled
        assert provider.prefetch("where is the spare key? and which bike?", session=BOB) == ""
    finally:
        provider.shutdown()
    store = storage.open_memory(config, tmp_path / "hermes" / "ctx-local" / "memory.db")
    assert sorted(m.user_text for m in store.memories(user_id="alice")) == [
        "my bike is a green Brompton", "the spare key hangs by the boiler"]  # each once


def test_a_forget_holds_against_a_late_write_from_another_workers_queue(store: PostgresMemory) -> None:
    store.write([fact("kept before", created=time.time() - 60)])
    assert store.forget_user("alice") == (1, 0)
    late = fact("queued elsewhere before the forget", created=time.time() - 30)
    later = fact("said after the forget", created=time.time() + 1)
    assert store.write([late, later, fact("bob's own", user="bob", created=time.time() - 30)]) == 2
    assert [m.fact_text for m in store.memories(user_id="alice")] == ["said after the forget"]
    assert [m.fact_text for m in store.memories(user_id="bob")] == ["bob's own"]


# -- the archive on PostgreSQL, end to end ----------------------------------------------------------------


def test_the_archive_on_postgres_keeps_what_compaction_removed(postgres_dsn: str) -> None:
    config = {"model": {"default": "gpt-4o", "context_length": 128_000},
              "ctx_plugins": {"compressor": "window", "storage": {"backend": "postgres", "dsn": postgres_dsn}}}
    messages = make_transcript(3, turns=40, images=False)
    messages[17] = {**messages[17], "content": "the deploy key lives at vault://ops/deploy-7f3a and port 8443"}
    host = load_host(config)
    try:
        assert host.archive is not None and isinstance(host.archive.store, PostgresArchive)
        assert host.compress(messages, session=ALICE, force=True).compressed

        def tool(name: str, session: SessionInfo, **args: Any) -> dict[str, Any]:
            assert host.archive is not None
            answer = host.archive.handle_tool_call(name, args, session=session, counter=get_counter("gpt-4o"))
            return dict(json.loads(answer))

        [top, *_] = tool("ctx_search", ALICE, query="deploy-7f3a")["results"]
        assert "vault://ops/deploy-7f3a" in json.dumps(tool("ctx_expand", ALICE, id=top["id"]))
        assert tool("ctx_search", BOB, query="deploy-7f3a")["results"] == []
        assert tool("ctx_search", ALICE, query="DEPLOY-7F3")["results"]  # a substring, any case
    finally:
        host.shutdown()


def test_each_store_may_have_its_own_backend(postgres_dsn: str, tmp_path: Path) -> None:
    config = on_postgres(postgres_dsn, archive="sqlite")
    assert isinstance(storage.open_memory(config, tmp_path / "memory.db"), PostgresMemory)
    assert type(storage.open_archive(config)).__name__ == "ArchiveStore"


def test_a_phrase_counts_the_memories_holding_it_in_a_row(postgres_dsn: str, tmp_path: Path) -> None:
    corpus = ["power-cycle the router", "cycle power then router", "the power cycle of a washing machine",
              "router firmware", "power cycle it", "a cycle path", "power tools"]
    sqlite_store = storage.open_memory(load_config({}), tmp_path / "memory.db")
    pg_store = storage.open_memory(on_postgres(postgres_dsn), tmp_path / "memory.db")
    try:
        for opened in (sqlite_store, pg_store):
            opened.write([fact(text, key=f"k{i}") for i, text in enumerate(corpus)])
        terms = ["power-cycle", "router"]  # one term of two words in a row, one of one word
        sqlite_hits, pg_hits = ({h.memory.fact_text: round(h.relevance, 6) for h in opened.search(
            terms, namespace="", user_id="alice", chat_id="c1", share_across_chats=False, limit=10)}
            for opened in (sqlite_store, pg_store))
        assert pg_hits == sqlite_hits and "cycle power then router" in pg_hits
        assert pg_hits["power-cycle the router"] > pg_hits["cycle power then router"]
    finally:
        sqlite_store.close()
        pg_store.close()


def test_forgetting_while_the_server_is_down_says_so(postgres: EmbeddedPostgres, postgres_dsn: str,
                                                     tmp_path: Path) -> None:
    archive = storage.open_archive(load_config({"ctx_plugins": {
        "storage": {"backend": "postgres", "dsn": postgres_dsn, "connect_timeout": 1},
        "archive": {"path": str(tmp_path / "archive.db")}}}))
    archive.record(session_id="s1", user_id="alice", strategy="window",
                   removed=[(3, {"role": "user", "content": "alice's old plan: move to Porto"})])
    with postgres.down():
        [report] = archive.forget_user("alice")
        assert report.error and "could not be read" in report.error  # never "nothing stored"
    [report] = archive.forget_user("alice")
    assert report.removed == 1 and not report.error


def test_every_worker_on_one_home_uses_one_queue_id(tmp_path: Path) -> None:
    from concurrent.futures import ThreadPoolExecutor

    from hermes_ctx_plugins.storage.postgres.connection import queue_id

    with ThreadPoolExecutor(8) as pool:
        ids = set(pool.map(lambda _: queue_id(tmp_path / "ctx-local" / "memory.db"), range(32)))
    assert len(ids) == 1 and sorted(p.name for p in (tmp_path / "ctx-local").iterdir()) == ["memory.db.pg-queue"]
    assert queue_id(tmp_path / "elsewhere.db") not in ids


def test_a_schema_of_an_older_version_is_brought_up_to_date_keeping_its_rows(
        postgres_dsn: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from hermes_ctx_plugins.storage.postgres import schema

    config = on_postgres(postgres_dsn, schema="older")
    with monkeypatch.context() as older:  # what a worker of the first release made
        older.setattr(schema, "SCHEMA_VERSION", 1)
        # this code writes a memory's verdict: its column comes with version 1 here (version 5 adds it
        # where it is missing, so the upgrade below still runs every step)
        older.setattr(schema, "STEPS", {**schema.STEPS, 1: (*schema.STEPS[1], *schema.STEPS[5])})
        first = storage.open_memory(config, tmp_path / "memory.db")
        first.write([fact("written by version 1")])
    storage.release()  # the next worker starts afresh
    with psycopg.connect(postgres_dsn) as conn:
        assert conn.execute("SELECT version FROM older.schema_version").fetchall() == [(1,)]
        assert conn.execute("SELECT to_regclass('older.documents')").fetchone() == (None,)
    upgraded = storage.open_memory(config, tmp_path / "memory.db")
    assert [m.fact_text for m in upgraded.memories()] == ["written by version 1"]
    with psycopg.connect(postgres_dsn) as conn:
        assert conn.execute("SELECT version FROM older.schema_version ORDER BY version").fetchall() == [
            (version,) for version in range(1, SCHEMA_VERSION + 1)]
        assert conn.execute("SELECT to_regclass('older.documents')").fetchone() != (None,)


def test_a_compaction_the_server_can_never_take_is_set_aside_and_forgotten_with_its_user(
        postgres_dsn: str, tmp_path: Path) -> None:
    import secrets

    archive = storage.open_archive(load_config({"ctx_plugins": {
        "storage": {"backend": "postgres", "dsn": postgres_dsn}, "archive": {"path": str(tmp_path / "a.db")}}}))
    odd = secrets.token_hex(2000)  # an id no index entry can hold (random: it does not compress)
    assert archive.record(session_id="s1", user_id=odd, strategy="window",
                          removed=[(1, {"role": "user", "content": "the odd user's plan"})]) == []
    assert archive.record(session_id="s2", user_id="bob", strategy="window",
                          removed=[(1, {"role": "user", "content": "bob's plan: Porto"})])  # not held back
    rejected = tmp_path / "a.db.spool.rejected"
    assert "the odd user's plan" in rejected.read_text() and not (tmp_path / "a.db.spool.jsonl").exists()
    [report] = archive.forget_user(odd)
    assert report.removed == 1 and "the odd user's plan" not in (rejected.read_text() if rejected.exists() else "")


def test_forgetting_a_whole_user_from_the_command_line_holds_against_late_writes(store: PostgresMemory) -> None:
    store.write([fact("before", created=time.time() - 60), fact("bob's", user="bob", created=time.time() - 60)])
    assert store.forget_where(user_id="alice") == 1
    assert store.write([fact("queued elsewhere before", created=time.time() - 30),
                        fact("bob's later", user="bob", created=time.time() - 30)]) == 1
    assert [m.fact_text for m in store.memories(user_id="alice")] == []
    assert sorted(m.fact_text for m in store.memories(user_id="bob")) == ["bob's", "bob's later"]


def test_the_word_counts_stay_true_through_writes_and_forgets(store: PostgresMemory, postgres_dsn: str) -> None:
    store.write([fact(f"kettle teapot note {i}", key=f"a{i}") for i in range(20)])
    store.write([fact(f"kettle cups {i}", key=f"b{i}", user="bob") for i in range(10)])
    store.forget_user("alice")
    store.forget_where(user_id="bob", chat_id="c1")  # all of bob's too, by another path
    store.write([fact("kettle again", key="c1", created=time.time() + 5)])
    with psycopg.connect(postgres_dsn) as conn:
        counted = dict(conn.execute(
            "SELECT d.word, count(*) FROM hermes_ctx.memories m, LATERAL (SELECT DISTINCT unnest(m.words) AS word) d "
            "WHERE m.location = %s GROUP BY 1", (store.location,)).fetchall())
        kept = dict(conn.execute("SELECT word, documents FROM hermes_ctx.memory_words WHERE location = %s "
                                 "AND documents > 0", (store.location,)).fetchall())
    assert kept == counted and counted["kettl"] == 1  # stemmed, as FTS5 indexes it


@pytest.mark.parametrize("changed, says", [
    ({"dbname": "nosuchdb"}, "create the database"),
    ({"user": "nobody"}, "check the user and password"),
    (None, "is not a valid connection string"),
])
def test_doctor_says_what_to_do_for_each_way_a_connection_fails(postgres_dsn: str, changed: dict[str, str] | None,
                                                                says: str) -> None:
    from psycopg.conninfo import conninfo_to_dict, make_conninfo

    from hermes_ctx_plugins.storage import postgres as backend

    dsn = make_conninfo("", **{**conninfo_to_dict(postgres_dsn), **changed}) if changed else "not a dsn at all"
    [(what, ok, detail)] = backend.check(on_postgres(dsn, connect_timeout=2))
    assert (what, ok) == ("connection", False) and says in detail, detail

"""ctx-local with many owners: deployments' namespaces, hostile and lone-surrogate ids, a writer no
record can poison, the schema 1 → 2 migration, and the CLI in a deployment's namespace."""

from __future__ import annotations

import hashlib
import itertools
import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from local_helpers import home, say

from hermes_ctx_plugins import SessionInfo, Turn, load_host
from hermes_ctx_plugins.cli import EXIT_INPUT, main
from hermes_ctx_plugins.memory.local import LocalProvider
from hermes_ctx_plugins.memory.local.queue import SUFFIX
from hermes_ctx_plugins.scope import escape_id, service_id, to_stored
from hermes_ctx_plugins.storage import text as query
from hermes_ctx_plugins.storage.sqlite import fts
from hermes_ctx_plugins.storage.sqlite import memory as store_module
from hermes_ctx_plugins.storage.sqlite.memory import LocalStore

HOSTILE_IDS = ["", " ", "*", "%", "../x", "x" * 10_000, "m\ud800", "m?", "m\\ud800", "\ud800", "\udfff",
               "'; DROP TABLE x;--", "OR", "NOT x", '"', "''", "hermes", "张伟", "alice", "alice@example.com",
               escape_id("alice@example.com"), service_id("", "alice"), fts.user_token("", "alice"),
               "a\x00b", "a\\b", str(2**63), "u1"]


def found(provider: LocalProvider, text: str, session: SessionInfo) -> list[str]:
    """The user texts ``session`` finds for ``text`` with the search tool."""
    answer = json.loads(provider.handle_tool_call("ctx_memory_search", {"query": text, "limit": 20},
                                                  session=session))
    assert "results" in answer, answer
    return [r["text"].removeprefix("User: ").removesuffix(" Assistant: noted") for r in answer["results"]]


# ---------------------------------------------------------------------------------------------- namespaces


def test_two_deployments_in_one_home_never_share_a_users_memories() -> None:
    config = {"ctx_plugins": {"memory": {"providers": ["ctx-local"]},
                              "deployments": {"support": {}, "sales": {},
                                              "sales-eu": {"memory": {"providers": ["ctx-local"],
                                                                         "namespace": "sales"}}}}}
    hosts = {name: load_host(config, deployment=name) for name in ("support", "sales", "sales-eu")}
    try:
        u1 = SessionInfo(session_id="s1", user_id="u1", chat_id="dm")  # the caller stamps no deployment
        hosts["support"].turn_finalized(Turn(session=u1, turn_number=1, user_text="my parcel code is TULIP-77",
                                             assistant_text="noted"))
        hosts["sales"].turn_finalized(Turn(session=u1, turn_number=1, user_text="my budget code is ORCHID-12",
                                           assistant_text="noted"))
        for host in hosts.values():
            assert all(p.flush(10) for p in host.memory_providers)
        later = SessionInfo(session_id="s2", user_id="u1", chat_id="dm")
        support = hosts["support"].prefetch("parcel budget code", session=later)
        sales = hosts["sales"].prefetch("parcel budget code", session=later)
        assert "TULIP-77" in support and "ORCHID-12" not in support
        assert "ORCHID-12" in sales and "TULIP-77" not in sales
        # a deployment that names the sales namespace shares it — on purpose
        shared = hosts["sales-eu"].prefetch("parcel budget code", session=later)
        assert "ORCHID-12" in shared and "TULIP-77" not in shared
    finally:
        for host in hosts.values():
            host.shutdown()


def test_the_same_user_in_two_namespaces_recalls_only_its_own(make: Any) -> None:
    provider = make()
    support = SessionInfo(session_id="a", user_id="u1", chat_id="dm", deployment="support")
    sales = SessionInfo(session_id="b", user_id="u1", chat_id="dm", deployment="sales")
    say(provider, support, "the warehouse door code is heron")
    say(provider, sales, "the quarterly target is falcon")
    remembered = json.loads(provider.handle_tool_call("ctx_memory_remember", {
        "fact": "u1 prefers warehouse heron emails", "scope": "user"}, session=support))
    assert remembered["success"], remembered  # (failed once in a full run, unreproduced: say why if again)
    assert provider.flush(10)
    assert sorted(found(provider, "warehouse heron falcon", support)) == [
        "the warehouse door code is heron", "u1 prefers warehouse heron emails"]
    assert found(provider, "warehouse heron falcon", sales) == ["the quarterly target is falcon"]
    shared = make(share_across_chats=True)
    assert found(shared, "warehouse quarterly heron falcon",
                 SessionInfo(session_id="c", user_id="u1", chat_id="other", deployment="sales")) == [
        "the quarterly target is falcon"]
    # forgetting by id is scoped too: support's memory is not sales' to delete
    [support_id] = [r["id"] for r in json.loads(provider.handle_tool_call(
        "ctx_memory_search", {"query": "door"}, session=support))["results"]]
    answer = json.loads(provider.handle_tool_call("ctx_memory_forget", {"ids": [support_id]}, session=sales))
    assert answer["not_found"] == [support_id] and found(provider, "door", support)


def test_two_owners_whose_sessions_share_an_id_and_say_the_same_each_keep_their_turn(make: Any) -> None:
    """Idempotency keys are one set for the whole store: the owner is part of a turn's key, or the
    second deployment's (or user's) identical turn would be taken for a replay and never stored."""
    provider = make()
    owners = [SessionInfo(session_id="chat-42", user_id="u1", chat_id="dm", deployment="support"),
              SessionInfo(session_id="chat-42", user_id="u1", chat_id="dm", deployment="sales"),
              SessionInfo(session_id="chat-42", user_id="u2", chat_id="dm", deployment="sales")]
    for session in owners:
        provider.sync_turn(Turn(session=session, turn_number=1, user_text="my locker code is osprey",
                                assistant_text="noted"))
    assert provider.flush(10)
    for session in owners:
        assert found(provider, "locker osprey", session) == ["my locker code is osprey"]
    provider.sync_turn(Turn(session=owners[0], turn_number=1, user_text="my locker code is osprey",
                            assistant_text="noted"))  # the same owner's replay is still stored once
    assert provider.flush(10)
    assert found(provider, "locker osprey", owners[0]) == ["my locker code is osprey"]


# ---------------------------------------------------------------------------------------------- hostile ids


def test_hostile_ids_each_recall_their_own_and_nobody_elses(make: Any) -> None:
    provider = make()
    owners = [SessionInfo(session_id=f"s{n}", user_id=user, chat_id=chat, deployment=namespace)
              for n, (namespace, user, chat) in enumerate(
                  [(ns, user, "") for ns in ("", "sales", "m\ud800") for user in HOSTILE_IDS]
                  + [("", "alice", chat) for chat in (" ", "*", "dm", "m\ud800", "m?", "x" * 5_000)])]
    for n, owner in enumerate(owners):
        say(provider, owner, f"zebracorn codeword{n}q")
    assert provider.flush(30)
    for n, owner in enumerate(owners):
        later = SessionInfo(session_id="later", user_id=owner.user_id, chat_id=owner.chat_id,
                            deployment=owner.deployment)
        assert found(provider, "zebracorn", later) == [f"zebracorn codeword{n}q"], (owner.deployment,
                                                                                   owner.user_id[:20])
    with sqlite3.connect(provider.path) as conn:  # the ids are stored exactly (as stored text)
        assert conn.execute("SELECT count(*) FROM (SELECT DISTINCT namespace, user_id, chat_id FROM memories)"
                            ).fetchone() == (len(owners),)
        assert conn.execute("SELECT count(*) FROM memories WHERE user_id = ?",
                            (to_stored("m\ud800"),)).fetchone() == (3,)
    conn.close()


@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalProvider]:
    provider = LocalProvider({}, hermes_home=tmp_path_factory.mktemp("property"))
    yield provider
    provider.shutdown()


_example = itertools.count()


@given(st.lists(st.tuples(st.text(max_size=8), st.text(max_size=8), st.text(max_size=4)),
                min_size=2, max_size=4, unique=True))
def test_any_ids_keep_their_owners_apart(shared: LocalProvider, owners: list[tuple[str, str, str]]) -> None:
    n = next(_example)
    sessions = [SessionInfo(session_id=f"p{n}", user_id=user, chat_id=chat, deployment=namespace)
                for namespace, user, chat in owners]
    for i, session in enumerate(sessions):
        say(shared, session, f"propword{n}x{i}", i)
    assert shared.flush(10)
    every = " ".join(f"propword{n}x{i}" for i in range(len(sessions)))
    for i, session in enumerate(sessions):
        assert found(shared, every, session) == [f"propword{n}x{i}"]


# ---------------------------------------------------------------------------------------------- the writer


def test_lone_surrogates_are_stored_exactly_and_block_nobody(make: Any) -> None:
    provider = make()
    odd = SessionInfo(session_id="s\udc80", user_id="m\ud800", chat_id="c\udfff", deployment="n\ud800")
    say(provider, odd, "lone \ud800 surrogate in the kiwi text")
    bob = SessionInfo(session_id="b", user_id="bob")
    say(provider, bob, "bob's kiwi orchard")
    assert provider.flush(10), "the writer stored both"
    assert found(provider, "kiwi", bob) == ["bob's kiwi orchard"]
    assert found(provider, "kiwi", odd) == ["lone \ufffd surrogate in the kiwi text"]  # shown as valid UTF-8
    recalled = provider.prefetch("kiwi", session=odd)
    assert "lone \ufffd surrogate" in recalled and recalled.encode("utf-8")
    searched = provider.handle_tool_call("ctx_memory_search", {"query": "kiwi"}, session=odd)
    assert "session s\ufffd" in json.loads(searched)["results"][0]["provenance"] and searched.encode("utf-8")
    assert found(provider, "kiwi", SessionInfo(session_id="x", user_id="m?", chat_id="c?", deployment="n?")) == []
    store = LocalStore(provider.path)
    try:
        [memory] = store.memories(namespace="n\ud800", user_id="m\ud800")
    finally:
        store.close()
    assert (memory.session_id, memory.chat_id, memory.user_text) == (
        "s\udc80", "c\udfff", "lone \ud800 surrogate in the kiwi text")


def test_a_record_the_database_refuses_is_quarantined_and_the_next_is_stored(
        make: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    # What once poisoned the writer: a value SQLite cannot bind raised outside sqlite3.Error with
    # the write transaction open, so every later write failed to begin. Bind one such value here.
    row = store_module.row

    def unbindable(self: store_module.Record) -> tuple[Any, ...]:
        made = row(self)
        return (*made[:6], "\ud800", *made[7:]) if "poison" in self.user_text else made

    monkeypatch.setattr(store_module, "row", unbindable)
    provider = make(max_retries=2, retry_backoff_seconds=0.01)
    alice, bob = SessionInfo(session_id="a", user_id="alice"), SessionInfo(session_id="b", user_id="bob")
    say(provider, alice, "poison mango")
    say(provider, bob, "bob's mango smoothie")
    assert provider.flush(10)
    assert found(provider, "mango", bob) == ["bob's mango smoothie"]
    say(provider, bob, "bob's second mango", 2)  # and the writer keeps working
    assert provider.flush(10) and len(found(provider, "mango", bob)) == 2
    store = LocalStore(provider.path)
    try:
        [kept] = store.quarantined()
    finally:
        store.close()
    assert kept.user_id == "alice" and kept.attempts == 2 and "UnicodeEncodeError" in kept.error


def test_a_bad_record_left_in_a_segment_is_quarantined_with_its_owner(make: Any) -> None:
    provider = make()
    queue = provider.queue_dir
    queue.mkdir(parents=True)
    good = {"namespace": "", "user_id": "bob", "key": "k-good", "kind": "turn", "chat_id": "", "session_id": "s",
            "user_text": "bob's papaya", "assistant_text": "noted"}
    compact = (",", ":")  # as the queue writes them
    lines = [json.dumps({**good, "key": "k-bad", "user_id": "carol", "created_at": 10**400},  # no float takes it
                        separators=compact),
             json.dumps(good, separators=compact),
             '{"namespace":"","user_id":"dave","key":"k-torn","kind":"turn","user_te']  # torn by a crash
    (queue / f"00000000000000000001-1-deadbeef{SUFFIX}").write_text("\n".join(lines), encoding="utf-8")
    provider.on_session_start(SessionInfo(session_id="s"))  # replays what the "dead process" left
    assert provider.flush(10)
    assert found(provider, "papaya", SessionInfo(session_id="b", user_id="bob")) == ["bob's papaya"]
    store = LocalStore(provider.path)
    try:
        assert [(q.namespace, q.user_id) for q in store.quarantined()] == [("", "carol"), ("", "dave")]
    finally:
        store.close()


# ---------------------------------------------------------------------------------------------- migration

# The schema version 1 wrote (hermes-ctx-plugins before namespaces), verbatim.
SCHEMA_1 = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE memories (
    id INTEGER PRIMARY KEY, key TEXT NOT NULL UNIQUE, kind TEXT NOT NULL CHECK (kind IN ('turn', 'fact')),
    user_id TEXT NOT NULL, chat_id TEXT NOT NULL, session_id TEXT NOT NULL,
    visibility TEXT NOT NULL CHECK (visibility IN ('chat', 'user')), user_text TEXT NOT NULL,
    assistant_text TEXT NOT NULL, fact_text TEXT NOT NULL, source TEXT NOT NULL, created_at REAL NOT NULL,
    search_text TEXT NOT NULL, scope_text TEXT NOT NULL
);
CREATE VIRTUAL TABLE memories_fts USING fts5 (
    search_text, scope_text, content='memories', content_rowid='id', tokenize='porter unicode61 remove_diacritics 2'
);
CREATE TRIGGER memories_ai AFTER INSERT ON memories BEGIN
    INSERT INTO memories_fts (rowid, search_text, scope_text) VALUES (new.id, new.search_text, new.scope_text);
END;
CREATE TRIGGER memories_ad AFTER DELETE ON memories BEGIN
    INSERT INTO memories_fts (memories_fts, rowid, search_text, scope_text)
        VALUES ('delete', old.id, old.search_text, old.scope_text);
END;
CREATE TABLE queue_progress (segment TEXT PRIMARY KEY, offset INTEGER NOT NULL);
CREATE TABLE quarantine (
    id INTEGER PRIMARY KEY, segment TEXT NOT NULL, offset INTEGER NOT NULL, record TEXT NOT NULL,
    error TEXT NOT NULL, attempts INTEGER NOT NULL, quarantined_at REAL NOT NULL
);
INSERT INTO memories_fts (memories_fts, rank) VALUES ('rank', 'bm25(1.0, 0.0)');
INSERT INTO memories_fts (memories_fts, rank) VALUES ('automerge', 8);
INSERT INTO memories_fts (memories_fts, rank) VALUES ('crisismerge', 32);
PRAGMA user_version = 1;
"""


def _scope_1(user: str, chat: str, visibility: str) -> str:
    """Version 1's scope tokens."""
    def digest(*parts: str) -> str:
        raw = hashlib.sha256("\x1f".join(parts).encode("utf-8", "surrogatepass")).digest()
        return str(int.from_bytes(raw[:8], "big"))
    tokens = ["u" + digest("user", user), "c" + digest("chat", user, chat)]
    return " ".join(tokens + (["p" + digest("profile", user)] if visibility == "user" else []))


def test_a_version_1_database_is_migrated_keeping_every_memory(make: Any) -> None:
    path = home() / "ctx-local" / "memory.db"
    path.parent.mkdir(parents=True)
    conn = sqlite3.connect(path)
    conn.executescript("PRAGMA journal_mode = WAL;" + SCHEMA_1)
    old = [("k1", "turn", "alice", "dm", "s1", "chat", "my path is C:\\new\\u0041 ok", "noted", "", 1.0e9),
           ("k2", "fact", "alice", "dm", "s1", "user", "", "", "alice likes walnut cake", 1.1e9),
           ("k3", "turn", "a\\b", "", "s2", "chat", "walnut tree of a backslash user", "noted", "", 1.2e9)]
    for key, kind, user, chat, session, visibility, user_text, assistant_text, fact_text, created in old:
        body = fact_text if kind == "fact" else f"{user_text}\n{assistant_text}"
        conn.execute("INSERT INTO memories (key, kind, user_id, chat_id, session_id, visibility, user_text, "
                     "assistant_text, fact_text, source, created_at, search_text, scope_text) "
                     "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
                     (key, kind, user, chat, session, visibility, user_text, assistant_text, fact_text, "turn:cli",
                      created, query.index_text(body), _scope_1(user, chat, visibility)))
    conn.execute("INSERT INTO quarantine (segment, offset, record, error, attempts, quarantined_at) VALUES "
                 "('x.seg', 9, '{\"key\":\"k9\",\"kind\":\"turn\",\"user_id\":\"alice\",\"chat_id\":\"d', "
                 "'incomplete record', 1, 0)")
    conn.commit()
    conn.close()
    queue = path.with_name("memory.db.queue")  # and a version 1 process left a record queued
    queue.mkdir()
    line = {"key": "k4", "kind": "turn", "user_id": "alice", "chat_id": "dm", "session_id": "s3",
            "user_text": "walnut harvest from the old queue", "assistant_text": "noted", "fact_text": "",
            "visibility": "chat", "source": "turn:cli", "created_at": 1.3e9}
    (queue / f"00000000000000000001-1-0badf00d{SUFFIX}").write_text(json.dumps(line, separators=(",", ":")) + "\n",
                                                                    encoding="utf-8")

    provider = make()
    alice = SessionInfo(session_id="new", user_id="alice", chat_id="dm")
    provider.on_session_start(alice)
    assert provider.flush(10)
    assert sorted(found(provider, "walnut", alice)) == ["alice likes walnut cake", "walnut harvest from the old queue"]
    assert found(provider, "walnut", SessionInfo(session_id="n", user_id="a\\b")) == ["walnut tree of a backslash user"]
    assert found(provider, "walnut", SessionInfo(session_id="n", user_id="alice", chat_id="dm", deployment="x")) == []
    store = LocalStore(provider.path)
    try:
        texts = {m.key: m.user_text for m in store.memories(namespace="", user_id="alice")}
        assert texts["k1"] == "my path is C:\\new\\u0041 ok"  # backslashes survive the new stored-text form
        [kept] = store.quarantined()
        assert (kept.namespace, kept.user_id) == ("", "alice")  # attributed from its torn line
    finally:
        store.close()
    with sqlite3.connect(provider.path) as conn:
        assert conn.execute("PRAGMA user_version").fetchone() == (4,)
        conn.execute("INSERT INTO memories_fts (memories_fts) VALUES ('integrity-check')")
    conn.close()


def test_a_newer_schema_is_refused_by_name(tmp_path: Path) -> None:
    path = tmp_path / "future.db"
    with sqlite3.connect(path) as conn:
        conn.execute("PRAGMA user_version = 99")
    conn.close()
    with pytest.raises(store_module.LocalStoreError, match="schema version 99"):
        LocalStore(path)


# ---------------------------------------------------------------------------------------------- the CLI


@pytest.fixture
def deployments(make: Any) -> Iterator[Path]:
    """Memories of alice in two chats at the top level and in the 'sales' deployment, and of
    'm\\ud800' and 'm?'; yields the config file naming the deployment."""
    provider = make()
    for n, (namespace, user, chat, text) in enumerate([
            ("", "alice", "dm", "top-level lemur notes"), ("", "alice", "group", "group lemur plans"),
            ("sales", "alice", "dm", "sales lemur pipeline"), ("", "m\ud800", "", "surrogate lemur"),
            ("", "m?", "", "question lemur")]):
        say(provider, SessionInfo(session_id=f"s{n}", user_id=user, chat_id=chat, deployment=namespace), text, n)
    assert provider.flush(10)
    provider.shutdown()
    config = home() / "ctx.yaml"
    config.write_text("ctx_plugins:\n  deployments:\n    sales: {}\n", encoding="utf-8")
    yield config


def cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, list[Any]]:
    code = main(list(argv))
    out = capsys.readouterr().out
    return code, [json.loads(line) for line in out.splitlines()] if "--json" in argv or "export" in argv else []


def texts(rows: Any) -> list[str]:
    return sorted(r["user_text"] for r in rows)


def test_the_cli_works_in_the_deployments_namespace(deployments: Path, capsys: pytest.CaptureFixture[str]) -> None:
    top = ("--config", str(deployments))
    sales = (*top, "--deployment", "sales")
    code, [rows] = cli(capsys, *top, "memory", "search", "lemur", "--user", "alice", "--json")
    assert code == 0 and texts(rows) == ["group lemur plans", "top-level lemur notes"]  # every chat of alice
    code, [rows] = cli(capsys, *sales, "memory", "search", "lemur", "--user", "alice", "--json")
    assert code == 0 and texts(rows) == ["sales lemur pipeline"] and rows[0]["namespace"] == "sales"
    code, [rows] = cli(capsys, *top, "memory", "search", "lemur", "--user", "alice", "--chat", "group", "--json")
    assert texts(rows) == ["group lemur plans"]
    code, [rows] = cli(capsys, *sales, "memory", "search", "lemur", "--all-scopes", "--json")
    assert texts(rows) == ["sales lemur pipeline"]
    code, [rows] = cli(capsys, *top, "memory", "search", "lemur", "--user", "m\ud800", "--json")
    assert texts(rows) == ["surrogate lemur"] and rows[0]["user_id"] == "m\ud800"  # exact, \\u-escaped JSON
    assert main([*top, "memory", "search", "lemur", "--all-scopes", "--user", "alice"]) == EXIT_INPUT
    assert "--all-scopes searches every user and chat" in capsys.readouterr().err

    code, rows = cli(capsys, *sales, "memory", "export")
    assert texts(rows) == ["sales lemur pipeline"]
    code, rows = cli(capsys, *top, "memory", "export", "--user", "m?")
    assert texts(rows) == ["question lemur"]

    assert main([*sales, "memory", "stats", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert (report["namespace"], report["turns"], report["scopes"]) == ("sales", 1, 1)
    assert main([*top, "memory", "stats"]) == 0
    assert "4 turns, 0 facts, 4 user/chat scopes" in capsys.readouterr().out

    assert main([*sales, "memory", "forget", "--user", "alice", "--yes"]) == 0
    assert "forgot 1 memories of user 'alice'" in capsys.readouterr().out
    code, [rows] = cli(capsys, *top, "memory", "search", "lemur", "--user", "alice", "--json")
    assert len(rows) == 2, "the top level's alice is another owner"
    code, [rows] = cli(capsys, *top, "memory", "search", "lemur", "--user", "m\ud800", "--json")
    [surrogate] = rows
    assert main([*sales, "memory", "forget", str(surrogate["id"])]) == EXIT_INPUT, "not in sales' namespace"
    assert main([*top, "memory", "forget", str(surrogate["id"]), "--user", "m?"]) == EXIT_INPUT, "not m?'s"
    capsys.readouterr()
    code, [rows] = cli(capsys, *top, "memory", "search", "lemur", "--all-scopes", "--json")
    assert texts(rows) == ["group lemur plans", "question lemur", "surrogate lemur", "top-level lemur notes"]


def test_two_owners_whose_ids_hold_a_nul_each_keep_their_turn(tmp_path: Path) -> None:
    """A turn's key joined its parts with NUL: user "a\\0b" of chat "c" and user "a" of chat "b\\0c", the same session,
    turn number and words, got one key, and the second owner's turn was silently not stored (a red-team pass). Parts
    holding a NUL are keyed by their lengths; every other key is as before (a replayed turn stays stored once)."""
    from hermes_ctx_plugins.memory.local.queue import turn_key

    provider = LocalProvider({"path": str(tmp_path / "m.db")}, hermes_home=tmp_path)
    first = SessionInfo(session_id="s", platform="cli", user_id="a\x00b", chat_id="c")
    second = SessionInfo(session_id="s", platform="cli", user_id="a", chat_id="b\x00c")
    for session in (first, second):
        provider.sync_turn(Turn(session=session, turn_number=1, user_text="the shed code is 4417", assistant_text="ok"))
    assert provider.flush(30)
    owners = {(m.user_id, m.chat_id) for m in provider._store().memories()}
    provider.shutdown()
    assert owners == {("a\x00b", "c"), ("a", "b\x00c")}
    plain = Turn(session=SessionInfo(session_id="s1", platform="cli", user_id="alice", chat_id="c1"), turn_number=3,
                 user_text="hi", assistant_text="yo")
    assert turn_key(plain) == "turn:8f8c97e95326e4f61e51bcb88a4eaed9"  # the key it had before


@given(st.text(alphabet=st.sampled_from(["\\", "u", "d", "8", "0", "a", "\ud800", "\udfff", "x", "\n"]), max_size=40),
       st.integers(min_value=0, max_value=45))
def test_from_stored_reads_back_every_text_whole_and_cut_as_the_escape_rules_say(text: str, cut: int) -> None:
    """from_stored's fast path (only doubled backslashes: a JSON message's, 0.22 s a 4.8 MB message by the regex)
    gives what the escape rules give, for a stored text whole and cut anywhere (a search candidate's prefix)."""
    from hermes_ctx_plugins import scope

    stored = to_stored(text)
    assert scope.from_stored(stored) == text

    def by_the_rules(value: str) -> str:
        return scope._STORED_ESCAPE.sub(lambda m: "\\" if m.group(1) == "\\" else chr(int(m.group(1)[1:], 16)),
                                        scope._TORN_ESCAPE.sub(r"\1", value))

    assert scope.from_stored(stored[:cut]) == by_the_rules(stored[:cut])

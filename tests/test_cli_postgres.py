"""`hermes-ctx memory search|stats|export|forget` and `hermes-ctx archive search|show|stats|purge` with
``ctx_plugins.storage.backend: postgres``, on a real server; a server that is down is an error naming
it (exit 3), never a traceback and never "nothing stored yet"."""

from __future__ import annotations

import hashlib
import json
import os
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest

from hermes_ctx_plugins import SessionInfo, Turn, storage
from hermes_ctx_plugins.cli import EXIT_INPUT, EXIT_PLUGIN, main
from hermes_ctx_plugins.config import Config, load_config
from hermes_ctx_plugins.memory.local import LocalProvider
from hermes_ctx_plugins.testing.postgres import EmbeddedPostgres

ALICE = SessionInfo(session_id="s-alice", user_id="alice", chat_id="dm")
BOB = SessionInfo(session_id="s-bob", user_id="bob", chat_id="dm")
ODD = SessionInfo(session_id="s-odd", user_id="a\x00b \ud800", chat_id="dm")


def home() -> Path:
    return Path(os.environ["HERMES_HOME"])


@pytest.fixture
def config(request: pytest.FixtureRequest, postgres_dsn: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[Config]:
    """Both stores on the server (its DSN in the environment), in a schema of this test's own: every
    test's stores have the same locations (relative to its own ``$HERMES_HOME``)."""
    monkeypatch.setenv("HERMES_CTX_POSTGRES_DSN", postgres_dsn)
    schema = "cli_" + hashlib.sha1(request.node.name.encode()).hexdigest()[:12]
    chosen = {"ctx_plugins": {"storage": {"backend": "postgres", "connect_timeout": 1, "schema": schema}}}
    home().mkdir(parents=True, exist_ok=True)
    (home() / "config.yaml").write_text(json.dumps(chosen), encoding="utf-8")
    yield load_config(chosen)
    storage.release()


@pytest.fixture
def filled(config: Config) -> LocalProvider:
    """Turns of alice, bob and a user with a NUL and a lone surrogate in their id, and a fact of
    alice's, written by ctx-local's queue into PostgreSQL; the provider stopped, as the CLI runs."""
    provider = LocalProvider({}, hermes_home=home(), config=config)
    for n, (session, text) in enumerate([(ALICE, "the wombat project ships on Friday"),
                                         (ALICE, "lunch was ramen"), (BOB, "bob's wombat is named Gerald"),
                                         (ODD, "the odd wombat is called Nul")]):
        provider.sync_turn(Turn(session=session, turn_number=n, user_text=text, assistant_text="noted"))
    provider.handle_tool_call("ctx_memory_remember", {"fact": "Alice's wombat fact", "scope": "user"}, session=ALICE)
    assert provider.flush(10)
    provider.shutdown()
    return provider


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_memory_search_is_scoped_like_recall(filled: LocalProvider, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "memory", "search", "wombat", "--user", "alice", "--chat", "dm", "--json")
    found = json.loads(out)
    assert code == 0 and {m["user_id"] for m in found} == {"alice"} and len(found) == 2
    assert found[0]["kind"] == "fact"  # facts outrank turns that match as well, as on SQLite
    code, out, _ = run(capsys, "memory", "search", "wombat", "--user", ODD.user_id, "--json")
    assert code == 0 and [(m["user_id"], m["user_text"]) for m in json.loads(out)] == [
        (ODD.user_id, "the odd wombat is called Nul")]
    code, out, _ = run(capsys, "memory", "search", "wombat", "--all-scopes")
    assert code == 0 and "Gerald" in out and "user 'bob'" in out and "Nul" in out and out.count("\n") == 4


def test_memory_stats_describe_the_store_on_the_server(filled: LocalProvider, config: Config,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    store = storage.open_memory(config, filled.path)
    store.quarantine("x.seg", 10, '{"broken', "JSONDecodeError: Unterminated string", 1)
    store.close()
    code, out, _ = run(capsys, "memory", "stats")
    assert code == 0
    # (a newcomer read the bare path as a SQLite file: it is only the name of this machine's rows there)
    assert f"ctx-local memory: the PostgreSQL server, the rows of {filled.path} (postgres, " in out and "WAL" not in out
    assert "4 turns, 1 facts, 3 user/chat scopes" in out
    assert "quarantined: 1 (kept with their errors, never dropped)" in out and "JSONDecodeError" in out
    assert not filled.path.exists()  # the server holds it: no file where SQLite's would be
    code, out, _ = run(capsys, "memory", "stats", "--json")
    report = json.loads(out)
    assert code == 0 and report["backend"] == "postgres" and report["turns"] == 4 and report["bytes"] > 0


def test_memory_export_gives_every_id_back_exactly(filled: LocalProvider, tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    out_file = tmp_path / "odd.jsonl"
    code, _, err = run(capsys, "memory", "export", "--user", ODD.user_id, "--output", str(out_file))
    rows = [json.loads(line) for line in out_file.read_text(encoding="utf-8").splitlines()]
    assert code == 0 and "exported 1 memories" in err
    assert [(r["user_id"], r["session_id"], r["user_text"]) for r in rows] == [
        (ODD.user_id, "s-odd", "the odd wombat is called Nul")]
    code, _, err = run(capsys, "memory", "export", "--output", str(tmp_path / "all.jsonl"))
    rows = [json.loads(line) for line in (tmp_path / "all.jsonl").read_text(encoding="utf-8").splitlines()]
    assert code == 0 and len(rows) == 5 and [r["id"] for r in rows] == sorted(r["id"] for r in rows)


def test_memory_forget_by_id_and_by_user_deletes_on_the_server(
        filled: LocalProvider, config: Config, postgres_dsn: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "memory", "search", "Gerald", "--user", "bob", "--chat", "dm", "--json")
    [gerald] = json.loads(out)
    code, out, err = run(capsys, "memory", "forget", str(gerald["id"]), "999999")
    assert code == EXIT_INPUT and f"forgot 1 memories: #{gerald['id']}" in out and "no memory #999999" in err
    assert "could not be compacted" not in err  # VACUUM ran
    code, out, _ = run(capsys, "memory", "forget", "--user", "alice", "--yes")
    assert code == 0 and "forgot 3 memories of user 'alice'" in out
    schema = config.plugins.storage.schema
    with psycopg.connect(postgres_dsn) as conn:  # counted on the server itself
        left = conn.execute(f'SELECT user_text FROM "{schema}".memories ORDER BY id').fetchall()
    assert left == [("the odd wombat is called Nul",)]  # bob's and alice's are gone, the odd user's stays


@pytest.fixture
def archived(config: Config) -> list[int]:
    archive = storage.open_archive(config)
    call = {"role": "assistant", "content": "", "tool_calls": [
        {"id": "call_9", "type": "function", "function": {"name": "read", "arguments": '{"path": "deploy.sh"}'}}]}
    ids = archive.record(session_id="s-alice", user_id="alice", strategy="window", removed=[
        (0, {"role": "user", "content": "deploy with token 3f9a2c1e7b"}), (1, call),
        (2, {"role": "tool", "tool_call_id": "call_9", "content": "port 8443 refused"})])
    ids += archive.record(session_id="s-bob", user_id="bob", strategy="window",
                          removed=[(0, {"role": "user", "content": "bob saw 3f9a2c1e7b too"})])
    archive.close()
    return ids


def test_archive_search_show_stats_purge(archived: list[int], capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "archive", "search", "3f9a2c1e7b", "--json")
    assert code == 0 and {h["session_id"] for h in json.loads(out)} == {"s-alice", "s-bob"}
    code, out, _ = run(capsys, "archive", "search", "3f9a2c1e7b", "--user", "bob", "--json")
    assert code == 0 and [h["session_id"] for h in json.loads(out)] == ["s-bob"]
    code, out, _ = run(capsys, "archive", "show", f"{archived[0]}-{archived[2]}")
    assert code == 0 and "deploy with token 3f9a2c1e7b" in out and "[tool call call_9] read" in out
    assert "(result of call_9)" in out and "port 8443 refused" in out
    code, out, _ = run(capsys, "archive", "stats")
    assert code == 0 and "4 messages from 2 compactions, 2 sessions, 2 users" in out
    assert "archive     PostgreSQL, the rows of " in out  # not a local SQLite file's path alone (a newcomer walk)
    code, out, _ = run(capsys, "archive", "purge", "--user", "alice", "--yes")
    assert code == 0 and "forgot user 'alice': removed 3 archived messages" in out
    code, out, _ = run(capsys, "archive", "search", "3f9a2c1e7b", "--json")
    assert code == 0 and [h["session_id"] for h in json.loads(out)] == ["s-bob"]  # bob's stays
    code, out, _ = run(capsys, "archive", "purge", "--all", "--yes")
    assert code == 0 and "purged 1 compactions" in out
    code, out, _ = run(capsys, "archive", "stats", "--json")
    assert code == 0 and json.loads(out)["messages"] == 0


def test_nothing_stored_yet_is_said_and_creates_nothing(config: Config, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "memory", "search", "wombat")
    assert code == 0 and "no ctx-local memory yet" in err
    code, out, _ = run(capsys, "archive", "stats")
    assert code == 0 and "no archive yet in PostgreSQL, the rows of " in out  # not a local file (a fleet pass)
    assert not storage.memory_exists(config, LocalProvider({}, hermes_home=home(), config=config).path)


def test_a_server_that_is_down_is_an_error_naming_it(config: Config, monkeypatch: pytest.MonkeyPatch,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    with socket.socket() as probe:  # a loopback port nothing listens on: a server that is down
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    monkeypatch.setenv("HERMES_CTX_POSTGRES_DSN", f"postgresql://hermes:pw-not-shown@127.0.0.1:{port}/fleet")
    commands: list[list[Any]] = [["memory", "search", "wombat"], ["memory", "stats"], ["memory", "export"],
                                 ["archive", "stats"], ["archive", "search", "pelican"]]
    for command in commands:
        code, out, err = run(capsys, *command)
        assert code == EXIT_PLUGIN, (command, out, err)
        assert f"port={port}" in err and "password=***" in err, command
        assert "pw-not-shown" not in out + err and "Traceback" not in err and "yet" not in out + err, command


def test_stats_show_the_local_queue_while_the_server_is_down(
        postgres: EmbeddedPostgres, config: Config, capsys: pytest.CaptureFixture[str]) -> None:
    provider = LocalProvider({}, hermes_home=home(), config=config)
    try:
        with postgres.down():
            provider.sync_turn(Turn(session=SessionInfo(session_id="s1", user_id="alice"), turn_number=1,
                                    user_text="the pelican nests on the pier", assistant_text="noted"))
            code, out, err = run(capsys, "memory", "stats")
            assert code == EXIT_PLUGIN and "cannot be read now" in out and "PostgreSQL" in err
            assert "at most 1 records waiting in 1 segment file(s), 1 held by a running process" in out
    finally:
        provider.shutdown()

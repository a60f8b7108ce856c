"""``hermes-ctx forget --user`` leaves nothing of that user in any store we own (issue 12).

Two deployments in one hermes home: ``local`` (``file`` + ``ctx-local``) and ``cloud`` (``file`` +
``ctx-mem0`` on the loopback Mem0 service), both archiving compactions. Alice and Bob each leave a
codeword everywhere: their own MEMORY.md / USER.md, ctx-local rows, an
archived compaction, a Mem0 memory and a Mem0 write spooled on disk. After ``forget --user alice``
every file under ``$HERMES_HOME`` is scanned (from another process: reading SQLite files beside open
connections would drop their locks) and the Mem0 service's state is read: no trace of Alice's
codewords, every one of Bob's still there.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from remote_helpers import MEM0_KEY

from hermes_ctx_plugins import SessionInfo, Turn, load_host
from hermes_ctx_plugins.cli import main
from hermes_ctx_plugins.testing import Mem0StubServer, make_transcript

USERS = {"alice": "ALICEWORD", "bob": "BOBWORD"}


def config_file(mem0: Mem0StubServer) -> Path:
    home = Path(os.environ["HERMES_HOME"])
    home.mkdir(parents=True, exist_ok=True)
    path = home / "config.yaml"
    path.write_text(
        "model: {default: gpt-4o, context_length: 128000}\n"
        "ctx_plugins:\n"
        "  memory: {providers: []}\n"
        "  compressor: window\n"
        "  options:\n"
        f"    ctx-mem0: {{api_key: {MEM0_KEY}, host: '{mem0.base_url}', timeout: 2, flush_timeout: 0.5}}\n"
        "  deployments:\n"
        "    local: {memory: {providers: [file, ctx-local]}}\n"
        "    cloud: {memory: {providers: [file, ctx-mem0]}}\n", encoding="utf-8")
    return path


def fill(host: Any, user: str, word: str, n: int) -> None:
    """Leave ``word`` in every store ``host`` has for ``user``."""
    session = SessionInfo(session_id=f"{host.config.deployment}-{user}", user_id=user)
    host.session_start(session)
    file = next(p for p in host.memory_providers if p.name == "file")
    assert json.loads(file.handle_tool_call("memory", {"target": "user", "action": "add",
                                                       "content": f"{user}'s codeword is {word}-file"},
                                            session=host.session(session.session_id)))["success"]
    host.turn_finalized(Turn(session=session, turn_number=1, user_text=f"my codeword is {word}-turn",
                             assistant_text="noted"))
    history = make_transcript(n, turns=30, images=False)
    middle = next(i for i, m in enumerate(history) if i >= 20 and m["role"] == "user")  # compacted away
    history[middle] = {**history[middle], "content": f"the archived codeword is {word}-archive"}
    assert host.compress(history, session=session, force=True).compressed


def scan(home: Path, words: list[str]) -> dict[str, list[str]]:
    code = ("import json, pathlib, sys\nhome = pathlib.Path(sys.argv[1]); words = json.loads(sys.argv[2])\n"
            "print(json.dumps({str(f.relative_to(home)): [w for w in words if w.encode() in f.read_bytes()] "
            "for f in home.rglob('*') if f.is_file()}))")
    out = subprocess.run([sys.executable, "-c", code, str(home), json.dumps(words)], check=True,
                         capture_output=True, text=True).stdout
    return {f: hits for f, hits in json.loads(out).items() if hits}


def test_forget_user_leaves_no_trace_in_any_store_and_keeps_everyone_else(
        mem0: Mem0StubServer, capsys: Any) -> None:
    path = config_file(mem0)
    home = path.parent
    hosts = {name: load_host(path, deployment=name) for name in ("local", "cloud")}
    for n, (user, word) in enumerate(USERS.items()):
        for host in hosts.values():
            fill(host, user, word, n)
    for host in hosts.values():
        for provider in host.memory_providers:
            assert provider.flush(10), provider.name
    # one more Mem0 write for each, spooled on disk: the service is down when the host stops
    mem0.stop()
    cloud = hosts["cloud"]
    for user, word in USERS.items():
        cloud.turn_finalized(Turn(session=SessionInfo(session_id=f"late-{user}", user_id=user), turn_number=2,
                                  user_text=f"late {word}-spooled", assistant_text="ok"))
    for host in hosts.values():
        host.shutdown()
    mem0.start()
    everywhere = [f"{w}-{kind}" for w in USERS.values() for kind in ("file", "turn", "archive", "spooled")]
    before = scan(home, everywhere)
    for word in USERS.values():  # the premise: each codeword is on disk where the test will look
        for kind in ("file", "turn", "archive", "spooled"):
            assert any(f"{word}-{kind}" in hits for hits in before.values()), (word, kind, before)
    assert any("ALICEWORD-turn" in m for m in mem0.memories_of()) and any("BOBWORD" in m for m in mem0.memories_of())

    assert main(["--config", str(path), "forget", "--user", "alice", "--yes", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["ok"], report
    stores = " ".join(s["store"] for s in report["stores"])
    assert "file" in stores and "ctx-local" in stores and "ctx-mem0" in stores and "archive" in stores

    after = scan(home, everywhere)
    assert [w for hits in after.values() for w in hits if w.startswith("ALICE")] == [], after
    for kind in ("file", "turn", "archive", "spooled"):
        assert any(f"BOBWORD-{kind}" in hits for hits in after.values()), (kind, after)
    assert not any("ALICEWORD" in m for m in mem0.memories_of())
    assert any("BOBWORD" in m for m in mem0.memories_of())


def ctx_local_install(providers: str) -> Path:
    """An install whose hermes runs ctx-local as its ``memory.provider`` (``ctx_plugins.memory.providers``: the YAML
    list ``providers``), each of :data:`USERS` with a turn stored: its config file."""
    home = Path(os.environ["HERMES_HOME"])
    home.mkdir(parents=True, exist_ok=True)
    path = home / "config.yaml"
    path.write_text("model: {default: gpt-4o, context_length: 128000}\nmemory: {provider: ctx-local}\n"
                    f"ctx_plugins: {{memory: {{providers: {providers}}}}}\n", encoding="utf-8")
    host = load_host(path)
    local = host.activate_provider("ctx-local")  # what hermes' shim does at an agent's first use
    for user, word in USERS.items():
        session = SessionInfo(session_id=f"s-{user}", user_id=user)
        local.on_session_start(session)
        local.sync_turn(Turn(session=session, turn_number=1, user_text=f"my codeword is {word}-turn",
                             assistant_text="noted"))
    host.shutdown()  # drains the write-behind queue
    return path


def test_forget_reaches_the_provider_hermes_runs_in_the_layout_install_writes(
        capsys: Any) -> None:
    """``hermes-ctx install`` selects ctx-local as hermes' ``memory.provider`` and lists only ``file`` in
    ``ctx_plugins.memory.providers``: inside hermes ctx-local runs through hermes' memory manager, so
    that is where the user's memories are — ``forget --user`` must reach it there too."""
    path = ctx_local_install("[file]")

    def found(user: str, word: str) -> bool:
        assert main(["memory", "search", word, "--user", user, "--json", "--config", str(path)]) == 0
        return word in capsys.readouterr().out

    assert found("alice", "ALICEWORD") and found("bob", "BOBWORD")
    assert main(["forget", "--user", "alice", "-y", "--json", "--config", str(path)]) == 0
    report = json.loads(capsys.readouterr().out)
    assert any(str(row.get("store", "")).startswith("ctx-local") for row in report["stores"]), report
    assert not found("alice", "ALICEWORD")
    assert found("bob", "BOBWORD")


def test_forget_reaches_ctx_local_after_a_switch_to_another_provider(capsys: Any) -> None:
    """A review: an install that used ctx-local and switched hermes' ``memory.provider`` away from it (or never named
    it: its store on a server) kept the user's memories in ctx-local's store after ``forget --user``."""
    path = ctx_local_install("[]")
    home = path.parent
    path.write_text("model: {default: gpt-4o, context_length: 128000}\nmemory: {provider: ''}\n"
                    "ctx_plugins: {memory: {providers: [file]}}\n", encoding="utf-8")  # switched away since
    assert main(["forget", "--user", "alice", "-y", "--json", "--config", str(path)]) == 0
    report = json.loads(capsys.readouterr().out)
    assert any(str(row.get("store", "")).startswith("ctx-local") and row.get("removed") for row in report["stores"])
    words = scan(home, ["ALICEWORD", "BOBWORD"])
    assert not any("ALICEWORD" in hits for hits in words.values()), words
    assert any("BOBWORD" in hits for hits in words.values()), words  # bob's stay (the positive control)


def test_forget_on_a_server_names_the_server_and_a_sqlite_file_left_from_before(
        capsys: Any, postgres_dsn: str, monkeypatch: Any) -> None:
    """A review: on PostgreSQL, the forget report's ctx-local line named the local ``memory.db`` path although it had
    searched the server, and a SQLite file left from before the switch (no ``storage migrate``) kept the user's
    memories with the report saying nothing of it."""
    path = ctx_local_install("[]")  # on SQLite
    monkeypatch.setenv("HERMES_CTX_POSTGRES_DSN", postgres_dsn)
    path.write_text("model: {default: gpt-4o, context_length: 128000}\nmemory: {provider: ctx-local}\n"
                    "ctx_plugins: {memory: {providers: []}, storage: {backend: postgres, schema: switched}}\n",
                    encoding="utf-8")  # switched to the server, nothing migrated
    assert main(["forget", "--user", "alice", "-y", "--json", "--config", str(path)]) == 1
    rows = [row for row in json.loads(capsys.readouterr().out)["stores"] if str(row["store"]).startswith("ctx-local")]
    assert any(str(row["store"]).startswith("ctx-local postgres, the rows of ") for row in rows), rows
    [left] = [row for row in rows if row["error"]]
    assert "SQLite file" in left["error"] and "storage migrate" in left["error"], left


def test_a_forget_scoped_to_a_deployment_reaches_the_writes_a_provider_it_no_longer_runs_left_queued(
        mem0: Mem0StubServer, capsys: Any) -> None:
    """Deployment ``cloud`` ran ctx-mem0 and left writes queued (its service down); it runs ``file`` alone since. A
    forget scoped to it ran only the providers it runs, and alice's queued words stayed in its ctx-mem0 folder, to be
    sent if it ran ctx-mem0 again (a review). They are taken; bob's stay."""
    path = config_file(mem0)
    home = path.parent
    cloud = load_host(path, deployment="cloud")
    mem0.stop()
    for user, word in USERS.items():
        session = SessionInfo(session_id=f"late-{user}", user_id=user)
        cloud.session_start(session)
        cloud.turn_finalized(Turn(session=session, turn_number=1, user_text=f"late {word}-spooled",
                                  assistant_text="ok"))
    cloud.shutdown()
    before = scan(home, ["ALICEWORD-spooled", "BOBWORD-spooled"])
    assert any("ALICEWORD-spooled" in hits for hits in before.values()), before  # the premise
    path.write_text(path.read_text().replace("cloud: {memory: {providers: [file, ctx-mem0]}}",
                                             "cloud: {memory: {providers: [file]}}"), encoding="utf-8")
    assert main(["--config", str(path), "forget", "--user", "alice", "--deployment", "cloud", "--yes", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert any("ctx-mem0 write queue" in row["store"] and row.get("removed") == 1 for row in report["stores"]), report
    after = scan(home, ["ALICEWORD-spooled", "BOBWORD-spooled"])
    assert not any("ALICEWORD-spooled" in hits for hits in after.values()), after
    assert any("BOBWORD-spooled" in hits for hits in after.values()), after


def test_a_provider_switched_away_from_with_options_it_refuses_does_not_fail_a_forget_when_nothing_waits(
        capsys: Any) -> None:
    """An install that ran ctx-honcho and switched to ctx-local, leaving an option the provider refuses and an empty
    queue folder: every ``forget --user`` reported "ctx-honcho FAILED" and exited 1 (a review). Nothing of the
    user's waits there: no line for it. With a write of theirs waiting, the failure is said."""
    path = ctx_local_install("[]")
    home = path.parent
    path.write_text("model: {default: gpt-4o, context_length: 128000}\nmemory: {provider: ctx-local}\n"
                    "ctx_plugins: {options: {ctx-honcho: {workspace_id: 'bad id'}}}\n", encoding="utf-8")
    (home / "ctx_plugins" / "ctx-honcho" / "queue").mkdir(parents=True)
    assert main(["forget", "--user", "alice", "-y", "--json", "--config", str(path)]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["ok"] and not any("ctx-honcho" in row["store"] for row in report["stores"]), report
    (home / "ctx_plugins" / "ctx-honcho" / "queue.jsonl").write_text('{"kind": "messages"}\n', encoding="utf-8")
    assert main(["forget", "--user", "alice", "-y", "--json", "--config", str(path)]) == 1
    report = json.loads(capsys.readouterr().out)
    assert any(row["store"] == "ctx-honcho" and row.get("error") for row in report["stores"]), report


def test_a_segment_a_killed_process_had_delivered_is_no_write_waiting(capsys: Any) -> None:
    """A queue segment a killed process left whole, its progress file saying every record was delivered, counted as a
    write waiting: a provider switched away from with options it refuses failed every forget (a review)."""
    from hermes_ctx_plugins.memory.remote.honcho import HonchoProvider

    path = ctx_local_install("[]")
    home = path.parent
    path.write_text("model: {default: gpt-4o, context_length: 128000}\nmemory: {provider: ctx-local}\n"
                    "ctx_plugins: {options: {ctx-honcho: {workspace_id: 'bad id'}}}\n", encoding="utf-8")
    queue = home / "ctx_plugins" / "ctx-honcho" / "queue"
    queue.mkdir(parents=True)
    record = b'{"kind": "messages", "messages": []}\n'
    (queue / "000001.seg").write_bytes(record)
    assert HonchoProvider.writes_waiting(home)  # the premise: not delivered yet
    (queue / "000001.seg.done").write_text(str(len(record)), encoding="utf-8")
    assert not HonchoProvider.writes_waiting(home)
    assert main(["forget", "--user", "alice", "-y", "--json", "--config", str(path)]) == 0
    assert not any("ctx-honcho" in row["store"] for row in json.loads(capsys.readouterr().out)["stores"])


def test_a_queue_file_that_cannot_be_read_fails_its_providers_row_alone(capsys: Any) -> None:
    """A provider the install no longer runs whose queue file cannot be read (a folder where ``queue.jsonl`` should be,
    say): asking whether writes wait there stopped the whole forget with a traceback, before any store was cleared
    (a review). Its row fails, saying why; alice is forgotten everywhere else, bob kept."""
    path = ctx_local_install("[]")
    home = path.parent
    (home / "ctx_plugins" / "ctx-honcho" / "queue.jsonl").mkdir(parents=True)
    assert main(["forget", "--user", "alice", "-y", "--json", "--config", str(path)]) == 1
    report = json.loads(capsys.readouterr().out)
    [failed] = [row for row in report["stores"] if row.get("error")]
    assert failed["store"] == "ctx-honcho" and str(home / "ctx_plugins" / "ctx-honcho") in failed["error"], report
    assert any(str(row["store"]).startswith("ctx-local") and row.get("removed") for row in report["stores"]), report
    words = scan(home, ["ALICEWORD", "BOBWORD"])
    assert not any("ALICEWORD" in hits for hits in words.values()), words
    assert any("BOBWORD" in hits for hits in words.values()), words


def test_a_forget_scoped_to_a_deployment_reaches_writes_another_deployment_of_its_namespace_left_queued(
        mem0: Mem0StubServer, capsys: Any) -> None:
    """Deployments ``one`` and ``two`` share the namespace ``shared``; ``two`` queued alice's and bob's turns with
    ctx-mem0 (its service down) and runs ``file`` alone since. A forget scoped to ``one`` is a forget of the namespace
    ``shared``: alice's queued write there is taken (it was left, to be sent into the namespace just forgotten, before
    a change a review found; kept so), bob's stays."""
    home = Path(os.environ["HERMES_HOME"])
    home.mkdir(parents=True, exist_ok=True)
    path = home / "config.yaml"
    text = ("model: {default: gpt-4o, context_length: 128000}\n"
            "ctx_plugins:\n"
            "  memory: {providers: []}\n"
            "  options:\n"
            f"    ctx-mem0: {{api_key: {MEM0_KEY}, host: '{mem0.base_url}', timeout: 2, flush_timeout: 0.5}}\n"
            "  deployments:\n"
            "    one: {memory: {providers: [file], namespace: shared}}\n"
            "    two: {memory: {providers: [file, ctx-mem0], namespace: shared}}\n")
    path.write_text(text, encoding="utf-8")
    two = load_host(path, deployment="two")
    mem0.stop()
    for user, word in USERS.items():
        session = SessionInfo(session_id=f"late-{user}", user_id=user)
        two.session_start(session)
        two.turn_finalized(Turn(session=session, turn_number=1, user_text=f"late {word}-spooled", assistant_text="ok"))
    two.shutdown()
    assert any("ALICEWORD-spooled" in hits for hits in scan(home, ["ALICEWORD-spooled"]).values())  # the premise
    path.write_text(text.replace("providers: [file, ctx-mem0]", "providers: [file]"), encoding="utf-8")
    assert main(["--config", str(path), "forget", "--user", "alice", "--deployment", "one", "--yes", "--json"]) == 0
    after = scan(home, ["ALICEWORD-spooled", "BOBWORD-spooled"])
    assert not any("ALICEWORD-spooled" in hits for hits in after.values()), after
    assert any("BOBWORD-spooled" in hits for hits in after.values()), after

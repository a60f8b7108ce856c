"""The ``file`` provider's MEMORY.md / USER.md on PostgreSQL: workers that each have their own
``$HERMES_HOME`` and one configuration share every owner's files through the server, writes of one
user from two workers both land under the row lock, each worker's files mirror the server copy (for
hermes and for people), an edit made beside the provider is pushed or kept, never dropped, and a
server that is down costs the write it refused, not the turn.

Real parts: a real PostgreSQL server (the suite's ``postgres`` fixture), real worker processes for
the races, hermes' own memory writer for the outside edits. Each test has a schema of its own, since
every worker's files are known on the server by their path inside its home.
"""

from __future__ import annotations

import hashlib
import json
import logging
import multiprocessing
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import psycopg
import pytest

from hermes_ctx_plugins import SessionInfo, storage
from hermes_ctx_plugins.cli import main
from hermes_ctx_plugins.config import Config, load_config
from hermes_ctx_plugins.memory.file.provider import FileProvider, memory_folder
from hermes_ctx_plugins.storage.postgres import DSN_ENV
from hermes_ctx_plugins.testing.postgres import EmbeddedPostgres

ALICE = SessionInfo(session_id="s-alice", user_id="alice")
BOB = SessionInfo(session_id="s-bob", user_id="bob")

Worker = Callable[..., FileProvider]


def on_postgres(dsn: str, schema: str, **memory: Any) -> Config:
    return load_config({"ctx_plugins": {"storage": {"backend": "postgres", "dsn": dsn, "schema": schema,
                                                    "connect_timeout": 2}},
                        "memory": memory})


def make_worker(home: Path, dsn: str, schema: str, **memory: Any) -> FileProvider:
    return FileProvider({"review": "off"}, hermes_home=home, config=on_postgres(dsn, schema, **memory))


@pytest.fixture
def schema(request: pytest.FixtureRequest) -> str:
    return "files_" + hashlib.sha1(request.node.nodeid.encode()).hexdigest()[:12]


@pytest.fixture
def worker(postgres_dsn: str, schema: str, tmp_path: Path) -> Iterator[Worker]:
    """``worker(name, **memory_settings)``: a ``file`` provider in the hermes home ``tmp_path/name``."""
    made: list[FileProvider] = []

    def make(name: str, **memory: Any) -> FileProvider:
        made.append(make_worker(tmp_path / name, postgres_dsn, schema, **memory))
        return made[-1]

    yield make
    for provider in made:
        provider.shutdown()


def add(provider: FileProvider, session: SessionInfo, text: str, target: str = "memory") -> dict[str, Any]:
    answer: dict[str, Any] = json.loads(provider.handle_tool_call(
        "memory", {"target": target, "action": "add", "content": text}, session=session))
    return answer


def prompt(provider: FileProvider, session: SessionInfo, n: int = 1) -> str:
    """The system prompt block of a new session of ``session``'s owner on ``provider``."""
    fresh = SessionInfo(session_id=f"{session.session_id}-{n}", user_id=session.user_id,
                        deployment=session.deployment)
    provider.on_session_start(fresh)
    return provider.system_prompt_block(session=fresh)


def memory_file(provider: FileProvider, session: SessionInfo) -> Path:
    return memory_folder(provider.home, session.deployment, session.user_id) / "MEMORY.md"


def server_copy(dsn: str, schema: str, session: SessionInfo) -> bytes | None:
    folder = memory_folder(Path("/"), session.deployment, session.user_id).relative_to("/")
    with psycopg.connect(dsn) as conn:
        row = conn.execute(f'SELECT content FROM "{schema}".documents WHERE location = %s',
                           (f"home:{folder.as_posix()}/MEMORY.md",)).fetchone()
    assert row is not None, "no row for this owner's MEMORY.md"
    return None if row[0] is None else bytes(row[0])


# -- one copy for the fleet -------------------------------------------------------------------------


def test_an_entry_written_on_one_worker_is_in_the_prompt_on_another_for_its_owner_only(worker: Worker) -> None:
    first, second = worker("w1"), worker("w2")
    assert add(first, ALICE, "alice keeps the kiln key in the blue tin")["success"]
    assert add(first, BOB, "bob's locker code is 4411", target="user")["success"]
    alice_there = prompt(second, ALICE)
    bob_there = prompt(second, BOB)
    assert "kiln key" in alice_there and "4411" not in alice_there
    assert "4411" in bob_there and "kiln key" not in bob_there
    assert add(second, ALICE, "alice fires the kiln on Fridays")["success"]
    assert "kiln on Fridays" in prompt(first, ALICE) and "kiln on Fridays" not in prompt(first, BOB)


def test_each_workers_file_is_the_server_copy_after_a_read(worker: Worker, postgres_dsn: str, schema: str) -> None:
    first, second = worker("w1"), worker("w2")
    assert add(first, ALICE, "the staging port is 8443")["success"]
    assert add(second, ALICE, "deploys go through make ship")["success"]
    assert not memory_file(first, ALICE).read_bytes().endswith(b"make ship")  # not read on w1 since
    prompt(first, ALICE)
    shared = server_copy(postgres_dsn, schema, ALICE)
    assert shared == b"the staging port is 8443\n\xc2\xa7\ndeploys go through make ship"
    assert memory_file(first, ALICE).read_bytes() == shared == memory_file(second, ALICE).read_bytes()


def test_the_character_limit_counts_what_every_worker_wrote(worker: Worker, postgres_dsn: str, schema: str) -> None:
    first, second = worker("w1", memory_char_limit=60), worker("w2", memory_char_limit=60)
    assert add(first, ALICE, "a" * 40)["success"]
    refused = add(second, ALICE, "b" * 30)
    assert not refused["success"] and "40/60" in refused["error"]
    assert add(second, ALICE, "c" * 10)["success"]  # what fits still lands: 40 + 3 + 10
    assert server_copy(postgres_dsn, schema, ALICE) == ("a" * 40 + "\n§\n" + "c" * 10).encode()


# -- races between worker processes -------------------------------------------------------------------


def _add_in_a_process(dsn: str, schema: str, home: str, texts: Sequence[str], limit: int, ready: Any,
                      done: Any) -> None:
    provider = make_worker(Path(home), dsn, schema, memory_char_limit=limit)
    provider.owner(ALICE).store.memory.entries()  # connected and migrated before the start line
    ready.wait(60)  # every worker starts writing at once
    answers = [add(provider, ALICE, text) for text in texts]
    provider.shutdown()
    storage.release()
    done.put(answers)


def race(dsn: str, schema: str, homes: Sequence[Path], texts: Sequence[Sequence[str]], limit: int = 2200
         ) -> list[dict[str, Any]]:
    """Run one worker process per home, each adding its ``texts`` for alice, all at once; every answer."""
    spawn = multiprocessing.get_context("spawn")
    ready, done = spawn.Barrier(len(homes)), spawn.Queue()
    processes = [spawn.Process(target=_add_in_a_process, args=(dsn, schema, str(home), list(mine), limit, ready, done))
                 for home, mine in zip(homes, texts, strict=True)]
    for process in processes:
        process.start()
    answers = [answer for _ in processes for answer in done.get(timeout=120)]
    for process in processes:
        process.join(60)
    assert [p.exitcode for p in processes] == [0] * len(processes)
    return answers


def test_writes_of_one_user_from_two_worker_processes_all_land(
        worker: Worker, postgres_dsn: str, schema: str, tmp_path: Path) -> None:
    texts = [[f"worker {w} note {i:02d}" for i in range(25)] for w in (1, 2)]
    answers = race(postgres_dsn, schema, [tmp_path / "w1", tmp_path / "w2"], texts)
    assert [a["success"] for a in answers] == [True] * 50
    seen = prompt(worker("w3"), ALICE)
    assert all(text in seen for mine in texts for text in mine)  # no write lost another's
    assert len((server_copy(postgres_dsn, schema, ALICE) or b"").split("\n§\n".encode())) == 50


def test_two_workers_racing_past_the_limit_store_only_what_fits(
        worker: Worker, postgres_dsn: str, schema: str, tmp_path: Path) -> None:
    texts = [[f"{w}-{i:03d}" for i in range(10)] for w in "xy"]  # 5 characters each: 7 fit in 60 (53), 8 do not
    answers = race(postgres_dsn, schema, [tmp_path / "w1", tmp_path / "w2"], texts, limit=60)
    landed = [a for a in answers if a["success"]]
    assert len(landed) == 7
    assert all("/60 chars" in a["error"] for a in answers if not a["success"])
    stored = (server_copy(postgres_dsn, schema, ALICE) or b"").decode()
    assert len(stored) == 53 and len(stored.split("\n§\n")) == 7  # every acknowledged entry, no more


# -- the mirror and edits beside the provider -----------------------------------------------------------


def test_a_single_machine_install_becomes_the_shared_copy_at_its_first_read(
        worker: Worker, postgres_dsn: str, tmp_path: Path) -> None:
    before = FileProvider({"review": "off"}, hermes_home=tmp_path / "w1")  # the default: plain files
    assert add(before, ALICE, "written before the fleet existed")["success"]
    before.shutdown()
    first, second = worker("w1"), worker("w2")
    assert "before the fleet" not in prompt(second, ALICE)  # w1 has not read it yet: the server has nothing
    assert "before the fleet" in prompt(first, ALICE)
    assert "before the fleet" in prompt(second, ALICE, 2)


def test_hermes_own_memory_tool_in_a_bridge_reads_and_writes_the_shared_copy(
        worker: Worker, postgres_dsn: str, schema: str) -> None:
    pytest.importorskip("tools.memory_tool", reason="the hermes extra is not installed")
    from hermes_ctx_plugins.hermes.scoped_memory import ScopedMemoryStore

    first, second = worker("w1"), worker("w2")
    assert add(first, ALICE, "entry from our memory tool")["success"]
    # what a Bridge gives a hermes agent on worker 2: hermes' store on alice's files, through our documents
    hermes = ScopedMemoryStore(memory_file(second, ALICE).parent, second.documents, memory_char_limit=2200,
                               user_char_limit=1375)
    hermes.load_from_disk()
    assert hermes.memory_entries == ["entry from our memory tool"]  # its snapshot starts from the fleet's copy
    assert hermes.add("memory", "entry from hermes' own tool")["success"]
    on_server = server_copy(postgres_dsn, schema, ALICE)
    assert on_server == "entry from our memory tool\n§\nentry from hermes' own tool".encode()  # at once
    assert add(first, ALICE, "another from our tool")["success"]  # on top of hermes' write, not over it
    seen = prompt(second, ALICE)
    assert all(e in seen for e in ("our memory tool", "hermes' own tool", "another from our tool"))
    assert "hermes' own tool" not in prompt(second, BOB)


def test_an_edit_made_beside_the_provider_reaches_the_other_workers_at_its_next_read(worker: Worker) -> None:
    first, second = worker("w1"), worker("w2")
    assert add(first, ALICE, "the first entry")["success"]
    path = memory_file(first, ALICE)
    path.write_bytes(path.read_bytes() + "\n§\nedited by hand on worker 1".encode())  # a person, an editor
    assert "edited by hand" not in prompt(second, ALICE)  # worker 1 has not read it since
    assert "edited by hand" in prompt(first, ALICE)  # ... now it has, and pushed it
    assert "edited by hand" in prompt(second, ALICE, 2)


def test_an_edit_here_racing_a_write_there_is_kept_beside_the_file(
        worker: Worker, caplog: pytest.LogCaptureFixture) -> None:
    first, second = worker("w1"), worker("w2")
    assert add(first, ALICE, "the first entry")["success"]
    path = memory_file(first, ALICE)
    path.write_bytes(path.read_bytes() + "\n§\nedited by hand on worker 1".encode())
    assert add(second, ALICE, "written on worker 2 meanwhile")["success"]
    with caplog.at_level(logging.WARNING, logger="hermes_ctx_plugins.storage.postgres"):
        seen = prompt(first, ALICE)
    assert "written on worker 2" in seen and "edited by hand" not in seen  # the shared copy wins ...
    [kept] = path.parent.glob("MEMORY.md.bak.*")
    assert b"edited by hand on worker 1" in kept.read_bytes()  # ... and the edit is kept, not dropped
    assert str(kept) in caplog.text


# -- forgetting ---------------------------------------------------------------------------------------------


def test_forgetting_on_one_worker_clears_the_server_and_every_workers_file_at_its_next_read(
        worker: Worker, postgres_dsn: str, schema: str) -> None:
    first, second = worker("w1"), worker("w2")
    assert add(second, ALICE, "alice's address is 12 Elm St")["success"]  # w1 never served alice
    assert add(second, BOB, "bob's address is 3 Oak Rd")["success"]
    left = memory_file(second, ALICE)  # what a collided edit and a killed writer left on w2 (red-team, session 17)
    left.with_name("MEMORY.md.bak.20261205T082511Z").write_text("alice's card ends 4242", encoding="utf-8")
    left.with_name(".MEMORY.md.k2j3h4.tmp").write_text("alice's address is 12 Elm St", encoding="utf-8")
    report = first.forget_user("alice")
    assert [(f.removed, f.ok) for f in report] == [(1, True)]
    assert server_copy(postgres_dsn, schema, ALICE) is None
    assert memory_file(second, ALICE).exists()  # w2's copy until it next reads alice's files
    assert "12 Elm St" not in prompt(second, ALICE)
    assert not memory_file(second, ALICE).exists()
    assert sorted(p.name for p in left.parent.iterdir() if "MEMORY.md" in p.name and not p.name.endswith(".lock")
                  ) in ([], ["MEMORY.md.pg-revision"])
    assert "3 Oak Rd" in prompt(second, BOB) and memory_file(second, BOB).exists()
    assert add(first, ALICE, "a new start")["success"]
    assert server_copy(postgres_dsn, schema, ALICE) == b"a new start"


# -- the server down ----------------------------------------------------------------------------------------


def test_a_server_down_refuses_the_write_with_a_clear_error_and_loses_nothing(
        worker: Worker, postgres: EmbeddedPostgres, postgres_dsn: str, schema: str) -> None:
    first, second = worker("w1"), worker("w2")
    assert add(first, ALICE, "saved before the outage")["success"]
    with postgres.down():
        refused = add(first, ALICE, "said during the outage")
        during = prompt(first, ALICE)  # the turn goes on: the prompt is this worker's last copy
    assert not refused["success"] and "memory store unavailable" in refused["error"]
    assert "PostgreSQL" in refused["error"] and "try again" in refused["error"]
    assert "saved before the outage" in during
    assert server_copy(postgres_dsn, schema, ALICE) == b"saved before the outage"
    retried = add(first, ALICE, "said during the outage")
    for _ in range(60):  # the model tries again until the pool, backing off since the outage, reconnects
        if retried["success"]:
            break
        assert "memory store unavailable" in retried["error"]  # never "already an entry": nothing landed
        time.sleep(1)
        retried = add(first, ALICE, "said during the outage")
    assert retried["success"], retried
    seen = prompt(second, ALICE)
    assert "saved before the outage" in seen and "said during the outage" in seen


# -- the CLI and the configuration ------------------------------------------------------------------------


def test_the_memory_cli_shows_and_resets_the_shared_copy(
        worker: Worker, postgres_dsn: str, schema: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv(DSN_ENV, postgres_dsn)  # the server from the environment, not the file
    config = tmp_path / "config.yaml"
    config.write_text(f"ctx_plugins:\n  storage:\n    backend: postgres\n    schema: {schema}\n")
    first = worker("w1")
    assert add(first, ALICE, "written on worker 1")["success"]
    assert main(["--config", str(config), "memory", "show", "--user", "alice"]) == 0  # in the CLI's own home
    assert "written on worker 1" in capsys.readouterr().out
    assert main(["--config", str(config), "memory", "show", "--user", "bob"]) == 0
    assert "written on worker 1" not in capsys.readouterr().out
    assert main(["--config", str(config), "memory", "reset", "--user", "alice", "--yes"]) == 0
    assert "the old content is in" in capsys.readouterr().out
    assert server_copy(postgres_dsn, schema, ALICE) == b""
    assert "written on worker 1" not in prompt(first, ALICE)


# -- which store --------------------------------------------------------------------------------------------


def test_only_postgres_moves_the_files_off_the_disk(tmp_path: Path) -> None:
    def shared(**settings: str) -> bool:
        return storage.open_documents(load_config({"ctx_plugins": {"storage": settings}}), tmp_path).shared

    assert not shared() and not shared(backend="memory")  # SQLite and in-memory: hermes' own files
    assert shared(backend="postgres") and shared(documents="postgres")
    assert not shared(backend="postgres", documents="sqlite")


def test_the_memory_cli_says_the_store_is_unusable_when_the_server_is_unreachable(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = tmp_path / "config.yaml"
    config.write_text("ctx_plugins:\n  storage:\n    backend: postgres\n    connect_timeout: 1\n"
                      f"    dsn: postgresql://hermes@/hermes?host={tmp_path / 'no-server-here'}\n")
    assert main(["--config", str(config), "memory", "add", "said while the server is away"]) == 3  # the store
    assert "try again" in capsys.readouterr().err
    assert main(["--config", str(config), "memory", "add", ""]) == 4  # what was asked: refused before any I/O


def test_a_write_staged_on_another_worker_before_the_forget_is_dropped_not_applied(
        worker: Worker, postgres_dsn: str, schema: str) -> None:
    """Red-team, session 17: approving on worker 2 a write staged there before worker 1 forgot the user put the
    forgotten text back on the server, for every worker. One staged after the forget is applied as usual."""
    from hermes_ctx_plugins.memory.file.store import Op

    first, second = worker("w1"), worker("w2")
    assert add(second, ALICE, "alice's card ends 4242")["success"]
    owner = second.owner(ALICE)
    before = owner.pending.stage("memory", [Op("add", "alice's phone is 555-0199")])
    time.sleep(0.01)
    first.forget_user("alice")
    with pytest.raises(KeyError, match="staged before its owner's memories were forgotten"):
        owner.pending.approve(before, owner.store)
    assert server_copy(postgres_dsn, schema, ALICE) is None and owner.pending.items() == []
    after = owner.pending.stage("memory", [Op("add", "alice starts over")])
    owner.pending.approve(after, owner.store)
    assert server_copy(postgres_dsn, schema, ALICE) == b"alice starts over"


def test_a_new_session_waits_for_a_locked_table_no_longer_than_a_read_may(worker: Worker, postgres_dsn: str,
                                                                           schema: str) -> None:
    """Found in review (fixed) (availability, the user's turn): a read of the shared copy waited for a lock as long as
    an update does (10 s), and a new session reads MEMORY.md and USER.md: an operator's ``VACUUM FULL`` of
    ``documents`` (an ACCESS EXCLUSIVE lock) held each new session's prompt 20-30 s, past the 5 s the README gives a
    read (and the prompt reads MEMORY.md once more: 30 s). Now a read gives up after 5 s, the reads that follow within
    seconds use this machine's copy without waiting again, and the prompt is built from that copy."""
    first = worker("w1")
    assert add(first, ALICE, "alice keeps the kiln key in the blue tin")["success"]
    locker = psycopg.connect(postgres_dsn, autocommit=True)
    try:
        locker.execute("BEGIN")
        locker.execute(f'LOCK TABLE "{schema}".documents IN ACCESS EXCLUSIVE MODE')
        started = time.monotonic()
        block = prompt(first, ALICE, 2)
        took = time.monotonic() - started
    finally:
        locker.execute("ROLLBACK")
        locker.close()
    assert "kiln key" in block  # this machine's copy, the last it saw
    assert took < 5 + 3, f"a new session's prompt waited {took:.1f} s on a locked table"


def test_hermes_own_memory_tool_answers_a_server_down_with_its_result_not_an_exception(
        worker: Worker, postgres: EmbeddedPostgres, postgres_dsn: str, schema: str) -> None:
    """A fleet pass: in a Bridge, hermes' memory tool (hermes' store on our shared documents) raised the server's
    error out of the tool; hermes' loop then answered every tool call of the model's message with it, so a todo
    made beside the memory add never ran. hermes' own tool function, as the model calls it, must answer instead."""
    pytest.importorskip("tools.memory_tool", reason="the hermes extra is not installed")
    from tools.memory_tool import memory_tool

    from hermes_ctx_plugins.hermes.scoped_memory import ScopedMemoryStore

    second = worker("w2")
    hermes = ScopedMemoryStore(memory_file(second, ALICE).parent, second.documents, memory_char_limit=2200,
                               user_char_limit=1375)
    hermes.load_from_disk()
    assert json.loads(memory_tool(action="add", content="before the outage", store=hermes))["success"]
    with postgres.down():
        for call in ({"action": "add", "content": "during the outage"},
                     {"action": "replace", "old_text": "before", "content": "changed during the outage"},
                     {"action": "remove", "old_text": "before"},
                     {"operations": [{"action": "add", "content": "batched during the outage"}]}):
            answer = json.loads(memory_tool(store=hermes, **call))
            assert answer["success"] is False and "memory store unavailable" in answer["error"], (call, answer)
    assert server_copy(postgres_dsn, schema, ALICE) == b"before the outage"  # nothing half-written
    assert hermes.memory_entries == ["before the outage"]


def test_a_plain_hermes_worker_starts_a_conversation_with_the_shared_copy_not_its_stale_file(
        stub: Any, postgres_dsn: str, schema: str, tmp_path: Path) -> None:
    """A fleet pass: a plain hermes worker (`hermes chat`, the gateway; not a Bridge) snapshots its MEMORY.md when it
    builds an agent, before any hook of ours refreshes the file from the server: an entry another worker added showed
    a conversation later, one it removed was shown once more. Our engine, told of the session at the agent's build,
    brings the file up to date and has hermes' store read it again."""
    pytest.importorskip("run_agent", reason="the hermes extra is not installed")
    from hermes_helpers import configure_hermes, hermes_home, new_agent

    storage_yaml = (f"ctx_plugins: {{memory: {{providers: [file]}}, storage: {{backend: postgres, "
                    f"dsn: '{postgres_dsn}', schema: {schema}, connect_timeout: 2}}}}\n"
                    "memory: {memory_enabled: true}\n")
    configure_hermes(stub, storage_yaml)
    elsewhere = FileProvider({"review": "off"}, hermes_home=tmp_path / "other-worker",
                             config=on_postgres(postgres_dsn, schema))
    anonymous = SessionInfo(session_id="s-cli", user_id="")
    assert add(elsewhere, anonymous, "the deploy port is 8443, said on another worker")["success"]
    local = hermes_home() / "memories" / "MEMORY.md"
    assert not local.exists() or b"8443" not in local.read_bytes()  # this worker's file is stale (the control)
    agent = new_agent(stub, toolsets=["memory", "context_engine"])
    assert any("8443" in entry for entry in agent._memory_store.memory_entries), agent._memory_store.memory_entries
    elsewhere.shutdown()


def test_hermes_own_memory_tool_answers_a_text_the_store_cannot_hold_with_its_result(worker: Worker,
                                                                                     postgres_dsn: str,
                                                                                     schema: str) -> None:
    """A hostile-values pass: a lone surrogate reaching the store by a path that skips our gate (hermes' tool function
    called on it) raised UnicodeEncodeError out of the tool, the failure the server-down fix above closed."""
    pytest.importorskip("tools.memory_tool", reason="the hermes extra is not installed")
    from tools.memory_tool import memory_tool

    from hermes_ctx_plugins.hermes.scoped_memory import ScopedMemoryStore

    third = worker("w3")
    hermes = ScopedMemoryStore(memory_file(third, ALICE).parent, third.documents, memory_char_limit=2200,
                               user_char_limit=1375)
    hermes.load_from_disk()
    assert json.loads(memory_tool(action="add", content="a plain note", store=hermes))["success"]  # the control
    answer = json.loads(memory_tool(action="add", content="a lone \ud800 surrogate", store=hermes))
    assert answer["success"] is False and "surrogate" in answer["error"], answer
    assert server_copy(postgres_dsn, schema, ALICE) == b"a plain note" and hermes.memory_entries == ["a plain note"]

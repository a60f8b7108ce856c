"""A Bridge agent keeps its owner whatever hermes does to its session id (red-team findings, issue 12).

hermes' hooks tell us a turn's session id and nothing more, so the Bridge binds each agent's session id
to its owner. These tests go after the ways that binding could be lost: hermes compacting (and
archiving) before its first hook, hermes moving the agent to a new session id, two agents sharing one
id, a platform's integer user id, a deployment without a compressor, hermes' skill review.
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from hermes_helpers import configure_hermes, hermes_home, new_agent

from hermes_ctx_plugins import ConfigError, SessionInfo, load_config
from hermes_ctx_plugins.errors import InvalidSession
from hermes_ctx_plugins.testing import StubOpenAIServer, make_transcript

pytest.importorskip("run_agent", reason="the hermes extra is not installed")
from hermes_state import SessionDB

from hermes_ctx_plugins.bridge import Bridge, SessionInUseError
from hermes_ctx_plugins.hermes.runtime import installed

SECRET = "ALICE-SECRET-3f9a2c1e7b"


def bound_session(session_id: str) -> SessionInfo | None:
    """Who the runtime whose hooks hermes calls has bound ``session_id`` to."""
    runtime = installed()
    assert runtime is not None
    return runtime.sessions.bound(session_id)


def long_history(word: str = SECRET) -> list[dict[str, Any]]:
    history = make_transcript(40, turns=90, output_lines=80, system=False, images=False)
    i = next(i for i, m in enumerate(history[10:], 10) if m["role"] == "assistant" and m.get("content"))
    history[i] = {**history[i], "content": f"{history[i]['content']} {word}"}
    return history


def summarising(stub: StubOpenAIServer) -> None:
    stub.responder = lambda body: "continuing" if body.get("stream") else "## Goal\nsummary"


def test_what_a_bridge_agent_compacts_is_archived_as_its_owners(stub: StubOpenAIServer) -> None:
    configure_hermes(stub)
    plan = Bridge({"ctx_plugins": {"memory": {"providers": []}, "deployments": {"d": {"compressor": "summarize"}}}
                   }).deployment("d")
    summarising(stub)
    alice = plan.apply(new_agent(stub, toolsets=["context_engine"], session_id="alice-s1", user_id="alice",
                                 **plan.agent_kwargs()))
    alice.run_conversation("please continue", conversation_history=long_history())  # hermes' preflight compacts
    with sqlite3.connect(Path(os.environ["HERMES_HOME"]) / "ctx_archive.db") as db:
        owners = db.execute("SELECT DISTINCT namespace, user_id, session_id FROM messages").fetchall()
    assert owners == [("d", "alice", "alice-s1")]
    stub.responder = None
    bob = plan.apply(new_agent(stub, toolsets=["context_engine"], session_id="bob-s1", user_id="bob",
                               **plan.agent_kwargs()))
    stub.tool_call("ctx_search", {"query": "ALICE SECRET"})
    stub.reply("done")
    out = bob.run_conversation("search", conversation_history=[])
    assert not any("3f9a2c1e7b" in str(m.get("content")) for m in out["messages"] if m.get("role") == "tool")
    assert "3f9a2c1e7b" in alice.context_compressor.handle_tool_call("ctx_search", {"query": "ALICE SECRET"})


def test_a_bridge_agent_is_offered_the_archive_tools_without_our_engine_in_hermes_config(
        stub: StubOpenAIServer) -> None:
    """A fleet pass: with hermes' config naming no context engine (README: not needed), hermes built the agent with
    its own compressor, whose tool list has no ``ctx_search``; ``apply()`` swapped our engine in but the model was
    never offered its tools, while the summary's index pointed it at ``ctx_expand``."""
    configure_hermes(stub, engine=False)
    plan = Bridge({"ctx_plugins": {"memory": {"providers": []}, "deployments": {"d": {"compressor": "summarize"}}}
                   }).deployment("d")
    summarising(stub)
    alice = plan.apply(new_agent(stub, toolsets=["context_engine", "todo"], session_id="alice-t1", user_id="alice",
                                 **plan.agent_kwargs()))
    alice.run_conversation("please continue", conversation_history=long_history())  # hermes' preflight compacts
    stub.responder = None
    stub.tool_call("ctx_search", {"query": "ALICE SECRET"})
    stub.reply("done")
    asked = len(stub.chat_requests)
    out = alice.run_conversation("search the archive", conversation_history=[])
    offered = [t["function"]["name"] for t in stub.chat_requests[asked].body["tools"]]
    assert {"ctx_search", "ctx_expand", "todo"} <= set(offered) and len(offered) == len(set(offered))
    results = [str(m.get("content")) for m in out["messages"] if m.get("role") == "tool"]
    assert any("3f9a2c1e7b" in r for r in results), results  # hermes ran it through our engine: her archive
    bare = plan.apply(new_agent(stub, toolsets=["todo"], session_id="alice-t2", user_id="alice",
                                **plan.agent_kwargs()))
    assert "ctx_search" not in {t["function"]["name"] for t in bare.tools}  # its toolsets leave the engine's out


def test_a_new_session_id_keeps_the_agents_deployment(stub: StubOpenAIServer) -> None:
    """``compression.in_place: false`` moves the agent to a child session (so do /new and /resume)."""
    word = "DEPLOYD-ALICE-CODE-8812"
    home = configure_hermes(stub, "compression: {in_place: false}\nctx_plugins: {memory: {providers: [ctx-local]}, "
                                  "deployments: {d: {compressor: summarize}}}\n")
    bridge = Bridge(home / "config.yaml")
    plan, top = bridge.deployment("d"), bridge.deployment(None)
    summarising(stub)
    alice = plan.apply(new_agent(stub, session_id="alice-s1", user_id="alice", session_db=SessionDB(home / "state.db"),
                                 **plan.agent_kwargs()))
    alice.run_conversation(f"remember: my codeword is {word}", conversation_history=long_history("x"))
    assert alice.session_id != "alice-s1"  # hermes rotated it
    moved = bound_session(alice.session_id)
    assert moved is not None and (moved.deployment, moved.user_id) == ("d", "alice")
    assert bound_session("alice-s1") is None
    for provider in (*plan.host.memory_providers, *top.host.memory_providers):
        assert provider.flush(10)
    stub.responder = lambda body: "ok"
    top.apply(new_agent(stub, session_id="top-alice", user_id="alice", **top.agent_kwargs())).run_conversation(
        "what is my codeword? codeword", conversation_history=[])
    assert word not in json.dumps(stub.chat_requests[-1].body)  # the top-level alice is someone else
    plan.apply(new_agent(stub, session_id="alice-s2", user_id="alice", **plan.agent_kwargs())).run_conversation(
        "what is my codeword? codeword", conversation_history=[])
    assert word in json.dumps(stub.chat_requests[-1].body)  # the owner still has it
    bridge.shutdown()


def test_a_session_id_in_use_by_another_owner_is_refused(stub: StubOpenAIServer) -> None:
    configure_hermes(stub)
    bridge = Bridge({"ctx_plugins": {"memory": {"providers": []}, "deployments": {"a": {}, "b": {}}}})
    first = bridge.deployment("a").apply(new_agent(stub, session_id="chat-1", user_id="u1"))
    with pytest.raises(SessionInUseError, match=r"chat-1.*user 'u1' of deployment 'a'"):
        bridge.deployment("b").apply(new_agent(stub, session_id="chat-1", user_id="u1"))
    # the same owner's replacement agent may take the id over, and releasing the old one leaves it bound
    second = bridge.deployment("a").apply(new_agent(stub, session_id="chat-1", user_id="u1"))
    bridge.deployment("a").release(first)
    assert bound_session("chat-1") is not None
    bridge.deployment("a").release(second)
    assert bound_session("chat-1") is None


def test_an_integer_user_id_is_its_text(stub: StubOpenAIServer) -> None:
    """Platforms hand hermes integer ids (Telegram): stored and compared as their text, never lost."""
    configure_hermes(stub)
    bridge = Bridge({"ctx_plugins": {"memory": {"providers": []},
                                     "deployments": {"d": {"memory": {"providers": ["ctx-local"]}}}}})
    plan = bridge.deployment("d")
    stub.responder = lambda body: "noted"
    plan.apply(new_agent(stub, session_id="s-int", user_id=4242)).run_conversation(
        "my codeword is INTCODE77", conversation_history=[])
    [local] = plan.host.memory_providers
    assert local.flush(10)
    plan.apply(new_agent(stub, session_id="s-int-2", user_id=4242)).run_conversation(
        "what is my codeword? codeword", conversation_history=[])
    assert "INTCODE77" in json.dumps(stub.chat_requests[-1].body)
    assert plan.host.isolator.status("memory:ctx-local") == "ok"
    bridge.shutdown()


@pytest.mark.parametrize(("given", "alias"), [(b"zed", "b'zed'"), (True, "True"), (1.0, "1.0")])
def test_a_user_id_neither_text_nor_an_integer_is_refused_not_read_as_another_users(
        stub: StubOpenAIServer, given: object, alias: str) -> None:
    """Bytes from a database driver, a bool, a float: ``str()`` made them the users ``"b'zed'"``, ``"True"``,
    ``"1.0"``, who then recalled their memories (a red-team pass). Refused, naming the value; the user whose id is
    that text keeps their memory to themselves and still recalls it."""
    configure_hermes(stub)
    bridge = Bridge({"ctx_plugins": {"memory": {"providers": []},
                                     "deployments": {"d": {"memory": {"providers": ["ctx-local"]}}}}})
    plan = bridge.deployment("d")
    stub.responder = lambda body: "noted"
    plan.apply(new_agent(stub, session_id="s-alias", user_id=alias)).run_conversation(
        "my codeword is ALIASCODE31", conversation_history=[])
    [local] = plan.host.memory_providers
    assert local.flush(10)
    with pytest.raises(InvalidSession, match=re.escape(f"got {given!r}")):
        plan.apply(new_agent(stub, session_id="s-given", user_id=given))
    assert bound_session("s-given") is None
    plan.apply(new_agent(stub, session_id="s-alias-2", user_id=alias)).run_conversation(
        "what is my codeword? codeword", conversation_history=[])
    assert "ALIASCODE31" in json.dumps(stub.chat_requests[-1].body)  # the text id's own memory, still there
    bridge.shutdown()


def test_a_deployment_without_a_compressor_cannot_keep_another_deployments_engine(stub: StubOpenAIServer) -> None:
    configure_hermes(stub)  # hermes runs our engine (context.engine: hermes-ctx)
    bridge = Bridge({"ctx_plugins": {"memory": {"providers": []},
                                     "deployments": {"nocomp": {"disabled": ["summarize"]}}}})
    with pytest.raises(ConfigError, match=r"ctx_plugins\.deployments\.nocomp\.compressor"):
        bridge.deployment("nocomp").apply(new_agent(stub, session_id="nc-1", user_id="alice"))
    assert bound_session("nc-1") is None


def test_hermes_skill_review_is_off_for_a_users_agent(stub: StubOpenAIServer) -> None:
    configure_hermes(stub)
    plan = Bridge({"ctx_plugins": {"memory": {"providers": ["file"]}}}).deployment(None)
    agent = plan.apply(new_agent(stub, session_id="sk-1", user_id="alice"))
    assert agent._skill_nudge_interval == 0


def test_a_users_agent_cannot_read_another_users_conversations_through_hermes_session_search(
        stub: StubOpenAIServer) -> None:
    """hermes' ``session_search`` reads every session of hermes' one state.db, whoever's (a red-team pass: bob's agent
    read alice's conversation word for word, by query, browsing, and by her session id). Agents built as README's
    example, with hermes' default toolsets and the session database a resuming service passes."""
    import run_agent

    configure_hermes(stub, engine=False)
    plan = Bridge({"ctx_plugins": {"memory": {"providers": []},
                                   "deployments": {"d": {"compressor": "summarize"}}}}).deployment("d")
    database = SessionDB()

    def agent(session_id: str, user_id: str) -> Any:
        return plan.apply(run_agent.AIAgent(
            base_url=stub.base_url, api_key="k", provider="custom", model="stub-model", quiet_mode=True,
            skip_context_files=True, session_id=session_id, user_id=user_id, session_db=database,
            **plan.agent_kwargs()))

    stub.reply("Noted.")
    alice = agent("ss-alice", "alice")
    alice.run_conversation(f"my bank PIN is {SECRET}, keep it private", conversation_history=[])
    plan.release(alice)
    assert database.get_messages("ss-alice"), "positive control: hermes kept alice's conversation"
    bob = agent("ss-bob", "bob")
    assert "session_search" not in {t["function"]["name"] for t in bob.tools or []}
    assert "session_search" in (bob.disabled_toolsets or ()), "hermes hands disabled toolsets on to subagents"
    for arguments in ({"query": SECRET}, {"query": "PIN"}, {}, {"session_id": "ss-alice"}):
        stub.tool_call("session_search", arguments)
    stub.reply("done")
    result = bob.run_conversation("find the PIN", conversation_history=[])
    answers = [str(m.get("content")) for m in result["messages"] if m.get("role") == "tool"]
    assert answers and not any(SECRET in answer for answer in answers), answers
    assert all("session_search' does not exist" in answer for answer in answers)
    from tools.delegate_tool import _build_child_agent  # hermes' own subagent builder (delegate_task)

    for asked in (None, ["session_search"]):
        child = _build_child_agent(0, "find the PIN", None, asked, None, 5, 1, bob)
        assert "session_search" not in child.valid_tool_names, asked
    plan.release(bob)


@pytest.mark.parametrize("toolsets", [None, ["memory", "todo", "web"]])
def test_agents_with_hermes_host_tools_are_said_to_reach_every_users_files(
        stub: StubOpenAIServer, caplog: pytest.LogCaptureFixture, toolsets: list[str] | None) -> None:
    """hermes' read_file / terminal read any file of the hermes home: bob's agent read alice's USER.md and grep'd her
    PIN out of hermes' logs and sessions (a red-team pass). hermes' tools, not ours to take away (a sandboxed terminal
    backend is the operator's answer): said once per deployment, for agents built with them."""
    import logging

    import run_agent

    configure_hermes(stub, engine=False)
    plan = Bridge({"ctx_plugins": {"memory": {"providers": ["file"]},
                                   "deployments": {"d": {"compressor": "summarize"}}}}).deployment("d")
    caplog.set_level(logging.WARNING, logger="hermes_ctx_plugins")
    for user in ("alice", "bob"):
        kwargs = {} if toolsets is None else {"enabled_toolsets": toolsets}
        plan.release(plan.apply(run_agent.AIAgent(
            base_url=stub.base_url, api_key="k", provider="custom", model="stub-model", quiet_mode=True,
            skip_context_files=True, session_id=f"ht-{user}", user_id=user, **kwargs, **plan.agent_kwargs())))
    said = [r.getMessage() for r in caplog.records if "hermes' tools" in r.getMessage()]
    if toolsets is None:  # hermes' defaults
        assert len(said) == 1 and "terminal" in said[0] and "read_file" in said[0] and "enabled_toolsets" in said[0]
    else:
        assert said == []


def test_a_deployment_needs_a_name() -> None:
    with pytest.raises(ConfigError, match="a deployment needs a name"):
        load_config({"ctx_plugins": {"deployments": {"": {"compressor": "window"}}}})


def test_a_session_id_handed_to_another_owner_never_resends_the_first_owners_memory(stub: StubOpenAIServer) -> None:
    """hermes resends a continued session's stored system prompt (its prompt cache), and that prompt holds the owner's
    frozen USER.md: a session id alice's agent had used, given to bob's, sent alice's profile in every one of bob's
    requests and never bob's own (a red-team pass). The same owner continuing keeps the stored prompt."""
    home = configure_hermes(stub, "memory: {memory_enabled: true, user_profile_enabled: true}\n")
    bridge = Bridge({"ctx_plugins": {"memory": {"providers": []}, "deployments": {
        "support": {"compressor": "summarize", "memory": {"providers": ["file"]}}}}})
    plan = bridge.deployment("support")
    db = SessionDB(home / "state.db")
    chat = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]

    def turn(session_id: str, user: str, text: str, history: list[dict[str, Any]]) -> str:
        before = len(stub.chat_requests)
        agent = plan.apply(new_agent(stub, toolsets=["memory"], session_id=session_id, user_id=user, session_db=db,
                                     **plan.agent_kwargs()))
        agent.run_conversation(text, conversation_history=history)
        plan.release(agent)
        return "\n".join(json.dumps(r.body) for r in stub.chat_requests[before:])

    for user, word in (("alice", "ALICE-PROFILE-5521"), ("bob", "BOB-PROFILE-7781")):
        stub.tool_call("memory", {"action": "add", "target": "user", "content": f"codeword {word}"})
        stub.reply("Noted.")
        turn(f"{user}-0", user, "remember my codeword", [])
    stub.responder = lambda body: "ok"
    assert "ALICE-PROFILE-5521" in turn("chat-42", "alice", "hello", [])
    stored = db.get_session("chat-42")["system_prompt"]
    assert "ALICE-PROFILE-5521" in turn("chat-42", "alice", "again", chat)  # alice continues: her prompt, kept
    assert db.get_session("chat-42")["system_prompt"] == stored
    for _ in range(2):  # bob takes the id over: his own profile, never alice's
        sent = turn("chat-42", "bob", "what is my codeword?", chat)
        assert "BOB-PROFILE-7781" in sent and "ALICE-PROFILE-5521" not in sent
    sent = turn("chat-42", "alice", "and mine?", chat)  # and back
    assert "ALICE-PROFILE-5521" in sent and "BOB-PROFILE-7781" not in sent
    bridge.shutdown()


def test_a_hand_over_whose_clear_failed_is_cleared_at_the_next_apply(tmp_path: Path) -> None:
    """The new owner was recorded before the stored prompt was cleared: hermes' database locked once, and every later
    apply found the owner recorded and resent the first owner's prompt (a red-team pass). Two homes sharing one
    state.db share one record (it lives beside the database)."""
    from hermes_ctx_plugins.hermes.prompt_owners import PromptOwnerRecords, forget_foreign_prompt

    db = SessionDB(tmp_path / "state.db")
    db.create_session("S", source="cli")

    class Locked:  # hermes' database, locked by another process at the first try
        db_path, tries = db.db_path, 0

        def get_session(self, session_id: str) -> Any:
            return db.get_session(session_id)

        def update_system_prompt(self, session_id: str, prompt: Any) -> None:
            Locked.tries += 1
            if Locked.tries == 1:
                raise sqlite3.OperationalError("database is locked")
            db.update_system_prompt(session_id, prompt)

    class Agent:
        _session_db: Any = db

    class LockedAgent:
        _session_db: Any = Locked()

    alice, bob = SessionInfo(session_id="S", user_id="alice"), SessionInfo(session_id="S", user_id="bob")
    first_home, second_home = PromptOwnerRecords(), PromptOwnerRecords()
    forget_foreign_prompt(first_home, Agent, alice)
    db.update_system_prompt("S", "ALICE'S PROFILE")
    assert not forget_foreign_prompt(first_home, Agent, alice)  # the same owner keeps the prompt (its cache)
    assert not forget_foreign_prompt(second_home, LockedAgent, bob)  # the clear failed ...
    assert forget_foreign_prompt(second_home, LockedAgent, bob)  # ... and is made at the next apply
    assert db.get_session("S")["system_prompt"] is None
    db.update_system_prompt("S", "BOB'S PROFILE")
    assert forget_foreign_prompt(first_home, Agent, alice)  # the other home knows bob had it last
    first_home.close()
    second_home.close()


def test_the_records_of_many_session_databases_hold_a_bounded_number_of_files_open(tmp_path: Path) -> None:
    """Each folder holding a state.db got a record whose connection kept three files open for the process's life: a
    Bridge serving many hermes homes ran out of descriptors at ~80 folders under ulimit -n 256 (a red-team pass)."""
    from hermes_ctx_plugins.hermes.prompt_owners import MAX_OPEN, PromptOwnerRecords
    records = PromptOwnerRecords()

    def open_files() -> int:
        return len(os.listdir("/proc/self/fd"))

    before = open_files()
    for n in range(60):
        owners = records.of(tmp_path / f"home{n}")
        owners.record(str(tmp_path / f"home{n}" / "state.db"), f"s{n}", "owner")
    assert open_files() - before <= 3 * MAX_OPEN + 2
    first = records.of(tmp_path / "home0")  # closed, and opened again at its next use, its rows kept
    assert first.owner(str(tmp_path / "home0" / "state.db"), "s0") == "owner"
    records.close()
    assert open_files() <= before


def test_rows_unused_for_the_keeping_time_go_while_the_process_runs(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """They were dropped only when a record was opened: a Bridge running for weeks kept every one (a red-team pass)."""
    import time

    from hermes_ctx_plugins.hermes import prompt_owners
    owners = prompt_owners.PromptOwners(tmp_path / "prompt_owners.db")
    owners.record("state.db", "fresh", "owner")
    with sqlite3.connect(owners.path) as raw:
        raw.execute("INSERT INTO owners VALUES ('state.db', 'stale', 'owner', ?)", (time.time() - 100 * 86_400,))
    raw.close()
    assert owners.owner("state.db", "stale") == "owner"  # within the day: kept
    monkeypatch.setattr(prompt_owners, "PRUNE_EVERY", 0.0)
    assert owners.owner("state.db", "stale") is None and owners.owner("state.db", "fresh") == "owner"
    owners.close()


def test_a_turn_the_model_refused_leaves_no_entry_once_its_agent_is_released(stub: StubOpenAIServer) -> None:
    """hermes fires no on_session_end for a turn that ends with a 400, 401 or 413 from the model: released, its
    entry stayed 'in a turn' for good (one per failed turn), and the next owner given the id inherited its turn
    count (a red-team pass). Released on the turn's thread, or once that thread ended, the entry goes."""
    import threading

    configure_hermes(stub)
    plan = Bridge({"ctx_plugins": {"memory": {"providers": []}, "deployments": {"d": {"compressor": "summarize"}}}
                   }).deployment("d")
    runtime = installed()
    assert runtime is not None
    stub.fail(400, "bad request", times=50)
    failed = plan.apply(new_agent(stub, session_id="failed-1", user_id="alice", **plan.agent_kwargs()))
    failed.run_conversation("hello", conversation_history=[])
    plan.release(failed)  # the thread that ran the turn: it is over
    assert "failed-1" not in runtime.sessions._entries

    elsewhere = plan.apply(new_agent(stub, session_id="failed-2", user_id="alice", **plan.agent_kwargs()))
    worker = threading.Thread(target=elsewhere.run_conversation, args=("hello",), kwargs={"conversation_history": []})
    worker.start()
    worker.join()
    plan.release(elsewhere)  # from another thread, once the turn's thread ended: over too
    assert "failed-2" not in runtime.sessions._entries
    stub.clear_faults()
    bob = plan.apply(new_agent(stub, session_id="failed-1", user_id="bob", **plan.agent_kwargs()))
    bob.run_conversation("hello", conversation_history=[])
    assert runtime.sessions._entries["failed-1"].turns == 1


def test_applying_an_agent_for_a_user_who_never_writes_a_memory_makes_no_folder(stub: StubOpenAIServer) -> None:
    """Every apply made the owner's memory folder: a Bridge serving 20,000 users who never wrote a memory kept
    20,000 empty folders, 79 MB (a red-team pass). The folder comes with the first write."""
    from hermes_ctx_plugins.memory.file.provider import memory_folder

    configure_hermes(stub)
    plan = Bridge({"ctx_plugins": {"memory": {"providers": ["file"]}, "deployments": {"d": {}}}}).deployment("d")
    agent = plan.apply(new_agent(stub, toolsets=["memory"], session_id="quiet-1", user_id="quiet",
                                 **plan.agent_kwargs()))
    folder = memory_folder(Path(os.environ["HERMES_HOME"]), "d", "quiet")
    agent.run_conversation("hello", conversation_history=[])
    assert not folder.exists()
    stub.tool_call("memory", {"action": "add", "target": "memory", "content": "prefers tea"})
    stub.reply("noted")
    agent.run_conversation("remember that I prefer tea", conversation_history=[])
    assert "prefers tea" in (folder / "MEMORY.md").read_text(encoding="utf-8")


def test_an_entry_released_while_its_turn_may_run_goes_once_its_agent_is_gone() -> None:
    """Released from another thread while the turn's thread lives on (a pool's): kept, as the turn's last hooks may
    still come; once the agent is gone no hook of it can, and the entry goes at the table's next store."""
    import gc
    import threading

    from hermes_ctx_plugins.hermes.runtime import SessionTable

    class Agent:
        pass

    table, host = SessionTable(), object()
    agent = Agent()
    table.bind(SessionInfo(session_id="pooled", user_id="alice"), host, holder=agent)  # type: ignore[arg-type]
    started, release = threading.Event(), threading.Event()

    def turn() -> None:
        table.start_turn("pooled")
        started.set()
        release.wait(5)  # the pool's thread stays alive after the turn failed

    worker = threading.Thread(target=turn)
    worker.start()
    started.wait(5)
    table.release(agent)
    assert table._entries["pooled"].released
    del agent
    gc.collect()
    table.bind(SessionInfo(session_id="next", user_id="bob"), host, holder=Agent())  # type: ignore[arg-type]
    assert "pooled" not in table._entries
    release.set()
    worker.join()


def test_an_agent_released_from_inside_its_own_turn_keeps_its_binding_until_the_turn_ends() -> None:
    """A Bridge releasing an agent from a callback of its running turn (a user disconnecting): the entry went at
    once, its turn's last hooks finding no owner (a red-team pass). From inside run_conversation it is kept,
    released, until the turn ends; released once run_conversation returned, it goes."""
    from hermes_ctx_plugins.hermes.runtime import SessionTable

    table, host = SessionTable(), object()

    class Agent:
        def run_conversation(self) -> object:
            table.start_turn("mid-turn")
            table.release(self)  # from a callback of the turn
            still = table.binding("mid-turn")
            table.end_turn("mid-turn")
            return still

    agent = Agent()
    table.bind(SessionInfo(session_id="mid-turn", user_id="alice"), host, holder=agent)  # type: ignore[arg-type]
    assert agent.run_conversation() is not None and "mid-turn" not in table._entries
    table.bind(SessionInfo(session_id="after", user_id="alice"), host, holder=agent)  # type: ignore[arg-type]
    table.start_turn("after")  # a turn hermes ended with an error: no end_turn
    table.release(agent)  # on the same thread, run_conversation having returned
    assert "after" not in table._entries


def test_a_release_after_a_subclass_turn_returned_is_after_the_turn() -> None:
    """An agent subclass overriding run_conversation, calling super() and releasing itself once it returned (its turn
    failed: no end_turn) was taken as inside its turn, and its entry kept for the agent's life (a red-team pass)."""
    from hermes_ctx_plugins.hermes.runtime import SessionTable

    table, host = SessionTable(), object()

    class Agent:
        def run_conversation(self) -> None:
            table.start_turn("sub")  # the model refuses: no end_turn

    class Mine(Agent):
        def run_conversation(self) -> None:
            super().run_conversation()
            table.release(self)  # after hermes' turn returned

    agent = Mine()
    table.bind(SessionInfo(session_id="sub", user_id="alice"), host, holder=agent)  # type: ignore[arg-type]
    agent.run_conversation()
    assert "sub" not in table._entries


@pytest.mark.parametrize("shape", ["plain", "protocol_after", "wrapped", "wrapped_plain", "rebound",
                                   "subclass_then_release"])
def test_a_release_during_a_real_hermes_turn_keeps_the_binding_until_it_ends(
        stub: StubOpenAIServer, monkeypatch: pytest.MonkeyPatch, shape: str) -> None:
    """A Bridge releasing its agent from a callback of the running turn (hermes' step_callback): the binding must
    hold until the turn ends, whatever wraps or subclasses hermes' AIAgent (a Protocol after it in the MRO, a wrapper
    with or without functools.wraps dropped it mid-turn: red-team passes); a subclass releasing once hermes' turn
    returned is after the turn."""
    import functools
    from typing import Protocol

    import run_agent

    class Runs(Protocol):
        def run_conversation(self, *args: Any, **kwargs: Any) -> Any: ...

    original = run_agent.AIAgent.run_conversation
    agent_class: Any = run_agent.AIAgent
    if shape == "protocol_after":
        agent_class = type("Mine", (run_agent.AIAgent, Runs), {})
    elif shape == "rebound":  # a harness putting its subclass where hermes' class was
        agent_class = type("Traced", (run_agent.AIAgent,), {})
        monkeypatch.setattr(run_agent, "AIAgent", agent_class)
    elif shape in ("wrapped", "wrapped_plain"):
        def traced(*args: Any, **kwargs: Any) -> Any:
            return original(*args, **kwargs)
        monkeypatch.setattr(run_agent.AIAgent, "run_conversation",
                            functools.wraps(original)(traced) if shape == "wrapped" else traced)
    configure_hermes(stub)
    plan = Bridge({"ctx_plugins": {"memory": {"providers": []}, "deployments": {"d": {"compressor": "window"}}}}
                  ).deployment("d")
    runtime = installed()
    assert runtime is not None
    seen: list[bool] = []
    if shape == "subclass_then_release":
        class Releasing(run_agent.AIAgent):  # type: ignore[misc]
            def run_conversation(self, *args: Any, **kwargs: Any) -> Any:
                answer = super().run_conversation(*args, **kwargs)
                plan.release(self)  # hermes' turn has returned
                seen.append(runtime.sessions.binding("S") is None)
                return answer
        agent_class = Releasing
    agent = plan.apply(agent_class(base_url=stub.base_url, api_key="k", provider="custom", model="stub-model",
                                   quiet_mode=True, skip_context_files=True, enabled_toolsets=[], session_id="S",
                                   user_id="alice", **plan.agent_kwargs()))
    if shape != "subclass_then_release":
        def released_mid_turn(*args: Any) -> None:
            plan.release(agent)
            seen.append(runtime.sessions.binding("S") is not None)
        agent.step_callback = released_mid_turn
    agent.run_conversation("hello", conversation_history=[])
    assert seen and all(seen) and "S" not in runtime.sessions._entries


def test_a_bridge_running_the_configs_providers_is_not_told_they_do_nothing(
        stub: StubOpenAIServer, caplog: pytest.LogCaptureFixture) -> None:
    """hermes' start said ctx_plugins.memory.providers' ctx-local 'stores and recalls nothing here' in a Bridge's
    process, where the Bridge runs that list (a review): said only to an agent no Bridge bound."""
    import logging

    configure_hermes(stub, "ctx_plugins: {memory: {providers: [ctx-local]}}\n")
    bridge = Bridge(hermes_home() / "config.yaml")
    plan = bridge.deployment("")
    stub.responder = lambda body: "noted"
    caplog.set_level(logging.WARNING, logger="hermes_ctx_plugins")
    plan.apply(new_agent(stub, session_id="s-listed", user_id="alice")).run_conversation(
        "my codeword is LISTEDCODE4", conversation_history=[])
    [local] = plan.host.memory_providers
    assert local.flush(10)
    plan.apply(new_agent(stub, session_id="s-listed-2", user_id="alice")).run_conversation(
        "what is my codeword? codeword", conversation_history=[])
    assert "LISTEDCODE4" in json.dumps(stub.chat_requests[-1].body)  # the list runs
    assert not any("stores and recalls nothing" in r.getMessage() for r in caplog.records)
    bridge.shutdown()

"""A session several users speak in: each archived message is its speaker's turn.

hermes' gateway gives a chat platform's shared thread one session; each turn's agent names that turn's
sender (``user_id``), and its messages reach the model as ``[name] text``. A compaction there was archived
whole as the last speaker's (a red-team pass through hermes' real ``GatewayRunner``): the others could not
``ctx_search`` their own words, the compactor read them from his private chat with ``archive.scope: user``,
and ``hermes-ctx forget --user`` of another participant left their words archived. Here the agents are
built as the gateway builds them (the same session id, each turn's sender as ``user_id``, the shared
history), with real hermes and our engine compacting.
"""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hermes_helpers import configure_hermes, new_agent

from hermes_ctx_plugins.testing import StubOpenAIServer

pytest.importorskip("run_agent", reason="the hermes extra is not installed")

from hermes_ctx_plugins.cli import main

PADDING = "\n".join(f"log line {n}: nothing to see" for n in range(40))


def archived() -> list[tuple[str, str]]:
    with sqlite3.connect(Path(os.environ["HERMES_HOME"]) / "ctx_archive.db") as db:
        return db.execute("SELECT user_id, text FROM messages ORDER BY id").fetchall()


def search(agent: Any, word: str) -> list[str]:
    answer = json.loads(agent.context_compressor.handle_tool_call("ctx_search", {"query": word}))
    return [hit["snippet"] for hit in answer["results"]]


def alice_and_bob(stub: StubOpenAIServer, rounds: int, agent_for: Callable[[str], Any],
                  said: Callable[[str, int], str]) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """``rounds`` turns of alice then bob in one session, each through a fresh agent (as the gateway builds one per
    turn's sender): the history after, and each one's last agent. The summary model answers a summary."""
    stub.responder = lambda body: "noted" if body.get("stream") else "## Goal\nsummary"
    history: list[dict[str, Any]] = []
    agents = {}
    for n in range(rounds):
        for user in ("alice", "bob"):
            agent = agent_for(user)
            agent.run_conversation(said(user, n), conversation_history=history)
            history = [m for m in agent._session_messages if m.get("role") != "system"]
            agents[user] = agent
    return history, agents


def test_a_shared_threads_compaction_is_archived_turn_by_turn_as_each_speakers(stub: StubOpenAIServer) -> None:
    path = configure_hermes(stub, "ctx_plugins: {memory: {providers: []}, compressor: summarize, "
                                  "archive: {scope: user}}\n")
    history, agents = alice_and_bob(
        stub, 6, lambda user: new_agent(stub, toolsets=["context_engine"], session_id="thread-1", user_id=user),
        lambda user, n: f"[{user}] turn {n}: {user}'s code is TOK{user.upper()}{n}\n{PADDING}")
    bob = agents["bob"]  # the last speaker compacts (hermes' /compress, or its threshold)
    compacted = bob.context_compressor.compress(history, force=True)
    assert len(compacted) < len(history)
    rows = archived()
    mine = {user: [text for owner, text in rows if f"TOK{user.upper()}" in text] for user in ("alice", "bob")}
    assert mine["alice"] and mine["bob"]  # both users' turns were compacted away (the positive control)
    assert {owner for owner, text in rows if "TOKALICE" in text} == {"alice"}
    assert {owner for owner, text in rows if "TOKBOB" in text} == {"bob"}
    assert {owner for owner, text in rows if text == "noted"} == {"alice", "bob"}  # the answers: their turn's
    assert search(agents["alice"], "TOKALICE")  # her own words, from the thread
    bob_dm = new_agent(stub, toolsets=["context_engine"], session_id="bob-dm", user_id="bob")
    assert search(bob_dm, "TOKBOB") and not search(bob_dm, "TOKALICE")  # his every session: never hers
    assert main(["--config", str(path / "config.yaml"), "forget", "--user", "alice", "--yes", "--json"]) == 0
    assert not any("TOKALICE" in text for _, text in archived())


def test_a_turn_two_users_sent_alike_or_one_nobody_heard_is_nobodys(stub: StubOpenAIServer) -> None:
    """A review of the above: senders were told by their text alone and the last one heard won, so bob saying what
    alice said ("ok"; the same display name) got her whole turn, her tool results too; and a turn this process never
    heard went to the user compacting. Both are now the anonymous user's: nobody named reads them."""
    configure_hermes(stub, "ctx_plugins: {memory: {providers: []}, compressor: summarize, archive: {scope: user}}\n")
    stub.responder = lambda body: "noted" if body.get("stream") else "## Goal\nsummary"
    # a turn from before this process (a restart): in the history, never heard here
    history: list[dict[str, Any]] = [*[m for n in range(2) for m in ({"role": "user", "content": f"[alice] hi {n}"},
                                                                      {"role": "assistant", "content": "hi"})],
                                     {"role": "user", "content": f"[alice] earlier: TOKEARLY\n{PADDING}"},
                                     {"role": "assistant", "content": "noted"}]  # (the first messages are kept)
    agents = {}
    turns = [("alice", "same words TOKSAME"), ("bob", f"bob alone TOKBOB\n{PADDING}"), ("bob", "same words TOKSAME"),
             *[(user, f"[{user}] more {n}\n{PADDING}") for n in range(4) for user in ("alice", "bob")]]
    for user, text in turns:
        agent = new_agent(stub, toolsets=["context_engine"], session_id="thread-2", user_id=user)
        agent.run_conversation(text, conversation_history=history)
        history = [m for m in agent._session_messages if m.get("role") != "system"]
        agents[user] = agent
    compacted = agents["bob"].context_compressor.compress(history, force=True)
    assert len(compacted) < len(history)
    rows = archived()
    owners = {word: {owner for owner, text in rows if word in text} for word in ("TOKEARLY", "TOKSAME", "TOKBOB")}
    assert owners == {"TOKEARLY": {""}, "TOKSAME": {""}, "TOKBOB": {"bob"}}  # TOKBOB: the positive control
    bob_dm = new_agent(stub, toolsets=["context_engine"], session_id="bob-dm-2", user_id="bob")
    assert search(bob_dm, "TOKBOB") and not search(bob_dm, "TOKSAME") and not search(bob_dm, "TOKEARLY")


def test_a_one_user_session_keeps_a_few_of_its_messages_and_a_shared_one_many() -> None:
    """The table of who said what is kept for every session hermes runs (a DM is most of them): a review measured
    450 MB for a full table of long DMs when each kept 512 texts."""
    from hermes_ctx_plugins.hermes.speakers import MAX_HEARD, MAX_HEARD_ALONE, Speakers

    alone, shared = Speakers(), Speakers()
    shared.heard("bob", ["hi"])
    for n in range(MAX_HEARD + 100):
        alone.heard("alice", [f"message {n}"])
        shared.heard("alice", [f"message {n}"])
    assert len(alone._by_text) == MAX_HEARD_ALONE and not alone.shared
    assert len(shared._by_text) == MAX_HEARD and shared.shared
    assert shared.of({"role": "user", "content": f"message {MAX_HEARD + 99}"}) == "alice"
    assert shared.of({"role": "user", "content": "message 0"}) is None  # forgotten: nobody's, not a guess


def test_a_thread_only_one_participant_spoke_in_since_a_restart_is_still_shared(stub: StubOpenAIServer) -> None:
    """A review: after a restart (or once the session table dropped the thread), the one participant heard since
    was given every earlier turn, the others' too -- readable from his DM with scope user. hermes' sender prefixes
    in the history (two names) say the thread is shared: the turns this process did not hear are nobody's."""
    configure_hermes(stub, "ctx_plugins: {memory: {providers: []}, compressor: summarize, archive: {scope: user}}\n")
    stub.responder = lambda body: "noted" if body.get("stream") else "## Goal\nsummary"
    earlier: list[dict[str, Any]] = []  # what hermes' session database holds from before the restart
    for n in range(3):
        for user in ("alice", "bob"):
            earlier += [{"role": "user", "content": f"[{user}] before: {user}'s code TOK{user.upper()}{n}\n{PADDING}"},
                        {"role": "assistant", "content": "noted"}]
    history = earlier
    for n in range(4):  # only bob speaks in this process
        bob = new_agent(stub, toolsets=["context_engine"], session_id="thread-3", user_id="bob")
        bob.run_conversation(f"[bob] after: TOKAFTER{n}\n{PADDING}", conversation_history=history)
        history = [m for m in bob._session_messages if m.get("role") != "system"]
    assert len(bob.context_compressor.compress(history, force=True)) < len(history)
    rows = archived()
    assert {owner for owner, text in rows if "TOKALICE" in text} == {""}  # nobody's: not bob's
    assert {owner for owner, text in rows if "TOKAFTER" in text} == {"bob"}  # what he said here: his (the control)
    bob_dm = new_agent(stub, toolsets=["context_engine"], session_id="bob-dm-3", user_id="bob")
    assert search(bob_dm, "TOKAFTER") and not search(bob_dm, "TOKALICE")


def gateway_agent(stub: StubOpenAIServer, session_id: str, user: str, *, chat_type: str, chat_id: str,
                  thread_id: str | None = None, per_user: bool = True) -> Any:
    """An agent as hermes' gateway builds one: its chat, and the session key hermes' ``build_session_key`` makes."""
    from gateway.config import Platform
    from gateway.session import SessionSource, build_session_key

    source = SessionSource(platform=Platform.TELEGRAM, chat_id=chat_id, chat_type=chat_type, user_id=user,
                           user_name=user, thread_id=thread_id)
    key = build_session_key(source, group_sessions_per_user=per_user)
    return new_agent(stub, toolsets=["context_engine"], session_id=session_id, user_id=user, platform="telegram",
                     chat_id=chat_id, chat_type=chat_type, thread_id=thread_id, gateway_session_key=key)


@pytest.mark.parametrize("first_words", ["[WARN] disk at 91%", "[x] done: the deploy", "[Replying to: \"hi\"] ok",
                                         "[bob] hi (a chat line pasted)"])
def test_a_dm_is_its_users_whatever_its_messages_start_with_and_hermes_review_says(stub: StubOpenAIServer,
                                                                                     first_words: str) -> None:
    """A review: read from the text alone, a DM whose user pasted lines starting with two bracketed words was taken
    for shared, and hermes' background review (which runs with no sender) made every DM shared: after a restart the
    DM's earlier turns were nobody's, and their user could not search them. hermes' own agent says it is a DM."""
    configure_hermes(stub, "ctx_plugins: {memory: {providers: []}, compressor: summarize, archive: {scope: user}}\n")
    stub.responder = lambda body: "noted" if body.get("stream") else "## Goal\nsummary"
    earlier: list[dict[str, Any]] = []  # before a restart: never heard by this process
    for n in range(3):
        earlier += [{"role": "user", "content": f"[{'ERROR' if n else first_words.strip('[').split(']')[0]}] "
                                                f"TOKDM{n}\n{PADDING}"}, {"role": "assistant", "content": "noted"}]
    history = earlier
    for n in range(3):
        agent = gateway_agent(stub, "dm-1", "carol", chat_type="dm", chat_id="carol-chat")
        agent.run_conversation(f"{first_words} TOKNOW{n}\n{PADDING}", conversation_history=history)
        history = [m for m in agent._session_messages if m.get("role") != "system"]
    # hermes' background review: the DM's session, no sender
    new_agent(stub, toolsets=["context_engine"], session_id="dm-1").run_conversation(
        "review the conversation", conversation_history=history)
    assert len(agent.context_compressor.compress(history, force=True)) < len(history)
    rows = archived()
    assert {owner for owner, text in rows if "TOKDM" in text or "TOKNOW" in text} == {"carol"}
    unheard = sorted({word for _, text in rows for word in text.split() if word.startswith("TOKDM")})
    assert unheard  # turns from before the restart were compacted away (the positive control)
    assert search(gateway_agent(stub, "dm-2", "carol", chat_type="dm", chat_id="carol-chat"), unheard[0])


@pytest.mark.parametrize(("alice", "bob", "thread"), [("[AFK] Alice", "[AFK] Bob", "t1"), ("alice]", "bob", "t1"),
                                                       ("alice", "bob", None)],
                         ids=["clan-tags", "a-bracket-in-a-name", "a-group-kept-whole"])
def test_a_shared_thread_after_a_restart_is_shared_whatever_its_names(stub: StubOpenAIServer, alice: str, bob: str,
                                                                      thread: str | None) -> None:
    """A review: display names with a ``]`` or a clan tag (``[AFK] Alice``), or messages starting with a reply quote,
    hid a shared thread from the prefix rule; after a restart the one participant heard since got the others' earlier
    turns (readable from his DM) and they outlived their author's forget. hermes' own agent says it is shared."""
    configure_hermes(stub, "ctx_plugins: {memory: {providers: []}, compressor: summarize, archive: {scope: user}}\n")
    stub.responder = lambda body: "noted" if body.get("stream") else "## Goal\nsummary"
    history: list[dict[str, Any]] = []
    for n in range(3):  # before a restart, as hermes' session database holds it
        history += [{"role": "user", "content": f"[{alice}] TOKALICE{n}\n{PADDING}"},
                    {"role": "assistant", "content": "noted"}]
    for n in range(3):  # only bob speaks in this process
        agent = gateway_agent(stub, "thread-9", "bob", chat_type="group", chat_id="g1", thread_id=thread,
                              per_user=thread is not None)
        agent.run_conversation(f"[{bob}] TOKBOB{n}\n{PADDING}", conversation_history=history)
        history = [m for m in agent._session_messages if m.get("role") != "system"]
    # hermes' /compress compacts with an agent it builds from the session key alone (no chat, no sender)
    compress = new_agent(stub, toolsets=["context_engine"], session_id="thread-9", platform="telegram",
                         gateway_session_key=agent._gateway_session_key)
    assert len(compress.context_compressor.compress(history, force=True)) < len(history)
    rows = archived()
    assert {owner for owner, text in rows if "TOKALICE" in text} == {""}  # nobody's: never bob's
    assert {owner for owner, text in rows if "TOKBOB" in text} == {"bob"}  # his, heard here (the positive control)
    bob_dm = gateway_agent(stub, "bob-dm", "bob", chat_type="dm", chat_id="bob-chat")
    assert search(bob_dm, "TOKBOB") and not search(bob_dm, "TOKALICE")


def hermes_sessions(session_id: str, agent: Any) -> Any:
    """hermes' own session database with the row the gateway keeps of ``agent``'s session (its chat, its key)."""
    from hermes_state import SessionDB

    db = SessionDB(Path(os.environ["HERMES_HOME"]) / "state.db")
    if db.get_session(session_id) is None:
        db.create_session(session_id, "telegram")
    db.record_gateway_session_peer(session_id, source="telegram", user_id=agent._user_id,
                                   session_key=agent._gateway_session_key, chat_id=agent._chat_id,
                                   chat_type=agent._chat_type, thread_id=agent._thread_id)
    return db


def test_hermes_hygiene_agent_reads_whether_a_thread_is_shared_from_hermes_own_record(stub: StubOpenAIServer) -> None:
    """A review: hermes' session hygiene (a transcript past 85 % of the window, before a turn) compacts with an agent
    built with the session id alone -- no chat, no key -- so the text was read again: after a restart, clan-tag names
    hid the thread and bob got alice's turns. hermes' own row of the session says where it was started."""
    configure_hermes(stub, "ctx_plugins: {memory: {providers: []}, compressor: summarize, archive: {scope: user}}\n")
    stub.responder = lambda body: "noted" if body.get("stream") else "## Goal\nsummary"
    history: list[dict[str, Any]] = []
    for n in range(3):  # before a restart
        history += [{"role": "user", "content": f"[[AFK] Alice] TOKALICE{n}\n{PADDING}"},
                    {"role": "assistant", "content": "noted"}]
    db = None
    for n in range(3):  # only bob speaks in this process
        bob = gateway_agent(stub, "thread-h", "bob", chat_type="group", chat_id="g1", thread_id="t1")
        db = db or hermes_sessions("thread-h", bob)
        bob.run_conversation(f"[[AFK] Bob] TOKBOB{n}\n{PADDING}", conversation_history=history)
        history = [m for m in bob._session_messages if m.get("role") != "system"]
    hygiene = new_agent(stub, toolsets=["context_engine"], session_id="thread-h", session_db=db)
    assert len(hygiene.context_compressor.compress(history, force=True)) < len(history)
    rows = archived()
    assert {owner for owner, text in rows if "TOKALICE" in text} == {""}  # nobody's: never bob's
    assert {owner for owner, text in rows if "TOKBOB" in text} == {"bob"}  # heard here: his (the positive control)
    bob_dm = gateway_agent(stub, "bob-dm-h", "bob", chat_type="dm", chat_id="bob-chat")
    assert not search(bob_dm, "TOKALICE")


def test_a_chat_hermes_calls_a_dm_that_several_users_share_keeps_each_ones_turns(stub: StubOpenAIServer) -> None:
    """A review: hermes' Slack adapter gives a group DM the chat type "dm", and its members share one session; read
    as a DM, every member's turns were the compacting member's, and outlived their author's forget."""
    path = configure_hermes(stub, "ctx_plugins: {memory: {providers: []}, compressor: summarize, "
                                  "archive: {scope: user}}\n")
    history, agents = alice_and_bob(stub, 4, lambda user: gateway_agent(stub, "mpim-1", user, chat_type="dm",
                                                                        chat_id="G-mpim"),
                                    lambda user, n: f"{user}: TOK{user.upper()}{n}\n{PADDING}")
    assert len(agents["bob"].context_compressor.compress(history, force=True)) < len(history)
    rows = archived()
    assert {owner for owner, text in rows if "TOKALICE" in text} == {"alice"}
    assert {owner for owner, text in rows if "TOKBOB" in text} == {"bob"}
    assert main(["--config", str(path / "config.yaml"), "forget", "--user", "alice", "--yes", "--json"]) == 0
    assert not any("TOKALICE" in text for _, text in archived())


def test_a_shared_session_hermes_hands_a_per_user_key_after_a_config_change_stays_shared(
        stub: StubOpenAIServer) -> None:
    """A review: switched to ``group_sessions_per_user: true``, hermes hands bob's new per-user key the group's older
    shared session, and rewrites its row under that key at every turn; read from the agent's key (or the row), it was
    bob's alone and alice's turns became his. The history's sender prefixes, written while it was shared and never
    heard by this process, say it was."""
    configure_hermes(stub, "ctx_plugins: {memory: {providers: []}, compressor: summarize, archive: {scope: user}}\n")
    stub.responder = lambda body: "noted" if body.get("stream") else "## Goal\nsummary"
    started = gateway_agent(stub, "group-s", "alice", chat_type="group", chat_id="g7", per_user=False)
    db = hermes_sessions("group-s", started)
    history: list[dict[str, Any]] = []
    for n in range(3):  # before the restart, shared: alice spoke
        history += [{"role": "user", "content": f"[alice] TOKALICE{n}\n{PADDING}"},
                    {"role": "assistant", "content": "noted"}]
    for n in range(3):  # after: bob's per-user key, the same session
        bob = gateway_agent(stub, "group-s", "bob", chat_type="group", chat_id="g7", per_user=True)
        bob._session_db = hermes_sessions("group-s", bob)  # hermes rewrites the row under bob's key
        bob.run_conversation(f"TOKBOB{n}\n{PADDING}", conversation_history=history)
        history = [m for m in bob._session_messages if m.get("role") != "system"]
    assert db.get_session("group-s")["session_key"].endswith(":bob")
    assert len(bob.context_compressor.compress(history, force=True)) < len(history)
    rows = archived()
    assert {owner for owner, text in rows if "TOKALICE" in text} == {""}
    assert {owner for owner, text in rows if "TOKBOB" in text} == {"bob"}


def test_a_summary_in_the_user_role_is_no_sender_of_a_per_user_session() -> None:
    """A review: in a group's session kept per user, after a restart, a compaction's summary in the user role opens
    with a bracket like hermes' sender prefix, and its words were taken for another sender's: every turn became
    nobody's and the user could not search them. A summary is nobody's words, and no sign of sharing."""
    from hermes_ctx_plugins.compression.messages import SUMMARY_KEY
    from hermes_ctx_plugins.compression.summarize import _framed
    from hermes_ctx_plugins.hermes.runtime import SessionTable
    from hermes_ctx_plugins.hermes.speakers import OWN

    for summary in ({"role": "user", "content": _framed("what was done")},  # its shape (after a resume)
                    {"role": "user", "content": _framed("what was done"), SUMMARY_KEY: True}):
        table = SessionTable()
        table.observe("s1", user_id="alice")
        history = [summary, {"role": "assistant", "content": "ok"}, {"role": "user", "content": "my code is 4411"}]
        assert table.speakers("s1", history, origin=OWN) is None  # every message the owner's
        typed = [{"role": "user", "content": "[alice] hi"}, *history]  # the positive control: a sender prefix
        assert table.speakers("s1", typed, origin=OWN) is not None

"""An archived message is its owner's, compared exactly: the anonymous user's ("") is nobody else's.

Before, a scope read a session's rows with an empty user id as well as its user's own (meant for rows
archived before hermes named the session's user). In a Bridge, an ``anonymous=True`` agent's archive in
session ``room-1`` was then read by a named user given the same session id later. Now an owner's scope
reads only the owner's rows; and hermes' own agent names its user to the archive before hermes' first
hook does (a preflight compaction runs before ``pre_llm_call``), so what it archives then is its user's.
"""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from hermes_helpers import configure_hermes, new_agent

from hermes_ctx_plugins.testing import StubOpenAIServer, make_transcript

pytest.importorskip("run_agent", reason="the hermes extra is not installed")

from hermes_ctx_plugins.bridge import Bridge

ANON = "ANON-ROOM-SECRET-4471c9"
BOB = "BOB-OWN-NOTE-82e1d0"
CAROL = "CAROL-GATEWAY-5521aa"


def long_history(word: str) -> list[dict[str, Any]]:
    history = make_transcript(40, turns=90, output_lines=80, system=False, images=False)
    i = next(i for i, m in enumerate(history[10:], 10) if m["role"] == "assistant" and m.get("content"))
    history[i] = {**history[i], "content": f"{history[i]['content']} {word}"}
    return history


def owners(word: str) -> list[tuple[str, str, str]]:
    with sqlite3.connect(Path(os.environ["HERMES_HOME"]) / "ctx_archive.db") as db:
        return db.execute("SELECT DISTINCT namespace, session_id, user_id FROM messages WHERE text LIKE ?",
                          (f"%{word}%",)).fetchall()


def search(agent: Any, word: str) -> str:
    """What ``ctx_search`` finds for ``agent`` (its results only: the answer repeats the query)."""
    answer = json.loads(agent.context_compressor.handle_tool_call("ctx_search", {"query": word}))
    return json.dumps(answer["results"])


def test_an_anonymous_agents_archive_is_not_read_by_a_named_user_given_the_same_session_id(
        stub: StubOpenAIServer) -> None:
    configure_hermes(stub)
    bridge = Bridge({"ctx_plugins": {"memory": {"providers": []}, "deployments": {"d": {"compressor": "summarize"}}}})
    plan = bridge.deployment("d")
    stub.responder = lambda body: "continuing" if body.get("stream") else "## Goal\nsummary"
    anon = plan.apply(new_agent(stub, toolsets=["context_engine"], session_id="room-1", **plan.agent_kwargs()),
                      anonymous=True)
    anon.run_conversation("please continue", conversation_history=long_history(ANON))  # hermes' preflight compacts
    assert owners(ANON) == [("d", "room-1", "")]
    assert ANON in search(anon, ANON)  # the owner (the anonymous user) finds it
    plan.release(anon)

    bob = plan.apply(new_agent(stub, toolsets=["context_engine"], session_id="room-1", user_id="bob",
                               **plan.agent_kwargs()))
    bob.run_conversation("please continue", conversation_history=long_history(BOB))
    assert owners(BOB) == [("d", "room-1", "bob")]
    assert BOB in search(bob, BOB)  # bob finds his own in room-1 ...
    assert ANON not in search(bob, ANON)  # ... and not the anonymous agent's
    with sqlite3.connect(Path(os.environ["HERMES_HOME"]) / "ctx_archive.db") as db:
        ids = [row[0] for row in db.execute("SELECT id FROM messages")]
    expanded = " ".join(str(bob.context_compressor.handle_tool_call("ctx_expand", {"id": i, "max_tokens": 100_000}))
                        for i in ids)  # every archived message, asked for by its id
    assert BOB in expanded and ANON not in expanded
    plan.release(bob)
    bridge.shutdown()


def test_a_hermes_agents_first_compaction_in_a_new_process_is_archived_as_its_user(stub: StubOpenAIServer) -> None:
    """A gateway's agent (hermes builds it with ``user_id``, no Bridge) resumed in a process no hook of its
    session has reached: hermes compacts before ``pre_llm_call`` names the user. Archived as nobody's, the
    owner's exact scope would never find it."""
    configure_hermes(stub, "ctx_plugins: {memory: {providers: []}, compressor: summarize}\n")
    stub.responder = lambda body: "continuing" if body.get("stream") else "## Goal\nsummary"
    # another user's turn first: the process has met a named user, so an untold owner is unknown, not anonymous
    new_agent(stub, session_id="dave-1", user_id="dave").run_conversation("hi", conversation_history=[])
    carol = new_agent(stub, toolsets=["context_engine"], session_id="carol-7", user_id="carol")
    carol.run_conversation("please continue", conversation_history=long_history(CAROL))
    assert owners(CAROL) == [("", "carol-7", "carol")]
    assert CAROL in search(carol, CAROL)
    dave = new_agent(stub, toolsets=["context_engine"], session_id="carol-7", user_id="dave")
    assert CAROL not in search(dave, CAROL)  # the same session id, another user

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


def test_a_shared_threads_compaction_is_archived_turn_by_turn_as_each_speakers(stub: StubOpenAIServer) -> None:
    path = configure_hermes(stub, "ctx_plugins: {memory: {providers: []}, compressor: summarize, "
                                  "archive: {scope: user}}\n")
    stub.responder = lambda body: "noted" if body.get("stream") else "## Goal\nsummary"
    history: list[dict[str, Any]] = []
    agents = {}
    for n in range(6):
        for user in ("alice", "bob"):
            agent = new_agent(stub, toolsets=["context_engine"], session_id="thread-1", user_id=user)
            agent.run_conversation(f"[{user}] turn {n}: {user}'s code is TOK{user.upper()}{n}\n{PADDING}",
                                   conversation_history=history)
            history = [m for m in agent._session_messages if m.get("role") != "system"]
            agents[user] = agent
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

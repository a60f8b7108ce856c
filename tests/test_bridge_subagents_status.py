"""A Bridge agent's subagents and status lines (red-team, session 21).

* hermes builds a ``delegate_task`` subagent itself: a new session id, no user id, ``skip_memory=True``, and
  the context engine hermes' plugin registry holds (the top-level settings'). Its engine must still compact
  with the parent's deployment's strategy and archive as the parent's owner: before, the subagent's messages
  were archived as the anonymous user of the top-level settings, where ``forget --user`` never looked.
* A deployment's status events (a provider suspended, a compaction that failed) reach the Bridge agent's
  ``status_callback`` (hermes' status line), as the top-level host's reach a hermes agent's: before, a
  Bridge built its deployments' hosts without a status callback, and every such event reached nobody.
"""

from __future__ import annotations

import json
import os
import sqlite3
import time
from pathlib import Path
from typing import Any

import pytest
from hermes_helpers import configure_hermes, new_agent

from hermes_ctx_plugins import hookimpl
from hermes_ctx_plugins.events import SessionInfo
from hermes_ctx_plugins.testing import FakeMemoryProvider, StubOpenAIServer

pytest.importorskip("run_agent", reason="the hermes extra is not installed")
from tools import async_delegation

from hermes_ctx_plugins.bridge import Bridge
from hermes_ctx_plugins.testing.openai_stub import _Reply

ALICE = "ALICE-PRIVATE-7731"
CHILD_TODO_CALLS = 40  # each ~10 kB: enough for the child to compact in a 64k window


def scripted(stub: StubOpenAIServer) -> None:
    """The parent delegates; the child writes todo items until it has compacted; summaries are summaries."""
    original = stub._chat

    def chat(request: Any, step: Any) -> Any:
        body = request.body
        messages = body.get("messages") or []
        last = messages[-1] if messages else {}
        todos = sum(1 for m in messages if m.get("role") == "assistant" and "todo" in json.dumps(m.get("tool_calls")))
        if step is None and not body.get("stream") and "tools" not in body:
            step = _Reply("## Goal\nsummary")
        elif step is None and last.get("role") == "user" and "please delegate" in json.dumps(last):
            step = _Reply("", tool_calls=(("c1", "delegate_task", json.dumps({"goal": f"plan the move for {ALICE}"})),))
        elif step is None and "plan the move" in json.dumps(messages[:3]) and todos < CHILD_TODO_CALLS:
            item = {"id": str(todos), "content": f"{ALICE} step {todos} " + "detail " * 1500, "status": "pending"}
            step = _Reply("", tool_calls=((f"t{todos}", "todo", json.dumps({"todos": [item]})),))
        return original(request, step)

    stub._chat = chat  # type: ignore[method-assign]


def archived_owners(word: str) -> list[tuple[str, str]]:
    with sqlite3.connect(Path(os.environ["HERMES_HOME"]) / "ctx_archive.db") as db:
        found = db.execute("SELECT DISTINCT namespace, user_id FROM messages WHERE text LIKE ?", (f"%{word}%",))
        return found.fetchall()


def test_a_bridge_users_subagent_compacts_and_archives_as_its_parents_owner(stub: StubOpenAIServer) -> None:
    configure_hermes(stub, "ctx_plugins: {memory: {providers: []}, deployments: {alpha: {compressor: summarize}}}\n",
                     window=64_000)
    stub.responder = lambda body: "ok"
    scripted(stub)
    bridge = Bridge(None)
    plan = bridge.deployment("alpha")
    alice = plan.apply(new_agent(stub, toolsets=["delegation", "context_engine", "todo"], session_id="alice-1",
                                 user_id="alice", **plan.agent_kwargs()))
    alice.run_conversation("please delegate", conversation_history=[])
    deadline = time.monotonic() + 120
    while async_delegation.active_count() and time.monotonic() < deadline:  # the child runs in the background
        time.sleep(0.1)
    assert async_delegation.active_count() == 0
    assert archived_owners("7731") == [("alpha", "alice")]  # the child's compactions: alice's, in her deployment
    plan.release(alice)
    plan.host.forget_user("alice")
    assert archived_owners("7731") == []  # forgetting alice forgets what her subagent archived
    bridge.shutdown()


class Broken(FakeMemoryProvider):
    name = "broken"

    def prefetch(self, query: str, *, session: SessionInfo) -> str:
        raise ValueError("down")

    def sync_turn(self, turn: Any) -> None:
        raise ValueError("down")


class Plugin:
    @hookimpl
    def register_memory_providers(self, register: Any) -> None:
        register(Broken)


def test_a_deployment_providers_suspension_reaches_the_bridge_agents_status_line(stub: StubOpenAIServer) -> None:
    configure_hermes(stub)
    stub.responder = lambda body: "ok"
    bridge = Bridge({"ctx_plugins": {"memory": {"providers": []}, "failure_threshold": 2,
                                     "deployments": {"d": {"memory": {"providers": ["broken"]}}}}},
                    plugins=[Plugin()])
    plan = bridge.deployment("d")
    seen: list[tuple[str, str]] = []
    agent = plan.apply(new_agent(stub, session_id="s-1", user_id="alice",
                                 status_callback=lambda kind, message: seen.append((kind, message)),
                                 **plan.agent_kwargs()))
    agent.run_conversation("hello", conversation_history=[])
    plan.release(agent)
    bridge.shutdown()
    assert plan.host.isolator.status("memory:broken").startswith("suspended")
    assert [kind for kind, message in seen if "memory:broken suspended" in message] == ["warn"], seen


def test_a_hermes_users_subagent_archives_as_its_parents_user(stub: StubOpenAIServer) -> None:
    """The same without a Bridge: a gateway's agent (its user named by hermes' hooks) delegates."""
    configure_hermes(stub, "ctx_plugins: {memory: {providers: []}}\n", window=64_000)
    stub.responder = lambda body: "ok"
    scripted(stub)
    bob = new_agent(stub, toolsets=["delegation", "context_engine", "todo"], session_id="bob-1", user_id="bob")
    bob.run_conversation("please delegate", conversation_history=[])
    deadline = time.monotonic() + 120
    while async_delegation.active_count() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert async_delegation.active_count() == 0
    assert ("", "") not in archived_owners("7731")
    assert ("", "bob") in archived_owners("7731")

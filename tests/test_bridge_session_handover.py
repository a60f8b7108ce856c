"""A session id handed to another user while the first user's turn is still running (a red-team pass): the
Bridge's release() dropped the binding at once, so the turn's last hook found the new owner's, and the first user's
words were stored as the second user's memory."""

from __future__ import annotations

import json
import sqlite3
import threading

import pytest
from hermes_helpers import configure_hermes, hermes_home, new_agent

from hermes_ctx_plugins.testing import StubOpenAIServer, wait_until

pytest.importorskip("run_agent", reason="the hermes extra is not installed")
from hermes_ctx_plugins.bridge import Bridge, SessionInUseError

CONFIG = {"ctx_plugins": {"memory": {"providers": []}, "deployments": {
    "alpha": {"compressor": "summarize", "memory": {"providers": ["ctx-local"]}}}}}


def test_released_agent_finishing_its_turn_after_another_user_took_the_id(stub: StubOpenAIServer) -> None:
    configure_hermes(stub)
    bridge = Bridge(CONFIG)
    plan = bridge.deployment("alpha")
    alice = plan.apply(new_agent(stub, session_id="chat-1", user_id="alice", **plan.agent_kwargs()))
    stub.delay(2.0)
    stub.reply("ok alice")
    t = threading.Thread(target=alice.run_conversation, args=("my secret is ALICE-SECRET-77",),
                         kwargs={"conversation_history": []})
    t.start()
    assert wait_until(lambda: len(stub.chat_requests) >= 1, 20)  # alice's request is at the model (held 2 s)
    plan.release(alice)  # the service evicts alice's agent from its cache (its turn still running)
    stub.reply("ok bob")
    with pytest.raises(SessionInUseError):  # alice's turn still runs under that id: her hooks must reach her
        plan.apply(new_agent(stub, session_id="chat-1", user_id="bob", **plan.agent_kwargs()))
    t.join(30)
    bob = plan.apply(new_agent(stub, session_id="chat-1", user_id="bob", **plan.agent_kwargs()))
    bob.run_conversation("hello", conversation_history=[])
    for p in plan.host.memory_providers:
        assert p.flush(10)
    with sqlite3.connect(hermes_home() / "ctx-local" / "memory.db") as c:
        rows = [r for r in c.execute("select * from memories")]
    bridge.shutdown()
    stored_as_bob = [r for r in rows if "ALICE-SECRET-77" in json.dumps(r, default=str) and "'bob'" in str(r)]
    assert not stored_as_bob, "alice's turn was stored as bob's memory"
    assert any("ALICE-SECRET-77" in str(r) and "'alice'" in str(r) for r in rows)


def test_a_live_agent_keeps_its_id_from_another_user(stub: StubOpenAIServer) -> None:
    configure_hermes(stub)
    bridge = Bridge(CONFIG)
    plan = bridge.deployment("alpha")
    alice = plan.apply(new_agent(stub, session_id="chat-1", user_id="alice", **plan.agent_kwargs()))
    with pytest.raises(SessionInUseError):
        plan.apply(new_agent(stub, session_id="chat-1", user_id="Alice", **plan.agent_kwargs()))
    with pytest.raises(SessionInUseError):
        plan.apply(new_agent(stub, session_id="chat-1", user_id="", **plan.agent_kwargs()), anonymous=True)
    plan.release(alice)
    bridge.shutdown()


def test_anonymous_agents_of_the_api_servers_channels_keep_their_memory_apart(stub: StubOpenAIServer) -> None:
    """A Bridge of hermes API-server agents (anonymous, each naming its client's channel by a gateway session key
    only) kept every client in one chat: one channel's turns were recalled into another's prompt (a red-team pass)."""
    configure_hermes(stub)
    bridge = Bridge(CONFIG)
    plan = bridge.deployment("alpha")

    def client(key: str, session: str) -> object:
        return plan.apply(new_agent(stub, session_id=session, platform="api_server", gateway_session_key=key,
                                    **plan.agent_kwargs()), anonymous=True)

    stub.reply("Noted.")
    alice = client("agent:main:webui:dm:alice", "s-alice")
    alice.run_conversation("remember: my locker code is 4711-alice", conversation_history=[])  # type: ignore[attr-defined]
    plan.release(alice)
    for p in plan.host.memory_providers:
        assert p.flush(10)
    for key, session, recalled in [("agent:main:webui:dm:bob", "s-bob", False),
                                   ("agent:main:webui:dm:alice", "s-alice-2", True)]:
        stub.reply("I see.")
        other = client(key, session)
        other.run_conversation("what is my locker code?", conversation_history=[])  # type: ignore[attr-defined]
        plan.release(other)
        sent = stub.chat_requests[-1].body["messages"][-1]["content"]  # type: ignore[index]
        assert ("4711-alice" in sent) is recalled, (key, sent)
    bridge.shutdown()

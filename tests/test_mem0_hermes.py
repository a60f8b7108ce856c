"""ctx-mem0 inside real hermes-agent 0.19.0: selected in config.yaml, driven by hermes' memory manager."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import remote_helpers as remote
from hermes_helpers import new_agent

from hermes_ctx_plugins.testing import Mem0StubServer, StubOpenAIServer


def configure(stub: StubOpenAIServer, mem0: Mem0StubServer, **options: Any) -> Path:
    return remote.configure_memory(stub, "ctx-mem0", {
        "api_key": remote.MEM0_KEY, "host": mem0.base_url, "timeout": 2.0, "prefetch_wait": 2.0, **options})


def test_what_session_one_stored_is_recalled_in_session_two(stub: StubOpenAIServer, mem0: Mem0StubServer) -> None:
    remote.check_registered(configure(stub, mem0), "ctx-mem0")
    remote.tell_a_fact(stub)
    assert mem0.memories_of(user_id="udana") == [remote.FACT]
    add = mem0.add_requests[-1].body
    assert add["agent_id"] == "hermes" and add["metadata"]["platform"] == "cli"
    assert [m["content"] for m in add["messages"]] == [remote.FACT, "Noted."]

    remote.recall_the_fact(
        stub, "ctx-mem0", search="ctx_mem0_search", recalled=f"- {remote.FACT}",
        tools={"ctx_mem0_search", "ctx_mem0_add", "ctx_mem0_update", "ctx_mem0_delete"})

    remote.ask_as_a_stranger(stub)
    assert mem0.requests_to("POST", "/search/")[-1].body["filters"] == {"user_id": "uerin"}


def test_a_hanging_mem0_costs_a_turn_at_most_prefetch_wait(stub: StubOpenAIServer, mem0: Mem0StubServer) -> None:
    configure(stub, mem0, timeout=5.0, prefetch_wait=0.5, flush_timeout=0.5)
    remote.check_a_hanging_service_costs_a_turn_at_most_prefetch_wait(stub, mem0, "ctx-mem0", "Mem0")


def test_a_channel_keeps_its_run_after_hermes_compacts(stub: StubOpenAIServer, mem0: Mem0StubServer) -> None:
    """hermes' API server names a channel by its session key only (``X-Hermes-Session-Key``; no user id, no chat id).
    hermes rotates the session id when it compacts and tells the providers (``on_session_switch``, reason
    "compression") without the key: the channel's later turns were tagged with the new session's run, so
    ``recall_scope: run`` no longer found what the channel said before its first compaction."""
    configure(stub, mem0, run_id="chat", recall_scope="run")
    stub.reply("Noted.")
    agent = new_agent(stub, gateway_session_key="agent:main:api_server:dm:alice", platform="api_server")
    agent.run_conversation(remote.FACT, conversation_history=[])
    before = agent.session_id
    agent.session_id = f"{before}-compacted"  # what hermes' compaction does, then it tells the memory manager
    agent._memory_manager.on_session_switch(agent.session_id, parent_session_id=before, reset=False,
                                            reason="compression")
    stub.reply("Noted too.")
    agent.run_conversation("and my bike lock is 2-7-1-8", conversation_history=[])
    agent.shutdown_memory_provider([])
    runs = [request.body.get("run_id") for request in mem0.add_requests]
    assert len(runs) == 2 and runs[0] and runs[0] == runs[1], runs
    assert mem0.requests_to("POST", "/search/")[-1].body["filters"].get("run_id") == runs[0]

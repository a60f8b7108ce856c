"""ctx-mem0 inside real hermes-agent 0.19.0: selected in config.yaml, driven by hermes' memory manager."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import remote_helpers as remote

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

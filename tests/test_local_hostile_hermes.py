"""ctx-local's tools inside real hermes-agent 0.19.0, called by the model with hostile arguments
(issue 13 #1): ``ctx_memory_forget(ids=[2**63])`` is answered as the model's error, the provider is
not counted as failing, every process can still write the store, and the conversation's turns are
stored as usual."""

from __future__ import annotations

import json
import sqlite3
from typing import Any

import pytest
from hermes_helpers import configure_hermes, new_agent
from hermes_helpers import hermes_home as home
from test_local_hostile import WriteProbe

from hermes_ctx_plugins.testing import StubOpenAIServer

pytest.importorskip("run_agent", reason="the hermes extra is not installed")
from hermes_ctx_plugins.hermes.runtime import installed


def tool_results(result: dict[str, Any], after: int = 0) -> list[dict[str, Any]]:
    """Our tools' answers as the model got them (hermes may append a note of its own, such as a
    warning that the same tool keeps failing)."""
    decode = json.JSONDecoder().raw_decode
    return [decode(m["content"])[0] for m in result["messages"][after:] if m.get("role") == "tool"]


def stored_user_texts() -> list[str]:
    conn = sqlite3.connect(home() / "ctx-local" / "memory.db")
    try:
        return [row[0] for row in conn.execute("SELECT user_text FROM memories ORDER BY id")]
    finally:
        conn.close()


def test_the_models_out_of_range_ids_are_its_errors_and_lock_nothing(stub: StubOpenAIServer) -> None:
    configure_hermes(stub, "memory: {provider: ctx-local}\n", engine=False)
    stub.reply("Noted.")
    first = new_agent(stub, toolsets=["memory"])
    first.run_conversation("my bike lock code is walrus-42", conversation_history=[])
    first.shutdown_memory_provider([])

    for args in ({"ids": [2**63]}, {"ids": [-2**63 - 1]}, {"ids": 10**30}):
        stub.tool_call("ctx_memory_forget", args)
    stub.tool_call("ctx_memory_search", {"query": "bike lock", "limit": 2**63})
    stub.tool_call("ctx_memory_search", {"query": "bike lock"})
    stub.reply("I could not forget it with those ids.")
    second = new_agent(stub, toolsets=["memory"])
    result = second.run_conversation("please forget my bike lock code", conversation_history=[])
    *errors, found = tool_results(result)
    assert [e["success"] for e in errors] == [False] * 4
    assert "from 1 to 9,223,372,036,854,775,807, got [9223372036854775808]" in errors[0]["error"]
    assert "got [-9223372036854775809]" in errors[1]["error"]
    assert "got 1000000000000000000000000000000" in errors[2]["error"]
    assert "'limit' must be a whole number from 1 to 20, got 9223372036854775808" in errors[3]["error"]
    [hit] = found["results"]  # the provider works on, for the owner
    assert "walrus-42" in hit["text"]
    host = installed().host
    assert host is not None and host.isolator.health("memory:ctx-local").failures == 0
    probe = WriteProbe()
    try:
        probe.writable(home() / "ctx-local" / "memory.db")
    finally:
        probe.close()

    stub.tool_call("ctx_memory_forget", {"ids": [hit["id"]]})
    stub.reply("Forgotten.")
    third = second.run_conversation("forget it by its id then", conversation_history=result["messages"])
    assert tool_results(third, len(result["messages"])) == [{"success": True, "forgotten": [hit["id"]]}]
    second.shutdown_memory_provider([])
    assert stored_user_texts() == ["please forget my bike lock code", "forget it by its id then"]

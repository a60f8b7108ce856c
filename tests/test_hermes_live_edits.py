"""hermes 0.19.0 edits the live history in place, below the top level of a message: a tool call's broken
``arguments`` repaired to ``"{}"`` inside the shared ``function`` dict (agent/agent_runtime_helpers.py,
every loop iteration), an empty tool name renamed, arguments given as an object replaced. A count our
counter remembered before such an edit must not outlive it: the engine counts the same dicts again at the
next compaction, and a 41 kB argument repaired to two characters stayed counted at 13,000 tokens."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from hermes_helpers import MODEL, configure_hermes, new_agent

from hermes_ctx_plugins.testing import StubOpenAIServer
from hermes_ctx_plugins.tokens import TokenCounter, get_counter

pytest.importorskip("run_agent", reason="the hermes extra is not installed")
from hermes_cli import plugins as hermes_plugins

BIG = "x = 1  # a line of the file being written\n" * 1000


def history() -> list[dict[str, Any]]:
    broken = json.dumps({"path": "a.py", "content": BIG})[:-1] + ", }"  # a trailing comma: not JSON
    return [
        {"role": "user", "content": "write a.py and b.py"},
        {"role": "assistant", "content": "", "tool_calls": [
            {"id": "call_a", "type": "function", "function": {"name": "write_file", "arguments": broken}}]},
        {"role": "tool", "tool_call_id": "call_a", "name": "write_file", "content": "wrote a.py"},
        {"role": "assistant", "content": "", "tool_calls": [
            {"id": "call_b", "type": "function",
             "function": {"name": "write_file", "arguments": {"path": "b.py", "content": BIG}}}]},
        {"role": "tool", "tool_call_id": "call_b", "name": "write_file", "content": "wrote b.py"},
        {"role": "assistant", "content": "", "tool_calls": [
            {"id": "call_c", "type": "function", "function": {"name": "", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "call_c", "name": "", "content": "the tool name was empty"},
        {"role": "assistant", "content": "done"},
    ]


def test_a_count_taken_before_hermes_repairs_tool_calls_in_place_is_not_reused_after(
        stub: StubOpenAIServer) -> None:
    configure_hermes(stub)
    counted: dict[str, int] = {}

    def pre_llm_call(conversation_history: list[dict[str, Any]], **_: Any) -> None:
        counted["before"] = get_counter(MODEL).count_messages(conversation_history)  # as our engine counts

    hooks = hermes_plugins.get_plugin_manager()._hooks.setdefault("pre_llm_call", [])
    hooks.append(pre_llm_call)
    try:
        stub.reply("ok")
        past = history()
        result = new_agent(stub).run_conversation("please go on", conversation_history=past)
    finally:
        hooks.remove(pre_llm_call)
    messages = result["messages"]
    repaired = messages[1]["tool_calls"][0]["function"]
    assert repaired is past[1]["tool_calls"][0]["function"] and repaired["arguments"] == "{}"  # edited where it was
    assert counted["before"] > 20_000  # the broken arguments, as they were when counted
    remembered = get_counter(MODEL).count_messages(messages)
    assert remembered == TokenCounter(MODEL).count_messages(copy.deepcopy(messages)) < 1_000

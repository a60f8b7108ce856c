"""Contract tests every registered strategy and provider must pass, built-in or third-party."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from hermes_ctx_plugins import CompressionResult, SessionInfo, Turn, load_host
from hermes_ctx_plugins.testing import FakesPlugin

# Every strategy and provider this installation registers, plus the public fakes.
_HOST = load_host({}, plugins=[FakesPlugin()])
COMPRESSORS = [r for r in _HOST.registry if r.kind == "compressor"]
PROVIDERS = [r for r in _HOST.registry if r.kind == "memory"]


def transcript(n: int = 30) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = [{"role": "user", "content": "set up the project"}]
    for i in range(n):
        call_id = f"call_{i}"
        messages.append({"role": "assistant", "content": None, "tool_calls": [
            {"id": call_id, "type": "function",
             "function": {"name": "terminal", "arguments": json.dumps({"command": f"make step{i}"})}}]})
        messages.append({"role": "tool", "tool_call_id": call_id, "content": f"step {i} ok\n" * 20})
        messages.append({"role": "assistant", "content": f"step {i} done"})
        messages.append({"role": "user", "content": f"now step {i + 1}"})
    return messages


def tool_pairs_are_intact(messages: list[dict[str, Any]]) -> bool:
    calls = {tc["id"] for m in messages for tc in m.get("tool_calls") or ()}
    results = {m["tool_call_id"] for m in messages if m.get("role") == "tool"}
    return calls == results


@pytest.mark.parametrize("entry", COMPRESSORS, ids=[r.name for r in COMPRESSORS])
def test_compressor_contract(entry: Any) -> None:
    strategy = entry.factory({}, model="gpt-4o", context_length=128_000)
    clone = copy.deepcopy(strategy)  # hermes deep-copies the engine per agent
    assert type(clone) is type(strategy) and clone is not strategy

    messages = transcript()
    before = copy.deepcopy(messages)
    result = strategy.compress(messages, force=True)
    assert isinstance(result, CompressionResult)
    assert messages == before, "compress must not mutate its input"
    assert result.messages, "an empty conversation is never a valid result"
    assert tool_pairs_are_intact(result.messages)
    assert result.messages[-1] == messages[-1], "the latest message is kept verbatim"
    if result.compressed:
        assert len(result.messages) < len(messages) or result.tokens_after < result.tokens_before

    tiny = [{"role": "user", "content": "hello"}]
    assert strategy.compress(tiny).messages == tiny


@pytest.mark.parametrize("entry", PROVIDERS, ids=[r.name for r in PROVIDERS])
def test_provider_contract(entry: Any, tmp_path: Any) -> None:
    # construction and is_available() never use the network (the suite blocks it anyway)
    provider = entry.factory({}, hermes_home=tmp_path)
    assert isinstance(provider.is_available(), bool)
    alice = SessionInfo(session_id="a1", user_id="alice")
    bob = SessionInfo(session_id="b1", user_id="bob")
    provider.on_session_start(alice)
    provider.sync_turn(Turn(session=alice, turn_number=1,
                            user_text="my locker combination is 4-8-15-16", assistant_text="noted"))
    assert isinstance(provider.prefetch("what is my locker combination", session=alice), str)
    leaked = provider.prefetch("what is my locker combination", session=bob)
    assert "4-8-15-16" not in leaked, "one user's memory must never reach another's turn"
    for schema in provider.get_tool_schemas():
        assert schema["type"] == "function" and schema["function"]["name"]
    assert isinstance(provider.handle_tool_call("no-such-tool", {}), str)
    provider.shutdown()

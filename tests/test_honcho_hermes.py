"""ctx-honcho inside real hermes-agent 0.19.0: selected in config.yaml, driven by hermes' memory manager."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import run_agent
from hermes_cli import plugins as hermes_plugins
from plugins.memory import load_memory_provider

from hermes_ctx_plugins.hermes import plugin as our_plugin
from hermes_ctx_plugins.hermes.memory import HermesMemoryAdapter
from hermes_ctx_plugins.testing import HonchoStubServer, StubOpenAIServer, wait_until

MODEL = "stub-model"
KEY = "honcho-test-key"


@pytest.fixture
def llm() -> Iterator[StubOpenAIServer]:
    with StubOpenAIServer(model=MODEL) as server:
        yield server


@pytest.fixture
def honcho() -> Iterator[HonchoStubServer]:
    with HonchoStubServer(api_keys=(KEY,)) as server:
        yield server


def configure(llm: StubOpenAIServer, honcho: HonchoStubServer, **options: Any) -> Path:
    home = Path(os.environ["HERMES_HOME"])
    home.mkdir(parents=True, exist_ok=True)
    settings = {"api_key": KEY, "base_url": honcho.base_url, "workspace_id": "hermes-test", "timeout": 2.0,
                "max_retries": 1, "prefetch_wait": 2.0, **options}
    (home / "config.yaml").write_text(
        f"model: {{default: {MODEL}, provider: custom, base_url: {llm.base_url}, context_length: 128000}}\n"
        "plugins: {enabled: [hermes-ctx]}\n"
        "agent: {environment_probe: false}\n"
        "memory: {provider: ctx-honcho}\n"
        f"ctx_plugins: {{options: {{ctx-honcho: {json.dumps(settings)}}}}}\n", encoding="utf-8")
    hermes_plugins.discover_plugins(force=True)
    assert our_plugin.HOST is not None
    return home


def agent(llm: StubOpenAIServer, user: str, toolsets: tuple[str, ...] = ()) -> Any:
    return run_agent.AIAgent(base_url=llm.base_url, api_key="k", provider="custom", model=MODEL, quiet_mode=True,
                             skip_context_files=True, enabled_toolsets=list(toolsets), user_id=user)


def last_user_message(llm: StubOpenAIServer, request: int = -1) -> str:
    """The last user message hermes sent in ``llm.chat_requests[request]`` (recall is appended to it)."""
    messages = llm.chat_requests[request].body["messages"]  # type: ignore[index]
    return str(next(m["content"] for m in reversed(messages) if m["role"] == "user"))


def test_what_session_one_stored_is_recalled_in_session_two(llm: StubOpenAIServer,
                                                             honcho: HonchoStubServer) -> None:
    home = configure(llm, honcho)
    assert (home / "plugins" / "ctx-honcho" / "__init__.py").exists(), "our register() wrote hermes' shim"
    assert isinstance(load_memory_provider("ctx-honcho"), HermesMemoryAdapter)

    llm.reply("Noted.")
    first = agent(llm, "dana")
    first.run_conversation("remember: my locker combination is 4-8-15-16", conversation_history=[])
    first.shutdown_memory_provider([])
    assert honcho.messages_of("dana") == ["remember: my locker combination is 4-8-15-16"]
    assert honcho.messages_of("hermes") == ["Noted."]
    assert len(honcho.sessions) == 1 and list(honcho.sessions.values()) == [["dana", "hermes"]]

    llm.tool_call("ctx_honcho_search", {"query": "locker combination"})
    llm.reply("It is 4-8-15-16.")
    second = agent(llm, "dana", toolsets=("memory",))
    result = second.run_conversation("what is my locker combination?", conversation_history=[])
    assert result["final_response"] == "It is 4-8-15-16."
    sent = last_user_message(llm)
    assert "what is my locker combination?" in sent
    assert "Recalled from long-term memory (ctx-honcho)" in sent
    assert "- [known] remember: my locker combination is 4-8-15-16" in sent
    offered = {t["function"]["name"] for t in llm.chat_requests[-2].body["tools"]}  # type: ignore[index]
    assert {"ctx_honcho_profile", "ctx_honcho_search", "ctx_honcho_context", "ctx_honcho_conclude"} <= offered
    tool_result = next(m for m in result["messages"] if m.get("role") == "tool")
    assert "4-8-15-16" in tool_result["content"]
    second.shutdown_memory_provider([])
    assert len(honcho.sessions) == 2, "one Honcho session per hermes session"

    llm.reply("I don't know.")
    stranger = agent(llm, "erin")
    stranger.run_conversation("what is my locker combination?", conversation_history=[])
    assert "4-8-15-16" not in last_user_message(llm), "another user's memory never reaches this turn"
    assert honcho.requests_to("GET", "/context$")[-1].query["peer_target"] == "erin"
    stranger.shutdown_memory_provider([])


def test_a_hanging_honcho_costs_a_turn_at_most_prefetch_wait(llm: StubOpenAIServer,
                                                             honcho: HonchoStubServer) -> None:
    configure(llm, honcho, timeout=5.0, prefetch_wait=0.5, flush_timeout=0.5)
    llm.reply("warm-up")
    warm = agent(llm, "dana")
    started = time.perf_counter()
    warm.run_conversation("hello", conversation_history=[])
    baseline = time.perf_counter() - started
    warm.shutdown_memory_provider([])

    honcho.hang(times=1000)
    llm.reply("Answer despite the outage.")
    slow = agent(llm, "dana")
    started = time.perf_counter()
    result = slow.run_conversation("what is my locker combination?", conversation_history=[])
    elapsed = time.perf_counter() - started
    assert result["final_response"] == "Answer despite the outage."
    print(f"\nturn with Honcho hanging: {elapsed:.2f}s (healthy turn {baseline:.2f}s, prefetch_wait 0.5s)")
    assert elapsed < baseline + 1.5, f"the outage delayed the turn by {elapsed - baseline:.2f}s"
    started = time.perf_counter()
    slow.shutdown_memory_provider([])
    assert time.perf_counter() - started < 2.0, "shutdown does not wait for the hung service"
    provider = next(p for p in our_plugin.HOST.memory_providers if p.name == "ctx-honcho")  # type: ignore[union-attr]
    assert wait_until(lambda: provider.spooled() + provider.queued >= 1), "the turn is kept for later, not lost"

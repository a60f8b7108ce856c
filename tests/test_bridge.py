"""The Bridge API: per-deployment strategy and memory on real hermes agents, never leaking memory."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hermes_ctx_plugins import ConfigError, hookimpl
from hermes_ctx_plugins.testing import FakeMemoryProvider, StubOpenAIServer

run_agent = pytest.importorskip("run_agent", reason="the hermes extra is not installed")
from hermes_cli import plugins as hermes_plugins  # noqa: E402

from hermes_ctx_plugins.bridge import Bridge  # noqa: E402

MODEL = "stub-model"


class Recaller(FakeMemoryProvider):
    name = "ctx-recall"


class Providers:
    @hookimpl
    def register_memory_providers(self, register: Any) -> None:
        register(Recaller)


CONFIG = {
    "ctx_plugins": {
        "compressor": "summarize",
        "memory": {"providers": []},
        "deployments": {
            "lean": {"compressor": "window"},
            "support": {"memory": {"providers": ["ctx-recall"]}},
        },
    },
}


@pytest.fixture
def stub() -> Iterator[StubOpenAIServer]:
    with StubOpenAIServer(model=MODEL, responder=lambda request: "ok") as server:
        home = Path(os.environ["HERMES_HOME"])
        home.mkdir(parents=True, exist_ok=True)
        (home / "config.yaml").write_text(
            f"model: {{default: {MODEL}, provider: custom, base_url: {server.base_url}, context_length: 128000}}\n"
            "plugins: {enabled: [hermes-ctx]}\nagent: {environment_probe: false}\n")
        hermes_plugins.discover_plugins(force=True)
        yield server


def make_agent(stub: StubOpenAIServer, session_id: str, user_id: str, **kwargs: Any) -> Any:
    return run_agent.AIAgent(base_url=stub.base_url, api_key="k", provider="custom", model=MODEL,
                             quiet_mode=True, skip_context_files=True, enabled_toolsets=[],
                             session_id=session_id, user_id=user_id, **kwargs)


def test_each_deployment_switches_the_strategy(stub: StubOpenAIServer) -> None:
    bridge = Bridge(CONFIG, plugins=[Providers()])
    assert bridge.deployments == ["lean", "support"]
    lean, support = bridge.deployment("lean"), bridge.deployment("support")
    assert (lean.compressor, lean.memory_providers) == ("window", [])
    assert (support.compressor, support.memory_providers) == ("summarize", ["ctx-recall"])
    # hermes' memory manager stays off: the plan drives the deployment's memory itself
    assert lean.agent_kwargs() == support.agent_kwargs() == {"skip_memory": True}
    a = lean.apply(make_agent(stub, "s-lean", "u1", **lean.agent_kwargs()))
    b = support.apply(make_agent(stub, "s-support", "u2", **support.agent_kwargs()))
    assert a.context_compressor.strategy.name == "window"
    assert b.context_compressor.strategy.name == "summarize"
    assert a.context_compressor.context_length == 128_000
    assert a.context_compressor is not b.context_compressor
    assert bridge.deployment("lean") is lean  # plans are built once


def test_memory_never_leaks_between_cached_agents(stub: StubOpenAIServer) -> None:
    plan = Bridge(CONFIG, plugins=[Providers()]).deployment("support")
    alice = plan.apply(make_agent(stub, "s-alice", "alice", skip_memory=True))
    bob = plan.apply(make_agent(stub, "s-bob", "bob", skip_memory=True))
    alice.run_conversation("remember: my locker combination is 4-8-15-16", conversation_history=[])
    recaller = plan.host.memory_providers[0]
    deadline = time.monotonic() + 5
    while not recaller.turns.get("alice") and time.monotonic() < deadline:
        time.sleep(0.02)
    assert [t.user_text for t in recaller.turns["alice"]] == ["remember: my locker combination is 4-8-15-16"]

    bob.run_conversation("what is my locker combination?", conversation_history=[])
    bob_sent = stub.chat_requests[-1].body["messages"][-1]["content"]  # type: ignore[index]
    assert "4-8-15-16" not in bob_sent

    alice_again = plan.apply(make_agent(stub, "s-alice-2", "alice", skip_memory=True))
    alice_again.run_conversation("what is my locker combination?", conversation_history=[])
    alice_sent = stub.chat_requests[-1].body["messages"][-1]["content"]  # type: ignore[index]
    assert "4-8-15-16" in alice_sent
    plan.release(alice)
    plan.release(bob)


def test_a_deployment_without_memory_recalls_nothing(stub: StubOpenAIServer) -> None:
    bridge = Bridge(CONFIG, plugins=[Providers()])
    support, lean = bridge.deployment("support"), bridge.deployment("lean")
    support.apply(make_agent(stub, "s-1", "carol", skip_memory=True)).run_conversation(
        "my favourite colour is teal", conversation_history=[])
    lean_agent = lean.apply(make_agent(stub, "s-2", "carol", skip_memory=True))
    lean_agent.run_conversation("what is my favourite colour?", conversation_history=[])
    assert "teal" not in stub.chat_requests[-1].body["messages"][-1]["content"]  # type: ignore[index]


def test_a_bad_deployment_name_fails_clearly(stub: StubOpenAIServer) -> None:
    bridge = Bridge(CONFIG, plugins=[Providers()])
    with pytest.raises(ConfigError, match="did you mean 'support'"):
        bridge.deployment("suport")


def test_a_plugin_rediscovery_keeps_a_bridge_agents_turns_in_its_deployment(stub: StubOpenAIServer) -> None:
    """hermes' ``discover_plugins(force=True)`` (its dashboard runs one; a service may) clears its hooks and
    registers a new runtime. The sessions a Bridge bound were in the old runtime's table only: the bound
    user's next turn went to the new runtime's own host (another deployment's stores) and the deployment's
    provider never saw it."""
    from hermes_ctx_plugins.hermes.runtime import installed

    plan = Bridge(CONFIG, plugins=[Providers()]).deployment("support")
    alice = plan.apply(make_agent(stub, "s-alice", "alice", skip_memory=True))
    recaller = plan.host.memory_providers[0]

    def said() -> list[str]:
        deadline = time.monotonic() + 5
        count = len(recaller.turns.get("alice", []))
        while len(recaller.turns.get("alice", [])) == count and time.monotonic() < deadline:
            time.sleep(0.02)
        return [t.user_text for t in recaller.turns.get("alice", [])]

    alice.run_conversation("my locker combination is 4-8-15-16", conversation_history=[])
    assert said() == ["my locker combination is 4-8-15-16"]
    before = installed()
    hermes_plugins.discover_plugins(force=True)
    assert installed() is not before  # a new registration, a new runtime
    alice.run_conversation("my bike lock code is 99", conversation_history=[])
    assert said() == ["my locker combination is 4-8-15-16", "my bike lock code is 99"]
    plan.release(alice)


def test_hermes_own_write_approval_never_stages_a_bridge_owners_memory(stub: StubOpenAIServer) -> None:
    """hermes' memory.write_approval stages every write in one folder ($HERMES_HOME/pending/memory, no owner, out of
    reach of forget) and approves it into the top-level files: a Bridge refuses to start with it, and a write made
    after it was switched on is refused, not staged (a red-team pass found alice's note staged there, then approved
    into the top-level USER.md)."""
    from hermes_ctx_plugins.memory.file.provider import memory_folder

    home = Path(os.environ["HERMES_HOME"])
    config = home / "config.yaml"
    plain = config.read_text(encoding="utf-8") + "memory: {memory_enabled: true, user_profile_enabled: true}\n"
    staging = plain.replace("user_profile_enabled: true}", "user_profile_enabled: true, write_approval: true}")
    files = {"ctx_plugins": {"memory": {"providers": []},
                             "deployments": {"support": {"memory": {"providers": ["file"]}}}}}
    config.write_text(staging, encoding="utf-8")
    with pytest.raises(ConfigError, match=r"memory\.write_approval.*'support' keeps file memory per owner"):
        Bridge(files)
    Bridge(CONFIG, plugins=[Providers()]).shutdown()  # no deployment keeps file memory: nothing to refuse

    config.write_text(plain, encoding="utf-8")
    bridge = Bridge(files)
    plan = bridge.deployment("support")
    note = {"action": "add", "target": "user", "content": "ALICE-PRIVATE: lives at 12 Elm St"}
    try:
        for approval, answered in ((True, "write_approval is on"), (False, "")):
            config.write_text(staging if approval else plain, encoding="utf-8")  # hermes reads it at each write
            stub.tool_call("memory", note)
            stub.reply("Noted.")
            agent = plan.apply(run_agent.AIAgent(
                base_url=stub.base_url, api_key="k", provider="custom", model=MODEL, quiet_mode=True,
                skip_context_files=True, enabled_toolsets=["memory"], session_id=f"s-alice-{approval}",
                user_id="alice", **plan.agent_kwargs()))
            agent.run_conversation("remember where I live", conversation_history=[])
            plan.release(agent)
            [answer] = [m["content"] for m in stub.chat_requests[-1].body["messages"] if m.get("role") == "tool"]
            assert answered in answer
            user_md = memory_folder(home, "support", "alice") / "USER.md"
            stored = user_md.read_text(encoding="utf-8") if user_md.exists() else ""
            assert ("ALICE-PRIVATE" in stored) is not approval  # refused, then written to alice's own file
            assert not list((home / "pending").rglob("*.json"))  # never staged in hermes' shared folder
            assert not (home / "memories" / "USER.md").exists()  # nor in the top-level owner's
    finally:
        bridge.shutdown()

"""Conformance with hermes-agent 0.19.0's memory-provider contract: each of our providers, and
hermes' bundled ``holographic`` as the control, through the same real hermes code paths.

Every parametrised test runs the SAME assertions against ``ctx-local``, ``ctx-mem0``,
``ctx-honcho`` (through the shims our ``register()`` writes) and ``holographic``, so a divergence
shows as ours-fails / control-passes. The paths are hermes' own: plugin discovery, provider listing
(``discover_memory_providers``, ``hermes memory status`` in-process, the dashboard's statuses),
``load_memory_provider``, and an ``AIAgent`` built afterwards in the same process. Every
configuration makes all of our providers usable (keys and loopback Mem0 / Honcho services), the
situation in which a listing used to hand the one external slot to the first one it asked about.
"""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from contextlib import redirect_stdout
from pathlib import Path
from typing import Any

import pytest
import remote_helpers as remote
from hermes_helpers import configure_hermes, new_agent
from hermes_helpers import hermes_home as home

from hermes_ctx_plugins import SessionInfo
from hermes_ctx_plugins.testing import HonchoStubServer, Mem0StubServer, StubOpenAIServer

pytest.importorskip("run_agent", reason="the hermes extra is not installed")
from hermes_cli import memory_setup
from plugins.memory import discover_memory_providers, load_memory_provider

from hermes_ctx_plugins.hermes.runtime import installed

OURS = ("ctx-local", "ctx-mem0", "ctx-honcho")
CONTROL = "holographic"
PROVIDERS = (*OURS, CONTROL)
#: the tools each provider offers the model (hermes offers them once the provider is in its manager)
TOOLS = {"ctx-local": "ctx_memory_search", "ctx-mem0": "ctx_mem0_search", "ctx-honcho": "ctx_honcho_search",
         CONTROL: "fact_store"}


@pytest.fixture
def services(mem0: Mem0StubServer, honcho: HonchoStubServer) -> Iterator[dict[str, Any]]:
    """The options that make every one of our providers usable, against the loopback services."""
    yield {"ctx-mem0": {"api_key": remote.MEM0_KEY, "host": mem0.base_url, "timeout": 2.0},
           "ctx-honcho": {"api_key": remote.HONCHO_KEY, "base_url": honcho.base_url, "workspace_id": "hermes-test",
                          "timeout": 2.0}}


def configure(stub: StubOpenAIServer, provider: str, options: dict[str, Any]) -> Path:
    """hermes with our plugin (no engine), ``memory.provider: <provider>`` and ``options``."""
    return configure_hermes(stub, f"memory: {{provider: {provider}}}\n"
                                  f"ctx_plugins: {{options: {json.dumps(options)}}}\n", engine=False)


def memory_status() -> str:
    """What ``hermes memory status`` prints, run in this process."""
    out = io.StringIO()
    with redirect_stdout(out):
        memory_setup.cmd_status(None)
    return out.getvalue()


def active_on_our_host() -> list[str]:
    runtime = installed()
    assert runtime is not None
    return [p.name for p in runtime.host.memory_providers]


def files_under(root: Path) -> dict[str, int]:
    return {str(p.relative_to(root)): p.stat().st_size for p in root.rglob("*") if p.is_file()}


# ------------------------------------------------------------------ listing, then using


@pytest.mark.parametrize("provider", PROVIDERS)
def test_listing_providers_leaves_the_configured_one_to_the_next_agent(
        stub: StubOpenAIServer, mem0: Mem0StubServer, honcho: HonchoStubServer, services: dict[str, Any],
        provider: str) -> None:
    configure(stub, provider, services)
    listed = {name: available for name, _, available in discover_memory_providers()}
    assert listed[provider], listed
    status = memory_status()
    assert f"Provider:  {provider}" in status and "Status:    available ✓" in status, status
    assert load_memory_provider(provider).is_available()

    stub.reply("Noted.")
    agent = new_agent(stub, toolsets=["memory"], user_id="dana")
    assert [p.name for p in agent._memory_manager.providers] == [provider], "memory is on, with the chosen one"
    agent.run_conversation(remote.FACT, conversation_history=[])
    offered = {t["function"]["name"] for t in stub.chat_requests[-1].body["tools"]}
    assert TOOLS[provider] in offered, "the model is offered the chosen provider's tools"
    agent.shutdown_memory_provider([])

    # the turn went to the chosen provider's store, and to no service memory.provider did not choose
    assert (mem0.memories_of(user_id="udana") == [remote.FACT]) == (provider == "ctx-mem0")
    assert (honcho.messages_of("udana") == [remote.FACT]) == (provider == "ctx-honcho")
    if provider not in ("ctx-mem0", "ctx-honcho"):
        assert not mem0.requests and not honcho.requests, "no request at all reached an unchosen service"
    if provider == "ctx-local":
        runtime = installed()
        assert runtime is not None
        local = next(p for p in runtime.host.memory_providers if p.name == "ctx-local")
        dana = runtime.host.scoped(SessionInfo(session_id="probe", user_id="dana"))
        assert "4-8-15-16" in local.prefetch("locker combination", session=dana)


@pytest.mark.parametrize("provider", ["ctx-local", CONTROL])
def test_the_dashboard_listing_leaves_the_configured_provider_to_the_next_agent(
        stub: StubOpenAIServer, honcho: HonchoStubServer, services: dict[str, Any], provider: str) -> None:
    from hermes_cli.web_server import _discover_memory_provider_statuses

    configure(stub, provider, services)
    rows = {row["name"]: row for row in _discover_memory_provider_statuses()}
    assert rows[provider]["available"] and rows[provider]["status"] == "ready", rows[provider]
    assert rows["ctx-honcho"]["available"], "ctx-honcho is usable: the listing asked it first"
    agent = new_agent(stub)
    assert [p.name for p in agent._memory_manager.providers] == [provider]
    agent.shutdown_memory_provider([])
    assert not honcho.requests


# ------------------------------------------------------------------ the availability check itself


@pytest.mark.parametrize("provider", PROVIDERS)
def test_an_availability_check_changes_nothing_and_initialize_does(
        stub: StubOpenAIServer, mem0: Mem0StubServer, honcho: HonchoStubServer, services: dict[str, Any],
        provider: str) -> None:
    configure(stub, provider, services)
    adapter = load_memory_provider(provider)
    before = (active_on_our_host(), files_under(home()))
    assert adapter.is_available() and adapter.is_available()
    assert (active_on_our_host(), files_under(home())) == before, "no provider activated, no file written"
    assert not mem0.requests and not honcho.requests, "nor any request sent"

    # not vacuous: hermes really using it (initialize) is what opens it
    adapter.initialize("s1", hermes_home=str(home()), platform="cli", agent_context="primary")
    try:
        if provider in OURS:
            assert active_on_our_host() == [*before[0], provider]
        else:
            assert files_under(home()) != before[1], "holographic opened its store"
    finally:
        adapter.shutdown()


@pytest.mark.parametrize(("options", "why"), [
    ({"ctx-mem0": {"host": "http://127.0.0.1:9"}}, "no Mem0 API key"),
    ({"ctx-mem0": {"api_key": "k", "mode": "nonsense"}}, "'nonsense' is not valid"),
])
def test_a_provider_that_cannot_work_lists_as_not_available(stub: StubOpenAIServer, options: dict[str, Any],
                                                            why: str, monkeypatch: pytest.MonkeyPatch,
                                                            caplog: pytest.LogCaptureFixture) -> None:
    monkeypatch.delenv("MEM0_API_KEY", raising=False)
    configure(stub, "ctx-mem0", options)
    assert not load_memory_provider("ctx-mem0").is_available()
    assert "Status:    not available ✗" in memory_status()
    agent = new_agent(stub)
    assert agent._memory_manager is None, "hermes leaves memory off rather than half-on"
    if "not valid" in why:
        assert why in caplog.text, "the reason is logged, naming the bad value"


def test_hermes_memory_status_says_what_our_remote_providers_need(stub: StubOpenAIServer,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """Without a setup schema hermes lists a provider as "no setup needed"; ours say they need a key and
    which variable holds it, and the key set there (hermes' .env becomes the environment) makes it available."""
    monkeypatch.delenv("MEM0_API_KEY", raising=False)
    configure(stub, "ctx-mem0", {"ctx-mem0": {"host": "http://127.0.0.1:9"}})
    status = memory_status()
    assert "ctx-mem0" in status and "Status:    not available ✗" in status
    assert "✗ MEM0_API_KEY" in status  # hermes' "Missing:" list, from our schema
    assert {p[0]: p[1] for p in memory_setup._get_available_providers()}["ctx-mem0"] == "requires API key"
    assert {p[0]: p[1] for p in memory_setup._get_available_providers()}["ctx-local"] == "no setup needed"
    monkeypatch.setenv("MEM0_API_KEY", "k-from-env")
    assert load_memory_provider("ctx-mem0").is_available()
    assert "Status:    available ✓" in memory_status()

"""hermes' memory switches hold for every provider of ours, inside real hermes-agent 0.19.0.

hermes is the authority (:mod:`hermes_ctx_plugins.hermes.memory_switches`): ``hermes memory off``
(``memory.provider: ""``) leaves no external provider running, ``memory.memory_enabled`` /
``user_profile_enabled`` switch MEMORY.md / USER.md, and an agent built with ``skip_memory=True`` has
no memory at all. Each switch is checked on what hermes sent to the model and on disk, paired with
the same turn while the switch is on.
"""

from __future__ import annotations

import argparse
import json
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from hermes_helpers import configure_hermes, hermes_home, new_agent

from hermes_ctx_plugins import SessionInfo, Turn, load_config
from hermes_ctx_plugins.testing import FakesPlugin, StubOpenAIServer

pytest.importorskip("run_agent", reason="the hermes extra is not installed")
from hermes_cli import plugins as hermes_plugins
from hermes_cli.main import cmd_memory

from hermes_ctx_plugins.hermes.runtime import Runtime, installed


@pytest.fixture(autouse=True)
def _shut_down_our_providers() -> Iterator[None]:
    """What hermes' plugin loading built lives as long as the process: shut its providers down after each
    test (their write-behind threads), as hermes' exit would."""
    yield
    found = installed()
    if found is not None:
        found.host.shutdown()


LOCKER = "remember: my locker combination is 4-8-15-16"
VAULT = "remember: the vault code is 2-7-1-8"
RECALL_BLOCK = "Recalled from earlier conversations"


@dataclass(frozen=True)
class Turned:
    """One turn as hermes ran it: the first request's user message and system prompt, as sent to
    the model, and what the memory tool answered."""

    message: str
    system: str
    tool_results: list[dict[str, Any]]


def turn(stub: StubOpenAIServer, text: str, **agent_kwargs: Any) -> Turned:
    """One hermes session of one turn; its memory provider flushed when it ends."""
    stub.reply("Noted.")
    first = len(stub.chat_requests)
    agent = new_agent(stub, toolsets=["memory"], **agent_kwargs)
    result = agent.run_conversation(text, conversation_history=[])
    agent.shutdown_memory_provider(result["messages"])
    messages = stub.chat_requests[first].body["messages"]  # type: ignore[index]
    return Turned(message=str(messages[-1]["content"]), system=str(messages[0]["content"]),
                  tool_results=[json.loads(m["content"]) for m in result["messages"] if m.get("role") == "tool"])


def runtime() -> Runtime:
    found = installed()
    assert found is not None
    return found


def stored_turns() -> list[str]:
    conn = sqlite3.connect(hermes_home() / "ctx-local" / "memory.db")
    try:
        return [row[0] for row in conn.execute("SELECT user_text FROM memories ORDER BY id")]
    finally:
        conn.close()


# ------------------------------------------------------------------ hermes memory off
def test_memory_off_stops_ctx_local_recalling_and_storing(stub: StubOpenAIServer) -> None:
    """ctx-local listed in ``ctx_plugins.memory.providers`` recalls and stores only while hermes'
    ``memory.provider`` names it; ``hermes memory off`` (hermes' own command) stops both."""
    configure_hermes(stub, "memory: {provider: ctx-local}\nctx_plugins: {memory: {providers: [file, ctx-local]}}\n")
    turn(stub, LOCKER)
    message = turn(stub, "what is my locker combination?").message
    assert RECALL_BLOCK in message and "4-8-15-16" in message  # on: recalled

    cmd_memory(argparse.Namespace(memory_command="off"))  # what `hermes memory off` runs
    assert load_config().memory.provider == ""
    hermes_plugins.discover_plugins(force=True)  # the next hermes process loads our plugin with it
    message = turn(stub, "what is my locker combination?").message
    assert message.startswith("what is my locker combination?")
    assert "4-8-15-16" not in message and RECALL_BLOCK not in message  # off: nothing recalled ...
    turn(stub, VAULT)  # ... and nothing stored

    configure_hermes(stub, "memory: {provider: ctx-local}\nctx_plugins: {memory: {providers: [file, ctx-local]}}\n")
    message = turn(stub, "what is my locker combination, and the vault code?").message
    assert "4-8-15-16" in message  # on again: the fact stored while it was on is recalled ...
    assert "2-7-1-8" not in message.split(RECALL_BLOCK, 1)[-1]  # ... the one said while it was off is not
    assert VAULT not in stored_turns() and LOCKER in stored_turns()


# ------------------------------------------------------------------ memory_enabled / user_profile_enabled
@pytest.mark.parametrize(("switch", "target", "off_file", "on_file"), [
    ("memory_enabled", "memory", "MEMORY.md", "USER.md"),
    ("user_profile_enabled", "user", "USER.md", "MEMORY.md"),
])
@pytest.mark.parametrize("enabled", [True, False], ids=["on", "off"])
def test_a_switched_off_file_is_neither_shown_nor_written(stub: StubOpenAIServer, switch: str, target: str,
                                                          off_file: str, on_file: str, enabled: bool) -> None:
    memories = hermes_home() / "memories"
    memories.mkdir(parents=True)
    (memories / "MEMORY.md").write_text("The staging port is 8443", encoding="utf-8")
    (memories / "USER.md").write_text("Dana runs the billing team", encoding="utf-8")
    seeded = {"MEMORY.md": "The staging port is 8443", "USER.md": "Dana runs the billing team"}
    other = "user" if target == "memory" else "memory"
    configure_hermes(stub, f"memory: {{memory_enabled: true, user_profile_enabled: true, {switch}: "
                           f"{str(enabled).lower()}}}\n")
    stub.tool_call("memory", {"action": "add", "target": target, "content": "Invoices close on the 25th"})
    stub.tool_call("memory", {"action": "add", "target": other, "content": "Deploys happen on Fridays"})
    turned = turn(stub, "invoices close on the 25th; we deploy on fridays")
    write, other_write = turned.tool_results

    assert (seeded[off_file] in turned.system) is enabled  # shown only while its switch is on
    assert seeded[on_file] in turned.system  # the other file is, either way
    assert other_write["success"] is True and "Deploys happen on Fridays" in (memories / on_file).read_text()
    if enabled:
        assert write["success"] is True and "Invoices close on the 25th" in (memories / off_file).read_text()
    else:
        assert write["success"] is False and "(memory is off)" not in write["error"] and target in write["error"]
        assert (memories / off_file).read_text() == seeded[off_file]  # untouched on disk


def test_without_our_file_provider_hermes_alone_writes_a_switched_off_file(stub: StubOpenAIServer) -> None:
    """The premise: hermes' own memory tool writes MEMORY.md while only USER.md is on; the refusal
    above is our ``file`` provider's."""
    configure_hermes(stub, "memory: {memory_enabled: false, user_profile_enabled: true}\n"
                           "ctx_plugins: {memory: {providers: []}}\n")
    stub.tool_call("memory", {"action": "add", "target": "memory", "content": "Invoices close on the 25th"})
    [write] = turn(stub, "invoices close on the 25th").tool_results
    assert write["success"] is True
    assert (hermes_home() / "memories" / "MEMORY.md").read_text() == "Invoices close on the 25th"


# ------------------------------------------------------------------ skip_memory
@pytest.mark.parametrize("skip_memory", [False, True])
def test_an_agent_built_with_skip_memory_gets_none_of_our_memory(stub: StubOpenAIServer, skip_memory: bool) -> None:
    """Our hooks recall from a provider that is not external (fake-local) and our ``file`` gate
    stages memory writes; hermes drives ctx-local. An agent built with ``skip_memory=True`` gets
    none of them; the same agent without it gets all three."""
    configure_hermes(stub, "memory: {provider: ctx-local}\n"
                           "ctx_plugins: {memory: {providers: [file]}, options: {file: {write_approval: stage}}}\n")
    host = runtime().host
    host.add_plugin(FakesPlugin(), "fakes")
    anonymous = SessionInfo(session_id="earlier")
    host.activate_provider("fake-local").sync_turn(Turn(session=anonymous, turn_number=1,
                                                        user_text="the staging port is 8443", assistant_text="ok"))
    ctx_local = host.activate_provider("ctx-local")
    ctx_local.sync_turn(Turn(session=anonymous, turn_number=1, user_text=LOCKER, assistant_text="Noted."))
    assert ctx_local.flush()

    stub.tool_call("memory", {"action": "add", "target": "memory", "content": "Invoices close on the 25th"})
    turned = turn(stub, "what is the staging port, and my locker combination?", skip_memory=skip_memory)
    [write], message = turned.tool_results, turned.message
    staged = hermes_home() / "memories" / "pending.json"
    if skip_memory:
        assert "8443" not in message and "4-8-15-16" not in message  # neither our hooks nor hermes recalled
        assert write["success"] is False and "not available" in write["error"]  # hermes' own answer
        assert not staged.exists()  # our gate did not stage it for later approval
    else:
        assert "- the staging port is 8443 -> ok" in message  # through our hook
        assert RECALL_BLOCK in message and "4-8-15-16" in message  # through hermes' memory manager
        assert write["success"] is True and write["staged"] and staged.exists()
    assert not (hermes_home() / "memories" / "MEMORY.md").exists()


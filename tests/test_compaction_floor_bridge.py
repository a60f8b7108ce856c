"""Red-team 4: a Bridge agent's engine knows its agent (status lines, the floor counted off the agent, hermes'
estimate corrected): Bridge.apply binds the engine after hermes' on_session_start ran on the engine it replaced."""

from __future__ import annotations

from typing import Any

import pytest
from test_bridge import CONFIG, Providers, make_agent, stub  # noqa: F401 - the fixture

run_agent = pytest.importorskip("run_agent", reason="the hermes extra is not installed")
from hermes_ctx_plugins.bridge import Bridge  # noqa: E402
from hermes_ctx_plugins.isolation import StatusEvent  # noqa: E402


def test_a_bridge_agents_engine_knows_its_agent(stub: Any) -> None:  # noqa: F811
    plan = Bridge(CONFIG, plugins=[Providers()]).deployment("support")
    agent = plan.apply(make_agent(stub, "s-rt4", "alice", skip_memory=True))
    agent.run_conversation("hello", conversation_history=[])
    engine = agent.context_compressor
    assert engine.agent() is agent
    assert engine._floor() is not None  # the floor counted off the agent, not guessed from hermes' estimate
    seen: list[tuple[str, str]] = []
    agent.status_callback = lambda kind, message: seen.append((kind, message))
    with engine._runtime.agents.acting_for(engine.agent()):
        engine._runtime.agents.on_event(StatusEvent(source="compressor:summarize", kind="blocked", message="paused"))
    assert seen == [("warn", "hermes-ctx: paused")]

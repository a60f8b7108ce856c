"""End to end inside the real hermes-agent 0.19.0: its plugin loader, its AIAgent, our stub model.

hermes discovers plugins once per process; every test writes its own ``config.yaml`` into its own
``HERMES_HOME`` and makes hermes rescan, so our ``register(ctx)`` runs again with that config.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hermes_helpers import configure_hermes, new_agent

from hermes_ctx_plugins.compression.messages import SUMMARY_KEY, same_role_neighbours
from hermes_ctx_plugins.testing import FailingPlugin, RecordingPlugin, StubOpenAIServer, make_transcript

run_agent = pytest.importorskip("run_agent", reason="the hermes extra is not installed")
from hermes_cli import plugins as hermes_plugins  # noqa: E402
from hermes_helpers import MODEL  # noqa: E402

from hermes_ctx_plugins.hermes.engine import HermesCtxEngine  # noqa: E402
from hermes_ctx_plugins.hermes.runtime import installed  # noqa: E402


def configure(stub: StubOpenAIServer, extra: str = "") -> Path:
    return configure_hermes(stub, extra)


def agent_for(stub: StubOpenAIServer) -> Any:
    return new_agent(stub)


def test_hermes_loads_our_plugin_through_its_entry_point(stub: StubOpenAIServer) -> None:
    configure(stub)
    listed = {p["name"]: p for p in hermes_plugins.get_plugin_manager().list_plugins()}
    ours = listed["hermes-ctx"]
    assert ours["enabled"] and ours["error"] is None and ours["hooks"] >= 4
    agent = agent_for(stub)
    engine = agent.context_compressor
    assert isinstance(engine, HermesCtxEngine) and engine.name == "hermes-ctx"
    assert engine is not hermes_plugins.get_plugin_context_engine()  # hermes' per-agent deep copy
    assert engine.strategy is not None and engine.strategy.name == "summarize"
    assert engine.context_length == 128_000 and engine.threshold_tokens == 96_000


def test_plugin_context_reaches_the_wire_and_a_failing_plugin_does_not_break_the_turn(
    stub: StubOpenAIServer,
) -> None:
    configure(stub)
    runtime = installed()
    assert runtime is not None
    host = runtime.host
    recorder = RecordingPlugin(context="CTX-MARKER-42")
    host.add_plugin(recorder, "recorder")
    host.add_plugin(FailingPlugin(), "always-fails")
    stub.reply("hello there")
    result = run_agent_turn(agent_for(stub), "hi, the staging port is 8443")
    assert result["final_response"] == "hello there"
    sent = stub.chat_requests[-1].body["messages"][-1]["content"]  # type: ignore[index]
    assert "the staging port is 8443" in sent and "CTX-MARKER-42" in sent
    assert "never delivered" not in sent  # the failing plugin's context is not there
    assert recorder.hooks_called()[:2] == ["session_start", "pre_request"]
    assert "turn_finalized" in recorder.hooks_called() and "post_response" in recorder.hooks_called()
    finalized = next(value for hook, value in recorder.calls if hook == "turn_finalized")
    assert finalized.user_text == "hi, the staging port is 8443" and finalized.assistant_text == "hello there"
    status = {p.name: p.status for p in host.loaded_plugins()}["always-fails"]
    assert status.startswith("failing")


def run_agent_turn(agent: Any, message: str, history: list[dict[str, Any]] | None = None) -> Any:
    return agent.run_conversation(message, conversation_history=history or [])


def test_compression_fires_at_our_threshold_through_hermes(stub: StubOpenAIServer) -> None:
    configure(stub, "ctx_plugins: {compressor: summarize}\n")
    history = make_transcript(40, turns=90, output_lines=80, system=False, images=False)
    summary = "## Goal\nFinish the migration.\n## Files\nsrc/cache.py"
    stub.responder = lambda request: "continuing with the migration" if request.get("stream") else summary
    agent = agent_for(stub)
    result = run_agent_turn(agent, "please continue", history)
    summary_requests = [r for r in stub.chat_requests if r.body and not r.body.get("stream")]
    assert len(summary_requests) == 1, "our summary request reached the stub model"
    assert "<conversation>" in summary_requests[0].body["messages"][1]["content"]  # type: ignore[index]
    assert "max_tokens" not in summary_requests[0].body  # type: ignore[operator]
    assert agent.context_compressor.compression_count == 1
    messages = result["messages"]
    assert len(messages) < len(history)
    summaries = [m for m in messages if "END OF CONTEXT SUMMARY" in str(m.get("content"))]
    assert len(summaries) == 1 and "Finish the migration" in summaries[0]["content"]
    assert result["final_response"] == "continuing with the migration"
    assert same_role_neighbours(messages) == 0
    calls = {c["id"] for m in messages for c in m.get("tool_calls") or ()}
    assert calls == {m["tool_call_id"] for m in messages if m.get("role") == "tool"}
    # hermes strips our in-process metadata before the wire
    final_request = stub.chat_requests[-1].body["messages"]  # type: ignore[index]
    assert not any(SUMMARY_KEY in m for m in final_request)
    assert any("END OF CONTEXT SUMMARY" in str(m.get("content")) for m in final_request)


def test_a_bad_config_leaves_hermes_running_without_us(stub: StubOpenAIServer,
                                                       caplog: pytest.LogCaptureFixture) -> None:
    configure(stub, "ctx_plugins: {compressor: sumarize}\n")
    assert "did you mean 'summarize'" in caplog.text
    stub.reply("still works")
    agent = agent_for(stub)
    assert not isinstance(agent.context_compressor, HermesCtxEngine)  # hermes fell back to its own
    assert run_agent_turn(agent, "hello")["final_response"] == "still works"


def test_the_hermes_cli_runs_our_plugin_and_a_third_party_one(stub: StubOpenAIServer, acme_site: Path,
                                                              tmp_path: Path) -> None:
    """``hermes -z`` as a real subprocess: hermes' entry point loads ours, ours loads acme's."""
    import os
    import subprocess
    import sys

    home = configure(stub, "ctx_plugins: {plugins: [acme]}\n")  # an installed plugin's hooks run once listed
    stub.reply("cli says hi")
    env = {**os.environ, "HERMES_HOME": str(home), "HOME": str(tmp_path),
           "PYTHONPATH": str(acme_site), "MEM0_TELEMETRY": "False"}
    hermes = Path(sys.executable).with_name("hermes")
    done = subprocess.run([str(hermes), "-z", "hello from the cli"], env=env, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "cli says hi" in done.stdout
    [chat] = stub.chat_requests
    sent = chat.body["messages"][-1]["content"]  # type: ignore[index]
    assert "hello from the cli" in sent
    assert f"[acme] request 1 to {MODEL}" in sent  # a pip-installed plugin of ours ran inside hermes
    assert all(r.headers.get("host", "").startswith("127.0.0.1") for r in stub.requests)


def test_session_end_and_reset_reach_our_providers(stub: StubOpenAIServer) -> None:
    from hermes_ctx_plugins import hookimpl
    from hermes_ctx_plugins.testing.fakes import FakeBuiltinMemory

    ended: list[str] = []

    class Ends(FakeBuiltinMemory):  # not external: hermes' memory manager drives the external one
        name = "ctx-ends"

        def on_session_end(self, session: Any, messages: Any) -> None:
            ended.append(session.session_id)

    class Plugin:
        @hookimpl
        def register_memory_providers(self, register: Any) -> None:
            register(Ends)

    configure(stub)
    runtime = installed()
    assert runtime is not None
    host = runtime.host
    host.add_plugin(Plugin(), "ends")
    host.activate_provider("ctx-ends")
    hermes_plugins.invoke_hook("on_session_reset", session_id="s-reset", platform="cli", reason="new_session")
    hermes_plugins.invoke_hook("on_session_finalize", session_id="s-exit", platform="cli",
                               reason="session_boundary")
    assert ended == ["s-reset", "s-exit"]


def test_one_agents_usage_never_reaches_a_later_agent(stub: StubOpenAIServer) -> None:
    configure(stub)
    stub.reply("big prompt", prompt_tokens=100_000)
    first = agent_for(stub)
    run_agent_turn(first, "hello")
    assert first.context_compressor.last_prompt_tokens == 100_000
    later = agent_for(stub)  # hermes deep-copies the registered engine for it
    assert later.context_compressor.last_prompt_tokens == 0
    assert not later.context_compressor.should_compress(1_000)


@pytest.mark.parametrize("strategy", ["summarize", "window", "pipeline"])
def test_a_long_agentic_turn_over_the_window_is_compacted_keeping_its_recent_rounds(
        stub: StubOpenAIServer, strategy: str) -> None:
    """A real agent resumes a history whose one agentic turn (170 tool rounds after one user message)
    is over the 128k window, and the user asks the next question. hermes' compaction through our
    engine must bring the request under the window keeping the recent rounds: no summary role fits
    right before the tail's first (assistant) message. hermes merges its summary into that message; we
    put it in the user role with the assistant's bridge before it. (Before, the tail start moved back to
    the turn's user message, keeping every round: with window nothing was compacted and the request
    stayed at ~176k tokens.)"""
    from hermes_ctx_plugins.compression.messages import BRIDGE_TEXT
    from hermes_ctx_plugins.testing import agentic_turn
    from hermes_ctx_plugins.tokens import get_counter

    history = agentic_turn(170)
    configure(stub, f"compression: {{protect_first_n: 1}}\nctx_plugins: {{compressor: {strategy}}}\n")
    stub.responder = lambda request: "ok, running the tests" if request.get("stream") else "## Goal\nmigrate"
    agent = agent_for(stub)
    agent.run_conversation("great, now run the tests", conversation_history=history)
    final = [r for r in stub.chat_requests if r.body and r.body.get("stream")][-1].body["messages"]
    assert agent.context_compressor.compression_count >= 1
    assert get_counter(MODEL).count_messages(final) < 96_000, "under the trigger after the compaction"
    kept = [m["tool_call_id"] for m in final if m.get("role") == "tool"]
    assert 10 <= len(kept) < 170, len(kept)
    assert kept == [f"c{i}" for i in range(170 - len(kept), 170)], "the most recent rounds, in order"
    assert any(m.get("content") == BRIDGE_TEXT for m in final)
    assert final[-1]["role"] == "user" and "run the tests" in str(final[-1]["content"])
    assert same_role_neighbours([m for m in final if m.get("role") != "system"]) == 0


@pytest.mark.parametrize("strategy", ["summarize", "window", "pipeline"])
def test_a_long_agentic_turn_in_progress_is_compacted_inside_the_turn_and_never_exceeds_the_window(
        stub: StubOpenAIServer, tmp_path: Path, strategy: str) -> None:
    """Default settings, five short chat turns, then one request the model answers with 85 reads of
    real ~6 KB files through hermes' own read_file tool: hermes compacts inside its tool loop, with no
    user message after the rounds. Once the turn alone is over the trigger it is compacted (its older
    reads pruned; window drops its older rounds behind a marker right before the request); the
    request stays verbatim and the latest reads whole. Before, the turn in progress was kept whole
    and the request reached 128,395 tokens, over the 128k window."""
    import random

    from hermes_ctx_plugins.tokens import get_counter

    configure(stub, f"ctx_plugins: {{compressor: {strategy}}}\n")
    rng = random.Random(1)
    words = "alpha beta gamma delta cache miss key changed retry worker request ok".split()
    files = []
    for i in range(85):
        path = tmp_path / f"mod_{i}.py"
        path.write_text("\n".join(f"# {i}.{j} " + " ".join(rng.choice(words) for _ in range(14)) for j in range(80)))
        files.append(str(path))
    stub.responder = lambda request: "## Goal\nmigrate" if not request.get("stream") else "all files read"
    for path in files:
        stub.tool_call("read_file", {"path": path})
    stub.reply("all files read, migration planned")
    history: list[dict[str, Any]] = []
    for i in range(5):
        history += [{"role": "user", "content": f"question {i} about the cache"},
                    {"role": "assistant", "content": f"answer {i}: fine"}]
    agent = new_agent(stub, toolsets=["file"])
    agent.run_conversation("Read every module and plan the migration.", conversation_history=history)
    counter = get_counter(MODEL)
    sent = [r.body["messages"] for r in stub.chat_requests if r.body and r.body.get("stream")]
    sizes = [counter.count_messages(messages) for messages in sent]
    assert agent.context_compressor.compression_count >= 1
    assert max(sizes) < 128_000, sizes
    last = [m for m in sent[-1] if m.get("role") != "system"]
    task = [i for i, m in enumerate(last) if m.get("content") == "Read every module and plan the migration."]
    assert len(task) == 1, "the request is sent verbatim, once"
    marks = [i for i, m in enumerate(last) if str(m.get("content")).startswith(("[CONTEXT COMPACTION", "[window:"))]
    assert not marks or task[0] - marks[-1] in (1, 2), "a summary (or marker) goes right before it (or its bridge)"
    reads = [m for m in last if m.get("role") == "tool"]
    assert "# 84.0 " in str(reads[-1]["content"]) and "# 83.0 " in str(reads[-2]["content"]), "the latest reads, whole"
    assert sizes[-1] < 96_000 and (strategy != "window" or len(reads) < 85)
    assert same_role_neighbours(last) == 0

"""Conformance with hermes-agent 0.19.0's context-engine contract: our engine, and hermes' own
built-in compressor as the control, through the same real hermes code paths.

Every parametrised test runs the SAME assertions against ``ours`` (``context.engine: hermes-ctx``)
and ``control`` (``context.engine: compressor``), so a divergence shows as ours-fails /
control-passes. The paths are hermes' own: plugin discovery, ``AIAgent`` construction (its
start-up line), ``_check_compression_model_feasibility``, ``_compress_context`` (automatic and
``force``), the cool-down refresh hermes does before every automatic compaction
(``get_active_compression_failure_cooldown(refresh=True)``, called through the class as hermes
does), its preflight in ``run_conversation``, the gateway's ``/compress`` preflight
(``has_content_to_compress``) and what hermes tells the user after a compaction whose summary
failed (its warnings, and ``/compress``'s feedback from ``summarize_manual_compression``).
Everything talks to the loopback stub model.
"""

from __future__ import annotations

import inspect
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from hermes_helpers import MODEL, configure_hermes, new_agent
from hypothesis import given
from hypothesis import strategies as st

from hermes_ctx_plugins.testing import StubOpenAIServer

run_agent = pytest.importorskip("run_agent", reason="the hermes extra is not installed")
from hermes_state import SessionDB  # noqa: E402

from hermes_ctx_plugins.hermes.engine import HermesCtxEngine, share_of  # noqa: E402

OURS, PIPELINE, CONTROL = "ours", "ours-pipeline", "control"
#: what each side writes into config.yaml: our engine (its default strategy, or the pipeline) or hermes' own
SIDE_YAML = {OURS: "", PIPELINE: "ctx_plugins: {compressor: pipeline}\n", CONTROL: "context: {engine: compressor}\n"}
WINDOW = 128_000  # hermes_helpers' model: under 512K, so both engines trigger at the 0.75 floor


@pytest.fixture
def session_db() -> Iterator[SessionDB]:
    """hermes' session database (``$HERMES_HOME/state.db``), where the built-in keeps its cool-down."""
    db = SessionDB()
    yield db
    db.close()


def configure(stub: StubOpenAIServer, side: str, extra: str = "") -> None:
    configure_hermes(stub, SIDE_YAML[side] + extra, engine=side != CONTROL)


def engine_of(agent: Any, side: str) -> Any:
    engine = agent.context_compressor
    assert isinstance(engine, HermesCtxEngine) == (side != CONTROL), f"{side} runs {type(engine).__name__}"
    return engine


def cooldown(engine: Any) -> dict[str, Any] | None:
    """The cool-down exactly as hermes reads it before every automatic compaction
    (``conversation_compression._refresh_persisted_compression_guards``: through the class,
    ``refresh=True``), except that an exception is not swallowed here."""
    method = type(engine).get_active_compression_failure_cooldown
    result: dict[str, Any] | None = method(engine, refresh=True)
    return result


def conversation(turns: int, words: int) -> list[dict[str, Any]]:
    """``turns`` user/assistant exchanges of ``words`` words each (no system prompt, as hermes passes)."""
    history: list[dict[str, Any]] = []
    for i in range(turns):
        history += [{"role": "user", "content": f"question {i}: " + "word " * words},
                    {"role": "assistant", "content": f"answer {i}: " + "text " * words}]
    return history


def summaries_answered(by: Callable[[dict[str, Any]], str], stub: StubOpenAIServer) -> None:
    """Streamed chat turns get "ok"; summary requests (hermes' and ours are plain JSON) get ``by``."""
    stub.responder = lambda request: "ok" if request.get("stream") else by(request)


# ------------------------------------------------------------------ the calls hermes makes


#: every engine call hermes 0.19.0 makes that passes keywords or is optional, as its call sites pass
#: them: (method, args, kwargs, hermes calls it only when the engine has it)
HERMES_CALLS: list[tuple[str, tuple[Any, ...], dict[str, Any], bool]] = [
    # agent_init.py, agent_runtime_helpers.py, chat_completion_helpers.py, conversation_loop.py, run_agent.py
    ("update_model", (), {"model": MODEL, "context_length": WINDOW, "base_url": "http://127.0.0.1:9/v1",
                          "api_key": "k", "provider": "custom", "api_mode": "chat_completions"}, False),
    # agent_init.py at start-up; conversation_compression.py at a compaction boundary; run_agent.py on a switch
    ("on_session_start", ("s1",), {"hermes_home": "/tmp/h", "platform": "cli", "model": MODEL,
                                   "context_length": WINDOW, "conversation_id": None}, False),
    ("on_session_start", ("s2",), {"boundary_reason": "compression", "old_session_id": "s1",
                                   "platform": "cli", "conversation_id": None}, False),
    ("on_session_start", ("s3",), {"old_session_id": "s2", "carry_over_context": True, "platform": "cli",
                                   "model": MODEL, "context_length": WINDOW}, False),
    ("on_session_end", ("s1", []), {}, False),  # run_agent.py commit_memory_session / shutdown_memory_provider
    ("on_session_reset", (), {}, False),
    ("should_compress", (1000,), {}, False),  # turn_context.py, conversation_loop.py
    ("should_defer_preflight_to_real_usage", (1000,), {}, False),
    ("has_content_to_compress", ([],), {}, False),  # gateway/slash_commands.py
    ("compress", ([],), {"current_tokens": 10, "focus_topic": "db", "force": True, "memory_context": "m"}, False),
    ("get_active_compression_failure_cooldown", (), {}, False),  # turn_context.py, conversation_loop.py
    ("get_active_compression_failure_cooldown", (), {"refresh": True}, True),  # conversation_compression.py
    ("update_from_response", ({"prompt_tokens": 1},), {}, False),
    ("handle_tool_call", ("t", {}), {"messages": []}, False),  # tool_executor.py
    ("get_status", (), {}, False),
    ("bind_session_state", (), {"session_db": None, "session_id": "s1"}, True),  # agent_init.py, run_agent.py
    ("record_completed_compaction", (), {"used_fallback": False}, True),  # conversation_compression.py
]


@pytest.mark.parametrize("side", [OURS, CONTROL])
def test_the_engine_accepts_every_call_hermes_makes(stub: StubOpenAIServer, side: str) -> None:
    configure(stub, side)
    engine = engine_of(new_agent(stub), side)
    refused = []
    for method, args, kwargs, optional in HERMES_CALLS:
        function = getattr(engine, method, None)
        if function is None:
            if not optional:
                refused.append(f"{method}: missing")
            continue
        try:
            inspect.signature(function).bind(*args, **kwargs)
        except TypeError as exc:
            refused.append(f"{method}(**{sorted(kwargs)}): {exc}")
    assert not refused, refused
    # and the calls that only read really answer, the way hermes makes them
    assert cooldown(engine) is None
    assert engine.should_defer_preflight_to_real_usage(1000) is False


# ------------------------------------------------------------------ the trigger hermes sees


@pytest.mark.parametrize("side", [OURS, CONTROL])
def test_the_threshold_hermes_reports_is_the_one_the_engine_acts_on(
        stub: StubOpenAIServer, side: str, capsys: pytest.CaptureFixture[str]) -> None:
    configure(stub, side)  # compression.threshold is hermes' default 0.5
    agent = run_agent.AIAgent(base_url=stub.base_url, api_key="k", provider="custom", model=MODEL,
                              skip_context_files=True, enabled_toolsets=[])  # not quiet: the start-up lines
    assert "compress at 75% = 96,000" in capsys.readouterr().out, "hermes' start-up line: the 0.75 floor"
    engine = engine_of(agent, side)

    def check(window: int, trigger: int) -> None:
        assert (engine.context_length, engine.threshold_tokens) == (window, trigger)
        assert int(engine.context_length * engine.threshold_percent) == engine.threshold_tokens
        assert not engine.should_compress(trigger - 1)
        assert engine.should_compress(trigger)

    check(WINDOW, 96_000)
    # /model to a 1M window, the way hermes tells the engine: no floor there, the configured 0.5
    engine.update_model(model=MODEL, context_length=1_000_000, base_url=stub.base_url, api_key="k",
                        provider="custom", api_mode="chat_completions")
    check(1_000_000, 500_000)
    assert engine.threshold_percent == 0.5


AUX_80K = "auxiliary: {compression: {context_length: 80000}}\n"  # no probe: hermes takes it from config


@pytest.mark.parametrize("side", [OURS, CONTROL])
def test_a_threshold_hermes_lowers_for_a_small_summary_model_is_honoured(stub: StubOpenAIServer,
                                                                         side: str) -> None:
    configure(stub, side, AUX_80K)
    agent = new_agent(stub)
    engine = engine_of(agent, side)
    assert engine.threshold_tokens == 96_000
    agent._check_compression_model_feasibility()
    assert "Auto-lowered this session's threshold to 80,000 tokens" in agent._compression_warning
    assert engine.threshold_tokens == 80_000
    assert int(engine.context_length * engine.threshold_percent) == 80_000
    assert not engine.should_compress(79_999)
    assert engine.should_compress(90_000), "hermes lowered the trigger below 90K: it must fire"


def test_our_lowered_threshold_holds_across_a_model_switch(stub: StubOpenAIServer) -> None:
    """On purpose unlike the built-in (which re-derives 0.625 of the new window, 625,000 on a 1M
    model): the summary model's window does not grow with the main model's."""
    configure(stub, OURS, AUX_80K)
    agent = new_agent(stub)
    engine = engine_of(agent, OURS)
    agent._check_compression_model_feasibility()
    engine.update_model(model=MODEL, context_length=1_000_000, base_url=stub.base_url, api_key="k",
                        provider="custom", api_mode="chat_completions")
    assert engine.threshold_tokens == 80_000
    assert int(engine.context_length * engine.threshold_percent) == 80_000
    assert engine.should_compress(80_000) and not engine.should_compress(79_999)
    # a fresh agent's copy starts from the configured trigger: hermes' limit was this agent's
    fresh = engine_of(new_agent(stub), OURS)
    assert fresh.threshold_tokens == 96_000


@given(window=st.integers(1, 10_000_000), data=st.data())
def test_the_reported_share_gives_back_the_trigger_exactly(window: int, data: st.DataObject) -> None:
    trigger = data.draw(st.integers(1, window))
    assert int(window * share_of(trigger, window)) == trigger


# ------------------------------------------------------------------ compaction


@pytest.mark.parametrize("side", [OURS, CONTROL])
def test_a_forced_compaction_of_a_short_conversation_compacts(stub: StubOpenAIServer, side: str) -> None:
    """A manual ``/compress`` (``force=True``) on ten messages, with a middle to compact between the
    protected head and the latest turn: the gateway's preflight lets it through, so it must compact."""
    configure(stub, side)
    agent = new_agent(stub)
    summaries_answered(lambda _: "## Goal\nAnswer the questions.", stub)
    history = conversation(5, 50)
    assert engine_of(agent, side).has_content_to_compress(history), "the gateway's /compress preflight"
    compressed, _ = agent._compress_context(list(history), None, force=True)
    assert len(compressed) < len(history), f"/compress left {len(history)} messages as {len(compressed)}"
    assert compressed[-1] == history[-1], "the latest turn is kept verbatim"


@pytest.mark.parametrize("side", [OURS, PIPELINE, CONTROL])
def test_hermes_sees_a_summary_failure_cooldown_and_waits_it_out(stub: StubOpenAIServer, session_db: SessionDB,
                                                                 side: str) -> None:
    """After an automatic compaction whose summary failed, hermes' refresh reports the cool-down and
    its preflight does not compact again. hermes' defaults: compacting in place, with a session
    database (where the built-in keeps its cool-down past the boundary). The pipeline reports its
    summarize step's cool-down."""
    configure(stub, side)
    agent = new_agent(stub, session_db=session_db)
    engine = engine_of(agent, side)
    stub.reply("hello")
    agent.run_conversation("hi", conversation_history=[])  # the session's row, where the built-in keeps it
    assert cooldown(engine) is None

    summaries_answered(lambda _: "", stub)  # an empty summary: a bad answer, for either engine
    history = conversation(30, 1500)  # ~113K tokens by hermes' estimate: above the 96K trigger
    compressed, _ = agent._compress_context(list(history), None)
    assert len(compressed) < len(history), "compacted with a fallback summary"
    state = cooldown(engine)
    assert state is not None, "hermes' refresh sees the cool-down"
    assert state["remaining_seconds"] > 0 and state["cooldown_until"] > time.time()
    assert state["error"], "hermes logs why"

    assert not engine.should_compress(200_000), "hermes' check after a tool call asks only this"

    compactions, requests = engine.compression_count, len(stub.chat_requests)
    result = agent.run_conversation("go on", conversation_history=list(history))
    assert engine.compression_count == compactions, "no automatic compaction during the cool-down"
    assert len(result["messages"]) == len(history) + 2
    assert [bool(r.body.get("stream")) for r in stub.chat_requests[requests:]] == [True], "only the turn itself"


@pytest.mark.parametrize("side", [OURS, PIPELINE, CONTROL])
def test_when_the_gateway_preflight_finds_nothing_a_forced_compaction_changes_nothing(
        stub: StubOpenAIServer, side: str) -> None:
    """The gateway's ``/compress`` answers "nothing to compress yet" without compacting when
    ``has_content_to_compress`` says False: that answer must be true (a forced compaction would
    indeed change nothing). And a conversation with a middle to compact gets past it."""
    configure(stub, side)
    summaries_answered(lambda _: "## Goal\nAnswer the questions.", stub)
    agent = new_agent(stub)
    engine = engine_of(agent, side)
    said_nothing = 0
    for size in range(1, 13):
        history = conversation(6, 50)[:size]
        if engine.has_content_to_compress(history):
            continue
        said_nothing += 1
        compressed, _ = agent._compress_context(list(history), None, force=True)
        assert compressed == history, f"the preflight said nothing to compress, /compress changed {size} messages"
    assert said_nothing < 12
    assert engine.has_content_to_compress(conversation(6, 50))


def test_our_gateway_preflight_agrees_with_our_forced_compaction(stub: StubOpenAIServer) -> None:
    """On purpose stricter than the built-in, whose preflight lets four to seven messages through to a
    ``/compress`` that then changes nothing ("No changes from compression"): ours answers exactly
    whether a forced compaction compacts, and says why not in the log."""
    configure(stub, OURS)
    summaries_answered(lambda _: "## Goal\nAnswer the questions.", stub)
    agent = new_agent(stub)
    engine = engine_of(agent, OURS)
    for size in range(1, 13):
        history = conversation(6, 50)[:size]
        expected = engine.has_content_to_compress(history)
        compressed, _ = agent._compress_context(list(history), None, force=True)
        assert (len(compressed) < len(history)) == expected, f"{size} messages"
        assert compressed[-1] == history[-1]


def warnings_of(stub: StubOpenAIServer, **kwargs: Any) -> tuple[Any, list[str]]:
    """An agent, and the warnings hermes shows its user (``_emit_warning``'s status callback)."""
    shown: list[str] = []
    agent = new_agent(stub, status_callback=lambda kind, text: shown.append(text) if kind == "warn" else None,
                      **kwargs)
    return agent, shown


@pytest.mark.parametrize("side", [OURS, PIPELINE, CONTROL])
def test_the_user_is_told_when_the_summary_failed(stub: StubOpenAIServer, side: str) -> None:
    """An automatic compaction whose summary model answers nothing compacts with a fallback, and hermes
    warns the user; a ``/compress`` the same way reports "Compressed with fallback" and how many
    messages went."""
    from agent.manual_compression_feedback import summarize_manual_compression

    configure(stub, side)
    summaries_answered(lambda _: "", stub)  # an empty summary: a bad answer, for either engine
    agent, shown = warnings_of(stub)
    history = conversation(30, 1500)
    compressed, _ = agent._compress_context(list(history), None)
    assert len(compressed) < len(history)
    [warning] = [w for w in shown if w.startswith("⚠ Compression summary failed: ")]
    assert "empty" in warning and warning.endswith("Inserted a fallback context marker.")

    agent, shown = warnings_of(stub)
    history = conversation(12, 200)
    compressed, _ = agent._compress_context(list(history), None, force=True)
    feedback = summarize_manual_compression(history, compressed, 10_000, 5_000,
                                            compression_state=engine_of(agent, side))
    assert feedback["headline"] == f"Compressed with fallback: {len(history)} → {len(compressed)} messages"
    assert feedback["note"].startswith("Summary generation failed; Hermes used limited fallback context and "
                                       "removed "), feedback["note"]
    removed = int(feedback["note"].split("removed ")[1].split(" ")[0])
    assert removed >= len(history) - len(compressed) > 0
    assert any(w.startswith("⚠ Compression summary failed: ") for w in shown)


@pytest.mark.parametrize("side", [OURS, PIPELINE, CONTROL])
def test_the_user_is_told_when_a_failed_summary_aborts_the_compaction(stub: StubOpenAIServer, side: str) -> None:
    """``compression.abort_on_summary_failure``: the conversation stays as it was, and hermes says so,
    after an automatic compaction and after ``/compress``."""
    from agent.manual_compression_feedback import summarize_manual_compression

    configure(stub, side, "compression: {abort_on_summary_failure: true}\n")
    summaries_answered(lambda _: "", stub)
    agent, shown = warnings_of(stub)
    history = conversation(30, 1500)
    compressed, _ = agent._compress_context(list(history), None)
    assert compressed == history
    [warning] = [w for w in shown if w.startswith("⚠ Compression aborted: ")]
    assert "No messages were dropped" in warning

    agent, shown = warnings_of(stub)
    history = conversation(12, 200)
    compressed, _ = agent._compress_context(list(history), None, force=True)
    assert compressed == history
    feedback = summarize_manual_compression(history, compressed, 10_000, 10_000,
                                            compression_state=engine_of(agent, side))
    assert feedback["headline"] == f"Compression aborted: {len(history)} messages preserved"
    assert feedback["note"].startswith("Summary generation failed; no messages were removed. Reason: ")


def test_our_compress_says_why_when_the_fallback_would_not_be_smaller(stub: StubOpenAIServer) -> None:
    """On purpose unlike the built-in, whose static fallback replaces a short middle even when it costs
    more: ours keeps the conversation, and hermes reports the summary failure as an abort ("Compression
    aborted … Summary generation failed; no messages were removed. Reason: …"), not a silent no-op."""
    from agent.manual_compression_feedback import summarize_manual_compression

    configure(stub, OURS)
    summaries_answered(lambda _: "", stub)
    agent, shown = warnings_of(stub)
    history = conversation(6, 60)
    compressed, _ = agent._compress_context(list(history), None, force=True)
    assert compressed == history
    feedback = summarize_manual_compression(history, compressed, 1_000, 1_000,
                                            compression_state=engine_of(agent, OURS))
    assert feedback["aborted"] and "empty answer" in feedback["note"]
    assert any(w.startswith("⚠ Compression aborted: ") for w in shown)


def test_our_compress_feedback_survives_the_session_end_inside_the_compaction(stub: StubOpenAIServer,
                                                                            session_db: SessionDB) -> None:
    """On purpose unlike the built-in: with hermes' session database, ``_compress_context`` calls the
    engine's ``on_session_end`` (``commit_memory_session``) before ``/compress`` reads its feedback; the
    built-in has forgotten its fallback by then and reports a plain "Compressed", ours still says
    "Compressed with fallback"."""
    from agent.manual_compression_feedback import summarize_manual_compression

    configure(stub, OURS)
    agent = new_agent(stub, session_db=session_db)
    stub.reply("hello")
    agent.run_conversation("hi", conversation_history=[])
    summaries_answered(lambda _: "", stub)
    history = conversation(12, 200)
    compressed, _ = agent._compress_context(list(history), None, force=True)
    feedback = summarize_manual_compression(history, compressed, 10_000, 5_000,
                                            compression_state=engine_of(agent, OURS))
    assert feedback["fallback_used"] and feedback["headline"].startswith("Compressed with fallback: ")


def test_our_cooldown_survives_a_compaction_that_rotates_the_session(stub: StubOpenAIServer,
                                                                    session_db: SessionDB) -> None:
    """On purpose unlike the built-in, which forgets it when hermes rotates to a child session
    (``on_session_end`` inside the compaction): a failing summary model is not cured by a compaction
    boundary. ``/new`` (``on_session_reset``) does start clean, as with the built-in."""
    configure(stub, OURS, "compression: {in_place: false}\n")  # compaction rotates to a child session
    agent = new_agent(stub, session_db=session_db)
    engine = engine_of(agent, OURS)
    stub.reply("hello")
    agent.run_conversation("hi", conversation_history=[])
    summaries_answered(lambda _: "", stub)
    first_session = agent.session_id
    agent._compress_context(conversation(30, 1500), None)
    assert agent.session_id != first_session, "hermes rotated (and called on_session_end on the way)"
    assert cooldown(engine) is not None
    agent.reset_session_state()  # what /new does to the engine
    assert cooldown(engine) is None

"""``prune``, ``window`` and ``pipeline``, the prune-only modes of ``summarize``, status events."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

import pytest

from hermes_ctx_plugins import ConfigError, StatusEvent, UnknownPluginError, Usage, load_host
from hermes_ctx_plugins.compression.base import Cooldown
from hermes_ctx_plugins.compression.messages import SUMMARY_KEY, TAIL_COUNT_KEY, role, text_of
from hermes_ctx_plugins.compression.prune import DUPLICATE_PLACEHOLDER
from hermes_ctx_plugins.compression.window import DROPPED_KEY
from hermes_ctx_plugins.testing import StubOpenAIServer, make_transcript
from hermes_ctx_plugins.tokens import get_counter


def host_for(name: str, *, compression: dict[str, Any] | None = None, options: dict[str, Any] | None = None,
             model: dict[str, Any] | None = None, events: list[StatusEvent] | None = None) -> Any:
    """A host running strategy ``name`` alone: the archive (a host feature, tests/test_archive.py) is off."""
    config = {"model": model or {"default": "gpt-4o", "context_length": 128_000},
              "compression": compression or {},
              "ctx_plugins": {"compressor": name, "options": options or {}, "archive": {"enabled": False}}}
    return load_host(config, status_callback=events.append if events is not None else None)


@pytest.fixture
def server() -> Iterator[StubOpenAIServer]:
    with StubOpenAIServer(model="gpt-4o", responder=lambda request: "## Goal\nKeep going.") as stub:
        yield stub


# ---------------------------------------------------------------- prune


def test_prune_only_shrinks_old_tool_output_and_drops_nothing() -> None:
    messages = make_transcript(21, turns=40, output_lines=80)
    host = host_for("prune")
    result = host.compress(messages)
    assert result.compressed
    assert len(result.messages) == len(messages)
    assert [role(m) for m in result.messages] == [role(m) for m in messages]
    assert result.tokens_after < 0.6 * result.tokens_before
    changed = [m for m, o in zip(result.messages, messages, strict=True) if m is not o]
    assert changed and all(role(m) in ("tool", "assistant") for m in changed)
    one_liners = [text_of(m["content"]) for m in changed if role(m) == "tool"]
    assert any(t.startswith("[terminal] ran `make ") and "lines output" in t for t in one_liners)
    assert any(t == DUPLICATE_PLACEHOLDER for t in one_liners)
    assert {id(m) for m in result.removed} == {id(o) for m, o in zip(result.messages, messages, strict=True)
                                               if m is not o}


def test_prune_never_calls_a_model(server: StubOpenAIServer) -> None:
    host = host_for("prune", model={"default": "gpt-4o", "context_length": 128_000,
                                     "base_url": server.base_url})
    host.compress(make_transcript(2, turns=30))
    assert server.chat_requests == []


# ---------------------------------------------------------------- window


def test_window_drops_oldest_turns_behind_a_marker() -> None:
    messages = make_transcript(22, turns=60, output_lines=80)
    host = host_for("window", options={"window": {"budget_ratio": 0.3}})
    result = host.compress(messages)
    assert result.compressed
    budget = 0.3 * 96_000
    assert result.tokens_after <= budget + 2_000  # the last turn can exceed it; it is kept whole
    markers = [m for m in result.messages if m.get(DROPPED_KEY)]
    assert len(markers) == 1
    text = markers[0]["content"]
    assert text.startswith("[window: ") and "tools used: " in text and "files mentioned: src/" in text
    assert markers[0][DROPPED_KEY] == len(result.removed)
    assert result.messages[0] == messages[0]
    # the dropped messages are exactly the ones missing, in order
    kept_ids = {id(m) for m in result.messages}
    assert [m for m in messages if id(m) not in kept_ids] == list(result.removed)


def test_window_keeps_counting_across_compactions() -> None:
    host = host_for("window", options={"window": {"budget_ratio": 0.3}})
    first = host.compress(make_transcript(23, turns=50, output_lines=80))
    grown = [*first.messages, *make_transcript(24, turns=40, system=False, output_lines=80)]
    second = host.compress(grown)
    [marker] = [m for m in second.messages if m.get(DROPPED_KEY)]
    assert marker[DROPPED_KEY] == len(first.removed) + len(second.removed) - 1  # the old marker itself


def test_messages_added_after_hermes_dropped_some_are_something_new() -> None:
    """A red-team pass in real hermes: after a compaction hermes drops tool results whose call is gone; the summary
    still counted them among the messages after it, so the next question and answer were not "new", and a forced
    /compress said "nothing new since the last compaction" until as many came as hermes had dropped."""
    host = host_for("window", options={"window": {"budget_ratio": 0.3}})
    messages = make_transcript(22, turns=60, output_lines=80)
    orphans = [{"role": "tool", "tool_call_id": f"gone-{n}", "content": "stale"} for n in range(3)]
    messages[-1:-1] = orphans  # kept in the tail by the compaction, as hermes held them
    compacted = host.compress(messages, force=True).messages
    assert host.compressor.nothing_to_compress(compacted) == "nothing new since the last compaction"
    cleaned = [m for m in compacted if not str(m.get("tool_call_id", "")).startswith("gone-")]  # as hermes does
    assert host.compressor.nothing_to_compress(cleaned) == "nothing new since the last compaction"
    grown = [*cleaned, {"role": "user", "content": "and the staging port?"}, {"role": "assistant", "content": "8443"}]
    assert host.compressor.nothing_to_compress(grown) is None


# ---------------------------------------------------------------- pipeline


def test_pipeline_stops_once_the_budget_is_met(server: StubOpenAIServer) -> None:
    model = {"default": "gpt-4o", "context_length": 128_000, "base_url": server.base_url}
    host = host_for("pipeline", model=model, options={"pipeline": {"steps": ["prune", "summarize"],
                                                                    "budget_ratio": 0.9}})
    messages = make_transcript(25, turns=40, output_lines=80)
    result = host.compress(messages)
    assert result.compressed and server.chat_requests == []  # prune alone met a generous budget
    assert all(n.startswith("prune: ") for n in result.notes)

    tight = host_for("pipeline", model=model, options={"pipeline": {"steps": ["prune", "summarize"],
                                                                     "budget_ratio": 0.05}})
    result = tight.compress(messages)
    assert len(server.chat_requests) == 1  # prune was not enough: summarize ran
    assert [n.split(":")[0] for n in result.notes] == ["prune", "summarize"]
    assert any(m.get(SUMMARY_KEY) for m in result.messages)
    # what is archived are originals, never an intermediate pruned copy
    original_ids = {id(m) for m in messages}
    assert all(id(m) in original_ids for m in result.removed)


@pytest.mark.parametrize("abort_on_failure", [False, True])
@pytest.mark.parametrize("steps", [["prune", "summarize"], ["summarize", "window"]])
def test_a_pipeline_whose_summary_step_aborts_keeps_what_its_other_steps_do(
        server: StubOpenAIServer, abort_on_failure: bool, steps: list[str]) -> None:
    """The summary model refuses the key (401: the summarize step aborts, leaving its input alone).
    The step is skipped: what the pipeline's prune step reclaimed stands, and a window step after it
    still runs; the failure is reported as a fallback (hermes then tells the user). Before, the whole
    pipeline reported unchanged and a history over the window stayed over it. Only
    ``abort_on_summary_failure`` (no compaction without a summary) leaves the messages as they were."""
    model = {"default": "gpt-4o", "context_length": 128_000, "base_url": server.base_url}
    host = host_for("pipeline", model=model, compression={"abort_on_summary_failure": abort_on_failure},
                    options={"pipeline": {"steps": steps, "budget_ratio": 0.05}})
    messages = make_transcript(25, turns=40, output_lines=80)
    server.fail(status=401, times=10)
    result = host.compress(copy.deepcopy(messages))
    assert server.chat_requests, "the summary model was asked"
    if abort_on_failure:
        assert not result.compressed and result.aborted and result.messages == messages
        return
    assert result.compressed and not result.aborted, result.notes
    assert result.used_fallback and "401" in result.summary_error
    assert result.tokens_after < 0.5 * result.tokens_before
    assert any("summarize: skipped, its summary failed" in n for n in result.notes)
    if steps[0] == "prune":  # pruned: every message is still there, none is a summary
        assert len(result.messages) == len(messages) and not any(m.get(SUMMARY_KEY) for m in result.messages)
    else:  # the window dropped the middle behind its marker
        assert any(m.get(DROPPED_KEY) for m in result.messages)


def test_pipeline_with_a_third_party_step() -> None:
    from hermes_ctx_plugins.testing import FakesPlugin

    config = {"ctx_plugins": {"compressor": "pipeline", "options": {"pipeline": {"steps": ["fake"]}}}}
    host = load_host(config, plugins=[FakesPlugin()])
    # what the fake drops (m1-m5) says more than the pointer to it costs: a compaction that the pointer would make
    # larger keeps no pointer (the archive's index never grows the prompt)
    said = [f"m{i}" + (" and what was said then, at some length" * 8 if 1 <= i <= 5 else "") for i in range(10)]
    result = host.compress([{"role": "user", "content": text} for text in said])
    assert result.compressed
    texts = [text_of(m["content"]) for m in result.messages]
    assert texts[:1] + texts[2:] == ["m0", "m6", "m7", "m8", "m9"]
    # the fake's own marker, carrying the host's pointer into the archive
    assert texts[1].startswith("[5 earlier messages dropped]") and "5 earlier messages were archived" in texts[1]


def test_a_pipeline_built_without_a_host_gives_its_steps_their_options() -> None:
    from hermes_ctx_plugins import load_config
    from hermes_ctx_plugins.compression.pipeline import PipelineStrategy

    config = load_config({"ctx_plugins": {"options": {"summarize": {"redact_secrets": False},
                                                      "prune": {"min_prune_chars": 900}}}})
    prune, summarize = PipelineStrategy(config=config).steps
    assert prune.options.min_prune_chars == 900 and summarize.options.redact_secrets is False
    assert PipelineStrategy().steps[1].options.redact_secrets is True  # the default


@pytest.mark.parametrize(
    ("steps", "error"),
    [([], "at least one step"), (["pipeline"], "cannot contain itself")],
)
def test_pipeline_step_errors(steps: list[str], error: str) -> None:
    with pytest.raises(ConfigError, match=error):
        host_for("pipeline", options={"pipeline": {"steps": steps}})


def test_pipeline_unknown_step_lists_the_strategies() -> None:
    """A step's name is checked when the host is built: it was resolved at the first compaction, which then
    failed and let the default strategy compact instead, seen only in the plugin's status (session 16)."""
    with pytest.raises(ConfigError, match=r"ctx_plugins\.options\.pipeline\.steps") as refused:
        host_for("pipeline", options={"pipeline": {"steps": ["prune", "sumarize"]}})
    assert "unknown compressor strategy 'sumarize'" in str(refused.value)
    assert "did you mean 'summarize'" in str(refused.value) and "available: pipeline, prune" in str(refused.value)


def test_pipeline_reports_its_steps_cooldown_and_waits_it_out(server: StubOpenAIServer) -> None:
    """hermes asks the engine for the cool-down before it compacts on its own, and after a tool call
    only asks ``should_compress``: both see the summarize step's, and ``/new`` clears it."""
    events: list[StatusEvent] = []
    model = {"default": "gpt-4o", "context_length": 128_000, "base_url": server.base_url}
    host = host_for("pipeline", model=model, compression={"max_attempts": 1}, events=events,
                    options={"pipeline": {"steps": ["prune", "summarize"], "budget_ratio": 0.05}})
    pipeline = host.compressor
    summarize = pipeline.steps[1]
    summarize.guard.clock = summarize.clock = lambda: 1000.0  # time stands still
    assert pipeline.failure_cooldown() is None and host.should_compress(200_000)
    server.fail(status=503, message="overloaded")
    result = host.compress(make_transcript(25, turns=40, output_lines=80))
    assert result.compressed and result.used_fallback and "overloaded" in result.summary_error

    cooldown = pipeline.failure_cooldown()
    assert cooldown is not None and cooldown.remaining_seconds == 60 and "overloaded" in cooldown.error
    assert not host.should_compress(200_000) and not host.should_compress(200_000)
    [paused] = [e for e in events if e.kind == "blocked"]
    assert paused.source == "compressor:pipeline" and "summarize: summary model cooling down" in paused.message
    assert host.should_compress(10_000) is False, "under the trigger: nothing to say"

    pipeline.reset_session()
    assert pipeline.failure_cooldown() is None and host.should_compress(200_000)


def test_pipeline_reports_the_longest_cooldown_of_its_steps() -> None:
    pipeline = host_for("pipeline", options={"pipeline": {"steps": ["summarize", "summarize"]}}).compressor
    short, long = pipeline.steps
    assert pipeline.failure_cooldown() is None
    for step in pipeline.steps:
        step.guard.clock = lambda: 1000.0  # time stands still
    short.guard.record_summary_failure("bad_response")  # 30 s
    long.guard.record_summary_failure("unconfigured")  # 600 s
    long.last_error = "no summary model configured"
    assert pipeline.failure_cooldown() == Cooldown(remaining_seconds=600, error="no summary model configured")


def test_pipeline_steps_act_within_the_pipelines_settings() -> None:
    """hermes lowers the trigger on the engine's strategy (its summary model's window): the steps'
    budgets follow, whether they were built before or after."""
    import dataclasses

    pipeline = host_for("pipeline").compressor
    assert [step.threshold_tokens for step in pipeline.steps] == [96_000, 96_000]
    pipeline.settings = dataclasses.replace(pipeline.settings, threshold_tokens=80_000)
    assert pipeline.threshold_tokens == 80_000
    assert [step.threshold_tokens for step in pipeline.steps] == [80_000, 80_000]
    fresh = host_for("pipeline").compressor
    fresh.settings = dataclasses.replace(fresh.settings, threshold_tokens=70_000)
    assert [step.threshold_tokens for step in fresh.steps] == [70_000, 70_000]


def test_a_strategy_states_no_cooldown_pause_or_reason_by_default() -> None:
    from hermes_ctx_plugins.testing import FakesPlugin

    host = load_host({"ctx_plugins": {"compressor": "fake"}}, plugins=[FakesPlugin()])
    fake = host.compressor
    assert fake.failure_cooldown() is None and fake.pause_reason() is None
    fake.reset_session()
    assert fake.nothing_to_compress([]) == "the conversation is empty"
    messages = [{"role": "user", "content": f"m{i}"} for i in range(10)]
    assert fake.nothing_to_compress(messages) is None, "the strategy is asked"
    summarised = [{"role": "user", "content": "summary", SUMMARY_KEY: True, TAIL_COUNT_KEY: 1}, messages[-1]]
    assert fake.nothing_to_compress(summarised) == "nothing new since the last compaction"


# ---------------------------------------------------------------- summarize: prune-only modes


def test_proactive_prune_below_the_threshold(server: StubOpenAIServer) -> None:
    model = {"default": "gpt-4o", "context_length": 1_000_000, "base_url": server.base_url}
    host = host_for("summarize", model=model, compression={
        "proactive_prune_tokens": 20_000, "proactive_prune_min_result_chars": 1_000,
        "proactive_prune_min_reclaim_tokens": 500})
    messages = make_transcript(26, turns=30, output_lines=100)
    tokens = get_counter("gpt-4o").count_messages(messages)
    assert 20_000 < tokens < host.compressor.threshold_tokens
    assert host.should_compress(tokens)
    result = host.compress(messages)
    assert result.compressed and result.tokens_after < tokens
    assert server.chat_requests == []  # stage 1 only, no model call
    assert not any(m.get(SUMMARY_KEY) for m in result.messages)
    assert not host.should_compress(10_000)


def test_proactive_prune_skips_when_too_little_is_reclaimed() -> None:
    host = host_for("summarize", model={"default": "gpt-4o", "context_length": 1_000_000},
                    compression={"proactive_prune_tokens": 1_000, "proactive_prune_min_reclaim_tokens": 10**7})
    messages = make_transcript(27, turns=10)
    assert host.should_compress(5_000)
    assert not host.compress(messages).compressed


def test_idle_compaction_after_a_long_pause() -> None:
    host = host_for("summarize", model={"default": "gpt-4o", "context_length": 128_000},
                    compression={"idle_compact_after_seconds": 600})
    strategy = host.compressor
    clock = [0.0]
    strategy.clock = lambda: clock[0]
    strategy.guard.clock = strategy.clock
    host.post_response(_response(60_000))
    assert not host.should_compress(60_000)
    clock[0] += 601
    assert host.should_compress(60_000)  # idle and over half the threshold: prune now
    assert not host.should_compress(10_000)  # too small to bother


def test_micro_compaction_every_turn() -> None:
    host = host_for("summarize", compression={"micro_compact": True})
    messages = make_transcript(28, turns=30, output_lines=80)
    assert host.should_compress(1_000)
    result = host.compress(messages)
    assert result.compressed and len(result.messages) == len(messages)


def test_disabled_compression_never_triggers() -> None:
    host = host_for("summarize", compression={"enabled": False})
    assert not host.should_compress(10**9)


def test_progress_notices_are_status_events(server: StubOpenAIServer) -> None:
    events: list[StatusEvent] = []
    model = {"default": "gpt-4o", "context_length": 128_000, "base_url": server.base_url}
    host = host_for("summarize", model=model, compression={"progress_notices": True}, events=events)
    host.compress(make_transcript(29, turns=30))
    assert [e.kind for e in events] == ["compressing", "done"]
    assert all(e.source == "compressor:summarize" for e in events)
    quiet: list[StatusEvent] = []
    host_for("summarize", model=model, events=quiet).compress(make_transcript(29, turns=30))
    assert quiet == []


def test_strategies_survive_hermes_deep_copy(server: StubOpenAIServer) -> None:
    events: list[StatusEvent] = []
    model = {"default": "gpt-4o", "context_length": 128_000, "base_url": server.base_url}
    for name in ("summarize", "prune", "window", "pipeline"):
        host = host_for(name, model=model, compression={"progress_notices": True}, events=events)
        original = host.compressor
        original.compress(make_transcript(30, turns=30))  # opens connections, changes state
        clone = copy.deepcopy(original)
        assert clone.status_callback is original.status_callback  # shared, not copied
        assert clone.config is original.config
        result = clone.compress(make_transcript(31, turns=30), force=True)
        assert result.messages


def test_unknown_options_key_names_the_strategy() -> None:
    with pytest.raises(ConfigError, match=r"ctx_plugins.options.window.budget: unknown key 'budget'"):
        host_for("window", options={"window": {"budget": 0.3}})
    with pytest.raises(UnknownPluginError):
        host_for("windowed")


def _response(prompt_tokens: int) -> Any:
    from hermes_ctx_plugins import Response, SessionInfo

    return Response(session=SessionInfo(session_id="s"), model="gpt-4o", usage=Usage(prompt_tokens=prompt_tokens))


def test_a_model_free_strategy_that_cannot_shrink_the_conversation_is_not_run_again_until_it_grows() -> None:
    """``prune`` on a long conversation without tool output: every automatic compaction changed nothing, and hermes
    asks up to four times a turn (at 100,000 messages, ~1 s a pass, every turn, without a word). Now it says so once
    and waits until the prompt has grown by 5 % of the trigger; a new conversation starts afresh."""
    events: list[StatusEvent] = []
    host = host_for("prune", events=events)
    strategy = host.compressor
    assert strategy is not None and strategy.threshold_tokens
    messages = [{"role": "user" if n % 2 == 0 else "assistant", "content": f"step {n} done"} for n in range(40_000)]
    tokens = get_counter("gpt-4o").count_messages(messages)
    assert tokens > strategy.threshold_tokens and strategy.should_compress(tokens)
    assert not host.compress(messages, current_tokens=tokens).compressed
    assert not strategy.should_compress(tokens) and not strategy.should_compress(tokens + 100)
    grown = tokens + int(strategy.threshold_tokens * 0.05)
    assert strategy.should_compress(grown)  # grown enough: tried again
    assert not host.compress(messages, current_tokens=grown).compressed
    said = [e.message for e in events if "cannot shrink" in e.message]
    assert len(said) == 1 and "summarize, pipeline" in said[0]
    strategy.reset_session()
    assert strategy.should_compress(tokens)

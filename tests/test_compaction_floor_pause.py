"""Red-team 4: what a pause that does not give way near the window tells the user, and a should_compress answer
left over from the last conversation."""

from __future__ import annotations

from test_compaction_floor import TRIGGER, WINDOW, Clock, server, strategies, summarize, turns  # noqa: F401

from hermes_ctx_plugins.compression.summarize import SummarizeStrategy
from hermes_ctx_plugins.compression.window import WindowStrategy
from hermes_ctx_plugins.config import load_config
from hermes_ctx_plugins.isolation import StatusEvent
from hermes_ctx_plugins.testing import StubOpenAIServer


def test_a_pause_that_holds_at_the_window_does_not_promise_to_give_way(
        server: StubOpenAIServer, strategies: list[SummarizeStrategy]) -> None:  # noqa: F811
    events: list[StatusEvent] = []
    strategy = summarize(server, strategies, events)
    for _ in range(2):  # two fallback compactions: a pause that holds whatever the prompt's size
        strategy.guard.record_compaction(saved_ratio=0.5, used_fallback=True)
    assert not strategy.pause_yields()
    assert not strategy.should_compress(int(WINDOW * 0.97))  # it holds at the window
    said = [e.message for e in events if e.kind == "blocked"]
    assert said and not any("until it nears the model's window" in s for s in said), said


def test_a_new_conversation_does_not_measure_futility_from_the_last_ones_answer(
        server: StubOpenAIServer, strategies: list[SummarizeStrategy]) -> None:  # noqa: F811
    strategy = summarize(server, strategies)
    assert strategy.should_compress(WINDOW - 1_000)  # said yes; hermes did not compact (its lock was taken, ...)
    strategy.reset_session()  # /new
    # the new conversation's first compaction (hermes' overflow handling calls compress unasked) finds nothing
    assert not strategy.compress(turns(1), current_tokens=TRIGGER + 100).compressed
    assert strategy._futile_at is None or strategy._futile_at <= TRIGGER + 100, strategy._futile_at
    window = WindowStrategy(config=load_config({}), model="main-model", context_length=WINDOW)
    assert window.should_compress(WINDOW - 1_000)
    window.reset_session()
    assert not window.compress(turns(1), current_tokens=TRIGGER + 100).compressed
    assert window._futile_at is None or window._futile_at <= TRIGGER + 100, window._futile_at

"""Properties every built-in strategy keeps, over generated agent transcripts (hypothesis).

After any strategy: the system prompt is unchanged; the last user message and everything after it
are kept verbatim; every tool call has its results and every result its call; no user/user or
assistant/assistant neighbours appear; the token count does not grow; the input is not mutated;
and compressing the result again, with nothing new, changes nothing. A forced compaction (a manual
``/compress``) of a short transcript, where what protects the tail yields, keeps them all too, and
does what the strategy's preflight (``nothing_to_compress``) said, never nothing without saying why.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hermes_ctx_plugins import load_host
from hermes_ctx_plugins.compression.messages import last_real_user_index, role, same_role_neighbours
from hermes_ctx_plugins.testing import StubOpenAIServer, make_transcript
from hermes_ctx_plugins.tokens import get_counter

STRATEGIES = ["summarize", "prune", "window", "pipeline"]
# A failing example is a whole transcript; hypothesis warns that printing it is large.
pytestmark = pytest.mark.filterwarnings("ignore:Generating overly large repr")

transcripts = st.builds(
    make_transcript,
    seed=st.integers(0, 10_000),
    turns=st.integers(1, 25),
    system=st.booleans(),
    tool_rounds=st.integers(0, 4),
    output_lines=st.integers(2, 120),
    images=st.booleans(),
    multipart=st.booleans(),
    reasoning=st.booleans(),
    end_mid_turn=st.booleans(),
)
compression_settings = st.fixed_dictionaries({
    "protect_first_n": st.integers(0, 4),
    "protect_last_n": st.integers(1, 25),
    "target_ratio": st.floats(0.02, 0.5),
    "min_tail_user_messages": st.integers(0, 3),
})


def strategy(name: str, compression: dict[str, Any], context_length: int, base_url: str = "") -> Any:
    host = load_host({"model": {"default": "gpt-4o", "context_length": context_length, "base_url": base_url},
                      "compression": compression, "ctx_plugins": {"compressor": name}})
    return host.compressor


def check_invariants(before: list[dict[str, Any]], after: list[dict[str, Any]]) -> None:
    if before and role(before[0]) == "system":
        assert after[0] == before[0], "the system prompt changed"
    last_user = last_real_user_index(before)
    if last_user >= 0:
        kept = before[last_user:]
        assert after[len(after) - len(kept):] == kept, "the last user message and what follows changed"
    seen_calls: set[str] = set()
    results: set[str] = set()
    for message in after:
        for call in message.get("tool_calls") or ():
            seen_calls.add(call["id"])
        if role(message) == "tool":
            assert message["tool_call_id"] in seen_calls, "a tool result without its call before it"
            results.add(message["tool_call_id"])
    assert seen_calls == results, "a tool call without its results"
    assert same_role_neighbours(after) <= same_role_neighbours(before)
    counter = get_counter("gpt-4o")
    assert counter.count_messages(after) <= counter.count_messages(before)


@pytest.mark.parametrize("name", STRATEGIES)
@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(messages=transcripts, compression=compression_settings,
       context_length=st.sampled_from([64_000, 128_000, 1_000_000]))
def test_strategy_keeps_the_invariants(name: str, messages: list[dict[str, Any]],
                                       compression: dict[str, Any], context_length: int) -> None:
    assert same_role_neighbours(messages) == 0  # the generator's own promise
    compressor = strategy(name, compression, context_length)
    snapshot = copy.deepcopy(messages)
    result = compressor.compress(messages, force=True)
    assert messages == snapshot, "the input was mutated"
    check_invariants(messages, result.messages)
    assert result.tokens_after <= result.tokens_before

    again = compressor.compress(result.messages, force=True)
    assert not again.compressed, f"re-compressing with nothing new changed it: {again.notes}"
    assert again.messages == result.messages


@pytest.mark.parametrize("name", STRATEGIES)
def test_long_transcript_actually_shrinks(name: str) -> None:
    messages = make_transcript(7, turns=60, output_lines=80)
    compressor = strategy(name, {}, 128_000)
    result = compressor.compress(messages, force=True)
    assert result.compressed
    check_invariants(messages, result.messages)
    assert result.tokens_after < 0.7 * result.tokens_before


short_transcripts = st.builds(
    make_transcript,
    seed=st.integers(0, 10_000),
    turns=st.integers(1, 6),
    system=st.booleans(),
    tool_rounds=st.integers(0, 3),
    output_lines=st.integers(2, 30),
    images=st.booleans(),
    multipart=st.booleans(),
    reasoning=st.booleans(),
    end_mid_turn=st.booleans(),
)


@pytest.fixture(scope="module")
def summary_model() -> Iterator[StubOpenAIServer]:
    with StubOpenAIServer(model="gpt-4o", responder=lambda request: "## Goal\nKeep going.") as stub:
        yield stub


@pytest.mark.parametrize("name", STRATEGIES)
@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(messages=short_transcripts, compression=compression_settings)
def test_a_forced_compaction_of_a_short_transcript_does_what_its_preflight_said(
        name: str, messages: list[dict[str, Any]], compression: dict[str, Any],
        summary_model: StubOpenAIServer) -> None:
    compressor = strategy(name, compression, 128_000, summary_model.base_url)
    reason = compressor.nothing_to_compress(messages)
    result = compressor.compress(messages, force=True)
    check_invariants(messages, result.messages)
    if reason is not None:
        assert not result.compressed and "; ".join(result.notes) == reason
    elif not result.compressed:  # only a summary can turn out bigger than what it would replace
        assert name in ("summarize", "pipeline") and "would not be smaller" in "; ".join(result.notes)
    assert result.compressed or result.notes, "a forced compaction that changes nothing says why"

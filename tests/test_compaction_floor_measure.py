"""Red-team pass on 9e829a3: the prompt's floor measured too large in ordinary setups (a 128k model, a normal
system prompt), which squeezed budgets and cost the verbatim tail; and the pipeline's budget cut by a fifth by
any floor at all. Each test fails on 9e829a3."""

from __future__ import annotations

import random
from typing import Any

import pytest

from hermes_ctx_plugins import load_config
from hermes_ctx_plugins.compression import floor
from hermes_ctx_plugins.compression.summarize import SummarizeStrategy
from hermes_ctx_plugins.events import Usage
from hermes_ctx_plugins.testing import StubOpenAIServer
from hermes_ctx_plugins.tokens import TokenCounter


def _listing(rng: random.Random, lines: int) -> str:
    return "\n".join(f"-rw-r--r--  1 user  staff  {rng.randint(100, 99999):>6} Nov {rng.randint(1, 28):>2} "
                     f"src/mod{rng.randint(0, 999)}/f{rng.randint(0, 9999)}.py" for _ in range(lines))


def test_the_messages_a_count_held_are_counted_not_estimated() -> None:
    """chars/4 rates shell output ~45% low: a live coding session's history, never tokenised before the
    first compaction, made a 13k floor look 52k on a 128k model (and squeezed the tail)."""
    rng = random.Random(1)
    counter = TokenCounter("gpt-4o")  # a fresh memo: the messages were never counted
    messages: list[dict[str, Any]] = []
    for i in range(20):
        messages += [{"role": "user", "content": f"turn {i}\n" + _listing(rng, 150)},
                     {"role": "assistant", "content": f"checked listing {i}"}]
    sent = TokenCounter("gpt-4o").count_messages(messages[:-1])  # what the provider counted, exactly
    messages.append({"role": "user", "content": "next"})
    measured = floor.measure(messages, counter=counter, last_prompt_tokens=sent + 12_000, current_tokens=None)
    assert measured is not None and abs(measured - 12_000) < 500, measured


def test_a_never_counted_messages_estimate_weighs_its_reasoning() -> None:
    """hermes' rough estimate (str(message) / 4) weighs an assistant's stored ``reasoning``; ours left it out,
    so a resumed reasoning model's history put all its reasoning in the floor (71k of a true 0.6k)."""
    counter = TokenCounter("gpt-4o")
    message = {"role": "assistant", "content": "ok", "reasoning": "thinking about the figures. " * 400}
    estimated, unseen = counter.estimate_messages([message])
    assert unseen == 1 and estimated > 2_000
    assert abs(estimated - TokenCounter("gpt-4o").count_messages([message])) < 1_000


def test_a_small_floor_does_not_cut_a_large_budget_by_a_fifth() -> None:
    """The pipeline's budget (50% of the trigger) fell to 40% of it for a floor of 1 token: its summary step then
    ran where prune alone had met the budget, and ~100 verbatim messages were summarised away."""
    trigger = 96_000
    budget = trigger // 2
    assert floor.fit(budget, threshold=trigger, floor=0) == budget
    assert floor.fit(budget, threshold=trigger, floor=1) >= budget - 1
    assert floor.fit(budget, threshold=trigger, floor=1_000) >= budget - 1_000
    # the summarize tail (20%) is as before
    assert floor.fit(trigger // 5, threshold=trigger, floor=40_000) == trigger // 5
    assert floor.fit(trigger // 5, threshold=trigger, floor=60_000) == int(36_000 * floor.ROOM_SHARE)


def test_a_new_conversation_does_not_take_the_verdict_on_the_last_ones_compaction() -> None:
    strategy = SummarizeStrategy(config=load_config({}), model="m", context_length=64_000)
    strategy.verify_pending = True
    strategy.provider_prompt_tokens = 50_000
    strategy.reset_session()  # /new, /resume
    assert not strategy.verify_pending and strategy.provider_prompt_tokens == 0
    strategy.update_from_response(Usage(prompt_tokens=60_000))  # a long resumed conversation's first count
    assert strategy.guard.state.uncleared_streak == 0
    strategy.close()


@pytest.mark.usefixtures("hermes_home")
def test_in_hermes_a_pasted_document_is_not_taken_for_floor() -> None:
    """hermes' turn preflight overwrites ``last_prompt_tokens`` with its rough estimate of the NEXT request when
    that is larger (agent/turn_context.py): the pasted message and chars/4's error went into the floor (61k of
    a true 5k on a 128k model), and the compaction kept the paste alone, the task statement summarised away."""
    pytest.importorskip("run_agent", reason="the hermes extra is not installed")
    from hermes_helpers import configure_hermes, exact_prompt_tokens, new_agent

    rng = random.Random(4)
    words = ["the", "and", "for", "are", "but", "not", "you", "all", "any", "can", "had", "her", "was", "one", "our"]

    def text(tokens: int) -> str:
        return " ".join(rng.choice(words) for _ in range(tokens))

    window = 128_000
    with StubOpenAIServer(prompt_tokens=exact_prompt_tokens, context_length=window) as stub:
        stub.responder = lambda req: "Noted; the next step is clear." if req.get("stream") else "## Goal\nreport"
        configure_hermes(stub, "ctx_plugins: {compressor: summarize}\n", window=window)
        agent = new_agent(stub, ephemeral_system_prompt="You are a careful assistant for the finance team.")
        history: list[dict[str, Any]] = []
        for turn in range(14):  # ~76k tokens of conversation, under the 96k trigger
            history = agent.run_conversation(f"turn {turn}: " + text(5_000), conversation_history=history)["messages"]
        assert agent.context_compressor.compression_count == 0
        history = agent.run_conversation("turn 14: here is the log: " + text(55_000),
                                         conversation_history=history)["messages"]
        strategy = agent.context_compressor.strategy
        assert agent.context_compressor.compression_count == 1
        assert strategy.floor_tokens < 5_000, strategy.floor_tokens
        users = [str(m.get("content", "")) for m in history if m.get("role") == "user"]
        assert users[0].startswith("turn 0:"), "the first message (protect_first_n) stays"
        assert sum(u.startswith("turn 1") for u in users) >= 3, "the turns before the paste stay verbatim"

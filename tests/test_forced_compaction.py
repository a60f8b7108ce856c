"""A forced compaction (hermes' manual ``/compress``) of a conversation whose usual protected tail
covers it whole: every strategy compacts what lies between the protected head and the turn in
progress, or says plainly why nothing could be, and says so before it is asked
(``nothing_to_compress``, hermes' ``/compress`` preflight)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from hermes_ctx_plugins import load_host
from hermes_ctx_plugins.compression.base import NOTHING_NEW
from hermes_ctx_plugins.compression.messages import (
    SUMMARY_KEY,
    last_real_user_index,
    role,
    same_role_neighbours,
    text_of,
)
from hermes_ctx_plugins.compression.selection import head_end
from hermes_ctx_plugins.manager import Host
from hermes_ctx_plugins.testing import StubOpenAIServer, make_transcript

SUMMARY = "## Goal\nKeep going."


@pytest.fixture
def server() -> Iterator[StubOpenAIServer]:
    with StubOpenAIServer(model="gpt-4o", responder=lambda request: SUMMARY) as stub:
        yield stub


def host_for(name: str, server: StubOpenAIServer, *, compression: dict[str, Any] | None = None,
             options: dict[str, Any] | None = None) -> Host:
    """A host running strategy ``name`` alone (the archive off), its summary model the stub."""
    return load_host({"model": {"default": "gpt-4o", "context_length": 128_000, "base_url": server.base_url},
                      "compression": compression or {},
                      "ctx_plugins": {"compressor": name, "options": options or {}, "archive": {"enabled": False}}})


def short_session() -> list[dict[str, Any]]:
    """Four agent turns, about 2,300 tokens (the usual tail keeps about 19,000), the last one with its
    tool calls in progress; no tool output repeats, so nothing is pruned as a duplicate."""
    messages = make_transcript(8, turns=4, output_lines=8, images=False)
    assert [role(m) for m in messages[-5:]] == ["user", "assistant", "tool", "tool", "assistant"]
    return messages


def chat(turns: int) -> list[dict[str, Any]]:
    return [m for i in range(turns) for m in ({"role": "user", "content": f"question {i}: " + "word " * 60},
                                              {"role": "assistant", "content": f"answer {i}: " + "text " * 60})]


@pytest.mark.parametrize("name", ["summarize", "window"])
def test_a_forced_compaction_keeps_the_head_and_the_turn_in_progress(server: StubOpenAIServer, name: str) -> None:
    messages = short_session()
    host = host_for(name, server)
    automatic = host.compress(messages)
    assert not automatic.compressed, "automatically, the usual tail protects a short conversation whole"
    assert "reach back to the protected head" in automatic.notes[0]
    assert host.compressor.nothing_to_compress(messages) is None, "the /compress preflight lets it through"

    forced = host.compress(messages, force=True)
    assert forced.compressed
    head, turn = head_end(messages, 3), last_real_user_index(messages)
    assert forced.messages[:head] == messages[:head], "the system prompt and protect_first_n, as they were"
    assert forced.messages[head].get(SUMMARY_KEY), "one summary (or marker) for everything between"
    assert forced.messages[head + 1:] == messages[turn:], "the turn in progress verbatim, tool calls included"
    assert list(forced.removed) == messages[head:turn] and forced.summarized == turn - head
    assert same_role_neighbours(forced.messages) == 0
    assert forced.tokens_after < forced.tokens_before

    again = host.compress(forced.messages, force=True)
    assert not again.compressed and again.notes == (NOTHING_NEW,)
    assert host.compressor.nothing_to_compress(forced.messages) == NOTHING_NEW


def test_a_forced_summary_is_one_request_for_the_whole_middle(server: StubOpenAIServer) -> None:
    messages = short_session()
    result = host_for("summarize", server).compress(messages, force=True)
    assert SUMMARY in text_of(result.messages[head_end(messages, 3)]["content"])
    [request] = server.chat_requests
    sent = text_of(request.body["messages"][-1]["content"])  # type: ignore[index]
    head, turn = head_end(messages, 3), last_real_user_index(messages)
    assert text_of(messages[head]["content"]) in sent, "the oldest compacted message is summarised"
    assert text_of(messages[turn - 1]["content"]) in sent, "and the newest"
    assert text_of(messages[1]["content"]) not in sent, "the protected head is not"
    assert text_of(messages[turn]["content"]) not in sent, "nor the turn in progress"


@pytest.mark.parametrize("name", ["summarize", "window", "prune", "pipeline"])
@pytest.mark.parametrize(("messages", "why"), [
    (chat(2), "the first 3 messages are protected (compression.protect_first_n)"),
    (chat(1), "the first 2 messages are protected"),
    ([], "the conversation is empty"),
])
def test_nothing_compactable_is_said_before_and_after(server: StubOpenAIServer, name: str,
                                                      messages: list[dict[str, Any]], why: str) -> None:
    host = host_for(name, server)
    reason = host.compressor.nothing_to_compress(messages)
    assert reason is not None
    result = host.compress(messages, force=True)
    assert not result.compressed and result.messages == messages
    if messages:
        assert "; ".join(result.notes) == reason, "the preflight says what the compaction says"
    if name != "prune":
        assert why in reason
    assert server.chat_requests == [], "no summary model is asked for what cannot be compacted"


def test_protect_first_n_covering_everything_leaves_nothing(server: StubOpenAIServer) -> None:
    messages = short_session()
    host = host_for("summarize", server, compression={"protect_first_n": 40})
    reason = host.compressor.nothing_to_compress(messages)
    assert reason is not None and "the turn in progress" in reason and "protect_first_n" in reason
    assert not host.compress(messages, force=True).compressed and server.chat_requests == []


def test_a_middle_smaller_than_any_summary_is_not_sent_to_the_model(server: StubOpenAIServer) -> None:
    """Five messages: between the head and the latest question lies one short answer; a summary (its
    framing alone) would cost more, so the model is not asked and the user is told why."""
    messages = chat(3)[:5]
    host = host_for("summarize", server)
    reason = host.compressor.nothing_to_compress(messages)
    assert reason is not None and "nothing between them is worth compacting" in reason
    assert not host.compress(messages, force=True).compressed and server.chat_requests == []


#: this short session's tool outputs are 80 to 330 characters: let prune take them
SHORT_OUTPUTS = {"prune": {"min_prune_chars": 50}}


def test_a_forced_prune_shrinks_every_old_tool_output_but_the_turn_in_progress(server: StubOpenAIServer) -> None:
    messages = short_session()
    host = host_for("prune", server, options=SHORT_OUTPUTS)
    assert not host.compress(messages).compressed, "automatically, the usual tail protects them all"
    forced = host.compress(messages, force=True)
    assert forced.compressed and len(forced.messages) == len(messages)
    turn = last_real_user_index(messages)
    assert forced.messages[turn:] == messages[turn:]
    old = [i for i in range(turn) if role(messages[i]) == "tool" and len(messages[i]["content"]) > 50]
    assert old and all(forced.messages[i]["content"].startswith("[") and forced.messages[i] != messages[i]
                       for i in old)
    again = host.compress(forced.messages, force=True)
    assert not again.compressed and again.notes == ("no tool output before the turn in progress is left to shrink",)
    assert host.compressor.nothing_to_compress(forced.messages) == again.notes[0]


def test_a_forced_pipeline_runs_every_step_forced(server: StubOpenAIServer) -> None:
    messages = short_session()
    host = host_for("pipeline", server, options={"pipeline": {"steps": ["prune", "summarize"], "budget_ratio": 0.9},
                                                 **SHORT_OUTPUTS})
    assert not host.compress(messages).compressed, "automatically: under budget, and prune finds nothing"
    forced = host.compress(messages, force=True)
    assert [n.split(":")[0] for n in forced.notes] == ["prune", "summarize"]
    assert len(server.chat_requests) == 1
    turn = last_real_user_index(messages)
    assert forced.messages[-(len(messages) - turn):] == messages[turn:]
    assert sum(1 for m in forced.messages if m.get(SUMMARY_KEY)) == 1
    again = host.compress(forced.messages, force=True)
    assert not again.compressed and len(server.chat_requests) == 1
    reason = host.compressor.nothing_to_compress(forced.messages)
    assert reason == "; ".join(again.notes) and reason.startswith("prune: ") and "; summarize: " in reason


def test_without_any_user_message_the_last_group_is_kept(server: StubOpenAIServer) -> None:
    """A transcript of only assistant and tool messages (a cron job's): the turn in progress is the
    last message with the call its results answer."""
    messages = [m for m in short_session() if role(m) != "user"]
    result = host_for("window", server, compression={"protect_first_n": 1}).compress(messages, force=True)
    assert result.compressed
    assert result.messages[-1] == messages[-1]
    marker = next(m for m in result.messages if m.get(SUMMARY_KEY))
    assert role(marker) == "user", "a conversation with no user message gets a user-role marker"
    assert same_role_neighbours(result.messages) == 0

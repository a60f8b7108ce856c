"""A forced ``pipeline`` (prune, then summarize) over a long tool-heavy history: its prune step leaves the
tool results the summarize step's request will not show to that step, which summarises them away unread
(issue 17: at 5,000 messages the prune step summarised ~2,600 results, of which the request shows about a
third). What the user gets is what they got before -- the same messages, the same tokens, the same request
but for the count of characters it says it elided -- and when the summary fails, every old result is
pruned as before."""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Iterator
from typing import Any

import pytest

from hermes_ctx_plugins import load_host
from hermes_ctx_plugins.compression import prune
from hermes_ctx_plugins.compression.messages import last_real_user_index, role
from hermes_ctx_plugins.compression.summarize import SummarizeStrategy
from hermes_ctx_plugins.manager import Host
from hermes_ctx_plugins.testing import StubOpenAIServer, make_transcript

#: the summary request reads 4,000 characters of the middle (two windows of 2,667 and 1,333, each with
#: 16,000 to spare): a middle of a few hundred one-line summaries holds results it never reads
OPTIONS = {"pipeline": {"steps": ["prune", "summarize"]}, "summarize": {"input_char_cap": 4_000}}


@pytest.fixture
def server() -> Iterator[StubOpenAIServer]:
    with StubOpenAIServer(model="gpt-4o", responder=lambda request: "## Goal\nKeep going.") as stub:
        yield stub


def host_for(server: StubOpenAIServer) -> Host:
    return load_host({"model": {"default": "gpt-4o", "context_length": 32_000, "base_url": server.base_url},
                      "ctx_plugins": {"compressor": "pipeline", "options": OPTIONS, "archive": {"enabled": False}}})


@pytest.fixture(scope="module")
def history() -> list[dict[str, Any]]:
    messages = make_transcript(36, turns=400, output_lines=40, images=False)
    assert sum(role(m) == "tool" for m in messages) > 400
    return messages


def compact(server: StubOpenAIServer, messages: list[dict[str, Any]], monkeypatch: pytest.MonkeyPatch, *,
            leave: bool) -> tuple[Any, int, list[str]]:
    """A forced pipeline over a copy of ``messages`` (``leave=False``: as before, its prune step summarising
    every old result); what it returned, how many results were summarised, and the summary requests' texts."""
    calls = 0
    real = prune.summarize_tool_result

    def counted(*args: Any, **kwargs: Any) -> str:
        nonlocal calls
        calls += 1
        return real(*args, **kwargs)

    with monkeypatch.context() as patch:
        patch.setattr(prune, "summarize_tool_result", counted)
        if not leave:
            patch.setattr(SummarizeStrategy, "ahead", lambda self, messages, tokens_before: None)
        before = len(server.chat_requests)
        result = host_for(server).compress(copy.deepcopy(messages), force=True)
    requests = ["\n".join(str(m.get("content")) for m in request.body["messages"])
                for request in server.chat_requests[before:]]
    return result, calls, requests


ELIDED = re.compile(r"\[\.\.\. [\d,]+ characters elided \.\.\.\]")


def test_the_prune_step_leaves_unread_results_and_the_compaction_is_the_same(
        server: StubOpenAIServer, history: list[dict[str, Any]], monkeypatch: pytest.MonkeyPatch) -> None:
    before, all_calls, old_requests = compact(server, history, monkeypatch, leave=False)
    after, calls, requests = compact(server, history, monkeypatch, leave=True)
    # before, every old result but the repeated ones (a placeholder stands for those) was summarised
    old_results = {m["content"] for m in history[:last_real_user_index(history)] if role(m) == "tool"
                   and isinstance(m.get("content"), str) and len(m["content"]) > 200}
    assert all_calls >= len(old_results) > 300
    assert calls < all_calls / 2, f"{calls} of {all_calls} results still summarised"
    assert before.compressed and after.compressed
    assert json.dumps(after.messages, sort_keys=True) == json.dumps(before.messages, sort_keys=True)
    assert (after.tokens_before, after.tokens_after) == (before.tokens_before, before.tokens_after)
    assert after.summary == before.summary and after.summary_at == before.summary_at
    assert after.removed_at == before.removed_at, "the archive is told of the same originals"
    assert len(requests) == len(old_requests) == 1
    assert ELIDED.search(requests[0]), "the request shows part of the middle"
    assert ELIDED.sub("", requests[0]) == ELIDED.sub("", old_requests[0])


def test_when_the_summary_fails_every_old_result_is_pruned_as_before(
        server: StubOpenAIServer, history: list[dict[str, Any]], monkeypatch: pytest.MonkeyPatch) -> None:
    server.fail(401, "bad key", times=2)  # neither model retried: the summarize step is skipped
    before, _, _ = compact(server, history, monkeypatch, leave=False)
    server.fail(401, "bad key", times=2)
    after, _, _ = compact(server, history, monkeypatch, leave=True)
    assert after.compressed and after.aborted is False and "skipped, its summary failed" in "; ".join(after.notes)
    assert json.dumps(after.messages, sort_keys=True) == json.dumps(before.messages, sort_keys=True)
    assert after.notes == before.notes and after.tokens_after == before.tokens_after
    turn = last_real_user_index(history)
    raw = [i for i in range(turn) if role(history[i]) == "tool" and after.messages[i] == history[i]
           and len(history[i]["content"]) > 200]
    assert not raw, f"{len(raw)} old tool results left as they were"


# -- the summary request of a long middle is not joined whole ---------------------------------------------------

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from hermes_ctx_plugins.compression import prompt  # noqa: E402

_TEXT = st.text(alphabet=st.sampled_from("ab \n\u00e9\u4e2d"), max_size=40)


@settings(max_examples=300, deadline=None)
@given(bodies=st.lists(_TEXT, max_size=12), cap=st.integers(min_value=1, max_value=120))
def test_the_capped_request_is_the_joined_text_cut(bodies: list[str], cap: int) -> None:
    """serialize keeps the head and tail of the middle's joined text; it joins only the blocks they reach (a forced
    pipeline's middle at 20,000 messages is ~49 MB of text), with the same result."""
    messages = [{"role": "user" if i % 2 else "assistant", "content": body} for i, body in enumerate(bodies)]
    text = "\n\n".join(prompt._serialize_one(m, {}, prompt.unredacted) for m in messages)
    if len(text) <= cap:
        expected = text
    else:
        head = cap * 2 // 3
        expected = (f"{text[:head]}\n\n[... {len(text) - cap:,} characters elided ...]\n\n{text[-(cap - head):]}")
    assert prompt.serialize(messages, char_cap=cap) == expected


@settings(max_examples=300, deadline=None)
@given(text=st.text(alphabet=st.sampled_from("ab |-\n\\n\u00e9"), max_size=200), chars=st.integers(0, 120))
def test_excerpts_of_an_unredacted_text_are_its_ends(text: str, chars: int) -> None:
    assert prompt.redacted_head(text, chars, prompt.unredacted) == text[:chars]
    assert prompt.redacted_tail(text, chars, prompt.unredacted) == (text[-chars:] if chars else "")


def test_a_prune_step_that_left_every_result_to_a_failed_summary_still_prunes_them(
        server: StubOpenAIServer, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every tool result in the unread middle, nothing else for the prune step to do: its result was "unchanged", so
    the pipeline did not know it had left them; the summary failing, the conversation was left uncompacted with all
    of them raw (a review: the code before pruned all 30)."""
    filler = "early words of a long plain conversation that holds no tool output at all " * 6
    messages: list[dict[str, Any]] = [{"role": "system", "content": "You are a careful agent."}]
    for i in range(60):
        messages += [{"role": "user", "content": f"early question {i} {filler}"},
                     {"role": "assistant", "content": f"early answer {i} {filler}"}]
    for i in range(30):
        call = {"name": "terminal", "arguments": json.dumps({"command": f"make step{i}"})}
        output = f"RAW{i} " + f"build output line {i}\n" * 120
        messages += [{"role": "user", "content": f"run step {i}"},
                     {"role": "assistant", "content": "",
                      "tool_calls": [{"id": f"c{i}", "type": "function", "function": call}]},
                     {"role": "tool", "tool_call_id": f"c{i}", "content": output},
                     {"role": "assistant", "content": f"step {i} done"}]
    for i in range(400):
        messages += [{"role": "user", "content": f"late question {i} {filler}"},
                     {"role": "assistant", "content": f"late answer {i} {filler}"}]
    messages.append({"role": "user", "content": "what next?"})
    server.fail(401, "bad key", times=2)
    before, _, _ = compact(server, messages, monkeypatch, leave=False)
    server.fail(401, "bad key", times=2)
    after, _, _ = compact(server, messages, monkeypatch, leave=True)
    assert before.compressed, "positive control: the code before pruned them"
    assert after.compressed and not after.aborted, after.notes
    assert not [m for m in after.messages if m.get("role") == "tool" and m["content"].startswith("RAW")]
    assert json.dumps(after.messages, sort_keys=True) == json.dumps(before.messages, sort_keys=True)
    assert after.notes == before.notes

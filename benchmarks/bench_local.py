"""Benchmark: ctx-local's latency goals beside hermes-agent 0.19.0's bundled ``holographic`` provider, in one run.

Run from the repository root::

    .venv/bin/python benchmarks/bench_local.py                 # 1k, 10k, 100k stored turns; 6 writers
    .venv/bin/python benchmarks/bench_local.py --quick         # fewer repeats and turns (about 2 minutes)
    .venv/bin/python benchmarks/bench_local.py --summary-json local.json

The conversations and questions are ``bench_recall.py``'s (same generator and seed). Three tables:

* **prefetch** p50/p95 over every question, through each provider's ``prefetch``, at each store size;
  the two systems are asked in turn, question by question, after one untimed pass. ctx-local's store is
  filled through its own ``sync_turn`` and write-behind queue; holographic's (one store per user, as
  ``bench_recall`` does) through ``fact_store add``, its bank rebuild deferred to the end (the store it
  queries is the same). Filled stores are cached under ``$TMPDIR/hermes-ctx-bench-cache``, keyed by
  seed, size, the corpus' digest and the store's format, so a second run skips the fill; the first run
  builds them. holographic's fill takes 20-40 s per thousand turns here, so it is measured up to
  ``--holographic-max`` turns (10,000; 1,000 with ``--quick``) unless a cached store of a larger size exists.
* **write path**: 1 and 6 writer processes (real processes, started with ``spawn``), each with its own
  provider on the same store file, each syncing its share of fresh turns. *paced*: a turn every
  ``--pace-ms`` per process (10 ms: 100 turns/s per process, far more than a hermes worker whose turns
  wait for a model); *flat out*: no pause, every process busy-looping on ``sync_turn`` — on 2 cores six
  such loops leave each one runnable a third of the time, so its tail is the scheduler's time slice,
  whatever the call does; the ``cpu p99`` column (the calling thread's own CPU time) shows what the
  call itself costs. ctx-local: ``sync_turn`` (redact, append to the process's queue file, return);
  holographic has no turn sync (its ``sync_turn`` does nothing), so its write is ``fact_store add``,
  fewer of them (each rebuilds its category's bank: slower as the store grows).
  ``stored/s``: turns stored per second, from the first sync to the last turn stored, all processes.
* **drain**: one process's write-behind writer storing a backlog: ``--drain-turns`` turns synced while
  another connection holds the database's write lock, timed from the lock's release until the last is
  stored; beside it *sync + store*, the same turns synced flat out with the writer draining meanwhile
  (what ``bench_recall`` reports as drain), and holographic's adds per second (one process, flat out).

Absolute times on a shared machine are noise; the two systems are measured side by side in one run.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import logging
import multiprocessing
import os
import platform
import shutil
import sqlite3
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from multiprocessing.synchronize import Barrier
from pathlib import Path
from typing import Any

from _common import collect
from bench_recall import Corpus, fill_holographic, generate, holographic_provider, percentile, print_table, session_of

from hermes_ctx_plugins.events import Turn
from hermes_ctx_plugins.memory.local import LocalProvider
from hermes_ctx_plugins.storage.sqlite.memory_schema import SCHEMA_VERSION

CACHE = Path(tempfile.gettempdir()) / "hermes-ctx-bench-cache"
STORE = "ctx-local.db"
#: the writers' fresh turns come from a corpus of this seed, never one a person would pick
WRITE_SEED = 1007
GOAL_PREFETCH_MS, GOAL_SYNC_MS, GOAL_DRAIN = 20.0, 5.0, 5_000.0

TurnRow = tuple[int, str, int, str, str]  # user, session, turn number, user text, assistant text


def local_provider(home: Path, **options: Any) -> LocalProvider:
    return LocalProvider({"path": STORE, "drain_timeout_seconds": 600, **options}, hermes_home=home)


def turn_of(row: TurnRow) -> Turn:
    user, session, number, user_text, assistant_text = row
    return Turn(session=session_of(user, session), turn_number=number, user_text=user_text,
                assistant_text=assistant_text)


def rows_of(corpus: Corpus, tag: str = "") -> list[TurnRow]:
    return [(user, f"{tag}{session}", n, u, a) for user, session, n, u, a, _ in corpus.turns]


def ms(seconds: Sequence[float], q: float) -> float:
    return percentile(seconds, q) * 1e3


# ------------------------------------------------------------------------------------------------ stores


def digest(corpus: Corpus) -> str:
    return hashlib.sha256(json.dumps(corpus.turns).encode("utf-8", "surrogatepass")).hexdigest()[:12]


def cached(name: str, build: Callable[[Path], None]) -> Path:
    """The cache folder ``name``, built by ``build(folder)`` into a temporary folder first if missing."""
    folder = CACHE / name
    if not folder.is_dir():
        CACHE.mkdir(parents=True, exist_ok=True)
        work = Path(tempfile.mkdtemp(prefix=f".{name}-", dir=CACHE))
        try:
            build(work)
            os.replace(work, folder)
        finally:
            shutil.rmtree(work, ignore_errors=True)
    return folder


def fill_local(corpus: Corpus, home: Path) -> None:
    provider = local_provider(home)
    for row in rows_of(corpus):
        provider.sync_turn(turn_of(row))
    if not provider.flush(3600):
        raise RuntimeError("ctx-local did not drain")
    provider.shutdown()  # the last connection to close folds the WAL back into the file
    shutil.rmtree(home / f"{STORE}.queue", ignore_errors=True)


def fill_holographic_cache(corpus: Corpus, home: Path) -> None:
    filled = fill_holographic(corpus, home, exact_limit=0)
    if filled is None:
        raise RuntimeError("hermes' holographic provider is not installed")
    filled.shutdown()


def copy_into(cache: Path, home: Path) -> None:
    for path in cache.iterdir():
        if path.is_file() and not path.name.endswith(("-wal", "-shm")):
            shutil.copy2(path, home / path.name)


# ------------------------------------------------------------------------------------------------ prefetch


@dataclass
class Prefetch:
    size: int
    local: list[float]
    holographic: list[float] | None


def prefetch_at(size: int, seed: int, reps: int, holographic_max: int, work: Path) -> Prefetch:
    corpus = generate(size, seed)
    key = f"s{seed}-n{len(corpus.turns)}-{digest(corpus)}"
    local_home, holo_home = work / f"local-{size}", work / f"holographic-{size}"
    local_home.mkdir()
    holo_home.mkdir()
    copy_into(cached(f"ctx-local-v{SCHEMA_VERSION}-{key}", lambda home: fill_local(corpus, home)), local_home)
    holo_cache = CACHE / f"holographic-{key}"
    with_holographic = holo_cache.is_dir() or len(corpus.turns) <= holographic_max
    if with_holographic:
        copy_into(cached(holo_cache.name, lambda home: fill_holographic_cache(corpus, home)), holo_home)
    local = local_provider(local_home)
    holo = {user: holographic_provider(holo_home / f"holographic-{user}.db", user)
            for user in {q.user for q in corpus.questions}} if with_holographic else {}
    asks: dict[str, Callable[[Any], Any]] = {
        "local": lambda q: local.prefetch(q.text, session=session_of(q.user))}
    if holo:
        asks["holographic"] = lambda q: holo[q.user].prefetch(q.text)
    times: dict[str, list[float]] = {name: [] for name in asks}
    try:
        for rep in range(reps + 1):  # the first pass is not timed
            for question in corpus.questions:
                for name, ask in asks.items():
                    before = time.perf_counter()
                    ask(question)
                    if rep:
                        times[name].append(time.perf_counter() - before)
    finally:
        local.shutdown()
        for provider in holo.values():
            provider.shutdown()
    return Prefetch(len(corpus.turns), times["local"], times.get("holographic"))


# ------------------------------------------------------------------------------------------------ writers


@dataclass
class Writes:
    #: seconds per call, every process's
    wall: list[float]
    cpu: list[float]
    #: turns stored per second, from the first call to the last stored (ctx-local), or calls per second
    rate: float


def _writer(system: str, home: str, rows: list[TurnRow], pace: float, start: Barrier, results: Any) -> None:
    """One writer process: time each call, then (ctx-local) wait until everything is stored."""
    if system == "local":
        provider: Any = local_provider(Path(home))
        provider.sync_turn(turn_of((0, f"warm-up-{os.getpid()}", 0, "warming up", "ok")))
        provider.flush(600)

        def call(row: TurnRow) -> None:
            provider.sync_turn(turn_of(row))
    else:
        os.environ["HERMES_HOME"] = home
        provider = holographic_provider(Path(home) / "holographic.db", 0)

        def call(row: TurnRow) -> None:
            content = f"User: {row[3]}\nAssistant: {row[4]}"
            provider.handle_tool_call("fact_store", {"action": "add", "content": content})
    wall, cpu = [], []
    start.wait(timeout=600)
    began = time.monotonic()
    for row in rows:
        before, before_cpu = time.perf_counter(), time.thread_time()
        call(row)
        wall.append(time.perf_counter() - before)
        cpu.append(time.thread_time() - before_cpu)
        if pace:
            time.sleep(pace)
    drained = provider.flush(3600) if system == "local" else True
    results.put((began, time.monotonic(), wall, cpu, drained))
    provider.shutdown()


def write_path(system: str, home: Path, rows: Sequence[TurnRow], writers: int, pace: float) -> Writes:
    """``writers`` processes syncing ``rows`` between them (round-robin) into the store at ``home``."""
    context = multiprocessing.get_context("spawn")  # a fresh interpreter each: nothing crosses a fork
    start, results = context.Barrier(writers), context.Queue()
    processes = [context.Process(target=_writer, args=(system, str(home), list(rows[i::writers]), pace, start,
                                                       results)) for i in range(writers)]
    reports = collect(processes, results, writers)
    if len(reports) < writers or not all(report[4] for report in reports):
        raise RuntimeError(f"{system}: a writer failed or did not drain its queue (see its error above)")
    elapsed = max(r[1] for r in reports) - min(r[0] for r in reports)
    return Writes([w for r in reports for w in r[2]], [c for r in reports for c in r[3]], len(rows) / elapsed)


def stored_turns(home: Path) -> int:
    with sqlite3.connect(home / STORE) as conn:
        count: int = conn.execute("SELECT count(*) FROM memories WHERE kind = 'turn'").fetchone()[0]
    return count


# ------------------------------------------------------------------------------------------------ drain


def drain_rates(rows: Sequence[TurnRow], work: Path) -> tuple[float, float]:
    """(backlog drain, sync + store) turns/s of one process's queue."""
    logging.getLogger("hermes_ctx_plugins").setLevel(logging.CRITICAL)  # "database is locked", on purpose
    home = work / "drain"
    home.mkdir()
    provider = local_provider(home, retry_backoff_seconds=0.01)
    provider.sync_turn(turn_of((0, "warm-up", 0, "warming up", "ok")))
    provider.flush(60)
    lock = sqlite3.connect(home / STORE, isolation_level=None)
    lock.execute("BEGIN IMMEDIATE")  # the writer waits for it, the turns pile up in the queue
    try:
        for row in rows:
            provider.sync_turn(turn_of(row))
    finally:
        released = time.perf_counter()
        lock.execute("COMMIT")
        lock.close()
    if not provider.flush(3600):
        raise RuntimeError("ctx-local did not drain")
    backlog = len(rows) / (time.perf_counter() - released)
    began = time.perf_counter()
    for row in rows:
        provider.sync_turn(turn_of((row[0], f"again-{row[1]}", *row[2:])))
    if not provider.flush(3600):
        raise RuntimeError("ctx-local did not drain")
    both = len(rows) / (time.perf_counter() - began)
    provider.shutdown()
    logging.getLogger("hermes_ctx_plugins").setLevel(logging.NOTSET)
    if stored_turns(home) != 2 * len(rows) + 1:
        raise RuntimeError("ctx-local lost or duplicated turns while draining")
    return backlog, both


# ------------------------------------------------------------------------------------------------ report


def machine() -> str:
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    return (f"{platform.machine()}, {os.cpu_count()} cores, {platform.system()} {platform.release()}, Python "
            f"{platform.python_version()}, SQLite {sqlite3.sqlite_version}, load average {load}")


def goal(name: str, measured: float, limit: float, unit: str, ok: bool, anchor: str) -> dict[str, Any]:
    return {"goal": name, "measured": round(measured, 3), "limit": limit, "unit": unit, "ok": ok, "anchor": anchor}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repeats and turns (about 2 minutes)")
    parser.add_argument("--sizes", default="1000,10000,100000", help="stored turns for the prefetch table")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--pace-ms", type=float, default=10.0, help="pause between a writer's turns, paced")
    parser.add_argument("--holographic-max", type=int, default=10_000,
                        help="largest store holographic is filled to when no cached store exists")
    parser.add_argument("--summary-json", type=Path, help="also write the goal rows as JSON")
    args = parser.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    reps, per_writer, holo_per_writer, drain_turns = (1, 300, 40, 5_000) if args.quick else (3, 1_000, 150, 20_000)
    holographic_max = min(args.holographic_max, 1_000) if args.quick else args.holographic_max
    print(f"command: {' '.join([Path(sys.executable).name, *sys.argv])}")
    print(f"machine: {machine()}")
    fresh = rows_of(generate(max(6 * per_writer, drain_turns), WRITE_SEED))
    with tempfile.TemporaryDirectory(prefix="bench-local-") as tmp:
        work = Path(tmp)
        prefetch = [prefetch_at(size, args.seed, reps, holographic_max, work) for size in sizes]
        print(f"prefetch done ({', '.join(f'{p.size:,}' for p in prefetch)} turns)", file=sys.stderr)
        writes: dict[tuple[str, int, str], Writes] = {}
        for mode, pace in (("paced", args.pace_ms / 1000), ("flat out", 0.0)):
            for writers in (1, 6):
                for system, count in (("local", per_writer), ("holographic", holo_per_writer)):
                    home = work / f"writes-{system}-{writers}-{mode.replace(' ', '-')}"
                    home.mkdir()
                    turns = [(u, f"{mode}-{writers}-{s}", n, a, b) for u, s, n, a, b in fresh[:writers * count]]
                    writes[system, writers, mode] = write_path(system, home, turns, writers, pace)
                    if system == "local" and stored_turns(home) != len(turns) + writers:
                        raise RuntimeError("ctx-local lost or duplicated turns")
        print("write path done", file=sys.stderr)
        backlog, both = drain_rates(fresh[:drain_turns], work)
    goals = report(prefetch, writes, backlog, both, args.pace_ms, reps)
    if args.summary_json:
        args.summary_json.write_text(json.dumps(goals, indent=2) + "\n", encoding="utf-8")
    return 0


def report(prefetch: list[Prefetch], writes: dict[tuple[str, int, str], Writes], backlog: float, both: float,
           pace_ms: float, reps: int) -> list[dict[str, Any]]:
    def holo(values: list[float] | None, q: float) -> str:
        return f"{ms(values, q):.2f}" if values else "-"

    print(f"\nprefetch: every question, {reps} timed pass(es) after an untimed one, ms "
          "(holographic '-': not filled to that size, see --holographic-max)")
    print_table(("stored turns", "ctx-local p50", "ctx-local p95", "holographic p50", "holographic p95"),
                [(f"{p.size:,}", f"{ms(p.local, 0.5):.2f}", f"{ms(p.local, 0.95):.2f}", holo(p.holographic, 0.5),
                  holo(p.holographic, 0.95)) for p in prefetch])
    print(f"\nwrite path: ctx-local sync_turn / holographic fact_store add, ms; paced = a turn every {pace_ms:g} ms "
          "per process; cpu = the calling thread's CPU time")
    rows = []
    for (system, writers, mode), w in writes.items():
        rows.append((f"{writers}", mode, "ctx-local sync_turn" if system == "local" else "holographic add",
                     f"{len(w.wall):,}", f"{ms(w.wall, 0.5):.3f}", f"{ms(w.wall, 0.99):.2f}", f"{ms(w.cpu, 0.99):.2f}",
                     f"{w.rate:,.0f}"))
    print_table(("writers", "mode", "call", "calls", "p50", "p99", "cpu p99", "stored/s"), rows)
    holo_rate = writes["holographic", 1, "flat out"].rate
    print("\ndrain, turns/s (one process)")
    print_table(("ctx-local backlog drain", "ctx-local sync + store", "holographic adds"),
                [(f"{backlog:,.0f}", f"{both:,.0f}", f"{holo_rate:,.0f}")])
    largest = prefetch[-1]
    paced_local, paced_holo = writes["local", 6, "paced"], writes["holographic", 6, "paced"]
    holo_p95 = f"holographic {ms(largest.holographic, 0.95):.1f} ms" if largest.holographic else (
        "holographic not filled to this size")
    return [
        goal(f"ctx-local prefetch p95 at {largest.size:,} turns", ms(largest.local, 0.95), GOAL_PREFETCH_MS, "ms",
             ms(largest.local, 0.95) <= GOAL_PREFETCH_MS, holo_p95),
        goal(f"ctx-local sync_turn p99, 6 writer processes (a turn every {pace_ms:g} ms each)",
             ms(paced_local.wall, 0.99), GOAL_SYNC_MS, "ms", ms(paced_local.wall, 0.99) <= GOAL_SYNC_MS,
             f"holographic fact_store add {ms(paced_holo.wall, 0.99):.1f} ms"),
        goal("ctx-local write-behind drain (at least)", backlog, GOAL_DRAIN, "turns/s", backlog >= GOAL_DRAIN,
             f"holographic {holo_rate:,.0f} adds/s"),
    ]


if __name__ == "__main__":
    sys.exit(main())

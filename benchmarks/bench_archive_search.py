"""Benchmark: does ``ctx_search`` find the archived message that answers a paraphrased question? The archive's
lexical search beside its hybrid one (``ctx_plugins.archive.embedder: e5-small``), on ``recall_eval/data``.

Run from the repository root::

    .venv/bin/python benchmarks/bench_archive_search.py --split tune                   # tune here
    .venv/bin/python benchmarks/bench_archive_search.py --split tune --weights 0.3,0.5,0.7,0.9
    .venv/bin/python benchmarks/bench_archive_search.py --split test                   # once, to report
    .venv/bin/python benchmarks/bench_archive_search.py --quick                        # every 5th conversation

The data (``recall_eval/data/README.md``): 60 conversations per half (a third in Chinese), each a user with 10-30
dated sessions and 7 questions; most questions share no content word with their evidence. Each conversation is
archived into a fresh SQLite archive as one session, as compactions would archive it: each of its sessions one
``record()`` of every turn's user and assistant messages, in order. With the embedder, every message is then
embedded (by default in the benchmark's own thread, batches of 64: the archive's background thread runs at
nice 19 and crawls on a busy machine; ``--background`` uses it; the time it took is reported). Each question
is then asked once through ``ctx_search`` (the tool call the model makes, ``limit`` 5) in the conversation's session.

A hit: every evidence needle (a distinctive piece of the evidence turn, unique to it in its conversation) is in
the messages of the returned ids, as ``ctx_expand`` would show them, whitespace normalised — whether the model
that reads the results finds the answer. "snippet hit" is the stricter count of needles in the snippets the
result list itself shows. Latency: the whole tool call, the question's embedding included (not cached).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))
from _common import machine_line, write_summary  # noqa: E402
from bench_recall import percentile, print_table  # noqa: E402
from recall_eval import generate as recall_eval  # noqa: E402

from hermes_ctx_plugins import SessionInfo, storage  # noqa: E402
from hermes_ctx_plugins.archive.archiver import Archiver  # noqa: E402
from hermes_ctx_plugins.config import ArchiveSettings, load_config  # noqa: E402
from hermes_ctx_plugins.embedding import to_bytes  # noqa: E402
from hermes_ctx_plugins.storage import message_text  # noqa: E402
from hermes_ctx_plugins.tokens import get_counter  # noqa: E402

LIMIT = 5
GOAL_GAIN = 0.10
COUNTER = get_counter("gpt-4o")


@dataclass
class Outcome:
    question: dict[str, Any]
    hit: bool
    snippet_hit: bool
    seconds: float


def _normal(text: str) -> str:
    return " ".join(text.split())


def archive_conversation(conversation: dict[str, Any], home: Path, embedder: str,
                         background: bool) -> tuple[Archiver, Archiver, float]:
    """A fresh archive holding ``conversation``: (lexical archiver, hybrid archiver or the lexical one again
    when ``embedder`` is "", seconds the archiving and embedding took). ``background``: embedded by the
    archive's own thread (nice 19: slow on a busy machine), else here, in batches of 64."""
    path = home / "archive.db"
    config = load_config({"ctx_plugins": {"archive": {"path": str(path), "retention_days": 0, "max_megabytes": 0}}})
    lexical = Archiver(storage.open_archive(config), ArchiveSettings(path=str(path), retention_days=0, max_megabytes=0))
    hybrid = lexical
    if embedder:
        hybrid = Archiver(storage.open_archive(config), ArchiveSettings(
            path=str(path), retention_days=0, max_megabytes=0, embedder=embedder),
            open_store=lambda: storage.open_archive(config))
    user = conversation["user_id"]
    started = time.perf_counter()
    position = 0
    for session in conversation["sessions"]:
        removed = []
        for turn in session["turns"]:
            removed += [(position, {"role": "user", "content": turn["user"]}),
                        (position + 1, {"role": "assistant", "content": turn["assistant"]})]
            position += 2
        ids = hybrid.store.record(session_id=conversation["id"], user_id=user, strategy="bench", removed=removed)
        if hybrid.hybrid is not None and background:
            hybrid.hybrid.recorded(ids)
    if hybrid.hybrid is not None and background and not hybrid.hybrid.flush(3600):
        raise RuntimeError("the archive's embedding did not finish")
    if hybrid.hybrid is not None and not background:  # what the thread does, at normal priority, larger batches
        embedder, store = hybrid.hybrid.embedder, hybrid.store
        while rows := store.unembedded(embedder.model_id, limit=64):
            vectors = embedder.passages([message_text(s.message) for s in rows])
            store.put_vectors(embedder.model_id, [(s.id, to_bytes(v)) for s, v in zip(rows, vectors, strict=True)])
    return lexical, hybrid, time.perf_counter() - started


def ask(archiver: Archiver, conversation: dict[str, Any], before: Callable[[], None] = lambda: None) -> list[Outcome]:
    session = SessionInfo(session_id=conversation["id"], user_id=conversation["user_id"])
    scope = archiver.scope(session)
    outcomes = []
    for question in conversation["questions"]:
        before()
        started = time.perf_counter()
        answer = json.loads(archiver.handle_tool_call("ctx_search", {"query": question["question"], "limit": LIMIT},
                                                      session=session, counter=COUNTER))
        seconds = time.perf_counter() - started
        results = answer["results"]
        shown = _normal(" ".join(r["snippet"].replace("«", "").replace("»", "") for r in results))
        messages = archiver.store.get([r["id"] for r in results], scope)
        expanded = _normal(" ".join(str(m.message.get("content") or "") for m in messages))
        needles = [_normal(n) for n in question["needles"]]
        outcomes.append(Outcome(question, all(n in expanded for n in needles), all(n in shown for n in needles),
                                seconds))
    return outcomes


def rate(outcomes: Sequence[Outcome], field: str = "hit", where: Callable[[dict[str, Any]], bool] = bool) -> str:
    chosen = [getattr(o, field) for o in outcomes if where(o.question)]
    return f"{sum(chosen) / len(chosen):.3f}" if chosen else "-"


def report(results: dict[str, list[Outcome]], split: str) -> None:
    print(f"\nctx_search (limit {LIMIT}) finds the evidence, {split} half "
          f"({len(next(iter(results.values())))} questions; paraphrase = shares no content word with its evidence)")
    print_table(("system", "hit", "snippet hit", "en", "zh", "paraphrase", "overlap", "p50 ms", "p95 ms"),
                [(name, rate(o), rate(o, "snippet_hit"), rate(o, where=lambda q: q["lang"] == "en"),
                  rate(o, where=lambda q: q["lang"] == "zh"), rate(o, where=lambda q: not q["overlap"]),
                  rate(o, where=lambda q: bool(q["overlap"])),
                  f"{percentile([x.seconds for x in o], 0.5) * 1e3:.1f}",
                  f"{percentile([x.seconds for x in o], 0.95) * 1e3:.1f}") for name, o in results.items()])
    types = sorted({o.question["type"] for o in next(iter(results.values()))})
    print("\nby question type (hit)")
    print_table(("type", *results), [(t, *(rate(o, where=lambda q, t=t: q["type"] == t) for o in results.values()))
                                     for t in types])


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--split", choices=("test", "tune"), default="tune",
                        help="tune: the half to choose on; test: run once, at the end, to report")
    parser.add_argument("--quick", action="store_true", help="every 5th conversation")
    parser.add_argument("--embedder", default="e5-small", help="the hybrid side's embedder ('' = lexical only)")
    parser.add_argument("--weights", default="", help="dense_weight values to compare (default: the option's)")
    parser.add_argument("--background", action="store_true",
                        help="embed with the archive's background thread (nice 19), as in use; default: in the "
                             "benchmark's thread, the same embedder and store calls in larger batches")
    parser.add_argument("--summary-json", help="also write the goal rows as JSON")
    args = parser.parse_args(argv)
    conversations = recall_eval.load(args.split)
    if args.quick:
        conversations = conversations[::5]
    weights = [float(w) for w in args.weights.split(",") if w] or [ArchiveSettings().dense_weight]
    print(f"command: {' '.join([Path(sys.executable).name, *sys.argv])}")
    print(machine_line())
    messages = sum(2 * len(s["turns"]) for c in conversations for s in c["sessions"])
    print(f"data: {args.split} half, {len(conversations)} conversations, {messages:,} archived messages")
    results: dict[str, list[Outcome]] = {"lexical": []}
    embedding_seconds = 0.0
    with tempfile.TemporaryDirectory(prefix="bench-archive-search-") as tmp:
        for n, conversation in enumerate(conversations):
            home = Path(tmp) / str(n)
            home.mkdir()
            lexical, hybrid, seconds = archive_conversation(conversation, home, args.embedder, args.background)
            embedding_seconds += seconds
            try:
                results["lexical"] += ask(lexical, conversation)
                if hybrid.hybrid is not None:
                    index = hybrid.hybrid.index
                    for weight in weights:
                        hybrid.hybrid.weight = weight
                        results.setdefault(f"hybrid w={weight:g}", [])
                        # every question embedded anew, as a new tool call's would be
                        results[f"hybrid w={weight:g}"] += ask(hybrid, conversation, index._questions.clear)
            finally:
                hybrid.close()
                lexical.close()
    if args.embedder:
        how = "by the archive's background thread" if args.background else "in the benchmark's thread"
        print(f"archived and embedded {how}: {messages / embedding_seconds:.1f} messages/s "
              f"({embedding_seconds:.0f} s in all)")
    report(results, args.split)
    if args.summary_json:
        lexical_hit = sum(o.hit for o in results["lexical"]) / len(results["lexical"])
        rows = []
        for name, outcomes in results.items():
            if name == "lexical":
                continue
            hit = sum(o.hit for o in outcomes) / len(outcomes)
            rows.append({"goal": f"archive ctx_search ({args.split} half), {name}: evidence in the results",
                         "measured": round(hit, 3), "limit": round(lexical_hit + GOAL_GAIN, 3), "unit": "",
                         "ok": hit >= lexical_hit + GOAL_GAIN, "anchor": f"lexical {lexical_hit:.3f}",
                         "p50_ms": round(statistics.median(o.seconds for o in outcomes) * 1e3, 1)})
        write_summary(args.summary_json, rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())

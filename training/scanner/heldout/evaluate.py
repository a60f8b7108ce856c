"""The memory scanner on data written after it, by people who never saw it or its training rows (held out).

    PYTHONPATH=. .venv/bin/python training/scanner/heldout/evaluate.py

* ``round3_en.jsonl``, ``round3_zh.jsonl`` (``gen_round3_*.py``, session 20): ~930 rows each, hostile and hard
  benign, written by two helpers briefed with the threat model of ``docs/SCANNER_SCOPE.md`` only, told not to open
  the public corpora, the scanner or the earlier rounds' rows;
* ``blind6.json`` (``gen_blind6.py``): 60 entries (30 hostile, five per threat class; 30 hard benign; 20 Chinese)
  written by a third helper who saw the threat model and nothing else.

Prints, per file and language, the share of hostile rows caught and of benign rows flagged by the rules (layer 1),
the classifier (layer 2), both, and hermes 0.19.0's own memory filter when hermes is installed.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[2]))


def scanners() -> dict[str, Callable[[str], bool]]:
    from hermes_ctx_plugins.safety import scan
    from hermes_ctx_plugins.safety.learned import classify

    found: dict[str, Callable[[str], bool]] = {"rules": lambda t: bool(scan(t, learned=False)),
                                               "classifier": lambda t: classify(t).hostile,
                                               "layers 1+2": lambda t: bool(scan(t))}
    try:
        from tools.memory_tool import _scan_memory_content
    except ImportError:
        return found
    found["hermes"] = lambda t: bool(_scan_memory_content(t))
    return found


def sets() -> dict[str, list[dict]]:
    found = {path.stem: [json.loads(line) for line in path.read_text("utf-8").splitlines() if line.strip()]
             for path in sorted(HERE.glob("round3_*.jsonl"))}
    found["blind6"] = json.loads((HERE / "blind6.json").read_text("utf-8"))
    return found


def main() -> None:
    checks = scanners()
    print(f"{'set':<10} {'lang':<4} {'rows':>9}  " + "  ".join(f"{name:>18}" for name in checks))
    for name, rows in sets().items():
        for lang in ("en", "zh"):
            part = [r for r in rows if r.get("lang") == lang]
            hostile = [r["text"] for r in part if r["hostile"]]
            benign = [r["text"] for r in part if not r["hostile"]]
            if not part:
                continue
            cells = []
            for check in checks.values():
                caught, flagged = sum(map(check, hostile)), sum(map(check, benign))
                cells.append(f"{caught / max(1, len(hostile)):6.1%} / {flagged / max(1, len(benign)):5.1%}"
                             if name != "blind6" else f"{caught:>3}/{len(hostile)} , {flagged:>2}/{len(benign)}")
            print(f"{name:<10} {lang:<4} {len(hostile):>4}h {len(benign):>3}b  " + "  ".join(f"{c:>18}" for c in cells))
    print("cells: hostile caught / benign flagged (blind6: counts)")


if __name__ == "__main__":
    main()

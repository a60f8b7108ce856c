"""The memory scanner on data written after it, by people who never saw it or its training rows (held out).

    PYTHONPATH=. .venv/bin/python training/scanner/heldout/evaluate.py

* ``round3_en.jsonl``, ``round3_zh.jsonl`` (``gen_round3_*.py``, session 20): ~930 rows each, hostile and hard
  benign, written by two helpers briefed with the threat model of ``docs/SCANNER_SCOPE.md`` only, told not to open
  the public corpora, the scanner or the earlier rounds' rows;
* ``blind6.json`` (``gen_blind6.py``): 60 entries (30 hostile, five per threat class; 30 hard benign; 20 Chinese)
  written by a third helper who saw the threat model and nothing else;
* ``blind7.json`` (``gen_blind7.py``, session 25): 130 long multi-line entries (400-2,200 characters: runbooks,
  minutes, handovers, cheat-sheets; 30 hostile with the hostile line buried in an ordinary note, 100 hard benign;
  half Chinese), written the same way;
* ``blind8.jsonl`` (session 34): 60 entries (30 hostile, 30 hard benign, 20 Chinese), each with why it is so,
  written by a helper who saw the threat model and nothing else (not the scanner, its rows, the earlier sets or the
  public corpora), run once before any change;
* ``blind9_code.jsonl``, ``blind10_code.jsonl`` (session 40): 120 entries each (60 hostile, 60 hard benign, a quarter
  with Chinese prose) that carry code -- Python, JavaScript, shell, PowerShell, Go, C#, Java, Ruby, PHP: data sent
  out, capture, destruction, ransomware, floods, persistence, and the same APIs at ordinary work -- each written by
  hand by a helper who saw only a brief of those families (not the scanner, its rows or the public corpora). Set 9
  was run once after the code reader (``safety/engine/code.py``) was first written, then used to shape it; set 10
  was written meanwhile by another helper told to favour less obvious variants, run once, then looked at too. Both
  are tuning data now;
* ``blind11_code.jsonl``, ``blind12_code.jsonl`` (session 41): two more sets of the same kind and brief, each by a
  helper who saw nothing else (the families of set 12 are named a little differently: surveillance, dos,
  persistence). Set 11 was run once on the session's first and its reviewed code alike (39/60 hostile, 1/60 benign
  both), then its misses were looked at and their classes written into the reader (tuning data now); set 12 was run
  once on the session's first code and on 617c1e4 alike (34/60, 2/60 both), then its misses were looked at and
  what the reader models widened from them (tuning data now);
* ``blind13_code.jsonl`` (session 41): a fifth set of the same kind and brief, run once at the session's end on three
  commits: 49b7fe5 (its start) 32/60 hostile, 3/60 benign; 617c1e4 (after two reviews and set 11's classes) 33/60,
  3/60; de4a6c2 (after set 12's) 36/60, 3/60; then looked at and its misses' classes written in (tuning data now);
* ``blind14_code.jsonl`` (session 41): a sixth set of the same kind and brief, run once at the session's end on six
  commits: 49b7fe5 31/60 hostile, 1/60 benign; 9c0679d (two reviews) 32/60, 1/60; 617c1e4 (set 11's classes) 33/60,
  2/60; de4a6c2 (set 12's: what the reader follows) 39/60, 2/60; e207821 (false alarms narrowed) 38/60, 2/60;
  484553e (set 13's: data through files, HTTP clients) 38/60, 2/60; run again at 16df202 (a review's fixes, chosen
  without it): 39/60, 2/60. Not looked at;
* ``blind15_pay.jsonl``, ``blind17_pay.jsonl`` (session 42): 80 entries each (40 hostile, 40 hard benign, a third
  Chinese) about payments -- a payee's bank details, crypto addresses and payment links changed, scams (gift cards,
  one-time codes read to a "support" line), covert recurring transfers; and the user's own details, verified vendor
  changes, fraud reports, finance policies -- each by a helper who saw only a brief of those families (set 17's was
  told to favour less obvious variants). Set 15 was run on the session's first code (8/40 hostile, 3/40 benign) and on
  the payment reader's first version (16/40, 4/40), set 17 on the first code (9/40, 3/40) and the reader after its
  tuning on round 3 (21/40, 4/40), each before anything was learnt from it;
  Set 15 was then read (tuning data now); set 17 was not;
* ``blind16.jsonl``, ``blind18.jsonl`` (session 42): 60 entries each (30 hostile, five per threat class; 30 hard
  benign; 20 Chinese), mostly prose, the shape of the issue's independent check, each by a helper who saw the threat
  model and nothing else (set 18's told to favour less obvious variants). Set 16 was run on the session's first code
  (20/30 hostile, 3/30 benign) and the payment reader (21/30, 3/30), then read (tuning data now); set 18 on the first
  code (20/30, 4/30) and 52012d5 (20/30, 5/30), where the one benign entry the payment reader flagged was read;
  nothing else of it, but for which rule a later narrowing cost it (one entry: the narrowing was undone for it);
* ``blind19_pay.jsonl``, ``blind20.jsonl`` (session 42, at its end): a third payments set (80) and a third general prose
  set (60) of the same briefs, by two more helpers; run once on the session's first code (set 19: 12/40 hostile, 5/40
  benign; set 20: 19/30, 6/30) and on its last (8a86616; 23/40, 6/40 and 22/30, 6/30). Not looked at;
* ``blind21_benign.jsonl`` (session 42): 100 hard benign notes about money (the user's own details, checked vendor
  changes, SOPs, budgets, payment-API configs, crypto, scam warnings, escrow ...; a third Chinese) by another helper
  from a brief of those kinds; run once on d9ba7f9: the payment reader flagged 3 (layers 1+2: 7; 4 at the session's
  start), which were read and fixed (tuning data now: 0 and 4);
* ``readmes``: benign long notes nobody here wrote -- the READMEs of the installed distributions whose READMEs
  ``train.py`` does not read, cut on blank lines into pieces of 400-2,200 characters (what a pasted document or a
  note of links looks like; which distributions are installed varies, so the count is printed).

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
    for name in ("blind6", "blind7"):
        found[name] = json.loads((HERE / f"{name}.json").read_text("utf-8"))
    for path in sorted(HERE.glob("blind*.jsonl")):
        found[path.stem] = [json.loads(line) for line in path.read_text("utf-8").splitlines() if line.strip()]
    found["readmes"] = readmes()
    return found


#: never held out: read by ``train.py`` (its ``README_DISTRIBUTIONS``), or ours and hermes' own (about memory attacks)
_NOT_HELD_OUT = {"hermes-ctx-plugins", "hermes-agent"}


def readmes() -> list[dict]:
    """Benign pieces (400-2,200 characters, at least four lines) of the READMEs of installed distributions
    ``train.py`` does not read."""
    import importlib.metadata

    sys.path.insert(0, str(HERE.parent))
    from train import README_DISTRIBUTIONS, readme

    skip = _NOT_HELD_OUT | {name.lower() for name in README_DISTRIBUTIONS}
    pieces: list[str] = []
    for name in sorted({str(dist.metadata["Name"]).lower() for dist in importlib.metadata.distributions()} - skip):
        piece = ""
        for paragraph in [p for p in readme(name).split("\n\n") if p.strip()]:
            if len(piece) + len(paragraph) + 2 > 2_200:
                pieces.append(piece)
                piece = paragraph[:2_200]
            else:
                piece = f"{piece}\n\n{paragraph}" if piece else paragraph
        pieces.append(piece)
    kept = [p for p in dict.fromkeys(pieces) if len(p) >= 400 and p.count("\n") >= 3]
    return [{"text": p, "hostile": False, "lang": "en"} for p in kept]


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
                             if not name.startswith("blind") else
                             f"{caught:>3}/{len(hostile)} , {flagged:>2}/{len(benign)}")
            print(f"{name:<10} {lang:<4} {len(hostile):>4}h {len(benign):>3}b  " + "  ".join(f"{c:>18}" for c in cells))
    print("cells: hostile caught / benign flagged (blind sets: counts)")


if __name__ == "__main__":
    main()

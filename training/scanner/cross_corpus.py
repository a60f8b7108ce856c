"""Would training layer 2 on the public corpora help? Measured across corpora, the only honest way (issue #19).

Run from the repository root (needs the ``train`` extra)::

    .venv/bin/python training/scanner/cross_corpus.py [--c 16] [--data DIR]

For each file of the public corpora (``../shared/data/injection``, in scope by ``docs/SCANNER_SCOPE.md``), two models
are trained the way ``train.py`` trains the shipped one (same features, ``C``, threshold flagging 0.5 % of the training
benign rows out of fold) and scored on that file's rows, which neither saw:

* ``ours``: the rows under ``training/scanner/`` only (what ships);
* ``+ public``: those plus every in-scope row of the *other* public files (never a row of the file scored).

Each text is scored whole here (the shipped classifier scores every line and sentence too), so the figures are for
comparing the two models, not the shipped layer's. ``+ rules``: either the model or layer 1 flags. Nothing is written;
the shipped weights never see a public row (docs/SCANNER_SCOPE.md).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path[:0] = [str(ROOT), str(HERE), str(ROOT / "benchmarks")]

import train  # noqa: E402
from bench_scan_public import load, pct  # noqa: E402

from hermes_ctx_plugins.safety import scan  # noqa: E402
from hermes_ctx_plugins.safety.learned import features  # noqa: E402


def fit_and_score(train_rows: list[dict], test_rows: list[dict], c: float) -> list[bool]:
    from sklearn.linear_model import LogisticRegression

    counts = [features(r["text"]) for r in train_rows]
    y = [r["hostile"] for r in train_rows]
    idf, unseen = train.idf_table(counts, 2)
    vectoriser, x = train.matrix(counts, idf, unseen)
    cut = train.threshold_for(train.out_of_fold(x, y, c), y, 0.005)
    model = LogisticRegression(C=c, class_weight="balanced", max_iter=3_000).fit(x, y)
    tests = vectoriser.transform([train.vector(features(r["text"]), idf, unseen) for r in test_rows])
    return [bool(p >= cut) for p in model.predict_proba(tests)[:, 1]]


def share(flags: list[bool], rows: list[dict], hostile: bool) -> str:
    picked = [f for f, r in zip(flags, rows, strict=True) if r["hostile"] == hostile]
    return pct(sum(picked), len(picked))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    default = os.environ.get("HERMES_CTX_INJECTION_DATA", str(ROOT.parent / "shared" / "data" / "injection"))
    parser.add_argument("--data", type=Path, default=Path(default))
    parser.add_argument("--c", type=float, default=16.0, help="the shipped model's C (train.py picks it out of fold)")
    args = parser.parse_args()
    ours = train.rows()
    public = [r for r in load(args.data) if r["scope"] != "out"]
    rules = {r["text"]: bool(scan(r["text"], learned=False)) for r in public}
    every: dict[str, tuple[list[dict], list[bool]]] = {"ours": ([], []), "+ public": ([], [])}
    print(f"{'scored file':<26}{'model':<10}{'hostile caught':>18}{'+ rules':>18}{'benign flagged':>18}{'+ rules':>18}")
    for held in sorted({r["file"] for r in public}):
        test = [r for r in public if r["file"] == held]
        others = [{"text": r["text"], "hostile": r["hostile"], "lang": r["lang"], "source": f"public/{r['file']}"}
                  for r in public if r["file"] != held]
        for name, rows in (("ours", ours), ("+ public", ours + others)):
            flags = fit_and_score(rows, test, args.c)
            either = [f or rules[r["text"]] for f, r in zip(flags, test, strict=True)]
            every[name][0].extend(test)
            every[name][1].extend(either)
            print(f"{held[:25]:<26}{name:<10}{share(flags, test, True):>18}{share(either, test, True):>18}"
                  f"{share(flags, test, False):>18}{share(either, test, False):>18}", flush=True)
    for name, (rows, either) in every.items():
        print(f"{'every file (layers 1+2)':<26}{name:<10}{'':>18}{share(either, rows, True):>18}{'':>18}"
              f"{share(either, rows, False):>18}")


if __name__ == "__main__":
    main()

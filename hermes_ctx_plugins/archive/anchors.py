"""Exact identifiers worth keeping in view after a compaction: the anchor index.

hermes' own evaluation found that what compaction loses are exact identifiers — commit SHAs,
paths, ports, error strings — mostly in assistant text, because a summary paraphrases them. The
index is extracted mechanically (no model involved, so it cannot paraphrase either) from what a
compaction removed, and rides along with the summary or marker, each identifier verbatim.

Extraction is deliberately greedy on shape and conservative on noise: a "number with a unit"
needs the unit, a SHA needs both digits and letters, a path needs a slash and a name. Chinese is read
too (``5分钟``, ``30秒``, ``最多5次``, ``3月22日``, ``端口9443``); a memory's provenance (``#12 · 2026-12-05``)
is not an issue number, hermes' memory meter (``13% — 290/2,200 chars``) not a quantity, and a column of
a log (``elapsed=120ms`` forty times over) shows its first few values. The index is text we write: what
it may show of an anchor copied from a tool's output or a page is decided by :func:`shown`.

It is linear in what it reads, and reads no more than an index could use: given a limit (the
archiver's is the index's budget in tokens, twice the anchors it could show), each kind stops at
that many, and the scan stops at twice that many in all (a compaction of 55 MB of tool logs has
hundreds of thousands; the index shows about a thousand) or after :data:`READ_PER_ANCHOR` characters
for each (1 MB for the default index: text that has few identifiers in its first megabyte is not
read to its end to find some). Long texts are read a piece at a time (cut at whitespace), so the
scan can stop in the middle of one, after every kind had its turn at what was read.
"""

from __future__ import annotations

import bisect
import functools
import logging
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from ..safety import scan

log = logging.getLogger(__name__)

#: where a run of identifier characters (``[\w.-]``) has its first word character, the only place
#: a match that must take the rest of the run can start: one starting later in the run would end
#: at the same place, so the patterns below that start there (rather than at any ``\b``, which
#: re-read the run to its end from every dot of ``a.a.a…``: quadratic) find the same anchors in
#: linear time. Up to three dots or dashes may lead the run (``.github/…``, ``../x``); the leading
#: ``\b`` only makes the common case (inside a word) fail fast.
_RUN = r"\b(?:(?<![\w.-])|(?<=(?<![\w.-])[.-])|(?<=(?<![\w.-])[.-]{2})|(?<=(?<![\w.-])[.-]{3}))(?=\w)"
_NOT_PROVENANCE = r"(?! · (?:fact saved )?\d{4}-\d\d-\d\d)"
_MONTH = (r"Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|May|June?|July?|Aug(?:ust)?|Sep(?:tember|t)?|"
          r"Oct(?:ober)?|Nov(?:ember)?|Dec(?:ember)?")
#: kana, CJK ideographs and Hangul: word characters, yet a number written right after one starts there
_CJK = "\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af\uf900-\ufaff"

#: kind -> pattern; the order is the index's order and, under a tight budget, its priority
_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("error", re.compile(
        r"\b(?:[A-Z][A-Za-z]+(?:Error|Exception|Warning)|E[A-Z0-9]{3,}|errno \d+|HTTP \d{3})"
        r"(?::[ \t]*[^\n]{1,120}?(?=\.\s|\.?$|\n))?", re.M)),
    ("url", re.compile(r"\b(?:https?|wss?|s3|gs|ftp|postgres(?:ql)?|mysql|redis|mongodb)://[^\s<>\"'`)\]]+")),
    ("sha", re.compile(r"\b(?=[0-9a-f]*[a-f])(?=[0-9a-f]*[0-9])[0-9a-f]{7,40}\b")),
    # a memory's provenance (``#12 · 2026-12-05``: ctx-local's search results and recall blocks) is not an issue
    ("issue", re.compile(rf"(?:{_RUN}[\w.-]++/[\w.-]++)?#\d{{1,7}}\b{_NOT_PROVENANCE}"
                         r"|\b(?i:PR|MR|GH|issue|ticket|bug)[ #-]?\d{1,7}\b"
                         r"|\b[A-Z][A-Z0-9]{1,9}-\d{1,7}\b")),  # JIRA keys are upper case: falcon-3 is not one
    ("path", re.compile(rf"(?:~|\.{{1,2}})?(?:/[\w.@+-]+){{2,}}/?|{_RUN}[\w.-]++(?:/[\w.@+-]+)+\.[A-Za-z0-9]{{1,8}}\b"
                        r"|\b[A-Za-z]:\\(?:[\w .-]+\\)*[\w .-]+")),
    ("version", re.compile(r"\bv?\d+\.\d+(?:\.\d+)+(?:[-+][\w.]+)?\b|\bv\d+\.\d+\b")),
    ("port", re.compile(rf"(?:\blocalhost|{_RUN}[\w-]++(?:\.[\w-]++)++|\]):\d{{2,5}}\b|\bport[ :=]+\d{{2,5}}\b"
                        r"|端口号?[ \t]*(?:(?:[:\uff1a=]|为|是)[ \t]*)?\d{2,5}(?!\d)", re.I)),
    ("key", re.compile(r"\b[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+\b|\b[a-z][a-z0-9_]*(?:\.[a-z][a-z0-9_]*){1,5}\b"
                       r"(?=\s*[:=])")),
    # each branch starts at a character of a set (a lookahead's, or \d checked behind): what is not one is passed
    # over fast, rather than tried by every branch (a Chinese date starts at a digit: tried at each, it cost 3x)
    ("date", re.compile(
        rf"(?=[ADFJMNOS\d])(?:\b(?:{_MONTH})\.?[ \t]\d{{1,2}}(?:st|nd|rd|th)?\b(?:,?[ \t]\d{{4}}\b)?"
        r"(?![ \t]*\d{1,2}:\d\d)"  # a log line's date and time: not a date anyone set
        rf"|\b\d{{1,2}}(?:st|nd|rd|th)?[ \t](?:{_MONTH})\b(?:,?[ \t]\d{{4}}\b)?"
        r"|\d(?<!\d\d)\d{0,3}+(?:[ \t]?年[ \t]?\d{1,2})?[ \t]?月[ \t]?\d{1,2}[ \t]?[日号])")),
    # a number right after a Chinese or Japanese character is one (``间隔5分钟``); hermes' memory meter is not
    ("quantity", re.compile(
        rf"\d(?<![^\W{_CJK}]\d|\.\d)\d*+(?:[.,]\d+)?\s?(?:(?:[KMGTP]i?B|[kKMGT]b(?:ps)?|bytes?|ms|µs|us|ns|s|sec|"
        r"secs|seconds?|min|minutes?|h|hours?|days?|weeks?|attempts|retries|%|[kMG]?Hz|req/s|rps|qps|tokens?|rows|"
        r"MB/s|GB/s|°C)(?![\w/])(?! — [\d,]+/[\d,]+ chars)"
        r"|毫秒|微秒|纳秒|秒钟|秒|分钟|个?小时|天|周|星期|个月|次|倍|字节|行|条|核)")),
)
KINDS = tuple(kind for kind, _ in _PATTERNS)
#: what every match of a kind contains, one of these at least (case-folded for a pattern that
#: ignores case): a piece with none of them is not searched for that kind (prose rarely has a ``/``)
_NEEDS = {"url": ("://",), "path": ("/", ":\\"), "port": (":", "port", "端口"),
          "date": ("月", "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")}
_PATH_NOISE = re.compile(r"^(?:https?:|//)|^/\d+/\d+$")
_TRAILING = ".,;:!?'\")]}"
#: a text longer than this is read in pieces of about this size, each cut where whitespace starts
PIECE = 1 << 16
#: with a limit, the most characters read for each anchor of the limit
READ_PER_ANCHOR = 400
#: the most quantities kept of one shape -- the same unit after the same two words, digits aside: a column of a
#: log or a table (``elapsed=120ms`` … ``elapsed=159ms``) shows its first few, not forty near-identical values
SAME_SHAPE = 3
_SHAPED = frozenset({"quantity"})
_DIGITS = re.compile(r"\w*\d\w*")  # a number, an id, a hash: one ``0``
#: a tag, as a fence or a chat template writes it: no anchor carries one into the index
_MARKUP = re.compile(r"[<\uff1c\ufe64\u2039\u3008]\s*(?:/\s*)?[A-Za-z][\w:-]*(?:[\s/>\uff1e\ufe65\u203a\u3009]|$)"
                     r"|<\|[\w:-]+\|>|archive-index", re.I)
_SPACE = re.compile(r"\s")


@dataclass(frozen=True)
class Anchor:
    kind: str
    text: str


class _Taken:
    """The positions of one piece of text taken by anchors of earlier kinds, as sorted disjoint
    runs, so asking about a position is a binary search (not a walk over every anchor so far)."""

    def __init__(self) -> None:
        self.starts: list[int] = []
        self.ends: list[int] = []

    def covers(self, position: int) -> bool:
        at = bisect.bisect_right(self.starts, position) - 1
        return at >= 0 and position < self.ends[at]

    def add(self, spans: list[tuple[int, int]]) -> None:
        """Take ``spans`` too (one kind's, in order; they may overlap earlier kinds' runs)."""
        if not spans:
            return
        starts: list[int] = []
        ends: list[int] = []
        for start, end in sorted([*zip(self.starts, self.ends, strict=True), *spans]):
            if ends and start <= ends[-1]:
                ends[-1] = max(ends[-1], end)
            else:
                starts.append(start)
                ends.append(end)
        self.starts, self.ends = starts, ends


def extract(texts: Iterable[str], *, limit: int | None = None) -> list[Anchor]:
    """Every anchor in ``texts``, first occurrence first, each value once (as the kind that found
    it first). A later kind's match that starts or ends inside an earlier kind's is not one (a
    URL's path is not a second anchor, nor its port). Of the quantities of one shape (a column of a
    log: :func:`_first_of_shape`) the first :data:`SAME_SHAPE` are; the rest count as found all the
    same (the scan reads what it read before they were left out).

    :param limit: the most anchors the caller wants of each kind: each kind stops there, and
        the scan stops once it has found twice that many, or read ``limit *`` :data:`READ_PER_ANCHOR`
        characters (``None``: read everything).
    """
    seen: set[str] = set()
    shapes: dict[str, int] = {}
    passed_over = 0
    found: list[Anchor] = []
    counts = dict.fromkeys(KINDS, 0)
    read = 0
    for piece in _pieces(texts):
        if limit is not None and (len(found) + passed_over >= 2 * limit or read >= limit * READ_PER_ANCHOR):
            break
        read += len(piece)
        # a kind that is full is still read while a later one is not: its matches hide theirs
        wanted = [n for n, kind in enumerate(KINDS) if limit is None or counts[kind] < limit]
        if not wanted:
            break
        taken = _Taken()
        for kind, pattern in _PATTERNS[: wanted[-1] + 1]:
            if not _may_match(kind, pattern, piece):
                continue
            spans: list[tuple[int, int]] = []
            for match in pattern.finditer(piece):
                start, end = match.span()
                value = match.group(0).rstrip(_TRAILING).strip()
                if not value or taken.covers(start) or taken.covers(end - 1):
                    continue
                if kind == "path" and _PATH_NOISE.search(value):
                    continue
                spans.append((start, end))
                if value not in seen and (limit is None or counts[kind] < limit):
                    seen.add(value)
                    counts[kind] += 1
                    if kind in _SHAPED and not _first_of_shape(shapes, piece, start, value):
                        passed_over += 1  # counted as found: the scan reads no further for leaving it out
                        continue
                    found.append(Anchor(kind, value))
            taken.add(spans)
    return found


def _first_of_shape(shapes: dict[str, int], piece: str, start: int, value: str) -> bool:
    """Whether ``value`` (found at ``start`` of ``piece``) is among the first :data:`SAME_SHAPE` of its
    shape; counts it. Its shape: its unit, and the two words before it on its line (within 32
    characters), where each run of word characters with a digit (``1259``, ``v1``, ``3f9a2c1``) reads ``0``."""
    begin = piece.rfind("\n", max(0, start - 32), start) + 1 or max(0, start - 32)
    words = _DIGITS.sub("0", piece[begin:start]).split()[-2:]
    shape = " ".join([*words, value.lstrip("0123456789.,").strip()])
    shapes[shape] = shapes.get(shape, 0) + 1
    return shapes[shape] <= SAME_SHAPE


def _may_match(kind: str, pattern: re.Pattern[str], piece: str) -> bool:
    needs = _NEEDS.get(kind)
    if needs is None or any(need in piece for need in needs):
        return True
    return bool(pattern.flags & re.I) and any(need in piece.lower() for need in needs)


def _pieces(texts: Iterable[str]) -> Iterator[str]:
    """Each text, a long one in pieces of about :data:`PIECE` characters, each cut just before
    whitespace (no anchor but an error message or a spaced quantity crosses that)."""
    for text in texts:
        start = 0
        while start < len(text):
            cut = _SPACE.search(text, start + PIECE) if len(text) - start > PIECE else None
            end = cut.start() if cut else len(text)
            yield text[start:end]
            start = end


@functools.lru_cache(maxsize=4096)
def shown(anchor: Anchor) -> Anchor | None:
    """What of ``anchor`` the index may show; ``None``: nothing.

    The index is text we write into the summary, and an anchor is copied verbatim from what a tool
    returned or a page said: it must pass the memory scanner's rules (layer 1: an instruction for the
    model, data sent out, a secret, hidden characters), and may not carry markup (``</archive-index>``
    would end the block early). An error whose message fails keeps its name (``ValueError``); any
    other anchor that fails is left out (the original is in the archive, behind ``ctx_expand``). The
    classifier (layer 2) is not asked: it takes a bare URL for a planted link (101 of 143,604 benign
    anchors of the benchmark transcripts; the rules: none). About 30 µs an anchor; remembered.
    """
    findings = [f"{f.kind}: {f.detail}" for f in scan(anchor.text, learned=False)]
    if _MARKUP.search(anchor.text):
        findings.append("markup")
    if not findings:
        return anchor
    log.info("archive index: an anchor (%s) withheld: %s", anchor.kind, "; ".join(findings))  # its text may be a secret
    name, colon, _ = anchor.text.partition(":")
    if anchor.kind == "error" and colon:
        return shown(Anchor("error", name))
    return None


def render(anchors: Iterable[Anchor]) -> str:
    """``kind: a · b · c`` lines, kinds in index order."""
    by_kind: dict[str, list[str]] = {}
    for anchor in anchors:
        by_kind.setdefault(anchor.kind, []).append(anchor.text)
    return "\n".join(f"{kind}: " + " · ".join(by_kind[kind]) for kind in KINDS if kind in by_kind)

"""Exact identifiers worth keeping in view after a compaction: the anchor index.

hermes' own evaluation found that what compaction loses are exact identifiers — commit SHAs,
paths, ports, error strings — mostly in assistant text, because a summary paraphrases them. The
index is extracted mechanically (no model involved, so it cannot paraphrase either) from what a
compaction removed, and rides along with the summary or marker, each identifier verbatim.

Extraction is deliberately greedy on shape and conservative on noise: a "number with a unit"
needs the unit, a SHA needs both digits and letters, a path needs a slash and a name.

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
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

#: where a run of identifier characters (``[\w.-]``) has its first word character, the only place
#: a match that must take the rest of the run can start: one starting later in the run would end
#: at the same place, so the patterns below that start there (rather than at any ``\b``, which
#: re-read the run to its end from every dot of ``a.a.a…``: quadratic) find the same anchors in
#: linear time. Up to three dots or dashes may lead the run (``.github/…``, ``../x``); the leading
#: ``\b`` only makes the common case (inside a word) fail fast.
_RUN = r"\b(?:(?<![\w.-])|(?<=(?<![\w.-])[.-])|(?<=(?<![\w.-])[.-]{2})|(?<=(?<![\w.-])[.-]{3}))(?=\w)"

#: kind -> pattern; the order is the index's order and, under a tight budget, its priority
_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("error", re.compile(
        r"\b(?:[A-Z][A-Za-z]+(?:Error|Exception|Warning)|E[A-Z0-9]{3,}|errno \d+|HTTP \d{3})"
        r"(?::[ \t]*[^\n]{1,120}?(?=\.\s|\.?$|\n))?", re.M)),
    ("url", re.compile(r"\b(?:https?|wss?|s3|gs|ftp|postgres(?:ql)?|mysql|redis|mongodb)://[^\s<>\"'`)\]]+")),
    ("sha", re.compile(r"\b(?=[0-9a-f]*[a-f])(?=[0-9a-f]*[0-9])[0-9a-f]{7,40}\b")),
    ("issue", re.compile(rf"(?:{_RUN}[\w.-]++/[\w.-]++)?#\d{{1,7}}\b|\b(?i:PR|MR|GH|issue|ticket|bug)[ #-]?\d{{1,7}}\b"
                         r"|\b[A-Z][A-Z0-9]{1,9}-\d{1,7}\b")),  # JIRA keys are upper case: falcon-3 is not one
    ("path", re.compile(rf"(?:~|\.{{1,2}})?(?:/[\w.@+-]+){{2,}}/?|{_RUN}[\w.-]++(?:/[\w.@+-]+)+\.[A-Za-z0-9]{{1,8}}\b"
                        r"|\b[A-Za-z]:\\(?:[\w .-]+\\)*[\w .-]+")),
    ("version", re.compile(r"\bv?\d+\.\d+(?:\.\d+)+(?:[-+][\w.]+)?\b|\bv\d+\.\d+\b")),
    ("port", re.compile(rf"(?:\blocalhost|{_RUN}[\w-]++(?:\.[\w-]++)++|\]):\d{{2,5}}\b|\bport[ :=]+\d{{2,5}}\b",
                        re.I)),
    ("key", re.compile(r"\b[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+\b|\b[a-z][a-z0-9_]*(?:\.[a-z][a-z0-9_]*){1,5}\b"
                       r"(?=\s*[:=])")),
    ("quantity", re.compile(
        r"(?<![\w.])\d+(?:[.,]\d+)?\s?(?:[KMGTP]i?B|[kKMGT]b(?:ps)?|bytes?|ms|µs|us|ns|s|sec|secs|seconds?|min|"
        r"minutes?|h|hours?|days?|%|[kMG]?Hz|req/s|rps|qps|tokens?|rows|MB/s|GB/s|°C)(?![\w/])")),
)
KINDS = tuple(kind for kind, _ in _PATTERNS)
#: what every match of a kind contains, one of these at least (case-folded for a pattern that
#: ignores case): a piece with none of them is not searched for that kind (prose rarely has a ``/``)
_NEEDS = {"url": ("://",), "path": ("/", ":\\"), "port": (":", "port")}
_PATH_NOISE = re.compile(r"^(?:https?:|//)|^/\d+/\d+$")
_TRAILING = ".,;:!?'\")]}"
#: a text longer than this is read in pieces of about this size, each cut where whitespace starts
PIECE = 1 << 16
#: with a limit, the most characters read for each anchor of the limit
READ_PER_ANCHOR = 400
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
    URL's path is not a second anchor, nor its port).

    :param limit: the most anchors the caller wants of each kind: each kind stops there, and
        the scan stops once it has found twice that many, or read ``limit *`` :data:`READ_PER_ANCHOR`
        characters (``None``: read everything).
    """
    seen: set[str] = set()
    found: list[Anchor] = []
    counts = dict.fromkeys(KINDS, 0)
    read = 0
    for piece in _pieces(texts):
        if limit is not None and (len(found) >= 2 * limit or read >= limit * READ_PER_ANCHOR):
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
                    found.append(Anchor(kind, value))
                    counts[kind] += 1
            taken.add(spans)
    return found


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


def render(anchors: Iterable[Anchor]) -> str:
    """``kind: a · b · c`` lines, kinds in index order."""
    by_kind: dict[str, list[str]] = {}
    for anchor in anchors:
        by_kind.setdefault(anchor.kind, []).append(anchor.text)
    return "\n".join(f"{kind}: " + " · ".join(by_kind[kind]) for kind in KINDS if kind in by_kind)

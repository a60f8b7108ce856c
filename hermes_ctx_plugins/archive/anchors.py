"""Exact identifiers worth keeping in view after a compaction: the anchor index.

hermes' own evaluation found that what compaction loses are exact identifiers — commit SHAs,
paths, ports, error strings — mostly in assistant text, because a summary paraphrases them. The
index is extracted mechanically (no model involved, so it cannot paraphrase either) from what a
compaction removed, and rides along with the summary or marker, each identifier verbatim.

Extraction is deliberately greedy on shape and conservative on noise: a "number with a unit"
needs the unit, a SHA needs both digits and letters, a path needs a slash and a name.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

#: kind -> pattern; the order is the index's order and, under a tight budget, its priority
_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("error", re.compile(
        r"\b(?:[A-Z][A-Za-z]+(?:Error|Exception|Warning)|E[A-Z0-9]{3,}|errno \d+|HTTP \d{3})"
        r"(?::[ \t]*[^\n]{1,120}?(?=\.\s|\.?$|\n))?", re.M)),
    ("url", re.compile(r"\b(?:https?|wss?|s3|gs|ftp|postgres(?:ql)?|mysql|redis|mongodb)://[^\s<>\"'`)\]]+")),
    ("sha", re.compile(r"\b(?=[0-9a-f]*[a-f])(?=[0-9a-f]*[0-9])[0-9a-f]{7,40}\b")),
    ("issue", re.compile(r"(?:\b[\w.-]+/[\w.-]+)?#\d{1,7}\b|\b(?i:PR|MR|GH|issue|ticket|bug)[ #-]?\d{1,7}\b"
                         r"|\b[A-Z][A-Z0-9]{1,9}-\d{1,7}\b")),  # JIRA keys are upper case: falcon-3 is not one
    ("path", re.compile(r"(?:~|\.{1,2})?(?:/[\w.@+-]+){2,}/?|\b[\w.-]+(?:/[\w.@+-]+)+\.[A-Za-z0-9]{1,8}\b"
                        r"|\b[A-Za-z]:\\(?:[\w .-]+\\)*[\w .-]+")),
    ("version", re.compile(r"\bv?\d+\.\d+(?:\.\d+)+(?:[-+][\w.]+)?\b|\bv\d+\.\d+\b")),
    ("port", re.compile(r"(?:\b(?:localhost|[\w-]+(?:\.[\w-]+)+)|\]):\d{2,5}\b|\bport[ :=]+\d{2,5}\b", re.I)),
    ("key", re.compile(r"\b[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+\b|\b[a-z][a-z0-9_]*(?:\.[a-z][a-z0-9_]*){1,5}\b"
                       r"(?=\s*[:=])")),
    ("quantity", re.compile(
        r"(?<![\w.])\d+(?:[.,]\d+)?\s?(?:[KMGTP]i?B|[kKMGT]b(?:ps)?|bytes?|ms|µs|us|ns|s|sec|secs|seconds?|min|"
        r"minutes?|h|hours?|days?|%|[kMG]?Hz|req/s|rps|qps|tokens?|rows|MB/s|GB/s|°C)(?![\w/])")),
)
KINDS = tuple(kind for kind, _ in _PATTERNS)
_PATH_NOISE = re.compile(r"^(?:https?:|//)|^/\d+/\d+$")
_TRAILING = ".,;:!?'\")]}"


@dataclass(frozen=True)
class Anchor:
    kind: str
    text: str


def extract(texts: Iterable[str]) -> list[Anchor]:
    """Every anchor in ``texts``, first occurrence first, each once (per kind and text)."""
    seen: set[str] = set()
    found: list[Anchor] = []
    for text in texts:
        if not text:
            continue
        taken: list[tuple[int, int]] = []  # a URL's path is not a second anchor, nor its port
        for kind, pattern in _PATTERNS:
            for match in pattern.finditer(text):
                start, end = match.span()
                value = match.group(0).rstrip(_TRAILING).strip()
                if not value or any(s <= start < e or s < end <= e for s, e in taken):
                    continue
                if kind == "path" and _PATH_NOISE.search(value):
                    continue
                taken.append((start, end))
                if value not in seen:
                    seen.add(value)
                    found.append(Anchor(kind, value))
    return found


def render(anchors: Iterable[Anchor]) -> str:
    """``kind: a · b · c`` lines, kinds in index order."""
    by_kind: dict[str, list[str]] = {}
    for anchor in anchors:
        by_kind.setdefault(anchor.kind, []).append(anchor.text)
    return "\n".join(f"{kind}: " + " · ".join(by_kind[kind]) for kind in KINDS if kind in by_kind)

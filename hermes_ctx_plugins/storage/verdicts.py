"""A memory's safety verdict, taken once when it is written instead of at every recall.

Recall scans every excerpt it shows (a stored turn that reads as a prompt injection is withheld).
Most memories are short and shown whole, the same text turn after turn, so the writer scans that
text once and stores a digest of it with the memory: the SHA-256 of the scanner's version
(:func:`~hermes_ctx_plugins.safety.version.rules_version`) and the exact text found clean. Recall
skips the scan of an excerpt only when the excerpt's digest equals the stored one — the very text
the scanner passed, under the very rules that judge it now. Any other excerpt (a cut: removing a
negation or its context can make a clean text hostile), a text changed since (redacted again), or a
new scanner version is scanned as before. A hostile text gets no digest, so it is scanned — and
withheld — at every recall.
"""

from __future__ import annotations

import hashlib

from ..safety import scan
from ..safety.version import rules_version
from . import text as query
from .records import Record, memory_text

#: the longest excerpt ctx-local's recall shows: the write-time verdict covers what is shown whole
#: (or cut to this from its start), and its scan's cost stays bounded whatever the text's length
WHOLE_CHARS = 1_600


def digest(shown: str) -> str:
    """The verdict key of ``shown`` under the current scanner ("" when the scanner has no version)."""
    version = rules_version()
    if not version:
        return ""
    return hashlib.sha256(f"{version}\x00{shown}".encode("utf-8", "surrogatepass")).hexdigest()[:32]


def clean_digest(record: Record, *, cleared: str = "") -> str:
    """:func:`digest` of what recall shows of ``record`` at most (its text as :func:`excerpt
    <hermes_ctx_plugins.storage.text.excerpt>` gives it at :data:`WHOLE_CHARS`) when the scanner
    finds that clean, or when it is ``cleared``, the very text the judge found benign at the write (the layers
    disagreed on it: an approval, as the file provider keeps one); "" otherwise."""
    shown = query.excerpt(memory_text(record.kind, record.user_text, record.assistant_text, record.fact_text),
                          (), WHOLE_CHARS)
    return digest(shown) if (cleared and shown == cleared) or not scan(shown) else ""


def judged_clean(shown: str, verdict: str) -> bool:
    """Whether ``shown`` is the exact text a stored ``verdict`` found clean under the current scanner."""
    return bool(verdict) and digest(shown) == verdict

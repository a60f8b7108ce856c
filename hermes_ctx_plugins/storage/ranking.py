"""How a search ranks and quotes what it finds: the definition every backend's results follow.

SQLite's FTS5 computes the ranking natively (``bm25()`` over its tokenizers' words); a backend that
ranks outside SQLite — the in-memory one, or a server database that only filters — calls these
functions, so its results order as SQLite's do. Snippets are alike but not identical: FTS5's
``snippet()`` picks its own window of 48 tokens, :func:`snippet` the one described there; both mark
every match ``«…»``, which is what callers rely on.

**BM25**, FTS5's variant: for each phrase of the query that occurs in a document,
``idf * f * (k1 + 1) / (f + k1 * (1 - b + b * length / average_length))``, summed over the phrases,
with ``k1`` 1.2, ``b`` 0.75 and ``idf = log((N - n + 0.5) / (n + 0.5))`` — ``N`` documents in the
whole store, ``n`` of them containing the phrase (every owner's count: the statistics are the
table's, not the caller's scope) — and an idf that would not be positive counted as 1e-6. Higher
is better (FTS5 reports it negated).

What a "document", its "length" and a phrase's "occurrences" are depends on the store:

* **ctx-local's memories** count words: the words of a memory's body as
  :func:`~hermes_ctx_plugins.storage.text.tokens` cuts them, its length how many there are plus
  the scope tokens SQLite indexes beside them (:func:`memory_length`: FTS5 measures a row over all
  its columns), and a phrase of several words occurs where they stand in a row (:func:`phrase_count`).
* **The archive** counts characters, as FTS5's trigram index does: a phrase occurs wherever its
  text does, overlapping occurrences included (:func:`substring_count`), both sides case-folded
  (:func:`folded`), and a text of n characters is n - 2 words long (:func:`trigram_length`).
  A hit's snippet marks the matches ``«…»`` (:func:`snippet`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

#: BM25's parameters, FTS5's
K1, B = 1.2, 0.75
#: what FTS5 counts an idf as when the formula would make it zero or negative (a phrase in most documents)
MIN_IDF = 1e-6
#: a snippet shows about this many characters from the first match on, and :data:`SNIPPET_BEFORE` before it
SNIPPET_CHARS = 48
SNIPPET_BEFORE = 16
#: a hit found by short terms only (no phrase to mark) shows the start of its text, this long
LEADING_CHARS = 160


def bm25(frequencies: Sequence[int], document_counts: Sequence[int], documents: int, length: float,
         average_length: float) -> float:
    """A document's BM25 over several phrases (see the module docs): how often each phrase occurs
    in it, in how many of the store's ``documents`` each occurs, its length and the average length
    of all of them."""
    score = 0.0
    for frequency, count in zip(frequencies, document_counts, strict=True):
        if frequency:
            idf = inverse_frequency(documents, count)
            norm = 1 - B + B * length / (average_length or 1.0)
            score += idf * frequency * (K1 + 1) / (frequency + K1 * norm)
    return score


def inverse_frequency(documents: int, count: int) -> float:
    """A phrase's idf: in ``count`` of the store's ``documents``. A count read at another moment than the total
    (a server database read in two statements while another process writes) may exceed it: it is taken as the
    total (``log`` of a negative number raised ``ValueError`` out of every search then; a red-team pass)."""
    count = min(count, documents)
    return max(math.log((documents - count + 0.5) / (count + 0.5)), MIN_IDF)


# -- ctx-local's memories: words ---------------------------------------------------------------------


def memory_length(words: int, visibility: str) -> int:
    """A memory's length for BM25: its ``words`` and the scope tokens SQLite's index holds in its
    other column (a user and a chat token, and a profile token for visibility ``user``)."""
    return words + (3 if visibility == "user" else 2)


def phrase_count(words: Sequence[str], phrase: Sequence[str]) -> int:
    """How often ``phrase`` (one word or several in a row) occurs in ``words``."""
    target, size = tuple(phrase), len(phrase)
    return sum(1 for i in range(len(words) - size + 1) if tuple(words[i:i + size]) == target)


# -- the archive: characters, as a trigram index sees them -------------------------------------------


def folded(text: str) -> str:
    """``text`` lower-cased character for character (a character whose lower case is longer, like
    ``İ``, stays as it is), so that positions in it are positions in ``text``."""
    if text.isascii():  # the same, character for character, in C (a 4.8 MB log: ~1 s one character at a time)
        return text.lower()
    return "".join(c if len(lower := c.lower()) != 1 else lower for c in text)


def substring_count(text: str, phrase: str) -> int:
    """Occurrences of ``phrase`` in ``text``, overlapping ones included (as a trigram index counts)."""
    count, start = 0, text.find(phrase)
    while start != -1:
        count, start = count + 1, text.find(phrase, start + 1)
    return count


def trigram_length(text: str) -> int:
    """A text's length in a trigram index: one word per three-character piece, n - 2 for n characters."""
    return max(len(text) - 2, 0)


def snippet(text: str, phrases: Sequence[str]) -> str:
    """What a hit shows of ``text``: from :data:`SNIPPET_BEFORE` characters before the first match
    of any of ``phrases`` (already :func:`folded`) to :data:`SNIPPET_CHARS` after its start, each
    match marked ``«…»`` (the longest where several start at one place), a cut at either end marked ``…``."""
    lowered = folded(text)
    first = min((i for i in (lowered.find(p) for p in phrases) if i >= 0), default=0)
    start, end = max(0, first - SNIPPET_BEFORE), min(len(text), first + SNIPPET_CHARS)
    marked, at = [], start
    while at < end:
        sizes = [len(p) for p in phrases if lowered.startswith(p, at)]
        if sizes:
            size = max(sizes)
            marked.append(f"«{text[at:at + size]}»")
            at += size
        else:
            marked.append(text[at])
            at += 1
    return ("…" if start else "") + "".join(marked) + ("…" if at < len(text) else "")

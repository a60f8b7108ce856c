"""Text normalisation for the index and for queries, the words a backend indexes, excerpts.

Shared by every memory backend. Everything a backend indexes goes through :func:`index_text` and
everything a query asks through :func:`query_terms`, so both sides agree: NFKC (fullwidth letters and
digits become ASCII), CJK runs split into overlapping bigrams (Chinese and Japanese have no spaces; most
words are two characters, and bigrams match them without a dictionary), the rest cut into words as
SQLite FTS5's ``unicode61`` tokenizer does, diacritics removed and English words reduced by the
``porter`` stemmer ("adopted" finds "adoption"): FTS5 does that last part itself, a backend without it
calls :func:`tokens`.

A query reaches a backend as a list of such terms, never as text the user wrote: quotes, ``*``, ``:``,
operators and parentheses in the input are only ever part of a term's letters, or dropped.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Iterable

from .stem import stem

#: how much of one memory is indexed (the rest is stored, and shown in excerpts, but not searched)
INDEX_CHARS = 65_536
#: at most this many distinct terms from a query reach FTS5 (a pasted log must not cost seconds)
MAX_QUERY_TERMS = 24
#: longer tokens are noise (base64 blobs, hashes) and are not searched
MAX_TERM_CHARS = 48

_CJK = ("\u2e80-\u2fdf\u3040-\u30ff\u3100-\u312f\u3190-\u31ff\u3400-\u4dbf\u4e00-\u9fff"
        "\uac00-\ud7af\uf900-\ufaff\U00020000-\U0003134f")
_CJK_RUN = re.compile(f"[{_CJK}]+")
# a CJK run, or a word of anything else: "SSH端口" is two tokens, as index_text spaces them
_TOKEN = re.compile(f"[{_CJK}]+|[^\\W_{_CJK}]+")
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")

# Function words, and the words people use to ask a memory anything ("do you remember what I told
# you about ..."), which carry no topic of their own.
STOP_WORDS = frozenset("""
a about above after again against all am an and any are aren as at be because been before being below
between both but by can cannot could couldn did didn do does doesn doing don down during each few for
from further had hadn has hasn have haven having he her here hers herself him himself his how i if in
into is isn it its itself let me more most my myself no nor not of off on once only or other ought our
ours ourselves out over own same she should shouldn so some such than that the their theirs them
themselves then there these they this those through to too under until up very was wasn we were weren
what when where which while who whom why will with won would wouldn you your yours yourself
yourselves ll re ve s t d m
remember recall remind reminded told tell telling mention mentioned said say saying know knew please
thanks thank hey hi hello ok okay yes yeah earlier ever anything something again also
""".split())
_CJK_STOP_CHARS = frozenset("的了是在我你他她它吗呢吧啊和也都就不这那有个么什们之与及或")


def _nfkc(text: str) -> str:
    return unicodedata.normalize("NFKC", text)


def _bigrams(run: str) -> list[str]:
    return [run] if len(run) == 1 else [run[i:i + 2] for i in range(len(run) - 1)]


def index_text(text: str) -> str:
    """``text`` as the FTS5 index stores it: NFKC, CJK runs as space-separated bigrams, capped;
    a lone surrogate (no UTF-8 for it, and no word) separates words like a space."""
    text = _nfkc(_LONE_SURROGATE.sub(" ", text[:INDEX_CHARS]))
    return _CJK_RUN.sub(lambda m: " " + " ".join(_bigrams(m[0])) + " ", text)


def words(text: str) -> set[str]:
    """Roughly the terms :func:`query_terms` finds in ``text``, all of them and found in C for the most part (to compare
    texts, not to search): case-folded words other than stop words, and CJK runs as bigrams; not NFKC-normalised."""
    folded = text.casefold()
    runs = [] if folded.isascii() else _CJK_RUN.findall(folded)
    found = set(_TOKEN.findall(folded)).difference(STOP_WORDS)
    if runs:
        found.difference_update(runs)
        found.update(gram for run in runs for gram in _bigrams(run))
    return found


def query_terms(query: str) -> list[str]:
    """The searchable terms of ``query``: stop words, one-letter words and noise dropped, deduplicated."""
    terms: list[str] = []
    seen: set[str] = set()
    for match in _TOKEN.finditer(_nfkc(query[:INDEX_CHARS]).casefold()):
        token = match[0]
        if _CJK_RUN.fullmatch(token):
            candidates = [g for g in _bigrams(token) if not set(g) <= _CJK_STOP_CHARS]
        elif token in STOP_WORDS or len(token) > MAX_TERM_CHARS or (len(token) < 2 and not token.isdigit()):
            continue
        else:
            candidates = [token]
        for term in candidates:
            if term not in seen:
                seen.add(term)
                terms.append(term)
    if len(terms) > MAX_QUERY_TERMS:
        # Longer words are the more specific ones; keep those, in the order they were asked.
        keep = set(sorted(terms, key=len, reverse=True)[:MAX_QUERY_TERMS])
        terms = [t for t in terms if t in keep][:MAX_QUERY_TERMS]
    return terms


# ------------------------------------------------------------------------------------------ tokens
#
# How SQLite's FTS5 ``porter unicode61 remove_diacritics 2`` tokenizer cuts :func:`index_text` and a
# query term into words, for a backend that ranks without FTS5: runs of letters, digits and private-use
# characters, case-folded, Latin letters without their diacritics, Porter-stemmed. It agrees with
# SQLite on the letters and digits its Unicode tables (6.1) know; letters added to Unicode since
# (Georgian Mtavruli, Cherokee small letters, …), symbols and emoji can be cut or folded differently
# (a backend without FTS5 may then find what SQLite does not).

#: the combining marks FTS5 drops inside a word (its "diacritics"); any other mark separates words
_DIACRITICS = frozenset(chr(c) for c in (
    0x300, 0x301, 0x302, 0x303, 0x304, 0x306, 0x307, 0x308, 0x309, 0x30A, 0x30B, 0x30C, 0x30F, 0x311, 0x31B,
    0x323, 0x324, 0x325, 0x326, 0x327, 0x328, 0x32D, 0x32E, 0x330, 0x331))


def _word_char(char: str) -> bool:
    if char.isascii():
        return char.isalnum()
    category = unicodedata.category(char)
    return category[0] in "LN" or category == "Co"


@functools.lru_cache(maxsize=4096)
def _fold(char: str) -> str:
    """``char`` case-folded (one character for one, as FTS5 folds) and, for a Latin letter, without
    its diacritics."""
    folded = char.casefold()
    if len(folded) > 1:  # "ß" would become "ss": FTS5 folds one character to one ("ẞ" to "ß")
        folded = char.lower()
    base = unicodedata.normalize("NFD", folded)
    if len(base) > 1 and base[0].isascii() and all(unicodedata.category(c) == "Mn" for c in base[1:]):
        return base[0]
    return folded if len(folded) == 1 else char


def tokens(text: str) -> list[str]:
    """The words FTS5 indexes for ``text`` (already :func:`index_text` or a query term), in order."""
    words: list[str] = []
    word: list[str] = []
    for char in text:
        if _word_char(char):
            word.append(char if "a" <= char <= "z" else _fold(char))
        elif word and char in _DIACRITICS:
            continue
        elif word:
            words.append(stem("".join(word)))
            word = []
    if word:
        words.append(stem("".join(word)))
    return words


# ------------------------------------------------------------------------------------------ excerpts


def _stem_prefix(term: str) -> str:
    """A prefix that finds the inflected forms of an (English) term in raw text."""
    return term if len(term) <= 4 or not term.isascii() else term[:max(4, len(term) - 3)]


def printable(text: str) -> str:
    """``text`` fit to show: each lone surrogate (which the store keeps, but UTF-8 cannot carry)
    becomes U+FFFD."""
    return _LONE_SURROGATE.sub("\ufffd", text)


def excerpt(text: str, terms: Iterable[str], max_chars: int) -> str:
    """At most ``max_chars`` of :func:`printable` ``text``, around the first place a term occurs;
    whitespace squeezed."""
    text = " ".join(printable(text).split())
    if len(text) <= max_chars:
        return text
    if max_chars <= 1:
        return "…"[:max_chars]
    folded = text.casefold()
    hits = [i for i in (folded.find(_stem_prefix(t)) for t in terms) if i >= 0]
    first = min(hits) if hits else 0
    start = max(0, min(first - max_chars // 4, len(text) - max_chars + 1))
    if start and (space := text.find(" ", start, start + 20)) != -1:
        start = space + 1
    end = start + max_chars - (1 if start else 0) - 1
    # a redaction marker is shown whole or not at all (half of "[REDACTED:password]" reads as text of the memory)
    if (opened := text.rfind(_MARKER_OPEN, max(0, start - _MARKER_LONGEST), start + len(_MARKER_OPEN) - 1)) != -1 \
            and opened < start and (closed := text.find("]", opened)) >= start and closed - opened < _MARKER_LONGEST:
        start = min(closed + 1, end)
    if (opened := text.rfind(_MARKER_OPEN, max(start, end - _MARKER_LONGEST), end + len(_MARKER_OPEN) - 1)) != -1 \
            and (closed := text.find("]", opened)) >= end and closed - opened < _MARKER_LONGEST:
        end = opened
    body = text[start:end]
    return ("…" if start else "") + body.rstrip() + "…"


#: how a redaction marker (``[REDACTED:<kind>]``) opens, and the longest one looked for around an excerpt's cut
_MARKER_OPEN = "[REDACTED:"
_MARKER_LONGEST = 64

"""What a model's or user's archive search asks for, shared by every archive backend.

Terms are identifier-shaped runs (``src/app.py``, ``3f9a2c1``, ``ECONNREFUSED``) and Chinese runs;
English stop words are dropped; runs of Chinese are split into overlapping three-character pieces,
since an index of any three-character substring (SQLite's trigram FTS5) cannot match a shorter string
and Chinese has no spaces. Terms are OR-ed: BM25 then ranks messages that match more (and rarer) terms
first, and the words in the order asked (as a phrase, and pairwise) score on top. Terms shorter than
three characters can only be found by a plain substring scan; they are used that way only when
nothing longer was asked for.

A term is searched by at most its first :data:`MAX_TERM_CHARS` characters, and the words-in-order phrase
by at most :data:`MAX_PHRASE_CHARS`: SQLite's trigram index reads every trigram of a phrase at once (the
list of where each occurs, held in memory together), so a query of a few 10,000-character "words" (a
base64 blob, a minified line, or a hostile model's) took gigabytes and could get the process killed,
while the first 128 characters of an identifier already name it.
"""

from __future__ import annotations

import itertools
import re

_TERM = re.compile(r"[\w./:@#+-]+", re.UNICODE)
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]+")
_STOP = frozenset("""
a about above after again all also am an and any are as at be been before being below between both but by
can could did do does doing done down during each few for from further had has have having he her here hers
him his how i if in into is it its itself just me more most my no nor not now of off on once only or other
our out over own same she should so some such than that the their them then there these they this those
through to too under until up very was we were what when where which while who whom why will with would you
your yours did use used using tell show find search look remember recall earlier before said what's which
""".split())
MAX_TERMS = 24
#: the most characters of one term searched for (its start; a SHA-512 in hex is 128)
MAX_TERM_CHARS = 128
#: the most characters of the phrase of every word in order (as long as a pair of the longest terms)
MAX_PHRASE_CHARS = 2 * MAX_TERM_CHARS + 1


def terms(text: str) -> tuple[list[str], list[str]]:
    """The query's terms: (usable by the trigram index, too short for it)."""
    long, short = [], []
    for run in _CJK.findall(text):
        if len(run) >= 3:
            long += [run[i:i + 3] for i in range(min(len(run), MAX_TERM_CHARS) - 2)]
        else:
            short.append(run)
    for word in _TERM.findall(_CJK.sub(" ", text)):
        word = word.strip("./:@#+-_")
        if not word or word.lower() in _STOP:
            continue
        (long if len(word) >= 3 else short).append(word[:MAX_TERM_CHARS])
    return list(dict.fromkeys(long))[:MAX_TERMS], list(dict.fromkeys(short))[:MAX_TERMS]


def phrases(text: str) -> tuple[list[str], list[str]]:
    """What a search for ``text`` looks for: ``(phrases, [])``, any of which may match — the terms,
    and for several words the words in their order as a phrase and pairwise, which then score on top
    of each word alone (BM25 sums) — or, with only short terms, ``([], terms)``, all of which must."""
    long, short = terms(text)
    if not long:
        return [], short
    found = list(long)
    words = [w for w in long if not _CJK.search(w)]
    if len(words) > 1:
        found.insert(0, " ".join(words)[:MAX_PHRASE_CHARS].rstrip())
        found[1:1] = [f"{a} {b}" for a, b in itertools.pairwise(words)]
    return list(dict.fromkeys(found)), []

"""Text normalisation for the index and for queries, FTS5 match expressions, excerpts, scope tokens.

Everything the FTS5 index sees goes through :func:`index_text` and everything a query asks through
:func:`query_terms`, so both sides agree: NFKC (fullwidth letters and digits become ASCII), CJK runs
split into overlapping bigrams (Chinese and Japanese have no spaces; most words are two characters,
and bigrams match them without a dictionary), the rest tokenised by FTS5's ``unicode61`` with
diacritics removed and English words reduced by the ``porter`` stemmer ("adopted" finds "adoption").

A query never reaches FTS5 as text the user wrote: it becomes a list of word tokens, each one a
quoted FTS5 string, OR-joined inside a column filter. Quotes, ``*``, ``NEAR``, ``:``, ``^``, column
names and parentheses in the input are only ever part of a token's letters, or dropped; they cannot
change the expression, and the expression always carries the caller's scope clause.
"""

from __future__ import annotations

import functools
import hashlib
import re
import unicodedata
from collections.abc import Iterable, Sequence

from ...scope import escape_id

#: how much of one memory is indexed (the rest is stored, and shown in excerpts, but not searched)
INDEX_CHARS = 65_536
#: at most this many distinct terms from a query reach FTS5 (a pasted log must not cost seconds)
MAX_QUERY_TERMS = 24
#: longer tokens are noise (base64 blobs, hashes) and are not searched
MAX_TERM_CHARS = 48

_CJK = ("\u2e80-\u2fdf\u3040-\u30ff\u3100-\u312f\u3190-\u31ff\u3400-\u4dbf\u4e00-\u9fff"
        "\uac00-\ud7af\uf900-\ufaff\U00020000-\U0003134f")
_CJK_RUN = re.compile(f"[{_CJK}]+")
_TOKEN = re.compile(f"[{_CJK}]+|[^\\W_]+")
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


def fts_string(term: str) -> str:
    """``term`` as an FTS5 string literal: inside double quotes every character is plain text."""
    return '"' + term.replace('"', '""') + '"'


def match_expression(terms: Sequence[str], scope: Sequence[str]) -> str:
    """The FTS5 MATCH expression: any of ``terms`` in the body, and one of the ``scope`` tokens."""
    if not terms or not scope:
        raise ValueError("a match needs at least one term and one scope token")
    body = " OR ".join(fts_string(t) for t in terms)
    scopes = " OR ".join(fts_string(s) for s in scope)
    return f"scope_text : ({scopes}) AND search_text : ({body})"


# ------------------------------------------------------------------------------------------ scope
#
# A memory's owner is (namespace, user, chat). Each memory's ``scope_text`` holds tokens naming its
# owner and a search may only MATCH the tokens of the caller's own scope. A token is a letter and
# the SHA-256 of the owner written injectively (:func:`~hermes_ctx_plugins.scope.escape_id` of each
# part, ``-``-joined), in decimal: digits pass the porter stemmer and unicode61 unchanged, as one
# token. So no two owners share a token (short of a SHA-256 collision) — and the store checks the
# exact stored ids in SQL as well, so even that could not cross a scope.


def _digest(*parts: str) -> str:
    encoded = "-".join(escape_id(part) for part in parts)
    return str(int.from_bytes(hashlib.sha256(encoded.encode("ascii")).digest(), "big"))


def user_token(namespace: str, user_id: str) -> str:
    """Every memory of ``user_id`` in ``namespace`` carries this token (``share_across_chats``
    searches by it)."""
    return "u" + _digest("user", namespace, user_id)


def chat_token(namespace: str, user_id: str, chat_id: str) -> str:
    """Every memory of ``user_id`` in ``namespace`` made in ``chat_id`` carries this token."""
    return "c" + _digest("chat", namespace, user_id, chat_id)


def profile_token(namespace: str, user_id: str) -> str:
    """A fact ``user_id`` saved in ``namespace`` for all their chats carries this token."""
    return "p" + _digest("profile", namespace, user_id)


@functools.lru_cache(maxsize=1024)
def scope_text(namespace: str, user_id: str, chat_id: str, visibility: str) -> str:
    """The indexed ``scope`` column of one memory."""
    tokens = [user_token(namespace, user_id), chat_token(namespace, user_id, chat_id)]
    if visibility == "user":
        tokens.append(profile_token(namespace, user_id))
    return " ".join(tokens)


def scope_query(namespace: str, user_id: str, chat_id: str, *, share_across_chats: bool) -> list[str]:
    """The scope tokens a session of ``user_id`` in ``namespace`` and ``chat_id`` may read."""
    if share_across_chats:
        return [user_token(namespace, user_id)]
    return [chat_token(namespace, user_id, chat_id), profile_token(namespace, user_id)]


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
    body = text[start:start + max_chars - (1 if start else 0) - 1]
    return ("…" if start else "") + body.rstrip() + "…"

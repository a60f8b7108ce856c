"""FTS5 match expressions, built so that nothing a user or a model types is ever FTS5 syntax.

Every term becomes a double-quoted FTS5 string (inside the quotes ``OR``, ``NEAR``, ``*``, ``:``,
``^``, column names and parentheses are just characters), the strings are OR-joined, and a memory
search always carries the caller's scope clause.

**ctx-local's scope tokens.** A memory's owner is (namespace, user, chat). Each memory's ``scope_text``
column holds tokens naming its owner and a search may only MATCH the tokens of the caller's own scope.
A token is a letter and the SHA-256 of the owner written injectively
(:func:`~hermes_ctx_plugins.scope.escape_id` of each part, ``-``-joined), in decimal: digits pass the
porter stemmer and unicode61 unchanged, as one token. So no two owners share a token (short of a
SHA-256 collision) — and the store checks the exact stored ids in SQL as well, so even that could not
cross a scope.
"""

from __future__ import annotations

import functools
import hashlib
import sqlite3
from collections.abc import Sequence

from ...scope import escape_id
from .. import ranking


def fts_string(term: str) -> str:
    """``term`` as an FTS5 string literal: inside double quotes every character is plain text."""
    return '"' + term.replace('"', '""') + '"'


def match_expression(terms: Sequence[str], scope: Sequence[str]) -> str:
    """The FTS5 MATCH expression: any of ``terms`` in the body, and one of the ``scope`` tokens."""
    if not terms or not scope:
        raise ValueError("a match needs at least one term and one scope token")
    body = " OR ".join([fts_string(t) for t in terms])
    scopes = " OR ".join([fts_string(s) for s in scope])
    return f"scope_text : ({scopes}) AND search_text : ({body})"


@functools.lru_cache(maxsize=4096)  # every search asks for its caller's tokens again
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


def archive_match(phrases: Sequence[str]) -> str:
    """The archive's MATCH expression over its trigram index: any of ``phrases``."""
    return " OR ".join(fts_string(phrase) for phrase in phrases)


def like_patterns(terms: Sequence[str]) -> list[str]:
    """``LIKE ... ESCAPE '\\'`` patterns finding each of ``terms`` anywhere (for terms too short
    for trigrams)."""
    escaped = (t.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") for t in terms)
    return [f"%{t}%" for t in escaped]


#: a text longer than this (characters) gets its snippet as the other backends make it (storage.ranking), not from
#: FTS5's snippet(), which takes time in proportion to its matches times its length: a 0.47 MB log holding the words
#: asked for thousands of times took 1 s, five of 4.8 MB minutes -- and FTS5 made one for every message that
#: matched, not only those shown
SNIPPET_CHARS = 20_000
def snippets(db: sqlite3.Connection, match: str, phrases: Sequence[str], found: Sequence[tuple[int, int]]
              ) -> dict[int, str]:
    """The snippets of the messages ``found`` (id, text length), marked as FTS5 marks them (the match in « »)."""
    short = [ident for ident, length in found if length <= SNIPPET_CHARS]
    folded = [ranking.folded(phrase) for phrase in phrases]  # the other backends' snippet (storage.ranking)
    snippets: dict[int, str] = dict(db.execute(
        f"SELECT rowid, snippet(messages_fts, 0, '«', '»', '…', 48) FROM messages_fts WHERE messages_fts MATCH ? "
        f"AND rowid IN ({','.join('?' * len(short))})", [match, *short]).fetchall()) if short else {}
    for ident, length in found:
        if length > SNIPPET_CHARS:
            (text,) = db.execute("SELECT text FROM messages WHERE id = ?", (ident,)).fetchone()
            snippets[ident] = ranking.snippet(text, folded)
    return snippets

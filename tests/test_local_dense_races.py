"""ctx-local's dense path: races between the background embedder, forgetting, and the vector cache
(found by a red-team pass over the first version).

Each test fails on the code it was written against and says what a user would notice."""

from __future__ import annotations

import sqlite3
import struct
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from local_helpers import say

from hermes_ctx_plugins import SessionInfo, storage
from hermes_ctx_plugins.config import load_config
from hermes_ctx_plugins.memory.local import dense
from hermes_ctx_plugins.storage import Record
from hermes_ctx_plugins.storage.sqlite.memory import LocalStore

ALICE = SessionInfo(session_id="s1", user_id="alice", chat_id="c1")
BOB = SessionInfo(session_id="s2", user_id="bob", chat_id="c1")
TOPICS = ({"kitten", "feline", "cat", "whiskers"}, {"invoice", "salary", "payment", "bank"},
          {"flight", "airport", "trip", "passport"})
#: the embedder stops at a text holding this word until :data:`RELEASE` is set
HOLD = "diaryentry"
ENTERED = threading.Event()
RELEASE = threading.Event()


def embed(texts: list[str]) -> list[list[float]]:
    """One axis per topic, a small constant one; holds on a text with :data:`HOLD` (a slow model)."""
    if any(HOLD in t for t in texts):
        ENTERED.set()
        assert RELEASE.wait(30)
    vectors = []
    for text in texts:
        words = set(text.lower().replace("?", " ").replace(".", " ").split())
        vectors.append([float(len(words & topic)) for topic in TOPICS] + [0.05])
    return vectors


SPEC = f"{__name__}:embed"


def ids_of(path: Path, user: str) -> list[int]:
    store = LocalStore(path)
    try:
        return [m.id for m in store.memories(user_id=user)]
    finally:
        store.close()


def vector_of(path: Path, memory_id: int) -> tuple[float, ...] | None:
    conn = sqlite3.connect(path)
    try:
        row = conn.execute("SELECT vector FROM memory_vectors WHERE memory_id = ?", (memory_id,)).fetchone()
    finally:
        conn.close()
    return None if row is None else struct.unpack(f"<{len(row[0]) // 4}f", row[0])


def test_a_vector_made_from_a_forgotten_memory_never_lands_on_the_memory_that_reuses_its_id(make: Any) -> None:
    """SQLite reuses the largest rowid once that row is deleted (``id INTEGER PRIMARY KEY``, no
    AUTOINCREMENT). The background embedder reads Alice's newest memory, Alice forgets it while the
    model runs, Bob's next turn is stored under the same id, and ``put_vectors`` (which finds the row
    by id alone) stores the embedding of Alice's forgotten text as Bob's memory's vector.

    What a user notices: Alice's forgotten diary entry still shapes what is recalled — Bob, asking
    about cats, is shown his unrelated invoice turn (it carries the vector of Alice's text about her
    kitten), and the embedding of a forgotten memory stays in the file for good (Bob's memory is never
    embedded again: it "has" a vector)."""
    ENTERED.clear()
    RELEASE.clear()
    provider = make(embedder=SPEC)
    try:
        say(provider, ALICE, f"my kitten {HOLD}: she hid whiskers and all under the feline bed", 1)
        assert ENTERED.wait(30), "the embedder never started on Alice's memory"
        [alice_id] = ids_of(provider.path, "alice")
        forgotten = provider.handle_tool_call("ctx_memory_forget", {"ids": [alice_id]}, session=ALICE)
        assert str(alice_id) in forgotten
        say(provider, BOB, "the invoice from the bank arrived", 1)
        deadline = time.monotonic() + 30
        while not ids_of(provider.path, "bob") and time.monotonic() < deadline:
            time.sleep(0.02)
        [bob_id] = ids_of(provider.path, "bob")
    finally:
        RELEASE.set()
    assert provider.flush(30)
    assert bob_id == alice_id  # the premise: SQLite gave Bob's turn the forgotten memory's id
    bobs = vector_of(provider.path, bob_id)
    assert bobs is not None
    # Bob's vector must be his own text's (the payment axis), not Alice's forgotten kitten text's
    assert bobs[1] > bobs[0], f"Bob's memory carries the vector of Alice's forgotten text: {bobs}"
    block = provider.prefetch("is my feline ok?", session=BOB)
    assert "invoice" not in block


# ---------------------------------------------------------------------------------------------- postgres


@pytest.fixture
def pg_store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, postgres_dsn: str) -> Any:
    monkeypatch.setenv("HERMES_CTX_POSTGRES_DSN", postgres_dsn)
    config = load_config({"ctx_plugins": {"storage": {"backend": "postgres", "pool_size": 4}}})
    store = storage.open_memory(config, tmp_path / "race.db")
    yield store
    store.close()


class _Fixed:
    """An embedder whose question vector is the first axis (only ``search`` is used here)."""

    model_id = "fixed/2"

    def query(self, text: str) -> Any:
        import numpy as np

        return np.array([1.0, 0.0], np.float32)


def record(key: str, text: str) -> Record:
    return Record(key=key, kind="turn", namespace="", user_id="alice", chat_id="c1", session_id="s",
                  user_text=text, assistant_text="ok", created_at=1.0)


def test_a_vector_committed_after_a_later_one_is_still_found_by_a_long_lived_cache(pg_store: Any) -> None:
    """On PostgreSQL ``seq`` is a ``bigserial``: taken when a row is inserted, visible when its
    transaction commits. Two processes embedding the same user's memories (two hermes processes on
    one server: the postgres backend's purpose) commit out of order, and a cache that read up to the
    later seq asks only for ``seq > that`` from then on — the earlier one is never read.

    What a user notices: in a long-running gateway, a memory embedded by another process is never
    found by meaning (only by its words), until some unrelated memory of the location is forgotten."""
    import numpy as np

    store = pg_store
    store.write([record("a1", "first"), record("a2", "second")])
    ids = {m.key: m.id for m in store.unembedded("fixed/2", limit=10)}
    index = dense.DenseIndex(_Fixed())  # type: ignore[arg-type]
    target = np.array([1.0, 0.0], np.float32)

    def search() -> set[int]:
        found = index.search(store, target, namespace="", user_id="alice", chat_id="c1",
                             share_across_chats=True, limit=10)
        return set() if found.ids is None else set(found.ids.tolist())

    from hermes_ctx_plugins.storage.postgres import vectors as pg_vectors

    vector = struct.pack("<2f", 1.0, 0.0)
    # process 1 (here: an open transaction) stores a1's vector and has not committed yet
    with store._server.transaction(lock_timeout=5) as slow:
        pg_vectors.put_in(slow, store.location, "fixed/2", [(ids["a1"], vector)])
        # process 2 stores a2's vector: it waits for process 1 to commit (vectors of one location are
        # written one transaction at a time, so their positions become visible in order)
        second = threading.Thread(target=store.put_vectors, args=("fixed/2", [(ids["a2"], vector)]))
        second.start()
        second.join(0.5)
        assert second.is_alive(), "process 2 did not wait for process 1's vectors to commit"
        assert search() == set()  # neither committed: this process's cache reads nothing yet
    # process 1 commits now; then process 2
    second.join(10)
    assert {v.memory_id for v in store.vectors("fixed/2", namespace="", user_id="alice")} == {ids["a1"], ids["a2"]}
    assert search() == {ids["a1"], ids["a2"]}, "a1's vector, committed late, is never read by the cache"


# ---------------------------------------------------------------------------------------------- a new file


def test_a_database_moved_aside_never_lets_the_cache_show_another_users_memories(
        make: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """The per-owner cache is keyed by (namespace, user) and trusts ``vector_generation`` and
    ``seq``; neither says *which file* it read. When the database is moved aside (what the "damaged"
    error tells the user to do) and a new one is created at the path, its generation starts at 0 again
    and its ids at 1: the cache still holds Alice's old ids, nothing tells it to start over, and
    ``store.get`` (no owner filter) reads whatever memory now has those ids.

    What a user notices: Alice, asking about her cat after the file was replaced, is shown Bob's
    turns (another user's memories, by id collision)."""
    from hermes_ctx_plugins import dense as shared_dense
    from hermes_ctx_plugins.memory.local import LocalProvider
    from hermes_ctx_plugins.storage import LocalStoreError

    monkeypatch.setattr(shared_dense, "MIN_POPULATION", 1)  # three memories searched by meaning

    provider = make(embedder=SPEC)
    for n, text in enumerate(("my kitten knocked the vase off the shelf", "my cat sleeps on the piano",
                              "the kitten has whiskers like a walrus"), 1):
        say(provider, ALICE, text, n)
    assert provider.flush(30)
    assert "vase" in provider.prefetch("what did the feline break?", session=ALICE)  # Alice's cache is built
    # the file goes bad and the user moves it aside, as the error says; another process (here a second
    # provider) creates the new file and stores Bob's turns in it
    for name in ("", "-wal", "-shm"):
        old = Path(f"{provider.path}{name}")
        if old.exists():
            old.rename(old.with_name(f"damaged.db{name}"))
    other = LocalProvider({"embedder": SPEC}, hermes_home=provider.path.parents[1])
    for n, text in enumerate(("bob's salary is 91,000 a year", "bob's bank pin hint: his dog's birthday",
                              "bob's payment to the lawyer is due friday"), 1):
        say(other, BOB, text, n)
    assert other.flush(30)
    other.shutdown()
    assert provider._reader is not None
    real = provider._reader.search
    failed: list[bool] = []

    def damaged_once(*args: Any, **kwargs: Any) -> Any:  # the damage this process met on the old file
        if not failed:
            failed.append(True)
            raise LocalStoreError(provider.path, "damaged", "file is not a database", "move it aside")
        return real(*args, **kwargs)

    provider._reader.search = damaged_once  # type: ignore[method-assign]
    assert provider.prefetch("what did the feline break?", session=ALICE) == ""  # reported, reader reopened
    block = provider.prefetch("what did the feline break?", session=ALICE)
    assert "bob" not in block, f"Alice is shown Bob's memories:\n{block}"


# ---------------------------------------------------------------------------------------------- two embedders


def test_a_second_process_embedding_the_same_memory_again_does_not_void_every_cache(tmp_path: Path) -> None:
    """Two hermes processes on one store both walk the backlog newest first and embed the same
    memories with the same model; ``put_vectors`` is an upsert whose UPDATE fires the
    generation trigger even when the model is unchanged, so every duplicate bumps the store-wide
    generation and every process's cache of every owner is thrown away and read again in full.

    What a user notices: while two processes backfill (after an upgrade or a model change), recall
    latency jumps to a full reload of their vectors on nearly every turn."""
    store = LocalStore(tmp_path / "dup.db")
    try:
        store.write([record("a1", "first")])
        [memory] = store.unembedded("fixed/2")
        vector = struct.pack("<2f", 1.0, 0.0)
        assert store.put_vectors("fixed/2", [(memory.id, vector)]) == 1  # process 1
        generation = store.vector_generation()
        store.put_vectors("fixed/2", [(memory.id, vector)])  # process 2, the same memory, the same model
        assert store.vector_generation() == generation
    finally:
        store.close()


#: texts :func:`paced_embed` was asked for, by every thread
PACED: list[str] = []


def paced_embed(texts: list[str]) -> list[list[float]]:
    """:func:`embed` at a model's pace (2 ms a text), noting each text."""
    PACED.extend(texts)
    time.sleep(0.002 * len(texts))
    return embed(texts)


def test_two_walkers_of_one_backlog_share_it_instead_of_each_embedding_it_all(make: Any) -> None:
    """Two processes (here two providers, each with its own embedding thread) on one file whose memories
    have no vector yet — an embedder just turned on, a model changed — walk the backlog newest first in
    step: each embedded nearly all of it (a red-team pass measured 592 texts for 300 memories). The one
    that finds its vectors already stored leaps ahead and leaves the rest to the other; each then walks
    once more to see that nothing was left."""
    lexical = make()
    for n in range(160):
        say(lexical, ALICE, f"diary {n}: the cat slept on the bank statement", n + 1)
    assert lexical.flush(60)
    lexical.shutdown()
    PACED.clear()
    first, second = make(embedder=f"{__name__}:paced_embed"), make(embedder=f"{__name__}:paced_embed")
    first.on_session_start(ALICE)  # each starts its embedding thread, which walks the backlog
    second.on_session_start(ALICE)
    assert first.flush(120) and second.flush(120)
    conn = sqlite3.connect(first.path)
    try:
        assert conn.execute("SELECT count(*) FROM memory_vectors WHERE length(vector) > 0").fetchone()[0] == 160
    finally:
        conn.close()
    diaries = [t for t in PACED if "diary" in t]
    assert len(diaries) <= 1.35 * 160, f"{len(diaries)} texts embedded for 160 memories"

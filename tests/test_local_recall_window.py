"""A question about what happened shortly before or after something: ctx-local reads the owner's memories
dated in that window (``MemoryBackend.dated``) into the candidates, so what happened then is recalled though
it shares no word with the question -- by words only, and with an embedder, scored by its cosine. Only the
asker's memories come, and a question about no date reads no window. Real SQLite store."""

from __future__ import annotations

import sqlite3
import time
from contextlib import closing
from types import SimpleNamespace
from typing import Any

import pytest

from hermes_ctx_plugins import SessionInfo, Turn
from hermes_ctx_plugins import dense as shared_dense
from hermes_ctx_plugins.memory.local import LocalProvider, recall
from hermes_ctx_plugins.memory.local import provider as provider_module
from hermes_ctx_plugins.storage.sqlite.memory import LocalStore

ALICE = SessionInfo(session_id="a-1", user_id="alice", chat_id="dm")
ALICE_NOW = SessionInfo(session_id="a-9", user_id="alice", chat_id="dm")
BOB = SessionInfo(session_id="b-1", user_id="bob", chat_id="dm")
ALICE_ELSEWHERE = SessionInfo(session_id="a-2", user_id="alice", chat_id="dm", deployment="other")
DAY = 86_400.0
TRIP = time.time() - 100 * DAY
QUESTION = "Which chore kept me busy the week before my trip to Riga?"
#: what happened four days before the trip: not one word of the question
EVIDENCE = "Finally insulated the loft hatch."
#: (days from the trip, session, what was said)
TURNS = [
    *((-90 + n, ALICE, f"Notes on a busy week at work, budget item {n}: invoices and claims.") for n in range(20)),
    (-40, ALICE, "Painted the garden fence, then planned the trip."),  # the model finds it closer than the evidence
    (-30, ALICE, "Cleaned out the gutters."),  # a chore too, shares no word, outside the window
    (-4, ALICE, EVIDENCE),
    (-3, BOB, "Bob retiled the bathroom floor."),  # another user's, in the window
    (-2, ALICE_ELSEWHERE, "Alice elsewhere rewired the porch lamp."),  # the same id in another deployment
    (0, ALICE, "Booked the trip to Riga, flying out on Friday."),
]


def remembered(provider: LocalProvider, monkeypatch: pytest.MonkeyPatch) -> LocalProvider:
    for n, (days, session, text) in enumerate(TURNS):
        clock = SimpleNamespace(**{name: getattr(time, name) for name in dir(time) if not name.startswith("_")})
        clock.time = lambda at=TRIP + days * DAY: at
        monkeypatch.setattr(provider_module, "time", clock)
        provider.sync_turn(Turn(session=session, turn_number=n, user_text=text, assistant_text="ok"))
        assert provider.flush(10)
    monkeypatch.setattr(provider_module, "time", time)
    return provider


#: one axis per topic (a chore, a trip, work notes) and a small constant one: the question and the evidence
#: share no word, and the model finds them alike
TOPICS = ({"chore", "insulated", "hatch", "painted", "fence", "retiled", "rewired"}, {"trip", "riga", "flying"},
          {"budget", "invoices", "notes"})


def embed(texts: list[str]) -> list[list[float]]:
    vectors = []
    for text in texts:
        words = set(text.lower().replace("?", " ").replace(".", " ").replace(",", " ").split())
        vectors.append([float(len(words & topic)) for topic in TOPICS] + [0.05])
    return vectors


def test_what_happened_in_the_window_is_recalled_though_it_shares_no_word(
        make: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    provider = remembered(make(), monkeypatch)
    block = provider.prefetch(QUESTION, session=ALICE_NOW)
    assert EVIDENCE in block, block
    assert "gutters" not in block  # outside the window
    assert "Bob" not in block and "porch lamp" not in block  # another user's; the same id in another deployment
    # the search tool reads the same window
    found = provider.handle_tool_call("ctx_memory_search", {"query": QUESTION, "limit": 10}, session=ALICE_NOW)
    assert "loft hatch" in found and "Bob" not in found and "porch lamp" not in found


def test_with_an_embedder_the_window_is_scored_by_the_model(make: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(shared_dense, "MIN_POPULATION", 1)  # a small store: the dense side offers its own
    monkeypatch.setattr(provider_module, "CANDIDATES", 2)  # each side's best two: the trip and the fence
    provider = remembered(make(embedder=f"{__name__}:embed"), monkeypatch)
    provider.on_session_start(ALICE)
    assert provider.flush(30)
    scored: list[list[float]] = []
    fuse_more = provider_module.dense.fuse_more

    def spied(*args: Any, **kwargs: Any) -> Any:
        out = fuse_more(*args, **kwargs)
        scored.append([hit.relevance for hit in out])
        return out

    monkeypatch.setattr(provider_module.dense, "fuse_more", spied)
    block = provider.prefetch(QUESTION, session=ALICE_NOW)
    assert scored and scored[0], "the window's memories are scored by the fusion"
    assert EVIDENCE in block and "Bob" not in block and "porch lamp" not in block
    lines = block.splitlines()[1:]
    assert "loft hatch" in lines[0], block  # the model's pick of the window, boosted past the trip itself


def test_a_question_about_no_date_reads_no_window(make: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    provider = remembered(make(), monkeypatch)
    reads: list[tuple[float, float]] = []
    dated = LocalStore.dated

    def counted(store: LocalStore, start: float, end: float, **scope: Any) -> Any:
        reads.append((start, end))
        return dated(store, start, end, **scope)

    monkeypatch.setattr(LocalStore, "dated", counted)
    provider.prefetch("Which chore kept me busy on my trip to Riga?", session=ALICE_NOW)
    assert reads == []  # no before / after: the question's candidates only
    provider.prefetch(QUESTION, session=ALICE_NOW)
    assert len(reads) == 1 and reads[0][1] - reads[0][0] == recall.ANCHOR_WINDOW_DAYS * DAY


def test_after_reads_the_window_after_the_anchor(make: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    provider = remembered(make(), monkeypatch)
    clock = SimpleNamespace(**{name: getattr(time, name) for name in dir(time) if not name.startswith("_")})
    clock.time = lambda: TRIP + 6 * DAY
    monkeypatch.setattr(provider_module, "time", clock)
    provider.sync_turn(Turn(session=ALICE, turn_number=99, user_text="Fixed the squeaky stairs.", assistant_text="ok"))
    assert provider.flush(10)
    monkeypatch.setattr(provider_module, "time", time)
    block = provider.prefetch("Which chore kept me busy after my trip to Riga?", session=ALICE_NOW)
    assert "squeaky stairs" in block and EVIDENCE not in block, block


def test_a_version_4_file_gains_the_owner_time_index_and_reads_the_window_through_it(make: Any) -> None:
    provider = make()
    provider.shutdown()
    LocalStore(provider.path).close()  # made at the current version
    with closing(sqlite3.connect(provider.path)) as conn:  # as version 4 left it
        conn.execute("DROP INDEX memories_owner_time")
        conn.execute("CREATE INDEX memories_owner ON memories (user_id, namespace)")
        conn.execute("PRAGMA user_version = 4")
        conn.commit()
    store = LocalStore(provider.path)
    try:
        with closing(sqlite3.connect(provider.path)) as conn:
            indexes = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'index'")}
            assert "memories_owner_time" in indexes and "memories_owner" not in indexes
            assert conn.execute("PRAGMA user_version").fetchone() == (5,)
        statements: list[str] = []
        store._conn.set_trace_callback(statements.append)
        store.dated(0.0, 1e10, namespace="", user_id="alice", chat_id="dm", share_across_chats=False, limit=5)
        store._conn.set_trace_callback(None)
        [read] = [s for s in statements if "created_at BETWEEN" in s]
        plan = " ".join(str(row) for row in store._conn.execute(f"EXPLAIN QUERY PLAN {read}"))
        assert "memories_owner_time" in plan and "TEMP B-TREE" not in plan, plan
    finally:
        store.close()

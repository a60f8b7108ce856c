"""hermes shuts an agent's memory provider down when it drops the agent (its gateway at /new, /reset, idle expiry,
its agent cache's cap) while the process's other agents go on with the one ctx-local provider they share."""

from __future__ import annotations

import sqlite3
import threading
from typing import Any

import pytest
from hermes_helpers import configure_hermes
from hermes_helpers import hermes_home as home

from hermes_ctx_plugins.testing import StubOpenAIServer

pytest.importorskip("run_agent", reason="the hermes extra is not installed")


def adapter(user: str) -> Any:
    """What hermes' gateway builds for an agent of ``user``: a provider loaded by hermes, initialised."""
    from plugins.memory import load_memory_provider

    provider = load_memory_provider("ctx-local")
    provider.initialize(f"session-{user}", user_id=user, chat_id=f"dm-{user}", platform="telegram",
                        hermes_home=str(home()))
    return provider


def stored_turns(provider: Any) -> dict[str, int]:
    """Turns stored in the database file of ``provider`` (a ctx-local provider)."""
    with sqlite3.connect(provider.path) as db:
        return dict(db.execute("SELECT user_id, COUNT(*) FROM memories GROUP BY user_id").fetchall())


def test_agents_dropped_while_others_talk_lose_none_of_their_turns(stub: StubOpenAIServer) -> None:
    """Each dropped agent's shutdown shut the shared provider down under the others: turns queued at that moment
    were lost with "the ctx-local write queue is closed" (a red-team pass: 16-28 of 600 turns of four users)."""
    configure_hermes(stub, "memory: {provider: ctx-local}\n", engine=False)
    writers, turns, done = [adapter(f"user{i}") for i in range(3)], 80, threading.Event()

    def talk(writer: Any, user: str) -> None:
        for turn in range(turns):
            writer.sync_turn(f"turn {turn} of {user}", "noted", session_id=f"session-{user}")

    def drop_agents() -> None:
        while not done.is_set():
            adapter("passer-by").shutdown()

    dropping = threading.Thread(target=drop_agents)
    talking = [threading.Thread(target=talk, args=(w, f"user{i}")) for i, w in enumerate(writers)]
    dropping.start()
    for thread in talking:
        thread.start()
    for thread in talking:
        thread.join()
    done.set()
    dropping.join()
    provider = writers[0]._provider
    for writer in writers:  # the last agents' shutdowns drain the queue
        writer.shutdown()
    assert stored_turns(provider) == {f"user{i}": turns for i in range(3)}


def test_a_turn_put_as_another_agents_shutdown_closes_the_queue_is_stored(stub: StubOpenAIServer,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """The last agent's shutdown may still meet a turn of an agent built meanwhile: the turn goes to a new queue."""
    configure_hermes(stub, "memory: {provider: ctx-local}\n", engine=False)
    writer = adapter("alice")
    provider = writer._provider
    opened, calls = provider._writer, []

    def shut_right_after() -> Any:
        queue = opened()
        if not calls:
            provider.shutdown()  # what another thread's shutdown does between _writer() and put()
        calls.append(queue)
        return queue

    monkeypatch.setattr(provider, "_writer", shut_right_after)
    writer.sync_turn("my locker code is 3318", "noted", session_id="session-alice")
    monkeypatch.undo()
    writer.shutdown()
    assert stored_turns(provider) == {"alice": 1}

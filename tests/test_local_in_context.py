"""ctx-local's recall block leaves out the turns the conversation's prompt still holds (``in_context.py``):
only those, only of that conversation and owner, and each again once the history no longer holds it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from hermes_ctx_plugins import SessionInfo, Turn
from hermes_ctx_plugins.memory.local import LocalProvider

Message = dict[str, Any]
ASKED = "which port does the friday deploy use?"


def user(text: Any) -> Message:
    return {"role": "user", "content": text}


def answer(text: str) -> Message:
    return {"role": "assistant", "content": text}


def sync(provider: LocalProvider, session: SessionInfo, text: str, history: list[Message], n: int = 1,
         reply: str = "noted") -> list[Message]:
    """A finished turn the way hermes syncs it: the history after the turn comes with it."""
    history = [*history, user(text), answer(reply)]
    provider.sync_turn(Turn(session=session, turn_number=n, user_text=text, assistant_text=reply,
                            messages=tuple(history)))
    assert provider.flush(timeout=30)
    return history


def block(provider: LocalProvider, session: SessionInfo, question: str = ASKED) -> str:
    return provider.prefetch(question, session=session)


@pytest.fixture
def provider(make: Callable[..., LocalProvider]) -> LocalProvider:
    made = make()
    earlier = SessionInfo(session_id="last-week", user_id="alice")
    sync(made, earlier, "remember: the friday deploy uses port 8443", [])
    return made


def test_a_turn_in_the_prompt_is_left_out_and_recalled_once_the_history_drops_it(provider: LocalProvider) -> None:
    now = SessionInfo(session_id="today", user_id="alice")
    said = "the friday deploy port moved to 9443 for the blue cluster"
    history = sync(provider, now, said, [])
    shown = block(provider, now)
    assert "port 8443" in shown and said not in shown  # the other conversation's turn, not this one's
    history = sync(provider, now, "now the release notes", [], n=2)  # compacted: the turn left the prompt
    assert said in block(provider, now)
    assert history


def test_the_same_words_in_another_conversation_or_of_another_owner_are_recalled(provider: LocalProvider) -> None:
    said = "the friday deploy port moved to 9443"
    alices, bobs = (SessionInfo(session_id="today", user_id=owner) for owner in ("alice", "bob"))
    for session in (alices, bobs):  # two owners naming a session alike, saying the same
        sync(provider, session, said, [])
    assert said not in block(provider, alices) and said not in block(provider, bobs)
    tomorrow = SessionInfo(session_id="tomorrow", user_id="alice")
    sync(provider, tomorrow, "about the blue cluster", [])
    assert said in block(provider, tomorrow)  # another conversation of the same user: recalled
    sync(provider, bobs, "something else entirely", [], n=2)  # bob's history no longer holds it ...
    assert said in block(provider, bobs)
    assert said not in block(provider, alices)  # ... alice's, under the same session id, still does


def test_a_parents_turns_are_another_conversations(provider: LocalProvider) -> None:
    """hermes names the session a user leaves as the parent of the one they /resume or start with /new (and of
    the id a compaction moves a conversation to): a parent's turns are not known to be in the prompt."""
    said = "deploy it"
    sync(provider, SessionInfo(session_id="other", user_id="alice"), said, [], reply="with --canary-weight 7")
    resumed = SessionInfo(session_id="resumed", user_id="alice", parent_session_id="other",
                          earlier_sessions=("other",))
    sync(provider, resumed, said, [], reply="done")  # the same words said here too
    shown = block(provider, resumed, "how do we deploy it?")
    assert "--canary-weight 7" in shown and "done" not in shown


def test_a_repeated_message_is_told_apart_by_its_answer(provider: LocalProvider) -> None:
    now = SessionInfo(session_id="today", user_id="alice")
    sync(provider, now, "continue with the friday deploy", [], reply="step one: port 9443 opened")
    sync(provider, now, "continue with the friday deploy", [], n=2, reply="step two: dns switched")
    shown = block(provider, now, "continue with the friday deploy: which step opened the port?")
    # the first was compacted away: only the second is in the history
    assert "port 9443 opened" in shown and "dns switched" not in shown


def test_a_memory_a_replayed_block_holds_is_not_recalled_again(provider: LocalProvider) -> None:
    """hermes sends each earlier user message as it was sent, with its turn's recall block: a memory that block
    shows is in the prompt already, a fact or another conversation's turn alike."""
    now = SessionInfo(session_id="today", user_id="alice")
    provider.handle_tool_call("ctx_memory_remember", {"fact": "the friday deploy freezes at 16:00"}, session=now)
    assert provider.flush(timeout=30)
    first = block(provider, now)
    assert "port 8443" in first and "16:00" in first
    sent = {"role": "user", "content": ASKED, "api_content": f"{ASKED}\n\n<memory-context>\n{first}\n</memory-context>"}
    history = sync(provider, now, ASKED, [], reply="8443, frozen after 16:00")
    history[0] = sent  # as hermes keeps it: the message as it was sent beside what the user typed
    sync(provider, now, "and which cluster?", history, n=2, reply="blue")
    again = block(provider, now, "remind me: the friday deploy port and freeze?")
    assert "port 8443" not in again and "16:00" not in again  # both shown above already
    sync(provider, now, "new topic", [], n=3)  # a compaction took that message out
    assert "port 8443" in block(provider, now)


def test_a_compaction_is_seen_at_the_next_sync(provider: LocalProvider) -> None:
    """on_pre_compress changes nothing (what the compaction keeps is not known yet); the next sync does."""
    now = SessionInfo(session_id="today", user_id="alice")
    said = "the friday deploy port moved to 9443"
    sync(provider, now, said, [])
    assert provider.on_pre_compress([user(said)]) == ""
    assert said not in block(provider, now)
    sync(provider, now, "next", [], n=2)
    assert said in block(provider, now)


def test_a_history_of_new_objects_each_time_is_read_again(provider: LocalProvider) -> None:
    """A gateway reloads the transcript for every message: nothing of the last read is reused."""
    now = SessionInfo(session_id="today", user_id="alice")
    said = "the friday deploy port moved to 9443"
    history = sync(provider, now, said, [])
    copied = [dict(m) for m in history]
    sync(provider, now, "and the cluster?", copied, n=2)
    assert said not in block(provider, now)
    sync(provider, now, "and the cluster?", [dict(m) for m in copied[2:]], n=3)
    assert said in block(provider, now)


def test_what_was_read_is_not_kept_alive(provider: LocalProvider) -> None:
    import gc
    import weakref

    class Message(dict):  # type: ignore[type-arg]
        pass

    now = SessionInfo(session_id="today", user_id="alice")
    big = Message(role="user", content="the friday deploy, with a pasted image " + "x" * 100_000)
    last = Message(role="assistant", content="noted")
    refs = [weakref.ref(big), weakref.ref(last)]
    provider.sync_turn(Turn(session=now, turn_number=1, user_text=big["content"], assistant_text="noted",
                            messages=(big, last)))
    assert provider.flush(timeout=30)
    del big, last
    gc.collect()
    assert all(ref() is None for ref in refs)


@pytest.mark.parametrize("said", [
    "the friday deploy port: " + "details of the deploy " * 2_000,  # cut as a search candidate
    "the friday deploy port \ud800 moved to 9443",  # a lone surrogate
    "  the friday deploy port moved to 9443\n",  # hermes strips nothing; we compare what was said
])
def test_long_and_odd_texts_are_recognised(provider: LocalProvider, said: str) -> None:
    now = SessionInfo(session_id="today", user_id="alice")
    sync(provider, now, said, [])
    assert said.strip()[:200] not in block(provider, now)
    sync(provider, now, "unrelated", [], n=2)
    assert "the friday deploy port" in block(provider, now)


def test_a_message_of_parts_and_a_turn_without_history(provider: LocalProvider) -> None:
    now = SessionInfo(session_id="today", user_id="alice")
    said = "the friday deploy port moved to 9443"
    provider.sync_turn(Turn(session=now, turn_number=1, user_text=said, assistant_text="noted"))  # no history
    assert provider.flush(timeout=30)
    assert said in block(provider, now)  # nothing known of the prompt: shown as before
    parts = [user([{"type": "text", "text": said}, {"type": "image_url", "image_url": {"url": "data:,"}}]),
             answer("noted")]
    provider.sync_turn(Turn(session=now, turn_number=2, user_text="and the cluster", assistant_text="ok",
                            messages=tuple(parts)))
    assert provider.flush(timeout=30)
    assert said not in block(provider, now)


def test_a_redacted_turn_is_shown_as_before(provider: LocalProvider) -> None:
    """What was stored differs from what was said (the secret is redacted): not recognised, so shown."""
    now = SessionInfo(session_id="today", user_id="alice")
    said = "the friday deploy token is ghp_R8x2Kq9LmZ4vT7nB3wY6pJ1sD5fH0cA2eG9u"
    sync(provider, now, said, [])
    assert "[REDACTED" in block(provider, now)


def test_search_tool_still_finds_a_turn_in_the_prompt(provider: LocalProvider) -> None:
    import json

    now = SessionInfo(session_id="today", user_id="alice")
    said = "the friday deploy port moved to 9443"
    sync(provider, now, said, [])
    found = json.loads(provider.handle_tool_call("ctx_memory_search", {"query": "friday deploy port"}, session=now))
    assert any(said in r["text"] for r in found["results"])


def test_a_history_of_odd_items_never_costs_the_turn(provider: LocalProvider) -> None:
    now = SessionInfo(session_id="today", user_id="alice")
    said = "the friday deploy port moved to 9443"
    odd: tuple[Any, ...] = (None, "text", 7, {"role": "user", "content": {"_multimodal": True}},
                            {"role": "user", "content": [None, {"text": 5}]}, {"role": "user"}, user(said),
                            answer("noted"))
    provider.sync_turn(Turn(session=now, turn_number=1, user_text=said, assistant_text="noted", messages=odd))
    assert provider.flush(timeout=30)
    assert [m.user_text for m in provider._store().memories(session_id="today")] == [said]  # stored
    assert said not in block(provider, now)  # and recognised in what could be read


def test_an_empty_id_names_no_conversation(make: Callable[..., LocalProvider]) -> None:
    """hermes' root sessions have parent_session_id "": a turn a host stored without a session id is not theirs."""
    provider = make()
    said = "deploy the api to prod"
    sync(provider, SessionInfo(session_id="", user_id="alice"), said, [], reply="blue/green switch at 02:00 UTC")
    now = SessionInfo(session_id="today", user_id="alice")
    sync(provider, now, said, [], reply="done")
    assert "02:00 UTC" in provider.prefetch("when is the prod deploy blue/green switch?", session=now)


def test_another_chat_naming_its_session_alike_is_another_conversation(make: Callable[..., LocalProvider]) -> None:
    provider = make(share_across_chats=True)
    said = "the friday deploy port moved to 9443"
    sync(provider, SessionInfo(session_id="same", user_id="alice", chat_id="work"), said, [], reply="other chat")
    mine = SessionInfo(session_id="same", user_id="alice", chat_id="home")
    sync(provider, mine, said, [], reply="this chat")
    shown = block(provider, mine)
    assert "other chat" in shown and "this chat" not in shown


def test_a_long_conversation_on_one_topic_leaves_room_for_other_conversations(
        make: Callable[..., LocalProvider]) -> None:
    """The turns left out are dropped after the search: it reads as many more candidates as the history holds,
    or 40 turns of this conversation in the prompt would take every candidate and leave the block empty."""
    provider = make()
    earlier = SessionInfo(session_id="last-month", user_id="alice")
    sync(provider, earlier, "how did we fix the bloat on orders last time?", [],
         reply="we set autovacuum_vacuum_scale_factor=0.02 on orders")
    for k in range(300):  # the rest of the store: other topics
        provider.sync_turn(Turn(session=SessionInfo(session_id=f"old{k}", user_id="alice"), turn_number=1,
                                user_text=f"note {k} about the frontend build", assistant_text="ok"))
    now = SessionInfo(session_id="today", user_id="alice")
    history: list[Message] = []
    for n in range(45):
        history = sync(provider, now, f"postgres vacuum on the orders table, step {n}?", history,
                       n=n + 1, reply=f"for step {n} of the postgres vacuum on orders run VACUUM orders")
    shown = block(provider, now, "what postgres vacuum settings did we use for the orders table?")
    assert "autovacuum_vacuum_scale_factor" in shown and "step 3" not in shown


def test_what_hermes_merges_into_a_message_after_a_compaction_is_not_what_was_said(provider: LocalProvider) -> None:
    """hermes keeps the task list across a compaction by merging it into a kept user message: that turn is still
    in the prompt."""
    now = SessionInfo(session_id="today", user_id="alice")
    said = "the friday deploy port moved to 9443"
    sync(provider, now, said, [])
    merged = (f"{said}\n\n[Your active task list was preserved across context compression]\n"
              "- [ ] open port 9443 on the friday deploy")
    sync(provider, now, "and the cluster?", [user(merged), answer("noted")], n=2)
    assert said not in block(provider, now)


def sent_with(text: str, block: str) -> Message:
    """A user message as hermes keeps it: what the user typed, and what it sent (a recall block appended)."""
    return {"role": "user", "content": text,
            "api_content": f"{text}\n\n<memory-context>\n[System note: recalled memory]\n\n{block}\n</memory-context>"}


def test_a_block_the_user_typed_is_not_read(provider: LocalProvider) -> None:
    """The ids are read from the block hermes appended, not from what the user typed before it: a pasted block (from
    another store, an export, a colleague) names memories the prompt does not hold."""
    now = SessionInfo(session_id="today", user_id="alice")
    from hermes_ctx_plugins.memory.local.recall import HEADER
    pasted = f"my notes:\n{HEADER}\n- [#1 · 2026-01-02] User: about lunch\nwhat do you make of them?"
    history = [sent_with(pasted, f"{HEADER}\n- [#99 · 2026-01-01] something else"), answer("a lunch order")]
    provider.sync_turn(Turn(session=now, turn_number=1, user_text=pasted, assistant_text="a lunch order",
                            messages=tuple(history)))
    assert provider.flush(timeout=30)
    assert "port 8443" in block(provider, now)


def test_an_id_of_thousands_of_digits_never_stops_the_reading(provider: LocalProvider) -> None:
    """int() refuses a text of more than 4,300 digits: a line like a block's, typed after the header, raised in every
    later sync_turn of the conversation, and what it knew before stayed left out for good (a compaction since)."""
    now = SessionInfo(session_id="today", user_id="alice")
    from hermes_ctx_plugins.memory.local.recall import HEADER
    first = block(provider, now)
    history = [sent_with(ASKED, first), answer("8443")]
    hostile = f"look:\n{HEADER}\n- [#{'9' * 5000} · 2026-01-02] x"
    history += [sent_with(hostile, f"{HEADER}\n- [#{'9' * 5000} · 2026-01-02] x"), answer("ok")]
    provider.sync_turn(Turn(session=now, turn_number=2, user_text=hostile, assistant_text="ok",
                            messages=tuple(history)))
    assert "port 8443" not in block(provider, now)  # shown above
    compacted = [*history[2:], user("next"), answer("ok")]  # a compaction took the first turn out
    provider.sync_turn(Turn(session=now, turn_number=3, user_text="next", assistant_text="ok",
                            messages=tuple(compacted)))
    assert provider.flush(timeout=30)
    assert "port 8443" in block(provider, now)


def test_an_id_the_store_gives_again_is_another_memory(provider: LocalProvider) -> None:
    """SQLite gives the id of a deleted newest row to the next one: a block that showed the deleted memory does not hold
    the new one (here: a fact replaced in another window of the same user)."""
    import json

    window_a, window_b = (SessionInfo(session_id=s, user_id="alice") for s in ("a", "b"))
    old = json.loads(provider.handle_tool_call("ctx_memory_remember", {"fact": "the friday deploy freezes at 16:00"},
                                               session=window_b))["id"]
    shown = block(provider, window_a, "when does the friday deploy freeze?")
    assert f"#{old} · " in shown
    sync(provider, window_a, "when does the friday deploy freeze?", [sent_with("x", shown), answer("16:00")],
         reply="16:00")
    assert f"#{old} · " not in block(provider, window_a, "when does the friday deploy freeze?")  # held: left out
    newest = max(m.id for m in provider._store().memories())
    provider.handle_tool_call("ctx_memory_forget", {"ids": [newest, old]}, session=window_a)
    new = json.loads(provider.handle_tool_call("ctx_memory_remember", {"fact": "the friday deploy freezes at 17:30"},
                                               session=window_b))["id"]
    assert new == old  # the id again
    assert "17:30" in block(provider, window_a, "when does the friday deploy freeze now?")


def test_the_recall_right_after_a_compaction_leaves_out_what_it_kept(provider: LocalProvider) -> None:
    """hermes compacts before a turn's recall (preflight, /compress) and says so (on_session_switch, reason
    "compression"): that recall still knew the history of the last sync. What came with the first messages and the
    latest turn stays left out (compactions keep them); what came in between is shown (it may be in the summary
    alone)."""
    import dataclasses

    from hermes_ctx_plugins.memory.local.recall import HEADER
    now = SessionInfo(session_id="today", user_id="alice")
    first = block(provider, now)
    assert "port 8443" in first
    history = [user("let us plan the release"), answer("ok"), user("and the changelog"), answer("ok"),
               sent_with(ASKED, first), answer("8443")]
    for n in range(4):
        history += [user(f"the release step {n}"), answer(f"done with step {n}")]
    history += [sent_with("last: the dns switch", f"{HEADER}\n- [#77 · 2026-01-01] unrelated"),
                answer("the friday deploy dns switch is done")]
    sync(provider, now, "the friday deploy dns switch", history[:-2], n=5, reply="the friday deploy dns switch is done")
    provider.on_session_start(dataclasses.replace(now, parent_session_id="today", extra={"reason": "compression"}))
    shown = block(provider, now)
    assert "port 8443" in shown  # its block was in the middle
    assert "dns switch is done" not in shown  # the latest turn: kept


def test_a_new_agent_for_the_session_is_given_its_turns_until_its_first_sync(provider: LocalProvider) -> None:
    """A Bridge (or a gateway) builds a new agent for a session id with an empty history: hermes initialises its
    memory again (``on_session_start`` with no reason). Its prompt no longer holds the session's turns, so they are
    recalled; the next sync tells again what the prompt holds."""
    now = SessionInfo(session_id="today", user_id="alice")
    said = "the friday deploy port moved to 9443 for the blue cluster"
    history = sync(provider, now, said, [])
    assert said not in block(provider, now)  # the same agent: its prompt holds the turn
    provider.on_session_start(now)  # a new agent takes the session up, with no history
    assert said in block(provider, now)
    sync(provider, now, "which port again?", history, n=2)  # it was given the history after all
    assert said not in block(provider, now)
    compacted = SessionInfo(session_id="today", user_id="alice", extra={"reason": "compression"})
    provider.on_session_start(compacted)  # a compaction keeps the first messages and the latest turn: still held
    assert said not in block(provider, now)

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


def test_a_conversation_moved_to_a_new_id_still_holds_its_turns(provider: LocalProvider) -> None:
    """hermes with ``compression.in_place: false`` moves the conversation to a child id: the turns it carries
    over are still in its prompt, stored under the parent's id."""
    parent = SessionInfo(session_id="before", user_id="alice")
    said = "the friday deploy port moved to 9443"
    history = sync(provider, parent, said, [])
    child = SessionInfo(session_id="after", user_id="alice", parent_session_id="before")
    sync(provider, child, "and the blue cluster", history, n=2)
    assert said not in block(provider, child)
    grandchild = SessionInfo(session_id="later", user_id="alice", earlier_sessions=("after", "before"))
    sync(provider, grandchild, "next thing", [], n=3)  # its history holds neither any more
    assert said in block(provider, grandchild)


def test_before_a_compaction_is_synced_nothing_is_left_out(provider: LocalProvider) -> None:
    now = SessionInfo(session_id="today", user_id="alice")
    said = "the friday deploy port moved to 9443"
    sync(provider, now, said, [])
    assert said not in block(provider, now)
    provider.on_pre_compress([user(said)])  # hermes is about to compact: what stays is not known yet
    assert said in block(provider, now)


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
                            {"role": "user", "content": [None, {"text": 5}]}, {"role": "user"}, user(said))
    provider.sync_turn(Turn(session=now, turn_number=1, user_text=said, assistant_text="noted", messages=odd))
    assert provider.flush(timeout=30)
    assert [m.user_text for m in provider._store().memories(session_id="today")] == [said]  # stored
    assert said not in block(provider, now)  # and recognised in what could be read

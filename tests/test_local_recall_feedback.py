"""ctx-local's relevance feedback: when the memories matching a question cannot fill the recall block,
memories like the best match fill the rest of the budget (a question worded unlike its answer still
reaches it through what it does match) — only the asker's own, and only when there is room."""

from __future__ import annotations

from typing import Any

from hermes_ctx_plugins import SessionInfo, Turn
from hermes_ctx_plugins.memory.local import LocalProvider, recall
from hermes_ctx_plugins.storage import Memory
from hermes_ctx_plugins.tokens import get_counter

ALICE = SessionInfo(session_id="a-1", user_id="alice", chat_id="dm")
ALICE_LATER = SessionInfo(session_id="a-9", user_id="alice", chat_id="dm")
ALICE_GROUP = SessionInfo(session_id="a-5", user_id="alice", chat_id="group")
BOB = SessionInfo(session_id="b-1", user_id="bob", chat_id="dm")
BOB_LATER = SessionInfo(session_id="b-9", user_id="bob", chat_id="dm")

QUESTION = "where does my sister live these days?"
#: matches the question ("sister")
ANCHOR = "My sister Ana moved to Porto in March."
#: shares no word with the question, several with the anchor
RELATED = "Ana's new flat in Porto has a balcony over the Douro."
UNRELATED = "The quarterly invoices go out on the first Monday."


def store(provider: LocalProvider, session: SessionInfo, *texts: str) -> None:
    for n, text in enumerate(texts):
        # "ok": a stop word, so the turns share no word through the answer
        provider.sync_turn(Turn(session=session, turn_number=n, user_text=text, assistant_text="ok"))
    assert provider.flush(10)


def shown(block: str) -> list[str]:
    return block.splitlines()[1:]


def test_a_memory_worded_unlike_the_question_is_shown_after_the_one_it_resembles(make: Any) -> None:
    provider = make()
    store(provider, ALICE, ANCHOR, UNRELATED, RELATED)
    lines = shown(provider.prefetch(QUESTION, session=ALICE_LATER))
    assert len(lines) == 2, lines
    assert "Porto in March" in lines[0] and "balcony over the Douro" in lines[1]  # the direct match first
    # a question that matches nothing gets nothing, feedback or not
    assert provider.prefetch("what about the weather in Oslo?", session=ALICE_LATER) == ""


def test_no_feedback_search_when_the_relevant_memories_fill_the_block(make: Any) -> None:
    provider = make(max_results=1)
    store(provider, ALICE, ANCHOR, RELATED)
    searches: list[list[str]] = []
    reader = provider._store()
    real = reader.search

    def counted(terms: Any, **scope: Any) -> Any:
        searches.append(list(terms))
        return real(terms, **scope)

    reader.search = counted  # type: ignore[method-assign]
    lines = shown(provider.prefetch(QUESTION, session=ALICE_LATER))
    assert len(lines) == 1 and "Porto in March" in lines[0] and len(searches) == 1
    roomy = make()  # the default max_results: room for more, so the best match's words are asked too
    assert len(shown(roomy.prefetch(QUESTION, session=ALICE_LATER))) == 2


def test_feedback_never_crosses_users_or_chats_and_the_owner_does_see_it(make: Any) -> None:
    provider = make()
    store(provider, ALICE, ANCHOR, RELATED)
    store(provider, BOB, "My sister Eva moved to Porto last year.")  # Bob's best match shares Alice's words
    store(provider, ALICE_GROUP, "My sister called from the airport.")
    bob = provider.prefetch(QUESTION, session=BOB_LATER)
    assert "Eva moved to Porto" in bob and "balcony" not in bob and "Ana" not in bob
    group = provider.prefetch(QUESTION, session=SessionInfo(session_id="a-6", user_id="alice", chat_id="group"))
    assert "airport" in group and "balcony" not in group and "Porto" not in group
    alice = provider.prefetch(QUESTION, session=ALICE_LATER)
    assert "balcony over the Douro" in alice and "Eva" not in alice and "airport" not in alice


def test_the_block_spends_its_budget_on_more_memories_when_they_are_short(make: Any) -> None:
    provider = make(budget_tokens=800)
    store(provider, ALICE, ANCHOR, *(f"Ana in Porto, note {n}: the tram to Foz runs late." for n in range(30)))
    block = provider.prefetch(QUESTION, session=ALICE_LATER)
    tokens = get_counter().count_text(block)
    assert len(shown(block)) == 16 and tokens <= 800  # the default max_results; the old default showed 8
    assert "Porto in March" in shown(block)[0]
    tight = make(budget_tokens=150).prefetch(QUESTION, session=ALICE_LATER)
    assert 1 < len(shown(tight)) < 16 and get_counter().count_text(tight) <= 150


def test_feedback_terms_are_the_best_matchs_words_the_question_lacks() -> None:
    best = Memory(id=1, key="k", kind="turn", namespace="", user_id="alice", chat_id="dm", session_id="s",
                  visibility="chat", user_text=ANCHOR, assistant_text="Noted, Ana!", fact_text="", source="test",
                  created_at=0.0)
    # the indexed words, not the "User:" / "Assistant:" labels recall shows; each once
    assert recall.feedback_terms(best, ["sister"]) == ["ana", "moved", "porto", "march", "noted"]

"""ctx-local reads a question about what happened before or after something for its dates: the
candidate naming the something (the question's rarest word) is the anchor, and what is dated shortly
on the asked side of it comes first. Real SQLite store, turns dated as they were written."""
# ruff: noqa: RUF001  (Chinese punctuation, on purpose)

from __future__ import annotations

import time
from types import SimpleNamespace
from typing import Any

import pytest

from hermes_ctx_plugins import SessionInfo, Turn
from hermes_ctx_plugins.memory.local import LocalProvider, recall
from hermes_ctx_plugins.memory.local import provider as provider_module
from hermes_ctx_plugins.storage import Memory

ALICE = SessionInfo(session_id="a-1", user_id="alice", chat_id="dm")
ALICE_NOW = SessionInfo(session_id="a-9", user_id="alice", chat_id="dm")
DAY = 86_400.0
TRIP = time.time() - 100 * DAY
#: (days from the trip, what the user said); the repairs share the question's words alike
FILLER = [(-90 + n, f"Notes on the quarterly budget review, item {n}: invoices and travel claims.") for n in range(20)]
DATED_ZH = [
    (-40, "周六一整天都在密封浴室窗户，家里的修缮总算做完了。"),
    (-4, "终于把阁楼检修口的保温做好了，又一项家里的修缮。"),
    (0, "订好了去里加的行程，周五出发。"),
    (5, "今天又做了家里的修缮：修好了吱吱响的楼梯。"),
    (40, "又一项家里的修缮：花园栅栏重新立好了。"),
    *((-90 + n, f"季度预算复盘笔记第{n}条：发票和差旅报销。") for n in range(20)),
]
DATED = [
    (-40, "Spent the whole Saturday sealing the bathroom window, a home repair at last."),
    (-4, "Finally finished insulating the loft hatch, another home repair off the list."),
    (0, "Booked the trip to Riga, flying out on Friday."),
    (5, "Another home repair today: fixed the squeaky stairs."),
    (40, "One more home repair: the garden fence is upright again."),
    *FILLER,  # what a store mostly holds: turns about other things
]


def remembered(make: Any, monkeypatch: pytest.MonkeyPatch, turns: list[tuple[int, str]]) -> LocalProvider:
    provider = make()
    for n, (days, text) in enumerate(turns):
        clock = SimpleNamespace(**{name: getattr(time, name) for name in dir(time) if not name.startswith("_")})
        clock.time = lambda at=TRIP + days * DAY: at
        monkeypatch.setattr(provider_module, "time", clock)
        provider.sync_turn(Turn(session=ALICE, turn_number=n, user_text=text, assistant_text="ok"))
        assert provider.flush(10)
    monkeypatch.setattr(provider_module, "time", time)
    return provider


@pytest.fixture
def dated(make: Any, monkeypatch: pytest.MonkeyPatch) -> LocalProvider:
    return remembered(make, monkeypatch, DATED)


def first_repair(block: str) -> str:
    return next(line for line in block.splitlines()[1:] if "repair" in line)


@pytest.mark.parametrize(("question", "expected"), [
    ("Which home repair did I do the week before my trip to Riga?", "loft hatch"),
    ("What home repair came after the Riga trip?", "squeaky stairs"),
])
def test_what_happened_shortly_before_or_after_the_anchor_comes_first(dated: LocalProvider, question: str,
                                                                      expected: str) -> None:
    block = dated.prefetch(question, session=ALICE_NOW)
    assert expected in first_repair(block), block
    assert all(text.split(",")[0][:20] in block for _, text in DATED if "repair" in text), "nothing is dropped"


@pytest.mark.parametrize(("question", "expected"), [
    ("我去里加旅行之前做了什么家里的修缮？", "阁楼检修口"),
    ("里加那趟行程之后，我做了什么家里的修缮？", "楼梯"),
])
def test_the_same_in_chinese(make: Any, monkeypatch: pytest.MonkeyPatch, question: str, expected: str) -> None:
    block = remembered(make, monkeypatch, DATED_ZH).prefetch(question, session=ALICE_NOW)
    assert expected in next(line for line in block.splitlines()[1:] if "修" in line and "里加" not in line), block


def test_a_question_without_a_date_relation_keeps_the_usual_order(dated: LocalProvider,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    question = "Which home repair did I do, and what about the Riga trip?"
    block = dated.prefetch(question, session=ALICE_NOW)
    monkeypatch.setattr(recall, "anchored", lambda question, terms, ranked: list(ranked))
    assert dated.prefetch(question, session=ALICE_NOW) == block


def _memory(n: int, text: str, days: float) -> Memory:
    return Memory(id=n, key=f"k{n}", kind="turn", namespace="", user_id="alice", chat_id="dm", session_id="s",
                  visibility="chat", user_text=text, assistant_text="ok", fact_text="", source="",
                  created_at=days * DAY)


def test_no_anchor_when_the_rarest_word_is_common_or_absent() -> None:
    """An anchor word several candidates hold names no one moment: the order stays."""
    ranked = [recall.Ranked(_memory(n, f"riga note {n}", days=n), 1.0 - n / 10) for n in range(5)]
    assert recall.anchored("what did I do before riga?", ["riga"], ranked) == ranked
    assert recall.anchored("what did I do before oslo?", ["oslo"], ranked) == ranked
    assert recall.anchored("what did I do about riga?", ["riga"], ranked[:2]) == ranked[:2]

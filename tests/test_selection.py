"""Stages 2-3 (head and tail) and the message helpers they rely on."""

from __future__ import annotations

import itertools
from typing import Any

import pytest

from hermes_ctx_plugins.compression.messages import sanitize_tool_pairs, summary_role
from hermes_ctx_plugins.compression.selection import head_end, split, tail_start
from hermes_ctx_plugins.tokens import get_counter

COUNTER = get_counter("gpt-4o")


def user(text: str = "u") -> dict[str, Any]:
    return {"role": "user", "content": text}


def assistant(text: str = "a", calls: tuple[str, ...] = ()) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": text}
    if calls:
        message["tool_calls"] = [{"id": c, "type": "function", "function": {"name": "t", "arguments": "{}"}}
                                 for c in calls]
    return message


def tool(call_id: str, text: str = "out") -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": call_id, "content": text}


def test_head_is_system_plus_protect_first_n_and_never_splits_a_group() -> None:
    messages = [{"role": "system", "content": "s"}, user(), assistant(calls=("c1", "c2")), tool("c1"),
                tool("c2"), assistant(), user()]
    assert head_end(messages, 0) == 1
    assert head_end(messages, 1) == 2
    assert head_end(messages, 2) == 5  # moved past the call's two results
    assert head_end(messages[1:], 0) == 0


def test_tail_floor_is_min_of_protect_last_n_and_eight() -> None:
    messages = [x for i in range(30) for x in (user(f"q{i} " * 200), assistant(f"a{i} " * 200))]
    # a budget of 1 token: only the floor decides
    assert len(messages) - tail_start(messages, head=0, counter=COUNTER, budget_tokens=1, min_messages=20) == 8
    assert len(messages) - tail_start(messages, head=0, counter=COUNTER, budget_tokens=1, min_messages=3) == 3


def test_tail_budget_decides_above_the_floor() -> None:
    messages = [x for i in range(30) for x in (user("q " * 100), assistant("a " * 100))]
    per_message = COUNTER.count_message(messages[0])
    start = tail_start(messages, head=0, counter=COUNTER, budget_tokens=per_message * 12, min_messages=2)
    assert len(messages) - start == 12


def test_tail_keeps_the_required_user_messages() -> None:
    messages = [user("first"), assistant()] + [assistant(calls=(f"c{i}",)) if i % 2 == 0 else tool(f"c{i - 1}")
                                              for i in range(40)]
    start = tail_start(messages, head=0, counter=COUNTER, budget_tokens=10, min_messages=1, min_user_messages=1)
    assert start == 0  # the only user message is the first one: the whole turn is the tail
    more = [user("a"), assistant(), user("b"), assistant(), user("c"), assistant("x " * 500)]
    start = tail_start(more, head=0, counter=COUNTER, budget_tokens=1, min_messages=1, min_user_messages=2)
    assert start == 2


def test_tail_never_starts_with_a_tool_result() -> None:
    messages = [user(), assistant(calls=("a", "b", "c")), tool("a", "x" * 4000), tool("b", "y" * 4000),
                tool("c", "z" * 10), assistant(), user("last")]
    for budget in (1, 50, 1500, 3000):
        start = tail_start(messages, head=0, counter=COUNTER, budget_tokens=budget, min_messages=1)
        assert messages[start]["role"] != "tool"


def test_split_leaves_a_middle_only_when_there_is_one() -> None:
    messages = [user(), assistant()]
    parts = split(messages, counter=COUNTER, protect_first_n=3, tail_budget_tokens=10, protect_last_n=2,
                  min_tail_user_messages=1)
    assert not parts


@pytest.mark.parametrize(
    ("before", "after", "has_user", "expected"),
    [
        (None, user(), True, None),                # first after system must be user, but user follows
        (None, assistant(), True, "user"),
        ({"role": "system"}, assistant(), True, "user"),
        (user(), assistant(), True, None),         # neither role avoids a same-role neighbour
        (user(), user(), True, "assistant"),
        (assistant(), user(), True, None),
        (assistant(), assistant(), True, "user"),
        (tool("c"), user(), True, "assistant"),
        (tool("c"), assistant(), True, "user"),
        (assistant(), assistant(), False, "user"),  # no real user message anywhere: always user
        (user(), assistant(), False, None),
    ],
)
def test_summary_role(before: Any, after: Any, has_user: bool, expected: str | None) -> None:
    assert summary_role(before, after, has_real_user=has_user) == expected


@pytest.mark.parametrize("said", ["", "Running the tests now."])
def test_a_call_left_without_its_result_joins_the_assistant_message_beside_it(said: str) -> None:
    """A result answering a mangled id ("abc " for "abc") is dropped, and so is the call: the call message, left
    with its text or nothing, must not sit right before the assistant's answer as a second assistant message (a
    red-team pass found "(tool call removed)" there)."""
    for messages in ([user(), assistant(said, calls=("abc",)), tool("abc "), assistant("All 47 tests pass."), user()],
                     [user(), assistant("Looking."), assistant(said, calls=("abc",)), tool("abc "), user()]):
        out = sanitize_tool_pairs(messages)
        roles = [m["role"] for m in out]
        assert all(a != b for a, b in itertools.pairwise(roles)), roles
        assert not any(m.get("tool_calls") or m["role"] == "tool" for m in out)
        text = " ".join(str(m["content"]) for m in out)
        assert ("All 47 tests pass." in text or "Looking." in text) and said in text
        assert "(tool call removed)" not in text
    out = sanitize_tool_pairs([user(), assistant(said, calls=("abc",)), tool("abc "), user()])
    assert [m["role"] for m in out] == ["user", "assistant", "user"]  # kept between two users: its text or a note
    assert out[1]["content"] == (said or "(tool call removed)")


def test_a_call_left_without_its_result_never_joins_a_summary_or_a_bridge_note() -> None:
    """Joined to a compaction's bridge note or to an assistant-role summary, the call's text made them no longer read
    as theirs once the in-process keys were gone (a resumed session): the bridge was not recognised, the summary no
    longer ended with its marker (a red-team pass)."""
    from hermes_ctx_plugins.compression.messages import (
        BRIDGE_KEY,
        BRIDGE_TEXT,
        SUMMARY_END_MARKER,
        SUMMARY_KEY,
        is_bridge,
        is_summary,
    )
    from hermes_ctx_plugins.compression.summarize import _framed

    def resumed(message: dict[str, Any]) -> dict[str, Any]:  # hermes drops the "_" keys
        return {key: value for key, value in message.items() if not key.startswith("_")}

    summary = {"role": "user", "content": _framed("## Goal\nShip it."), SUMMARY_KEY: True}
    bridge = {"role": "assistant", "content": BRIDGE_TEXT, BRIDGE_KEY: True}
    out = sanitize_tool_pairs([user(), assistant("hello"), summary, bridge,
                               assistant("Running the deploy script now.", calls=("abc",)), tool("abc "), user()])
    assert [m["content"] for m in out if is_bridge(resumed(m))] == [BRIDGE_TEXT]
    assert "Running the deploy script now." in [m["content"] for m in out]  # kept, as its own message
    summary = {"role": "assistant", "content": _framed("## Goal\nShip it."), SUMMARY_KEY: True}
    out = sanitize_tool_pairs([user(), summary, assistant("rm -rf build", calls=("x1",)), tool("x1 "), user()])
    assert out[1]["content"].endswith(SUMMARY_END_MARKER) and is_summary(resumed(out[1]))


def test_sanitize_tool_pairs_strips_orphans_both_ways() -> None:
    messages = [user(), assistant("", calls=("kept", "orphan-call")), tool("kept"), tool("orphan-result"),
                assistant("", calls=("gone",)), user()]
    out = sanitize_tool_pairs(messages)
    assert [m.get("tool_call_id") for m in out if m["role"] == "tool"] == ["kept"]
    assert [c["id"] for c in out[1]["tool_calls"]] == ["kept"]
    assert "tool_calls" not in out[3] and out[3]["content"] == "(tool call removed)"
    assert messages[1]["tool_calls"][1]["id"] == "orphan-call"  # the input is untouched

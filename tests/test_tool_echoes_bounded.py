"""A bad or huge tool argument is answered in a bounded error, never echoed whole nor raised (a red-team pass):
ctx_search / ctx_expand echoed a megabyte query, limit or max_tokens back into the turn and raised on an
integer of thousands of digits; the file provider's `memory` tool echoed a megabyte target, action or old_text,
raised on arguments that are not an object and wrote str() of a number or a list as an entry."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from archive_helpers import compact, host_for

from hermes_ctx_plugins import SessionInfo
from hermes_ctx_plugins.memory.file.provider import FileProvider
from hermes_ctx_plugins.tokens import get_counter

ALICE = SessionInfo(session_id="s-a", user_id="alice")
HUGE = "x" * 1_000_000


@pytest.mark.parametrize(("name", "args"), [
    ("ctx_search", {"query": " " * 1_000_000}), ("ctx_search", {"query": ["x"] * 100_000}),
    ("ctx_search", {"query": "vault", "limit": HUGE}), ("ctx_search", {"query": "vault", "limit": 10**5000}),
    ("ctx_search", {"query": "vault " * 200_000}),
    ("ctx_expand", {"id": 10**5000}), ("ctx_expand", {"id": 1, "max_tokens": HUGE}),
    ("ctx_expand", {"id": 1, "offset": 10**5000}), ("ctx_expand", {"id": 1, "offset": HUGE}),
    ("ctx_expand", {"id": [1] * 100_000}), ("ctx_expand", {"id": 10**6, "offset": 3}),
])
def test_archive_tools_answer_hostile_arguments_in_bounded_text(tmp_path: Path, name: str, args: Any) -> None:
    host = host_for(path=str(tmp_path / "a.db"))
    try:
        compact(host, ALICE, "the deploy key is in vault seven", "noted", "the kettle is broken", "fine")
        assert host.archive is not None
        answer = host.archive.handle_tool_call(name, args, session=ALICE, counter=get_counter("gpt-4o"))
        assert len(answer) < 2_000, answer[:300]
        json.loads(answer)
    finally:
        host.shutdown()


@pytest.mark.parametrize(("args", "words"), [
    ([1, 2], "must be a JSON object"), (None, "must be a JSON object"),
    ({"action": "add", "target": HUGE, "content": "hi"}, "target must be one of"),
    ({"action": HUGE, "content": "hi"}, "action must be add, replace or remove"),
    ({"action": "replace", "old_text": HUGE, "content": "hi"}, "no entry contains"),
    ({"action": "remove", "old_text": HUGE}, "no entry contains"),
    ({"action": "add", "content": float("nan")}, "content must be text"),
    ({"action": "add", "content": ["x"] * 100_000}, "content must be text"),
    ({"action": "add", "content": 10**5000}, "content must be text, got <an integer of"),
    ({"action": "remove", "old_text": 7}, "old_text must be text"),
])
def test_the_memory_tool_answers_hostile_arguments_in_bounded_text(tmp_path: Path, args: Any, words: str) -> None:
    provider = FileProvider({}, hermes_home=tmp_path)
    try:
        answer = json.loads(provider.handle_tool_call("memory", args, session=ALICE))
        assert answer["success"] is False and words in answer["error"], answer
        assert len(answer["error"]) < 2_000
        assert provider.system_prompt_block(session=ALICE) == ""  # nothing was written
    finally:
        provider.shutdown()


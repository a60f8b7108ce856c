"""Stage 1 of the pipeline: pruning old tool traffic without a model.

Conversations here are built the way hermes 0.19.0 stores them: assistant messages carry
``tool_calls`` whose ``arguments`` are JSON strings, tool results are JSON strings (terminal:
``{"output", "exit_code", "error"}``) with ``name`` / ``tool_name`` and ``_``-prefixed internals.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hermes_ctx_plugins.compression.prune import (
    DUPLICATE_PLACEHOLDER,
    IMAGE_PLACEHOLDER,
    SUMMARY_MAX_CHARS,
    PruneReport,
    prune_tool_results,
    summarize_tool_result,
    tail_start,
    truncate_tool_arguments,
)
from hermes_ctx_plugins.tokens import TokenCounter, get_counter

Message = dict[str, Any]


@pytest.fixture(scope="module")
def counter() -> TokenCounter:
    counter = get_counter("gpt-4o")
    assert counter.exact, "these tests compare exact token counts"
    return counter


# -- building conversations -----------------------------------------------------------------------


def user(text: str) -> Message:
    return {"role": "user", "content": text}


def calls(*specs: tuple[str, str, dict[str, Any]]) -> Message:
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": cid, "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}
            for cid, name, args in specs
        ],
        "_reasoning_kept": "internal",
    }


def result(cid: str, content: Any, name: str = "terminal") -> Message:
    return {"role": "tool", "name": name, "tool_name": name, "tool_call_id": cid, "content": content,
            "_tool_output_risk": {"risk": "low"}}


def terminal_output(lines: int, exit_code: int = 0, tag: str = "") -> str:
    body = "\n".join(f"{tag}line {i}: compiling module_{i}.py ... ok" for i in range(lines))
    return json.dumps({"output": body, "exit_code": exit_code, "error": None})


def turn(cid: str, command: str, output: str, question: str = "go on") -> list[Message]:
    return [user(question), calls((cid, "terminal", {"command": command})), result(cid, output),
            {"role": "assistant", "content": f"ran {command}"}]


def conversation(turns: int, lines: int = 40) -> list[Message]:
    messages: list[Message] = []
    for i in range(turns):
        messages += turn(f"c{i}", f"make step{i}", terminal_output(lines, tag=f"t{i} "))
    return messages


def pairing(messages: list[Message]) -> list[tuple[int, int | None]]:
    """(tool result index, index of the assistant message that called it) for every result."""
    caller: dict[str, int] = {}
    pairs: list[tuple[int, int | None]] = []
    for i, message in enumerate(messages):
        for call in message.get("tool_calls") or ():
            caller[call["id"]] = i
        if message.get("role") == "tool":
            pairs.append((i, caller.get(message["tool_call_id"])))
    return pairs


def run(messages: list[Message], counter: TokenCounter, **kwargs: Any) -> PruneReport:
    """Prune and check the invariants every call must keep."""
    snapshot = copy.deepcopy(messages)
    report = prune_tool_results(messages, counter=counter, **kwargs)
    assert messages == snapshot, "the input was mutated"
    assert len(report.messages) == len(messages)
    for i, (old, new) in enumerate(zip(messages, report.messages, strict=True)):
        assert (new is not old) == (i in report.replaced)
        assert {k: v for k, v in new.items() if k.startswith("_")} == {
            k: v for k, v in old.items() if k.startswith("_")}
    assert [m.get("role") for m in report.messages] == [m.get("role") for m in messages]
    assert pairing(report.messages) == pairing(messages)
    assert report.tokens_before == counter.count_messages(messages)
    assert report.tokens_after == counter.count_messages(report.messages)
    assert report.tokens_after <= report.tokens_before
    assert report.changed == bool(report.replaced)
    return report


# -- summarize_tool_result ------------------------------------------------------------------------


def test_seed_example_line_exactly() -> None:
    assert summarize_tool_result("terminal", '{"command": "npm test"}', terminal_output(47)) == (
        "[terminal] ran `npm test` -> exit 0, 47 lines output"
    )
    plain = "\n".join(f"ok {i}" for i in range(46)) + "\nexit code 0"
    assert summarize_tool_result("terminal", '{"command": "npm test"}', plain) == (
        "[terminal] ran `npm test` -> exit 0, 47 lines output"
    )


@pytest.mark.parametrize(
    ("name", "args", "content", "expected"),
    [
        ("read_file", {"path": "config.py", "offset": 10}, "x" * 1200,
         "[read_file] read config.py from line 10 (1,200 chars)"),
        ("read_file", {"path": "a.py"}, '{"error": "File not found: a.py"}',
         "[read_file] read a.py from line 1 (33 chars); error: File not found: a.py"),
        ("write_file", {"path": "b.md", "content": "a\nb\nc"}, '{"bytes_written": 5}',
         "[write_file] wrote to b.md (3 lines)"),
        ("search_files", {"pattern": "compress", "path": "agent/"}, '{"total_count": 12, "matches": []}',
         "[search_files] content search for 'compress' in agent/ -> 12 matches"),
        ("search_files", {"pattern": "*.py", "target": "files"}, "no json",
         "[search_files] files search for '*.py' in . -> ? matches"),
        ("patch", {"path": "x.py", "mode": "replace"}, "d" * 300,
         "[patch] replace in x.py (300 chars result)"),
        ("browser_navigate", {"url": "https://example.com"}, "p" * 50,
         "[browser_navigate] https://example.com (50 chars)"),
        ("browser_click", {"ref": "e12"}, "p" * 50, "[browser_click] ref=e12 (50 chars)"),
        ("browser_snapshot", {}, "p" * 50, "[browser_snapshot] (50 chars)"),
        ("web_search", {"query": "hermes agent"}, "r" * 2000,
         "[web_search] query='hermes agent' (2,000 chars result)"),
        ("web_extract", {"urls": ["https://a.io", "https://b.io"]}, "r" * 10,
         "[web_extract] https://a.io (+1 more) (10 chars)"),
        ("web_extract", {"urls": [{"url": "https://a.io", "title": "A"}]}, "r",
         "[web_extract] https://a.io (1 chars)"),
        ("delegate_task", {"goal": "fix the flaky test"}, "r" * 10,
         "[delegate_task] 'fix the flaky test' (10 chars result)"),
        ("execute_code", {"code": "print(1)\nprint(2)"},
         json.dumps({"status": "success", "output": "1\n2", "exit_code": 0}),
         "[execute_code] `print(1) print(2)` -> exit 0, 2 lines output"),
        ("skill_view", {"name": "deploy"}, "s" * 10, "[skill_view] name=deploy (10 chars)"),
        ("skills_list", {}, "s" * 10, "[skills_list] name=? (10 chars)"),
        ("vision_analyze", {"question": "what is on screen?"}, "v" * 10,
         "[vision_analyze] 'what is on screen?' (10 chars)"),
        ("memory", {"action": "add", "target": "user"}, "{}", "[memory] add on user"),
        ("todo", {"todos": []}, "{}", "[todo] updated task list"),
        ("clarify", {"question": "Which branch?"}, "{}", "[clarify] asked 'Which branch?'"),
        ("cronjob", {"action": "create"}, "{}", "[cronjob] create"),
        ("process", {"action": "poll", "session_id": "p1"}, "{}", "[process] poll session=p1"),
        ("mcp_github_search", {"q": "bug", "limit": 5, "sort": "new"}, "m" * 300,
         "[mcp_github_search] q=bug limit=5 (300 chars result)"),
        ("mcp_x", {"filter": {"a": [1, 2]}}, "m", '[mcp_x] filter={"a": [1, 2]} (1 chars result)'),
    ],
)
def test_one_liner_per_tool(name: str, args: dict[str, Any], content: str, expected: str) -> None:
    assert summarize_tool_result(name, json.dumps(args), content) == expected


SAME_AS_HERMES = [
    ("terminal", {"command": "npm test"}, "\n".join(["ok"] * 47)),
    ("read_file", {"path": "config.py", "offset": 3}, "x" * 1200),
    ("write_file", {"path": "b.md", "content": "a\nb"}, "{}"),
    ("search_files", {"pattern": "TODO", "path": "src", "target": "content"}, '{"total_count": 4}'),
    ("patch", {"path": "x.py"}, "d" * 30),
    ("browser_navigate", {"url": "https://example.com"}, "p" * 50),
    ("web_search", {"query": "hermes"}, "r" * 20),
    ("web_extract", {"urls": ["https://a.io", "https://b.io"]}, "r"),
    ("delegate_task", {"goal": "fix it"}, "r"),
    ("skill_manage", {"name": "deploy"}, "s"),
    ("vision_analyze", {"question": "what?"}, "v"),
    ("memory", {"action": "add", "target": "memory"}, "{}"),
    ("todo", {}, "{}"),
    ("cronjob", {"action": "list"}, "{}"),
    ("process", {"action": "kill", "session_id": "p9"}, "{}"),
    ("mcp_tool", {"a": "1", "b": "two"}, "m" * 10),
]


@pytest.mark.parametrize(("name", "args", "content"), SAME_AS_HERMES)
def test_formats_match_hermes_0_19(name: str, args: dict[str, Any], content: str) -> None:
    hermes = pytest.importorskip("agent.context_compressor")
    expected = hermes._summarize_tool_result(name, json.dumps(args), content)
    assert summarize_tool_result(name, json.dumps(args), content) == expected


def test_terminal_lines_are_counted_in_the_output_not_the_json() -> None:
    """hermes 0.19.0 counts the newlines of the JSON envelope, so every terminal result is "1 lines"."""
    hermes = pytest.importorskip("agent.context_compressor")
    args, content = '{"command": "npm test"}', terminal_output(47)
    assert hermes._summarize_tool_result("terminal", args, content).endswith("1 lines output")
    assert summarize_tool_result("terminal", args, content).endswith("47 lines output")


PY_TRACEBACK = """Traceback (most recent call last):
  File "/srv/app/main.py", line 3, in <module>
    raise_if_missing()
  File "/srv/app/main.py", line 1, in raise_if_missing
    import x
ModuleNotFoundError: No module named 'x'"""


def test_failed_run_keeps_its_error_line() -> None:
    content = json.dumps({"output": PY_TRACEBACK, "exit_code": 1, "error": None})
    assert summarize_tool_result("terminal", '{"command": "python main.py"}', content) == (
        "[terminal] ran `python main.py` -> exit 1, 6 lines output; "
        "error: ModuleNotFoundError: No module named 'x'"
    )
    pytest_run = (
        "collected 3 items\n\nE   assert 1 == 2\nFAILED tests/test_a.py::test_b - assert 1 == 2\nExit code: 1"
    )
    assert summarize_tool_result("terminal", '{"command": "pytest"}', pytest_run).endswith(
        "-> exit 1, 5 lines output; error: FAILED tests/test_a.py::test_b - assert 1 == 2"
    )
    gcc = "main.c: In function 'main':\nmain.c:3:5: error: expected ';' before 'return'"
    assert summarize_tool_result("terminal", '{"command": "cc main.c"}', gcc).endswith(
        "-> exit ?, 2 lines output; error: main.c:3:5: error: expected ';' before 'return'"
    )


def test_successful_run_mentioning_errors_has_no_error_note() -> None:
    content = json.dumps({"output": "class ParseError(Exception):\n    pass", "exit_code": 0, "error": None})
    assert summarize_tool_result("terminal", '{"command": "cat errors.py"}', content) == (
        "[terminal] ran `cat errors.py` -> exit 0, 2 lines output"
    )
    source = "raise ValueError('x')\n" * 20
    assert "error" not in summarize_tool_result("read_file", '{"path": "e.py"}', source)


def test_exit_code_sources() -> None:
    truncated_json = '{"output": "half a result', '"exit_code": 7}'
    assert "-> exit 7," in summarize_tool_result("terminal", "{}", "".join(truncated_json))
    assert "-> exit 3," in summarize_tool_result("terminal", "{}", "building\nExit code: 3")
    assert "-> exit ?," in summarize_tool_result("terminal", "{}", "no code here")


def test_summary_is_one_bounded_line_and_keeps_the_error() -> None:
    command = "python -c '" + "x = 1\n" * 100 + "'"
    error = "RuntimeError: " + "boom " * 100
    content = json.dumps({"output": error, "exit_code": 2})
    summary = summarize_tool_result("terminal", json.dumps({"command": command}), content)
    assert "\n" not in summary
    assert len(summary) <= SUMMARY_MAX_CHARS
    assert "-> exit 2" in summary
    assert "; error: RuntimeError: boom" in summary
    generic = summarize_tool_result("x" * 1000, json.dumps({"k" * 500: "v" * 500}), "c")
    assert len(generic) <= SUMMARY_MAX_CHARS


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda children: st.lists(children) | st.dictionaries(st.text(), children),
    max_leaves=30,
)


@settings(max_examples=300, deadline=None)
@given(
    name=st.sampled_from(["terminal", "read_file", "write_file", "search_files", "patch", "browser_click",
                          "web_search", "web_extract", "delegate_task", "execute_code", "skill_view",
                          "vision_analyze", "memory", "todo", "clarify", "cronjob", "process", "mcp_x"])
    | st.text(),
    args=json_values.map(json.dumps) | st.dictionaries(st.text(), json_values).map(json.dumps) | st.text(),
    content=st.text() | json_values.map(json.dumps),
)
def test_summary_never_raises(name: str, args: str, content: str) -> None:
    summary = summarize_tool_result(name, args, content)
    assert "\n" not in summary
    assert len(summary) <= SUMMARY_MAX_CHARS


@pytest.mark.parametrize(
    ("name", "args", "content"),
    [
        ("terminal", "[" * 5000 + "]" * 5000, "{" * 5000),  # nesting deeper than json's recursion limit
        ("terminal", '{"command": ' + "[" * 900 + "]" * 900 + "}", "x"),
        ("read_file", {"path": None, "offset": [1]}, None),
        ("web_extract", '{"urls": [42, {"href": 3}]}', 17),
        ("write_file", '{"content": true}', ["not", "a", "string"]),
        (None, None, None),
    ],
)
def test_summary_survives_garbage(name: Any, args: Any, content: Any) -> None:
    assert summarize_tool_result(name, args, content).startswith("[")


# -- truncate_tool_arguments ----------------------------------------------------------------------


def same_shape(original: Any, shrunk: Any) -> None:
    """``shrunk`` is ``original`` with string leaves cut and lists shortened, all keys kept."""
    if isinstance(original, dict):
        assert isinstance(shrunk, dict)
        assert list(shrunk) == list(original)
        for key in original:
            same_shape(original[key], shrunk[key])
    elif isinstance(original, list):
        assert isinstance(shrunk, list)
        if len(shrunk) < len(original):
            assert isinstance(shrunk[-1], str)
            assert shrunk[-1].endswith("more items truncated]")
            shrunk = shrunk[:-1]
        for item, cut in zip(original, shrunk, strict=False):
            same_shape(item, cut)
    elif isinstance(original, str) and shrunk != original:
        assert isinstance(shrunk, str)
        head, _, marker = shrunk.rpartition("...[truncated ")
        assert original.startswith(head)
        assert marker == f"{len(original) - len(head)} chars]"
    else:
        assert shrunk == original


@settings(max_examples=300, deadline=None)
@given(value=json_values, max_chars=st.integers(0, 600), head_chars=st.integers(0, 250))
def test_truncated_arguments_parse_and_keep_their_shape(value: Any, max_chars: int, head_chars: int) -> None:
    arguments = json.dumps(value, ensure_ascii=False)
    out = truncate_tool_arguments(arguments, max_chars, head_chars)
    assert len(out) <= len(arguments)
    same_shape(value, json.loads(out))
    assert truncate_tool_arguments(out, max_chars, head_chars) == out  # idempotent
    if len(arguments) <= max_chars:
        assert out == arguments


def test_long_write_file_arguments() -> None:
    arguments = json.dumps({"path": "/srv/app/README.md", "content": "# Title\n" + "é" * 5000, "mode": 1})
    out = truncate_tool_arguments(arguments)
    assert len(out) <= 500
    parsed = json.loads(out)
    assert parsed["path"] == "/srv/app/README.md" and parsed["mode"] == 1
    assert parsed["content"] == "# Title\n" + "é" * 192 + "...[truncated 4808 chars]"
    assert "é" in out  # not escaped to \u00e9: re-serialised with ensure_ascii=False


def test_many_short_strings_get_their_list_cut() -> None:
    out = truncate_tool_arguments(json.dumps({"paths": [f"src/m{i}.py" for i in range(200)]}))
    assert len(out) <= 500
    kept = [f"src/m{i}.py" for i in range(5)]
    assert json.loads(out) == {"paths": [*kept, "...[195 more items truncated]"]}


@pytest.mark.parametrize("arguments", ["x" * 600, '{"a": "' + "b" * 600, "[" * 5000 + "]" * 5000])
def test_non_json_or_unparseable_arguments_are_returned_unchanged(arguments: str) -> None:
    assert truncate_tool_arguments(arguments) is arguments


# -- tail_start ------------------------------------------------------------------------------------


def test_tail_is_a_token_budget_with_a_message_floor(counter: TokenCounter) -> None:
    messages = conversation(6)
    sizes = [counter.count_message(m) for m in messages]
    last_turn = sum(sizes[-4:])
    def start(budget: int, floor: int) -> int:
        return tail_start(messages, counter=counter, budget_tokens=budget, min_messages=floor)

    assert start(last_turn, 0) == len(messages) - 4
    assert start(last_turn - 1, 0) > len(messages) - 4
    assert start(0, 4) == len(messages) - 4
    assert start(10**9, 0) == 0
    assert start(0, 100) == 0
    assert tail_start([], counter=counter, budget_tokens=100, min_messages=3) == 0


def test_tail_never_splits_a_call_from_its_results(counter: TokenCounter) -> None:
    messages = [user("check both"),
                calls(("a", "terminal", {"command": "ls"}), ("b", "terminal", {"command": "pwd"})),
                result("a", terminal_output(30)), result("b", terminal_output(30)), user("thanks")]
    for min_messages in range(len(messages) + 1):
        for budget in range(0, counter.count_messages(messages), 7):
            start = tail_start(messages, counter=counter, budget_tokens=budget, min_messages=min_messages)
            assert start == len(messages) or messages[start]["role"] != "tool"
            assert len(messages) - start >= min_messages
    # the floor (2) ends inside the group: the whole group joins the tail
    assert tail_start(messages, counter=counter, budget_tokens=0, min_messages=2) == 1


# -- prune_tool_results ----------------------------------------------------------------------------


def test_old_results_become_summaries_and_the_tail_is_untouched(counter: TokenCounter) -> None:
    messages = conversation(6)
    budget = sum(counter.count_message(m) for m in messages[-8:])
    report = run(messages, counter, protect_tail_tokens=budget, protect_tail_count=2)
    boundary = len(messages) - 8
    assert tail_start(messages, counter=counter, budget_tokens=budget, min_messages=2) == boundary
    assert report.summarized == 4 and report.deduplicated == report.demoted == report.arguments_truncated == 0
    assert report.replaced == (2, 6, 10, 14)
    for i in report.replaced:
        expected = f"[terminal] ran `make step{i // 4}` -> exit 0, 40 lines output"
        assert report.messages[i]["content"] == expected
    assert all(new is old for new, old in zip(report.messages[boundary:], messages[boundary:], strict=True))
    assert report.tokens_after < report.tokens_before / 2  # 4 of 6 bulky results summarised


def test_short_results_and_other_roles_are_left_alone(counter: TokenCounter) -> None:
    messages = [*turn("a", "true", json.dumps({"output": "", "exit_code": 0})), user("x" * 5000), user("end")]
    report = run(messages, counter, protect_tail_tokens=0, protect_tail_count=1)
    assert not report.changed and all(n is o for n, o in zip(report.messages, messages, strict=True))


def test_duplicates_keep_the_newest_copy(counter: TokenCounter) -> None:
    same = terminal_output(30)
    messages = [*turn("a", "cat log", same), *turn("b", "cat log", same),
                *turn("c", "make", terminal_output(30, tag="x")), *turn("d", "cat log", same)]
    # everything protected: only the deduplication pass applies, across the whole list
    report = run(messages, counter, protect_tail_tokens=10**9, protect_tail_count=0)
    assert report.deduplicated == 2 and report.summarized == 0
    assert [report.messages[i]["content"] for i in (2, 6, 10, 14)] == [
        DUPLICATE_PLACEHOLDER, DUPLICATE_PLACEHOLDER, messages[10]["content"], same]
    assert report.messages[14] is messages[14]


def test_duplicates_below_min_prune_chars_are_kept(counter: TokenCounter) -> None:
    small = json.dumps({"output": "ok", "exit_code": 0})
    messages = [*turn("a", "true", small), *turn("b", "true", small)]
    report = run(messages, counter, protect_tail_tokens=10**9, protect_tail_count=0)
    assert not report.changed


def test_results_are_summarised_with_their_own_call(counter: TokenCounter) -> None:
    messages = [user("read both"),
                calls(("r1", "read_file", {"path": "a.py"}), ("r2", "search_files", {"pattern": "TODO"})),
                result("r2", json.dumps({"total_count": 3, "matches": ["m" * 300]}), name="search_files"),
                result("r1", "1|import os\n" * 50, name="read_file"),
                result("orphan", "o" * 400, name="web_search"),
                user("thanks")]
    report = run(messages, counter, protect_tail_tokens=0, protect_tail_count=1)
    assert [report.messages[i]["content"] for i in (2, 3, 4)] == [
        "[search_files] content search for 'TODO' in . -> 3 matches",
        "[read_file] read a.py from line 1 (600 chars)",
        "[web_search] query='?' (400 chars result)",  # no call found: the result's own tool name
    ]


def test_reused_call_ids_pair_with_the_latest_call(counter: TokenCounter) -> None:
    messages = [user("read"), calls(("call_0", "read_file", {"path": "a.py"})),
                result("call_0", "import os\n" * 40, "read_file"),
                user("run"), calls(("call_0", "terminal", {"command": "ls"})),
                result("call_0", terminal_output(30)), user("end")]
    report = run(messages, counter, protect_tail_tokens=0, protect_tail_count=1)
    assert report.messages[2]["content"] == "[read_file] read a.py from line 1 (400 chars)"
    assert report.messages[5]["content"] == "[terminal] ran `ls` -> exit 0, 30 lines output"


def test_long_arguments_are_truncated_outside_the_tail_only(counter: TokenCounter) -> None:
    big = {"path": "notes.md", "content": "lorem ipsum " * 400}
    messages = [user("write"), calls(("w1", "write_file", big)), result("w1", '{"ok": true}', "write_file"),
                user("again"), calls(("w2", "write_file", big)), result("w2", '{"ok": true}', "write_file")]
    report = run(messages, counter, protect_tail_tokens=0, protect_tail_count=3)
    assert report.arguments_truncated == 1 and report.replaced == (1,)
    arguments = json.loads(report.messages[1]["tool_calls"][0]["function"]["arguments"])
    assert arguments["path"] == "notes.md"
    assert arguments["content"].endswith("...[truncated 4600 chars]")
    assert report.messages[1]["tool_calls"][0]["id"] == "w1"
    assert report.messages[1]["_reasoning_kept"] == "internal"
    assert report.messages[4] is messages[4]


def bulky_tail(counter: TokenCounter) -> tuple[list[Message], dict[str, int]]:
    """Three turns whose tool results differ in size; the last is the turn in progress."""
    messages = [*turn("a", "make big", terminal_output(300, tag="a")),
                *turn("b", "make small", terminal_output(100, tag="b")),
                user("and now?"), calls(("c", "terminal", {"command": "make current"})),
                result("c", terminal_output(400, tag="c"))]
    sizes = {cid: counter.count_message(m) for m in messages if (cid := m.get("tool_call_id"))}
    return messages, sizes


def test_overfull_tail_demotes_the_largest_old_results_first(counter: TokenCounter) -> None:
    messages, sizes = bulky_tail(counter)
    total = counter.count_messages(messages)
    # all messages protected by count; dropping "a" alone brings the tail under 1.5 x budget
    budget = int((total - sizes["a"] + 200) / 1.5)
    report = run(messages, counter, protect_tail_tokens=budget, protect_tail_count=len(messages))
    assert report.demoted == 1 and report.summarized == 0 and report.replaced == (2,)
    assert report.messages[2]["content"] == "[terminal] ran `make big` -> exit 0, 300 lines output"
    # a smaller budget demotes "b" too, but never the current turn's result, however large
    report = run(messages, counter, protect_tail_tokens=10, protect_tail_count=len(messages))
    assert report.demoted == 2 and report.replaced == (2, 6)
    assert report.messages[-1] is messages[-1]


def test_tail_within_one_and_a_half_budgets_is_not_demoted(counter: TokenCounter) -> None:
    messages, _ = bulky_tail(counter)
    total = counter.count_messages(messages)
    budget = int(total / 1.5) + 1
    report = run(messages, counter, protect_tail_tokens=budget, protect_tail_count=len(messages))
    assert not report.changed  # the tail is over budget, but not over 1.5 x budget


def test_without_user_messages_the_last_calls_results_stay(counter: TokenCounter) -> None:
    messages, _ = bulky_tail(counter)
    messages = [m for m in messages if m["role"] != "user"]
    report = run(messages, counter, protect_tail_tokens=10, protect_tail_count=len(messages))
    assert report.demoted == 2 and report.messages[-1] is messages[-1]


def test_images_outside_the_tail_become_placeholders(counter: TokenCounter) -> None:
    image = {"type": "image_url", "image_url": {"url": "data:image/png;base64," + "A" * 4000}}
    caption = {"type": "text", "text": "screenshot of the login page"}
    envelope = {"_multimodal": True, "content": [caption, image], "text_summary": "login page"}
    messages = [user("look"), calls(("s1", "computer_use", {}), ("s2", "computer_use", {})),
                result("s1", [caption, image], "computer_use"), result("s2", envelope, "computer_use"),
                *turn("t", "ls", terminal_output(3)), user("again"), calls(("s3", "computer_use", {})),
                result("s3", [caption, image], "computer_use")]
    report = run(messages, counter, protect_tail_tokens=0, protect_tail_count=2)
    placeholder = {"type": "text", "text": IMAGE_PLACEHOLDER}
    assert report.messages[2]["content"] == [caption, placeholder]
    assert report.messages[3]["content"] == {"_multimodal": True, "content": [caption, placeholder],
                                             "text_summary": "login page"}
    assert report.messages[-1] is messages[-1]
    assert report.summarized == 2


def test_pruning_twice_changes_nothing_the_second_time(counter: TokenCounter) -> None:
    messages, _ = bulky_tail(counter)
    messages = [*conversation(3), *messages]
    messages[2] = result("c0", messages[-1]["content"])  # a duplicate of the current result
    messages[1] = calls(("c0", "write_file", {"path": "p", "content": "z" * 3000}))
    first = run(messages, counter, protect_tail_tokens=50, protect_tail_count=6, min_prune_chars=30)
    assert first.deduplicated and first.summarized and first.demoted and first.arguments_truncated
    second = run(first.messages, counter, protect_tail_tokens=50, protect_tail_count=6, min_prune_chars=30)
    assert not second.changed
    assert all(n is o for n, o in zip(second.messages, first.messages, strict=True))


tool_outputs = st.sampled_from([
    terminal_output(30), terminal_output(30, 1, "boom Error "), "short", "", "x" * 250,
    json.dumps({"error": "File not found: " + "p" * 200}), "[terminal] ran `x` -> exit 0, 1 lines output",
])


@st.composite
def conversations(draw: st.DrawFn) -> list[Message]:
    messages: list[Message] = []
    for t in range(draw(st.integers(0, 6))):
        if draw(st.booleans()):
            messages.append(user(draw(st.sampled_from(["hi", "please continue " * 30]))))
        specs = [(f"c{t}_{k}", draw(st.sampled_from(["terminal", "read_file", "write_file"])),
                  {"path": "p", "content": draw(st.sampled_from(["", "w" * 900]))})
                 for k in range(draw(st.integers(0, 3)))]
        if specs:
            messages.append(calls(*specs))
            messages += [result(cid, draw(tool_outputs), name) for cid, name, _ in specs]
        else:
            messages.append({"role": "assistant", "content": "done"})
    return messages


def test_pruning_the_result_again_changes_nothing_when_pruning_let_the_tail_reach_further(
    counter: TokenCounter,
) -> None:
    """Found by the property below: summarising old results shrinks the turn before the tail, so the
    token-budget tail reaches back over it and a second run found a bulky result to demote."""
    args = {"path": "p", "content": ""}
    messages = [
        {"role": "assistant", "content": "done"}, {"role": "assistant", "content": "done"},
        calls(*[(f"c2_{k}", "terminal", args) for k in range(3)]),
        *[result(f"c2_{k}", terminal_output(30)) for k in range(3)],
        calls(*[(f"c3_{k}", "terminal", args) for k in range(3)]),
        result("c3_0", terminal_output(30)), result("c3_1", terminal_output(30)), result("c3_2", "x" * 250),
        user("hi"), calls(("c4_0", "terminal", args)), result("c4_0", "short"),
    ]
    kwargs = {"protect_tail_tokens": 221, "protect_tail_count": 0, "min_prune_chars": 0}
    first = run(messages, counter, **kwargs)
    assert first.changed
    assert not run(first.messages, counter, **kwargs).changed


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(messages=conversations(), budget=st.integers(0, 3000), count=st.integers(0, 10),
       min_chars=st.sampled_from([0, 50, 200]))
def test_property_invariants_and_idempotence(
    counter: TokenCounter, messages: list[Message], budget: int, count: int, min_chars: int
) -> None:
    kwargs = {"protect_tail_tokens": budget, "protect_tail_count": count, "min_prune_chars": min_chars}
    first = run(messages, counter, **kwargs)
    boundary = tail_start(messages, counter=counter, budget_tokens=budget, min_messages=count)
    for i in first.replaced:
        if i >= boundary and messages[i]["role"] == "tool":  # tail: deduplicated or demoted only
            assert first.messages[i]["content"] == DUPLICATE_PLACEHOLDER or first.demoted
        if messages[i]["role"] == "assistant":
            assert i < boundary
            for call in first.messages[i]["tool_calls"]:
                json.loads(call["function"]["arguments"])
    second = run(first.messages, counter, **kwargs)
    assert not second.changed

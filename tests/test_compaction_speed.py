"""What made tool-heavy compaction slower than hermes' (issue 17), each fix bounded by calls or characters
read, never by a stopwatch, and each shown to give the same result as the slower way."""

from __future__ import annotations

import copy
import functools
import itertools
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hermes_ctx_plugins import chat, load_host
from hermes_ctx_plugins.compression import tool_summary
from hermes_ctx_plugins.compression.base import shrinks
from hermes_ctx_plugins.safety.engine import layouts, redact
from hermes_ctx_plugins.safety.engine.views import Views
from hermes_ctx_plugins.testing import StubOpenAIServer
from hermes_ctx_plugins.tokens import TokenCounter

DATA = Path(__file__).parent / "data"
PASTES = [case["text"] for case in json.loads((DATA / "secret_pastes.json").read_text(encoding="utf-8"))["cases"]]
# fake values, split so that no scanner of this repository's own files mistakes them for real ones
GITHUB = "ghp_" + "Jj9MuVSSHfFoj1pn0eGHGdinhIKBwvrD8SAqw"
AWS_ID, AWS_SECRET = "AKIA" + "JYW3OXQATDCLF2AM", "hH40sRPt+VHMpo2ce6imy7TBIz87" + "+if4YejrgygS"
# one-line tool summaries and arguments, as a summary model reads a tool-heavy compaction
CLEAN = [f"[tool result: terminal] [terminal] ran `make -j8 step{n}` -> exit 0, {n * 7} lines output"
         for n in range(400)] + [f'[tool call: read_file] {{"path": "src/cache/parser_{n}.py"}}' for n in range(400)]


# ---------------------------------------------------------------------------------------- redacting many texts


def one_by_one(texts: list[str]) -> list[str]:
    return [redact.redact_secrets(text) for text in texts]


def test_redacting_many_texts_at_once_is_redacting_each_on_the_corpus() -> None:
    texts = [*PASTES, *CLEAN[:50], *(f"{a}\n{b}" for a, b in itertools.pairwise(PASTES))]
    assert redact.redact_each(texts) == one_by_one(texts)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.one_of(
    st.sampled_from([*PASTES, *CLEAN[:5], "token", "client secret", "Access key ID,Secret access key",
                     f"{AWS_ID},{AWS_SECRET}", "localhost:5432:db:app:Sup3rS3cret", "mysql -u root -pK7#mQ2vX9pL4",
                     "[REDACTED:password]", f"echo {GITHUB} | base64", "数据库密码: Db@2024prod", "ΣΑΣ", ""]),
    st.text(st.characters(codec=None, categories=None), max_size=40),  # every code point, lone surrogates too
    st.text(alphabet="abcxyz0123456789:=,\n\t /+-_|\"'", max_size=60),
), max_size=12))
def test_redacting_many_texts_at_once_is_redacting_each(texts: list[str]) -> None:
    assert redact.redact_each(texts) == one_by_one(texts)


def test_only_texts_that_could_hold_a_secret_are_redacted_one_by_one(monkeypatch: pytest.MonkeyPatch) -> None:
    """800 clean one-liners and two with secrets: the two are read alone (and lose their secret), the
    800 come back as they were without each paying the redactor's fixed cost."""
    alone: list[str] = []
    real = redact.redact_secrets

    def spy(text: str) -> str:
        alone.append(text)
        return real(text)

    monkeypatch.setattr(redact, "redact_secrets", spy)
    leaky = [f"[tool call: terminal] {{\"command\": \"export GH_TOKEN={GITHUB}\"}}",
             f"[user] the keys: {AWS_ID}:{AWS_SECRET}"]
    texts = [*CLEAN[:400], leaky[0], *CLEAN[400:], leaky[1]]
    out = redact.redact_each(texts)
    assert out[:400] == CLEAN[:400] and out[401:801] == CLEAN[400:]
    assert GITHUB not in out[400] and "[REDACTED:github-token]" in out[400]
    assert AWS_SECRET not in out[801] and "[REDACTED:aws-secret-key]" in out[801]
    assert sorted(alone) == sorted(leaky)


# ------------------------------------------------------------------------------ credential tables, by first word


def reference_table_spans(text: str, lowered: str, present: frozenset[str]) -> list[tuple[int, int, str]]:
    """What ``table_spans`` did before it filed column names by their first word: look for every name."""
    headers = set()
    for name, needs in layouts._column_names().items():
        i = lowered.find(name) if present.issuperset(needs) else -1
        while i >= 0:
            if layouts._delimited(lowered, i, i + len(name)):
                headers.add(lowered.rfind("\n", 0, i) + 1)
            i = lowered.find(name, i + len(name))
    found: list[tuple[int, int, str]] = []
    lines_read = 0
    for first in sorted(headers):
        if first >= lines_read:
            lines_read, spans = layouts._table_rows(text, lowered, first)
            found += spans
    return found


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(["Access key ID", "Secret access key", "password", "client secret", "token",
                                 "api key", ",", "\t", "|", "\n", " ", "user", "secret", "AKIA1234", "x" * 5,
                                 "secret_access_key", "Client-Secret", "中文"]), max_size=20).map("".join))
def test_credential_tables_are_found_as_before(text: str) -> None:
    views = Views(text)
    spans = layouts.table_spans(text, views.lowered, views.words)
    assert spans == reference_table_spans(text, views.lowered, views.words)
    for case in PASTES:
        views = Views(case)
        assert layouts.table_spans(case, views.lowered, views.words) == reference_table_spans(
            case, views.lowered, views.words)


def test_a_text_naming_no_credential_column_looks_for_none(monkeypatch: pytest.MonkeyPatch) -> None:
    looked: list[str] = []

    class Lowered(str):
        def find(self, name: str, *args: Any) -> int:  # type: ignore[override]
            looked.append(name)
            return super().find(name, *args)

    text = "[terminal] ran `make -j8 build` -> exit 0, 312 lines output"
    views = Views(text)
    assert layouts.table_spans(text, Lowered(views.lowered), views.words) == []
    assert looked == []
    table = "Access key ID,Secret access key\nAKIAXXXX,abcd1234efgh"
    views = Views(table)
    assert layouts.table_spans(table, Lowered(views.lowered), views.words)  # the owner's table is still read


# ------------------------------------------------------------------------------------------- the error line


def test_only_lines_holding_an_error_word_are_matched(monkeypatch: pytest.MonkeyPatch) -> None:
    """A 20,000-line log that mentions an error early and fails at its end: three lines are looked at, not
    every line after the first mention."""
    lines = [f"2026-11-03T12:00:{i % 60:02d}Z INFO worker-3 request ok latency=12ms" for i in range(20_000)]
    lines[10] = "2026-11-03T12:00:10Z WARN retrying after ConnectionResetError"
    lines[9_000] = "2026-11-03T12:30:00Z WARN one more ERROR in the cache"
    lines.append("  ModuleNotFoundError: No module named 'cache'")
    starts = CountingPattern(tool_summary._ERROR_START)
    monkeypatch.setattr(tool_summary, "_ERROR_START", starts)
    assert tool_summary._first_error_line("\r\n".join(lines)) == "ModuleNotFoundError: No module named 'cache'"
    assert starts.calls == 3


class CountingPattern:
    def __init__(self, pattern: re.Pattern[str]) -> None:
        self.pattern, self.calls = pattern, 0

    def match(self, text: str) -> re.Match[str] | None:
        self.calls += 1
        return self.pattern.match(text)


# ------------------------------------------------------------------------------ what a summary line is read from


def error_keys() -> st.SearchStrategy[str]:
    """A JSON object that may carry an ``error`` (a string, or not), its key spelt plainly or escaped."""
    spelt = st.sampled_from(['"error"', '"\\u0065rror"', '"erro\\u0072"', '"\\u0065\\u0072\\u0072\\u006F\\u0072"',
                             '"errors"', '"Error"'])
    value = st.one_of(st.none(), st.integers(), st.text(max_size=30)).map(lambda v: json.dumps(v))
    body = st.text(max_size=40).map(lambda v: json.dumps(v, ensure_ascii=False))
    return st.tuples(spelt, value, body, st.booleans()).map(
        lambda t: f'{{"content": {t[2]}, {t[0]}: {t[1]}}}' if t[3] else f'{{{t[0]}: {t[1]}, "total_lines": 3}}')


@settings(max_examples=300, deadline=None)
@given(error_keys(), st.sampled_from(["read_file", "search_files", "web_extract", "mcp_tool"]))
def test_a_result_that_reports_an_error_keeps_it_in_its_summary(content: str, tool: str) -> None:
    data = json.loads(content)
    error = data.get("error")
    summary = tool_summary.summarize_tool_result(tool, '{"path": "a.py"}', content)
    if isinstance(error, str) and error.strip():
        assert "; error: " in summary
        assert tool_summary._clip(error.strip(), 20)[:10].rstrip(".") in summary
    else:
        assert "; error: " not in summary


def test_a_file_read_is_not_parsed_unless_it_may_report_an_error(monkeypatch: pytest.MonkeyPatch) -> None:
    parsed: list[str] = []
    real = tool_summary._json_object

    def spy(text: str) -> dict[str, Any]:
        parsed.append(text)
        return real(text)

    monkeypatch.setattr(tool_summary, "_json_object", spy)
    numbered = "\n".join(f"{i:6d}|x = cache.get({i})  # 缓存" for i in range(2_000))
    content = json.dumps({"content": numbered, "total_lines": 2_000})  # \u escapes for the Chinese, not \u00..
    summary = tool_summary.summarize_tool_result("read_file", '{"path": "src/a.py"}', content)
    assert summary == f"[read_file] read src/a.py from line 1 ({len(content):,} chars)"
    assert parsed == ['{"path": "src/a.py"}']  # the arguments, not the 100 kB result
    failed = json.dumps({"error": "File not found: src/b.py"})
    assert tool_summary.summarize_tool_result("read_file", '{"path": "src/b.py"}', failed).endswith(
        "; error: File not found: src/b.py")


# ---------------------------------------------------------------------------------------- a bound by length


class Slices(str):
    """A string that records every slice taken of it."""

    taken: ClassVar[list[int]] = []

    def __getitem__(self, key: Any) -> Any:
        part = super().__getitem__(key)
        Slices.taken.append(len(part))
        return part


def test_a_huge_result_is_known_to_outweigh_its_summary_by_its_length_alone() -> None:
    counter = TokenCounter("gpt-4o")
    Slices.taken = []
    huge = {"role": "tool", "tool_call_id": "call_1", "content": Slices("=" * 10_000_000)}
    assert counter.at_least(huge, enough=200) >= 200
    assert Slices.taken == []  # not a word of it was read


def test_a_compaction_that_dropped_megabytes_is_known_smaller_without_reading_them() -> None:
    counter = TokenCounter("gpt-4o")
    Slices.taken = []
    before = [{"role": "tool", "tool_call_id": f"call_{i}", "content": Slices("x" * 1_000_000)} for i in range(10)]
    assert shrinks(before, 20_000, counter)  # 10 MB is at least 78,000 tokens, whatever the text
    assert Slices.taken == []
    # 1 MB of "x" is 125,000 tokens: neither its length nor its one word settles 200,000, counting does
    assert not shrinks(before[:1], 200_000, counter)
    assert shrinks(before[:1], 120_000, counter)


@functools.cache
def _both_encodings() -> tuple[TokenCounter, TokenCounter]:
    """o200k_base and cl100k_base, made once (a new counter learns its encoding's longest token again)."""
    return TokenCounter("gpt-4o"), TokenCounter("gpt-4")


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(["=", " ", "a", "\n", "0", "中", "😀", "ab", "\t", "-", "x\x1c"]), st.integers(1, 5_000))
def test_the_length_bound_never_exceeds_the_exact_count(piece: str, times: int) -> None:
    for counter in _both_encodings():
        message = {"role": "tool", "tool_call_id": "call_1", "content": piece * times}
        assert counter.at_least(message, enough=1) <= counter.at_least(message) <= counter.count_message(message)


# ------------------------------------------------------------------------------------ one TLS context a process


@pytest.fixture
def tls_contexts(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[object]]:
    made: list[object] = []
    real = httpx.create_ssl_context

    def spy(*args: Any, **kwargs: Any) -> Any:
        made.append(context := real(*args, **kwargs))
        return context

    monkeypatch.setattr(httpx, "create_ssl_context", spy)
    chat._tls_context.cache_clear()
    yield made
    chat._tls_context.cache_clear()


def test_every_copy_of_a_pipeline_summarises_without_loading_the_ca_bundle_again(tls_contexts: list[object]) -> None:
    """hermes copies the engine per agent and a pipeline builds its steps in each copy: building a TLS
    context (~80 ms, the CA bundle) on each agent's first compaction was a fifth of a small compaction."""
    with StubOpenAIServer(model="stub", responder=lambda request: "## Goal\nship it") as server:
        host = load_host({"model": {"default": "gpt-4o", "context_length": 128_000, "base_url": server.base_url,
                                    "api_key": "k"},
                          "ctx_plugins": {"compressor": "pipeline", "archive": {"enabled": False}}})
        for _ in range(3):
            agent = copy.deepcopy(host.compressor)
            result = agent.compress(conversation(), force=True)  # type: ignore[union-attr]
            assert result.compressed and result.summary == "## Goal\nship it"
        assert len(server.chat_requests) == 3  # each copy did ask the summary model
    assert len(tls_contexts) == 1


def conversation() -> list[dict[str, Any]]:
    log = json.dumps({"output": "\n".join(f"step {i} ok" for i in range(300)), "exit_code": 0, "error": None})
    messages: list[dict[str, Any]] = []
    for turn in range(12):
        call = {"id": f"call_{turn}", "type": "function",
                "function": {"name": "terminal", "arguments": json.dumps({"command": f"make step{turn}"})}}
        messages += [{"role": "user", "content": f"run step {turn}"},
                     {"role": "assistant", "content": "", "tool_calls": [call]},
                     {"role": "tool", "tool_call_id": f"call_{turn}", "content": log},
                     {"role": "assistant", "content": f"step {turn} done " * 40}]
    return [*messages, {"role": "user", "content": "what is left?"}]

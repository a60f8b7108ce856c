"""The model's odd arguments to ctx_search / ctx_expand are the model's errors: they never suspend
the archive, lock it, or cost the next compaction its archive (issue 13 #2)."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hermes_ctx_plugins import SessionInfo, load_host
from hermes_ctx_plugins.testing import make_transcript

pytest.importorskip("agent.context_engine", reason="the hermes extra is not installed")
from hermes_ctx_plugins.hermes.engine import HermesCtxEngine

HOSTILE_ARGS: list[dict[str, Any]] = [
    {"id": 2**63}, {"id": -2**63 - 1}, {"id": 10**4000}, {"id": "9" * 5000},
    {"id": "1-" + "9" * 30}, {"id": None}, {"id": [1, 2]}, {"id": {"a": 1}}, {"id": "\ud800"},
    {"id": 1, "max_tokens": 2**63}, {"id": 1, "max_tokens": -1}, {"id": float("nan")},
]


def engine_with_archive() -> tuple[Any, HermesCtxEngine]:
    config = {"model": {"default": "gpt-4o", "context_length": 128_000},
              "ctx_plugins": {"compressor": "window", "memory": {"providers": []}, "failure_threshold": 3}}
    host = load_host(config)
    host.session_start(SessionInfo(session_id="s-1", user_id="erin"))
    engine = HermesCtxEngine(host)
    engine.on_session_start("s-1")
    return host, engine


def archived(host: Any) -> int:
    path = host.archive.store.path
    conn = sqlite3.connect(path)
    try:
        return int(conn.execute("SELECT count(*) FROM messages").fetchone()[0])
    finally:
        conn.close()


def another_process_can_write(path: Path) -> None:
    code = ("import sqlite3,sys; c=sqlite3.connect(sys.argv[1], timeout=1); c.execute('BEGIN IMMEDIATE');"
            "c.execute('CREATE TABLE IF NOT EXISTS liveness (x)'); c.commit()")
    subprocess.run([sys.executable, "-c", code, str(path)], check=True, timeout=60)


def test_hostile_expand_and_search_arguments_never_suspend_the_archive() -> None:
    host, engine = engine_with_archive()
    history = make_transcript(1, turns=30, images=False)
    engine.compress(history, force=True)
    before = archived(host)
    assert before > 0
    for args in HOSTILE_ARGS * 2:  # more calls than failure_threshold
        answer = json.loads(engine.handle_tool_call("ctx_expand", args))
        assert "error" in answer or "max_tokens" in args, args  # a huge budget is simply capped
    for query in ("", "\ud800", "x" * 100_000, '" OR 1=1 --', "NEAR(a b)", "*"):
        json.loads(engine.handle_tool_call("ctx_search", {"query": query, "limit": 2**63}))
    assert host.isolator.status("archive") == "ok"
    another_process_can_write(host.archive.store.path)
    # the next compaction archives everything it removes
    longer = history + make_transcript(2, turns=30, images=False)[1:]
    result = engine.compress(longer, force=True)
    assert len(result) < len(longer)
    assert archived(host) > before


@settings(max_examples=40, deadline=None)
@given(args=st.dictionaries(st.sampled_from(["id", "max_tokens", "query", "limit"]),
                            st.one_of(st.integers(), st.text(), st.floats(), st.none(), st.booleans()),
                            max_size=3))
def test_any_arguments_answer_without_raising(args: dict[str, Any]) -> None:
    if not _ENGINE:  # built inside the test, so under the test's own HERMES_HOME
        _ENGINE.append(engine_with_archive())
    host, engine = _ENGINE[0]
    for tool in ("ctx_expand", "ctx_search"):
        json.loads(engine.handle_tool_call(tool, args))
    assert host.isolator.status("archive") == "ok"


_ENGINE: list[tuple[Any, HermesCtxEngine]] = []

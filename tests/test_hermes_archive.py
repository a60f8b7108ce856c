"""The archive inside real hermes-agent 0.19.0: compaction archives, the model searches and expands."""

from __future__ import annotations

import json
import sqlite3

import pytest
from hermes_helpers import configure_hermes, hermes_home, new_agent

from hermes_ctx_plugins import SessionInfo, load_host
from hermes_ctx_plugins.testing import StubOpenAIServer, make_transcript

pytest.importorskip("run_agent", reason="the hermes extra is not installed")

PLANTED = "The login redirect fix landed in commit 3f9a2c1e7b on src/auth/redirect.py (PR #4127)."


def test_compaction_in_hermes_is_archived_and_the_model_gets_it_back(stub: StubOpenAIServer) -> None:
    configure_hermes(stub, "ctx_plugins: {compressor: summarize}\n")
    history = make_transcript(40, turns=90, output_lines=80, system=False, images=False)
    planted_at = next(i for i, m in enumerate(history[10:], 10) if m["role"] == "assistant" and m.get("content"))
    history[planted_at] = {**history[planted_at], "content": f"{history[planted_at]['content']} {PLANTED}"}
    summary = "## Goal\nFinish the migration.\n## Files\nsrc/cache.py"  # a summary that lost the SHA
    stub.responder = lambda request: "continuing" if request.get("stream") else summary
    agent = new_agent(stub, toolsets=["context_engine"], user_id="dana")  # engine tools need that toolset
    first = agent.run_conversation("please continue", conversation_history=history)
    assert agent.context_compressor.compression_count == 1

    # on disk: the archive holds the planted message, scoped to hermes' session
    with sqlite3.connect(hermes_home() / "ctx_archive.db") as db:
        rows = db.execute("SELECT id, session_id FROM messages WHERE text LIKE '%3f9a2c1e7b%'").fetchall()
    db.close()
    [(planted_id, session_id)] = rows
    assert session_id == agent.session_id

    # on the wire: the summary carries the anchor index; the archive tools are offered
    sent = stub.chat_requests[-1].body
    assert sent is not None
    wire = json.dumps(sent["messages"])
    assert "3f9a2c1e7b" in wire and "src/auth/redirect.py" in wire and "#4127" in wire
    assert {"ctx_search", "ctx_expand"} <= {t["function"]["name"] for t in sent["tools"]}
    assert "3f9a2c1e7b" not in json.dumps([m for m in first["messages"] if "<archive-index>" not in
                                           str(m.get("content"))])  # only the index kept it in view

    # the model searches and expands through hermes' engine tools
    stub.responder = None
    stub.tool_call("ctx_search", {"query": "login redirect fix"})
    stub.tool_call("ctx_expand", {"id": planted_id, "max_tokens": 1000})
    # a query holding a lone surrogate, echoed back in the answer: hermes sent the model an empty tool message
    stub.tool_call("ctx_search", '{"query": "\\ud800 NEAR( \\"*"}')
    stub.reply("It landed in 3f9a2c1e7b.")
    second = agent.run_conversation("which commit fixed the login redirect?",
                                    conversation_history=first["messages"])
    assert second["final_response"] == "It landed in 3f9a2c1e7b."
    results = [json.loads(m["content"]) for m in second["messages"][len(first["messages"]):]
               if m.get("role") == "tool"]
    found, expanded, odd = results
    assert odd["query"] == '\ufffd NEAR( "*' and odd["results"] == []
    sent_back = [m.get("content") for m in stub.chat_requests[-1].body["messages"]  # type: ignore[index]
                 if m.get("role") == "tool"]
    assert any('"query": "\ufffd NEAR(' in str(content) for content in sent_back), sent_back[-1]
    assert planted_id in [hit["id"] for hit in found["results"]]
    assert any(PLANTED in str(m.get("content")) for m in expanded["messages"])
    assert PLANTED in json.dumps(stub.chat_requests[-1].body["messages"])  # type: ignore[index]


def test_the_engines_archive_tools_see_only_their_own_deployment() -> None:
    """The same user and session id in two deployments sharing one archive file: what hermes'
    engine offers the model (ctx_search / ctx_expand with the host's record of the session) finds
    each deployment's own archived text, never the other's."""
    from hermes_ctx_plugins.hermes.engine import HermesCtxEngine

    config = {"model": {"default": "gpt-4o", "context_length": 128_000},
              "ctx_plugins": {"compressor": "window", "memory": {"providers": []}, "archive": {"scope": "user"},
                              "deployments": {"blue": {}, "green": {}}}}
    engines = {}
    for seed, name in enumerate(("blue", "green")):
        host = load_host(config, deployment=name)
        host.session_start(SessionInfo(session_id="s-1", user_id="dana"))
        engine = HermesCtxEngine(host)
        engine.on_session_start("s-1")
        history = make_transcript(seed, turns=30, images=False)
        history[17] = {**history[17], "content": f"the codeword is {name}codeword"}
        assert len(engine.compress(history, force=True)) < len(history)
        engines[name] = engine
    for own, other in (("blue", "green"), ("green", "blue")):
        engine = engines[own]
        [hit, *_] = json.loads(engine.handle_tool_call("ctx_search", {"query": f"{own}codeword"}))["results"]
        expanded = json.loads(engine.handle_tool_call("ctx_expand", {"id": hit["id"]}))
        assert f"{own}codeword" in json.dumps(expanded)
        assert json.loads(engine.handle_tool_call("ctx_search", {"query": f"{other}codeword"}))["results"] == []

"""A conversation hermes moves to a new session id keeps its archive (real hermes).

With ``compression.in_place: false`` hermes ends the session at each compaction and goes on in a child
session: what the compaction archived is stored under the parent's id, and the index the model reads
points at it. A session-16 red-team pass found ``ctx_search`` / ``ctx_expand`` answering "nothing
archived" right after such a compaction.
"""

from __future__ import annotations

import json

from hermes_helpers import configure_hermes, new_agent

from hermes_ctx_plugins.testing import make_transcript

WORD = "INPLACEWORD-3f9a2c1e7b"


def _history() -> list[dict]:
    history = make_transcript(40, turns=90, output_lines=80, system=False, images=False)
    i = next(i for i, m in enumerate(history[10:], 10) if m["role"] == "assistant" and m.get("content"))
    history[i] = {**history[i], "content": f"{history[i]['content']} The fix is {WORD}."}
    return history


def test_what_a_compaction_archived_is_found_after_hermes_moves_the_conversation_to_a_new_session(stub) -> None:
    configure_hermes(stub, "compression: {in_place: false}\nctx_plugins: {compressor: summarize}\n")
    stub.responder = lambda body: "continuing" if body.get("stream") else "## Goal\nsummary without the word"
    from hermes_state import SessionDB

    agent = new_agent(stub, toolsets=["context_engine"], user_id="dana", session_id="first-id", session_db=SessionDB())
    agent.run_conversation("please continue", conversation_history=_history())
    engine = agent.context_compressor
    assert engine.compression_count == 1 and agent.session_id != "first-id"  # hermes moved the conversation

    found = json.loads(engine.handle_tool_call("ctx_search", {"query": WORD}))
    assert found["results"], found
    expanded = json.loads(engine.handle_tool_call("ctx_expand", {"id": str(found["results"][0]["id"])}))
    assert WORD in json.dumps(expanded), expanded

    other = new_agent(stub, toolsets=["context_engine"], user_id="erin", session_id="erin-1", session_db=SessionDB())
    assert json.loads(other.context_compressor.handle_tool_call("ctx_search", {"query": WORD}))["results"] == []

"""A conversation hermes moves to a new session id keeps its archive (real hermes).

With ``compression.in_place: false`` hermes ends the session at each compaction and goes on in a child
session: what the compaction archived is stored under the parent's id, and the index the model reads
points at it. A session-16 red-team pass found ``ctx_search`` / ``ctx_expand`` answering "nothing
archived" right after such a compaction.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import uuid
from pathlib import Path
from typing import Any

from hermes_helpers import configure_hermes, new_agent

from hermes_ctx_plugins.environment import hermes_home
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

    first = f"first-{uuid.uuid4().hex[:8]}"  # hermes' default database is the first test's home: ids apart
    agent = new_agent(stub, toolsets=["context_engine"], user_id="dana", session_id=first,
                      session_db=SessionDB(hermes_home() / "state.db"))
    agent.run_conversation("please continue", conversation_history=_history())
    engine = agent.context_compressor
    assert engine.compression_count == 1 and agent.session_id != first  # hermes moved the conversation

    found = json.loads(engine.handle_tool_call("ctx_search", {"query": WORD}))
    assert found["results"], found
    expanded = json.loads(engine.handle_tool_call("ctx_expand", {"id": str(found["results"][0]["id"])}))
    assert WORD in json.dumps(expanded), expanded

    other = new_agent(stub, toolsets=["context_engine"], user_id="erin", session_id=f"erin-{uuid.uuid4().hex[:8]}",
                      session_db=SessionDB(hermes_home() / "state.db"))
    assert json.loads(other.context_compressor.handle_tool_call("ctx_search", {"query": WORD}))["results"] == []


RESUME = textwrap.dedent("""
    import json, sys
    sys.path.insert(0, sys.argv[1])
    from hermes_cli import plugins
    plugins.discover_plugins(force=True)
    from pathlib import Path
    from hermes_state import SessionDB
    import run_agent
    db = SessionDB(Path(sys.argv[7]))
    session = db.resolve_resume_session_id(sys.argv[2]) or sys.argv[2]
    agent = run_agent.AIAgent(base_url=sys.argv[3], api_key="k", provider="custom", model=sys.argv[4], quiet_mode=True,
                              skip_context_files=True, enabled_toolsets=["context_engine"], session_id=session,
                              user_id=sys.argv[5], session_db=db)
    history = [m for m in db.get_messages_as_conversation(session) if m.get("role") != "session_meta"]
    result = agent.run_conversation("find the fix", conversation_history=history)
    tools = [m["content"] for m in result["messages"][len(history):] if m.get("role") == "tool"]
    print(json.dumps([session, tools[0]]))
""")


def test_a_moved_conversation_resumed_in_a_new_process_still_reads_its_archive(stub) -> None:
    """hermes' own resume (the compression chain's tip) in a new process: the earlier ids come from hermes'
    session database. (Who else may read a session's archive is the storage contract's and the Bridge tests'
    business: without a Bridge, hermes compacts before its first hook names the user, and a session id is one
    conversation, whose transcript hermes hands to whoever resumes it anyway.)"""
    from hermes_helpers import MODEL

    configure_hermes(stub, "compression: {in_place: false}\nctx_plugins: {compressor: summarize}\n")
    stub.responder = lambda body: "continuing" if body.get("stream") else "## Goal\nsummary without the word"
    from hermes_state import SessionDB

    resumed = f"resumed-{uuid.uuid4().hex[:8]}"
    state = hermes_home() / "state.db"  # hermes' default path is fixed at its import: another test's home
    agent = new_agent(stub, toolsets=["context_engine"], user_id="dana", session_id=resumed,
                      session_db=SessionDB(state))
    agent.run_conversation("please continue", conversation_history=_history())
    assert agent.session_id != resumed

    def resume(user: str) -> tuple[str, dict[str, Any]]:
        stub.responder = None
        stub.tool_call("ctx_search", {"query": WORD})  # the resumed model looks the fix up, in a turn of its user's
        stub.reply("done")
        tests = str(Path(__file__).parent)
        done = subprocess.run([sys.executable, "-c", RESUME, tests, resumed, stub.base_url, MODEL, user, WORD,
                               str(state)],
                              capture_output=True, text=True, timeout=120, check=True)
        session, answer = json.loads(done.stdout.strip().splitlines()[-1])
        return session, json.loads(answer)

    session, found = resume("dana")
    assert session == agent.session_id  # hermes resumed the chain's tip, in another process
    assert [WORD in r["snippet"] for r in found["results"]] == [True], found


def test_a_chain_through_another_users_session_stops_there(tmp_path: Path) -> None:
    """hermes' database: bob's session whose parent is alice's, which ended in a compaction (a crafted or odd row).
    Alice's session is no earlier id of bob's conversation: what was archived under it before her user was known
    (user '') would otherwise be bob's to read. Her own child is hers."""
    from hermes_state import SessionDB

    from hermes_ctx_plugins.hermes.runtime import compaction_ancestors

    db = SessionDB(tmp_path / "state.db")
    db.create_session("alice-1", "telegram", user_id="alice")
    db.end_session("alice-1", "compression")
    db.create_session("bob-2", "telegram", user_id="bob", parent_session_id="alice-1")
    db.create_session("alice-2", "telegram", user_id="alice", parent_session_id="alice-1")
    assert compaction_ancestors(db, "bob-2") == ()
    assert compaction_ancestors(db, "alice-2") == ("alice-1",)

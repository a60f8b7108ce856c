"""Lossless context: what any strategy removes is archived, indexed, searchable and expandable."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest

from hermes_ctx_plugins import CompressionResult, CompressorStrategy, SessionInfo, hookimpl, load_host
from hermes_ctx_plugins.archive.archiver import INDEX_OPEN
from hermes_ctx_plugins.archive.changes import fingerprint
from hermes_ctx_plugins.cli import main
from hermes_ctx_plugins.manager import Host
from hermes_ctx_plugins.scope import from_stored
from hermes_ctx_plugins.storage import Scope
from hermes_ctx_plugins.storage.sqlite.archive import ArchiveStore
from hermes_ctx_plugins.testing import make_transcript
from hermes_ctx_plugins.tokens import get_counter

ALICE = SessionInfo(session_id="s-alice", user_id="alice")
ALICE_LATER = SessionInfo(session_id="s-alice-2", user_id="alice")
BOB = SessionInfo(session_id="s-bob", user_id="bob")
SECRET = "sk-proj-Zm9vYmFyYmF6cXV4MTIzNDU2Nzg5MGFiY2RlZmdoaWprbG1ub3A"
PLANTED = ("The login redirect fix landed in commit 3f9a2c1e7b on src/auth/redirect.py; staging answers on "
           f"staging.acme.internal:8443 and the key was {SECRET}.")


class Dropper(CompressorStrategy):
    """A third-party strategy that drops the middle and edits a kept message in place (no ``removed``)."""

    name = "dropper"

    def compress(self, messages: list[dict[str, Any]], **kwargs: Any) -> CompressionResult:
        keep = [*messages[:2], *messages[-4:]]
        keep[1]["content"] = "(edited in place by a careless strategy)"
        return CompressionResult(messages=keep)


class DropperPlugin:
    @hookimpl
    def register_compressors(self, register: Any) -> None:
        register(Dropper)


def home() -> Path:
    return Path(os.environ["HERMES_HOME"])


def transcript(seed: int = 3, turns: int = 40) -> list[dict[str, Any]]:
    messages = make_transcript(seed, turns=turns, images=False)
    messages[17] = {**messages[17], "content": f"{messages[17].get('content') or ''} {PLANTED}"}
    return messages


def host_for(strategy: str, **archive: Any) -> Host:
    config = {"model": {"default": "gpt-4o", "context_length": 128_000},
              "ctx_plugins": {"compressor": strategy, "archive": archive}}
    return load_host(config, plugins=[DropperPlugin()])


def tool(host: Host, name: str, session: SessionInfo, **args: Any) -> dict[str, Any]:
    assert host.archive is not None
    answer = json.loads(host.archive.handle_tool_call(name, args, session=session, counter=get_counter("gpt-4o")))
    assert isinstance(answer, dict)
    return answer


def archived_rows(path: Path) -> list[tuple[Any, ...]]:
    """``(session, user, position, role, message JSON)`` of every archived message, read back from
    the stored form (``scope.to_stored``) the archive writes text in."""
    with sqlite3.connect(path) as db:
        rows = db.execute("SELECT session_id, user_id, position, role, message FROM messages ORDER BY id").fetchall()
    db.close()
    return [(from_stored(s), from_stored(u), position, from_stored(r), from_stored(m)) for s, u, position, r, m in rows]


# ------------------------------------------------------------------ every strategy, nothing lost


@pytest.mark.parametrize("strategy", ["summarize", "prune", "window", "pipeline", "dropper"])
def test_every_original_that_did_not_survive_verbatim_is_archived(strategy: str) -> None:
    host = host_for(strategy)
    messages = transcript()
    before = [json.loads(json.dumps(m)) for m in messages]  # what the caller had, untouched copy
    result = host.compress(messages, session=ALICE, force=True)
    assert result.compressed
    survived = {fingerprint(m) for m in result.messages}
    gone = [(i, m) for i, m in enumerate(before) if fingerprint(m) not in survived]
    assert gone, "the strategy removed or rewrote something"
    rows = archived_rows(home() / "ctx_archive.db")
    assert [row[2] for row in rows] == [i for i, _ in gone]  # order kept, by original position
    for (_, original), (session_id, user_id, _, role, stored) in zip(gone, rows, strict=True):
        assert (session_id, user_id, role) == ("s-alice", "alice", original["role"])
        if SECRET in json.dumps(original):  # verbatim but for the secret
            assert SECRET not in stored and "3f9a2c1e7b on src/auth/redirect.py" in stored
        else:
            assert json.loads(stored) == original
    assert f"archived {len(gone)} messages" in result.notes


def test_a_strategy_that_edits_in_place_loses_nothing_either() -> None:
    host = host_for("dropper")
    messages = transcript()
    original_second = dict(messages[1])
    host.compress(messages, session=ALICE, force=True)
    stored = [json.loads(row[4]) for row in archived_rows(home() / "ctx_archive.db")]
    assert original_second in stored  # archived as it was before the strategy edited it


def test_secrets_are_redacted_before_they_reach_the_disk() -> None:
    host = host_for("window")
    host.compress(transcript(), session=ALICE, force=True)
    host.shutdown()
    raw = b"".join(p.read_bytes() for p in home().glob("ctx_archive.db*"))
    assert SECRET.encode() not in raw
    assert b"3f9a2c1e7b" in raw  # what is not secret is kept verbatim


def test_tool_pairs_and_compaction_ids_are_kept() -> None:
    host = host_for("window")
    host.compress(transcript(), session=ALICE, force=True)
    with sqlite3.connect(home() / "ctx_archive.db") as db:
        calls = db.execute("SELECT call_ids FROM messages WHERE call_ids != ''").fetchall()
        results = db.execute("SELECT tool_call_id FROM messages WHERE role = 'tool'").fetchall()
        compactions = db.execute("SELECT DISTINCT compaction_id FROM messages").fetchall()
    db.close()
    call_ids = {i for (ids,) in calls for i in ids.split()}
    assert results and {r for (r,) in results} <= call_ids  # every archived result has its call archived
    assert compactions == [(1,)]


# ------------------------------------------------------------------ the anchor index


@pytest.mark.parametrize("strategy", ["summarize", "window", "dropper"])
def test_the_compacted_context_carries_the_anchor_index(strategy: str) -> None:
    host = host_for(strategy)
    result = host.compress(transcript(), session=ALICE, force=True)
    carriers = [m for m in result.messages if INDEX_OPEN in json.dumps(m)]
    assert len(carriers) == 1
    text = json.dumps(carriers[0])
    for anchor in ("3f9a2c1e7b", "src/auth/redirect.py", "staging.acme.internal:8443"):
        assert anchor in text, anchor  # dropped from view, kept verbatim in the index
    assert "ctx_search" in text and "ctx_expand" in text
    assert SECRET not in json.dumps(result.messages)


def test_a_pipeline_that_stopped_after_pruning_points_to_each_original() -> None:
    host = host_for("pipeline")
    result = host.compress(transcript(), session=ALICE)  # automatic: a forced pipeline runs every step
    assert "3f9a2c1e7b" in json.dumps(result.messages)  # the planted answer was never removed
    assert sum("[original archived: ctx_expand(id=" in json.dumps(m) for m in result.messages) > 10


def test_prune_points_each_rewritten_result_to_its_original() -> None:
    host = host_for("prune")
    result = host.compress(transcript(), session=ALICE, force=True)
    pointed = [m for m in result.messages if m.get("role") == "tool" and "ctx_expand(id=" in str(m["content"])]
    assert pointed
    archive_id = int(str(pointed[0]["content"]).split("ctx_expand(id=")[1].split(")")[0])
    expanded = tool(host, "ctx_expand", ALICE, id=archive_id)
    roles = [m["role"] for m in expanded["messages"]]
    assert "tool" in roles and "assistant" in roles  # the result comes with its call


def test_results_of_a_reused_call_id_each_point_to_their_own_original_and_no_marker_splits_a_call() -> None:
    """Two transcripts joined reuse call ids (some providers number calls per response): the second result of an
    id was taken for a dropped message, and the index marker went in between a call and its result."""
    messages = make_transcript(1, turns=6, output_lines=40, images=False) + \
        make_transcript(100, turns=10, output_lines=60, images=False)
    messages.append({"role": "user", "content": "now"})
    ids = [c["id"] for m in messages for c in m.get("tool_calls") or []]
    assert len(set(ids)) < len(ids)  # the case: ids reused
    result = host_for("prune").compress(messages, session=ALICE, force=True)
    open_calls: set[str] = set()
    for message in result.messages:  # every result right after its call, nothing in between
        if message.get("role") == "tool":
            assert message["tool_call_id"] in open_calls, message
            open_calls.discard(message["tool_call_id"])
        else:
            assert not open_calls, f"a {message.get('role')} message between a call and its result"
            open_calls = {c["id"] for c in message.get("tool_calls") or []}
    pointers = [str(m["content"]).split("ctx_expand(id=")[1].split(")")[0] for m in result.messages
                if m.get("role") == "tool" and "ctx_expand(id=" in str(m["content"])]
    assert len(pointers) == len(set(pointers)) > 1  # each rewritten result to its own original


def test_the_archive_ids_a_conversation_cites_are_those_of_its_indexes_and_pointers() -> None:
    """What tells a later compaction of a conversation that repeats itself from the same compaction made again
    after a crash (see the storage contract's dedupe tests): the later one's conversation cites the earlier ids."""
    from hermes_ctx_plugins.archive.archiver import _cited

    cited = _cited([{"role": "user", "content": "<archive-index>\n12 earlier messages were archived verbatim "
                                                "(archive ids 3-14). … ctx_expand(id) to read them."},
                    {"role": "tool", "tool_call_id": "c1", "content": "[terminal] ran `ls` -> exit 0\n"
                                                                       "[original archived: ctx_expand(id=40)]"},
                    {"role": "user", "content": "archive ids 90-99 without the tool's name is just text"}])
    assert [n for n in (2, 3, 14, 15, 40, 41, 95) if cited(n)] == [3, 14, 40]


def test_the_index_stays_within_its_budget_and_the_strategy_left_room() -> None:
    host = host_for("window", index_max_tokens=200)
    result = host.compress(transcript(turns=60), session=ALICE, force=True)
    [carrier] = [m for m in result.messages if INDEX_OPEN in json.dumps(m)]
    block = str(carrier["content"])[str(carrier["content"]).index(INDEX_OPEN):]
    assert get_counter("gpt-4o").count_text(block) <= 200
    assert result.tokens_after == get_counter("gpt-4o").count_messages(result.messages)


@pytest.mark.parametrize("strategy", ["summarize", "window", "pipeline"])
def test_the_index_never_makes_a_compaction_grow_the_prompt(strategy: str) -> None:
    """A forced compaction of a short conversation drops a few short messages; the index it then carried cost more
    than they did, and the compaction was reported all the same (a red-team pass: 22 of 120). The index gives way
    to the pointer alone, then to none: what was dropped is archived and found all the same."""
    from hermes_ctx_plugins.testing import StubOpenAIServer

    counter = get_counter("gpt-4o")
    texts = ["ok", "yes please", "deploy to 10.0.0.5:8443 from commit 3f9a2c1e7b", "see src/app/main.py line 42",
             "x" * 400, "word " * 80]
    with StubOpenAIServer(model="gpt-4o", responder=lambda request: "## Goal\nKeep going.") as stub:
        host = load_host({"model": {"default": "gpt-4o", "context_length": 128_000, "base_url": stub.base_url,
                                    "api_key": "k"},
                          "ctx_plugins": {"compressor": strategy, "archive": {"enabled": True}}})
        without_index = 0
        for size in (3, 5, 7, 9, 13):
            for first in range(len(texts)):
                messages = [{"role": "user" if i % 2 == 0 else "assistant",
                             "content": f"{texts[(first + i) % len(texts)]} #{i}"} for i in range(size)]
                result = host.compress(list(messages), session=ALICE, force=True)
                if result.compressed:
                    assert counter.count_messages(result.messages) < counter.count_messages(messages), (size, first)
                    without_index += any("no index" in note for note in result.notes)
        assert without_index  # the case arose: a compaction kept without its index
        assert tool(host, "ctx_search", ALICE, query="3f9a2c1e7b")["results"]  # what was dropped is found


def test_a_second_compaction_keeps_the_first_ones_anchors() -> None:
    host = host_for("window")
    first = host.compress(transcript(turns=60), session=ALICE, force=True)
    grown = first.messages + make_transcript(9, turns=30, system=False, images=False)
    second = host.compress(grown, session=ALICE, force=True)
    assert second.compressed
    text = json.dumps([m for m in second.messages if INDEX_OPEN in json.dumps(m)])
    assert "3f9a2c1e7b" in text  # dropped in the first compaction, still indexed after the second


# ------------------------------------------------------------------ the tools


def test_search_then_expand_recovers_the_exact_text() -> None:
    host = host_for("summarize")
    host.compress(transcript(), session=ALICE, force=True)
    found = tool(host, "ctx_search", ALICE, query="login redirect fix commit")
    assert found["results"]
    texts = []
    for hit in found["results"][:5]:
        texts += [json.dumps(m) for m in tool(host, "ctx_expand", ALICE, id=hit["id"])["messages"]]
    assert any("3f9a2c1e7b" in t and "src/auth/redirect.py" in t for t in texts)


@pytest.mark.parametrize("query", ["3f9a2c1", "redirect.py", "acme.internal:8443", "REDIRECT"])
def test_identifier_fragments_are_found(query: str) -> None:
    host = host_for("window")
    host.compress(transcript(), session=ALICE, force=True)
    [top, *_] = tool(host, "ctx_search", ALICE, query=query)["results"]
    assert "3f9a2c1e7b" in json.dumps(tool(host, "ctx_expand", ALICE, id=top["id"]))


def test_chinese_is_searchable() -> None:
    host = host_for("window")
    messages = transcript()
    messages[7] = {**messages[7], "content": "部署端口改成了八四四三，回滚脚本在 scripts/rollback.sh"}  # noqa: RUF001
    host.compress(messages, session=ALICE, force=True)
    for query in ("部署端口", "回滚脚本在哪里", "端口"):
        results = tool(host, "ctx_search", ALICE, query=query)["results"]
        assert results and "rollback" in json.dumps(tool(host, "ctx_expand", ALICE, id=results[0]["id"])), query


@pytest.mark.parametrize("max_tokens", [200, 500, 2000])
def test_expand_never_exceeds_its_budget_and_says_what_it_left_out(max_tokens: int) -> None:
    host = host_for("window")
    host.compress(transcript(turns=60), session=ALICE, force=True)
    answer_text = host.archive.handle_tool_call(  # type: ignore[union-attr]
        "ctx_expand", {"id": "1-150", "max_tokens": max_tokens}, session=ALICE, counter=get_counter("gpt-4o"))
    assert get_counter("gpt-4o").count_text(answer_text) <= max_tokens
    answer = json.loads(answer_text)
    assert answer["messages"] and answer["left_out"] and "did not fit" in answer["note"]
    ids = [m["id"] for m in answer["messages"]]
    assert ids == sorted(ids)
    # no tool result without its call in what came back
    calls = {c["id"] for m in answer["messages"] for c in m.get("tool_calls") or ()}
    assert all(m["tool_call_id"] in calls for m in answer["messages"] if m.get("tool_call_id"))


@pytest.mark.parametrize(("args", "words"), [
    ({"id": 0}, "positive"), ({"id": -3}, "positive"), ({"id": "abc"}, "an id (e.g. 42)"),
    ({"id": "9-2"}, "backwards"), ({"id": "1-5000"}, "at most 200"), ({"id": True}, "an id"),
    ({"id": 99999}, "no archived message"), ({"id": 1, "max_tokens": 5}, "at least 200"),
    ({}, "an id"), ({"id": 2**63}, f"at most {2**63 - 1}, got {2**63}"), ({"id": str(2**63)}, "at most"),
    ({"id": f"{2**63 - 1}-{2**63}"}, "must lie within"), ({"id": "²"}, "an id (e.g. 42)"),
    ({"id": "9" * 10_000}, "at most"), ({"id": "1-" + "9" * 10_000}, "at most 200"),
    ({"id": 1, "offset": -1}, "0 or more, got -1"), ({"id": 1, "offset": "9"}, "offset must be a whole number"),
    ({"id": "1-3", "offset": 5}, "give one id, not the range '1-3'"),
])
def test_expand_errors_name_the_bad_value(args: dict[str, Any], words: str) -> None:
    host = host_for("window")
    host.compress(transcript(), session=ALICE, force=True)
    assert words in tool(host, "ctx_expand", ALICE, **args)["error"]


def test_every_part_of_a_long_archived_log_can_be_read_with_ctx_expand() -> None:
    """A 110 KB test log whose failure is three lines from its end: ctx_expand showed only its first 11 kB
    (and max_tokens is capped), so the failure could never be read. Now a cut message shows its start and
    end, and the cut note names the offset that reads on; every line is reachable by following it."""
    lines = [f"tests/test_mod_{n:04d}.py::test_case PASSED [{n / 20:.0f}%] build-step-{n:04d}" for n in range(1_800)]
    lines[900] = "MIDDLE-MARKER RF-55001 flaky network call retried"
    lines[-3] = "FAILED tests/test_pay.py::test_refund - AssertionError: RF-77123 expected 21.40"
    log = "\n".join(lines)
    host = host_for("window")
    chat = transcript(seed=5, turns=30)
    history = [*chat[:6], {"role": "user", "content": "run the suite"},
               {"role": "assistant", "content": None, "tool_calls": [
                   {"id": "c-log", "type": "function", "function": {"name": "terminal", "arguments": "{}"}}]},
               {"role": "tool", "tool_call_id": "c-log", "content": log},
               {"role": "assistant", "content": "The suite ran."}, *chat[6:]]
    host.compress(history, session=ALICE, force=True)
    [hit] = tool(host, "ctx_search", ALICE, query="RF-77123")["results"]
    first = tool(host, "ctx_expand", ALICE, id=hit["id"])
    [shown] = [m for m in first["messages"] if m["id"] == hit["id"]]
    assert "RF-77123 expected 21.40" in shown["content"]  # the end is shown
    assert shown["content"].startswith("tests/test_mod_0000.py")  # and the start
    seen, answer, pages = shown["content"], shown["content"], 0
    while "reads on from there" in answer and pages < 50:  # follow the notes, as the model would
        offset = int(answer.split("offset=")[1].split(")")[0])
        page = tool(host, "ctx_expand", ALICE, id=hit["id"], offset=offset)
        [answer] = [m["content"] for m in page["messages"] if m["id"] == hit["id"]]
        assert answer.startswith(f"[... from character {offset:,} of {len(log):,} ...]")
        seen += answer
        pages += 1
    assert "MIDDLE-MARKER RF-55001" in seen and all(line in seen for line in lines[::97])


@pytest.mark.parametrize(("args", "words"), [
    ({"query": ""}, "non-empty"), ({"query": 5}, "non-empty"), ({"query": "x", "limit": 0}, "1 to 20"),
    ({"query": "x", "limit": "3"}, "1 to 20"),
])
def test_search_errors_name_the_bad_value(args: dict[str, Any], words: str) -> None:
    host = host_for("window")
    assert words in tool(host, "ctx_search", ALICE, **args)["error"]


# ------------------------------------------------------------------ scope


@pytest.mark.parametrize("query", [
    "3f9a2c1e7b", '" OR 1=1 --', "user_id:alice", "session_id : s-alice", "NEAR(commit redirect)",
    "*", "commit*", "' OR ''='", "text:commit", "{user_id session_id}: alice", "\\", "%", "_",
])
def test_another_user_cannot_reach_the_archive(query: str) -> None:
    host = host_for("window")
    host.compress(transcript(), session=ALICE, force=True)
    assert tool(host, "ctx_search", ALICE, query="3f9a2c1e7b")["results"]
    assert tool(host, "ctx_search", BOB, query=query)["results"] == []
    assert "no archived message" in tool(host, "ctx_expand", BOB, id=1)["error"]
    assert "no archived message" in tool(host, "ctx_expand", BOB, id="1-50")["error"]


def test_scope_user_spans_the_users_sessions_only() -> None:
    host = host_for("window", scope="user")
    host.compress(transcript(), session=ALICE, force=True)
    host.compress(transcript(seed=5), session=BOB, force=True)
    alice_later = tool(host, "ctx_search", ALICE_LATER, query="3f9a2c1e7b")["results"]
    assert alice_later and all(r["id"] <= 300 for r in alice_later)
    session_only = host_for("window")
    assert tool(session_only, "ctx_search", ALICE_LATER, query="3f9a2c1e7b")["results"] == []
    bob = tool(host, "ctx_search", BOB, query="3f9a2c1e7b")["results"]
    store = ArchiveStore(home() / "ctx_archive.db")
    owners = {s.user_id for s in store.get([r["id"] for r in bob], Scope(session_id="", everything=True))}
    store.close()
    assert owners <= {"bob"}


# ------------------------------------------------------------------ durability


def test_the_archive_survives_a_restart() -> None:
    script = textwrap.dedent(f"""
        import json, sys
        sys.path.insert(0, {str(Path(__file__).parent)!r})
        from test_archive import ALICE, host_for, transcript
        host = host_for("summarize")
        result = host.compress(transcript(), session=ALICE, force=True)
        print(json.dumps(result.compressed))
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120,
                          env={**os.environ})
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "true"
    host = host_for("summarize")  # this process never compressed anything
    [hit, *_] = tool(host, "ctx_search", ALICE, query="3f9a2c1e7b")["results"]
    assert "src/auth/redirect.py" in json.dumps(tool(host, "ctx_expand", ALICE, id=hit["id"]))
    assert tool(host, "ctx_search", BOB, query="3f9a2c1e7b")["results"] == []


def test_a_corrupt_archive_never_breaks_compaction_and_nothing_is_lost(caplog: pytest.LogCaptureFixture) -> None:
    path = home() / "ctx_archive.db"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"this is not a database" * 100)
    host = host_for("window")
    result = host.compress(transcript(), session=ALICE, force=True)
    assert result.compressed  # the turn goes on
    assert "not usable" in caplog.text and str(path) in caplog.text
    spool = path.with_name(path.name + ".spool.jsonl")
    assert spool.exists() and "3f9a2c1e7b" in spool.read_text()
    host.shutdown()
    path.rename(path.with_suffix(".broken"))  # the user moves the bad file away, as the error says
    again = host_for("window")
    again.compress(transcript(seed=4), session=ALICE, force=True)  # the next write imports the spool
    assert not spool.exists()
    assert tool(again, "ctx_search", ALICE, query="3f9a2c1e7b")["results"]


def spooled_while_locked() -> Host:
    """A host whose compaction of alice's conversation (holding 3f9a2c1e7b) went to the spool: the archive file,
    made by a compaction of bob's before, was locked by another connection."""
    host = host_for("window")
    host.compress(transcript(seed=8), session=BOB, force=True)  # creates the file
    holder = sqlite3.connect(home() / "ctx_archive.db", timeout=0.1)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        assert host.archive is not None
        host.archive.store._timeout = 0.2
        host.archive.store.close()
        assert host.compress(transcript(), session=ALICE, force=True).compressed
    finally:
        holder.rollback()
        holder.close()
    assert host.archive.store.stats()["spooled"] == 1
    return host


def test_a_locked_archive_spools_and_imports_later() -> None:
    host = spooled_while_locked()
    host.compress(transcript(seed=4), session=ALICE, force=True)
    assert tool(host, "ctx_search", ALICE, query="3f9a2c1e7b")["results"]


def test_a_spooled_compaction_is_searchable_without_waiting_for_the_next_compaction() -> None:
    """A fleet pass: a compaction spooled in an outage stayed on that worker's disk, unsearchable from any worker,
    until that very worker compacted again (a restart did not import it, nor did a search)."""
    host = spooled_while_locked()
    assert tool(host, "ctx_search", ALICE, query="3f9a2c1e7b")["results"]  # the search imported it first
    assert host.archive is not None and host.archive.store.stats()["spooled"] == 0


def test_a_process_starting_imports_what_an_outage_spooled_there() -> None:
    """The restart half of the above: hermes' runtime, building its host, imports the spool (on a thread of its own:
    a server still down must not hold hermes' start)."""
    from hermes_ctx_plugins.hermes.runtime import Runtime

    spooled_while_locked().shutdown()
    restarted = Runtime(build=lambda: host_for("window"))
    archive = restarted.host.archive
    assert archive is not None
    deadline = time.monotonic() + 10
    while archive.store.stats()["spooled"] and time.monotonic() < deadline:  # the import runs on its own thread
        time.sleep(0.05)
    assert archive.store.stats()["spooled"] == 0
    hits = archive.store.search("3f9a2c1e7b", Scope(session_id=ALICE.session_id, user_id=ALICE.user_id))
    assert hits


def test_retention_and_size_bound(tmp_path: Path) -> None:
    store = ArchiveStore(tmp_path / "a.db", retention_days=0, max_megabytes=1.5)
    big = [(i, {"role": "tool", "tool_call_id": f"c{i}", "content": f"output {i} " + "x" * 4000})
           for i in range(20)]
    for n in range(12):
        store.record(session_id=f"s{n}", user_id="u", strategy="window", removed=big)
    stats = store.stats()
    assert stats["bytes"] <= 1.5 * 1_000_000 and 0 < stats["compactions"] < 12
    kept = {h.session_id for h in store.search("output", Scope(session_id="", everything=True), limit=20)}
    assert "s11" in kept and "s0" not in kept  # the oldest went first
    assert store.purge(older_than_days=0) == stats["compactions"]
    store.close()


@pytest.mark.parametrize("how", ["deleted", "replaced"])
def test_an_archive_deleted_or_replaced_while_open_keeps_what_is_archived_after(tmp_path: Path, how: str) -> None:
    """The open connection kept writing into a deleted file: every compaction after the deletion was searchable
    in the process and gone when it ended (nothing said; a red-team pass)."""
    path = tmp_path / "a.db"
    store = ArchiveStore(path)
    first = [(0, {"role": "user", "content": "before the deletion 7c1d"})]
    store.record(session_id="s", user_id="u", strategy="window", removed=first)
    for leftover in tmp_path.glob("a.db*"):
        leftover.unlink()
    if how == "replaced":
        ArchiveStore(path).close()  # another file at the path (a restore from a backup)
    later = [(1, {"role": "user", "content": "after the deletion 9e4b"})]
    store.record(session_id="s", user_id="u", strategy="window", removed=later)
    store.close()
    reopened = ArchiveStore(path)
    everyone = Scope(session_id="", everything=True)
    assert [h.session_id for h in reopened.search("9e4b", everyone)] == ["s"]
    assert reopened.search("7c1d", everyone) == []  # went with the file
    reopened.close()


def test_archive_off_means_no_file_and_no_tools() -> None:
    host = host_for("window", enabled=False)
    result = host.compress(transcript(), session=ALICE, force=True)
    assert result.compressed and INDEX_OPEN not in json.dumps(result.messages)
    assert not (home() / "ctx_archive.db").exists()


# ------------------------------------------------------------------ the command line


def test_cli_search_by_the_anonymous_user_finds_what_purging_them_removes(
        capsys: pytest.CaptureFixture[str]) -> None:
    """``--user ''`` searched session "" instead of every session of the anonymous user: nothing was found, yet
    ``purge --user ''`` removed their rows (a red-team pass)."""
    anonymous = SessionInfo(session_id="s-anon", user_id="")
    host_for("window").compress(transcript(), session=anonymous, force=True)
    host_for("window").compress(transcript(seed=6), session=BOB, force=True)
    capsys.readouterr()
    assert main(["archive", "search", "3f9a2c1e7b", "--user", "", "--json"]) == 0
    found = json.loads(capsys.readouterr().out)
    assert found and {h["session_id"] for h in found} == {"s-anon"}
    assert main(["archive", "purge", "--user", "", "--yes"]) == 0
    capsys.readouterr()
    assert main(["archive", "search", "3f9a2c1e7b", "--user", "", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == []
    assert main(["archive", "search", "3f9a2c1e7b", "--user", "bob", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)


def test_an_archived_id_written_in_look_alike_digits_names_no_message(capsys: pytest.CaptureFixture[str]) -> None:
    """``archive show`` of a fullwidth 3 showed #3 and ``ctx_expand`` read a range in Arabic-Indic digits, where
    every other id the command line takes is ASCII digits only (a red-team pass)."""
    host_for("window").compress(transcript(), session=ALICE, force=True)
    capsys.readouterr()
    for bad in ("\uff13", "\u0663", "\uff11-\uff13", "#\u0663"):
        assert main(["archive", "show", "--", bad]) == 4
        assert "id must be an id" in capsys.readouterr().err
        assert "error" in tool(host_for("window"), "ctx_expand", ALICE, id=bad)
    assert main(["archive", "show", "3"]) == 0 and "#3" in capsys.readouterr().out


def test_cli_search_show_stats_purge(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    host_for("window").compress(transcript(), session=ALICE, force=True)
    host_for("window").compress(transcript(seed=6), session=BOB, force=True)
    capsys.readouterr()
    assert main(["archive", "search", "3f9a2c1e7b", "--json"]) == 0
    hits = json.loads(capsys.readouterr().out)
    assert hits and {h["session_id"] for h in hits} <= {"s-alice", "s-bob"}
    assert main(["archive", "search", "3f9a2c1e7b", "--user", "bob", "--json"]) == 0
    assert all(h["session_id"] == "s-bob" for h in json.loads(capsys.readouterr().out))
    assert main(["archive", "show", str(hits[0]["id"])]) == 0
    assert "3f9a2c1e7b" in capsys.readouterr().out
    assert main(["archive", "show", "nope"]) == 4
    assert "an id" in capsys.readouterr().err
    assert main(["archive", "show", str(hits[0]["id"]), "--max-tokens", "120"]) == 4  # was taken as 200 in silence
    assert "--max-tokens must be at least 200, got 120" in capsys.readouterr().err
    assert main(["archive", "stats"]) == 0
    assert "2 users" in capsys.readouterr().out
    assert main(["archive", "purge"]) == 4
    assert main(["archive", "purge", "--user", "alice"]) == 4  # no terminal to ask on: refused, no EOFError
    assert "--yes" in capsys.readouterr().err
    assert main(["archive", "purge", "--user", "alice", "--yes"]) == 0
    assert "forgot user 'alice': removed " in capsys.readouterr().out
    assert main(["archive", "search", "3f9a2c1e7b", "--user", "alice", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == []


"""`hermes-ctx storage migrate`: a SQLite install (memories of many owners with hostile ids, quarantined
records, queue progress, an archive of several compactions) moved to a real PostgreSQL server, verified
item by item; recalled there as it was; a second run copies nothing; a bad backend name, a running
hermes and a server that is down are refused with the source left as it was."""

from __future__ import annotations

import base64
import dataclasses
import hashlib
import json
import os
import random
import re
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest

from hermes_ctx_plugins import SessionInfo, Turn, storage
from hermes_ctx_plugins.cli import EXIT_INPUT, EXIT_PLUGIN, EXIT_PROBLEM, main
from hermes_ctx_plugins.config import Config, load_config
from hermes_ctx_plugins.memory.local import LocalProvider
from hermes_ctx_plugins.storage import Record, Scope
from hermes_ctx_plugins.testing.storage_contract import HOSTILE_IDS

ALICE = SessionInfo(session_id="s-alice", user_id="alice", chat_id="dm")
BOB = SessionInfo(session_id="s-bob", user_id="bob", chat_id="dm")


def home() -> Path:
    return Path(os.environ["HERMES_HOME"])


@pytest.fixture
def settings(request: pytest.FixtureRequest, postgres_dsn: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[
        dict[str, Any]]:
    """The install's ``ctx_plugins.storage`` (SQLite), written to its config.yaml: the server in the
    environment, a schema of this test's own (every test's stores have the same locations)."""
    monkeypatch.setenv("HERMES_CTX_POSTGRES_DSN", postgres_dsn)
    chosen = {"backend": "sqlite", "connect_timeout": 2,
              "schema": "mig_" + hashlib.sha1(request.node.name.encode()).hexdigest()[:12]}
    home().mkdir(parents=True, exist_ok=True)
    (home() / "config.yaml").write_text(json.dumps({"ctx_plugins": {"storage": chosen}}), encoding="utf-8")
    yield chosen
    storage.release()


def on(chosen: dict[str, Any], backend: str) -> Config:
    return load_config({"ctx_plugins": {"storage": {**chosen, "backend": backend}}})


def install() -> None:
    """A single-machine install: turns and a fact through ctx-local, memories of every hostile id,
    two quarantined records, the progress of two queue segments, and an archive of five compactions."""
    provider = LocalProvider({}, hermes_home=home())
    for n, (session, text) in enumerate([(ALICE, "the wombat project ships on Friday"),
                                         (ALICE, "the wombat needs a new hutch"),
                                         (BOB, "bob's wombat is named Gerald")]):
        provider.sync_turn(Turn(session=session, turn_number=n, user_text=text, assistant_text="noted"))
    provider.handle_tool_call("ctx_memory_remember", {"fact": "Alice's wombat eats carrots", "scope": "user"},
                              session=ALICE)
    assert provider.flush(10)
    provider.shutdown()
    store = storage.open_memory(load_config(), provider.path)
    store.write([Record(key=f"hostile-{n}\x00{owner}", kind="fact" if n % 2 else "turn", namespace=owner,
                        user_id=owner, chat_id=owner, session_id=owner[:40], visibility="user" if n % 3 else "chat",
                        # NUL in the ids and the source only: SQLite's search cuts a text at a NUL; recall
                        # quotes the session id, so a 10 kB one would leave no room for the memory
                        fact_text=f"quokka {n} of {owner[:12]!r} \ud800" if n % 2 else "",
                        user_text="" if n % 2 else f"quokka {n} said {owner[:12]!r}",
                        assistant_text="" if n % 2 else "ok",
                        source=f"test:{owner[:3]}", created_at=1_700_000_000.25 + n)
                 for n, owner in enumerate(HOSTILE_IDS)])
    store.quarantine("seg-a.log", 120, '{"namespace":"","user_id":"a\\u0000b","key":', "JSONDecodeError: cut", 3)
    store.quarantine("seg-a.log", 260, "not json at all", "ValueError: not a record", 5)
    store.write([], segment="seg-b.log", offset=4096)  # a queue applied so far (its records may still wait)
    store.close()
    archive = storage.open_archive(load_config())
    call = {"role": "assistant", "content": "", "tool_calls": [
        {"id": "call_1", "type": "function", "function": {"name": "read", "arguments": '{"path": "a.py"}'}}]}
    archive.record(session_id="s-alice", user_id="alice", strategy="summarize", tokens_before=9000, tokens_after=2000,
                   removed=[(0, {"role": "user", "content": "deploy the pelican service"}), (1, call),
                            (2, {"role": "tool", "tool_call_id": "call_1", "content": "ECONNREFUSED 8443"})])
    archive.record(session_id="s-alice", user_id="alice", strategy="prune",
                   removed=[(3, {"role": "user", "content": "pelican again"})])
    for owner in ("", "a\x00b", "\ud800"):
        archive.record(session_id=owner, user_id=owner, namespace=owner, strategy="window",
                       removed=[(0, {"role": "user", "content": f"pelican of {owner!r}"})])
    archive.close()


def held(config: Config) -> tuple[list[dict[str, Any]], list[tuple[Any, ...]], dict[str, int], list[Any]]:
    """Everything the stores of ``config`` hold, without the ids the stores give."""
    store = storage.open_memory(config, LocalProvider({}, hermes_home=home(), config=config).path)
    archive = storage.open_archive(config)
    try:
        memories = [{k: v for k, v in dataclasses.asdict(m).items() if k != "id"} for m in store.memories()]
        quarantined = [(q.segment, q.offset, q.record, q.error, q.attempts, q.namespace, q.user_id)
                       for q in store.quarantined()]
        return memories, quarantined, store.progress(), list(archive.compactions())
    finally:
        store.close()
        archive.close()


def migrate(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, dict[str, Any], str]:
    code = main(["storage", "migrate", "--from", "sqlite", "--to", "postgres", "--json", *args])
    captured = capsys.readouterr()
    report = json.loads(captured.out) if captured.out.strip() else {}
    return code, report, captured.err


def by_kind(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {item["store"].split(" /")[0]: item for item in report["stores"]}


def recalled(provider: LocalProvider, question: str, session: SessionInfo) -> str:
    """What recall puts in the prompt, the store's ids left out (each store gives its own)."""
    return re.sub(r"#\d+", "#", provider.prefetch(question, session=session))


def test_a_sqlite_install_moves_to_postgres_whole_and_recalls_the_same(
        settings: dict[str, Any], capsys: pytest.CaptureFixture[str]) -> None:
    install()
    source = held(on(settings, "sqlite"))
    memories, quarantined, progress, compactions = source
    assert len(memories) == 4 + len(HOSTILE_IDS) and len(quarantined) == 2 and len(compactions) == 5
    assert progress == {"seg-a.log": 260, "seg-b.log": 4096}

    code, report, err = migrate(capsys)
    assert code == 0 and report["ok"], (report, err)
    stores = by_kind(report)
    assert {kind: (s["source"], s["written"], s["verified"]) for kind, s in stores.items()} == {
        "ctx-local memories": (len(memories),) * 3, "ctx-local quarantined records": (2, 2, 2),
        # seg-a's progress came with its quarantined records
        "ctx-local queue segments' progress": (2, 1, 2), "archive compactions": (5, 5, 5)}
    assert held(on(settings, "postgres")) == source  # owners, texts, times, kinds, order: all as they were

    sqlite_side = LocalProvider({}, hermes_home=home(), config=on(settings, "sqlite"))
    postgres_side = LocalProvider({}, hermes_home=home(), config=on(settings, "postgres"))
    try:
        for question, session in [("wombat carrots", ALICE), ("wombat Gerald", BOB)] + [
                (f"quokka {n}", SessionInfo(session_id=owner, user_id=owner, chat_id=owner, deployment=owner))
                for n, owner in enumerate(HOSTILE_IDS)]:
            there = recalled(postgres_side, question, session)
            assert there and there == recalled(sqlite_side, question, session), question
        alice = recalled(postgres_side, "wombat", ALICE)
        assert "carrots" in alice and "hutch" in alice and "Gerald" not in alice  # hers, not bob's
    finally:
        sqlite_side.shutdown()
        postgres_side.shutdown()
    archive = storage.open_archive(on(settings, "postgres"))
    [hit] = archive.search("pelican", Scope(session_id="a\x00b", user_id="a\x00b", namespace="a\x00b"))
    assert archive.get([hit.id], Scope(session_id="a\x00b", user_id="a\x00b", namespace="a\x00b"))[0].message == {
        "role": "user", "content": "pelican of 'a\\x00b'"}
    assert len(archive.search("pelican", Scope(session_id="s-alice", user_id="alice"))) == 2


def test_a_second_run_copies_nothing_twice(settings: dict[str, Any], capsys: pytest.CaptureFixture[str]) -> None:
    install()
    assert migrate(capsys)[0] == 0
    after_first = held(on(settings, "postgres"))
    code, report, err = migrate(capsys)
    assert code == 0 and report["ok"], err
    assert {kind: (s["written"], s["verified"] == s["source"] > 0) for kind, s in by_kind(report).items()} == {
        "ctx-local memories": (0, True), "ctx-local quarantined records": (0, True),
        "ctx-local queue segments' progress": (0, True), "archive compactions": (0, True)}
    assert held(on(settings, "postgres")) == after_first

    # what hermes stored since on SQLite is what a third run copies, and only that
    late = storage.open_memory(on(settings, "sqlite"), LocalProvider({}, hermes_home=home()).path)
    late.write([Record(key="late", kind="fact", user_id="alice", chat_id="dm", session_id="s9", fact_text="late owl",
                       created_at=1_800_000_000.0)])
    late.close()
    code, report, _ = migrate(capsys)
    assert code == 0 and by_kind(report)["ctx-local memories"]["written"] == 1
    assert len(held(on(settings, "postgres"))[0]) == len(after_first[0]) + 1


def test_what_was_deleted_in_the_target_since_is_not_copied_again(settings: dict[str, Any],
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    """A newcomer walk: a memory forgotten in the target (``memory forget <id>``) and a compaction purged there came
    back from the SQLite files, which still hold them, at the next run. Whatever the target lacks and was never
    copied still is (the positive control), and a run into another server copies everything."""
    install()
    assert migrate(capsys)[0] == 0
    path = LocalProvider({}, hermes_home=home()).path
    target = storage.open_memory(on(settings, "postgres"), path)
    archive = storage.open_archive(on(settings, "postgres"))
    try:
        [carrots] = [m for m in target.memories() if "carrots" in (m.fact_text + m.user_text)]
        assert target.forget([carrots.id]) == [carrots.id]
        assert archive.purge(session_id="s-alice") > 0
    finally:
        target.close()
        archive.close()
    late = storage.open_memory(on(settings, "sqlite"), path)
    late.write([Record(key="late", kind="fact", user_id="alice", chat_id="dm", session_id="s9", fact_text="late owl",
                       created_at=1_800_000_000.0)])
    late.close()
    code, report, err = migrate(capsys)
    assert code == 0 and report["ok"], (report, err)
    memories, archived = by_kind(report)["ctx-local memories"], by_kind(report)["archive compactions"]
    assert memories["written"] == 1 and "1 copied by an earlier run and deleted in the target since" in " ".join(
        memories["notes"])
    assert archived["written"] == 0 and "deleted in the target since" in " ".join(archived["notes"])
    after = held(on(settings, "postgres"))
    texts = " ".join(str(m) for m in after[0])
    assert "carrots" not in texts and "late owl" in texts
    assert not [e for e in after[3] if e["session_id"] == "s-alice"]


def test_a_target_emptied_since_an_earlier_run_is_copied_into_whole(settings: dict[str, Any], postgres_dsn: str,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    """A hostile-values pass: the target's schema dropped (a restore gone wrong, a database made anew at the same
    address) after a first run, the second said "3 there already, 3 verified: OK" and copied nothing: what the first
    run noted was taken for deletions in the target. The same back the other way, the SQLite files deleted."""
    install()
    assert migrate(capsys)[0] == 0
    first = held(on(settings, "postgres"))
    assert first[0] and first[3]  # the positive control: the first run copied memories and compactions
    with psycopg.connect(postgres_dsn, autocommit=True) as conn:
        conn.execute(f'DROP SCHEMA "{settings["schema"]}" CASCADE')
    storage.release()
    code, report, err = migrate(capsys)
    assert code == 0 and report["ok"], (report, err)
    memories, archived = by_kind(report)["ctx-local memories"], by_kind(report)["archive compactions"]
    assert memories["written"] == memories["source"] == len(first[0]) and not memories["notes"], memories
    assert archived["written"] == archived["source"] == len(first[3]), archived
    assert held(on(settings, "postgres")) == first

    back = ["storage", "migrate", "--from", "postgres", "--to", "sqlite", "--json"]
    assert main(back) == 0
    capsys.readouterr()
    for made in [*home().glob("ctx-local/memory.db*"), *home().glob("ctx_archive.db*")]:
        if made.is_file() and not made.name.endswith((".pg-queue", ".json")):
            made.unlink()  # the SQLite files gone since
    assert main(back) == 0, capsys.readouterr()
    assert json.loads(capsys.readouterr().out)["ok"]
    assert held(on(settings, "sqlite")) == first


def test_a_target_emptied_in_place_is_copied_into_and_a_partial_loss_is_said_with_the_way_back(
        settings: dict[str, Any], postgres_dsn: str, capsys: pytest.CaptureFixture[str]) -> None:
    """A review: TRUNCATE (or DELETE, or a restore from a backup) kept the store's row, so the target was the same one
    and the second run said "verified: OK" for items it did not hold. A target holding none of what earlier runs
    copied is a problem naming ``--again`` (taking it for emptied brought back what a user had deleted there, the
    next review found); one that lost only some says how many it lacks and verifies only what it holds."""
    install()
    assert migrate(capsys)[0] == 0
    first = held(on(settings, "postgres"))
    schema = settings["schema"]
    with psycopg.connect(postgres_dsn, autocommit=True) as conn:
        conn.execute(f'TRUNCATE "{schema}".memories CASCADE')
    code, report, err = migrate(capsys)
    memories = by_kind(report)["ctx-local memories"]
    assert code == EXIT_PROBLEM and memories["written"] == memories["verified"] == 0, (report, err)
    assert "holds none of the" in " ".join(memories["problems"]) and "--again" in " ".join(memories["problems"])
    assert held(on(settings, "postgres"))[0] == []  # nothing brought back unasked: they may have been deleted there
    code, report, err = migrate(capsys, "--again")
    memories = by_kind(report)["ctx-local memories"]
    assert code == 0 and memories["written"] == memories["verified"] == memories["source"] > 0, (report, err)

    def by_key(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:  # the target renumbers what it is given again
        return sorted(rows, key=lambda row: (row["namespace"], row["key"]))

    assert by_key(held(on(settings, "postgres"))[0]) == by_key(first[0])

    with psycopg.connect(postgres_dsn, autocommit=True) as conn:  # a restore from an older backup: two are gone
        conn.execute(f'DELETE FROM "{schema}".memories WHERE id IN (SELECT id FROM "{schema}".memories LIMIT 2)')
    code, report, _ = migrate(capsys)
    memories = by_kind(report)["ctx-local memories"]
    assert memories["written"] == 0 and memories["deleted_there"] == 2
    assert memories["verified"] == memories["source"] - 2 and "--again" in " ".join(memories["notes"])
    assert main(["storage", "migrate", "--from", "sqlite", "--to", "postgres"]) == 0
    assert "but 2 deleted there since" in capsys.readouterr().out
    code, report, _ = migrate(capsys, "--again")
    memories = by_kind(report)["ctx-local memories"]
    assert code == 0 and memories["written"] == 2 and memories["verified"] == memories["source"]
    assert by_key(held(on(settings, "postgres"))[0]) == by_key(first[0])


@pytest.mark.parametrize("damage", [b"[1, 2]", b'{"memories x": 7', b"\xff\xfe", b"7 under each key"])
def test_a_damaged_note_of_earlier_runs_is_said_and_set_aside(settings: dict[str, Any], damage: bytes,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    """A hostile-values pass: a ledger cut short, of another JSON type or holding other values raised a TypeError
    traceback (after copying) or was silently rewritten without the other targets' notes. Now it is read as noting
    nothing (everything is copied: nothing can be lost), said when unreadable, and kept aside for whoever looks."""
    install()
    ledger = LocalProvider({}, hermes_home=home()).path.with_name("memory.db.migrated.json")
    readable = damage == b"7 under each key"
    if readable:  # a first run's note, each target's value then of the wrong type
        assert migrate(capsys)[0] == 0
        ledger.write_text(json.dumps(dict.fromkeys(json.loads(ledger.read_text(encoding="utf-8")), 7)))
    else:
        ledger.write_bytes(damage)
    code, report, err = migrate(capsys)
    assert code == 0 and report["ok"], (report, err)
    memories = by_kind(report)["ctx-local memories"]
    assert memories["verified"] == memories["source"] > 0 and memories["written"] == (0 if readable else
                                                                                       memories["source"])
    assert ("cannot be read" in err) is not readable, err
    assert ("is of another form" in err) is readable, err  # a review: a value of another shape was read silently
    assert ledger.with_name("memory.db.migrated.json.damaged").exists() is not readable
    assert json.loads(ledger.read_text(encoding="utf-8"))  # a fresh note: the next run knows what it copied
    assert migrate(capsys)[1]["ok"]


def test_an_item_the_target_refuses_is_named_and_the_rest_copied(settings: dict[str, Any],
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    """A hostile-values pass: a user id past PostgreSQL's index entry limit (~2.7 kB of random text: a signed token)
    stopped the run with a traceback at that item, every run, naming nothing, and what came after it was never
    copied. Now the item is a problem naming its owner (cut short), and everything else is copied and verified."""
    token = base64.b64encode(random.Random(7).randbytes(2400)).decode()
    path = LocalProvider({}, hermes_home=home()).path
    store = storage.open_memory(on(settings, "sqlite"), path)
    store.write([Record(key=f"k{n}", kind="fact", user_id=user, chat_id="dm", session_id="s1", fact_text=text,
                        created_at=1_800_000_000.0 + n)
                 for n, (user, text) in enumerate([("alice", "alice's owl"), (token, "the token's owl"),
                                                   ("bob", "bob's owl")])])
    store.close()
    archive = storage.open_archive(on(settings, "sqlite"))
    for session, owners in (("t1", ["alice", token]), ("t2", ["bob", "bob"])):
        archive.record(session_id=session, user_id=owners[0], strategy="window", owners=owners,
                       removed=[(n, {"role": "user", "content": f"heron {session} {n}"}) for n in range(2)])
    archive.close()
    for _ in range(2):  # a second run: the same, no traceback
        code, report, err = migrate(capsys)
        assert code == EXIT_PROBLEM and not report["ok"] and "Traceback" not in err, err
        memories, archived = by_kind(report)["ctx-local memories"], by_kind(report)["archive compactions"]
        assert memories["verified"] == 2 and archived["verified"] == 1, report
        for item in (memories, archived):
            [problem] = item["problems"]
            assert problem.startswith("the target refused a ") and token[:60] in problem and "cut from 3,200" in problem
    texts = " ".join(str(m) for m in held(on(settings, "postgres"))[0])
    assert "alice's owl" in texts and "bob's owl" in texts and "token's owl" not in texts


def test_the_same_turn_stored_by_two_machines_verifies(settings: dict[str, Any],
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    """A fleet pass: two machines that stored the same turn (the same owner, session, turn number and texts: the
    same key, another time) migrate one after the other; the server keeps one row per key, so the second never
    verified (DIFFERS, exit 1 at every run)."""
    path = LocalProvider({}, hermes_home=home()).path
    for machine, when in (("one", 1_800_000_000.0), ("two", 1_800_000_555.0)):
        for made in home().glob("ctx-local/memory.db*"):
            if made.is_file() and not made.name.endswith(".pg-queue"):
                made.unlink()  # this machine's own SQLite files
        store = storage.open_memory(on(settings, "sqlite"), path)
        store.write([Record(key="turn:s1:3", kind="turn", user_id="alice", chat_id="dm", session_id="s1",
                            user_text="is the kiln hot?", assistant_text="yes", created_at=when),
                     Record(key=f"fact:{machine}", kind="fact", user_id="alice", chat_id="dm", session_id="s1",
                            fact_text=f"machine {machine}'s own fact", created_at=when)])
        store.close()
        code, report, err = migrate(capsys)
        assert code == 0 and report["ok"], (machine, report, err)
    memories = by_kind(report)["ctx-local memories"]
    assert memories["written"] == 1 and "1 held by the target under their key already" in " ".join(memories["notes"])
    texts = " ".join(str(m) for m in held(on(settings, "postgres"))[0])
    assert texts.count("is the kiln hot?") == 1 and "machine one's own fact" in texts and "machine two's" in texts


def test_it_moves_back_from_postgres_to_sqlite_as_well(settings: dict[str, Any],
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    install()
    original = held(on(settings, "sqlite"))
    assert migrate(capsys)[0] == 0
    for made in [*home().glob("ctx-local/memory.db*"), *home().glob("ctx_archive.db*")]:
        if made.is_file() and not made.name.endswith(".pg-queue"):
            made.unlink()  # the SQLite install gone: only the server holds it now
    assert held(on(settings, "sqlite"))[0] == []
    code = main(["storage", "migrate", "--from", "postgres", "--to", "sqlite"])
    out = capsys.readouterr().out
    assert code == 0 and out.rstrip().endswith("set ctx_plugins.storage.backend: sqlite and restart hermes"), out
    assert held(on(settings, "sqlite")) == original


def test_a_target_queue_that_got_further_is_never_moved_back(settings: dict[str, Any],
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    """Replaying from an older offset would bring back memories forgotten since: progress only grows."""
    install()
    target = storage.open_memory(on(settings, "postgres"), LocalProvider({}, hermes_home=home()).path)
    try:
        target.write([], segment="seg-a.log", offset=999)  # hermes already ran on the server, further
        code, report, _ = migrate(capsys)
        assert code == 0 and by_kind(report)["ctx-local quarantined records"]["written"] == 2
        assert target.progress() == {"seg-a.log": 999, "seg-b.log": 4096}
    finally:
        target.close()


def test_a_running_hermes_is_not_migrated_under(settings: dict[str, Any], capsys: pytest.CaptureFixture[str]) -> None:
    provider = LocalProvider({}, hermes_home=home())
    try:
        provider.sync_turn(Turn(session=ALICE, turn_number=0, user_text="a live wombat", assistant_text="noted"))
        assert provider.flush(10)
        code, _, err = migrate(capsys)
        assert code == EXIT_PROBLEM and "stop hermes first" in err and str(provider.queue_dir) in err
    finally:
        provider.shutdown()
    assert held(on(settings, "postgres"))[0] == []  # nothing was copied
    assert migrate(capsys)[0] == 0 and len(held(on(settings, "postgres"))[0]) == 1  # stopped: it goes


@pytest.mark.parametrize(("source", "target", "said"), [
    ("sqlite", "mysql", "unknown storage backend 'mysql': the backends are memory, postgres, sqlite"),
    ("sqlit", "postgres", "unknown storage backend 'sqlit'"),
    ("sqlite", "sqlite", "nothing to migrate"),
    ("sqlite", "memory", "keeps nothing beyond one process")])
def test_a_backend_that_cannot_be_migrated_is_named(source: str, target: str, said: str,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["storage", "migrate", "--from", source, "--to", target]) == EXIT_INPUT
    captured = capsys.readouterr()
    assert said in captured.err and captured.out == ""


def test_a_server_that_is_down_stops_it_and_leaves_the_source_as_it_was(
        settings: dict[str, Any], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    install()
    before = held(on(settings, "sqlite"))
    with socket.socket() as probe:  # a loopback port nothing listens on: a server that is down
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    monkeypatch.setenv("HERMES_CTX_POSTGRES_DSN", f"postgresql://hermes:pw-not-shown@127.0.0.1:{port}/fleet")
    code, report, err = migrate(capsys)
    assert code == EXIT_PLUGIN and report == {}
    assert "migration from sqlite to postgres stopped" in err and "Nothing was changed in sqlite" in err
    assert "pw-not-shown" not in err and "Traceback" not in err
    assert held(on(settings, "sqlite")) == before

"""The archive's spool, hostile: a damaged line (a hand edit, a disk fault, a file from another version), on SQLite
and on a real PostgreSQL, is set aside, never first in line for good, and whose turns a damaged line holds is never
guessed as the compacting user's; a search does not wait on another process's import (a hostile-values pass: one
line of valid JSON with a field of another type stopped every later compaction from reaching the store; owners of
the wrong length gave alice's words to bob; ctx_search waited 20 s on another process holding the spool)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hermes_ctx_plugins import SessionInfo, storage
from hermes_ctx_plugins.archive.archiver import Archiver
from hermes_ctx_plugins.config import load_config
from hermes_ctx_plugins.config.settings import ArchiveSettings
from hermes_ctx_plugins.storage import ArchiveBackend, Scope
from hermes_ctx_plugins.storage import spool as spool_module
from hermes_ctx_plugins.storage.spool import Spool, make_entry, spool_path
from hermes_ctx_plugins.tokens import get_counter


@pytest.fixture(params=["sqlite", "postgres"])
def archive(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[ArchiveBackend]:
    chosen: dict[str, Any] = {"backend": request.param}
    if request.param == "postgres":
        chosen.update(dsn=request.getfixturevalue("postgres_dsn"), connect_timeout=2)
    opened = storage.open_archive(load_config({"ctx_plugins": {"storage": chosen,
                                                               "archive": {"path": str(tmp_path / "archive.db")}}}))
    opened.record(session_id="other", user_id="carol", strategy="window",
                  removed=[(0, {"role": "user", "content": "carol's warm-up"})])
    yield opened
    opened.close()


def spooled(archive: ArchiveBackend, *lines: str) -> Path:
    path = spool_path(archive.path)
    with open(path, "a", encoding="utf-8") as handle:
        handle.writelines(f"{line}\n" for line in lines)
    return path


def thread(**damage: Any) -> dict[str, Any]:
    """A shared thread's compaction in bob's turn: alice's pin, bob's answer, bob's own turn."""
    entry = make_entry(namespace="", session_id="thread", user_id="bob", strategy="window", tokens_before=9,
                       tokens_after=3, owners=["alice", "bob", "bob"],
                       removed=[(0, {"role": "user", "content": "alice's pin is ZEBRA77"}),
                                (1, {"role": "assistant", "content": "noted"}),
                                (2, {"role": "user", "content": "bob's pin is YAK55"})])
    return {**entry, **damage}


def finds(archive: ArchiveBackend, user: str, word: str) -> bool:
    return bool(archive.search(word, Scope(session_id="dm", user_id=user, all_sessions=True)))


def test_a_line_no_store_can_take_is_set_aside_and_what_follows_is_stored(archive: ArchiveBackend) -> None:
    bad_message = thread()
    bad_message["removed"][1][1] = "not JSON {"
    damaged = [json.dumps(bad_message), json.dumps(thread(user_id=7)), json.dumps(thread(removed="x")),
               json.dumps([1, 2]), '{"torn": ']
    path = spooled(archive, *damaged, json.dumps(thread(session_id="t2")))
    assert archive.record(session_id="later", user_id="dave", strategy="window",
                          removed=[(0, {"role": "user", "content": "dave's QUAIL0 plan"})])  # stored at once
    assert finds(archive, "dave", "QUAIL0")
    assert finds(archive, "alice", "ZEBRA77") and finds(archive, "bob", "YAK55")  # the good line behind the bad ones
    assert not path.exists() and archive.stats()["spooled"] == 0
    kept = path.with_suffix(".rejected").read_text(encoding="utf-8").splitlines()
    assert len(kept) == len(damaged) and "not JSON {" in kept[0]  # kept for whoever looks, never dropped unseen


@pytest.mark.parametrize("owners", [["alice", "bob"], ["alice", 5, "bob"], "alice"],
                         ids=["one-short", "a-number", "a-string"])
def test_damaged_owners_make_a_shared_threads_turns_nobodys(archive: ArchiveBackend, owners: Any) -> None:
    spooled(archive, json.dumps(thread(session_id="control")), json.dumps(thread(owners=owners)))
    assert archive.import_spooled() == 2
    control = Scope(session_id="control", user_id="alice")
    assert [hit.snippet for hit in archive.search("ZEBRA77", control)]  # the positive control: well-formed, hers
    hers = archive.search("ZEBRA77", Scope(session_id="thread", user_id="alice"))
    assert not hers and not archive.search("ZEBRA77", Scope(session_id="thread", user_id="bob"))
    assert not archive.search("YAK55", Scope(session_id="thread", user_id="bob"))  # nobody's: no guess either way
    stored = [s.user_id for s in archive.get([h.id for h in archive.search(
        "ZEBRA77", Scope(session_id="", everything=True), limit=5)], Scope(session_id="", everything=True))]
    assert sorted(stored) == ["", "alice"]


HOLDER = textwrap.dedent("""
    import sys
    from pathlib import Path
    from hermes_ctx_plugins.storage.files import locked
    with locked(Path(sys.argv[1])):
        print("held", flush=True)
        sys.stdin.read()  # until the test closes it
""")


def test_a_search_answers_while_another_process_holds_the_spool(archive: ArchiveBackend) -> None:
    """Another worker importing a long outage's spool (or stopped while holding it): the search answers from what
    is stored, and the spooled compaction is found once the spool is free."""
    path = spooled(archive, json.dumps(thread()))
    archiver, bob = Archiver(archive, ArchiveSettings()), SessionInfo(session_id="thread", user_id="bob")

    def search() -> list[Any]:
        return list(json.loads(archiver.handle_tool_call("ctx_search", {"query": "YAK55"}, session=bob,
                                                         counter=get_counter()))["results"])

    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(path)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        assert search() == []  # answered while the other process still holds it (waiting, it would hang here)
        assert path.exists()
    finally:
        holder.communicate("", timeout=60)
    assert search() and not path.exists()  # the positive control: the spool free, the same search imports it


def test_an_import_cut_short_by_its_time_leaves_the_rest_for_the_next(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """A search imports for about a second at most; what it leaves is imported by the next import, each compaction
    once, in order."""
    queue = Spool(tmp_path / "archive.db.spool.jsonl")
    for n in range(7):
        queue.append(thread(session_id=f"s{n}"))
    clock = iter(range(1000))
    monkeypatch.setattr(spool_module.time, "monotonic", lambda: float(next(clock)))
    stored: list[str] = []
    assert queue.import_into(lambda entry: stored.append(entry["session_id"]), seconds=3.5) == 3
    assert stored == ["s0", "s1", "s2"] and queue.pending()
    read = []  # what the next import reads: not again what the first stored (a review: a long spool's brief
    upgraded = spool_module._upgraded  # imports re-read it all, and past ~150 MB stored nothing in their second)
    monkeypatch.setattr(spool_module, "_upgraded", lambda entry: read.append(entry) or upgraded(entry))
    assert queue.import_into(lambda entry: stored.append(entry["session_id"])) == 4
    assert stored == [f"s{n}" for n in range(7)] and not queue.pending() and len(read) == 4


def test_a_store_a_newer_worker_migrated_spools_the_compaction_never_sets_it_aside(postgres_dsn: str,
                                                                                   tmp_path: Path) -> None:
    """A review: the package's own error for a schema a newer worker migrated (a rolling upgrade), met inside the
    write's transaction, was taken for the server refusing the record: every compaction went to .rejected for good,
    and an import moved the spooled ones there too. The store's failure spools it; it is stored once the store works."""
    import psycopg

    from hermes_ctx_plugins.storage.postgres.schema import SCHEMA_VERSION

    config = load_config({"ctx_plugins": {"storage": {"backend": "postgres", "dsn": postgres_dsn, "schema": "rolling",
                                                      "connect_timeout": 2},
                                          "archive": {"path": str(tmp_path / "archive.db")}}})
    first = storage.open_archive(config)
    assert first.record(session_id="dm", user_id="alice", strategy="window",
                        removed=[(0, {"role": "user", "content": "alice's HERON1"})])
    with psycopg.connect(postgres_dsn, autocommit=True) as conn:
        conn.execute("INSERT INTO rolling.schema_version (version) VALUES (%s)", (SCHEMA_VERSION + 1,))
    storage.release()
    old_worker = storage.open_archive(config)
    assert old_worker.record(session_id="dm", user_id="alice", strategy="window",
                             removed=[(0, {"role": "user", "content": "alice's HERON2"})]) == []
    assert spool_path(old_worker.path).exists() and not spool_path(old_worker.path).with_suffix(".rejected").exists()
    assert old_worker.import_spooled() == 0 and Spool(spool_path(old_worker.path)).count() == 1  # the store's: waits
    with psycopg.connect(postgres_dsn, autocommit=True) as conn:
        conn.execute("DELETE FROM rolling.schema_version WHERE version = %s", (SCHEMA_VERSION + 1,))
    storage.release()
    upgraded = storage.open_archive(config)
    assert upgraded.import_spooled() == 1
    assert upgraded.search("HERON2", Scope(session_id="dm", user_id="alice"))


def test_a_line_a_killed_process_left_unfinished_never_takes_the_next_one_with_it(tmp_path: Path) -> None:
    """A review: a process killed mid-append leaves a line with no line break; the next compaction was written on
    the same line and set aside with it."""
    queue = Spool(tmp_path / "archive.db.spool.jsonl")
    queue.path.write_text(json.dumps(thread(session_id="torn"))[:80], encoding="utf-8")  # cut short, no "\n"
    queue.append(thread(session_id="whole"))
    stored: list[str] = []
    assert queue.import_into(lambda entry: stored.append(entry["session_id"])) == 1 and stored == ["whole"]
    assert len(queue.rejected.read_text(encoding="utf-8").splitlines()) == 1  # the cut line alone, kept


def test_counts_of_any_number_are_a_compaction_and_a_forget_keeps_others_unreadable_lines(tmp_path: Path) -> None:
    """A review: a strategy reporting a float token count was stored with the server up, but set aside once spooled;
    and any user's forget dropped every unreadable line kept in .rejected (kept for whoever looks, until a forget
    of a user it names)."""
    queue = Spool(tmp_path / "archive.db.spool.jsonl")
    queue.append(thread(session_id="floats", tokens_before=9.5, tokens_after=3.0))
    stored: list[str] = []
    assert queue.import_into(lambda entry: stored.append(entry["session_id"])) == 1 and stored == ["floats"]
    queue.rejected.write_text('{"user_id": "alice", "torn\n{"user_id": "carol", "torn\n', encoding="utf-8")
    queue.append(thread(user_id="dave", owners=None))
    assert queue.forget(lambda entry: entry["user_id"] == "bob", user="bob") == 0
    assert queue.rejected.read_text(encoding="utf-8").count("torn") == 2  # bob's forget: none of those is his
    queue.forget(lambda entry: entry["user_id"] == "alice", user="alice")
    assert queue.rejected.read_text(encoding="utf-8").splitlines() == ['{"user_id": "carol", "torn']


def test_a_shared_threads_line_cut_short_in_its_messages_still_names_every_speaker(tmp_path: Path) -> None:
    """A review: a shared thread's compaction spooled in bob's turn named its speakers after its messages, so a line a
    killed process cut short inside them held alice's words but not her id, and her forget kept it in .rejected."""
    queue = Spool(tmp_path / "archive.db.spool.jsonl")
    line = json.dumps(thread(), ensure_ascii=False)
    cut = line[:line.index("ZEBRA77") + 10]  # killed mid-append, inside the messages
    queue.path.write_text(cut, encoding="utf-8")
    assert queue.import_into(lambda entry: None) == 0 and "ZEBRA77" in queue.rejected.read_text(encoding="utf-8")
    queue.forget(lambda entry: False, user="carol")
    assert "ZEBRA77" in queue.rejected.read_text(encoding="utf-8")  # not carol's: kept (the positive control)
    queue.forget(lambda entry: False, user="alice")
    assert not queue.rejected.exists() or "ZEBRA77" not in queue.rejected.read_text(encoding="utf-8")


def test_what_waits_is_named_by_the_files_that_hold_it(tmp_path: Path) -> None:
    """`archive stats` named the spool file while only an interrupted import's file held what waited (a newcomer
    walk)."""
    from hermes_ctx_plugins.storage.spool import Spool

    spool = Spool(tmp_path / "ctx_archive.db.spool.jsonl")
    assert spool.where() == str(spool.path)
    spool.working.write_text("{}\n")
    assert spool.where() == str(spool.working)
    spool.path.write_text("{}\n")
    assert spool.where() == f"{spool.path} and {spool.working}"

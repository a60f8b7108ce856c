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
    assert queue.import_into(lambda entry: stored.append(entry["session_id"])) == 4
    assert stored == [f"s{n}" for n in range(7)] and not queue.pending()

"""The archive's spool after an outage, with real processes: an import killed half-way resumes after what it
stored (a red-team pass killed one after 51 of 200 compactions: the next import stored those 51 again, and
ctx_search answered with two copies), and what was spooled while an earlier import waited is imported by the
same successful write (it waited for yet another compaction, unsearchable meanwhile)."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

from hermes_ctx_plugins.storage import Scope
from hermes_ctx_plugins.storage.spool import Spool, spool_path
from hermes_ctx_plugins.storage.sqlite.archive import ArchiveStore

EVERYTHING = Scope(session_id="", everything=True)
#: a deadlock guard, never a measurement
DEADLINE = 120.0


def removed(n: int) -> list[tuple[int, dict[str, str]]]:
    return [(0, {"role": "user", "content": f"compaction {n} holds ident QX-{n:05d}"})]


def spool_while_locked(path: Path, count: int) -> None:
    store = ArchiveStore(path, timeout=0.05)
    store.stats()  # the schema, before the lock
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        for n in range(count):
            assert store.record(session_id="s1", user_id="u", strategy="window", removed=removed(n)) == []
    finally:
        holder.execute("ROLLBACK")
        holder.close()
        store.close()


def idents(path: Path) -> list[str]:
    conn = sqlite3.connect(path)
    try:
        return [text.split("ident ")[1] for (text,) in conn.execute("SELECT text FROM messages ORDER BY id")
                if "ident QX-" in text]
    finally:
        conn.close()


IMPORTER = textwrap.dedent("""
    import sys, time
    from hermes_ctx_plugins.storage.sqlite import archive
    real = archive.ArchiveStore._insert
    def slow(self, entry, **kwargs):  # an import that takes a while: each compaction 20 ms
        time.sleep(0.02)
        return real(self, entry, **kwargs)
    archive.ArchiveStore._insert = slow
    store = archive.ArchiveStore(sys.argv[1])
    store.record(session_id="s1", user_id="u", strategy="window",
                 removed=[(0, {"role": "user", "content": "the killed process's own compaction"})])
""")


def test_an_import_killed_half_way_resumes_after_what_it_stored(tmp_path: Path) -> None:
    path = tmp_path / "ctx_archive.db"
    spool_while_locked(path, 60)
    spool = Spool(spool_path(path))
    if spool.working.exists():  # one spool file (the failed imports while locked left the first entries apart)
        spool.path.write_bytes(spool.working.read_bytes() + spool.path.read_bytes())
        spool.working.unlink()
    assert spool.count() == 60
    child = subprocess.Popen([sys.executable, "-c", IMPORTER, str(path)])
    conn = sqlite3.connect(path)
    deadline = time.monotonic() + DEADLINE
    try:
        while conn.execute("SELECT count(*) FROM compactions").fetchone()[0] < 20:
            assert time.monotonic() < deadline and child.poll() is None, "the import never got going"
            time.sleep(0.005)
        os.kill(child.pid, signal.SIGKILL)
        child.wait()
        stored = conn.execute("SELECT count(*) FROM compactions").fetchone()[0]
    finally:
        conn.close()
    assert 20 <= stored < 60  # killed half-way
    waiting = Spool(spool_path(path)).count()
    assert stored + waiting in (60, 61)  # what waits is what is not stored (one stored but not yet counted, at most)
    store = ArchiveStore(path)
    store.record(session_id="s1", user_id="u", strategy="window", removed=removed(60))
    found = idents(path)
    assert sorted(set(found)) == [f"QX-{n:05d}" for n in range(61)]  # every compaction is there
    assert len(found) - len(set(found)) <= 1, f"{len(found) - len(set(found))} compactions stored twice"
    assert Spool(spool_path(path)).count() == 0 and not Spool(spool_path(path)).pending()
    hits = store.search("QX-00003", Scope(session_id="s1", user_id="u"), limit=5)
    assert len(hits) == 1  # one answer, not two copies
    store.close()


def test_one_successful_write_imports_the_interrupted_import_and_the_spool_behind_it(tmp_path: Path) -> None:
    path = tmp_path / "ctx_archive.db"
    spool_while_locked(path, 3)
    spool = Spool(spool_path(path))
    assert spool.working.exists()  # an import that stopped (its store failed) left its file
    store = ArchiveStore(path, timeout=0.05)
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:  # more compactions while the store is down: they go to the spool, behind the import file
        for n in range(3, 6):
            assert store.record(session_id="s1", user_id="u", strategy="window", removed=removed(n)) == []
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert spool.working.exists() and spool.path.exists()
    store.record(session_id="s1", user_id="u", strategy="window", removed=removed(6))
    assert sorted(idents(path)) == [f"QX-{n:05d}" for n in range(7)]  # all of it, by this one write
    assert not spool.pending()
    store.close()


def test_a_store_first_opened_while_its_file_was_read_only_writes_again_once_it_can(
        tmp_path: Path, monkeypatch: Any) -> None:
    """SQLite opens a file it cannot write read-only, silently; the archive kept that connection for the life
    of the process, so a gateway started while the disk was read-only spooled every compaction until restart.
    (The connection is made read-only with query_only: root, which CI may be, writes any file.)"""
    from hermes_ctx_plugins.storage.sqlite import archive

    path = tmp_path / "ctx_archive.db"
    ArchiveStore(path).close()  # the file exists
    real = archive.connect

    def read_only(where: Path, timeout: float) -> sqlite3.Connection:
        db = real(where, timeout)
        db.execute("PRAGMA query_only = ON")  # every write: "attempt to write a readonly database"
        return db

    monkeypatch.setattr(archive, "connect", read_only)
    store = ArchiveStore(path)
    assert store.record(session_id="s1", user_id="u", strategy="window", removed=removed(0)) == []  # spooled
    monkeypatch.setattr(archive, "connect", real)  # the disk is writable again
    assert store.record(session_id="s1", user_id="u", strategy="window", removed=removed(1))
    assert sorted(idents(path)) == ["QX-00000", "QX-00001"]  # the spooled one with it
    assert not store.spool.pending()
    store.close()


def test_a_compaction_neither_the_store_nor_the_spool_takes_is_held_and_written_once_either_works(
        tmp_path: Path, monkeypatch: Any) -> None:
    """A full or read-only disk refuses the database and the spool beside it alike: the removed messages
    were lost, with a critical log line. Now the process holds them and writes them out first thing when
    the disk takes writes again (the spool file's refusal is simulated: root, which CI may be, writes any
    file); a user forgotten meanwhile is forgotten there too."""
    path = tmp_path / "ctx_archive.db"
    store = ArchiveStore(path, timeout=0.05)
    store.stats()
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")

    def refused(line: str, where: Path) -> None:
        raise OSError(28, "No space left on device")

    try:
        with monkeypatch.context() as disk_full:
            disk_full.setattr(Spool, "_append_locked", staticmethod(refused))
            assert store.record(session_id="s1", user_id="u", strategy="window", removed=removed(0)) == []
            assert store.record(session_id="s2", user_id="bob", strategy="window", removed=removed(1)) == []
            assert store.spool.count() == 2 and not store.spool.path.exists()  # held, nowhere on disk
            store.forget_user("bob")  # the database is locked: its part fails; the held part goes
        assert store.spool.count() == 1  # bob's went with him
        # the disk takes writes again, the store is still locked: what was held goes to the spool file
        assert store.record(session_id="s1", user_id="u", strategy="window", removed=removed(2)) == []
        assert store.spool.path.exists() and store.spool.count() == 2
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert store.record(session_id="s1", user_id="u", strategy="window", removed=removed(3))
    assert sorted(idents(path)) == ["QX-00000", "QX-00002", "QX-00003"]  # all of alice's; bob's never stored
    assert store.spool.count() == 0
    store.close()


def test_a_spooled_later_compaction_of_a_conversation_that_repeats_itself_is_stored_whole(tmp_path: Path) -> None:
    """The archive tells a later compaction from the same one made again by the conversation it cites; a compaction
    the spool held has no conversation any more. Imported, it was merged into the one before it (a status bot's
    repeated exchange), and retention of the older one then deleted part of it (session-16 red-team pass)."""
    from hermes_ctx_plugins.storage.records import Scope
    from hermes_ctx_plugins.storage.sqlite.archive import ArchiveStore

    store = ArchiveStore(tmp_path / "a.db", timeout=0.5)
    asked = [(1, {"role": "user", "content": "status of the nightly backup job?"}),
             (2, {"role": "assistant", "content": "Backup job finished OK."})]
    first = store.record(session_id="s1", user_id="alice", strategy="window", removed=asked)
    later = [*asked, (3, {"role": "user", "content": "and the disk?"}),
             (4, {"role": "assistant", "content": "Disk at 91 percent."})]
    lock = sqlite3.connect(tmp_path / "a.db", isolation_level=None)
    lock.execute("BEGIN EXCLUSIVE")
    try:
        assert store.record(session_id="s1", user_id="alice", strategy="window", removed=later,
                            cited=lambda ident: ident in first) == []  # spooled
    finally:
        lock.execute("ROLLBACK")
        lock.close()
    store.record(session_id="s2", user_id="bob", strategy="window", removed=[(1, {"role": "user", "content": "hi"})])
    assert store.stats()["messages"] == 2 + 4 + 1  # the spooled compaction imported whole
    assert len(store.search("finished OK", Scope(session_id="s1", user_id="alice"), limit=10)) == 2
    store.close()

"""``storage.sqlite.opening.read_only``: a SQLite file this user cannot write, read without leaving anything beside
it, consistent with a process writing it meanwhile (reviews: a private copy of a live file and its -wal was torn half
the time; a link's -wal was missed; a killed reader's copies stayed in the temporary folder)."""

from __future__ import annotations

import multiprocessing
import os
import sqlite3
import tempfile
import time
from pathlib import Path

from hermes_ctx_plugins.storage.base import sqlite_state
from hermes_ctx_plugins.storage.sqlite import opening
from hermes_ctx_plugins.storage.sqlite.opening import read_only


def _writer(path: str, seconds: float) -> None:
    """Each transaction adds row n and sets the counter to n: a consistent read sees count == max == counter."""
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA wal_autocheckpoint = 20")  # its -wal folded in and restarted often
    n = conn.execute("SELECT n FROM c").fetchone()[0]
    end = time.time() + seconds
    while time.time() < end:
        n += 1
        conn.execute("BEGIN IMMEDIATE")
        conn.execute("INSERT INTO t VALUES (?, ?)", (n, os.urandom(800).hex()))
        conn.execute("UPDATE c SET n = ?", (n,))
        conn.execute("COMMIT")
    conn.close()


def _store(folder: Path) -> Path:
    path = folder / "s.db"
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)")
    conn.execute("CREATE TABLE c (n INTEGER)")
    conn.execute("INSERT INTO c VALUES (0)")
    conn.close()
    return path


def test_reads_while_a_process_writes_are_consistent_and_leave_nothing(tmp_path: Path) -> None:
    path = _store(tmp_path)
    writer = multiprocessing.get_context("spawn").Process(target=_writer, args=(str(path), 4.0))
    writer.start()
    try:
        time.sleep(0.5)
        kinds, reads = set(), 0
        while writer.is_alive() and reads < 200:
            before = sqlite_state(path)
            conn = read_only(path, 5.0)
            try:
                conn.execute("BEGIN")
                count, most = conn.execute("SELECT count(*), coalesce(max(id), 0) FROM t").fetchone()
                counter = conn.execute("SELECT n FROM c").fetchone()[0]
                conn.execute("COMMIT")
            except sqlite3.DatabaseError:  # torn: the file changed meanwhile (LocalStore reads it again)
                assert sqlite_state(path)[:2] != before[:2]
                continue
            finally:
                conn.close()
            if sqlite_state(path)[:2] != before[:2]:
                continue  # the file changed during the read: a store reads it again
            assert count == most == counter, (count, most, counter)
            kinds.add("copy" if getattr(conn, "folder", None) else "file")
            reads += 1
        assert reads >= 5
    finally:
        writer.join(30)
    assert sorted(p.name for p in tmp_path.iterdir() if not p.name.startswith("s.db")) == []
    assert not list(Path(tempfile.gettempdir()).glob(f"{opening.SNAPSHOT_PREFIX}*{os.getpid()}*"))


def test_a_links_wal_is_the_one_beside_the_file_it_names(tmp_path: Path) -> None:
    """A killed writer's store (its -wal holding a committed row, no -shm), reached through a link: the -wal is the one
    beside the file it names (a review: none was found beside the link, and the row was missed)."""
    (tmp_path / "live").mkdir()
    (tmp_path / "data").mkdir()
    live = _store(tmp_path / "live")
    holder = sqlite3.connect(live, isolation_level=None)
    holder.execute("PRAGMA wal_autocheckpoint = 0")
    holder.execute("INSERT INTO t VALUES (1, 'committed')")
    path = tmp_path / "data" / "s.db"
    for side in ("", "-wal"):  # as a killed writer leaves them, its -shm not kept
        Path(f"{path}{side}").write_bytes(Path(f"{live}{side}").read_bytes())
    holder.close()
    link = tmp_path / "s.db"
    link.symlink_to(path)
    assert Path(f"{path}-wal").stat().st_size > 0 and not Path(f"{link}-wal").exists()  # the premise
    conn = read_only(link, 5.0)
    try:
        assert conn.execute("SELECT v FROM t").fetchall() == [("committed",)]
    finally:
        conn.close()
    assert sorted(p.name for p in (tmp_path / "data").iterdir()) == ["s.db", "s.db-wal"]


def test_a_killed_readers_copies_are_removed_an_hour_later(tmp_path: Path, monkeypatch: object) -> None:
    old = Path(tempfile.mkdtemp(prefix=opening.SNAPSHOT_PREFIX))
    new = Path(tempfile.mkdtemp(prefix=opening.SNAPSHOT_PREFIX))
    hour_ago = time.time() - opening.SNAPSHOT_ABANDONED_SECONDS - 60
    os.utime(old, (hour_ago, hour_ago))
    try:
        opening._sweep()
        assert not old.exists() and new.exists()
    finally:
        for folder in (old, new):
            if folder.exists():
                os.rmdir(folder)

"""``storage.sqlite.opening.read_only``: a SQLite file this user cannot write, read without leaving anything beside
it, consistent with a process writing it meanwhile (reviews: a private copy of a live file and its -wal was torn half
the time; a link's -wal was missed; a killed reader's copies stayed in the temporary folder)."""

from __future__ import annotations

import multiprocessing
import os
import signal
import sqlite3
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import pytest

from hermes_ctx_plugins.storage.base import file_changed, sqlite_state
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
                assert file_changed(before, sqlite_state(path))
                continue
            finally:
                conn.close()
            if file_changed(before, sqlite_state(path)):
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


def _checkpointer(path: str, records: int, ready: Any, go: Any) -> None:
    """A store's owner with a large -wal (no automatic checkpoint) that copies it into the file when told."""
    from hermes_ctx_plugins.storage.base import Record
    from hermes_ctx_plugins.storage.sqlite.memory import LocalStore

    store = LocalStore(Path(path))
    store._conn.execute("PRAGMA wal_autocheckpoint = 0")
    for start in range(0, records, 500):
        store.write([Record(key=f"k{n}", kind="turn", namespace="", user_id="alice", chat_id="c", session_id="s",
                            user_text=f"remember k{n} " + os.urandom(300).hex(), assistant_text="ok", created_at=1.0)
                     for n in range(start, start + 500)])
    ready.set()
    go.wait(60)
    store._conn.execute("PRAGMA wal_checkpoint(PASSIVE)")
    store.close()


def _checkpointing(path: Path) -> bool:
    """Whether a process holds the checkpointer's lock of the store at ``path`` (what SQLite takes while it copies)."""
    import fcntl
    import struct

    fd = os.open(f"{path}-shm", os.O_RDONLY)
    try:
        query = struct.pack("hhqqi4x", fcntl.F_RDLCK, os.SEEK_SET, 121, 1, 0)
        return struct.unpack("hhqqi4x", fcntl.fcntl(fd, fcntl.F_GETLK, query))[0] != fcntl.F_UNLCK
    finally:
        os.close(fd)


@pytest.mark.skipif(sys.platform != "linux", reason="SIGSTOP and the struct flock layout of Linux")
@pytest.mark.parametrize("pause", [0.0, 0.01, 0.02, 0.03])
def test_a_checkpoint_paused_in_the_middle_is_never_read_as_damage_or_as_a_store(tmp_path: Path, pause: float) -> None:
    """The owner's process copies its -wal into the file and is paused part-way (descheduled on a loaded machine;
    here SIGSTOP): the file holds some pages of after and some of before and does not change while paused, so its
    size and time said nothing (CI: a torn read with the file unchanged, 'damaged' had it failed every retry). A
    reader who cannot write it gets the store as it was or as it is after, or 'run the command again' -- never a
    partial set, never 'damaged'."""
    from hermes_ctx_plugins.storage.base import LocalStoreError
    from hermes_ctx_plugins.storage.sqlite.memory import LocalStore

    path = tmp_path / "memory.db"
    seed = LocalStore(path)
    seed.close()  # the file holds the schema, no rows
    spawn = multiprocessing.get_context("spawn")
    ready, go = spawn.Event(), spawn.Event()
    owner = spawn.Process(target=_checkpointer, args=(str(path), 6000, ready, go))
    owner.start()
    try:
        assert ready.wait(120)
        go.set()
        deadline = time.monotonic() + 30
        while not _checkpointing(path):
            assert time.monotonic() < deadline and owner.is_alive()
        time.sleep(pause)
        os.kill(owner.pid, signal.SIGSTOP)
        try:
            reader = LocalStore(path, read_only=True)
            try:
                keys = {memory.key for memory in reader.memories()}
            finally:
                reader.close()
        except LocalStoreError as exc:
            assert exc.reason == "locked" and "run the command again" in str(exc), exc
        else:
            assert len(keys) in (0, 6000), len(keys)
    finally:
        os.kill(owner.pid, signal.SIGCONT)
        owner.join(60)
    reader = LocalStore(path, read_only=True)
    try:
        assert len(list(reader.memories())) == 6000
    finally:
        reader.close()


def _killed_writers_store(folder: Path) -> Path:
    """A store whose -wal holds a committed row and no -shm is beside it (its writer was killed): read from a copy."""
    path = _store(folder)
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("PRAGMA wal_autocheckpoint = 0")
    holder.execute("INSERT INTO t VALUES (1, ?)", ("x" * 50_000,))
    kept = {side: Path(f"{path}{side}").read_bytes() for side in ("", "-wal")}
    holder.close()
    for side, data in kept.items():  # as a killed writer leaves them, its -shm not kept
        Path(f"{path}{side}").write_bytes(data)
    assert Path(f"{path}-wal").stat().st_size > 50_000 and not Path(f"{path}-shm").exists()  # the premise
    return path


class _Interrupted(sqlite3.Connection):
    def close(self) -> None:
        super().close()
        raise KeyboardInterrupt


def test_a_copy_closed_by_a_ctrl_c_is_removed_all_the_same(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A Ctrl-C while the copy closed (the likeliest moment: closing folded its whole -wal into it) left the copy in
    the temporary folder, hundreds of MB for an hour."""
    class Copy(opening._Snapshot, _Interrupted):
        pass

    monkeypatch.setattr(opening, "_Snapshot", Copy)
    conn = read_only(_killed_writers_store(tmp_path), 5.0)
    folder = Path(conn.folder or "")
    assert folder.is_dir() and conn.execute("SELECT count(*) FROM t").fetchone() == (1,)
    with pytest.raises(KeyboardInterrupt):
        conn.close()
    assert not folder.exists()


def test_closing_a_copy_folds_nothing_into_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The copy is opened read-only: closing it leaves its -wal unfolded (it wrote the whole -wal into a file about to
    be removed: 0.6 s for a 100 MB -wal)."""
    sizes: list[int] = []

    class Copy(opening._Snapshot):
        def close(self) -> None:
            copy = Path(self.folder or "") / "s.db"
            before = copy.stat().st_size
            sqlite3.Connection.close(self)
            sizes.extend([before, copy.stat().st_size])
            super().close()

    monkeypatch.setattr(opening, "_Snapshot", Copy)
    conn = read_only(_killed_writers_store(tmp_path), 5.0)
    assert conn.execute("SELECT length(v) FROM t").fetchall() == [(50_000,)]  # the -wal's row is read
    conn.close()
    assert sizes and sizes[0] == sizes[1], sizes

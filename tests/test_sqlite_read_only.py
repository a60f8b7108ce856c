"""``storage.sqlite.opening.read_only``: a SQLite file this user cannot write, read without leaving anything beside
it, consistent with a process writing it meanwhile (reviews: a private copy of a live file and its -wal was torn half
the time; a link's -wal was missed; a killed reader's copies stayed in the temporary folder)."""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import sqlite3
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hermes_ctx_plugins.storage.sqlite import opening
from hermes_ctx_plugins.storage.sqlite.opening import read_only
from hermes_ctx_plugins.storage.sqlite.state import file_changed, sqlite_state


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


_OWNER_WRITES = """
import sqlite3, sys
conn = sqlite3.connect(sys.argv[1], isolation_level=None)
conn.execute("INSERT OR REPLACE INTO archive_meta (key, value) VALUES ('owner-wrote', ?)", (sys.argv[2],))
conn.close()  # the last connection: its -wal is copied into the file
"""


def test_an_archive_read_is_not_undone_by_a_write_while_the_command_formats_it(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """``archive show`` on an archive this user cannot write, its owner writing it while the command formats what it
    read (tokens counted, lines made: ~1 s for 3 MB): the whole command's run was compared with the file and made
    again, and never succeeded while the owner compacted every half second (a review). Each read is checked alone."""
    import subprocess

    from hermes_ctx_plugins import SessionInfo, load_config, load_host
    from hermes_ctx_plugins.archive import cli as archive_cli
    from hermes_ctx_plugins.archive import tools
    from hermes_ctx_plugins.cli import main
    from hermes_ctx_plugins.testing import make_transcript

    host = load_host(load_config(None))
    assert host.compress(make_transcript(3, turns=40, images=False), session=SessionInfo(session_id="s"),
                         force=True).compressed
    path = Path(host.archive.store.path)
    host.shutdown()
    monkeypatch.setattr(archive_cli, "writable_file", lambda _: False)  # as another user would (we run as anyone)
    expand, writes = tools.expand, []

    def expand_then_the_owner_writes(*args: Any, **kwargs: Any) -> str:
        shown = expand(*args, **kwargs)
        writes.append(subprocess.run([sys.executable, "-c", _OWNER_WRITES, str(path), str(len(writes))],
                                     check=True).returncode)
        return shown

    monkeypatch.setattr(tools, "expand", expand_then_the_owner_writes)
    assert main(["archive", "show", "1"]) == 0
    captured = capsys.readouterr()
    assert "#1" in captured.out and "read without writing" in captured.err and writes, captured


_ARCHIVER = """
import os, sys
from pathlib import Path
from hermes_ctx_plugins.storage.sqlite.archive import ArchiveStore
store = ArchiveStore(Path(sys.argv[1]))
for n in range(int(sys.argv[2])):
    store.record(session_id=f"s{os.getpid()}-{n}", user_id="", strategy="summarize",
                 removed=[(i, {"role": "user", "content": f"m{n} {i} " + os.urandom(300).hex()}) for i in range(5)])
store.close()  # the last connection: its -wal is copied into the file
"""


def test_archive_stats_read_while_the_owner_archives_are_of_one_moment(tmp_path: Path) -> None:
    """``archive stats`` of an archive this user cannot write, its owner archiving a compaction of 5 messages while the
    counts are read: the inner read of its size reopened the store and the outer check then compared the file with
    the new opening -- counts of two moments (200 compactions, 1,005 messages), exit 0 (a review)."""
    import subprocess

    from hermes_ctx_plugins.storage.sqlite.archive import ArchiveStore

    path = tmp_path / "ctx_archive.db"
    subprocess.run([sys.executable, "-c", _ARCHIVER, str(path), "40"], check=True)
    reader = ArchiveStore(path, read_only=True)
    fired: list[int] = []

    def owner_archives(sql: str) -> None:
        if "FROM messages" in sql and not fired:  # between the compactions' count and the messages'
            fired.append(subprocess.run([sys.executable, "-c", _ARCHIVER, str(path), "1"], check=True).returncode)

    try:
        reader._connect().set_trace_callback(owner_archives)
        stats = reader.stats()
    finally:
        reader.close()
    assert fired and stats["messages"] == 5 * stats["compactions"], stats


_HOLDER = """
import sys, time
from pathlib import Path
from hermes_ctx_plugins.storage.base import Record
from hermes_ctx_plugins.storage.sqlite.archive import ArchiveStore
from hermes_ctx_plugins.storage.sqlite.memory import LocalStore
folder = Path(sys.argv[1])
memory = LocalStore(folder / "memory.db")
memory.write([Record(key=f"k{n}", kind="turn", namespace="", user_id="", chat_id="", session_id="s",
                     user_text=f"remember the blue door {n}", assistant_text="ok", created_at=1.0) for n in range(20)])
archive = ArchiveStore(folder / "ctx_archive.db")
archive.record(session_id="s", user_id="", strategy="summarize",
               removed=[(0, {"role": "user", "content": "blue door"})])
(folder / "ready").touch()
time.sleep(60)
"""


@contextlib.contextmanager
def _fresh_stores_held_open(folder: Path) -> Iterator[None]:
    """A memory store and an archive in ``folder`` written and held open by another process (:data:`_HOLDER`: a
    gateway's first hours, everything in their -wal, the files alone holding no table), until the block ends."""
    import subprocess

    owner = subprocess.Popen([sys.executable, "-c", _HOLDER, str(folder)])
    try:
        deadline = time.monotonic() + 60
        while not (folder / "ready").exists():
            assert owner.poll() is None and time.monotonic() < deadline
            time.sleep(0.05)
        yield
    finally:
        owner.kill()
        owner.wait()


@contextlib.contextmanager
def _held_by_an_older_release(path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """``path`` held open by another process with writes in its -wal (an older release's gateway), and any private
    copy of it made for a read failing the test (an older layout is refused from the file)."""
    import subprocess

    holder = subprocess.Popen([sys.executable, "-c", "import sqlite3, sys, time\n"
                               "c = sqlite3.connect(sys.argv[1], isolation_level=None)\n"
                               "c.execute('PRAGMA journal_mode = WAL')\nc.execute('PRAGMA wal_autocheckpoint = 0')\n"
                               "c.execute('CREATE TABLE pad (x)')\nc.execute('INSERT INTO pad VALUES (1)')\n"
                               "print('ready', flush=True)\ntime.sleep(60)", str(path)],
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "ready\n"
        assert Path(f"{path}-wal").stat().st_size > 0  # the premise

        def copied(*_: Any) -> None:
            raise AssertionError("copied to be refused")

        monkeypatch.setattr(opening, "_copied", copied)
        yield
    finally:
        holder.kill()
        holder.communicate()


def test_a_store_its_owner_holds_open_and_has_not_checkpointed_yet_is_read(tmp_path: Path) -> None:
    """A gateway's first hours: its stores are open, everything written is in their -wal (fewer pages than a
    checkpoint waits for), the file alone holds no table. Another user's read said "schema version 0 ... open it once
    as a user who can write it" (a review); the file is read with its -wal (a private copy) then."""

    from hermes_ctx_plugins.storage.base import Scope
    from hermes_ctx_plugins.storage.sqlite.archive import ArchiveStore
    from hermes_ctx_plugins.storage.sqlite.memory import LocalStore

    with _fresh_stores_held_open(tmp_path):
        assert (tmp_path / "memory.db").stat().st_size <= 4096  # the premise: nothing checkpointed into the file
        memory = LocalStore(tmp_path / "memory.db", read_only=True)
        try:
            assert len(list(memory.memories())) == 20
        finally:
            memory.close()
        archive = ArchiveStore(tmp_path / "ctx_archive.db", read_only=True)
        try:
            hits = archive.search("blue door", Scope(session_id="", everything=True))
            assert len(hits) == 1, hits
        finally:
            archive.close()


_TURN_WRITER = """
import sys
from pathlib import Path
from hermes_ctx_plugins.storage.base import Record
from hermes_ctx_plugins.storage.sqlite.memory import LocalStore
store = LocalStore(Path(sys.argv[1]))
store.write([Record(key=sys.argv[2], kind="turn", namespace="", user_id="", chat_id="", session_id=sys.argv[2],
                    user_text="one more turn", assistant_text="ok", created_at=1.0)])
store.close()
"""


def test_memory_stats_of_a_store_a_process_writes_meanwhile_are_of_one_moment(tmp_path: Path) -> None:
    """``memory stats`` on the owner's own store while a gateway stores turns: its counts were five statements of
    their own, and a review saw 446 of 831 reads with more sessions than turns. One read transaction now."""
    import subprocess

    from hermes_ctx_plugins.storage.sqlite.memory import LocalStore

    path = tmp_path / "memory.db"
    for n in range(3):
        subprocess.run([sys.executable, "-c", _TURN_WRITER, str(path), f"s{n}"], check=True)
    store = LocalStore(path)
    fired: list[int] = []

    def gateway_writes(sql: str) -> None:
        if "DISTINCT session_id" in sql and not fired:  # between the turns' count and the sessions'
            fired.append(subprocess.run([sys.executable, "-c", _TURN_WRITER, str(path), "late"], check=True).returncode)

    try:
        store._conn.set_trace_callback(gateway_writes)
        stats = store.stats()
        store._conn.set_trace_callback(None)
        assert fired and stats["turns"] == stats["sessions"] == 3, stats
        assert store.stats()["turns"] == 4  # and the next read sees the gateway's turn
    finally:
        store.close()


def test_an_older_layout_is_refused_from_the_file_without_copying_it(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """A store of an older layout that its owner's (older) release holds open, its -wal holding writes: it was copied
    whole to the temporary folder to be refused (152 MB a command for a review's archive), and a folder too small for
    the copy changed the advice to "move it away to start a new one". Refused from the file, nothing copied."""
    import subprocess

    from hermes_ctx_plugins.storage.base import LocalStoreError
    from hermes_ctx_plugins.storage.sqlite.memory import LocalStore

    path = tmp_path / "memory.db"
    subprocess.run([sys.executable, "-c", _TURN_WRITER, str(path), "s0"], check=True)
    older = sqlite3.connect(path, isolation_level=None)
    older.execute("PRAGMA user_version = 3")
    older.close()
    with _held_by_an_older_release(path, monkeypatch):
        with pytest.raises(LocalStoreError) as refused:
            LocalStore(path, read_only=True)
        assert "schema version 3" in str(refused.value) and "open it once as a user who can write it" in str(
            refused.value)


def test_a_ctrl_c_while_a_fresh_stores_copy_is_first_read_leaves_no_copy(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """Another user's read of a store whose tables are still in its -wal goes through a private copy; its first read
    recovers that -wal (0.1-0.2 s for 80 MB), the likeliest moment for a Ctrl-C: the copy was left in the temporary
    folder, ~83 MB each time (a review: 8 of 48 interrupted reads). Memory and archive both."""

    from hermes_ctx_plugins.storage.sqlite import memory_schema
    from hermes_ctx_plugins.storage.sqlite.archive import ArchiveStore
    from hermes_ctx_plugins.storage.sqlite.memory import LocalStore

    home, temporary = tmp_path / "home", tmp_path / "tmp"
    home.mkdir()
    temporary.mkdir()
    with _fresh_stores_held_open(home):
        assert (home / "memory.db").stat().st_size <= 4096  # the premise: read through a copy
        monkeypatch.setattr(tempfile, "tempdir", str(temporary))
        versions = memory_schema._version

        def interrupted(conn: sqlite3.Connection, path: Path) -> int:
            if getattr(conn, "folder", None) is not None:  # the copy's first read
                assert list(temporary.iterdir()), "the premise: a copy was made"
                raise KeyboardInterrupt
            return versions(conn, path)

        monkeypatch.setattr(memory_schema, "_version", interrupted)
        with pytest.raises(KeyboardInterrupt):
            LocalStore(home / "memory.db", read_only=True)
        assert list(temporary.iterdir()) == []

        class Copy(opening._Snapshot):
            def execute(self, sql: str, *args: Any) -> sqlite3.Cursor:
                if sql == "PRAGMA user_version":
                    assert list(temporary.iterdir()), "the premise: a copy was made"
                    raise KeyboardInterrupt
                return super().execute(sql, *args)

        monkeypatch.setattr(opening, "_Snapshot", Copy)
        archive = ArchiveStore(home / "ctx_archive.db", read_only=True)  # (opened at its first read)
        with pytest.raises(KeyboardInterrupt):
            archive.stats()
        assert list(temporary.iterdir()) == []


def test_an_archive_of_the_first_layout_is_refused_from_the_file_without_copying_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The first layout is version 0 with its tables in the file (the same number as a fresh archive's file holding
    none yet): such an archive an older release holds open, its -wal holding writes, was still copied whole to be
    refused (101 MB for a review's), and a temporary folder too small for that said "move it away to start a new
    one". Refused from the file, nothing copied."""

    from test_archive_scope import first_layout_archive

    from hermes_ctx_plugins.storage.base import ArchiveError
    from hermes_ctx_plugins.storage.sqlite.archive import ArchiveStore

    path = tmp_path / "archive.db"
    first_layout_archive(path)
    with _held_by_an_older_release(path, monkeypatch):
        with pytest.raises(ArchiveError) as refused:
            ArchiveStore(path, read_only=True).stats()
        assert "layout 0, older" in str(refused.value) and "open it once as a user who can write it" in str(
            refused.value)


def test_a_copy_that_cannot_be_made_is_no_fault_of_the_store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A fresh store read by another user needs a private copy of its -wal; a temporary folder without room for it
    (a review: 83 MB into a 4 MB tmpfs) made the archive say "if it is damaged ... move it away to start a new one"
    of a healthy archive. Now: the store is fine, set TMPDIR (here a folder that cannot be made in)."""

    from hermes_ctx_plugins.storage.base import ArchiveError, LocalStoreError
    from hermes_ctx_plugins.storage.sqlite.archive import ArchiveStore
    from hermes_ctx_plugins.storage.sqlite.memory import LocalStore

    with _fresh_stores_held_open(tmp_path):
        assert (tmp_path / "memory.db").stat().st_size <= 4096  # the premise: read through a copy
        monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "no such folder"))
        with pytest.raises(LocalStoreError) as memory:
            LocalStore(tmp_path / "memory.db", read_only=True)
        with pytest.raises(ArchiveError) as archive:
            ArchiveStore(tmp_path / "ctx_archive.db", read_only=True).stats()
        for said in (str(memory.value), str(archive.value)):
            assert "set TMPDIR" in said and "no such folder" in said and "move it" not in said, said
            assert "damaged" not in said, said
    assert (tmp_path / "memory.db").exists() and (tmp_path / "ctx_archive.db").exists()

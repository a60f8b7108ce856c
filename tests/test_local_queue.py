"""The ctx-local write-behind queue with real processes: killed mid-drain, several at once, bad records."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hermes_ctx_plugins import SessionInfo, Turn
from hermes_ctx_plugins.memory.local import LocalProvider
from hermes_ctx_plugins.memory.local.queue import SUFFIX, inspect
from hermes_ctx_plugins.storage.sqlite import memory as store_module

# A child process that queues turns through the real provider. ``slow`` stretches each write transaction a
# little (the drain itself runs for real) so the parent can kill it while the drain is under way.
CHILD = textwrap.dedent("""
    import json, os, sys, time
    from pathlib import Path
    from hermes_ctx_plugins import SessionInfo, Turn
    from hermes_ctx_plugins.memory.local import LocalProvider
    from hermes_ctx_plugins.storage.sqlite import memory as store

    home, tag, count, slow, user = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3]), float(sys.argv[4]), sys.argv[5]
    if slow:
        write = store.LocalStore.write_rows
        def slow_write(self, rows, **kwargs):
            stored = write(self, rows, **kwargs)
            time.sleep(slow)
            return stored
        store.LocalStore.write_rows = slow_write
    provider = LocalProvider({"batch_size": 8}, hermes_home=home)
    session = SessionInfo(session_id=f"session-{tag}", user_id=user)
    provider.on_session_start(session)
    for n in range(count):
        provider.sync_turn(Turn(session=session, turn_number=n, user_text=f"{tag} turn {n} about kettles",
                                assistant_text=f"reply {n} for {tag}"))
        if n % 50 == 49 and tag.startswith("proc"):  # recall while others write: never another user's turns
            provider.flush(30)
            block = provider.prefetch("proc0 proc1 proc2 proc3 kettles", session=session)
            others = [f"proc{i} turn" for i in range(4) if i % 2 != int(tag[4:]) % 2]
            assert "kettles" in block and not any(other in block for other in others), block
    print("queued", flush=True)
    if sys.argv[6] == "hang":
        time.sleep(120)
    provider.shutdown()
    print(json.dumps({"pid": os.getpid()}), flush=True)
""")


def spawn(home: Path, tag: str, count: int, *, slow: float = 0.0, user: str = "alice",
          end: str = "shutdown") -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-c", CHILD, str(home), tag, str(count), str(slow), user, end],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def db(home: Path) -> Path:
    return home / "ctx-local" / "memory.db"


def count_rows(home: Path, sql: str = "SELECT count(*) FROM memories") -> int:
    if not db(home).exists():
        return 0
    conn = sqlite3.connect(f"file:{db(home)}?mode=ro", uri=True, timeout=5)
    try:
        return int(conn.execute(sql).fetchone()[0])
    except sqlite3.OperationalError:  # the schema is not there yet
        return 0
    finally:
        conn.close()


def check_exact(home: Path, expected: dict[str, int]) -> None:
    """Every queued turn is stored exactly once, and the index agrees with the table."""
    conn = sqlite3.connect(db(home))
    try:
        rows = conn.execute("SELECT session_id, user_text FROM memories").fetchall()
        conn.execute("INSERT INTO memories_fts (memories_fts) VALUES ('integrity-check')")
        indexed = conn.execute("SELECT count(*) FROM memories_fts WHERE memories_fts MATCH 'kettles'").fetchone()[0]
    finally:
        conn.close()
    texts = [text for _, text in rows]
    assert len(texts) == len(set(texts)), "a turn was stored twice"
    for tag, count in expected.items():
        assert {t for t in texts if t.startswith(f"{tag} ")} == {f"{tag} turn {n} about kettles" for n in range(count)}
    assert len(texts) == sum(expected.values()) == indexed


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "hermes"


@pytest.fixture
def fresh(home: Path) -> Iterator[Any]:
    """A provider in this process, the way the next hermes start would see the store."""
    providers: list[LocalProvider] = []

    def start(**options: Any) -> LocalProvider:
        provider = LocalProvider(options, hermes_home=home)
        providers.append(provider)
        provider.on_session_start(SessionInfo(session_id="next-start", user_id="alice"))
        return provider

    yield start
    for provider in providers:
        provider.shutdown()


def kill_mid_drain(process: subprocess.Popen[str], home: Path, total: int, at: float) -> int:
    """SIGKILL ``process`` once it has stored about ``at`` of ``total`` turns (never all of them), and
    only after it has accepted every one (sync_turn returned for each): a turn never accepted is
    not one the crash lost."""
    assert process.stdout is not None and process.stdout.readline() == "queued\n"
    deadline = time.monotonic() + 60
    while (stored := count_rows(home)) < total * at:
        assert process.poll() is None, process.communicate()
        assert time.monotonic() < deadline, "the drain never got going"
        time.sleep(0.005)
    os.kill(process.pid, signal.SIGKILL)
    process.communicate()
    left = count_rows(home)
    assert stored <= left < total, f"killed too late to test anything ({left} of {total} stored)"
    return left


@pytest.mark.parametrize("at", [0.1, 0.6])
def test_a_writer_killed_mid_drain_loses_and_duplicates_nothing(home: Path, fresh: Any, at: float) -> None:
    writer = spawn(home, "crash", 600, slow=0.03, end="hang")  # slow: still draining when it has queued all
    kill_mid_drain(writer, home, 600, at)
    [dead] = home.glob(f"ctx-local/memory.db.queue/*{SUFFIX}")  # left behind, still holding the rest
    provider = fresh()
    assert provider.flush(30)
    check_exact(home, {"crash": 600})
    assert not dead.exists(), "a replayed segment is deleted"


def test_a_replay_killed_midway_is_resumed_exactly(home: Path, fresh: Any) -> None:
    writer = spawn(home, "first", 400, slow=0.2, end="hang")  # slow: it cannot have stored most of them
    assert writer.stdout is not None and writer.stdout.readline() == "queued\n"
    os.kill(writer.pid, signal.SIGKILL)  # possibly before storing a single turn
    writer.communicate()
    replayer = spawn(home, "second", 0, slow=0.01, end="hang")  # replays "first", slowly, then gets killed
    kill_mid_drain(replayer, home, 400, 0.3)
    provider = fresh()
    assert provider.flush(30)
    check_exact(home, {"first": 400})


def test_several_processes_at_once_store_everything_exactly_once(home: Path, fresh: Any) -> None:
    writers = {f"proc{i}": spawn(home, f"proc{i}", 250, user=f"user{i % 2}") for i in range(4)}
    for tag, process in writers.items():
        out, err = process.communicate(timeout=90)
        assert process.returncode == 0, err
        assert out.startswith("queued\n"), (tag, out, err)
    check_exact(home, {tag: 250 for tag in writers})
    assert not list(home.glob(f"ctx-local/memory.db.queue/*{SUFFIX}")), "clean shutdowns leave no segment"
    provider = fresh()
    user0 = provider.prefetch("proc0 proc1 proc2 proc3 kettles", session=SessionInfo(session_id="x", user_id="user0"))
    assert "proc0" in user0 or "proc2" in user0
    assert "proc1" not in user0 and "proc3" not in user0


def test_a_record_that_keeps_failing_is_quarantined_not_dropped(
        home: Path, fresh: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    attempts: list[int] = []
    write = store_module.LocalStore.write_rows

    def picky_write(self: store_module.LocalStore, rows: Any, **kwargs: Any) -> int:
        if any("poison" in row[6] for row in rows):  # row[6]: the user's text
            attempts.append(len(rows))
            raise sqlite3.DataError("string or blob too big")  # what SQLite says about one oversized record
        return write(self, rows, **kwargs)

    monkeypatch.setattr(store_module.LocalStore, "write_rows", picky_write)
    provider = fresh(max_retries=3, retry_backoff_seconds=0.01)
    session = SessionInfo(session_id="s", user_id="alice")
    for n, text in enumerate(["fine kettles one", "poison kettles", "fine kettles two"]):
        provider.sync_turn(Turn(session=session, turn_number=n, user_text=text, assistant_text="ok"))
    assert provider.flush(10)
    assert attempts == [3, 1, 1, 1]  # the batch, then the bad record alone: three attempts
    assert count_rows(home) == 2
    [kept] = _quarantined(home)
    assert kept["attempts"] == 3 and kept["error"] == "DataError: string or blob too big"
    assert json.loads(kept["record"])["user_text"] == "poison kettles"


def test_transient_record_failures_are_retried_with_backoff(
        home: Path, fresh: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    failures = iter([ValueError("flaky")] * 3)
    times: list[float] = []
    write = store_module.LocalStore.write_rows

    def flaky_write(self: store_module.LocalStore, rows: Any, **kwargs: Any) -> int:
        times.append(time.monotonic())
        error = next(failures, None)
        if error is not None:
            raise error
        return write(self, rows, **kwargs)

    monkeypatch.setattr(store_module.LocalStore, "write_rows", flaky_write)
    provider = fresh(retry_backoff_seconds=0.1)
    session = SessionInfo(session_id="s")
    provider.sync_turn(Turn(session=session, turn_number=1, user_text="kettles", assistant_text="k"))
    assert provider.flush(10)
    assert count_rows(home) == 1 and _quarantined(home) == []
    # the batch, then the record alone: two failures, paused 0.1 s and 0.2 s, then stored
    assert len(times) == 4 and times[2] - times[1] >= 0.1 and times[3] - times[2] >= 0.2


def test_a_torn_or_garbled_record_left_by_a_dead_process_is_quarantined(home: Path, fresh: Any) -> None:
    writer = spawn(home, "torn", 3, end="hang")
    assert writer.stdout is not None and writer.stdout.readline() == "queued\n"
    os.kill(writer.pid, signal.SIGSTOP)  # freeze it so it cannot drain, then corrupt its segment as a crash might
    [segment] = home.glob(f"ctx-local/memory.db.queue/*{SUFFIX}")
    with segment.open("ab") as handle:
        handle.write(b'{"not a record": tru\n\xff\xfe binary junk\n{"key": "half a line')
    os.kill(writer.pid, signal.SIGKILL)
    writer.communicate()
    provider = fresh()
    assert provider.flush(10)
    check_exact(home, {"torn": 3})
    errors = [q["error"] for q in _quarantined(home)]
    assert len(errors) == 3 and errors[0].startswith("JSONDecodeError") and errors[1].startswith(
        "UnicodeDecodeError") and "incomplete record" in errors[2]
    assert not segment.exists()


def test_shutdown_is_bounded_and_what_is_left_is_replayed(home: Path, fresh: Any,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    write = store_module.LocalStore.write_rows

    def slow_write(self: store_module.LocalStore, rows: Any, **kwargs: Any) -> int:
        time.sleep(0.05)
        return write(self, rows, **kwargs)

    monkeypatch.setattr(store_module.LocalStore, "write_rows", slow_write)
    provider = fresh(drain_timeout_seconds=0.3, batch_size=4)
    session = SessionInfo(session_id="s", user_id="alice")
    for n in range(200):
        provider.sync_turn(Turn(session=session, turn_number=n, user_text=f"bounded turn {n} about kettles",
                                assistant_text="ok"))
    started = time.monotonic()
    provider.shutdown()
    assert time.monotonic() - started < 1.5
    stored = count_rows(home)
    assert 0 < stored < 200
    [state] = inspect(db(home).with_name("memory.db.queue"), _progress(home))
    assert state.waiting == 200 - stored and not state.live
    monkeypatch.setattr(store_module.LocalStore, "write_rows", write)
    assert fresh().flush(10)
    assert count_rows(home) == 200


def _quarantined(home: Path) -> list[dict[str, Any]]:
    conn = sqlite3.connect(db(home))
    conn.row_factory = sqlite3.Row
    try:
        return [dict(row) for row in conn.execute("SELECT * FROM quarantine ORDER BY id")]
    finally:
        conn.close()


def _progress(home: Path) -> dict[str, int]:
    conn = sqlite3.connect(db(home))
    try:
        return {segment: offset for segment, offset in conn.execute("SELECT segment, offset FROM queue_progress")}
    finally:
        conn.close()


def test_a_queue_that_could_not_start_says_why_each_time_and_memory_resumes_once_fixed(home: Path) -> None:
    """The queue's folder could not be written (here: a file stands where it goes; for an operator, a folder a first
    run as root left): the first turn failed saying why, every later one said "the ctx-local write queue is closed",
    and memory stayed off for the life of the process after the folder was fixed (a newcomer walk)."""
    from hermes_ctx_plugins.storage.queue import QueueClosedError

    provider = LocalProvider({}, hermes_home=home)
    try:
        provider.queue_dir.parent.mkdir(parents=True, exist_ok=True)
        provider.queue_dir.write_text("in the way")
        session = SessionInfo(session_id="s", user_id="alice")
        for attempt in range(2):
            with pytest.raises(OSError) as failed:
                provider.sync_turn(Turn(session=session, turn_number=attempt + 1, user_text=f"turn {attempt}",
                                        assistant_text="noted"))
            assert not isinstance(failed.value, QueueClosedError), failed.value
        provider.queue_dir.unlink()  # fixed
        provider.sync_turn(Turn(session=session, turn_number=3, user_text="the deploy port is 8443",
                                assistant_text="noted"))
        assert provider.flush(10)
        assert "8443" in provider.prefetch("which deploy port?", session=session)
    finally:
        provider.shutdown()

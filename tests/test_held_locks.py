"""A lock sidecar another process holds and never lets go (a process stopped while holding it, a backup tool): the
writes, turns and forgets that need it wait a bounded time, then fail naming the file -- they waited for ever, saying
nothing (a hostile-values pass) -- and nobody else's are held up."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from remote_helpers import quick_provider

from hermes_ctx_plugins import SessionInfo, Turn
from hermes_ctx_plugins.storage import documents, files
from hermes_ctx_plugins.testing import Mem0StubServer


@pytest.fixture
def hold() -> Iterator[Any]:
    """``hold(path)``: another process takes ``path``'s lock sidecar and keeps it until the test ends."""
    holders: list[subprocess.Popen[str]] = []

    def take(path: Path) -> None:
        sidecar = files.lock_path(path)
        sidecar.parent.mkdir(parents=True, exist_ok=True)
        holder = subprocess.Popen([sys.executable, "-c", "import fcntl, sys, time\nf = open(sys.argv[1], 'a')\n"
                                   "fcntl.flock(f, fcntl.LOCK_EX)\nprint('held', flush=True)\ntime.sleep(300)",
                                   str(sidecar)], stdout=subprocess.PIPE, text=True)
        holders.append(holder)
        assert holder.stdout is not None and holder.stdout.readline() == "held\n"

    yield take
    for holder in holders:
        holder.kill()
        holder.communicate()


def finished(work: Any, seconds: float = 60.0) -> Any:
    """``work()``'s result, run on a thread that must end within ``seconds`` (it waited for ever before)."""
    result: list[Any] = []
    raised: list[BaseException] = []

    def run() -> None:
        try:
            result.append(work())
        except BaseException as exc:  # raised again on the test's thread
            raised.append(exc)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), "still waiting for the lock"
    if raised:
        raise raised[0]
    return result[0] if result else None


def _take(path: Path, timeout: float) -> None:
    with files.locked(path, timeout=timeout):
        pass


@pytest.mark.skipif(sys.platform == "win32", reason="the holder uses fcntl")
def test_a_lock_held_past_the_timeout_fails_naming_its_file(tmp_path: Path, hold: Any) -> None:
    path = tmp_path / "USER.md"
    with files.locked(path, timeout=0.2):  # free: taken at once
        pass
    hold(path)
    with pytest.raises(files.FileUnavailable) as raised:
        finished(lambda: _take(path, 0.2))
    assert f"cannot lock {files.lock_path(path)}: another process has held it for 0.2 s" in str(raised.value)


def test_a_held_memory_file_lock_fails_that_users_writes_and_forget_alone(
        tmp_path: Path, hold: Any, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    from hermes_ctx_plugins import load_host
    from hermes_ctx_plugins.cli import main

    monkeypatch.setattr(documents, "DOCUMENT_LOCK_SECONDS", 0.3)
    home = tmp_path / "home"
    monkeypatch.setenv("HERMES_HOME", str(home))
    home.mkdir()
    (home / "config.yaml").write_text("ctx_plugins:\n  memory: {providers: [file]}\n  deployments: {d: {}}\n")
    host = load_host(deployment="d")
    file = host.memory_providers[0]
    sessions = {user: host.session_start(SessionInfo(session_id=f"s-{user}", user_id=user)) or host.session(
        f"s-{user}") for user in ("alice", "bob")}

    def add(user: str, text: str) -> dict[str, Any]:
        return dict(json.loads(file.handle_tool_call("memory", {"target": "user", "action": "add", "content": text},
                                                     session=sessions[user])))

    assert add("alice", "alice likes tea")["success"] and add("bob", "bob likes coffee")["success"]
    hold(home / "memories" / "scoped" / "dd" / "ualice" / "USER.md")
    answer = finished(lambda: add("alice", "alice likes cake"))
    assert not answer["success"] and "another process has held it" in json.dumps(answer), answer
    assert add("bob", "bob likes biscuits")["success"]  # another user's writes go on
    host.shutdown()
    code = finished(lambda: main(["forget", "--user", "alice", "-y"]))
    out = capsys.readouterr().out
    assert code == 1 and "FAILED" in out and "USER.md.lock" in out, out
    assert main(["forget", "--user", "bob", "-y"]) == 0  # the control: bob's forget is not held up
    assert not (home / "memories" / "scoped" / "dd" / "ubob").exists()


def test_a_held_namespaces_note_lock_holds_no_write_to_a_memory_service(
        tmp_path: Path, hold: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every process's first write notes the namespaces it writes under, holding that note's lock: held by another
    process, the turn waited for ever (each process, every deployment). Now the write is queued and sent, the note
    tried again later."""
    from hermes_ctx_plugins.memory.remote import base

    monkeypatch.setattr(base, "NOTE_LOCK_SECONDS", 0.2)
    with Mem0StubServer() as mem0:
        provider = quick_provider(mem0, tmp_path)
        hold(provider.state_dir / "namespaces.json")
        session = SessionInfo(session_id="s", user_id="bob")
        finished(lambda: provider.sync_turn(Turn(session=session, turn_number=1,
                                                 user_text="my boat is called KESTREL5", assistant_text="noted")))
        assert provider.flush(10)
        assert "KESTREL5" in json.dumps(mem0.memories)
        provider.shutdown()

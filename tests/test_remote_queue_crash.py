"""ctx-mem0's durable write queue against the loopback Mem0 service: a write accepted by ``sync_turn``
survives the process being killed (a real process, SIGKILLed) and reaches the service once after the
next start; and forgetting a user while her writes are being queued and sent — or taken over from a
killed process, or delivered by a shutdown — lets none of them through afterwards.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from remote_helpers import MEM0_KEY, no_lingering_threads, provider_factory, turn

from hermes_ctx_plugins import SessionInfo
from hermes_ctx_plugins.memory.remote.mem0 import Mem0Provider
from hermes_ctx_plugins.scope import service_id
from hermes_ctx_plugins.testing import Mem0StubServer, Reply, ServiceRequest, wait_until

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")

ALICE = SessionInfo(session_id="s-alice", user_id="alice")
BOB = SessionInfo(session_id="s-bob", user_id="bob")

# A process of its own: ``delivered`` turns sent while the service is up (it waits until they are),
# then, once the parent has stopped the service, ``accepted`` more that sync_turn takes but cannot send.
CHILD = textwrap.dedent("""
    import sys, time
    from pathlib import Path
    from hermes_ctx_plugins import SessionInfo, Turn
    from hermes_ctx_plugins.memory.remote.mem0 import Mem0Provider
    from hermes_ctx_plugins.testing import loopback_only

    home, url, delivered, accepted = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    with loopback_only():
        provider = Mem0Provider({"api_key": sys.argv[5], "host": url, "timeout": 1, "infer": False,
                                 "failure_threshold": 1, "cooldown_seconds": 600}, hermes_home=home)
        session = SessionInfo("s-alice", user_id="alice")
        for n in range(delivered):
            provider.sync_turn(Turn(session, n, f"delivered fact {n}", "ok"))
        if delivered:
            assert provider.flush(30)
            print("delivered", flush=True)
            sys.stdin.readline()  # the parent stops the service
        for n in range(accepted):
            provider.sync_turn(Turn(session, delivered + n, f"accepted fact {n}", "ok"))
        print("accepted", flush=True)
        time.sleep(3600)
""")


# A process that syncs alice's turn, then bob's, while the service is down, and is killed.
DYING = textwrap.dedent("""
    import os, sys
    from pathlib import Path
    from hermes_ctx_plugins import SessionInfo, Turn
    from hermes_ctx_plugins.memory.remote.mem0 import Mem0Provider
    from hermes_ctx_plugins.testing import loopback_only

    with loopback_only():
        provider = Mem0Provider({"api_key": sys.argv[3], "host": sys.argv[2], "timeout": 1, "infer": False,
                                 "failure_threshold": 1, "cooldown_seconds": 600}, hermes_home=Path(sys.argv[1]))
        for user, text in (("alice", "alice's plan"), ("bob", "bob's secret")):
            provider.sync_turn(Turn(SessionInfo(f"s-{user}", user_id=user), 1, text, "ok"))
        os._exit(9)
""")


class HeldMem0(Mem0StubServer):
    """Mem0 holding the add of alice's plan until ``release`` is set: her write stays on its way."""

    def __init__(self) -> None:
        super().__init__()
        self.release = threading.Event()

    def handle(self, request: ServiceRequest) -> Reply:
        if request.path.startswith("/v3/memories/add") and "alice's plan" in json.dumps(request.body):
            assert self.release.wait(30)
        return super().handle(request)


def queue_files(home: Path) -> bytes:
    """Everything ctx-mem0's queue keeps on disk (segments, progress, the backlog)."""
    state = home / "ctx_plugins" / "ctx-mem0"
    return b"".join(path.read_bytes() for path in state.rglob("*") if path.is_file())


class SlowMem0(Mem0StubServer):
    """Mem0 taking a while over each add, so writes queue up and one is always on its way."""

    def handle(self, request: ServiceRequest) -> Reply:
        if request.path.startswith("/v3/memories/add"):
            time.sleep(0.02)
        return super().handle(request)


@pytest.fixture(autouse=True)
def _no_lingering_threads() -> Iterator[None]:
    yield from no_lingering_threads("ctx-mem0")


@pytest.fixture
def make(tmp_path: Path) -> Iterator[Callable[..., Mem0Provider]]:
    yield from provider_factory(Mem0Provider, tmp_path, lambda host: {"api_key": MEM0_KEY, "host": host})


def sent_texts(stub: Mem0StubServer) -> list[str]:
    """The user message of every add request the service received, in order."""
    return [request.body["messages"][0]["content"] for request in stub.add_requests]


def run_and_kill(home: Path, stub: Mem0StubServer, *, delivered: int, accepted: int) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEM0_")}
    child = subprocess.Popen([sys.executable, "-c", CHILD, str(home), stub.base_url, str(delivered), str(accepted),
                              MEM0_KEY], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True, env=env)
    assert child.stdout is not None and child.stdin is not None
    try:
        if delivered:
            assert child.stdout.readline() == "delivered\n", child.stderr.read() if child.stderr else ""
            stub.stop()
            child.stdin.write("go\n")
            child.stdin.flush()
        else:
            stub.stop()
        assert child.stdout.readline() == "accepted\n", "sync_turn returned for every turn"
    finally:
        os.kill(child.pid, signal.SIGKILL)
        child.communicate()
    stub.start()


@pytest.mark.parametrize("delivered", [0, 5])
def test_writes_accepted_by_a_killed_process_reach_the_service_once_after_the_next_start(
        make: Callable[..., Mem0Provider], mem0: Mem0StubServer, tmp_path: Path, delivered: int) -> None:
    accepted = 12
    run_and_kill(tmp_path / "hermes", mem0, delivered=delivered, accepted=accepted)
    assert sent_texts(mem0) == [f"delivered fact {n}" for n in range(delivered)], \
        "the killed process sent only what it delivered before the service stopped"

    later = make(mem0.base_url, infer=False)
    [dead] = (tmp_path / "hermes" / "ctx_plugins" / "ctx-mem0" / "queue").glob("*.seg")
    assert later.spooled() == accepted, "its segment holds every accepted write, past what it delivered"
    later.on_session_start(ALICE)  # the next start takes the dead process's segment over
    expected = [f"delivered fact {n}" for n in range(delivered)] + [f"accepted fact {n}" for n in range(accepted)]
    assert wait_until(lambda: len(sent_texts(mem0)) == len(expected), 30)
    assert later.flush(10)
    assert sent_texts(mem0) == expected, "each write once, in order: the delivered ones are not sent again"
    assert sorted(mem0.memories_of(user_id=service_id("", "alice"))) == sorted(expected + ["ok"] * len(expected))
    assert later.spooled() == 0 and not dead.exists(), "taken over, then deleted"


def test_forget_racing_the_queue_lets_none_of_the_forgotten_writes_through(
        make: Callable[..., Mem0Provider]) -> None:
    """alice's and bob's turns are synced by another thread while the service answers slowly (so
    writes queue up and one is always on its way); alice is forgotten midway. None of her writes
    accepted before forget began reaches the service after it returned, nor stays there; every one
    of bob's arrives exactly once; hers synced after forgetting are kept."""
    with SlowMem0() as mem0:
        check_forget_racing_the_queue(make(mem0.base_url, infer=False, timeout=5.0), mem0)


def check_forget_racing_the_queue(provider: Mem0Provider, mem0: Mem0StubServer) -> None:
    forgetting, forgotten = threading.Event(), threading.Event()
    before: list[str] = []
    after: list[str] = []
    bobs: list[str] = []

    def sync() -> None:
        for n in range(60):
            session = ALICE if n % 2 else BOB
            text = f"{session.user_id} fact {n}"
            done = forgotten.is_set()
            provider.sync_turn(turn(session, text))
            if session is BOB:
                bobs.append(text)
            elif done:
                after.append(text)
            elif not forgetting.is_set():
                before.append(text)

    thread = threading.Thread(target=sync)
    thread.start()
    assert wait_until(lambda: len(mem0.add_requests) >= 6, 10), "writes are being sent"
    forgetting.set()
    queue, service = provider.forget_user("alice", namespaces=[""])
    received = len(mem0.add_requests)
    forgotten.set()
    thread.join(30)
    assert provider.flush(30)

    assert queue.ok and service.ok, (queue, service)
    late = set(sent_texts(mem0)[received:]) & set(before)
    assert not late, f"forgotten writes sent after forget returned: {sorted(late)}"
    alices = set(mem0.memories_of(user_id=service_id("", "alice")))
    assert not alices & set(before), "none of hers from before stays at the service"
    assert set(after) <= alices, "what she says after being forgotten is kept"
    sent = sent_texts(mem0)
    assert sorted(text for text in sent if text.startswith("bob")) == sorted(bobs), "bob's: all, each once"


def test_forget_while_a_killed_process_writes_are_taken_over_lets_none_of_them_through(
        make: Callable[..., Mem0Provider], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The next start is reading the segment a killed process left (alice's write, then bob's) when
    bob is forgotten: forget_user must find his write where the take-over puts it. Alice's is on its
    way meanwhile (the service holds it), so bob's is never in hand: it must never be sent."""
    home = tmp_path / "hermes"
    with HeldMem0() as mem0:
        mem0.stop()
        env = {k: v for k, v in os.environ.items() if not k.startswith("MEM0_")}
        died = subprocess.run([sys.executable, "-c", DYING, str(home), mem0.base_url, MEM0_KEY],
                              capture_output=True, text=True, env=env, timeout=60)
        assert died.returncode == 9, died.stderr
        mem0.start()
        assert b"bob's secret" in queue_files(home), "the premise: the killed process left his write on disk"

        reading, read = threading.Event(), threading.Event()
        real_pread = os.pread

        def pread(fd: int, length: int, offset: int) -> bytes:
            # the take-over runs where the queue starts (before its first record: the writes stay in order), or on
            # the writer thread when that failed
            if threading.current_thread().name in ("starting", "ctx-mem0-writer") and not reading.is_set():
                reading.set()  # the take-over holds the dead segment and reads it ...
                assert read.wait(30)  # ... for as long as the test says
            return real_pread(fd, length, offset)

        monkeypatch.setattr(os, "pread", pread)
        later = make(mem0.base_url, infer=False, timeout=30.0)
        starting = threading.Thread(target=later.on_session_start, args=(ALICE,), name="starting")
        starting.start()
        assert reading.wait(30), "the next start is taking the killed process's segment over"
        report: list[Any] = []
        forgetting = threading.Thread(target=lambda: report.extend(later.forget_user("bob", namespaces=[""])))
        forgetting.start()
        # Without the fix forget_user returns at once, before the writes reach the queue; with it, it waits
        # for the take-over, which goes on when the read is let through (how long this join lasts only
        # decides whether a broken forget is caught, never whether a correct one passes).
        forgetting.join(1.0)
        read.set()
        forgetting.join(30)
        starting.join(30)
        disk = queue_files(home)
        mem0.release.set()
        assert later.flush(30)

        assert sent_texts(mem0) == ["alice's plan"], "bob's write never sent; alice's sent, once"
        assert b"bob's secret" not in disk, "nor left on disk when forget_user returned"
        queue, service = report
        assert queue.ok and queue.removed == 1 and service.ok, report
        assert mem0.memories_of(user_id=service_id("", "alice")), "alice's memory is stored"


def test_forget_during_a_shutdown_still_delivering_lets_none_of_the_forgotten_writes_through(
        make: Callable[..., Mem0Provider], tmp_path: Path) -> None:
    """A shutdown waits (up to flush_timeout) for the queue to deliver alice's write — the service holds
    it — with bob's behind it; bob is forgotten meanwhile. His write must be neither sent nor handed
    over to the backlog; alice's is delivered."""
    home = tmp_path / "hermes"
    with HeldMem0() as mem0:
        provider = make(mem0.base_url, infer=False, timeout=30.0, flush_timeout=30.0)
        provider.sync_turn(turn(ALICE, "alice's plan"))
        assert wait_until(lambda: sent_texts(mem0) == ["alice's plan"], 10), "her write is on its way"
        provider.sync_turn(turn(BOB, "bob's secret"))
        closing = threading.Thread(target=provider.shutdown)
        closing.start()
        assert wait_until(lambda: provider.queued == 0, 10), "the shutdown took the queue, still delivering"
        queue, service = provider.forget_user("bob", namespaces=[""])
        disk = queue_files(home)
        mem0.release.set()
        closing.join(30)

        assert sent_texts(mem0) == ["alice's plan"], "bob's write never sent; alice's delivered"
        assert b"bob's secret" not in disk + queue_files(home), "nor kept on disk for the next start"
        assert queue.ok and queue.removed == 1 and service.ok, (queue, service)
        assert mem0.memories_of(user_id=service_id("", "alice")), "alice's memory is stored"

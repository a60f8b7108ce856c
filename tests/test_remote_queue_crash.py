"""ctx-mem0's durable write queue against the loopback Mem0 service: a write accepted by ``sync_turn``
survives the process being killed (a real process, SIGKILLed) and reaches the service once after the
next start; and forgetting a user while her writes are being queued and sent lets none of them
through afterwards.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

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

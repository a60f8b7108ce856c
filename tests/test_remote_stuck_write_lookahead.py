"""The write queue and a write the service keeps failing, further cases (a second red-team pass on cbb49fa).

* The writer's calls made past the breaker's gate (a stuck write tried quietly, the write behind it) close the
  breaker when they succeed: that is a recovery, reported as one. Before, the breaker closed silently: "resumed"
  was never reported, and the next outage was not reported either (the provider believed the user knew).
* A forget of the owner of the write being sent ahead of a stuck one waits for it (as for the write being
  delivered): before, it neither took it out nor waited, deleted at the service, and the write landed after.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest
from remote_helpers import MEM0_KEY, turn

from hermes_ctx_plugins import SessionInfo
from hermes_ctx_plugins.isolation import FaultIsolator, StatusEvent
from hermes_ctx_plugins.memory.remote import queue as remote_queue
from hermes_ctx_plugins.memory.remote.mem0 import Mem0Provider
from hermes_ctx_plugins.testing import Mem0StubServer, wait_until
from hermes_ctx_plugins.testing.server import Reply, ServiceRequest

ALICE = SessionInfo(session_id="s1", user_id="alice")
BOB = SessionInfo(session_id="s2", user_id="bob")
POISON, BOB_TEXT = "POISONED-TEXT-91f3", "bob private fact zebra"


def test_a_success_past_the_gate_while_suspended_is_reported_as_a_recovery() -> None:
    events: list[StatusEvent] = []
    breaker = FaultIsolator(threshold=2, cooldown=60, on_event=events.append)
    for _ in range(2):
        breaker.record_failure("svc", RuntimeError("down"))
    assert not breaker.admit("svc")
    breaker.record_success("svc")  # a call made past the gate (no probe) succeeded
    assert breaker.admit("svc")
    assert [e.kind for e in events] == ["suspended", "resumed"]


def test_an_outage_ended_by_the_write_queue_is_reported_back_and_the_next_one_too(tmp_path: Path) -> None:
    kinds: list[str] = []
    with Mem0StubServer(api_keys=(MEM0_KEY,)) as stub:
        provider = Mem0Provider({"api_key": MEM0_KEY, "host": stub.base_url, "infer": False, "timeout": 0.5,
                                 "failure_threshold": 3, "cooldown_seconds": 30.0, "prefetch_wait": 1.0},
                                hermes_home=tmp_path / "hermes")
        provider.status_callback = lambda event: kinds.append(event.kind)
        stub.fail(503, times=10**6)
        provider.sync_turn(turn(ALICE, "first fact plum"))
        provider.sync_turn(turn(ALICE, "second fact pear"))
        assert wait_until(lambda: "unavailable" in kinds, 10)
        time.sleep(4)  # the first write is stuck by now: tried past the breaker's gate
        stub.clear_faults()
        assert wait_until(lambda: "pear" in str(stub.memories), 30)  # long before the 30 s cool-down ends
        assert wait_until(lambda: "resumed" in kinds, 2), kinds
        stub.fail(503, times=10**6)
        for _ in range(3):
            provider.prefetch("plum", session=ALICE)
        # a prefetch answers after prefetch_wait at most; on a loaded machine its failure is counted after that,
        # when the request ends (a CI run under load saw the third one counted after the check)
        assert wait_until(lambda: len(kinds) >= 3, 5)
        assert kinds == ["unavailable", "resumed", "unavailable"]
        provider.shutdown()


class _SlowForBob(Mem0StubServer):
    arrived = threading.Event()

    def handle(self, request: ServiceRequest) -> Reply:
        if request.method == "POST" and POISON.encode() in request.raw:
            return Reply(403, self.error_body(403, "blocked by policy"))
        if request.method == "POST" and BOB_TEXT.encode() in request.raw:
            self.arrived.set()
            time.sleep(1.0)
        return super().handle(request)


def test_a_forget_waits_for_its_owners_write_being_sent_ahead_of_a_stuck_one(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(remote_queue, "STUCK_FOR", 0.0)
    monkeypatch.setattr(remote_queue, "STUCK_AFTER", 2)
    with _SlowForBob(api_keys=(MEM0_KEY,)) as stub:
        provider = Mem0Provider({"api_key": MEM0_KEY, "host": stub.base_url, "infer": False, "timeout": 5,
                                 "tool_wait": 5}, hermes_home=tmp_path / "hermes")
        provider.sync_turn(turn(ALICE, f"alice note {POISON}"))
        provider.sync_turn(turn(BOB, BOB_TEXT))
        assert stub.arrived.wait(20)
        report = provider.forget_user("bob")
        assert all(not entry.error for entry in report), report
        time.sleep(1.5)  # the write sent ahead has long been answered
        assert BOB_TEXT not in str(stub.memories)
        provider.shutdown()


class _PoisonThenInvalid(Mem0StubServer):
    def handle(self, request: ServiceRequest) -> Reply:
        if request.method == "POST" and POISON.encode() in request.raw:
            return Reply(403, self.error_body(403, "blocked by policy"))
        if request.method == "POST" and b"INVALID-FOR-THE-SERVICE" in request.raw:
            return Reply(400, self.error_body(400, "invalid message"))
        return super().handle(request)


def test_a_write_behind_refused_as_invalid_shows_the_service_works(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Before, the 400 of the write behind was taken for an outage: both held every later write for ever."""
    monkeypatch.setattr(remote_queue, "STUCK_FOR", 0.0)
    monkeypatch.setattr(remote_queue, "STUCK_AFTER", 2)
    with _PoisonThenInvalid(api_keys=(MEM0_KEY,)) as stub:
        provider = Mem0Provider({"api_key": MEM0_KEY, "host": stub.base_url, "infer": False, "timeout": 2},
                                hermes_home=tmp_path / "hermes")
        provider.sync_turn(turn(ALICE, f"alice {POISON}"))
        provider.sync_turn(turn(ALICE, "alice INVALID-FOR-THE-SERVICE"))
        for n in range(3):
            provider.sync_turn(turn(BOB, f"ordinary fact number {n} kiwi"))
        assert wait_until(lambda: all(f"number {n}" in str(stub.memories) for n in range(3)), 15), provider.stats
        assert provider.stats.set_aside >= 1 and provider.stats.rejected == 1
        provider.shutdown()


class _Firewall(Mem0StubServer):
    def handle(self, request: ServiceRequest) -> Reply:
        if request.method == "POST" and POISON.encode() in request.raw:
            return Reply(403, self.error_body(403, "blocked by policy"))
        return super().handle(request)


def test_two_refused_writes_in_a_row_are_not_an_outage(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A user sends the text a firewall refused again: before, the write behind the stuck one failed too, so the
    queue took it for an outage: every user's later writes waited for ever and the breaker stayed open."""
    monkeypatch.setattr(remote_queue, "STUCK_FOR", 0.0)
    monkeypatch.setattr(remote_queue, "STUCK_AFTER", 2)
    with _Firewall(api_keys=(MEM0_KEY,)) as stub:
        provider = Mem0Provider({"api_key": MEM0_KEY, "host": stub.base_url, "infer": False, "timeout": 2,
                                 "failure_threshold": 5, "cooldown_seconds": 30}, hermes_home=tmp_path / "hermes")
        provider.sync_turn(turn(ALICE, f"remember {POISON}"))
        provider.sync_turn(turn(ALICE, f"remember {POISON}", assistant="sorry, again?"))
        for n in range(3):
            provider.sync_turn(turn(BOB, f"ordinary fact number {n} kiwi"))
        assert wait_until(lambda: all(f"number {n}" in str(stub.memories) for n in range(3)), 20), provider.stats
        assert not provider.breaker.status(provider.name).startswith("suspended")
        assert provider.stats.set_aside >= 2 and provider.stats.rejected == 0
        texts = [m["memory"] for m in stub.memories]
        assert all(texts.count(f"ordinary fact number {n} kiwi") == 1 for n in range(3)), texts  # each sent once
        provider.shutdown()

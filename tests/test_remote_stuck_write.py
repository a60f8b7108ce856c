"""One write the memory service keeps failing (a 403 from a firewall that dislikes its text, a 500 from the one
shard it goes to) while it takes the others.

Before, such a write led the queue for ever: every later write of every user waited behind it, its failures
opened the breaker, and recall stopped for everyone too, until 1,000 writes piled up and the oldest were dropped.
Now, once stuck, the write behind it is tried: taken, the stuck one is set aside in ``queue.jsonl`` (never
dropped) and sent again behind the others; refused too, the service is down: an outage as before, order kept.
A forget of the owner during all this is never undone (a red-team pass: the write came back after the forget).
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from remote_helpers import quick_provider as build
from remote_helpers import running_stub, turn
from remote_helpers import stored_at as stored

from hermes_ctx_plugins import SessionInfo
from hermes_ctx_plugins.memory.remote import queue as remote_queue
from hermes_ctx_plugins.storage import queue as durable_queue
from hermes_ctx_plugins.testing import wait_until
from hermes_ctx_plugins.testing.server import Reply, ServiceRequest

ALICE = SessionInfo(session_id="s1", user_id="alice")
BOB = SessionInfo(session_id="s2", user_id="bob")
POISON = "POISONED-TEXT-91f3"


class Refusing:
    """A stub refusing with ``status`` every write whose body holds :data:`POISON`, while ``refusing`` (after
    ``hang`` seconds: past the client's timeout, a write that hangs)."""

    status = 403
    refusing = True
    hang = 0.0
    poison_posts = 0

    def handle(self, request: ServiceRequest) -> Reply:
        if self.refusing and request.method == "POST" and POISON.encode() in request.raw:
            self.poison_posts += 1
            time.sleep(self.hang)
            return Reply(self.status, self.error_body(self.status, "blocked by policy"))  # type: ignore[attr-defined]
        return super().handle(request)  # type: ignore[misc]



@pytest.fixture(params=["ctx-mem0", "ctx-honcho"])
def service(request: pytest.FixtureRequest) -> Iterator[Any]:
    yield from running_stub(request.param, Refusing)


@pytest.fixture(autouse=True)
def _quick(monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest) -> None:
    monkeypatch.setattr(durable_queue, "RESCAN_SECONDS", 0.5)  # a queue looks for set-aside writes twice a second
    if "blip" not in request.node.name:
        monkeypatch.setattr(remote_queue, "STUCK_FOR", 0.0)  # stuck once it failed twice
        monkeypatch.setattr(remote_queue, "STUCK_AFTER", 2)


@pytest.mark.parametrize(("service", "status"), [("ctx-mem0", 403), ("ctx-honcho", 500)], indirect=["service"])
def test_a_write_the_service_keeps_failing_does_not_hold_up_the_others_nor_recall(
        service: Any, tmp_path: Path, status: int) -> None:
    service.status = status
    # an opened breaker would stop recall for 30 s
    provider = build(service, tmp_path, cooldown_seconds=30, failure_threshold=5)
    provider.sync_turn(turn(ALICE, f"my note {POISON}"))
    for n in range(5):
        provider.sync_turn(turn(BOB if n % 2 else ALICE, f"ordinary fact number {n} kiwi"))
    assert wait_until(lambda: all(f"number {n}" in stored(service) for n in range(5)), 10), stored(service)
    assert POISON not in stored(service)
    # set aside on the disk, or already taken back into the queue
    assert (provider.backlog.exists() and POISON in provider.backlog.read_text()) or provider.queued
    assert provider.stats.set_aside >= 1 and provider.stats.rejected == 0
    assert not provider.breaker.status(provider.name).startswith("suspended")
    assert "kiwi" in provider.prefetch("kiwi", session=ALICE)  # recall is up
    service.refusing = False  # the firewall rule is lifted: the write set aside arrives, after the others
    assert wait_until(lambda: POISON in stored(service), 10)
    assert stored(service).index("number 4") < stored(service).index(POISON)
    assert provider.stats.dropped == 0 and provider.stats.rejected == 0
    provider.shutdown()


@pytest.mark.parametrize("service", ["ctx-mem0"], indirect=True)  # the queue is the same for both
def test_a_service_that_does_not_answer_at_all_is_an_outage_and_keeps_the_order(
        service: Any, tmp_path: Path) -> None:
    """Everything fails (the ping too): nothing is set aside, writes wait in order and arrive in order."""
    provider = build(service, tmp_path, cooldown_seconds=1.0)  # retries 1 s apart once stuck
    service.fail(503, times=10**6)
    provider.sync_turn(turn(ALICE, "first fact plum"))
    provider.sync_turn(turn(ALICE, "second fact pear"))
    assert wait_until(lambda: len(service.requests) >= 7, 15)
    time.sleep(0.3)  # the service comes back between two tries (not between a stuck write and the one behind)
    assert provider.stats.set_aside == 0 and not provider.backlog.exists()
    service.clear_faults()
    assert wait_until(lambda: "pear" in stored(service), 10)
    assert stored(service).index("plum") < stored(service).index("pear"), (stored(service), provider.stats)
    provider.shutdown()


@pytest.mark.parametrize("service", ["ctx-honcho"], indirect=True)  # the queue is the same for both
def test_a_write_path_down_while_reads_work_is_an_outage_and_keeps_the_order(service: Any, tmp_path: Path) -> None:
    """Every write fails (the write behind a stuck one too), reads work: the service's write path is down, not one
    write: nothing is set aside, the writes wait and arrive in order; recall stays up meanwhile."""
    service.status, service.refusing = 500, True
    provider = build(service, tmp_path, cooldown_seconds=1, failure_threshold=5)
    for n in range(4):
        provider.sync_turn(turn(ALICE, f"{POISON} kiwi {n}"))
    assert wait_until(lambda: service.poison_posts >= 6, 20)  # stuck after 2, then it and the writes behind
    assert provider.stats.set_aside == 0
    assert "kiwi" not in provider.prefetch("kiwi", session=ALICE)  # (nothing stored yet: recall answered empty)
    service.refusing = False
    assert wait_until(lambda: "kiwi 3" in stored(service), 40)
    assert [stored(service).index(f"kiwi {n}") for n in range(4)] == sorted(
        stored(service).index(f"kiwi {n}") for n in range(4))
    provider.shutdown()
    assert provider.stats.dropped == 0 and provider.stats.rejected == 0


@pytest.mark.parametrize("service", ["ctx-honcho"], indirect=True)  # the queue is the same for both
def test_a_write_set_aside_for_a_day_that_still_fails_is_dropped_and_counted(
        service: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(remote_queue, "PARK_FOR", 0.0)  # every set-aside is already a day old
    provider = build(service, tmp_path)
    provider.sync_turn(turn(ALICE, f"note {POISON}"))
    provider.sync_turn(turn(ALICE, "after it fig"))
    assert wait_until(lambda: "fig" in stored(service), 10)
    assert wait_until(lambda: provider.stats.rejected == 1, 5)
    assert provider.stats.set_aside == 0 and POISON not in stored(service)
    provider.shutdown()


@pytest.mark.parametrize("service", ["ctx-mem0"], indirect=True)  # the queue is the same for both
def test_a_blip_of_the_write_path_keeps_the_order(service: Any, tmp_path: Path) -> None:
    """Writes fail three times while the service answers, then work: a brief failure, not a bad write
    (under ``STUCK_FOR``): nothing set aside, the order kept."""
    provider = build(service, tmp_path)
    service.fail(500, times=3, path="add|messages")
    provider.sync_turn(turn(ALICE, "first fact plum"))
    provider.sync_turn(turn(ALICE, "second fact pear"))
    assert wait_until(lambda: "pear" in stored(service), 10)
    assert stored(service).index("plum") < stored(service).index("pear")
    assert provider.stats.set_aside == 0
    provider.shutdown()


@pytest.mark.parametrize("service", ["ctx-honcho"], indirect=True)  # the queue is the same for both
def test_a_lone_stuck_write_does_not_open_the_breaker(service: Any, tmp_path: Path) -> None:
    """No write behind it: it holds nobody up, is tried again every LONE_RETRY seconds quietly, and recall stays up
    (its failures opened the breaker, for 120 s, before)."""
    provider = build(service, tmp_path, failure_threshold=5, cooldown_seconds=30)
    provider.sync_turn(turn(ALICE, f"note {POISON}"))
    assert wait_until(lambda: service.poison_posts >= 3, 15)  # failed twice, then once quietly
    time.sleep(1.0)
    assert not provider.breaker.status(provider.name).startswith("suspended")
    provider.sync_turn(turn(BOB, "a later fact fig"))  # a write behind it now: the stuck one is set aside
    assert wait_until(lambda: "fig" in stored(service) and provider.stats.set_aside == 1, 10)
    provider.shutdown()


@pytest.mark.parametrize("service", ["ctx-honcho"], indirect=True)  # the queue is the same for both
def test_a_write_set_aside_is_not_counted_as_sent(service: Any, tmp_path: Path) -> None:
    provider = build(service, tmp_path, failure_threshold=5)
    provider.sync_turn(turn(ALICE, f"note {POISON}"))
    provider.sync_turn(turn(BOB, "a later fact fig"))
    assert wait_until(lambda: provider.stats.set_aside >= 1 and provider.stats.sent == 1, 10)
    assert provider.status()["sent"] == 1 and stored(service).count("fig") == 1  # the write behind it, once
    provider.shutdown()


@pytest.mark.parametrize("service", ["ctx-mem0"], indirect=True)  # the queue is the same for both
def test_a_forget_while_the_users_write_is_being_set_aside_does_not_bring_it_back(
        service: Any, tmp_path: Path) -> None:
    """The write hangs past the client's timeout: the forget gives up waiting for it (``timeout``) and clears
    ``queue.jsonl``; the set-aside that follows must not put the forgotten user's write back there."""
    service.hang, service.status = 0.8, 500  # FAST's timeout is 0.5 s
    provider = build(service, tmp_path, failure_threshold=5)
    provider.sync_turn(turn(ALICE, f"alice's secret {POISON}"))
    provider.sync_turn(turn(BOB, "bob's fact fig"))
    assert wait_until(lambda: service.poison_posts >= 3, 15)  # the quiet try of the stuck write has begun
    report = provider.forget_user("alice")
    assert not report[0].error
    time.sleep(2.0)  # the try ends; a queue would take back what was set aside
    assert wait_until(lambda: "fig" in stored(service), 10)
    home = tmp_path / "hermes"
    assert not any(POISON in p.read_text(errors="replace") for p in home.rglob("*") if p.is_file())
    service.refusing = False
    time.sleep(1.5)
    assert POISON not in stored(service)  # nothing of alice's reaches the service any more
    provider.shutdown()

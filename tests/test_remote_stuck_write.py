"""One write the memory service keeps failing (a 403 from a firewall that dislikes its text, a 500 from the one
shard it goes to) while the service answers everything else.

Before, such a write led the queue for ever: every later write of every user waited behind it, its failures
opened the breaker, and recall stopped for everyone too, until 1,000 writes piled up and the oldest were dropped.
Now it is set aside in ``queue.jsonl`` (never dropped), the queue goes on, recall stays up, and the write is sent
again behind the others; a service that does not answer at all is an outage as before (order kept).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from remote_helpers import FAST, HONCHO_KEY, MEM0_KEY, turn

from hermes_ctx_plugins import SessionInfo
from hermes_ctx_plugins.memory.remote import queue as remote_queue
from hermes_ctx_plugins.memory.remote.base import RemoteProvider
from hermes_ctx_plugins.memory.remote.honcho import HonchoProvider
from hermes_ctx_plugins.memory.remote.mem0 import Mem0Provider
from hermes_ctx_plugins.storage import queue as durable_queue
from hermes_ctx_plugins.testing import HonchoStubServer, Mem0StubServer, wait_until
from hermes_ctx_plugins.testing.server import Reply, ServiceRequest

ALICE = SessionInfo(session_id="s1", user_id="alice")
BOB = SessionInfo(session_id="s2", user_id="bob")
POISON = "POISONED-TEXT-91f3"


class Refusing:
    """A stub refusing with ``status`` every write whose body holds :data:`POISON`, while ``refusing``."""

    status = 403
    refusing = True

    def handle(self, request: ServiceRequest) -> Reply:
        if self.refusing and request.method == "POST" and POISON.encode() in request.raw:
            return Reply(self.status, self.error_body(self.status, "blocked by policy"))  # type: ignore[attr-defined]
        return super().handle(request)  # type: ignore[misc]


class RefusingMem0(Refusing, Mem0StubServer):
    pass


class RefusingHoncho(Refusing, HonchoStubServer):
    pass


@pytest.fixture(params=["ctx-mem0", "ctx-honcho"])
def service(request: pytest.FixtureRequest) -> Iterator[Any]:
    stub = RefusingMem0(api_keys=(MEM0_KEY,)) if request.param == "ctx-mem0" else RefusingHoncho(api_keys=(HONCHO_KEY,))
    with stub:
        yield stub


@pytest.fixture(autouse=True)
def _quick(monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest) -> None:
    monkeypatch.setattr(durable_queue, "RESCAN_SECONDS", 0.5)  # a queue looks for set-aside writes twice a second
    if "blip" not in request.node.name:
        monkeypatch.setattr(remote_queue, "STUCK_FOR", 0.0)  # set aside once it failed twice, the service answering


def build(stub: Any, tmp_path: Path, **options: Any) -> RemoteProvider:
    if isinstance(stub, Mem0StubServer):
        return Mem0Provider({"api_key": MEM0_KEY, "host": stub.base_url, "infer": False, **FAST, **options},
                            hermes_home=tmp_path / "hermes")
    return HonchoProvider({"api_key": HONCHO_KEY, "base_url": stub.base_url, "workspace_id": "ws", "max_retries": 0,
                           **FAST, **options}, hermes_home=tmp_path / "hermes")


def stored(stub: Any) -> str:
    if isinstance(stub, Mem0StubServer):
        return json.dumps(stub.memories)
    return json.dumps(stub.messages)


@pytest.mark.parametrize("status", [403, 500])
def test_a_write_the_service_keeps_failing_does_not_hold_up_the_others_nor_recall(
        service: Any, tmp_path: Path, status: int) -> None:
    service.status = status
    provider = build(service, tmp_path, cooldown_seconds=30)  # an opened breaker would stop recall for 30 s
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


def test_a_service_that_does_not_answer_at_all_is_an_outage_and_keeps_the_order(
        service: Any, tmp_path: Path) -> None:
    """Everything fails (the ping too): nothing is set aside, writes wait in order and arrive in order."""
    provider = build(service, tmp_path)
    service.fail(503, times=10**6)
    provider.sync_turn(turn(ALICE, "first fact plum"))
    provider.sync_turn(turn(ALICE, "second fact pear"))
    assert wait_until(lambda: len(service.requests) >= 6, 10)
    assert provider.stats.set_aside == 0 and not provider.backlog.exists()
    service.clear_faults()
    assert wait_until(lambda: "pear" in stored(service), 10)
    assert stored(service).index("plum") < stored(service).index("pear"), (stored(service), provider.stats)
    provider.shutdown()


def test_a_write_the_write_path_refuses_while_reads_work_waits_rather_than_cycling(
        service: Any, tmp_path: Path) -> None:
    """The write path is down, the ping and search are up: one write is set aside per interval, not all of
    them at once, and none is dropped; recall stays up."""
    service.status, service.refusing = 500, True
    provider = build(service, tmp_path, cooldown_seconds=30)
    for n in range(4):
        provider.sync_turn(turn(ALICE, f"{POISON} {n}"))
    assert wait_until(lambda: provider.stats.set_aside == 1, 5)
    writes = len(service.requests_to("POST", "add|messages"))
    assert not wait_until(lambda: provider.stats.set_aside > 1, 1.5)  # the next waits PARK_INTERVAL (30 s)
    assert len(service.requests_to("POST", "add|messages")) <= writes + 2  # waiting, not hammering
    assert not provider.breaker.status(provider.name).startswith("suspended")
    service.refusing = False
    provider.shutdown()
    assert provider.stats.dropped == 0 and provider.stats.rejected == 0


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

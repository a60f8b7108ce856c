"""One user of a shared Mem0 / Honcho service limited (rate-limited, failing, or slow for their id alone) while the
others are served: as a Bridge runs it, one provider for every user of a deployment.

Before (a red-team pass of a Bridge): one user's 429s with Retry-After held every user's writes behind theirs for up
to three times the Retry-After, and with a few of theirs queued, for ever (the writes tried ahead of a stuck one were
their own, failing too: "an outage"); two hung searches of one user skipped every user's recall (at most two recalls
at once per provider). Now a write failing for its owner's limit is set aside as soon as another owner's write is
taken, the writes tried ahead of a stuck one are other owners', and each user has their own two recalls in flight.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from remote_helpers import MEM0_KEY, running_stub, turn
from remote_helpers import quick_provider as build
from remote_helpers import stored_at as stored

from hermes_ctx_plugins import SessionInfo
from hermes_ctx_plugins.memory.remote import queue as remote_queue
from hermes_ctx_plugins.storage import queue as durable_queue
from hermes_ctx_plugins.testing import Mem0StubServer, wait_until
from hermes_ctx_plugins.testing.server import Reply, ServiceRequest

XAVIER = SessionInfo(session_id="sx", user_id="xavier", deployment="alpha")
ALICE = SessionInfo(session_id="sa", user_id="alice", deployment="alpha")
BOB = SessionInfo(session_id="sb", user_id="bob", deployment="alpha")


class Limiting:
    """A stub answering the calls made for one owner (``limited``: their service id) as told: ``status`` (with
    ``retry_after`` when set), or after sleeping ``hang`` seconds for searches."""

    limited = ""
    status = 429
    retry_after = ""
    hang = 0.0

    def _for_limited(self, request: ServiceRequest) -> bool:
        return bool(self.limited) and (self.limited in request.path or self.limited.encode() in request.raw)

    def handle(self, request: ServiceRequest) -> Reply:
        if self._for_limited(request):
            if self.hang and "search" in request.path:
                time.sleep(self.hang)
            elif request.method == "POST" and not self.hang:
                headers = {"Retry-After": self.retry_after} if self.retry_after else {}
                return Reply(self.status, self.error_body(self.status, "slow down"),  # type: ignore[attr-defined]
                             headers=headers)
        return super().handle(request)  # type: ignore[misc]



@pytest.fixture(params=["ctx-mem0", "ctx-honcho"])
def service(request: pytest.FixtureRequest) -> Iterator[Any]:
    yield from running_stub(request.param, Limiting)


def test_one_users_rate_limit_does_not_hold_the_other_users_writes(service: Any, tmp_path: Path) -> None:
    # the Retry-After is honoured up to 30 s: waited out, the others' writes would arrive after 30 s at the earliest
    provider = build(service, tmp_path, retry_after_cap=30.0, cooldown_seconds=60.0, failure_threshold=5)
    service.limited, service.status, service.retry_after = provider.owner_id(XAVIER), 429, "30"
    for n in range(4):
        provider.sync_turn(turn(XAVIER, f"xavier's note {n} plum"))
    assert wait_until(lambda: service.requests, 5)  # his first write failed: the queue waits out his limit
    provider.sync_turn(turn(ALICE, "alice's fact kiwi"))
    provider.sync_turn(turn(BOB, "bob's fact mango"))
    assert wait_until(lambda: "kiwi" in stored(service) and "mango" in stored(service), 10), stored(service)
    assert "plum" not in stored(service)
    assert "kiwi" in provider.prefetch("kiwi", session=ALICE)  # recall is up for the others
    provider.shutdown()  # his writes wait out his limit: none is lost, all are handed to the next queue
    assert provider.stats.set_aside >= 1 and provider.stats.dropped == 0 and provider.stats.rejected == 0
    assert provider.spooled() == 4  # his four; not the two sent ahead of his (the next queue would send them again)


def test_one_users_failing_writes_do_not_hold_the_other_users_behind_many_of_theirs(
        service: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No Retry-After (a shard of theirs down): stuck after two failures, the writes tried ahead are the others'."""
    monkeypatch.setattr(remote_queue, "STUCK_FOR", 0.0)
    monkeypatch.setattr(remote_queue, "STUCK_AFTER", 2)
    monkeypatch.setattr(durable_queue, "RESCAN_SECONDS", 0.5)  # a queue looks for set-aside writes twice a second
    provider = build(service, tmp_path, cooldown_seconds=30, failure_threshold=5)
    service.limited, service.status = provider.owner_id(XAVIER), 500
    for n in range(5):  # more of his writes than the queue tries ahead of a stuck one (3)
        provider.sync_turn(turn(XAVIER, f"xavier's note {n} plum"))
    provider.sync_turn(turn(ALICE, "alice's fact kiwi"))
    assert wait_until(lambda: "kiwi" in stored(service), 15), (stored(service), provider.stats)
    assert not provider.breaker.status(provider.name).startswith("suspended after")  # no outage for everyone
    service.limited = ""
    assert wait_until(lambda: all(f"note {n} plum" in stored(service) for n in range(5)), 20), provider.stats
    provider.shutdown()


def test_one_users_hung_searches_do_not_skip_the_other_users_recall(service: Any, tmp_path: Path) -> None:
    provider = build(service, tmp_path, timeout=5.0, prefetch_wait=0.5)
    provider.sync_turn(turn(ALICE, "alice's locker code is 4-8-15-16"))
    assert provider.flush(10)
    service.limited, service.hang = provider.owner_id(XAVIER), 4.0
    assert provider.prefetch("locker code", session=XAVIER) == ""  # each waits 0.5 s, then the turn goes on
    assert provider.prefetch("locker code", session=XAVIER) == ""  # his two recalls still wait for the service
    assert "4-8-15-16" in provider.prefetch("locker code", session=ALICE)
    assert provider.prefetch("locker code", session=XAVIER) == ""  # a third of his is skipped at once
    provider.shutdown()


class Everyone(Mem0StubServer):
    """Every write refused with a 429 and a Retry-After (a limit on the whole account), while ``limiting``."""

    limiting = True
    refused = 0

    def handle(self, request: ServiceRequest) -> Reply:
        if self.limiting and request.method == "POST" and "/memories" in request.path:
            self.refused += 1
            return Reply(429, self.error_body(429, "slow down"), headers={"Retry-After": "5"})
        return super().handle(request)


def test_a_limit_on_every_user_is_waited_out_not_hammered_at_each_put(tmp_path: Path) -> None:
    """A red-team pass of the above: each failure and each other user's put ended the wait, and the writes behind
    were tried too: twelve refused requests in one second where the code before sent one per Retry-After (and the
    breaker then paused everyone). Now one other user's write is tried once per write, and a put wakes the queue
    once per write."""
    with Everyone(api_keys=(MEM0_KEY,)) as service:
        provider = build(service, tmp_path, retry_after_cap=30.0, cooldown_seconds=60.0, failure_threshold=1000)
        users = [SessionInfo(session_id=f"s{n}", user_id=f"user{n}", deployment="alpha") for n in range(10)]
        started = time.monotonic()
        while time.monotonic() - started < 4.0:  # every user puts a turn every 0.2 s, for 4 s (< a Retry-After)
            for n, user in enumerate(users):
                provider.sync_turn(turn(user, f"note of user {n} fig"))
            time.sleep(0.2)
        assert service.refused <= 3, service.refused  # the first try, one other user's write, one woken retry
        service.limiting = False
        provider.shutdown()
        assert provider.stats.dropped == 0 and provider.stats.rejected == 0


class Hanging(Mem0StubServer):
    """xavier's writes fail; carol's hang ``hang`` seconds, then fail."""

    hang = 1.5
    failing = True

    def handle(self, request: ServiceRequest) -> Reply:
        if self.failing and request.method == "POST" and b"uxavier" in request.raw:
            return Reply(500, self.error_body(500, "shard down"))
        if self.failing and request.method == "POST" and b"ucarol" in request.raw:
            time.sleep(self.hang)
            return Reply(500, self.error_body(500, "shard down"))
        return super().handle(request)


def test_a_user_forgotten_while_writes_are_tried_ahead_is_not_sent_after_the_forget(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A red-team pass: the writes to try ahead of a stuck one were read before the first was sent; a forget of bob
    that ran while carol's hung took bob's write out of the queue and deleted his memories, and then bob's write was
    sent ahead all the same: his memory was back at the service after the forget."""
    monkeypatch.setattr(remote_queue, "STUCK_FOR", 0.0)
    monkeypatch.setattr(remote_queue, "STUCK_AFTER", 2)
    with Hanging(api_keys=(MEM0_KEY,)) as service:
        provider = build(service, tmp_path, timeout=5.0, cooldown_seconds=30, failure_threshold=50)
        provider.sync_turn(turn(XAVIER, "xavier's note plum"))
        provider.sync_turn(turn(SessionInfo(session_id="sc", user_id="carol", deployment="alpha"), "carol's fig"))
        provider.sync_turn(turn(BOB, "bob's secret mango"))
        assert wait_until(lambda: any(b"ucarol" in r.raw for r in service.requests), 15)  # carol's is tried ahead
        provider.forget_user("bob", namespaces=["alpha"])
        time.sleep(service.hang + 1.0)  # carol's fails: the next write ahead would be bob's
        assert "mango" not in stored(service)
        service.failing = False
        provider.shutdown()
        assert "mango" not in stored(service)

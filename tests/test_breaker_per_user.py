"""A memory provider failing on one user's calls is suspended for that user only (the isolation module's parties).

Before, the breaker was per provider: a provider failing on one user's data (an id it cannot take, a record it
chokes on) suspended it for every user of the deployment for the cool-down, after a couple of that user's turns.
Now the user's own calls are suspended; another user's go on; a second user failing in the same run is a provider
down, suspended for all as before.
"""

from __future__ import annotations

from typing import Any

import pytest

from hermes_ctx_plugins import SessionInfo, Turn, hookimpl, load_host
from hermes_ctx_plugins.isolation import FaultIsolator, StatusEvent, party_of
from hermes_ctx_plugins.testing import FakeMemoryProvider

ALICE = SessionInfo(session_id="a1", user_id="alice")
MALLORY = SessionInfo(session_id="m1", user_id="mal\u202elory")
BOB = SessionInfo(session_id="b1", user_id="bob")


class Picky(FakeMemoryProvider):
    """Remembers every turn; chokes on a user id holding a bidi control, or on everything when ``down``."""

    name = "picky"
    down = False

    def _check(self, session: SessionInfo) -> None:
        if Picky.down or "\u202e" in session.user_id:
            raise ValueError("cannot take this id")

    def prefetch(self, query: str, *, session: SessionInfo) -> str:
        self._check(session)
        return super().prefetch(query, session=session)

    def sync_turn(self, turn: Turn) -> None:
        self._check(turn.session)
        super().sync_turn(turn)


class Plugin:
    @hookimpl
    def register_memory_providers(self, register: Any) -> None:
        register(Picky)


def turn(session: SessionInfo, text: str) -> Turn:
    return Turn(session=session, turn_number=1, user_text=text, assistant_text="noted")


def test_one_users_failures_suspend_that_users_calls_only() -> None:
    Picky.down = False
    events: list[StatusEvent] = []
    host = load_host({"ctx_plugins": {"memory": {"providers": ["picky"]}, "failure_threshold": 2}},
                     plugins=[Plugin()], status_callback=events.append)
    host.prefetch("anything", session=BOB)  # another user is served: mallory's failures are hers
    for n in range(3):  # mallory's turns fail: after two failures, her calls are suspended
        host.turn_finalized(turn(MALLORY, f"mallory note {n}"))
        host.prefetch("note", session=MALLORY)
    assert [e.kind for e in events] == ["suspended"] and "this user" in events[0].message
    status = {r.name: r for r in host.plugins()}["picky"].status
    assert status.startswith("suspended for 1 user"), status
    host.turn_finalized(turn(ALICE, "the deploy port is 8443"))  # alice is served: her turn stored, recalled
    assert "8443" in host.prefetch("which deploy port?", session=ALICE)
    assert "8443" not in host.prefetch("which deploy port?", session=BOB)  # (recall stays bob's own)

    Picky.down = True  # now the provider is down for everyone: a second user failing suspends it for all
    host.turn_finalized(turn(ALICE, "another fact"))
    host.prefetch("anything", session=BOB)
    assert events[-1].kind == "suspended" and "this user" not in events[-1].message
    assert {r.name: r for r in host.plugins()}["picky"].status.startswith("suspended after")
    Picky.down = False
    assert host.prefetch("which deploy port?", session=ALICE) == ""  # suspended for all during the cool-down
    host.shutdown()


def test_a_users_suspension_ends_after_the_cooldown_and_a_single_user_is_still_protected() -> None:
    """hermes' single-user CLI: every call is one party's; nobody else is served, so the provider is down: suspended
    for all (a third red-team pass: it was 'suspended for 1 user, other users' go on', and ctx-mem0 never said
    'resumed')."""
    now = [0.0]
    isolator = FaultIsolator(threshold=2, cooldown=10, clock=lambda: now[0])
    calls: list[str] = []

    def failing() -> None:
        calls.append("called")
        raise ValueError("down")

    party = party_of(SessionInfo(session_id="s"))
    for _ in range(4):
        isolator.call("memory:x", failing, default=None, party=party)
    assert len(calls) == 2  # suspended after two: the next two were not made
    now[0] = 11
    isolator.call("memory:x", failing, default=None, party=party)  # the cool-down is over: called again ...
    isolator.call("memory:x", failing, default=None, party=party)  # ... failed again: suspended again at once
    assert len(calls) == 3
    assert isolator.status("memory:x").startswith("suspended after")


def test_parties_are_exact() -> None:
    """A deployment and a user id are told apart however they are spelt (no two owners share a party)."""
    owners = [("", "a:b"), ("a", "b"), ("a:", "b"), ("", "a:"), ("a", ""), ("a\x00", "b"), ("", "A:b")]
    parties = {party_of(SessionInfo(session_id="s", user_id=user, deployment=space)) for space, user in owners}
    assert len(parties) == len(owners)


def test_suspended_users_whose_cooldown_ended_are_not_kept_for_ever(monkeypatch: Any) -> None:
    from hermes_ctx_plugins import isolation

    monkeypatch.setattr(isolation, "MAX_PARTIES", 10)
    now = [0.0]
    isolator = FaultIsolator(threshold=1, cooldown=5, clock=lambda: now[0])

    def failing() -> None:
        raise ValueError("down")

    for n in range(100):  # a hundred users, each failing once and never seen again
        now[0] = n
        isolator.call("memory:x", failing, default=None, party=f"user-{n}")
        isolator.record_success("memory:x", party="served")  # another user's call worked in between
    assert len(isolator._parties) <= 10 + 5
    assert not isolator.admit("memory:x", "user-99") and isolator.admit("memory:x", "user-90")


def test_after_one_user_is_suspended_another_users_blip_does_not_suspend_everyone() -> None:
    """A second red-team pass: the run went on after mallory was suspended alone, so bob's one timeout took it past
    the threshold and suspended the provider for all; now her suspension starts a new run."""
    isolator = FaultIsolator(threshold=3, cooldown=60)

    def failing() -> None:
        raise ValueError("down")

    mallory, bob, carol = (party_of(s) for s in (MALLORY, BOB, ALICE))
    isolator.record_success("memory:x", party=carol)  # others are served
    for _ in range(3):
        isolator.call("memory:x", failing, default=None, party=mallory)
    assert not isolator.admit("memory:x", mallory)
    isolator.call("memory:x", failing, default=None, party=bob)  # one blip of another user's
    assert isolator.admit("memory:x", carol) and isolator.admit("memory:x", bob)
    isolator.call("memory:x", failing, default=None, party=carol)
    isolator.call("memory:x", failing, default=None, party=bob)  # a third failure of several users: an outage
    assert not isolator.admit("memory:x", carol)


def test_a_remote_service_failing_one_users_searches_pauses_that_users_recall_only(tmp_path: Any) -> None:
    """ctx-mem0's own breaker (a second red-team pass): the service 500s on alice's searches only; five of them
    suspended recall for everyone for the cool-down (bob's too)."""
    import sys

    sys.path.insert(0, str(__import__("pathlib").Path(__file__).parent))
    from remote_helpers import MEM0_KEY
    from remote_helpers import turn as remote_turn

    from hermes_ctx_plugins.memory.remote.mem0 import Mem0Provider
    from hermes_ctx_plugins.testing import Mem0StubServer, wait_until
    from hermes_ctx_plugins.testing.server import Reply, ServiceRequest

    class Stub(Mem0StubServer):
        def handle(self, request: ServiceRequest) -> Reply:
            if request.method == "POST" and "search" in request.path and b"ualice" in request.raw:
                return Reply(500, self.error_body(500, "the shard of alice is down"))
            return super().handle(request)

    alice, bob = SessionInfo(session_id="s1", user_id="alice"), SessionInfo(session_id="s2", user_id="bob")
    with Stub(api_keys=(MEM0_KEY,)) as stub:
        provider = Mem0Provider({"api_key": MEM0_KEY, "host": stub.base_url, "infer": False, "timeout": 1,
                                 "failure_threshold": 3, "cooldown_seconds": 60, "prefetch_wait": 2},
                                hermes_home=tmp_path / "hermes")
        events: list[StatusEvent] = []
        provider.status_callback = events.append
        provider.sync_turn(remote_turn(bob, "bob likes kiwi"))
        assert wait_until(lambda: "kiwi" in str(stub.memories), 10)
        for _ in range(4):
            provider.prefetch("anything", session=alice)
        searches = len(stub.requests_to("POST", "search"))
        assert provider.prefetch("anything", session=alice) == "" and len(stub.requests_to("POST", "search")) == \
            searches  # alice's recall is paused: not even asked
        assert "kiwi" in provider.prefetch("kiwi", session=bob)  # bob's goes on
        assert provider.breaker.status(provider.name).startswith("suspended for 1 user")
        assert [e.kind for e in events] == ["unavailable"] and "other users' go on" in events[0].message
        # her shard is back: after the cool-down her first recall is her probe, and she is told (it was never said)
        Stub.handle = Mem0StubServer.handle  # type: ignore[method-assign]
        provider.breaker._parties = {key: 0.0 for key in provider.breaker._parties}  # her cool-down is over
        provider.prefetch("anything", session=alice)
        assert [e.kind for e in events] == ["unavailable", "resumed"] and "this user's calls again" in events[1].message
        provider.shutdown()


def test_users_failing_one_after_another_is_an_outage() -> None:
    """A third red-team pass: with every user's calls failing in bursts (each user's turn), each user was suspended
    alone in turn, every one paying the threshold's failed calls, and the provider never for all."""
    now = [0.0]
    isolator = FaultIsolator(threshold=3, cooldown=60, clock=lambda: now[0])
    made: list[str] = []

    def down(user: str) -> None:
        made.append(user)
        raise TimeoutError("hung")

    users = [f"u{n}" for n in range(5)]
    for user in users:
        isolator.record_success("memory:x", party=user)
    for user in users:
        for _ in range(4):
            isolator.call("memory:x", down, user, default=None, party=user)
            now[0] += 1
    assert made == ["u0"] * 3 + ["u1"] * 3 and isolator.status("memory:x").startswith("suspended after")


def test_a_probe_of_a_side_call_is_not_held_for_ever() -> None:
    """A third red-team pass: after the cool-down the probe went to a call that does not reset the breaker (a
    strategy's should_compress, a forget's shutdown): it succeeded, was never recorded, and the owner was never
    called again."""
    now = [0.0]
    isolator = FaultIsolator(threshold=2, cooldown=10, clock=lambda: now[0])

    def boom() -> None:
        raise ValueError("x")

    for _ in range(2):
        isolator.call("compressor:s", boom, default=None)
    now[0] = 11
    assert isolator.call("compressor:s", lambda: True, default=False, resets=False)
    assert isolator.call("compressor:s", lambda: "compressed", default="skipped") == "compressed"
    assert isolator.status("compressor:s").startswith("ok")


def test_a_service_failing_all_of_one_users_calls_pauses_that_user_only(tmp_path: Any) -> None:
    """A third red-team pass: the service failing alice's writes as well as her searches (her shard down): the
    writer's failures of her write counted for nobody, so with two of her searches the breaker took them for an
    outage and paused recall and saving for everyone."""
    import sys
    import time

    sys.path.insert(0, str(__import__("pathlib").Path(__file__).parent))
    from remote_helpers import MEM0_KEY
    from remote_helpers import turn as remote_turn

    from hermes_ctx_plugins.memory.remote.mem0 import Mem0Provider
    from hermes_ctx_plugins.testing import Mem0StubServer, wait_until
    from hermes_ctx_plugins.testing.server import Reply, ServiceRequest

    class Stub(Mem0StubServer):
        def handle(self, request: ServiceRequest) -> Reply:
            if request.method == "POST" and b"ualice" in request.raw:
                return Reply(500, self.error_body(500, "the shard of alice is down"))
            return super().handle(request)

    alice, bob = SessionInfo(session_id="s1", user_id="alice"), SessionInfo(session_id="s2", user_id="bob")
    with Stub(api_keys=(MEM0_KEY,)) as stub:
        provider = Mem0Provider({"api_key": MEM0_KEY, "host": stub.base_url, "infer": False, "timeout": 1,
                                 "cooldown_seconds": 60, "prefetch_wait": 2}, hermes_home=tmp_path / "hermes")
        provider.sync_turn(remote_turn(bob, "bob likes kiwi"))
        assert wait_until(lambda: "kiwi" in str(stub.memories), 10)
        provider.sync_turn(remote_turn(alice, "alice likes plums"))
        assert wait_until(lambda: len(stub.requests_to("POST", "add")) >= 4, 10)  # her write failed 3 times
        time.sleep(0.2)
        for _ in range(2):
            provider.prefetch("anything", session=alice)
        assert provider.breaker.health(provider.name).suspended_until is None, provider.breaker.status(provider.name)
        assert "kiwi" in provider.prefetch("kiwi", session=bob)
        provider.shutdown()


def test_a_user_told_of_their_suspension_is_told_when_it_ends() -> None:
    """Before: the user paused alone was told "suspended for this user" and never that it was over (a session-22
    doubt); their probe after the cool-down worked in silence."""
    now = [0.0]
    events: list[StatusEvent] = []
    isolator = FaultIsolator(threshold=2, cooldown=10, clock=lambda: now[0], on_event=events.append)
    broken = [True]

    def call() -> str:
        if broken[0]:
            raise ValueError("cannot take this id")
        return "ok"

    mallory, bob = party_of(MALLORY), party_of(BOB)
    isolator.call("memory:x", lambda: "ok", default="", party=bob)  # another user is served
    for _ in range(2):
        isolator.call("memory:x", call, default="", party=mallory)
    assert [(e.kind, e.party) for e in events] == [("suspended", mallory)]
    now[0], broken[0] = 11, False
    assert isolator.call("memory:x", call, default="", party=mallory) == "ok"  # her probe, which works
    assert [(e.kind, e.party) for e in events] == [("suspended", mallory), ("resumed", mallory)]
    assert "for this user" in events[-1].message
    isolator.call("memory:x", call, default="", party=mallory)
    isolator.call("memory:x", lambda: "ok", default="", party=bob)
    assert len(events) == 2  # said once


def test_a_machine_refusal_is_logged_without_a_traceback(caplog: pytest.LogCaptureFixture) -> None:
    """A folder this user may not write, a full disk: the message says it all, and its eight lines of traceback
    read as a bug of ours (a newcomer walk). Anything else keeps its traceback."""
    import errno
    import logging

    isolator = FaultIsolator(threshold=5)
    caplog.set_level(logging.WARNING, logger="hermes_ctx_plugins")
    for exc in (PermissionError(errno.EACCES, "Permission denied", "/srv/h/ctx-local/memory.db.queue/x.seg.tmp"),
                OSError(errno.ENOSPC, "No space left on device"), ValueError("a bug of ours")):
        try:
            raise exc
        except Exception as raised:
            isolator.record_failure("memory:ctx-local", raised)
    traced = {r.getMessage().split(": ", 1)[1].split(":")[0]: r.exc_info is not None for r in caplog.records}
    assert traced == {"PermissionError": False, "OSError": False, "ValueError": True}, traced

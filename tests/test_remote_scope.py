"""ctx-mem0 and ctx-honcho keep every (namespace, user) apart, at the service and in their queues,
and forget a user there: checked against what the loopback services actually hold.

Each owner tells a fact with a codeword of its own; the service's stored state is read directly
(who holds what), and recall shows every owner their own codeword and nobody else's.
"""

from __future__ import annotations

import dataclasses
import hashlib
import itertools
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from remote_helpers import HONCHO_KEY, MEM0_KEY, no_lingering_threads, provider_factory, turn

from hermes_ctx_plugins import ConfigError, SessionInfo
from hermes_ctx_plugins.config import load_config
from hermes_ctx_plugins.events import Forgotten
from hermes_ctx_plugins.memory.remote.base import RemoteProvider
from hermes_ctx_plugins.memory.remote.honcho import HonchoProvider
from hermes_ctx_plugins.memory.remote.mem0 import Mem0Provider
from hermes_ctx_plugins.scope import service_id
from hermes_ctx_plugins.testing import HonchoStubServer, Mem0StubServer, wait_until

QUESTION = "what is my locker code?"
#: what ctx-honcho's peer_id() made of "alice@example.com" before ids were one-to-one
OLD_SANITISED = f"alice-example-com-{hashlib.sha256(b'alice@example.com').hexdigest()[:10]}"
#: (namespace, user id) pairs that once aliased, or look like another's stored form, or are hostile
OWNERS = (
    ("", "alice"), ("", "alice@example.com"), ("", OLD_SANITISED), ("", service_id("", "alice@example.com")),
    ("", ""), ("", "hermes-user"), ("", "hermes"), ("", "anon"), ("", "ualice"), ("", " alice"),
    ("", "*"), ("", "%"), ("", "../x"), ("", "x" * 10_000), ("", "m\ud800"), ("", "'; DROP TABLE x;--"),
    ("team-a", "alice"), ("team-b", "alice"), ("team-a", ""), ("team-b", ""), ("team", "b-c"), ("team-b", "c"),
)
WORDS = ("amber", "birch", "cedar", "delta", "ember", "fjord", "grove", "heron", "indigo", "juniper", "kestrel",
         "lilac", "maple", "nectar", "onyx", "pepper", "quartz", "raven", "sable", "thistle", "umber", "violet")


def session(deployment: str, user_id: str, number: int = 1, **extra: Any) -> SessionInfo:
    return SessionInfo(session_id=f"s{number}", user_id=user_id, deployment=deployment, **extra)


def fact(word: str) -> str:
    return f"my locker code is {word}"


@dataclass
class Remote:
    """One provider kind with its loopback service: how to build it and what the service holds."""

    name: str
    stub: Mem0StubServer | HonchoStubServer
    build: Callable[..., RemoteProvider]
    search_tool: str
    #: the path (a regex) of the requests that store a turn
    write_path: str
    options: dict[str, Any] = field(default_factory=dict)

    def make(self, **options: Any) -> RemoteProvider:
        return self.build(self.stub.base_url, **{**self.options, **options})

    def held(self) -> dict[str, list[str]]:
        """Owner id -> every text the service holds of that owner (the AI's replies to them included)."""
        out: dict[str, list[str]] = {}
        if isinstance(self.stub, Mem0StubServer):
            for memory in self.stub.memories:
                out.setdefault(memory["user_id"], []).append(memory["memory"])
            return out
        owner_of = {sid: ([p for p in peers if p != "hermes"] or ["hermes"])[0]
                    for sid, peers in self.stub.sessions.items()}
        for message in self.stub.messages:
            out.setdefault(owner_of[message["session_id"]], []).append(message["content"])
        for conclusion in self.stub.conclusions:
            out.setdefault(conclusion["observed_id"], []).append(conclusion["content"])
        return out


@pytest.fixture(autouse=True)
def _no_lingering_threads() -> Iterator[None]:
    yield from no_lingering_threads("ctx-")


@pytest.fixture(params=["ctx-mem0", "ctx-honcho"])
def remote(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Remote]:
    if request.param == "ctx-mem0":
        mem0 = request.getfixturevalue("mem0")
        for build in provider_factory(Mem0Provider, tmp_path, lambda url: {"api_key": MEM0_KEY, "host": url}):
            # infer off: the assistant's replies are kept too, as Honcho keeps them
            yield Remote("ctx-mem0", mem0, build, "ctx_mem0_search", "/add/$", {"infer": False})
        return
    honcho = request.getfixturevalue("honcho")
    for build in provider_factory(HonchoProvider, tmp_path, lambda url: {
            "api_key": HONCHO_KEY, "base_url": url, "workspace_id": "ws", "max_retries": 0}):
        yield Remote("ctx-honcho", honcho, build, "ctx_honcho_search", "/messages$", {"prefetch": "both"})


def tell(provider: RemoteProvider, owner: SessionInfo, word: str) -> None:
    provider.sync_turn(turn(owner, fact(word), f"Noted: your locker code is {word}."))


def shown(provider: RemoteProvider, owner: SessionInfo, search_tool: str) -> str:
    """What ``owner`` is shown: recall at the turn and the search tool's answer."""
    later = SessionInfo(session_id="later", user_id=owner.user_id, deployment=owner.deployment)
    return provider.prefetch(QUESTION, session=later) + provider.handle_tool_call(
        search_tool, {"query": "locker code"}, session=later)


# ---------------------------------------------------------------- one id per owner


def test_every_owner_is_stored_apart_and_recalls_only_their_own(remote: Remote) -> None:
    provider = remote.make()
    owners = {session(d, u): word for (d, u), word in zip(OWNERS, WORDS, strict=True)}
    for owner, word in owners.items():
        tell(provider, owner, word)
    assert provider.flush(30)
    assert provider.stats.rejected == 0, "every owner's id is one the service takes"

    held = remote.held()
    assert "hermes" not in held, "no user's memories are stored under the AI's own id"
    assert len(held) == len(owners), f"{len(owners)} owners, stored under {len(held)} ids: {sorted(held)}"
    assert all(len(owner_id) <= 100 for owner_id in held)
    for owner, word in owners.items():
        texts = held[provider.owner_id(owner)]
        assert any(word in text for text in texts), f"{owner.user_id[:40]!r}@{owner.deployment!r} lost its fact"
        assert not [w for w in WORDS if w != word and any(w in text for text in texts)], texts

    for owner, word in owners.items():
        seen = shown(provider, owner, remote.search_tool)
        assert word in seen, f"{owner.user_id[:40]!r}@{owner.deployment!r} does not recall its own fact"
        leaked = [w for w in owners.values() if w != word and w in seen]
        assert not leaked, f"{owner.user_id[:40]!r}@{owner.deployment!r} was shown others' facts {leaked}"


def test_the_ai_peer_and_the_anonymous_user_are_nobody_elses(remote: Remote) -> None:
    """The findings: a user called like the AI peer read every assistant reply; one called like
    the default user shared the CLI's memories."""
    provider = remote.make()
    alice, named_hermes = session("", "alice"), session("", "hermes")
    cli, named_default = session("", ""), session("", "hermes-user")
    for owner, word in ((alice, "amber"), (named_hermes, "birch"), (cli, "cedar"), (named_default, "delta")):
        tell(provider, owner, word)
    assert provider.flush(10)
    assert "amber" in shown(provider, alice, remote.search_tool)
    for_hermes = shown(provider, named_hermes, remote.search_tool)
    assert "birch" in for_hermes and "amber" not in for_hermes
    for_cli = shown(provider, cli, remote.search_tool)
    assert "cedar" in for_cli and "delta" not in for_cli
    for_named_default = shown(provider, named_default, remote.search_tool)
    assert "delta" in for_named_default and "cedar" not in for_named_default
    assert provider.owner_id(cli) == "hermes-user", "existing single-user installs keep their memories"
    assert provider.owner_id(named_default) == "uhermes_2d_user"


@pytest.mark.parametrize("strategy", ["per-session", "per-chat", "per-user"])
def test_users_with_the_same_session_or_chat_id_never_share_a_honcho_session(honcho: HonchoStubServer,
                                                                            tmp_path: Path, strategy: str) -> None:
    for build in provider_factory(HonchoProvider, tmp_path, lambda url: {
            "api_key": HONCHO_KEY, "base_url": url, "workspace_id": "ws", "max_retries": 0}):
        provider = build(honcho.base_url, session_strategy=strategy)
        owners = [session("", "alice", chat_id="group"), session("", "bob", chat_id="group"),
                  session("team-a", "alice", chat_id="group"), session("", "x" * 10_000, chat_id="group"),
                  SessionInfo(session_id="s" * 500, user_id="carol", chat_id="c" * 500)]
        for owner, word in zip(owners, WORDS, strict=False):
            tell(provider, owner, word)
        assert provider.flush(10) and provider.stats.rejected == 0
        assert len(honcho.sessions) == len(owners)
        for owner in owners:
            assert honcho.sessions[provider.session_key(owner)] == sorted(["hermes", provider.owner_id(owner)])


# ---------------------------------------------------------------- configured ids


@pytest.mark.parametrize(("cls", "key", "value"), [
    (HonchoProvider, "ai_peer", "ualice"), (HonchoProvider, "ai_peer", "anon"),
    (HonchoProvider, "ai_peer", "dteam-ubob"), (HonchoProvider, "ai_peer", "h" + "0" * 48),
    (HonchoProvider, "ai_peer", "hermes-user"), (HonchoProvider, "ai_peer", ""),
    (HonchoProvider, "ai_peer", "hermes\n"), (HonchoProvider, "default_user_id", "me@example.com"),
    (HonchoProvider, "user_id", "x" * 101), (Mem0Provider, "default_user_id", "anon"),
    (Mem0Provider, "user_id", "ubob"), (Mem0Provider, "user_id", "*"), (Mem0Provider, "default_user_id", "a b"),
])
def test_configured_ids_that_could_alias_a_user_are_config_errors(tmp_path: Path, cls: type[RemoteProvider],
                                                                   key: str, value: str) -> None:
    with pytest.raises(ConfigError) as caught:
        cls({key: value}, hermes_home=tmp_path)
    assert caught.value.path == f"ctx_plugins.options.{cls.name}.{key}"
    assert repr(value) in str(caught.value)


def test_a_fixed_user_id_stores_every_session_as_that_one_user(remote: Remote) -> None:
    """The single-user option: the top level stores everyone under it verbatim."""
    provider = remote.make(user_id="family")
    tell(provider, session("", "alice"), "amber")
    tell(provider, session("", "bob"), "birch")
    tell(provider, session("team-a", "alice"), "cedar")
    assert provider.flush(10)
    held = remote.held()
    assert {k: len(v) for k, v in held.items()} == {"family": 4, service_id("team-a", "family"): 2}
    both = shown(provider, session("", "carol"), remote.search_tool)
    assert "amber" in both and "birch" in both and "cedar" not in both


# ---------------------------------------------------------------- flush and forget


def test_flush_says_whether_the_writes_are_stored(remote: Remote) -> None:
    provider = remote.make(failure_threshold=1, cooldown_seconds=0.2)
    remote.stub.stop()
    tell(provider, session("", "alice"), "amber")
    assert provider.flush(0.3) is False and provider.queued == 1
    remote.stub.start()
    assert provider.flush(10) is True and provider.queued == 0
    assert any("amber" in text for text in remote.held()[provider.owner_id(session("", "alice"))])


def test_forget_user_deletes_their_memories_at_the_service_and_keeps_everyone_elses(remote: Remote) -> None:
    provider = remote.make()
    alice, bob, alice_there = session("", "alice"), session("", "bob", chat_id="g"), session("team-a", "alice")
    for owner, word in ((alice, "amber"), (bob, "birch"), (alice_there, "cedar")):
        tell(provider, owner, word)
    if remote.name == "ctx-honcho":  # a conclusion and a profile card of hers, too
        provider.handle_tool_call("ctx_honcho_conclude", {"conclusion": "alice likes amber tea"}, session=alice)
        provider.handle_tool_call("ctx_honcho_profile", {"card": ["Name: Alice"]}, session=alice)
    assert provider.flush(10)
    assert "amber" in shown(provider, alice, remote.search_tool)

    report = provider.forget_user("alice", namespaces=[""])
    assert all(isinstance(entry, Forgotten) and entry.ok for entry in report), report
    service = report[-1]
    assert service.store.endswith(": ualice") and "top-level namespace" in service.detail
    held = remote.held()
    assert provider.owner_id(alice) not in held
    if isinstance(remote.stub, HonchoStubServer):
        assert all("ualice" not in peers for peers in remote.stub.sessions.values()), "her sessions are gone"
    assert any("birch" in text for text in held[provider.owner_id(bob)]), "another user's memories remain"
    assert any("cedar" in text for text in held[provider.owner_id(alice_there)]), "and hers in another namespace"
    assert "amber" not in shown(provider, alice, remote.search_tool)
    assert "birch" in shown(provider, bob, remote.search_tool)
    assert "cedar" in shown(provider, alice_there, remote.search_tool)

    stub = remote.stub
    if isinstance(stub, Mem0StubServer):
        delete = stub.requests_to("DELETE", r"^/v1/memories/$")[-1]
        assert delete.query == {"user_id": "ualice"}, "delete_all(user_id=...): the SDK's wire format"
        assert service.removed == 2  # her message and the reply
    else:
        # the sessions she told and recalled in (her conclusion went with the first), and her card
        assert service.removed == 3 and "sessions deleted with their messages: 2" in service.detail
        assert "peer cards cleared: 1" in service.detail and "cannot delete a peer" in service.detail
        assert not [c for c in stub.conclusions if c["observed_id"] == "ualice"]
        assert stub.cards[("ualice", "ualice")] == [], "her profile card is cleared"


def test_forget_user_without_namespaces_clears_every_namespace_of_the_config(remote: Remote) -> None:
    deployments = {"team-a": {}, "team-b": {"memory": {"namespace": "shared"}}}
    config = load_config({"ctx_plugins": {"deployments": deployments}})
    provider = remote.make(config=config)
    spaces = {"": "amber", "team-a": "birch", "shared": "cedar", "elsewhere": "delta"}
    for deployment, word in spaces.items():
        tell(provider, session(deployment, "alice"), word)
    tell(provider, session("team-a", "bob"), "ember")
    assert provider.flush(10)

    report = provider.forget_user("alice")
    assert all(entry.ok for entry in report) and len(report) == 1 + len(config.memory_namespaces())
    held = remote.held()
    for deployment in ("", "team-a", "shared"):
        assert provider.owner_id(session(deployment, "alice")) not in held
    assert any("delta" in t for t in held[provider.owner_id(session("elsewhere", "alice"))]), \
        "a namespace the config does not use is not touched"
    assert any("ember" in t for t in held[provider.owner_id(session("team-a", "bob"))])


def test_forget_user_reaches_a_namespace_an_earlier_config_wrote_under(remote: Remote) -> None:
    """A deployment renamed (or removed) since: its memories stay at the service under the old namespace, which the
    config no longer names; ``forget --user`` must still reach them (a red-team pass: they stayed)."""
    before = load_config({"ctx_plugins": {"deployments": {"team-old": {}}}})
    first = remote.make(config=before)
    tell(first, session("team-old", "alice"), "amber")
    tell(first, session("team-old", "bob"), "birch")
    assert first.flush(10)
    first.shutdown()
    after = load_config({"ctx_plugins": {"deployments": {"team-new": {}}}})
    provider = remote.make(config=after)
    assert "team-old" not in after.memory_namespaces()
    assert provider.owner_id(session("team-old", "alice")) in remote.held()  # the positive control
    report = provider.forget_user("alice")
    assert all(entry.ok for entry in report), report
    held = remote.held()
    assert provider.owner_id(session("team-old", "alice")) not in held
    assert any("birch" in t for t in held[provider.owner_id(session("team-old", "bob"))])
    provider.shutdown()


@pytest.mark.parametrize(("damage", "salvaged"), [
    (b'["", "team-o', False), (b'{"names": ["", "team-old"]}', True), (b'["", "team-old"', True), (b"7", False),
    (b"\xff\xfe[", False)], ids=["cut-short", "an-object", "cut-after-the-name", "a-number", "not-utf8"])
def test_a_damaged_note_of_namespaces_is_kept_aside_and_forget_says_so(remote: Remote, damage: bytes,
                                                                        salvaged: bool) -> None:
    """A hostile-values pass: a damaged ``namespaces.json`` was replaced by the new config's namespaces without a word,
    and ``forget --user`` then reported success with the old deployment's memories still at the service. Now the
    file is kept aside, the names its text still holds are reached, and the report says what may remain."""
    first = remote.make(config=load_config({"ctx_plugins": {"deployments": {"team-old": {}}}}))
    tell(first, session("team-old", "alice"), "amber")
    assert first.flush(10)
    first.shutdown()
    noted = first.state_dir / "namespaces.json"
    assert json.loads(noted.read_text(encoding="utf-8")) == ["", "team-old"]  # the positive control: it was noted
    noted.write_bytes(damage)
    provider = remote.make(config=load_config({"ctx_plugins": {"deployments": {"team-new": {}}}}))
    tell(provider, session("team-new", "bob"), "birch")  # a write: the new config's namespaces are noted
    assert provider.flush(10)
    assert noted.with_name("namespaces.json.damaged").read_bytes() == damage
    report = provider.forget_user("alice")
    [doubt] = [entry for entry in report if not entry.ok]
    assert "namespaces.json" in str(doubt.error) and "--deployment" in str(doubt.error), doubt
    assert (provider.owner_id(session("team-old", "alice")) not in remote.held()) is salvaged
    provider.shutdown()


def test_a_fact_saved_by_the_tool_notes_its_namespace(remote: Remote) -> None:
    """A hostile-values pass: a memory saved with the provider's own tool was sent without the write queue, which
    is where the namespace was noted; a process that stopped before any turn was synced left it out of reach of a
    forget after the deployment was renamed."""
    first = remote.make(config=load_config({"ctx_plugins": {"deployments": {"team-old": {}}}}))
    alice = session("team-old", "alice")
    name, args = (("ctx_mem0_add", {"content": fact("amber")}) if remote.name == "ctx-mem0" else
                  ("ctx_honcho_conclude", {"conclusion": fact("amber")}))
    assert json.loads(first.handle_tool_call(name, args, session=alice))["success"]
    first.shutdown()
    assert provider_owner_held(remote, first, alice)  # the positive control: the service holds it
    provider = remote.make(config=load_config({"ctx_plugins": {"deployments": {"team-new": {}}}}))
    assert all(entry.ok for entry in provider.forget_user("alice"))
    assert not provider_owner_held(remote, provider, alice)
    provider.shutdown()


def provider_owner_held(remote: Remote, provider: RemoteProvider, owner: SessionInfo) -> bool:
    return any("amber" in text for text in remote.held().get(provider.owner_id(owner), []))


def test_forget_user_takes_their_queued_and_spooled_writes_out_and_reports_the_service_down(
        remote: Remote, tmp_path: Path) -> None:
    alice, bob = session("", "alice"), session("", "bob")
    remote.stub.stop()
    earlier = remote.make(failure_threshold=1, cooldown_seconds=0.2)
    tell(earlier, alice, "amber")
    tell(earlier, bob, "birch")
    earlier.shutdown()  # the service is down: both are spooled
    spool = tmp_path / "hermes" / "ctx_plugins" / remote.name / "queue.jsonl"
    assert earlier.spooled() == 2

    # `hermes-ctx forget` runs in a process of its own: it rewrites the spool, and cannot reach the service
    queue, service = remote.make().forget_user("alice", namespaces=[""])
    assert queue.ok and queue.removed == 1 and queue.detail == "0 queued in this process, 1 spooled on disk"
    assert not service.ok and service.removed is None and "may still be at the service" in service.error
    spooled = spool.read_text(encoding="utf-8")
    assert "birch" in spooled and "amber" not in spooled, "the spool keeps everyone else's records"
    assert oct(spool.stat().st_mode & 0o777) == "0o600"

    serving = remote.make(failure_threshold=1, cooldown_seconds=0.2)
    tell(serving, alice, "cedar")  # its writer takes over the spool: bob's "birch" is queued here now
    tell(serving, bob, "delta")
    queue, service = serving.forget_user("alice", namespaces=[""])
    assert queue.removed == 1 and queue.detail == "1 queued in this process, 0 spooled on disk"
    assert not service.ok

    remote.stub.start()
    assert serving.flush(10)
    held = remote.held()
    assert serving.owner_id(alice) not in held, "none of her writes reached the service"
    bobs = " ".join(held[serving.owner_id(bob)])
    assert "birch" in bobs and "delta" in bobs


def test_forget_user_waits_for_their_write_in_flight_before_deleting(remote: Remote) -> None:
    """A write already on its way would otherwise land after the deletion, and stay."""
    provider = remote.make(timeout=5.0)
    alice, bob = session("", "alice"), session("", "bob")
    tell(provider, bob, "birch")
    assert provider.flush(10)
    remote.stub.delay(0.5, path=remote.write_path)
    tell(provider, alice, "amber")
    assert wait_until(lambda: len(remote.stub.requests_to("POST", remote.write_path)) == 2), "hers is being sent"
    assert all(entry.ok for entry in provider.forget_user("alice", namespaces=[""]))
    assert wait_until(lambda: provider.stats.sent == 2), "her write arrived (before the deletion)"
    held = remote.held()
    assert provider.owner_id(alice) not in held and "birch" in " ".join(held[provider.owner_id(bob)])


def test_forget_user_reports_a_service_that_does_not_answer_in_time(remote: Remote) -> None:
    provider = remote.make(timeout=5.0, tool_wait=0.3)
    remote.stub.hang(times=10)
    report = provider.forget_user("alice", namespaces=[""])
    assert report[0].ok and "did not finish within 0.3s" in report[1].error
    remote.stub.clear_faults()
    remote.stub.stop()  # lets the hung requests go


def test_forget_user_of_an_unusable_provider_says_why(remote: Remote, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("MEM0_API_KEY", "HONCHO_API_KEY", "HONCHO_URL", "HONCHO_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    where = "host" if remote.name == "ctx-mem0" else "base_url"
    provider = remote.make(api_key="", **{where: ""})  # the hosted service, without a key
    queue, service = provider.forget_user("alice", namespaces=[""])
    assert queue.ok and "is not usable" in service.error and remote.stub.requests == []


# ---------------------------------------------------------------- Mem0 specifics


def test_mem0_tools_change_only_the_owners_own_memories(mem0: Mem0StubServer, tmp_path: Path) -> None:
    for build in provider_factory(Mem0Provider, tmp_path, lambda url: {"api_key": MEM0_KEY, "host": url}):
        provider = build(mem0.base_url)
        here, there = session("", "alice"), session("team-a", "alice")
        theirs = mem0.seed("alice's locker code is amber", user_id=provider.owner_id(here))
        agents = mem0.seed("the agent's own note", agent_id="hermes")
        for memory_id, intruder in ((theirs, there), (agents, here)):
            refused = json.loads(provider.handle_tool_call("ctx_mem0_delete", {"memory_id": memory_id},
                                                           session=intruder))
            assert refused == {"success": False, "error": f"no memory {memory_id!r} for this user"}
        assert len(mem0.memories) == 2
        assert json.loads(provider.handle_tool_call("ctx_mem0_delete", {"memory_id": theirs}, session=here))["success"]
        assert [m["memory"] for m in mem0.memories] == ["the agent's own note"]
        odd = json.loads(provider.handle_tool_call("ctx_mem0_delete", {"memory_id": "m\ud800"}, session=here))
        assert odd == {"success": False, "error": "no memory 'm\\ud800' for this user"}
        assert provider.breaker.status("ctx-mem0") == "ok"


def test_the_mem0_stub_deletes_by_filter_as_the_platform_does(mem0: Mem0StubServer, tmp_path: Path) -> None:
    from mem0 import MemoryClient

    client = MemoryClient(api_key=MEM0_KEY, host=mem0.base_url)
    mem0.seed("alice's", user_id="ualice")
    mem0.seed("bob's", user_id="ubob")
    mem0.seed("the agent's", agent_id="hermes")
    with pytest.raises(Exception, match="At least one filter is required"):
        client.delete_all()
    assert client.delete_all(user_id="ualice") == {"message": "Memories deleted successfully!"}
    assert [m["memory"] for m in mem0.memories] == ["bob's", "the agent's"]
    client.delete_all(user_id="*")  # '*': every memory that has a user
    assert [m["memory"] for m in mem0.memories] == ["the agent's"]
    client.client.close()


class SwappingHoncho(HonchoStubServer):
    """A service (or a proxy in front of it) that answers one peer's search as another's: a bug on their side."""

    swap: tuple[str, str] | None = None

    def handle(self, request: Any) -> Any:
        if self.swap and request.path.endswith(f"/peers/{self.swap[0]}/search"):
            request = type(request)(**{**request.__dict__,
                                       "path": request.path.replace(self.swap[0], self.swap[1])})
        return super().handle(request)


def test_a_honcho_search_answered_with_another_peers_messages_shows_them_to_nobody(tmp_path: Path) -> None:
    """Before: ``ctx_honcho_search`` showed bob alice's messages when the service answered his search with hers,
    though each result named alice's peer (Mem0's results naming another owner were dropped already)."""
    with SwappingHoncho(api_keys=(HONCHO_KEY,)) as honcho:
        provider = HonchoProvider({"api_key": HONCHO_KEY, "base_url": honcho.base_url, "workspace_id": "ws",
                                   "max_retries": 0}, hermes_home=tmp_path)
        alice, bob = session("", "alice"), session("", "bob")
        tell(provider, alice, "kumquat")
        tell(provider, bob, "kumquat")
        assert provider.flush(10)
        mine = json.loads(provider.handle_tool_call("ctx_honcho_search", {"query": "kumquat"}, session=bob))
        assert mine["count"] >= 1 and all(fact("kumquat") in r["content"] for r in mine["results"])
        honcho.swap = (provider.owner_id(bob), provider.owner_id(alice))
        swapped = json.loads(provider.handle_tool_call("ctx_honcho_search", {"query": "kumquat"}, session=bob))
        assert swapped == {"results": [], "count": 0}
        provider.shutdown()


# ---------------------------------------------------------------- deployments with services of their own


def left_unsent(remote: Remote, config: Any, *told: tuple[SessionInfo, str]) -> RemoteProvider:
    """A provider of ``config`` whose service is down while ``told`` owners tell their words, then shut down: what it
    could not send is left on disk (its service stays stopped)."""
    remote.stub.stop()
    provider = remote.make(config=config, failure_threshold=1, cooldown_seconds=30)
    for owner, word in told:
        tell(provider, owner, word)
    assert wait_until(lambda: "suspended" in provider.breaker.status(remote.name))
    provider.shutdown()
    return provider


def test_a_write_one_deployment_could_not_send_never_reaches_another_deployments_service(
        remote: Remote, tmp_path: Path) -> None:
    """Two deployments of one home, each with its own service (a tenant's account: its host and key). Tenant one's
    service is down at its write and the process stops; the next process serves tenant two only. Before, one queue
    folder held both: tenant two's queue took the write over and sent it to tenant two's service with tenant two's
    key (a red-team pass). Now it waits for tenant one's queue, and a forget reaches it there."""
    config = {"ctx_plugins": {"deployments": {"one": {}, "two": {}}}}
    one, two = load_config(config, deployment="one"), load_config(config, deployment="two")
    alice, bob = session("one", "alice"), session("two", "bob")
    with type(remote.stub)() as other:
        tenant_two = dataclasses.replace(remote, stub=other)
        first = left_unsent(remote, one, (alice, "amber"))
        assert first.spooled() == 1

        second = tenant_two.make(config=two)  # the next process: tenant two's users only
        second.on_session_start(bob)
        tell(second, bob, "birch")
        second.shutdown()
        assert any("birch" in text for text in itertools.chain(*tenant_two.held().values())), "positive control"
        assert not any("amber" in text for text in itertools.chain(*tenant_two.held().values())), tenant_two.held()
        assert first.spooled() == 1, "tenant one's write waits for tenant one's queue"

        remote.stub.start()
        later = remote.make(config=one)
        later.on_session_start(alice)
        assert wait_until(lambda: any("amber" in text for text in itertools.chain(*remote.held().values())))
        assert later.spooled() == 0


def test_forget_reaches_the_writes_another_deployment_left_queued(remote: Remote) -> None:
    """A deployment the config no longer names has no provider to reach its queue folder: any provider's forget does
    (the top-level settings' here), removing only the forgotten user's writes."""
    one = load_config({"ctx_plugins": {"deployments": {"one": {}}}}, deployment="one")
    first = left_unsent(remote, one, (session("one", "alice"), "amber"), (session("one", "bob"), "birch"))
    assert first.spooled() == 2
    remote.stub.start()
    top = remote.make(config=load_config({}))  # deployment "one" removed from the config since
    report = top.forget_user("alice", namespaces=["one"])
    queued = next(item for item in report if "write queue" in item.store)
    assert queued.ok and queued.removed == 1, report
    assert first.spooled() == 1, "bob's write stays for his deployment's queue"


def test_forgetting_a_deployments_fixed_user_id_leaves_other_deployments_users_writes(remote: Remote) -> None:
    """Deployment "kiosk" stores every session under one fixed id ("team"); deployment "two" stores per user. A plain
    forget runs every deployment's provider over every queue folder: the kiosk's read alice's and bob's writes in
    "two"'s folder with its own ``user_id`` -- as "team"'s -- and ``forget --user team`` deleted them (a review,
    ctx-honcho). Each write keeps the owner it was queued for; the kiosk's own write is still "team"'s."""
    config = {"ctx_plugins": {"deployments": {"two": {}, "kiosk": {}}}}
    two, kiosk = load_config(config, deployment="two"), load_config(config, deployment="kiosk")
    first = left_unsent(remote, two, (session("two", "alice"), "amber"), (session("two", "bob"), "birch"))
    assert first.spooled() == 2
    shared = remote.make(config=kiosk, user_id="team", failure_threshold=1, cooldown_seconds=30)
    tell(shared, session("kiosk", "carol"), "cedar")
    assert wait_until(lambda: "suspended" in shared.breaker.status(remote.name))
    shared.shutdown()
    assert shared.spooled() == 1
    remote.stub.start()
    later = remote.make(config=kiosk, user_id="team")
    report = later.forget_user("team")
    assert all(item.ok for item in report), report
    assert shared.spooled() == 0, "the kiosk's own write was team's (positive control)"
    assert first.spooled() == 2, "alice's and bob's writes in deployment two stay"
    later.shutdown()


def test_a_honcho_write_queued_before_owners_were_stamped_is_read_by_its_own_namespaces_settings_only(
        honcho: HonchoStubServer, tmp_path: Path) -> None:
    """A write queued before ctx-honcho stamped the owner (``scope`` alone): a provider reads it with its own fixed
    ``user_id`` only when it is of its own namespace; another namespace's write is its session's user's."""
    config = {"ctx_plugins": {"deployments": {"two": {}, "kiosk": {}}}}
    for build in provider_factory(HonchoProvider, tmp_path, lambda url: {
            "api_key": HONCHO_KEY, "base_url": url, "workspace_id": "ws", "max_retries": 0}):
        kiosk = build(honcho.base_url, config=load_config(config, deployment="kiosk"), user_id="team")

        def unstamped(deployment: str, user: str) -> dict[str, Any]:
            return {"kind": "messages", "messages": [], "scope": {"session_id": "s1", "user_id": user,
                                                                  "chat_id": "", "deployment": deployment}}

        assert kiosk.write_owner(unstamped("kiosk", "carol")) == kiosk.owner_for("kiosk", "team")
        assert kiosk.write_owner(unstamped("two", "alice")) == kiosk.owner_for("two", "alice")
        assert kiosk.write_owner({**unstamped("two", "alice"), "owner": "x"}) == "x"
        kiosk.shutdown()


def test_a_write_queue_that_could_not_start_is_made_again_once_its_folder_is_fixed(remote: Remote) -> None:
    """A queue that could not start (its folder not writable) stayed this process's queue: every later write said
    "the write queue is closed", and none was sent after the folder was fixed (a newcomer walk, ctx-local's twin)."""
    from hermes_ctx_plugins.storage.queue import QueueClosedError

    provider = remote.make()
    provider.queue_dir.parent.mkdir(parents=True, exist_ok=True)
    provider.queue_dir.write_text("in the way")
    alice = session("", "alice")
    for word in ("amber", "birch"):
        with pytest.raises(OSError) as failed:
            tell(provider, alice, word)
        assert not isinstance(failed.value, QueueClosedError), failed.value
    provider.queue_dir.unlink()
    tell(provider, alice, "cedar")
    assert wait_until(lambda: any("cedar" in text for text in itertools.chain(*remote.held().values())))


def test_a_queued_line_that_is_json_but_no_write_is_set_aside_not_retried_as_a_failing_service(
        remote: Remote) -> None:
    """A line of the backlog that parses but is no write (``{}``, ``{"ids": 5}``: a hand edit) failed in ``send_write``
    like a service error at every start, was never set aside, and with a low ``failure_threshold`` paused memory for
    everyone (a review). It is set aside at once; the writes around it are sent."""
    first = left_unsent(remote, load_config({}), (session("", "alice"), "amber"))
    assert first.spooled() == 1
    first.backlog.write_text('{}\n{"ids": 5, "scope": 7}\n' + first.backlog.read_text())
    remote.stub.start()
    later = remote.make(config=load_config({}), failure_threshold=1)
    later.on_session_start(session("", "bob"))
    assert wait_until(lambda: any("amber" in text for text in itertools.chain(*remote.held().values())))
    assert wait_until(lambda: later.spooled() == 0)
    assert "suspended" not in later.breaker.status(remote.name)
    later.shutdown()


def test_a_honcho_write_queued_before_user_id_changed_is_sent_to_its_owners_own_session(
        honcho: HonchoStubServer, tmp_path: Path) -> None:
    """alice's turn waits (the service down); the operator sets ``user_id: team``; the write is sent, then bob's turn
    is stored as team's. The write went under alice's stamped peer into the session of the settings of the time of
    sending -- team's -- and ``forget --user alice`` deleted that session, bob's message with it (a review). It goes to
    alice's own session: the forget leaves team's."""
    config = {"ctx_plugins": {"deployments": {"kiosk": {}}}}
    kiosk = load_config(config, deployment="kiosk")
    alice, bob = session("kiosk", "alice"), session("kiosk", "bob", 2)
    for build in provider_factory(HonchoProvider, tmp_path, lambda url: {
            "api_key": HONCHO_KEY, "base_url": url, "workspace_id": "ws", "max_retries": 0,
            "session_strategy": "per-user"}):
        honcho.stop()
        before = build(honcho.base_url, config=kiosk, failure_threshold=1, cooldown_seconds=30)
        tell(before, alice, "amber")
        assert wait_until(lambda: "suspended" in before.breaker.status("ctx-honcho"))  # noqa: B023 (waited for here)
        before.shutdown()
        honcho.start()
        after = build(honcho.base_url, config=kiosk, user_id="team")
        after.on_session_start(bob)
        assert wait_until(lambda: any("amber" in m["content"] for m in honcho.messages))
        tell(after, bob, "birch")
        assert wait_until(lambda: any("birch" in m["content"] for m in honcho.messages))
        owner = after.owner_for("kiosk", "alice")
        shared = [sid for sid, peers in honcho.sessions.items() if owner in peers and len(set(peers) - {"hermes"}) > 1]
        assert not shared, honcho.sessions  # alice's peer joined nobody else's session
        report = after.forget_user("alice")
        assert all(item.ok for item in report), report
        assert any("birch" in m["content"] for m in honcho.messages), "bob's message stays"
        assert not any("amber" in m["content"] for m in honcho.messages), "alice's is forgotten"
        after.shutdown()


def test_a_deployments_fixed_user_id_equal_to_the_top_levels_default_user_id_is_not_the_anonymous_users(
        remote: Remote) -> None:
    """Deployment "lobby" stores everyone as ``hermes-user`` -- the top level's ``default_user_id``, its anonymous
    user's id. lobby's provider made the top-level namespace's owners with its own settings: ``forget --user
    hermes-user`` took the anonymous user's queued write (a review). It makes them with the top level's."""
    lobby = load_config({"ctx_plugins": {"deployments": {"lobby": {}}}}, deployment="lobby")
    top = left_unsent(remote, load_config({}), (session("", ""), "amber"))
    assert top.spooled() == 1
    remote.stub.start()
    provider = remote.make(config=lobby, user_id="hermes-user")
    assert provider.owner_for("", "") == "hermes-user" and provider.owner_for("", "hermes-user") != "hermes-user"
    report = provider.forget_user("hermes-user")
    assert all(item.ok for item in report), report
    assert top.spooled() == 1, "the anonymous user's write stays"
    provider.shutdown()


def test_honcho_writes_queued_unstamped_in_a_namespace_two_deployments_share_are_their_users(
        honcho: HonchoStubServer, tmp_path: Path) -> None:
    """Deployments "two" (per user) and "kiosk" (everyone as "team") share a namespace; alice's and bob's writes,
    queued in "two"'s folder before owners were stamped, were read by kiosk's forget as team's (its own namespace,
    its own settings) and taken by ``forget --user team`` (a review). Another folder's write is read by its own user."""
    config = {"ctx_plugins": {"deployments": {"two": {"memory": {"namespace": "shared"}},
                                              "kiosk": {"memory": {"namespace": "shared"}}}}}
    two, kiosk = load_config(config, deployment="two"), load_config(config, deployment="kiosk")
    for build in provider_factory(HonchoProvider, tmp_path, lambda url: {
            "api_key": HONCHO_KEY, "base_url": url, "workspace_id": "ws", "max_retries": 0}):
        remote = Remote("ctx-honcho", honcho, build, "ctx_honcho_search", "/messages$")
        first = left_unsent(remote, two, (session("shared", "alice"), "amber"), (session("shared", "bob"), "birch"))
        lines = [json.loads(line) for line in first.backlog.read_text().splitlines()]
        assert len(lines) == 2 and all(line.pop("owner") for line in lines)  # as the code before stamping wrote them
        first.backlog.write_text("".join(json.dumps(line) + "\n" for line in lines))
        honcho.start()
        shared = build(honcho.base_url, config=kiosk, user_id="team")
        report = shared.forget_user("team")
        assert all(item.ok for item in report), report
        assert first.spooled() == 2, "alice's and bob's writes stay"
        report = shared.forget_user("alice")
        assert first.spooled() == 1 and "birch" in first.backlog.read_text()  # the positive control
        shared.shutdown()


def test_forget_reaches_a_fixed_id_a_deployment_wrote_under_in_the_top_level_namespace_before_it_moved(
        remote: Remote) -> None:
    """Deployment "lobby" shared the top-level namespace with a fixed ``user_id`` ("team"), then got a namespace of its
    own. Its memories stay at the service under "team" in the top-level namespace, which neither the top level's
    settings nor lobby's current ones name: ``forget --user team`` left them and said it was done (a review). The ids
    settings wrote under verbatim there are noted, and the forget reaches them."""
    before = load_config({"ctx_plugins": {"deployments": {"lobby": {"memory": {"namespace": ""}}}}}, deployment="lobby")
    lobby = remote.make(config=before, user_id="team")
    tell(lobby, session("", "alice"), "amber")
    assert lobby.flush(10)
    lobby.shutdown()
    assert any("amber" in text for text in remote.held().get("team", [])), remote.held()  # the premise
    after = load_config({"ctx_plugins": {"deployments": {"lobby": {}}}}, deployment="lobby")
    moved = remote.make(config=after, user_id="team")
    report = moved.forget_user("team")
    assert all(item.ok for item in report), report
    assert not any("amber" in text for text in itertools.chain(*remote.held().values())), remote.held()
    moved.shutdown()


def test_a_deployment_sharing_the_top_level_namespace_cannot_take_the_top_levels_anonymous_id_as_its_fixed_one(
        remote: Remote) -> None:
    """Its users would be stored, recalled and forgotten as the top level's anonymous user (a review)."""
    shared = load_config({"ctx_plugins": {"deployments": {"lobby": {"memory": {"namespace": ""}}}}}, deployment="lobby")
    with pytest.raises(ConfigError, match="top level's default_user_id"):
        remote.make(config=shared, user_id="hermes-user")
    own = load_config({"ctx_plugins": {"deployments": {"lobby": {}}}}, deployment="lobby")
    remote.make(config=own, user_id="hermes-user").shutdown()  # a namespace of its own: no one else's id
    fixed = load_config({"ctx_plugins": {"options": {remote.name: {"user_id": "team", "default_user_id": "team"}},
                                         "deployments": {"lobby": {"memory": {"namespace": ""}}}}}, deployment="lobby")
    # a top level with a fixed id never uses its anonymous one: a deployment inheriting both is no clash (a review)
    remote.make(config=fixed, user_id="team", default_user_id="team").shutdown()


def test_a_forget_scoped_to_a_deployment_sharing_the_top_level_namespace_takes_only_its_own_ids(
        remote: Remote) -> None:
    """Deployment "lobby" shares the top-level namespace, its anonymous users stored as "lobbyanon"; the top level's
    as "hermes-user". A forget of the anonymous user scoped to lobby took both: the note of ids used verbatim does not
    say whose each is (a review). Scoped, it takes lobby's alone; every namespace, both."""
    config = {"ctx_plugins": {"deployments": {"lobby": {"memory": {"namespace": ""}}}}}
    top = remote.make(config=load_config(config))
    lobby = remote.make(config=load_config(config, deployment="lobby"), default_user_id="lobbyanon")
    tell(top, session("", ""), "amber")
    tell(lobby, session("", ""), "birch")
    assert top.flush(10) and lobby.flush(10)
    assert remote.held().get("hermes-user") and remote.held().get("lobbyanon"), remote.held()  # the premise
    report = lobby.forget_user("", namespaces=[""])
    assert all(item.ok for item in report), report
    assert "lobbyanon" not in remote.held() and any("amber" in t for t in remote.held()["hermes-user"])
    report = top.forget_user("")
    assert all(item.ok for item in report), report
    assert "hermes-user" not in remote.held(), remote.held()


def test_a_damaged_note_of_verbatim_ids_is_said_and_what_it_still_names_is_reached(remote: Remote) -> None:
    """A damaged ``verbatim.json`` was dropped in silence: ``forget --user`` of a fixed id it named reported success
    and left the memories (a review)."""
    config = {"ctx_plugins": {"deployments": {"lobby": {"memory": {"namespace": ""}}}}}
    lobby = remote.make(config=load_config(config, deployment="lobby"), user_id="team")
    tell(lobby, session("", "alice"), "amber")
    assert lobby.flush(10)
    note = lobby.state_dir / "verbatim.json"
    note.write_text(note.read_text().replace("[", "{", 1))
    top = remote.make(config=load_config({"ctx_plugins": {"deployments": {"lobby": {}}}}))  # lobby moved since
    report = top.forget_user("team")
    assert any("used verbatim" in item.store and not item.ok for item in report), report
    assert "team" not in remote.held(), remote.held()


def test_a_noted_verbatim_id_shaped_like_a_users_stored_id_reaches_nobody(remote: Remote) -> None:
    """A hand-edited note naming "user_id:ualice" made ``forget --user ualice`` delete alice's memories (her stored
    id): no setting can hold such an id (refused), so the note's is ignored (a review)."""
    top = remote.make(config=load_config({}))
    tell(top, session("", "alice"), "amber")
    assert top.flush(10)
    stored = top.owner_for("", "alice")
    (top.state_dir / "verbatim.json").write_text(json.dumps([f"user_id:{stored}"]))
    report = top.forget_user(stored)
    assert all(item.ok for item in report), report
    assert any("amber" in text for text in remote.held().get(stored, [])), remote.held()
    top.shutdown()


def legacy(provider: RemoteProvider) -> Path:
    """``provider``'s unsent writes moved where the code before per-deployment folders kept them, as it wrote them."""
    lines = [json.loads(line) for line in provider.backlog.read_text().splitlines()]
    assert lines and all(line.pop("queued_in") == provider.config.deployment for line in lines)
    path = provider.state_dir / "queue.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    provider.backlog.unlink()
    return path


def test_a_plain_forget_reaches_a_held_write_of_a_namespace_nothing_names_any_more(remote: Remote) -> None:
    """A write held aside (``queue.held.jsonl``) of a deployment removed before the namespaces written under were noted:
    forget built its owner ids from the config's and the noted namespaces only, said "forget --user reaches them", and
    left it (a review). A plain forget takes the user's write of any namespace; another user's stays."""
    gone = load_config({"ctx_plugins": {"deployments": {"gone": {}}}}, deployment="gone")
    first = left_unsent(remote, gone, (session("gone", "dave"), "delta"), (session("gone", "erin"), "ember"))
    lines = [json.loads(line) for line in first.backlog.read_text().splitlines()]
    assert len(lines) == 2 and all(line.pop("queued_in") == "gone" for line in lines)
    first.backlog.unlink()
    held = first.state_dir / "queue.held.jsonl"
    held.write_text("".join(json.dumps(line) + "\n" for line in lines))
    (first.state_dir / "namespaces.json").unlink(missing_ok=True)
    remote.stub.start()
    top = remote.make(config=load_config({}))
    report = top.forget_user("dave")
    queued = next(item for item in report if "write queue" in item.store)
    assert queued.ok and queued.removed == 1, report
    left = held.read_text()
    assert "ember" in left and "delta" not in left
    top.shutdown()


@pytest.mark.parametrize("case", ["own", "shared", "removed", "none left"])
def test_a_write_queued_before_deployments_had_folders_never_goes_to_another_tenants_service(
        remote: Remote, case: str) -> None:
    """Writes a named deployment queued before each deployment had a folder of its own sit in the provider's folder,
    which the top-level settings' queue reads: it sent tenant one's write to the top-level service with its key (a
    review). It hands such a write to its deployment's folder, whose queue sends it there; when two deployments share
    its namespace (the next review: the first by name got it) or none has it any more (the one after: the top level
    sent it), it is kept aside: who queued it cannot be told."""
    url = "host" if remote.name == "ctx-mem0" else "base_url"
    shared = case == "shared"
    with type(remote.stub)() as top_service, type(remote.stub)() as two_service:
        space = {"memory": {"namespace": "shared"}} if shared else {}
        config = {"ctx_plugins": {"options": {remote.name: {url: top_service.base_url}}, "deployments": {
            "one": {**space, "options": {remote.name: {url: remote.stub.base_url}}},
            "two": {**space, "options": {remote.name: {url: two_service.base_url}}}}}}
        one = load_config(config, deployment="one")
        if case == "removed":  # renamed since
            config["ctx_plugins"]["deployments"]["uno"] = config["ctx_plugins"]["deployments"].pop("one")
        if case == "none left":  # every deployment removed since (a review: then every old write was sent here)
            config["ctx_plugins"]["deployments"] = {}
        top = load_config(config)
        alice = session(one.memory_namespace, "alice")
        the_top, tenant_two = (dataclasses.replace(remote, stub=s) for s in (top_service, two_service))
        first = left_unsent(remote, one, (alice, "amber"))
        old = legacy(first)

        upgraded = the_top.make(config=top)  # the next process: the top-level settings only
        upgraded.on_session_start(session("", "bob"))
        tell(upgraded, session("", "bob"), "birch")
        upgraded.shutdown()
        held = list(itertools.chain(*the_top.held().values()))
        assert any("birch" in text for text in held), "positive control"
        assert not any("amber" in text for text in held), the_top.held()
        assert not old.exists()
        if case != "own":  # one's or two's, or a deployment's no longer there: not guessed
            assert not first.backlog.exists() and upgraded.held_count() == 1
            report = upgraded.forget_user("alice", namespaces=[one.memory_namespace])
            assert report[0].ok and report[0].removed == 1 and upgraded.held_count() == 0, report
            return
        assert first.backlog.exists(), "handed to tenant one's folder"
        remote.stub.start()
        later = remote.make(config=one)
        later.on_session_start(alice)
        assert wait_until(lambda: any("amber" in text for text in itertools.chain(*remote.held().values())))
        assert not any("amber" in text for text in itertools.chain(*tenant_two.held().values()))


@pytest.mark.parametrize(("deployment", "user"), [
    ("", "alice"), ("", ""), ("one", "alice"), ("one", ""), ("a-b", "c-d"), ("d-x", "u"), ("m\ud800", "é"),
    ("", "x" * 200), ("team", "hermes-user")])
def test_the_namespace_of_an_owner_id_is_the_one_it_was_made_in(deployment: str, user: str) -> None:
    from hermes_ctx_plugins.scope import namespace_of

    owner = service_id(deployment, user)
    assert namespace_of(owner) == (None if owner.startswith("h") and len(owner) == 49 else deployment)
    assert namespace_of("hermes-user") == "" and namespace_of("dave-smith") == "", "verbatim top-level ids"


@pytest.mark.parametrize("later", ["noted-at-a-later-write", "never-noted"])
def test_a_namespace_written_under_while_the_notes_lock_was_held_is_still_forgotten(
        remote: Remote, later: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The namespaces note's lock held by another process at a process's first write (its wait bounded since a
    hostile-values pass): the namespace was noted nowhere, and after the deployment was renamed `forget --user`
    reported success with the user's memories still at the service (a review). Kept beside the note and folded into
    it at a later write; forgotten either way. (A review's test, adopted.)"""
    import subprocess
    import sys

    from hermes_ctx_plugins.memory.remote import base
    from hermes_ctx_plugins.storage import files

    monkeypatch.setattr(base, "NOTE_LOCK_SECONDS", 0.2)
    first = remote.make(config=load_config({"ctx_plugins": {"deployments": {"team-old": {}}}}))
    side = files.lock_path(first.state_dir / "namespaces.json")
    side.parent.mkdir(parents=True, exist_ok=True)
    holder = subprocess.Popen([sys.executable, "-c", "import fcntl, sys, time\nf = open(sys.argv[1], 'a')\n"
                               "fcntl.flock(f, fcntl.LOCK_EX)\nprint('held', flush=True)\ntime.sleep(120)", str(side)],
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "held\n"
        tell(first, session("team-old", "alice"), "amber")  # the first write: its note times out
    finally:
        holder.kill()
        holder.communicate()
    if later == "noted-at-a-later-write":
        first._namespaces_retry = 0.0  # as if a minute had passed
    tell(first, session("team-old", "alice", 2), "cedar")
    tell(first, session("team-old", "bob"), "birch")
    assert first.flush(10)
    first.shutdown()
    provider = remote.make(config=load_config({"ctx_plugins": {"deployments": {"team-new": {}}}}))
    alice = provider.owner_id(session("team-old", "alice"))
    assert alice in remote.held()  # the positive control: it is there
    report = provider.forget_user("alice")
    assert all(entry.ok for entry in report), report
    assert not remote.held().get(alice), report
    assert remote.held().get(provider.owner_id(session("team-old", "bob")))  # and bob's stay
    provider.shutdown()


@pytest.mark.parametrize("slow", [True, False], ids=["note-write-slow", "control"])
def test_a_namespace_kept_while_another_process_folds_the_kept_ones_is_not_lost(
        remote: Remote, slow: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    """Process A folds the kept namespaces into the note and writes it slowly (a loaded disk's fsync); process B's
    note times out meanwhile and keeps its namespace: A deleted the kept file after its write, B's line with it, and
    after a rename `forget --user` reported success with the memories at the service (a review's test, adopted)."""
    import subprocess
    import sys
    import threading
    import time

    from hermes_ctx_plugins.memory.remote import base
    from hermes_ctx_plugins.storage import files

    def hold(path: Path) -> subprocess.Popen[str]:
        side = files.lock_path(path)
        side.parent.mkdir(parents=True, exist_ok=True)
        holder = subprocess.Popen([sys.executable, "-c", "import fcntl, sys, time\nf = open(sys.argv[1], 'a')\n"
                                   "fcntl.flock(f, fcntl.LOCK_EX)\nprint('held', flush=True)\ntime.sleep(120)",
                                   str(side)], stdout=subprocess.PIPE, text=True)
        assert holder.stdout is not None and holder.stdout.readline() == "held\n"
        return holder

    def config(*deployments: str) -> Any:
        return load_config({"ctx_plugins": {"deployments": {d: {} for d in deployments}}})

    monkeypatch.setattr(base, "NOTE_LOCK_SECONDS", 0.5)
    first = remote.make(config=config("team-z"))  # an earlier process's note timed out: its namespace kept
    holder = hold(first.state_dir / "namespaces.json")
    tell(first, session("team-z", "carol"), "zinc")
    holder.kill()
    holder.communicate()
    assert first.flush(10)
    first.shutdown()
    real = base.atomic_write

    def slow_write(path: Path, data: bytes, *args: Any, **kwargs: Any) -> None:
        if slow and Path(path).name == "namespaces.json":
            time.sleep(1.5)
        real(path, data, *args, **kwargs)

    monkeypatch.setattr(base, "atomic_write", slow_write)
    folding = remote.make(config=config("team-a"))
    thread = threading.Thread(target=tell, args=(folding, session("team-a", "dave"), "ash"))
    thread.start()
    time.sleep(0.3)
    keeping = remote.make(config=config("team-b"))
    tell(keeping, session("team-b", "alice"), "amber")  # slow: its note times out, team-b is kept
    thread.join()
    assert keeping.flush(10) and folding.flush(10)
    keeping.shutdown()
    folding.shutdown()
    after = remote.make(config=config("team-c"))  # team-b renamed since
    alice = after.owner_id(session("team-b", "alice"))
    assert alice in remote.held()  # the positive control: her memories are at the service
    report = after.forget_user("alice")
    assert all(entry.ok for entry in report) and not remote.held().get(alice), report
    after.shutdown()


def test_a_kept_namespaces_file_that_cannot_be_read_does_not_stop_the_note(remote: Remote) -> None:
    """A folder where a kept-namespaces file should be (a hand's mistake, a broken copy): the note was counted as not
    made, and a warning came every minute (a review). It is left where it is; the note is made."""
    provider = remote.make(config=load_config({"ctx_plugins": {"deployments": {"team-a": {}}}}))
    (provider.state_dir / "namespaces.kept-odd").mkdir(parents=True)
    tell(provider, session("team-a", "alice"), "amber")
    assert provider.flush(10)
    provider.shutdown()
    assert "team-a" in json.loads((provider.state_dir / "namespaces.json").read_text())
    assert (provider.state_dir / "namespaces.kept-odd").is_dir()


def test_a_kept_namespaces_file_that_is_there_but_unreadable_is_said_by_forget(
        remote: Remote, monkeypatch: pytest.MonkeyPatch) -> None:
    """A kept set of namespaces that cannot be read (another OS user's 0600 file, a read error): skipped in silence,
    and `forget --user` reported success with the memories of a renamed deployment at the service (a review). Its
    report names the file. (The read failure is injected for that one file: as root, modes do not apply.)"""
    first = remote.make(config=load_config({"ctx_plugins": {"deployments": {"team-z": {}}}}))
    tell(first, session("team-z", "alice"), "amber")
    assert first.flush(10)
    first.shutdown()
    (first.state_dir / "namespaces.json").unlink()  # team-z known only from a kept file now
    kept = first.state_dir / "namespaces.kept-unreadable"
    kept.write_text('"team-z"\n', encoding="utf-8")
    real = Path.read_text

    def unreadable(path: Path, *args: Any, **kwargs: Any) -> str:
        if path == kept:
            raise PermissionError(13, "Permission denied")
        return real(path, *args, **kwargs)

    monkeypatch.setattr(Path, "read_text", unreadable)
    provider = remote.make(config=load_config({"ctx_plugins": {"deployments": {"team-c": {}}}}))
    report = provider.forget_user("alice")
    provider.shutdown()
    failed = [entry for entry in report if not entry.ok]
    assert failed and str(kept) in str(failed[0].error) and "Permission denied" in str(failed[0].error), report

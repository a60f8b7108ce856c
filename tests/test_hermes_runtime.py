"""One runtime per registration, one bounded session table, no module globals (issue 14).

The table must stay at its cap however many sessions pass through hermes' hooks, must never drop the
session of an agent a Bridge still holds (its user's turns would land in the wrong deployment), and
two registrations — or two Bridges — in one process must not see each other's sessions.
"""

from __future__ import annotations

import copy
import gc
import importlib
import logging
import pkgutil
import time
from typing import Any

import pytest
from hermes_helpers import MODEL, configure_hermes, hermes_home, new_agent

import hermes_ctx_plugins.hermes
from hermes_ctx_plugins import SessionInfo, hookimpl, load_host
from hermes_ctx_plugins.manager import Host
from hermes_ctx_plugins.testing import FakeMemoryProvider, StubOpenAIServer

pytest.importorskip("run_agent", reason="the hermes extra is not installed")
from hermes_cli import plugins as hermes_plugins

from hermes_ctx_plugins.bridge import Bridge, SessionInUseError
from hermes_ctx_plugins.hermes.engine import HermesCtxEngine
from hermes_ctx_plugins.hermes.hooks import HookDispatcher
from hermes_ctx_plugins.hermes.runtime import Runtime, SessionTable

NO_MEMORY = {"ctx_plugins": {"compressor": "window", "memory": {"providers": []}}}


class Agent:
    """Stands in for an ``AIAgent`` where only its identity and lifetime matter (a table holder)."""


class Recaller(FakeMemoryProvider):
    name = "ctx-recall"


class Providers:
    @hookimpl
    def register_memory_providers(self, register: Any) -> None:
        register(Recaller)


BRIDGE_CONFIG = {"ctx_plugins": {"memory": {"providers": []},
                                 "deployments": {"support": {"memory": {"providers": ["ctx-recall"]}}}}}


def say(dispatcher: HookDispatcher, session_id: str, user: str) -> None:
    """One turn's first hook, as hermes calls it."""
    dispatcher.pre_llm_call(session_id=session_id, sender_id=user, user_message="hi", conversation_history=[],
                            model=MODEL, platform="cli")


def host() -> Host:
    return load_host(NO_MEMORY)


# -------------------------------------------------------------------------------------- the bound
def test_many_sessions_keep_the_table_at_its_cap() -> None:
    runtime = Runtime(host(), max_sessions=8)
    sizes = []
    for n in range(200):
        say(runtime.hooks, f"s{n}", f"user{n}")
        sizes.append(len(runtime.sessions))
    assert max(sizes) == 8 and sizes[-1] == 8
    # the newest sessions are the ones kept, with who they are and their turn count ...
    kept = runtime.sessions.session("s199")
    assert kept is not None and kept.user_id == "user199"
    assert runtime.sessions.turn("s199") == 1
    # ... and the oldest are gone
    assert runtime.sessions.session("s0") is None


def test_the_least_recently_used_session_goes_first() -> None:
    runtime = Runtime(host(), max_sessions=3)
    for n in range(20):
        say(runtime.hooks, "regular", "rita")  # keeps talking
        say(runtime.hooks, f"passer-by-{n}", f"p{n}")
    regular = runtime.sessions.session("regular")
    assert regular is not None and regular.user_id == "rita"
    assert runtime.sessions.turn("regular") == 20
    assert runtime.sessions.session("passer-by-0") is None
    assert runtime.sessions.session("passer-by-19") is not None


def test_a_live_agents_binding_is_never_dropped(caplog: pytest.LogCaptureFixture) -> None:
    runtime, deployment = Runtime(host(), max_sessions=4), host()
    agents = [Agent() for _ in range(6)]  # more live agents than the table's cap
    with caplog.at_level(logging.WARNING, logger="hermes_ctx_plugins.hermes"):
        for n, agent in enumerate(agents):
            runtime.sessions.bind(SessionInfo(session_id=f"bound-{n}", user_id=f"u{n}"), deployment, holder=agent)
        for n in range(50):
            say(runtime.hooks, f"stranger-{n}", "x")
    for n in range(6):  # every live agent's session still goes to its deployment, as its owner
        assert runtime.route(f"bound-{n}")[0] is deployment
        bound = runtime.sessions.bound(f"bound-{n}")
        assert bound is not None and bound.user_id == f"u{n}"
    assert runtime.route("stranger-49")[0] is runtime.host  # an unbound session goes to the runtime's host
    assert len(runtime.sessions) == 6  # over the cap by live agents only
    assert [r.getMessage() for r in caplog.records].count(  # said once, when it happened
        "hermes-ctx: 5 sessions are held by live Bridge agents, more than the 4 it keeps; they stay bound "
        "(release agents with plan.release() when evicting them)") == 1

    runtime.sessions.release(agents[0])  # the service evicts an agent from its cache
    assert runtime.sessions.bound("bound-0") is None
    del agents[1:3]  # ... or just drops two without releasing them
    gc.collect()
    for n in range(10):
        say(runtime.hooks, f"later-{n}", "y")
    assert len(runtime.sessions) == 4  # the table is back at its cap
    assert runtime.sessions.bound("bound-1") is None and runtime.sessions.bound("bound-2") is None
    for n in range(3, 6):
        assert runtime.route(f"bound-{n}")[0] is deployment


def test_a_session_id_is_refused_to_another_owner_only_while_its_agent_lives() -> None:
    table, deployment = SessionTable(), host()
    first = Agent()
    table.bind(SessionInfo(session_id="chat-1", user_id="u1"), deployment, holder=first)
    with pytest.raises(SessionInUseError, match="chat-1"):
        table.bind(SessionInfo(session_id="chat-1", user_id="u2"), deployment, holder=Agent())
    bound = table.bound("chat-1")
    assert bound is not None and bound.user_id == "u1"
    del first
    gc.collect()  # the agent is gone: nobody holds the id any more
    second = Agent()
    table.bind(SessionInfo(session_id="chat-1", user_id="u2"), deployment, holder=second)
    bound = table.bound("chat-1")
    assert bound is not None and bound.user_id == "u2"


def test_a_deep_copied_engine_shares_the_runtime_and_keeps_its_own_strategy() -> None:
    """hermes deep-copies the engine for every agent: each copy's sessions live in the one runtime."""
    runtime, deployment = Runtime(host()), host()
    template = HermesCtxEngine(deployment, runtime)
    agents = [Agent(), Agent()]
    copies = [copy.deepcopy(template) for _ in agents]
    for n, (agent, engine) in enumerate(zip(agents, copies, strict=True)):
        session = SessionInfo(session_id=f"a{n}", user_id=f"u{n}")
        runtime.sessions.bind(session, deployment, holder=agent)
        engine.bind(session, holder=agent)
    copies[0].compression_count = 3
    assert (copies[1].compression_count, template.compression_count) == (0, 0)
    copies[1].on_session_start("a1-child")  # hermes moved the second agent to a new session id
    child = runtime.sessions.bound("a1-child")
    assert child is not None and (child.user_id, child.parent_session_id) == ("u1", "a1")
    assert runtime.sessions.bound("a1") is None
    assert runtime.sessions.bound("a0") is not None  # the other agent's binding is untouched


# ------------------------------------------------------------------------ no state shared
def test_no_module_of_the_hermes_room_keeps_state() -> None:
    """Every module-level value of ``hermes_ctx_plugins.hermes`` is a constant: nothing a second
    registration or a second Bridge could share."""
    stateful = (Runtime, SessionTable, HookDispatcher, Host, HermesCtxEngine, dict, list, set)
    found = []
    for info in pkgutil.iter_modules(hermes_ctx_plugins.hermes.__path__, "hermes_ctx_plugins.hermes."):
        module = importlib.import_module(info.name)
        found += [f"{info.name}.{name}" for name, value in vars(module).items()
                  if not name.startswith("__") and isinstance(value, stateful)]
    assert found == []


def _write_hermes_config() -> None:
    home = hermes_home()
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.yaml").write_text(
        "plugins: {enabled: [hermes-ctx]}\nctx_plugins: {compressor: window, memory: {providers: []}}\n",
        encoding="utf-8")


def _runtime_of(manager: Any) -> Runtime:
    owners = [getattr(callback, "__self__", None) for callback in manager._hooks["pre_llm_call"]]
    [runtime] = [owner.runtime for owner in owners if isinstance(owner, HookDispatcher)]
    return runtime


def test_two_registrations_share_no_state() -> None:
    """Two hermes plugin managers in one process each call our ``register(ctx)``."""
    _write_hermes_config()
    first, second = hermes_plugins.PluginManager(), hermes_plugins.PluginManager()
    first.discover_and_load()
    second.discover_and_load()
    ours, theirs = _runtime_of(first), _runtime_of(second)
    assert ours is not theirs and ours.host is not theirs.host
    assert first._context_engine._runtime is ours and second._context_engine._runtime is theirs

    first.invoke_hook("pre_llm_call", session_id="s-1", sender_id="alice", user_message="hi",
                      conversation_history=[], model=MODEL, platform="cli")
    known = ours.sessions.session("s-1")
    assert known is not None and known.user_id == "alice"  # the registration hermes called knows alice
    assert theirs.sessions.session("s-1") is None  # the other one never heard of her
    agent = Agent()
    ours.sessions.bind(SessionInfo(session_id="s-2", user_id="bob"), ours.host, holder=agent)
    assert ours.sessions.bound("s-2") is not None and theirs.sessions.bound("s-2") is None


# ------------------------------------------------------------------------ in real hermes
def _wait_for_turns(provider: Recaller, user: str) -> list[str]:
    deadline = time.monotonic() + 5  # hermes' hooks may hand the turn over on another thread
    while not provider.turns.get(user) and time.monotonic() < deadline:
        time.sleep(0.02)
    return [t.user_text for t in provider.turns.get(user, [])]


def test_a_bridge_agent_keeps_its_deployment_while_strangers_overflow_the_table(stub: StubOpenAIServer) -> None:
    configure_hermes(stub)
    bridge = Bridge(BRIDGE_CONFIG, plugins=[Providers()])
    runtime = bridge.runtime
    runtime.sessions.max_sessions = 4  # a small table: a few strangers overflow it
    plan = bridge.deployment("support")
    alice = plan.apply(new_agent(stub, session_id="alice-1", user_id="alice", **plan.agent_kwargs()))
    for n in range(20):  # other users' turns pass through hermes' hooks
        hermes_plugins.invoke_hook("pre_llm_call", session_id=f"stranger-{n}", sender_id=f"u{n}", user_message="hi",
                                   conversation_history=[], model=MODEL, platform="cli")
    assert len(runtime.sessions) == 4
    assert runtime.sessions.session("stranger-0") is None  # strangers were dropped ...

    stub.reply("Noted.")
    alice.run_conversation("remember: my locker combination is 4-8-15-16", conversation_history=[])
    [recaller] = plan.host.memory_providers  # ... alice's binding was not: her turn reached her deployment
    assert _wait_for_turns(recaller, "alice") == ["remember: my locker combination is 4-8-15-16"]
    plan.release(alice)
    assert runtime.sessions.bound("alice-1") is None


def test_two_bridges_keep_their_agents_apart(stub: StubOpenAIServer) -> None:
    """Two Bridges with the same config in one process: each agent's turns reach its own Bridge's
    deployment, and one Bridge releasing an agent leaves the other's binding alone."""
    configure_hermes(stub)
    bridges = Bridge(BRIDGE_CONFIG, plugins=[Providers()]), Bridge(BRIDGE_CONFIG, plugins=[Providers()])
    plans = [b.deployment("support") for b in bridges]
    assert plans[0].host is not plans[1].host
    agents = [plan.apply(new_agent(stub, session_id=f"alice-{n}", user_id="alice", **plan.agent_kwargs()))
              for n, plan in enumerate(plans)]
    stub.reply("Noted.")
    agents[0].run_conversation("remember: my locker combination is 4-8-15-16", conversation_history=[])
    [first, second] = [plan.host.memory_providers[0] for plan in plans]
    assert _wait_for_turns(first, "alice") == ["remember: my locker combination is 4-8-15-16"]
    stub.reply("I do not know.")
    agents[1].run_conversation("what is my locker combination?", conversation_history=[])
    assert _wait_for_turns(second, "alice") == ["what is my locker combination?"]  # its own turn only
    assert "4-8-15-16" not in str(stub.chat_requests[-1].body)  # nothing of the first Bridge's alice

    plans[0].release(agents[1])  # not this Bridge's agent: nothing to release
    assert bridges[1].runtime.route("alice-1")[0] is plans[1].host
    plans[1].release(agents[1])
    assert bridges[1].runtime.sessions.bound("alice-1") is None


def test_the_runtime_hermes_calls_is_the_one_its_last_discovery_registered(stub: StubOpenAIServer) -> None:
    configure_hermes(stub)
    before = Bridge(NO_MEMORY).runtime
    hermes_plugins.discover_plugins(force=True)  # hermes rescans: our register() runs again
    after = Bridge(NO_MEMORY).runtime
    assert after is not before
    assert hermes_plugins.get_plugin_context_engine()._runtime is after


def test_bridge_needs_hermes_to_have_loaded_the_plugin(stub: StubOpenAIServer) -> None:
    """A config hermes cannot load leaves no runtime: applying an agent says so instead of routing
    its hooks nowhere."""
    from hermes_ctx_plugins import PluginError

    configure_hermes(stub)
    bridge = Bridge(NO_MEMORY)
    agent = new_agent(stub, session_id="s-1", user_id="alice")
    (hermes_home() / "config.yaml").write_text(
        (hermes_home() / "config.yaml").read_text() + "ctx_plugins: {compressor: no-such-strategy}\n")
    hermes_plugins.discover_plugins(force=True)  # our register() logs the config error and adds nothing
    with pytest.raises(PluginError, match="hermes has not loaded it"):
        bridge.deployment(None).apply(agent)

"""Whose memory a turn lands in when the runtime's bounded session table has had to drop sessions.

Of hermes' hooks only ``pre_llm_call`` names the user (``sender_id``); ``post_llm_call`` (which stores
the turn) and ``on_session_finalize`` (which ends the conversation) find the owner in the runtime's
table. The table is bounded, so: a running turn must keep its entry, and a hook that finds none
must not store a named user's words as the anonymous user's — while hermes' CLI, whose every user is
the anonymous one, keeps storing exactly as before.

The hooks are called here as hermes calls them (only those our plugin registers, with hermes'
keywords); turns and session ends go to ``ctx-ends``, a provider that is not external and records
them: inside hermes our hooks drive only such providers, since an external one (ctx-local) runs only
as hermes' ``memory.provider``, through hermes' own memory manager — the ``hermes chat`` test below.
"""

from __future__ import annotations

import hashlib
import logging
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hermes_helpers import MODEL, configure_hermes, new_agent

from hermes_ctx_plugins import SessionInfo, hookimpl, load_host
from hermes_ctx_plugins.manager import Host
from hermes_ctx_plugins.testing import StubOpenAIServer
from hermes_ctx_plugins.testing.fakes import FakeBuiltinMemory

pytest.importorskip("run_agent", reason="the hermes extra is not installed")
from hermes_cli import plugins as hermes_plugins

from hermes_ctx_plugins.hermes.engine import HermesCtxEngine
from hermes_ctx_plugins.hermes.runtime import Runtime, installed

SECRET = "remember: my locker combination is 4-8-15-16"
QUERY = "what is my locker combination?"
LOG = "hermes_ctx_plugins.hermes"
CONFIG = {"ctx_plugins": {"compressor": "window", "memory": {"providers": ["ctx-local", "ctx-ends"]}}}


class Ends(FakeBuiltinMemory):
    """Records every conversation end the host hands it: ``(session id, user id)``."""

    name = "ctx-ends"

    def __init__(self, options: Any = None, **kwargs: Any) -> None:
        super().__init__(options, **kwargs)
        self.ended: list[tuple[str, str]] = []

    def on_session_end(self, session: SessionInfo, messages: Any) -> None:
        self.ended.append((session.session_id, session.user_id))


class EndsPlugin:
    @hookimpl
    def register_memory_providers(self, register: Any) -> None:
        register(Ends)


#: the hosts this module's runtimes made, shut down after each test (their ctx-local writer threads)
_HOSTS: list[Host] = []


@pytest.fixture(autouse=True)
def _hosts_shut_down() -> Iterator[None]:
    yield
    while _HOSTS:
        _HOSTS.pop().shutdown()


def runtime(max_sessions: int = 8) -> Runtime:
    host = load_host(CONFIG, plugins=[EndsPlugin()])
    _HOSTS.append(host)
    return Runtime(host, max_sessions=max_sessions)


def fire(rt: Runtime, hook: str, **kwargs: Any) -> None:
    """Call ``hook`` as hermes does: only if our plugin registered it."""
    callback = rt.hooks.callbacks().get(hook)
    if callback is not None:
        callback(telemetry_schema_version=1, **kwargs)


def start(rt: Runtime, session_id: str, sender: str, text: str = "") -> None:
    """A turn's first hook (hermes: ``agent_init``'s ``pre_llm_call``, ``sender_id`` = the agent's user)."""
    fire(rt, "pre_llm_call", session_id=session_id, task_id="t", turn_id="1", user_message=text,
         conversation_history=[], is_first_turn=True, model=MODEL, platform="telegram", sender_id=sender)


def answer(rt: Runtime, session_id: str, text: str) -> None:
    """The turn's answer and its end (``post_llm_call``, then hermes' per-turn ``on_session_end``)."""
    history = [{"role": "user", "content": text}, {"role": "assistant", "content": "Noted."}]
    fire(rt, "post_llm_call", session_id=session_id, task_id="t", turn_id="1", user_message=text,
         assistant_response="Noted.", conversation_history=history, model=MODEL, platform="telegram")
    end_turn(rt, session_id)


def end_turn(rt: Runtime, session_id: str) -> None:
    fire(rt, "on_session_end", session_id=session_id, task_id="t", turn_id="1", completed=True,
         interrupted=False, model=MODEL, platform="telegram")


def finalize(rt: Runtime, session_id: str) -> None:
    """The conversation's end (hermes: gateway session expiry, ``/new``, CLI exit)."""
    fire(rt, "on_session_finalize", session_id=session_id, platform="telegram", reason="session_expired")


def recall(host: Host, user: str) -> str:
    """What ``user`` (``""``: the anonymous user) is reminded of when asking :data:`QUERY`."""
    for provider in host.memory_providers:
        assert provider.flush()
    return host.prefetch(QUERY, session=SessionInfo(session_id="later", user_id=user))


def ends(host: Host) -> list[tuple[str, str]]:
    [provider] = [p for p in host.memory_providers if isinstance(p, Ends)]
    return provider.ended


def skipped(caplog: pytest.LogCaptureFixture, session_id: str) -> list[str]:
    return [r.getMessage() for r in caplog.records
            if r.levelno == logging.WARNING and f"session {session_id!r} is not stored" in r.getMessage()]


# ------------------------------------------------------------------ a running turn keeps its owner
def test_a_running_turn_lands_in_its_users_memory_while_thousands_of_sessions_pass() -> None:
    """The reviewer's reproduction: alice's turn starts; 4096 other gateway sessions run a turn each
    meanwhile (the table's default bound); her answer and her conversation's end come after."""
    rt = runtime(max_sessions=4096)
    start(rt, "s-alice", "alice", SECRET)
    for n in range(4096):
        start(rt, f"other-{n}", f"u{n}")
        end_turn(rt, f"other-{n}")  # a turn without an answer (hermes skips post_llm_call then)
    answer(rt, "s-alice", SECRET)
    finalize(rt, "s-alice")

    assert "4-8-15-16" in recall(rt.host, "alice")  # her turn is in HER memory ...
    assert "4-8-15-16" not in recall(rt.host, "")  # ... not in the anonymous user's
    assert ("s-alice", "alice") in ends(rt.host) and ("s-alice", "") not in ends(rt.host)


# ------------------------------------------------------------------ a dropped owner is unknown
def test_a_turn_whose_entry_was_dropped_mid_turn_is_not_given_to_the_anonymous_user(
        caplog: pytest.LogCaptureFixture) -> None:
    """More turns running at once than the table keeps: alice's entry goes after all; her answer is
    then not stored at all rather than as the anonymous user's. A turn still in the table is."""
    rt = runtime()
    start(rt, "s-alice", "alice", SECRET)
    for n in range(8):  # eight other turns still running: alice's is the oldest
        start(rt, f"busy-{n}", f"u{n}")
    with caplog.at_level(logging.INFO, logger=LOG):
        answer(rt, "s-alice", SECRET)
        finalize(rt, "s-alice")
        answer(rt, "busy-7", "remember: the locker of u7 is 99")

    assert "4-8-15-16" not in recall(rt.host, "")  # nothing of alice reached the anonymous user
    assert "4-8-15-16" not in recall(rt.host, "alice")  # (lost: the table could not say it was hers)
    assert ("s-alice", "") not in ends(rt.host)
    assert len(skipped(caplog, "s-alice")) == 1  # one warning, naming the session
    assert "locker of u7 is 99" in recall(rt.host, "u7")  # the turn whose entry was kept is stored


def test_the_end_of_a_conversation_dropped_while_idle_is_not_the_anonymous_users(
        caplog: pytest.LogCaptureFixture) -> None:
    rt = runtime()
    start(rt, "s-alice", "alice", SECRET)
    answer(rt, "s-alice", SECRET)
    for n in range(8):  # alice is idle while eight other conversations come and go
        start(rt, f"other-{n}", f"u{n}")
        answer(rt, f"other-{n}", "hello")
    with caplog.at_level(logging.INFO, logger=LOG):
        finalize(rt, "s-alice")  # hermes' gateway expires her session
        finalize(rt, "other-7")

    assert "4-8-15-16" in recall(rt.host, "alice")  # stored while her entry was there
    assert ("s-alice", "") not in ends(rt.host) and ("s-alice", "alice") not in ends(rt.host)
    assert len(skipped(caplog, "s-alice")) == 1
    assert ("other-7", "u7") in ends(rt.host)  # a conversation the table still knows ends as usual


def test_a_session_no_hook_named_is_skipped_quietly_once_a_named_user_was_seen(
        caplog: pytest.LogCaptureFixture) -> None:
    """A gateway's ``/new`` announces the new session (``on_session_reset``) before its first turn:
    nothing is stored in an unknown owner's name, and it is not worth a warning."""
    rt = runtime()
    start(rt, "s-alice", "alice")
    caplog.clear()  # the first turn says that CONFIG's ctx-local runs for no hermes agent (true, and not this test's)
    with caplog.at_level(logging.INFO, logger=LOG):
        fire(rt, "on_session_reset", session_id="s-new", platform="telegram", reason="new_session")
    assert ("s-new", "") not in ends(rt.host)
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert "the session end of session 's-new' is not stored: no hook has named its user" in caplog.text


def test_a_conversation_hermes_moves_to_a_new_session_id_mid_turn_keeps_its_user() -> None:
    """A compaction with ``compression.in_place: false`` gives hermes' agent a new session id in the
    middle of a turn; the engine hears of it, and the turn's answer still lands in alice's memory."""
    rt = runtime()
    engine = HermesCtxEngine(rt.host, rt)
    engine.on_session_start("s-alice", hermes_home="/tmp/h", platform="telegram", model=MODEL)
    start(rt, "s-alice", "alice", SECRET)
    engine.on_session_start("s-alice-2", boundary_reason="compression", old_session_id="s-alice",
                            platform="telegram", conversation_id=None)
    answer(rt, "s-alice-2", SECRET)
    assert "4-8-15-16" in recall(rt.host, "alice")
    assert "4-8-15-16" not in recall(rt.host, "")


# ------------------------------------------------------------------ the anonymous user, as before
def test_where_every_user_is_anonymous_a_dropped_session_still_stores_as_before(
        caplog: pytest.LogCaptureFixture) -> None:
    """hermes' CLI: every ``pre_llm_call`` says ``sender_id=""``. Dropped entries are the anonymous
    user's like every other, so their turns and ends go on reaching the anonymous memory."""
    rt = runtime()
    start(rt, "cli-1", "", SECRET)
    for n in range(8):
        start(rt, f"cli-busy-{n}", "")
    with caplog.at_level(logging.INFO, logger=LOG):
        answer(rt, "cli-1", SECRET)
        finalize(rt, "cli-1")
    assert "4-8-15-16" in recall(rt.host, "")
    assert ("cli-1", "") in ends(rt.host)
    assert "is not stored" not in caplog.text


def test_the_hermes_cli_stores_the_anonymous_users_turns(stub: StubOpenAIServer, tmp_path: Path) -> None:
    """``hermes chat -q`` as a real subprocess (its agent has no user id; it finalises the session
    on exit): the turn reaches the anonymous memory through hermes' memory manager (our ctx-local
    is hermes' ``memory.provider``), and nothing is skipped."""
    home = configure_hermes(stub, "memory: {provider: ctx-local}\n"
                                  "ctx_plugins: {compressor: window, memory: {providers: [ctx-local]}}\n")
    stub.reply("Noted, 4-8-15-16.")
    env = {**os.environ, "HERMES_HOME": str(home), "HOME": str(tmp_path), "MEM0_TELEMETRY": "False"}
    hermes = Path(sys.executable).with_name("hermes")
    done = subprocess.run([str(hermes), "chat", "-Q", "-q", SECRET], env=env, capture_output=True, text=True,
                          timeout=180)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "is not stored" not in done.stdout + done.stderr

    host = load_host(CONFIG, plugins=[EndsPlugin()])
    try:
        for provider in host.memory_providers:  # replays what the CLI's queue still holds
            provider.on_session_start(SessionInfo(session_id="later"))
        assert "4-8-15-16" in recall(host, "")
        assert "4-8-15-16" not in recall(host, "alice")
    finally:
        host.shutdown()


def test_hermes_agents_without_a_user_keep_the_anonymous_memory_across_dropped_sessions(
        stub: StubOpenAIServer) -> None:
    """In-process hermes agents built as the CLI builds them (no ``user_id``), more sessions than a
    small table keeps: each turn is recalled for the anonymous user, and the end of a dropped
    session still reaches the providers (hermes' CLI finalises through ``invoke_hook``)."""
    configure_hermes(stub, "ctx_plugins: {compressor: window, memory: {providers: [ctx-local]}}\n")
    rt = installed()
    assert rt is not None
    _HOSTS.append(rt.host)  # its ctx-local writer stops with the test
    rt.host.add_plugin(EndsPlugin(), "ends")
    rt.host.activate_provider("ctx-ends")
    rt.sessions.max_sessions = 2
    stub.reply("Noted, 4-8-15-16.")
    first = new_agent(stub)
    first.run_conversation(SECRET, conversation_history=[])
    for n in range(3):  # three more CLI sessions: the first one's entry is dropped
        stub.reply("ok")
        new_agent(stub).run_conversation(f"hello number {n}", conversation_history=[])
    assert rt.sessions.session(first.session_id) is None
    hermes_plugins.invoke_hook("on_session_finalize", session_id=first.session_id, platform="cli",
                               reason="shutdown")
    assert (first.session_id, "") in ends(rt.host)

    for provider in rt.host.memory_providers:
        assert provider.flush()
    stub.reply("It is 4-8-15-16.")
    new_agent(stub).run_conversation(QUERY, conversation_history=[])
    sent = stub.chat_requests[-1].body["messages"][-1]["content"]  # type: ignore[index]
    assert "my locker combination is 4-8-15-16" in sent  # recalled on the wire, for the anonymous user


def test_owners_whose_namespace_and_user_split_a_nul_differently_are_two() -> None:
    """The record keyed ``namespace NUL user``: the namespace ``sup\\0x`` with user ``bob`` and the namespace ``sup``
    with user ``x\\0bob`` were one owner, and a reused session's stored prompt (the other owner's MEMORY.md in it) was
    trusted (a red-team pass). Owners without a NUL keep the digest their records hold."""
    from hermes_ctx_plugins.hermes.prompt_owners import owner_digest

    first = owner_digest(SessionInfo(session_id="s", deployment="sup\0x", user_id="bob"))
    second = owner_digest(SessionInfo(session_id="s", deployment="sup", user_id="x\0bob"))
    assert first != second
    assert owner_digest(SessionInfo(session_id="s", deployment="sup", user_id="bob")) == \
        hashlib.sha256(b"sup\0bob").hexdigest()

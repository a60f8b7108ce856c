"""Another plugin's strategy, provider or hook that misbehaves never breaks the user's turn, never changes
hermes' history, never holds the turn past its time limit, and is named when it fails (red-team pass,
session 17: each case below broke the turn, hung it, or reached the model before)."""

from __future__ import annotations

import asyncio
import copy
import importlib.metadata
import sys
import threading
import time
from pathlib import Path
from typing import Any, ClassVar

import pytest

from hermes_ctx_plugins import CompressionResult, CompressorStrategy, SessionInfo, hookimpl, load_host
from hermes_ctx_plugins.host import MAX_RECALL_CHARS
from hermes_ctx_plugins.host import plugins as host_plugins
from hermes_ctx_plugins.testing import FakeMemoryProvider

ALICE = SessionInfo(session_id="s1", user_id="alice")
#: a hung plugin waits on this; set at the end of each test so its thread ends
release = threading.Event()
LIMITS = {"call_timeout_seconds": 0.5, "compress_timeout_seconds": 1.0}


@pytest.fixture(autouse=True)
def _release_hung_calls() -> Any:
    release.clear()
    yield
    release.set()


def history(n: int = 30) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = [{"role": "system", "content": "You are helpful."}]
    for i in range(n):
        messages.append({"role": "user", "content": f"question {i}: " + "words " * 40})
        messages.append({"role": "assistant", "content": None, "tool_calls": [
            {"id": f"call_{i}", "type": "function",
             "function": {"name": "terminal", "arguments": '{"command": "ls"}'}}]})
        messages.append({"role": "tool", "tool_call_id": f"call_{i}", "content": "file.txt\n" * 50})
        messages.append({"role": "assistant", "content": f"answer {i}"})
    return messages


class Evil(CompressorStrategy):
    """A third party's strategy doing what ``mode`` says."""

    name = "evil"
    mode = ""

    def compress(self, messages: list[dict[str, Any]], **kwargs: Any) -> CompressionResult:
        if self.mode == "hang":
            release.wait(60)
        if self.mode == "not-dicts":
            return CompressionResult(messages=["just a string", *messages[-3:]], compressed=True)
        if self.mode == "unchanged-but-other":  # says it changed nothing, hands back a third of it
            return CompressionResult.unchanged(messages[-len(messages) // 3:])
        if self.mode == "unchanged-but-grown":
            return CompressionResult.unchanged([*messages, {"role": "user", "content": "PADDING " * 10_000}])
        if self.mode == "edit-then-raise":
            for message in messages:
                message["content"] = "MUTATED"
                for call in message.get("tool_calls") or ():
                    call["function"]["arguments"] = "{}"
            raise RuntimeError("changed my mind")
        if self.mode == "minimal":  # PLUGINS.md's example and the scaffold's: no token counts given
            return CompressionResult(messages=[messages[0], *messages[-len(messages) // 3:]], compressed=True)
        if self.mode == "boasting":  # counts it made up
            return CompressionResult(messages=[messages[0], *messages[-len(messages) // 3:]], compressed=True,
                                     tokens_before=9_999_999, tokens_after=1)
        return CompressionResult.unchanged(messages)


class EvilPlugin:
    @hookimpl
    def register_compressors(self, register: Any) -> None:
        register(Evil)


def evil_host(mode: str, monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.setattr(Evil, "mode", mode)
    return load_host({"model": {"default": "gpt-4o", "context_length": 128_000},
                      "ctx_plugins": {"compressor": "evil", "archive": {"enabled": False}, **LIMITS,
                                      "disabled": ["summarize"]}},  # no stand-in: the result is the input
                     plugins=[EvilPlugin()])


@pytest.mark.parametrize("mode", ["not-dicts", "unchanged-but-other", "unchanged-but-grown", "edit-then-raise"])
def test_a_strategy_returning_the_wrong_thing_leaves_the_conversation_as_it_was(
        mode: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Before: non-dict messages raised out of the host into hermes' turn; an 'unchanged' result with other
    messages (a third of the history, or a 10,000-word padding) was handed to hermes as the conversation;
    an edit in place before raising reached the model as the user's own words."""
    host = evil_host(mode, monkeypatch)
    messages = history()
    before = copy.deepcopy(messages)
    result = host.compress(messages, session=ALICE, force=True)
    assert not result.compressed and result.messages == before and messages == before
    health = host.isolator.health("compressor:evil")
    assert health.failures == 1, health
    assert {"not-dicts": "message 0 as 'just a string'", "unchanged-but-other": "'unchanged' with other messages",
            "unchanged-but-grown": "'unchanged' with other messages",
            "edit-then-raise": "changed my mind"}[mode] in health.last_error


def test_a_strategy_that_hangs_holds_each_compaction_its_limit_and_at_most_four_threads(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Before: the turn waited for ever. Each call left running costs a thread (Python cannot stop one):
    with four of them still running, the strategy is not called until one returns."""
    from hermes_ctx_plugins import isolation

    host = evil_host("hang", monkeypatch)
    messages = history()
    started = time.monotonic()
    result = host.compress(messages, session=ALICE, force=True)
    assert time.monotonic() - started < 5 and not result.compressed and result.messages == messages
    assert "did not return within 1 s" in host.isolator.health("compressor:evil").last_error
    for _ in range(isolation.MAX_OVERDUE - 1):
        host.isolator._suspended.clear()  # (past the breaker: what a probe after each cool-down would do)
        host.compress(messages, session=ALICE, force=True)
    host.isolator._suspended.clear()
    started = time.monotonic()
    host.compress(messages, session=ALICE, force=True)  # four still running: not called
    assert time.monotonic() - started < 0.5
    assert "4 of its calls are still running past their limit" in host.isolator.health("compressor:evil").last_error
    release.set()  # they return at last: called again
    deadline = time.monotonic() + 5
    while host.isolator._overdue.get("compressor:evil") and time.monotonic() < deadline:
        time.sleep(0.01)
    monkeypatch.setattr(Evil, "mode", "")
    host.isolator._suspended.clear()
    host.compress(messages, session=ALICE, force=True)
    assert host.isolator.health("compressor:evil").consecutive_failures == 0


def test_one_users_slow_recall_neither_holds_nor_refuses_another_users(monkeypatch: pytest.MonkeyPatch) -> None:
    """Red-team of this session's first version: one overdue call refused every later call of the provider
    (everyone's recall), which then counted as failures and suspended it for all."""
    calls: list[str] = []

    def prefetch(self: Any, query: str, *, session: SessionInfo) -> str:
        calls.append(session.user_id)
        if session.user_id == "bob":
            release.wait(60)
        return f"{session.user_id}'s fact"

    monkeypatch.setattr(Stuck, "prefetch", prefetch)
    host = stuck_host("", monkeypatch)
    assert host.prefetch("q", session=SessionInfo(session_id="b", user_id="bob")) == ""  # past the limit
    for user in ("alice", "carol", "dave", "erin", "frank", "gina"):
        assert host.prefetch("q", session=SessionInfo(session_id=user, user_id=user)) == f"{user}'s fact"
    assert host.isolator.status("memory:stuck-local").startswith("ok")


def test_a_slow_write_is_never_abandoned(monkeypatch: pytest.MonkeyPatch) -> None:
    """Red-team of this session's first version: a sync_turn past the limit was abandoned, the turns after it
    refused, and the shutdown's flush killed with the process: every turn lost."""
    from hermes_ctx_plugins import Turn

    stored: list[str] = []

    def sync_turn(self: Any, turn: Turn) -> None:
        time.sleep(0.8)  # over the 0.5 s limit
        stored.append(turn.user_text)

    monkeypatch.setattr(Stuck, "sync_turn", sync_turn)
    host = stuck_host("", monkeypatch)
    for n in range(3):
        host.turn_finalized(Turn(session=ALICE, turn_number=n, user_text=f"turn {n}", assistant_text="ok"))
    assert stored == ["turn 0", "turn 1", "turn 2"]


class Stuck(FakeMemoryProvider):
    """A third party's provider (not external: driven through our hooks)."""

    name = "stuck-local"
    external = False
    answer: Any = ""

    def prefetch(self, query: str, *, session: SessionInfo) -> Any:
        if isinstance(self.answer, str) and self.answer == "hang":
            release.wait(60)
        return self.answer


class Hooked:
    """A third party's plugin whose pre_request hook hangs, and its provider."""

    @hookimpl
    def register_memory_providers(self, register: Any) -> None:
        register(Stuck)

    @hookimpl
    def pre_request(self, request: Any) -> str | None:
        release.wait(60)
        return "never"


def stuck_host(answer: Any, monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.setattr(Stuck, "answer", answer)
    return load_host({"ctx_plugins": {"memory": {"providers": ["stuck-local"]}, **LIMITS}},
                     plugins=[Hooked()])


def test_a_provider_and_a_hook_that_hang_hold_the_turn_their_limit_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """Before: the turn waited for ever (README said 'the host bounds the wait anyway')."""
    host = stuck_host("hang", monkeypatch)
    started = time.monotonic()
    assert host.prefetch("what did I say?", session=ALICE) == ""
    assert time.monotonic() - started < 3
    assert "did not return within 0.5 s" in host.isolator.health("memory:stuck-local").last_error
    from hermes_ctx_plugins import Request
    request = Request(session=ALICE, messages=[{"role": "user", "content": "hi"}], model="gpt-4o")
    started = time.monotonic()
    host.pre_request(request)
    assert time.monotonic() - started < 3
    [owner] = [o for o in host.isolator._health if o.startswith("plugin:")]
    assert "did not return within 0.5 s" in host.isolator.health(owner).last_error


class Prickly:
    """An answer whose comparison, truth value and repr all raise (a numpy array, a lazy proxy)."""

    def __eq__(self, other: object) -> bool:
        raise ValueError("the truth value of an array is ambiguous")

    __hash__ = None  # type: ignore[assignment]

    def __bool__(self) -> bool:
        raise ValueError("the truth value of an array is ambiguous")

    def __repr__(self) -> str:
        raise RuntimeError("repr of a lazy proxy")


@pytest.mark.parametrize("answer", [{"recall": "a dict"}, b"bytes", 42, Prickly()])
def test_a_recall_that_is_not_text_adds_nothing_and_is_a_failure(answer: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    host = stuck_host(answer, monkeypatch)
    assert host.prefetch("what did I say?", session=ALICE) == ""
    assert "not text" in host.isolator.health("memory:stuck-local").last_error


def test_a_huge_recall_is_cut_saying_so(monkeypatch: pytest.MonkeyPatch) -> None:
    """Before: a provider's 2 MB recall went into the prompt whole (and forced a compaction of the
    user's conversation)."""
    host = stuck_host("remember " * 250_000, monkeypatch)
    block = host.prefetch("what did I say?", session=ALICE)
    assert MAX_RECALL_CHARS < len(block) < MAX_RECALL_CHARS + 100 and "… cut: 2,234,000 more characters" in block


def test_a_plugin_calling_sys_exit_at_import_is_skipped_and_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                  ) -> None:
    """Before: ``hermes-ctx`` and hermes exited silently (status 3), naming nothing."""
    (tmp_path / "exits_at_import.py").write_text("import sys\nsys.exit(3)\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    points = [importlib.metadata.EntryPoint("exiter", "exits_at_import", "hermes_ctx_plugins")]
    monkeypatch.setattr(host_plugins, "_entry_points", lambda: points)
    host = load_host({})
    assert "SystemExit: 3" in host.load_failures["exiter"]
    assert host.compressor is not None  # everything else loaded


def test_two_distributions_with_one_plugin_name_keep_the_first_and_say_so(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Before: the second unregistered the first (neither loaded), while saying the first was loaded."""
    for module, strategy in (("first_zed", "zed-trim"), ("second_zed", "zed-other")):
        (tmp_path / f"{module}.py").write_text(
            "from hermes_ctx_plugins import CompressionResult, CompressorStrategy, hookimpl\n"
            f"class S(CompressorStrategy):\n    name = {strategy!r}\n"
            "    def compress(self, messages, **kw):\n        return CompressionResult.unchanged(messages)\n"
            "@hookimpl\ndef register_compressors(register):\n    register(S)\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    points = [importlib.metadata.EntryPoint("zed", module, "hermes_ctx_plugins")
              for module in ("first_zed", "second_zed")]
    monkeypatch.setattr(host_plugins, "_entry_points", lambda: points)
    host = load_host({"ctx_plugins": {"compressor": "zed-trim"}})
    assert host.compressor is not None and host.compressor.name == "zed-trim"  # the first, loaded and used
    [(key, why)] = host.load_failures.items()
    assert key == "zed (second_zed)" and "first_zed has a plugin of that name, which is the one used" in why
    assert [r.status for r in host.plugins() if r.name == "zed-trim"] == ["active"]
    sys.modules.pop("first_zed", None)
    sys.modules.pop("second_zed", None)


def test_a_plugin_slow_to_import_is_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                          caplog: pytest.LogCaptureFixture) -> None:
    """Every hermes start waits for an installed plugin's import; a slow one was named nowhere."""
    (tmp_path / "slow_to_import.py").write_text("import time\ntime.sleep(0.3)\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(host_plugins, "SLOW_IMPORT_SECONDS", 0.2)
    monkeypatch.setattr(host_plugins, "_entry_points",
                        lambda: [importlib.metadata.EntryPoint("sloth", "slow_to_import", "hermes_ctx_plugins")])
    with caplog.at_level("WARNING", logger="hermes_ctx_plugins"):
        load_host({})
    assert any("plugin 'sloth'" in r.getMessage() and "to import" in r.getMessage() for r in caplog.records)
    sys.modules.pop("slow_to_import", None)


def test_a_pipeline_holding_another_plugins_step_is_bounded_in_every_call(monkeypatch: pytest.MonkeyPatch) -> None:
    """The pipeline is ours but calls its steps' methods itself (usage, model changes, cool-downs): a step that
    hung in one of them hung the turn (red-team of this session's first version)."""
    from hermes_ctx_plugins import Response, Usage

    class SlowStep(Evil):
        name = "slow-step"

        def update_from_response(self, usage: Any) -> None:
            release.wait(60)

    class StepPlugin:
        @hookimpl
        def register_compressors(self, register: Any) -> None:
            register(SlowStep)

    host = load_host({"model": {"default": "gpt-4o", "context_length": 128_000},
                      "ctx_plugins": {"compressor": "pipeline", **LIMITS, "archive": {"enabled": False},
                                      "options": {"pipeline": {"steps": ["slow-step", "summarize"]}}}},
                     plugins=[StepPlugin()])
    host.compress(history(), session=ALICE, force=True)  # the pipeline builds its steps at its first compaction
    started = time.monotonic()
    host.post_response(Response(session=ALICE, model="gpt-4o", usage=Usage(prompt_tokens=10, completion_tokens=2)))
    assert time.monotonic() - started < 3
    assert "did not return within 0.5 s" in host.isolator.health("compressor:pipeline").last_error


def test_a_provider_keeping_a_sqlite3_connection_works_through_its_bounded_calls(tmp_path: Path) -> None:
    """Red-team of this session's second version: recall ran on the provider's worker thread and storing on
    the caller's, so a plain sqlite3 connection (usable only on the thread that opened it) failed every write.
    Every call of an owner with a limit runs on its worker while it is free."""
    import sqlite3

    from hermes_ctx_plugins import Turn
    from hermes_ctx_plugins.memory.base import MemoryProvider

    class SqliteNotes(MemoryProvider):
        name = "sqlite-notes"
        external = False

        def __init__(self, options: Any = None, **kwargs: Any) -> None:
            super().__init__(options, **kwargs)
            self.db: sqlite3.Connection | None = None

        def _conn(self) -> sqlite3.Connection:
            if self.db is None:
                self.db = sqlite3.connect(tmp_path / "notes.db")  # check_same_thread, as by default
                self.db.execute("create table notes(user, text)")
            return self.db

        def sync_turn(self, turn: Turn) -> None:
            self._conn().execute("insert into notes values (?, ?)", (turn.session.user_id, turn.user_text))
            self._conn().commit()

        def prefetch(self, query: str, *, session: SessionInfo) -> str:
            rows = self._conn().execute("select text from notes where user = ?", (session.user_id,)).fetchall()
            return "\n".join(text for (text,) in rows)

    class Plugin:
        @hookimpl
        def register_memory_providers(self, register: Any) -> None:
            register(SqliteNotes)

    host = load_host({"ctx_plugins": {"memory": {"providers": ["sqlite-notes"]}}}, plugins=[Plugin()])
    stop = threading.Event()

    def churn() -> None:  # threads come and go, as in hermes: a finished thread's id is not reused at once
        while not stop.is_set():
            threading.Thread(target=time.sleep, args=(0.002,), daemon=True).start()
            time.sleep(0.001)

    threading.Thread(target=churn, daemon=True).start()
    try:
        for n in range(10):
            host.prefetch(f"question {n}", session=ALICE)
            time.sleep(0.01)
            host.turn_finalized(Turn(session=ALICE, turn_number=n, user_text=f"my dog is Rex{n}", assistant_text="ok"))
    finally:
        stop.set()
    assert host.prefetch("q", session=ALICE).splitlines() == [f"my dog is Rex{n}" for n in range(10)]
    assert host.isolator.health("memory:sqlite-notes").failures == 0


def test_an_owners_worker_thread_ends_when_idle_and_the_next_call_gets_another(monkeypatch: pytest.MonkeyPatch) -> None:
    """Red-team of the second version: a worker never ended (a hundred hosts built and dropped left a hundred
    threads, each holding its provider and the last turn it was given)."""
    from hermes_ctx_plugins import isolation

    monkeypatch.setattr(isolation, "WORKER_IDLE_SECONDS", 0.2)
    host = stuck_host("a fact", monkeypatch)
    assert host.prefetch("q", session=ALICE) == "a fact"
    first = host.isolator._workers["memory:stuck-local"]
    first.thread.join(5)
    assert first.ended and not first.thread.is_alive()  # its thread returned
    assert host.prefetch("q", session=ALICE) == "a fact"  # on a new worker
    assert host.isolator._workers["memory:stuck-local"] is not first
    assert host.isolator.health("memory:stuck-local").failures == 0


def test_a_host_shut_down_leaves_no_worker_thread(monkeypatch: pytest.MonkeyPatch) -> None:
    host = stuck_host("a fact", monkeypatch)
    assert host.prefetch("q", session=ALICE) == "a fact"
    worker = host.isolator._workers["memory:stuck-local"]
    host.shutdown()
    worker.thread.join(5)
    assert not worker.thread.is_alive() and host.isolator._workers == {}


# ------------------------------------------------------------------ BaseExceptions that are no Exception
class LibraryCancelled(BaseException):
    """A library's own BaseException (trio's Cancelled, gevent's GreenletExit, pytest's Skipped)."""


#: what a plugin's code may raise that ``except Exception`` lets through (SystemExit is counted already)
NOT_EXCEPTIONS = [asyncio.CancelledError("wait_for leaked"), GeneratorExit("closed"), LibraryCancelled("cancelled"),
                  KeyboardInterrupt("raised on a worker thread")]


def _raising(exc: BaseException) -> Any:
    def raise_it(*args: Any, **kwargs: Any) -> Any:
        raise exc
    return raise_it


@pytest.mark.parametrize("exc", NOT_EXCEPTIONS, ids=lambda e: type(e).__name__)
def test_a_base_exception_from_a_strategy_is_its_failure_and_the_turn_goes_on(
        exc: BaseException, monkeypatch: pytest.MonkeyPatch) -> None:
    """Before: it left the host through hermes' turn (hermes chat died with a traceback; KeyboardInterrupt
    ended it with status 130 saying nothing)."""
    host = evil_host("", monkeypatch)
    monkeypatch.setattr(Evil, "compress", _raising(exc))
    messages = history()
    before = copy.deepcopy(messages)
    result = host.compress(messages, session=ALICE, force=True)
    assert not result.compressed and result.messages == before
    health = host.isolator.health("compressor:evil")
    assert health.failures == 1 and f"{type(exc).__name__}: {exc}" in health.last_error


@pytest.mark.parametrize("exc", NOT_EXCEPTIONS, ids=lambda e: type(e).__name__)
def test_a_base_exception_from_a_provider_or_a_hook_is_their_failure_and_the_turn_goes_on(
        exc: BaseException, monkeypatch: pytest.MonkeyPatch) -> None:
    from hermes_ctx_plugins import Request, Turn

    monkeypatch.setattr(Stuck, "prefetch", _raising(exc))
    monkeypatch.setattr(Stuck, "sync_turn", _raising(exc))
    monkeypatch.setattr(Hooked, "pre_request", hookimpl(_raising(exc)))
    host = stuck_host("", monkeypatch)
    assert host.prefetch("what did I say?", session=ALICE) == ""
    request = Request(session=ALICE, messages=[{"role": "user", "content": "hi"}], model="gpt-4o")
    assert host.pre_request(request) is request
    host.turn_finalized(Turn(session=ALICE, turn_number=1, user_text="hi", assistant_text="ok"))
    health = host.isolator.health("memory:stuck-local")
    assert health.failures == 2 and type(exc).__name__ in health.last_error
    [owner] = [o for o in host.isolator._health if o.startswith("plugin:")]
    assert type(exc).__name__ in host.isolator.health(owner).last_error
    host.shutdown()


@pytest.mark.parametrize("raised", ["asyncio.CancelledError('at import')", "GeneratorExit('at import')",
                                    "type('Skipped', (BaseException,), {})('module skipped')"])
def test_a_plugin_raising_a_base_exception_at_import_is_skipped_and_named(
        raised: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Before: a traceback out of ``hermes-ctx check``, and every ``hermes chat`` died at start (hermes'
    plugin loader catches Exception only)."""
    (tmp_path / "raises_at_import.py").write_text(f"import asyncio\nraise {raised}\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    points = [importlib.metadata.EntryPoint("raiser", "raises_at_import", "hermes_ctx_plugins")]
    monkeypatch.setattr(host_plugins, "_entry_points", lambda: points)
    host = load_host({})
    assert "at import" in host.load_failures["raiser"] or "module skipped" in host.load_failures["raiser"]
    assert host.compressor is not None  # everything else loaded


def test_a_keyboard_interrupt_while_plugins_load_still_ends_the_process(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """On the thread that loads plugins a KeyboardInterrupt may be the user's Ctrl-C: it is not swallowed."""
    (tmp_path / "interrupted_at_import.py").write_text("raise KeyboardInterrupt\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    points = [importlib.metadata.EntryPoint("ctrl-c", "interrupted_at_import", "hermes_ctx_plugins")]
    monkeypatch.setattr(host_plugins, "_entry_points", lambda: points)
    with pytest.raises(KeyboardInterrupt):
        load_host({})


class Rewriter:
    """A third party's plugin and provider that change every message they are given, in place."""

    @hookimpl
    def register_memory_providers(self, register: Any) -> None:
        register(RewritingProvider)

    @hookimpl
    def pre_request(self, request: Any) -> str | None:
        for message in request.messages:
            message["content"] = "REWRITTEN"
        request.messages[-1].setdefault("tool_calls", []).append({"id": "x"})
        return "from the rewriter"

    @hookimpl
    def post_response(self, response: Any) -> None:
        response.assistant_message["content"] = "REWRITTEN"

    @hookimpl
    def turn_finalized(self, turn: Any) -> None:
        turn.messages[0]["content"] = "REWRITTEN"


class RewritingProvider(FakeMemoryProvider):
    name = "rewriting-local"
    external = False

    seen: ClassVar[list[Any]] = []

    def sync_turn(self, turn: Any) -> None:
        super().sync_turn(turn)
        for message in turn.messages:
            message["role"] = "REWRITTEN"
        RewritingProvider.seen.append(turn.messages)

    def on_session_end(self, session: SessionInfo, messages: Any) -> None:
        messages[0]["content"] = "REWRITTEN"


def test_a_plugin_or_provider_changing_the_messages_it_reads_never_changes_the_conversation() -> None:
    """Before: a third party's pre_request hook that set each message's content rewrote hermes' history (the
    user's message reached the model as the plugin's text), and one that cleared the list emptied the caller's;
    a provider's sync_turn could do the same. Each now reads copies; what it returns is still used."""
    from hermes_ctx_plugins import Request, Response, Turn, Usage
    host = load_host({"ctx_plugins": {"memory": {"providers": ["rewriting-local"]}, **LIMITS}}, plugins=[Rewriter()])
    messages = history(3)
    kept = copy.deepcopy(messages)
    request = Request(session=ALICE, messages=messages, model="gpt-4o")
    host.pre_request(request)
    assert request.context == "from the rewriter" and request.messages is messages
    answer = {"role": "assistant", "content": "the answer"}
    host.post_response(Response(session=ALICE, model="gpt-4o", usage=Usage(), assistant_message=answer))
    host.turn_finalized(Turn(session=ALICE, turn_number=1, user_text="q", assistant_text="a",
                             messages=tuple(messages)))
    host.session_end(ALICE, messages)
    assert messages == kept and answer == {"role": "assistant", "content": "the answer"}
    assert [h for h in host.isolator._health.values() if h.last_error] == []  # none of it was a failure
    [seen] = RewritingProvider.seen
    assert len(seen) == len(messages) and seen[0]["role"] == "REWRITTEN"  # its own copies


def test_a_plugin_clearing_the_list_it_reads_clears_its_own() -> None:
    class Clearer:
        @hookimpl
        def pre_request(self, request: Any) -> None:
            request.messages.clear()

    host = load_host({"ctx_plugins": LIMITS}, plugins=[Clearer()])
    from hermes_ctx_plugins import Request
    messages = history(2)
    host.pre_request(Request(session=ALICE, messages=messages, model="gpt-4o"))
    assert len(messages) == 9 and not any(h.last_error for h in host.isolator._health.values())


def test_a_view_of_the_messages_reads_as_the_list_and_copies_only_what_is_read() -> None:
    """A tuple (hermes passes a list) serialised, compared and concatenated: a provider logging json.dumps of a
    turn's messages failed on every turn with the first view (a red-team pass). The view is a list whose messages
    are copied when read."""
    import json
    import pickle

    from hermes_ctx_plugins.events import MessageView
    messages = history(2)
    kept = copy.deepcopy(messages)

    def copied(view: MessageView) -> list[int]:
        return [i for i in range(len(view)) if list.__getitem__(view, i) is not messages[i]]

    view = MessageView(messages)
    assert isinstance(view, list) and view == messages and len(view) == 9 and copied(view) == []
    assert view[2]["role"] == "assistant" and copied(view) == [2] and view[2] is view[-7]
    assert json.dumps(MessageView(messages)) == json.dumps(messages)
    assert list(view) == messages and view[1:3] == messages[1:3] and copied(view) == list(range(9))
    nothing: list[dict[str, Any]] = []
    fresh = MessageView
    for taken in (fresh(messages).pop(), fresh(messages).copy()[0], (fresh(messages) + nothing)[0],
                  (nothing + fresh(messages))[0], (fresh(messages) * 2)[0], next(reversed(fresh(messages))),
                  pickle.loads(pickle.dumps(fresh(messages)))[0]):
        taken["content"] = "REWRITTEN"
    view[0]["content"] = "REWRITTEN"
    view.append({"role": "user", "content": "mine"})
    assert messages == kept and repr(view) == "MessageView(10 messages)"
    with pytest.raises(IndexError, match="out of range"):
        MessageView(messages)[9]


def test_a_hooks_huge_context_is_cut_saying_so() -> None:
    """Before: a pre_request hook's 2,000,000 characters went into the request whole (recall was cut at 16,000); then
    each add_context call was cut alone, and 30 of them put 480,000 characters in (a red-team pass). A plugin adds
    at most 16,000 characters to a request in all."""
    class Loud:
        @hookimpl
        def pre_request(self, request: Any) -> str:
            for _ in range(30):
                request.add_context("added " * 2_700, source="loud-added")
            return "returned " * 100_000

    class Quiet:
        @hookimpl
        def pre_request(self, request: Any) -> str:
            return "the quiet plugin's note"

    host = load_host({"ctx_plugins": LIMITS}, plugins=[Loud(), Quiet()])
    from hermes_ctx_plugins import Request
    request = host.pre_request(Request(session=ALICE, messages=history(1), model="gpt-4o"))
    loud = [c for c in request.contributions if c.source == "loud-added"]
    assert MAX_RECALL_CHARS < sum(len(c.text) for c in loud) < MAX_RECALL_CHARS + 100
    assert "more characters left out" in loud[-1].text and "returned" not in request.context
    assert [c.text for c in request.contributions if c.source != "loud-added"] == ["the quiet plugin's note"]


def test_context_a_hook_adds_after_its_time_limit_never_reaches_the_request() -> None:
    class Late:
        @hookimpl
        def pre_request(self, request: Any) -> None:
            time.sleep(0.7)  # past the 0.5 s limit
            request.add_context("LATE " * 1000, source="late")

    class Next:  # called after Late: Late adds while this one runs
        @hookimpl
        def pre_request(self, request: Any) -> str:
            time.sleep(0.4)
            return "next"

    host = load_host({"ctx_plugins": LIMITS}, plugins=[Next(), Late()])  # (the last registered is called first)
    from hermes_ctx_plugins import Request
    request = host.pre_request(Request(session=ALICE, messages=history(1), model="gpt-4o"))
    time.sleep(0.4)
    assert request.context == "next"


def test_a_plugin_past_its_room_that_returns_odd_text_fails_alone() -> None:
    """Past its 16,000 characters, a returned str subclass whose len() raised made Host.pre_request raise, and a
    returned int was dropped silently (a red-team pass): odd text is the plugin's failure, wherever it comes."""
    class Odd(str):
        def __len__(self) -> int:
            raise RuntimeError("len of a lazy text")

    class Full:
        @hookimpl
        def pre_request(self, request: Any) -> Any:
            request.add_context("x" * 16_000, source="full")
            return Odd("more")

    class Other:
        @hookimpl
        def pre_request(self, request: Any) -> str:
            return "the other plugin's note"

    host = load_host({"ctx_plugins": LIMITS}, plugins=[Other(), Full()])
    from hermes_ctx_plugins import Request
    request = host.pre_request(Request(session=ALICE, messages=history(1), model="gpt-4o"))
    assert "the other plugin's note" in request.context and len(request.context) < 16_100
    [owner] = [o for o, h in host.isolator._health.items() if h.last_error]
    assert "Full" in owner and "not text" in host.isolator.health(owner).last_error


@pytest.mark.parametrize("mode", ["minimal", "boasting"])
def test_a_strategy_giving_no_token_counts_or_made_up_ones_gets_ours(mode: str) -> None:
    """A strategy that fills in no ``tokens_before`` (the scaffold's, PLUGINS.md's example) had hermes' /ctx and
    ``hermes-ctx compress`` report "0 -> 5,030 tokens (0% saved)" (a newcomer walk), one claiming 9,999,999 -> 1
    "100% saved" (a review): the host counts both itself."""
    from hermes_ctx_plugins.tokens import get_counter

    host = load_host({"model": {"default": "gpt-4o", "context_length": 128_000},
                      "ctx_plugins": {"compressor": "evil", "archive": {"enabled": False}, **LIMITS}},
                     plugins=[EvilPlugin()])
    Evil.mode = mode
    try:
        messages = history()
        result = host.compress(messages, session=ALICE, force=True)
    finally:
        Evil.mode = ""
    counter = get_counter("gpt-4o")
    assert result.compressed
    assert result.tokens_before == counter.count_messages(messages) > result.tokens_after
    assert result.tokens_after == counter.count_messages(result.messages)


def test_the_compress_commands_kept_verbatim_counts_a_copys_messages_too() -> None:
    """Another plugin's strategy works on a copy: counted by identity, ``hermes-ctx compress`` said it kept none."""
    from hermes_ctx_plugins.cli.compress import _kept_verbatim

    messages = history(3)
    kept = copy.deepcopy([messages[0], *messages[-4:]])
    assert _kept_verbatim(messages, [*kept, {"role": "user", "content": "a summary"}]) == 5
    assert _kept_verbatim(messages, [messages[0], *copy.deepcopy(messages[:1])]) == 2 - 1  # one message, one copy

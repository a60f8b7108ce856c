"""Our memory providers inside real hermes-agent 0.19.0, through the directory shims."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
from hermes_helpers import configure_hermes, new_agent
from hermes_helpers import hermes_home as home

from hermes_ctx_plugins import ProviderLimitError, SessionInfo, Turn, hookimpl, load_host
from hermes_ctx_plugins.testing import FakeMemoryProvider, StubOpenAIServer

run_agent = pytest.importorskip("run_agent", reason="the hermes extra is not installed")
from hermes_cli import plugins as hermes_plugins  # noqa: E402
from plugins.memory import load_memory_provider  # noqa: E402

from hermes_ctx_plugins.hermes.memory import HermesMemoryAdapter, write_shims  # noqa: E402
from hermes_ctx_plugins.hermes.runtime import installed  # noqa: E402


class Recaller(FakeMemoryProvider):
    """An external provider that remembers turns per user (the public fake, renamed)."""

    name = "ctx-recall"


class Exploding(FakeMemoryProvider):
    name = "ctx-exploding"

    def prefetch(self, query: str, *, session: SessionInfo) -> str:
        raise ConnectionError("memory backend is down")

    def sync_turn(self, turn: Turn) -> None:
        raise ConnectionError("memory backend is down")


class Searcher(FakeMemoryProvider):
    """Offers the model a tool, the way the SQLite / Mem0 / Honcho providers do."""

    name = "ctx-search"

    def get_tool_schemas(self) -> list[dict[str, Any]]:
        return [{"type": "function", "function": {
            "name": "ctx_notes_search", "description": "Search the user's notes.",
            "parameters": {"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]}}}]

    def handle_tool_call(self, name: str, args: dict[str, Any], *, session: SessionInfo | None = None) -> str:
        return json.dumps({"results": [f"note about {args.get('query')}: use port 8443"],
                           "user": session.user_id if session else None})


class TestProviders:
    @hookimpl
    def register_memory_providers(self, register: Any) -> None:
        register(Recaller)
        register(Exploding)
        register(Searcher)


def configure(stub: StubOpenAIServer, provider: str) -> Any:
    configure_hermes(stub, f"memory: {{provider: {provider}}}\n")
    runtime = installed()
    assert runtime is not None
    host = runtime.host
    host.add_plugin(TestProviders(), "test-providers")
    write_shims(home(), ["ctx-recall", "ctx-exploding", "ctx-search"])
    return host


def agent_for(stub: StubOpenAIServer) -> Any:
    return new_agent(stub)


# ---------------------------------------------------------------- shims


def test_shims_are_idempotent_and_never_overwrite(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    first = write_shims(tmp_path, ["ctx-a", "ctx-b"])
    assert first.written == ("ctx-a", "ctx-b")
    shim = (tmp_path / "plugins" / "ctx-a" / "__init__.py").read_text()
    assert "MemoryProvider" in shim and len(shim.strip().splitlines()) == 2
    again = write_shims(tmp_path, ["ctx-a", "ctx-b"])
    assert again.written == () and again.unchanged == ("ctx-a", "ctx-b")

    mine = tmp_path / "plugins" / "ctx-c" / "__init__.py"
    mine.parent.mkdir(parents=True)
    mine.write_text("# the user's own plugin\n")
    report = write_shims(tmp_path, ["ctx-c", "mem0"])
    assert report.conflicts == (mine,) and mine.read_text() == "# the user's own plugin\n"
    assert report.shadowed == ("mem0",)
    assert "a different file is there" in caplog.text and "bundled with hermes" in caplog.text


def test_register_writes_shims_for_installed_external_providers(stub: StubOpenAIServer) -> None:
    home().mkdir(parents=True, exist_ok=True)
    (home() / "config.yaml").write_text("plugins: {enabled: [hermes-ctx]}\n")
    hermes_plugins.discover_plugins(force=True)
    # a shim for every external provider we ship, none for anything else
    runtime = installed()
    assert runtime is not None
    external = {r.name for r in runtime.host.registry if r.kind == "memory" and r.external}
    assert external >= {"ctx-mem0", "ctx-honcho"}
    assert {p.name for p in (home() / "plugins").iterdir()} == external


# ---------------------------------------------------------------- inside hermes


def test_hermes_loads_our_provider_through_the_shim(stub: StubOpenAIServer) -> None:
    configure(stub, "ctx-recall")
    provider = load_memory_provider("ctx-recall")
    assert isinstance(provider, HermesMemoryAdapter) and provider.name == "ctx-recall"
    assert provider.is_available()


def test_recall_reaches_the_user_message_in_a_later_session(stub: StubOpenAIServer) -> None:
    host = configure(stub, "ctx-recall")
    stub.reply("noted")
    first = agent_for(stub)
    first.run_conversation("remember: my locker combination is 4-8-15-16", conversation_history=[])
    first.shutdown_memory_provider([])
    recaller = next(p for p in host.memory_providers if p.name == "ctx-recall")
    deadline = time.monotonic() + 10
    while not recaller.turns and time.monotonic() < deadline:  # hermes syncs on a worker thread
        time.sleep(0.02)
    assert any("4-8-15-16" in t.user_text for turns in recaller.turns.values() for t in turns)

    stub.reply("it is 4-8-15-16")
    second = agent_for(stub)
    second.run_conversation("what is my locker combination?", conversation_history=[])
    sent = stub.chat_requests[-1].body["messages"][-1]["content"]  # type: ignore[index]
    assert "what is my locker combination?" in sent
    assert "4-8-15-16" in sent, "the recalled memory is in the user message hermes sent"
    # driven by hermes' memory manager, not a second time through our hooks
    assert sent.count("my locker combination is 4-8-15-16") == 1


def test_a_failing_provider_never_breaks_the_turn(stub: StubOpenAIServer) -> None:
    host = configure(stub, "ctx-exploding")
    stub.reply("answer despite the outage")
    agent = agent_for(stub)
    result = agent.run_conversation("hello", conversation_history=[])
    assert result["final_response"] == "answer despite the outage"
    agent.shutdown_memory_provider([])
    assert "ConnectionError: memory backend is down" in {r.name: r.status for r in host.plugins()}["ctx-exploding"]


def test_hermes_provider_beside_one_of_ours_is_a_clear_limit_error() -> None:
    class Plugin:
        @hookimpl
        def register_memory_providers(self, register: Any) -> None:
            register(Recaller)

    config = {"memory": {"provider": "mem0"}, "ctx_plugins": {"memory": {"providers": ["ctx-recall"]}}}
    with pytest.raises(ProviderLimitError, match="'ctx-recall' and 'mem0'") as exc:
        load_host(config, plugins=[Plugin()])
    assert "hermes' memory.provider" in str(exc.value)
    # naming our own provider there is how hermes drives it: no conflict
    load_host({"memory": {"provider": "ctx-recall"}, "ctx_plugins": {"memory": {"providers": ["ctx-recall"]}}},
              plugins=[Plugin()])


def test_the_model_calls_our_provider_tool_through_hermes(stub: StubOpenAIServer) -> None:
    configure(stub, "ctx-search")
    stub.tool_call("ctx_notes_search", {"query": "deploy"})
    stub.reply("Use port 8443.")
    agent = new_agent(stub, toolsets=["memory"], user_id="dana")
    result = agent.run_conversation("which port do we deploy on?", conversation_history=[])
    offered = {t["function"]["name"] for t in stub.chat_requests[0].body["tools"]}  # type: ignore[index]
    assert "ctx_notes_search" in offered  # hermes unwrapped and offered our schema
    tool_results = [m for m in result["messages"] if m.get("role") == "tool"]
    assert len(tool_results) == 1
    answer = json.loads(tool_results[0]["content"])
    assert answer["results"] == ["note about deploy: use port 8443"] and answer["user"] == "dana"
    assert result["final_response"] == "Use port 8443."


class Reporting(FakeMemoryProvider):
    """A provider that reports an outage the way the Mem0 / Honcho providers do."""

    name = "ctx-reporting"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.status_callback: Any = None

    def prefetch(self, query: str, *, session: SessionInfo) -> str:
        from hermes_ctx_plugins.isolation import StatusEvent

        self.status_callback(StatusEvent(kind="unavailable", source=self.name,
                                         message="ctx-reporting: the memory service is unreachable"))
        return ""


def test_a_provider_outage_reaches_the_user_through_hermes_warning_callback() -> None:
    class Plugin:
        @hookimpl
        def register_memory_providers(self, register: Any) -> None:
            register(Reporting)

    events: list[Any] = []
    host = load_host({"ctx_plugins": {"memory": {"providers": ["ctx-reporting"]}}}, plugins=[Plugin()],
                     status_callback=events.append)
    adapter = HermesMemoryAdapter("ctx-reporting", host=host)
    warnings: list[str] = []
    adapter.initialize("s1", platform="cli", warning_callback=warnings.append)
    adapter.prefetch("anything")
    assert warnings == ["memory: ctx-reporting: the memory service is unreachable"]
    assert [e.kind for e in events] == ["unavailable"]  # and the host's own watcher saw it


class Oversharing(FakeMemoryProvider):
    """Another plugin's external provider whose recall is not text, or far too long (``answer``)."""

    name = "ctx-oversharing"
    answer: Any = ""

    def prefetch(self, query: str, *, session: SessionInfo) -> Any:
        return self.answer


@pytest.mark.parametrize("answer", [{"recall": "EVILDICT"}, b"EVILBYTES", "remember " * 250_000])
def test_an_external_providers_recall_is_text_within_bounds(answer: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """Before: hermes got ``str()`` of a dict or bytes (``{'recall': 'EVILDICT'}`` in the prompt) and a 2 MB
    recall whole; now a recall that is not text adds nothing (a failure of the provider) and a long one is cut."""
    class Plugin:
        @hookimpl
        def register_memory_providers(self, register: Any) -> None:
            register(Oversharing)

    monkeypatch.setattr(Oversharing, "answer", answer)
    host = load_host({"ctx_plugins": {"memory": {"providers": ["ctx-oversharing"]}}}, plugins=[Plugin()])
    adapter = HermesMemoryAdapter("ctx-oversharing", host=host)
    adapter.initialize("s1", platform="cli")
    recalled = adapter.prefetch("anything")
    if isinstance(answer, str):
        assert 16_000 < len(recalled) < 16_100 and "… cut:" in recalled
    else:
        assert recalled == "" and "not text" in host.isolator.health("memory:ctx-oversharing").last_error


@pytest.mark.parametrize("method", ["system_prompt_block", "on_pre_compress", "handle_tool_call"])
def test_every_text_an_external_provider_hands_hermes_is_text_within_bounds(method: str,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """Red-team of this session's first fix: only prefetch was checked; the others passed str() of a dict and
    2 MB of text to hermes."""
    class Plugin:
        @hookimpl
        def register_memory_providers(self, register: Any) -> None:
            register(Oversharing)

    host = load_host({"ctx_plugins": {"memory": {"providers": ["ctx-oversharing"]}}}, plugins=[Plugin()])
    adapter = HermesMemoryAdapter("ctx-oversharing", host=host)
    adapter.initialize("s1", platform="cli")
    args: dict[str, tuple[Any, ...]] = {"system_prompt_block": (), "on_pre_compress": ([],),
                                        "handle_tool_call": ("ctx_tool", {})}
    for answer, longest in (({"recall": "EVILDICT"}, 0), ("remember " * 250_000, 70_000)):
        monkeypatch.setattr(Oversharing, method, lambda self, *a, answer=answer, **k: answer, raising=False)
        text = getattr(adapter, method)(*args[method])
        bounded = "EVILDICT" not in text and len(text) <= longest
        assert bounded or (method == "handle_tool_call" and "unavailable" in text)


def test_another_plugins_availability_check_that_hangs_holds_no_agent_long(monkeypatch: pytest.MonkeyPatch) -> None:
    """hermes asks is_available() while it builds every agent; one touching the network (against the contract)
    held each construction as long as it took (red-team, session 17)."""
    class Slow(FakeMemoryProvider):
        name = "ctx-slow-check"

        def is_available(self) -> bool:
            time.sleep(3)
            return True

    class Plugin:
        @hookimpl
        def register_memory_providers(self, register: Any) -> None:
            register(Slow)

    host = load_host({"ctx_plugins": {"memory": {"providers": ["ctx-slow-check"]}, "call_timeout_seconds": 0.3}},
                     plugins=[Plugin()])
    started = time.monotonic()
    assert HermesMemoryAdapter("ctx-slow-check", host=host).is_available() is False
    assert time.monotonic() - started < 2


def test_another_plugins_availability_check_that_raises_is_said_and_caught(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture) -> None:
    """Before: the check ran in a bare thread, and its exception went to stderr as an uncaught-thread traceback;
    the warning said 'did not answer within 3 s (or raised)'."""
    class Raising(FakeMemoryProvider):
        name = "ctx-raising-check"

        def is_available(self) -> bool:
            raise RuntimeError("no credentials file at ~/.acme")

    class Plugin:
        @hookimpl
        def register_memory_providers(self, register: Any) -> None:
            register(Raising)

    host = load_host({"ctx_plugins": {"memory": {"providers": ["ctx-raising-check"]}}}, plugins=[Plugin()])
    with caplog.at_level("WARNING", logger="hermes_ctx_plugins"):
        assert HermesMemoryAdapter("ctx-raising-check", host=host).is_available() is False
    assert "Exception in thread" not in capsys.readouterr().err
    assert "is_available() raised RuntimeError: no credentials file at ~/.acme" in caplog.text
    assert "did not answer" not in caplog.text


def test_another_plugins_provider_reads_copies_of_hermes_messages() -> None:
    """hermes gives its memory provider its own message list (sync_turn, on_session_end, on_pre_compress): a
    provider of another plugin that changed them rewrote hermes' history."""
    class Rewriting(FakeMemoryProvider):
        name = "ctx-rewriting"

        def sync_turn(self, turn: Any) -> None:
            turn.messages[0]["content"] = "REWRITTEN"

        def on_session_end(self, session: SessionInfo, messages: Any) -> None:
            messages[0]["content"] = "REWRITTEN"

        def on_pre_compress(self, messages: Any) -> str:
            messages[0]["content"] = "REWRITTEN"
            return "noted"

    class Plugin:
        @hookimpl
        def register_memory_providers(self, register: Any) -> None:
            register(Rewriting)

    host = load_host({"ctx_plugins": {"memory": {"providers": ["ctx-rewriting"]}}}, plugins=[Plugin()])
    adapter = HermesMemoryAdapter("ctx-rewriting", host=host)
    adapter.initialize("s-rewrite", user_id="alice")
    messages = [{"role": "user", "content": "my port is 6543"}, {"role": "assistant", "content": "noted"}]
    adapter.sync_turn("my port is 6543", "noted", messages=messages)
    adapter.on_session_end(messages)
    assert adapter.on_pre_compress(messages) == "noted"
    assert messages[0]["content"] == "my port is 6543"


def test_a_platform_user_id_0_is_a_user_not_the_anonymous_one() -> None:
    """hermes passes ``user_id`` as the platform gives it: ``str(user_id or "")`` made user 0 the anonymous user ""
    (with every other user hermes gives no id), and a chat id 0 no chat."""
    class Plugin:
        @hookimpl
        def register_memory_providers(self, register: Any) -> None:
            register(Recaller)

    host = load_host({"ctx_plugins": {"memory": {"providers": ["ctx-recall"]}}}, plugins=[Plugin()])
    zero, anonymous = HermesMemoryAdapter("ctx-recall", host=host), HermesMemoryAdapter("ctx-recall", host=host)
    zero.initialize("s-zero", platform="telegram", user_id=0, chat_id=0)
    anonymous.initialize("s-anon", platform="cli")
    zero.sync_turn("my locker is number 31", "noted")
    assert "locker" in zero.prefetch("locker number")
    assert "locker" not in anonymous.prefetch("locker number")
    host.shutdown()

from __future__ import annotations

import logging
import re
from typing import Any

import pytest

from hermes_ctx_plugins import (
    CompressionResult,
    CompressorStrategy,
    ConfigError,
    DuplicatePluginError,
    HermesCtxError,
    MemoryProvider,
    PluginLoadError,
    ProviderLimitError,
    Request,
    Response,
    SessionInfo,
    StatusEvent,
    Turn,
    UnknownPluginError,
    Usage,
    hookimpl,
    load_host,
)
from hermes_ctx_plugins.testing import (
    FailingPlugin,
    FakeCompressor,
    FakeMemoryProvider,
    FakesPlugin,
    RecordingPlugin,
    registered,
)

SESSION = SessionInfo(session_id="s1", user_id="alice", model="gpt-4o")


def request(**kw: Any) -> Request:
    return Request(session=SESSION, messages=[{"role": "user", "content": "hi"}], model="gpt-4o",
                   token_estimate=10, turn_number=1, **kw)


def turn(user: str = "deploy the api on port 8443", assistant: str = "done") -> Turn:
    return Turn(session=SESSION, turn_number=1, user_text=user, assistant_text=assistant)


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class OtherExternal(FakeMemoryProvider):
    name = "other-memory"


class OtherExternalPlugin:
    @hookimpl
    def register_memory_providers(self, register: Any) -> None:
        register(OtherExternal)


def fakes_config(**ctx: Any) -> dict[str, Any]:
    return {"ctx_plugins": {"compressor": "fake", "memory": {"providers": ["fake-local", "fake-memory"]},
                            **ctx}}


# ---------------------------------------------------------------- selection


def test_selects_configured_compressor_and_providers() -> None:
    host = load_host(fakes_config(options={"fake": {"keep_last": 2}}), plugins=[FakesPlugin()])
    assert isinstance(host.compressor, FakeCompressor)
    assert host.compressor.options == {"keep_last": 2}
    assert [p.name for p in host.memory_providers] == ["fake-local", "fake-memory"]
    records = {r.name: r for r in host.plugins()}
    assert records["fake"].kind == "compressor" and records["fake"].status == "active"
    assert records["fake-memory"].external is True
    assert records["fake-local"].external is False
    assert records["fake-memory"].source == "in-process"
    assert records["fake-memory"].enabled


def test_compressor_gets_hermes_compression_and_model_settings() -> None:
    config = fakes_config()
    config["compression"] = {"threshold": 0.6, "model_thresholds": {"glm": 0.3, "glm-5.2": 0.4}}
    config["model"] = {"default": "glm-5.2-air", "context_length": 200_000}
    host = load_host(config, plugins=[FakesPlugin()])
    compressor = host.compressor
    assert compressor is not None
    assert compressor.threshold_percent == 0.4  # longest substring match wins
    assert compressor.threshold_tokens == 80_000
    assert not host.should_compress(79_999)
    assert host.should_compress(80_000)


def test_unknown_strategy_lists_the_available_ones() -> None:
    with pytest.raises(UnknownPluginError) as exc:
        load_host({"ctx_plugins": {"compressor": "fak"}}, plugins=[FakesPlugin()])
    assert isinstance(exc.value, KeyError)
    assert exc.value.available == ("fake", "pipeline", "prune", "summarize", "window")
    assert "unknown compressor strategy 'fak'" in str(exc.value)
    assert "did you mean 'fake'" in str(exc.value)
    assert "available: fake, pipeline, prune, summarize, window" in str(exc.value)


def test_unknown_provider_lists_the_available_ones() -> None:
    with pytest.raises(UnknownPluginError, match=r"available: .*fake-local, fake-memory"):
        load_host({"ctx_plugins": {"memory": {"providers": ["sqlite"]}}}, plugins=[FakesPlugin()])


def test_defaults_select_summarize_and_the_file_provider() -> None:
    host = load_host({}, plugins=[FakesPlugin()])
    assert host.compressor is not None and host.compressor.name == "summarize"
    assert {r.name: r.source for r in host.plugins()}["summarize"] == "built-in"
    assert [p.name for p in host.memory_providers] == ["file"]  # built in, not external


def test_two_external_providers_in_config_name_both() -> None:
    with pytest.raises(ProviderLimitError) as exc:
        load_host({"ctx_plugins": {"memory": {"providers": ["fake-local", "fake-memory", "other-memory"]}}},
                  plugins=[FakesPlugin(), OtherExternalPlugin()])
    assert exc.value.providers == ("fake-memory", "other-memory")
    assert "'fake-memory' and 'other-memory'" in str(exc.value)


def test_activating_a_second_external_provider_names_both() -> None:
    host = load_host(fakes_config(), plugins=[FakesPlugin(), OtherExternalPlugin()])
    with pytest.raises(ProviderLimitError, match="'fake-memory' and 'other-memory'"):
        host.activate_provider("other-memory")
    assert [p.name for p in host.memory_providers] == ["fake-local", "fake-memory"]
    host.deactivate_provider("fake-memory")
    assert host.activate_provider("other-memory").name == "other-memory"


def test_non_external_providers_never_count_against_the_limit() -> None:
    class LocalTwo(FakeMemoryProvider):
        name = "local-two"
        external = False

    class Plugin:
        @hookimpl
        def register_memory_providers(self, register: Any) -> None:
            register(LocalTwo)

    host = load_host({"ctx_plugins": {"memory": {"providers": ["fake-local", "local-two", "fake-memory"]}}},
                     plugins=[FakesPlugin(), Plugin()])
    assert len(host.memory_providers) == 3


def test_duplicate_name_names_both_plugins() -> None:
    class Again(FakeCompressor):
        pass

    class SecondPlugin:
        @hookimpl
        def register_compressors(self, register: Any) -> None:
            register(Again)

    with pytest.raises(DuplicatePluginError) as exc:
        load_host({}, plugins=[FakesPlugin(), SecondPlugin()])
    assert exc.value.name == "fake"
    first, second = exc.value.plugins
    assert "FakesPlugin" in first and "SecondPlugin" in second
    assert first in str(exc.value) and second in str(exc.value)


def test_a_name_registered_twice_says_what_to_do_for_its_kind() -> None:
    """The message told a memory provider's author to rename 'its strategy', and a plugin registering one name
    twice read 'registered by both plugin X and plugin X' (a third-party author's walk-through)."""
    provider = DuplicatePluginError("notes", "memory", "acme", "other")
    assert "memory provider 'notes'" in str(provider) and "rename its provider" in str(provider)
    twice = DuplicatePluginError("recent", "compressor", "acme", "acme")
    assert str(twice) == ("compressor strategy 'recent' is registered twice by plugin 'acme': "
                          "register each strategy once")

    class Twice:
        @hookimpl
        def register_compressors(self, register: Any) -> None:
            register(FakeCompressor)
            register(FakeCompressor)

    with pytest.raises(DuplicatePluginError, match="registered twice by plugin"):
        load_host({}, plugins=[Twice()])


def test_a_plugin_implementing_no_hook_is_said_to_in_its_status() -> None:
    """An entry point naming another module than meant (a folder of the same name in the working directory is
    imported instead) loaded as 'ok; hooks: -', and its strategy was then 'unknown'."""
    class Empty:
        pass

    host = load_host({}, plugins=[Empty()])
    [record] = [p for p in host.loaded_plugins() if p.hooks == () and p.source != "built-in"]
    assert "implements no hook" in record.status


@pytest.mark.parametrize(
    ("registered_value", "words"),
    [
        (42, "expected a subclass of CompressorStrategy"),
        (FakeMemoryProvider, "expected a subclass of CompressorStrategy"),
        (type("Nameless", (FakeCompressor,), {"name": ""}), "Nameless.name is ''"),
        (type("Spaced", (FakeCompressor,), {"name": "my strategy"}), "'my strategy'"),
    ],
    ids=["not-a-class", "wrong-base", "no-name", "bad-name"],
)
def test_invalid_registration_is_a_plugin_load_error(registered_value: object, words: str) -> None:
    class Plugin:
        @hookimpl
        def register_compressors(self, register: Any) -> None:
            register(registered_value)

    with pytest.raises(PluginLoadError, match=words) as exc:
        load_host({}, plugins=[Plugin()])
    assert "Plugin" in exc.value.plugin


def test_provider_named_builtin_is_refused() -> None:
    class Sneaky(FakeMemoryProvider):
        name = "builtin"  # hermes would let this bypass its one-external rule

    class Plugin:
        @hookimpl
        def register_memory_providers(self, register: Any) -> None:
            register(Sneaky)

    with pytest.raises(PluginLoadError, match="reserved"):
        load_host({}, plugins=[Plugin()])


def test_misspelled_hook_fails_at_load() -> None:
    class Typo:
        @hookimpl
        def pre_requets(self, request: Request) -> None:
            pass

    with pytest.raises(PluginLoadError, match="pre_requets"):
        load_host({}, plugins=[Typo()])


def test_unknown_hook_argument_fails_at_load() -> None:
    class BadArgs:
        @hookimpl
        def pre_request(self, req: Request) -> None:
            pass

    with pytest.raises(PluginLoadError, match="req"):
        load_host({}, plugins=[BadArgs()])


def test_wrappers_on_lifecycle_hooks_are_refused() -> None:
    class Wrapper:
        @hookimpl(wrapper=True)
        def turn_finalized(self, turn: Turn) -> Any:
            return (yield)

    with pytest.raises(PluginLoadError, match="wrapper"):
        load_host({}, plugins=[Wrapper()])


def test_options_for_unknown_name() -> None:
    with pytest.raises(ConfigError, match="did you mean 'fake-memory'") as exc:
        load_host(fakes_config(options={"fake-memroy": {}}), plugins=[FakesPlugin()])
    assert exc.value.path == "ctx_plugins.options.fake-memroy"


def test_options_class_is_validated() -> None:
    from dataclasses import dataclass

    @dataclass(frozen=True)
    class Opts:
        keep: int = 3

    class Typed(FakeCompressor):
        name = "typed"
        options_class = Opts

    class Plugin:
        @hookimpl
        def register_compressors(self, register: Any) -> None:
            register(Typed)

    host = load_host({"ctx_plugins": {"compressor": "typed", "options": {"typed": {"keep": 9}}}},
                     plugins=[Plugin()])
    assert host.compressor is not None and host.compressor.options == Opts(keep=9)
    with pytest.raises(ConfigError, match=r"ctx_plugins.options.typed.keep: got str 'many'"):
        load_host({"ctx_plugins": {"compressor": "typed", "options": {"typed": {"keep": "many"}}}},
                  plugins=[Plugin()])


def test_constructor_failure_names_the_plugin() -> None:
    class Broken(FakeMemoryProvider):
        name = "broken"

        def __init__(self, *a: Any, **k: Any) -> None:
            raise OSError("disk on fire")

    class Plugin:
        @hookimpl
        def register_memory_providers(self, register: Any) -> None:
            register(Broken)

    with pytest.raises(PluginLoadError, match="could not create memory 'broken': OSError: disk on fire"):
        load_host({"ctx_plugins": {"memory": {"providers": ["broken"]}}}, plugins=[Plugin()])


def test_every_error_is_a_hermes_ctx_error() -> None:
    for exc_type in (ConfigError, ProviderLimitError, UnknownPluginError, DuplicatePluginError,
                     PluginLoadError):
        assert issubclass(exc_type, HermesCtxError)


# ---------------------------------------------------------------- disabling and deployments


def test_disabled_plugin_hooks_never_run() -> None:
    on, off = RecordingPlugin(context="from on"), RecordingPlugin(context="from off")
    config = {"ctx_plugins": {"disabled": ["off"]}}
    host = load_host(config, plugins=[_named(on, "on"), _named(off, "off")])
    req = host.pre_request(request())
    host.session_start(SESSION)
    host.post_response(Response(session=SESSION, model="m", usage=Usage(prompt_tokens=5)))
    host.turn_finalized(turn())
    assert off.calls == []
    assert on.hooks_called() == ["pre_request", "session_start", "post_response", "turn_finalized"]
    assert req.context == "from on"
    loaded = {p.name: p for p in host.loaded_plugins()}
    assert loaded["off"].enabled is False and loaded["off"].status == "disabled"
    assert loaded["on"].enabled and "pre_request" in loaded["on"].hooks
    # adding it after load (as an embedding host might) does not make it run either
    with registered(host, off, "off"):
        host.turn_finalized(turn())
    assert off.calls == []


class _Named:
    """Gives a plugin object a fixed canonical name (pluggy uses ``__name__`` when present)."""

    def __init__(self, plugin: object, name: str) -> None:
        self.__name__ = name
        self._plugin = plugin
        for hook in ("session_start", "pre_request", "post_response", "turn_finalized"):
            if hasattr(plugin, hook):
                setattr(self, hook, getattr(plugin, hook))


def _named(plugin: object, name: str) -> object:
    return _Named(plugin, name)


def test_disabling_a_provider_by_name_removes_it_from_the_active_set() -> None:
    config = fakes_config(deployments={"bot": {"disabled": ["fake-memory"]}})
    host = load_host(config, deployment="bot", plugins=[FakesPlugin()])
    assert [p.name for p in host.memory_providers] == ["fake-local"]
    record = {r.name: r for r in host.plugins()}["fake-memory"]
    assert record.enabled is False and record.status == "disabled"
    host.turn_finalized(turn())
    with pytest.raises(ConfigError, match="disabled"):
        host.activate_provider("fake-memory")


def test_deployment_switches_strategy_and_providers(monkeypatch: pytest.MonkeyPatch) -> None:
    class Other(FakeCompressor):
        name = "other"

    class Plugin:
        @hookimpl
        def register_compressors(self, register: Any) -> None:
            register(Other)

    config = fakes_config(deployments={"lean": {"compressor": "other", "memory": {"providers": []}}})
    plugins = [FakesPlugin(), Plugin()]
    assert load_host(config, plugins=plugins).compressor.name == "fake"  # type: ignore[union-attr]
    lean = load_host(config, deployment="lean", plugins=plugins)
    assert lean.compressor is not None and lean.compressor.name == "other"
    assert lean.memory_providers == []
    monkeypatch.setenv("HERMES_CTX_DEPLOYMENT", "lean")
    assert load_host(config, plugins=plugins).compressor.name == "other"  # type: ignore[union-attr]


def test_deployment_with_two_externals_names_the_deployment() -> None:
    config = fakes_config(deployments={"greedy": {"memory": {"providers": ["fake-memory", "other-memory"]}}})
    with pytest.raises(ProviderLimitError, match=r"ctx_plugins\.deployments\.greedy\.memory\.providers"):
        load_host(config, deployment="greedy", plugins=[FakesPlugin(), OtherExternalPlugin()])


def test_two_external_providers_in_a_config_file_name_its_line(tmp_path: Any) -> None:
    """The newcomer walk: every other config error names the file and line, this one only the key."""
    path = tmp_path / "config.yaml"
    path.write_text("model: m\nctx_plugins:\n  memory:\n    providers: [fake-memory, other-memory]\n")
    with pytest.raises(ProviderLimitError, match=rf"ctx_plugins\.memory\.providers, {re.escape(str(path))}:4\)"):
        load_host(path, plugins=[FakesPlugin(), OtherExternalPlugin()])


def test_disabled_name_that_matches_nothing_is_an_error() -> None:
    with pytest.raises(ConfigError, match="did you mean 'fake-memory'") as exc:
        load_host({"ctx_plugins": {"disabled": ["fake-memroy"]}}, plugins=[FakesPlugin()])
    assert exc.value.path == "ctx_plugins.disabled"


def test_a_deployments_list_names_are_checked_and_its_error_names_that_list() -> None:
    """Before: a misspelled name in ``deployments.<d>.enabled`` was accepted and its plugin stayed disabled, silently;
    one in ``deployments.<d>.disabled`` was said to be in ``ctx_plugins.disabled``."""
    cases = [({"disabled": ["fake-memory"], "deployments": {"bot": {"enabled": ["fake-memroy"]}}},
              "ctx_plugins.deployments.bot.enabled"),
             ({"deployments": {"bot": {"disabled": ["fake-memroy"]}}}, "ctx_plugins.deployments.bot.disabled")]
    for settings, where in cases:
        with pytest.raises(ConfigError, match="did you mean 'fake-memory'") as exc:
            load_host({"ctx_plugins": settings}, deployment="bot", plugins=[FakesPlugin()])
        assert exc.value.path == where
    # spelled right, it takes the name back out of the top level's list
    settings = {"disabled": ["fake-memory"], "deployments": {"bot": {"enabled": ["fake-memory"]}}}
    host = load_host({"ctx_plugins": settings}, deployment="bot", plugins=[FakesPlugin()])
    assert "fake-memory" not in host.config.plugins.disabled
    host.shutdown()


# ---------------------------------------------------------------- fault isolation


def test_a_plugin_raising_in_pre_request_does_not_stop_the_others(caplog: pytest.LogCaptureFixture) -> None:
    before, after = RecordingPlugin(context="before"), RecordingPlugin(context="after")
    failing = FailingPlugin(hooks=["pre_request"], error=ValueError("boom"))
    host = load_host({}, plugins=[_named(before, "before"), _named(failing, "failing"),
                                  _named(after, "after")])
    with caplog.at_level(logging.WARNING, logger="hermes_ctx_plugins"):
        req = host.pre_request(request())
    status = {p.name: p.status for p in host.loaded_plugins()}["failing"]
    assert status.startswith("failing: 1 consecutive") and "ValueError: boom" in status
    assert failing.hooks_called() == ["pre_request"]  # it did run, and raised
    assert {c.source for c in req.contributions} == {"before", "after"}
    assert "never delivered" not in req.context
    assert any("plugin:failing failed" in r.getMessage() and "boom" in r.getMessage()
               for r in caplog.records)
    # the rest of the turn goes on
    host.turn_finalized(turn())
    assert before.hooks_called()[-1] == after.hooks_called()[-1] == "turn_finalized"
    status = {p.name: p.status for p in host.loaded_plugins()}["failing"]
    assert status == "ok (1 earlier failure, last: ValueError: boom)"


def test_repeated_failures_suspend_then_probe_then_resume() -> None:
    clock, events = Clock(), []
    failing = FailingPlugin(hooks=["turn_finalized"])
    host = load_host({"ctx_plugins": {"failure_threshold": 3, "cooldown_seconds": 60}},
                     plugins=[_named(failing, "flaky")], clock=clock, status_callback=events.append)
    for _ in range(5):
        host.turn_finalized(turn())
    assert failing.hooks_called().count("turn_finalized") == 3  # suspended after the third
    assert [e.kind for e in events] == ["suspended"]
    assert isinstance(events[0], StatusEvent) and "flaky" in events[0].message
    status = {p.name: p.status for p in host.loaded_plugins()}["flaky"]
    assert status.startswith("suspended after 3 consecutive failures, probe in 60s")

    clock.now += 59
    host.turn_finalized(turn())
    assert failing.hooks_called().count("turn_finalized") == 3  # still cooling down
    clock.now += 2
    host.turn_finalized(turn())  # the probe runs, fails, and re-suspends
    assert failing.hooks_called().count("turn_finalized") == 4
    host.turn_finalized(turn())
    assert failing.hooks_called().count("turn_finalized") == 4
    assert [e.kind for e in events] == ["suspended", "suspended"]

    failing.failing.clear()  # the plugin recovers
    clock.now += 61
    host.turn_finalized(turn())
    host.turn_finalized(turn())
    assert failing.hooks_called().count("turn_finalized") == 6
    assert events[-1].kind == "resumed"
    assert {p.name: p.status for p in host.loaded_plugins()}["flaky"].startswith("ok (4 earlier failures")


def test_failing_provider_is_isolated_and_suspended_visibly() -> None:
    class Exploding(FakeMemoryProvider):
        name = "exploding"

        def prefetch(self, query: str, *, session: SessionInfo) -> str:
            raise ConnectionError("backend down")

        def sync_turn(self, turn: Turn) -> None:
            raise ConnectionError("backend down")

    class Plugin:
        @hookimpl
        def register_memory_providers(self, register: Any) -> None:
            register(Exploding)

    events: list[StatusEvent] = []
    host = load_host({"ctx_plugins": {"memory": {"providers": ["fake-local", "exploding"]},
                                      "failure_threshold": 2}},
                     plugins=[FakesPlugin(), Plugin()], status_callback=events.append)
    host.turn_finalized(turn(user="the deploy port is 8443"))
    assert host.prefetch("which deploy port?", session=SESSION) == "- the deploy port is 8443 -> done"
    record = {r.name: r for r in host.plugins()}["exploding"]
    # all its failures were one user's calls, and no other user is served: the provider is down, suspended for all
    assert record.status.startswith("suspended after 2 consecutive failures")
    assert "ConnectionError: backend down" in record.status
    assert events and events[0].source == "memory:exploding"


def test_pre_request_returning_a_non_string_counts_as_a_failure() -> None:
    class Wrong:
        @hookimpl
        def pre_request(self, request: Request) -> Any:
            return {"context": "x"}

    host = load_host({}, plugins=[_named(Wrong(), "wrong")])
    req = host.pre_request(request())
    assert req.contributions == []
    assert "TypeError" in {p.name: p.status for p in host.loaded_plugins()}["wrong"]


def test_compressor_failure_leaves_messages_unchanged() -> None:
    class Crashing(CompressorStrategy):
        name = "crashing"

        def compress(self, messages: list[Any], **kw: Any) -> CompressionResult:
            messages.clear()  # even a strategy that vandalises its input...
            raise RuntimeError("bug")

    class Plugin:
        @hookimpl
        def register_compressors(self, register: Any) -> None:
            register(Crashing)

    host = load_host({"ctx_plugins": {"compressor": "crashing"}}, plugins=[Plugin()])
    original = [{"role": "user", "content": "a"}, {"role": "assistant", "content": "b"}]
    messages = [dict(m) for m in original]
    result = host.compress(messages)
    assert result.compressed is False
    assert result.messages == original
    assert "RuntimeError: bug" in {r.name: r.status for r in host.plugins()}["crashing"]


def test_compress_runs_the_active_strategy() -> None:
    host = load_host(fakes_config(options={"fake": {"keep_last": 2}}), plugins=[FakesPlugin()])
    messages = [{"role": "user", "content": f"m{i}"} for i in range(6)]
    result = host.compress(messages)
    assert result.compressed
    texts = [m["content"] for m in result.messages]
    assert texts[:1] + texts[2:] == ["m0", "m4", "m5"]
    assert texts[1].startswith("[3 earlier messages dropped]")  # with the host's pointer into the archive
    assert [m["content"] for m in result.removed] == ["m1", "m2", "m3"]
    assert host.compressor is not None and host.compressor.compression_count == 1


def test_an_empty_conversation_is_left_as_it_is_and_counted_as_no_failure() -> None:
    """``host.compress([])`` ran the strategy, which failed on it: a traceback logged and a failure counted each time
    (a red-team pass; hermes' engine never asks, the Python API may)."""
    host = load_host({})
    for _ in range(5):
        result = host.compress([])
        assert not result.compressed and result.messages == []
    assert {r.name: r.status for r in host.plugins()}["summarize"] == "active"  # not "failing: ..."


def test_post_response_feeds_usage_to_the_compressor() -> None:
    host = load_host(fakes_config(), plugins=[FakesPlugin()])
    host.post_response(Response(session=SESSION, model="m",
                                usage=Usage.from_mapping({"input_tokens": 1234, "output_tokens": 5})))
    assert host.compressor is not None and host.compressor.last_prompt_tokens == 1234


def test_session_lifecycle_reaches_providers_and_shutdown() -> None:
    host = load_host(fakes_config(), plugins=[FakesPlugin()])
    host.session_start(SESSION)
    provider = host.memory_providers[1]
    assert isinstance(provider, FakeMemoryProvider)
    assert provider.sessions == [SESSION]
    host.shutdown()
    assert provider.shut_down


def test_prefetch_is_scoped_by_user() -> None:
    host = load_host(fakes_config(), plugins=[FakesPlugin()])
    host.turn_finalized(turn(user="my secret project codename is bluebird"))
    bob = SessionInfo(session_id="s2", user_id="bob")
    assert "bluebird" in host.prefetch("what is the project codename", session=SESSION)
    assert host.prefetch("what is the project codename", session=bob) == ""


def test_registered_context_manager_unregisters() -> None:
    host = load_host({})
    recorder = RecordingPlugin()
    with registered(host, recorder) as name:
        host.turn_finalized(turn())
        assert name in {p.name for p in host.loaded_plugins()}
    host.turn_finalized(turn())
    assert recorder.hooks_called() == ["turn_finalized"]
    assert name not in {p.name for p in host.loaded_plugins()}


def test_registered_plugin_strategies_are_forgotten_afterwards() -> None:
    host = load_host({})
    builtins = {r.name for r in host.plugins()}
    with registered(host, FakesPlugin()):
        assert {r.name for r in host.plugins()} - builtins == {"fake", "fake-memory", "fake-local"}
    assert {r.name for r in host.plugins()} == builtins


def test_memory_provider_defaults_are_harmless() -> None:
    class Minimal(MemoryProvider):
        name = "minimal"

    provider = Minimal()
    assert provider.is_available()
    assert provider.prefetch("q", session=SESSION) == ""
    assert provider.get_tool_schemas() == []
    assert "no tool named 'x'" in provider.handle_tool_call("x", {})

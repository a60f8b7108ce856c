"""The host stays up when a plugin does not: failing strategies are suspended and replaced, a result
that grows the prompt is refused, and a running host's health is visible from another process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from hermes_ctx_plugins import CompressionResult, CompressorStrategy, hookimpl, load_host
from hermes_ctx_plugins.cli import main
from hermes_ctx_plugins.runstate import RunningState, read_state
from hermes_ctx_plugins.testing import make_transcript


class Exploding(CompressorStrategy):
    name = "exploding"

    def compress(self, messages: list[dict[str, Any]], **_: Any) -> CompressionResult:
        raise RuntimeError("kaboom")


class Inflating(CompressorStrategy):
    """Claims to compress while it makes the conversation longer."""

    name = "inflating"

    def compress(self, messages: list[dict[str, Any]], **_: Any) -> CompressionResult:
        padded = [dict(m) for m in messages]
        padded[0] = {**padded[0], "content": str(padded[0].get("content") or "") + " padding" * 500}
        return CompressionResult(messages=padded, tokens_before=10_000, tokens_after=10)


class Strategies:
    @hookimpl
    def register_compressors(self, register: Any) -> None:
        register(Exploding)
        register(Inflating)


def host_with(name: str, **settings: Any) -> Any:
    config = {"model": {"default": "gpt-4o", "context_length": 128_000},
              "ctx_plugins": {"compressor": name, "failure_threshold": 3, **settings}}
    return load_host(config, plugins=[Strategies()])


def test_a_strategy_that_keeps_raising_is_suspended_and_the_default_compacts_instead() -> None:
    host = host_with("exploding")
    messages = make_transcript(3, turns=40)
    for attempt in range(1, 5):
        # hermes asks should_compress between compactions: a success there must not hide the failures
        host.should_compress(200_000)
        result = host.compress(messages, force=True)
        assert result.compressed and result.messages[-1] == messages[-1], attempt  # summarize stood in
    status = {r.name: r.status for r in host.plugins()}["exploding"]
    assert status.startswith("suspended after 3 consecutive failures") and "kaboom" in status


def test_a_result_that_does_not_shrink_the_prompt_is_refused_and_counted() -> None:
    host = host_with("inflating")
    messages = make_transcript(3, turns=40)
    result = host.compress(messages, force=True)
    assert "padding" not in json.dumps(result.messages)  # the inflated result never reaches the model
    status = {r.name: r.status for r in host.plugins()}["inflating"]
    assert "does not shrink the prompt" in status
    for _ in range(2):  # refused every time: suspended like one that raises (before: "1 consecutive" for ever,
        host.compress(messages, force=True)  # the call's return cleared the count; a README audit)
    status = {r.name: r.status for r in host.plugins()}["inflating"]
    assert status.startswith("suspended after 3 consecutive failures"), status


def test_without_a_fallback_the_messages_stay_as_they_were() -> None:
    class BrokenDefault(CompressorStrategy):
        name = "summarize-broken"

        def compress(self, messages: list[dict[str, Any]], **_: Any) -> CompressionResult:
            raise RuntimeError("nope")

    class Plugin:
        @hookimpl
        def register_compressors(self, register: Any) -> None:
            register(BrokenDefault)

    host = load_host({"ctx_plugins": {"compressor": "summarize-broken", "disabled": ["summarize"]}},
                     plugins=[Plugin()])
    messages = make_transcript(3, turns=10)
    assert host.compress(messages, force=True).messages == messages


def test_suspensions_are_visible_from_another_process(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    home = Path(os.environ["HERMES_HOME"])
    state = RunningState(home)
    host = load_host({"ctx_plugins": {"compressor": "exploding", "failure_threshold": 1}},
                     plugins=[Strategies()], status_callback=state.on_event)
    state.host = host
    state.write()
    host.compress(make_transcript(3, turns=10), force=True)  # fails once: suspended (threshold 1)
    running = read_state(home)
    assert running is not None and running["alive"] and running["pid"] == os.getpid()
    assert any(r["name"] == "exploding" and r["status"].startswith("suspended") for r in running["plugins"])
    # `hermes-ctx plugins` in another process shows it
    out = subprocess.run([sys.executable, "-m", "hermes_ctx_plugins.cli", "plugins"], capture_output=True,
                         text=True, env={**os.environ}, check=True).stdout
    assert f"running hermes: pid {os.getpid()} (running)" in out and "exploding: suspended" in out
    # a dead writer is said to be dead
    data = json.loads((home / "ctx_plugins" / "running.json").read_text())
    (home / "ctx_plugins" / "running.json").write_text(json.dumps({**data, "pid": 2**31 - 7}))
    assert main(["plugins"]) == 0
    assert "(no longer running)" in capsys.readouterr().out


def test_inside_hermes_a_broken_plugin_costs_only_itself(stub: Any, tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("run_agent", reason="the hermes extra is not installed")
    import importlib

    from hermes_helpers import configure_hermes, new_agent

    from hermes_ctx_plugins.hermes.engine import HermesCtxEngine

    site = tmp_path / "site"
    (site / "broken_plugin-0.1.dist-info").mkdir(parents=True)
    (site / "broken_plugin-0.1.dist-info" / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: broken-plugin\nVersion: 0.1\n")
    (site / "broken_plugin-0.1.dist-info" / "entry_points.txt").write_text(
        "[hermes_ctx_plugins]\nbroken = broken_plugin_mod\n")
    (site / "broken_plugin_mod.py").write_text("raise ImportError('missing dependency foo')\n")
    monkeypatch.syspath_prepend(str(site))
    importlib.invalidate_caches()
    configure_hermes(stub, "ctx_plugins: {compressor: window}\n")
    agent = new_agent(stub)
    assert isinstance(agent.context_compressor, HermesCtxEngine)  # our engine runs
    assert agent.context_compressor.strategy.name == "window"
    running = read_state(Path(os.environ["HERMES_HOME"]))
    assert running is not None
    [broken] = [p for p in running["loaded"] if p["name"] == "broken"]
    assert broken["status"].startswith("failed to load") and "missing dependency foo" in broken["status"]

"""Installed is not on: a pip-installed plugin's strategies and providers can be selected, but its
lifecycle hooks run only once it is opted in (``ctx_plugins.plugins``, or one of its strategies or
providers in use). Proven with the example distribution, pip-installed offline, found through its
entry point — and in real hermes-agent 0.19.0, on the wire."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hermes_helpers import MODEL, configure_hermes, hermes_home, new_agent

from hermes_ctx_plugins import ConfigError, Request, SessionInfo, load_host
from hermes_ctx_plugins.cli import main
from hermes_ctx_plugins.host.plugins import HOOKS_OFF
from hermes_ctx_plugins.manager import Host
from hermes_ctx_plugins.testing import RecordingPlugin, StubOpenAIServer

SESSION = SessionInfo(session_id="s", user_id="alice")
ACME_TEXT = "[acme] request 1 to m"


@pytest.fixture
def acme(acme_site: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The example distribution on sys.path, imported afresh by each host that loads it."""
    monkeypatch.syspath_prepend(str(acme_site))
    importlib.invalidate_caches()
    sys.modules.pop("acme_ctx_plugin", None)
    yield
    sys.modules.pop("acme_ctx_plugin", None)


def contributions(host: Host) -> list[str]:
    """What the plugins add to a request (a user would see it on the wire), sorted."""
    request = host.pre_request(Request(session=SESSION, messages=[], model="m", token_estimate=1, turn_number=1))
    return sorted(c.text for c in request.contributions)


def acme_record(host: Host) -> Any:
    return {p.name: p for p in host.loaded_plugins()}["acme"]


def test_an_installed_plugins_hooks_wait_until_it_is_listed(acme: None) -> None:
    recorder = RecordingPlugin(context="IN-PROCESS")
    host = load_host({}, plugins=[recorder])
    assert contributions(host) == ["IN-PROCESS"]  # a plugin handed to the host runs as before ...
    assert acme_record(host).status == HOOKS_OFF and not acme_record(host).hooks_on  # ... acme's waits
    # its registrations are there to select all the same
    assert {r.name: r.status for r in host.plugins()}["acme-recent"] == "not selected"

    listed = load_host({"ctx_plugins": {"plugins": ["acme"]}}, plugins=[RecordingPlugin(context="IN-PROCESS")])
    assert contributions(listed) == ["IN-PROCESS", ACME_TEXT]
    assert acme_record(listed).hooks_on and acme_record(listed).status == "ok"


@pytest.mark.parametrize("config", [
    {"compressor": "acme-recent"},
    {"memory": {"providers": ["acme-notes"]}},
], ids=["its strategy", "its provider"])
def test_using_a_strategy_or_provider_of_the_plugin_opts_it_in(acme: None, config: dict[str, Any]) -> None:
    host = load_host({"ctx_plugins": config})
    assert contributions(host) == [ACME_TEXT]
    assert acme_record(host).hooks_on


def test_a_pipeline_step_opts_its_plugin_in_once_the_pipeline_builds_its_steps(acme: None) -> None:
    host = load_host({"ctx_plugins": {"compressor": "pipeline", "options": {"pipeline": {"steps": ["acme-recent"]}}}})
    assert contributions(host) == []  # the pipeline builds its steps at its first compaction
    result = host.compress([{"role": "user", "content": f"m{i}"} for i in range(12)], force=True)
    assert "[acme-recent dropped" in str(result.messages)  # the step ran ...
    assert contributions(host) == [ACME_TEXT]  # ... and its plugin's hooks run from then on


def test_the_provider_hermes_starts_later_opts_its_plugin_in_then(acme: None) -> None:
    """hermes' ``memory.provider`` starts our provider when an agent first uses it (the shim)."""
    host = load_host({"memory": {"provider": "acme-notes"}})
    assert contributions(host) == []
    host.activate_provider("acme-notes")
    assert contributions(host) == [ACME_TEXT]


def test_disabled_still_wins(acme: None) -> None:
    host = load_host({"ctx_plugins": {"plugins": ["acme"], "disabled": ["acme"]}})
    assert contributions(host) == []
    assert "acme_ctx_plugin" not in sys.modules  # never imported
    assert acme_record(host).status == "disabled" and not acme_record(host).hooks_on


def test_a_deployment_lists_plugins_of_its_own(acme: None) -> None:
    config = {"ctx_plugins": {"deployments": {"bot": {"plugins": ["acme"]}, "plain": {}}}}
    assert contributions(load_host(config, deployment="plain")) == []
    assert contributions(load_host(config, deployment="bot")) == [ACME_TEXT]


@pytest.mark.parametrize(("yaml", "line", "says"), [
    ("ctx_plugins:\n  plugins:\n    - acmee\n", 2, "ctx_plugins.plugins: 'acmee' names no installed plugin (did you "
                                                    "mean 'acme'?)"),
    ("ctx_plugins:\n  plugins: [acme-notes]\n", 2,
     "'acme-notes' is a memory provider of plugin 'acme': list the plugin"),
    ("ctx_plugins:\n  plugins: [acme]\n  deployments:\n    bot:\n      plugins: [acm]\n", 5,
     "ctx_plugins.deployments.bot.plugins: 'acm' names no installed plugin (did you mean 'acme'?)"),
], ids=["a typo", "a provider's name", "in a deployment"])
def test_an_unknown_name_is_a_config_error_with_file_and_line(acme: None, tmp_path: Path, yaml: str, line: int,
                                                              says: str) -> None:
    path = tmp_path / "config.yaml"
    path.write_text(yaml, encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        load_host(path, deployment="bot" if "deployments" in yaml else None)
    assert str(caught.value).startswith(f"{path}:{line}: ") and says in str(caught.value)


def test_hermes_ctx_plugins_shows_the_hooks_state(acme: None, capsys: pytest.CaptureFixture[str]) -> None:
    home = hermes_home()
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.yaml").write_text("ctx_plugins: {}\n", encoding="utf-8")
    assert main(["plugins"]) == 0
    assert f"plugin acme (acme-ctx-plugin 1.0.0): {HOOKS_OFF}" in capsys.readouterr().out

    (home / "config.yaml").write_text("ctx_plugins: {plugins: [acme]}\n", encoding="utf-8")
    assert main(["plugins"]) == 0
    out = capsys.readouterr().out
    assert "plugin acme (acme-ctx-plugin 1.0.0): ok" in out and HOOKS_OFF not in out


def test_in_real_hermes_the_plugins_text_reaches_the_request_only_once_listed(
        acme: None, stub: StubOpenAIServer) -> None:
    pytest.importorskip("run_agent", reason="the hermes extra is not installed")
    configure_hermes(stub)
    stub.reply("first")
    new_agent(stub).run_conversation("hello", conversation_history=[])
    sent = stub.chat_requests[-1].body["messages"][-1]["content"]  # type: ignore[index]
    assert sent.startswith("hello") and "[acme]" not in sent

    configure_hermes(stub, "ctx_plugins: {plugins: [acme]}\n")
    stub.reply("second")
    new_agent(stub).run_conversation("hello again", conversation_history=[])
    sent = stub.chat_requests[-1].body["messages"][-1]["content"]  # type: ignore[index]
    assert sent.startswith("hello again") and f"[acme] request 1 to {MODEL}" in sent

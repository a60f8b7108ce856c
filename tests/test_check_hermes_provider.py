"""`hermes-ctx check` building hermes' memory.provider (session 21's change), red-teamed: it must not overwrite what a
running hermes published, a third-party provider that cannot be built is a broken plugin (exit 3, named), not a
traceback, a deployment's options for that provider are checked like the top level's, and a provider hermes will not
run is not reported as if it would."""

from __future__ import annotations

import importlib.metadata
import json
import sys
from pathlib import Path

import pytest

from hermes_ctx_plugins.cli import EXIT_CONFIG, EXIT_PLUGIN, main
from hermes_ctx_plugins.host import plugins as host_plugins

_RUNNING = {"provider": "ctx-mem0", "pid": 4242, "updated": 1796490000.0, "breaker": "suspended (ConnectionError)",
            "queued": 12, "spooled": 0, "sent": 40, "dropped": 0, "rejected": 0}


def test_check_leaves_the_status_a_running_hermes_published(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Before: check called the detached ctx-mem0's shutdown(), which wrote status.json (breaker ok, 0 queued, its own
    pid) over a running hermes' (breaker open, 12 queued): `hermes-ctx doctor` then showed the check's state."""
    home = tmp_path / "home"
    status = home / "ctx_plugins" / "ctx-mem0" / "status.json"
    status.parent.mkdir(parents=True)
    status.write_text(json.dumps(_RUNNING))
    monkeypatch.setenv("HERMES_HOME", str(home))
    config = home / "config.yaml"
    config.write_text("memory:\n  provider: ctx-mem0\nctx_plugins:\n  memory: {providers: [file]}\n"
                      "  options:\n    ctx-mem0: {api_key: m0-x}\n")
    assert main(["--config", str(config), "check"]) == 0
    assert json.loads(status.read_text()) == _RUNNING


def test_check_leaves_no_files_in_hermes_home_for_a_remote_provider(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HERMES_HOME", str(home))
    config = tmp_path / "config.yaml"
    config.write_text("memory:\n  provider: ctx-honcho\nctx_plugins:\n  memory: {providers: [file]}\n")
    assert main(["--config", str(config), "check"]) == 0
    assert list(home.rglob("*")) == []


@pytest.fixture
def third_party(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An installed plugin 'tp' whose memory provider 'tp-notes' cannot be built (its SDK missing)."""
    (tmp_path / "tp_broken_sdk.py").write_text(
        "from hermes_ctx_plugins import hookimpl\nfrom hermes_ctx_plugins.memory.base import MemoryProvider\n"
        "class Notes(MemoryProvider):\n    name = 'tp-notes'\n"
        "    def __init__(self, *a, **k):\n        super().__init__(*a, **k)\n"
        "        raise RuntimeError(\"SDK 'notes' is not installed\")\n"
        "@hookimpl\ndef register_memory_providers(register):\n    register(Notes)\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(host_plugins, "_entry_points",
                        lambda: [importlib.metadata.EntryPoint("tp", "tp_broken_sdk", "hermes_ctx_plugins")])
    yield tmp_path
    sys.modules.pop("tp_broken_sdk", None)


def test_check_names_a_third_party_provider_that_cannot_be_built(third_party: Path, monkeypatch: pytest.MonkeyPatch,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    """Before: a traceback and exit 1 (provider_instance let the constructor's RuntimeError through)."""
    monkeypatch.setenv("HERMES_HOME", str(third_party / "home"))
    config = third_party / "config.yaml"
    config.write_text("memory:\n  provider: tp-notes\nctx_plugins:\n  memory: {providers: [file]}\n")
    assert main(["--config", str(config), "check", "--json"]) == EXIT_PLUGIN
    captured = capsys.readouterr()
    assert captured.out == ""
    assert "plugin 'tp'" in captured.err and "tp-notes" in captured.err
    assert "SDK 'notes' is not installed" in captured.err
    assert "Traceback" not in captured.err


def test_check_finds_a_deployments_bad_option_for_hermes_provider(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    """Before: exit 0 unless HERMES_CTX_DEPLOYMENT named that deployment (hermes run with it then ran without
    ctx-local): check says it validates every deployment."""
    monkeypatch.setenv("HERMES_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("HERMES_CTX_DEPLOYMENT", raising=False)
    config = tmp_path / "config.yaml"
    config.write_text("memory:\n  provider: ctx-local\nctx_plugins:\n  memory: {providers: [file]}\n"
                      "  deployments:\n    crm:\n      options:\n        ctx-local: {embedder: e5-smal}\n")
    assert main(["--config", str(config), "check"]) == EXIT_CONFIG
    err = capsys.readouterr().err
    assert f"{config}:8:" in err and "'e5-smal' is not an embedder" in err


@pytest.mark.parametrize("config_text", [
    "memory:\n  provider: ctx-local\nctx_plugins:\n  disabled: [ctx-local]\n  memory: {providers: [file]}\n",
    "memory:\n  provider: file\n",
])
def test_check_does_not_say_hermes_runs_a_provider_it_will_not(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                capsys: pytest.CaptureFixture[str],
                                                                config_text: str) -> None:
    """Before: "hermes' memory.provider: ctx-local (ours)" for a disabled one, and for 'file' (hermes cannot load it);
    doctor reports both as problems."""
    monkeypatch.setenv("HERMES_HOME", str(tmp_path / "home"))
    config = tmp_path / "config.yaml"
    config.write_text(config_text)
    assert main(["--config", str(config), "check"]) == 0
    assert "hermes runs without it" in capsys.readouterr().out


def test_compress_names_a_disabled_strategy_given_on_the_command_line(tmp_path: Path,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    """Red-team of session 21: `compress --strategy window` with window in ctx_plugins.disabled said "no compressor
    strategy is active" and exited 2, naming neither the flag nor why."""
    transcript = tmp_path / "t.json"
    transcript.write_text(json.dumps([{"role": "user", "content": "hello " * 50},
                                      {"role": "assistant", "content": "hi " * 50}] * 10))
    config = tmp_path / "config.yaml"
    config.write_text("ctx_plugins:\n  disabled: [window]\n")
    assert main(["--config", str(config), "compress", str(transcript), "--strategy", "window"]) == 4
    err = capsys.readouterr().err
    assert "--strategy" in err and "'window' is disabled" in err


def test_check_does_not_call_a_third_partys_provider_ours(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    """Before: "hermes' memory.provider: tp-notes (ours)" for a provider another package registered through our
    hooks (a newcomer walk); a support question would go to the wrong people."""
    (tmp_path / "tp_working.py").write_text(
        "from hermes_ctx_plugins import hookimpl\nfrom hermes_ctx_plugins.memory.base import MemoryProvider\n"
        "class Notes(MemoryProvider):\n    name = 'tp-notes'\n    external = True\n"
        "@hookimpl\ndef register_memory_providers(register):\n    register(Notes)\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(host_plugins, "_entry_points",
                        lambda: [importlib.metadata.EntryPoint("tp", "tp_working", "hermes_ctx_plugins")])
    monkeypatch.setenv("HERMES_HOME", str(tmp_path / "home"))
    try:
        for provider, whose in (("tp-notes", "(a hermes-ctx plugin from "), ("ctx-local", "(ours)")):
            config = tmp_path / "config.yaml"
            config.write_text(f"memory:\n  provider: {provider}\nctx_plugins:\n  memory: {{providers: [file]}}\n")
            assert main(["--config", str(config), "check"]) == 0
            line = next(line for line in capsys.readouterr().out.splitlines() if "memory.provider:" in line)
            assert line.startswith(f"hermes' memory.provider: {provider} {whose}"), line
            assert provider == "ctx-local" or "(ours" not in line
            # beside "memory providers: file", it was read as off (a newcomer walk): hermes runs it, said so
            assert "hermes runs it, beside the providers above" in line, line
    finally:
        sys.modules.pop("tp_working", None)

"""A real third-party distribution, pip-installed, found through its entry point."""

from __future__ import annotations

import importlib
import importlib.metadata
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from install_helpers import install_broken_plugin

from hermes_ctx_plugins import (
    ProviderLimitError,
    Request,
    SessionInfo,
    Turn,
    UnknownPluginError,
    load_host,
)
from hermes_ctx_plugins.cli import main
from hermes_ctx_plugins.testing import FakesPlugin

SESSION = SessionInfo(session_id="s", user_id="alice")


@pytest.fixture
def acme(acme_site: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[Path]:
    """Put the installed distribution on sys.path; yields the file its imports are logged to."""
    log = tmp_path / "imports.log"
    monkeypatch.setenv("ACME_IMPORT_LOG", str(log))
    monkeypatch.syspath_prepend(str(acme_site))
    importlib.invalidate_caches()
    sys.modules.pop("acme_ctx_plugin", None)
    yield log
    sys.modules.pop("acme_ctx_plugin", None)


def test_the_installed_distribution_declares_our_entry_point(acme: Path) -> None:
    eps = importlib.metadata.entry_points(group="hermes_ctx_plugins")
    acme_ep = next(ep for ep in eps if ep.name == "acme")
    assert acme_ep.value == "acme_ctx_plugin"
    assert acme_ep.dist is not None and acme_ep.dist.name == "acme-ctx-plugin"


def test_entry_point_plugin_registers_and_is_selectable(acme: Path, tmp_path: Path) -> None:
    config = {"ctx_plugins": {"compressor": "acme-recent", "memory": {"providers": ["acme-notes"]},
                              "options": {"acme-recent": {"keep_last": 2},
                                          "acme-notes": {"path": str(tmp_path / "notes.jsonl")}}}}
    host = load_host(config)
    records = {r.name: r for r in host.plugins()}
    assert records["acme-recent"].source == "acme-ctx-plugin 1.0.0"
    assert records["acme-recent"].plugin == "acme"
    assert records["acme-recent"].status == "active"
    assert records["acme-notes"].kind == "memory" and records["acme-notes"].external

    # the strategy works through the host
    messages = [{"role": "user", "content": f"m{i}"} for i in range(8)]
    result = host.compress(messages)
    assert [m["content"] for m in result.messages][-2:] == ["m6", "m7"]
    assert len(result.removed) == 5

    # the provider stores and recalls through the host
    host.turn_finalized(Turn(session=SESSION, turn_number=1,
                             user_text="the staging database lives on port 6543", assistant_text="noted"))
    assert "6543" in host.prefetch("which port does the staging database use?", session=SESSION)

    # its lifecycle hook runs
    req = host.pre_request(Request(session=SESSION, messages=[], model="gpt-4o", token_estimate=1,
                                   turn_number=3))
    assert req.context == "[acme] request 3 to gpt-4o"
    assert acme.read_text() == "imported\n"


def test_disabled_entry_point_plugin_is_never_imported(acme: Path) -> None:
    host = load_host({"ctx_plugins": {"disabled": ["acme"]}})
    req = host.pre_request(Request(session=SESSION, messages=[], model="m", token_estimate=1))
    assert req.contributions == []
    assert not acme.exists(), "a disabled plugin must not even be imported"
    assert "acme-recent" not in {r.name for r in host.plugins()}
    loaded = {p.name: p for p in host.loaded_plugins()}
    assert loaded["acme"].enabled is False and loaded["acme"].source == "acme-ctx-plugin 1.0.0"


def test_disabled_per_deployment_only(acme: Path) -> None:
    config = {"ctx_plugins": {"deployments": {"locked-down": {"disabled": ["acme"]}}}}
    assert "acme-recent" in {r.name for r in load_host(config).plugins()}
    locked = load_host(config, deployment="locked-down")
    assert "acme-recent" not in {r.name for r in locked.plugins()}


def test_third_party_external_provider_counts_against_the_limit(acme: Path) -> None:
    with pytest.raises(ProviderLimitError, match="'acme-notes' and 'fake-memory'"):
        load_host({"ctx_plugins": {"memory": {"providers": ["acme-notes", "fake-memory"]}}},
                  plugins=[FakesPlugin()])


def test_a_broken_plugin_is_skipped_and_reported_everything_else_loads(
    acme_site: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    install_broken_plugin(tmp_path, monkeypatch)
    monkeypatch.syspath_prepend(str(acme_site))
    events: list[Any] = []
    host = load_host({"ctx_plugins": {"compressor": "acme-recent"}}, status_callback=events.append)
    assert host.compressor is not None and host.compressor.name == "acme-recent"  # the healthy plugin works
    message = host.load_failures["broken"]
    assert "broken-plugin 0.1" in message and "missing dependency foo" in message
    record = {p.name: p for p in host.loaded_plugins()}["broken"]
    assert not record.enabled and record.status.startswith("failed to load")
    assert "missing dependency foo" in record.status
    assert [e.kind for e in events] == ["plugin-failed"] and "ctx_plugins.disabled" in events[0].message
    # the command line says so: plugins lists it, check fails with the plugin exit code
    assert main(["plugins"]) == 0 and "failed to load" in capsys.readouterr().out
    assert main(["check"]) == 3 and "missing dependency foo" in capsys.readouterr().err
    # and the way out it suggests works
    disabled = load_host({"ctx_plugins": {"disabled": ["broken"]}})
    assert disabled.load_failures == {} and not {p.name: p for p in disabled.loaded_plugins()}["broken"].enabled


def test_a_strategy_of_a_broken_plugin_falls_back_to_the_default_loudly(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    install_broken_plugin(tmp_path, monkeypatch)
    events: list[Any] = []
    host = load_host({"ctx_plugins": {"compressor": "broken-strategy"}}, status_callback=events.append)
    assert host.compressor is not None and host.compressor.name == "summarize"
    assert "unknown compressor strategy 'broken-strategy'" in events[-1].message
    assert "using 'summarize' instead" in events[-1].message
    # without a failed plugin a typo stays a config error
    monkeypatch.syspath_prepend(str(tmp_path))  # (no-op path) keep the broken one on the path
    with pytest.raises(UnknownPluginError):
        load_host({"ctx_plugins": {"compressor": "broken-strategy", "disabled": ["broken"]}})


def test_fresh_interpreter_finds_the_plugin(acme_site: Path, tmp_path: Path) -> None:
    """No test-process state: a new Python with the distribution on its path."""
    (tmp_path / "config.yaml").write_text("ctx_plugins:\n  compressor: acme-recent\n")
    code = (
        "import json, hermes_ctx_plugins as h;"
        f"host = h.load_host({str(tmp_path / 'config.yaml')!r});"
        "print(json.dumps([[r.name, r.kind, r.source, r.status] for r in host.plugins()]))"
    )
    env = {"PYTHONPATH": str(acme_site), "HOME": str(tmp_path), "PATH": "/usr/bin:/bin"}
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True, env=env)
    records = json.loads(out.stdout)
    assert ["acme-recent", "compressor", "acme-ctx-plugin 1.0.0", "active"] in records
    assert ["acme-notes", "memory", "acme-ctx-plugin 1.0.0", "not selected"] in records

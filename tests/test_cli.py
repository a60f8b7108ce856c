from __future__ import annotations

import json
from pathlib import Path

import pytest

from hermes_ctx_plugins.cli import EXIT_CONFIG, main


def test_plugins_json_lists_defaults(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plugins", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["config"].endswith("config.yaml (not found: defaults)")
    assert report["deployment"] is None
    assert isinstance(report["plugins"], list)


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("ctx_plugins:\n  memory: {providers: [file, 2]}\n",
         ":2: ctx_plugins.memory.providers[1]: got int 2"),
        ("ctx_plugins:\n  compressor: nope\n", "unknown compressor strategy 'nope'"),
        ("ctx_plugins: {\n", "malformed YAML"),
    ],
)
def test_check_reports_bad_config_with_exit_code(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, words: str
) -> None:
    path = tmp_path / "config.yaml"
    path.write_text(text)
    assert main(["--config", str(path), "check"]) == EXIT_CONFIG
    err = capsys.readouterr().err
    assert words in err
    assert "Traceback" not in err


def test_check_with_deployment(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "config.yaml"
    path.write_text("ctx_plugins:\n  deployments:\n    bot: {memory: {providers: []}}\n")
    assert main(["--config", str(path), "--deployment", "bot", "check"]) == 0
    out = capsys.readouterr().out
    assert "deployment 'bot'" in out and "memory providers: (none)" in out
    assert main(["--config", str(path), "--deployment", "bto", "check"]) == EXIT_CONFIG
    assert "did you mean 'bot'" in capsys.readouterr().err

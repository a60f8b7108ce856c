"""What a newcomer following README meets: `review: on` as README writes it, and `hermes-ctx check` on the
config `hermes-ctx install` writes (the external provider runs as hermes' memory.provider, not from our list)."""

from __future__ import annotations

from pathlib import Path

import pytest

from hermes_ctx_plugins.cli import EXIT_CONFIG, main


@pytest.mark.parametrize(("word", "mode"), [("on", "on"), ("off", "off"), ("'on'", "on"), ("auto", "auto")])
def test_review_on_unquoted_as_readme_writes_it(tmp_path: Path, word: str, mode: str) -> None:
    from hermes_ctx_plugins.config import load_config
    from hermes_ctx_plugins.memory.file.provider import FileOptions
    from hermes_ctx_plugins.options import plugin_options

    path = tmp_path / "config.yaml"
    path.write_text(f"ctx_plugins:\n  options:\n    file:\n      review: {word}\n")
    assert main(["--config", str(path), "check"]) == 0
    options = plugin_options("file", FileOptions, load_config(path).options_for("file"))
    assert options.review == mode


def test_a_bool_for_a_mode_names_the_valid_words(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "config.yaml"
    path.write_text("ctx_plugins:\n  options:\n    file:\n      write_approval: yes\n")
    assert main(["--config", str(path), "check"]) == EXIT_CONFIG
    err = capsys.readouterr().err
    assert ":4: ctx_plugins.options.file.write_approval" in err
    assert "allow, stage, block" in err and "quote" in err


@pytest.mark.parametrize(
    ("provider", "options", "words"),
    [
        ("ctx-local", "{embedder: e5-smal}", ["'e5-smal' is not an embedder", "'e5-small'"]),
        ("ctx-mem0", "{api_key: m0-x, host: 'ftp//bad'}", ["ctx-mem0.host", "'ftp//bad'"]),
    ],
)
def test_check_builds_the_provider_hermes_runs(tmp_path: Path, capsys: pytest.CaptureFixture[str], provider: str,
                                                options: str, words: list[str]) -> None:
    path = tmp_path / "config.yaml"
    path.write_text(f"memory:\n  provider: {provider}\nctx_plugins:\n  memory: {{providers: [file]}}\n"
                    f"  options:\n    {provider}: {options}\n")
    assert main(["--config", str(path), "check"]) == EXIT_CONFIG
    err = capsys.readouterr().err
    assert f"{path}:6:" in err
    for word in words:
        assert word in err


@pytest.mark.parametrize("value", ["", "off", "false", "null", "''"])
def test_a_memory_provider_left_empty_or_off_is_no_provider_as_hermes_reads_it(tmp_path: Path, value: str) -> None:
    """hermes reads ``memory.provider:`` left empty, ``off`` or ``false`` (YAML: null, false) as no provider; we refused
    the whole config, which switched the plugin off inside hermes (a red-team pass)."""
    from hermes_ctx_plugins.config import load_config

    path = tmp_path / "config.yaml"
    path.write_text(f"memory:\n  provider: {value}\n")
    assert main(["--config", str(path), "check"]) == 0
    assert load_config(path).memory.provider == ""


def test_a_ctx_plugins_key_that_lost_its_indent_is_said_where_it_is(tmp_path: Path,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    """`archive: {enabled: false}` one indent too far left is a top-level key nobody reads: archiving went on and
    `check` said "config OK" (a newcomer walk). `check` warns naming the line and where it belongs, `doctor` fails on
    it, and hermes' own top-level keys (`memory`, `plugins`, `compression`) are no such slip."""
    from hermes_ctx_plugins.config import load_config

    path = tmp_path / "config.yaml"
    path.write_text("memory: {provider: ''}\nplugins: {enabled: [hermes-ctx]}\ncompression: {threshold: 0.8}\n"
                    "ctx_plugins:\n  compressor: prune\narchive:\n  enabled: false\n")
    assert load_config(path).plugins.archive.enabled  # the premise: the setting is not in force
    assert main(["--config", str(path), "check"]) == 0
    out = capsys.readouterr().out
    assert f"warning: {path}:6: 'archive' at the top level is not read" in out, out
    assert "did you mean ctx_plugins.archive?" in out and "'memory'" not in out and "'plugins'" not in out
    assert main(["--config", str(path), "doctor", "--no-probe"]) == 1
    assert "did you mean ctx_plugins.archive?" in capsys.readouterr().out
    path.write_text("ctx_plugins:\n  compressor: prune\n  archive:\n    enabled: false\n")  # the control: indented
    assert main(["--config", str(path), "check"]) == 0
    assert "at the top level" not in capsys.readouterr().out
    from hermes_ctx_plugins.config.load import STRAY_KEYS

    config = pytest.importorskip("hermes_cli.config", reason="needs the hermes extra")
    assert not STRAY_KEYS & set(config.DEFAULT_CONFIG), "hermes reads a key of that name at its top level"


def test_a_sections_key_one_indent_too_far_left_is_said_to_belong_there(tmp_path: Path,
                                                                         capsys: pytest.CaptureFixture[str]) -> None:
    """`enabled: false` meant for `archive:` but written at ctx_plugins' level was answered "did you mean
    'disabled'?" (a newcomer walk), which would have switched off plugins. The error names the section it belongs in."""
    path = tmp_path / "config.yaml"
    path.write_text("ctx_plugins:\n  archive:\n    scope: user\n  enabled: false\n")
    assert main(["--config", str(path), "check"]) == EXIT_CONFIG
    err = capsys.readouterr().err
    assert ":4: ctx_plugins.enabled" in err and "a key of ctx_plugins.archive: indent it under archive?" in err, err
    assert "did you mean 'disabled'" not in err
    path.write_text("ctx_plugins:\n  compresor: prune\n")  # the control: a plain typo keeps its did-you-mean
    assert main(["--config", str(path), "check"]) == EXIT_CONFIG
    assert "did you mean 'compressor'" in capsys.readouterr().err


def test_archive_stats_with_the_archive_off_says_it_is_off(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """With the archive off it said "nothing has been compacted" after compactions had run (a newcomer walk)."""
    path = tmp_path / "config.yaml"
    path.write_text("ctx_plugins:\n  archive: {enabled: false}\n")
    assert main(["--config", str(path), "archive", "stats"]) == 0
    assert "the archive is off: ctx_plugins.archive.enabled: false" in capsys.readouterr().out
    path.write_text("ctx_plugins: {}\n")  # the control: on, and nothing compacted yet
    assert main(["--config", str(path), "archive", "stats"]) == 0
    assert "nothing has been compacted" in capsys.readouterr().out


def test_a_stray_key_in_a_mapping_config_is_logged_once(caplog: pytest.LogCaptureFixture,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """A Bridge or an API caller giving a mapping with `archive:` at its top level: logged (a review: skipped for
    mappings, nothing was said), and once a process however many hosts are built from it."""
    import logging

    from hermes_ctx_plugins import load_host, manager

    monkeypatch.setattr(manager, "_STRAY_SAID", set())  # (what this process said before this test)

    config = {"ctx_plugins": {"compressor": "window"}, "archive": {"enabled": False}, "safety": {"judge": True}}
    with caplog.at_level(logging.WARNING, logger="hermes_ctx_plugins"):
        for _ in range(3):
            load_host(config).shutdown()
    said = [r.getMessage() for r in caplog.records if "at the top level is not read" in r.getMessage()]
    assert len(said) == 2 and "did you mean ctx_plugins.archive?" in said[0] and "ctx_plugins.safety" in said[1], said

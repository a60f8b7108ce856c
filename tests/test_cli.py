from __future__ import annotations

import ast
import json
import os
from pathlib import Path

import pytest

import hermes_ctx_plugins
from hermes_ctx_plugins import cliutil
from hermes_ctx_plugins.cli import EXIT_CONFIG, EXIT_PLUGIN, main

PACKAGE = Path(hermes_ctx_plugins.__file__).parent


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


def test_check_says_when_hermes_will_not_run_a_listed_provider(tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    """Before: "config OK ... memory providers: file, ctx-local" and exit 0, while hermes (memory.provider unset)
    never ran ctx-local; only doctor said so."""
    path = tmp_path / "config.yaml"
    path.write_text("ctx_plugins: {memory: {providers: [file, ctx-local]}}\n")
    assert main(["--config", str(path), "check"]) == 0
    out = capsys.readouterr().out
    assert "memory providers: file, ctx-local" in out
    assert "hermes will not run it" in out and "hermes-ctx install --memory ctx-local" in out
    assert main(["--config", str(path), "check", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["not_run_by_hermes"] == ["ctx-local"]
    path.write_text("memory: {provider: ''}\nctx_plugins: {memory: {providers: [file, ctx-local]}}\n")
    assert main(["--config", str(path), "check"]) == 0
    assert "memory.provider is '' (hermes memory off)" in capsys.readouterr().out  # (the newcomer walk: "not set")
    path.write_text("memory: {provider: ctx-local}\nctx_plugins: {memory: {providers: [file, ctx-local]}}\n")
    assert main(["--config", str(path), "check"]) == 0
    assert "will not run" not in capsys.readouterr().out


def test_check_says_what_in_hermes_config_keeps_hermes_from_running_us(tmp_path: Path,
                                                                        capsys: pytest.CaptureFixture[str]) -> None:
    """A mistyped memory.provider, context.engine or plugins.enabled: check said "config OK" and only doctor said
    hermes would run none of it (a newcomer walk)."""
    path = tmp_path / "config.yaml"
    good = "plugins: {enabled: [hermes-ctx]}\ncontext: {engine: hermes-ctx}\nmemory: {provider: ctx-local}\n"
    path.write_text(good)
    assert main(["--config", str(path), "check"]) == 0
    assert "warning:" not in capsys.readouterr().out, "positive control: nothing to say of a right config"
    path.write_text("plugins: {enabled: [hermes-ctx]}\nctx_plugins: {memory: {providers: [ctx-local]}}\n")
    assert main(["--config", str(path), "check"]) == 0  # README's Bridge config: no engine or memory.provider needed
    assert "warning:" not in capsys.readouterr().out, "what a Bridge does without is no warning (a review)"
    for typo, said in (("ctx-locl", "did you mean 'ctx-local'"), ("hermes_ctx", "context.engine is 'hermes_ctx'"),
                       ("[hermes_ctx]", "plugins.enabled does not list hermes-ctx")):
        wrong = {"ctx-locl": good.replace("provider: ctx-local", "provider: ctx-locl"),
                 "hermes_ctx": good.replace("engine: hermes-ctx", "engine: hermes_ctx"),
                 "[hermes_ctx]": good.replace("enabled: [hermes-ctx]", "enabled: [hermes_ctx]")}[typo]
        path.write_text(wrong)
        assert main(["--config", str(path), "check"]) == 0
        out = capsys.readouterr().out
        assert "config OK" in out and "warning:" in out and said in out and "hermes-ctx doctor" in out, out
        assert main(["--config", str(path), "check", "--json"]) == 0
        assert any(said in problem for problem in json.loads(capsys.readouterr().out)["hermes_wiring_problems"])


def test_plugins_lists_hermes_memory_provider_as_active_and_the_rest_as_not_selected(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The newcomer walk (and a session-21 doubt): ctx-mem0 without a key was "available" here and "unavailable: no
    API key" in doctor; ctx-local, which hermes runs as its memory.provider, was "available" too."""
    path = tmp_path / "config.yaml"
    path.write_text("memory: {provider: ctx-local}\n")
    assert main(["--config", str(path), "plugins"]) == 0
    rows = {line.split()[0]: line for line in capsys.readouterr().out.splitlines() if line.startswith("ctx-")}
    assert "active in hermes (memory.provider)" in rows["ctx-local"]
    assert "not selected" in rows["ctx-mem0"] and "available" not in rows["ctx-mem0"]


def transcript_file(tmp_path: Path, messages: object) -> Path:
    path = tmp_path / "transcript.json"
    path.write_text(json.dumps(messages))
    return path


def test_compress_replays_a_json_transcript_without_writing(tmp_path: Path,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    from hermes_ctx_plugins.testing import make_transcript
    from hermes_ctx_plugins.tokens import count_messages

    messages = make_transcript(5, turns=40)
    path = transcript_file(tmp_path, messages)
    before = path.read_bytes()
    assert main(["compress", str(path), "--strategy", "prune", "--json", "--show"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["strategy"] == "prune" and report["compressed"]
    assert report["messages_before"] == report["messages_after"] == len(messages)
    assert report["tokens_before"] == count_messages(messages, "gpt-4o")
    assert report["tokens_after"] == count_messages(report["messages"], "gpt-4o") < report["tokens_before"]
    assert path.read_bytes() == before  # nothing written

    assert main(["compress", str(path)]) == 0  # the configured default: summarize (static fallback here)
    out = capsys.readouterr().out
    assert "summarize — compressed" in out and "static fallback" in out and "% saved" in out


def test_compress_names_a_misspelt_strategy_as_bad_input_and_says_what_a_replay_would_archive(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """``--strategy windw`` blamed the config file and exited 2 (a config error); a replay said "archived 97
    messages" while writing nothing (a newcomer walk)."""
    from hermes_ctx_plugins.testing import make_transcript

    path = transcript_file(tmp_path, make_transcript(5, turns=40))
    config = tmp_path / "config.yaml"
    config.write_text("ctx_plugins:\n  archive: {enabled: true}\n")
    assert main(["--config", str(config), "compress", str(path), "--strategy", "windw"]) == 4
    err = capsys.readouterr().err
    assert "--strategy: unknown compressor strategy 'windw'" in err and "window" in err and "config.yaml" not in err
    monkeypatch.setenv("HERMES_HOME", str(tmp_path / "home"))
    assert main(["--config", str(config), "compress", str(path), "--strategy", "window", "--json"]) == 0
    notes = json.loads(capsys.readouterr().out)["notes"]
    assert any(n.startswith("would archive ") and n.endswith("(a replay keeps nothing)") for n in notes), notes
    assert not any(n.startswith("archived ") for n in notes)
    assert not (tmp_path / "home").exists() or not any((tmp_path / "home").rglob("*.db"))


@pytest.mark.parametrize(
    ("content", "words"),
    [(b"{not json", "neither JSON nor a hermes state.db"), (b'{"a": 1}', "JSON list of chat messages"),
     (b'[{"content": "no role"}]', "JSON list of chat messages"),
     (b"[" * 200_000 + b"]" * 200_000, "JSON nested too deep to read")],  # was a RecursionError's traceback
)
def test_compress_rejects_bad_input_clearly(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                            content: bytes, words: str) -> None:
    path = tmp_path / "bad.json"
    path.write_bytes(content)
    assert main(["compress", str(path)]) == 4
    assert words in capsys.readouterr().err


def test_compress_reads_a_hermes_session_store(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    hermes_state = pytest.importorskip("hermes_state")
    from hermes_ctx_plugins.testing import make_transcript

    db_path = tmp_path / "state.db"
    db = hermes_state.SessionDB(db_path)
    db.create_session("older", "cli")
    db.append_message("older", "user", "an older session")
    db.create_session("s-42", "cli")
    for message in make_transcript(6, turns=30, system=False, images=False, multipart=False):
        db.append_message("s-42", message["role"], message.get("content"),
                          tool_calls=message.get("tool_calls"), tool_call_id=message.get("tool_call_id"))
    db.close()
    assert main(["compress", str(db_path), "--session", "s-42", "--strategy", "window", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["source"] == "s-42" and report["compressed"] and report["messages_before"] > 100
    assert main(["compress", str(db_path), "--session", "nope"]) == 4
    assert "no session 'nope'" in capsys.readouterr().err


@pytest.mark.parametrize("command", [["check"], ["doctor", "--no-probe"], ["plugins"]])
@pytest.mark.parametrize(("deployment", "words"), [
    ("{compressor: no-such}", "ctx_plugins.deployments.bad.compressor"),
    ("{memory: {providers: [ctx-local, ctx-mem0]}}", "ctx_plugins.deployments.bad.memory.providers"),
])
def test_every_deployment_is_validated_at_start_up(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                   command: list[str], deployment: str, words: str) -> None:
    """A deployment nobody has used yet fails check/doctor/plugins, not its first request."""
    path = tmp_path / "config.yaml"
    path.write_text(f"ctx_plugins:\n  deployments:\n    good: {{}}\n    bad: {deployment}\n")
    assert main(["--config", str(path), *command]) == EXIT_CONFIG
    err = capsys.readouterr().err
    assert words in err and "Traceback" not in err
    path.write_text("plugins: {enabled: [hermes-ctx]}\ncontext: {engine: hermes-ctx}\n"  # wired: doctor checks it
                    "ctx_plugins:\n  deployments:\n    good: {}\n")
    assert main(["--config", str(path), *command]) == 0


def test_compress_on_a_sqlite_file_that_is_not_hermes_state_db_is_exit_4(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("hermes_state", reason="the hermes extra is not installed")
    import sqlite3

    path = tmp_path / "other.db"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE notes (x)")
    conn.commit()
    conn.close()
    assert main(["compress", str(path)]) == 4
    err = capsys.readouterr().err
    assert "not a readable hermes state.db" in err and "Traceback" not in err


def test_memory_reset_without_a_terminal_refuses_instead_of_crashing(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    import io

    assert main(["memory", "add", "keep me"]) == 0
    monkeypatch.setattr("sys.stdin", io.StringIO(""))  # no terminal, nothing to read
    assert main(["memory", "reset"]) == 4
    err = capsys.readouterr().err
    assert "--yes" in err and "Traceback" not in err
    assert main(["memory", "show"]) == 0 and "keep me" in capsys.readouterr().out
    assert main(["memory", "reset", "--yes"]) == 0


@pytest.mark.parametrize(("options", "said"), [
    ("{write_approval: stagee}", "3: ctx_plugins.options.file.write_approval: 'stagee' is not an approval mode"),
    ("{write_approval: [stage]}", "write_approval: got list ['stage'], expected a string"),
    ("{bogus: 1}", "ctx_plugins.options.file.bogus")])
def test_the_file_commands_refuse_the_options_hermes_would_refuse(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], options: str, said: str) -> None:
    """``check`` refused these (exit 2) while ``memory add`` wrote MEMORY.md under them and ``show`` / ``pending``
    said nothing (a red-team pass): a typo in ``write_approval`` went unseen until hermes refused to start."""
    path = tmp_path / "config.yaml"
    path.write_text(f"ctx_plugins:\n  options:\n    file: {options}\n", encoding="utf-8")
    memories = Path(os.environ["HERMES_HOME"]) / "memories"
    for command in (["add", "keep me"], ["show"], ["pending"]):
        assert main(["memory", *command, "--config", str(path)]) == EXIT_CONFIG
        err = capsys.readouterr().err
        assert f"invalid config: {path}:" in err and said in err, err
    assert not (memories / "MEMORY.md").exists()


def test_the_ctx_local_commands_name_the_file_and_line_of_a_bad_option(tmp_path: Path,
                                                                        capsys: pytest.CaptureFixture[str]) -> None:
    """``check`` and the file commands said where; ``memory stats / search / export`` said only the key."""
    path = tmp_path / "config.yaml"
    path.write_text("ctx_plugins:\n  options:\n    ctx-local: {budget_tokens: -1}\n", encoding="utf-8")
    for command in (["stats"], ["search", "x"], ["export"]):
        assert main(["memory", *command, "--config", str(path)]) == EXIT_CONFIG
        assert f"invalid config: {path}:3: ctx_plugins.options.ctx-local.budget_tokens" in capsys.readouterr().err


def test_a_config_error_shows_a_keys_terminal_controls_escaped(tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    """The bad value was escaped, its key path printed raw: a deployment named with ESC[2J cleared the terminal of
    whoever ran ``check``, and U+202E reversed the rest of the line (a red-team pass)."""
    path = tmp_path / "config.yaml"
    path.write_text('ctx_plugins:\n  deployments:\n    "d\\e[2J\\u202e": {compressor: nosuch}\n', encoding="utf-8")
    assert main(["check", "--config", str(path)]) == EXIT_CONFIG
    err = capsys.readouterr().err
    assert "ctx_plugins.deployments.d\\x1b[2J\\u202e.compressor" in err and "\x1b" not in err and "\u202e" not in err


def _exit_code_names(path: Path) -> list[str]:
    """The ``EXIT_*`` names a module assigns at its top level."""
    names = []
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign | ast.AnnAssign):
            names += [n.id for n in ast.walk(node) if isinstance(n, ast.Name) and n.id.startswith("EXIT_")
                      and isinstance(n.ctx, ast.Store)]
    return names


def test_one_set_of_exit_codes_for_every_command() -> None:
    codes = {name: getattr(cliutil, name) for name in _exit_code_names(PACKAGE / "cliutil.py")}
    assert codes == {"EXIT_PROBLEM": 1, "EXIT_CONFIG": 2, "EXIT_PLUGIN": 3, "EXIT_INPUT": 4}
    own = {str(path.relative_to(PACKAGE)): _exit_code_names(path) for path in PACKAGE.rglob("*.py")
           if path.name != "cliutil.py" and _exit_code_names(path)}
    assert own == {}, "import the exit codes from cliutil"


def test_an_unusable_archive_exits_like_an_unusable_memory_store(capsys: pytest.CaptureFixture[str]) -> None:
    archive = Path(os.environ["HERMES_HOME"]) / "ctx_archive.db"
    archive.parent.mkdir(parents=True, exist_ok=True)
    archive.write_bytes(b"\x00garbage" * 512)
    assert main(["archive", "stats"]) == EXIT_PLUGIN  # as ``memory search`` on a broken ctx-local database
    err = capsys.readouterr().err
    assert str(archive) in err and "Traceback" not in err


@pytest.mark.parametrize(("text", "line", "key"), [
    ("model: {default: gpt-4o}\nctx_plugins:\n  compressor: sumarize\n", 3, "ctx_plugins.compressor"),
    ("ctx_plugins:\n  deployments:\n    blue:\n      memory: {providers: [file, ctx-locl]}\n", 4,
     "ctx_plugins.deployments.blue.memory.providers"),
])
def test_an_unknown_name_is_reported_with_file_and_line(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                        text: str, line: int, key: str) -> None:
    """A misspelt strategy or provider is found where a bad value is: file:line, key, did-you-mean."""
    path = tmp_path / "config.yaml"
    path.write_text(text, encoding="utf-8")
    assert main(["check", "--config", str(path)]) == EXIT_CONFIG
    err = capsys.readouterr().err
    assert f"{path}:{line}: unknown " in err and f"({key})" in err and "did you mean" in err


def test_a_user_json_nested_too_deep_is_a_clear_error(capsys: pytest.CaptureFixture[str]) -> None:
    """``--user-json`` of JSON nested deeper than Python's parser goes printed a RecursionError's traceback (a
    review): it is refused like any value that is not a JSON string."""
    from hermes_ctx_plugins.scope import from_typed_json

    with pytest.raises(ValueError, match="is not a JSON string"):
        from_typed_json("[" * 100_000 + "]" * 100_000)


def test_check_gives_doctors_fix_where_install_cannot_edit(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`plugins: {enabled: hermes-ctx}` (a text, not a list): check said "fix: hermes-ctx install", which then
    refused it (exit 2, plugins.enabled must be a list); doctor said to fix that by hand first (a newcomer walk)."""
    path = tmp_path / "config.yaml"
    path.write_text("plugins:\n  enabled: hermes-ctx\ncontext: {engine: hermes-ctx}\nmemory: {provider: ctx-local}\n")
    assert main(["--config", str(path), "check"]) == 0
    out = capsys.readouterr().out
    assert "fix: first fix what install cannot edit" in out and "plugins.enabled must be a list" in out, out

"""The conventions every ``hermes-ctx`` command keeps, checked over the whole command tree (a new
command is covered the day it is registered, and fails here until :data:`RUNS` says how to run it):
the global options before or after the command, ``--json`` giving one JSON document (or, on an error,
an empty stdout), ``-y/--yes`` on what deletes, ``--version``, tables and progress drawn by rich only at
a terminal, usage errors exiting 4 (bad input; 2 is "invalid config"), a reader that closes stdout early
ending the command quietly, and README's command table matching the parser."""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import pty
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from hermes_ctx_plugins import SessionInfo, Turn, load_config, load_host
from hermes_ctx_plugins.cli import build_parser, main
from hermes_ctx_plugins.cli.common import parsers_below
from hermes_ctx_plugins.cliutil import CommandParser
from hermes_ctx_plugins.memory.local import LocalProvider
from hermes_ctx_plugins.testing import make_transcript

README = Path(__file__).resolve().parents[1] / "README.md"
PLANTED = "the redirect fix landed in commit 3f9a2c1e7b"
CONFIG = """\
model: {default: gpt-4o, context_length: 128000}
ctx_plugins:
  compressor: window
  memory: {providers: [file, ctx-local]}
"""

#: how each command runs in the seeded home (``{tmp}``: the test's folder) and the exit codes it may give
#: there; a code other than 0 must leave stdout empty or hold the command's JSON report
RUNS: dict[tuple[str, ...], tuple[list[str], set[int]]] = {
    ("plugins",): ([], {0}),
    ("check",): ([], {0}),
    ("forget",): (["--user", "bob", "-y"], {0}),
    ("compress",): (["{tmp}/transcript.json", "--strategy", "prune"], {0}),
    ("memory", "show"): ([], {0}),
    ("memory", "add"): (["the deploy key lives in the vault"], {0}),
    ("memory", "remove"): (["no entry says this"], {4}),
    ("memory", "pending"): ([], {0}),
    ("memory", "approve"): (["no-such-id"], {4}),
    ("memory", "reject"): (["no-such-id"], {4}),
    ("memory", "reset"): (["-y"], {0}),
    ("memory", "search"): (["wombat", "--user", "alice"], {0}),
    ("memory", "stats"): ([], {0}),
    ("memory", "export"): ([], {0}),
    ("memory", "forget"): (["--chat", "c1", "-y"], {0}),
    ("demo",): (["--turns", "5"], {0}),  # the fifth read reaches the trigger (54,400 on its 64k model)
    ("doctor",): (["--no-probe"], {0, 1}),  # 1: hermes is not wired to us in this home, and doctor says so
    ("archive", "search"): (["3f9a2c1e7b"], {0}),
    ("archive", "show"): (["1"], {0}),
    ("archive", "stats"): ([], {0}),
    ("archive", "purge"): (["--all", "-y"], {0}),
    ("storage", "migrate"): (["--from", "sqlite", "--to", "postgres"], {3}),  # no server named: nothing written
    ("new-plugin",): (["acme", "--dir", "{tmp}/acme"], {0}),
    ("install",): (["--dry-run"], {0}),
}
#: the commands that delete or overwrite (``install`` replaces another context engine only when confirmed)
DESTRUCTIVE = {("forget",), ("memory", "reset"), ("memory", "forget"), ("archive", "purge"), ("memory", "remove"),
               ("memory", "reject"), ("install",)}


def commands(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()) -> dict[tuple[str, ...], Any]:
    """Every runnable command of the tree: its words, and its parser."""
    found: dict[tuple[str, ...], Any] = {}
    groups = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    for group in groups:
        for name, command in group.choices.items():
            found.update(commands(command, (*path, name)))
    return found if groups else {path: parser}


PARSER = build_parser()
COMMANDS = commands(PARSER)


def home() -> Path:
    return Path(os.environ["HERMES_HOME"])


@pytest.fixture
def seeded(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    """A configured hermes home with something in every store: MEMORY.md, ctx-local memories of alice
    (two chats) and bob, and an archived compaction; a transcript to replay beside it."""
    home().mkdir(parents=True, exist_ok=True)
    (home() / "config.yaml").write_text(CONFIG, encoding="utf-8")
    local = LocalProvider({}, hermes_home=home())
    for n, (user, chat, text) in enumerate([("alice", "c0", "the wombat project ships on Friday"),
                                            ("alice", "c1", "the wombat needs a vet on Monday"),
                                            ("bob", "c0", "bob's wombat is named Gerald")]):
        session = SessionInfo(session_id=f"s-{user}-{chat}", user_id=user, chat_id=chat)
        local.sync_turn(Turn(session=session, turn_number=n, user_text=text, assistant_text="noted"))
    assert local.flush(10)
    local.shutdown()
    messages = make_transcript(3, turns=40, images=False)
    messages[17] = {**messages[17], "content": PLANTED}
    host = load_host(load_config(None))
    assert host.compress(messages, session=SessionInfo(session_id="s-bob", user_id="bob"), force=True).compressed
    host.shutdown()
    (tmp_path / "transcript.json").write_text(json.dumps(messages), encoding="utf-8")
    assert main(["memory", "add", "the staging host is blue"]) == 0
    capsys.readouterr()
    return tmp_path


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def argv_for(path: tuple[str, ...], tmp: Path | str = "/nowhere") -> list[str]:
    return [*path, *(word.replace("{tmp}", str(tmp)) for word in RUNS[path][0])]


def test_every_command_of_the_tree_is_covered_here() -> None:
    assert set(COMMANDS) - set(RUNS) == set(), "say in RUNS how the new command runs"
    assert set(RUNS) - set(COMMANDS) == set(), "RUNS names a command that is gone"


@pytest.mark.parametrize("path", sorted(COMMANDS), ids=" ".join)
def test_global_options_are_taken_before_or_after_the_command(path: tuple[str, ...]) -> None:
    given = ["--config", "c.yaml", "--deployment", "blue", "-v", "--json"]
    rest = argv_for(path)[len(path):]
    placements = [[*given, *path, *rest], [path[0], *given, *path[1:], *rest], [*path, *rest, *given]]
    for argv in placements:
        args = PARSER.parse_args(argv)
        assert (args.config, args.deployment, args.verbose, args.json) == ("c.yaml", "blue", True, True), argv
        assert args.run_command is not None
    args = PARSER.parse_args([*path, *rest])
    assert (args.config, args.deployment, args.verbose, args.json) == (None, None, False, False)


def test_memory_target_is_taken_before_or_after_the_subcommand(seeded: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    assert run(capsys, "memory", "add", "Name: Bob", "--target", "user")[0] == 0
    for argv in (["memory", "--target", "user", "show", "--json"], ["memory", "show", "--json", "--target", "user"]):
        code, out, _ = run(capsys, *argv)
        assert code == 0 and [e["text"] for e in json.loads(out)["entries"]] == ["Name: Bob"]
    code, out, _ = run(capsys, "memory", "show", "--json")  # MEMORY.md, the default, never got it
    assert code == 0 and [e["text"] for e in json.loads(out)["entries"]] == ["the staging host is blue"]


@pytest.mark.parametrize("path", sorted(RUNS), ids=" ".join)
def test_json_is_one_document_on_stdout_or_nothing_on_an_error(
        path: tuple[str, ...], seeded: Path, capsys: pytest.CaptureFixture[str]) -> None:
    if path == ("demo",):
        pytest.importorskip("run_agent", reason="the demo needs the hermes extra")
    code, out, err = run(capsys, *argv_for(path, seeded), "--json")
    assert code in RUNS[path][1], err
    if code != 0 and not out:
        assert err.strip(), "an error with nothing on stdout says why on stderr"
        return
    document = json.loads(out)  # the whole of stdout: one document, no line of text around it
    assert document is not None


@pytest.mark.parametrize("path", sorted(DESTRUCTIVE), ids=" ".join)
def test_every_command_that_deletes_takes_y_and_yes_alike(path: tuple[str, ...]) -> None:
    parser = COMMANDS[path]
    assert parser._option_string_actions["-y"] is parser._option_string_actions["--yes"]
    rest = [w for w in argv_for(path)[len(path):] if w not in ("-y", "--yes")]
    assert PARSER.parse_args([*path, *rest, "-y"]).yes and not PARSER.parse_args([*path, *rest]).yes


def test_no_other_command_has_a_yes_of_its_own() -> None:
    assert {path for path, parser in COMMANDS.items() if "--yes" in parser._option_string_actions} == DESTRUCTIVE


#: each command that asks (its words, its arguments) and a command whose JSON shows what it would delete
ASKING = [
    (("forget",), ["--user", "alice"], ["memory", "search", "wombat", "--user", "alice"]),
    (("memory", "forget"), ["--user", "alice"], ["memory", "search", "wombat", "--user", "alice"]),
    (("archive", "purge"), ["--all"], ["archive", "search", "3f9a2c1e7b"]),
    (("memory", "reset"), [], ["memory", "show"]),
]


@pytest.mark.parametrize(("path", "arguments", "evidence"), ASKING, ids=lambda value: " ".join(value))
def test_without_y_and_a_terminal_nothing_is_deleted_and_with_it_it_is(
        path: tuple[str, ...], arguments: list[str], evidence: list[str], seeded: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    command = [*path, *arguments]

    def held() -> list[Any]:
        code, out, _ = run(capsys, *evidence, "--json")
        assert code == 0
        document = json.loads(out)
        return list(document["entries"] if isinstance(document, dict) else document)

    assert held()
    code, out, err = run(capsys, *command, "--json")
    assert (code, out) == (4, "") and "--yes" in err
    assert held(), "refused: everything is still there"
    code, out, _ = run(capsys, *command, "-y", "--json")
    assert code == 0 and json.loads(out)
    assert held() == [], "confirmed with -y: gone"


def _run_in_pty(argv: list[str], *, stream: str, answer: bytes = b"",
                env: dict[str, str] | None = None) -> tuple[int, bytes, bytes]:
    """``hermes-ctx ARGV`` in a child process whose ``stream`` (stdin, stdout or stderr) is a terminal;
    the exit code, what the terminal received, and the other output stream's bytes."""
    master, slave = pty.openpty()
    ends: dict[str, Any] = {"stdin": subprocess.DEVNULL, "stdout": subprocess.PIPE, "stderr": subprocess.PIPE}
    ends[stream] = slave
    if answer:
        os.write(master, answer)
    child = subprocess.Popen([sys.executable, "-m", "hermes_ctx_plugins.cli", *argv], **ends,
                             env={**os.environ, "COLUMNS": "200", **(env or {})})
    os.close(slave)
    seen = b""
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:  # the child closed the terminal
            break
        if not chunk:
            break
        seen += chunk
    out, err = child.communicate(timeout=120)
    os.close(master)
    return child.returncode, seen, (err if stream == "stdout" else out) or b""


@pytest.mark.parametrize(("answer", "code"), [(b"n\n", 1), (b"y\n", 0)])
def test_the_question_goes_to_stderr_so_json_stays_clean(seeded: Path, answer: bytes, code: int) -> None:
    returned, _, out = _run_in_pty(["--json", "memory", "reset"], stream="stdin", answer=answer)
    assert returned == code
    if code:
        assert out == b"", "answered no: nothing on stdout"
    else:
        assert json.loads(out)["target"] == "memory"


def test_ctrl_c_ends_a_command_with_one_line_and_130_and_changes_nothing(seeded: Path,
                                                                        capsys: pytest.CaptureFixture[str]) -> None:
    """Ctrl-C while a command asks (``memory reset`` at a terminal): a traceback before; now one line, exit 130 (as a
    shell says of a process SIGINT ended), and nothing deleted."""
    import select
    import signal
    import time

    master, slave = pty.openpty()
    child = subprocess.Popen([sys.executable, "-m", "hermes_ctx_plugins.cli", "memory", "reset"], stdin=slave,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    os.close(slave)
    try:
        assert child.stderr is not None
        asked, deadline = b"", time.monotonic() + 60
        while b"?" not in asked:  # the question is on stderr: the command now waits for the answer
            assert time.monotonic() < deadline and child.poll() is None, asked
            if select.select([child.stderr], [], [], 0.5)[0]:
                asked += os.read(child.stderr.fileno(), 4096)
        child.send_signal(signal.SIGINT)
        out, err = child.communicate(timeout=60)
    finally:
        os.close(master)
    err = asked + err
    assert child.returncode == 130, err
    assert b"Traceback" not in err and err.rstrip().endswith(b"hermes-ctx: interrupted"), err
    assert out == b""
    code, held, _ = run(capsys, "memory", "show", "--json")
    assert code == 0 and "the staging host is blue" in held, "nothing deleted"


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "--version")
    assert code == 0 and re.fullmatch(r"hermes-ctx \d+\.\d+\.\d+\S* \(hermes-agent (0\.19\.0|not installed)\)\n", out)
    code, out, _ = run(capsys, "--version", "--json")
    assert code == 0 and set(json.loads(out)) == {"hermes_ctx", "hermes_agent"}


def test_a_command_is_still_required(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main([])
    assert exited.value.code == 4 and "a command is required" in capsys.readouterr().err


#: a usage error at each level of the tree, and what its message says
USAGE_ERRORS = [
    (["nope"], "hermes-ctx: error: argument command: invalid choice: 'nope'"),
    (["memory"], "hermes-ctx memory: error: the following arguments are required: memory_command"),
    (["memory", "search"], "hermes-ctx memory search: error: the following arguments are required: query"),
    (["memory", "show", "--target", "bad"], "error: argument --target: invalid choice: 'bad'"),
    (["memory", "search", "x", "--limit", "many"],
     "error: argument --limit: expected a whole number in ASCII digits (e.g. 42), got 'many'"),
    (["demo", "--turns", "0"], "hermes-ctx demo: error: argument --turns: must be 1 or more, got 0"),
    (["archive", "show", "1", "--bogus"], "hermes-ctx: error: unrecognized arguments: --bogus"),
    (["storage", "migrate", "--from", "sqlite"], "error: the following arguments are required: --to"),
]


@pytest.mark.parametrize(("argv", "message"), USAGE_ERRORS, ids=lambda value: " ".join(value) or "none")
def test_a_usage_error_exits_4_bad_input_not_2_invalid_config(
        argv: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(argv)
    out, err = capsys.readouterr()
    assert exited.value.code == 4 and out == ""
    assert err.startswith("usage: hermes-ctx") and message in err, err  # the user still gets argparse's usage


def test_every_parser_of_the_tree_exits_4_on_a_usage_error() -> None:
    assert all(type(parser) is CommandParser for parser in [PARSER, *parsers_below(PARSER)])


def test_hermes_ctx_inside_hermes_exits_4_on_a_usage_error_too() -> None:
    """``hermes ctx ARGS`` hands ARGS to our parser: hermes' process exits with our code."""
    pytest.importorskip("hermes_cli", reason="needs the hermes extra")
    home().mkdir(parents=True, exist_ok=True)
    (home() / "config.yaml").write_text("plugins: {enabled: [hermes-ctx]}\n" + CONFIG, encoding="utf-8")
    hermes = str(Path(sys.executable).parent / "hermes")
    ran = subprocess.run([hermes, "ctx", "memory", "search"], capture_output=True, text=True, timeout=120)
    assert ran.returncode == 4 and ran.stdout == "", ran.stderr
    assert "hermes ctx memory search: error: the following arguments are required: query" in ran.stderr
    ran = subprocess.run([hermes, "ctx", "plugins", "--json"], capture_output=True, text=True, timeout=120)
    assert ran.returncode == 0 and json.loads(ran.stdout)["plugins"], ran.stderr  # and a good command runs


#: one memory's text: with 120 of them the export is several times what a pipe buffers
LONG = "the wombat burrow runs under the north fence " * 60


@pytest.mark.parametrize(("program", "as_json"), [  # both programs and both outputs, in two runs
    pytest.param([sys.executable, "-m", "hermes_ctx_plugins.cli"], False, id="hermes-ctx-lines"),
    pytest.param(["hermes", "ctx"], True, id="hermes ctx-json"),
])
def test_a_reader_that_stops_early_ends_the_command_quietly(program: list[str], as_json: bool) -> None:
    """``hermes-ctx [--json] memory export | head -1``: no BrokenPipeError traceback, no hang (the line
    export streams from the store: stopping half-way must not leave it locked), exit 1 (the result was
    not all delivered)."""
    if program[0] == "hermes":
        pytest.importorskip("hermes_cli", reason="needs the hermes extra")
        program = [str(Path(sys.executable).parent / "hermes"), "ctx"]
    home().mkdir(parents=True, exist_ok=True)
    (home() / "config.yaml").write_text("plugins: {enabled: [hermes-ctx]}\n" + CONFIG, encoding="utf-8")
    local = LocalProvider({}, hermes_home=home())
    session = SessionInfo(session_id="s-alice", user_id="alice", chat_id="c0")
    for n in range(120):
        local.sync_turn(Turn(session=session, turn_number=n, user_text=f"note {n}: {LONG}", assistant_text="noted"))
    assert local.flush(30)
    local.shutdown()
    argv = [*program, *(["--json"] if as_json else []), "memory", "export"]

    whole = subprocess.run(argv, capture_output=True, text=True, timeout=120, check=True)
    exported = json.loads(whole.stdout) if as_json else [json.loads(line) for line in whole.stdout.splitlines()]
    assert len(exported) == 120, "read to the end, the reader gets every memory"
    assert len(whole.stdout) > 4 * 65536, "more than a pipe holds: the reader closes it mid-write"

    with subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE) as reader:
        assert reader.stdout is not None and reader.stderr is not None
        first = reader.stdout.readline()  # what `head -1` reads, before it exits
        reader.stdout.close()
        err = reader.stderr.read()
        assert reader.wait(timeout=120) == 1 and first == (b"[\n" if as_json else whole.stdout.splitlines()[0].encode()
                                                          + b"\n")
    assert err == b"", err.decode(errors="replace")[-2000:]


def test_a_table_is_plain_columns_when_piped_and_drawn_at_a_terminal(seeded: Path,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "plugins")
    assert code == 0
    lines = out.splitlines()
    assert re.split(r"\s{2,}", lines[0]) == ["NAME", "KIND", "EXTERNAL", "STATUS", "SOURCE"]
    rows = {line.split()[0]: re.split(r"\s{2,}", line) for line in lines[1:] if line.strip()}
    assert rows["window"] == ["window", "compressor", "no", "active", "built-in"]  # one row, one line: grep finds it
    assert all(line == line.rstrip() for line in lines) and "\x1b" not in out and "─" not in out
    code, drawn, _ = _run_in_pty(["plugins"], stream="stdout")
    assert code == 0 and "─".encode() in drawn and b"\x1b[" in drawn and b"window" in drawn


def test_export_shows_progress_at_a_terminal_and_nothing_in_a_log(seeded: Path) -> None:
    target = seeded / "memories.jsonl"
    code, bar, _ = _run_in_pty(["memory", "export", "-o", str(target)], stream="stderr")
    assert code == 0 and b"exporting ctx-local memories" in bar
    assert len(target.read_text(encoding="utf-8").splitlines()) == 3, "every memory of the top-level namespace"
    piped = subprocess.run([sys.executable, "-m", "hermes_ctx_plugins.cli", "memory", "export", "-o", str(target)],
                           capture_output=True, text=True, env=os.environ, check=True)
    assert piped.stderr == f"exported 3 memories to {target}\n" and piped.stdout == ""


def test_compress_shows_progress_at_a_terminal(seeded: Path) -> None:
    code, bar, out = _run_in_pty(["compress", str(seeded / "transcript.json"), "--json"], stream="stderr")
    assert code == 0 and b"counting tokens" in bar
    assert json.loads(out)["compressed"]


def test_compress_shows_a_services_error_text_as_text_at_a_terminal(seeded: Path) -> None:
    """The summary model's error text is the status line of the bar and a line of the report: its terminal controls
    are shown as escapes and its brackets as brackets (a red-team pass: "[/oops]" ended the command with rich's
    MarkupError, "[link=...]" drew a hyperlink, an OSC sequence set the terminal's title)."""
    from hermes_ctx_plugins.testing import StubOpenAIServer

    hostile = "upstream said [/oops] [link=https://evil.example/x]click[/link] \x1b]0;pwned\x07\x1b[2J"
    with StubOpenAIServer(model="gpt-4o") as stub:
        stub.fail(500, hostile, times=100)
        (home() / "config.yaml").write_text(CONFIG.replace("context_length: 128000", "context_length: 128000, "
                                            f"base_url: '{stub.base_url}', api_key: k").replace("window", "summarize"),
                                            encoding="utf-8")
        code, bar, out = _run_in_pty(["compress", str(seeded / "transcript.json")], stream="stderr")
    assert stub.chat_requests, "the summary model was asked (and failed)"
    assert code == 0 and b"MarkupError" not in bar and b"Traceback" not in bar
    assert b"\x1b]8;" not in bar and b"pwned\x07" not in bar and b"\x1b[2J" not in bar  # no link, title, clear
    assert b"\x1b" not in out and b"[/oops]" in out and b"\\x1b]0;pwned\\x07" in out  # the report: escapes


def test_migration_shows_progress_at_a_terminal(seeded: Path, postgres_dsn: str,
                                                 request: pytest.FixtureRequest) -> None:
    schema = "conv_" + hashlib.sha1(request.node.name.encode()).hexdigest()[:12]  # this test's own tables
    (home() / "config.yaml").write_text(f"{CONFIG}  storage: {{backend: sqlite, schema: {schema}}}\n", encoding="utf-8")
    code, bar, out = _run_in_pty(["storage", "migrate", "--from", "sqlite", "--to", "postgres", "--json"],
                                 stream="stderr", env={"HERMES_CTX_POSTGRES_DSN": postgres_dsn})
    assert code == 0 and b"ctx-local memories" in bar and b"archive compactions" in bar
    report = json.loads(out)
    assert report["ok"] and sum(store["written"] for store in report["stores"]) >= 4  # 3 memories, 1 compaction


def test_search_by_user_covers_all_their_chats(seeded: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "memory", "search", "wombat", "--user", "alice", "--json")
    assert code == 0 and {(m["user_id"], m["chat_id"]) for m in json.loads(out)} == {("alice", "c0"), ("alice", "c1")}
    code, out, _ = run(capsys, "memory", "search", "wombat", "--user", "alice", "--chat", "c1", "--json")
    assert code == 0 and [m["chat_id"] for m in json.loads(out)] == ["c1"]
    code, out, err = run(capsys, "memory", "search", "wombat", "--user", "alice", "--all-scopes", "--json")
    assert (code, out) == (4, "") and "--all-scopes" in err and "--user" in err


def test_importing_the_package_or_the_cli_does_not_load_rich() -> None:
    probe = "import sys, hermes_ctx_plugins, hermes_ctx_plugins.cli; print('rich' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          check=True).stdout.strip() == "False"


def _readme_commands() -> list[tuple[str, ...]]:
    """The command of each row of README's command table: the rows whose first cell is
    `` `hermes-ctx COMMAND [SUBCOMMAND] ARGUMENTS…` ``, one row per command."""
    found = []
    for line in README.read_text(encoding="utf-8").splitlines():
        cell = line.split("|")[1].strip() if line.startswith("|") else ""
        if not cell.startswith("`hermes-ctx "):
            continue
        words, parser, path = cell.strip("`").split()[1:], PARSER, ()
        while (path not in COMMANDS) and words:
            groups = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
            assert groups and words[0] in groups[0].choices, f"README names no command {' '.join((*path, words[0]))}"
            parser, path, words = groups[0].choices[words[0]], (*path, words[0]), words[1:]
        assert path in COMMANDS, f"README's row {cell} names a group, not one command"
        found.append(path)
    return found


def test_readmes_command_table_matches_the_parser() -> None:
    rows = _readme_commands()
    assert len(rows) == len(set(rows)), "one row per command"
    assert set(COMMANDS) - set(rows) == set(), "commands missing from README's table"


def test_json_is_utf8_even_for_a_home_or_a_message_that_utf8_cannot_carry(tmp_path: Path) -> None:
    """A home whose name is not UTF-8 (Python hands it over as lone surrogates) and a transcript with a
    lone surrogate: the JSON still decodes as UTF-8 and gives back exactly those values."""
    home = os.fsencode(tmp_path) + b"/h\xff"
    os.mkdir(home)
    env = {**os.environ, "HERMES_HOME": os.fsdecode(home), "LC_ALL": "C.UTF-8"}
    cli = [sys.executable, "-m", "hermes_ctx_plugins.cli"]
    doctor = subprocess.run([*cli, "--json", "doctor", "--no-probe"], env=env, capture_output=True, timeout=120)
    assert json.loads(doctor.stdout.decode("utf-8"))["hermes_home"] == os.fsdecode(home)

    transcript = tmp_path / "t.json"
    transcript.write_text(json.dumps([{"role": "user", "content": "odd \udc80 text"}] * 3), encoding="utf-8")
    shown = subprocess.run([*cli, "compress", str(transcript), "--show"], env=env, capture_output=True, timeout=120)
    assert shown.returncode == 0, shown.stderr
    messages = json.loads(shown.stdout.decode("utf-8")[shown.stdout.decode("utf-8").index("\n["):])
    assert messages[0]["content"] == "odd \udc80 text"


def test_archive_show_into_a_reader_that_stops_early_ends_quietly_too() -> None:
    """``hermes-ctx archive show 1-160 | head -c 100``: the archive command took the closed pipe for an error of its
    own (exit 3, "[Errno 32] Broken pipe"; a review); as every command, it ends quietly with exit 1."""
    from hermes_ctx_plugins.storage.sqlite.archive import ArchiveStore

    home().mkdir(parents=True, exist_ok=True)
    (home() / "config.yaml").write_text(CONFIG, encoding="utf-8")
    store = ArchiveStore(home() / "ctx_archive.db")
    for n in range(4):
        store.record(session_id="s", user_id="", strategy="summarize",
                     removed=[(i, {"role": "user", "content": f"{n}.{i} {LONG * 10}"}) for i in range(40)])
    store.close()
    # all 160 messages, 4.3 MB: more than any pipe holds (1 MB where pages are 64 kB), so the command meets the closed
    # pipe whatever the timing (CI: messages 1-4, 11 kB, could all fit before the reader closed it: exit 0)
    argv = [sys.executable, "-m", "hermes_ctx_plugins.cli", "archive", "show", "1-160", "--max-tokens", "2000000"]
    with subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE) as reader:
        assert reader.stdout is not None and reader.stderr is not None
        first = reader.stdout.read(100)
        reader.stdout.close()
        err = reader.stderr.read()
        assert reader.wait(timeout=120) == 1 and first, err
    assert err == b"", err.decode(errors="replace")[-2000:]


def test_a_value_that_starts_with_a_dash_is_told_how_to_give(capsys: pytest.CaptureFixture[str],
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """`forget --user -x`, `memory search --user alice -pear`: argparse said "expected one argument" / "query is
    required" and no more (a hostile-values pass); the error says how to give such a value. Exit 4 as before."""
    for argv in (["forget", "--user", "-x"], ["memory", "search", "--user", "alice", "-pear"]):
        monkeypatch.setattr(sys, "argv", ["hermes-ctx", *argv])
        with pytest.raises(SystemExit) as exited:
            main(argv)
        assert exited.value.code == 4
        err = capsys.readouterr().err
        assert f"{argv[-1]!r} reads as an option" in err and f"--user={argv[-1]}" in err and f"-- {argv[-1]}" in err

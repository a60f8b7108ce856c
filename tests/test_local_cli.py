"""``hermes-ctx memory search|stats|export|forget`` on the ctx-local store, with their exit codes."""

from __future__ import annotations

import json
import os
import unicodedata
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hermes_ctx_plugins import SessionInfo, Turn
from hermes_ctx_plugins.cli import EXIT_CONFIG, EXIT_INPUT, EXIT_PLUGIN, main
from hermes_ctx_plugins.memory.local import LocalProvider

ALICE = SessionInfo(session_id="s-alice", user_id="alice", chat_id="dm")
BOB = SessionInfo(session_id="s-bob", user_id="bob", chat_id="dm")


def home() -> Path:
    return Path(os.environ["HERMES_HOME"])


@pytest.fixture
def filled() -> Iterator[LocalProvider]:
    provider = LocalProvider({}, hermes_home=home())
    for n, (session, text) in enumerate([(ALICE, "the wombat project ships on Friday"),
                                         (ALICE, "lunch was ramen"), (BOB, "bob's wombat is named Gerald")]):
        provider.sync_turn(Turn(session=session, turn_number=n, user_text=text, assistant_text="noted"))
    provider.handle_tool_call("ctx_memory_remember", {"fact": "Alice's wombat fact", "scope": "user"}, session=ALICE)
    assert provider.flush(10)
    yield provider
    provider.shutdown()


def test_search_is_scoped_like_recall(filled: LocalProvider, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["memory", "search", "wombat", "--user", "alice", "--chat", "dm", "--json"]) == 0
    found = json.loads(capsys.readouterr().out)
    assert {m["user_id"] for m in found} == {"alice"} and len(found) == 2
    assert found[0]["kind"] == "fact"  # facts outrank turns that match as well
    assert main(["memory", "search", "wombat", "--all-scopes"]) == 0
    out = capsys.readouterr().out
    assert "Gerald" in out and "user 'bob'" in out and out.count("\n") == 3
    assert main(["memory", "search", "the of"]) == EXIT_INPUT
    assert "no searchable words" in capsys.readouterr().err


def test_stats_shows_the_store_the_queue_and_quarantined_records(
        filled: LocalProvider, capsys: pytest.CaptureFixture[str]) -> None:
    import sqlite3

    conn = sqlite3.connect(filled.path)
    conn.execute("INSERT INTO quarantine (segment, offset, record, error, attempts, quarantined_at) "
                 "VALUES ('x.seg', 10, '{\"broken', 'JSONDecodeError: Unterminated string', 1, 0)")
    conn.commit()
    conn.close()
    assert main(["memory", "stats"]) == 0
    out = capsys.readouterr().out
    assert f"ctx-local memory: {filled.path}" in out
    assert "3 turns, 1 facts, 2 user/chat scopes" in out
    assert "quarantined: 1 (kept with their errors, never dropped)" in out
    assert "JSONDecodeError: Unterminated string" in out and 'record: {"broken' in out
    assert "0 records waiting in 1 segment file(s), 1 held by a running process" in out
    assert main(["memory", "stats", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["turns"] == 3 and report["quarantine"][0]["attempts"] == 1


def test_export_writes_json_lines(filled: LocalProvider, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "alice.jsonl"
    assert main(["memory", "export", "--user", "alice", "--output", str(out)]) == 0
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert sorted(r["kind"] for r in rows) == ["fact", "turn", "turn"] and {r["user_id"] for r in rows} == {"alice"}
    assert [r["id"] for r in rows] == sorted(r["id"] for r in rows)  # in the order they were stored
    [wombat] = [r for r in rows if r["user_text"] == "the wombat project ships on Friday"]
    assert wombat["session_id"] == "s-alice" and wombat["created"].endswith("Z")
    assert "exported 3 memories" in capsys.readouterr().err
    assert main(["memory", "export", "--output", str(tmp_path / "missing" / "x.jsonl")]) == EXIT_INPUT
    assert "cannot write" in capsys.readouterr().err
    (tmp_path / "a").symlink_to(tmp_path / "b")  # a loop: a traceback before (Path.resolve raised RuntimeError)
    (tmp_path / "b").symlink_to(tmp_path / "a")
    assert main(["memory", "export", "--output", str(tmp_path / "a")]) == EXIT_INPUT
    assert "cannot write" in capsys.readouterr().err
    if Path("/dev/full").exists():  # a full disk: said, not a traceback (OSError at the write or the close)
        assert main(["memory", "export", "--output", "/dev/full"]) == EXIT_INPUT
        assert "cannot write /dev/full" in capsys.readouterr().err


def test_export_never_writes_into_the_files_the_stores_live_in(
        filled: LocalProvider, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Before: ``memory export -o ~/.hermes/ctx-local/memory.db`` emptied the database before reading it (every
    memory lost, exit 3 'malformed'); ``-o ~/.hermes/config.yaml`` replaced hermes' config with JSON lines."""
    (home() / "config.yaml").write_text("ctx_plugins: {}\n", encoding="utf-8")
    config_before = (home() / "config.yaml").read_bytes()
    database_before = filled.path.read_bytes()
    (tmp_path / "link.db").symlink_to(filled.path)
    for target, what in [(filled.path, "the ctx-local database"),
                         (filled.path.parent / ".." / filled.path.parent.name / filled.path.name,
                          "the ctx-local database"),
                         (tmp_path / "link.db", "the ctx-local database"),
                         (Path(f"{filled.path}-wal"), "journal"),
                         (filled.queue_dir / "export.jsonl", "write queue"),
                         (home() / "ctx_archive.db", "the archive"),
                         (home() / "config.yaml", "the config file")]:
        assert main(["memory", "export", "--output", str(target)]) == EXIT_INPUT, target
        assert what in capsys.readouterr().err
    assert filled.path.read_bytes() == database_before and (home() / "config.yaml").read_bytes() == config_before
    # hermes' MEMORY.md / USER.md (the file store: read into every prompt), a user's scoped folder, our own state and
    # hermes' own files: -o MEMORY.md replaced the user's memories with every user's turns (a README audit)
    memories = home() / "memories"
    (memories / "scoped" / "d" / "ualice").mkdir(parents=True)
    kept = {memories / "MEMORY.md": "keep me", memories / "USER.md": "dark theme",
            memories / "scoped" / "d" / "ualice" / "MEMORY.md": "alice's", home() / ".env": "OPENAI_API_KEY=x",
            Path(f"{filled.path}.queue.lock"): "", home() / "ctx_plugins" / "checked.json": "{}"}
    for path, text in kept.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    for target in [*kept, memories / "scoped" / "d" / "ubob" / "MEMORY.md", memories / "new.md"]:
        target.parent.mkdir(parents=True, exist_ok=True)
        assert main(["memory", "export", "--output", str(target)]) == EXIT_INPUT, target
        assert "would destroy it" in capsys.readouterr().err
    assert all(path.read_text(encoding="utf-8") == text for path, text in kept.items())
    assert not (memories / "new.md").exists()
    assert main(["memory", "export", "--output", str(home() / "alice-export.jsonl")]) == 0  # a new file of its own
    assert main(["memory", "export", "--output", str(home() / "alice-export.jsonl")]) == 0  # and again, replaced
    # a red-team pass: hermes' files not there yet (SOUL.md would become the persona), a profile's, a hard link, a
    # memory folder linked elsewhere; and an export named like hermes' files (.json, .md) is replaced the next time
    (home() / "profiles" / "coder" / "memories").mkdir(parents=True)
    (home() / "profiles" / "coder" / ".env").write_text("KEY=1", encoding="utf-8")
    elsewhere = tmp_path / "elsewhere"
    (elsewhere / "d" / "ubob").mkdir(parents=True)
    (elsewhere / "d" / "ubob" / "MEMORY.md").write_text("bob's", encoding="utf-8")
    (memories / "scoped" / "e").symlink_to(elsewhere / "d")
    (tmp_path / "hard.jsonl").hardlink_to(home() / ".env")
    for target in [home() / "SOUL.md", home() / "auth.json", home() / "profiles" / "coder" / ".env",
                   home() / "profiles" / "coder" / "memories" / "MEMORY.md", elsewhere / "d" / "ubob" / "MEMORY.md",
                   memories / "scoped" / "e" / "ubob" / "MEMORY.md", tmp_path / "hard.jsonl",
                   home() / "skills" / "x" / "SKILL.md"]:
        assert main(["memory", "export", "--output", str(target)]) == EXIT_INPUT, target
        assert "would destroy it" in capsys.readouterr().err
    assert not (home() / "SOUL.md").exists() and (home() / ".env").read_text(encoding="utf-8") == "OPENAI_API_KEY=x"
    assert (elsewhere / "d" / "ubob" / "MEMORY.md").read_text(encoding="utf-8") == "bob's"
    for name in ("export.jsonl", "exports/alice.ndjson"):  # an export of its own is made, then replaced
        (home() / name).parent.mkdir(parents=True, exist_ok=True)
        assert main(["memory", "export", "--output", str(home() / name)]) == 0
        assert main(["memory", "export", "--output", str(home() / name)]) == 0, capsys.readouterr().err
    # hermes keeps more files in its home than any list (a second red-team pass): there an export replaces only an
    # earlier export, or makes a new .jsonl file
    (home() / "backups").mkdir()
    (home() / "backups" / "hermes-backup.tar.gz").write_bytes(b"\x1f\x8b backup")
    for target in [home() / "honcho.json", home() / "gateway.pid", home() / "backups" / "hermes-backup.tar.gz",
                   home() / "backups" / "new.json"]:
        assert main(["memory", "export", "--output", str(target)]) == EXIT_INPUT, target
        assert "would destroy it" in capsys.readouterr().err
    assert not (home() / "honcho.json").exists()
    # a third pass: a config whose first line is blank passed as an export, a FIFO hung the check, a folder was "a
    # hard link"
    (home() / "mem0.json").write_text('\n{"api_key": "KEEP"}\n', encoding="utf-8")
    os.mkfifo(home() / "live.jsonl")
    assert main(["memory", "export", "--output", str(home() / "mem0.json")]) == EXIT_INPUT
    assert main(["memory", "export", "--output", str(home() / "live.jsonl")]) == EXIT_INPUT
    assert main(["memory", "export", "--output", str(tmp_path)]) == EXIT_INPUT
    assert "is a folder" in capsys.readouterr().err.splitlines()[-1]
    assert (home() / "mem0.json").read_text(encoding="utf-8") == '\n{"api_key": "KEEP"}\n'
    # a fourth: a config holding an export's three first keys among its own, a line nested past the parser's depth
    (home() / "honcho.jsonl").write_text('{"id": "cfg", "kind": "honcho", "user_id": "a", "api_key": "KEEP"}\n',
                                         encoding="utf-8")
    (home() / "deep.jsonl").write_text("[" * 5000 + "]" * 5000, encoding="utf-8")
    for name in ("honcho.jsonl", "deep.jsonl"):
        assert main(["memory", "export", "--output", str(home() / name)]) == EXIT_INPUT, name
    assert "KEEP" in (home() / "honcho.jsonl").read_text(encoding="utf-8")
    assert (home() / "backups" / "hermes-backup.tar.gz").read_bytes() == b"\x1f\x8b backup"
    assert main(["memory", "search", "wombat", "--user", "alice", "--json"]) == 0
    assert len(json.loads(capsys.readouterr().out)) == 2


def test_forget_by_id_and_by_scope_removes_the_text_from_the_file(
        filled: LocalProvider, capsys: pytest.CaptureFixture[str]) -> None:
    filled.shutdown()  # the CLI works on the file the way it would while hermes is not running
    assert main(["memory", "search", "Gerald", "--user", "bob", "--chat", "dm", "--json"]) == 0
    [gerald] = json.loads(capsys.readouterr().out)
    assert main(["memory", "forget", str(gerald["id"]), "999"]) == EXIT_INPUT
    captured = capsys.readouterr()
    assert f"forgot 1 memories: #{gerald['id']}" in captured.out and "no memory #999" in captured.err
    files = b"".join(p.read_bytes() for p in filled.path.parent.glob("memory.db*") if p.is_file())
    assert b"Gerald" not in files, "compacted: the text is gone from the database file and its WAL"
    assert main(["memory", "forget", "--user", "alice", "--yes"]) == 0
    assert "forgot 3 memories of user 'alice'" in capsys.readouterr().out
    assert main(["memory", "search", "wombat", "--all-scopes", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == []
    assert main(["memory", "forget"]) == EXIT_INPUT


def test_exit_codes_for_config_and_a_broken_database(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["memory", "search", "x"]) == 0  # nothing stored yet: nothing found, nothing created
    err = capsys.readouterr().err
    assert "no ctx-local memory yet" in err and not (home() / "ctx-local").exists()
    # and says where this config's memories are instead (a Mem0 deployment's export read as "nothing held")
    assert "ctx-local is not a memory provider of this config (it uses file)" in err
    home().mkdir(parents=True, exist_ok=True)
    (home() / "config.yaml").write_text("ctx_plugins:\n  deployments:\n    alpha:\n      memory: {providers: "
                                        "[ctx-mem0]}\n      options:\n        ctx-mem0: {api_key: k}\n")
    assert main(["memory", "export", "--deployment", "alpha", "--json"]) == 0
    assert "not a memory provider of deployment 'alpha' (it uses ctx-mem0)" in capsys.readouterr().err
    (home() / "config.yaml").unlink()
    config = tmp_path / "config.yaml"
    config.write_text("ctx_plugins:\n  options:\n    ctx-local: {budget_tokens: -1}\n")
    assert main(["--config", str(config), "memory", "stats"]) == EXIT_CONFIG
    assert "ctx_plugins.options.ctx-local.budget_tokens: -1 is out of range" in capsys.readouterr().err
    broken = tmp_path / "broken.db"
    broken.write_bytes(b"\x00garbage" * 512)
    config.write_text(f"ctx_plugins:\n  options:\n    ctx-local: {{path: {broken}}}\n")
    assert main(["--config", str(config), "memory", "search", "anything"]) == EXIT_PLUGIN
    err = capsys.readouterr().err
    assert f"ctx-local memory database {broken}: file is not a database" in err and "Traceback" not in err


def test_forget_succeeds_even_when_compaction_cannot_run(filled: LocalProvider, capsys: pytest.CaptureFixture[str],
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    from hermes_ctx_plugins.storage import LocalStoreError
    from hermes_ctx_plugins.storage.sqlite.memory import LocalStore

    def busy(self: LocalStore) -> None:
        raise LocalStoreError(self.path, "locked", "database is locked", "try later")

    monkeypatch.setattr(LocalStore, "compact", busy)
    assert main(["memory", "forget", "--session", "s-bob", "--yes"]) == 0
    captured = capsys.readouterr()
    assert "forgot 1 memories of session 's-bob'" in captured.out
    assert "forgotten, but the file could not be compacted now" in captured.err
    assert "Gerald" not in filled.prefetch("wombat Gerald", session=BOB)


def test_forgetting_a_scope_without_a_terminal_refuses_instead_of_crashing(
        make: Any, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 13 #15: `memory forget --user U` without --yes and without a terminal raised EOFError."""
    import io

    from local_helpers import say

    provider = make()
    say(provider, SessionInfo(session_id="s", user_id="alice"), "keep me")
    assert provider.flush(10)
    monkeypatch.setattr("sys.stdin", io.StringIO(""))
    assert main(["memory", "forget", "--user", "alice"]) == EXIT_INPUT
    err = capsys.readouterr().err
    assert "--yes" in err and "Traceback" not in err
    assert main(["memory", "search", "keep", "--user", "alice", "--json"]) == 0
    assert "keep me" in capsys.readouterr().out  # nothing was deleted


def test_forgetting_a_scope_that_holds_nothing_is_no_error(make: Any, capsys: pytest.CaptureFixture[str]) -> None:
    """`memory forget --user nosuch -y` exited 4 ("bad input or not confirmed") where `hermes-ctx forget --user`
    exits 0: a deletion script read a user with nothing left as a failure (a newcomer walk)."""
    from local_helpers import say

    provider = make()
    say(provider, SessionInfo(session_id="s", user_id="alice"), "keep me")
    assert provider.flush(10)
    for scope in (["--user", "nosuch"], ["--session", "nosuch"], ["--user", "alice", "--chat", "nosuch"]):
        assert main(["memory", "forget", *scope, "-y"]) == 0
        assert "forgot 0 memories" in capsys.readouterr().out
    assert main(["memory", "forget", "--user", "alice", "-y"]) == 0
    assert "forgot 1 memories" in capsys.readouterr().out
    assert main(["memory", "forget", "--user", "alice", "-y"]) == 0, "again: nothing left, still no error"


def test_forgetting_a_user_says_which_namespace_it_searched_and_which_others_hold_them(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Without --deployment, "forgot 0 memories of user 'alice'" and exit 0 read as done while her memories in a
    deployment's namespace stayed (a review)."""
    from local_helpers import say

    from hermes_ctx_plugins.config import load_config

    path = tmp_path / "config.yaml"
    path.write_text("ctx_plugins:\n  memory: {providers: [ctx-local]}\n  deployments: {support: {}}\n")
    assert main(["--config", str(path), "memory", "forget", "--user", "alice", "-y"]) == 0, "no store yet: no error"
    capsys.readouterr()
    provider = LocalProvider({}, hermes_home=Path(os.environ["HERMES_HOME"]),
                             config=load_config(str(path), deployment="support"))
    say(provider, SessionInfo(session_id="s", user_id="alice", deployment="support"), "my PIN is 4471")
    assert provider.flush(10)
    provider.shutdown()
    assert main(["--config", str(path), "memory", "forget", "--user", "alice", "-y"]) == 0
    out = capsys.readouterr().out
    assert "forgot 0 memories of user 'alice' in the top-level namespace; 'support' also holds some" in out, out
    assert main(["--config", str(path), "--deployment", "support", "memory", "forget", "--user", "alice", "-y"]) == 0
    assert "forgot 1 memories of user 'alice' in namespace 'support'" in capsys.readouterr().out


def test_a_listed_user_id_typed_back_forgets_that_user_and_no_other(tmp_path: Path) -> None:
    """Real processes, so ids pass through argv as an operator's would. A lone surrogate or a NUL cannot be
    typed at all; the listing showed the surrogate user as 's\\ud800' — typed back, those characters named
    another user (the one whose id holds a backslash), who was forgotten instead, and exit 0. Now the
    listing prints what, typed back, names the same user: in single quotes, or json:"..." for --user-json."""
    import re
    import shlex
    import subprocess
    import sys

    words = {"s\ud800": "SURROGATEWORD", "s\\ud800": "BACKSLASHWORD", "n\x00ul": "NULWORD", "n": "PLAINWORD"}
    home().mkdir(parents=True, exist_ok=True)
    (home() / "config.yaml").write_text("ctx_plugins: {memory: {providers: [file, ctx-local]}}\n")
    provider = LocalProvider({}, hermes_home=home())
    for n, (user, word) in enumerate(words.items()):
        provider.sync_turn(Turn(session=SessionInfo(session_id=f"s{n}", user_id=user), turn_number=1,
                                user_text=f"my kiwi codeword is {word}", assistant_text="ok"))
    assert provider.flush(10)
    provider.shutdown()
    cli = [str(Path(sys.executable).parent / "hermes-ctx")]

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([*cli, *args], capture_output=True, text=True, timeout=120, check=False)

    listed = run("memory", "search", "kiwi", "--all-scopes")
    assert listed.returncode == 0, listed.stderr
    shown = dict(re.findall(r"user ('[^']*'|json:\"[^\"]*\") chat .*codeword is (\w+)", listed.stdout))
    assert sorted(shown.values()) == sorted(words.values())  # four users, told apart
    done: list[str] = []
    for form, word in shown.items():
        argv = ["--user-json", form] if form.startswith("json:") else ["--user", *shlex.split(form)]
        forgot = run("forget", *argv, "--yes")
        assert forgot.returncode == 0, forgot.stderr
        left = run("memory", "search", "kiwi", "--all-scopes").stdout
        assert word not in left  # that user, typed back as listed, is forgotten
        assert all(other in left for other in words.values() if other not in (word, *done)), (form, left)
        done.append(word)
    refused = run("forget", "--user-json", "not json", "--yes")
    assert refused.returncode == EXIT_INPUT and "'not json' is not a JSON string" in refused.stderr


#: what a terminal obeys or reorders rather than prints (a red-team pass found each in `memory search` output)
TERMINAL_ORDERS = {"title": "\x1b]0;PWNED\x07", "clipboard": "\x1b]52;c;Y3VybCBldmlsfHNo\x07",
                   "clear": "\x1b[2J\x1b[H", "hide": "\b" * 6 + "HIDDEN", "c1": "\x9b2J\x9d0;T\x9c", "cr": "\rFAKE",
                   "bidi": "\u202eexe.txt\u202c", "del": "x\x7fy"}


def test_what_a_stored_turn_tells_a_terminal_is_shown_not_obeyed(capsys: pytest.CaptureFixture[str]) -> None:
    """An assistant quoting coloured terminal output or a web page stores escape sequences: the CLI prints them as
    escapes (``\\x1b]0;``) and its JSON escapes them, so the text reads back exactly."""
    session = SessionInfo(session_id="s\x1b]0;SESSION\x07", user_id="carol", chat_id="dm")
    provider = LocalProvider({}, hermes_home=home())
    try:
        for n, (name, order) in enumerate(TERMINAL_ORDERS.items()):
            provider.sync_turn(Turn(session=session, turn_number=n, user_text=f"pizza {name} {order} end",
                                    assistant_text="noted"))
        assert provider.flush(10)
    finally:
        provider.shutdown()
    orders = {c for c in "".join(TERMINAL_ORDERS.values()) if unicodedata.category(c) in ("Cc", "Cf")}
    assert len(orders) == 10  # ESC BEL BS CR DEL CSI OSC ST, two bidi controls

    assert main(["memory", "search", "pizza", "--user", "carol", "--limit", "20"]) == 0
    out = capsys.readouterr().out
    assert out.count("pizza") == len(TERMINAL_ORDERS)  # every one is shown
    assert not orders & set(out), sorted(orders & set(out))
    assert "\\x1b]0;PWNED\\x07" in out and "\\u202eexe.txt" in out and "session s\\x1b]0;SESSION\\x07" in out

    for command in (["memory", "search", "pizza", "--user", "carol", "--limit", "20", "--json"],
                    ["memory", "export", "--user", "carol"]):
        assert main(command) == 0
        out = capsys.readouterr().out
        assert not orders & set(out), (command, sorted(orders & set(out)))
        rows = json.loads(out) if "--json" in command else [json.loads(line) for line in out.splitlines()]
        said = {row["user_text"] for row in rows}
        assert said == {f"pizza {name} {order} end" for name, order in TERMINAL_ORDERS.items()}  # exactly
        assert {row["session_id"] for row in rows} == {session.session_id}


def test_an_export_of_a_memory_longer_than_a_mebibyte_is_replaced_by_the_next(tmp_path: Path) -> None:
    """A fifth red-team pass: an earlier export whose first memory was longer than the MiB read was refused (its
    last key lay past it); one line longer than that is read by how an export begins, its first keys in order."""
    from hermes_ctx_plugins.memory.local.cli import _an_export

    record = {"id": 7, "key": "turn:ab", "kind": "turn", "namespace": "团队", "user_id": "alice", "chat_id": "dm",
              "session_id": "s", "user_text": "长" * 600_000, "created": "2026-12-06T00:00:00Z"}
    earlier = tmp_path / "export.jsonl"
    earlier.write_text(json.dumps(record) + "\n", encoding="utf-8")
    assert _an_export(earlier)
    config = tmp_path / "big.json"  # a one-line JSON of its own, over a MiB, with an export's keys inside it
    config.write_text(json.dumps({"id": "x", "messages": [record], "api_key": "KEEP"}), encoding="utf-8")
    assert not _an_export(config)



def test_reading_one_namespace_says_which_others_hold_memories(tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    """On a Bridge's home every memory is in a deployment's namespace: `memory stats`, `export --user alice` and
    `search --all-scopes` without --deployment said 0 and "no matching memories", exit 0 -- an access request's
    export silently empty (a newcomer walk). They still read one namespace; each now says which others hold what was
    asked, and the --deployment that reads them."""
    from local_helpers import say

    from hermes_ctx_plugins.config import load_config

    path = tmp_path / "config.yaml"
    path.write_text("ctx_plugins:\n  memory: {providers: [ctx-local]}\n  deployments: {support: {}}\n")
    provider = LocalProvider({}, hermes_home=Path(os.environ["HERMES_HOME"]),
                             config=load_config(str(path), deployment="support"))
    for user in ("alice", "bob"):
        say(provider, SessionInfo(session_id=f"s-{user}", user_id=user, deployment="support"),
            f"{user}'s locker code is ZEBRA{len(user)}")
    assert provider.flush(10)
    provider.shutdown()
    where = "memories are also held: 1 in namespace 'support' (--deployment support)"
    assert main(["--config", str(path), "memory", "stats"]) == 0
    captured = capsys.readouterr()
    assert "0 turns" in captured.out and ("counted the top-level namespace only; memories are also held: 2 in "
                                          "namespace 'support' (--deployment support)") in captured.err, captured
    assert main(["--config", str(path), "memory", "search", "locker", "--all-scopes"]) == 0
    captured = capsys.readouterr()
    assert "no matching memories" in captured.out and ("searched the top-level namespace only; memories are also "
                                                       "held: 2 in namespace 'support'") in captured.err, captured
    assert main(["--config", str(path), "memory", "search", "locker", "--user", "alice", "--json"]) == 0
    captured = capsys.readouterr()  # --json: stdout the document alone, the note on stderr
    assert captured.out.strip() == "[]" and f"searched the top-level namespace only; {where}" in captured.err
    assert main(["--config", str(path), "memory", "export", "--user", "alice"]) == 0
    captured = capsys.readouterr()
    assert captured.out == "" and f"exported the top-level namespace only; {where}" in captured.err, captured
    assert main(["--config", str(path), "memory", "export", "--user", "carol"]) == 0
    assert "also held" not in capsys.readouterr().err  # nobody's memories elsewhere: nothing said
    assert main(["--config", str(path), "--deployment", "support", "memory", "export", "--user", "alice"]) == 0
    captured = capsys.readouterr()  # the control: read where they are, all of hers and nothing said of elsewhere
    assert "ZEBRA5" in captured.out and "bob" not in captured.out and "also held" not in captured.err, captured
    path.write_text("ctx_plugins:\n  memory: {providers: [ctx-local]}\n  deployments: {helpdesk: {}}\n")
    assert main(["--config", str(path), "memory", "export", "--user", "alice"]) == 0  # 'support' renamed since
    assert ("1 in namespace 'support' (no deployment of this config reads it)" in capsys.readouterr().err)

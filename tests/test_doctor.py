"""`hermes-ctx doctor`: config, plugins, each provider's availability, breaker state and queued writes."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from remote_helpers import MEM0_KEY, memory_yaml

from hermes_ctx_plugins import SessionInfo, Turn
from hermes_ctx_plugins.cli import main
from hermes_ctx_plugins.hermes.memory import write_shims
from hermes_ctx_plugins.memory.remote.mem0 import Mem0Provider
from hermes_ctx_plugins.testing import HonchoStubServer, Mem0StubServer, wait_until

KEY = MEM0_KEY


#: what hermes needs to run us (`hermes-ctx install` writes it; doctor checks it)
WIRED = "plugins: {enabled: [hermes-ctx]}\ncontext: {engine: hermes-ctx}\n"


def write_config(text: str) -> Path:
    home = Path(os.environ["HERMES_HOME"])
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.yaml").write_text(WIRED + text, encoding="utf-8")
    write_shims(home, ["ctx-mem0", "ctx-honcho"])  # how hermes finds the memory.provider these tests select
    return home


def mem0_config(stub: Mem0StubServer, key: str = KEY) -> str:
    options = {"api_key": key, "host": stub.base_url, "timeout": 1.0, "failure_threshold": 1,
               "cooldown_seconds": 60}
    return memory_yaml("ctx-mem0", options)


def doctor(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    code = main(["doctor", *args])
    return code, capsys.readouterr().out


def test_healthy_setup(mem0: Mem0StubServer, capsys: pytest.CaptureFixture[str]) -> None:
    home = write_config(mem0_config(mem0))
    code, out = doctor(capsys)
    assert code == 0, out
    assert f"config       {home / 'config.yaml'}" in out and f"hermes home  {home}" in out
    assert "hermes_ctx_plugins.memory.builtin (built-in): ok" in out
    mem0_line = next(line for line in out.splitlines() if line.strip().startswith("ctx-mem0"))
    assert "external" in mem0_line and "selected" in mem0_line and f"available: {mem0.base_url}" in mem0_line
    assert "breaker: ok; probe: ok (" in out
    assert "writes: 0 queued here, 0 spooled on disk (sent 0, dropped 0, rejected 0)" in out
    assert "ctx-honcho" in out and "unavailable: no Honcho API key" in out  # not selected: no problem
    assert out.rstrip().endswith("result: OK")
    assert f"archive\n  ok    no archive yet at {home / 'ctx_archive.db'} (nothing compacted)" in out  # a newcomer walk
    assert [r.path for r in mem0.requests] == ["/v1/ping/"], "the probe is the client's ping"

    code, out = doctor(capsys, "--json", "--no-probe")
    report = json.loads(out)
    assert code == 0 and report["ok"] and len(mem0.requests) == 1, "--no-probe contacts nobody"
    row = next(r for r in report["memory_providers"] if r["name"] == "ctx-mem0")
    assert row["selected"] and row["available"] and row["breaker"] == "ok" and "probe" not in row


def test_a_bad_key_fails_the_probe_and_the_command(mem0: Mem0StubServer, capsys: pytest.CaptureFixture[str]) -> None:
    write_config(mem0_config(mem0, key="wrong"))
    code, out = doctor(capsys)
    assert code == 1
    assert "probe: failed: ValueError: Error: Invalid API key" in out
    assert "breaker: suspended after 1 consecutive failures" in out
    assert "result: PROBLEMS" in out and "ctx-mem0 probe failed" in out


def test_shows_the_breaker_and_queue_a_hermes_process_left(mem0: Mem0StubServer, tmp_path: Path) -> None:
    home = write_config(mem0_config(mem0))
    mem0.stop()
    running = Mem0Provider({"api_key": KEY, "host": mem0.base_url, "timeout": 0.5, "failure_threshold": 1,
                            "cooldown_seconds": 60, "flush_timeout": 0.2}, hermes_home=home)
    running.sync_turn(Turn(SessionInfo("s1", user_id="dana"), 1, "my locker combination is 4-8-15-16", "ok"))
    assert wait_until(lambda: "suspended" in running.breaker.status("ctx-mem0"))
    running.shutdown()  # what hermes does at exit: the unsent write is spooled, the state left on disk
    mem0.start()
    done = subprocess.run([sys.executable, "-m", "hermes_ctx_plugins.cli", "doctor", "--no-probe"],
                          env={**os.environ}, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "writes: 0 queued here, 1 spooled on disk" in done.stdout
    reported = next(line for line in done.stdout.splitlines() if "last reported by pid" in line)
    assert f"pid {os.getpid()}" in reported and "breaker suspended after 1 consecutive failures" in reported
    assert "1 queued" in reported and "ConnectError" in reported
    assert "rejected 0, set aside 0" in reported  # what the running process counted, not doctor's own zeros


def test_invalid_config_exits_2_with_the_limit_error(mem0: Mem0StubServer, capsys: pytest.CaptureFixture[str]) -> None:
    write_config("ctx_plugins: {memory: {providers: [ctx-mem0, ctx-honcho]}}\n")
    assert main(["doctor"]) == 2
    err = capsys.readouterr().err
    assert "only one external memory provider may be active, got 'ctx-mem0' and 'ctx-honcho'" in err


def test_without_the_extras_the_package_works_and_says_what_to_install(tmp_path: Path) -> None:
    with HonchoStubServer() as honcho:
        write_config(f"memory: {{provider: ctx-honcho}}\n"
                     f"ctx_plugins: {{options: {{ctx-honcho: {{base_url: '{honcho.base_url}'}}}}}}\n")
        script = ("import sys; sys.modules['mem0'] = None; sys.modules['honcho'] = None\n"
                  "from hermes_ctx_plugins.cli import main; sys.exit(main(['doctor']))")
        done = subprocess.run([sys.executable, "-c", script], env={**os.environ}, capture_output=True, text=True,
                              timeout=60)
        assert honcho.requests == []
    assert done.returncode == 1, done.stderr
    out: Any = done.stdout
    assert ("unavailable: the honcho-ai package is not installed; install it with: "
            "pip install 'hermes-ctx-plugins[honcho]'") in out
    assert "the mem0ai package is not installed" in out
    assert "ctx-honcho is selected but unavailable" in out


def test_a_services_error_text_is_shown_with_its_terminal_controls_escaped(capsys: pytest.CaptureFixture[str]) -> None:
    """A memory service answering its error with escape sequences (set the title, write the clipboard, reorder
    text): doctor's report and the log lines on stderr show them as escapes (a red-team pass found them raw)."""
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    evil = "\x1b]0;PWNED\x07\x1b]52;c;cm0gLXJmIH4=\x07Invalid \u202eyek IPA\u202c \x1b[2K\x9b31m"

    class Refuses(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def do_GET(self) -> None:
            body = json.dumps({"detail": evil}).encode()
            self.send_response(401)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        do_POST = do_GET

    def drop_cli_log_handlers() -> None:  # the CLI's stderr handler is made once per process, on an earlier stderr
        logger = logging.getLogger("hermes_ctx_plugins")
        for handler in [h for h in logger.handlers if getattr(h, "_hermes_ctx_cli", False)]:
            logger.removeHandler(handler)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Refuses)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    drop_cli_log_handlers()
    try:
        options = {"api_key": KEY, "host": f"http://127.0.0.1:{server.server_address[1]}", "timeout": 1.0,
                   "failure_threshold": 1, "cooldown_seconds": 60}
        write_config(memory_yaml("ctx-mem0", options))
        assert main(["doctor"]) == 1
    finally:
        drop_cli_log_handlers()
        server.shutdown()
        server.server_close()
    captured = capsys.readouterr()
    for said in (captured.out, captured.err):
        assert not {"\x1b", "\x07", "\x9b", "\u202e"} & set(said), said
    assert "\\x1b]0;PWNED\\x07" in captured.out and "\\u202eyek IPA" in captured.out  # shown, as escapes


def test_a_damaged_ctx_local_database_is_a_problem_naming_it(capsys: pytest.CaptureFixture[str]) -> None:
    """Before: doctor said "ctx-local ... available", "result: OK" and exited 0 for a memory.db overwritten with
    garbage (memory stats exited 3 on it; a README audit). A healthy store stays OK; doctor writes nothing."""
    from hermes_ctx_plugins.memory.local.provider import LocalProvider

    home = write_config("memory: {provider: ctx-local}\n")
    write_shims(home, ["ctx-local"])
    provider = LocalProvider({}, hermes_home=home)
    provider.sync_turn(Turn(SessionInfo("s", user_id="alice"), 1, "the deploy port is 8443", "noted"))
    assert provider.flush(10)
    provider.shutdown()
    files = sorted(p.name for p in (home / "ctx-local").iterdir())
    code, out = doctor(capsys, "--no-probe")
    assert code == 0 and "ctx-local" in out and out.rstrip().endswith("result: OK"), out
    assert sorted(p.name for p in (home / "ctx-local").iterdir()) == files  # no -wal / -shm made by reading
    database = home / "ctx-local" / "memory.db"
    import sqlite3

    healthy = database.read_bytes()
    conn = sqlite3.connect(database)
    conn.execute("PRAGMA user_version = 99")  # a newer release's store (memory stats refuses it)
    conn.close()
    code, out = doctor(capsys, "--no-probe")
    assert code == 1 and "written by a newer hermes-ctx-plugins" in out, out
    assert sorted(p.name for p in (home / "ctx-local").iterdir()) == files  # a store it refuses: nothing made either
    for sibling in home.joinpath("ctx-local").glob("memory.db-*"):
        sibling.unlink()
    damaged = bytearray(healthy)  # the header and the first page intact, the pages after them not
    for page in range(2, len(damaged) // 4096):
        damaged[page * 4096 + 10:page * 4096 + 110] = b"\xff" * 100
    database.write_bytes(bytes(damaged))
    code, out = doctor(capsys, "--no-probe")
    assert code == 1 and "malformed" in out, out
    for damage in (b"garbage " * 64, b"SQLite format 3\x00" + b"\xff" * 200):
        for sibling in home.joinpath("ctx-local").glob("memory.db-*"):
            sibling.unlink()
        database.write_bytes(damage)
        code, out = doctor(capsys, "--no-probe")
        assert code == 1 and f"ctx-local is selected but unavailable: ctx-local memory database {database}" in out
        assert database.read_bytes() == damage  # nothing written, nothing moved


def test_writes_waiting_in_another_deployments_folder_are_counted_and_a_removed_ones_are_a_problem(
        mem0: Mem0StubServer, capsys: pytest.CaptureFixture[str]) -> None:
    """Each deployment's writes wait in a folder of its own: doctor counted only the folder of the deployment it was
    asked about, and a deployment renamed since left its writes where no queue reads them, unsaid (a review)."""
    options = {"api_key": KEY, "host": mem0.base_url, "timeout": 1.0, "failure_threshold": 1, "cooldown_seconds": 60}
    home = write_config(memory_yaml("ctx-mem0", options).replace(
        "ctx_plugins: {", "ctx_plugins: {deployments: {m1: {}}, "))
    mem0.stop()
    from hermes_ctx_plugins.config import load_config

    m1 = Mem0Provider(options, hermes_home=home, config=load_config(str(home / "config.yaml"), deployment="m1"))
    m1.sync_turn(Turn(session=SessionInfo(session_id="s", user_id="alice", deployment="m1"), turn_number=1,
                      user_text="my locker code is amber", assistant_text="noted"))
    assert wait_until(lambda: "suspended" in m1.breaker.status("ctx-mem0"))
    m1.shutdown()
    mem0.start()
    code, out = doctor(capsys, "--no-probe")
    assert code == 0 and f"1 spooled in {m1.backlog.parent} (another deployment's)" in out, out
    written = (home / "config.yaml").read_text()
    (home / "config.yaml").write_text(written.replace("m1: {}", "m1b: {}"))
    code, out = doctor(capsys, "--no-probe")
    assert code == 1 and "1 writes wait in" in out and "a deployment the config no longer names" in out, out
    # named still, but no longer running ctx-mem0 (a review): a Bridge's config, no hermes memory.provider
    (home / "config.yaml").write_text(WIRED + "ctx_plugins: " + json.dumps({
        "memory": {"providers": ["file", "ctx-mem0"]}, "options": {"ctx-mem0": options},
        "deployments": {"m1": {"memory": {"providers": ["file"]}}}}) + "\n", encoding="utf-8")
    code, out = doctor(capsys, "--no-probe")
    assert code == 1 and "1 writes wait in" in out and "no longer runs ctx-mem0" in out, out


def test_a_bridges_config_is_no_problem_with_bridge_but_a_setting_set_wrong_still_is(
        capsys: pytest.CaptureFixture[str]) -> None:
    """README's Bridge config sets neither context.engine nor memory.provider (the Bridge installs the engine and drives
    the providers): doctor said FAIL and exit 1 for every Bridge, so its exit code watched nothing (a review)."""
    home = Path(os.environ["HERMES_HOME"])
    home.mkdir(parents=True, exist_ok=True)
    bridge = ("plugins: {enabled: [hermes-ctx]}\n"
              "ctx_plugins: {memory: {providers: [file]}, deployments: {support: {}}}\n")
    (home / "config.yaml").write_text(bridge, encoding="utf-8")
    code, out = doctor(capsys, "--no-probe")
    assert code == 1 and "context.engine is not set" in out, "positive control: a plain hermes needs it"
    code, out = doctor(capsys, "--no-probe", "--bridge")
    assert code == 0 and out.rstrip().endswith("result: OK"), out
    (home / "config.yaml").write_text(bridge + "context: {engine: hermes_ctx}\n", encoding="utf-8")
    code, out = doctor(capsys, "--no-probe", "--bridge")
    assert code == 1 and "context.engine is 'hermes_ctx' (did you mean 'hermes-ctx'?)" in out, out


def test_the_archive_line_fails_for_an_archive_path_that_is_a_folder(capsys: pytest.CaptureFixture[str]) -> None:
    """Before: "ok ...: 0.0 MB", exit 0, and a spooled compaction "imported at the archive's next write", which never
    comes (a review)."""
    home = write_config("")
    (home / "ctx_archive.db").mkdir()  # the default path (a path in the config naming a folder is refused there)
    code, out = doctor(capsys, "--no-probe", "--json")
    report = json.loads(out)
    assert code == 1 and not report["archive"]["ok"], report["archive"]
    assert f"{home / 'ctx_archive.db'} is a folder, not an archive file" in report["archive"]["detail"]


def test_a_queue_file_that_cannot_be_read_is_a_problem_naming_it_not_a_traceback(
        mem0: Mem0StubServer, capsys: pytest.CaptureFixture[str]) -> None:
    """A folder where a memory service provider's ``queue.jsonl`` should be (a review: doctor ended in a traceback,
    before the archive's line and the result)."""
    home = write_config(mem0_config(mem0))
    (home / "ctx_plugins" / "ctx-honcho" / "queue.jsonl").mkdir(parents=True)
    code, out = doctor(capsys, "--no-probe")
    assert code == 1, out
    assert f"ctx-honcho: the writes it queued under {home / 'ctx_plugins' / 'ctx-honcho'} cannot be read" in out
    assert "ctx-mem0" in out and "archive" in out and out.rstrip().splitlines()[-1].startswith("  - ")


def test_a_ctx_local_path_that_cannot_be_created_is_a_problem_and_the_turn_is_told(
        capsys: pytest.CaptureFixture[str]) -> None:
    """A ctx-local `path` under a file (for another user: a folder they may not write): doctor said "available" and
    "result: OK", and every turn was lost with nothing said but a line in errors.log (a newcomer walk). Doctor fails
    naming the folder; the provider tells the user once (hermes shows it as a warning) that nothing is kept."""
    from hermes_ctx_plugins.memory.local.provider import LocalProvider

    home = write_config("")
    (home / "afile").write_text("not a folder")
    (home / "config.yaml").write_text(WIRED + "memory: {provider: ctx-local}\nctx_plugins:\n  options:\n"
                                      "    ctx-local: {path: afile/sub/memory.db}\n", encoding="utf-8")
    write_shims(home, ["ctx-local"])
    code, out = doctor(capsys, "--no-probe")
    assert code == 1 and f"cannot create it ({home / 'afile'} is not a folder)" in out, out
    told: list[Any] = []
    provider = LocalProvider({"path": "afile/sub/memory.db"}, hermes_home=home)
    provider.attach(status_callback=told.append)
    for turn in (1, 2):
        with pytest.raises(OSError):
            provider.sync_turn(Turn(SessionInfo("s", user_id="alice"), turn, "the deploy port is 8443", "noted"))
    assert len(told) == 1 and "cannot keep what is said" in told[0].message, told  # once, not every turn
    assert "ctx_plugins.options.ctx-local.path" in told[0].message
    (home / "afile").unlink()
    (home / "afile").symlink_to(home / "not mounted")  # a link to a folder not there (a mount not mounted yet)
    code, out = doctor(capsys, "--no-probe")
    assert code == 1 and "is a link to nothing" in out, out  # (it was "available": a review)
    (home / "afile").unlink()
    (home / "afile").mkdir()
    (home / "afile" / "sub").mkdir()
    (home / "afile" / "sub" / "memory.db").symlink_to(home / "not mounted" / "memory.db")  # the store itself a link
    code, out = doctor(capsys, "--no-probe")
    assert code == 1 and "which is not there" in out, out
    import shutil

    shutil.rmtree(home / "afile")
    code, out = doctor(capsys, "--no-probe")  # the positive control: a creatable path is no problem
    assert code == 0 and out.rstrip().endswith("result: OK"), out

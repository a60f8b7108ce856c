"""`hermes-ctx doctor` with a store on PostgreSQL: the connection (password hidden), the schema version
and the pool, on a real server; a server that is down is one FAIL line naming it and what to do."""

from __future__ import annotations

import json
import os
import socket
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from hermes_ctx_plugins import storage
from hermes_ctx_plugins.cli import EXIT_PROBLEM, main
from hermes_ctx_plugins.config import load_config
from hermes_ctx_plugins.storage.postgres.schema import SCHEMA_VERSION

PASSWORD = "hunter2-not-shown"
#: the stores a config with ``backend: postgres`` keeps on the server
ALL = "(memory, archive, documents)"


def write_config(storage_settings: dict[str, object]) -> None:
    home = Path(os.environ["HERMES_HOME"])
    home.mkdir(parents=True, exist_ok=True)
    wired = {"plugins": {"enabled": ["hermes-ctx"]}, "context": {"engine": "hermes-ctx"}}  # doctor checks it too
    (home / "config.yaml").write_text(json.dumps({**wired, "ctx_plugins": {"storage": storage_settings}}),
                                      encoding="utf-8")


def with_password(dsn: str) -> str:
    """``dsn`` with a password in it (the test server trusts local connections, so it is ignored)."""
    return dsn.replace("postgresql://postgres:@", f"postgresql://postgres:{PASSWORD}@", 1)


def closed_port() -> int:
    """A loopback port nothing listens on: what a client sees of a server that is down."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture(autouse=True)
def _fresh_pools() -> Iterator[None]:
    """Each test's pools are its own (the doctor's process keeps them otherwise)."""
    yield
    storage.release()


def doctor(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["doctor", *args])  # the config: $HERMES_HOME/config.yaml
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_a_reachable_server_reports_connection_schema_and_pool(postgres_dsn: str,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    write_config({"backend": "postgres", "dsn": with_password(postgres_dsn), "schema": "doctor_fresh"})
    code, out, _ = doctor(capsys)
    assert code == 0, out
    connection = next(line for line in out.splitlines() if f"postgres connection {ALL}" in line)
    assert ": ok: " in connection and "password=***" in connection and "PostgreSQL 18" in connection
    assert PASSWORD not in out
    assert f"postgres schema {ALL}: ok: doctor_fresh not created yet: brought to version" in out
    assert f"postgres pool {ALL}: ok: " in out and "of at most 4 connections open" in out
    with psycopg.connect(postgres_dsn) as conn:  # the doctor created nothing
        assert conn.execute("SELECT to_regnamespace('doctor_fresh')").fetchone() == (None,)

    used = load_config({"ctx_plugins": {"storage": {"backend": "postgres", "dsn": postgres_dsn,
                                                    "schema": "doctor_fresh"}}})
    storage.open_memory(used, Path(os.environ["HERMES_HOME"]) / "m.db").close()  # a worker's first use
    code, out, _ = doctor(capsys, "--json")
    report = json.loads(out)
    assert code == 0 and report["ok"]
    assert {row["check"]: row["ok"] for row in report["storage"]} == {
        f"postgres connection {ALL}": True, f"postgres schema {ALL}": True, f"postgres pool {ALL}": True}
    schema = next(row for row in report["storage"] if row["check"].startswith("postgres schema"))
    assert schema["detail"] == f"doctor_fresh at version {SCHEMA_VERSION}"


def test_a_schema_newer_than_this_package_fails(postgres_dsn: str, capsys: pytest.CaptureFixture[str]) -> None:
    with psycopg.connect(postgres_dsn, autocommit=True) as conn:
        conn.execute("CREATE SCHEMA doctor_newer")
        conn.execute("CREATE TABLE doctor_newer.schema_version (version integer NOT NULL, "
                     "migrated double precision NOT NULL DEFAULT 0)")
        conn.execute("INSERT INTO doctor_newer.schema_version (version) VALUES (%s)", (SCHEMA_VERSION + 1,))
    write_config({"backend": "postgres", "dsn": postgres_dsn, "schema": "doctor_newer"})
    code, out, _ = doctor(capsys)
    assert code == EXIT_PROBLEM
    assert (f"postgres schema {ALL}: FAIL: doctor_newer is at version {SCHEMA_VERSION + 1}, newer than "
            "this hermes-ctx-plugins knows") in out
    assert f"postgres connection {ALL}: ok" in out  # the server itself is fine
    assert out.rstrip().splitlines()[-2] == "result: PROBLEMS"


def test_a_server_that_is_down_is_one_clear_failure(capsys: pytest.CaptureFixture[str]) -> None:
    port = closed_port()
    write_config({"backend": "sqlite", "archive": "postgres", "connect_timeout": 1,
                  "dsn": f"postgresql://hermes:{PASSWORD}@127.0.0.1:{port}/fleet"})
    code, out, err = doctor(capsys)
    assert code == EXIT_PROBLEM
    [failed] = [line for line in out.splitlines() if "FAIL" in line and "connection" in line]
    assert failed.startswith("  postgres connection (archive): FAIL: cannot reach ")
    assert f"port={port}" in failed and "password=***" in failed and "start the server" in failed
    assert PASSWORD not in out + err and "Traceback" not in out + err
    assert "schema" not in out  # nothing claimed about a server never reached
    report_code, report, _ = doctor(capsys, "--json")
    assert report_code == EXIT_PROBLEM and json.loads(report)["problems"][-1].startswith(
        "postgres connection (archive): cannot reach")


@pytest.mark.parametrize(("dsn", "said"), [
    (f"postgresql://hermes:{PASSWORD}%zz@db.internal/hermes", 'invalid percent-encoded token: "…"'),
    (f"postgresq://hermes:{PASSWORD}@db.internal/hermes", 'missing "=" after "…"'),
    (f"host=db.internal user=hermes {PASSWORD} dbname=hermes", 'missing "=" after "…"'),
    ("host=db.internal dbnme=hermes", 'invalid connection option "dbnme" (did you mean "dbname"?)'),
    # a password holding a space: its second half read as an option's name (a red-team pass)
    (f"host=db.internal password=hunter2 {PASSWORD}==", 'invalid connection option "…"'),
    (f"postgresql://hermes:x@db.internal/hermes?{PASSWORD}=1", 'invalid URI query parameter: "…"'),
])
def test_a_connection_string_libpq_cannot_read_is_said_so_without_its_text(
        dsn: str, said: str, capsys: pytest.CaptureFixture[str]) -> None:
    """libpq's error quotes the token it stopped at: doctor printed the password (a bare % in it, a mistyped
    scheme, a missing '='), twice, and advised starting the server (a red-team pass)."""
    write_config({"backend": "postgres", "connect_timeout": 1, "dsn": dsn})
    code, out, err = doctor(capsys)
    assert code == EXIT_PROBLEM and PASSWORD not in out + err and "Traceback" not in out + err
    [failed] = [line for line in out.splitlines() if "FAIL" in line and "connection" in line]
    assert "is not a valid connection string" in failed and said in failed and "start the server" not in failed


def test_sqlite_alone_has_no_server_to_check(capsys: pytest.CaptureFixture[str]) -> None:
    write_config({"backend": "sqlite"})
    code, out, _ = doctor(capsys, "--json")
    assert code == 0 and json.loads(out)["storage"] == []


def test_no_probe_still_says_that_no_server_is_named(capsys: pytest.CaptureFixture[str],
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """The newcomer walk: a postgres backend naming no server passed `check` and `doctor --no-probe` in silence;
    only the probe said so. Knowing it needs no server."""
    from hermes_ctx_plugins.storage.postgres.connection import DSN_ENV

    monkeypatch.delenv(DSN_ENV, raising=False)
    write_config({"backend": "postgres", "dsn": ""})
    assert main(["doctor", "--no-probe", "--json"]) == EXIT_PROBLEM
    report = json.loads(capsys.readouterr().out)
    assert any("no server named" in problem for problem in report["problems"]), report["problems"]
    write_config({"backend": "postgres", "dsn": f"postgresql://postgres@127.0.0.1:{closed_port()}/x"})
    main(["doctor", "--no-probe", "--json"])
    report = json.loads(capsys.readouterr().out)
    assert report["storage"] == []  # named: nothing to say without reaching it

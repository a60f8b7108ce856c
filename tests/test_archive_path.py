"""``ctx_plugins.archive.path``: a relative path is under ``$HERMES_HOME``, as ctx-local's ``path`` is.

Before, it was under the working directory: hermes started from another folder (every project a CLI user works
in) silently opened an archive of its own there, and ``ctx_search`` no longer found what earlier compactions had
archived."""

from __future__ import annotations

import contextlib
import os
import sqlite3
from pathlib import Path

import pytest
from archive_helpers import compact, host_for, search

from hermes_ctx_plugins import SessionInfo
from hermes_ctx_plugins.storage import archive_unusable

SESSION = SessionInfo(session_id="s1", user_id="alice")


def test_a_relative_archive_path_is_the_same_file_whatever_folder_hermes_starts_in(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    project_a, project_b = tmp_path / "project-a", tmp_path / "project-b"
    project_a.mkdir()
    project_b.mkdir()
    monkeypatch.chdir(project_a)
    host = host_for(path="archives/ctx.db")
    compact(host, SESSION, "the staging port we agreed on is 8443", "noted")
    host.shutdown()
    assert (Path(os.environ["HERMES_HOME"]) / "archives" / "ctx.db").is_file()
    assert not (project_a / "archives").exists()

    monkeypatch.chdir(project_b)
    host = host_for(path="archives/ctx.db")
    try:
        assert any("8443" in snippet for snippet in search(host, SESSION, "staging port"))
    finally:
        host.shutdown()
    assert not (project_b / "archives").exists()


def test_hermes_home_in_the_archive_path_is_the_hermes_home(monkeypatch: pytest.MonkeyPatch) -> None:
    from hermes_ctx_plugins.config import load_config
    from hermes_ctx_plugins.storage import archive_path

    home = Path(os.environ["HERMES_HOME"])
    for raw in ("$HERMES_HOME/a/ctx.db", "${HERMES_HOME}/a/ctx.db", "a/ctx.db"):
        config = load_config({"ctx_plugins": {"archive": {"path": raw}}})
        assert archive_path(config) == home / "a" / "ctx.db", raw


def _sqlite_error(path: Path, statement: str, *, mode: str = "rw") -> sqlite3.Error:
    try:
        with contextlib.closing(sqlite3.connect(f"file:{path}?mode={mode}", uri=True)) as db:
            db.execute(statement)
    except sqlite3.Error as exc:
        return exc
    raise AssertionError(f"{statement} did not fail")


def test_an_archive_this_user_cannot_write_is_not_called_damaged(tmp_path: Path) -> None:
    """Told to "move it away to start a new one" for an archive it could not write, an operator left a user's
    messages in a file they took for purged (a newcomer walk): a read-only archive is said to be one."""
    path = tmp_path / "ctx_archive.db"
    with contextlib.closing(sqlite3.connect(path)) as db:
        db.execute("CREATE TABLE t (x)")
    read_only = archive_unusable(path, _sqlite_error(path, "INSERT INTO t VALUES (1)", mode="ro"))
    assert "cannot be written by this user" in read_only and "nothing in it was changed" in read_only
    assert "move it away" not in read_only and ".recover" not in read_only
    path.write_bytes(b"not a database, not at all " * 100)
    damaged = archive_unusable(path, _sqlite_error(path, "SELECT * FROM sqlite_master"))
    assert ".recover" in damaged and "its messages stay in the file moved away" in damaged

"""``ctx_plugins.archive.path``: a relative path is under ``$HERMES_HOME``, as ctx-local's ``path`` is.

Before, it was under the working directory: hermes started from another folder (every project a CLI user works
in) silently opened an archive of its own there, and ``ctx_search`` no longer found what earlier compactions had
archived."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from archive_helpers import compact, host_for, search

from hermes_ctx_plugins import SessionInfo

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

"""The copies our commands keep of a file they rewrite or empty are no more readable than the file."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from hermes_ctx_plugins.cli import main
from hermes_ctx_plugins.storage.documents import keep_copy


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_keep_copy_of_a_private_file_is_private(tmp_path: Path) -> None:
    """Red-team, session 23: a 0600 file's backup was created 0644 (the umask's default)."""
    private = tmp_path / "MEMORY.md"
    private.write_bytes(b"secret")
    private.chmod(0o600)
    old = os.umask(0o022)
    try:
        copy = keep_copy(private, b"secret", stamp="t", doing="keep")
        assert mode(copy) == 0o600 and copy.read_bytes() == b"secret"
        private.chmod(0o640)
        assert mode(keep_copy(private, b"x", stamp="t", doing="keep")) == 0o640  # never overwrites: t-1
        private.unlink()
        assert mode(keep_copy(private, b"x", stamp="u", doing="keep")) == 0o600  # gone: private
    finally:
        os.umask(old)


def test_memory_reset_and_an_outside_edit_keep_private_backups(capsys: pytest.CaptureFixture[str]) -> None:
    """hermes writes MEMORY.md 0600; `memory add` over an outside edit and `memory reset` back it up."""
    folder = Path(os.environ["HERMES_HOME"]) / "memories"
    folder.mkdir(parents=True, exist_ok=True)
    memory = folder / "MEMORY.md"
    memory.write_text("my bank pin is 1234\n", encoding="utf-8")  # the trailing newline: an outside edit
    memory.chmod(0o600)
    old = os.umask(0o022)
    try:
        assert main(["memory", "add", "likes tea"]) == 0
        assert main(["memory", "reset", "-y"]) == 0
    finally:
        os.umask(old)
    capsys.readouterr()
    backups = sorted(folder.glob("MEMORY.md.bak.*"))
    assert len(backups) == 2 and all(mode(b) == 0o600 for b in backups), [(b.name, oct(mode(b))) for b in backups]

"""A copy of a hermes home the user cannot write -- a mounted backup, another user's home -- can still be read:
``hermes-ctx memory search / stats / export`` and ``archive search / show / stats`` open ctx-local's store and the
archive without writing anything (SQLite would otherwise make its ``-shm`` beside a file in WAL mode, in a folder it
cannot write), and say so on stderr; commands that write still refuse, naming the file (a newcomer walk: every read
command exited 3 on a backup).

Real permissions: as root the commands run as ``nobody`` (``setpriv``); as any other user the copy is made read-only.
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

BIN = Path(sys.executable).parent / "hermes-ctx"
ROOT = os.geteuid() == 0

pytestmark = pytest.mark.skipif(ROOT and shutil.which("setpriv") is None,
                                reason="running as root without setpriv: no user the copy is read-only for")


@pytest.fixture(scope="module")
def copy() -> Iterator[Path]:
    """``hermes-ctx demo``'s home (ctx-local turns, an archived compaction), made read-only for the reader (in a
    folder of its own under the system's temporary one: pytest's is its user's alone)."""
    home = Path(tempfile.mkdtemp(prefix="ctx-read-only-")) / "home"
    made = subprocess.run([str(BIN), "demo", "--keep", str(home)], capture_output=True, text=True, timeout=300)
    assert made.returncode == 0, made.stderr[-2000:]
    for path in [home.parent, *home.parent.rglob("*")]:
        mode = path.stat().st_mode
        keep = stat.S_IMODE(mode) | stat.S_IRUSR | stat.S_IRGRP | stat.S_IROTH
        if path.is_dir():
            keep |= stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH
        # root keeps writing it (the owner); the reader is someone else. Not root: nobody writes it
        keep &= ~(stat.S_IWGRP | stat.S_IWOTH) if ROOT else ~(stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH)
        path.chmod(keep)
    assert not Path(f"{home / 'ctx-local' / 'memory.db'}-shm").exists()  # idle: what SQLite would have to make
    yield home
    for path in [home.parent, *home.parent.rglob("*")]:
        path.chmod(stat.S_IMODE(path.stat().st_mode) | stat.S_IWUSR)
    shutil.rmtree(home.parent, ignore_errors=True)


def reader(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    command = [str(BIN), *args]
    if ROOT:
        command = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", sys.executable, *command]
    env = {**os.environ, "HERMES_HOME": str(home), "HOME": str(home.parent)}
    return subprocess.run(command, capture_output=True, text=True, env=env, timeout=120)


@pytest.mark.parametrize(("args", "expected"), [
    (("memory", "search", "8443"), "deploy port is 8443"),
    (("memory", "stats"), "6 turns"),
    (("memory", "export"), "release/2026.12"),
    (("archive", "search", "a9f3c27e51b8"), "a9f3c27e51b8"),
    (("archive", "stats"), "from 1 compactions"),
    (("archive", "show", "4"), "--- #4 tool"),
])
def test_a_read_only_copy_can_be_read(copy: Path, args: tuple[str, ...], expected: str) -> None:
    done = reader(copy, *args)
    assert done.returncode == 0, (done.stdout[-1000:], done.stderr[-1000:])
    assert expected in done.stdout, done.stdout[-2000:]
    assert "cannot be written by this user: read without writing" in done.stderr
    assert not list(copy.rglob("*-shm")), "reading made nothing beside the files"


def test_writing_to_a_read_only_copy_still_refuses_and_changes_nothing(copy: Path) -> None:
    before = {p: p.read_bytes() for p in (copy / "ctx_archive.db", copy / "ctx-local" / "memory.db")}
    purged = reader(copy, "archive", "purge", "--all", "-y")
    assert purged.returncode != 0 and "cannot be written by this user" in purged.stderr, purged.stderr
    forgot = reader(copy, "memory", "forget", "--user", "", "-y")
    assert forgot.returncode != 0, forgot.stdout + forgot.stderr
    assert {p: p.read_bytes() for p in before} == before


def test_doctor_says_the_archive_cannot_be_written(copy: Path) -> None:
    done = reader(copy, "doctor", "--no-probe")
    assert done.returncode == 1, done.stdout[-2000:]
    lines = done.stdout.splitlines()
    line = lines[lines.index("archive") + 1]
    assert line.strip().startswith("FAIL") and str(copy / "ctx_archive.db") in line, line
    assert "cannot be written by this user" in line

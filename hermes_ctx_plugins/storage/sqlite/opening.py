"""Opening a SQLite file that other connections are opening, closing or recovering at the same time."""

from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from ..base import sqlite_state

T = TypeVar("T")


def retry_locked(step: Callable[[], T], timeout: float) -> T:
    """Run ``step`` (a new connection's first statements) and run it again while SQLite answers
    "locked", until ``timeout`` seconds have passed.

    The busy timeout does not cover every case: SQLite answers SQLITE_BUSY at once, without waiting,
    to a connection that reads a WAL database while the last other connection is closing it (that one
    holds an exclusive lock while it checkpoints and removes the WAL) or while another recovers it
    after a crash (sqlite.org/wal.html, "Sometimes queries return SQLITE_BUSY in WAL mode"), and to one
    of two connections that switch a new file to WAL together (a deadlock it breaks). Each lasts
    milliseconds, so the open waits them out instead of failing. ``step`` must be safe to repeat.
    """
    deadline = time.monotonic() + timeout
    delay = 0.005
    while True:
        try:
            return step()
        except sqlite3.OperationalError as exc:
            text = str(exc).lower()
            if ("locked" not in text and "busy" not in text) or time.monotonic() + delay > deadline:
                raise
        time.sleep(delay)
        delay = min(delay * 2, 0.1)


class OpenedFile:
    """Which file a connection opened at ``path`` (its device and inode), to tell when the path no longer leads
    to it: the file deleted or replaced while the process runs (a user clearing a folder, a restore from a
    backup). A connection keeps writing into a deleted file, which is gone with the process: everything written
    after the deletion was lost, silently (a red-team pass). A stat per call: a few microseconds."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.identity = _identity(path)

    def replaced(self) -> bool:
        return _identity(self.path) != self.identity


def _identity(path: Path) -> tuple[int, int] | None:
    try:
        found = os.stat(path)
    except OSError:
        return None
    return found.st_dev, found.st_ino


#: how many times a read-only opening copies a file being written before it gives up (each copy is checked unchanged)
SNAPSHOT_TRIES = 3


class _Snapshot(sqlite3.Connection):
    """A connection to a private copy of a store (:func:`read_only`); the copy goes when it closes."""

    folder: str | None = None

    def close(self) -> None:
        super().close()
        if self.folder is not None:
            import shutil

            shutil.rmtree(self.folder, ignore_errors=True)
            self.folder = None


def read_only(path: Path, timeout: float) -> sqlite3.Connection:
    """A connection reading the SQLite file at ``path``, which this user cannot write, without making or changing
    anything beside it. Opened the ordinary way (or ``mode=ro``) in a folder the user can write -- a home shared through
    a group -- SQLite makes a ``-wal`` and ``-shm`` of this user's there, and every later write of the file's owner
    fails (reviews). With nothing in its ``-wal`` (none, or empty: no process wrote since the last checkpoint) the file
    itself is read as immutable (no side file made; a read a process starting to write tears is retried by the store);
    with writes in its ``-wal`` (a process has it open, or one was killed), a private copy of the file and its ``-wal``
    is read (the copy unchanged before and after it is made; :data:`SNAPSHOT_TRIES` tries), which folds the ``-wal``
    in the way a recovery would.

    :raises sqlite3.Error: it cannot be read; :raises OSError: a file cannot be copied.
    """
    import shutil
    import tempfile

    wal = Path(f"{path}-wal")
    for attempt in range(SNAPSHOT_TRIES + 1):  # the last: the -wal went at each try, its writes in the file
        last = attempt + 1 >= SNAPSHOT_TRIES
        if not _size(wal) or attempt == SNAPSHOT_TRIES:
            return sqlite3.connect(f"{path.resolve().as_uri()}?immutable=1", uri=True, timeout=timeout,
                                   isolation_level=None, check_same_thread=False)
        folder = tempfile.mkdtemp(prefix="hermes-ctx-read-")
        try:
            before = sqlite_state(path)
            copy = Path(folder) / path.name
            shutil.copyfile(path, copy)
            try:
                shutil.copyfile(wal, Path(f"{copy}-wal"))
            except FileNotFoundError:  # its last connection folded it in and removed it meanwhile: read the file
                shutil.rmtree(folder, ignore_errors=True)
                continue
            if sqlite_state(path) != before and not last:
                shutil.rmtree(folder, ignore_errors=True)
                continue
            conn = sqlite3.connect(copy, timeout=timeout, isolation_level=None, check_same_thread=False,
                                   factory=_Snapshot)
        except BaseException:
            shutil.rmtree(folder, ignore_errors=True)
            raise
        conn.folder = folder
        conn.execute("PRAGMA query_only = ON")
        return conn
    raise AssertionError("unreachable")  # the last try returns or raises


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except FileNotFoundError:
        return 0

"""Opening a SQLite file that other connections are opening, closing or recovering at the same time."""

from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

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

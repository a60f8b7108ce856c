"""Opening a SQLite file that other connections are opening, closing or recovering at the same time."""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable
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

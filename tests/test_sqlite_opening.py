"""A new SQLite connection waits out the locks SQLite reports without calling its busy handler."""

from __future__ import annotations

import sqlite3
import time

import pytest

from hermes_ctx_plugins.storage.sqlite.opening import retry_locked


def test_a_lock_reported_at_once_is_waited_out() -> None:
    calls: list[float] = []

    def opening() -> str:
        calls.append(time.monotonic())
        if len(calls) < 4:  # what a reader gets while the last other connection removes the WAL
            raise sqlite3.OperationalError("database is locked")
        return "open"

    assert retry_locked(opening, timeout=5.0) == "open" and len(calls) == 4


def test_other_errors_are_not_retried_and_a_lasting_lock_gives_up_at_the_timeout() -> None:
    calls: list[int] = []

    def damaged() -> None:
        calls.append(1)
        raise sqlite3.DatabaseError("file is not a database")

    with pytest.raises(sqlite3.DatabaseError, match="not a database"):
        retry_locked(damaged, timeout=5.0)
    assert calls == [1]

    def held() -> None:
        raise sqlite3.OperationalError("database is locked")

    started = time.monotonic()
    with pytest.raises(sqlite3.OperationalError, match="locked"):
        retry_locked(held, timeout=0.3)
    assert 0.1 < time.monotonic() - started < 1.0

"""Opening a SQLite file that other connections are opening, closing or recovering at the same time."""

from __future__ import annotations

import contextlib
import logging
import os
import sqlite3
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypeVar

from ..files import FileUnavailable
from .state import file_changed, sqlite_state, unfinished_checkpoint

T = TypeVar("T")
log = logging.getLogger("hermes_ctx_plugins")


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


@contextlib.contextmanager
def one_moment(conn: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """Statements on ``conn`` read as one moment (a read transaction), unless one is open already: a store's counts
    made of several statements while a process writes (a review: 446 of 831 ``memory stats`` had more sessions than
    turns)."""
    began = not conn.in_transaction
    if began:
        conn.execute("BEGIN")
    try:
        yield conn
    finally:
        if began:
            with contextlib.suppress(sqlite3.Error):  # a read: nothing to keep
                conn.execute("COMMIT")


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


class CopyRoomError(FileUnavailable):
    """The private copy a read of another user's store needs (:func:`read_only`) could not be made: the temporary
    folder has no room for it or cannot be written. The store itself is not at fault (a review: this was taken for
    damage, and the advice was to move a healthy store away).

    :ivar folder: the temporary folder; :ivar megabytes: the copy's size (``None``: the folder could not be made in)
    """

    def __init__(self, path: Path, folder: str, megabytes: float | None, error: OSError) -> None:
        self.folder, self.megabytes = folder, megabytes
        super().__init__(path, f"copy into {folder}", error)

    def __str__(self) -> str:
        needs = "cannot be made there" if self.megabytes is None else f"needs {self.megabytes:,.0f} MB there"
        return (f"{self.path} has writes in its -wal it must be read with, so it is read from a copy in {self.folder}, "
                f"which {needs}: {self.error.strerror or self.error}")


class _Snapshot(sqlite3.Connection):
    """A connection to a private copy of a store (:func:`read_only`); the copy goes when it closes."""

    folder: str | None = None

    def close(self) -> None:
        try:
            super().close()
        finally:  # a Ctrl-C while it closed left the whole copy behind (hundreds of MB, until the sweep)
            if self.folder is not None:
                import shutil

                try:
                    shutil.rmtree(self.folder, ignore_errors=True)
                except BaseException:  # a Ctrl-C in the middle of the removal: finish it, then stop
                    shutil.rmtree(self.folder, ignore_errors=True)
                    raise
                finally:
                    self.folder = None


def read_only(path: Path, timeout: float, *, copy: bool = True) -> sqlite3.Connection:
    """A connection reading the SQLite file at ``path``, which this user cannot write, without SQLite ever opening it
    the ordinary way: in a folder the user can write -- a home shared through a group -- that leaves a ``-wal`` of this
    user's, which the owner's process opens read-only if it opens the store at that moment, every write of that
    connection failing (reviews: the ordinary opening, ``mode=ro`` and ``readonly_shm`` all make one). So:

    - nothing in its ``-wal``, or writes there and its ``-shm`` present (a process has it open): the file itself, as
      immutable -- the writes that process has not folded into the file yet are not read, and said (a log line); a read
      a process writing the file meanwhile tears is made again by the store (a private copy of a live file and its
      ``-wal`` was torn half the time while a gateway wrote, a review);
    - writes in its ``-wal`` and no ``-shm`` (a process was killed, or a copy left it out), or a ``-shm`` saying a
      checkpoint stopped part-way (:func:`~.state.unfinished_checkpoint`: the file alone may hold half of it), and
      ``copy``: a private copy of the file and its ``-wal`` in a temporary folder is read (its ``-wal`` folded in as a
      recovery would), the file checked unchanged through the copy, the copy removed when the connection closes.

    :raises sqlite3.Error: it cannot be read; :raises OSError: a file cannot be copied.
    """
    path = path.resolve()  # a link's -wal and -shm are beside the file it names
    wal, shm = Path(f"{path}-wal"), Path(f"{path}-shm")
    if copy and _size(wal) and (not shm.exists() or unfinished_checkpoint(path)):
        return _copied(path, wal, timeout)
    return sqlite3.connect(f"{path.as_uri()}?immutable=1", uri=True, timeout=timeout, isolation_level=None,
                           check_same_thread=False)


def say_unfolded(path: Path, conn: sqlite3.Connection) -> None:
    """Log how much a running process has written that ``conn`` (:func:`read_only`'s) does not read: the -wal of the
    file at ``path``, when ``conn`` reads the file alone (said once the opening is settled: a copy read with its -wal
    was said "not read" too, a review)."""
    path = path.resolve()
    unfolded = _size(Path(f"{path}-wal"))
    if unfolded and getattr(conn, "folder", None) is None:
        log.warning("%s: %d kB of writes a running process has not folded into it yet are not read (this user cannot "
                    "join its readers without leaving a file of theirs beside it)", path, -(-unfolded // 1024))


def with_its_wal(path: Path, timeout: float) -> sqlite3.Connection | None:
    """A connection reading the file at ``path`` with its ``-wal`` (a private copy, as :func:`read_only` makes), for a
    reader that found the file alone lacking what its -wal holds -- a store its owner opened and has not checkpointed
    yet holds its very tables there (a review: such a store "had no schema"); ``None`` when the -wal holds nothing."""
    path = path.resolve()
    wal = Path(f"{path}-wal")
    return _copied(path, wal, timeout) if _size(wal) else None


def _copied(path: Path, wal: Path, timeout: float) -> sqlite3.Connection:
    """:func:`read_only` of a file whose ``-wal`` must be read with it: a private copy. The file must not change
    through the copy (a checkpoint copying pages into it would pair two moments); the ``-wal`` may grow (a process
    appending to it): SQLite reads a copied -wal as it recovers one, whole commits only, up to the first frame the
    copy cut. Each try but the last wants the -wal unchanged too."""
    import shutil
    import tempfile

    _sweep()
    for attempt in range(SNAPSHOT_TRIES):
        try:
            folder = tempfile.mkdtemp(prefix=SNAPSHOT_PREFIX)
        except OSError as exc:  # (a TMPDIR that does not exist, or that this user cannot write)
            raise CopyRoomError(path, tempfile.gettempdir(), None, exc) from None
        try:
            before = sqlite_state(path)
            copy = Path(folder) / path.name
            try:
                shutil.copyfile(path, copy)
                shutil.copyfile(wal, Path(f"{copy}-wal"))
            except FileNotFoundError:  # a process opened it meanwhile and folded the -wal in: read as it is now
                shutil.rmtree(folder, ignore_errors=True)
                return read_only(path, timeout, copy=False)
            except OSError as exc:
                need = (_size(path) + _size(wal)) / 1e6
                raise CopyRoomError(path, tempfile.gettempdir(), need, exc) from None
            after = sqlite_state(path, settle=False)
            if file_changed(before, after) or (after != before and attempt + 1 < SNAPSHOT_TRIES):
                shutil.rmtree(folder, ignore_errors=True)
                if attempt + 1 < SNAPSHOT_TRIES:
                    continue
                return read_only(path, timeout, copy=False)  # the file as it is: the store's reads say if it changes
            # read-only: closing it folds nothing into a copy about to be removed (the close wrote the whole -wal
            # into it: 0.6 s for a 100 MB -wal, and a Ctrl-C then was the likeliest moment to stop a read)
            conn = sqlite3.connect(f"{copy.as_uri()}?mode=ro", uri=True, timeout=timeout, isolation_level=None,
                                   check_same_thread=False, factory=_Snapshot)
        except BaseException:
            shutil.rmtree(folder, ignore_errors=True)
            raise
        conn.folder = folder
        conn.execute("PRAGMA query_only = ON")
        return conn
    raise AssertionError("unreachable")  # the last try returns or raises


#: the private copies' folder names (:func:`_copied`), and how old an abandoned one is removed (a killed reader's)
SNAPSHOT_PREFIX = "hermes-ctx-read-"
SNAPSHOT_ABANDONED_SECONDS = 3_600.0


def _sweep() -> None:
    """Remove this user's private copies an earlier reader left (killed before it closed), an hour old or more."""
    import shutil
    import tempfile

    now = time.time()
    try:
        for folder in Path(tempfile.gettempdir()).glob(f"{SNAPSHOT_PREFIX}*"):
            stat = folder.stat()
            if stat.st_uid == os.geteuid() and now - stat.st_mtime > SNAPSHOT_ABANDONED_SECONDS:
                shutil.rmtree(folder, ignore_errors=True)
    except OSError:
        pass


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except FileNotFoundError:
        return 0

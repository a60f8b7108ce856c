"""A SQLite file's state as a reader that takes none of its locks sees it (a store this user cannot write, read as
immutable or from a private copy: :mod:`.opening`): whether the file changed between two moments, whether a process
is copying its -wal into it right now, whether a checkpoint stopped part-way. Linux's locks are asked with F_GETLK,
nothing taken."""

from __future__ import annotations

from pathlib import Path


def sqlite_state(path: Path, *, settle: bool = True) -> tuple[int, ...]:
    """What tells whether a SQLite file at ``path`` changed or a process opened it: the file's size, modification time
    and checkpoint mark (:func:`_checkpoint_mark`), its ``-wal``'s size and time, and whether its ``-shm`` exists. A
    read of a file opened as immutable is torn when a process writes the file meanwhile: compared before and after
    (:func:`file_changed`), a failure is then said (or retried) as such, not as damage. ``settle`` (the state before a
    read): taken once no process is writing pages into the file (:func:`pages_being_written`; waited for up to
    :data:`SETTLE_SECONDS`): a file half written by a checkpoint, its process paused part-way, changes neither size
    nor time while it is read (CI: a torn read of a healthy store said "damaged"). After a read, not waited for: a
    checkpoint that began meanwhile changed the file's time if it wrote a page (where the clock gives the time in
    nanoseconds: Linux 6.13 and later; a coarser one may not show a page written in the same few milliseconds), and
    one still syncing its -wal has written none (waiting for it made reads beside an owner writing a turn at a time
    fail twice as often).

    Read only where this process has no ordinary SQLite connection to the file (a store this user cannot write): the
    checkpoint mark opens and closes the file and its ``-shm``, and closing a file drops every POSIX lock the process
    holds on it."""
    import os

    path = Path(os.path.realpath(path))  # a link's -wal and -shm are beside the file it names
    mark = _checkpoint_mark(path, settle)  # first: the file as it is once a checkpoint under way is done
    out: list[int] = []
    for each in (path, Path(f"{path}-wal")):
        try:
            stat = each.stat()
            out += [stat.st_size, stat.st_mtime_ns]
        except OSError:
            out += [-1, -1]
        if each is path:
            out.append(mark)
    return (*out, int(Path(f"{path}-shm").exists()))


def file_changed(before: tuple[int, ...], after: tuple[int, ...]) -> bool:
    """Whether the file itself changed between two :func:`sqlite_state` (its ``-wal`` and ``-shm`` aside: a read as
    immutable reads the file alone, and a process that only commits or opens the store changes them, not it)."""
    return before[:3] != after[:3]


#: where SQLite's unix VFS locks, and what it keeps in a ``-shm`` (os_unix.c, wal.c): a process writing pages into the
#: file holds the checkpointer's lock (byte 120 + 1 of the -shm) or, the last connection closing a store, an EXCLUSIVE
#: lock on the file (a write lock on its 510 SHARED bytes from 2**30 + 2); the -shm's checkpoint record, after the two
#: 48-byte copies of the WAL index header, holds how many -wal frames were copied into the file (nBackfill, at 96) and
#: how many a checkpoint set out to copy (nBackfillAttempted, at 128: set before it copies, nBackfill after), in the
#: machine's byte order
_SHM_CHECKPOINT_LOCK = 121
_FILE_SHARED_BYTES = (0x40000002, 510)
_SHM_BACKFILL = 96
_SHM_BACKFILL_ATTEMPTED = 128

#: how long :func:`sqlite_state` waits for a process writing pages into the file to finish (a checkpoint of a large
#: -wal takes about a second): past it, the file is said to be changing (a read made then is made again, or said as
#: "kept changing")
SETTLE_SECONDS = 1.0


def _checkpoint_mark(path: Path, settle: bool) -> int:
    """How far checkpoints have copied the -wal into the file at ``path`` (the ``-shm``'s nBackfill; 0 without a
    readable -shm, as in a new one: a process that only opens the store makes one), once no process is writing pages
    into it (``settle``) -- or, one still writing after :data:`SETTLE_SECONDS` (paused part-way), a value never given
    twice. A checkpoint that starts and ends between two states changes it (the file's time may not, where the clock
    is coarse)."""
    import time

    deadline, delay = time.monotonic() + SETTLE_SECONDS, 0.001
    while settle and pages_being_written(path):
        if time.monotonic() >= deadline:
            return -2 - time.monotonic_ns()
        time.sleep(delay)
        delay = min(delay * 2, 0.05)
    backfill, _ = _checkpoint_record(Path(f"{path}-shm"))
    return backfill


def unfinished_checkpoint(path: Path) -> bool:
    """Whether the ``-shm`` of the SQLite file at ``path`` says a checkpoint set out to copy more -wal frames into the
    file than it did, and no process is copying now: one was killed part-way (or a process recovered the store after a
    crash). The file alone may then hold half of it (SQLite itself does not read it alone then), so a reader who
    cannot join the store's readers reads it with its -wal, from a private copy (a review: a killed checkpointer made
    every read say "damaged" until the owner opened the store again)."""
    backfill, attempted = _checkpoint_record(Path(f"{path}-shm"))
    return attempted > backfill and not _copying_lock(path)


def pages_being_written(path: Path) -> bool:
    """Whether a process may be writing -wal pages into the SQLite file at ``path`` right now: it holds the lock SQLite
    takes for that (the -shm's checkpointer lock, or an EXCLUSIVE lock on the file: the last connection closing the
    store) and the -shm says its checkpoint has frames left to copy (or there is no -shm to say). Holding the lock
    alone is not enough: the closing of every store opened, written and closed holds it a while with nothing to copy.
    Asked with F_GETLK, nothing taken; False where that cannot be asked (not Linux, a file that cannot be opened)."""
    if not _copying_lock(path):
        return False
    shm = Path(f"{path}-shm")
    if not shm.exists():
        return True
    backfill, attempted = _checkpoint_record(shm)
    return attempted > backfill


def _copying_lock(path: Path) -> bool:
    import sys

    if sys.platform != "linux":
        return False
    return _locked(Path(f"{path}-shm"), _SHM_CHECKPOINT_LOCK, 1) or _locked(path, *_FILE_SHARED_BYTES)


def _locked(path: Path, start: int, length: int) -> bool:
    """Whether another process holds a write lock on bytes ``start`` .. ``start + length`` of ``path`` (a read lock
    there could not be taken). Linux's ``struct flock``."""
    import fcntl
    import os
    import struct

    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return False
    try:
        query = struct.pack("hhqqi4x", fcntl.F_RDLCK, os.SEEK_SET, start, length, 0)
        return bool(struct.unpack("hhqqi4x", fcntl.fcntl(fd, fcntl.F_GETLK, query))[0] != fcntl.F_UNLCK)
    except OSError:
        return False
    finally:
        os.close(fd)


def _checkpoint_record(shm: Path) -> tuple[int, int]:
    """The -shm's ``(nBackfill, nBackfillAttempted)``; ``(0, 0)`` without a -shm that can be read."""
    import os
    import sys

    try:
        fd = os.open(shm, os.O_RDONLY)
    except OSError:
        return 0, 0
    try:
        record = os.pread(fd, _SHM_BACKFILL_ATTEMPTED + 4 - _SHM_BACKFILL, _SHM_BACKFILL)
    except OSError:
        return 0, 0
    finally:
        os.close(fd)
    if len(record) < _SHM_BACKFILL_ATTEMPTED + 4 - _SHM_BACKFILL:
        return 0, 0
    at = _SHM_BACKFILL_ATTEMPTED - _SHM_BACKFILL
    return int.from_bytes(record[:4], sys.byteorder), int.from_bytes(record[at:at + 4], sys.byteorder)

"""The package's one cross-process file lock and one atomic file write.

Every file the package rewrites (MEMORY.md / USER.md and their staged writes, the archive's
spool, the remote providers' queue, ``running.json``) goes through these two functions, so they
all share one locking convention — hermes' own: a sidecar ``<name>.lock`` — and one way of
replacing a file that a crash cannot leave half-written.

A failure is a :class:`FileUnavailable` (an :class:`OSError`, so existing ``except OSError``
keeps working) naming the path and what was being done; a store whose errors form their own
family passes its subclass as ``error`` so its callers catch one family.
"""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

from ..errors import HermesCtxError

if sys.platform == "win32":
    import msvcrt
else:
    import fcntl


class FileUnavailable(HermesCtxError, OSError):
    """A file or its folder cannot be read, written or locked (read-only, not a folder, ...).

    :ivar path: the file or folder that failed
    :ivar doing: what was being done to it, e.g. ``"create the lock file"``
    :ivar error: the underlying :class:`OSError`
    """

    #: the start of the message, naming what became unavailable (a store's subclass: "memory store unavailable");
    #: none here: "file unavailable: " was read as the `file` memory provider's (a newcomer walk)
    prefix = ""

    def __init__(self, path: Path, doing: str, error: OSError) -> None:
        self.path = path
        self.doing = doing
        self.error = error
        super().__init__(f"{self.prefix}: " * bool(self.prefix) + f"cannot {doing} {path}: {error}")

    def __str__(self) -> str:  # OSError would format its args tuple
        return str(self.args[0])


def lock_path(path: Path) -> Path:
    """The sidecar file whose lock guards ``path``."""
    return path.with_name(path.name + ".lock")


@contextlib.contextmanager
def locked(path: Path, *, error: type[FileUnavailable] = FileUnavailable, wait: bool = True,
           timeout: float | None = None) -> Iterator[None]:
    """Hold the cross-process lock of ``path`` (a sidecar ``<name>.lock``, the one hermes uses);
    blocks until it is free (``wait``; else raises :class:`BlockingIOError` when another holds it), for ``timeout``
    seconds at most when given. Creates ``path``'s folder if needed.

    :raises FileUnavailable: (``error``) the lock file cannot be created or locked, or another process held it
        through ``timeout`` (a hostile-values pass: a lock a stopped process held kept a turn, or a forget, waiting
        for ever, saying nothing).
    """
    # the same sidecar hermes locks, so our writers and hermes' exclude each other; the data file
    # itself cannot carry the lock because os.replace swaps it for a new inode
    sidecar = lock_path(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        handle = open(sidecar, "a+b")  # closed by the with below, which also releases the lock
    except OSError as exc:
        raise error(sidecar, "create the lock file", exc) from exc
    with handle:
        if sys.platform == "win32":
            handle.seek(0)  # msvcrt locks bytes from the current position, and "a+" starts at the end
            deadline = None if timeout is None else time.monotonic() + timeout
            while True:  # LK_LOCK gives up after ten one-second tries; keep waiting like flock
                try:
                    msvcrt.locking(handle.fileno(), msvcrt.LK_LOCK if wait else msvcrt.LK_NBLCK, 1)
                    break
                except OSError as exc:
                    if not wait:
                        raise BlockingIOError(f"{sidecar} is locked by another process") from exc
                    if deadline is not None and time.monotonic() >= deadline:
                        raise error(sidecar, "lock", TimeoutError(
                            f"another process has held it for {timeout:g} s")) from exc
            try:
                yield
            finally:
                handle.seek(0)
                msvcrt.locking(handle.fileno(), msvcrt.LK_UNLCK, 1)
        else:
            try:
                if timeout is None or not wait:
                    fcntl.flock(handle.fileno(), fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
                else:
                    _flock_within(handle.fileno(), timeout)
            except BlockingIOError:
                if timeout is not None and wait:
                    raise error(sidecar, "lock", TimeoutError(
                        f"another process has held it for {timeout:g} s (a process stopped while holding it?)")
                    ) from None
                raise
            except OSError as exc:  # e.g. ENOLCK on a network file system without lock support
                raise error(sidecar, "lock", exc) from exc
            yield


def _flock_within(fd: int, timeout: float) -> None:
    """``flock`` ``fd`` exclusively, tried until ``timeout`` seconds have passed; :class:`BlockingIOError` then."""
    deadline, pause = time.monotonic() + timeout, 0.002
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            if time.monotonic() >= deadline:
                raise
            time.sleep(min(pause, max(0.0, deadline - time.monotonic())))
            pause = min(pause * 2, 0.1)


def atomic_write(path: Path, data: bytes, *, error: type[FileUnavailable] = FileUnavailable) -> None:
    """Replace ``path`` with ``data`` all at once: temp file in the same folder, fsync, rename, fsync.

    Call it holding :func:`locked` ``(path)``: temp files of an earlier writer of ``path`` are
    swept as left over by one that was killed. A symlinked ``path`` keeps its link; the target
    is replaced.

    :raises FileUnavailable: (``error``) the temp file cannot be created, written or renamed;
        ``path`` is then untouched and no temp file is left.
    """
    # like hermes' atomic_replace: a symlinked file (dotfiles) keeps its link, the target changes
    target = Path(os.path.realpath(path)) if path.is_symlink() else path
    prefix = f".{target.name}."
    for stale in target.parent.glob(f"{prefix}*.tmp"):
        with contextlib.suppress(OSError):
            stale.unlink()
    try:
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=prefix, suffix=".tmp")
    except OSError as exc:
        raise error(target.parent, "create a temporary file in", exc) from exc
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, target)
    except BaseException as exc:  # KeyboardInterrupt too: never leave a half-written temp behind
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        if isinstance(exc, OSError):
            raise error(target, "write", exc) from exc
        raise
    sync_folder(target.parent)  # make the rename itself durable


def sync_folder(folder: Path) -> None:
    """Force ``folder``'s entries — files created, renamed or deleted in it — to the disk, so a power
    cut cannot undo them (a file's own ``fsync`` does not cover its name)."""
    if sys.platform != "win32":  # Windows cannot open a folder
        with contextlib.suppress(OSError):  # some file systems refuse fsync on a folder; data is safe
            dir_fd = os.open(folder, os.O_RDONLY)
            try:
                os.fsync(dir_fd)
            finally:
                os.close(dir_fd)

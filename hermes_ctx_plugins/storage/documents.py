"""Documents: a file's bytes at a path, read whole and rewritten whole under an exclusive lock — what
the ``file`` memory provider keeps MEMORY.md and USER.md in (:mod:`hermes_ctx_plugins.memory.file.store`).

:class:`Documents` is the interface; :func:`hermes_ctx_plugins.storage.open_documents` picks the
implementation ``ctx_plugins.storage`` chooses:

* :class:`FileDocuments` — the files themselves, under hermes' own sidecar lock (``MEMORY.md.lock``)
  and replaced atomically: hermes reads and writes the very same files. Every backend but
  PostgreSQL (SQLite, the default; and ``memory``: a copy kept only in the process would part ways
  with the files hermes' own memory tool and prompt read).
* :mod:`hermes_ctx_plugins.storage.postgres.documents` — one copy on the server that every worker
  of a fleet reads and updates, the file kept as a mirror of it on each worker.

A document that does not exist reads as ``b""``. Failures are the caller's ``error`` class (a
:class:`~hermes_ctx_plugins.storage.files.FileUnavailable`): a store passes its own, as with
:func:`~hermes_ctx_plugins.storage.files.locked`, so its callers catch one family.
"""

from __future__ import annotations

import abc
import contextlib
import errno
import os
import stat
from collections.abc import Callable
from pathlib import Path

from . import files
from .files import FileUnavailable

#: what :meth:`Documents.update` applies: the current bytes -> the new ones, or ``None`` to leave them
Change = Callable[[bytes], bytes | None]


#: the longest a change to a document file waits for its lock (hermes' writers hold it for milliseconds)
DOCUMENT_LOCK_SECONDS = 10.0


class Documents(abc.ABC):
    """Documents at paths; any thread of any process may call it."""

    #: whether a copy lives beyond this machine's files (then :meth:`forget` and
    #: :meth:`stored_under` reach it; for the files alone, the caller deletes and finds the files)
    shared = False

    def __init__(self, *, error: type[FileUnavailable] = FileUnavailable) -> None:
        self.error = error

    @abc.abstractmethod
    def read(self, path: Path) -> bytes:
        """The document at ``path`` now (``b""`` when there is none).

        :raises FileUnavailable: (``error``) it cannot be read.
        """

    @abc.abstractmethod
    def update(self, path: Path, change: Change) -> bytes:
        """Read-modify-write ``path`` exclusively: ``change`` gets the current bytes while every other
        writer of ``path`` — in any process, on any worker sharing the store, and hermes' own memory
        tool on this machine — waits; what it returns replaces them (``None``: left as they are).
        An exception from ``change`` leaves the document untouched and propagates.

        :returns: the document's bytes after the update.
        :raises FileUnavailable: (``error``) it cannot be read or written; nothing was changed.
        """

    @abc.abstractmethod
    def hold(self, path: Path) -> contextlib.AbstractContextManager[None]:
        """:meth:`update` for a writer that rewrites the file itself (hermes' own memory tool): while
        held, every other writer of ``path`` waits, the file at ``path`` is the current document, and
        what the file holds when the block ends is the new one. An exception from the block leaves
        the document as it was.

        :raises FileUnavailable: (``error``) it cannot be read or written; nothing was changed.
        """

    def forget(self, path: Path) -> bytes | None:
        """Delete the shared copy of ``path`` everywhere (every worker's mirror follows at its next
        read) and this machine's file; the bytes it had, ``None`` if there was no document.

        Takes ``path``'s lock itself: call it without holding it. The files alone have no shared
        copy: their owner deletes them (``None``).

        :raises FileUnavailable: (``error``) the shared copy cannot be reached; nothing was deleted.
        """
        return None

    def stored_under(self, folder: Path) -> list[Path]:
        """The paths under ``folder`` whose shared copy holds a document (none without one)."""
        return []

    def forgotten_since(self, path: Path, when: float) -> bool:
        """Whether the shared copy of ``path`` was forgotten at or after ``when`` (a ``time.time()``), on any
        worker; always ``False`` without a shared copy (forgetting there deletes every file at once).

        :raises FileUnavailable: (``error``) the shared copy cannot be reached.
        """
        return False


class FileDocuments(Documents):
    """The files themselves: today's MEMORY.md / USER.md, byte for byte, lock for lock."""

    def read(self, path: Path) -> bytes:
        try:
            with open(path, "rb", opener=_nonblocking) as fh:  # no lock: writers replace the file atomically
                if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):  # a FIFO or a device: reading could block
                    raise OSError(errno.EINVAL, "not a regular file")  # for ever, or never end (/dev/zero)
                return fh.read()
        except FileNotFoundError:  # no document yet, exactly like an empty file
            return b""
        except OSError as exc:  # a directory in its place, a file in place of the folder, permissions
            raise self.error(path, "read", exc) from exc

    def update(self, path: Path, change: Change) -> bytes:
        with self.hold(path):
            raw = self.read(path)
            new = change(raw)
            if new is None:
                return raw
            files.atomic_write(path, new, error=self.error)
            return new

    def hold(self, path: Path) -> contextlib.AbstractContextManager[None]:
        # hermes' own lock: the file is the document; waited for DOCUMENT_LOCK_SECONDS at most (a lock a stopped
        # process held kept a turn, and forget --user, waiting for ever and saying nothing: a hostile-values pass)
        return files.locked(path, error=self.error, timeout=DOCUMENT_LOCK_SECONDS)


def keep_copy(path: Path, raw: bytes, *, stamp: str, doing: str,
              error: type[FileUnavailable] = FileUnavailable) -> Path:
    """Save ``raw`` beside ``path`` as ``<name>.bak.<stamp>`` (then ``-1``, ``-2``, ...: an earlier copy
    is never overwritten), forced to the disk; where it went.

    :raises FileUnavailable: (``error``, naming ``doing``) it cannot be written; no partial copy is left.
    """
    backup, n = path.with_name(f"{path.name}.bak.{stamp}"), 1
    try:  # no wider than the file it copies: a private (0600) MEMORY.md must not leave a 0644 copy
        mode = stat.S_IMODE(os.stat(path).st_mode) & 0o666
    except OSError:
        mode = 0o600
    while True:
        try:  # O_EXCL: an earlier backup is never overwritten
            with open(os.open(backup, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode), "wb") as fh:
                fh.write(raw)
                fh.flush()
                os.fsync(fh.fileno())
            return backup
        except FileExistsError:
            backup, n = path.with_name(f"{path.name}.bak.{stamp}-{n}"), n + 1
        except OSError as exc:
            with contextlib.suppress(OSError):
                backup.unlink()
            raise error(backup, doing, exc) from exc


def _nonblocking(path: str, flags: int) -> int:
    """``os.open`` that does not wait for a FIFO's writer (the file is checked to be a regular one next)."""
    return os.open(path, flags | os.O_NONBLOCK)

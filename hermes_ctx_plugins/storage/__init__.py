"""Where the package keeps what it owns: one interface per store, one module per backend.

Callers (ctx-local, the archive, the host) open stores here and never import a backend::

    store = storage.open_memory(config, path)       # a MemoryBackend
    archive = storage.open_archive(config)          # an ArchiveBackend

``ctx_plugins.storage.backend`` names the backend; :data:`BACKENDS` maps each name to the module
that implements it. A backend module provides three functions — ``open_memory(path, *, config,
busy_timeout)``, ``memory_exists(path, *, config)`` and ``open_archive(path, *, config)`` — returning
implementations of the interfaces in :mod:`.base` (whose docstrings are the contract, and say what
``path`` means to a backend that keeps no files). A backend with connections beyond a store's own
adds ``release()``; one with a server to reach adds ``check(config)``, the ``(what, ok, detail)``
lines :func:`check` collects, and ``identity(config)``, which server :func:`identity` names. Backends
are imported when first chosen, so a backend's own dependencies (a database driver) are needed only by
those who choose it.

A new backend is a package ``storage/<name>/`` with those three functions, its name here and in
:data:`hermes_ctx_plugins.config.STORAGE_BACKENDS`, and a test class subclassing
:class:`hermes_ctx_plugins.testing.storage_contract.StorageContract`.
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from types import ModuleType
from typing import cast

from ..config import Config, hermes_home
from ..environment import under_home
from .base import (
    ArchiveBackend,
    ArchiveError,
    LocalStoreError,
    MemoryBackend,
    archive_unusable,
    is_store_failure,
    read_only_failure,
    side_files_advice,
    writable_file,
)
from .documents import Documents, FileDocuments
from .files import FileUnavailable
from .records import (
    ArchiveHit,
    Hit,
    Memory,
    Quarantined,
    Record,
    Scope,
    Stored,
    json_text,
    message_text,
    owner_of,
)

#: backend name (``ctx_plugins.storage.backend``) → the module implementing it
BACKENDS = {
    "sqlite": "hermes_ctx_plugins.storage.sqlite",
    "memory": "hermes_ctx_plugins.storage.inmemory",
    "postgres": "hermes_ctx_plugins.storage.postgres",
}

__all__ = [
    "BACKENDS",
    "ArchiveBackend",
    "ArchiveError",
    "ArchiveHit",
    "Hit",
    "LocalStoreError",
    "Memory",
    "MemoryBackend",
    "Quarantined",
    "Record",
    "Scope",
    "Stored",
    "archive_health",
    "archive_path",
    "archive_unusable",
    "backend",
    "backend_name",
    "check",
    "identity",
    "is_store_failure",
    "json_text",
    "memory_exists",
    "message_text",
    "on_server",
    "open_archive",
    "open_documents",
    "open_memory",
    "owner_of",
    "read_only_failure",
    "release",
    "side_files_advice",
    "writable_file",
]


def backend_name(config: Config, store: str = "") -> str:
    """The backend ``config`` chooses for ``store`` (``memory``, ``archive`` or ``documents``:
    ``ctx_plugins.storage.<store>``, else ``.backend``)."""
    settings = config.plugins.storage
    return (getattr(settings, store) if store else "") or settings.backend


def backend(config: Config, name: str | None = None, *, store: str = "") -> ModuleType:
    """The module of backend ``name``, by default the one ``config`` chooses for ``store`` (:func:`backend_name`);
    config validation already checked the name."""
    return importlib.import_module(BACKENDS[name or backend_name(config, store)])


def on_server(config: Config, store: str = "memory") -> bool:
    """Whether the backend ``config`` chooses for ``store`` keeps it on a server (its module tells an
    ``identity(config)``: :func:`identity`)."""
    return getattr(backend(config, store=store), "identity", None) is not None


def open_memory(config: Config, path: Path, *, busy_timeout: float = 2.0, read_only: bool = False) -> MemoryBackend:
    """ctx-local's memory store at ``path`` — a file path, for SQLite the file itself — created if
    needed (see *Locations* in :mod:`.base`).

    :param busy_timeout: seconds a call waits for another writer before failing with reason ``locked``.
    :param read_only: an existing store, read without writing anything, when the backend can (its optional
        ``open_memory_read_only``; a copy the user cannot write, which the ordinary opening refuses with reason
        ``read-only``); a backend without it opens it as usual.
    :raises LocalStoreError: the store cannot be opened.
    """
    chosen = backend(config, store="memory")
    opener = getattr(chosen, "open_memory_read_only", None) if read_only else None
    store: MemoryBackend = (opener or chosen.open_memory)(path, config=config, busy_timeout=busy_timeout)
    return store


def open_documents(config: Config, home: Path, *, error: type[FileUnavailable] = FileUnavailable) -> Documents:
    """Where the ``file`` provider of the hermes home ``home`` keeps MEMORY.md / USER.md
    (``ctx_plugins.storage.documents``, else ``.backend``): a backend package with an
    ``open_documents(home, *, config, error)`` (PostgreSQL) keeps one copy every worker shares, each
    worker's file a mirror of it; with any other the files are the documents, as hermes keeps them.
    Opening connects nothing. ``error``: the class failures are raised as (see :mod:`.documents`)."""
    opener = getattr(backend(config, store="documents"), "open_documents", None)
    if opener is None:
        return FileDocuments(error=error)
    documents: Documents = opener(home, config=config, error=error)
    return documents


def release() -> None:
    """Close the connections every backend loaded in this process keeps open beyond a store's own
    (a server backend's pools); the next use opens new ones. For tests and processes about to exit."""
    for name in BACKENDS.values():
        module = sys.modules.get(name)
        if module is not None and hasattr(module, "release"):
            module.release()


def check(config: Config) -> list[tuple[str, bool, str]]:
    """What ``hermes-ctx doctor`` reports of the backends ``config`` chooses for the stores:
    ``(what, ok, detail)`` from each backend module that has a ``check(config)`` (one with a server
    to reach), asked once however many stores it holds, ``what`` naming the backend and its stores.
    A backend of files or of this process has nothing to check: no lines. Never raises for a store."""
    return _asked(config, "check")


def configured(config: Config) -> list[tuple[str, bool, str]]:
    """What :func:`check` reports that needs no server: from each backend module with a ``configured(config)`` (a
    server backend: whether one is named at all), for ``hermes-ctx doctor --no-probe``. Never raises for a store."""
    return _asked(config, "configured")


def _asked(config: Config, function: str) -> list[tuple[str, bool, str]]:
    """The lines of ``function(config)`` of each backend module ``config`` chooses that has it, once a backend."""
    settings = config.plugins.storage
    held: dict[str, list[str]] = {}
    for store in ("memory", "archive", "documents"):
        held.setdefault(getattr(settings, store) or settings.backend, []).append(store)
    lines = []
    for name, stores in held.items():
        asked = getattr(backend(config, name), function, None)
        if asked is not None:
            lines += [(f"{name} {what} ({', '.join(stores)})", ok, detail) for what, ok, detail in asked(config)]
    return lines


def identity(config: Config, store: str = "memory") -> str:
    """Which store ``config`` chooses for ``store``, as text equal exactly for the same one: the backend's name and,
    for a server backend (its module's ``identity(config)``), a digest of the server and schema it names (never the
    connection string itself, which may hold a password). What ``storage migrate`` keys what it copied by."""
    name = backend_name(config, store)
    told = getattr(backend(config, name), "identity", None)
    return f"{name}:{told(config)}" if told is not None else name


def memory_exists(config: Config, path: Path) -> bool:
    """Whether a memory store was ever created at ``path`` — :func:`open_memory` creates one, even
    if nothing is written to it (checking creates nothing)."""
    return bool(backend(config, store="memory").memory_exists(path, config=config))


def memory_problem(config: Config, path: Path) -> str | None:
    """Why ctx-local's memory store at ``path`` cannot be used, read without writing anything (``hermes-ctx
    doctor``); ``None`` when it can, does not exist yet, or its backend has no such check (a server's is
    :func:`check`'s)."""
    problem = getattr(backend(config, store="memory"), "memory_problem", None)
    return None if problem is None else cast(str | None, problem(path, config=config))


def archive_path(config: Config) -> Path:
    """Where the archive is: ``ctx_plugins.archive.path`` (relative: to ``$HERMES_HOME``), default
    ``$HERMES_HOME/ctx_archive.db``."""
    path = config.plugins.archive.path
    return under_home(path) if path else hermes_home() / "ctx_archive.db"


def archive_health(config: Config) -> tuple[bool, str]:
    """What ``hermes-ctx doctor`` says of the archive ``config`` names: ``(ok, detail)``. Its file (a file backend):
    there yet, its size, whether this user can write it (and its ``-wal`` / ``-shm``: left by another user, they fail
    every write), whether it is on; compactions waiting beside it in its spool (the archive could not take them: a
    read-only or full disk) and any it set aside for good. Not ok: it is on and cannot be written or created, or
    compactions wait while it cannot take them, or its spool cannot be read. Reads nothing of the store itself and
    takes no lock (a home the user may only read)."""
    from .spool import Spool, spool_path

    settings, path = config.plugins.archive, archive_path(config)
    parts: list[str] = []
    if on_server(config, "archive"):
        stuck = False
        parts.append(f"{backend_name(config, 'archive')}: the rows of {path}")
    else:
        try:
            stuck = _archive_file(path, parts)
        except OSError as exc:  # its folder cannot be entered
            stuck = True
            parts.append(f"{path} cannot be read by this user ({exc})")
    if not settings.enabled:
        parts.append("off (ctx_plugins.archive.enabled: false): nothing more is archived")
    spool = Spool(spool_path(path))
    unread = False
    try:
        waiting = spool.count(lock=False) if spool.pending() else 0
        if waiting:
            parts.append(f"{waiting} compaction(s) wait in {spool.where()}, "
                         + ("imported at the archive's next write" if not stuck else "until the archive can take them"))
        if spool.rejected.exists():
            parts.append(f"compactions it could never take are set aside in {spool.rejected}")
    except OSError as exc:
        unread, waiting = True, 0
        parts.append(f"its spool {spool.path} cannot be read ({exc})")
    return not ((stuck and (settings.enabled or waiting)) or unread), "; ".join(parts)


def _archive_file(path: Path, parts: list[str]) -> bool:
    """:func:`archive_health` of an archive file at ``path``: what is said of it appended to ``parts``; whether nothing
    compaction removes can be stored there."""
    import os

    stuck = False
    if path.is_dir():
        stuck = True
        parts.append(f"{path} is a folder, not an archive file: set ctx_plugins.archive.path to a file")
    elif not path.exists():
        folder = next((p for p in path.parents if p.exists()), path.parent)
        if os.access(folder, os.W_OK | os.X_OK):
            parts.append(f"no archive yet at {path} (nothing compacted)")
        else:
            stuck = True
            parts.append(f"no archive yet at {path}, and this user cannot create it ({folder} cannot be written)")
    else:
        size = sum(p.stat().st_size for p in path.parent.glob(f"{path.name}*") if p.is_file()) / 1e6
        parts.append(f"{path}: {size:.1f} MB")
        others = [p.name for p in (Path(f"{path}-wal"), Path(f"{path}-shm")) if p.exists() and not os.access(
            p, os.R_OK | os.W_OK)]
        if not (os.access(path, os.R_OK | os.W_OK) and os.access(path.parent, os.W_OK | os.X_OK)):
            stuck = True
            parts.append("it cannot be written by this user (check the file's and its folder's permissions; archive "
                         "search/show/stats read it meanwhile)")
        elif others:
            stuck = True
            parts.append(f"{side_files_advice(others)} (every write fails until then)")
    return stuck


def open_archive(config: Config, *, backend_name: str | None = None, read_only: bool = False) -> ArchiveBackend:
    """The archive ``config`` names (opened on first use: opening it creates nothing), in the
    backend ``config`` chooses or ``backend_name`` (``"memory"`` for one that keeps nothing); ``read_only``: an
    existing one read without writing anything, when the backend can (its optional ``open_archive_read_only``)."""
    chosen = backend(config, backend_name, store="archive")
    opener = getattr(chosen, "open_archive_read_only", None) if read_only else None
    archive: ArchiveBackend = (opener or chosen.open_archive)(archive_path(config), config=config)
    return archive

"""Where the package keeps what it owns: one interface per store, one module per backend.

Callers (ctx-local, the archive, the host) open stores here and never import a backend::

    store = storage.open_memory(config, path)       # a MemoryBackend
    archive = storage.open_archive(config)          # an ArchiveBackend

``ctx_plugins.storage.backend`` names the backend; :data:`BACKENDS` maps each name to the module
that implements it. A backend module provides three functions — ``open_memory(path, *, config,
busy_timeout)``, ``memory_exists(path, *, config)`` and ``open_archive(path, *, config)`` — returning
implementations of the interfaces in :mod:`.base` (whose docstrings are the contract, and say what
``path`` means to a backend that keeps no files). Backends are imported when first chosen, so a
backend's own dependencies (a database driver) are needed only by those who choose it.

A new backend is a package ``storage/<name>/`` with those three functions, its name here and in
:data:`hermes_ctx_plugins.config.STORAGE_BACKENDS`, and a test class subclassing
:class:`hermes_ctx_plugins.testing.storage_contract.StorageContract`.
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from types import ModuleType

from ..config import Config, hermes_home
from .base import ArchiveBackend, ArchiveError, LocalStoreError, MemoryBackend, is_store_failure
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
    "BACKENDS", "ArchiveBackend", "ArchiveError", "ArchiveHit", "Hit", "LocalStoreError", "Memory", "MemoryBackend",
    "Quarantined", "Record", "Scope", "Stored", "archive_path", "backend", "is_store_failure", "json_text",
    "memory_exists", "message_text", "open_archive", "open_memory", "owner_of", "release",
]


def backend(config: Config, name: str | None = None, *, store: str = "") -> ModuleType:
    """The module of backend ``name``, by default the one ``config`` chooses for ``store``
    (``memory`` or ``archive``: ``ctx_plugins.storage.<store>``, else ``.backend``); config
    validation already checked the name."""
    settings = config.plugins.storage
    chosen = name or (getattr(settings, store) if store else "") or settings.backend
    return importlib.import_module(BACKENDS[chosen])


def open_memory(config: Config, path: Path, *, busy_timeout: float = 2.0) -> MemoryBackend:
    """ctx-local's memory store at ``path`` — a file path, for SQLite the file itself — created if
    needed (see *Locations* in :mod:`.base`).

    :param busy_timeout: seconds a call waits for another writer before failing with reason ``locked``.
    :raises LocalStoreError: the store cannot be opened.
    """
    store: MemoryBackend = backend(config, store="memory").open_memory(path, config=config, busy_timeout=busy_timeout)
    return store


def release() -> None:
    """Close the connections every backend loaded in this process keeps open beyond a store's own
    (a server backend's pools); the next use opens new ones. For tests and processes about to exit."""
    for name in BACKENDS.values():
        module = sys.modules.get(name)
        if module is not None and hasattr(module, "release"):
            module.release()


def memory_exists(config: Config, path: Path) -> bool:
    """Whether a memory store was ever created at ``path`` — :func:`open_memory` creates one, even
    if nothing is written to it (checking creates nothing)."""
    return bool(backend(config, store="memory").memory_exists(path, config=config))


def archive_path(config: Config) -> Path:
    """Where the archive is: ``ctx_plugins.archive.path``, default ``$HERMES_HOME/ctx_archive.db``."""
    path = config.plugins.archive.path
    return Path(path).expanduser() if path else hermes_home() / "ctx_archive.db"


def open_archive(config: Config, *, backend_name: str | None = None) -> ArchiveBackend:
    """The archive ``config`` names (opened on first use: opening it creates nothing), in the
    backend ``config`` chooses or ``backend_name`` (``"memory"`` for one that keeps nothing)."""
    chosen = backend(config, backend_name, store="archive")
    archive: ArchiveBackend = chosen.open_archive(archive_path(config), config=config)
    return archive

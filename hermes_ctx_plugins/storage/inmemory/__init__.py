"""The in-memory backend (``ctx_plugins.storage.backend: memory``): both stores in Python
dictionaries, for tests and throw-away agents. Nothing survives the process.

Every store opened at the same location in one process shares one set of data (as connections to one
SQLite file do), so ctx-local's reader, its tool writer and its queue see the same memories, and a
provider started again after ``shutdown`` finds them still there. Searches rank and quote as
:mod:`hermes_ctx_plugins.storage.ranking` defines (what SQLite's FTS5 computes natively), over the
same words, so results order as they do there. Each method
holds the location's lock for its whole run: writes are all or nothing.

* :mod:`.memory` — ctx-local's memories; :mod:`.archive` — the archive;
* :mod:`.shared` — the data of every location in this process, and how their size is counted.
"""

from __future__ import annotations

from pathlib import Path

from ...config import Config
from .archive import InMemoryArchive
from .memory import InMemoryMemory, MemoryData
from .shared import Shared

__all__ = ["InMemoryArchive", "InMemoryMemory", "memory_exists", "open_archive", "open_memory"]


def open_memory(path: Path, *, config: Config, busy_timeout: float) -> InMemoryMemory:
    return InMemoryMemory(path)


def memory_exists(path: Path, *, config: Config) -> bool:
    return Shared.exists(path, MemoryData)


def open_archive(path: Path, *, config: Config) -> InMemoryArchive:
    settings = config.plugins.archive
    return InMemoryArchive(path, retention_days=settings.retention_days, max_megabytes=settings.max_megabytes)

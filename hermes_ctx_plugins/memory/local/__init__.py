"""``ctx-local``: the embedded default long-term memory — one SQLite file, no server, no network.

* :mod:`.provider` — the :class:`LocalProvider` hermes talks to, its options and tools;
* :mod:`.arguments` — the model's tool arguments, checked against the tools' own schemas;
* :mod:`.queue` — the durable, crash-safe write-behind queue between ``sync_turn`` and the store;
* :mod:`.store` — the SQLite schema (WAL, FTS5 with BM25), scoped search, forgetting, quarantine;
* :mod:`.query` — index and query normalisation (stemming, CJK bigrams, stop words, safe FTS5);
* :mod:`.recall` — ranking (relevance, recency, scope), optional re-ranking, the budgeted block.
"""

from __future__ import annotations

from ...storage.sqlite.memory import LocalStore, LocalStoreError
from .provider import LocalOptions, LocalProvider

__all__ = ["LocalOptions", "LocalProvider", "LocalStore", "LocalStoreError"]

"""``ctx-local``: the embedded default long-term memory — no server, no network; its rows live in the
storage backend (:mod:`hermes_ctx_plugins.storage`: one SQLite file by default).

* :mod:`.provider` — the :class:`LocalProvider` hermes talks to, its options and tools;
* :mod:`.arguments` — the model's tool arguments, checked against the tools' own schemas;
* :mod:`.queue` — its consumer of the one durable write-behind queue (:mod:`hermes_ctx_plugins.storage.queue`);
  the index and query normalisation every backend shares is :mod:`hermes_ctx_plugins.storage.text`;
* :mod:`.recall` — ranking (relevance, recency, scope), optional re-ranking, the budgeted block;
* :mod:`.cli` — ``hermes-ctx memory search|stats|export|forget``.
"""

from __future__ import annotations

from ...storage import LocalStoreError
from .provider import LocalOptions, LocalProvider

__all__ = ["LocalOptions", "LocalProvider", "LocalStoreError"]

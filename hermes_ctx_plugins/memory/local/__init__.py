"""``ctx-local``: the embedded default long-term memory — no server, no network; its rows live in the
storage backend (:mod:`hermes_ctx_plugins.storage`: one SQLite file by default).

* :mod:`.provider` — the :class:`LocalProvider` hermes talks to and its tools; :mod:`.options` its options;
* :mod:`.arguments` — the model's tool arguments, checked against the tools' own schemas;
* :mod:`.queue` — its consumer of the one durable write-behind queue (:mod:`hermes_ctx_plugins.storage.queue`);
  the index and query normalisation every backend shares is :mod:`hermes_ctx_plugins.storage.text`;
* :mod:`.recall` — ranking (relevance, recency, scope), relevance feedback, the budgeted block;
* :mod:`.dense` — the optional dense path (embedding in the background, the per-owner index, fusion with BM25);
* :mod:`.cli` — ``hermes-ctx memory search|stats|export|forget``.
"""

from __future__ import annotations

from ...storage import LocalStoreError
from .options import LocalOptions
from .provider import LocalProvider

__all__ = ["LocalOptions", "LocalProvider", "LocalStoreError"]

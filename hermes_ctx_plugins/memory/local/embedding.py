"""ctx-local's embedders: moved to :mod:`hermes_ctx_plugins.embedding`, which the archive's hybrid
search shares; the names stay importable from here."""

from __future__ import annotations

from ...embedding import (
    E5_SMALL,
    EMBED_CHARS,
    INSTALL,
    OPTION,
    E5Small,
    Embedder,
    FunctionEmbedder,
    check_spec,
    clean,
    from_bytes,
    load,
    load_function,
    normalised,
    numpy,
    to_bytes,
)

__all__ = ["E5_SMALL", "EMBED_CHARS", "INSTALL", "OPTION", "E5Small", "Embedder", "FunctionEmbedder",
           "check_spec", "clean", "from_bytes", "load", "load_function", "normalised", "numpy", "to_bytes"]

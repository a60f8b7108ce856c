"""Remote providers (``ctx-mem0``, ``ctx-honcho``): a shared base, one write-behind queue, one module per service."""

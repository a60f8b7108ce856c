"""Remote providers (``ctx-mem0``, ``ctx-honcho``), in layers: :mod:`.options` (what every one is
configured with), :mod:`.text` (what may be sent), :mod:`.service` (availability, circuit breaker, ids,
bounded waits), :mod:`.base` (what hermes sees: queue, recall, tools, forgetting, status) with
:mod:`.queue` (its durable write queue); then one module per service."""

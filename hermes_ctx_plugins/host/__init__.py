"""The parts of the plugin host, one seam per module, combined in :class:`~hermes_ctx_plugins.manager.Host`.

* :mod:`.plugins` — loading plugins and calling their lifecycle hooks (an installed plugin's only once
  opted in): the only code that talks to pluggy;
* :mod:`.providers` — the memory fan-out: activating providers and telling each of them, isolated;
* :mod:`.compaction` — running a strategy with its fallback and the archive around it.

Each part is a mixin class that names, at its top, what it uses of the rest of the host. Import the
host from :mod:`hermes_ctx_plugins.manager`, never from here.
"""

from __future__ import annotations


def owner_key(kind: str, name: str) -> str:
    """The key the host's isolator counts failures under: ``plugin:<name>``, ``compressor:<name>``,
    ``memory:<name>``."""
    return f"{kind}:{name}"

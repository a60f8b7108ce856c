"""The parts of the plugin host, one seam per module, combined in :class:`~hermes_ctx_plugins.manager.Host`.

* :mod:`.plugins` — loading plugins and calling their lifecycle hooks (an installed plugin's only once
  opted in): the only code that talks to pluggy;
* :mod:`.providers` — the memory fan-out: activating providers and telling each of them, isolated;
* :mod:`.compaction` — running a strategy with its fallback and the archive around it.

Each part is a mixin class that names, at its top, what it uses of the rest of the host. Import the
host from :mod:`hermes_ctx_plugins.manager`, never from here.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

log = logging.getLogger("hermes_ctx_plugins")


def owner_key(kind: str, name: str) -> str:
    """The key the host's isolator counts failures under: ``plugin:<name>``, ``compressor:<name>``,
    ``memory:<name>``."""
    return f"{kind}:{name}"


#: the most characters a memory provider that is not built in may add to a prompt in one recall (built-in
#: ones keep their own token budgets); what is over it is cut, saying so
MAX_RECALL_CHARS = 16_000


def foreign_code(obj: object) -> bool:
    """Whether ``obj`` is an instance of a class defined outside this package (another plugin's)."""
    return type(obj).__module__.split(".", 1)[0] != __name__.split(".", 1)[0]


def recalled(value: object, *, owner: str, foreign: bool, fail: Callable[[str, BaseException], None]) -> str:
    """What a provider's ``prefetch`` returned, as the text to add to the prompt: ``""`` for nothing, and
    for anything that is not text (counted as ``owner``'s failure through ``fail``); a foreign
    provider's text cut to :data:`MAX_RECALL_CHARS`, saying so in the text and the log."""
    if value is None or value == "":
        return ""
    if not isinstance(value, str):
        fail(owner, TypeError(f"prefetch returned {type(value).__name__} ({value!r:.60}), not text; "
                              "nothing of it was recalled"))
        return ""
    if foreign and len(value) > MAX_RECALL_CHARS:
        log.warning("%s recalled %d characters; only the first %d go into the prompt", owner, len(value),
                    MAX_RECALL_CHARS)
        return (value[:MAX_RECALL_CHARS]
                + f"\n[… recall cut: {len(value) - MAX_RECALL_CHARS:,} more characters left out]")
    return value

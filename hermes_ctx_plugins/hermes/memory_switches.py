"""hermes' memory switches, applied to our providers inside hermes (hermes' own behaviour is the rule).

What hermes 0.19.0 does with its switches (``agent/agent_init.py``, ``hermes_cli/main.py``):

* ``memory.provider`` names its one external provider; ``hermes memory off`` sets it to ``""``
  ("built-in only"). hermes' memory manager drives the provider it names — one of ours through its
  shim (:mod:`.memory`) — and no other external one.
* ``memory.memory_enabled`` / ``memory.user_profile_enabled`` switch its built-in MEMORY.md / USER.md
  (the prompt block; its ``memory`` tool writes either file while the store exists, so our ``file``
  gate refuses a write to the switched-off one: ``FileProvider.gate``).
* ``AIAgent(skip_memory=True)`` builds an agent without any memory: no store, no memory manager.

So inside hermes, for a session hermes' hooks report (not one a Bridge bound: a Bridge drives its
deployment's providers itself, its agents built with ``skip_memory=True`` on purpose):

* an **external** provider of ours (ctx-local, ctx-mem0, ctx-honcho, a third party's) recalls and
  stores only through hermes' memory manager, i.e. only when ``memory.provider`` names it; listing
  it in ``ctx_plugins.memory.providers`` alone does not run it inside hermes (it does for the
  ``hermes-ctx`` command and the Python API);
* a provider that is **not external** (``file``) is hermes' built-in memory's companion and runs
  through our hooks as configured, within ``memory_enabled`` / ``user_profile_enabled``;
* an agent **without memory** (``skip_memory=True``; hermes keeps no such attribute, and such an agent
  has neither a memory store nor a memory manager, which is also what an agent with every memory
  switch off looks like) gets none of ours at all. The agent of a session is known once our context
  engine has met it (:meth:`Runtime.agent_for <hermes_ctx_plugins.hermes.runtime.Runtime.agent_for>`);
  without our engine (``context.engine`` not ``hermes-ctx``) it is not, and the switches above still
  hold.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..manager import Host


def runs_no_memory(agent: Any) -> bool:
    """Whether hermes built ``agent`` without any memory (``skip_memory=True``, or every switch off)."""
    return getattr(agent, "_memory_store", None) is None and getattr(agent, "_memory_manager", None) is None


def left_to_hermes(host: Host, agent: Any | None) -> set[str]:
    """The active providers of ``host`` our hooks must not drive for a session of hermes' own
    (``agent``: its live agent, ``None`` when unknown): every external one — hermes' memory manager
    drives the one ``memory.provider`` names, and runs no other — and every one when the agent runs
    no memory."""
    if agent is not None and runs_no_memory(agent):
        return {p.name for p in host.memory_providers}
    return {p.name for p in host.memory_providers if p.external}

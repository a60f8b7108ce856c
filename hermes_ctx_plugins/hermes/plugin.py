"""The module hermes loads through our ``hermes_agent.plugins`` entry point.

hermes calls :func:`register` once per process (after ``discover_plugins``). Select our engine with
``context.engine: hermes-ctx``; enable the plugin with ``plugins.enabled: [hermes-ctx]``.
"""

from __future__ import annotations

import logging
from typing import Any

from ..config import hermes_home
from ..errors import HermesCtxError
from ..manager import Host, load_host
from ..runstate import RunningState
from .engine import HermesCtxEngine
from .hooks import HookBridge
from .memory import write_shims
from .memory_gate import defer_reviews_to_hermes, install

log = logging.getLogger("hermes_ctx_plugins.hermes")

#: The host of the last successful registration (for ``hermes-ctx`` and tests in the same process).
HOST: Host | None = None


def register(ctx: Any) -> None:
    """Register our context engine and lifecycle hooks with hermes.

    A broken config never breaks hermes: the error is logged (naming the key, the value and what is
    valid) and hermes runs on without us.
    """
    global HOST
    state = RunningState(hermes_home())
    try:
        host = load_host(status_callback=state.on_event)
    except HermesCtxError as exc:
        log.error("hermes-ctx-plugins is not active: %s", exc)
        return
    HOST = state.host = host
    state.write()  # `hermes-ctx plugins` in another shell shows what this process runs
    ctx.register_context_engine(HermesCtxEngine(host))
    hooks = HookBridge(host)
    for hook_name, callback in hooks.callbacks().items():
        ctx.register_hook(hook_name, callback)
    defer_reviews_to_hermes(host)
    # hermes' own memory tool writes MEMORY.md / USER.md: with `file` active it passes our gates
    install(ctx, hooks)
    # hermes discovers memory providers only as directories: give ours a shim there.
    write_shims(hermes_home(), [r.name for r in host.registry if r.kind == "memory" and r.external])


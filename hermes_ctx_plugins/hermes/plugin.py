"""The module hermes loads through our ``hermes_agent.plugins`` entry point.

hermes calls :func:`register` once per plugin discovery (``discover_plugins(force=True)`` runs it
again). Select our engine with ``context.engine: hermes-ctx``; enable the plugin with
``plugins.enabled: [hermes-ctx]``.
"""

from __future__ import annotations

import logging
import sys
from typing import Any

from ..config import hermes_home
from ..errors import HermesCtxError
from ..manager import load_host
from ..runstate import RunningState
from . import commands
from .engine import HermesCtxEngine
from .memory import write_shims
from .memory_gate import defer_reviews_to_hermes, install
from .runtime import Runtime

log = logging.getLogger("hermes_ctx_plugins.hermes")


def register(ctx: Any) -> None:
    """Build this registration's :class:`~hermes_ctx_plugins.hermes.runtime.Runtime` and hand hermes
    its context engine, hooks and memory gates; the runtime lives as long as hermes keeps them (find
    it with :func:`~hermes_ctx_plugins.hermes.runtime.installed`).

    A broken config never breaks hermes: the error is logged (naming the key, the value and what is
    valid) and hermes runs on without us.
    """
    commands.register_cli(ctx)  # `hermes ctx …`, even with a broken config: `hermes ctx doctor` says why
    state = RunningState(hermes_home())
    try:
        host = load_host(status_callback=state.on_event)
    except HermesCtxError as exc:
        log.error("hermes-ctx-plugins is not active: %s", exc)
        # hermes' log alone is easy to miss: compaction and memory of ours are off until this is fixed
        print(f"hermes-ctx-plugins is not active (hermes runs without our engine and memory): {exc}\n"
              "  `hermes ctx doctor` says more", file=sys.stderr)
        return
    state.host = host
    # published once a conversation runs here (`hermes-ctx plugins` in another shell shows it), not now:
    # hermes loads us for every command, and `hermes ctx plugins` must not overwrite a running hermes' state
    runtime = Runtime(host, publish=state.write)
    state.forward = runtime.agents.on_event  # and to hermes' status_callback of the agent concerned
    ctx.register_context_engine(HermesCtxEngine(host, runtime))
    for hook_name, callback in runtime.hooks.callbacks().items():
        ctx.register_hook(hook_name, callback)
    commands.register_slash(ctx, runtime)  # `/ctx` in a conversation
    defer_reviews_to_hermes(host)
    # hermes' own memory tool writes MEMORY.md / USER.md: with `file` active it passes our gates
    install(ctx, runtime)
    # hermes discovers memory providers only as directories: give ours a shim there.
    write_shims(hermes_home(), [r.name for r in host.registry if r.kind == "memory" and r.external])

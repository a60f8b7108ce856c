"""The module hermes loads through our ``hermes_agent.plugins`` entry point.

hermes calls :func:`register` once per plugin discovery (``discover_plugins(force=True)`` runs it
again), at every start, for commands that never run an agent too. Select our engine with
``context.engine: hermes-ctx``; enable the plugin with ``plugins.enabled: [hermes-ctx]``.

Registering costs hermes almost nothing: the host (every strategy and provider, the installed plugins)
is built on first use — an agent's engine, a hook, ``/ctx``, a memory shim — unless the config changed
since it was last found usable (:mod:`.checked`): then it is built here, as the check, so that a broken
config is said when hermes starts and hermes runs without us.
"""

from __future__ import annotations

import logging
import sys
import types
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..environment import hermes_home
from ..errors import ConfigError, HermesCtxError, ProviderLimitError, UnknownPluginError
from ..isolation import StatusEvent
from . import checked, commands
from .deferred import DeferredEngine
from .memory_gate import defer_reviews_to_hermes, install
from .runtime import Runtime, manager_sessions
from .shims import BUNDLED_MEMORY_PROVIDERS, holds_shim, shim_path, write_shims

if TYPE_CHECKING:
    from ..manager import Host
    from ..runstate import RunningState

log = logging.getLogger("hermes_ctx_plugins.hermes")


def register(ctx: Any) -> None:
    """Hand hermes our context engine, hooks, commands and memory gates, for one
    :class:`~hermes_ctx_plugins.hermes.runtime.Runtime` (find it with
    :func:`~hermes_ctx_plugins.hermes.runtime.installed`).

    A broken config never breaks hermes: the error is logged and printed (naming the key, the value and
    what is valid) and hermes runs on without us. Any other failure here (a bug of ours, a file we cannot
    read) is printed the same way, not only logged, and left to hermes, which records the plugin as failed.
    """
    try:
        _register(ctx)
    except Exception as exc:
        log.exception("hermes-ctx-plugins could not register")
        print(f"hermes-ctx-plugins is not active (hermes runs without our engine and memory): could not register: "
              f"{type(exc).__name__}: {exc}\n  `hermes ctx doctor` says more; hermes' agent.log has the traceback",
              file=sys.stderr)
        raise


def _register(ctx: Any) -> None:
    commands.register_cli(ctx)  # `hermes ctx …`, even with a broken config: `hermes ctx doctor` says why
    home = hermes_home()
    start = _Start(home)
    manager = getattr(ctx, "_manager", None)  # hermes' PluginContext: the manager whose hooks these are
    sessions = manager_sessions(manager) if manager is not None else None
    runtime = Runtime(build=start.build, publish=start.publish, sessions=sessions)
    start.runtime = runtime
    key = checked.key(home)  # taken before the check: an edit while it runs is checked at the next start
    known = checked.recall(home, key)
    if known is None:  # the config changed since it was last found usable: check it now
        try:
            host = runtime.host
        except HermesCtxError:
            return
        known = checked.Checked(shims=_external_memory(host))
        checked.remember(home, key, known)
    ctx.register_context_engine(DeferredEngine(runtime))
    for hook_name, callback in runtime.hooks.callbacks().items():
        ctx.register_hook(hook_name, callback)
    commands.register_slash(ctx, runtime)  # `/ctx` in a conversation
    # hermes' own memory tool writes MEMORY.md / USER.md: whenever `file` is active (in the config as it is
    # when the host is built, at the top or in any deployment, or in a Bridge's own config) it passes our
    # gates. Registered always: they pass straight through otherwise, and execution middleware costs hermes
    # no copy of the request.
    install(ctx, runtime)
    # hermes discovers memory providers only as directories: give ours a shim there.
    write_shims(home, known.shims)
    _load_shims(home, known.shims)


def _load_shims(home: Path, names: Iterable[str]) -> None:
    """Put our shim of the memory provider hermes' config selects into ``sys.modules`` whole, now, at plugin
    discovery, under the name hermes' loader gives it. That loader puts a provider's module in ``sys.modules`` before
    it runs it, and a second thread takes that half-run module for a loaded one: agents built at once on a fresh
    gateway (its API server) got no memory provider, and their first turns were neither recalled nor stored (a
    red-team pass: 2-3 of 8 concurrent first requests). hermes reuses a module it finds there; ours holds what the
    shim's two lines do, with the import of our adapter left to its first use (so registering stays light). Nothing
    for a provider that is not ours or not selected (a user's own provider under one of our names is hermes')."""
    try:
        from hermes_cli.config import load_config_readonly  # type: ignore[import-untyped]  # hermes ships no stubs
        from plugins.memory import _USER_NAMESPACE  # type: ignore[import-untyped]

        memory = load_config_readonly().get("memory")
        chosen = memory.get("provider") if isinstance(memory, dict) else None
    except Exception:  # not inside hermes (or its layout changed): nothing to do
        return
    if not isinstance(chosen, str) or chosen not in set(names) - BUNDLED_MEMORY_PROVIDERS:
        return
    path, module_name = shim_path(home, chosen), f"{_USER_NAMESPACE}.{chosen}"
    loaded = sys.modules.get(module_name)
    if (loaded is None or not getattr(loaded, "__file__", None)) and holds_shim(path, chosen) is True:
        module = types.ModuleType(module_name, f"hermes-ctx-plugins MemoryProvider shim for {chosen!r}")
        module.__file__, module.__path__ = str(path), [str(path.parent)]
        module.register = lazy_register(chosen)  # type: ignore[attr-defined]
        sys.modules[module_name] = module


def lazy_register(name: str) -> Callable[[Any], None]:
    """What the shim's ``register`` is (:func:`~hermes_ctx_plugins.hermes.memory.shim_register`), importing our
    adapter only when hermes calls it (light to hold: see :func:`_load_shims`)."""

    def register(ctx: Any) -> None:
        from .memory import shim_register

        shim_register(name)(ctx)

    return register


def _memory_lost(host: Host) -> list[str]:
    """hermes' ``memory.provider`` naming a provider no plugin registered while one failed to load: said (logged,
    a ``plugin-failed`` event) as a strategy that is missing so is. hermes runs without a memory provider then,
    and only its log said so (a third-party author's walk-through)."""
    chosen = host.config.memory.provider
    if not chosen or not host.load_failures or chosen in BUNDLED_MEMORY_PROVIDERS or any(
            r.kind == "memory" and r.name == chosen for r in host.registry) or _hermes_own(chosen):
        return []
    message = (f"hermes' memory.provider {chosen!r} is no registered memory provider — possibly from a plugin that "
               f"failed to load ({', '.join(sorted(host.load_failures))}); hermes runs without a memory provider, "
               "and no turn is stored")
    log.error("%s", message)
    host.forward_status(StatusEvent(kind="plugin-failed", source=f"memory:{chosen}", message=message))
    return [message]


def _memory_unavailable(host: Host) -> list[str]:
    """hermes' ``memory.provider`` naming one of our providers that cannot run here (its package not installed, no
    key): hermes asks ``is_available()`` and silently leaves it out, so memory was off and no turn stored with
    nothing said in the terminal or hermes' log (a newcomer walk). Said once, at the start, as a config error is.
    Another plugin's provider is its own to explain (and its check may not be bounded here)."""
    from ..host import foreign_code

    chosen = host.config.memory.provider
    if not chosen or not any(r.kind == "memory" and r.name == chosen and r.enabled for r in host.plugins()):
        return []
    try:
        provider = host.provider_instance(chosen)
        # what hermes asks (cheap: packages, keys); why, only then: ctx-local's availability() reads its store's
        # pages for up to 2 s, and it is always available to hermes (turns queue while the store is broken)
        if foreign_code(provider) or provider.is_available():
            return []
        explained = getattr(provider, "availability", None)
        usable, why = explained() if callable(explained) else (False, "")
    except HermesCtxError as exc:  # its options are invalid: unavailable, said why
        usable, why = False, str(exc)
    if usable:
        return []
    message = (f"hermes' memory.provider {chosen!r} cannot run here{': ' + why if why else ''}; hermes' own agents "
               "run without it, and no turn of theirs is stored, until that is fixed (a Bridge's deployments run "
               "the providers they select)")
    log.error("%s", message)
    host.forward_status(StatusEvent(kind="plugin-failed", source=f"memory:{chosen}", message=message))
    return [message]


def _hermes_own(name: str) -> bool:
    """Whether hermes finds a memory provider ``name`` of its own (bundled, or in ``$HERMES_HOME/plugins``), not a
    shim of ours: then it is none of our business (a red-team pass: a false alarm for a user's own provider)."""
    try:
        from plugins.memory import find_provider_dir  # type: ignore[import-untyped]  # hermes ships no stubs

        found = find_provider_dir(name)
        return found is not None and holds_shim(found / "__init__.py", name) is not True
    except Exception:  # hermes' layout changed: say nothing rather than something false
        return True


def _external_memory(host: Host) -> tuple[str, ...]:
    return tuple(sorted(r.name for r in host.registry if r.kind == "memory" and r.external))


class _Start:
    """Builds a registration's host (for :class:`Runtime`): wired to ``running.json`` and to the status
    callbacks of hermes' agents; a failure said once, on stderr too."""

    def __init__(self, home: Path) -> None:
        self.home = home
        self.runtime: Runtime | None = None
        self.state: RunningState | None = None

    def build(self) -> Host:
        from ..manager import load_host
        from ..runstate import RunningState
        from . import skills

        skills.install()  # our background review leaves alone the skills hermes' own review must
        state = RunningState(self.home)
        try:
            host = load_host(status_callback=state.on_event)
        except HermesCtxError as exc:
            log.error("hermes-ctx-plugins is not active: %s", exc)
            # hermes' log alone is easy to miss: compaction and memory of ours are off until this is fixed
            # a config error names its file, line, key and what is valid: doctor would only say it again (a newcomer's
            # walk: told to run doctor, they got this banner and the same error)
            hint = ("fix it there; `hermes ctx check` validates the config again"
                    if isinstance(exc, (ConfigError, ProviderLimitError, UnknownPluginError))
                    else "`hermes ctx doctor` says more")
            print(f"hermes-ctx-plugins is not active (hermes runs without our engine and memory): {exc}\n  {hint}",
                  file=sys.stderr)
            checked.forget(self.home)  # found broken: the next start checks before registering
            raise
        # no agent's status line exists yet: the terminal
        # (and a ctx_plugins key that lost its indent: the setting it holds is not in force)
        for fallback in [*host.fallbacks, *host.config.stray_warnings(), *_memory_lost(host),
                         *_memory_unavailable(host)]:
            print(f"hermes-ctx-plugins: {fallback}\n  `hermes ctx doctor` says more", file=sys.stderr)
        state.host = host
        assert self.runtime is not None  # set as soon as the runtime exists, before anything asks for its host
        state.forward = self.runtime.agents.on_event  # and to hermes' status_callback of the agent concerned
        defer_reviews_to_hermes(host)
        self.state = state
        return host

    def publish(self) -> None:
        """Publish the host's state (``hermes-ctx plugins`` in another shell shows it): once a conversation
        runs here, not at registration: hermes loads us for every command, and `hermes ctx plugins` must not
        overwrite a running hermes' state."""
        if self.runtime is not None and self.runtime.usable() and self.state is not None:
            self.state.write()

"""Loading plugins and calling their lifecycle hooks: the only code that talks to pluggy.

The built-in plugins load first, then third-party plugins from the ``hermes_ctx_plugins`` entry-point
group, then plugin objects handed to the host. An installed plugin that fails to load is skipped and
reported (everything else loads); a plugin handed to the host in-process fails the load. What the
plugins register goes into a :class:`~hermes_ctx_plugins.registry.Registry`. Lifecycle hooks are called
one implementation at a time through the host's
:class:`~hermes_ctx_plugins.isolation.FaultIsolator`, so one failing plugin never stops the others or
the user's turn.

**Installed is not on.** A third-party (entry-point) plugin's strategies and providers can always be
selected, but its lifecycle hooks run only once it is opted in: listed in ``ctx_plugins.plugins``, or
one of its strategies or providers is in use (from when the host builds it: selected, the provider
hermes' ``memory.provider`` names, a pipeline step) — choosing a plugin's code by name is choosing
the plugin, whose hooks often feed that very strategy or provider. Built-ins and plugins handed to
the host always run. A pip dependency that ships a hook therefore never writes into prompts unasked.
"""

from __future__ import annotations

import functools
import importlib
import importlib.metadata
import logging
import os
import sys
import time
import types
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import pluggy

from .. import hookspecs
from ..config import Config
from ..errors import ConfigError, PluginError, PluginLoadError, did_you_mean
from ..isolation import FaultIsolator, StatusEvent
from ..options import join_path
from ..registry import Kind, Registry
from . import owner_key, read_only

log = logging.getLogger("hermes_ctx_plugins")

#: what ``hermes-ctx plugins`` says of an installed plugin whose lifecycle hooks are not opted in
HOOKS_OFF = "hooks off: list it in ctx_plugins.plugins to run them"
#: a plugin that loaded and implements no hook: its entry point may name another module than its author meant
#: (a folder of the same name on sys.path, in the working directory, is imported instead)
NO_HOOKS = "loaded, but implements no hook: does its entry point name the module with its @hookimpl functions?"

#: Modules whose hooks register the built-in strategies and providers, loaded before entry points.
BUILTIN_PLUGINS: tuple[str, ...] = (
    "hermes_ctx_plugins.compression.builtin",
    "hermes_ctx_plugins.memory.builtin",
)
BUILTIN_SOURCE = "built-in"
#: an installed plugin whose import takes longer is named in the log
SLOW_IMPORT_SECONDS = 1.0


@dataclass(frozen=True)
class LoadedPlugin:
    """What ``Host.loaded_plugins()`` reports for one pluggy plugin (a module or object)."""

    name: str
    source: str
    enabled: bool
    hooks: tuple[str, ...]
    status: str
    #: its lifecycle hooks run (an installed plugin's only once opted in: ``ctx_plugins.plugins``, or
    #: one of its strategies / providers in use); ``False`` for a disabled one
    hooks_on: bool = True


class PluginLoading:
    """The host's plugins: loaded once, added and removed by embedding hosts and tests."""

    # what this part uses of the rest of the host
    config: Config
    isolator: FaultIsolator
    forward_status: Callable[[StatusEvent], None]

    def _load_plugins(self, plugins: Iterable[object]) -> None:
        """Load the built-ins, the installed plugins and ``plugins``; collect what they register."""
        self._pm = pluggy.PluginManager(hookspecs.PROJECT_NAME)
        self._pm.add_hookspecs(hookspecs)
        self._sources: dict[str, str] = {}
        self._blocked: set[str] = set()
        self._impl_cache: dict[str, list[Any]] = {}
        self.registry = Registry()
        #: installed (entry-point) plugins that failed to load: name -> why. They are skipped and
        #: reported (log, status event, ``plugins``, ``doctor``); everything else loads.
        self.load_failures: dict[str, str] = {}
        self._installed: set[str] = set()
        #: installed plugins whose lifecycle hooks run: listed, or one of their registrations in use
        self._hooks_on: set[str] = set(self.config.plugins.plugins)

        disabled = set(self.config.plugins.disabled)
        entry_points = _entry_points()
        for module in BUILTIN_PLUGINS:
            self._register(importlib.import_module(module), module, BUILTIN_SOURCE, disabled)
        for ep in entry_points:
            if ep.name in self._installed:  # a second distribution with a plugin of this name
                self._refuse_twin(ep)
                continue
            self._installed.add(ep.name)
            try:
                self._load_entry_point(ep, disabled)
            except PluginError as exc:
                self._skip(ep.name, exc, source=_source_of(ep))
        for plugin in plugins:
            self._register(plugin, None, "in-process", disabled)
        self._check_pending()
        self._collect_registrations(self._pm.get_plugins())
        self._check_disabled_names(disabled, {ep.name for ep in entry_points})
        self._check_listed_names({ep.name for ep in entry_points})

    def _register(self, plugin: object, name: str | None, source: str, disabled: set[str]) -> str | None:
        name = name or self._default_name(plugin)
        if name in disabled:
            self._block(name, source)
            return None
        if self._pm.has_plugin(name):
            raise PluginLoadError(name, f"a plugin of this name is already loaded (from "
                                        f"{self._sources.get(name, '?')}); not loading it from {source}")
        try:
            self._pm.register(plugin, name=name)
        except pluggy.PluginValidationError as exc:
            raise PluginLoadError(name, f"invalid hook implementation: {exc}") from None
        self._sources[name] = source
        module = plugin.__name__ if isinstance(plugin, types.ModuleType) else type(plugin).__module__
        if module.split(".", 1)[0] != __name__.split(".", 1)[0]:  # another plugin's hooks: each call bounded
            self.isolator.limit(owner_key("plugin", name), self.config.plugins.call_timeout_seconds)
        for hook_name in hookspecs.LIFECYCLE_HOOKS:
            for impl in getattr(self._pm.hook, hook_name).get_hookimpls():
                if impl.plugin_name == name and (impl.hookwrapper or impl.wrapper):
                    raise PluginLoadError(
                        name, f"{hook_name} is a wrapper; lifecycle hooks are called one "
                              "implementation at a time, so wrappers are not supported")
        self._impl_cache.clear()
        return name

    def _default_name(self, plugin: object) -> str:
        """A module's name, or a readable name for an object (pluggy would use its id)."""
        base = getattr(plugin, "__name__", None) or type(plugin).__name__
        name, n = base, 1
        while self._pm.has_plugin(name) or name in self._blocked:
            n += 1
            name = f"{base}-{n}"
        return name

    def _block(self, name: str, source: str) -> None:
        self._pm.set_blocked(name)
        self._blocked.add(name)
        self._sources[name] = source

    def _load_entry_point(self, ep: importlib.metadata.EntryPoint, disabled: set[str]) -> None:
        source = _source_of(ep)
        if ep.name in disabled:
            # A disabled plugin is never even imported: that is how an operator turns off a
            # plugin whose import itself is broken or unwanted.
            self._block(ep.name, source)
            return
        started = time.monotonic()
        try:
            plugin = ep.load()
        except BaseException as exc:  # a module calling sys.exit() (argparse at import), pytest.skip() ... too
            if isinstance(exc, KeyboardInterrupt):  # maybe the user's Ctrl-C while hermes starts
                raise
            raise PluginLoadError(
                ep.name, f"failed to import {ep.value} (from {source}): {type(exc).__name__}: {exc}; "
                f"fix or uninstall it, or add {ep.name!r} to ctx_plugins.disabled") from exc
        took = time.monotonic() - started
        if took > SLOW_IMPORT_SECONDS:  # hermes (and every hermes-ctx command) waits for it at each start
            log.warning("plugin %r (%s) took %.1f s to import; every hermes start waits for it (disable it with "
                        "ctx_plugins.disabled if it is not used)", ep.name, source, took)
        self._register(plugin, ep.name, source, disabled)

    def _refuse_twin(self, ep: importlib.metadata.EntryPoint) -> None:
        """Leave out an installed plugin whose name another distribution's plugin already has; the first
        one stays as it is (loaded, or failed and reported, or disabled)."""
        source = _source_of(ep)
        first = self._sources.get(ep.name, "?")
        message = (f"plugin {ep.name!r} from {source} not loaded: {first} has a plugin of that name, which "
                   f"is the one used; uninstall one of the two distributions")
        self.load_failures[f"{ep.name} ({source})"] = message
        log.error("%s", message)
        self.forward_status(StatusEvent(kind="plugin-failed", source=f"plugin:{ep.name}", message=message))

    def _check_pending(self) -> None:
        while True:
            try:
                self._pm.check_pending()
                return
            except pluggy.PluginValidationError as exc:
                name = self._pm.get_name(exc.plugin) or "?"
                error = PluginLoadError(name, f"{exc} (a misspelled hook name?)")
                if name not in self._installed:
                    raise error from None
                self._skip(name, error)

    def _skip(self, name: str, exc: PluginError, *, source: str = "?") -> None:
        """Leave an installed plugin out (it failed to load) and say so everywhere it can be seen."""
        self._sources.setdefault(name, source)
        if self._pm.get_plugin(name) is not None:
            self._pm.unregister(name=name)
        self.registry.remove_plugin(name)
        self._impl_cache.clear()
        self._pm.set_blocked(name)
        self._blocked.add(name)
        self.load_failures[name] = str(exc)
        hint = "" if "ctx_plugins.disabled" in str(exc) else (
            f"; fix or uninstall it, or add {name!r} to ctx_plugins.disabled")
        message = f"skipped, everything else is loaded: {exc}{hint}"
        log.error("%s", message)
        self.forward_status(StatusEvent(kind="plugin-failed", source=f"plugin:{name}", message=message))

    def _collect_registrations(self, plugins: Iterable[object]) -> None:
        wanted = {id(p) for p in plugins}
        hooks: tuple[tuple[Kind, str], ...] = (("compressor", "register_compressors"),
                                               ("memory", "register_memory_providers"))
        for kind, hook_name in hooks:
            # In load order: built-ins first, so a third party reusing a built-in name is the one
            # named second in the DuplicatePluginError.
            for impl in getattr(self._pm.hook, hook_name).get_hookimpls():
                if id(impl.plugin) not in wanted:
                    continue
                owner = impl.plugin_name
                register = functools.partial(self.registry.add, kind, plugin=owner,
                                             source=self._sources.get(owner, "?"))
                try:
                    try:
                        impl.function(*[register for _ in impl.argnames])
                    except (PluginError, KeyboardInterrupt):  # KeyboardInterrupt: maybe the user's Ctrl-C
                        raise
                    except BaseException as exc:  # CancelledError, GeneratorExit, SystemExit ... too
                        raise PluginLoadError(owner, f"{hook_name} raised {type(exc).__name__}: {exc}") from exc
                except PluginError as exc:
                    if owner not in self._installed:
                        raise
                    self._skip(owner, exc)

    def _check_disabled_names(self, disabled: set[str], entry_point_names: set[str]) -> None:
        """Every name ``disabled`` lists, and every name the active deployment's ``enabled`` takes back, is known (a
        misspelled ``enabled`` entry left its plugin disabled, silently); the error names the list it is in."""
        known = set(self._sources) | entry_point_names | {r.name for r in self.registry}
        config = self.config
        deployment = config.plugins.deployments.get(config.deployment or "")
        here = join_path("ctx_plugins.deployments", config.deployment or "")
        named = [(name, f"{here}.disabled" if deployment is not None and name in deployment.disabled
                  else "ctx_plugins.disabled") for name in sorted(disabled)]
        named += [(name, f"{here}.enabled") for name in (deployment.enabled if deployment is not None else ())]
        for name, where in named:
            if name not in known:
                raise ConfigError(
                    f"{name!r} names no installed plugin, strategy or provider{did_you_mean(name, known)}; "
                    f"known: {', '.join(sorted(known)) or '(none)'}",
                    path=where, value=name, expected="an installed plugin's name",
                )

    def _check_listed_names(self, entry_point_names: set[str]) -> None:
        config = self.config
        deployment = config.plugins.deployments.get(config.deployment or "")
        known = set(self._sources) | entry_point_names
        for name in sorted(set(config.plugins.plugins) - known):
            owner = next((f"; {name!r} is a {'strategy' if r.kind == 'compressor' else 'memory provider'} "
                          f"of plugin {r.plugin!r}: list the plugin" for r in self.registry if r.name == name), "")
            # a deployment's list adds to the top level's: the error names the list the name is in
            where = (f"{join_path('ctx_plugins.deployments', config.deployment or '')}.plugins"
                     if deployment is not None and name in deployment.plugins else "ctx_plugins.plugins")
            raise ConfigError(
                f"{name!r} names no installed plugin{owner or did_you_mean(name, entry_point_names)}; "
                f"installed: {', '.join(sorted(entry_point_names)) or '(none)'}",
                path=where, value=name, expected="an installed plugin's (entry point's) name",
            )

    def hooks_run(self, name: str) -> bool:
        """Whether plugin ``name``'s lifecycle hooks are called: always for a built-in or a plugin
        handed to the host, for an installed one only once opted in (see the module docstring)."""
        return name not in self._installed or name in self._hooks_on

    def plugin_in_use(self, name: str) -> None:
        """A strategy or provider of plugin ``name`` is in use: its lifecycle hooks run from now on."""
        if name not in self._hooks_on:
            self._hooks_on.add(name)
            self._impl_cache.clear()

    def _note_hooks_off(self) -> None:
        """Log the installed plugins whose lifecycle hooks stay off (once, after selection)."""
        for plugin in self.loaded_plugins():
            if plugin.status == HOOKS_OFF:
                log.info("plugin %r (%s) implements %s; %s", plugin.name, plugin.source,
                         ", ".join(h for h in plugin.hooks if h in hookspecs.LIFECYCLE_HOOKS), HOOKS_OFF)

    def loaded_plugins(self) -> list[LoadedPlugin]:
        """One record per plugin module or object, including disabled (never imported) ones."""
        records = []
        for name, source in sorted(self._sources.items()):
            plugin = None if name in self._blocked else self._pm.get_plugin(name)
            hooks = () if plugin is None else tuple(sorted(
                caller.name for caller in self._pm.get_hookcallers(plugin) or ()))
            hooks_on = plugin is not None and self.hooks_run(name)
            if name in self.load_failures:
                status = f"failed to load: {self.load_failures[name]}"
            elif plugin is None:
                status = "disabled"
            elif not hooks_on and set(hooks) & set(hookspecs.LIFECYCLE_HOOKS):
                status = HOOKS_OFF
            elif not hooks and source != BUILTIN_SOURCE:
                status = NO_HOOKS
            else:
                status = self.isolator.status(owner_key("plugin", name))
            records.append(LoadedPlugin(name=name, source=source, enabled=plugin is not None,
                                        hooks=hooks, status=status, hooks_on=hooks_on))
        return records

    def add_plugin(self, plugin: object, name: str | None = None) -> str:
        """Register a plugin object after load (its strategies and providers too); returns its name."""
        registered = self._register(plugin, name, "in-process", set(self.config.plugins.disabled))
        if registered is None:  # disabled by config: never runs
            return name or self._default_name(plugin)
        self._check_pending()
        self._collect_registrations([plugin])
        return registered

    def remove_plugin(self, name: str) -> None:
        """Unregister a plugin added with :meth:`add_plugin` (its lifecycle hooks stop running)."""
        if self._pm.get_plugin(name) is not None:
            self._pm.unregister(name=name)
        self._sources.pop(name, None)
        self.registry.remove_plugin(name)
        self._impl_cache.clear()

    def _impls(self, hook_name: str) -> list[tuple[str, str, Callable[..., Any], bool]]:
        """``(plugin name, owner key, function, takes the value)`` in pluggy's call order."""
        impls = self._impl_cache.get(hook_name)
        if impls is None:
            # pluggy calls implementations last-registered first (honouring tryfirst/trylast).
            impls = [
                (impl.plugin_name, owner_key("plugin", impl.plugin_name), impl.function,
                 bool(impl.argnames))
                for impl in reversed(getattr(self._pm.hook, hook_name).get_hookimpls())
                if self.hooks_run(impl.plugin_name)
            ]
            self._impl_cache[hook_name] = impls
        return impls

    def _dispatch(self, hook_name: str, value: object) -> list[tuple[str, Any]]:
        return [(name, result) for name, _, result in self._dispatch_each(hook_name, value) if result is not None]

    def _dispatch_each(self, hook_name: str, value: object,
                       kept: Callable[[Any], object] = lambda given: given) -> list[tuple[str, object, Any]]:
        """``(plugin name, kept(the value it was given) as its call returned, what it returned)`` of each
        implementation of ``hook_name`` (``kept``: what to read of that value then, before a call past its time
        limit that goes on running changes it)."""
        answers = []
        call = self.isolator.call
        for plugin_name, owner, function, takes_value in self._impls(hook_name):
            # An implementation may declare fewer arguments than the spec (ours have one). Every lifecycle hook
            # is another plugin's (the built-ins implement none): each gets its own copy (host.read_only)
            given = read_only(value)
            result = call(owner, function, given, default=None) if takes_value else call(
                owner, function, default=None)
            answers.append((plugin_name, kept(given), result))
        return answers


def _source_of(ep: importlib.metadata.EntryPoint) -> str:
    dist = getattr(ep, "dist", None)
    return f"{dist.name} {dist.version}" if dist is not None else ep.value


#: the last entry-point scan: the state of ``sys.path`` it read (:func:`_path_state`), what it found
_scanned: tuple[tuple[tuple[str, int | None], ...], tuple[importlib.metadata.EntryPoint, ...]] | None = None


def _entry_points() -> list[importlib.metadata.EntryPoint]:
    """The installed plugins' entry points, each once.

    Reading them opens every distribution's metadata on ``sys.path`` (about 10 ms, more with many
    packages), and a host is built per deployment, per Bridge and per ``hermes-ctx`` check: the scan is
    kept for as long as ``sys.path`` and the directories on it are unchanged (installing or removing a
    distribution changes its directory), so a plugin installed while the process runs is still found.
    """
    global _scanned
    key = _path_state()
    scanned = _scanned
    if scanned is None or scanned[0] != key:
        seen: dict[tuple[str, str], importlib.metadata.EntryPoint] = {}
        for ep in importlib.metadata.entry_points(group=hookspecs.PROJECT_NAME):
            # The same distribution can be visible twice on sys.path (editable + site install).
            seen.setdefault((ep.name, ep.value), ep)
        scanned = _scanned = (key, tuple(seen.values()))  # one assignment: threads see old or new, whole
    return list(scanned[1])


def _path_state() -> tuple[tuple[str, int | None], ...]:
    """Each ``sys.path`` entry (absolute: ``""`` is the working directory) with its modification time."""
    state: list[tuple[str, int | None]] = []
    for entry in sys.path:
        path = os.path.abspath(entry or os.curdir)
        try:
            state.append((path, os.stat(path).st_mtime_ns))
        except (OSError, ValueError):  # not a directory or file (a path hook's name), or no longer there
            state.append((path, None))
    return tuple(state)

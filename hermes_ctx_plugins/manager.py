"""The plugin host: loads plugins, selects strategy and providers, dispatches the lifecycle.

This is the only module that talks to pluggy. It loads the built-in plugins, then third-party
plugins from the ``hermes_ctx_plugins`` entry-point group, collects their strategies and providers
into a :class:`~hermes_ctx_plugins.registry.Registry`, picks the active ones from config, and calls
lifecycle hooks one implementation at a time through a
:class:`~hermes_ctx_plugins.isolation.FaultIsolator`, so one failing plugin never stops the others
or the user's turn.
"""

from __future__ import annotations

import dataclasses
import functools
import importlib
import importlib.metadata
import logging
import os
import time
from collections import OrderedDict
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pluggy

from . import hookspecs
from .archive.archiver import Archiver, Snapshot
from .compression.base import RESERVE_SHARE, CompressionResult, CompressorStrategy, shrinks
from .config import DEFAULT_COMPRESSOR, Config, hermes_home, load_config, plugin_options
from .errors import ConfigError, PluginError, PluginLoadError, ProviderLimitError, UnknownPluginError, did_you_mean
from .events import Forgotten, Message, Request, Response, SessionInfo, Turn
from .isolation import FaultIsolator, StatusEvent
from .memory.base import MemoryProvider
from .registry import Kind, Registration, Registry
from .storage.sqlite.archive import store_for
from .tokens import get_counter

log = logging.getLogger("hermes_ctx_plugins")

#: Modules whose hooks register the built-in strategies and providers, loaded before entry points.
BUILTIN_PLUGINS: tuple[str, ...] = (
    "hermes_ctx_plugins.compression.builtin",
    "hermes_ctx_plugins.memory.builtin",
)
BUILTIN_SOURCE = "built-in"


@dataclass(frozen=True)
class PluginRecord:
    """What ``Host.plugins()`` reports for one registered strategy or provider."""

    name: str
    kind: Kind
    external: bool
    #: ``built-in`` or ``<distribution> <version>``
    source: str
    enabled: bool
    #: ``active``, ``available``, ``disabled``, ``unavailable``, ``failing: …`` or ``suspended …``
    status: str
    #: the pluggy plugin that registered it
    plugin: str
    description: str = ""


@dataclass(frozen=True)
class LoadedPlugin:
    """What ``Host.loaded_plugins()`` reports for one pluggy plugin (a module or object)."""

    name: str
    source: str
    enabled: bool
    hooks: tuple[str, ...]
    status: str


def load_host(
    config: str | os.PathLike[str] | Mapping[str, Any] | Config | None = None,
    *,
    deployment: str | None = None,
    plugins: Iterable[object] = (),
    status_callback: Callable[[StatusEvent], None] | None = None,
    clock: Callable[[], float] = time.monotonic,
) -> Host:
    """Load every plugin and return a host configured from hermes' ``config.yaml``.

    :param config: a path to ``config.yaml``, a parsed mapping, a :class:`Config`, or ``None``
        for ``$HERMES_HOME/config.yaml``.
    :param deployment: the named deployment to apply (default ``$HERMES_CTX_DEPLOYMENT``).
    :param plugins: extra plugin objects to register as if installed (embedding hosts, tests).
    :param status_callback: receives user-visible status events.
    :param clock: monotonic clock for cool-downs (injectable for tests).
    :raises ConfigError: invalid config. :raises PluginError: a plugin failed to load, an unknown
        or duplicate name. :raises ProviderLimitError: two external memory providers.
    """
    cfg = config if isinstance(config, Config) else load_config(config, deployment=deployment)
    try:
        return Host(cfg, plugins=plugins, status_callback=status_callback, clock=clock)
    except ConfigError as exc:  # found while building (a plugin's options): still file:line
        raise cfg.locate(exc) from None


class Host:
    """The loaded plugins, the active compressor and memory providers, and the lifecycle."""

    def __init__(
        self,
        config: Config,
        *,
        plugins: Iterable[object] = (),
        status_callback: Callable[[StatusEvent], None] | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.config = config
        self.status_callback = status_callback
        settings = config.plugins
        self.isolator = FaultIsolator(
            threshold=settings.failure_threshold, cooldown=settings.cooldown_seconds,
            clock=clock, on_event=status_callback,
        )
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

        disabled = set(settings.disabled)
        entry_points = _entry_points()
        for module in BUILTIN_PLUGINS:
            self._register(importlib.import_module(module), module, BUILTIN_SOURCE, disabled)
        for ep in entry_points:
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

        self.compressor: CompressorStrategy | None = None
        self._fallback: CompressorStrategy | None = None
        self.memory_providers: list[MemoryProvider] = []
        self._select()
        #: the sessions this host has heard of (their user ids scope the archive), newest last
        self._sessions: OrderedDict[str, SessionInfo] = OrderedDict()
        self.archive: Archiver | None = None
        if settings.archive.enabled:
            self.archive = Archiver(store_for(config), settings.archive)

    # ------------------------------------------------------------------ loading

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
        try:
            plugin = ep.load()
        except Exception as exc:
            raise PluginLoadError(
                ep.name, f"failed to import {ep.value} (from {source}): {type(exc).__name__}: {exc}; "
                f"fix or uninstall it, or add {ep.name!r} to ctx_plugins.disabled") from exc
        self._register(plugin, ep.name, source, disabled)

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
                    except PluginError:
                        raise
                    except Exception as exc:
                        raise PluginLoadError(owner, f"{hook_name} raised {type(exc).__name__}: {exc}") from exc
                except PluginError as exc:
                    if owner not in self._installed:
                        raise
                    self._skip(owner, exc)

    def _check_disabled_names(self, disabled: set[str], entry_point_names: set[str]) -> None:
        known = set(self._sources) | entry_point_names | {r.name for r in self.registry}
        for name in sorted(disabled - known):
            raise ConfigError(
                f"{name!r} names no installed plugin, strategy or provider{did_you_mean(name, known)}; "
                f"known: {', '.join(sorted(known)) or '(none)'}",
                path="ctx_plugins.disabled", value=name, expected="an installed plugin's name",
            )

    # ------------------------------------------------------------------ selection

    def _is_enabled(self, entry: Registration) -> bool:
        disabled = self.config.plugins.disabled
        return entry.name not in disabled and entry.plugin not in disabled

    def _select(self) -> None:
        cfg = self.config
        # a deployment's error names its key: ctx_plugins.deployments.<name>.compressor
        prefix = f"ctx_plugins.deployments.{cfg.deployment}." if cfg.deployment else "ctx_plugins."
        explicit_compressor = cfg.plugins.compressor is not None
        if explicit_compressor or ("compressor", cfg.compressor_name) in self.registry:
            entry = self._selected("compressor", cfg.compressor_name, f"{prefix}compressor")
            if entry is not None and self._is_enabled(entry):
                self.compressor = self._instantiate(entry)  # type: ignore[assignment]
        explicit_providers = cfg.plugins.memory.providers is not None
        for name in cfg.provider_names:
            if not explicit_providers and ("memory", name) not in self.registry:
                continue  # a default that is not installed is simply not used
            entry = self._selected("memory", name, f"{prefix}memory.providers")
            if entry is not None and self._is_enabled(entry):
                self.activate_provider(name)
        self._check_hermes_provider()
        self._check_options()

    def _selected(self, kind: Kind, name: str, where: str) -> Registration | None:
        """The registration config selects; when it is missing because an installed plugin failed to
        load, the default strategy runs instead (no provider for a memory), loudly, rather than
        nothing of ours at all."""
        try:
            return self.registry.get(kind, name, where=where)
        except UnknownPluginError as exc:
            if not self.load_failures:
                raise
            failed = ", ".join(sorted(self.load_failures))
            instead = DEFAULT_COMPRESSOR if kind == "compressor" and ("compressor", DEFAULT_COMPRESSOR) in \
                self.registry else None
            message = (f"{exc} — possibly from a plugin that failed to load ({failed}); "
                       + (f"using {instead!r} instead" if instead else "left out"))
            log.error("%s", message)
            self.forward_status(StatusEvent(kind="plugin-failed", source=f"{kind}:{name}", message=message))
            return self.registry.get(kind, instead) if instead else None

    def _check_hermes_provider(self) -> None:
        """Agree with hermes' own one-external rule, with the clearer error.

        hermes' ``memory.provider`` is its one external provider. Naming one of ours is how hermes
        drives it; naming another (its bundled mem0, honcho, ...) beside an external provider of
        ours would make two.
        """
        chosen = self.config.memory.provider
        ours = [p.name for p in self.memory_providers if p.external]
        if chosen and ours and chosen not in ours:
            raise ProviderLimitError(
                [ours[0], chosen], where="ctx_plugins.memory.providers and hermes' memory.provider")

    def _check_options(self) -> None:
        names = {r.name for r in self.registry}
        for name in self.config.plugins.options:
            if name not in names:
                raise ConfigError(
                    f"options for {name!r}, which is no registered strategy or provider"
                    f"{did_you_mean(name, names)}; registered: {', '.join(sorted(names)) or '(none)'}",
                    path=f"ctx_plugins.options.{name}", value=name,
                    expected="a registered strategy or provider name",
                )

    def _options(self, entry: Registration) -> Any:
        return plugin_options(entry.name, getattr(entry.factory, "options_class", None),
                              self.config.options_for(entry.name))

    def _instantiate(self, entry: Registration) -> Any:
        options = self._options(entry)
        try:
            if entry.kind == "compressor":
                model = self.config.model
                strategy = entry.factory(options, settings=self.config.compression, model=model.name,
                                         context_length=model.context_length, max_tokens=model.max_tokens,
                                         status_callback=self.status_callback, config=self.config)
                strategy.update_model(model.name, model.context_length, base_url=model.base_url,
                                      api_key=model.api_key, provider=model.provider)
                if hasattr(strategy, "resolve_strategy"):  # a pipeline builds its steps by name
                    strategy.resolve_strategy = self._compressor_by_name
                return strategy
            provider = entry.factory(options, hermes_home=hermes_home(), config=self.config)
            if hasattr(provider, "status_callback"):  # providers that report outages and recoveries
                provider.status_callback = self.forward_status
            return provider
        except (ConfigError, PluginError):
            raise
        except Exception as exc:
            raise PluginLoadError(entry.plugin, f"could not create {entry.kind} {entry.name!r}: "
                                                f"{type(exc).__name__}: {exc}") from exc

    def forward_status(self, event: StatusEvent) -> None:
        """Pass a provider's status event to whoever watches this host (``status_callback``)."""
        if self.status_callback is not None:
            self.status_callback(event)

    def _compressor_by_name(self, name: str) -> CompressorStrategy:
        entry = self.registry.get("compressor", name, where="ctx_plugins.options.pipeline.steps")
        strategy: CompressorStrategy = self._instantiate(entry)
        return strategy

    def activate_provider(self, name: str) -> MemoryProvider:
        """Make the memory provider ``name`` active (no-op if it already is).

        :raises UnknownPluginError: no such provider. :raises ProviderLimitError: it is external
            and another external provider is already active.
        """
        for existing in self.memory_providers:
            if existing.name == name:
                return existing
        entry = self.registry.get("memory", name)
        if not self._is_enabled(entry):
            raise ConfigError(f"memory provider {name!r} is disabled", path="ctx_plugins.disabled",
                              value=name, expected="a provider that is not disabled")
        if entry.external:
            active = [p.name for p in self.memory_providers if p.external]
            if active:
                where = (f"ctx_plugins.deployments.{self.config.deployment}.memory.providers"
                         if self.config.deployment else "ctx_plugins.memory.providers")
                raise ProviderLimitError([*active, name], where=where)
        provider: MemoryProvider = self._instantiate(entry)
        self.memory_providers.append(provider)
        return provider

    def provider_instance(self, name: str) -> MemoryProvider:
        """The active provider ``name``, else a detached instance of it — not activated, not counted
        against the one-external limit — for questions such as its availability (``doctor``,
        hermes' provider listing). Constructing a provider opens nothing, so dropping it is free.

        :raises UnknownPluginError: no such provider. :raises ConfigError: its options are invalid.
        """
        active = next((p for p in self.memory_providers if p.name == name), None)
        if active is not None:
            return active
        entry = self.registry.get("memory", name)
        provider: MemoryProvider = entry.factory(self._options(entry), hermes_home=hermes_home(), config=self.config)
        return provider

    def deactivate_provider(self, name: str) -> None:
        """Stop using the memory provider ``name`` (shut down, kept registered)."""
        for provider in list(self.memory_providers):
            if provider.name == name:
                self.memory_providers.remove(provider)
                self.isolator.call(_owner("memory", name), provider.shutdown, default=None)

    # ------------------------------------------------------------------ inspection

    def plugins(self) -> list[PluginRecord]:
        """One record per registered strategy and provider, active or not."""
        active = {("memory", p.name) for p in self.memory_providers}
        if self.compressor is not None:
            active.add(("compressor", self.compressor.name))
        records = []
        for entry in self.registry:
            enabled = self._is_enabled(entry)
            health = self.isolator.status(_owner(entry.kind, entry.name))
            if not enabled:
                status = "disabled"
            elif health != "ok":
                status = health
            elif (entry.kind, entry.name) in active:
                status = "active"
            else:
                status = "available"
            records.append(PluginRecord(
                name=entry.name, kind=entry.kind, external=entry.external, source=entry.source,
                enabled=enabled, status=status, plugin=entry.plugin,
                description=getattr(entry.factory, "description", "") or "",
            ))
        return records

    def loaded_plugins(self) -> list[LoadedPlugin]:
        """One record per plugin module or object, including disabled (never imported) ones."""
        records = []
        for name, source in sorted(self._sources.items()):
            plugin = None if name in self._blocked else self._pm.get_plugin(name)
            hooks = () if plugin is None else tuple(sorted(
                caller.name for caller in self._pm.get_hookcallers(plugin) or ()))
            if name in self.load_failures:
                status = f"failed to load: {self.load_failures[name]}"
            else:
                status = "disabled" if plugin is None else self.isolator.status(_owner("plugin", name))
            records.append(LoadedPlugin(name=name, source=source, enabled=plugin is not None,
                                        hooks=hooks, status=status))
        return records

    # ------------------------------------------------------------------ lifecycle

    def _impls(self, hook_name: str) -> list[tuple[str, str, Callable[..., Any], bool]]:
        """``(plugin name, owner key, function, takes the value)`` in pluggy's call order."""
        impls = self._impl_cache.get(hook_name)
        if impls is None:
            # pluggy calls implementations last-registered first (honouring tryfirst/trylast).
            impls = [
                (impl.plugin_name, _owner("plugin", impl.plugin_name), impl.function,
                 bool(impl.argnames))
                for impl in reversed(getattr(self._pm.hook, hook_name).get_hookimpls())
            ]
            self._impl_cache[hook_name] = impls
        return impls

    def _dispatch(self, hook_name: str, value: object) -> list[tuple[str, Any]]:
        results = []
        call = self.isolator.call
        for plugin_name, owner, function, takes_value in self._impls(hook_name):
            # An implementation may declare fewer arguments than the spec (ours have one).
            result = call(owner, function, value, default=None) if takes_value else call(
                owner, function, default=None)
            if result is not None:
                results.append((plugin_name, result))
        return results

    def _each_provider(self, method: str, *args: Any, default: Any = None, exclude: Collection[str] = (),
                       **kwargs: Any) -> list[tuple[str, Any]]:
        return [
            (p.name, self.isolator.call(_owner("memory", p.name), getattr(p, method), *args,
                                        default=default, **kwargs))
            for p in list(self.memory_providers) if p.name not in exclude
        ]

    # ``exclude`` names providers another host drives itself (hermes drives the one its
    # memory.provider selects), so they are not told twice.

    @property
    def namespace(self) -> str:
        """The memory namespace of this host's deployment (see :mod:`hermes_ctx_plugins.scope`)."""
        return self.config.memory_namespace

    def scoped(self, session: SessionInfo) -> SessionInfo:
        """``session`` stamped with this host's namespace: every session a provider or the archive
        gets from the host carries it, whatever the caller put there."""
        if session.deployment == self.namespace:
            return session
        return dataclasses.replace(session, deployment=self.namespace)

    def remember_session(self, session: SessionInfo) -> None:
        """Note who ``session`` belongs to (hosts learn user ids at different moments)."""
        if not session.session_id:
            return
        session = self.scoped(session)
        known = self._sessions.get(session.session_id)
        if known is None or (session.user_id and known.user_id != session.user_id):
            self._sessions[session.session_id] = session
        self._sessions.move_to_end(session.session_id)
        while len(self._sessions) > 4096:
            self._sessions.popitem(last=False)

    def session(self, session_id: str) -> SessionInfo:
        """What this host knows of ``session_id`` (at least the id), in this host's namespace."""
        return self._sessions.get(session_id) or self.scoped(SessionInfo(session_id=session_id))

    def session_start(self, session: SessionInfo, *, exclude: Collection[str] = ()) -> None:
        """A conversation starts: tell every plugin and active provider."""
        session = self.scoped(session)
        self.remember_session(session)
        self._dispatch("session_start", session)
        self._each_provider("on_session_start", session, exclude=exclude)

    def pre_request(self, request: Request) -> Request:
        """Let every plugin contribute context to ``request``; returns it for chaining."""
        request.session = self.scoped(request.session)
        self.remember_session(request.session)
        for plugin_name, text in self._dispatch("pre_request", request):
            if isinstance(text, str):
                request.add_context(text, source=plugin_name)
            else:
                self.isolator.record_failure(_owner("plugin", plugin_name), TypeError(
                    f"pre_request returned {type(text).__name__}; expected str or None"))
        return request

    def prefetch(self, query: str, *, session: SessionInfo, exclude: Collection[str] = ()) -> str:
        """What the active memory providers recall for ``query``, joined."""
        session = self.scoped(session)
        blocks = self._each_provider("prefetch", query, default="", session=session, exclude=exclude)
        return "\n\n".join(text.strip() for _, text in blocks if isinstance(text, str) and text.strip())

    def post_response(self, response: Response, *, feed_compressor: bool = True) -> None:
        """A model response arrived: feed its usage to the compressor and tell every plugin.

        :param feed_compressor: False when the host drives its own copy of the strategy (hermes
            deep-copies our engine per agent and feeds that copy; feeding ``self.compressor``, the
            template, would carry one session's usage into every agent created afterwards).
        """
        if feed_compressor and self.compressor is not None:
            self.isolator.call(_owner("compressor", self.compressor.name),
                               self.compressor.update_from_response, response.usage, default=None, resets=False)
        self._dispatch("post_response", response)

    def turn_finalized(self, turn: Turn, *, exclude: Collection[str] = ()) -> None:
        """A turn is complete: tell every plugin and let the providers store it."""
        turn = dataclasses.replace(turn, session=self.scoped(turn.session))
        self._dispatch("turn_finalized", turn)
        self._each_provider("sync_turn", turn, exclude=exclude)

    def session_end(self, session: SessionInfo, messages: Sequence[Message], *,
                    exclude: Collection[str] = ()) -> None:
        """The conversation really ended (not just a turn)."""
        session = self.scoped(session)
        self._each_provider("on_session_end", session, messages, exclude=exclude)

    def should_compress(self, prompt_tokens: int | None = None) -> bool:
        """Whether the active strategy wants to compress now (``False`` without one)."""
        if self.compressor is None:
            return False
        return self.isolator.call(_owner("compressor", self.compressor.name),
                                  self.compressor.should_compress, prompt_tokens, default=False, resets=False)

    def compress(self, messages: list[Message], *, session: SessionInfo | None = None,
                 **kwargs: Any) -> CompressionResult:
        """Run the active strategy; any failure leaves ``messages`` as they were."""
        if self.compressor is None:
            return CompressionResult.unchanged(messages)
        return self.run_compression(self.compressor, messages, session=session, fallback=self._host_fallback,
                                    **kwargs)

    def _host_fallback(self) -> CompressorStrategy | None:
        if self._fallback is None:
            self._fallback = self.fallback_strategy()
        return self._fallback

    def run_compression(self, strategy: CompressorStrategy, messages: list[Message], *,
                        session: SessionInfo | None = None,
                        fallback: Callable[[], CompressorStrategy | None] | None = None,
                        **kwargs: Any) -> CompressionResult:
        """Run ``strategy`` (the host's, or an agent's copy of it) with the archive around it.

        Whatever the strategy removes or rewrites is archived first (see :mod:`.archive`) and the
        compacted conversation carries an index of its exact identifiers. A strategy that raises, is
        suspended, returns something that is not a result, or grows the prompt while claiming to
        compress has failed (counted against it); the strategy ``fallback()`` returns (the default
        one, see :meth:`fallback_strategy`) then runs instead, and without one ``messages`` stay as
        they were.
        """
        # taken before any strategy runs: one that edits the messages in place cannot hide the originals
        snapshot = Snapshot(messages) if self.archive is not None else None
        result = self._attempt(strategy, messages, kwargs)
        substitute = fallback() if result is None and fallback is not None else None
        if substitute is not None and substitute is not strategy:
            log.warning("compressor %r failed; the default strategy %r compacts instead", strategy.name,
                        substitute.name)
            strategy, result = substitute, self._attempt(substitute, messages, kwargs)
        if result is None:
            return CompressionResult.unchanged(messages)
        if snapshot is not None and self.archive is not None and result.compressed:
            if session is None:
                session = SessionInfo(session_id="")
            elif not session.user_id:
                session = self.session(session.session_id)
            session = self.scoped(session)
            ceiling = int((strategy.threshold_tokens or result.tokens_before) * RESERVE_SHARE)
            result = self.isolator.call("archive", self.archive.apply, snapshot, result, session=session,
                                        strategy=strategy.name, counter=get_counter(strategy.model),
                                        ceiling=ceiling, default=result)
        return result

    def _attempt(self, strategy: CompressorStrategy, messages: list[Message],
                 kwargs: dict[str, Any]) -> CompressionResult | None:
        """One strategy's result, checked; ``None`` when it failed (the failure is counted)."""
        owner = _owner("compressor", strategy.name)
        count_before = strategy.compression_count
        if self.archive is not None:
            strategy.reserved_tokens = self.archive.settings.index_max_tokens  # room for the anchor index
        failed = CompressionResult.unchanged(messages)
        # The strategy gets its own list, so even one that mutates its input cannot damage ours.
        result = self.isolator.call(owner, strategy.compress, list(messages), default=failed, **kwargs)
        if result is failed:
            return None
        if not isinstance(result, CompressionResult) or not result.messages:
            self.isolator.record_failure(owner, TypeError(
                f"compress returned {result!r:.80}; expected a CompressionResult with messages"))
            return None
        if result.compressed:
            after = get_counter(strategy.model).count_messages(result.messages)
            if not shrinks(messages, after, get_counter(strategy.model)):  # counted by us, not taken on trust
                self.isolator.record_failure(owner, ValueError(
                    f"compress reported a compaction that does not shrink the prompt ({after:,} tokens after); "
                    "the result was discarded"))
                return None
            if strategy.compression_count == count_before:
                strategy.compression_count += 1  # for strategies that do not count themselves
        return result

    def fallback_strategy(self) -> CompressorStrategy | None:
        """A fresh instance of the default strategy, for when the selected one fails (``None`` when the
        selected one is the default, or it is not installed)."""
        if self.compressor is None or self.compressor.name == DEFAULT_COMPRESSOR \
                or ("compressor", DEFAULT_COMPRESSOR) not in self.registry:
            return None
        entry = self.registry.get("compressor", DEFAULT_COMPRESSOR)
        if not self._is_enabled(entry):  # the operator switched it off: no stand-in then
            return None
        strategy: CompressorStrategy = self._instantiate(entry)
        return strategy

    def forget_user(self, user_id: str, *, every_namespace: bool = False) -> list[Forgotten]:
        """Remove ``user_id`` (compared exactly; ``""`` is the anonymous user) from every store this
        host owns: each active memory provider's (queued and spooled writes included; the memory
        services are asked to delete theirs) and the archive.

        :param every_namespace: every deployment's memories, not only this host's namespace.
        :returns: one :class:`Forgotten` per store, in order; a store that could not be cleared
            carries an ``error`` (it never raises for one store).
        """
        namespaces = None if every_namespace else [self.namespace]
        report: list[Forgotten] = []
        stores: list[tuple[str, Callable[..., list[Forgotten]]]] = [
            (p.name, p.forget_user) for p in self.memory_providers]
        # a disabled archive may still hold what it archived while it was on
        archive = self.archive.store if self.archive is not None else store_for(self.config)
        stores.append(("archive", archive.forget_user))
        for name, forget in stores:
            try:
                report.extend(forget(user_id, namespaces=namespaces))
            except Exception as exc:  # one store's failure must not stop the others
                log.exception("%s could not forget a user", name)
                report.append(Forgotten(store=name, removed=None, error=f"{type(exc).__name__}: {exc}"))
        return report

    def shutdown(self) -> None:
        """Shut every active provider down and release the compressor's connections."""
        self._each_provider("shutdown")
        if self.archive is not None:
            self.archive.store.close()
        if self.compressor is not None:
            self.isolator.call(_owner("compressor", self.compressor.name), self.compressor.close, default=None)

    # ------------------------------------------------------------------ embedding and tests

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


def _owner(kind: str, name: str) -> str:
    return f"{kind}:{name}"


def _source_of(ep: importlib.metadata.EntryPoint) -> str:
    dist = getattr(ep, "dist", None)
    return f"{dist.name} {dist.version}" if dist is not None else ep.value


def _entry_points() -> list[importlib.metadata.EntryPoint]:
    seen: dict[tuple[str, str], importlib.metadata.EntryPoint] = {}
    for ep in importlib.metadata.entry_points(group=hookspecs.PROJECT_NAME):
        # The same distribution can be visible twice on sys.path (editable + site install).
        seen.setdefault((ep.name, ep.value), ep)
    return list(seen.values())

"""The plugin host: loads plugins, selects strategy and providers, dispatches the lifecycle.

:class:`Host` is the one object every caller uses. Its parts live in :mod:`hermes_ctx_plugins.host`:
loading plugins and calling their hooks (the only code that talks to pluggy), the memory fan-out, and
running compactions. Here: building the host from config, choosing the active strategy and providers,
building them with their options, and what the host reports about itself.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import threading
import time
import weakref
from collections import OrderedDict
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from .archive.archiver import Archiver
from .compression.base import CompressorStrategy
from .config import DEFAULT_COMPRESSOR, Config, hermes_home, load_config, plugin_options
from .errors import ConfigError, PluginError, PluginLoadError, UnknownPluginError, did_you_mean
from .events import ContextContribution, Request, Response, SessionInfo, Turn
from .host import MAX_RECALL_CHARS, bounded_text, cut_saying_so, foreign_code, owner_key
from .host.compaction import Compaction
from .host.plugins import BUILTIN_PLUGINS, BUILTIN_SOURCE, LoadedPlugin, PluginLoading
from .host.providers import MemoryFanOut
from .isolation import FaultIsolator, StatusEvent
from .memory.base import MemoryProvider
from .registry import Kind, Registration
from .storage import open_archive

__all__ = ["BUILTIN_PLUGINS", "BUILTIN_SOURCE", "Host", "LoadedPlugin", "PluginRecord", "load_host"]

log = logging.getLogger("hermes_ctx_plugins")


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


#: the stray keys (:attr:`Config.stray`) already logged in this process
_STRAY_SAID: set[tuple[str, ...]] = set()


def _say_stray(config: Config) -> None:
    """Log a config's stray keys once a process: a command builds its host more than once, from the file and from
    copies of it (said four times, a review), and a Bridge from a mapping (a review: skipping those said nothing)."""
    if config.stray and config.stray not in _STRAY_SAID:
        _STRAY_SAID.add(config.stray)
        for warning in config.stray_warnings():
            log.warning("%s", warning)


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
    _say_stray(cfg)  # a ctx_plugins key that lost its indent: its setting is not in force
    try:
        return Host(cfg, plugins=plugins, status_callback=status_callback, clock=clock)
    except ConfigError as exc:  # found while building (a plugin's options): still file:line
        raise cfg.locate(exc) from None


class Host(PluginLoading, MemoryFanOut, Compaction):
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
        #: the hermes agents (our adapters, held weakly) using each active memory provider, by name: hermes shuts an
        #: agent's memory down when it drops that agent while others share the provider (``hermes.memory``: only the
        #: last closes it); and until when a provider whose queue did not drain is not waited for at such a shutdown
        self.provider_users: dict[str, weakref.WeakSet[Any]] = {}
        self.provider_users_lock = threading.Lock()
        self.provider_stalled: dict[str, float] = {}
        settings = config.plugins
        self.isolator = FaultIsolator(
            threshold=settings.failure_threshold, cooldown=settings.cooldown_seconds,
            clock=clock, on_event=status_callback,
        )
        self._load_plugins(plugins)

        self.compressor: CompressorStrategy | None = None
        self._fallback: CompressorStrategy | None = None
        self.memory_providers: list[MemoryProvider] = []
        #: what selection put in place of what config named, a plugin having failed to load (see :meth:`_selected`)
        self.fallbacks: list[str] = []
        self._select()
        self._note_hooks_off()
        #: the sessions this host has heard of (their user ids scope the archive), newest last
        self._sessions: OrderedDict[str, SessionInfo] = OrderedDict()
        self.archive: Archiver | None = None
        if settings.archive.enabled:
            self.archive = Archiver(open_archive(config), settings.archive, open_store=lambda: open_archive(config))

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
                self._check_steps(self.compressor)
        explicit_providers = cfg.plugins.memory.providers is not None
        for name in cfg.provider_names:
            if not explicit_providers and ("memory", name) not in self.registry:
                continue  # a default that is not installed is simply not used
            entry = self._selected("memory", name, f"{prefix}memory.providers")
            if entry is not None and self._is_enabled(entry):
                self.activate_provider(name)
        self._check_hermes_provider()
        self._check_options()

    def _check_steps(self, strategy: CompressorStrategy | None) -> None:
        """A pipeline's steps are built at its first compaction: their names are checked now, so that a typo is a
        config error at the start, not a failed compaction later (the default strategy compacting instead)."""
        from .compression.pipeline import PipelineStrategy

        if isinstance(strategy, PipelineStrategy):
            where = "ctx_plugins.options.pipeline.steps"
            for step in strategy.options.steps:
                try:
                    self.registry.get("compressor", step, where=where)
                except UnknownPluginError as exc:
                    raise self.config.locate(ConfigError(exc.message, path=where, value=step,
                                                         expected="registered compressor strategies")) from None

    def _selected(self, kind: Kind, name: str, where: str) -> Registration | None:
        """The registration config selects; when it is missing because an installed plugin failed to
        load, the default strategy runs instead (no provider for a memory), loudly, rather than
        nothing of ours at all."""
        try:
            return self.registry.get(kind, name, where=where)
        except UnknownPluginError as exc:
            if not self.load_failures:
                raise self._located(exc, where) from None
            failed = ", ".join(sorted(self.load_failures))
            instead = DEFAULT_COMPRESSOR if kind == "compressor" and ("compressor", DEFAULT_COMPRESSOR) in \
                self.registry else None
            message = (f"{exc} — possibly from a plugin that failed to load ({failed}); "
                       + (f"using {instead!r} instead" if instead else "left out"))
            log.error("%s", message)
            self.fallbacks.append(message)  # said at the start too: no agent watches the host yet
            self.forward_status(StatusEvent(kind="plugin-failed", source=f"{kind}:{name}", message=message))
            return self.registry.get(kind, instead) if instead else None

    def _located(self, exc: UnknownPluginError, where: str) -> UnknownPluginError:
        """``exc`` naming the file and line of the key ``where`` that asked for the name, like a bad value."""
        cfg = self.config
        key = where.replace(f"ctx_plugins.deployments.{cfg.deployment}.", "ctx_plugins.") if cfg.deployment else where
        line = cfg.line_of(key)
        if line is not None and not cfg.source.startswith("<"):
            exc.message = f"{cfg.source}:{line}: {exc.message}"
        return exc

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

    def validate_options(self) -> None:
        """Check ``ctx_plugins.options`` of every enabled strategy and provider, selected or not (raises
        :class:`~hermes_ctx_plugins.errors.ConfigError` with file:line): what ``hermes-ctx check`` vouches
        for. Loading checks only what it builds, so inside hermes a bad option of a provider hermes starts
        later (its ``memory.provider``, a pipeline step) leaves that one unavailable, logged with the
        same error, and everything else running."""
        for entry in self.registry:
            if entry.name in self.config.plugins.options and self._is_enabled(entry):
                self._options(entry)

    def _options(self, entry: Registration) -> Any:
        try:
            return plugin_options(entry.name, getattr(entry.factory, "options_class", None),
                                  self.config.options_for(entry.name))
        except ConfigError as exc:  # also after loading (a detached provider, a pipeline step): file:line
            raise self.config.locate(exc) from None

    def _instantiate(self, entry: Registration) -> Any:
        """Build ``entry`` to use it; from then on its plugin's lifecycle hooks run (choosing a
        plugin's strategy or provider by name opts the plugin in: its hooks may feed them)."""
        options = self._options(entry)
        self.plugin_in_use(entry.plugin)
        try:
            if entry.kind == "compressor":
                model = self.config.model
                strategy = entry.factory(options, settings=self.config.compression, model=model.name,
                                         context_length=model.context_length, max_tokens=model.max_tokens,
                                         status_callback=self.status_callback, config=self.config)
                strategy.update_model(model.name, model.context_length, base_url=model.base_url,
                                      api_key=model.api_key, provider=model.provider)
                strategy.attach(resolve_strategy=self._compressor_by_name)
                self._bound(entry, strategy)
                return strategy
            provider = entry.factory(options, hermes_home=hermes_home(), config=self.config)
            provider.attach(status_callback=self.forward_status)
            self._bound(entry, provider)
            return provider
        except ConfigError as exc:  # the plugin checking its own options, maybe long after loading
            raise self.config.locate(exc) from None
        except (PluginError, KeyboardInterrupt):  # KeyboardInterrupt: maybe the user's Ctrl-C
            raise
        except BaseException as exc:  # another plugin's constructor: CancelledError, SystemExit ... too
            raise PluginLoadError(entry.plugin, f"could not create {entry.kind} {entry.name!r}: "
                                                f"{type(exc).__name__}: {exc}") from exc

    def _bound(self, entry: Registration, built: object) -> None:
        """Every later call into ``built`` bounded in time when it is another plugin's code, or a pipeline
        running another plugin's step (its calls reach the step) (isolation.py)."""
        steps = getattr(getattr(built, "options", None), "steps", ()) if entry.kind == "compressor" else ()
        others = foreign_code(built) or any(  # by registration: the pipeline builds its steps when it first compacts
            (entry.kind, name) in self.registry and self.registry.get(entry.kind, name).factory.__module__.split(
                ".", 1)[0] != __name__.split(".", 1)[0] for name in steps if isinstance(name, str))
        if others:
            self.isolator.limit(owner_key(entry.kind, entry.name), self.config.plugins.call_timeout_seconds)

    def forward_status(self, event: StatusEvent) -> None:
        """Pass a provider's status event to whoever watches this host (``status_callback``)."""
        if self.status_callback is not None:
            self.status_callback(event)

    def _compressor_by_name(self, name: str) -> CompressorStrategy:
        entry = self.registry.get("compressor", name, where="ctx_plugins.options.pipeline.steps")
        strategy: CompressorStrategy = self._instantiate(entry)
        return strategy

    # ------------------------------------------------------------------ inspection

    def plugins(self) -> list[PluginRecord]:
        """One record per registered strategy and provider, active or not."""
        active = {("memory", p.name) for p in self.memory_providers}
        if self.compressor is not None:
            active.add(("compressor", self.compressor.name))
        records = []
        for entry in self.registry:
            enabled = self._is_enabled(entry)
            health = self.isolator.status(owner_key(entry.kind, entry.name))
            if not enabled:
                status = "disabled"
            elif health != "ok":
                status = health
            elif (entry.kind, entry.name) in active:
                status = "active"
            else:  # (it was "available": doctor's word for a provider that can run, which this does not check)
                status = "not selected"
            records.append(PluginRecord(
                name=entry.name, kind=entry.kind, external=entry.external, source=entry.source,
                enabled=enabled, status=status, plugin=entry.plugin,
                description=getattr(entry.factory, "description", "") or "",
            ))
        return records

    # ------------------------------------------------------------------ sessions and the lifecycle

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
        self._each_provider("on_session_start", session, exclude=exclude, session=session, pass_session=False)

    def pre_request(self, request: Request) -> Request:
        """Let every plugin contribute context to ``request``; returns it for chaining."""
        request.session = self.scoped(request.session)
        self.remember_session(request.session)
        base = len(request.contributions)  # what each plugin's copy held when it was made

        def added(given: Request) -> list[ContextContribution]:  # read as its call returns: nothing added later
            return given.contributions[base:]

        for plugin_name, contributed, returned in self._dispatch_each("pre_request", request, added):
            # another plugin's text, as a provider's recall: plain text, at most MAX_RECALL_CHARS of it in all,
            # what it added to its copy of the request (add_context) and what it returned
            owner, room = owner_key("plugin", plugin_name), MAX_RECALL_CHARS
            texts = [(c.source, c.text) for c in contributed]  # type: ignore[attr-defined]  # a list (added)
            texts += [(plugin_name, returned)] if returned is not None else []
            left_out = 0
            for source, text in texts:
                if type(text) is not str:  # plain text only (a str subclass may override what it likes)
                    bounded_text(text, owner=owner, foreign=True, fail=self.isolator.record_failure,
                                 what="pre_request", limit=MAX_RECALL_CHARS)  # counted as its failure
                    continue
                if len(text) > room:  # past its 16,000 characters in all: cut, said once below
                    left_out += len(text) - max(room, 0)
                    if room <= 0:
                        continue
                    text = cut_saying_so(text, room)
                request.add_context(text, source=source)
                room -= len(text)
            if left_out:
                log.warning("%s: %d characters of its context past %d in all were left out", owner, left_out,
                            MAX_RECALL_CHARS)
        return request

    def post_response(self, response: Response, *, feed_compressor: bool = True) -> None:
        """A model response arrived: feed its usage to the compressor and tell every plugin.

        :param feed_compressor: False when the host drives its own copy of the strategy (hermes
            deep-copies our engine per agent and feeds that copy; feeding ``self.compressor``, the
            template, would carry one session's usage into every agent created afterwards).
        """
        if feed_compressor and self.compressor is not None:
            self.isolator.call(owner_key("compressor", self.compressor.name),
                               self.compressor.update_from_response, response.usage, default=None, resets=False)
        self._dispatch("post_response", response)

    def turn_finalized(self, turn: Turn, *, exclude: Collection[str] = ()) -> None:
        """A turn is complete: tell every plugin and let the providers store it."""
        turn = dataclasses.replace(turn, session=self.scoped(turn.session))
        self._dispatch("turn_finalized", turn)
        self._each_provider("sync_turn", turn, exclude=exclude, session=turn.session, pass_session=False)

    def shutdown(self) -> None:
        """Shut every active provider down and release the compressor's connections."""
        self._each_provider("shutdown")
        if self.archive is not None:
            self.archive.close()
        if self.compressor is not None:
            self.isolator.call(owner_key("compressor", self.compressor.name), self.compressor.close, default=None)
        self.isolator.close()  # other plugins' worker threads (a host dropped leaves none behind)

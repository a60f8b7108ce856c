"""The settings, as frozen dataclasses: what each key means, its default, and what it allows.

Every field is declared with :func:`~hermes_ctx_plugins.options.option` when it needs more than its
type (a bound, a choice), so the class body is the whole specification of its section;
:mod:`.load` builds them from the YAML.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..errors import ConfigError
from ..options import FrozenMap, join_path, option

#: The strategy used when ``ctx_plugins.compressor`` is not set.
DEFAULT_COMPRESSOR = "summarize"
#: The providers used when ``ctx_plugins.memory.providers`` is not set.
DEFAULT_PROVIDERS = ("file",)
#: the values of ``ctx_plugins.archive.scope``
ARCHIVE_SCOPES = ("session", "user")
#: the storage backends (:mod:`hermes_ctx_plugins.storage`)
STORAGE_BACKENDS = ("sqlite", "memory", "postgres")
#: the values of ``ctx_plugins.safety.on_disagreement``
ON_DISAGREEMENT = ("block", "stage", "warn")

_EMPTY: Mapping[str, Any] = FrozenMap()


@dataclass(frozen=True)
class CompressionSettings:
    """hermes' ``compression:`` section, with hermes' own defaults (and ours for the keys we add)."""

    enabled: bool = True
    threshold: float = option(0.50, gt=0.0, le=1.0)
    model_thresholds: Mapping[str, float] = option({}, gt=0.0, le=1.0)
    threshold_tokens: int | None = option(None, ge=1)
    threshold_tokens_cap: int | None = option(None, ge=1)
    target_ratio: float = option(0.20, gt=0.0, lt=1.0)
    protect_first_n: int = option(3, ge=0)
    protect_last_n: int = option(20, ge=0)
    min_tail_user_messages: int = option(1, ge=0)
    max_attempts: int = option(3, ge=1, le=10)
    in_place: bool = True
    abort_on_summary_failure: bool = False
    proactive_prune_tokens: int = option(0, ge=0)
    proactive_prune_min_result_chars: int = option(8000, ge=0)
    proactive_prune_min_reclaim_tokens: int = option(4096, ge=0)
    progress_notices: bool = False
    idle_compact_after_seconds: float = option(0, ge=0)
    micro_compact: bool = False


@dataclass(frozen=True)
class MemorySettings:
    """hermes' ``memory:`` section, with hermes' own defaults (and ours for the keys we add)."""

    memory_enabled: bool = True
    user_profile_enabled: bool = True
    memory_char_limit: int = option(2200, ge=1)
    user_char_limit: int = option(1375, ge=1)
    nudge_interval: int = option(10, ge=0)
    flush_min_turns: int = option(6, ge=0)
    provider: str = ""


@dataclass(frozen=True)
class SkillsSettings:
    """hermes' ``skills:`` section, the part the background review uses."""

    creation_nudge_interval: int = option(15, ge=0)


@dataclass(frozen=True)
class ModelSettings:
    """The main model, from hermes' ``model:`` key (a name, or a mapping with ``default``)."""

    name: str = ""
    context_length: int | None = None
    provider: str = ""
    base_url: str = ""
    api_key: str = ""
    #: the output reserve the provider carves out of the window
    max_tokens: int | None = None


@dataclass(frozen=True)
class SummaryModelSettings:
    """hermes' ``auxiliary.compression``: the model that writes summaries (``auto`` = the main model)."""

    provider: str = "auto"
    model: str = ""
    base_url: str = ""
    api_key: str = ""
    timeout: float = option(120.0, gt=0)


@dataclass(frozen=True)
class ProviderSelection:
    """``ctx_plugins.memory``: which memory providers are active."""

    #: ``None`` = the default (``file``, when installed); ``[]`` = no memory provider at all.
    providers: tuple[str, ...] | None = None
    #: the memory namespace; ``None`` = the deployment's own name (``""`` at the top level).
    #: Deployments naming the same namespace share their users' memories.
    namespace: str | None = None


@dataclass(frozen=True)
class Deployment:
    """``ctx_plugins.deployments.<name>``: overrides applied when this deployment is active.

    ``disabled`` and ``plugins`` add to the top-level lists, ``enabled`` takes names back out of
    ``disabled``, ``options`` and ``compression`` are merged key by key; the rest replaces.
    """

    compressor: str | None = None
    memory: ProviderSelection | None = None
    disabled: tuple[str, ...] = ()
    enabled: tuple[str, ...] = ()
    plugins: tuple[str, ...] = ()
    options: Mapping[str, Mapping[str, Any]] = option({})
    compression: Mapping[str, Any] = option({})


@dataclass(frozen=True)
class ArchiveSettings:
    """``ctx_plugins.archive``: where what compaction removes is kept, and for how long."""

    enabled: bool = True
    #: the SQLite file; empty = ``$HERMES_HOME/ctx_archive.db``
    path: str = ""
    #: compactions older than this are purged (0 = keep forever)
    retention_days: float = option(30.0, ge=0)
    #: the oldest compactions are purged when the file grows past this (0 = no bound)
    max_megabytes: float = option(256.0, ge=0)
    #: the anchor index a summary carries, at most (also at most 15% of the compacted context)
    index_max_tokens: int = option(2500, ge=0)
    #: what ``ctx_search`` sees: this ``session``, or every session of the same ``user``
    scope: str = option("session", choices=ARCHIVE_SCOPES, kind="an archive scope")
    #: the most ``ctx_expand`` returns in one call
    expand_max_tokens: int = option(4000, ge=100)
    #: a dense search beside the lexical one in ``ctx_search`` (finds "the deploy port we agreed" as
    #: well as ``8443``): "" = off; "e5-small" = the built-in model (needs the ``embed`` extra); or
    #: ``package.module:function`` mapping a list of texts to vectors. Archived messages are embedded
    #: in the background after each compaction (:mod:`hermes_ctx_plugins.archive.dense`)
    embedder: str = ""
    #: CPU threads the built-in model uses
    embed_threads: int = option(2, ge=1, le=64)
    #: the dense score's share when fused with BM25's (0 = lexical only, 1 = dense only); measured on
    #: the tune half of benchmarks/recall_eval (benchmarks/bench_archive_search.py), see README
    dense_weight: float = option(0.7, ge=0, le=1)


@dataclass(frozen=True)
class SafetySettings:
    """``ctx_plugins.safety``: the memory scanner's layers (:mod:`hermes_ctx_plugins.safety.policy`)."""

    #: layer 2, the learned classifier, beside the rules (layer 1)
    classifier: bool = True
    #: when one layer flags a text and the other does not: ``block`` it, ``stage`` a memory write for the
    #: user's approval (a recalled turn is withheld), or ``warn`` (kept, with a warning)
    on_disagreement: str = option("block", choices=ON_DISAGREEMENT, kind="a disagreement policy")
    #: layer 3: ask hermes' auxiliary model (``auxiliary.compression``, else the main model) when layers 1-2
    #: disagree; off by default. A timeout, an error or an unclear answer leaves the decision to layers 1-2
    judge: bool = False
    #: seconds the judge may take per text
    judge_timeout: float = option(8.0, gt=0, le=120)


@dataclass(frozen=True)
class StorageSettings:
    """``ctx_plugins.storage``: the backend behind the stores the package owns (ctx-local's
    memories, the archive); see :mod:`hermes_ctx_plugins.storage`."""

    #: ``sqlite`` (files under ``$HERMES_HOME``, the default), ``postgres`` (one server a fleet of
    #: workers shares; the extra ``postgres``) or ``memory`` (in the process only: nothing survives a
    #: restart; for tests and throw-away agents)
    backend: str = option("sqlite", choices=STORAGE_BACKENDS, kind="a storage backend")
    #: per store, a backend other than ``backend`` for ctx-local's memories / the archive / the file
    #: provider's MEMORY.md and USER.md ("": ``backend``; only ``postgres`` moves those off the files)
    memory: str = option("", choices=("", *STORAGE_BACKENDS), kind="a storage backend")
    archive: str = option("", choices=("", *STORAGE_BACKENDS), kind="a storage backend")
    documents: str = option("", choices=("", *STORAGE_BACKENDS), kind="a storage backend")
    #: postgres: the server (a libpq connection string or URI); "" reads ``$HERMES_CTX_POSTGRES_DSN``
    dsn: str = ""
    #: postgres: the schema the package's tables live in
    schema: str = option("hermes_ctx", kind="a schema name")
    #: postgres: at most this many connections per process
    pool_size: int = option(4, ge=1, le=100)
    #: postgres: seconds to wait for a connection (the server down: memory is skipped, writes stay queued)
    connect_timeout: float = option(5.0, gt=0, le=120)


@dataclass(frozen=True)
class PluginSettings:
    """The ``ctx_plugins:`` section."""

    compressor: str | None = None
    memory: ProviderSelection = field(default_factory=ProviderSelection)
    #: plugin (entry-point) names or strategy / provider names whose hooks never run
    disabled: tuple[str, ...] = ()
    #: installed (entry-point) plugins whose lifecycle hooks run. A third-party plugin's strategies
    #: and providers can always be selected; its lifecycle hooks run only when it is listed here
    #: or one of its strategies / providers is in use (``disabled`` still wins: never imported)
    plugins: tuple[str, ...] = ()
    #: per strategy / provider options, by name
    options: Mapping[str, Mapping[str, Any]] = option({})
    deployments: Mapping[str, Deployment] = option({})
    #: consecutive failures after which a plugin or provider is suspended
    failure_threshold: int = option(5, ge=1)
    #: how long a suspended plugin or provider stays off before one probe call
    cooldown_seconds: float = option(120.0, ge=0)
    #: the longest one call into a strategy, provider or plugin that is not built in may take (a recall,
    #: a hook, a tool call...) before it counts as failed and the turn goes on without it
    call_timeout_seconds: float = option(8.0, gt=0, le=3600)
    #: the same for such a strategy's compaction (it may ask a model for a summary); the default
    #: strategy compacts instead
    compress_timeout_seconds: float = option(300.0, gt=0, le=3600)
    archive: ArchiveSettings = field(default_factory=ArchiveSettings)
    storage: StorageSettings = field(default_factory=StorageSettings)
    safety: SafetySettings = field(default_factory=SafetySettings)


@dataclass(frozen=True)
class Config:
    """Everything hermes-ctx-plugins reads, with the active deployment already applied."""

    plugins: PluginSettings = field(default_factory=PluginSettings)
    compression: CompressionSettings = field(default_factory=CompressionSettings)
    memory: MemorySettings = field(default_factory=MemorySettings)
    skills: SkillsSettings = field(default_factory=SkillsSettings)
    model: ModelSettings = field(default_factory=ModelSettings)
    summary_model: SummaryModelSettings = field(default_factory=SummaryModelSettings)
    #: hermes' ``context.engine``
    context_engine: str = "compressor"
    #: the active deployment, or ``None``
    deployment: str | None = None
    #: where the config came from: a path, ``<dict>`` or ``<defaults>``
    source: str = "<defaults>"
    #: the 1-based line of every key path in ``source`` (empty when it is not a file); see :meth:`locate`
    lines: Mapping[str, int] = field(default_factory=lambda: _EMPTY, compare=False, repr=False)
    #: ``ctx_plugins.memory.namespace`` at the top level (a deployment that sets none inherits it)
    top_namespace: str | None = None
    #: ``ctx_plugins.options`` at the top level, before the active deployment's (what the top-level namespace's
    #: owners are made with: a deployment's own ``user_id`` is not the top level's)
    top_options: Mapping[str, Mapping[str, Any]] = field(default_factory=lambda: _EMPTY, compare=False, repr=False)
    #: keys at the top level of the file that only ``ctx_plugins:`` has (:data:`.load.STRAY_KEYS`): read by nobody
    stray: tuple[str, ...] = field(default=(), compare=False)

    @property
    def compressor_name(self) -> str:
        return self.plugins.compressor or DEFAULT_COMPRESSOR

    @property
    def provider_names(self) -> tuple[str, ...]:
        selected = self.plugins.memory.providers
        return DEFAULT_PROVIDERS if selected is None else selected

    @property
    def memory_namespace(self) -> str:
        """The namespace this config's memories live in (see :mod:`hermes_ctx_plugins.scope`)."""
        chosen = self.plugins.memory.namespace
        return chosen if chosen is not None else (self.deployment or "")

    def memory_namespaces(self) -> tuple[str, ...]:
        """Every namespace this config file's deployments use: the top level's and each
        deployment's (for stores that cannot list the namespaces they hold)."""
        names = ["", self.memory_namespace, *map(self.deployment_namespace, self.plugins.deployments)]
        return tuple(dict.fromkeys(names))

    def deployment_namespace(self, name: str) -> str:
        """The namespace deployment ``name`` of this config file writes under: its own ``memory.namespace``, else the
        top level's, else its name."""
        deployment = self.plugins.deployments[name]
        chosen = deployment.memory.namespace if deployment.memory is not None else None
        return next((n for n in (chosen, self.top_namespace) if n is not None), name)

    def options_for(self, name: str) -> Mapping[str, Any]:
        return self.plugins.options.get(name, _EMPTY)

    def stray_warnings(self) -> list[str]:
        """One line per :attr:`stray` key: where it is, that nothing reads it, and where it belongs."""
        return [f"{self.source}" + (f":{line}" if (line := self.lines.get(key)) else "")
                + f": {key!r} at the top level is not read (hermes has no such key, and hermes-ctx-plugins reads its "
                f"settings under ctx_plugins:): did you mean ctx_plugins.{key}? indent it under ctx_plugins"
                for key in self.stray]

    def line_of(self, path: str) -> int | None:
        """The line in :attr:`source` that decides the value at the dotted key ``path`` of the
        settings in effect: the active deployment's override when it has one, else the top-level
        key; for a key the file does not set, its nearest enclosing key that it does."""
        return line_in(self.lines, path, self.deployment)

    def locate(self, error: ConfigError) -> ConfigError:
        """``error``, raised by whatever used these settings (the host validating a plugin's
        options, a provider checking its own), annotated with this config's file and the line of
        its key path; an error that already names its source is returned as it is."""
        if error.source:
            return error
        return error.located(source=self.source, line=self.line_of(error.path))


#: the settings a deployment can override, and so the keys whose line may be in a deployment
_DEPLOYABLE = ("ctx_plugins.compressor", "ctx_plugins.memory", "ctx_plugins.disabled",
               "ctx_plugins.options", "compression")


def line_in(lines: Mapping[str, int], path: str, deployment: str | None) -> int | None:
    """The line of ``path``, or of its nearest enclosing key in ``lines``; with a ``deployment``,
    at each level that deployment's override of the key comes first."""
    for prefix in _prefixes(path):
        for candidate in (_in_deployment(prefix, deployment), prefix):
            if candidate is not None and candidate in lines:
                return lines[candidate]
    return None


def _prefixes(path: str) -> list[str]:
    """``path`` and every key path enclosing it, longest first (``a.b[0]``, ``a.b``, ``a``)."""
    cuts = [i for i, char in enumerate(path) if char in ".["]
    return [path, *(path[:i] for i in reversed(cuts))] if path else []


def _in_deployment(path: str, deployment: str | None) -> str | None:
    """Where ``deployment`` overrides the top-level key ``path``, if it can."""
    if deployment is None:
        return None
    base = join_path("ctx_plugins.deployments", deployment)
    if path == "ctx_plugins":
        return base
    for root in _DEPLOYABLE:
        if path == root or path.startswith((f"{root}.", f"{root}[")):
            return f"{base}.{root.removeprefix('ctx_plugins.')}{path[len(root):]}"
    return None

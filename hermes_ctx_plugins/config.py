"""Our settings, read from hermes' own ``config.yaml``.

hermes-ctx-plugins lives in a top-level ``ctx_plugins:`` section; the seed's ``compression:``,
``memory:`` and ``skills:`` keys are read from hermes' sections of the same names, with the seed's
defaults. Everything becomes frozen dataclasses; any bad value raises :class:`ConfigError` naming
the key path, the value, what is valid and, for a file, the file and line. Loading has no side effects.

A config is checked against a few limits before anything is built from it, so that no file can hang
start-up or exhaust the stack: at most :data:`MAX_CONFIG_BYTES` of YAML, :data:`MAX_NODES` values
(an alias counts as many values as it stands for, so an "alias bomb" is refused at once),
:data:`MAX_DEPTH` levels of nesting and :data:`MAX_STRING_CHARS` characters in one string. hermes'
own full default config is about 15 KB, 1,500 values and 6 levels deep. Every number setting is
finite, and no larger in size than :data:`MAX_FLOAT` (floats) or :data:`MAX_INT` (whole numbers)
unless its field allows more.

Keys of hermes' own sections that we do not know are hermes' business and are left alone; unknown
keys inside ``ctx_plugins:`` are errors (with a did-you-mean), since a typo there would silently
change what runs.
"""

from __future__ import annotations

import dataclasses
import math
import os
import types
import typing
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar, Union

import yaml

from .errors import ConfigError, did_you_mean

T = TypeVar("T")

#: The environment variable that picks the active deployment when no argument does.
DEPLOYMENT_ENV = "HERMES_CTX_DEPLOYMENT"
#: The strategy used when ``ctx_plugins.compressor`` is not set.
DEFAULT_COMPRESSOR = "summarize"
#: The providers used when ``ctx_plugins.memory.providers`` is not set.
DEFAULT_PROVIDERS = ("file",)

#: The largest config file read: 17 times hermes' own full default config. PyYAML reads about
#: 50-150 KB a second, so this also bounds how long parsing can take.
MAX_CONFIG_BYTES = 256 * 1024
#: The most values (mappings, lists, keys and scalars) a config may hold, an alias counting as
#: every value it stands for: 35 times hermes' own full default config.
MAX_NODES = 50_000
#: The deepest nesting of mappings and lists (hermes' own default config is 6 levels deep).
MAX_DEPTH = 32
#: The longest single string (a key or a value).
MAX_STRING_CHARS = 100_000
#: The largest float setting unless its field says otherwise: about 31 years in seconds, within
#: what Python's timed waits accept (``threading.TIMEOUT_MAX`` is about 9.2e9 s).
MAX_FLOAT = 1e9
#: The largest whole-number setting unless its field says otherwise: what SQLite and C code hold.
MAX_INT = 2**63 - 1


class FrozenMap(Mapping[str, Any]):
    """A read-only mapping that, unlike ``types.MappingProxyType``, deep-copies and pickles.

    hermes deep-copies the context engine for every agent, settings and options included.
    """

    __slots__ = ("_data",)

    def __init__(self, data: Mapping[str, Any] | None = None) -> None:
        self._data = dict(data or {})

    def __getitem__(self, key: str) -> Any:
        return self._data[key]

    def __iter__(self) -> Any:
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)

    def __repr__(self) -> str:
        return f"FrozenMap({self._data!r})"

    def __hash__(self) -> int:
        return hash(tuple(self._data.items()))

    def __deepcopy__(self, memo: dict[int, Any]) -> FrozenMap:
        return self  # immutable all the way down (see freeze)

    def __reduce__(self) -> tuple[Any, ...]:
        return (FrozenMap, (self._data,))


def freeze(value: Any) -> Any:
    """``value`` with every mapping made a :class:`FrozenMap` and every list a tuple."""
    if isinstance(value, Mapping):
        return FrozenMap({k: freeze(v) for k, v in value.items()})
    if isinstance(value, (list, tuple)):
        return tuple(freeze(v) for v in value)
    return value


_EMPTY: Mapping[str, Any] = FrozenMap()


def _setting(default: Any, *, lo: float | None = None, hi: float | None = None,
             above: float | None = None, below: float | None = None) -> Any:
    """A dataclass field with an inclusive (lo/hi) or exclusive (above/below) numeric range."""
    bounds = {"lo": lo, "hi": hi, "above": above, "below": below}
    meta = {k: v for k, v in bounds.items() if v is not None}
    if isinstance(default, (dict, tuple, list)):
        frozen = freeze(default)
        return field(default_factory=lambda: frozen, metadata=meta)
    return field(default=default, metadata=meta)


@dataclass(frozen=True)
class CompressionSettings:
    """hermes' ``compression:`` section, with the seed's defaults."""

    enabled: bool = True
    threshold: float = _setting(0.50, above=0.0, hi=1.0)
    model_thresholds: Mapping[str, float] = _setting({}, above=0.0, hi=1.0)
    threshold_tokens: int | None = _setting(None, lo=1)
    threshold_tokens_cap: int | None = _setting(None, lo=1)
    target_ratio: float = _setting(0.20, above=0.0, below=1.0)
    protect_first_n: int = _setting(3, lo=0)
    protect_last_n: int = _setting(20, lo=0)
    min_tail_user_messages: int = _setting(1, lo=0)
    max_attempts: int = _setting(3, lo=1, hi=10)
    in_place: bool = True
    abort_on_summary_failure: bool = False
    proactive_prune_tokens: int = _setting(0, lo=0)
    proactive_prune_min_result_chars: int = _setting(8000, lo=0)
    proactive_prune_min_reclaim_tokens: int = _setting(4096, lo=0)
    progress_notices: bool = False
    idle_compact_after_seconds: float = _setting(0, lo=0)
    micro_compact: bool = False


@dataclass(frozen=True)
class MemorySettings:
    """hermes' ``memory:`` section, with the seed's defaults."""

    memory_enabled: bool = True
    user_profile_enabled: bool = True
    memory_char_limit: int = _setting(2200, lo=1)
    user_char_limit: int = _setting(1375, lo=1)
    nudge_interval: int = _setting(10, lo=0)
    flush_min_turns: int = _setting(6, lo=0)
    provider: str = ""


@dataclass(frozen=True)
class SkillsSettings:
    """hermes' ``skills:`` section, the part the background review uses."""

    creation_nudge_interval: int = _setting(15, lo=0)


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
    timeout: float = _setting(120.0, above=0)


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

    ``disabled`` adds to the top-level list, ``enabled`` takes names back out of it, ``options``
    and ``compression`` are merged key by key; the rest replaces.
    """

    compressor: str | None = None
    memory: ProviderSelection | None = None
    disabled: tuple[str, ...] = ()
    enabled: tuple[str, ...] = ()
    options: Mapping[str, Mapping[str, Any]] = _setting({})
    compression: Mapping[str, Any] = _setting({})


ARCHIVE_SCOPES = ("session", "user")
#: the storage backends (:mod:`hermes_ctx_plugins.storage`)
STORAGE_BACKENDS = ("sqlite", "memory")


@dataclass(frozen=True)
class ArchiveSettings:
    """``ctx_plugins.archive``: where what compaction removes is kept, and for how long."""

    enabled: bool = True
    #: the SQLite file; empty = ``$HERMES_HOME/ctx_archive.db``
    path: str = ""
    #: compactions older than this are purged (0 = keep forever)
    retention_days: float = _setting(30.0, lo=0)
    #: the oldest compactions are purged when the file grows past this (0 = no bound)
    max_megabytes: float = _setting(256.0, lo=0)
    #: the anchor index a summary carries, at most (also at most 15% of the compacted context)
    index_max_tokens: int = _setting(2500, lo=0)
    #: what ``ctx_search`` sees: this ``session``, or every session of the same ``user``
    scope: str = "session"
    #: the most ``ctx_expand`` returns in one call
    expand_max_tokens: int = _setting(4000, lo=100)

    def __post_init__(self) -> None:
        if self.scope not in ARCHIVE_SCOPES:
            raise ConfigError(f"{self.scope!r} is not an archive scope; valid: {', '.join(ARCHIVE_SCOPES)}",
                              path="ctx_plugins.archive.scope", value=self.scope,
                              expected=", ".join(ARCHIVE_SCOPES))


@dataclass(frozen=True)
class StorageSettings:
    """``ctx_plugins.storage``: the backend behind the stores the package owns (ctx-local's
    memories, the archive); see :mod:`hermes_ctx_plugins.storage`."""

    #: ``sqlite`` (files under ``$HERMES_HOME``, the default) or ``memory`` (in the process only:
    #: nothing survives a restart; for tests and throw-away agents)
    backend: str = "sqlite"

    def __post_init__(self) -> None:
        if self.backend not in STORAGE_BACKENDS:
            raise ConfigError(f"{self.backend!r} is not a storage backend; valid: {', '.join(STORAGE_BACKENDS)}"
                              f"{did_you_mean(self.backend, STORAGE_BACKENDS)}",
                              path="ctx_plugins.storage.backend", value=self.backend,
                              expected=", ".join(STORAGE_BACKENDS))


@dataclass(frozen=True)
class PluginSettings:
    """The ``ctx_plugins:`` section."""

    compressor: str | None = None
    memory: ProviderSelection = field(default_factory=ProviderSelection)
    #: plugin (entry-point) names or strategy / provider names whose hooks never run
    disabled: tuple[str, ...] = ()
    #: per strategy / provider options, by name
    options: Mapping[str, Mapping[str, Any]] = _setting({})
    deployments: Mapping[str, Deployment] = _setting({})
    #: consecutive failures after which a plugin or provider is suspended
    failure_threshold: int = _setting(5, lo=1)
    #: how long a suspended plugin or provider stays off before one probe call
    cooldown_seconds: float = _setting(120.0, lo=0)
    archive: ArchiveSettings = field(default_factory=ArchiveSettings)
    storage: StorageSettings = field(default_factory=StorageSettings)


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
        names = ["", self.memory_namespace]
        for name, dep in self.plugins.deployments.items():
            chosen = dep.memory.namespace if dep.memory is not None else None
            names.append(next((n for n in (chosen, self.top_namespace) if n is not None), name))
        return tuple(dict.fromkeys(names))

    def options_for(self, name: str) -> Mapping[str, Any]:
        return self.plugins.options.get(name, _EMPTY)

    def line_of(self, path: str) -> int | None:
        """The line in :attr:`source` that decides the value at the dotted key ``path`` of the
        settings in effect: the active deployment's override when it has one, else the top-level
        key; for a key the file does not set, its nearest enclosing key that it does."""
        return _line_in(self.lines, path, self.deployment)

    def locate(self, error: ConfigError) -> ConfigError:
        """``error``, raised by whatever used these settings (the host validating a plugin's
        options, a provider checking its own), annotated with this config's file and the line of
        its key path; an error that already names its source is returned as it is."""
        if error.source:
            return error
        return error.located(source=self.source, line=self.line_of(error.path))


def hermes_home() -> Path:
    """``$HERMES_HOME``, or ``~/.hermes`` as hermes itself defaults."""
    return Path(os.environ.get("HERMES_HOME") or Path.home() / ".hermes").expanduser()


# --------------------------------------------------------------------------- loading


def load_config(
    source: str | os.PathLike[str] | Mapping[str, Any] | None = None,
    *,
    deployment: str | None = None,
) -> Config:
    """Read hermes' config and return ours.

    :param source: a path to a ``config.yaml``, an already-parsed mapping, or ``None`` for
        ``$HERMES_HOME/config.yaml`` (a missing default file means all defaults).
    :param deployment: the deployment to apply; defaults to ``$HERMES_CTX_DEPLOYMENT``.
    :raises ConfigError: for malformed YAML or any invalid value.
    """
    lines: Mapping[str, int] = _EMPTY
    if source is None or isinstance(source, (str, os.PathLike)):
        explicit = source is not None
        path = Path(source) if source is not None else hermes_home() / "config.yaml"
        label = str(path)
        try:
            text = _read_text(path, label)
        except FileNotFoundError:
            if explicit:
                raise ConfigError("config file not found", source=label) from None
            text, label = "", f"{label} (not found: defaults)"
        except OSError as exc:
            raise ConfigError(f"cannot read config file: {exc}", source=label) from None
        data, lines = _parse_yaml(text, label)
    elif isinstance(source, Mapping):
        label, data = "<dict>", source
        try:
            _check_limits(data)
        except ConfigError as exc:
            raise exc.located(source=label, line=None) from None
    else:
        raise ConfigError(
            f"config must be a path, a mapping or None, got {type(source).__name__}",
            value=source, expected="a path to config.yaml, a dict, or None",
        )
    if deployment is None:
        deployment = os.environ.get(DEPLOYMENT_ENV) or None
    try:
        return _config_from_mapping(data, deployment=deployment, label=label, lines=lines)
    except ConfigError as exc:
        # no deployment mapping: a load-time error's path is where its value is written
        raise exc.located(source=label, line=_line_in(lines, exc.path, None)) from None


def _read_text(path: Path, label: str) -> str:
    """The file's text, refusing a file over :data:`MAX_CONFIG_BYTES` without reading all of it."""
    with open(path, "rb") as handle:
        raw = handle.read(MAX_CONFIG_BYTES + 1)
    if len(raw) > MAX_CONFIG_BYTES:
        raise ConfigError(
            f"the file is larger than {MAX_CONFIG_BYTES:,} bytes, the limit for a config file; "
            "keep only settings in it (generated data belongs in files of its own)",
            expected=f"at most {MAX_CONFIG_BYTES:,} bytes", source=label,
            line=raw.count(b"\n", 0, MAX_CONFIG_BYTES) + 1,
        )
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(f"cannot read config file: {exc}", source=label,
                          line=raw.count(b"\n", 0, exc.start) + 1, expected="UTF-8 text") from None


def _parse_yaml(text: str, label: str) -> tuple[Mapping[str, Any], Mapping[str, int]]:
    """The document in ``text`` and the line of each of its key paths."""
    loader: _Loader | None = None
    try:
        loader = _Loader(text)  # reading starts here: it refuses control characters at once
        node = loader.get_single_node()
        data = loader.construct_document(node) if node is not None else None
        lines = FrozenMap(_key_lines(node, loader))
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark is not None else None
        problem = " ".join(p for p in (exc.context, exc.problem) if p)
        raise ConfigError(f"malformed YAML: {problem}", source=label, line=line) from None
    except yaml.reader.ReaderError as exc:
        raise ConfigError(f"malformed YAML: {exc.reason} ({exc.character!r})", source=label,
                          line=text.count("\n", 0, exc.position) + 1) from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"malformed YAML: {exc}", source=label) from None
    except ConfigError as exc:  # a limit, found while composing
        raise exc.located(source=label, line=exc.line) from None
    finally:
        if loader is not None:
            loader.dispose()
    if data is None:
        return {}, lines
    if not isinstance(data, Mapping):
        raise ConfigError(
            f"the top level must be a mapping of sections, got {_describe(data)}",
            value=data, expected="a mapping such as 'ctx_plugins: {...}'", source=label, line=1,
        )
    return data, lines


def _config_from_mapping(data: Mapping[str, Any], *, deployment: str | None, label: str,
                         lines: Mapping[str, int]) -> Config:
    section = _section(data, "ctx_plugins")
    plugins = build_dataclass(PluginSettings, section, "ctx_plugins")
    if "" in plugins.deployments:  # it would be the top level's namespace, and no name to pick it by
        raise ConfigError("a deployment needs a name; '' is the top-level settings", path="ctx_plugins.deployments",
                          value="", expected="a non-empty deployment name")
    top_namespace = plugins.memory.namespace
    compression_raw = _section(data, "compression")
    compression = _build_lenient(CompressionSettings, compression_raw, "compression")
    if deployment is not None:
        if deployment not in plugins.deployments:
            names = sorted(plugins.deployments)
            raise ConfigError(
                f"unknown deployment {deployment!r}{did_you_mean(deployment, names)}; "
                f"defined: {', '.join(names) or '(none)'}",
                path="ctx_plugins.deployments", value=deployment,
                expected="one of the names under ctx_plugins.deployments",
            )
        active = plugins.deployments[deployment]
        plugins = _apply_deployment(plugins, active)
        if active.compression:
            # the top level passed above, so an error here is the deployment's own value
            compression = _build_lenient(
                CompressionSettings, {**compression_raw, **active.compression},
                _join(_join("ctx_plugins.deployments", deployment), "compression"))
    return Config(
        plugins=plugins,
        compression=compression,
        memory=_build_lenient(MemorySettings, _section(data, "memory"), "memory"),
        skills=_build_lenient(SkillsSettings, _section(data, "skills"), "skills"),
        model=_model_settings(data.get("model")),
        summary_model=_build_lenient(SummaryModelSettings,
                                     _section(_section(data, "auxiliary"), "compression"),
                                     "auxiliary.compression"),
        context_engine=_text(_section(data, "context").get("engine")) or "compressor",
        deployment=deployment,
        source=label,
        lines=lines,
        top_namespace=top_namespace,
    )


def _apply_deployment(base: PluginSettings, dep: Deployment) -> PluginSettings:
    disabled = [n for n in (*base.disabled, *dep.disabled) if n not in dep.enabled]
    options = {name: dict(opts) for name, opts in base.options.items()}
    for name, opts in dep.options.items():
        options.setdefault(name, {}).update(opts)
    return dataclasses.replace(
        base,
        compressor=dep.compressor if dep.compressor is not None else base.compressor,
        memory=_merge_memory(base.memory, dep.memory),
        disabled=tuple(dict.fromkeys(disabled)),
        options=freeze(options),
    )


def _merge_memory(base: ProviderSelection, dep: ProviderSelection | None) -> ProviderSelection:
    """A deployment's ``memory:`` key by key: what it does not set is the top level's."""
    if dep is None:
        return base
    return ProviderSelection(providers=dep.providers if dep.providers is not None else base.providers,
                             namespace=dep.namespace if dep.namespace is not None else base.namespace)


def _section(data: Mapping[str, Any], key: str) -> Mapping[str, Any]:
    value = data.get(key)
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise ConfigError(
            f"must be a mapping of settings, got {_describe(value)}",
            path=key, value=value, expected="a mapping",
        )
    return value


def _model_settings(value: Any) -> ModelSettings:
    # hermes owns this key and validates it; we only read what we can use.
    if isinstance(value, str):
        return ModelSettings(name=value)
    if not isinstance(value, Mapping):
        return ModelSettings()

    def positive_int(key: str) -> int | None:
        number = value.get(key)
        usable = isinstance(number, int) and not isinstance(number, bool) and 0 < number <= MAX_INT
        return number if usable else None

    return ModelSettings(
        name=_text(value.get("default")) or _text(value.get("name")),
        context_length=positive_int("context_length"),
        provider=_text(value.get("provider")),
        base_url=_text(value.get("base_url")),
        api_key=_text(value.get("api_key")),
        max_tokens=positive_int("max_tokens"),
    )


def _text(value: Any) -> str:
    """A setting of hermes' that we only read, as text ("" for what cannot be one)."""
    if isinstance(value, str):
        return value
    if isinstance(value, (int, float)) and not isinstance(value, bool) and abs(value) <= MAX_INT:
        return str(value)
    return ""


# --------------------------------------------------------------------------- building


def build_dataclass(cls: type[T], data: Any, path: str) -> T:
    """Build the frozen dataclass ``cls`` from ``data``, refusing unknown keys.

    Also used for the ``options_class`` of strategies and providers, so their options get the
    same precise errors as ours.
    """
    return _build(cls, data, path, strict=True)


def plugin_options(name: str, options_class: type[Any] | None, options: Any) -> Any:
    """A strategy's or provider's options: its ``options_class`` (validated) when it has one."""
    if options_class is None:
        return freeze(options or {})
    if isinstance(options, options_class):
        return options
    return build_dataclass(options_class, options or {}, f"ctx_plugins.options.{name}")


def _build_lenient(cls: type[T], data: Mapping[str, Any], path: str) -> T:
    """Like :func:`build_dataclass` for a section hermes shares with us: unknown keys are hermes'."""
    return _build(cls, data, path, strict=False)


def _build(cls: type[T], data: Any, path: str, *, strict: bool) -> T:
    if data is None:
        data = {}
    if not isinstance(data, Mapping):
        raise ConfigError(
            f"must be a mapping, got {_describe(data)}", path=path, value=data,
            expected=f"a mapping with keys: {', '.join(_field_names(cls))}",
        )
    hints = typing.get_type_hints(cls)
    fields = {f.name: f for f in dataclasses.fields(cls) if f.init}  # type: ignore[arg-type]
    kwargs: dict[str, Any] = {}
    for key, value in data.items():
        key_path = _join(path, key)
        if key not in fields:
            if not strict:
                continue
            raise ConfigError(
                f"unknown key {_short_repr(key)}{did_you_mean(key, fields)}; valid keys: {', '.join(fields)}",
                path=key_path, value=key, expected=", ".join(fields),
            )
        spec = fields[key]
        kwargs[key] = _coerce(value, hints[key], key_path, dict(spec.metadata), strict=strict)
    return cls(**kwargs)


def _field_names(cls: type) -> list[str]:
    return [f.name for f in dataclasses.fields(cls)]  # type: ignore[arg-type]


def _coerce(value: Any, hint: Any, path: str, bounds: dict[str, float], *, strict: bool) -> Any:
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if origin in (Union, types.UnionType):
        options = [a for a in args if a is not type(None)]
        if value is None and len(options) < len(args):
            return None
        if len(options) == 1:
            return _coerce(value, options[0], path, bounds, strict=strict)
    if dataclasses.is_dataclass(hint):
        return _build(hint, value, path, strict=strict)  # type: ignore[arg-type]
    if hint is bool:
        if isinstance(value, bool):
            return value
        raise _type_error(path, value, "true or false")
    if hint is int:
        if isinstance(value, int) and not isinstance(value, bool):
            return _check_bounds(value, path, bounds, limit=MAX_INT)
        raise _type_error(path, value, "a whole number" + _range_text(bounds))
    if hint is float:
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return float(_check_bounds(value, path, bounds, limit=MAX_FLOAT))
        raise _type_error(path, value, "a number" + _range_text(bounds))
    if hint is str:
        if isinstance(value, str):
            return value
        raise _type_error(path, value, "a string")
    if origin is tuple:
        if isinstance(value, str) or not isinstance(value, (list, tuple)):
            example = f"[{value}]" if isinstance(value, str) else "[a, b]"
            raise _type_error(path, value, f"a list, e.g. {example}")
        items = [_coerce(v, args[0], f"{path}[{i}]", bounds, strict=strict) for i, v in enumerate(value)]
        return tuple(items)
    if origin is Mapping or hint is Mapping:
        if not isinstance(value, Mapping):
            raise _type_error(path, value, "a mapping")
        value_type = args[1] if args else Any
        out = {}
        for k, v in value.items():
            if not isinstance(k, str):
                raise _type_error(_join(path, k), k, "string keys")
            out[k] = _coerce(v, value_type, _join(path, k), bounds, strict=strict)
        return FrozenMap(out)
    if hint is Any:
        return freeze(value)
    raise TypeError(f"config field {path} has an unsupported type {hint!r}")  # a bug of ours


def _check_bounds(value: float, path: str, bounds: dict[str, float], *, limit: float) -> Any:
    """``value`` if it is finite and in the field's range; a side the field leaves open is
    bounded by ``limit``, so no setting is too large for the arithmetic and waits it feeds."""
    expected = _range_text(bounds).strip()
    if isinstance(value, float) and not math.isfinite(value):
        wanted = f"a number {expected}" if expected else "a finite number"
        raise ConfigError(f"{value!r} is not a finite number; expected {wanted}",
                          path=path, value=value, expected=wanted)
    lo, hi = bounds.get("lo"), bounds.get("hi")
    above, below = bounds.get("above"), bounds.get("below")
    if (hi is None and below is None and value > limit) or (lo is None and above is None and value < -limit):
        size = f"{limit:,}" if isinstance(limit, int) else f"{limit:g}"
        wanted = " and ".join([*filter(None, [expected]), f"at most {size} in size"])
        raise ConfigError(f"{_short_repr(value)} is out of range; expected {wanted}",
                          path=path, value=value, expected=wanted)
    if ((lo is not None and value < lo) or (hi is not None and value > hi)
            or (above is not None and value <= above) or (below is not None and value >= below)):
        raise ConfigError(
            f"{_short_repr(value)} is out of range; expected{_range_text(bounds)}",
            path=path, value=value, expected=expected,
        )
    return value


def _range_text(bounds: dict[str, float]) -> str:
    parts = []
    if "lo" in bounds:
        parts.append(f">= {bounds['lo']:g}")
    if "above" in bounds:
        parts.append(f"> {bounds['above']:g}")
    if "hi" in bounds:
        parts.append(f"<= {bounds['hi']:g}")
    if "below" in bounds:
        parts.append(f"< {bounds['below']:g}")
    return f" {' and '.join(parts)}" if parts else ""


def _type_error(path: str, value: Any, expected: str) -> ConfigError:
    return ConfigError(f"got {_describe(value)}, expected {expected}", path=path, value=value,
                       expected=expected)


def _describe(value: Any) -> str:
    if value is None:
        return "nothing (null)"
    return f"{type(value).__name__} {_short_repr(value)}"


def _short_repr(value: Any) -> str:
    """``repr(value)`` cut to 60 characters; an integer too long to print is named by its size."""
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 200:
        return f"<an integer of {value.bit_length():,} bits>"  # repr() refuses past 4,300 digits
    text = repr(value)
    return text[:57] + "..." if len(text) > 60 else text


def _join(path: str, key: object) -> str:
    """The key path of ``key`` inside ``path``, spelt the same by every error and the line map."""
    text = key if isinstance(key, str) else _short_repr(key)
    return f"{path}.{text}" if path else text


# --------------------------------------------------------------------------- limits and lines


class _Loader(yaml.SafeLoader):
    """PyYAML's safe loader, checking the limits while it composes, before anything is built.

    Values are counted as they are composed, an alias as every value of the node it names, so
    neither a billion laughs nor a long flat list is composed past :data:`MAX_NODES`; a value
    PyYAML cannot build (a month 13, an integer of 5,000 digits) is a marked YAML error.
    """

    def __init__(self, text: str) -> None:
        super().__init__(text)
        self._depth = 0
        self._total = 0  # values so far, aliases counted as written out
        self._sizes: dict[int, tuple[int, int]] = {}  # id(node) -> (values, levels), once composed

    def compose_node(self, parent: Any, index: Any) -> Any:
        if self.check_event(yaml.AliasEvent):
            event = self.peek_event()  # type: ignore[no-untyped-call]
            target = self.anchors.get(event.anchor)
            if target is not None:  # PyYAML itself reports an undefined alias
                size = self._sizes.get(id(target))
                if size is None:
                    raise _limit_error(f"the alias *{event.anchor} is used inside the value it names, so "
                                       "that value would never end; use an alias only after the value "
                                       "of its anchor is complete", "no alias inside its own anchor",
                                       event.start_mark)
                self._check_depth(self._depth + size[1], event.start_mark)
                self._count(size[0], event.start_mark)
            return super().compose_node(parent, index)
        mark = self.peek_event().start_mark  # type: ignore[no-untyped-call]
        self._depth += 1
        self._check_depth(self._depth, mark)
        self._count(1, mark)
        node = super().compose_node(parent, index)
        self._depth -= 1
        if node is not None:
            self._measure(node)
        return node

    def construct_object(self, node: Any, deep: bool = False) -> Any:
        try:
            return super().construct_object(node, deep)
        except (ValueError, TypeError, KeyError, AttributeError, OverflowError) as exc:
            what = _short_repr(node.value) if isinstance(node, yaml.ScalarNode) else "this value"
            raise yaml.constructor.ConstructorError(
                None, None, f"{what} is not a valid {node.tag.rpartition(':')[2]} ({exc})",
                node.start_mark) from None

    def _measure(self, node: yaml.Node) -> None:
        if isinstance(node, yaml.ScalarNode):
            if len(node.value) > MAX_STRING_CHARS:
                raise _string_error(len(node.value), node.start_mark)
            self._sizes[id(node)] = (1, 1)
            return
        if isinstance(node, yaml.MappingNode):
            children = [part for pair in node.value for part in pair]
        else:
            children = node.value
        sizes = [self._sizes[id(child)] for child in children]
        self._sizes[id(node)] = (1 + sum(size[0] for size in sizes), 1 + max((size[1] for size in sizes), default=0))

    def _count(self, values: int, mark: Any) -> None:
        self._total += values
        if self._total > MAX_NODES:
            raise _nodes_error(mark)

    @staticmethod
    def _check_depth(levels: int, mark: Any) -> None:
        if levels > MAX_DEPTH:
            raise _depth_error(mark)


def _limit_error(message: str, expected: str, mark: Any) -> ConfigError:
    return ConfigError(message, expected=expected, line=mark.line + 1 if mark is not None else None)


def _depth_error(mark: Any) -> ConfigError:
    return _limit_error(f"values are nested more than {MAX_DEPTH} levels deep, the limit for a config "
                        "(hermes' own is 6 deep); flatten the structure",
                        f"at most {MAX_DEPTH} levels of mappings and lists", mark)


def _nodes_error(mark: Any) -> ConfigError:
    return _limit_error(f"the config stands for more than {MAX_NODES:,} values (an alias or a shared value "
                        "counts as every value it names), the limit for a config (hermes' own has about 1,500); write "
                        "the values out instead of multiplying them with aliases, and keep generated "
                        "data in a file of its own", f"at most {MAX_NODES:,} values", mark)


def _string_error(length: int, mark: Any) -> ConfigError:
    return _limit_error(f"a string of {length:,} characters, longer than the {MAX_STRING_CHARS:,} a "
                        "config string may have; keep long text in a file of its own",
                        f"strings of at most {MAX_STRING_CHARS:,} characters", mark)


def _check_limits(data: Mapping[str, Any]) -> None:
    """The limits the YAML loader checks, for a config given as Python values.

    The walk counts shared values each time they occur and stops at the first limit, so it is
    bounded however the values are shared, or even cyclic.
    """
    count = 1
    stack: list[tuple[Any, int]] = [(data, 1)]
    while stack:
        value, level = stack.pop()
        if level > MAX_DEPTH:
            raise _depth_error(None)
        if isinstance(value, str) and len(value) > MAX_STRING_CHARS:
            raise _string_error(len(value), None)
        children: list[Any] = []
        if isinstance(value, Mapping):
            children = [part for pair in value.items() for part in pair]
        elif isinstance(value, (list, tuple)):
            children = list(value)
        count += len(children)
        if count > MAX_NODES:
            raise _nodes_error(None)
        stack.extend((child, level + 1) for child in children)


def _key_lines(root: yaml.Node | None, loader: _Loader) -> dict[str, int]:
    """The 1-based line of every key path under ``root``, spelt as :func:`_join` spells them.

    A value reached through an alias is listed once, where its anchor is; its uses are listed by
    their own key, which is the line :func:`_line_in` falls back to.
    """
    lines: dict[str, int] = {}
    seen: set[int] = set()
    stack: list[tuple[str, yaml.Node]] = [("", root)] if root is not None else []
    while stack:
        path, node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, yaml.MappingNode):
            for key_node, value_node in node.value:
                if isinstance(key_node, yaml.ScalarNode):
                    child = _join(path, loader.construct_object(key_node))
                    lines[child] = key_node.start_mark.line + 1
                    stack.append((child, value_node))
        elif isinstance(node, yaml.SequenceNode):
            for index, item in enumerate(node.value):
                lines[f"{path}[{index}]"] = item.start_mark.line + 1
                stack.append((f"{path}[{index}]", item))
    return lines


#: the settings a deployment can override, and so the keys whose line may be in a deployment
_DEPLOYABLE = ("ctx_plugins.compressor", "ctx_plugins.memory", "ctx_plugins.disabled",
               "ctx_plugins.options", "compression")


def _line_in(lines: Mapping[str, int], path: str, deployment: str | None) -> int | None:
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
    base = _join("ctx_plugins.deployments", deployment)
    if path == "ctx_plugins":
        return base
    for root in _DEPLOYABLE:
        if path == root or path.startswith((f"{root}.", f"{root}[")):
            return f"{base}.{root.removeprefix('ctx_plugins.')}{path[len(root):]}"
    return None

"""Our settings, read from hermes' own ``config.yaml``.

hermes-ctx-plugins lives in a top-level ``ctx_plugins:`` section; the seed's ``compression:``,
``memory:`` and ``skills:`` keys are read from hermes' sections of the same names, with the seed's
defaults. Everything becomes frozen dataclasses; any bad value raises :class:`ConfigError` naming
the key path, the value, what is valid and, for a file, the line. Loading has no side effects.

Keys of hermes' own sections that we do not know are hermes' business and are left alone; unknown
keys inside ``ctx_plugins:`` are errors (with a did-you-mean), since a typo there would silently
change what runs.
"""

from __future__ import annotations

import dataclasses
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
    """hermes' ``compression:`` section (SPEC 1.6), with the seed's defaults."""

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
    """hermes' ``memory:`` section (SPEC 2.6), with the seed's defaults."""

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
            names.append(chosen if chosen is not None else name)
        return tuple(dict.fromkeys(names))

    def options_for(self, name: str) -> Mapping[str, Any]:
        return self.plugins.options.get(name, _EMPTY)


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
    text: str | None = None
    if source is None or isinstance(source, (str, os.PathLike)):
        explicit = source is not None
        path = Path(source) if source is not None else hermes_home() / "config.yaml"
        label = str(path)
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            if explicit:
                raise ConfigError("config file not found", source=label) from None
            text, label = "", f"{label} (not found: defaults)"
        except (OSError, UnicodeDecodeError) as exc:
            raise ConfigError(f"cannot read config file: {exc}", source=label) from None
        data = _parse_yaml(text, label)
    elif isinstance(source, Mapping):
        label, data = "<dict>", source
    else:
        raise ConfigError(
            f"config must be a path, a mapping or None, got {type(source).__name__}",
            value=source, expected="a path to config.yaml, a dict, or None",
        )
    if deployment is None:
        deployment = os.environ.get(DEPLOYMENT_ENV) or None
    try:
        return _config_from_mapping(data, deployment=deployment, label=label)
    except ConfigError as exc:
        line = _line_of(text, exc.path) if text else None
        raise exc.located(source=label, line=line) from None


def _parse_yaml(text: str, label: str) -> Mapping[str, Any]:
    try:
        data = yaml.safe_load(text)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark is not None else None
        problem = " ".join(p for p in (exc.context, exc.problem) if p)
        raise ConfigError(f"malformed YAML: {problem}", source=label, line=line) from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"malformed YAML: {exc}", source=label) from None
    if data is None:
        return {}
    if not isinstance(data, Mapping):
        raise ConfigError(
            f"the top level must be a mapping of sections, got {_describe(data)}",
            value=data, expected="a mapping such as 'ctx_plugins: {...}'", source=label, line=1,
        )
    return data


def _config_from_mapping(data: Mapping[str, Any], *, deployment: str | None, label: str) -> Config:
    section = _section(data, "ctx_plugins")
    plugins = build_dataclass(PluginSettings, section, "ctx_plugins")
    compression_raw = dict(_section(data, "compression"))
    active = None
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
        compression_raw.update(active.compression)
    compression_path = "compression" if active is None or not active.compression else (
        f"ctx_plugins.deployments.{deployment}.compression")
    return Config(
        plugins=plugins,
        compression=_build_lenient(CompressionSettings, compression_raw, compression_path),
        memory=_build_lenient(MemorySettings, _section(data, "memory"), "memory"),
        skills=_build_lenient(SkillsSettings, _section(data, "skills"), "skills"),
        model=_model_settings(data.get("model")),
        summary_model=_build_lenient(SummaryModelSettings,
                                     _section(_section(data, "auxiliary"), "compression"),
                                     "auxiliary.compression"),
        context_engine=str(_section(data, "context").get("engine") or "compressor"),
        deployment=deployment,
        source=label,
    )


def _apply_deployment(base: PluginSettings, dep: Deployment) -> PluginSettings:
    disabled = [n for n in (*base.disabled, *dep.disabled) if n not in dep.enabled]
    options = {name: dict(opts) for name, opts in base.options.items()}
    for name, opts in dep.options.items():
        options.setdefault(name, {}).update(opts)
    return dataclasses.replace(
        base,
        compressor=dep.compressor if dep.compressor is not None else base.compressor,
        memory=dep.memory if dep.memory is not None else base.memory,
        disabled=tuple(dict.fromkeys(disabled)),
        options=freeze(options),
    )


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
        return number if isinstance(number, int) and not isinstance(number, bool) and number > 0 else None

    return ModelSettings(
        name=str(value.get("default") or value.get("name") or ""),
        context_length=positive_int("context_length"),
        provider=str(value.get("provider") or ""),
        base_url=str(value.get("base_url") or ""),
        api_key=str(value.get("api_key") or ""),
        max_tokens=positive_int("max_tokens"),
    )


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
        key_path = f"{path}.{key}" if path else str(key)
        if key not in fields:
            if not strict:
                continue
            raise ConfigError(
                f"unknown key {key!r}{did_you_mean(key, fields)}; valid keys: {', '.join(fields)}",
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
            return _check_bounds(value, path, bounds)
        raise _type_error(path, value, "a whole number" + _range_text(bounds))
    if hint is float:
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return _check_bounds(float(value), path, bounds)
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
                raise _type_error(f"{path}.{k}", k, "string keys")
            out[k] = _coerce(v, value_type, f"{path}.{k}", bounds, strict=strict)
        return FrozenMap(out)
    if hint is Any:
        return freeze(value)
    raise TypeError(f"config field {path} has an unsupported type {hint!r}")  # a bug of ours


def _check_bounds(value: float, path: str, bounds: dict[str, float]) -> Any:
    lo, hi = bounds.get("lo"), bounds.get("hi")
    above, below = bounds.get("above"), bounds.get("below")
    if ((lo is not None and value < lo) or (hi is not None and value > hi)
            or (above is not None and value <= above) or (below is not None and value >= below)):
        raise ConfigError(
            f"{value!r} is out of range; expected{_range_text(bounds)}",
            path=path, value=value, expected=_range_text(bounds).strip(),
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
    text = repr(value)
    if len(text) > 60:
        text = text[:57] + "..."
    return f"{type(value).__name__} {text}"


def _line_of(text: str, path: str) -> int | None:
    """The 1-based line of the dotted ``path`` in the YAML ``text``, as near as it can be found."""
    if not path:
        return None
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError:
        return None
    line = None
    for part in _split_path(path):
        if isinstance(node, yaml.MappingNode):
            match = next(((k, v) for k, v in node.value if getattr(k, "value", None) == part), None)
            if match is None:
                break
            line, node = match[0].start_mark.line + 1, match[1]
        elif isinstance(node, yaml.SequenceNode) and isinstance(part, int) and part < len(node.value):
            node = node.value[part]
            line = node.start_mark.line + 1
        else:
            break
    return line


def _split_path(path: str) -> list[str | int]:
    parts: list[str | int] = []
    for chunk in path.split("."):
        name, _, rest = chunk.partition("[")
        if name:
            parts.append(name)
        while rest:
            index, _, rest = rest.partition("]")
            if index.isdigit():
                parts.append(int(index))
            rest = rest.lstrip("[")
    return parts

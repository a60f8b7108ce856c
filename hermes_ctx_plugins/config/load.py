"""Loading: hermes' ``config.yaml`` (or a mapping) in, a validated :class:`~.settings.Config` out.

hermes-ctx-plugins lives in a top-level ``ctx_plugins:`` section; hermes' own ``compression:``,
``memory:``, ``skills:`` and ``auxiliary.compression`` keys are read from its sections of those
names. Keys of hermes' sections that we do not know are hermes' business and are left alone; unknown
keys inside ``ctx_plugins:`` are errors (with a did-you-mean), since a typo there would silently
change what runs. The active deployment's overrides are applied here. Loading has no side effects.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, TypeVar

from ..embedding import check_spec
from ..environment import DEPLOYMENT_ENV, hermes_home, under_home
from ..errors import ConfigError, did_you_mean
from ..options import MAX_INT, FrozenMap, build_dataclass, describe, freeze, join_path
from .reader import check_limits, parse_yaml, read_text
from .settings import (
    CompressionSettings,
    Config,
    Deployment,
    MemorySettings,
    ModelSettings,
    PluginSettings,
    ProviderSelection,
    SkillsSettings,
    SummaryModelSettings,
    line_in,
)

T = TypeVar("T")

_EMPTY: Mapping[str, int] = FrozenMap()


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
            text = read_text(path, label)
        except FileNotFoundError:
            if explicit:
                raise ConfigError("config file not found", source=label) from None
            text, label = "", f"{label} (not found: defaults)"
        except OSError as exc:
            raise ConfigError(f"cannot read config file: {exc}", source=label) from None
        data, lines = parse_yaml(text, label)
    elif isinstance(source, Mapping):
        label, data = "<dict>", source
        try:
            check_limits(data)
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
        raise exc.located(source=label, line=line_in(lines, exc.path, None)) from None


def _config_from_mapping(data: Mapping[str, Any], *, deployment: str | None, label: str,
                         lines: Mapping[str, int]) -> Config:
    section = _section(data, "ctx_plugins")
    plugins = build_dataclass(PluginSettings, section, "ctx_plugins")
    # the embedder's shape now, with the file and line (whether it loads: when the host is built)
    check_spec(plugins.archive.embedder, "ctx_plugins.archive.embedder")
    _check_schema(plugins.storage.schema)
    _check_archive_path(plugins.archive.path)
    if "" in plugins.deployments:  # it would be the top level's namespace, and no name to pick it by
        raise ConfigError("a deployment needs a name; '' is the top-level settings", path="ctx_plugins.deployments",
                          value="", expected="a non-empty deployment name")
    top_namespace, top_options = plugins.memory.namespace, plugins.options
    compression_raw = _section(data, "compression")
    compression = _lenient(CompressionSettings, compression_raw, "compression")
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
            compression = _lenient(
                CompressionSettings, {**compression_raw, **active.compression},
                join_path(join_path("ctx_plugins.deployments", deployment), "compression"))
    return Config(
        plugins=plugins,
        compression=compression,
        memory=_lenient(MemorySettings, _memory_section(data), "memory"),
        skills=_lenient(SkillsSettings, _section(data, "skills"), "skills"),
        model=_model_settings(data.get("model")),
        summary_model=_lenient(SummaryModelSettings, _section(_section(data, "auxiliary"), "compression"),
                               "auxiliary.compression"),
        context_engine=_text(_section(data, "context").get("engine")) or "compressor",
        deployment=deployment,
        source=label,
        lines=lines,
        top_namespace=top_namespace,
        top_options=top_options,
        stray=tuple(key for key in data if isinstance(key, str) and key in STRAY_KEYS),
    )


#: keys of ``ctx_plugins:`` that hermes has no top-level key of the same name for: one at the top level of its config
#: is a ``ctx_plugins`` key that lost its indent (a newcomer walk: ``archive: {enabled: false}`` one indent too far
#: left kept archiving, and ``check`` said "config OK"); ``memory`` and ``plugins`` are hermes' own
STRAY_KEYS = frozenset(f.name for f in dataclasses.fields(PluginSettings)) - {"memory", "plugins"}


def _check_schema(schema: str) -> None:
    """A PostgreSQL schema name the server keeps as it is: PostgreSQL cuts a name at 63 bytes without a word, so
    two longer names sharing their first 63 bytes would be one schema, two deployments' tables in one."""
    problem = ("it is empty" if not schema else "it holds a NUL character" if "\x00" in schema
               else f"it is {len(schema.encode('utf-8', 'surrogatepass'))} bytes long; PostgreSQL keeps 63"
               if len(schema.encode("utf-8", "surrogatepass")) > 63
               else "it is a lone surrogate's text" if any("\ud800" <= c <= "\udfff" for c in schema)
               else "names starting with pg_ are PostgreSQL's own" if schema.lower().startswith("pg_")
               else "it is PostgreSQL's own" if schema.lower() == "information_schema" else "")
    if problem:
        raise ConfigError(f"{schema!r} cannot be the schema: {problem}", path="ctx_plugins.storage.schema",
                          value=schema, expected="a schema name of 1-63 bytes, not pg_* (default: hermes_ctx)")


def _check_archive_path(raw: str) -> None:
    """``ctx_plugins.archive.path`` names a file the archive (and its spool beside it) can be: not a folder
    (``/``, ``.``, ``~``, one that exists; a relative path is under ``$HERMES_HOME``), not a NUL ("" is the default
    file)."""
    if not raw:
        return
    path = under_home(raw) if "\x00" not in raw else Path()
    problem = ("it holds a NUL character" if "\x00" in raw
               else "it names a folder, not a file"
               if raw.rstrip().endswith(("/", "\\")) or Path(raw).name in ("", ".", "..") or _is_dir(path) else "")
    if problem:
        raise ConfigError(f"{raw!r} cannot be the archive's file: {problem}", path="ctx_plugins.archive.path",
                          value=raw, expected="a file path such as ~/.hermes/ctx_archive.db (a relative one is under "
                                              "$HERMES_HOME), or '' for that default")


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
        plugins=tuple(dict.fromkeys((*base.plugins, *dep.plugins))),
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
            f"must be a mapping of settings, got {describe(value)}",
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


def _memory_section(data: Mapping[str, Any]) -> Mapping[str, Any]:
    """hermes' ``memory:`` section; its ``provider`` left empty, or YAML's ``off`` / ``false``, is no provider, as
    hermes reads it (refused, it switched the whole plugin off inside hermes)."""
    memory = _section(data, "memory")
    provider = memory.get("provider", "")
    return {**memory, "provider": ""} if provider is None or provider is False else memory


def _text(value: Any) -> str:
    """A setting of hermes' that we only read, as text ("" for what cannot be one)."""
    if isinstance(value, str):
        return value
    if isinstance(value, (int, float)) and not isinstance(value, bool) and abs(value) <= MAX_INT:
        return str(value)
    return ""


def _lenient(cls: type[T], data: Mapping[str, Any], path: str) -> T:
    """A section hermes shares with us: keys we do not know are hermes' own, not errors."""
    return build_dataclass(cls, data, path, strict=False)


def _is_dir(path: Path) -> bool:
    """Whether ``path`` is a folder; ``False`` when its folder cannot be entered (opening it says why, where it is
    opened: a config check raised a traceback for a store another user's folder holds, a review)."""
    try:
        return path.is_dir()
    except OSError:
        return False

"""Property tests: whatever values sit under whatever keys, loading gives a Config or a
ConfigError naming where (never another exception), and a Config's numbers are all finite."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hermes_ctx_plugins import ConfigError, HermesCtxError, load_config, load_host
from hermes_ctx_plugins.config import (
    ArchiveSettings,
    CompressionSettings,
    Config,
    MemorySettings,
    PluginSettings,
    ProviderSelection,
    SkillsSettings,
    SummaryModelSettings,
)

PLUGINS = ["summarize", "prune", "window", "pipeline", "file", "ctx-local"]
KNOWN_KEYS = sorted({f.name for cls in (PluginSettings, ProviderSelection, ArchiveSettings, CompressionSettings,
                                        MemorySettings, SkillsSettings, SummaryModelSettings)
                     for f in dataclasses.fields(cls)}
                    | {"default", "context_length", "max_tokens", "engine", "steps", "budget_ratio",
                       "summary_ratio", "min_prune_chars", "glm-5.2", *PLUGINS})
#: where generated keys go: every section, each plugin's options, a deployment and its options
PLACES: list[tuple[str, ...]] = [
    (), ("ctx_plugins",), ("ctx_plugins", "memory"), ("ctx_plugins", "archive"),
    *[("ctx_plugins", "options", name) for name in PLUGINS],
    ("ctx_plugins", "deployments", "bot"), ("ctx_plugins", "deployments", "bot", "compression"),
    *[("ctx_plugins", "deployments", "bot", "options", name) for name in PLUGINS],
    ("compression",), ("compression", "model_thresholds"), ("memory",), ("skills",), ("model",),
    ("auxiliary", "compression"), ("context",),
]

HOSTILE_INTS = st.sampled_from([0, -1, 2**31, 2**63 - 1, 2**63, -(2**63) - 1, 2**64, 10**30, 2**1000])
HOSTILE_FLOATS = st.sampled_from([math.nan, math.inf, -math.inf, 1e308, -1e308, 5e-324, 1e9, 1e10])


def values(text: st.SearchStrategy[str]) -> st.SearchStrategy[Any]:
    scalars = (st.none() | st.booleans() | st.integers() | HOSTILE_INTS | st.floats() | HOSTILE_FLOATS
               | text | st.sampled_from(PLUGINS))
    keys = st.sampled_from(KNOWN_KEYS) | text
    return st.recursive(scalars, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(keys, inner, max_size=4),
                        max_leaves=12)


def configs(text: st.SearchStrategy[str]) -> st.SearchStrategy[dict[str, Any]]:
    entry = st.tuples(st.sampled_from(PLACES), st.sampled_from(KNOWN_KEYS) | text, values(text))
    return st.lists(entry, min_size=1, max_size=8).map(build)


def build(entries: list[tuple[tuple[str, ...], str, Any]]) -> dict[str, Any]:
    config: dict[str, Any] = {}
    for place, key, value in entries:
        node = config
        for part in place:
            if not isinstance(node.get(part), dict):
                node[part] = {}
            node = node[part]
        node[key] = value
    return config


def has_bot(config: Mapping[str, Any]) -> bool:
    plugins = config.get("ctx_plugins")
    deployments = plugins.get("deployments") if isinstance(plugins, dict) else None
    return isinstance(deployments, dict) and "bot" in deployments


def assert_finite(value: Any, where: str = "config") -> None:
    """Every number reachable from a loaded Config is finite (what the trigger and breaker feed on)."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        for f in dataclasses.fields(value):
            if f.name != "lines":
                assert_finite(getattr(value, f.name), f"{where}.{f.name}")
    elif isinstance(value, Mapping):
        for key, item in value.items():
            assert_finite(item, f"{where}.{key}")
    elif isinstance(value, float):
        # options of a plugin without an options_class are the plugin's to check: only settings here (``top_options``
        # is the same ``ctx_plugins.options`` mapping, kept for the top level's owners; a plugin refuses an infinite
        # option when it is built: ``load_host`` names the key and what is valid)
        assert math.isfinite(value) or ".options." in where or ".deployments." in where or where.startswith(
            "config.top_options."), (where, value)


PRINTABLE = st.text(st.characters(exclude_categories=["Cs"]), max_size=12)  # what YAML can hold
ANY_TEXT = st.text(max_size=12)  # lone surrogates too


@settings(deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(config=configs(PRINTABLE), use_bot=st.booleans())
def test_a_file_gives_a_config_or_an_error_naming_its_file_and_line(
        tmp_path: Path, config: dict[str, Any], use_bot: bool) -> None:
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(config, allow_unicode=True), encoding="utf-8")
    deployment = "bot" if use_bot and has_bot(config) else None
    try:
        loaded = load_config(path, deployment=deployment)
    except ConfigError as exc:
        assert exc.source == str(path) and exc.line is not None, str(exc)
        assert str(exc).startswith(f"{path}:{exc.line}: ")
        return
    assert isinstance(loaded, Config)
    assert_finite(loaded)


@settings(deadline=None)
@given(config=configs(ANY_TEXT), use_bot=st.booleans())
def test_python_values_give_a_config_or_a_config_error(config: dict[str, Any], use_bot: bool) -> None:
    deployment = "bot" if use_bot and has_bot(config) else None
    try:
        loaded = load_config(config, deployment=deployment)
    except ConfigError as exc:
        assert str(exc).startswith("<dict>")
        return
    assert_finite(loaded)


@settings(deadline=None, max_examples=15)
@given(options=st.dictionaries(st.sampled_from(KNOWN_KEYS), values(PRINTABLE), max_size=4),
       compressor=st.sampled_from(["summarize", "prune", "window", "pipeline"]))
def test_a_host_given_arbitrary_options_loads_or_raises_our_error(options: dict[str, Any], compressor: str) -> None:
    config = {"ctx_plugins": {"compressor": compressor, "options": {compressor: options}}}
    try:
        host = load_host(config)
    except HermesCtxError:
        return
    host.shutdown()

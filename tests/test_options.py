"""Options declared once: ``option()`` bounds and choices, checked the same way for our settings, the
built-in strategies' and providers' options and a third-party plugin's, every error naming the key
path, the value, what is valid, the near match and — when it came from a file — the file and line."""

from __future__ import annotations

import copy
import dataclasses
import pickle
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from config_helpers import marked_line, write

from hermes_ctx_plugins import ConfigError, config, hookimpl, load_config, load_host
from hermes_ctx_plugins.config import MAX_INT, Config, build_dataclass, plugin_options
from hermes_ctx_plugins.options import FrozenMap, Rule, option
from hermes_ctx_plugins.testing import FakeCompressor, FakeMemoryProvider


@dataclass(frozen=True)
class Knobs:
    ratio: float = option(0.5, gt=0, le=1)
    count: int = option(3, ge=1, lt=10)
    mode: str = option("fast", choices=("fast", "exact"), kind="a mode")
    level: str = option("", choices=("", "low", "high"))
    tags: tuple[str, ...] = option(("a",), choices=("a", "b"))
    weights: Mapping[str, float] = option({"x": 1.0}, ge=0)
    limit: int | None = option(None, ge=0)


def knobs(**data: Any) -> Knobs:
    return build_dataclass(Knobs, data, "ctx_plugins.options.acme")


# ------------------------------------------------------------------ the helper


def test_defaults_need_no_config_and_are_what_was_declared() -> None:
    assert knobs() == Knobs()
    assert (Knobs().ratio, Knobs().count, Knobs().mode, Knobs().tags, Knobs().limit) == (0.5, 3, "fast", ("a",), None)
    assert isinstance(Knobs().weights, FrozenMap) and dict(Knobs().weights) == {"x": 1.0}


@pytest.mark.parametrize(("data", "key", "message", "expected"), [
    ({"ratio": 0}, "ratio", "0 is out of range; expected > 0 and <= 1", "> 0 and <= 1"),
    ({"ratio": 1.5}, "ratio", "1.5 is out of range; expected > 0 and <= 1", "> 0 and <= 1"),
    ({"count": 0}, "count", "0 is out of range; expected >= 1 and < 10", ">= 1 and < 10"),
    ({"count": 10}, "count", "10 is out of range; expected >= 1 and < 10", ">= 1 and < 10"),
    ({"count": 2.5}, "count", "got float 2.5, expected a whole number >= 1 and < 10", "a whole number >= 1 and < 10"),
    ({"count": True}, "count", "got bool True, expected a whole number >= 1 and < 10", "a whole number >= 1 and < 10"),
    ({"ratio": "half"}, "ratio", "got str 'half', expected a number > 0 and <= 1", "a number > 0 and <= 1"),
    ({"ratio": float("nan")}, "ratio", "nan is not a finite number; expected a number > 0 and <= 1",
     "a number > 0 and <= 1"),
    ({"limit": MAX_INT + 1}, "limit", "is out of range; expected >= 0 and at most 9,223,372,036,854,775,807 in size",
     ">= 0 and at most 9,223,372,036,854,775,807 in size"),
    ({"weights": {"y": -1}}, "weights.y", "-1 is out of range; expected >= 0", ">= 0"),
])
def test_a_bound_refuses_the_value_naming_key_value_and_range(data: dict[str, Any], key: str, message: str,
                                                              expected: str) -> None:
    with pytest.raises(ConfigError) as exc:
        knobs(**data)
    assert exc.value.path == f"ctx_plugins.options.acme.{key}"
    assert message in str(exc.value)
    assert exc.value.expected == expected


def test_values_at_the_bounds_are_kept() -> None:
    edge = knobs(ratio=1, count=9, limit=0, weights={"y": 0})
    assert (edge.ratio, edge.count, edge.limit, dict(edge.weights)) == (1.0, 9, 0, {"y": 0.0})
    assert isinstance(edge.ratio, float), "a whole number given for a float option is a float"


@pytest.mark.parametrize(("data", "key", "message", "expected"), [
    ({"mode": "exakt"}, "mode", "'exakt' is not a mode (did you mean 'exact'?); valid: fast, exact", "fast, exact"),
    ({"mode": "slow"}, "mode", "'slow' is not a mode; valid: fast, exact", "fast, exact"),
    ({"level": "medium"}, "level", "'medium' is not valid; valid: '', low, high", "'', low, high"),
    ({"tags": ["a", "c"]}, "tags[1]", "'c' is not valid; valid: a, b", "a, b"),
    ({"mode": 3}, "mode", "got int 3, expected a string", "a string"),
])
def test_a_choice_refuses_the_value_naming_what_is_valid_and_the_near_match(
        data: dict[str, Any], key: str, message: str, expected: str) -> None:
    with pytest.raises(ConfigError) as exc:
        knobs(**data)
    assert exc.value.path == f"ctx_plugins.options.acme.{key}"
    assert str(exc.value) == f"ctx_plugins.options.acme.{key}: {message}"
    assert exc.value.expected == expected


def test_every_choice_is_accepted() -> None:
    assert [knobs(mode=m).mode for m in ("fast", "exact")] == ["fast", "exact"]
    assert [knobs(level=v).level for v in ("", "low", "high")] == ["", "low", "high"]
    assert knobs(tags=["b", "a", "b"]).tags == ("b", "a", "b")


def test_a_mutable_default_is_a_frozen_copy_that_survives_what_hermes_does() -> None:
    first, second = Knobs(), Knobs()
    assert first.weights is second.weights, "an immutable default can be shared"
    with pytest.raises(TypeError):
        first.weights["x"] = 2.0  # type: ignore[index]
    assert copy.deepcopy(first) == first and pickle.loads(pickle.dumps(first)) == first


def test_a_plain_dataclass_still_validates_by_its_types() -> None:
    """A third-party plugin's options written before ``option()`` existed work as they did."""

    @dataclass(frozen=True)
    class Plain:
        keep_last: int = 6
        label: str = "x"

    assert build_dataclass(Plain, {"keep_last": 9}, "ctx_plugins.options.plain") == Plain(keep_last=9)
    with pytest.raises(ConfigError, match=r"ctx_plugins.options.plain.keep_lst: unknown key 'keep_lst' "
                                          r"\(did you mean 'keep_last'\?\); valid keys: keep_last, label"):
        build_dataclass(Plain, {"keep_lst": 9}, "ctx_plugins.options.plain")
    with pytest.raises(ConfigError, match=r"got str 'many', expected a whole number$"):
        build_dataclass(Plain, {"keep_last": "many"}, "ctx_plugins.options.plain")
    with pytest.raises(ConfigError, match="is not a finite number; expected a finite number"):
        build_dataclass(_PlainFloat, {"share": float("inf")}, "ctx_plugins.options.plain")


@dataclass(frozen=True)
class _PlainFloat:
    share: float = 0.5


def test_an_options_instance_built_in_code_is_taken_as_it_is() -> None:
    """Whoever builds the instance answers for it (tests configure a provider past a bound this way)."""
    built = Knobs(count=50)
    assert plugin_options("acme", Knobs, built) is built
    assert plugin_options("acme", Knobs, {"count": 5}) == Knobs(count=5)
    with pytest.raises(ConfigError, match=r"ctx_plugins\.options\.acme\.count: 50 is out of range"):
        plugin_options("acme", Knobs, {"count": 50})
    assert plugin_options("acme", None, {"free": ["form"]}) == FrozenMap({"free": ("form",)})


# ------------------------------------------------------------------ a third-party plugin, from a file


@dataclass(frozen=True)
class RecentOptions:
    keep_last: int = option(6, ge=1, le=500)
    order: str = option("newest", choices=("newest", "oldest"), kind="an order")


@dataclass(frozen=True)
class NotesOptions:
    recall: str = option("words", choices=("words", "none"))


class Recent(FakeCompressor):
    name = "acme-recent"
    options_class = RecentOptions


class Notes(FakeMemoryProvider):
    name = "acme-notes"
    options_class = NotesOptions


class AcmePlugin:
    @hookimpl
    def register_compressors(self, register: Any) -> None:
        register(Recent)

    @hookimpl
    def register_memory_providers(self, register: Any) -> None:
        register(Notes)


def host_error(path: Path, deployment: str | None = None) -> ConfigError:
    with pytest.raises(ConfigError) as exc:
        load_host(path, deployment=deployment, plugins=[AcmePlugin()]).shutdown()
    return exc.value


@pytest.mark.parametrize(("text", "key", "message", "deployment"), [
    pytest.param("""\
        ctx_plugins:
          compressor: acme-recent
          options:
            acme-recent:
              keep_last: 0  # <-
        """, "ctx_plugins.options.acme-recent.keep_last", "0 is out of range; expected >= 1 and <= 500", None,
                 id="bound"),
    pytest.param("""\
        ctx_plugins:
          compressor: acme-recent
          options:
            acme-recent: {order: newst}  # <-
        """, "ctx_plugins.options.acme-recent.order",
                 "'newst' is not an order (did you mean 'newest'?); valid: newest, oldest", None, id="choice-flow"),
    pytest.param("""\
        ctx_plugins:
          compressor: acme-recent
          memory: {providers: [acme-notes]}
          options:
            acme-notes:
              recall: everything  # <-
        """, "ctx_plugins.options.acme-notes.recall", "'everything' is not valid; valid: words, none", None,
                 id="provider-choice"),
    pytest.param("""\
        ctx_plugins:
          compressor: acme-recent
          options:
            acme-recent: {keep_last: 8, order: oldest}
          deployments:
            bot:
              options:
                acme-recent:
                  order: sideways  # <-
        """, "ctx_plugins.options.acme-recent.order", "'sideways' is not an order; valid: newest, oldest", "bot",
                 id="deployment-override"),
    pytest.param("""\
        ctx_plugins:
          compressor: acme-recent
          options:
            acme-recent:
              keep_last: 1000  # <-
          deployments:
            bot:
              options:
                acme-recent: {order: oldest}
        """, "ctx_plugins.options.acme-recent.keep_last", "1000 is out of range; expected >= 1 and <= 500", "bot",
                 id="top-level-value-under-a-deployment"),
])
def test_a_plugins_option_error_names_file_line_key_value_and_what_is_valid(
        tmp_path: Path, text: str, key: str, message: str, deployment: str | None) -> None:
    path = write(tmp_path, text)
    error = host_error(path, deployment)
    assert str(error) == f"{path}:{marked_line(path)}: {key}: {message}"
    assert (error.source, error.line, error.path) == (str(path), marked_line(path), key)


def test_the_same_plugin_loads_with_good_options(tmp_path: Path) -> None:
    path = write(tmp_path, """\
        ctx_plugins:
          compressor: acme-recent
          memory: {providers: [acme-notes]}
          options:
            acme-recent: {keep_last: 500, order: oldest}
            acme-notes: {recall: none}
          deployments:
            bot:
              options:
                acme-recent: {keep_last: 1}
        """)
    for deployment, keep_last in ((None, 500), ("bot", 1)):
        host = load_host(path, deployment=deployment, plugins=[AcmePlugin()])
        try:
            assert host.compressor is not None
            assert host.compressor.options == RecentOptions(keep_last=keep_last, order="oldest")
            assert [p.options for p in host.memory_providers] == [NotesOptions(recall="none")]
        finally:
            host.shutdown()


# ------------------------------------------------------------------ the built-ins use the same spelling


@pytest.mark.parametrize(("text", "key", "message"), [
    pytest.param("ctx_plugins:\n  storage:\n    backend: sqllite  # <-\n", "ctx_plugins.storage.backend",
                 "'sqllite' is not a storage backend (did you mean 'sqlite'?); valid: "
                 + ", ".join(config.STORAGE_BACKENDS), id="storage"),
    pytest.param("ctx_plugins:\n  archive: {scope: users}  # <-\n", "ctx_plugins.archive.scope",
                 "'users' is not an archive scope (did you mean 'user'?); valid: session, user", id="archive"),
])
def test_a_settings_choice_names_file_line_and_the_near_match(tmp_path: Path, text: str, key: str,
                                                              message: str) -> None:
    path = write(tmp_path, text)
    with pytest.raises(ConfigError) as exc:
        load_config(path)
    assert str(exc.value) == f"{path}:{marked_line(path)}: {key}: {message}"


@pytest.mark.parametrize(("name", "option_text", "message"), [
    ("ctx-mem0", "mode: cloud", "'cloud' is not valid; valid: platform, oss"),
    ("ctx-mem0", "recall_mode: hybird",
     "'hybird' is not valid (did you mean 'hybrid'?); valid: hybrid, context, tools"),
    ("ctx-honcho", "reasoning_level: extreme", "'extreme' is not valid; valid: '', minimal, low, medium, high, max"),
    ("file", "write_approval: maybe", "'maybe' is not an approval mode; valid: allow, stage, block"),
])
def test_a_built_in_providers_choice_names_file_line_and_what_is_valid(tmp_path: Path, name: str, option_text: str,
                                                                      message: str) -> None:
    path = write(tmp_path, f"""\
        ctx_plugins:
          memory: {{providers: [file{', ' + name if name != 'file' else ''}]}}
          options:
            {name}:
              {option_text}  # <-
        """)
    error = host_error(path)
    key = f"ctx_plugins.options.{name}.{option_text.split(':')[0]}"
    assert str(error) == f"{path}:{marked_line(path)}: {key}: {message}"


def _options_classes() -> list[type[Any]]:
    host = load_host({}, plugins=[AcmePlugin()])
    try:
        classes = [entry.factory.options_class for entry in host.registry if entry.factory.options_class is not None]
    finally:
        host.shutdown()
    settings = [cls for cls in vars(config).values()
                if isinstance(cls, type) and dataclasses.is_dataclass(cls) and cls is not Config]
    return [*classes, *settings]


def test_every_bound_and_choice_is_declared_with_option() -> None:
    """One spelling: no field keeps constraints in metadata of its own making, no class checks its
    values in ``__post_init__``; so what a class body says is all that is checked."""
    classes = _options_classes()
    names = {cls.__name__ for cls in classes}
    assert {"SummarizeOptions", "PruneOptions", "WindowOptions", "PipelineOptions", "FileOptions", "LocalOptions",
            "Mem0Options", "HonchoOptions", "RecentOptions", "ArchiveSettings", "StorageSettings",
            "CompressionSettings", "PluginSettings"} <= names
    for cls in classes:
        assert "__post_init__" not in vars(cls), cls
        for spec in dataclasses.fields(cls):
            assert all(isinstance(rule, Rule) for rule in spec.metadata.values()), (cls, spec.name)

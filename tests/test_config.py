from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml
from config_helpers import write

from hermes_ctx_plugins import ConfigError, load_config, load_host
from hermes_ctx_plugins.config import DEFAULT_COMPRESSOR, build_dataclass


def test_defaults_without_any_config_file() -> None:
    cfg = load_config()  # $HERMES_HOME/config.yaml does not exist in the test home
    assert cfg.compressor_name == DEFAULT_COMPRESSOR == "summarize"
    assert cfg.provider_names == ("file",)
    # the documented defaults of hermes' compression: and memory: sections
    assert cfg.compression.threshold == 0.50
    assert cfg.compression.target_ratio == 0.20
    assert cfg.compression.protect_first_n == 3
    assert cfg.compression.protect_last_n == 20
    assert cfg.compression.max_attempts == 3
    assert cfg.compression.in_place is True
    assert cfg.compression.proactive_prune_min_result_chars == 8000
    assert cfg.compression.proactive_prune_min_reclaim_tokens == 4096
    assert cfg.memory.memory_char_limit == 2200
    assert cfg.memory.user_char_limit == 1375
    assert cfg.memory.nudge_interval == 10
    assert cfg.memory.flush_min_turns == 6
    assert cfg.skills.creation_nudge_interval == 15


def test_reads_hermes_home_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "hh"
    home.mkdir()
    write(home, """
        model: {default: glm-5.2, provider: custom, context_length: 200000}
        context: {engine: hermes-ctx}
        compression: {threshold: 0.6, model_thresholds: {glm-5.2: 0.4}, hygiene_hard_message_limit: 5000}
        memory: {memory_char_limit: 3000, provider: ''}
        ctx_plugins:
          compressor: prune
          memory: {providers: [file, sqlite]}
          options: {sqlite: {path: /tmp/x.db}}
    """)
    monkeypatch.setenv("HERMES_HOME", str(home))
    cfg = load_config()
    assert cfg.source == str(home / "config.yaml")
    assert cfg.model.name == "glm-5.2" and cfg.model.context_length == 200000
    assert cfg.context_engine == "hermes-ctx"
    assert cfg.compression.threshold == 0.6
    assert cfg.compression.model_thresholds == {"glm-5.2": 0.4}
    assert cfg.memory.memory_char_limit == 3000
    assert cfg.compressor_name == "prune"
    assert cfg.provider_names == ("file", "sqlite")
    assert cfg.options_for("sqlite") == {"path": "/tmp/x.db"}
    assert cfg.options_for("other") == {}


def test_settings_are_frozen() -> None:
    cfg = load_config({"ctx_plugins": {"compressor": "prune"}})
    with pytest.raises(AttributeError):
        cfg.plugins.compressor = "other"  # type: ignore[misc]
    with pytest.raises(TypeError):
        cfg.plugins.options["x"] = {}  # type: ignore[index]


def test_model_as_plain_string() -> None:
    assert load_config({"model": "gpt-4o"}).model.name == "gpt-4o"


def test_empty_providers_list_means_no_memory() -> None:
    assert load_config({"ctx_plugins": {"memory": {"providers": []}}}).provider_names == ()


DEPLOYMENTS = {
    "compression": {"threshold": 0.5},
    "ctx_plugins": {
        "compressor": "summarize",
        "memory": {"providers": ["file", "sqlite"]},
        "disabled": ["noisy", "legacy"],
        "options": {"sqlite": {"path": "/a.db", "budget": 800}},
        "deployments": {
            "support-bot": {
                "compressor": "prune",
                "memory": {"providers": ["file"]},
                "disabled": ["sqlite"],
                "enabled": ["legacy"],
                "options": {"sqlite": {"budget": 200}},
                "compression": {"threshold": 0.8},
            },
            "plain": {},
        },
    },
}


def test_deployment_overrides_apply_only_when_selected() -> None:
    base = load_config(DEPLOYMENTS)
    assert base.deployment is None
    assert base.compressor_name == "summarize"
    assert base.plugins.disabled == ("noisy", "legacy")

    bot = load_config(DEPLOYMENTS, deployment="support-bot")
    assert bot.deployment == "support-bot"
    assert bot.compressor_name == "prune"
    assert bot.provider_names == ("file",)
    assert bot.plugins.disabled == ("noisy", "sqlite")  # legacy re-enabled, sqlite added
    assert bot.options_for("sqlite") == {"path": "/a.db", "budget": 200}  # merged key by key
    assert bot.compression.threshold == 0.8

    plain = load_config(DEPLOYMENTS, deployment="plain")
    assert plain.compressor_name == "summarize" and plain.provider_names == ("file", "sqlite")


def test_deployment_from_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HERMES_CTX_DEPLOYMENT", "support-bot")
    assert load_config(DEPLOYMENTS).compressor_name == "prune"
    # an explicit argument wins over the environment
    assert load_config(DEPLOYMENTS, deployment="plain").compressor_name == "summarize"


def test_options_dataclass_gets_the_same_validation() -> None:
    from dataclasses import dataclass

    @dataclass(frozen=True)
    class Options:
        budget: int = 800
        path: str = "x.db"

    assert build_dataclass(Options, {"budget": 10}, "ctx_plugins.options.sqlite").budget == 10
    with pytest.raises(ConfigError) as exc:
        build_dataclass(Options, {"budgett": 10}, "ctx_plugins.options.sqlite")
    assert exc.value.path == "ctx_plugins.options.sqlite.budgett"
    assert "did you mean 'budget'" in str(exc.value)


# Each bad config: (yaml text or dict, the key path the error must name, words it must contain).
BAD_CONFIGS = [
    pytest.param("ctx_plugins: [a, b]\n", "ctx_plugins", ["must be a mapping"], id="section-not-mapping"),
    pytest.param("ctx_plugins:\n  compresor: prune\n", "ctx_plugins.compresor",
                 ["unknown key", "did you mean 'compressor'"], id="misspelled-key"),
    pytest.param("ctx_plugins:\n  compressor: 42\n", "ctx_plugins.compressor",
                 ["int 42", "a string"], id="compressor-not-string"),
    pytest.param("ctx_plugins:\n  memory: {providers: sqlite}\n", "ctx_plugins.memory.providers",
                 ["a list", "[sqlite]"], id="providers-scalar"),
    pytest.param("ctx_plugins:\n  memory: {providers: [file, 3]}\n", "ctx_plugins.memory.providers[1]",
                 ["int 3", "a string"], id="provider-name-not-string"),
    pytest.param("ctx_plugins:\n  memory: {provider: sqlite}\n", "ctx_plugins.memory.provider",
                 ["did you mean 'providers'"], id="memory-singular-key"),
    pytest.param("ctx_plugins:\n  disabled: noisy\n", "ctx_plugins.disabled",
                 ["a list"], id="disabled-scalar"),
    pytest.param("ctx_plugins:\n  options: {sqlite: 5}\n", "ctx_plugins.options.sqlite",
                 ["a mapping"], id="options-not-mapping"),
    pytest.param("ctx_plugins:\n  deployments: {bot: {compressr: x}}\n",
                 "ctx_plugins.deployments.bot.compressr", ["did you mean 'compressor'"],
                 id="deployment-typo"),
    pytest.param("ctx_plugins:\n  deployments: {bot: [1]}\n", "ctx_plugins.deployments.bot",
                 ["must be a mapping"], id="deployment-not-mapping"),
    pytest.param("ctx_plugins:\n  failure_threshold: 0\n", "ctx_plugins.failure_threshold",
                 ["out of range", ">= 1"], id="threshold-zero"),
    pytest.param("ctx_plugins:\n  cooldown_seconds: soon\n", "ctx_plugins.cooldown_seconds",
                 ["str 'soon'", "a number"], id="cooldown-not-number"),
    pytest.param("compression:\n  threshold: 1.5\n", "compression.threshold",
                 ["1.5", "out of range", "<= 1"], id="threshold-above-one"),
    pytest.param("compression:\n  threshold: '50%'\n", "compression.threshold",
                 ["str '50%'", "a number"], id="threshold-string"),
    pytest.param("compression:\n  enabled: 'yes please'\n", "compression.enabled",
                 ["true or false"], id="enabled-not-bool"),
    pytest.param("compression:\n  protect_last_n: -1\n", "compression.protect_last_n",
                 ["-1", ">= 0"], id="negative-count"),
    pytest.param("compression:\n  max_attempts: 11\n", "compression.max_attempts",
                 ["11", "<= 10"], id="max-attempts-over-hard-cap"),
    pytest.param("compression:\n  protect_first_n: 2.5\n", "compression.protect_first_n",
                 ["float 2.5", "a whole number"], id="count-not-integer"),
    pytest.param("compression:\n  target_ratio: 1\n", "compression.target_ratio",
                 ["out of range", "< 1"], id="target-ratio-one"),
    pytest.param("compression:\n  model_thresholds: {glm-5.2: high}\n",
                 "compression.model_thresholds.glm-5.2", ["str 'high'", "a number"],
                 id="model-threshold-string"),
    pytest.param("compression: on\n", "compression", ["must be a mapping"], id="hermes-section-scalar"),
    pytest.param("memory:\n  memory_char_limit: 0\n", "memory.memory_char_limit",
                 [">= 1"], id="zero-char-limit"),
    pytest.param("memory:\n  nudge_interval: true\n", "memory.nudge_interval",
                 ["bool True", "a whole number"], id="bool-for-int"),
    pytest.param("skills:\n  creation_nudge_interval: -5\n", "skills.creation_nudge_interval",
                 [">= 0"], id="negative-skill-interval"),
    pytest.param("- just\n- a list\n", "", ["top level must be a mapping"], id="top-level-list"),
]


@pytest.mark.parametrize(("text", "path", "words"), BAD_CONFIGS)
def test_bad_config_names_key_value_and_what_is_valid(
    tmp_path: Path, text: str, path: str, words: list[str]
) -> None:
    config_file = write(tmp_path, text)
    with pytest.raises(ConfigError) as exc:
        load_config(config_file)
    message = str(exc.value)
    assert exc.value.path == path
    assert message.startswith(str(config_file))
    for word in words:
        assert word in message, message
    assert exc.value.line is not None, "a file error should point at its line"


def test_error_line_points_at_the_bad_key(tmp_path: Path) -> None:
    config_file = write(tmp_path, """\
        model: gpt-4o
        compression:
          enabled: true
          threshold: 7
    """)
    with pytest.raises(ConfigError) as exc:
        load_config(config_file)
    assert exc.value.line == 4
    assert f"{config_file}:4: compression.threshold" in str(exc.value)


@pytest.mark.parametrize(
    ("text", "line"),
    [
        ("ctx_plugins:\n  compressor: [unclosed\n", 3),
        ("ctx_plugins:\n\tcompressor: prune\n", 2),
        ("a: 1\n b: 2\n", 2),
        ("ctx_plugins: {compressor: prune\n", 2),
    ],
    ids=["unclosed-flow", "tab-indent", "bad-indent", "unclosed-mapping"],
)
def test_malformed_yaml_is_a_config_error_with_its_line(tmp_path: Path, text: str, line: int) -> None:
    config_file = write(tmp_path, text)
    with pytest.raises(ConfigError) as exc:
        load_config(config_file)
    assert "malformed YAML" in str(exc.value)
    assert exc.value.line == line


def test_unknown_deployment_lists_the_defined_ones() -> None:
    with pytest.raises(ConfigError) as exc:
        load_config(DEPLOYMENTS, deployment="suport-bot")
    message = str(exc.value)
    assert "'suport-bot'" in message and "did you mean 'support-bot'" in message
    assert "plain, support-bot" in message


def test_explicit_missing_file_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="config file not found"):
        load_config(tmp_path / "nope.yaml")


def test_config_of_the_wrong_type() -> None:
    with pytest.raises(ConfigError, match="got int"):
        load_config(42)  # type: ignore[arg-type]


def test_unreadable_bytes(tmp_path: Path) -> None:
    path = tmp_path / "config.yaml"
    path.write_bytes(b"ctx_plugins:\n  compressor: \xff\xfe\n")
    with pytest.raises(ConfigError, match="cannot read config file"):
        load_config(path)


def test_unknown_keys_of_hermes_sections_are_left_to_hermes() -> None:
    cfg = load_config({"compression": {"codex_gpt55_autoraise": True}, "memory": {"write_approval": True}})
    assert cfg.compression.threshold == 0.5


def test_every_yaml_example_in_the_readme_is_a_valid_config() -> None:
    """The README's examples are what users copy: each must load, and name things that exist."""
    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```yaml\n(.*?)```", readme, re.S)
    assert len(blocks) >= 3
    for block in blocks:
        data = yaml.safe_load(block) or {}
        config = load_config(data)
        for name in [None, *config.plugins.deployments]:
            chosen = load_config(data, deployment=name)
            host = load_host(chosen)
            unknown = set(chosen.plugins.options) - {r.name for r in host.registry}
            assert not unknown, (unknown, block[:200])

"""Config that cannot hang or lie: finite numbers, limits checked before anything is built, and
every error naming the file and line of its key, including errors the host raises later (a
plugin validating its options)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml
from config_helpers import MARK, marked_line, write

from hermes_ctx_plugins import ConfigError, hookimpl, load_config, load_host
from hermes_ctx_plugins.cli import EXIT_CONFIG, main
from hermes_ctx_plugins.config import MAX_CONFIG_BYTES, MAX_DEPTH, MAX_NODES, MAX_STRING_CHARS, Config
from hermes_ctx_plugins.testing import FakeCompressor

# ------------------------------------------------------------------ finite numbers


@pytest.mark.parametrize(("text", "key", "shown"), [
    ("compression:\n  threshold: .nan\n", "compression.threshold", "nan"),
    ("ctx_plugins:\n  cooldown_seconds: .inf\n", "ctx_plugins.cooldown_seconds", "inf"),
    ("ctx_plugins:\n  cooldown_seconds: -.inf\n", "ctx_plugins.cooldown_seconds", "-inf"),
    ("compression:\n  idle_compact_after_seconds: .NaN\n", "compression.idle_compact_after_seconds", "nan"),
    ("compression:\n  model_thresholds: {glm-5.2: .inf}\n", "compression.model_thresholds.glm-5.2", "inf"),
    ("ctx_plugins:\n  archive: {retention_days: .inf}\n", "ctx_plugins.archive.retention_days", "inf"),
    ("auxiliary:\n  compression: {timeout: .inf}\n", "auxiliary.compression.timeout", "inf"),
])
def test_nan_and_infinity_are_refused_with_key_value_and_range(
        tmp_path: Path, text: str, key: str, shown: str) -> None:
    path = write(tmp_path, text)
    with pytest.raises(ConfigError) as exc:
        load_config(path)
    assert str(exc.value).startswith(f"{path}:2: {key}: {shown} is not a finite number; expected a number")
    assert exc.value.path == key


def test_a_nan_threshold_never_reaches_the_compressor(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Before: accepted, then every trigger check raised and the compressor was suspended. Now
    ``hermes-ctx check`` and the host refuse it at start-up, naming the line."""
    path = write(tmp_path, """\
        compression:
          enabled: true
          threshold: .nan
    """)
    assert main(["--config", str(path), "check"]) == EXIT_CONFIG
    err = capsys.readouterr().err
    assert f"{path}:3: compression.threshold: nan is not a finite number; expected a number > 0 and <= 1" in err
    with pytest.raises(ConfigError, match="not a finite number"):
        load_host(path)
    # the owner of a sound value still gets a working compressor
    good = write(tmp_path, "compression:\n  threshold: 0.6\n")
    host = load_host(good)
    assert host.compressor is not None and host.config.compression.threshold == 0.6
    host.shutdown()


@pytest.mark.parametrize(("text", "key", "words"), [
    ("ctx_plugins:\n  cooldown_seconds: 1.0e+300\n", "ctx_plugins.cooldown_seconds",
     ["1e+300 is out of range", ">= 0 and at most 1e+09 in size"]),
    ("ctx_plugins:\n  failure_threshold: 9223372036854775808\n", "ctx_plugins.failure_threshold",
     ["9223372036854775808 is out of range", ">= 1 and at most"]),
    ("compression:\n  protect_last_n: 0x" + "f" * 4000 + "\n", "compression.protect_last_n",
     ["<an integer of 16,000 bits> is out of range"]),
    ("compression:\n  idle_compact_after_seconds: " + str(2**2000) + "\n", "compression.idle_compact_after_seconds",
     ["out of range", "at most 1e+09"]),
])
def test_numbers_too_large_for_what_they_feed_are_refused(
        tmp_path: Path, text: str, key: str, words: list[str]) -> None:
    path = write(tmp_path, text)
    with pytest.raises(ConfigError) as exc:
        load_config(path)
    assert str(exc.value).startswith(f"{path}:2: {key}: ")
    for word in words:
        assert word in str(exc.value)


def test_large_but_sane_numbers_still_load() -> None:
    cfg = load_config({"ctx_plugins": {"cooldown_seconds": 86_400 * 365, "failure_threshold": 2**63 - 1},
                       "compression": {"idle_compact_after_seconds": 10**9}})
    assert cfg.plugins.cooldown_seconds == 86_400 * 365
    assert cfg.plugins.failure_threshold == 2**63 - 1
    assert cfg.compression.idle_compact_after_seconds == 1e9


def test_hermes_keys_we_only_read_never_raise_for_odd_numbers(tmp_path: Path) -> None:
    huge = "0x" + "f" * 4000  # a value str() would refuse to print
    path = write(tmp_path, f"""\
        model: {{default: {huge}, context_length: {huge}, max_tokens: .inf, api_key: 12345}}
        context: {{engine: {huge}}}
    """)
    cfg = load_config(path)
    assert cfg.model.name == "" and cfg.model.context_length is None and cfg.model.max_tokens is None
    assert cfg.model.api_key == "12345"
    assert cfg.context_engine == "compressor"


# ------------------------------------------------------------------ limits, before anything is built


def billion_laughs(levels: int = 9) -> str:
    """Nine lists of nine aliases to the list before: 9**9 = 387 million values once written out.

    ``lol4`` (line 8) is the first list standing for more than 50,000 values: it is marked."""
    text = "ctx_plugins:\n  options:\n    summarize:\n      lol0: &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n"
    for n in range(1, levels):
        text += f"      lol{n}: &l{n} [" + ", ".join([f"*l{n - 1}"] * 9) + "]" + (f"  {MARK}" if n == 4 else "") + "\n"
    return text


def test_an_alias_bomb_is_refused_at_the_line_where_it_passes_the_limit(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Before: start-up froze (expanded) it for over a minute. Now it is refused while parsing."""
    path = write(tmp_path, billion_laughs())
    with pytest.raises(ConfigError) as exc:
        load_config(path)
    message = str(exc.value)
    assert marked_line(path) == 8
    assert message.startswith(f"{path}:8: the config stands for more than {MAX_NODES:,} values")
    assert "an alias or a shared value counts as every value it names" in message
    assert "write the values out" in message
    assert exc.value.expected == f"at most {MAX_NODES:,} values"
    assert main(["--config", str(path), "check"]) == EXIT_CONFIG
    assert f"invalid config: {path}:8: the config stands for more than" in capsys.readouterr().err


def test_a_few_aliases_are_fine_and_expand(tmp_path: Path) -> None:
    path = write(tmp_path, billion_laughs(levels=3))  # 9**3 = 729 values
    cfg = load_config(path)
    assert len(cfg.options_for("summarize")["lol2"]) == 9
    assert cfg.options_for("summarize")["lol2"][8][8] == ("lol",) * 9


def test_the_same_bomb_as_python_values_is_refused(tmp_path: Path) -> None:
    value: Any = ["lol"] * 9
    for _ in range(9):
        value = [value] * 9  # shared, so building it costs nothing; freezing it would
    with pytest.raises(ConfigError) as exc:
        load_config({"ctx_plugins": {"options": {"summarize": {"lol": value}}}})
    assert str(exc.value).startswith(f"<dict>: the config stands for more than {MAX_NODES:,} values")


def nested(lists: int) -> str:
    """A config whose deepest value is ``lists`` levels of lists below the document, ctx_plugins,
    options and summarize: ``4 + lists`` levels in all."""
    return "ctx_plugins:\n  options:\n    summarize:\n      deep: " + "[" * lists + "]" * lists + "\n"


@pytest.mark.parametrize("lists", [MAX_DEPTH - 3, 5000])
def test_deep_nesting_is_a_config_error_not_a_recursion_error(tmp_path: Path, lists: int) -> None:
    path = write(tmp_path, nested(lists))
    with pytest.raises(ConfigError) as exc:
        load_config(path)
    assert str(exc.value).startswith(f"{path}:4: values are nested more than {MAX_DEPTH} levels deep")
    assert "flatten" in str(exc.value)


def test_nesting_up_to_the_limit_loads(tmp_path: Path) -> None:
    deep = load_config(write(tmp_path, nested(MAX_DEPTH - 4))).options_for("summarize")["deep"]
    for _ in range(MAX_DEPTH - 5):
        (deep,) = deep
    assert deep == ()


def test_cyclic_python_values_are_refused() -> None:
    loop: dict[str, Any] = {}
    loop["again"] = loop
    with pytest.raises(ConfigError, match=f"nested more than {MAX_DEPTH} levels"):
        load_config({"ctx_plugins": {"options": {"summarize": loop}}})


def test_an_alias_inside_its_own_anchor_is_refused(tmp_path: Path) -> None:
    path = write(tmp_path, "ctx_plugins:\n  options:\n    summarize: &me {again: *me}\n")
    with pytest.raises(ConfigError) as exc:
        load_config(path)
    assert str(exc.value).startswith(f"{path}:3: the alias *me is used inside the value it names")


def test_huge_strings_and_files_are_refused(tmp_path: Path) -> None:
    path = write(tmp_path, "model: {api_key: '" + "k" * (MAX_STRING_CHARS + 1) + "'}\n")
    with pytest.raises(ConfigError) as exc:
        load_config(path)
    assert str(exc.value).startswith(f"{path}:1: a string of {MAX_STRING_CHARS + 1:,} characters")
    path.write_text("# padding\n" * (MAX_CONFIG_BYTES // 10 + 1), encoding="utf-8")
    with pytest.raises(ConfigError) as exc:
        load_config(path)
    assert f"larger than {MAX_CONFIG_BYTES:,} bytes" in str(exc.value) and exc.value.line is not None
    with pytest.raises(ConfigError, match="longer than the 100,000"):
        load_config({"model": "m" * (MAX_STRING_CHARS + 1)})


def test_a_key_of_ours_given_twice_is_refused_where_hermes_own_keys_are_left_to_hermes(tmp_path: Path) -> None:
    """YAML keeps the last of two equal keys, silently: a second ``compressor:`` switched the strategy with nothing
    said (a bad-input sweep). hermes reads its own sections so too, and they stay its business."""
    path = write(tmp_path, "ctx_plugins:\n  compressor: window\n  memory: {providers: [file]}\n  compressor: prune\n")
    with pytest.raises(ConfigError, match="given twice, here and at line 2") as exc:
        load_config(path)
    assert exc.value.line == 4 and exc.value.path == "ctx_plugins.compressor"
    path = write(tmp_path, "model: {default: a}\nmodel: {default: b}\nctx_plugins: {compressor: window}\n")
    assert load_config(path).plugins.compressor == "window"


def test_a_path_that_is_no_file_is_refused_by_name_and_never_waited_on(tmp_path: Path) -> None:
    """A named pipe given as the config waited for a writer forever (``check --config`` hung, ``load_host`` blocked);
    a path holding a NUL raised Python's bare ValueError (a red-team pass)."""
    import os

    pipe = tmp_path / "config.yaml"
    os.mkfifo(pipe)
    for path, words in ((pipe, "not a regular file"), (tmp_path, "not a regular file"),
                        (f"{tmp_path}/a\0b.yaml", "holds a NUL character")):
        with pytest.raises(ConfigError, match=words) as exc:
            load_host(path)
        assert repr(str(path)) in str(exc.value) or str(path) in str(exc.value)
    assert load_config(os.devnull).source == os.devnull  # an empty config: the defaults


@pytest.mark.parametrize("text", ["model:\n  default: gpt-4o\t# mine\nctx_plugins:\n  compressor: window\t\n",
                                  "model:\n  default:\tgpt-4o\nctx_plugins:\n  compressor:\twindow  \t# x\n"])
def test_a_tab_between_words_reads_as_hermes_reads_it(tmp_path: Path, text: str) -> None:
    """hermes (libyaml) takes these tabs; PyYAML refused them, and the plugin was off for a tab nobody sees."""
    assert yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))["model"] == {"default": "gpt-4o"}
    config = load_config(write(tmp_path, text))
    assert config.plugins.compressor == "window" and config.model.name == "gpt-4o"
    assert config.line_of("ctx_plugins.compressor") == 4


def test_a_tab_in_the_indentation_stays_an_error_that_says_so(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r":3: malformed YAML: .*\(a tab: write spaces instead\)"):
        load_config(write(tmp_path, "ctx_plugins:\n  memory: {}\n\tcompressor: prune\n"))


def test_hermes_own_full_default_config_is_well_inside_the_limits(tmp_path: Path) -> None:
    hermes_config = pytest.importorskip("hermes_cli.config")
    path = write(tmp_path, yaml.safe_dump(hermes_config.DEFAULT_CONFIG))
    cfg = load_config(path)
    assert cfg.source == str(path) and cfg.lines  # loaded, every key's line known


@pytest.mark.parametrize(("text", "words"), [
    ("a: 2024-13-45\n", "'2024-13-45' is not a valid timestamp (month must be in 1..12)"),
    ("a: " + "9" * 5000 + "\n", "is not a valid int (Exceeds the limit (4300 digits)"),
    ("a: !!bool maybe\n", "'maybe' is not a valid bool"),
    ("a: \x01\n", "special characters are not allowed"),
])
def test_values_yaml_cannot_build_are_malformed_yaml_with_their_line(tmp_path: Path, text: str, words: str) -> None:
    path = write(tmp_path, "model: gpt-4o\n" + text)
    with pytest.raises(ConfigError) as exc:
        load_config(path)
    assert str(exc.value).startswith(f"{path}:2: malformed YAML: ")
    assert words in str(exc.value)


# ------------------------------------------------------------------ every error names file:line

#: Errors raised while the host loads (a plugin's options, names the host checks) get their line
#: from ``Config.locate``, which ``load_host`` calls.

@dataclass(frozen=True)
class AcmeOptions:
    retries: int = 3
    ratio: float = 0.5


class AcmeStrategy(FakeCompressor):
    name = "acme"
    options_class = AcmeOptions


class AcmePlugin:
    """A third-party plugin whose strategy has an ``options_class``."""

    @hookimpl
    def register_compressors(self, register: Any) -> None:
        register(AcmeStrategy)


# (config text with "# <-" on the line the error must name, its key path, words, deployment)
BAD = [
    # ctx_plugins
    pytest.param("ctx_plugins:\n  compressor: 42  # <-\n", "ctx_plugins.compressor", ["int 42"], None,
                 id="compressor-not-a-string"),
    pytest.param("model: m\nctx_plugins:\n  compresor: prune  # <-\n", "ctx_plugins.compresor",
                 ["did you mean 'compressor'"], None, id="misspelled-key"),
    pytest.param("ctx_plugins:\n  memory:\n    providers: file  # <-\n", "ctx_plugins.memory.providers",
                 ["a list, e.g. [file]"], None, id="providers-scalar"),
    pytest.param("ctx_plugins:\n  memory:\n    namespace: [a]  # <-\n", "ctx_plugins.memory.namespace",
                 ["a string"], None, id="namespace-not-a-string"),
    # YAML 1.1 reads 1e3 (no dot before the exponent) as text: the error said "got str '1e3'" and not why
    pytest.param("ctx_plugins:\n  cooldown_seconds: 1e3  # <-\n", "ctx_plugins.cooldown_seconds",
                 ["got str '1e3'", "write 1.0e3 instead"], None, id="number-yaml-reads-as-text"),
    pytest.param("ctx_plugins:\n  failure_threshold: '5'  # <-\n", "ctx_plugins.failure_threshold",
                 ["a quoted number is text"], None, id="number-quoted"),
    # before: a traceback out of `hermes-ctx check` (ValueError: PosixPath('/') has an empty name) and, inside
    # hermes, the plugin not loaded with only a line in agent.log; a folder passed `check` and spooled every compaction
    pytest.param("ctx_plugins:\n  archive:\n    path: /  # <-\n", "ctx_plugins.archive.path",
                 ["'/' cannot be the archive's file: it names a folder"], None, id="archive-path-root"),
    pytest.param("ctx_plugins:\n  archive:\n    path: .  # <-\n", "ctx_plugins.archive.path",
                 ["it names a folder"], None, id="archive-path-dot"),
    pytest.param("ctx_plugins:\n  archive:\n    path: /tmp/  # <-\n", "ctx_plugins.archive.path",
                 ["it names a folder"], None, id="archive-path-a-folder"),
    pytest.param('ctx_plugins:\n  archive:\n    path: "a\\0b"  # <-\n', "ctx_plugins.archive.path",
                 ["NUL"], None, id="archive-path-nul"),
    pytest.param("ctx_plugins:\n  disabled:\n    - window\n    - 3  # <-\n", "ctx_plugins.disabled[1]",
                 ["int 3"], None, id="disabled-item"),
    pytest.param("ctx_plugins:\n  failure_threshold: 0  # <-\n", "ctx_plugins.failure_threshold",
                 [">= 1"], None, id="failure-threshold-zero"),
    pytest.param("ctx_plugins:\n  cooldown_seconds: .inf  # <-\n", "ctx_plugins.cooldown_seconds",
                 ["not a finite number"], None, id="cooldown-inf"),
    pytest.param("ctx_plugins:\n  options:\n    summarize: 5  # <-\n", "ctx_plugins.options.summarize",
                 ["a mapping"], None, id="options-not-a-mapping"),
    # deployments
    pytest.param("ctx_plugins:\n  deployments:\n    bot:\n      compressr: prune  # <-\n",
                 "ctx_plugins.deployments.bot.compressr", ["did you mean 'compressor'"], None,
                 id="deployment-typo"),
    pytest.param("ctx_plugins:\n  deployments:\n    bot:\n      memory: {providers: [file, 7]}  # <-\n",
                 "ctx_plugins.deployments.bot.memory.providers[1]", ["int 7"], None,
                 id="deployment-provider-not-a-string"),
    pytest.param("compression:\n  threshold: 0.5\nctx_plugins:\n  deployments:\n    bot:\n      compression:\n"
                 "        threshold: .nan  # <-\n", "ctx_plugins.deployments.bot.compression.threshold",
                 ["not a finite number"], "bot", id="deployment-compression-nan"),
    pytest.param("compression:\n  threshold: 7  # <-\nctx_plugins:\n  deployments:\n    bot:\n"
                 "      compression: {target_ratio: 0.3}\n", "compression.threshold",
                 ["out of range"], "bot", id="top-level-value-under-a-deployment"),
    # archive
    pytest.param("ctx_plugins:\n  archive:\n    scope: galaxy  # <-\n", "ctx_plugins.archive.scope",
                 ["valid: session, user"], None, id="archive-scope"),
    pytest.param("ctx_plugins:\n  archive:\n    retention_days: .inf  # <-\n",
                 "ctx_plugins.archive.retention_days", ["not a finite number"], None, id="archive-retention-inf"),
    pytest.param("ctx_plugins:\n  archive:\n    expand_max_tokens: 5  # <-\n",
                 "ctx_plugins.archive.expand_max_tokens", [">= 100"], None, id="archive-expand-small"),
    # compression (hermes' section)
    pytest.param("compression:\n  threshold: .nan  # <-\n", "compression.threshold",
                 ["not a finite number"], None, id="threshold-nan"),
    pytest.param("compression:\n  model_thresholds:\n    glm-5.2: .inf  # <-\n",
                 "compression.model_thresholds.glm-5.2", ["not a finite number"], None,
                 id="model-threshold-key-with-a-dot"),
    pytest.param("compression:\n  protect_last_n: 18446744073709551616  # <-\n", "compression.protect_last_n",
                 ["at most"], None, id="count-beyond-64-bits"),
    pytest.param("compression:\n  enabled: yes please  # <-\n", "compression.enabled",
                 ["true or false"], None, id="enabled-not-bool"),
    # memory, skills, auxiliary
    pytest.param("memory:\n  memory_char_limit: 0  # <-\n", "memory.memory_char_limit", [">= 1"], None,
                 id="memory-char-limit"),
    pytest.param("memory:\n  nudge_interval: .nan  # <-\n", "memory.nudge_interval", ["a whole number"],
                 None, id="memory-int-nan"),
    pytest.param("skills:\n  creation_nudge_interval: -1  # <-\n", "skills.creation_nudge_interval",
                 [">= 0"], None, id="skills-negative"),
    pytest.param("auxiliary:\n  compression:\n    timeout: .inf  # <-\n", "auxiliary.compression.timeout",
                 ["not a finite number"], None, id="summary-timeout-inf"),
    # the file itself
    pytest.param("ctx_plugins:\n\tcompressor: prune  # <-\n", "", ["malformed YAML"], None, id="tab-indent"),
    pytest.param(billion_laughs(), "", ["more than 50,000 values"], None, id="alias-bomb"),
    pytest.param("ctx_plugins:\n  options:\n    summarize: " + "[" * 500 + "]" * 500 + "  # <-\n", "",
                 ["nested more than"], None, id="deep-nesting"),
    # options of each built-in strategy and provider, validated when the host loads
    pytest.param("ctx_plugins:\n  options:\n    summarize:\n      summary_ratio: .nan  # <-\n",
                 "ctx_plugins.options.summarize.summary_ratio", ["not a finite number"], None,
                 id="summarize-option"),
    pytest.param("ctx_plugins:\n  compressor: prune\n  options:\n    prune:\n      min_prune_chars: lots  # <-\n",
                 "ctx_plugins.options.prune.min_prune_chars", ["str 'lots'"], None,
                 id="prune-option"),
    pytest.param("ctx_plugins:\n  compressor: window\n  options:\n    window:\n      budget_ratio: -.inf  # <-\n",
                 "ctx_plugins.options.window.budget_ratio", ["not a finite number"], None,
                 id="window-option"),
    pytest.param("ctx_plugins:\n  compressor: pipeline\n  options:\n    pipeline:\n      steps: []  # <-\n",
                 "ctx_plugins.options.pipeline.steps", ["at least one step"], None,
                 id="pipeline-option"),
    # a step's name was resolved at the first compaction (which then failed, the default compacting instead)
    pytest.param("ctx_plugins:\n  compressor: pipeline\n  options:\n    pipeline:\n      steps: [prune, bogus]  # <-\n",
                 "ctx_plugins.options.pipeline.steps", ["unknown compressor strategy 'bogus'", "available:"], None,
                 id="pipeline-unknown-step"),
    # accepted, then every summary clipped to a ceiling under the floor
    pytest.param("ctx_plugins:\n  options:\n    summarize:\n      summary_tokens_floor: 20000  # <-\n"
                 "      summary_tokens_ceiling: 100\n",
                 "ctx_plugins.options.summarize.summary_tokens_floor", ["above summary_tokens_ceiling 100"], None,
                 id="summary-floor-above-ceiling"),
    pytest.param("ctx_plugins:\n  options:\n    file:\n      write_approval: maybe  # <-\n",
                 "ctx_plugins.options.file.write_approval", ["'maybe'"], None,
                 id="file-option"),
    pytest.param("ctx_plugins:\n  memory: {providers: [file, ctx-local]}\n  options:\n    ctx-local:\n"
                 "      budget_tokens: 10  # <-\n", "ctx_plugins.options.ctx-local.budget_tokens", [">= 50"], None,
                 id="ctx-local-option"),
    pytest.param("ctx_plugins:\n  memory: {providers: [file, ctx-mem0]}\n  options:\n    ctx-mem0:\n"
                 "      top_k: 1000  # <-\n", "ctx_plugins.options.ctx-mem0.top_k", ["<= 100"], None,
                 id="ctx-mem0-option"),
    pytest.param("ctx_plugins:\n  memory: {providers: [file, ctx-honcho]}\n  options:\n    ctx-honcho:\n"
                 "      max_retries: 9  # <-\n", "ctx_plugins.options.ctx-honcho.max_retries", ["<= 5"], None,
                 id="ctx-honcho-option"),
    pytest.param("ctx_plugins:\n  options:\n    sumarize: {}  # <-\n", "ctx_plugins.options.sumarize",
                 ["did you mean 'summarize'"], None, id="options-for-no-plugin"),
    pytest.param("ctx_plugins:\n  disabled: [windwo]  # <-\n", "ctx_plugins.disabled",
                 ["did you mean 'window'"], None, id="disabled-unknown-name"),
    pytest.param("ctx_plugins:\n  compressor: acme\n  options:\n    acme:\n      retries: many  # <-\n",
                 "ctx_plugins.options.acme.retries", ["str 'many'"], None,
                 id="third-party-option"),
    pytest.param("ctx_plugins:\n  compressor: acme\n  options:\n    acme:\n      retires: 2  # <-\n",
                 "ctx_plugins.options.acme.retires", ["did you mean 'retries'"], None,
                 id="third-party-option-typo"),
    pytest.param("ctx_plugins:\n  compressor: acme\n  options:\n    acme: {ratio: 0.5}\n  deployments:\n"
                 "    bot:\n      options:\n        acme:\n          ratio: .inf  # <-\n",
                 "ctx_plugins.options.acme.ratio", ["not a finite number"], "bot",
                 id="deployment-overrides-an-option"),
    pytest.param("ctx_plugins:\n  compressor: acme\n  deployments:\n    bot:\n      options:\n"
                 "        acme: {retries: 1}\n        sumarize: {}  # <-\n",
                 "ctx_plugins.options.sumarize", ["did you mean 'summarize'"], "bot",
                 id="deployment-options-for-no-plugin"),
]


@pytest.mark.parametrize(("text", "key", "words", "deployment"), BAD)
def test_every_bad_config_names_file_line_key_and_what_is_valid(
        tmp_path: Path, text: str, key: str, words: list[str], deployment: str | None) -> None:
    path = write(tmp_path, text)
    with pytest.raises(ConfigError) as exc:
        load_host(path, deployment=deployment, plugins=[AcmePlugin()]).shutdown()
    message = str(exc.value)
    assert message.startswith(f"{path}:{marked_line(path)}: {key + ': ' if key else ''}"), message
    assert (exc.value.source, exc.value.line, exc.value.path) == (str(path), marked_line(path), key)
    for word in words:
        assert word in message, message


def test_the_enumeration_covers_every_section() -> None:
    sections = {str(p.values[1]).split(".")[0] or "file" for p in BAD}
    keys = " ".join(str(p.values[1]) for p in BAD)
    assert {"ctx_plugins", "compression", "memory", "skills", "auxiliary", "file"} <= sections
    for part in ("deployments", "archive", *(f"options.{n}." for n in (
            "summarize", "prune", "window", "pipeline", "file", "ctx-local", "ctx-mem0", "ctx-honcho", "acme"))):
        assert part in keys, part
    assert len(BAD) >= 24


def test_locate_points_at_the_deployment_override_or_the_nearest_key(tmp_path: Path) -> None:
    path = write(tmp_path, """\
        ctx_plugins:
          options:
            summarize: {summary_ratio: 0.2}
            prune: {min_prune_chars: 100}
          deployments:
            bot:
              options:
                summarize:
                  summary_ratio: 0.3
    """)
    bot = load_config(path, deployment="bot")
    top = load_config(path)

    def where(cfg: Config, key: str) -> str:
        return str(cfg.locate(ConfigError("bad", path=key)))

    assert where(bot, "ctx_plugins.options.summarize.summary_ratio").startswith(f"{path}:9: ")  # the override
    assert where(top, "ctx_plugins.options.summarize.summary_ratio").startswith(f"{path}:3: ")  # the top level
    assert where(bot, "ctx_plugins.options.prune.min_prune_chars").startswith(f"{path}:4: ")  # not overridden
    assert where(bot, "ctx_plugins.options.summarize.unset_key").startswith(f"{path}:8: ")  # nearest key
    assert where(top, "ctx_plugins.options.window.budget_ratio").startswith(f"{path}:2: ")
    # an error that already names its source is left as it is
    located = ConfigError("bad", path="x", source="elsewhere.yaml", line=3)
    assert bot.locate(located) is located
    # a config given as values has no lines, but still says where it came from
    assert str(load_config({}).locate(ConfigError("bad", path="ctx_plugins.x"))) == "<dict>: ctx_plugins.x: bad"


def test_lines_survive_what_hermes_does_to_the_config(tmp_path: Path) -> None:
    import copy
    import pickle

    path = write(tmp_path, "compression:\n  threshold: 0.4\n")
    cfg = load_config(path)
    for twin in (copy.deepcopy(cfg), pickle.loads(pickle.dumps(cfg))):
        assert twin == cfg and twin.line_of("compression.threshold") == 2

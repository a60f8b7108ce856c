"""A plugin's options (``ctx_plugins.options.<name>.<key>``) are checked like our own keys: by the
commands (``Host.validate_options``: ``check`` vouches for the whole file, selected or not) and when the
host builds the plugin, and every error names the file and line of the bad value — also when the host
builds it long after loading (hermes' ``memory.provider`` activating one of ours on first use)."""

from __future__ import annotations

import importlib
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from config_helpers import marked_line, write

from hermes_ctx_plugins import ConfigError, hookimpl, load_host
from hermes_ctx_plugins.cli import main
from hermes_ctx_plugins.compression.pipeline import PipelineStrategy
from hermes_ctx_plugins.options import option
from hermes_ctx_plugins.testing import FakeCompressor, FakeMemoryProvider


@dataclass(frozen=True)
class TrimOptions:
    keep_last: int = option(4, ge=1, le=100)


@dataclass(frozen=True)
class WindowOptions:
    min_chars: int = 0
    max_chars: int = 1000


class Trim(FakeCompressor):
    name = "zed-trim"
    options_class = TrimOptions


class Notes(FakeMemoryProvider):
    """Checks what its options' types cannot say: that the window is not upside down."""

    name = "zed-notes"
    options_class = WindowOptions

    def __init__(self, options: Any = None, **kwargs: Any) -> None:
        super().__init__(options, **kwargs)
        if self.options.min_chars > self.options.max_chars:
            raise ConfigError(f"min_chars ({self.options.min_chars}) is above max_chars ({self.options.max_chars})",
                              path="ctx_plugins.options.zed-notes.min_chars", value=self.options.min_chars,
                              expected="at most max_chars")


class ZedPlugin:
    @hookimpl
    def register_compressors(self, register: Any) -> None:
        register(Trim)

    @hookimpl
    def register_memory_providers(self, register: Any) -> None:
        register(Notes)


def load_error(path: Path, deployment: str | None = None) -> ConfigError:
    host = load_host(path, deployment=deployment, plugins=[ZedPlugin()])
    try:
        with pytest.raises(ConfigError) as exc:
            host.validate_options()
    finally:
        host.shutdown()
    return exc.value


@pytest.mark.parametrize(("text", "deployment"), [
    pytest.param("""\
        ctx_plugins:
          options:
            zed-trim:
              keep_last: 0  # <-
        """, None, id="top-level"),
    pytest.param("""\
        ctx_plugins:
          options:
            zed-trim: {keep_last: 3}
          deployments:
            bot:
              options:
                zed-trim:
                  keep_last: 0  # <-
        """, "bot", id="a-deployment-override"),
])
def test_an_unselected_strategys_bad_option_is_refused_by_validation_with_file_and_line(
        tmp_path: Path, text: str, deployment: str | None) -> None:
    path = write(tmp_path, text)
    error = load_error(path, deployment)
    key = "ctx_plugins.options.zed-trim.keep_last"
    assert str(error) == f"{path}:{marked_line(path)}: {key}: 0 is out of range; expected >= 1 and <= 100"
    assert (error.source, error.line, error.path) == (str(path), marked_line(path), key)


def test_the_same_strategy_with_a_good_option_loads_and_is_built_with_it_later(tmp_path: Path) -> None:
    path = write(tmp_path, """\
        ctx_plugins:
          compressor: pipeline
          options:
            pipeline: {steps: [zed-trim]}
            zed-trim: {keep_last: 3}
        """)
    host = load_host(path, plugins=[ZedPlugin()])
    try:
        assert isinstance(host.compressor, PipelineStrategy)
        assert [step.options for step in host.compressor.steps] == [TrimOptions(keep_last=3)]  # built on first use
    finally:
        host.shutdown()


def test_a_bad_option_of_a_disabled_provider_is_not_checked(tmp_path: Path) -> None:
    text = "ctx_plugins:\n  {disabled}options:\n    zed-notes: {{max_chars: many}}  # <-\n"
    off = load_host(write(tmp_path, text.format(disabled="disabled: [zed-notes]\n  ")), plugins=[ZedPlugin()])
    off.validate_options()
    off.shutdown()
    path = write(tmp_path, text.format(disabled=""))
    error = load_error(path)
    assert str(error) == (f"{path}:{marked_line(path)}: ctx_plugins.options.zed-notes.max_chars: "
                          "got str 'many', expected a whole number")


def test_a_provider_rejecting_its_options_when_first_used_names_file_and_line(tmp_path: Path) -> None:
    """hermes' ``memory.provider`` builds one of our providers on its first use, long after loading."""
    path = write(tmp_path, """\
        ctx_plugins:
          memory: {providers: [file]}
          options:
            zed-notes:
              min_chars: 50  # <-
              max_chars: 10
        """)
    host = load_host(path, plugins=[ZedPlugin()])
    try:
        with pytest.raises(ConfigError) as exc:
            host.activate_provider("zed-notes")
        assert str(exc.value) == (f"{path}:{marked_line(path)}: ctx_plugins.options.zed-notes.min_chars: "
                                  "min_chars (50) is above max_chars (10)")
        assert [p.name for p in host.memory_providers] == ["file"]
    finally:
        host.shutdown()
    write(tmp_path, "ctx_plugins:\n  memory: {providers: [file]}\n  options:\n    zed-notes: {min_chars: 5}\n")
    host = load_host(path, plugins=[ZedPlugin()])
    try:
        assert host.activate_provider("zed-notes").options == WindowOptions(min_chars=5)
    finally:
        host.shutdown()


@pytest.fixture
def acme(acme_site: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The example plugin (``acme-recent``: ``keep_last`` a whole number), installed and on the path."""
    monkeypatch.syspath_prepend(str(acme_site))
    importlib.invalidate_caches()
    monkeypatch.delitem(sys.modules, "acme_ctx_plugin", raising=False)


@pytest.mark.usefixtures("acme")
def test_check_reports_an_installed_plugins_bad_option_with_file_and_line(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path, "ctx_plugins:\n  options:\n    acme-recent:\n      keep_last: many  # <-\n")
    assert main(["check", "--config", str(path)]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert (f"{path}:{marked_line(path)}: ctx_plugins.options.acme-recent.keep_last: got str 'many', "
            "expected a whole number") in err

    write(tmp_path, "ctx_plugins:\n  options:\n    acme-recent:\n      keep_last: 3\n")
    assert main(["check", "--config", str(path)]) == 0
    assert "config OK" in capsys.readouterr().out

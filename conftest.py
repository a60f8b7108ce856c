"""Suite-wide guards: no network beyond loopback, and no state leaking from the real home.

Every test runs with ``HOME``, ``HERMES_HOME`` and ``MEM0_DIR`` pointed under its own temporary
directory and Mem0's telemetry off; any socket connection or name lookup outside the loopback range
fails the test at once.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from hermes_ctx_plugins.testing import loopback_only

# The fixtures we offer plugin authors (stub, mem0, honcho, hermes_home) are the suite's own too.
pytest_plugins = ["hermes_ctx_plugins.testing.pytest_plugin"]

_COLLECTION_HOME: Path | None = None


def pytest_configure(config: pytest.Config) -> None:
    """Before any test module is imported: hermes' modules (imported at collection, run_agent's importorskip)
    create ``$HERMES_HOME`` and open ``$HERMES_HOME/logs/agent.log`` at import time, and every test's log lines
    then went to the real home. Point HOME and HERMES_HOME at a throw-away folder for the whole run."""
    global _COLLECTION_HOME
    _COLLECTION_HOME = Path(tempfile.mkdtemp(prefix="hermes-ctx-tests-"))
    os.environ["HOME"] = str(_COLLECTION_HOME)
    os.environ["HERMES_HOME"] = str(_COLLECTION_HOME / ".hermes")


def pytest_unconfigure(config: pytest.Config) -> None:
    if _COLLECTION_HOME is not None:
        shutil.rmtree(_COLLECTION_HOME, ignore_errors=True)


@pytest.fixture(autouse=True)
def _no_network() -> Iterator[None]:
    with loopback_only():
        yield


@pytest.fixture(autouse=True)
def _isolated_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("HERMES_HOME", str(home / ".hermes"))
    monkeypatch.setenv("MEM0_TELEMETRY", "False")
    monkeypatch.setenv("MEM0_DIR", str(home / ".mem0"))
    monkeypatch.delenv("HERMES_CTX_DEPLOYMENT", raising=False)


def _utf8(text: str) -> str:
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    """A report whose failure or captured output holds a lone surrogate (many tests here plant one) is written with
    ``\\udXXX`` escapes instead: pytest-xdist sends reports from its workers as UTF-8, and such a report killed the
    worker (INTERNALERROR, the rest of the run lost, no summary line) instead of showing the failure."""
    outcome = yield
    report = outcome.get_result()  # type: ignore[attr-defined]
    if report.longrepr is not None:
        text = str(report.longrepr)
        if _utf8(text) != text:
            report.longrepr = _utf8(text)
    report.sections = [(title, _utf8(content)) for title, content in report.sections]

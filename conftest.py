"""Suite-wide guards: no network beyond loopback, and no state leaking from the real home.

Every test runs with ``HOME``, ``HERMES_HOME`` and ``MEM0_DIR`` pointed under its own temporary
directory and Mem0's telemetry off; any socket connection or name lookup outside the loopback range
fails the test at once.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from hermes_ctx_plugins.testing import loopback_only

# The fixtures we offer plugin authors (stub, mem0, honcho, hermes_home) are the suite's own too.
pytest_plugins = ["hermes_ctx_plugins.testing.pytest_plugin"]


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

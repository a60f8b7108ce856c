"""Fixtures of this project's suite. The suite-wide guards live in the root ``conftest.py``, which also
loads our pytest plugin (``hermes_ctx_plugins.testing.pytest_plugin``): the loopback ``stub``, ``mem0``
and ``honcho`` services and ``hermes_home`` come from there."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings

from hermes_ctx_plugins.memory.local import LocalProvider

# HYPOTHESIS_PROFILE=thorough runs the property tests ten times harder (before a release, locally).
settings.register_profile("default", max_examples=30)
settings.register_profile("thorough", max_examples=300)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "acme-ctx-plugin"


@pytest.fixture(scope="session")
def acme_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The example plugin, installed by pip into a directory of its own (offline)."""
    target = tmp_path_factory.mktemp("acme-site")
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-index",
         "--no-build-isolation", "--target", str(target), str(EXAMPLE)],
        check=True, capture_output=True, text=True,
    )
    assert list(target.glob("acme_ctx_plugin-1.0.0.dist-info"))
    return target


@pytest.fixture
def make() -> Iterator[Any]:
    """``make(**options)`` builds a ctx-local provider in this test's home; all shut down after it."""
    made: list[LocalProvider] = []

    def factory(**options: Any) -> LocalProvider:
        provider = LocalProvider(options, hermes_home=Path(os.environ["HERMES_HOME"]))
        made.append(provider)
        return provider

    yield factory
    for provider in made:
        provider.shutdown()


@pytest.fixture(autouse=True)
def _no_bridge_bindings_left() -> Iterator[None]:
    """Bridge bindings live in the runtime whose hooks hermes calls, which outlives a test unless the
    next one makes hermes rediscover its plugins: none outlives its test."""
    yield
    from hermes_ctx_plugins.hermes.runtime import installed  # imports no hermes module

    runtime = installed()
    if runtime is not None:
        runtime.sessions.clear()


#: hermes' own daemon threads that outlive the turn that started them (its background memory / skill review,
#: its curator): they read HERMES_HOME, the stub model and our plugin's state as the test left them
_HERMES_BACKGROUND = ("bg-review", "curator-review")


@pytest.fixture(autouse=True)
def _no_hermes_background_work_left() -> Iterator[None]:
    """A background review hermes started in a test ends in that test: left running, it would go on
    against the next test's home, stub and plugin state (one full run saw such a review fail with a
    RecursionError, then the interpreter crash in the next test)."""
    yield
    import threading

    for thread in threading.enumerate():
        if thread.name in _HERMES_BACKGROUND:
            thread.join(60)
            assert not thread.is_alive(), f"hermes' {thread.name} thread did not finish within 60 s"

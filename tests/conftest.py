"""Fixtures shared by the test modules (the suite-wide guards live in the root conftest.py)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings
from remote_helpers import HONCHO_KEY, MEM0_KEY

from hermes_ctx_plugins.memory.local import LocalProvider
from hermes_ctx_plugins.testing import HonchoStubServer, Mem0StubServer, StubOpenAIServer

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
def stub() -> Iterator[StubOpenAIServer]:
    """A loopback OpenAI-compatible model (see ``hermes_helpers.MODEL``) for the test's duration."""
    with StubOpenAIServer(model="stub-model") as server:
        yield server


@pytest.fixture
def mem0() -> Iterator[Mem0StubServer]:
    """A loopback Mem0 service accepting ``remote_helpers.MEM0_KEY``."""
    with Mem0StubServer(api_keys=(MEM0_KEY,)) as server:
        yield server


@pytest.fixture
def honcho() -> Iterator[HonchoStubServer]:
    """A loopback Honcho service accepting ``remote_helpers.HONCHO_KEY``."""
    with HonchoStubServer(api_keys=(HONCHO_KEY,)) as server:
        yield server


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
    """Bridge bindings are process-wide (hermes' hooks only know session ids): none outlives its test."""
    yield
    try:
        from hermes_ctx_plugins.hermes import hooks
    except ImportError:  # the hermes extra is not installed
        return
    hooks._SESSION_HOSTS.clear()

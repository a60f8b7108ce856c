"""A pytest plugin for plugin authors: loopback services, an isolated ``$HERMES_HOME``, the contract.

Opt in on the command line or, once for all runs, in your pytest configuration::

    pytest -p hermes_ctx_plugins.testing.pytest_plugin

    # pyproject.toml
    [tool.pytest.ini_options]
    addopts = "-p hermes_ctx_plugins.testing.pytest_plugin"

Fixtures (each one per test, stopped afterwards):

* ``hermes_home`` — an empty directory, also set as ``$HERMES_HOME`` for the test;
* ``openai_stub`` — a :class:`~hermes_ctx_plugins.testing.StubOpenAIServer` serving model
  ``stub-model`` (script replies with ``openai_stub.reply(...)``; point clients at ``base_url``);
* ``mem0_stub`` / ``honcho_stub`` — stateful loopback Mem0 and Honcho services
  (:class:`~hermes_ctx_plugins.testing.Mem0StubServer` / :class:`~hermes_ctx_plugins.testing.HonchoStubServer`)
  accepting the key ``mem0_stub.api_keys[0]`` / ``honcho_stub.api_keys[0]`` at ``base_url``.

The names do not collide with fixtures a project is likely to have (``stub``, ``mem0``). The
provider contract is importable from here too: ``from hermes_ctx_plugins.testing.pytest_plugin
import ProviderContract`` (see :mod:`hermes_ctx_plugins.testing.contract` for a complete example).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from .contract import ProviderContract
from .model_stub import StubOpenAIServer
from .stubs import HonchoStubServer, Mem0StubServer

__all__ = ["ProviderContract", "hermes_home", "honcho_stub", "mem0_stub", "openai_stub"]


@pytest.fixture
def hermes_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty ``$HERMES_HOME`` of this test's own."""
    home = tmp_path / "hermes-home"
    home.mkdir()
    monkeypatch.setenv("HERMES_HOME", str(home))
    return home


@pytest.fixture
def openai_stub() -> Iterator[StubOpenAIServer]:
    """A loopback OpenAI-compatible model, ``stub-model``, answering from the test's script."""
    with StubOpenAIServer(model="stub-model") as server:
        yield server


@pytest.fixture
def mem0_stub() -> Iterator[Mem0StubServer]:
    """A loopback Mem0 service accepting ``mem0_stub.api_keys[0]``."""
    server = Mem0StubServer()
    with server:
        yield server


@pytest.fixture
def honcho_stub() -> Iterator[HonchoStubServer]:
    """A loopback Honcho service accepting ``honcho_stub.api_keys[0]``."""
    server = HonchoStubServer()
    with server:
        yield server

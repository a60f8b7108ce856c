"""Contract tests every registered strategy and provider must pass, built-in or third-party.

The memory provider contract is :class:`hermes_ctx_plugins.testing.contract.ProviderContract`, the
same class plugin authors run: one subclass per provider below, the remote ones against the
loopback Mem0 and Honcho stubs (``conftest.py``'s ``mem0`` and ``honcho``).
"""

from __future__ import annotations

import copy
import functools
import importlib
import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest
from remote_helpers import HONCHO_KEY, MEM0_KEY, provider_factory

from hermes_ctx_plugins import CompressionResult, SessionInfo, load_host
from hermes_ctx_plugins.config import load_config
from hermes_ctx_plugins.memory.base import MemoryProvider
from hermes_ctx_plugins.memory.file.provider import FileProvider
from hermes_ctx_plugins.memory.local import LocalProvider
from hermes_ctx_plugins.memory.remote.base import RemoteProvider
from hermes_ctx_plugins.memory.remote.honcho import HonchoProvider
from hermes_ctx_plugins.memory.remote.mem0 import Mem0Provider
from hermes_ctx_plugins.testing import (
    FakeBuiltinMemory,
    FakeMemoryProvider,
    FakesPlugin,
    HonchoStubServer,
    Mem0StubServer,
)
from hermes_ctx_plugins.testing.contract import ProviderContract

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "acme-ctx-plugin"

# Every strategy and provider this installation registers, plus the public fakes.
_HOST = load_host({}, plugins=[FakesPlugin()])
COMPRESSORS = [r for r in _HOST.registry if r.kind == "compressor"]
PROVIDERS = [r for r in _HOST.registry if r.kind == "memory"]

R = TypeVar("R", bound=RemoteProvider)


def transcript(n: int = 30) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = [{"role": "user", "content": "set up the project"}]
    for i in range(n):
        call_id = f"call_{i}"
        messages.append({"role": "assistant", "content": None, "tool_calls": [
            {"id": call_id, "type": "function",
             "function": {"name": "terminal", "arguments": json.dumps({"command": f"make step{i}"})}}]})
        messages.append({"role": "tool", "tool_call_id": call_id, "content": f"step {i} ok\n" * 20})
        messages.append({"role": "assistant", "content": f"step {i} done"})
        messages.append({"role": "user", "content": f"now step {i + 1}"})
    return messages


def tool_pairs_are_intact(messages: list[dict[str, Any]]) -> bool:
    calls = {tc["id"] for m in messages for tc in m.get("tool_calls") or ()}
    results = {m["tool_call_id"] for m in messages if m.get("role") == "tool"}
    return calls == results


@pytest.mark.parametrize("entry", COMPRESSORS, ids=[r.name for r in COMPRESSORS])
def test_compressor_contract(entry: Any) -> None:
    strategy = entry.factory({}, model="gpt-4o", context_length=128_000)
    clone = copy.deepcopy(strategy)  # hermes deep-copies the engine per agent
    assert type(clone) is type(strategy) and clone is not strategy

    messages = transcript()
    before = copy.deepcopy(messages)
    result = strategy.compress(messages, force=True)
    assert isinstance(result, CompressionResult)
    assert messages == before, "compress must not mutate its input"
    assert result.messages, "an empty conversation is never a valid result"
    assert tool_pairs_are_intact(result.messages)
    assert result.messages[-1] == messages[-1], "the latest message is kept verbatim"
    if result.compressed:
        assert len(result.messages) < len(messages) or result.tokens_after < result.tokens_before

    tiny = [{"role": "user", "content": "hello"}]
    assert strategy.compress(tiny).messages == tiny


# ---------------------------------------------------------------- the memory provider contract


def built(factory: Callable[..., MemoryProvider], home: Path, **options: Any) -> Iterator[MemoryProvider]:
    """For a ``provider`` fixture: ``factory(options)`` over ``home``, shut down after the test."""
    provider = factory(options, hermes_home=home)
    yield provider
    provider.shutdown()


def remote(cls: type[R], home: Path, settings: Callable[[str], dict[str, Any]], url: str) -> Iterator[R]:
    """For a ``provider`` fixture: a ``cls`` talking to the stub at ``url``. The contract is about
    scope, not outages: requests and recall may take as long as a loaded machine needs."""
    for make in provider_factory(cls, home, settings):  # it shuts the provider down when resumed
        yield make(url, timeout=10.0, prefetch_wait=10.0)


class TestFileContract(ProviderContract):
    provider_name = "file"

    @pytest.fixture
    def provider(self, tmp_path: Path) -> Iterator[MemoryProvider]:
        yield from built(FileProvider, tmp_path / "hermes")

    def store(self, provider: MemoryProvider, session: SessionInfo, fact: str) -> None:
        """``file`` remembers what its ``memory`` tool writes (a turn only feeds its review)."""
        result = json.loads(provider.handle_tool_call(
            "memory", {"target": "user", "action": "add", "content": fact}, session=session))
        assert result.get("success") is True, f"the memory tool refused {fact!r}: {result}"


class TestLocalContract(ProviderContract):
    provider_name = "ctx-local"

    @pytest.fixture
    def provider(self, tmp_path: Path) -> Iterator[MemoryProvider]:
        yield from built(LocalProvider, tmp_path / "hermes")


class TestLocalPostgresContract(ProviderContract):
    """ctx-local with its memories on a real PostgreSQL server: the same isolation, another backend."""

    provider_name = "ctx-local"

    @pytest.fixture
    def provider(self, tmp_path: Path, postgres_dsn: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[MemoryProvider]:
        monkeypatch.setenv("HERMES_CTX_POSTGRES_DSN", postgres_dsn)
        on_postgres = load_config({"ctx_plugins": {"storage": {"backend": "postgres"}}})
        for provider in built(functools.partial(LocalProvider, config=on_postgres), tmp_path / "hermes"):
            yield provider
            # what the contract stored went to the server: no SQLite file was ever made at the path
            assert not provider.path.exists()


class TestMem0Contract(ProviderContract):
    provider_name = "ctx-mem0"

    @pytest.fixture
    def provider(self, mem0: Mem0StubServer, tmp_path: Path) -> Iterator[MemoryProvider]:
        yield from remote(Mem0Provider, tmp_path, lambda host: {"api_key": MEM0_KEY, "host": host}, mem0.base_url)


class TestHonchoContract(ProviderContract):
    provider_name = "ctx-honcho"

    @pytest.fixture
    def provider(self, honcho: HonchoStubServer, tmp_path: Path) -> Iterator[MemoryProvider]:
        yield from remote(HonchoProvider, tmp_path, lambda base_url: {
            "api_key": HONCHO_KEY, "base_url": base_url, "workspace_id": "ws", "max_retries": 0}, honcho.base_url)


class TestFakeMemoryContract(ProviderContract):
    provider_name = "fake-memory"

    @pytest.fixture
    def provider(self, tmp_path: Path) -> Iterator[MemoryProvider]:
        yield from built(FakeMemoryProvider, tmp_path)


class TestFakeLocalContract(ProviderContract):
    provider_name = "fake-local"

    @pytest.fixture
    def provider(self, tmp_path: Path) -> Iterator[MemoryProvider]:
        yield from built(FakeBuiltinMemory, tmp_path)


class TestAcmeNotesContract(ProviderContract):
    """The example third-party plugin, pip-installed and found through its entry point."""

    provider_name = "acme-notes"

    @pytest.fixture
    def provider(self, acme_site: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[MemoryProvider]:
        monkeypatch.syspath_prepend(str(acme_site))
        importlib.invalidate_caches()
        entry = next(r for r in load_host({}).registry if r.name == self.provider_name)
        assert entry.source == "acme-ctx-plugin 1.0.0"
        yield from built(entry.factory, tmp_path)
        sys.modules.pop("acme_ctx_plugin", None)  # test_entry_points watches it being imported


def test_every_registered_provider_runs_the_contract() -> None:
    covered = {cls.provider_name for cls in globals().values()
               if isinstance(cls, type) and issubclass(cls, ProviderContract) and cls is not ProviderContract}
    missing = {r.name for r in PROVIDERS} - covered
    assert not missing, f"add a ProviderContract subclass to this module for: {', '.join(sorted(missing))}"


def test_the_example_runs_the_contract_through_the_pytest_plugin(acme_site: Path, tmp_path: Path) -> None:
    """What the example's author runs: ``pytest`` in the example, with the installed distribution."""
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(tmp_path), "PYTHONPATH": str(acme_site),
           "PYTHONDONTWRITEBYTECODE": "1"}
    result = subprocess.run(
        [sys.executable, "-m", "pytest", str(EXAMPLE / "tests"), "-q", "-p", "no:cacheprovider"],
        cwd=tmp_path, env=env, capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "7 passed" in result.stdout, result.stdout

"""Fakes for testing plugins and hosts, public so third-party plugin authors can reuse them.

* :class:`RecordingPlugin` records every lifecycle hook call;
* :class:`FailingPlugin` raises in the hooks you name;
* :class:`FakeCompressor` / :class:`FakeMemoryProvider` are small but honest implementations of
  the two base classes (the provider keeps deployments and users apart);
* :func:`registered` adds a plugin to a host for the duration of a ``with`` block;
* :class:`StubOpenAIServer` is a loopback OpenAI-compatible server answering from a script;
* :func:`make_transcript` generates deterministic, valid agent transcripts;
* :func:`loopback_only` makes any connection or name lookup outside 127.0.0.0/8 and ::1 fail;
* :class:`Mem0StubServer` / :class:`HonchoStubServer` are stateful loopback Mem0 and Honcho services
  with scriptable faults (:class:`LoopbackService` is their base), :func:`wait_until` polls for
  background work.

Two submodules are imported only on request, because they need pytest:

* :mod:`hermes_ctx_plugins.testing.contract`: :class:`~.contract.ProviderContract`, the test class
  every memory provider must pass (what it stores reaches its owner and nobody else);
* :mod:`hermes_ctx_plugins.testing.pytest_plugin`: fixtures for plugin authors (the loopback
  stubs, an isolated ``$HERMES_HOME``), enabled with ``-p hermes_ctx_plugins.testing.pytest_plugin``.
"""

from __future__ import annotations

from .fakes import (
    FailingPlugin,
    FakeBuiltinMemory,
    FakeCompressor,
    FakeMemoryProvider,
    FakesPlugin,
    RecordingPlugin,
    registered,
)
from .model_stub import RecordedRequest, StubOpenAIServer
from .network import NetworkBlocked, check_address, is_loopback, loopback_only
from .network import _guarded_connect as _guarded_connect
from .network import _guarded_connect_ex as _guarded_connect_ex
from .network import _guarded_getaddrinfo as _guarded_getaddrinfo
from .stubs import HonchoStubServer, LoopbackService, Mem0StubServer, ServiceRequest, wait_until
from .transcripts import make_transcript

__all__ = [
    "FailingPlugin", "FakeBuiltinMemory", "FakeCompressor", "FakeMemoryProvider", "FakesPlugin",
    "HonchoStubServer", "LoopbackService", "Mem0StubServer", "NetworkBlocked", "RecordedRequest",
    "RecordingPlugin", "ServiceRequest", "StubOpenAIServer", "check_address", "is_loopback", "loopback_only",
    "make_transcript", "registered", "wait_until",
]

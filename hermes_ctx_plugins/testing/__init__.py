"""Test doubles for plugins and hosts, public so third-party plugin authors can reuse them.

**Stable API**: the names this package exports (below), the pytest plugin
:mod:`hermes_ctx_plugins.testing.pytest_plugin` (its fixture names) and the contract suite
:mod:`hermes_ctx_plugins.testing.contract`. The other submodules are where those names live, not
API: import from the package.

Fakes:

* :class:`RecordingPlugin` records every lifecycle hook call; :class:`FailingPlugin` raises in the
  hooks you name; :class:`FakesPlugin` registers the fakes below;
* :class:`FakeCompressor` / :class:`FakeMemoryProvider` / :class:`FakeBuiltinMemory` are small but
  honest implementations of the base classes (the provider keeps deployments and users apart);
* :func:`registered` adds a plugin to a host for the duration of a ``with`` block;
* :func:`make_transcript` generates deterministic, valid agent transcripts.

Loopback services (real HTTP on ``127.0.0.1``, the services' real wire formats), all built on one
engine, :class:`LoopbackService`, with one fault API: ``fail(status, message, *, times=1,
path=None, retry_after=None, headers=None)``, ``hang(*, times, path)``, ``delay(seconds, *, times,
path)``, ``garbage(body, *, status, content_type, times, path)``, ``drop(*, before_headers, times,
path)``, ``stop()`` / ``start()``; every request is recorded as a :class:`ServiceRequest`:

* :class:`StubOpenAIServer` is an OpenAI-compatible model answering from a script (``reply``,
  ``tool_call``) or a responder, streaming included;
* :class:`Mem0StubServer` / :class:`HonchoStubServer` are stateful Mem0 and Honcho services;
* subclass :class:`LoopbackService` (override ``handle``, return a :class:`Reply`) for your own service;
* :func:`wait_until` polls for background work (a write queue) instead of sleeping blindly.

Network: :func:`loopback_only` makes any connection or name lookup outside 127.0.0.0/8 and ::1
raise :class:`NetworkBlocked` (:func:`is_loopback` and :func:`check_address` are its tests).

The pytest plugin (it needs pytest, so it is imported only on request) is opt-in::

    pytest -p hermes_ctx_plugins.testing.pytest_plugin

It gives the fixtures ``stub`` (a :class:`StubOpenAIServer` serving ``stub-model``), ``mem0`` and
``honcho`` (the Mem0 and Honcho stubs, accepting their default keys), ``hermes_home`` (an empty
``$HERMES_HOME`` of the test's own) and the provider contract, :class:`~.contract.ProviderContract`:
the test class every memory provider must pass (what it stores reaches its owner and nobody else).
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
from .honcho_stub import HonchoStubServer
from .loopback import LoopbackService, Reply, ServiceRequest, wait_until
from .mem0_stub import Mem0StubServer
from .network import NetworkBlocked, check_address, is_loopback, loopback_only
from .openai_stub import StubOpenAIServer
from .transcripts import agentic_turn, make_transcript

__all__ = [
    "FailingPlugin", "FakeBuiltinMemory", "FakeCompressor", "FakeMemoryProvider", "FakesPlugin",
    "HonchoStubServer", "LoopbackService", "Mem0StubServer", "NetworkBlocked", "RecordingPlugin", "Reply",
    "ServiceRequest", "StubOpenAIServer", "agentic_turn", "check_address", "is_loopback", "loopback_only",
    "make_transcript", "registered", "wait_until",
]

"""Stateful loopback stubs of the memory services our providers talk to, for tests and benchmarks.

* :class:`Mem0StubServer` speaks Mem0's REST routes (``/v1/ping/``, ``/v3/memories/...``);
* :class:`HonchoStubServer` speaks Honcho's ``/v3/workspaces/...`` routes;
* :class:`LoopbackService` is their base: request recording, API keys, and scripted faults
  (``fail``, ``hang``, ``delay``, ``garbage``, ``drop``, ``stop`` / ``start``) for any service.

Point the real SDK at ``stub.base_url``; nothing leaves 127.0.0.1.
"""

from __future__ import annotations

from .base import LoopbackService, Reply, ServiceRequest, relevance, wait_until, words
from .honcho import HonchoStubServer
from .mem0 import Mem0StubServer

__all__ = ["HonchoStubServer", "LoopbackService", "Mem0StubServer", "Reply", "ServiceRequest", "relevance",
           "wait_until", "words"]

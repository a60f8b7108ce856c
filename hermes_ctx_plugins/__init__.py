"""Swappable context-compression strategies and cross-session memory providers for hermes-agent.

Quick start for plugin authors — a distribution that ships a strategy::

    # acme_ctx.py
    import hermes_ctx_plugins
    from hermes_ctx_plugins import CompressionResult, CompressorStrategy, hookimpl

    class KeepLast(CompressorStrategy):
        name = "keep-last"

        def compress(self, messages, *, current_tokens=None, focus_topic=None,
                     force=False, memory_context=""):
            return CompressionResult(messages=messages[-10:], removed=tuple(messages[:-10]))

    @hookimpl
    def register_compressors(register):
        register(KeepLast)

    # pyproject.toml
    [project.entry-points.hermes_ctx_plugins]
    acme = "acme_ctx"

Then ``ctx_plugins: {compressor: keep-last}`` in hermes' ``config.yaml`` selects it. Memory
providers work the same way through ``register_memory_providers`` and :class:`MemoryProvider`;
lifecycle hooks (``session_start``, ``pre_request``, ``post_response``, ``turn_finalized``) are
documented in :mod:`hermes_ctx_plugins.hookspecs`.
"""

from __future__ import annotations

from . import hookspecs
from .compression.base import CompressionResult, CompressorStrategy, Cooldown
from .config import Config, load_config
from .errors import (
    ConfigError,
    DuplicatePluginError,
    HermesCtxError,
    PluginError,
    PluginLoadError,
    ProviderLimitError,
    UnknownPluginError,
)
from .events import ContextContribution, Forgotten, Request, Response, SessionInfo, ToolCall, Turn, Usage
from .hookspecs import hookimpl
from .isolation import StatusEvent
from .manager import Host, LoadedPlugin, PluginRecord, load_host
from .memory.base import MemoryProvider

__all__ = [
    "CompressionResult",
    "CompressorStrategy",
    "Config",
    "ConfigError",
    "ContextContribution",
    "Cooldown",
    "DuplicatePluginError",
    "Forgotten",
    "HermesCtxError",
    "Host",
    "LoadedPlugin",
    "MemoryProvider",
    "PluginError",
    "PluginLoadError",
    "PluginRecord",
    "ProviderLimitError",
    "Request",
    "Response",
    "SessionInfo",
    "StatusEvent",
    "ToolCall",
    "Turn",
    "UnknownPluginError",
    "Usage",
    "hookimpl",
    "hookspecs",
    "load_config",
    "load_host",
]

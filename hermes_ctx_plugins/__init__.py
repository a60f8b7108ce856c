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

Each name below is imported on first use: ``import hermes_ctx_plugins`` loads none of them, so whoever
needs one name (a plugin's ``hookimpl``, say) pays for that name's module only, and importing a submodule
(hermes loading ``hermes_ctx_plugins.hermes.plugin``, ``hermes-ctx`` its CLI) loads nothing here first.
"""

from __future__ import annotations

import importlib

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (type checkers read it the same)
if TYPE_CHECKING:  # what the lazy names are, for type checkers and readers
    from typing import Any

    from . import hookspecs
    from .compression.base import CompressionResult, CompressorStrategy, Cooldown
    from .config import Config, load_config
    from .errors import (
        ConfigError,
        DuplicatePluginError,
        HermesCtxError,
        InvalidSession,
        PluginError,
        PluginLoadError,
        PluginRaisedBaseException,
        PluginTimeout,
        ProviderLimitError,
        UnknownPluginError,
    )
    from .events import (
        ContextContribution,
        Forgotten,
        MessageView,
        Request,
        Response,
        SessionInfo,
        ToolCall,
        Turn,
        Usage,
    )
    from .hookspecs import hookimpl
    from .isolation import StatusEvent
    from .manager import Host, LoadedPlugin, PluginRecord, load_host
    from .memory.base import MemoryProvider

#: each public name -> the module defining it (``hookspecs`` is that module itself)
_HOMES = {
    **dict.fromkeys(("CompressionResult", "CompressorStrategy", "Cooldown"), ".compression.base"),
    **dict.fromkeys(("Config", "load_config"), ".config"),
    **dict.fromkeys(("ConfigError", "DuplicatePluginError", "HermesCtxError", "InvalidSession", "PluginError",
                     "PluginLoadError", "PluginRaisedBaseException", "PluginTimeout", "ProviderLimitError",
                     "UnknownPluginError"),
                    ".errors"),
    **dict.fromkeys(("ContextContribution", "Forgotten", "MessageView", "Request", "Response", "SessionInfo",
                     "ToolCall", "Turn", "Usage"), ".events"),
    **dict.fromkeys(("hookimpl", "hookspecs"), ".hookspecs"),
    "StatusEvent": ".isolation",
    **dict.fromkeys(("Host", "LoadedPlugin", "PluginRecord", "load_host"), ".manager"),
    "MemoryProvider": ".memory.base",
}

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
    "InvalidSession",
    "LoadedPlugin",
    "MemoryProvider",
    "MessageView",
    "PluginError",
    "PluginLoadError",
    "PluginRaisedBaseException",
    "PluginRecord",
    "PluginTimeout",
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


def __getattr__(name: str) -> Any:
    """Import a public name's module on first use and keep the name here (later look-ups are plain)."""
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    module = importlib.import_module(home, __name__)
    value = module if name == "hookspecs" else getattr(module, name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})

"""Registers the built-in memory providers, through the same hook third parties use."""

from __future__ import annotations

from collections.abc import Callable

from ..hookspecs import hookimpl
from .base import MemoryProvider
from .file.provider import FileProvider
from .local import LocalProvider
from .remote.honcho import HonchoProvider
from .remote.mem0 import Mem0Provider

# ctx-mem0 and ctx-honcho import their SDKs only when first used: without the extras they register
# all the same and report "not installed" from is_available() (and `hermes-ctx doctor`).
BUILTIN_PROVIDERS: tuple[type[MemoryProvider], ...] = (FileProvider, Mem0Provider, HonchoProvider, LocalProvider)


@hookimpl
def register_memory_providers(register: Callable[[type[MemoryProvider]], None]) -> None:
    for provider in BUILTIN_PROVIDERS:
        register(provider)

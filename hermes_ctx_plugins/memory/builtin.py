"""Registers the built-in memory providers, through the same hook third parties use."""

from __future__ import annotations

from collections.abc import Callable

from ..hookspecs import hookimpl
from .base import MemoryProvider
from .file import FileProvider

BUILTIN_PROVIDERS: tuple[type[MemoryProvider], ...] = (FileProvider,)


@hookimpl
def register_memory_providers(register: Callable[[type[MemoryProvider]], None]) -> None:
    for provider in BUILTIN_PROVIDERS:
        register(provider)

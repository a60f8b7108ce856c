"""Registers the built-in strategies, through the same hook third parties use."""

from __future__ import annotations

from collections.abc import Callable

from ..hookspecs import hookimpl
from .base import CompressorStrategy
from .pipeline import BUILTIN_STEPS, PipelineStrategy

BUILTIN_STRATEGIES: tuple[type[CompressorStrategy], ...] = (*BUILTIN_STEPS, PipelineStrategy)


@hookimpl
def register_compressors(register: Callable[[type[CompressorStrategy]], None]) -> None:
    for strategy in BUILTIN_STRATEGIES:
        register(strategy)

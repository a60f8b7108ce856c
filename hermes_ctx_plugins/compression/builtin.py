"""Registers the built-in strategies, through the same hook third parties use."""

from __future__ import annotations

from collections.abc import Callable

from ..hookspecs import hookimpl
from .base import CompressorStrategy
from .pipeline import PipelineStrategy
from .prune import PruneStrategy
from .summarize import SummarizeStrategy
from .window import WindowStrategy

BUILTIN_STRATEGIES: tuple[type[CompressorStrategy], ...] = (
    SummarizeStrategy, PruneStrategy, WindowStrategy, PipelineStrategy,
)


@hookimpl
def register_compressors(register: Callable[[type[CompressorStrategy]], None]) -> None:
    for strategy in BUILTIN_STRATEGIES:
        register(strategy)

"""The context engine hermes' plugin registration holds: our engine, built on first use.

hermes 0.19.0 wants an instance of its ``ContextEngine`` at registration, reads its ``name`` when an
agent starts, and gives the agent a deep copy of it (an engine whose copy fails is replaced by hermes'
own compressor for that agent, with a warning naming the error). So the instance hermes holds needs
nothing but its name and our runtime; its copy is a :class:`~hermes_ctx_plugins.hermes.engine.HermesCtxEngine`
deep-copied from one prototype, built with the host the first time an agent asks.
"""

from __future__ import annotations

import copy
import threading
from typing import TYPE_CHECKING, Any

from agent.context_engine import ContextEngine

from . import ENGINE_NAME

if TYPE_CHECKING:
    from .engine import HermesCtxEngine
    from .runtime import Runtime


class DeferredEngine(ContextEngine):
    """Stands for our engine in hermes' plugin registry; every copy hermes makes is the real engine.

    :param runtime: the registration's runtime (its host is built when the first copy is made)
    """

    def __init__(self, runtime: Runtime) -> None:
        self._runtime = runtime
        self._prototype: HermesCtxEngine | None = None
        self._lock = threading.Lock()

    @property
    def name(self) -> str:
        return ENGINE_NAME

    def prototype(self) -> HermesCtxEngine:
        """The engine each agent's copy is made from, built the first time.

        :raises HermesCtxError: the host could not be built (hermes then runs its own compressor)
        """
        with self._lock:
            if self._prototype is None:
                from .engine import HermesCtxEngine

                self._prototype = HermesCtxEngine(self._runtime.host, self._runtime)
            return self._prototype

    def __deepcopy__(self, memo: dict[int, Any]) -> HermesCtxEngine:
        return copy.deepcopy(self.prototype(), memo)

    # hermes calls these on its copies; here for whoever holds the registered instance itself
    def update_from_response(self, usage: dict[str, Any]) -> None:
        self.prototype().update_from_response(usage)

    def should_compress(self, prompt_tokens: int | None = None) -> bool:
        return self.prototype().should_compress(prompt_tokens)

    def compress(self, messages: list[dict[str, Any]], current_tokens: int | None = None,
                 **kwargs: Any) -> list[dict[str, Any]]:
        return self.prototype().compress(messages, current_tokens, **kwargs)

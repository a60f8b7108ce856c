"""Our compressor strategies behind hermes' ``ContextEngine`` interface.

hermes keeps one plugin engine per process and deep-copies it for every agent: the copy shares the
host (plugins, config) and gets its own strategy state (counts, cool-downs, previous summary).
"""

from __future__ import annotations

import copy
import json
import logging
from typing import Any

from agent.context_engine import ContextEngine

from ..archive import tools as archive_tools
from ..compression.base import CompressorStrategy
from ..compression.messages import nothing_new_since_compaction
from ..events import Usage
from ..manager import Host
from ..tokens import get_counter
from . import ENGINE_NAME, bare_schemas

log = logging.getLogger("hermes_ctx_plugins.hermes")


class HermesCtxEngine(ContextEngine):
    """Dispatches hermes' compression calls to the strategy our config selects."""

    def __init__(self, host: Host) -> None:
        self._host = host
        self._strategy: CompressorStrategy | None = host.compressor
        self._overrides: dict[str, Any] = {}
        self._fallback_strategy: CompressorStrategy | None = None
        self.last_completion_tokens = 0
        self.last_total_tokens = 0
        self.awaiting_real_usage_after_compression = False
        #: the session of the agent this copy belongs to (hermes tells each copy at its start)
        self.session_id = ""

    @property
    def name(self) -> str:
        return ENGINE_NAME

    @property
    def strategy(self) -> CompressorStrategy | None:
        return self._strategy

    def __deepcopy__(self, memo: dict[int, Any]) -> HermesCtxEngine:
        clone = object.__new__(type(self))
        memo[id(self)] = clone
        clone.__dict__.update(self.__dict__)
        clone._strategy = copy.deepcopy(self._strategy, memo)
        clone._fallback_strategy = None
        clone._overrides = dict(self._overrides)
        return clone

    # -- the attributes hermes reads and writes ---------------------------------------------
    def _get(self, key: str, default: Any) -> Any:
        if key in self._overrides:
            return self._overrides[key]
        return getattr(self._strategy, key, default) if self._strategy is not None else default

    @property  # type: ignore[override]
    def last_prompt_tokens(self) -> int:
        return int(self._get("last_prompt_tokens", 0) or 0)

    @last_prompt_tokens.setter
    def last_prompt_tokens(self, value: int) -> None:
        if self._strategy is not None:
            self._strategy.last_prompt_tokens = value

    @property  # type: ignore[override]
    def compression_count(self) -> int:
        return int(self._get("compression_count", 0) or 0)

    @compression_count.setter
    def compression_count(self, value: int) -> None:
        if self._strategy is not None:
            self._strategy.compression_count = value

    @property  # type: ignore[override]
    def context_length(self) -> int:
        return int(self._get("context_length", 0) or 0)

    @context_length.setter
    def context_length(self, value: int) -> None:
        if self._strategy is not None:
            self._strategy.context_length = value

    @property  # type: ignore[override]
    def threshold_tokens(self) -> int:
        return int(self._get("threshold_tokens", 0) or 0)

    @threshold_tokens.setter
    def threshold_tokens(self, value: int) -> None:
        self._overrides["threshold_tokens"] = value  # hermes' own autoraise paths write it

    @property  # type: ignore[override]
    def threshold_percent(self) -> float:
        return float(self._get("threshold_percent", 0.5))

    @threshold_percent.setter
    def threshold_percent(self, value: float) -> None:
        self._overrides["threshold_percent"] = value

    @property  # type: ignore[override]
    def protect_first_n(self) -> int:
        return int(self._overrides.get("protect_first_n", self._host.config.compression.protect_first_n))

    @protect_first_n.setter
    def protect_first_n(self, value: int) -> None:
        self._overrides["protect_first_n"] = value

    @property  # type: ignore[override]
    def protect_last_n(self) -> int:
        return int(self._overrides.get("protect_last_n", self._host.config.compression.protect_last_n))

    @protect_last_n.setter
    def protect_last_n(self, value: int) -> None:
        self._overrides["protect_last_n"] = value

    # -- the calls ---------------------------------------------------------------------------
    def _fallback(self) -> CompressorStrategy | None:
        """This copy's default strategy, built the first time the selected one is needed to fail
        over (each agent's copy keeps its own state, like the selected strategy)."""
        if self._fallback_strategy is None and self._strategy is not None:
            fallback = self._host.fallback_strategy()
            if fallback is not None:
                fallback.update_model(self._strategy.model, self._strategy.context_length)
            self._fallback_strategy = fallback
        return self._fallback_strategy

    def _owner(self) -> str:
        return f"compressor:{self._strategy.name if self._strategy else 'none'}"

    def update_model(self, model: str, context_length: int | None, base_url: str = "", api_key: str = "",
                     provider: str = "", api_mode: str = "", **_: Any) -> None:
        if self._strategy is not None:
            self._host.isolator.call(self._owner(), self._strategy.update_model, model, context_length,
                                     base_url=base_url, api_key=api_key, provider=provider, default=None,
                                     resets=False)

    def update_from_response(self, usage: dict[str, Any]) -> None:
        parsed = Usage.from_mapping(usage)
        self.last_completion_tokens = parsed.completion_tokens
        self.last_total_tokens = parsed.total_tokens
        self.awaiting_real_usage_after_compression = False
        if self._strategy is not None:
            self._host.isolator.call(self._owner(), self._strategy.update_from_response, parsed, default=None,
                                     resets=False)

    def should_compress(self, prompt_tokens: int | None = None) -> bool:
        """hermes passes its rough estimate of the next request; the provider's exact
        ``usage.prompt_tokens`` of the last response counts too (hermes sets -1 after a compaction
        until real usage arrives, which this ignores)."""
        if self._strategy is None:
            return False
        tokens = max(prompt_tokens or 0, self.last_prompt_tokens)
        return bool(self._host.isolator.call(self._owner(), self._strategy.should_compress, tokens,
                                             default=False, resets=False))

    def compress(self, messages: list[dict[str, Any]], current_tokens: int | None = None,
                 focus_topic: str | None = None, force: bool = False,
                 memory_context: str = "") -> list[dict[str, Any]]:
        if self._strategy is None or not messages:
            return messages
        result = self._host.run_compression(
            self._strategy, list(messages), session=self._host.session(self.session_id), fallback=self._fallback,
            current_tokens=current_tokens, focus_topic=focus_topic, force=force, memory_context=memory_context)
        if not result.messages:
            return messages
        if result.compressed:
            self.awaiting_real_usage_after_compression = True
            log.info("hermes-ctx %s: %d -> %d messages, %d -> %d tokens", self._strategy.name,
                     len(messages), len(result.messages), result.tokens_before, result.tokens_after)
        return result.messages

    def has_content_to_compress(self, messages: list[dict[str, Any]]) -> bool:
        """For hermes' manual ``/compress``: False when nothing happened since our last compaction."""
        return self._strategy is not None and len(messages) > 2 and not nothing_new_since_compaction(messages)

    def get_active_compression_failure_cooldown(self) -> dict[str, Any] | None:
        """Our summary-failure cool-down, in the shape hermes' preflight checks."""
        guard = getattr(self._strategy, "guard", None)
        if guard is None or not guard.in_cooldown():
            return None
        return {"remaining_seconds": max(0.0, guard.state.cooldown_until - guard.clock())}

    def get_tool_schemas(self) -> list[dict[str, Any]]:
        if self._strategy is None:
            return []
        none: list[dict[str, Any]] = []
        schemas = list(self._host.isolator.call(self._owner(), self._strategy.get_tool_schemas, default=none,
                                                resets=False))
        if self._host.archive is not None:  # ctx_search / ctx_expand: the way back into the archive
            schemas += self._host.archive.tool_schemas()
        return bare_schemas(schemas)

    def handle_tool_call(self, name: str, args: dict[str, Any], **kwargs: Any) -> str:
        error = json.dumps({"error": f"context engine tool {name!r} is unavailable right now"})
        if self._strategy is None:
            return error
        archive = self._host.archive
        if archive is not None and name in archive_tools.NAMES:
            return str(self._host.isolator.call(
                "archive", archive.handle_tool_call, name, args, session=self._host.session(self.session_id),
                counter=get_counter(self._strategy.model), default=error))
        return str(self._host.isolator.call(self._owner(), self._strategy.handle_tool_call, name, args,
                                            default=error, resets=False))

    def on_session_start(self, session_id: str, **kwargs: Any) -> None:
        self.session_id = session_id or ""

    def on_session_reset(self) -> None:
        super().on_session_reset()
        guard = getattr(self._strategy, "guard", None)
        if guard is not None:
            guard.clear()

    def get_status(self) -> dict[str, Any]:
        status: dict[str, Any] = dict(super().get_status())
        status["strategy"] = self._strategy.name if self._strategy else None
        status["plugin_status"] = self._host.isolator.status(self._owner())
        status["last_summary_error"] = getattr(self._strategy, "last_error", "")
        return status

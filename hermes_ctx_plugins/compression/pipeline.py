"""``pipeline``: run strategies in order (e.g. ``prune`` then ``summarize``) until the budget is met."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar

from ..errors import ConfigError, UnknownPluginError
from ..events import Message
from ..tokens import get_counter
from .base import CompressionResult, CompressorStrategy, rewritten


@dataclass(frozen=True)
class PipelineOptions:
    """``ctx_plugins.options.pipeline``."""

    steps: tuple[str, ...] = ("prune", "summarize")
    #: stop as soon as the conversation is under this share of the trigger threshold
    budget_ratio: float = 0.5


class PipelineStrategy(CompressorStrategy):
    """An ordered chain of other strategies, stopping as soon as the budget is met."""

    name = "pipeline"
    description = "run several strategies in order until the budget is met"
    options_class = PipelineOptions
    shared_on_copy: ClassVar[tuple[str, ...]] = (*CompressorStrategy.shared_on_copy, "resolve_strategy")

    def __init__(self, options: Any = None, *,
                 resolve_strategy: Callable[[str], CompressorStrategy] | None = None, **kwargs: Any) -> None:
        super().__init__(options, **kwargs)
        if not self.options.steps:
            raise ConfigError("a pipeline needs at least one step", path="ctx_plugins.options.pipeline.steps",
                              value=[], expected="a list of strategy names, e.g. [prune, summarize]")
        if self.name in self.options.steps:
            raise ConfigError("a pipeline cannot contain itself", path="ctx_plugins.options.pipeline.steps",
                              value=list(self.options.steps), expected="other strategies' names")
        #: builds a step by name; the host passes one that knows every registered strategy
        self.resolve_strategy = resolve_strategy
        self._steps: list[CompressorStrategy] | None = None

    @property
    def steps(self) -> list[CompressorStrategy]:
        if self._steps is None:
            resolve = self.resolve_strategy or self._builtin
            self._steps = [resolve(name) for name in self.options.steps]
        return self._steps

    def _builtin(self, name: str) -> CompressorStrategy:
        from .builtin import BUILTIN_STRATEGIES

        choices = {s.name: s for s in BUILTIN_STRATEGIES if s is not PipelineStrategy}
        factory = choices.get(name)
        if factory is None:
            raise UnknownPluginError(name, "compressor", choices, where="ctx_plugins.options.pipeline.steps")
        # the step reads its own options (ctx_plugins.options.<step>), as it does when the host builds it
        return factory(self.config.options_for(name), settings=self.settings, model=self.model,
                       context_length=self.context_length, max_tokens=self.max_tokens,
                       status_callback=self.status_callback, config=self.config)

    def update_model(self, model: str, context_length: int | None, **kwargs: Any) -> None:
        super().update_model(model, context_length, **kwargs)
        for step in self._steps or ():
            step.update_model(model, context_length, **kwargs)

    def close(self) -> None:
        for step in self._steps or ():
            step.close()

    def update_from_response(self, usage: Any) -> None:
        super().update_from_response(usage)
        for step in self._steps or ():
            step.update_from_response(usage)

    def compress(
        self,
        messages: list[Message],
        *,
        current_tokens: int | None = None,
        focus_topic: str | None = None,
        force: bool = False,
        memory_context: str = "",
    ) -> CompressionResult:
        counter = get_counter(self.model)
        tokens_before = counter.count_messages(messages)
        budget = self.leave_room(int((self.threshold_tokens or tokens_before) * self.options.budget_ratio))
        current: list[Message] = messages
        summary, used_fallback, notes = None, False, []
        for number, step in enumerate(self.steps):
            if number and counter.count_messages(current) <= budget:
                break  # the first step always runs (a forced /compress asks for something)
            step.reserved_tokens = self.reserved_tokens  # the host's index comes once, after the last step
            result = step.compress(current, focus_topic=focus_topic, force=force, memory_context=memory_context)
            if not result.compressed:
                continue
            current = result.messages
            summary = result.summary or summary
            used_fallback = used_fallback or result.used_fallback
            notes += [f"{step.name}: {n}" for n in result.notes]
        # Built-in steps fit their own results; another plugin's step may not.
        current, cut = self.fit_oversized(current, counter)
        if cut:
            notes.append(f"cut {cut} oversized messages to fit the context window")
        if current is messages:
            return CompressionResult.unchanged(messages, tokens_before, note="no step changed anything")
        result = self.checked(messages, CompressionResult(
            messages=current, tokens_before=tokens_before, tokens_after=counter.count_messages(current),
            # every original a step dropped or rewrote (a message a step made and a later step
            # changed again is not an original: its original is already here)
            removed=rewritten(messages, current), summary=summary, used_fallback=used_fallback,
            new_session=not self.settings.in_place, notes=tuple(notes),
        ), counter)
        if result.compressed:
            self.compression_count += 1
        return result

"""``pipeline``: run strategies in order (e.g. ``prune`` then ``summarize``) until the budget is met.

A forced compaction (a manual ``/compress``) runs every step, each forced: the user asked for the
whole compaction, not for just enough of it, and a second ``/compress`` then finds nothing new. A
step that aborts (its summary failed in a way that must leave the conversation alone) aborts the
pipeline: the conversation stays as it was, what earlier steps did included, as hermes expects of
an aborted compaction.

The pipeline pauses automatic compaction while any step does (a summary-failure cool-down, a
block), reports the longest cool-down of its steps to the host, and hands its settings (with the
trigger ceilings the host sets on it) to its steps.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar

from ..config import CompressionSettings
from ..errors import ConfigError, UnknownPluginError
from ..events import Message
from ..options import option
from ..tokens import get_counter
from .base import ESTIMATED_NOTE, CompressionResult, CompressorStrategy, Cooldown, reports_removals, size_before
from .prune import PruneStrategy
from .summarize import SummarizeStrategy
from .window import WindowStrategy

#: the steps a pipeline builds itself when no host resolves them (in order of registration)
BUILTIN_STEPS: tuple[type[CompressorStrategy], ...] = (SummarizeStrategy, PruneStrategy, WindowStrategy)


@dataclass(frozen=True)
class PipelineOptions:
    """``ctx_plugins.options.pipeline``."""

    steps: tuple[str, ...] = ("prune", "summarize")
    #: stop as soon as the conversation is under this share of the trigger threshold
    budget_ratio: float = option(0.5, gt=0, le=1)


class PipelineStrategy(CompressorStrategy):
    """An ordered chain of other strategies, stopping as soon as the budget is met."""

    name = "pipeline"
    description = "run several strategies in order until the budget is met"
    options_class = PipelineOptions
    shared_on_copy: ClassVar[tuple[str, ...]] = (*CompressorStrategy.shared_on_copy, "resolve_strategy")

    def __init__(self, options: Any = None, *,
                 resolve_strategy: Callable[[str], CompressorStrategy] | None = None, **kwargs: Any) -> None:
        self._steps: list[CompressorStrategy] | None = None
        super().__init__(options, **kwargs)
        if not self.options.steps:
            raise ConfigError("a pipeline needs at least one step", path="ctx_plugins.options.pipeline.steps",
                              value=[], expected="a list of strategy names, e.g. [prune, summarize]")
        if self.name in self.options.steps:
            raise ConfigError("a pipeline cannot contain itself", path="ctx_plugins.options.pipeline.steps",
                              value=list(self.options.steps), expected="other strategies' names")
        #: builds a step by name; the host passes one that knows every registered strategy (:meth:`attach`)
        self.resolve_strategy = resolve_strategy

    def attach(self, *, resolve_strategy: Callable[[str], CompressorStrategy]) -> None:
        """Build the steps with the host's ``resolve_strategy``: any registered strategy can be a step."""
        self.resolve_strategy = resolve_strategy

    @property
    def reports_removals(self) -> bool:
        """Whether every step does: the pipeline hands its input to them as it is."""
        return all(reports_removals(step) for step in self.steps)

    @property
    def steps(self) -> list[CompressorStrategy]:
        if self._steps is None:
            resolve = self.resolve_strategy or self._builtin
            steps = [resolve(name) for name in self.options.steps]
            for step in steps:
                step.settings = self.settings
            self._steps = steps
        return self._steps

    @property
    def settings(self) -> CompressionSettings:
        return self._settings

    @settings.setter
    def settings(self, value: CompressionSettings) -> None:
        """The steps act within the pipeline's settings, the trigger ceilings the host sets included."""
        self._settings = value
        for step in self._steps or ():
            step.settings = value

    def _builtin(self, name: str) -> CompressorStrategy:
        choices = {s.name: s for s in BUILTIN_STEPS}
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

    def compaction_cleared(self, cleared: bool, prompt_tokens: int) -> None:
        for step in self._steps or ():  # a summarising step's guard pauses the pipeline (see pause_reason)
            step.compaction_cleared(cleared, prompt_tokens)

    def reset_session(self) -> None:
        super().reset_session()
        for step in self._steps or ():
            step.reset_session()

    def failure_cooldown(self) -> Cooldown | None:
        """The longest of the steps' cool-downs (steps not built yet have not failed)."""
        cooldowns = [c for c in (step.failure_cooldown() for step in self._steps or ()) if c is not None]
        return max(cooldowns, key=lambda c: c.remaining_seconds, default=None)

    def pause_yields(self) -> bool:
        paused = [step for step in self._steps or () if step.pause_reason() is not None]
        return bool(paused) and all(step.pause_yields() for step in paused)

    def pause_reason(self) -> str | None:
        for step in self._steps or ():
            reason = step.pause_reason()
            if reason is not None:
                return f"{step.name}: {reason}"
        return None

    def nothing_to_compress(self, messages: list[Message]) -> str | None:
        """A reason only when no step could change ``messages`` (a later step sees what an earlier one
        changed, so one that can is enough to try)."""
        reasons = []
        for step in self.steps:
            reason = step.nothing_to_compress(messages)
            if reason is None:
                return None
            reasons.append(f"{step.name}: {reason}")
        return "; ".join(reasons)

    @staticmethod
    def _unleft(left: tuple[PruneStrategy, list[Message], tuple[int, str] | None, range],
                notes: list[str]) -> tuple[list[Message], int, list[str]]:
        """The prune step's result made again without leaving anything to the next step (which did not
        compact): what it would have made alone, its notes in place of the first run's."""
        step, given, size, at = left
        result = step.compact(given, force=True, exact=False, size=size)
        step.estimated, step.deferred = None, range(0)
        return result.messages, result.tokens_after, [
            *notes[:at.start], *(f"{step.name}: {n}" for n in result.notes), *notes[at.stop:]]

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
        tokens_before, estimated = size_before(counter, messages)
        tokens = tokens_before
        budget = self.leave_room(self.within_floor(
            int((self.threshold_tokens or tokens_before) * self.options.budget_ratio)))
        current: list[Message] = messages
        summary, used_fallback, summary_error, summarized = None, False, "", 0
        aborted_by = ""  # a step whose summary failed so that it left its input alone
        summary_message: Message | None = None  # the latest step's summary or marker
        notes: list[str] = []
        unchanged: list[str] = []  # what the steps that changed nothing said
        # (the messages, and estimate_messages of them) when the step before made it, nothing counted since
        estimate: tuple[list[Message], int, int] | None = None
        # (the prune step, its input, its size_before, where its notes start) when it left tool results to
        # the summarize step after it (see PruneStrategy.compact's ``ahead``)
        left: tuple[PruneStrategy, list[Message], tuple[int, str] | None, range] | None = None
        for number, step in enumerate(self.steps):
            # the first step always runs, the others while over budget, or all of them when forced
            if number and not force and tokens <= budget:
                break
            handed, estimate = estimate, None  # for this step alone
            step.reserved_tokens = self.reserved_tokens  # the host's index comes once, after the last step
            step.floor_tokens = self.floor_tokens
            if type(step) is PruneStrategy:  # a built-in step after it cuts what is still too big
                step.leaves_cutting = any(type(later) in (SummarizeStrategy, WindowStrategy)
                                          for later in self.steps[number + 1:])
            if force and number + 1 < len(self.steps) and type(step) is PruneStrategy:
                # every later step runs on what it returns (forced), the last result is counted and
                # checked below: the built-in prune step need not count its own; a built-in summarize
                # step right after it summarises the tool results its request will not show away unread
                after = self.steps[number + 1]
                ahead = after.ahead(current, tokens) if type(after) is SummarizeStrategy else None
                result = step.compact(current, force=True, exact=False, ahead=ahead,
                                      size=(tokens_before, estimated) if number == 0 else None)
                step.compression_count += int(result.compressed)
                made, step.estimated = step.estimated, None
                estimate = made if made is not None and made[0] is result.messages else None
                if step.deferred:  # (its result may be "unchanged": it left every result it would have pruned)
                    left = (step, current, (tokens_before, estimated) if number == 0 else None,
                            range(len(notes), len(notes) + (len(result.notes) if result.compressed else 0)))
            elif type(step) is SummarizeStrategy and handed is not None and handed[0] is current:
                # its first act is estimating the messages the step before has just estimated
                result = step.compress(current, focus_topic=focus_topic, force=force, memory_context=memory_context,
                                       estimate=(handed[1], handed[2]))
            else:
                result = step.compress(current, focus_topic=focus_topic, force=force, memory_context=memory_context)
            if number == 0 and result.tokens_before != tokens_before:  # the first step counted exactly
                tokens_before, estimated = result.tokens_before, ""
            step_notes = [f"{step.name}: {n}" for n in result.notes]
            if left is not None and left[0] is not step:
                if not result.compressed and not (result.aborted and self.settings.abort_on_summary_failure):
                    # the step that was to summarise away what the prune step left did not: prune it all now
                    current, tokens, notes = self._unleft(left, notes)
                left = None
            if result.aborted:
                if self.settings.abort_on_summary_failure:  # the operator wants no compaction without a summary
                    return CompressionResult.unchanged(messages, tokens_before, aborted_by=result.summary_error,
                                                       note="; ".join(step_notes))
                # the failed step is skipped: what the other steps do stands in for it (a fallback)
                aborted_by = result.summary_error
                unchanged += step_notes
                notes.append(f"{step.name}: skipped, its summary failed ({result.summary_error})")
                continue
            if not result.compressed:
                unchanged += step_notes
                continue
            current, tokens = result.messages, result.tokens_after
            if result.summary_at is not None and reports_removals(step):
                summary_message = current[result.summary_at]
            summary = result.summary or summary
            used_fallback = used_fallback or result.used_fallback
            summary_error = result.summary_error or summary_error
            summarized += result.summarized
            notes += step_notes
        # Built-in steps fit their own results; another plugin's step may not. A changed result is counted
        # whatever is cut: counted first (the last step has counted it), it spares the cutting a pass.
        total = counter.count_messages(current) if current is not messages else None
        fitted, cut = self.fit_oversized(current, counter, total=total)
        total, current = (total if fitted is current else None), fitted
        if cut:
            notes.append(f"cut {cut} oversized messages to fit the context window")
        if current is messages:
            return CompressionResult.unchanged(messages, tokens_before, aborted_by=aborted_by,
                                               note="; ".join(unchanged) or "no step changed anything")
        if estimated and not any(ESTIMATED_NOTE.search(note) for note in notes):  # said once, on the first note
            notes = [notes[0] + estimated, *notes[1:]] if notes else [estimated.removeprefix("; ")]
        result = self.checked(messages, CompressionResult.replacing(
            # every original a step dropped or rewrote (a message a step made and a later step
            # changed again is not an original: its original is already here)
            messages, current, summary_message=summary_message, tokens_before=tokens_before,
            tokens_after=counter.count_messages(current) if total is None else total, summary=summary,
            used_fallback=used_fallback or bool(aborted_by), summary_error=summary_error or aborted_by,
            summarized=summarized, new_session=not self.settings.in_place, notes=tuple(notes),
        ), counter, counted=True)
        if result.compressed:
            self.compression_count += 1
        return result

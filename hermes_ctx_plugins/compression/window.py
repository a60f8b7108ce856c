"""``window``: drop the oldest middle turns to fit the budget, with no LLM call.

What is dropped is replaced by one short marker (how much, which tools, which files), placed
with a role that keeps the conversation valid for strict backends. What is kept and still too big
(a huge first message in the head, a huge latest turn) is cut as :mod:`.oversize` describes.
A forced compaction whose budget keeps everything drops all but the head and the turn in progress
(:func:`.selection.place`).
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from ..events import Message
from ..options import option
from ..tokens import TokenCounter, get_counter
from . import floor
from .base import NOTHING_NEW, CompressionResult, ModelFreeStrategy, size_before
from .fallback import _PATH, opening
from .messages import (
    SUMMARY_KEY,
    is_bridge,
    is_real_user,
    is_summary,
    last_real_user_index,
    nothing_new_since_compaction,
    role,
    sanitize_tool_pairs,
    text_of,
)
from .selection import Split, costlier_than, head_end, nothing_between, place, tail_start, turn_tail_start

#: Marks a window marker, and how many messages all window compactions so far have dropped.
DROPPED_KEY = "_window_dropped"
#: Room left for the marker itself when fitting the budget.
_MARKER_TOKENS = 150


@dataclass(frozen=True)
class WindowOptions:
    """``ctx_plugins.options.window``."""

    #: keep the conversation under this share of the trigger threshold (0.25: about what hermes' own
    #: compressor leaves, its 0.20 tail and a summary; a higher share keeps more and compacts sooner again)
    budget_ratio: float = option(0.25, gt=0, le=1)


class WindowStrategy(ModelFreeStrategy):
    """Keeps the head and as many recent messages as fit; drops the rest behind a marker."""

    name = "window"
    description = "drop the oldest turns to fit the budget, no LLM call"
    options_class = WindowOptions

    @property
    def reports_removals(self) -> bool:
        return True

    @property
    def counter(self) -> TokenCounter:
        return get_counter(self.model)

    def compact(self, messages: list[Message], *, force: bool) -> CompressionResult:
        counter = self.counter
        tokens_before, estimated = size_before(counter, messages)
        if nothing_new_since_compaction(messages):
            return CompressionResult.unchanged(messages, tokens_before, note=NOTHING_NEW)
        unsqueezed = int((self.threshold_tokens or tokens_before) * self.options.budget_ratio)
        budget = self.leave_room(self.within_floor(unsqueezed))
        # protect_first_n decays once a drop happened (a pass that only cut oversized messages does
        # not count: decaying after it would re-cut an unchanged history)
        earlier = any(m.get(DROPPED_KEY) or is_summary(m) for m in messages)  # after a resume: by its shape
        first_n = 0 if earlier else self.settings.protect_first_n
        if first_n and not floor.holds_head(messages[:head_end(messages, first_n)], unsqueezed,
                                            threshold=self.threshold_tokens, floor=self.floor_tokens, counter=counter):
            first_n = 0  # the prompt's floor leaves no room for it (see floor.holds_head)
        head = head_end(messages, first_n)
        head_tokens = counter.count_messages(messages[:head])
        tail_budget = max(1, budget - head_tokens - _MARKER_TOKENS)
        # a turn in progress over the trigger keeps its user message and its latest rounds
        inner = turn_tail_start(messages, head=head, counter=counter, limit=self.threshold_tokens,
                                budget_tokens=tail_budget, min_messages=1)
        latest = last_real_user_index(messages)
        usual = (Split(head, inner, task=latest if latest >= head else None) if inner is not None else
                 Split(head, tail_start(messages, head=head, counter=counter, budget_tokens=tail_budget,
                                        min_messages=1, min_user_messages=self.settings.min_tail_user_messages)))
        has_user = any(is_real_user(m) for m in messages)
        # what the kept part cannot take (half its budget or more) is dropped, not kept to be cut
        parts = place(messages, usual, has_user=has_user, force=force, worth=_worth_dropping,
                      too_big=costlier_than(tail_budget // 2, counter))
        if parts is None:
            # Nothing (new) to drop: cutting what is oversized is all there is to do.
            return self._finish(messages, messages, tokens_before, None, nothing=nothing_between(head, forced=force))
        dropped = parts.compacted(messages)
        total = len([m for m in dropped if not m.get(DROPPED_KEY) and not is_bridge(m)]) + sum(
            int(m.get(DROPPED_KEY) or 0) for m in dropped)
        compacted, marker = parts.with_summary(messages, {
            "content": _describe(dropped, total), SUMMARY_KEY: True, DROPPED_KEY: total}, has_user=has_user)
        compacted = sanitize_tool_pairs(compacted)
        result = self._finish(messages, compacted, tokens_before, marker,
                              notes=(f"dropped {len(dropped)} messages{estimated}",))
        return dataclasses.replace(result, summarized=len(dropped)) if result.compressed else result

    def _finish(self, messages: list[Message], compacted: list[Message], tokens_before: int,
                marker: Message | None, *, notes: tuple[str, ...] = (),
                nothing: str = "nothing to drop") -> CompressionResult:
        """The result of replacing ``messages`` with ``compacted`` (``marker``: the one standing for what
        was dropped), oversized messages cut; "unchanged" when that changes nothing (saying ``nothing``)
        or would not shrink the prompt."""
        compacted, cut = self.fit_oversized(compacted, self.counter)
        if compacted is messages:
            return CompressionResult.unchanged(messages, tokens_before, note=nothing)
        if cut:
            notes = (*notes, f"cut {cut} oversized messages to fit the context window")
        return self.checked(messages, CompressionResult.replacing(
            messages, compacted, summary_message=marker, tokens_before=tokens_before,
            tokens_after=self.counter.count_messages(compacted),
            summary=None if marker is None else str(marker["content"]), new_session=not self.settings.in_place,
            notes=notes,
        ), self.counter, counted=True)


def _worth_dropping(middle: Sequence[Message]) -> bool:
    """Whether a middle holds more than earlier markers and their bridges (dropping only those would
    change nothing)."""
    return not all(m.get(DROPPED_KEY) or is_bridge(m) for m in middle)


_FILES_SHOWN = 8


def _describe(dropped: list[Message], total: int) -> str:
    """One short marker: how much went, which tools ran, which files came up (the first few, found in
    the opening of each message: its cost must not grow with megabytes of dropped tool output)."""
    tools: Counter[str] = Counter(
        str((call.get("function") or {}).get("name") or "?")
        for m in dropped for call in m.get("tool_calls") or () if isinstance(call, dict))
    users = sum(1 for m in dropped if role(m) == "user" and not m.get(DROPPED_KEY))
    parts = [f"[window: {total} earlier messages were dropped to fit the context window"
             f" ({users} user turns in this cut)"]
    if tools:
        parts.append("tools used: " + ", ".join(f"{n} x{c}" for n, c in tools.most_common(6)))
    files = _files(dropped)
    if files:
        parts.append("files mentioned: " + ", ".join(files))
    return "; ".join(parts) + ". Ask the user if you need something from them.]"


def _files(dropped: list[Message]) -> list[str]:
    found: dict[str, None] = {}
    for message in dropped:
        texts = [opening(text_of(message.get("content")))]
        texts += [opening(str((call.get("function") or {}).get("arguments") or ""))
                  for call in message.get("tool_calls") or () if isinstance(call, dict)]
        for text in texts:
            for match in _PATH.finditer(text):
                found.setdefault(match.group())
                if len(found) == _FILES_SHOWN:
                    return list(found)
    return list(found)

"""Stage 1 of the compression pipeline: shrink old tool traffic without calling a model.

Tool results are most of a long agent conversation and lose value fastest: once the model has acted
on a 40 kB file read, a line saying what was read is enough.  :func:`prune_tool_results` runs four
passes over the messages (the system prompt excluded, as hermes passes them):

1. identical tool outputs anywhere in the list: every older copy becomes :data:`DUPLICATE_PLACEHOLDER`
   (the whole list, tail included, like hermes: the newest copy always survives in full);
2. tool results before the protected tail become a one-line :func:`summarize_tool_result`, and
   image parts there become :data:`IMAGE_PLACEHOLDER`;
3. tool-call arguments before the tail are shrunk by :func:`truncate_tool_arguments`;
4. if the tail is still over 1.5 x its token budget, its bulkiest tool results are demoted the same
   way, largest first, except those of the turn in progress, which the model is still using.

A message is rewritten only when the new version costs fewer tokens, so pruning never grows a
prompt, and content that is already a placeholder or a summary is left alone, so pruning twice
changes nothing the second time.  Inputs are never mutated: a changed message is a new dict, an
unchanged one is the same object (the token counter memoises by identity). Over 500 lines because
the four passes share one walk of the messages and one report; the strategy is the last few dozen.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..events import Message
from ..options import option
from ..tokens import REPLY_PRIMING, TokenCounter, get_counter
from . import floor
from .base import CompressionResult, ModelFreeStrategy, size_before
from .messages import last_real_user_index, truncate_tool_arguments
from .selection import turn_over, walk_back
from .tool_summary import SUMMARY_MAX_CHARS, as_text, label, redacting_once, summarize_tool_result

DUPLICATE_PLACEHOLDER = "[Duplicate tool output — same content as a more recent call]"
IMAGE_PLACEHOLDER = "[image removed to save context]"
#: pass 4 starts (and stops) when the protected tail exceeds its budget by this factor
TAIL_DEMOTE_FACTOR = 1.5
_IMAGE_PART_TYPES = frozenset({"image_url", "input_image", "image"})


@dataclass(frozen=True)
class PruneReport:
    """What :func:`prune_tool_results` did.

    ``replaced`` holds the indices of rewritten messages, so a caller can archive the originals
    (``messages`` has the same length and order as the input).  ``summarized`` counts pass-2
    rewrites, image removal included; ``arguments_truncated`` counts tool calls, not messages.
    """

    messages: list[Message]
    deduplicated: int
    summarized: int
    arguments_truncated: int
    demoted: int
    tokens_before: int
    #: ``None`` when part of the list was weighed by characters (see ``exact_head``)
    tokens_after: int | None
    replaced: tuple[int, ...] = ()
    #: tool results left as they were because the caller's :class:`Deferral` put them out of sight
    deferred: range = range(0)

    def exact_tokens_after(self, counter: TokenCounter) -> int:
        return self.tokens_after if self.tokens_after is not None else counter.count_messages(self.messages)

    @property
    def changed(self) -> bool:
        return bool(self.deduplicated or self.summarized or self.arguments_truncated or self.demoted)


@dataclass(frozen=True)
class Deferral:
    """For a middle about to be summarised away whose text the summary model reads only in part (its
    first ``head_chars`` and last ``tail_chars`` characters, as :func:`.prompt.serialize` caps it):
    the tool results it will never read are not summarised at all.

    Pass 2 summarises the weighed-by-characters range (``exact_head`` up to the protected tail) from
    both ends inward: from its start until the texts of the messages summarised reach ``head_chars``,
    from its end back until, with the protected tail, they hold ``tail_tokens`` tokens (a tail of that
    budget, measured on the result, ends there at the earliest), then on until the texts summarised
    before that reach ``tail_chars``. What lies between is left as it is and reported in
    :attr:`PruneReport.deferred`; the caller checks that its tail and the serialiser's windows stay
    clear of it (:func:`deferral_holds`) and prunes again without a deferral when they do not. A
    message's text is a lower bound of its serialised block (:func:`.prompt.serialize` clips a body
    to no less than :data:`BODY_FLOOR` characters), so the windows are covered for sure.
    """

    head_chars: int
    tail_chars: int
    tail_tokens: int


#: what :func:`.prompt.serialize` keeps of any message body, at the least (its head plus its tail)
BODY_FLOOR = 5_000


#: what :func:`.prompt.serialize` keeps of a tool call's arguments, at the least
ARGUMENTS_FLOOR = 1_500


def _body_chars(message: Message) -> int:
    """A lower bound of the characters ``message`` adds to the serialised middle: its text content
    and its tool calls' arguments, as far as the serialiser keeps them."""
    content = message.get("content")
    chars = min(len(content), BODY_FLOOR) if isinstance(content, str) else 0
    for call in message.get("tool_calls") or ():
        function = call.get("function") if isinstance(call, Mapping) else None
        arguments = function.get("arguments") if isinstance(function, Mapping) else None
        chars += min(len(arguments), ARGUMENTS_FLOOR) if isinstance(arguments, str) else 0
    return chars


def deferral_holds(messages: Sequence[Message], deferred: range, *, head_end: int, tail_start: int,
                   deferral: Deferral) -> bool:
    """Whether ``deferred`` lies inside the middle ``[head_end, tail_start)`` of the pruned ``messages``,
    at least ``deferral.head_chars`` characters of text after its start and ``deferral.tail_chars``
    before its end (so the serialiser's kept windows hold none of it)."""
    if not deferred:
        return True
    if deferred.start < head_end or deferred.stop > tail_start:
        return False
    before = sum(_body_chars(messages[i]) for i in range(head_end, deferred.start))
    after = sum(_body_chars(messages[i]) for i in range(deferred.stop, tail_start))
    return before >= deferral.head_chars and after >= deferral.tail_chars


# -- the protected tail ---------------------------------------------------------------------------


def tail_start(
    messages: Sequence[Message], *, counter: TokenCounter, budget_tokens: int, min_messages: int
) -> int:
    """Index where the protected tail of ``messages`` begins.

    Walks back from the end adding exact token counts while they fit in ``budget_tokens``, taking at
    least ``min_messages`` messages whatever their size (hermes' ``_prune_old_tool_results``
    boundary: the budget decides, the count is a floor).  The start then moves back over tool
    results to their assistant message, so a tool call and its results are never split.
    """
    start = walk_back(messages, stop=0, counter=counter, budget_tokens=budget_tokens, floor=min_messages)
    while 0 < start < len(messages) and messages[start].get("role") == "tool":
        start -= 1
    return start


def over(messages: Sequence[Message], ceiling: float, counter: TokenCounter) -> bool:
    """Whether ``messages`` cost more than ``ceiling`` tokens, exactly; settled by lower bounds
    (:meth:`TokenCounter.at_least`) when they suffice, so a bulky result about to be demoted is not
    tokenised first. Only when the bounds leave it open are the messages counted: then they stay."""
    bound = 0
    for message in messages:
        bound += counter.at_least(message, enough=int(ceiling) - bound + 1)
        if bound > ceiling:
            return True
    return counter.count_messages(messages) - REPLY_PRIMING > ceiling


def _active_turn_start(messages: Sequence[Message]) -> int:
    """Where the turn in progress begins: after the last user message, and no later than the last
    assistant message with tool calls (its results are what the model works from right now)."""
    last_user = last_calls = len(messages)
    for index in range(len(messages) - 1, -1, -1):
        role = messages[index].get("role")
        if role == "user" and last_user == len(messages):
            last_user = index
        elif role == "assistant" and messages[index].get("tool_calls") and last_calls == len(messages):
            last_calls = index
    return min(last_user + 1, last_calls)


# -- the four passes ------------------------------------------------------------------------------


def _size(message: Message) -> int:
    """Characters a message carries in its content and tool-call arguments."""
    content = message.get("content")
    size = len(content) if isinstance(content, str) else len(json.dumps(content, ensure_ascii=False))
    for call in message.get("tool_calls") or ():
        if isinstance(call, dict):
            size += len(str((call.get("function") or {}).get("arguments") or ""))
    return size


def _is_pruned(content: str, tool_name: str) -> bool:
    """Content this module produced: the duplicate placeholder or a summary of this tool."""
    return content == DUPLICATE_PLACEHOLDER or (
        len(content) <= SUMMARY_MAX_CHARS and "\n" not in content and content.startswith(label(tool_name))
    )


def _without_images(parts: list[Any]) -> list[Any] | None:
    """``parts`` with image parts replaced by :data:`IMAGE_PLACEHOLDER`; None if it had none."""
    if not any(isinstance(p, Mapping) and p.get("type") in _IMAGE_PART_TYPES for p in parts):
        return None
    return [
        {"type": "text", "text": IMAGE_PLACEHOLDER}
        if isinstance(part, Mapping) and part.get("type") in _IMAGE_PART_TYPES
        else part
        for part in parts
    ]


def _pruned_content(content: Any, call: tuple[str, Any], min_chars: int) -> Any:
    """What an old tool result's content becomes, or None to leave it: images become a placeholder
    (text parts and hermes' ``{"_multimodal": True, ...}`` envelope are kept); text longer than
    ``min_chars`` becomes a summary of the call."""
    if isinstance(content, list):
        return _without_images(content)
    if isinstance(content, dict) and content.get("_multimodal") and isinstance(content.get("content"), list):
        parts = _without_images(content["content"])
        return None if parts is None else {**content, "content": parts}
    name, args = call
    if isinstance(content, str) and len(content) > min_chars and not _is_pruned(content, name):
        return summarize_tool_result(name, args, content)
    return None


def _calls_of_results(messages: Sequence[Message]) -> dict[int, tuple[str, Any]]:
    """Index of each tool result -> (tool name, arguments) of the call it answers.

    The call is the latest one with that id before the result (some backends reuse ids such as
    ``call_0`` every turn); a result with no call falls back to its own ``name``.
    """
    latest: dict[str, tuple[str, Any]] = {}
    found: dict[int, tuple[str, Any]] = {}
    for index, message in enumerate(messages):
        role = message.get("role")
        if role == "assistant" and isinstance(message.get("tool_calls"), list):
            for call in message["tool_calls"]:
                function = call.get("function") if isinstance(call, Mapping) else None
                if isinstance(function, Mapping) and isinstance(call.get("id"), str):
                    latest[call["id"]] = (as_text(function.get("name") or "unknown"), function.get("arguments"))
        elif role == "tool":
            call_id = message.get("tool_call_id")
            own_name = as_text(message.get("name") or message.get("tool_name") or "unknown")
            found[index] = latest.get(call_id, (own_name, "")) if isinstance(call_id, str) else (own_name, "")
    return found


class _Texts:
    """A set of strings that hashes a string only when one of the same length is in it: tool results
    are tens of kilobytes and rarely share a length, and a ``set`` would read each once more to hash it."""

    def __init__(self) -> None:
        self._by_length: dict[int, str | set[str]] = {}

    def add(self, text: str) -> bool:
        """Add ``text``; whether an equal text was in already."""
        held = self._by_length.get(len(text))
        if held is None:
            self._by_length[len(text)] = text
            return False
        if isinstance(held, str):
            if held == text:
                return True
            self._by_length[len(text)] = {held, text}
            return False
        found = text in held
        held.add(text)
        return found


def _truncated_calls(calls: list[Any], max_chars: int) -> tuple[list[Any], int]:
    """``calls`` with over-long arguments truncated, and how many were."""
    result, changed = [], 0
    for call in calls:
        function = call.get("function") if isinstance(call, Mapping) else None
        arguments = function.get("arguments") if isinstance(function, Mapping) else None
        shorter = truncate_tool_arguments(arguments, max_chars) if isinstance(arguments, str) else None
        if isinstance(function, Mapping) and shorter is not None and shorter != arguments:
            call = {**call, "function": {**function, "arguments": shorter}}
            changed += 1
        result.append(call)
    return result, changed


@redacting_once  # one pass summarises every old result: a text repeated in their calls is redacted once
def prune_tool_results(
    messages: Sequence[Message],
    *,
    counter: TokenCounter,
    protect_tail_tokens: int,
    protect_tail_count: int,
    min_prune_chars: int = 200,
    max_argument_chars: int = 500,
    exact_head: int | None = None,
    tokens_before: int | None = None,
    deferral: Deferral | None = None,
    count_after: bool = True,
    turn_limit: int | None = None,
    by_chars: bool = True,
) -> PruneReport:
    """Run the four pruning passes (see the module docstring) and report what changed.

    The protected tail is :func:`tail_start` with ``protect_tail_tokens`` / ``protect_tail_count``.
    A non-positive ``protect_tail_tokens`` protects by count alone and turns pass 4 off.

    Every rewrite is kept only if it costs fewer tokens. With ``exact_head`` set, rewrites between
    it and the protected tail (a middle about to be summarised away) are weighed by characters
    instead, which spares tokenising thousands of messages no prompt will ever carry.
    ``tokens_before``, when the caller already knows it, spares counting the input again. With
    ``deferral`` (and ``exact_head``), the tool results of that range the summary model will never
    read are not summarised (see :class:`Deferral`). ``count_after=False``: the result is not counted
    (``tokens_after`` is ``None``), for a caller that does not need it. ``turn_limit``: a turn in
    progress that alone costs more (the trigger) is not kept whole: its tool results before the
    protected tail are pruned too (see :func:`.selection.turn_over`; its user message is never touched).
    ``by_chars=False``: every rewrite is weighed in tokens, ``exact_head`` only says where ``deferral``'s
    range begins (for a pipeline's prune step, whose result the summarize step after it reads: what that
    step keeps was weighed as it always is, what it summarises away unread is not summarised twice).
    """
    result = list(messages)
    calls = _calls_of_results(messages)
    # The latest user message and everything after it stay verbatim: it is the task in progress.
    verbatim = last_real_user_index(messages)
    verbatim = len(messages) if verbatim < 0 else verbatim
    if verbatim < len(messages) and turn_over(messages, counter=counter, limit=turn_limit):
        verbatim = len(messages)  # pruned like the rest up to the tail (no pass touches the user message)
    boundary = min(verbatim, tail_start(messages, counter=counter, budget_tokens=protect_tail_tokens,
                                        min_messages=protect_tail_count))
    replaced: set[int] = set()

    cheap = range(exact_head, boundary) if exact_head is not None else range(0)

    def replace(index: int, message: Message) -> bool:
        """Keep ``message`` at ``index`` only if it is cheaper, so no rewrite grows the prompt."""
        original = result[index]
        if by_chars and index in cheap:
            if _size(message) >= _size(original):
                return False
        elif ((most := counter.at_most(message)) is None or counter.at_least(original, enough=most + 1) <= most) and (
                counter.at_least(original, enough=counter.count_message(message) + 1) <= counter.count_message(message)
                and counter.count_replacement(original, message) >= counter.count_message(original)):
            return False  # bounds first (a one-line summary of a long result is settled by them), then counts
        result[index] = message
        replaced.add(index)
        return True

    def prune_result(index: int, min_chars: int) -> bool:
        message = result[index]
        if message.get("role") != "tool":
            return False
        content = _pruned_content(message.get("content"), calls[index], min_chars)
        return content is not None and replace(index, {**message, "content": content})

    deduplicated, newer = 0, _Texts()
    for index in range(len(result) - 1, -1, -1):
        message, content = result[index], result[index].get("content")
        if index >= verbatim:  # newer copies there still count, older ones are replaced
            if message.get("role") == "tool" and isinstance(content, str):
                newer.add(content)
            continue
        if (message.get("role") != "tool" or not isinstance(content, str) or len(content) < min_prune_chars
                or _is_pruned(content, calls[index][0])):
            continue
        if newer.add(content) and replace(index, {**message, "content": DUPLICATE_PLACEHOLDER}):
            deduplicated += 1

    # pass 3 before pass 2 (they rewrite different messages): a deferral measures the final texts
    arguments_truncated = 0
    for index in range(boundary):
        message = result[index]
        if message.get("role") == "assistant" and isinstance(message.get("tool_calls"), list):
            new_calls, count = _truncated_calls(message["tool_calls"], max_argument_chars)
            if count and replace(index, {**message, "tool_calls": new_calls}):
                arguments_truncated += count

    deferred, summarized = range(0), 0
    if deferral is not None and cheap:
        def pruned_once(index: int) -> bool:
            nonlocal summarized
            done = prune_result(index, min_prune_chars)
            summarized += done
            return done

        deferred = _deferred(result, cheap, deferral, counter, pruned_once)
    summarized += sum(prune_result(index, min_prune_chars) for index in range(boundary) if index not in deferred)

    demoted = 0
    ceiling = protect_tail_tokens * TAIL_DEMOTE_FACTOR
    active = _active_turn_start(result) if protect_tail_tokens > 0 else len(result)
    while protect_tail_tokens > 0:
        # The tail is measured on what the passes above left: shrunk messages let it reach further
        # back. Demote against that tail, and again while demoting moves it, so that pruning the
        # result once more finds nothing left to do.
        tail = min(verbatim, tail_start(result, counter=counter, budget_tokens=protect_tail_tokens,
                                        min_messages=protect_tail_count))
        if not over(result[tail:], ceiling, counter):
            break
        # largest first, by characters: what is demoted is never tokenised (see ``over``)
        bulkiest = sorted(range(tail, min(verbatim, active)), key=lambda index: _size(result[index]), reverse=True)
        demoted_before = demoted
        for index in bulkiest:
            if not over(result[tail:], ceiling, counter):
                break
            if prune_result(index, min_prune_chars):
                demoted += 1
        if demoted == demoted_before:
            break

    return PruneReport(
        messages=result,
        deduplicated=deduplicated,
        summarized=summarized,
        arguments_truncated=arguments_truncated,
        demoted=demoted,
        tokens_before=counter.count_messages(messages) if tokens_before is None else tokens_before,
        tokens_after=None if cheap or not count_after else counter.count_messages(result),
        replaced=tuple(sorted(replaced)),
        deferred=deferred,
    )


@redacting_once
def summarised(pruned: Sequence[Message], originals: Sequence[Message], indices: range, *,
               min_prune_chars: int = 200) -> list[Message]:
    """``pruned`` (what :func:`prune_tool_results` made of ``originals``) with the tool results at
    ``indices`` summarised as pass 2 would have in a range weighed by characters: from the calls of
    the originals (pass 3 may have cut their arguments since), kept only when shorter. For a reader of
    what :class:`Deferral` left alone: the static fallback summary."""
    out, calls = list(pruned), _calls_of_results(originals)
    for index in indices:
        message = out[index]
        if message.get("role") == "tool":
            content = _pruned_content(message.get("content"), calls[index], min_prune_chars)
            if content is not None and _size(shorter := {**message, "content": content}) < _size(message):
                out[index] = shorter
    return out


def _deferred(result: list[Message], cheap: range, deferral: Deferral, counter: TokenCounter,
              prune: Any) -> range:
    """Pass 2 over ``cheap`` from both ends inward (``prune(index)`` rewrites ``result[index]``) until
    ``deferral``'s windows are covered; the part in between, left alone (see :class:`Deferral`)."""
    # The protected tail already holds about its budget: the tail measured on the result reaches back
    # only as far as what pruning saved there. Weighed by lower bounds (:meth:`TokenCounter.at_least`),
    # so nothing is tokenised that pass 4 may yet demote, and the tail ends no earlier than found.
    stop, tokens = cheap.stop, 0
    for message in result[cheap.stop:]:
        tokens += counter.at_least(message, enough=deferral.tail_tokens - tokens)
        if tokens >= deferral.tail_tokens:
            break
    while stop > cheap.start and tokens < deferral.tail_tokens:  # where that tail ends, at the earliest
        stop -= 1
        prune(stop)
        tokens += counter.at_least(result[stop], enough=deferral.tail_tokens - tokens)
    chars = 0
    while stop > cheap.start and chars < deferral.tail_chars:  # and the window before it the request shows
        stop -= 1
        prune(stop)
        chars += _body_chars(result[stop])
    start, chars = cheap.start, 0
    while start < stop and chars < deferral.head_chars:
        prune(start)
        chars += _body_chars(result[start])
        start += 1
    return range(start, stop) if start < stop else range(0)


# -- the strategy ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class PruneOptions:
    """``ctx_plugins.options.prune``."""

    #: tool output shorter than this is left as it is
    min_prune_chars: int = option(200, ge=0)
    #: a tool call's arguments longer than this are shrunk (kept valid JSON)
    max_argument_chars: int = option(500, ge=0)


class PruneStrategy(ModelFreeStrategy):
    """Stage 1 alone: old tool output becomes one-line summaries, no LLM call, nothing dropped.

    Messages still too big for the window afterwards are cut as :mod:`.oversize` describes. A forced
    compaction (a manual ``/compress``) protects only the turn in progress (the latest user message and
    what follows it): every older tool output is summarised, whatever the tail budget and
    ``protect_last_n`` would keep; nothing is dropped either way.
    """

    name = "prune"
    description = "shrink old tool output to one-line summaries, no LLM call"
    options_class = PruneOptions
    #: set by a pipeline whose later step compacts and cuts what is still too big itself: cutting here
    #: first would cut messages that step keeps whole (the latest rounds of a long turn)
    leaves_cutting: bool = False
    #: after ``compact(exact=False)`` made a result: its messages and ``estimate_messages`` of them, for a
    #: pipeline handing them on (taken, and so let go, at once)
    estimated: tuple[list[Message], int, int] | None = None
    #: the tool results the latest ``compact`` left unsummarised for the step after it (see its ``ahead``)
    deferred: range = range(0)

    @property
    def reports_removals(self) -> bool:
        return True

    def compact(self, messages: list[Message], *, force: bool, exact: bool = True,
                size: tuple[int, str] | None = None, ahead: tuple[int, Deferral] | None = None) -> CompressionResult:
        """``exact=False``: for a pipeline handing the result to its next step, which counts what it keeps
        (and the pipeline its last result): the result is cut to fit as always, but neither counted
        (``tokens_after`` is an estimate) nor checked. ``size``: ``size_before`` of ``messages``, if known.
        ``ahead`` (with ``exact=False``): the head's end and the :class:`Deferral` of the summarising step
        after this one: the tool results its summary request will not show are left to it (it summarises them
        away unread; :attr:`deferred` says which were, for a pipeline whose next step then compacts nothing)."""
        counter = get_counter(self.model)
        tokens_before, estimated = size if size is not None else size_before(counter, messages)
        if force:  # the turn in progress alone (see the class docstring)
            tail_tokens, tail_count = 0, 1
        else:
            unsqueezed = max(1, int((self.threshold_tokens or tokens_before) * self.settings.target_ratio))
            tail_tokens, tail_count = self.within_floor(unsqueezed), floor.tail_count(
                self.settings.protect_last_n, unsqueezed, threshold=self.threshold_tokens, floor=self.floor_tokens)
        report = prune_tool_results(
            messages, counter=counter, protect_tail_tokens=tail_tokens, protect_tail_count=tail_count,
            min_prune_chars=self.options.min_prune_chars, max_argument_chars=self.options.max_argument_chars,
            tokens_before=tokens_before, count_after=exact, turn_limit=self.threshold_tokens,
            exact_head=ahead[0] if ahead is not None and not exact else None,
            deferral=ahead[1] if ahead is not None and not exact else None, by_chars=False)
        self.deferred = report.deferred
        notes = [f"deduplicated {report.deduplicated}, summarised {report.summarized}, "
                 f"truncated {report.arguments_truncated} arguments, demoted {report.demoted}{estimated}"]
        pruned, cut = (report.messages, 0) if self.leaves_cutting else self.fit_oversized(
            report.messages, counter, total=report.tokens_after)
        if cut:
            notes.append(f"cut {cut} oversized messages to fit the context window")
        if not report.changed and not cut:
            return CompressionResult.unchanged(messages, report.tokens_before, note=(
                "no tool output before the turn in progress is left to shrink" if force else "nothing to prune"))
        if not exact:
            estimate = counter.estimate_messages(pruned)
            self.estimated = (pruned, *estimate)  # for the pipeline's next step, which estimates the same
            return CompressionResult.replacing(
                messages, pruned, tokens_before=report.tokens_before, tokens_after=estimate[0],
                new_session=not self.settings.in_place, notes=tuple(notes))
        return self.checked(messages, CompressionResult.replacing(  # the result is counted here, exactly
            messages, pruned, tokens_before=report.tokens_before, new_session=not self.settings.in_place,
            tokens_after=report.tokens_after if pruned is report.messages and report.tokens_after is not None
            else counter.count_messages(pruned), notes=tuple(notes),
        ), counter, counted=True)

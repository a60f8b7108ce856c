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
unchanged one is the same object (the token counter memoises by identity).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..events import Message
from ..options import option
from ..tokens import REPLY_PRIMING, TokenCounter, get_counter
from .base import CompressionResult, ModelFreeStrategy, size_before
from .messages import last_real_user_index, truncate_tool_arguments
from .selection import walk_back

DUPLICATE_PLACEHOLDER = "[Duplicate tool output — same content as a more recent call]"
IMAGE_PLACEHOLDER = "[image removed to save context]"
#: a summary is one line of at most this many characters
SUMMARY_MAX_CHARS = 240
ERROR_MAX_CHARS = 120
_ERROR_SEP = "; error: "
_ERROR_MIN_CHARS = 60  # a long call description is cut so that the error keeps at least this much
#: pass 4 starts (and stops) when the protected tail exceeds its budget by this factor
TAIL_DEMOTE_FACTOR = 1.5

_IMAGE_PART_TYPES = frozenset({"image_url", "input_image", "image"})
_NAME_MAX_CHARS = 64

_EXIT_IN_JSON = re.compile(r'"exit_code"\s*:\s*(-?\d+)')
_TOTAL_IN_JSON = re.compile(r'"total_count"\s*:\s*(\d+)')
_EXIT_IN_TEXT = re.compile(r"exit[ _]code\W{0,3}(-?\d+)\W*\Z", re.IGNORECASE)
# Lines that open with an error label (``ModuleNotFoundError: ...``, ``FAILED test_x``,
# ``error[E0425]: ...``) say more than lines that merely mention one (``raise ValueError(...)``).
# A line is what ``str.splitlines`` would cut; each pattern is matched within one line.
_ERROR_START = re.compile(r"\s*(?:[\w.]*(?:Error|Exception)\b|FAILED\b|FATAL\b|ERROR\b|error\b|panic:)")
_ERROR_ANYWHERE = re.compile(r"\b\w*(?:Error|Exception)\b|\bFAILED\b|\bERR!|\berror:")
# Every line either pattern can match holds one of these: only such lines are looked at.
_ERROR_WORD = re.compile(r"Error|Exception|FAILED|FATAL|ERR|error|panic:")
_BREAKS = "\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029"
_LINE_BREAK = re.compile(f"[{_BREAKS}]")
# Tools that run a program: their output is searched for an error line when the exit code is not 0.
_EXECUTING_TOOLS = frozenset({"terminal", "execute_code"})


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

    def exact_tokens_after(self, counter: TokenCounter) -> int:
        return self.tokens_after if self.tokens_after is not None else counter.count_messages(self.messages)

    @property
    def changed(self) -> bool:
        return bool(self.deduplicated or self.summarized or self.arguments_truncated or self.demoted)


# -- one-line summaries ---------------------------------------------------------------------------


def _text(value: object) -> str:
    """``value`` as text: strings as they are, anything else as JSON (as the model wrote it)."""
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError, RecursionError):  # not JSON data, or nested absurdly deep
        return f"<{type(value).__name__}>"


def _clip(value: object, limit: int) -> str:
    """``value`` as one line (whitespace runs collapsed) of at most ``limit`` characters; reads no
    further into ``value`` than that line needs, however long it is."""
    text = _text(value)
    prefix = 4 * limit + 64
    while True:  # the collapsed prefix is a prefix of the collapsed whole
        line = " ".join(text[:prefix].split())
        if len(line) > limit or prefix >= len(text):
            break
        prefix *= 4
    return line if len(line) <= limit else line[: max(limit - 3, 0)] + "..."


def _label(tool_name: object) -> str:
    """The ``[name]`` a summary starts with; also how an existing summary is recognised."""
    return f"[{_clip(tool_name, _NAME_MAX_CHARS) or 'unknown'}]"


def _json_object(text: str) -> dict[str, Any]:
    """``text`` parsed as a JSON object, or ``{}`` for anything else (never raises)."""
    if not text.lstrip().startswith("{"):
        return {}
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):  # RecursionError: absurdly deep nesting
        return {}
    return value if isinstance(value, dict) else {}


def _first_error_line(text: str) -> str:
    """The most telling error line in ``text``: one opening with an error label, else the first
    one mentioning an error, else ``""``.

    Linear in ``text`` whatever its shape (a 10 MB log with an error word on every line, or on none):
    lines without an error word are skipped by one regex scan, and every scan moves forward.
    """
    mention = ""
    line_start = 0  # no line break lies between it and the next hit's line
    hit = _ERROR_WORD.search(text)
    while hit is not None:
        previous = max(text.rfind(c, line_start, hit.start()) for c in _BREAKS)
        line_start = previous + 1 if previous >= 0 else line_start
        line_break = _LINE_BREAK.search(text, hit.start())
        line_end = line_break.start() if line_break is not None else len(text)
        if _ERROR_START.match(text, line_start, line_end):
            return text[line_start:line_end].strip()
        if not mention and _ERROR_ANYWHERE.search(text, line_start, line_end):
            mention = text[line_start:line_end].strip()
        if line_break is None:
            break
        line_start = line_break.end()
        hit = _ERROR_WORD.search(text, line_start)
    return mention


def _exit_code(content: str, data: Mapping[str, Any], output: str) -> str:
    """From the JSON ``exit_code`` (parsed, else found by regex), else a trailing "exit code N"."""
    code = data.get("exit_code")
    if isinstance(code, int) and not isinstance(code, bool):
        return str(code)
    match = _EXIT_IN_JSON.search(content) or _EXIT_IN_TEXT.search(output.rstrip()[-200:])
    return match.group(1) if match else "?"


def _describe(name: str, args: Mapping[str, Any], content: str, output: str, exit_code: str) -> str:
    """The summary line before any error note, in hermes 0.19.0's per-tool formats."""

    def arg(key: str, default: str = "?", limit: int = 100) -> str:
        value = args.get(key)
        return default if value is None or value == "" else _clip(value, limit)

    chars = f"{len(content):,} chars"
    lines = output.count("\n") + 1 if output.strip() else 0
    if name == "terminal":
        return f"[terminal] ran `{arg('command', '', 80)}` -> exit {exit_code}, {lines} lines output"
    if name == "read_file":
        return f"[read_file] read {arg('path')} from line {arg('offset', '1')} ({chars})"
    if name == "write_file":
        written = args.get("content")
        count = _text(written).count("\n") + 1 if written else "?"
        return f"[write_file] wrote to {arg('path')} ({count} lines)"
    if name == "search_files":
        total = _TOTAL_IN_JSON.search(content)
        return (f"[search_files] {arg('target', 'content')} search for '{arg('pattern', limit=60)}' "
                f"in {arg('path', '.')} -> {total.group(1) if total else '?'} matches")
    if name == "patch":
        return f"[patch] {arg('mode', 'replace')} in {arg('path')} ({chars} result)"
    if name.startswith("browser_"):
        target = arg("url", "") or (f"ref={arg('ref', '')}" if args.get("ref") else "")
        return f"[{name}]{' ' + target if target else ''} ({chars})"
    if name == "web_search":
        return f"[web_search] query='{arg('query', limit=80)}' ({chars} result)"
    if name == "web_extract":
        urls = args.get("urls")
        urls = urls if isinstance(urls, list) else [urls] if urls else []
        first = urls[0] if urls else "?"
        if isinstance(first, Mapping):  # models forward web_search hits ({"url": ...}) as they are
            first = first.get("url") or first.get("href") or "?"
        more = f" (+{len(urls) - 1} more)" if len(urls) > 1 else ""
        return f"[web_extract] {_clip(first, 100)}{more} ({chars})"
    if name == "delegate_task":
        return f"[delegate_task] '{arg('goal', '', 60)}' ({chars} result)"
    if name == "execute_code":
        return f"[execute_code] `{arg('code', '', 60)}` -> exit {exit_code}, {lines} lines output"
    if name.startswith("skill"):
        return f"[{name}] name={arg('name')} ({chars})"
    if name == "vision_analyze":
        return f"[vision_analyze] '{arg('question', '', 50)}' ({chars})"
    if name == "memory":
        return f"[memory] {arg('action')} on {arg('target')}"
    if name == "todo":
        return "[todo] updated task list"
    if name == "clarify":
        return f"[clarify] asked '{arg('question', '', 80)}'"
    if name == "cronjob":
        return f"[cronjob] {arg('action')}"
    if name == "process":
        return f"[process] {arg('action')} session={arg('session_id')}"
    shown = "".join(f" {_clip(key, 30)}={_clip(value, 40)}" for key, value in list(args.items())[:2])
    return f"{_label(name)}{shown} ({chars} result)"


def summarize_tool_result(tool_name: str, tool_args: str | Mapping[str, Any], tool_content: str) -> str:
    """One informative line about a tool call and its result, e.g.
    ``[terminal] ran `npm test` -> exit 0, 47 lines output``.

    A failure keeps its error line (``...; error: ModuleNotFoundError: No module named 'x'``):
    of everything in an old result, the error is what later turns most need.  Never raises, whatever
    the arguments hold: they come from persisted history, and one malformed call must not make every
    later compression fail.
    """
    name = _clip(tool_name, _NAME_MAX_CHARS) or "unknown"
    args = tool_args if isinstance(tool_args, Mapping) else _json_object(_text(tool_args or ""))
    content = _text(tool_content or "")
    data = _json_object(content)
    output = data["output"] if isinstance(data.get("output"), str) else content
    exit_code = _exit_code(content, data, output)
    error = ""
    if name in _EXECUTING_TOOLS and exit_code != "0":
        error = _first_error_line(output)
    if not error and isinstance(data.get("error"), str):
        error = data["error"].strip()
    described = _describe(name, args, content, output, exit_code)
    if not error:
        return _clip(described, SUMMARY_MAX_CHARS)
    head = _clip(described, SUMMARY_MAX_CHARS - len(_ERROR_SEP) - _ERROR_MIN_CHARS)
    room = min(ERROR_MAX_CHARS, SUMMARY_MAX_CHARS - len(head) - len(_ERROR_SEP))
    return f"{head}{_ERROR_SEP}{_clip(error, room)}"


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
        len(content) <= SUMMARY_MAX_CHARS and "\n" not in content and content.startswith(_label(tool_name))
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
                    latest[call["id"]] = (_text(function.get("name") or "unknown"), function.get("arguments"))
        elif role == "tool":
            call_id = message.get("tool_call_id")
            own_name = _text(message.get("name") or message.get("tool_name") or "unknown")
            found[index] = latest.get(call_id, (own_name, "")) if isinstance(call_id, str) else (own_name, "")
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
) -> PruneReport:
    """Run the four pruning passes (see the module docstring) and report what changed.

    The protected tail is :func:`tail_start` with ``protect_tail_tokens`` / ``protect_tail_count``.
    A non-positive ``protect_tail_tokens`` protects by count alone and turns pass 4 off.

    Every rewrite is kept only if it costs fewer tokens. With ``exact_head`` set, rewrites between
    it and the protected tail (a middle about to be summarised away) are weighed by characters
    instead, which spares tokenising thousands of messages no prompt will ever carry.
    ``tokens_before``, when the caller already knows it, spares counting the input again.
    """
    result = list(messages)
    calls = _calls_of_results(messages)
    # The latest user message and everything after it stay verbatim: it is the task in progress.
    verbatim = last_real_user_index(messages)
    verbatim = len(messages) if verbatim < 0 else verbatim
    boundary = min(verbatim, tail_start(messages, counter=counter, budget_tokens=protect_tail_tokens,
                                        min_messages=protect_tail_count))
    replaced: set[int] = set()

    cheap = range(exact_head, boundary) if exact_head is not None else range(0)

    def replace(index: int, message: Message) -> bool:
        """Keep ``message`` at ``index`` only if it is cheaper, so no rewrite grows the prompt."""
        original = result[index]
        if index in cheap:
            if _size(message) >= _size(original):
                return False
        elif (counter.at_least(original, enough=counter.count_message(message) + 1) <= counter.count_message(message)
              and counter.count_replacement(original, message) >= counter.count_message(original)):
            return False
        result[index] = message
        replaced.add(index)
        return True

    def prune_result(index: int, min_chars: int) -> bool:
        message = result[index]
        if message.get("role") != "tool":
            return False
        content = _pruned_content(message.get("content"), calls[index], min_chars)
        return content is not None and replace(index, {**message, "content": content})

    deduplicated, newer = 0, set[str]()
    for index in range(len(result) - 1, -1, -1):
        message, content = result[index], result[index].get("content")
        if index >= verbatim:  # newer copies there still count, older ones are replaced
            if message.get("role") == "tool" and isinstance(content, str):
                newer.add(content)
            continue
        if (message.get("role") != "tool" or not isinstance(content, str) or len(content) < min_prune_chars
                or _is_pruned(content, calls[index][0])):
            continue
        if content not in newer:  # a set of the texts: compared by hash, confirmed by equality
            newer.add(content)
        elif replace(index, {**message, "content": DUPLICATE_PLACEHOLDER}):
            deduplicated += 1

    summarized = sum(prune_result(index, min_prune_chars) for index in range(boundary))

    arguments_truncated = 0
    for index in range(boundary):
        message = result[index]
        if message.get("role") == "assistant" and isinstance(message.get("tool_calls"), list):
            new_calls, count = _truncated_calls(message["tool_calls"], max_argument_chars)
            if count and replace(index, {**message, "tool_calls": new_calls}):
                arguments_truncated += count

    demoted = 0
    ceiling = protect_tail_tokens * TAIL_DEMOTE_FACTOR
    active = _active_turn_start(result)
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
        tokens_after=None if cheap else counter.count_messages(result),
        replaced=tuple(sorted(replaced)),
    )


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

    @property
    def reports_removals(self) -> bool:
        return True

    def compact(self, messages: list[Message], *, force: bool) -> CompressionResult:
        counter = get_counter(self.model)
        tokens_before, estimated = size_before(counter, messages)
        if force:  # the turn in progress alone (see the class docstring)
            tail_tokens, tail_count = 0, 1
        else:
            base = self.threshold_tokens or tokens_before
            tail_tokens, tail_count = max(1, int(base * self.settings.target_ratio)), self.settings.protect_last_n
        report = prune_tool_results(
            messages, counter=counter, protect_tail_tokens=tail_tokens, protect_tail_count=tail_count,
            min_prune_chars=self.options.min_prune_chars, max_argument_chars=self.options.max_argument_chars,
            tokens_before=tokens_before,
        )
        notes = [f"deduplicated {report.deduplicated}, summarised {report.summarized}, "
                 f"truncated {report.arguments_truncated} arguments, demoted {report.demoted}{estimated}"]
        pruned, cut = self.fit_oversized(report.messages, counter)
        if cut:
            notes.append(f"cut {cut} oversized messages to fit the context window")
        if not report.changed and not cut:
            return CompressionResult.unchanged(messages, report.tokens_before, note=(
                "no tool output before the turn in progress is left to shrink" if force else "nothing to prune"))
        return self.checked(messages, CompressionResult.replacing(
            messages, pruned, tokens_before=report.tokens_before, tokens_after=counter.count_messages(pruned),
            new_session=not self.settings.in_place, notes=tuple(notes),
        ), counter)

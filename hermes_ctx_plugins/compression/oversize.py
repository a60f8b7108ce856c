"""Cutting oversized messages, when dropping and summarising cannot make a conversation fit.

hermes 0.19.0's compressor clips what its summariser reads (the first 4,000 and last 1,500
characters of each message) but keeps every protected message whole: a few huge pastes in the
protected tail leave the prompt above the window, and hermes retries the compaction three times,
then fails the turn ("Context length exceeded"). Here, when a compaction's result is still above
its limit, the bulkiest messages are cut in place: their start and end are kept around a marker
saying how much was cut and how to get it back. A cut message no longer matches its original, so
the host archives the original verbatim (``ctx_search`` / ``ctx_expand`` reach it).

What is cut, largest first, never below :func:`floor_tokens`, until the prompt fits:

1. anything before the turn in progress (the latest real user message and what follows it),
   except the system prompt, summaries and markers, and messages already cut;
2. only when the prompt is still over the model's window without them (it could not be sent):
   the assistant messages and tool results of the turn in progress;
3. only when the latest user message alone exceeds the window: that message. hermes keeps it
   whole and the session fails on every turn until ``/new``; cutting it (the original archived)
   lets the conversation go on. Otherwise it stays verbatim, even if the prompt stays above the
   limit.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

from ..events import Message
from ..tokens import REPLY_PRIMING, TokenCounter
from .messages import append_text, is_summary, last_real_user_index, role, text_of, truncate_tool_arguments

#: On a cut message (stripped by hermes before the wire): how many characters were cut.
TRUNCATED_KEY = "_ctx_truncated"
#: A compaction leaves at least this share of the trigger threshold free after it: cutting stops
#: there, so the conversation can go on for a while before the next compaction.
FIT_SHARE = 0.75
#: A cut message keeps at least this many tokens (about hermes' 5,500 characters for its summariser).
FLOOR_TOKENS = 1_500
_MIN_FLOOR_TOKENS = 50
# Recognises a cut message whose metadata was lost (a resumed session).
_MARKER = re.compile(r"\[… [\d,]+ characters cut (?:here|from the tool-call arguments) to fit the context window")


def limit_tokens(threshold: int) -> int:
    """The most tokens a compaction should leave, for a trigger ``threshold``."""
    return max(1, int(threshold * FIT_SHARE))


def floor_tokens(limit: int) -> int:
    """The fewest tokens a cut message keeps: :data:`FLOOR_TOKENS`, less on small windows."""
    return max(_MIN_FLOOR_TOKENS, min(FLOOR_TOKENS, limit // 10))


def is_cut(message: Message) -> bool:
    """Whether ``message`` was cut by :func:`fit` (by its metadata, else by its marker)."""
    return bool(message.get(TRUNCATED_KEY)) or bool(_MARKER.search(text_of(message.get("content"))))


def marker(cut_chars: int, *, archived: bool, where: str = "here") -> str:
    """What stands where text was cut: how much, and where the whole message is."""
    kept = ("the whole message is archived: ctx_search(words from it) finds it, ctx_expand(id) shows it"
            if archived else "they were not kept")
    return f"\n\n[… {cut_chars:,} characters cut {where} to fit the context window; {kept} …]\n\n"


def fit(messages: list[Message], *, counter: TokenCounter, limit: int, above: int | None = None,
        window: int | None = None, archived: bool = True, total: int | None = None,
        keep: int | None = None) -> tuple[list[Message], int]:
    """``messages`` with the bulkiest messages cut until the prompt fits ``limit`` tokens.

    Which messages may be cut, and in what order, is in the module docstring.

    :param above: cut only when the prompt is above this many tokens (default ``limit``), so that
        what the host adds after a compaction (at most ``above - limit``) is not cut next time.
    :param window: the most tokens one request can carry (the context window less the output
        reserve), or ``None`` when unknown: then the turn in progress is never cut.
    :param archived: whether the host archives originals (the marker says how to get them back).
    :param total: ``counter.count_messages(messages)``, when the caller has just counted them: a prompt
        within the limit is then left as it is without weighing each message again.
    :param keep: the fewest tokens a cut message keeps (default :func:`floor_tokens` of ``limit``: a caller
        whose limit is small because of what else the prompt holds passes the one of its usual limit).
    :returns: the new list (unchanged messages keep their identity; ``messages`` itself when
        nothing was cut) and how many messages were cut.
    """
    if total is not None and total <= max(limit, above or 0):
        return messages, 0  # what the check below ends with when any message is above the floor
    floor = floor_tokens(limit) if keep is None else max(_MIN_FLOOR_TOKENS, keep)

    def above_floor(message: Message) -> bool:  # settled by the byte bound where it can be: nothing tokenised
        most = counter.at_most(message)
        return (most is None or most > floor) and _cuttable(message)

    # a message at the floor is never cut: with none above it (by its bound), nothing is, whatever the total
    if not any(above_floor(message) for message in messages):
        return messages, 0
    total = counter.count_messages(messages) if total is None else total
    if total <= max(limit, above or 0):
        return messages, 0
    out = list(messages)
    turn = last_real_user_index(out)
    turn = len(out) if turn < 0 else turn
    stages: list[Callable[[], Sequence[int]]] = [lambda: range(turn)]
    if window is not None and turn < len(out):
        # the turn's rounds, when the prompt is still over the window without cutting them (what comes
        # before them is cut first); the user's message itself only when it alone exceeds the window
        stages.append(lambda: range(turn + 1, len(out)) if total - REPLY_PRIMING > window else ())
        if counter.count_message(out[turn]) > window:
            stages.append(lambda: (turn,))
    cut = 0
    for stage_of in stages:
        stage = stage_of()
        # only those above the floor are looked at (and sorted)
        sizes = {i: size for i in stage
                 if above_floor(out[i]) and (size := counter.count_message(out[i])) > floor}
        for index in sorted(sizes, key=sizes.__getitem__, reverse=True):
            excess = total - limit
            if excess <= 0 or sizes[index] <= floor:
                break  # sorted by size: every later candidate is at the floor too
            shorter = _cut(out[index], max(floor, sizes[index] - excess), counter, archived=archived)
            saved = sizes[index] - counter.count_message(shorter) if shorter is not None else 0
            if shorter is not None and saved > 0:
                out[index] = shorter
                total -= saved
                cut += 1
    return (out, cut) if cut else (messages, 0)


def _cuttable(message: Message) -> bool:
    return role(message) != "system" and not is_summary(message) and not is_cut(message)


def _cut(message: Message, target: int, counter: TokenCounter, *, archived: bool) -> Message | None:
    """``message`` cut to about ``target`` tokens (text first, then tool-call arguments), or None."""
    need = counter.count_message(message) - target
    content = message.get("content")
    cut_chars = 0
    if isinstance(content, str):
        tokens = counter.count_content(message)  # remembered with the message: a huge text is tokenised once
        content, cut_chars = _cut_text(content, tokens - need, counter, archived, tokens=tokens)
    elif isinstance(content, list):
        content, cut_chars = _cut_parts(content, need, counter, archived)
    updated: dict[str, Any] = {k: v for k, v in message.items() if k != "api_content"}  # hermes' stale sidecar
    if cut_chars:
        updated["content"] = content
    calls = message.get("tool_calls")
    if isinstance(calls, list) and counter.count_message(updated) > target:
        updated["tool_calls"], chars = _cut_calls(calls, target)
        if chars:
            note = marker(chars, archived=archived, where="from the tool-call arguments").strip()
            separator = "\n\n" if text_of(updated.get("content")) else ""
            updated["content"] = append_text(updated.get("content"), separator + note)
            cut_chars += chars
    if not cut_chars:
        return None
    updated[TRUNCATED_KEY] = cut_chars
    return updated


def _cut_text(text: str, keep: int, counter: TokenCounter, archived: bool,
              tokens: int | None = None) -> tuple[str, int]:
    """``text`` within about ``keep`` tokens: its first two thirds and last third around a marker.
    ``tokens``: what ``text`` counts, when the caller knows."""
    tokens = counter.count_text(text) if tokens is None else tokens
    room = keep - counter.count_text(marker(len(text), archived=archived))
    if tokens <= max(keep, 0) or room <= 0:
        return text, 0
    chars = int(len(text) * room / tokens)
    for _ in range(4):  # characters per token vary along the text: converge on the token budget
        head = chars * 2 // 3
        tail = chars - head
        cut_chars = len(text) - head - tail
        shorter = text[:head] + marker(cut_chars, archived=archived) + (text[-tail:] if tail else "")
        used = counter.count_text(shorter)
        if used <= keep or chars == 0:
            break
        chars = int(chars * keep / used * 0.95)
    return shorter, cut_chars


def _cut_parts(parts: list[Any], need: int, counter: TokenCounter, archived: bool) -> tuple[list[Any], int]:
    """Content parts with their largest text parts cut until ``need`` tokens are saved."""
    out = list(parts)
    texts = [i for i, p in enumerate(out) if isinstance(p, dict) and isinstance(p.get("text"), str)]
    cut_chars = 0
    for i in sorted(texts, key=lambda i: len(out[i]["text"]), reverse=True):
        if need <= 0:
            break
        text = out[i]["text"]
        tokens = counter.count_text(text)
        shorter, chars = _cut_text(text, max(0, tokens - need), counter, archived)
        if chars:
            out[i] = {**out[i], "text": shorter}
            need -= tokens - counter.count_text(shorter)
            cut_chars += chars
    return out, cut_chars


def _cut_calls(calls: list[Any], target: int) -> tuple[list[Any], int]:
    """Tool calls with long JSON arguments shortened (still valid JSON: providers parse them)."""
    head = max(200, target * 2)  # characters kept of each long string in the arguments
    out, cut_chars = [], 0
    for call in calls:
        function = call.get("function") if isinstance(call, dict) else None
        arguments = function.get("arguments") if isinstance(function, dict) else None
        if isinstance(function, dict) and isinstance(arguments, str):
            shorter = truncate_tool_arguments(arguments, max_chars=head * 2, head_chars=head)
            if len(shorter) < len(arguments):
                call = {**call, "function": {**function, "arguments": shorter}}
                cut_chars += len(arguments) - len(shorter)
        out.append(call)
    return out, cut_chars

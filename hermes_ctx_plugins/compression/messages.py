"""Small facts about OpenAI chat-format message lists that every strategy needs.

Messages are plain dicts as hermes has them. Nothing here mutates its input: a changed message is
a new dict, an unchanged one keeps its identity (the token counter memoises by identity).
"""

from __future__ import annotations

import hashlib
import itertools
import json
import re
from collections.abc import Sequence
from typing import Any

from ..events import Message

#: In-process metadata on a summary message; hermes strips ``_`` keys before the wire.
SUMMARY_KEY = "_compressed_summary"
#: In-process flag on a summary message: whether the compacted session had a real user message.
HAS_USER_TURN_KEY = "_summary_has_user_turn"
#: Ends every summary, so weak models never answer the summary instead of the next message.
SUMMARY_END_MARKER = (
    "--- END OF CONTEXT SUMMARY — respond to the message below, not the summary above ---"
)
#: For the system prompt after a compaction (hermes adds its own when it rebuilds the prompt).
COMPACTION_NOTE = (
    "[Note: Some earlier conversation turns have been compacted into a handoff summary to "
    "preserve context space. Build on that summary and the current state rather than re-doing "
    "work. Your persistent memory (MEMORY.md, USER.md) remains fully authoritative.]"
)
#: On a summary or marker: how many messages followed it when it was made.
TAIL_COUNT_KEY = "_compacted_tail"
#: On a summary or marker: :func:`last_mark` of the conversation's last message when it was made. hermes drops
#: messages after a compaction (tool results whose call is gone): the count alone then took new messages for none.
TAIL_LAST_KEY = "_compacted_last"
#: The assistant's note a compaction puts beside its summary (or marker) where no single role fits
#: between the messages around it (the head ends on the user's message and the tail starts on the
#: assistant's tool calls): the summary takes the user role and this note the assistant's, so roles
#: still alternate and no real message is rewritten (hermes merges its summary into the tail's first
#: message instead). Recognised by its text after a resume, when in-process keys are gone.
BRIDGE_TEXT = ("[Context compacted: the earlier part of this conversation is in the reference-only summary "
               "next to this note.]")
BRIDGE_KEY = "_compaction_bridge"
IMAGE_PLACEHOLDER = "[image removed to save context]"
_IMAGE_TYPES = frozenset({"image_url", "input_image", "image"})
#: Adjacent roles that strict OpenAI-compatible backends reject.
_SAME_ROLE_FORBIDDEN = frozenset({"user", "assistant"})
# A string leaf of tool-call arguments is cut only when that saves more than its marker adds, so a
# cut string is never cut again; a list keeps this many items plus one marker item, so a cut list is
# never cut again.
_MIN_STRING_SAVING = 64
_LIST_HEAD_ITEMS = 5


def role(message: Message) -> str:
    return str(message.get("role") or "")


def text_of(content: Any) -> str:
    """The text of a message's content: a string, a list of parts, or hermes' multimodal dict."""
    if isinstance(content, str):
        return content
    if isinstance(content, dict):
        return text_of(content.get("content")) or str(content.get("text_summary") or "")
    if isinstance(content, list):
        return "\n".join(
            part if isinstance(part, str) else str(part.get("text") or "")
            for part in content
            if isinstance(part, str) or (isinstance(part, dict) and part.get("type") not in _IMAGE_TYPES)
        )
    return ""


#: how window's marker reads, whole (see :func:`is_summary`)
_WINDOW_MARKER = re.compile(r"\[window: \d+ earlier messages were dropped to fit the context window [^\n]*"
                            r"Ask the user if you need something from them\.\]")
#: what the archive appends to the message carrying its index
_ARCHIVE_INDEX = "\n\n<archive-index>"


def is_summary(message: Message) -> bool:
    """A compaction's summary or marker: by its in-process key, or (after a resume, when the keys are
    gone) by its whole shape: a summary opens with ``[CONTEXT COMPACTION`` (ours and hermes') and ends
    with :data:`SUMMARY_END_MARKER`, window's marker is one line of its own wording; either may carry
    the archive's index after it. A user's message that merely opens like one is still the user's."""
    if message.get(SUMMARY_KEY):
        return True
    content = message.get("content")
    if isinstance(content, list) and content:
        content = content[0].get("text") if isinstance(content[0], dict) else content[0]
    if not isinstance(content, str) or not content.startswith(("[CONTEXT COMPACTION", "[window: ")):
        return False
    index = content.rfind(_ARCHIVE_INDEX)
    body = (content[:index] if index >= 0 and content.rstrip().endswith("</archive-index>") else content).rstrip()
    return body.endswith(SUMMARY_END_MARKER) if body.startswith("[C") else _WINDOW_MARKER.fullmatch(body) is not None


def is_bridge(message: Message) -> bool:
    """The note a compaction put beside its summary (see :data:`BRIDGE_TEXT`)."""
    return role(message) == "assistant" and (bool(message.get(BRIDGE_KEY)) or message.get("content") == BRIDGE_TEXT)


def is_real_user(message: Message) -> bool:
    """A message the user actually wrote (not a compaction summary in the user role)."""
    return role(message) == "user" and not is_summary(message)


def nothing_new_since_compaction(messages: Sequence[Message]) -> bool:
    """True when no message was added after the latest summary or marker was made: no more messages follow it
    than did then, and the last one is the one that was last then (hermes may have dropped some since).

    Re-compressing such a conversation could only re-shuffle what the last compaction decided.
    """
    for i in range(len(messages) - 1, -1, -1):
        count = messages[i].get(TAIL_COUNT_KEY)
        if isinstance(count, int) and is_summary(messages[i]):  # the cheap test first: most messages have no count
            last = messages[i].get(TAIL_LAST_KEY)
            return len(messages) - i - 1 <= count and (last is None or last == last_mark(messages[-1]))
    return False


def last_mark(message: Message) -> str:
    """A short digest of what ``message`` says (role, content, tool calls and call id; not our ``_`` keys)."""
    said = [message.get("role"), message.get("content"), message.get("tool_calls"), message.get("tool_call_id")]
    text = json.dumps(said, ensure_ascii=False, sort_keys=True, default=str)
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=8).hexdigest()


def call_ids(message: Message) -> list[str]:
    """The ids of the tool calls an assistant message makes."""
    ids = []
    for call in message.get("tool_calls") or ():
        call_id = call.get("id") if isinstance(call, dict) else getattr(call, "id", None)
        if call_id:
            ids.append(str(call_id))
    return ids


def align_start(messages: Sequence[Message], index: int, *, floor: int = 0) -> int:
    """Move a cut backwards so ``messages[index:]`` does not start with orphaned tool results.

    The cut lands on the assistant message whose calls those results answer, so a call and its
    results always stay on the same side.
    """
    while floor < index < len(messages) and role(messages[index]) == "tool":
        index -= 1
    return index


def align_end(messages: Sequence[Message], index: int) -> int:
    """Move a cut forwards past tool results, so a group is never split (used for heads)."""
    while index < len(messages) and role(messages[index]) == "tool":
        index += 1
    return index


def last_real_user_index(messages: Sequence[Message]) -> int:
    """Index of the last real user message, or -1."""
    for i in range(len(messages) - 1, -1, -1):
        if is_real_user(messages[i]):
            return i
    return -1


def sanitize_tool_pairs(messages: list[Message]) -> list[Message]:
    """Drop tool results whose call is gone and tool calls whose results are gone.

    Providers reject both with a 400 that repeats on every later turn. Stripping (rather than
    inventing stub results) is what hermes does too. A call message left with no call joins the assistant message
    beside it (its text, if any, goes with it): two assistant messages never end up next to each other (a red-team
    pass: a result answering a mangled id left "(tool call removed)" right before the assistant's answer).
    """
    calls = {cid for m in messages if role(m) == "assistant" for cid in call_ids(m)}
    results = {str(m.get("tool_call_id")) for m in messages if role(m) == "tool"}
    if calls == results:
        return messages
    out: list[Message] = []
    emptied: set[int] = set()  # positions in ``out`` of call messages left with no call
    for message in messages:
        if role(message) == "tool" and str(message.get("tool_call_id")) not in calls:
            continue
        if role(message) == "assistant" and message.get("tool_calls"):
            kept = [c for c in message["tool_calls"] if (c.get("id") if isinstance(c, dict) else None) in results]
            if len(kept) != len(message["tool_calls"]):
                message = {k: v for k, v in message.items() if k != "tool_calls"}
                if kept:
                    message["tool_calls"] = kept
                else:
                    emptied.add(len(out))
        out.append(message)
    return _joined(out, emptied) if emptied else out


def _joined(messages: list[Message], emptied: set[int]) -> list[Message]:
    """``messages`` with each emptied call message (its calls removed) joined to an assistant message beside it
    (the one before, unless it has calls of its own; else the one after), or, with none beside it, kept with its
    text or a note saying what was there. A compaction's summary or bridge note is no such neighbour: text added
    to it would no longer read as its own (a red-team pass: the bridge stopped being recognised after a resume)."""
    out: list[Message] = []
    for at, message in enumerate(messages):
        if at not in emptied:
            out.append(message)
            continue
        text = text_of(message.get("content")).strip()
        before = out[-1] if out else None
        after = messages[at + 1] if at + 1 < len(messages) else None
        if before is not None and role(before) == "assistant" and not before.get("tool_calls") and not _ours(before):
            if text:
                out[-1] = {**before, "content": append_text(before.get("content"), "\n\n" + text)}
        elif after is not None and role(after) == "assistant" and not _ours(after):
            if text:
                messages[at + 1] = {**after, "content": append_text(after.get("content"), text + "\n\n",
                                                                    prepend=True)}
        else:
            out.append(message if text else {**message, "content": "(tool call removed)"})
    return out


def _ours(message: Message) -> bool:
    """Whether ``message`` is a compaction's own: a summary or a bridge note."""
    return is_summary(message) or is_bridge(message)


def append_text(content: Any, text: str, *, prepend: bool = False) -> Any:
    """Content with ``text`` added, keeping list-of-parts content a list."""
    if isinstance(content, list):
        part = {"type": "text", "text": text}
        return [part, *content] if prepend else [*content, part]
    existing = text_of(content)
    return text + existing if prepend else existing + text


def has_images(content: Any) -> bool:
    return isinstance(content, list) and any(
        isinstance(p, dict) and p.get("type") in _IMAGE_TYPES for p in content)


def strip_older_images(messages: list[Message]) -> list[Message]:
    """Replace every image before the newest image-bearing message with a text placeholder."""
    newest = next((i for i in range(len(messages) - 1, -1, -1)
                   if has_images(messages[i].get("content"))), None)
    if newest is None:
        return messages
    out = list(messages)
    for i in range(newest):
        content = out[i].get("content")
        if isinstance(content, list) and has_images(content):
            parts = [{"type": "text", "text": IMAGE_PLACEHOLDER}
                     if isinstance(p, dict) and p.get("type") in _IMAGE_TYPES else p for p in content]
            # The api_content sidecar holds the bytes sent before the rewrite: drop it (as hermes does).
            out[i] = {k: v for k, v in out[i].items() if k != "api_content"} | {"content": parts}
    return out


def same_role_neighbours(messages: Sequence[Message]) -> int:
    """How many adjacent user/user or assistant/assistant pairs there are."""
    return sum(
        1 for a, b in itertools.pairwise(messages)
        if role(a) == role(b) and role(a) in _SAME_ROLE_FORBIDDEN
    )


def summary_role(before: Message | None, after: Message | None, *, has_real_user: bool) -> str | None:
    """The role a summary placed between ``before`` and ``after`` must take, or ``None``.

    ``None`` means no role avoids a forbidden same-role neighbour: the summary then takes the user
    role with a bridge beside it (:func:`bridged`), or the tail start moves. A conversation with no
    real user message gets a ``user`` summary: some providers reject a request whose first
    non-system message is not from the user.
    """
    before_role = role(before) if before is not None else "system"
    after_role = role(after) if after is not None else ""
    if not has_real_user or before_role == "system":
        preferred = ["user"]
    elif before_role in ("assistant", "tool"):
        preferred = ["user", "assistant"]
    else:
        preferred = ["assistant", "user"]
    for candidate in preferred:
        if candidate == after_role or (candidate == before_role and before_role in _SAME_ROLE_FORBIDDEN):
            continue
        return candidate
    return None


def bridge_first(before: Message | None, after: Message | None) -> bool | None:
    """Where a summary in the user role takes its bridge (:data:`BRIDGE_TEXT`, the assistant's) when
    no single role fits between ``before`` and ``after``: ``True`` before it (``before`` is the user's),
    ``False`` after it (``before`` is not the user's and ``after`` not the assistant's), ``None`` when
    neither alternates."""
    before_role = role(before) if before is not None else "system"
    after_role = role(after) if after is not None else ""
    if before_role == "user":
        return True if after_role != "user" else None
    return False if after_role != "assistant" else None


def bridged(summary: Message, before: Message | None, after: Message | None) -> list[Message]:
    """``summary`` in the user role with its bridge, in the order :func:`bridge_first` gives (which must
    not be ``None``); a bridge after it counts among the messages that followed it (``TAIL_COUNT_KEY``)."""
    first = bridge_first(before, after)
    assert first is not None, "no bridge alternates here"
    bridge = {"role": "assistant", "content": BRIDGE_TEXT, BRIDGE_KEY: True}
    summary = {**summary, "role": "user"}
    if first:
        return [bridge, summary]
    if isinstance(summary.get(TAIL_COUNT_KEY), int):
        summary[TAIL_COUNT_KEY] += 1
    return [summary, bridge]


def _shrink(value: Any, head_chars: int, list_items: int | None) -> Any:
    """``value`` with long string leaves cut to ``head_chars`` and, when ``list_items`` is given,
    long lists cut to that many items plus a marker item; dict keys are all kept."""
    if isinstance(value, str):
        if len(value) <= head_chars + _MIN_STRING_SAVING:
            return value
        return f"{value[:head_chars]}...[truncated {len(value) - head_chars} chars]"
    if isinstance(value, dict):
        return {key: _shrink(item, head_chars, list_items) for key, item in value.items()}
    if isinstance(value, list):
        if list_items is not None and len(value) > list_items + 1:
            kept = [_shrink(item, head_chars, list_items) for item in value[:list_items]]
            return [*kept, f"...[{len(value) - list_items} more items truncated]"]
        return [_shrink(item, head_chars, list_items) for item in value]
    return value


def truncate_tool_arguments(arguments: str, max_chars: int = 500, head_chars: int = 200) -> str:
    """Shrink a tool call's JSON ``arguments`` longer than ``max_chars``, keeping it valid JSON.

    Providers validate ``function.arguments`` strictly and reject the whole request when it does
    not parse (hermes issue #11762: slicing the raw text wedged sessions), so the value is parsed,
    long string leaves keep their first ``head_chars`` characters plus ``...[truncated N chars]``,
    and, if that is still too long, long lists keep their first few items plus a marker item.
    Every dict key is kept.  Arguments that are not JSON, or that would not get shorter, are
    returned unchanged: a backend that accepted them once accepts them again.
    """
    if not isinstance(arguments, str) or len(arguments) <= max_chars:
        return arguments
    try:
        parsed = json.loads(arguments)
        shrunk = json.dumps(_shrink(parsed, head_chars, None), ensure_ascii=False)
        if len(shrunk) > max_chars:
            shrunk = json.dumps(_shrink(parsed, head_chars, _LIST_HEAD_ITEMS), ensure_ascii=False)
    except (ValueError, RecursionError):
        return arguments
    return shrunk if len(shrunk) < len(arguments) else arguments

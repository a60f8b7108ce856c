"""What one compaction changed: the originals it removed, with their positions, and where its summary is.

The archive keeps every original a compaction removed or rewrote, so it must know exactly which. A
strategy that reports its removals (``CompressorStrategy.reports_removals``: every built-in one) is
told in its :class:`~hermes_ctx_plugins.compression.base.CompressionResult`, and :func:`reported` checks
what it says in one pass over each list, comparing identities: nothing is copied or serialised, so the
cost is pointer comparisons over the conversation plus the work on what changed. A report the check
refutes raises ``ValueError``; the host logs it and falls back to :func:`derived`, so nothing is lost.

A strategy that does not report (a third party's, or a subclass that overrides a built-in's
``compress`` without saying it reports: :func:`~hermes_ctx_plugins.compression.base.reports_removals`)
gets a :class:`Snapshot` before it runs: a deep copy of the conversation, so a message it edits in
place — a key replaced, or a nested value such as a tool call's arguments changed — is still archived
as it was. That costs time in proportion to the whole history on every compaction (about 0.25 s at
5,000 messages); reporting removals is how a strategy avoids it. Afterwards the snapshot works the
changes out once: identity and equality with the copy first, and only the messages left unmatched by
that (new copies of originals, if the strategy copies) are compared by content.
"""

from __future__ import annotations

import copy
import json
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from ..compression.base import CompressionResult, first_plain
from ..compression.messages import is_summary
from ..events import Message


@dataclass(frozen=True)
class Changes:
    """What the archive needs to know about one compaction."""

    #: every original that is not in the result verbatim, with its position in the input, in order
    removed: list[tuple[int, Message]]
    #: indexes in the result of the messages that are not originals (summaries, markers, rewrites)
    fresh: list[int]
    #: index in the result of the message standing for what was removed, which carries the anchor
    #: index; ``None``: each rewritten message points to its own original, plain drops get a marker
    summary_at: int | None


def reported(before: Sequence[Message], result: CompressionResult) -> Changes:
    """What ``result`` says it changed in ``before``, checked: every position in bounds and in order,
    every reported original really the input's message there and really gone from the result, no
    original gone without being reported, the summary a new message of the result.

    :raises ValueError: naming the first thing that is wrong.
    """
    after = result.messages
    kept = {id(message) for message in after}
    if len(result.removed_at) != len(result.removed):
        raise ValueError(f"removed_at has {len(result.removed_at)} positions for {len(result.removed)} "
                         "removed messages")
    previous = -1
    for position, message in zip(result.removed_at, result.removed, strict=True):
        if not previous < position < len(before):
            raise ValueError(f"removed_at {position} is out of order or outside the {len(before)} input messages")
        if before[position] is not message:
            raise ValueError(f"removed message {position} is not the input's message at that position")
        if id(message) in kept:
            raise ValueError(f"input message {position} is reported removed but is still in the result")
        previous = position
    reported_at = set(result.removed_at)
    unreported = [p for p, message in enumerate(before) if id(message) not in kept and p not in reported_at]
    if unreported:
        raise ValueError(f"input messages {unreported[:10]} are gone from the result but not reported removed")
    fresh = _new(before, after)
    if result.summary_at is not None and result.summary_at not in set(fresh):
        raise ValueError(f"summary_at {result.summary_at} is not a new message of the {len(after)}-message result")
    return Changes(removed=list(zip(result.removed_at, result.removed, strict=True)), fresh=fresh,
                   summary_at=result.summary_at)


def derived(before: Sequence[Message], result: CompressionResult) -> Changes:
    """The changes worked out by identity, for a strategy whose report was refuted (it keeps what it
    leaves alone as the same object, as it promised, so identity is exact)."""
    kept = {id(message) for message in result.messages}
    fresh = _new(before, result.messages)
    return Changes(removed=[(p, m) for p, m in enumerate(before) if id(m) not in kept], fresh=fresh,
                   summary_at=_summary(result.messages, fresh, None))


class Snapshot:
    """The conversation as it was before a strategy that does not report its removals ran."""

    def __init__(self, messages: Sequence[Message], *, copies: Sequence[Message] | None = None) -> None:
        """``copies``: the messages as they were, when the strategy was given ``messages`` as a copy of them
        (another plugin's strategy: the originals stay untouched and serve as the copy)."""
        self.messages = list(messages)
        #: each message as it was, nested values included (what an edit in place changes)
        self.copies = list(copies) if copies is not None else copy.deepcopy(self.messages)

    def changes(self, result: CompressionResult) -> Changes:
        """Every original (as it was) that is not in ``result`` verbatim, and what is new there."""
        after = result.messages
        positions: dict[int, list[int]] = {}
        for position, message in enumerate(self.messages):
            positions.setdefault(id(message), []).append(position)
        survived: set[int] = set()
        unmatched: list[int] = []
        for index, message in enumerate(after):
            same = positions.get(id(message))
            # the same object, with the same keys and values as before (compared by identity first)
            if same and message == self.copies[same[0]]:
                survived.add(same.pop(0))
            else:
                unmatched.append(index)
        # what is left on both sides: a copy of an original survived it verbatim (compared by content)
        marks = {p: fingerprint(self.copies[p]) for p in range(len(self.messages)) if p not in survived}
        new_marks = {i: fingerprint(after[i]) for i in unmatched}
        left = Counter(new_marks.values())
        removed = []
        for position, mark in marks.items():
            if left[mark] > 0:
                left[mark] -= 1
            else:
                removed.append((position, self.copies[position]))
        originals = set(marks.values())
        fresh = [i for i in unmatched if new_marks[i] not in originals]
        return Changes(removed=removed, fresh=fresh, summary_at=_summary(after, fresh, result.summary_at))


def _new(before: Sequence[Message], after: Sequence[Message]) -> list[int]:
    originals = {id(message) for message in before}
    return [i for i, message in enumerate(after) if id(message) not in originals]


def _summary(after: Sequence[Message], fresh: list[int], told: int | None) -> int | None:
    """Where the summary is: where the strategy said, if that is a new message; else the first new
    message marked as a summary (``SUMMARY_KEY``), else :func:`first_plain`'s."""
    if told is not None and told in set(fresh):
        return told
    marked = next((i for i in fresh if is_summary(after[i])), None)
    return marked if marked is not None else first_plain(after, fresh)


def call_keys(message: Message) -> list[str]:
    """What ties a rewritten message to its original: its result id, or the ids of its calls."""
    if message.get("tool_call_id"):
        return [f"result:{message['tool_call_id']}"]
    return [f"call:{c.get('id')}" for c in message.get("tool_calls") or () if isinstance(c, dict) and c.get("id")]


def fingerprint(message: Message) -> str:
    """A message's content as one comparable string."""
    return json.dumps(message, sort_keys=True, ensure_ascii=False, default=str)

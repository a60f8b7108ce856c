"""Stages 2 and 3: which messages are protected at the head and at the tail.

The middle between them is what a strategy may summarise or drop. Boundaries never split an
assistant tool call from its results, and the tail always keeps the latest real user message
and everything after it, the turn in progress, unless that turn alone costs more than the trigger
(:func:`turn_tail_start`: then its older rounds join the middle and its user message stays verbatim).
Where no single role fits the summary between head and tail, it takes the user role with an
assistant bridge beside it rather than making the tail keep far more than its budget (:func:`fit_insert`).

A forced compaction (a manual ``/compress``) whose usual tail leaves nothing to compact protects
less: the head as usual, and as tail only the turn in progress (:func:`forced_tail_start`). The
token budget, ``protect_last_n`` and ``min_tail_user_messages`` yield to the user's request, the
invariants (the turn in progress verbatim, tool calls with their results, valid roles) do not.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ..events import Message
from ..tokens import TokenCounter
from .messages import (
    SUMMARY_KEY,
    TAIL_COUNT_KEY,
    TAIL_LAST_KEY,
    align_end,
    align_start,
    bridge_first,
    bridged,
    is_bridge,
    is_real_user,
    is_summary,
    last_mark,
    last_real_user_index,
    role,
    summary_role,
)

#: The tail keeps at least min(protect_last_n, this) messages, so bulky tool output cannot make
#: every compaction keep dozens of messages verbatim.
MAX_TAIL_MESSAGE_FLOOR = 8


@dataclass(frozen=True)
class Split:
    """``messages[:head_end]`` protected, ``[head_end:tail_start]`` compressible, the rest kept."""

    head_end: int
    tail_start: int
    #: no single role fits at ``tail_start``: the summary goes there with a bridge (see :func:`fit_insert`)
    bridged: bool = False
    #: the user message of a turn in progress too big to keep whole (:func:`turn_tail_start`): inside
    #: the middle yet kept verbatim, the summary goes right before it and the rest of the middle (what
    #: came before and the turn's older rounds) is compacted
    task: int | None = None

    def compacted(self, messages: Sequence[Message]) -> list[Message]:
        """The messages of the middle a compaction replaces (the task excluded)."""
        return [messages[i] for i in self.middle if i != self.task]

    def summary_after(self, messages: Sequence[Message]) -> Message | None:
        """The message a summary placed for this split sits right before."""
        at = self.task if self.task is not None else self.tail_start
        return messages[at] if at < len(messages) else None

    def with_summary(self, messages: Sequence[Message], summary: Message, *,
                     has_user: bool) -> tuple[list[Message], Message]:
        """``messages`` with the middle replaced by ``summary`` (a summary or marker, without its role
        and ``TAIL_COUNT_KEY``, which are set here): the head, the summary (with its bridge when
        ``bridged``), the task, the tail; and the summary message as placed."""
        before = messages[self.head_end - 1] if self.head_end else None
        after = self.summary_after(messages)
        task = [] if self.task is None else [messages[self.task]]
        summary = {**summary, "role": "user" if self.bridged else summary_role(before, after, has_real_user=has_user),
                   TAIL_COUNT_KEY: len(task) + len(messages) - self.tail_start}  # what follows it
        inserted = bridged(summary, before, after) if self.bridged else [summary]
        placed = next(m for m in inserted if m.get(SUMMARY_KEY))
        out = [*messages[:self.head_end], *inserted, *task, *messages[self.tail_start:]]
        placed[TAIL_LAST_KEY] = last_mark(out[-1])  # (of what it says: the mark is no part of it)
        return out, placed

    @property
    def middle(self) -> range:
        return range(self.head_end, self.tail_start)

    def __bool__(self) -> bool:
        return self.tail_start > self.head_end


def head_end(messages: Sequence[Message], protect_first_n: int) -> int:
    """The end of the protected head: the system prompt (if present) plus ``protect_first_n``."""
    start = 1 if messages and role(messages[0]) == "system" else 0
    return min(len(messages), align_end(messages, start + protect_first_n))


def walk_back(messages: Sequence[Message], *, stop: int, counter: TokenCounter, budget_tokens: int,
              floor: int) -> int:
    """Where the longest run of messages at the end of ``messages`` (not before ``stop``) that fits
    ``budget_tokens`` starts, taking at least ``floor`` messages whatever their size.

    Exact, yet a message is tokenised only when its lower bound (:meth:`TokenCounter.at_least`) leaves
    the answer open: the message that ends the run and the messages the floor takes are often huge
    tool output of a history nobody counted, about to be summarised or dropped.
    """
    n = len(messages)
    used, exact, cut = 0, True, n
    for i in range(n - 1, stop - 1, -1):
        if n - i > floor:  # past the floor: the budget decides
            if not exact:  # the floor's messages were weighed by bounds: exact sums only if that is open
                if used > budget_tokens:
                    break
                used, exact = sum(counter.count_message(m) for m in messages[cut:]), True
            if used + counter.at_least(messages[i], enough=budget_tokens - used + 1) > budget_tokens:
                break
            cost = counter.count_message(messages[i])
            if used + cost > budget_tokens:
                break
        else:  # taken whatever its size
            cost, exact = counter.at_least(messages[i], enough=budget_tokens + 1), False
        used += cost
        cut = i
    return cut


def tail_start(
    messages: Sequence[Message],
    *,
    head: int,
    counter: TokenCounter,
    budget_tokens: int,
    min_messages: int,
    min_user_messages: int = 1,
) -> int:
    """Where the protected tail begins, walking back from the end by token budget.

    The tail holds as many recent messages as fit ``budget_tokens`` but at least ``min_messages``
    (capped at :data:`MAX_TAIL_MESSAGE_FLOOR`) and at least ``min_user_messages`` real user
    messages; the latest real user message and everything after it are always in it (all that
    follows the head, when that message is inside the head).
    """
    if 0 <= last_real_user_index(messages) < head:  # the turn in progress began in the head: all of it
        return head
    n = len(messages)
    floor = min(min_messages, MAX_TAIL_MESSAGE_FLOOR, n - head)
    fits = walk_back(messages, stop=head, counter=counter, budget_tokens=budget_tokens, floor=floor)
    cut = align_start(messages, fits, floor=head)
    if cut < fits and costlier_than(budget_tokens, counter)(messages[cut:fits]):
        # the run ended inside a call's results, and taking in the rest of them would cost more than the whole
        # budget (a first turn reading a hundred files): they go to the middle, not all into the tail (a red-team
        # pass: such a group kept whole left nothing to compact, turn after turn, over the window)
        cut = align_end(messages, fits)
    users_needed = max(1, min_user_messages)  # the latest user message is always kept
    for i in range(n - 1, head - 1, -1):
        if users_needed <= 0:
            break
        if is_real_user(messages[i]):
            users_needed -= 1
            cut = min(cut, i)
    cut = max(head, align_start(messages, cut, floor=head))
    # an earlier summary (or marker, and its bridge) at the tail's start goes to the middle: kept in the
    # tail it would sit beside the new one, and the new one would not carry it
    while cut < n and (is_summary(messages[cut]) or is_bridge(messages[cut])):
        cut += 1
    return cut


def turn_over(messages: Sequence[Message], *, counter: TokenCounter, limit: int | None) -> bool:
    """Whether the turn in progress (the latest real user message and what follows) alone costs more
    than ``limit`` (the trigger: no compaction that keeps it whole can get under it); never when
    ``limit`` is ``None``."""
    latest = last_real_user_index(messages)
    return limit is not None and latest >= 0 and costlier_than(limit, counter)(messages[latest:])


def turn_tail_start(messages: Sequence[Message], *, head: int, counter: TokenCounter, limit: int | None,
                    budget_tokens: int, min_messages: int) -> int | None:
    """Where the tail begins inside a turn in progress that alone costs more than ``limit``
    (:func:`turn_over`): its latest rounds within ``budget_tokens`` (at least ``min_messages``,
    capped as :func:`tail_start` caps them), never a tool result first; the turn's user message then
    stays verbatim before them (in the head, when it is there) and its older rounds are compacted.
    ``None``: the turn is kept whole (within the limit, or nothing of it to compact)."""
    latest = last_real_user_index(messages)
    if latest < 0 or not turn_over(messages, counter=counter, limit=limit):
        return None
    start = max(latest + 1, head)  # a request inside the head stays there
    floor = min(min_messages, MAX_TAIL_MESSAGE_FLOOR, len(messages) - start)
    tail = align_start(messages, walk_back(messages, stop=start, counter=counter, budget_tokens=budget_tokens,
                                           floor=floor), floor=start)
    if tail <= start or tail >= len(messages) or role(messages[tail]) == "user":
        return None
    return tail


def forced_tail_start(messages: Sequence[Message], *, head: int) -> int:
    """The tail of a forced compaction: the latest real user message and everything after it (without
    one, the last message with the tool call its results answer); never inside the head."""
    latest = last_real_user_index(messages)
    start = latest if latest >= 0 else align_start(messages, len(messages) - 1)
    return max(head, start)


def nothing_between(head: int, *, forced: bool) -> str:
    """Why a compaction whose protected head ends at ``head`` found nothing to compact."""
    if not forced:  # a forced compaction would protect less: say what protects it all now
        return ("nothing to compact: the recent messages the tail protects (compression.target_ratio, "
                "protect_last_n, min_tail_user_messages) reach back to the protected head")
    turn = "the turn in progress (the latest user message and what follows it) is kept verbatim"
    if not head:
        return f"nothing to compact yet: {turn}, and nothing before it is worth compacting"
    return (f"nothing to compact yet: the first {head} messages are protected (compression.protect_first_n), "
            f"{turn}, and nothing between them is worth compacting")


def split(
    messages: Sequence[Message],
    *,
    counter: TokenCounter,
    protect_first_n: int,
    tail_budget_tokens: int,
    protect_last_n: int,
    min_tail_user_messages: int,
    turn_limit: int | None = None,
) -> Split:
    """Head and tail for one compaction; ``turn_limit``: see :func:`turn_tail_start`."""
    head = head_end(messages, protect_first_n)
    inner = turn_tail_start(messages, head=head, counter=counter, limit=turn_limit, budget_tokens=tail_budget_tokens,
                            min_messages=protect_last_n)
    if inner is not None:
        latest = last_real_user_index(messages)
        return Split(head_end=head, tail_start=inner, task=latest if latest >= head else None)
    tail = tail_start(messages, head=head, counter=counter, budget_tokens=tail_budget_tokens,
                      min_messages=protect_last_n, min_user_messages=min_tail_user_messages)
    return Split(head_end=head, tail_start=max(head, tail))


def costlier_than(tokens: int, counter: TokenCounter) -> Callable[[Sequence[Message]], bool]:
    """A ``too_big`` for :func:`place`: whether the messages together cost more than ``tokens`` (a
    paste, a long run of tool rounds). Settled by bounds where they suffice (:meth:`TokenCounter.at_least`,
    :meth:`TokenCounter.at_most`): the messages in question may be huge and nobody counted them."""
    def costlier(messages: Sequence[Message]) -> bool:
        least = 0
        for message in messages:
            least += counter.at_least(message, enough=tokens - least + 1)
            if least > tokens:
                return True
        most = 0
        for message in messages:
            bound = counter.at_most(message)
            most += bound if bound is not None else tokens + 1
            if most > tokens:
                break
        else:
            return False
        used = 0
        for message in messages:
            used += counter.count_message(message)
            if used > tokens:
                return True
        return False

    return costlier


def fit_insert(messages: Sequence[Message], parts: Split, *, has_user: bool,
               too_big: Callable[[Sequence[Message]], bool] | None = None) -> Split | None:
    """Where a message inserted between head and tail has a valid role: ``parts`` when it fits there,
    else the tail start moved back until it does.

    A summary must never create user/user or assistant/assistant neighbours, and must not be
    merged into the latest user message (which stays verbatim). ``None``: no such place exists.

    ``too_big``: whether the messages moving back would add more to the tail than it can take (a
    megabyte paste, a long run of tool rounds just before the tail the budget chose). Then, and when
    moving back finds no place, ``parts`` is kept and marked ``bridged``: the summary takes the user
    role with the assistant's bridge beside it (:func:`.messages.bridged`), where that alternates.
    """
    head = parts.head_end
    before = messages[head - 1] if head else None
    if parts.task is not None:  # the summary goes right before the task, bridged when no role fits there
        task = messages[parts.task]
        if summary_role(before, task, has_real_user=has_user) is not None:
            return parts
        return dataclasses.replace(parts, bridged=True) if bridge_first(before, task) is not None else None

    def fits(tail: int) -> bool:
        after = messages[tail] if tail < len(messages) else None
        return summary_role(before, after, has_real_user=has_user) is not None

    tail = parts.tail_start
    while tail > head and not fits(tail):
        tail = align_start(messages, tail - 1, floor=head)
    back = Split(head, tail) if tail > head else None
    run = messages[tail:parts.tail_start]
    # an earlier summary the move would keep in the tail would sit beside the new one, never read again
    if too_big is None or tail == parts.tail_start or (back is not None and not too_big(run)
                                                       and not any(is_summary(m) for m in run)):
        return back
    if bridge_first(before, parts.summary_after(messages)) is None:
        return back
    return Split(head, parts.tail_start, bridged=True)


def reach(messages: Sequence[Message], usual: Split, *, has_user: bool, force: bool) -> int:
    """The earliest message :func:`place` may look at beyond the middle it leaves (moving a tail start
    back reads what it passes): the earliest of the usual and the forced tail start and where moving
    each back would end; a turn's task, which it reads, for a split with one."""
    candidates = [usual] + ([Split(usual.head_end, forced_tail_start(messages, head=usual.head_end))] if force else [])
    starts = [c.tail_start if c.task is None else c.task for c in candidates]
    starts += [b.tail_start for c in candidates if (b := fit_insert(messages, c, has_user=has_user)) is not None]
    return min(starts)


def place(messages: Sequence[Message], usual: Split, *, has_user: bool, force: bool,
          worth: Callable[[Sequence[Message]], bool],
          too_big: Callable[[Sequence[Message]], bool] | None = None) -> Split | None:
    """Where a compaction puts its summary or marker: ``usual`` made to fit (:func:`fit_insert`, with
    ``too_big``; bridged where moving back would add too much) when the middle it leaves is ``worth``
    compacting; else, when forced, the same with the tail shrunk to the turn in progress
    (:func:`forced_tail_start`); ``None`` when neither has such a middle."""
    candidates = [usual]
    if force:
        candidates.append(Split(usual.head_end, forced_tail_start(messages, head=usual.head_end)))
    for candidate in candidates:
        parts = fit_insert(messages, candidate, has_user=has_user, too_big=too_big)
        if parts is not None and worth(parts.compacted(messages)):
            return parts
    return None

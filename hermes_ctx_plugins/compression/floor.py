"""The part of the prompt no compaction can shrink, and the room it leaves the conversation.

hermes counts the system prompt, the tool schemas and what memory providers add to a request in
the prompt it compares with the trigger, but hands a compaction only the messages. Where that floor
is a large share of the trigger (fifty tools, MCP servers, a long system prompt on a 64k model),
budgets sized on the trigger alone (a tail of 20% of it) keep everything: the compaction changes
nothing while the prompt grows towards the window, or makes room for one turn and runs again at the
next. So before each compaction the floor is known — hermes' engine counts it off its agent
(:mod:`..hermes.prompt_floor`), another host measures it (:func:`measure`) — and the strategies keep
their budgets within their share (at least :data:`ROOM_SHARE`) of what it leaves under the trigger
(:func:`fit`);
whether a compaction really cleared the trigger is judged on the provider's next count (see
:meth:`.base.CompressorStrategy.update_from_response`).
"""

from __future__ import annotations

from collections.abc import Sequence

from ..events import Message
from ..tokens import TokenCounter
from .messages import role

#: What a compaction may keep of the room the floor leaves under the trigger (its tail, a window's
#: budget): the rest is for the summary and for the turns until the next compaction.
ROOM_SHARE = 0.4


def measure(messages: Sequence[Message], *, counter: TokenCounter, last_prompt_tokens: int | None,
            current_tokens: int | None) -> int | None:
    """Tokens of the prompt outside ``messages``, or ``None`` when nothing says.

    ``last_prompt_tokens``: the provider's count of the last request, which held every message before
    the last assistant message (its answer); ``current_tokens``: the host's estimate of the next request
    (hermes': its messages and tool schemas, roughly; it rates Chinese low and schemas high, so it is
    used only without the count, or when the count says more than the whole next request, as one left
    over from another conversation would). A counter other than the provider's puts the difference in
    the floor, which is only ever a budget.
    """
    if current_tokens is not None and current_tokens <= 0:
        current_tokens = None
    # weighed as the host's estimate weighs them (chars / 4 where never counted), before counting below
    rough = counter.estimate_messages(messages)[0] if current_tokens is not None else 0
    if last_prompt_tokens and last_prompt_tokens > 0:
        last = next((i for i in range(len(messages) - 1, -1, -1) if role(messages[i]) == "assistant"), None)
        if last is not None:
            # counted, not estimated: chars/4 rates shell output and JSON ~40% low and prose ~18% high, and
            # the error would land in the floor (a coding session's tool results made a 13k floor look 52k)
            floor = last_prompt_tokens - counter.count_messages(messages[:last])
            if current_tokens is None or floor <= current_tokens:
                return max(0, floor)
    if current_tokens is not None:
        return max(0, current_tokens - rough)
    return None


def fit(budget: int, *, threshold: int | None, floor: int) -> int:
    """``budget`` (tokens of messages a compaction keeps), at most :data:`ROOM_SHARE` of the room
    ``floor`` leaves under ``threshold`` -- or, for a budget that is a larger share of the trigger than that
    (the pipeline's 50%), the same share of the room, so that a small floor shrinks it a little rather than
    by a fifth at once; unchanged when either is unknown. At least 1."""
    if not threshold or floor <= 0:
        return budget
    share = max(ROOM_SHARE, budget / threshold)
    return max(1, min(budget, int(max(0, threshold - floor) * share)))


def tail_count(protect_last_n: int, budget: int, *, threshold: int | None, floor: int) -> int:
    """``protect_last_n`` (the fewest recent messages a tail keeps whatever their size), or 0 when the floor
    squeezes ``budget`` (see :func:`fit`): the recent messages then stay only as the budget allows (and the
    turn in progress always)."""
    return protect_last_n if fit(budget, threshold=threshold, floor=floor) >= budget else 0


def holds_head(head: Sequence[Message], budget: int, *, threshold: int | None, floor: int,
               counter: TokenCounter) -> bool:
    """Whether to keep ``head`` (the first ``protect_first_n`` messages) out of a compaction whose budget would
    be ``budget`` but for the floor: always, unless the floor squeezes that budget and the head would take
    more than half of what is left (on a 64k model with fifty tools, a first message of a few thousand
    tokens kept verbatim leaves no compaction able to clear the trigger), or the head and that budget together
    come near the trigger (a first turn fanning out into a hundred file reads, whose results a head never splits
    from their calls: kept verbatim, no compaction could clear the trigger, nor later the window; a red-team
    pass)."""
    squeezed = fit(budget, threshold=threshold, floor=floor)
    size = counter.estimate_messages(head)[0]  # characters / 4, not tokenised: code or Chinese takes more
    if threshold and size + budget > threshold * 3 // 4:  # a quarter to spare for what the estimate misses
        return False
    return squeezed >= budget or size <= squeezed // 2


def note(prompt_tokens: int, *, threshold: int | None, floor: int) -> str:
    """Why a compaction did not clear the trigger, for the user."""
    return (f"the prompt stayed over the trigger after compacting ({prompt_tokens:,} >= {threshold or 0:,} "
            f"tokens): about {floor:,} of it is the system prompt, tool schemas and memory, which no "
            "compaction shrinks (fewer tools or a higher compression.threshold make room)")

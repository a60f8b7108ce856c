"""The part of hermes' next request no compaction can shrink, read off the agent that sends it.

hermes sends its system prompt (built once per session, ``_cached_system_prompt``, plus the agent's
``ephemeral_system_prompt``) and its tool schemas (``agent.tools``) with every request, and compares the
whole prompt with the trigger (see :mod:`..compression.floor`). Counted here exactly, with the counter
the strategies count messages with: unlike the provider's count less the messages (which needs the
history counted exactly, and is stale or missing after a compaction or a resume), it depends on no
history; unlike hermes' chars/4 estimate, it does not rate Chinese at a quarter or prose a fifth high.
Remembered while the prompt and the tool list are the same objects (hermes keeps both for a session).

The same count corrects hermes' estimate of the next request (:meth:`PromptFloor.corrected`): hermes weighs
that floor at chars/4 too, which rates a long English system prompt a fifth high and Chinese at a quarter;
where the floor is most of the trigger the estimate was over it every turn while the provider's count was
not (15 compactions in 16 turns with a 42k system prompt on a 64k model), or under it while the request was
over the window.
"""

from __future__ import annotations

import json
import sys
from typing import Any

from ..tokens import REPLY_PRIMING, get_counter

#: what the provider adds around the tool schemas it is sent (a namespace header), roughly
TOOLS_FRAMING = 12
#: a system message's own framing (role and separators)
SYSTEM_FRAMING = 4


class PromptFloor:
    """One engine copy's reading of its agent's floor (deep-copied with it: plain data)."""

    def __init__(self) -> None:
        self._key: tuple[Any, ...] | None = None
        self._tokens = 0
        self._rough: dict[str, int] = {}
        #: the last assistant message :meth:`unsent` weighed, and its copy as sent
        self._answer: tuple[Any, dict[str, Any] | None] = (None, None)

    def tokens(self, agent: Any, model: str) -> int | None:
        """The agent's system prompt and tool schemas in tokens of ``model``'s counter; ``None`` before its
        system prompt is built (no turn yet) or when the agent has none of hermes' attributes."""
        system = getattr(agent, "_cached_system_prompt", None)
        if not isinstance(system, str) or not system:
            return None
        ephemeral = getattr(agent, "ephemeral_system_prompt", None)
        ephemeral = ephemeral if isinstance(ephemeral, str) else ""
        tools = getattr(agent, "tools", None)
        tools = tools if isinstance(tools, list) else []
        key = (id(system), len(system), id(ephemeral), len(ephemeral), id(tools), len(tools), model)
        if key != self._key:
            effective = (system + "\n\n" + ephemeral).strip() if ephemeral else system
            counter = get_counter(model)
            counted = counter.count_text(effective) + SYSTEM_FRAMING
            if tools:
                try:
                    counted += counter.count_text(json.dumps(tools, ensure_ascii=False, default=str)) + TOOLS_FRAMING
                except (TypeError, ValueError):  # a schema no JSON holds: hermes could not send it either
                    pass
            self._key, self._tokens, self._rough = key, counted, _rough(system, ephemeral, tools)
        return self._tokens

    def corrected(self, estimate: int, agent: Any, model: str) -> int:
        """``estimate`` (hermes' rough estimate of the next request, system prompt and tools included) with its
        chars/4 weighing of those replaced by their count; ``estimate`` itself when the caller is not one of
        hermes' two estimates (found in the calling frames) or the agent has no system prompt yet."""
        kind, _ = _estimate_caller(sys._getframe(2))
        if kind is None or self.tokens(agent, model) is None:
            return estimate
        rough = self._rough.get(kind, 0)
        return estimate if estimate < rough else estimate - rough + self._tokens

    def unsent(self, model: str, room: int | None = None) -> int:
        """The messages the provider's last count did not hold, counted: the history's last assistant message (what
        that count's request produced) and those after it, in the list hermes is estimating -- the turn's new user
        message, or the tool results appended since the last request. 0 where no estimate of hermes' calls.

        hermes weighs them at chars/4, which rates Chinese at a quarter and shell output ~40% low; where the
        correction of the floor took a long English system prompt's over-weighing out of the estimate, nothing
        made up for that any more (a 24k-token Chinese file read after a 30k system prompt on a 64k model:
        the request was sent at 68.7k and refused). ``room``: what the caller can take before it matters (the
        trigger less that count); when those messages cannot reach it (a token is at least a byte), they are not
        counted and 0 is returned: counting each turn's new question and answer cost ~0.4 ms a turn."""
        _, frame = _estimate_caller(sys._getframe(2))
        messages = frame.f_locals.get("messages") if frame is not None else None
        if not isinstance(messages, list) or not messages:
            return 0
        last = next((i for i in range(len(messages) - 1, -1, -1)
                     if isinstance(messages[i], dict) and messages[i].get("role") == "assistant"), -1)
        if last < 0:
            return 0
        # that assistant message is the count's request's output, not in its prompt: weighed as sent (its
        # reasoning is not always sent back)
        tail = [self._as_sent(messages[last])] + [m for m in messages[last + 1:] if isinstance(m, dict)]
        if room is not None and _most_tokens(tail) < room:
            return 0
        return max(0, get_counter(model).count_messages(tail) - REPLY_PRIMING)

    def _as_sent(self, message: dict[str, Any]) -> dict[str, Any]:
        """What of the last assistant message goes back to the provider: the same copy while the message's parts
        are the same objects, so the counter's memo knows it (a 2k-token answer took 0.7 ms to count again)."""
        source, copy = self._answer
        if source is message and copy is not None and all(copy.get(key) is message.get(key) for key in _SENT):
            return copy
        copy = {key: message[key] for key in _SENT if key in message}
        self._answer = (message, copy)
        return copy


def _rough(system: str, ephemeral: str, tools: list[Any]) -> dict[str, int]:
    """hermes' own weighing of the floor in each of its two estimates: the turn's preflight (``turn_context``:
    the cached system prompt alone) and the check before each request (``conversation_loop``: the system
    message as sent, the ephemeral prompt included); both add the tool schemas."""
    from agent.model_metadata import _estimate_tools_tokens_rough, estimate_messages_tokens_rough

    schemas = _estimate_tools_tokens_rough(tools) if tools else 0
    effective = (system + "\n\n" + ephemeral).strip() if ephemeral else system
    return {"turn": (len(system) + 3) // 4 + schemas,
            "request": estimate_messages_tokens_rough([{"role": "system", "content": effective}]) + schemas}


#: the hermes modules whose estimate of the next request reaches ``should_compress``, and which estimate
_ESTIMATES = (("turn_context.py", "turn"), ("conversation_loop.py", "request"))


def _estimate_caller(frame: Any) -> tuple[str | None, Any]:
    """Which of hermes' estimates the engine is asked about, and that hermes frame, from ``frame`` (the
    engine's ``should_compress``) and a few calling it; ``(None, None)`` when neither calls."""
    for _ in range(6):
        if frame is None:
            return None, None
        name = frame.f_code.co_filename.replace("\\", "/")
        if "/agent/" in name:
            for module, kind in _ESTIMATES:
                if name.endswith("/agent/" + module):
                    return kind, frame
        frame = frame.f_back
    return None, None


#: what of an assistant message goes back to the provider, weighed by :meth:`PromptFloor.unsent`
_SENT = ("role", "content", "tool_calls")
#: a bound on one message's framing, role and tool-call ids in tokens
_FRAMING_BOUND = 16


def _most_tokens(messages: list[dict[str, Any]]) -> int:
    """An upper bound on what ``messages`` count (a byte-level token holds at least one byte): their strings'
    UTF-8 bytes, anything else at its ``str`` form's, and a framing bound per message; cheap next to counting."""
    most = 0
    for message in messages:
        most += _FRAMING_BOUND
        for value in message.values():
            if isinstance(value, str):
                most += len(value.encode("utf-8", "surrogatepass"))
            elif value is not None:
                most += len(str(value).encode("utf-8", "surrogatepass")) + _FRAMING_BOUND
    return most

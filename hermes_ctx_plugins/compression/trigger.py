"""When to compress, and when to stop trying for a while.

:func:`threshold_tokens` is the trigger arithmetic; :class:`CompressionGuard` is the anti-thrash
state machine: failure cool-downs, blocking after repeated ineffective or fallback compactions,
and the single probe after :data:`PROBE_AFTER_SECONDS`.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass

#: Never trigger above this share of the (input) window: compaction must fire before a 400.
MAX_TRIGGER_RATIO = 0.85
#: Windows under this size trigger at no less than SMALL_WINDOW_FLOOR (as in hermes 0.19.0).
SMALL_WINDOW_LIMIT = 512_000
SMALL_WINDOW_FLOOR = 0.75
#: No trigger below this many tokens unless the window is too small for it (hermes 0.19.0's
#: ``MINIMUM_CONTEXT_LENGTH``): a 64k model then triggers at MAX_TRIGGER_RATIO of its window, not at 75%.
MINIMUM_TRIGGER_TOKENS = 64_000
#: A compaction that saves less than this share of the tokens is "ineffective".
INEFFECTIVE_SAVING = 0.10
#: Consecutive ineffective or fallback compactions that block automatic compression.
BLOCK_AFTER = 2
#: How long a block lasts before one probe compaction is allowed.
PROBE_AFTER_SECONDS = 300.0
#: Summary-failure cool-downs (as hermes 0.19.0's).
COOLDOWN_UNCONFIGURED = 600.0
COOLDOWN_TIMEOUTS = (60.0, 300.0, 900.0)
COOLDOWN_BAD_RESPONSE = 30.0
COOLDOWN_OTHER = 60.0


def threshold_percent(model: str, default: float, overrides: Mapping[str, float]) -> tuple[float, bool]:
    """The trigger share for ``model``: the longest matching ``model_thresholds`` key, else ``default``.

    Returns ``(percent, explicit)``; ``explicit`` is True when a per-model override applied.
    """
    name = model.lower()
    matches = [key for key in overrides if key.lower() in name]
    if matches:
        return overrides[max(matches, key=len)], True
    return default, False


def threshold_tokens(
    context_length: int | None,
    *,
    percent: float,
    explicit_percent: bool = False,
    max_tokens: int | None = None,
    absolute: int | None = None,
    cap: int | None = None,
) -> int | None:
    """The prompt size that triggers compression, or ``None`` when nothing bounds it.

    ``context_length * percent - max_tokens``, where windows under 512K use at least 0.75 unless a
    per-model override says otherwise, and (without one) no less than :data:`MINIMUM_TRIGGER_TOKENS`
    (as hermes' own compressor), never above 85% of the input window; an absolute ``threshold_tokens`` or
    ``threshold_tokens_cap`` lowers it further.
    """
    limits = [t for t in (absolute, cap) if t]
    if context_length:
        if context_length < SMALL_WINDOW_LIMIT and not explicit_percent:
            percent = max(percent, SMALL_WINDOW_FLOOR)
        reserve = max_tokens if max_tokens and max_tokens < context_length else 0
        computed = int(context_length * percent) - reserve
        if not explicit_percent:
            computed = max(computed, MINIMUM_TRIGGER_TOKENS)
        ceiling = int((context_length - reserve) * MAX_TRIGGER_RATIO)
        limits.append(max(1, min(computed, ceiling)))
    return min(limits) if limits else None


@dataclass
class GuardState:
    """What the guard remembers; plain data so the strategy stays deep-copyable."""

    cooldown_until: float = 0.0
    consecutive_timeouts: int = 0
    ineffective_streak: int = 0
    fallback_streak: int = 0
    #: compactions in a row after which the provider still counted a prompt at the trigger
    uncleared_streak: int = 0
    blocked_until: float | None = None
    probing: bool = False


class CompressionGuard:
    """Decides whether automatic compression may run now, and learns from each attempt."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        self.state = GuardState()

    # -- asking
    def blocked_reason(self) -> str | None:
        """Why automatic compression must not run now, or ``None`` when it may."""
        now = self.clock()
        state = self.state
        if now < state.cooldown_until:
            return f"summary model cooling down for {state.cooldown_until - now:.0f}s after a failure"
        if state.blocked_until is not None:
            if now < state.blocked_until:
                if state.uncleared_streak >= BLOCK_AFTER:
                    return (f"{state.uncleared_streak} compactions in a row left the prompt over the trigger; "
                            f"next probe in {state.blocked_until - now:.0f}s")
                return (f"blocked after {max(state.ineffective_streak, state.fallback_streak)} "
                        f"ineffective or fallback compactions; next probe in {state.blocked_until - now:.0f}s")
            state.probing = True  # one probe is allowed; its outcome decides
        return None

    def floor_block_only(self) -> bool:
        """Whether automatic compression is blocked only because compactions left the prompt over the trigger (no
        cool-down, no streak of ineffective or fallback compactions)."""
        state = self.state
        return (state.blocked_until is not None and state.uncleared_streak >= BLOCK_AFTER
                and max(state.ineffective_streak, state.fallback_streak) < BLOCK_AFTER and not self.in_cooldown())

    def in_cooldown(self) -> bool:
        return self.cooldown_remaining() > 0

    def cooldown_remaining(self) -> float:
        """Seconds left in the summary-failure cool-down (0 when there is none)."""
        return max(0.0, self.state.cooldown_until - self.clock())

    # -- learning
    def record_compaction(self, *, saved_ratio: float, used_fallback: bool) -> bool:
        """Record a finished compaction; returns True when this newly blocks automatic compression."""
        state = self.state
        state.ineffective_streak = state.ineffective_streak + 1 if saved_ratio < INEFFECTIVE_SAVING else 0
        state.fallback_streak = state.fallback_streak + 1 if used_fallback else 0
        if state.probing and state.uncleared_streak >= BLOCK_AFTER:
            return False  # a probe after compactions that left the prompt over: the provider's count decides
        return self._judge()

    def record_cleared(self, cleared: bool) -> bool:
        """Record what the provider counted after a compaction (whether the prompt got under the trigger);
        returns True when this newly blocks automatic compression. Judged apart from the messages' saving:
        a compaction can halve them and leave the prompt over the trigger when the system prompt and tool
        schemas alone nearly fill it, and then the next turn compacts again, for ever."""
        state = self.state
        state.uncleared_streak = 0 if cleared else state.uncleared_streak + 1
        return self._judge()

    def _judge(self) -> bool:
        state = self.state
        failed = max(state.ineffective_streak, state.fallback_streak, state.uncleared_streak) >= BLOCK_AFTER
        was_probe, state.probing = state.probing, False
        if failed and (was_probe or state.blocked_until is None):
            state.blocked_until = self.clock() + PROBE_AFTER_SECONDS
            return True
        if not failed:
            state.blocked_until = None
        return False

    def record_summary_success(self) -> None:
        self.state.cooldown_until = 0.0
        self.state.consecutive_timeouts = 0

    def record_summary_failure(self, kind: str) -> float:
        """Start the cool-down for a summary failure of ``kind``; returns its length in seconds.

        ``kind`` is ``unconfigured``, ``timeout``, ``bad_response`` or anything else.
        """
        state = self.state
        if kind == "timeout":
            seconds = COOLDOWN_TIMEOUTS[min(state.consecutive_timeouts, len(COOLDOWN_TIMEOUTS) - 1)]
            state.consecutive_timeouts += 1
        else:
            state.consecutive_timeouts = 0
            seconds = {"unconfigured": COOLDOWN_UNCONFIGURED,
                       "bad_response": COOLDOWN_BAD_RESPONSE}.get(kind, COOLDOWN_OTHER)
        state.cooldown_until = self.clock() + seconds
        return seconds

    def bypass(self) -> None:
        """Let one manual ``/compress`` through a cool-down or block; it counts as the probe.

        The timeout ladder and the streaks are kept: a forced run that fails again escalates
        and re-blocks exactly like an automatic one.
        """
        state = self.state
        state.cooldown_until = 0.0
        if state.blocked_until is not None:
            state.probing = True

    def clear(self) -> None:
        """Forget every cool-down and block (a new session)."""
        self.state = GuardState()

"""The trigger (prompt tokens against a threshold derived from the window), the anti-thrash block and the
summary-failure cool-downs, with an injectable clock."""

from __future__ import annotations

import pytest

from hermes_ctx_plugins.compression import trigger
from hermes_ctx_plugins.compression.trigger import CompressionGuard


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


@pytest.mark.parametrize(
    ("context_length", "percent", "explicit", "max_tokens", "absolute", "cap", "expected"),
    [
        (1_000_000, 0.50, False, None, None, None, 500_000),       # large window: the percent as set
        (128_000, 0.50, False, None, None, None, 96_000),          # < 512K: floored at 0.75
        (128_000, 0.80, False, None, None, None, 102_400),         # a higher percent wins over the floor
        (128_000, 0.95, False, None, None, None, 108_800),         # never above 85% of the window
        (128_000, 0.40, True, None, None, None, 51_200),           # a per-model override is not floored
        (1_000_000, 0.50, False, 100_000, None, None, 400_000),    # minus the output reserve
        (200_000, 0.85, False, 40_000, None, None, 130_000),       # 200K x 0.85 - 40K reserve
        (200_000, 0.99, False, 10_000, None, None, 161_500),       # capped at 85% of 200K-10K
        (1_000_000, 0.50, False, None, 300_000, None, 300_000),    # absolute threshold_tokens: min
        (1_000_000, 0.50, False, None, None, 250_000, 250_000),    # threshold_tokens_cap: min
        (None, 0.50, False, None, 50_000, None, 50_000),           # unknown window, absolute given
        (None, 0.50, False, None, None, None, None),               # nothing bounds it
    ],
)
def test_threshold_tokens(context_length: int | None, percent: float, explicit: bool,
                          max_tokens: int | None, absolute: int | None, cap: int | None,
                          expected: int | None) -> None:
    assert trigger.threshold_tokens(context_length, percent=percent, explicit_percent=explicit,
                                    max_tokens=max_tokens, absolute=absolute, cap=cap) == expected


def test_model_thresholds_longest_substring_wins() -> None:
    overrides = {"glm": 0.3, "glm-5.2": 0.4, "GPT-4o": 0.6}
    assert trigger.threshold_percent("zai/glm-5.2-air", 0.5, overrides) == (0.4, True)
    assert trigger.threshold_percent("glm-4.6", 0.5, overrides) == (0.3, True)
    assert trigger.threshold_percent("openai/gpt-4o-mini", 0.5, overrides) == (0.6, True)
    assert trigger.threshold_percent("claude-sonnet", 0.5, overrides) == (0.5, False)


def test_two_ineffective_compactions_block_then_one_probe() -> None:
    clock = Clock()
    guard = CompressionGuard(clock)
    assert guard.blocked_reason() is None
    assert guard.record_compaction(saved_ratio=0.05, used_fallback=False) is False
    assert guard.blocked_reason() is None                         # one is not enough
    assert guard.record_compaction(saved_ratio=0.09, used_fallback=False) is True
    assert "blocked after 2" in (guard.blocked_reason() or "")
    clock.now += 299
    assert guard.blocked_reason() is not None
    clock.now += 2
    assert guard.blocked_reason() is None                         # the probe may run
    assert guard.record_compaction(saved_ratio=0.02, used_fallback=False) is True   # probe failed
    assert guard.blocked_reason() is not None                     # blocked again
    clock.now += 301
    assert guard.blocked_reason() is None
    assert guard.record_compaction(saved_ratio=0.40, used_fallback=False) is False  # probe succeeded
    assert guard.blocked_reason() is None
    assert guard.state.ineffective_streak == 0


def test_two_fallback_compactions_block() -> None:
    guard = CompressionGuard(Clock())
    guard.record_compaction(saved_ratio=0.6, used_fallback=True)
    assert guard.blocked_reason() is None
    assert guard.record_compaction(saved_ratio=0.6, used_fallback=True) is True
    assert guard.blocked_reason() is not None


def test_a_good_compaction_resets_the_streak() -> None:
    guard = CompressionGuard(Clock())
    guard.record_compaction(saved_ratio=0.01, used_fallback=False)
    guard.record_compaction(saved_ratio=0.50, used_fallback=False)
    guard.record_compaction(saved_ratio=0.01, used_fallback=False)
    assert guard.blocked_reason() is None


@pytest.mark.parametrize(
    ("kinds", "expected"),
    [
        (["unconfigured"], 600),
        (["timeout"], 60),
        (["timeout", "timeout"], 300),
        (["timeout", "timeout", "timeout"], 900),
        (["timeout", "timeout", "timeout", "timeout"], 900),
        (["timeout", "bad_response"], 30),
        (["unavailable"], 60),
    ],
)
def test_cooldown_ladder(kinds: list[str], expected: float) -> None:
    clock = Clock()
    guard = CompressionGuard(clock)
    for kind in kinds:
        seconds = guard.record_summary_failure(kind)
    assert seconds == expected
    assert guard.in_cooldown() and "cooling down" in (guard.blocked_reason() or "")
    assert guard.cooldown_remaining() == expected
    clock.now += expected - 1
    assert guard.in_cooldown() and guard.cooldown_remaining() == 1
    clock.now += 1
    assert not guard.in_cooldown() and guard.blocked_reason() is None
    assert guard.cooldown_remaining() == 0


def test_success_resets_the_timeout_ladder() -> None:
    guard = CompressionGuard(Clock())
    guard.record_summary_failure("timeout")
    guard.record_summary_success()
    assert guard.record_summary_failure("timeout") == 60

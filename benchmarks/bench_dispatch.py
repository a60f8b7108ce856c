"""Lifecycle dispatch overhead: our host with 10 plugins vs calling the 10 functions directly.

Run: ``python benchmarks/bench_dispatch.py``. Prints medians and p95 over many repeats, side by
side with plain pluggy (``pm.hook.turn_finalized(...)``, no isolation) for reference.
Goal (issue 2): our overhead under 30 µs per dispatched call with 10 plugins.
"""

from __future__ import annotations

import statistics
import time
from typing import Any

import pluggy

from hermes_ctx_plugins import Request, SessionInfo, Turn, hookimpl, hookspecs, load_host

N_PLUGINS = 10
CALLS_PER_SAMPLE = 200
SAMPLES = 300


def make_plugin(i: int) -> Any:
    class Plugin:
        __name__ = f"bench-{i}"

        def __init__(self) -> None:
            self.seen = 0

        @hookimpl
        def turn_finalized(self, turn: Turn) -> None:
            self.seen += 1

        @hookimpl
        def pre_request(self, request: Request) -> str | None:
            self.seen += 1
            return None

    return Plugin()


def per_call_us(fn: Any) -> list[float]:
    samples = []
    for _ in range(SAMPLES):
        start = time.perf_counter_ns()
        for _ in range(CALLS_PER_SAMPLE):
            fn()
        samples.append((time.perf_counter_ns() - start) / CALLS_PER_SAMPLE / 1000)
    return samples


def p95(values: list[float]) -> float:
    return sorted(values)[int(len(values) * 0.95)]


def main() -> None:
    plugins = [make_plugin(i) for i in range(N_PLUGINS)]
    host = load_host({}, plugins=plugins)
    session = SessionInfo(session_id="s", user_id="u")
    turn = Turn(session=session, turn_number=1, user_text="hi", assistant_text="hello")
    request = Request(session=session, messages=[], model="m", token_estimate=1)

    functions = [p.turn_finalized for p in plugins]

    def direct() -> None:
        for fn in functions:
            fn(turn)

    pm = pluggy.PluginManager(hookspecs.PROJECT_NAME)
    pm.add_hookspecs(hookspecs)
    for p in [make_plugin(i) for i in range(N_PLUGINS)]:
        pm.register(p)

    rows = [
        ("direct: 10 function calls", per_call_us(direct)),
        ("plain pluggy pm.hook.turn_finalized", per_call_us(lambda: pm.hook.turn_finalized(turn=turn))),
        ("host.turn_finalized (isolated)", per_call_us(lambda: host.turn_finalized(turn))),
        ("host.pre_request (isolated, collect)", per_call_us(lambda: host.pre_request(request))),
    ]
    base = statistics.median(rows[0][1])
    print(f"lifecycle dispatch, {N_PLUGINS} plugins, {SAMPLES} samples x {CALLS_PER_SAMPLE} calls")
    print(f"{'what':40} {'median µs':>10} {'p95 µs':>8} {'overhead µs':>12}")
    for label, samples in rows:
        median = statistics.median(samples)
        print(f"{label:40} {median:10.2f} {p95(samples):8.2f} {median - base:12.2f}")
    overhead = statistics.median(rows[2][1]) - base
    print(f"\nour overhead per turn_finalized dispatch: {overhead:.2f} µs (goal < 30 µs): "
          f"{'OK' if overhead < 30 else 'MISSED'}")


if __name__ == "__main__":
    main()

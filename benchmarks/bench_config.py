"""Benchmark: what reading the config costs, and what pydantic v2 would cost in its place.

Run from the repository root::

    .venv/bin/python benchmarks/bench_config.py            # 7 import runs, 300 loads
    .venv/bin/python benchmarks/bench_config.py --quick    # 3 import runs, 50 loads

It measures, in fresh processes (``python -X importtime``), the import time of
``hermes_ctx_plugins.config`` (our settings, the YAML reader and the option validator) and of
``pydantic`` (the alternative validation library, present wherever hermes-agent is); then, in this
process, ``load_config`` on a realistic file — hermes-agent's own full default config (about 15 KB)
plus a ``ctx_plugins:`` section with options for every built-in strategy and two deployments —
and the validation step alone (mapping -> frozen settings) beside pydantic validating the same
dataclasses (``TypeAdapter``), including the one-off cost of building pydantic's validators.
Medians are reported, with the minimum beside them (the machine is shared: the minimum is the
least disturbed run).
"""

from __future__ import annotations

import argparse
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

CTX_SECTION: dict[str, Any] = {
    "compressor": "pipeline",
    "memory": {"providers": ["file", "ctx-local"], "namespace": "acme"},
    "disabled": ["window"],
    "failure_threshold": 4,
    "cooldown_seconds": 90,
    "options": {
        "summarize": {"summary_ratio": 0.25, "input_char_cap": 120_000, "redact_secrets": True},
        "prune": {"min_prune_chars": 300},
        "pipeline": {"steps": ["prune", "summarize"], "budget_ratio": 0.4},
        "file": {"write_approval": "stage", "review": "auto"},
        "ctx-local": {"budget_tokens": 600, "max_results": 6, "recency_weight": 0.2},
    },
    "archive": {"retention_days": 14, "scope": "user"},
    "deployments": {
        "support-bot": {"compressor": "prune", "options": {"prune": {"min_prune_chars": 100}},
                        "compression": {"threshold": 0.6}},
        "research": {"memory": {"providers": ["file"]}, "disabled": ["prune"]},
    },
}


def config_text() -> str:
    try:
        from hermes_cli.config import DEFAULT_CONFIG
    except ImportError:  # hermes-agent not installed: the ctx_plugins section alone
        hermes: dict[str, Any] = {}
    else:
        hermes = dict(DEFAULT_CONFIG)
    return yaml.safe_dump({**hermes, "ctx_plugins": CTX_SECTION}, sort_keys=False)


def import_ms(module: str, runs: int) -> list[float]:
    """Cumulative import time of ``module`` and what it imports, in fresh interpreters, in ms."""
    pattern = re.compile(rf"^import time:\s+\d+ \|\s+(\d+) \|\s+{re.escape(module)}$", re.MULTILINE)
    times = []
    for _ in range(runs):
        done = subprocess.run([sys.executable, "-X", "importtime", "-c", f"import {module}"],
                              capture_output=True, text=True, check=True)
        times.append(int(pattern.findall(done.stderr)[0]) / 1000)
    return times


def statement_ms(statement: str, runs: int) -> list[float]:
    """What running ``statement`` first thing in fresh interpreters takes, in ms."""
    code = f"import time; t = time.perf_counter(); {statement}; print(time.perf_counter() - t)"
    return [float(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                                 check=True).stdout) * 1000 for _ in range(runs)]


def per_call_ms(call: Callable[[], object], runs: int) -> list[float]:
    call()  # warm caches (type hints, the YAML loader's classes)
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        call()
        times.append((time.perf_counter() - start) * 1000)
    return times


def show(label: str, times: list[float]) -> None:
    print(f"  {label:<58} median {statistics.median(times):8.3f} ms   min {min(times):8.3f} ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer runs")
    args = parser.parse_args()
    imports, loads = (3, 50) if args.quick else (7, 300)

    print(f"import time, fresh interpreter ({imports} runs)")
    show("import hermes_ctx_plugins.config", import_ms("hermes_ctx_plugins.config", imports))
    show("import pydantic", statement_ms("import pydantic", imports))
    # pydantic imports its parts lazily: time what validating would need too
    show("from pydantic import TypeAdapter, ValidationError", statement_ms(
        "from pydantic import TypeAdapter, ValidationError", imports))

    from hermes_ctx_plugins.config import PluginSettings, build_dataclass, load_config

    text = config_text()
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "config.yaml"
        path.write_text(text, encoding="utf-8")
        print(f"\nload_config, {len(text.encode()) / 1024:.1f} KB file ({loads} runs)")
        show("load_config(path)  (read, YAML, limits, lines, validate)", per_call_ms(lambda: load_config(path), loads))
        show("load_config(path, deployment='support-bot')",
             per_call_ms(lambda: load_config(path, deployment="support-bot"), loads))
    show("validation only: ctx_plugins -> PluginSettings", per_call_ms(
        lambda: build_dataclass(PluginSettings, CTX_SECTION, "ctx_plugins"), loads))
    try:
        import pydantic
    except ImportError:
        print("  (pydantic is not installed: no comparison)")
        return
    start = time.perf_counter()
    adapter = pydantic.TypeAdapter(PluginSettings)
    built = (time.perf_counter() - start) * 1000
    print(f"  {'pydantic: building the validator for PluginSettings (once)':<58} {built:8.3f} ms")
    show("pydantic: ctx_plugins -> PluginSettings", per_call_ms(lambda: adapter.validate_python(CTX_SECTION), loads))


if __name__ == "__main__":
    main()

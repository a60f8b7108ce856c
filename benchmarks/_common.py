"""Helpers every benchmark shares: the machine line, and the goal rows ``run.py`` collects.

A benchmark given ``--summary-json PATH`` writes there a JSON list of goal rows::

    [{"goal": "...", "measured": 0.31, "limit": 0.5, "unit": "x", "ok": true, "anchor": "hermes 1.2 s"}, ...]
"""

from __future__ import annotations

import json
import os
import platform
import sys
from pathlib import Path
from typing import Any


def machine_line() -> str:
    """``machine: <OS>, <CPU>, <cores>, Python <version>, load <1-minute load average>``."""
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    load = f", load {os.getloadavg()[0]:.1f}" if hasattr(os, "getloadavg") else ""
    return (f"machine: {platform.system()} {platform.release()}, {cpu}, {os.cpu_count()} cores, "
            f"Python {platform.python_version()}{load}")


def collect(processes: list[Any], results: Any, expected: int) -> list[Any]:
    """Start ``processes``, gather ``expected`` reports from the ``results`` queue (stopping early when a
    process died: the others may wait at a start barrier forever), then join them (terminating any left
    after 60 s)."""
    import queue

    for process in processes:
        process.start()
    reports: list[Any] = []
    while len(reports) < expected:
        try:
            reports.append(results.get(timeout=1.0))
        except queue.Empty:
            if any(process.exitcode not in (None, 0) for process in processes):
                break
    for process in processes:
        process.join(timeout=60)
        if process.is_alive():
            process.terminate()
    return reports


def write_summary(path: str, rows: list[dict[str, Any]]) -> None:
    """Write the goal rows for ``run.py`` (see the module docstring)."""
    Path(path).write_text(json.dumps(rows, indent=1, ensure_ascii=False), encoding="utf-8")


if __name__ == "__main__":
    sys.exit("a helper module, not a benchmark")

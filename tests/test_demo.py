"""``hermes-ctx demo`` — the README's main job — run as a user would, in a subprocess."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("run_agent", reason="the hermes extra is not installed")


def test_demo_compresses_and_recalls_with_no_network(tmp_path: Path) -> None:
    keep = tmp_path / "demo-home"
    env = {**os.environ, "HOME": str(tmp_path), "MEM0_TELEMETRY": "False"}
    env.pop("HERMES_HOME", None)
    command = Path(sys.executable).with_name("hermes-ctx")
    done = subprocess.run([str(command), "demo", "--keep", str(keep), "--json"], env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    out = done.stdout
    assert "engine: hermes-ctx running 'summarize'" in out
    assert "<- compressed" in out and "[done] compressed" in out
    report = json.loads(out[out.index("{\n"):])
    assert report["compressions"] >= 1 and report["summary_requests"] >= 1
    assert report["recalled"] is True
    assert report["tokens_after"] < report["tokens_before"]
    assert (keep / "config.yaml").exists() and (keep / "workspace" / "build.log").exists()

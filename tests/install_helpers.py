"""What the `hermes-ctx install` / `doctor` tests share: hermes' own CLI, run as the user would run it."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

BIN = Path(sys.executable).parent


def hermes(*args: str, env: Mapping[str, str] | None = None, ok: bool = True) -> subprocess.CompletedProcess[str]:
    """``hermes ARGS`` in ``env`` (default: this process'), no terminal; with ``ok``, it must exit 0."""
    done = subprocess.run([str(BIN / "hermes"), *args], env=dict(os.environ if env is None else env),
                          capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    if ok:
        assert done.returncode == 0, done.stderr[-2000:]
    return done

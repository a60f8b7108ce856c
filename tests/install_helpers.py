"""What the `hermes-ctx install` / `doctor` tests share: hermes' own CLI, run as the user would run it; and an
installed plugin distribution that fails to import."""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

import pytest

BIN = Path(sys.executable).parent


def hermes(*args: str, env: Mapping[str, str] | None = None, ok: bool = True) -> subprocess.CompletedProcess[str]:
    """``hermes ARGS`` in ``env`` (default: this process'), no terminal; with ``ok``, it must exit 0."""
    done = subprocess.run([str(BIN / "hermes"), *args], env=dict(os.environ if env is None else env),
                          capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    if ok:
        assert done.returncode == 0, done.stderr[-2000:]
    return done


def install_broken_plugin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A distribution ``broken-plugin`` whose entry point (``broken``) raises ImportError, on ``sys.path``."""
    broken = tmp_path / "site"
    dist_info = broken / "broken_plugin-0.1.dist-info"
    dist_info.mkdir(parents=True)
    (dist_info / "METADATA").write_text("Metadata-Version: 2.1\nName: broken-plugin\nVersion: 0.1\n")
    (dist_info / "entry_points.txt").write_text("[hermes_ctx_plugins]\nbroken = broken_plugin_mod\n")
    (broken / "broken_plugin_mod.py").write_text("raise ImportError('missing dependency foo')\n")
    monkeypatch.syspath_prepend(str(broken))
    importlib.invalidate_caches()

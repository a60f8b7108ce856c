"""Writing a config file for a test, and finding the line an error must name in it."""

from __future__ import annotations

import textwrap
from pathlib import Path

#: marks the line of a test's config that the error must point at
MARK = "# <-"


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "config.yaml"
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def marked_line(path: Path) -> int:
    """The line of ``path`` that carries the ``# <-`` marker: where the error must point."""
    lines = path.read_text(encoding="utf-8").splitlines()
    return next(n for n, line in enumerate(lines, 1) if MARK in line)

"""What the ctx-local test modules share (their provider factory is the ``make`` fixture in conftest)."""

from __future__ import annotations

import os
from pathlib import Path

from hermes_ctx_plugins import SessionInfo, Turn
from hermes_ctx_plugins.memory.local import LocalProvider


def home() -> Path:
    return Path(os.environ["HERMES_HOME"])


def say(provider: LocalProvider, session: SessionInfo, text: str, n: int = 1) -> None:
    provider.sync_turn(Turn(session=session, turn_number=n, user_text=text, assistant_text="noted"))

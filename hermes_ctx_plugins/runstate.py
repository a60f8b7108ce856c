"""What a running host looks like from another process.

A host running inside hermes (or any long-lived process) writes its plugins' health to
``$HERMES_HOME/ctx_plugins/running.json`` when it starts and at every status event (a plugin
suspended, resumed, failed to load); ``hermes-ctx plugins`` and ``doctor`` read it back, so a
suspension inside hermes is visible from a shell. The file says which process wrote it and when;
a reader tells whether that process is still alive.
"""

from __future__ import annotations

import json
import logging
import os
import threading
import time
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .isolation import StatusEvent
from .storage.files import atomic_write, locked

if TYPE_CHECKING:
    from .manager import Host

log = logging.getLogger("hermes_ctx_plugins")

FILE_NAME = "running.json"


def state_path(hermes_home: Path) -> Path:
    return Path(hermes_home) / "ctx_plugins" / FILE_NAME


class RunningState:
    """Publishes one host's health; pass :meth:`on_event` as the host's ``status_callback``."""

    def __init__(self, hermes_home: Path, *, forward: Any = None) -> None:
        self.path = state_path(hermes_home)
        self.host: Host | None = None
        #: another status callback to pass every event on to
        self.forward = forward
        self._lock = threading.Lock()

    def on_event(self, event: StatusEvent) -> None:
        self.write(event)
        if self.forward is not None:
            self.forward(event)

    def write(self, event: StatusEvent | None = None) -> None:
        """Write the host's current state (never raises: a read-only home costs only this file)."""
        host = self.host
        if host is None:
            return
        data = {
            "pid": os.getpid(), "updated": time.time(), "config": host.config.source,
            "deployment": host.config.deployment,
            "plugins": [asdict(r) for r in host.plugins()],
            "loaded": [asdict(p) for p in host.loaded_plugins()],
            "last_event": asdict(event) if event is not None else None,
        }
        with self._lock:
            try:  # several processes may share the home: the lock keeps one writer at a time
                with locked(self.path):
                    atomic_write(self.path, json.dumps(data, default=str).encode("utf-8"))
            except OSError as exc:
                log.debug("cannot write %s: %s", self.path, exc)


def read_state(hermes_home: Path) -> dict[str, Any] | None:
    """What a running host last published, with ``alive`` (is its process still running?);
    ``None`` when nothing was published or it cannot be read."""
    try:
        data = json.loads(state_path(hermes_home).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or not isinstance(data.get("pid"), int):
        return None
    data["alive"] = _alive(data["pid"])
    return data


def _alive(pid: int) -> bool:
    if pid <= 0:  # 0 and negative numbers would signal process groups
        return False
    try:
        os.kill(pid, 0)
    except (ProcessLookupError, OverflowError):
        return False
    except PermissionError:  # it exists, owned by someone else
        return True
    return True

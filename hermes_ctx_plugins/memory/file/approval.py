"""Staged memory writes (``write_approval: stage``): held until the user approves or rejects them.

A JSON file beside MEMORY.md, rewritten atomically under its own cross-process lock; approving
applies the operations through the store (limits, duplicates and the threat scan are checked
again at that moment, against the file as it is then).
"""

from __future__ import annotations

import json
import time
import uuid
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from .store import MemoryStore, Op, StoreUnavailable, WriteResult, atomic_write, locked


@dataclass(frozen=True)
class PendingWrite:
    id: str
    target: str
    ops: tuple[Op, ...]
    created: float
    session_id: str = ""

    def describe(self) -> str:
        parts = [f"{op.action} {op.text or op.match!r}" if op.action != "remove" else f"remove {op.match!r}"
                 for op in self.ops]
        return f"{self.id}  {self.target}: " + "; ".join(parts)


class PendingWrites:
    """The queue of staged writes in one JSON file."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def _load(self) -> list[PendingWrite]:
        try:
            raw = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return []
        except (OSError, ValueError) as exc:
            raise StoreUnavailable(self.path, "read the pending writes in", OSError(str(exc))) from exc
        return [PendingWrite(id=item["id"], target=item["target"], created=item["created"],
                             session_id=item.get("session_id", ""),
                             ops=tuple(Op(**op) for op in item["ops"])) for item in raw]

    def _save(self, items: list[PendingWrite]) -> None:
        data: list[dict[str, Any]] = [asdict(item) for item in items]
        atomic_write(self.path, json.dumps(data, ensure_ascii=False, indent=1).encode("utf-8"))

    def items(self) -> list[PendingWrite]:
        return self._load()

    def stage(self, target: str, ops: list[Op], *, session_id: str = "") -> str:
        item = PendingWrite(id=uuid.uuid4().hex[:8], target=target, ops=tuple(ops), created=time.time(),
                            session_id=session_id)
        with locked(self.path):
            self._save([*self._load(), item])
        return item.id

    def _take(self, pending_id: str) -> tuple[PendingWrite, list[PendingWrite]]:
        items = self._load()
        match = [item for item in items if item.id == pending_id]
        if not match:
            known = ", ".join(item.id for item in items) or "(none pending)"
            raise KeyError(f"no pending memory write {pending_id!r}; pending: {known}")
        return match[0], [item for item in items if item.id != pending_id]

    def approve(self, pending_id: str, store: MemoryStore) -> WriteResult:
        """Apply a staged write; it leaves the queue only if it was applied."""
        with locked(self.path):
            item, rest = self._take(pending_id)
            result = store.file(item.target).apply(item.ops)
            self._save(rest)
        return result

    def reject(self, pending_id: str) -> PendingWrite:
        with locked(self.path):
            item, rest = self._take(pending_id)
            self._save(rest)
        return item

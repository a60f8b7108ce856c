"""hermes' own MEMORY.md / USER.md store, pointed at one owner's files.

hermes 0.19.0 keeps one pair of memory files per ``HERMES_HOME`` (``tools/memory_tool.py``:
``get_memory_dir()`` is module-level, ``MemoryStore._path_for`` a static method) and every agent of
a process reads and writes that pair: in a service that embeds hermes for many users, every user
would see every other user's notes. :class:`ScopedMemoryStore` is hermes' class with only the
folder changed; the Bridge gives each agent one for its owner
(:func:`~hermes_ctx_plugins.memory.file.provider.memory_folder`), so hermes' ``memory`` tool, its frozen
prompt snapshot, its drift backups and its background review fork (which shares the parent's
store) all work on that owner's files, byte-compatible with our ``file`` provider. Given the ``file``
provider's documents, it reads and writes through them, so on a shared store (PostgreSQL) hermes'
snapshot starts from the fleet's copy and its writes reach every worker under the same lock as ours.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tools.memory_tool import MemoryStore as HermesMemoryStore

from ..errors import HermesCtxError
from ..storage.documents import Documents, FileDocuments

log = logging.getLogger("hermes_ctx_plugins.hermes")


class ScopedMemoryStore(HermesMemoryStore):  # type: ignore[misc]
    """hermes' ``MemoryStore`` on ``folder`` instead of ``$HERMES_HOME/memories``."""

    def __init__(self, folder: Path, documents: Documents | None = None, **limits: Any) -> None:
        super().__init__(**limits)
        self.folder = Path(folder)
        self.documents = documents if documents is not None else FileDocuments()

    # hermes' memory tool calls these and lets what they raise through: to its conversation loop, which then answers
    # every tool call of the model's message with the error, the others' too (a red-team pass: a shared copy whose
    # server was down, or a table locked past 5 s, cost a todo call made beside a memory add). A store that cannot
    # be reached is this tool's answer, as our own memory tool gives it.
    def add(self, target: str, content: str) -> dict[str, Any]:
        return self._answered(target, lambda: super(ScopedMemoryStore, self).add(target, content))

    def replace(self, target: str, old_text: str, new_content: str) -> dict[str, Any]:
        return self._answered(target, lambda: super(ScopedMemoryStore, self).replace(target, old_text, new_content))

    def remove(self, target: str, old_text: str) -> dict[str, Any]:
        return self._answered(target, lambda: super(ScopedMemoryStore, self).remove(target, old_text))

    def apply_batch(self, target: str, operations: list[dict[str, Any]]) -> dict[str, Any]:
        return self._answered(target, lambda: super(ScopedMemoryStore, self).apply_batch(target, operations))

    def _answered(self, target: str, change: Callable[[], dict[str, Any]]) -> dict[str, Any]:
        try:
            return change()
        except (OSError, HermesCtxError, ValueError) as exc:  # FileUnavailable / StoreUnavailable, a server
            # backend's errors; a text the file cannot hold (a lone surrogate: UnicodeEncodeError), by a path that
            # skipped our gate (a hostile-values pass: it went out of the tool)
            log.warning("hermes' memory tool could not change %s: %s", self._path_for(target), exc)
            with contextlib.suppress(Exception):  # what it holds again as the files have it
                self._reload_target(target, skip_drift=True)
            return {"success": False, "error": str(exc)}  # it says what became of the shared copy, and to retry

    def _file_lock(self, path: Path) -> contextlib.AbstractContextManager[None]:
        """hermes' lock around reload-change-save, held on the document (a file: hermes' own lock)."""
        return self.documents.hold(path)

    def _path_for(self, target: str) -> Path:  # hermes calls it as self._path_for(target)
        return self.folder / ("USER.md" if target == "user" else "MEMORY.md")

    def load_from_disk(self) -> None:
        """hermes' ``load_from_disk`` (entries deduplicated, hostile ones blocked in the snapshot)
        on this store's folder, made at the first write, not here (a Bridge applies an agent per session: every user
        who never wrote a memory left an empty folder, 4 KB each; a red-team pass)."""
        for target in ("memory", "user"):  # a shared copy's newest into the file (a broken file: hermes copes)
            with contextlib.suppress(OSError):
                self.documents.read(self._path_for(target))
        self.memory_entries = list(dict.fromkeys(self._readable(self._path_for("memory"))))
        self.user_entries = list(dict.fromkeys(self._readable(self._path_for("user"))))
        self._system_prompt_snapshot = {
            "memory": self._render_block(
                "memory", self._sanitize_entries_for_snapshot(self.memory_entries, "MEMORY.md")),
            "user": self._render_block("user", self._sanitize_entries_for_snapshot(self.user_entries, "USER.md")),
        }

    def _readable(self, path: Path) -> list[str]:
        """hermes' ``_read_file``, except that a file that is not UTF-8 leaves its entries out of this session,
        saying so, instead of failing the agent's start (hermes' own start swallows that error; a Bridge's
        did not, and the user could not chat at all). Writes to it are refused by the gate meanwhile."""
        try:
            if path.exists() and not path.is_file():  # a FIFO would hold hermes' read for ever
                log.error("%s is left out of the prompt: it is not a regular file", path)
                return []
            entries: list[str] = self._read_file(path)
        except ValueError as exc:  # UnicodeDecodeError
            log.error("%s is left out of the prompt: it is not valid UTF-8 (%s); fix it "
                      "(`hermes-ctx memory show` reads what it can of it)", path, exc)
            return []
        return entries

    def save_to_disk(self, target: str) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        self._write_file(self._path_for(target), self._entries_for(target))

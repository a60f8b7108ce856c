"""``file``: MEMORY.md and USER.md, the same files hermes 0.19.0 keeps (SPEC 2.2, 2.5).

Built in and not external: it never counts against the one-external-provider limit. The system
prompt gets a snapshot frozen at session start (writes land on disk at once but leave the prompt —
and the provider's prefix cache — alone until the next session); every entry is scanned before it
is written and again when it is loaded, and a hostile one is withheld from the prompt behind a
placeholder while staying on disk for the user to review (``hermes-ctx memory show``).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..config import hermes_home
from ..errors import ConfigError
from ..events import SessionInfo
from . import scan
from .approval import PendingWrites
from .base import MemoryProvider
from .store import DELIMITER, MEMORY_HEADER, USER_HEADER, MemoryStore, MemoryStoreError, Op

log = logging.getLogger("hermes_ctx_plugins.memory")

APPROVAL_MODES = ("allow", "stage", "block")
_HEADERS = {"memory": MEMORY_HEADER, "user": USER_HEADER}

TOOL_SCHEMA: dict[str, Any] = {"type": "function", "function": {
    "name": "memory",
    "description": (
        "Save durable facts to persistent memory that survives across sessions; it is shown to you "
        "at the start of every future session, so keep entries compact and high-signal. Make all "
        "changes in ONE call with 'operations' (applied atomically; the character limit is checked "
        "on the final result, so one call can remove stale entries and add new ones). "
        "'user' = who the user is (name, role, preferences); 'memory' = your notes (environment, "
        "conventions, lessons). Skip trivia, raw data and task progress."
    ),
    "parameters": {
        "type": "object",
        "properties": {
            "target": {"type": "string", "enum": ["memory", "user"]},
            "action": {"type": "string", "enum": ["add", "replace", "remove"],
                       "description": "Single change; omit when using 'operations'."},
            "content": {"type": "string", "description": "Entry text for add / replace."},
            "old_text": {"type": "string",
                         "description": "A short unique substring of the entry to replace or remove."},
            "operations": {"type": "array", "items": {
                "type": "object",
                "properties": {"action": {"type": "string", "enum": ["add", "replace", "remove"]},
                               "content": {"type": "string"}, "old_text": {"type": "string"}},
                "required": ["action"]}},
        },
        "required": ["target"],
    },
}}


@dataclass(frozen=True)
class FileOptions:
    """``ctx_plugins.options.file``."""

    #: ``allow`` writes at once, ``stage`` holds writes for approval in the CLI, ``block`` refuses
    write_approval: str = "allow"


def ops_from_arguments(args: dict[str, Any]) -> list[Op]:
    """The memory tool's arguments (single-change or batch shape) as store operations."""
    raw = args.get("operations")
    items = raw if isinstance(raw, list) and raw else [args]
    ops = []
    for item in items:
        if not isinstance(item, dict):
            raise ValueError(f"each operation must be an object, got {type(item).__name__}")
        action = item.get("action")
        if action not in ("add", "replace", "remove"):
            raise ValueError(f"action must be add, replace or remove, got {action!r}")
        ops.append(Op(action=action, text=str(item.get("content") or ""), match=str(item.get("old_text") or "")))
    return ops


class FileProvider(MemoryProvider):
    """MEMORY.md / USER.md under ``$HERMES_HOME/memories``, byte-compatible with hermes."""

    name = "file"
    external = False
    description = "MEMORY.md and USER.md, the same files hermes keeps"
    options_class = FileOptions

    def __init__(self, options: Any = None, **kwargs: Any) -> None:
        super().__init__(options, **kwargs)
        if self.options.write_approval not in APPROVAL_MODES:
            raise ConfigError(
                f"{self.options.write_approval!r} is not an approval mode; valid: {', '.join(APPROVAL_MODES)}",
                path="ctx_plugins.options.file.write_approval", value=self.options.write_approval,
                expected=", ".join(APPROVAL_MODES))
        home = Path(self.hermes_home or hermes_home())
        settings = self.config.memory
        self.store = MemoryStore(home, memory_char_limit=settings.memory_char_limit,
                                 user_char_limit=settings.user_char_limit, scan=scan.scan)
        self.pending = PendingWrites(home / "memories" / "pending.json")
        self._snapshot: dict[str, list[str]] | None = None

    # -- the prompt -------------------------------------------------------------------------------
    def on_session_start(self, session: SessionInfo) -> None:
        self._snapshot = self.load_snapshot()

    def load_snapshot(self) -> dict[str, list[str]]:
        """Both files' entries as the model may see them: hostile ones replaced by a placeholder."""
        snapshot = {}
        for target in self._targets():
            safe = []
            for entry in self.store.file(target).entries():
                findings = scan.scan(entry)
                if findings:
                    log.warning("memory entry in %s withheld from the prompt (%s); review it with "
                                "`hermes-ctx memory show`", target, ", ".join(f.kind for f in findings))
                    safe.append(scan.placeholder(findings))
                else:
                    safe.append(entry)
            snapshot[target] = safe
        return snapshot

    def _targets(self) -> list[str]:
        settings = self.config.memory
        targets = ["memory"] if settings.memory_enabled else []
        return [*targets, "user"] if settings.user_profile_enabled else targets

    def system_prompt_block(self) -> str:
        if self._snapshot is None:
            self._snapshot = self.load_snapshot()
        blocks = [self._render(target, entries) for target, entries in self._snapshot.items() if entries]
        return "\n\n".join(blocks)

    def _render(self, target: str, entries: Sequence[str]) -> str:
        """hermes' own block layout, so a prompt looks the same whichever of us wrote it."""
        content = DELIMITER.join(entries)
        limit = self.store.file(target).usage()[1]
        pct = min(100, int(len(content) / limit * 100)) if limit else 0
        rule = "═" * 46
        return f"{rule}\n{_HEADERS[target]} [{pct}% — {len(content):,}/{limit:,} chars]\n{rule}\n{content}"

    # -- the memory tool --------------------------------------------------------------------------
    def get_tool_schemas(self) -> list[dict[str, Any]]:
        return [TOOL_SCHEMA]

    def handle_tool_call(self, name: str, args: dict[str, Any], *, session: SessionInfo | None = None) -> str:
        if name != "memory":
            return super().handle_tool_call(name, args, session=session)
        target = args.get("target")
        if target not in self._targets():
            return _error(f"target must be one of {', '.join(self._targets()) or '(memory is off)'}, got {target!r}")
        try:
            ops = ops_from_arguments(args)
        except ValueError as exc:
            return _error(str(exc))
        mode = self.options.write_approval
        if mode == "block":
            return _error("memory writes are blocked by configuration (ctx_plugins.options.file.write_approval)")
        unsafe = [f for op in ops for f in scan.scan(op.text)]
        if unsafe:
            return _error("refused: the text looks like " + ", ".join(sorted({f.kind for f in unsafe}))
                          + "; memory is shown to future sessions, so it must not carry instructions or secrets")
        if mode == "stage":
            pending_id = self.pending.stage(target, ops, session_id=session.session_id if session else "")
            return json.dumps({"success": True, "staged": pending_id,
                               "message": "held for the user's approval (hermes-ctx memory pending)"})
        try:
            result = self.store.file(target).apply(ops)
        except MemoryStoreError as exc:
            return _error(str(exc))
        message = f"{target} now {result.used:,}/{result.limit:,} chars, {len(result.entries)} entries"
        if result.backup is not None:
            message += f"; the file had been edited outside, a backup is at {result.backup}"
        return json.dumps({"success": True, "message": message})


def _error(message: str) -> str:
    return json.dumps({"success": False, "error": message})

"""An example third-party plugin for hermes-ctx-plugins.

It ships one compressor strategy (``acme-recent``), one external memory provider
(``acme-notes``) and one lifecycle hook, through the ``hermes_ctx_plugins`` entry point named in
its ``pyproject.toml``. Copy it as a starting point for your own plugin.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from pathlib import Path

from hermes_ctx_plugins import (
    CompressionResult,
    CompressorStrategy,
    MemoryProvider,
    Request,
    SessionInfo,
    Turn,
    hookimpl,
)

# Lets the test suite prove that a disabled plugin is never even imported.
if os.environ.get("ACME_IMPORT_LOG"):
    with open(os.environ["ACME_IMPORT_LOG"], "a", encoding="utf-8") as _log:
        _log.write("imported\n")


@dataclass(frozen=True)
class RecentOptions:
    """``ctx_plugins.options.acme-recent``."""

    keep_last: int = 6


class KeepRecent(CompressorStrategy):
    """Keeps the first user message and the last ``keep_last`` messages; drops the rest."""

    name = "acme-recent"
    description = "keep the opening request and the most recent messages"
    options_class = RecentOptions

    def compress(self, messages, *, current_tokens=None, focus_topic=None, force=False,
                 memory_context=""):
        keep = self.options.keep_last
        if len(messages) <= keep + 1:
            return CompressionResult.unchanged(messages)
        start = len(messages) - keep
        # Never start the tail with tool results whose assistant call would be dropped.
        while start > 1 and messages[start].get("role") == "tool":
            start -= 1
        head = messages[:1]
        dropped = messages[1:start]
        if not dropped:
            return CompressionResult.unchanged(messages)
        marker = {"role": "user", "content": f"[acme-recent dropped {len(dropped)} older messages]"}
        return CompressionResult(messages=[*head, marker, *messages[start:]], removed=tuple(dropped))


class NotesProvider(MemoryProvider):
    """Remembers each finished turn in a JSON-lines file and recalls turns sharing words."""

    name = "acme-notes"
    description = "a JSON-lines notebook of past turns"

    def _path(self) -> Path:
        home = self.hermes_home or Path.home() / ".hermes"
        return Path(self.options.get("path") or home / "acme-notes.jsonl")

    def sync_turn(self, turn: Turn) -> None:
        path = self._path()
        path.parent.mkdir(parents=True, exist_ok=True)
        record = {"user_id": turn.session.user_id, "user": turn.user_text,
                  "assistant": turn.assistant_text}
        with path.open("a", encoding="utf-8") as fh:
            fh.write(json.dumps(record) + "\n")

    def prefetch(self, query: str, *, session: SessionInfo) -> str:
        path = self._path()
        if not path.exists():
            return ""
        words = set(re.findall(r"\w{4,}", query.lower()))
        hits = []
        for line in path.read_text(encoding="utf-8").splitlines():
            record = json.loads(line)
            if record["user_id"] != session.user_id:
                continue
            text = f"{record['user']} -> {record['assistant']}"
            if words & set(re.findall(r"\w{4,}", text.lower())):
                hits.append(f"- {text}")
        return "Earlier, you discussed:\n" + "\n".join(hits[-3:]) if hits else ""


@hookimpl
def register_compressors(register):
    register(KeepRecent)


@hookimpl
def register_memory_providers(register):
    register(NotesProvider)


@hookimpl
def pre_request(request: Request):
    return f"[acme] request {request.turn_number} to {request.model}"

"""An example third-party plugin for hermes-ctx-plugins.

It ships one compressor strategy (``acme-recent``), one external memory provider
(``acme-notes``) and one lifecycle hook, through the ``hermes_ctx_plugins`` entry point named in
its ``pyproject.toml``. Copy it as a starting point for your own plugin; ``tests/test_contract.py``
shows how to run the memory provider contract against it (``pip install -e .``, then ``pytest``).
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
    Forgotten,
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
    """Remembers each finished turn in a JSON-lines file and recalls turns sharing words.

    Every record names its owner, the session's deployment namespace and user id, exactly as the
    host gave them (JSON keeps any string, lone surrogates included); recall and ``forget_user``
    compare both exactly, so no user ever sees another's notes, nor another deployment's.
    """

    name = "acme-notes"
    description = "a JSON-lines notebook of past turns"

    def _path(self) -> Path:
        home = self.hermes_home or Path.home() / ".hermes"
        return Path(self.options.get("path") or home / "acme-notes.jsonl")

    def _records(self) -> list[dict]:
        path = self._path()
        if not path.exists():
            return []
        return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]

    def sync_turn(self, turn: Turn) -> None:
        path = self._path()
        path.parent.mkdir(parents=True, exist_ok=True)
        session = turn.session
        record = {"deployment": session.deployment, "user_id": session.user_id,
                  "user": turn.user_text, "assistant": turn.assistant_text}
        with path.open("a", encoding="utf-8") as fh:
            fh.write(json.dumps(record) + "\n")

    def prefetch(self, query: str, *, session: SessionInfo) -> str:
        words = set(re.findall(r"\w{4,}", query.lower()))
        hits = []
        for record in self._records():
            if _owner(record) != (session.deployment, session.user_id):
                continue
            text = f"{record['user']} -> {record['assistant']}"
            if words & set(re.findall(r"\w{4,}", text.lower())):
                hits.append(f"- {text}")
        return "Earlier, you discussed:\n" + "\n".join(hits[-3:]) if hits else ""

    def forget_user(self, user_id: str, *, namespaces=None) -> list[Forgotten]:
        path = self._path()
        store = f"{self.name} {path}"
        try:
            records = self._records()
            kept = [r for r in records if not (
                r["user_id"] == user_id and (namespaces is None or _owner(r)[0] in namespaces))]
            if len(kept) < len(records):
                # write the rest beside the file, then swap: a crash leaves the old or the new file, never half
                temporary = path.with_name(path.name + ".tmp")
                temporary.write_text("".join(json.dumps(r) + "\n" for r in kept), encoding="utf-8")
                os.replace(temporary, path)
        except (OSError, ValueError) as exc:  # unreadable or unwritable: say so, never raise
            return [Forgotten(store=store, removed=None, error=str(exc))]
        return [Forgotten(store=store, removed=len(records) - len(kept))]


def _owner(record: dict) -> tuple[str, str]:
    """``(deployment, user id)`` of a note; notes written before deployments existed are top-level."""
    return record.get("deployment", ""), record["user_id"]


@hookimpl
def register_compressors(register):
    register(KeepRecent)


@hookimpl
def register_memory_providers(register):
    register(NotesProvider)


@hookimpl
def pre_request(request: Request):
    return f"[acme] request {request.turn_number} to {request.model}"

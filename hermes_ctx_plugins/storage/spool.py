"""An archive's spool: compactions waiting for the store, one JSON line each.

A durable archive backend appends a compaction here (fsynced) when its store cannot be written, and
imports the spool at its next successful write, so a compaction never loses what it removed. Every
access — appending, importing, rewriting to forget a user — holds the spool's cross-process lock (a
``.lock`` sidecar), so a rewrite never loses a line another process is appending.

An entry is kept in *stored* form (see :func:`hermes_ctx_plugins.scope.to_stored`): ids and each
message's JSON are escaped text, so any string — lone surrogates included — can be written as UTF-8
and comes back exactly. Lines written before that form (no ``"v"``) are upgraded when read.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from ..scope import to_stored
from .files import atomic_write, locked

log = logging.getLogger("hermes_ctx_plugins.archive")

#: the entry format: ids and messages in stored form
VERSION = 2

Entry = dict[str, Any]


def _upgraded(entry: Entry) -> Entry:
    """``entry`` in the current form (lines spooled before it held raw ids and message objects)."""
    if entry.get("v") == VERSION:
        return entry
    return {**entry, "v": VERSION, "namespace": "",
            **{key: to_stored(str(entry.get(key, ""))) for key in ("session_id", "user_id", "strategy")},
            "removed": [[position, to_stored(json.dumps(message, ensure_ascii=False))]
                        for position, message in entry["removed"]]}


def _lines(path: Path) -> list[str]:
    """The file's lines. Only ``\\n`` ends one (JSON leaves U+2028 and U+0085 unescaped, which
    ``splitlines`` would split at), and a torn multi-byte character cannot make the rest unreadable."""
    return [line for line in path.read_text(encoding="utf-8", errors="replace").split("\n") if line]


class Spool:
    """The spool file next to the archive, and the file an interrupted import left behind."""

    def __init__(self, path: Path) -> None:
        self.path = path
        #: what an import works on (a process killed mid-import leaves it; the next import resumes)
        self.working = path.with_suffix(".importing")

    def pending(self) -> bool:
        return self.path.exists() or self.working.exists()

    def append(self, entry: Entry) -> None:
        """Add one compaction. :raises OSError: it could not be written."""
        line = json.dumps(entry, ensure_ascii=False) + "\n"
        with locked(self.path):
            with open(self.path, "a", encoding="utf-8") as handle:
                handle.write(line)
                handle.flush()
                os.fsync(handle.fileno())

    def import_into(self, insert: Callable[[Entry], object]) -> int:
        """Hand every spooled compaction to ``insert`` (oldest first) and empty the spool; returns
        how many. If ``insert`` raises, what it did not take stays spooled for the next import."""
        if not self.pending():
            return 0
        with locked(self.path):
            if self.path.exists() and not self.working.exists():
                os.replace(self.path, self.working)
            if not self.working.exists():  # another process imported it meanwhile
                return 0
            lines = _lines(self.working)
            count = 0
            for done, entry in enumerate(self._entries(self.working, lines)):
                if entry is None:
                    continue
                try:
                    insert(entry)
                except BaseException:
                    atomic_write(self.working, "".join(f"{line}\n" for line in lines[done:]).encode("utf-8"))
                    raise
                count += 1
            self.working.unlink()
        log.info("imported %d spooled compactions", count)
        return count

    def entries(self) -> list[Entry]:
        """Every readable spooled compaction, oldest first."""
        if not self.pending():
            return []
        with locked(self.path):
            return [entry for path in (self.working, self.path) if path.exists()
                    for entry in self._entries(path, _lines(path))
                    if entry is not None]

    def forget(self, belongs: Callable[[Entry], bool]) -> int:
        """Remove every compaction ``belongs`` accepts (and unreadable lines, which no import
        could use) from both files, rewriting each atomically; returns the messages removed."""
        removed = 0
        if not self.pending():
            return 0
        with locked(self.path):
            for path in (self.path, self.working):
                if not path.exists():
                    continue
                lines = _lines(path)
                kept = []
                for line, entry in zip(lines, self._entries(path, lines), strict=True):
                    if entry is None:
                        continue
                    if belongs(entry):
                        removed += len(entry["removed"])
                    else:
                        kept.append(line)
                if len(kept) == len(lines):
                    continue
                if kept:
                    atomic_write(path, "".join(f"{line}\n" for line in kept).encode("utf-8"))
                else:
                    path.unlink()
        return removed

    @staticmethod
    def _entries(path: Path, lines: list[str]) -> Iterator[Entry | None]:
        """Each line's entry, ``None`` for a line that cannot be read."""
        for line in lines:
            try:
                yield _upgraded(json.loads(line))
            except (ValueError, KeyError, TypeError, AttributeError):  # a torn line of a process killed mid-append
                log.warning("skipping an unreadable line in %s", path)
                yield None

"""The MEMORY.md / USER.md store, byte-compatible with hermes-agent 0.19.0's ``tools/memory_tool.py``.

The files live in ``$HERMES_HOME/memories/``. A file is its entries joined by ``"\\n§\\n"`` in UTF-8,
with no trailing newline; reading splits on that delimiter, strips every piece and drops empty and
repeated ones, exactly as hermes does, so a user can switch between hermes and us in either direction.
Usage is ``len()`` of the joined text, checked against a per-file character limit.

Writes are a batch of :class:`Op` applied all-or-nothing against the final budget, inside one
read-modify-write under the same sidecar lock file hermes uses (``MEMORY.md.lock``), and land by an
atomic temp-file + ``os.replace``. A file edited from outside (an ``echo >>``, an editor) is backed up
to ``MEMORY.md.bak.<UTC time>`` before the first write that would rewrite it.

The bytes are read and written through a :class:`~hermes_ctx_plugins.storage.documents.Documents`
(``documents=``): by default the files themselves as just described; the ``file`` provider passes the
one its configuration chooses (``ctx_plugins.storage``; on PostgreSQL every worker of a fleet shares
one copy and the file is its mirror). The backups of outside edits are files on the machine that
made the write.

Errors (all carry the message the model should read)::

    HermesCtxError
    └── MemoryStoreError
        ├── InvalidOp (ValueError)           empty text, unknown action, a '§' separator line
        ├── UnknownTarget (KeyError)         not "memory" / "user"; .target
        ├── LimitExceeded                    .target, .used, .limit, .needed, .final
        ├── DuplicateEntry                   .entry
        ├── NoMatch (LookupError)            .match
        ├── AmbiguousMatch (LookupError)     .match, .matches (truncated previews)
        ├── UnsafeEntry                      .findings from the injected scanner
        ├── TooManyPending                   .count: staged writes already awaiting approval
        └── StoreUnavailable                 .path, .doing, .error; the folder or file, or the server
                                             holding the shared copy, cannot be read or written (a
                                             storage.files.FileUnavailable, so an OSError)
"""

from __future__ import annotations

import codecs
import contextlib
import dataclasses
import functools
import logging
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal, Protocol

from ...errors import HermesCtxError, did_you_mean
from ...safety.engine.tables import blank_code_points, renders_blank
from ...storage import documents, files
from ...storage.documents import Documents, FileDocuments, keep_copy
from ...storage.files import FileUnavailable

logger = logging.getLogger(__name__)

MEMORY_HEADER = "MEMORY (your personal notes)"
USER_HEADER = "USER PROFILE (who the user is)"
DELIMITER = "\n§\n"
_LABELS = {"memory": "memory", "user": "user profile"}  # target -> how messages name it


class Finding(Protocol):
    """What the injected scanner reports (``hermes_ctx_plugins.safety.Finding`` fits)."""

    @property
    def kind(self) -> str: ...
    @property
    def detail(self) -> str: ...


Scanner = Callable[[str], Sequence[Finding]]


# -- errors -------------------------------------------------------------------------------------------


class MemoryStoreError(HermesCtxError):
    """A memory write was refused, or the store cannot be used; nothing was written."""


LONE_SURROGATE = re.compile(r"[\ud800-\udfff]")
#: control characters an entry may not hold: a terminal obeys them (ESC sequences, backspace, a carriage return
#: that overwrites the line) when ``memory show`` / ``memory pending`` print it, so the approver would read other
#: text than the model does; tab and newline are text (a CR is read as a newline)
CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")


class InvalidOp(MemoryStoreError, ValueError):
    """An operation is malformed (empty text, unknown action, text that would split into two entries)."""


class TooManyPending(MemoryStoreError):
    """So many writes already await the user's approval that no more is staged (``hermes-ctx memory pending``)."""

    def __init__(self, count: int) -> None:
        self.count = count
        super().__init__(f"{count} memory writes already await the user's approval (hermes-ctx memory pending); "
                         "nothing more is staged until some are approved or rejected; nothing was written")


class UnknownTarget(MemoryStoreError, KeyError):
    """A target other than ``"memory"`` or ``"user"``."""

    def __init__(self, target: str) -> None:
        self.target = target
        self.message = f"unknown memory target {target!r}{did_you_mean(target, _LABELS)}; use 'memory' or 'user'"
        super().__init__(self.message)

    def __str__(self) -> str:  # KeyError would repr() the message
        return self.message


class LimitExceeded(MemoryStoreError):
    """The batch would leave the file over its character limit."""

    def __init__(self, target: str, *, used: int, limit: int, final: int, entry: int | None = None) -> None:
        self.target, self.used, self.limit, self.final = target, used, limit, final
        self.needed = final - used
        label = _LABELS[target]
        if entry is not None:  # told before the batch was applied: ``final`` is at least this much
            change = f"one entry of this batch alone is {entry:,} chars, more than the file may hold"
        elif self.needed > 0:
            change = f"this batch needs {self.needed:,} more ({final:,} in all, {final - limit:,} over)"
        else:  # already over, e.g. after an outside edit: shrinking is not enough unless it fits
            change = f"after this batch it would still be at {final:,}, {final - limit:,} over"
        super().__init__(
            f"{label} is at {used:,}/{limit:,} chars; {change}; consolidate or remove entries first "
            "(in the same batch); nothing was written"
        )


class DuplicateEntry(MemoryStoreError):
    """The text is already an entry."""

    def __init__(self, where: str, entry: str) -> None:
        self.entry = entry
        super().__init__(f"{where}: {_preview(entry)!r} is already an entry; nothing was written")


class NoMatch(MemoryStoreError, LookupError):
    """No entry contains the ``match`` substring."""

    def __init__(self, where: str, match: str, entries: Sequence[str]) -> None:
        self.match = match
        super().__init__(f"{where}: no entry contains {_cut(match)!r}; entries: {_listing(entries)}; "
                         "nothing was written")


class AmbiguousMatch(MemoryStoreError, LookupError):
    """Several entries contain the ``match`` substring."""

    def __init__(self, where: str, match: str, matches: Sequence[str]) -> None:
        self.match = match
        self.matches = tuple(_preview(m) for m in matches)
        super().__init__(
            f"{where}: {_cut(match)!r} is in {len(matches)} entries: {_listing(matches)}; "
            "use a longer substring that only one of them contains; nothing was written"
        )


class UnsafeEntry(MemoryStoreError):
    """The scanner found injection or exfiltration patterns in the text."""

    def __init__(self, where: str, findings: Sequence[Finding]) -> None:
        self.findings = tuple(findings)
        kinds = ", ".join(sorted({f.kind for f in self.findings}))
        names = {"rules": "layer 1 (rules)", "classifier": "layer 2 (classifier)", "judge": "layer 3 (LLM judge)"}
        layers = [names.get(getattr(f, "layer", ""), "") for f in self.findings[:3]]
        details = "; ".join(f"{layer}: {f.detail}" if layer else f.detail
                            for layer, f in zip(layers, self.findings[:3], strict=True))
        super().__init__(f"{where}: refused, the security scan found {kinds} ({details}); nothing was written")


class StoreUnavailable(MemoryStoreError, FileUnavailable):
    """The memory folder or file cannot be read or written (read-only, not a folder, a directory...),
    or the server holding the shared copy cannot be reached."""

    prefix = "memory store unavailable"


def _preview(entry: str, width: int = 60) -> str:
    flat = " ".join(entry.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def _cut(match: str, width: int = 200) -> str:
    """The model's ``old_text`` as an error repeats it: whole (its spaces may be why nothing matched) when short,
    else its start and its length -- a megabyte sent is not a megabyte answered."""
    return match if len(match) <= width else f"{match[:width]}… ({len(match):,} characters)"


def _listing(entries: Sequence[str], shown: int = 5) -> str:
    if not entries:
        return "(none)"
    listed = ", ".join(repr(_preview(e)) for e in entries[:shown])
    return listed + (f" and {len(entries) - shown} more" if len(entries) > shown else "")


# -- the format -----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Op:
    """One change. ``replace`` and ``remove`` act on the single entry that contains ``match`` (``whole``: the
    entry that is ``match``, no other: a staged write pinned to the entry the approver was shown, see
    :meth:`MemoryFile.pinned`)."""

    action: Literal["add", "replace", "remove"]
    text: str = ""
    match: str = ""
    whole: bool = False


@dataclass(frozen=True)
class WriteResult:
    """The file after a successful :meth:`MemoryFile.apply`."""

    target: str
    entries: tuple[str, ...]
    used: int
    limit: int
    backup: Path | None  # where an outside edit was saved before this write rewrote it


def _clean(text: str) -> str:
    # hermes reads with universal newlines, so a CR would not survive a round trip anyway
    return text.replace("\r\n", "\n").replace("\r", "\n").strip()


@dataclass(frozen=True)
class _Step:
    """An :class:`Op` that passed the checks needing no file: cleaned text, scanned, with its position."""

    action: str
    text: str
    match: str
    where: str  # "memory replace (operation 2 of 3)", the prefix of every error message
    whole: bool = False  # ``match`` is the entry's whole text (a pinned op), never a part of a longer one

    def apply_to(self, entries: list[str], shown: Callable[[str], str] = str) -> None:
        """:param shown: how an entry is named in an error message (a withheld one by its placeholder)."""
        if self.action == "add":
            if self.text in entries:
                raise DuplicateEntry(self.where, self.text)
            entries.append(self.text)
            return
        hit = self.hit(entries, shown)
        if self.action == "remove":
            del entries[hit]
        elif self.text != entries[hit] and self.text in entries:
            raise DuplicateEntry(self.where, self.text)
        else:
            entries[hit] = self.text

    def hit(self, entries: Sequence[str], shown: Callable[[str], str] = str) -> int:
        """Where the one entry ``match`` names is (a replace's or a remove's)."""
        if self.whole:  # pinned: the entry changed (even to a longer one holding its text) or gone is no match
            hits = [i for i, entry in enumerate(entries) if entry == self.match][:1]
        else:
            hits = [i for i, entry in enumerate(entries) if self.match in entry]
        if len(hits) > 1 and self.match in entries:  # the whole text of one entry names it, even inside others
            hits = [entries.index(self.match)]
        if not hits:
            raise NoMatch(self.where, self.match, [shown(entry) for entry in entries])
        if len(hits) > 1:
            raise AmbiguousMatch(self.where, self.match, [shown(entries[i]) for i in hits])
        return hits[0]


def _size(entries: Sequence[str]) -> int:
    return len(DELIMITER.join(entries))


def _read(raw: bytes, limit: int) -> tuple[list[str], list[str]]:
    """The entries in ``raw`` and, if writing them back would change the bytes, why (the drift)."""
    quirks = []
    if raw.startswith(codecs.BOM_UTF8):
        raw, quirks = raw[len(codecs.BOM_UTF8):], ["starts with a UTF-8 byte-order mark"]
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:  # keep what is readable; the backup keeps the exact bytes
        text = raw.decode("utf-8", errors="replace")
        quirks.append("is not valid UTF-8 (undecodable bytes read as U+FFFD)")
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
        quirks.append("has CR or CRLF line endings")
    pieces = text.split(DELIMITER) if text else []
    # hermes' _read_file + load_from_disk: split, strip, drop empties, drop repeats keeping the first
    entries = list(dict.fromkeys(p.strip() for p in pieces if p.strip()))
    if any(p.strip() and p != p.strip() for p in pieces):
        quirks.append("has whitespace around an entry (e.g. a newline left by `echo >>` or an editor)")
    if any(not p.strip() for p in pieces):
        quirks.append("has an empty entry (blank text or doubled '§' separators)")
    if len(entries) < sum(1 for p in pieces if p.strip()):
        quirks.append("repeats an entry")
    # hermes' second drift signal: no tool-written entry can outgrow the whole file's budget, so one
    # that does is text appended without a separator, which a later replace would lose
    longest = max(entries, key=len, default="")
    if len(longest) > limit:
        quirks.append(
            f"has an entry of {len(longest):,} chars, over the whole {limit:,}-char limit "
            "(text appended without a '§' separator?)"
        )
    return entries, quirks


def entries_in(raw: bytes) -> list[str]:
    """The entries of a memory file's bytes, read as hermes reads them."""
    return _read(raw, len(raw))[0]


# -- the file -----------------------------------------------------------------------------------------


class MemoryFile:
    """One memory file: its entries, its character budget and its batched, locked, atomic writes."""

    def __init__(self, path: Path, *, target: str, char_limit: int, scan: Scanner | None = None,
                 documents: Documents | None = None, shown: Callable[[str], str] = str) -> None:
        """:param documents: where the bytes are read and written; default the file at ``path``.
        :param shown: how an error message names an entry (the provider shows a withheld one by its placeholder:
            the model must not read through an error what its prompt withholds)."""
        if target not in _LABELS:
            raise UnknownTarget(target)
        self.path = Path(path)
        self.target = target
        self.char_limit = char_limit
        self.scan = scan
        self.shown = shown
        self.documents = documents if documents is not None else FileDocuments(error=StoreUnavailable)

    def entries(self) -> list[str]:
        """The entries stored now."""
        return _read(self._raw(), self.char_limit)[0]

    def unreadable_by_hermes(self) -> str | None:
        """Why hermes' own memory writer cannot use the file, or ``None``. It reads a file it may not open
        as empty (and its next write replaces it: the entries are lost) and fails on one that is not UTF-8.

        :raises MemoryStoreError: the file cannot be read (no permission, a folder in its place, ...).
        """
        return self._undecodable(self._raw())

    def entries_and_problem(self) -> tuple[list[str], str | None]:
        """:meth:`entries` and :meth:`unreadable_by_hermes` from one read of the file (on a shared store,
        one trip to the server)."""
        raw = self._raw()
        return _read(raw, self.char_limit)[0], self._undecodable(raw)

    def _undecodable(self, raw: bytes) -> str | None:
        try:
            raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            return f"{self.path} is not valid UTF-8 (byte {raw[exc.start]:#04x} at position {exc.start})"
        return None

    def usage(self) -> tuple[int, int]:
        """``(used, limit)`` in characters, counted as hermes counts them."""
        return _size(self.entries()), self.char_limit

    def drift(self) -> str | None:
        """``None`` when the file is as the tool would write it; else what the outside edit left behind."""
        quirks = _read(self._raw(), self.char_limit)[1]
        return f"{self.path.name} {_sentence(quirks)}" if quirks else None

    def apply(self, ops: Sequence[Op]) -> WriteResult:
        """Apply ``ops`` in order, all or nothing, and write the result if it fits the budget.

        :raises MemoryStoreError: one of its subclasses; the file is then untouched, byte for byte.
        """
        ops = tuple(ops)
        if not ops:
            raise InvalidOp(f"{self.target}: an empty batch changes nothing; pass at least one operation")
        steps = [self._check(op, i, len(ops)) for i, op in enumerate(ops)]  # no I/O before all are valid
        results: list[WriteResult] = []

        def change(raw: bytes) -> bytes | None:  # runs while every other writer of the file waits
            new, result = self._rewrite(steps, raw)
            results.append(result)
            return new

        self.documents.update(self.path, change)
        return results[-1]

    def pinned(self, ops: Sequence[Op]) -> list[Op]:
        """``ops`` with each replace and remove naming, by its whole text, the entry it acts on in the file as it is
        now: a write held for approval acts when approved on the entry the approver was shown, never on another
        its substring matches by then (an entry changed or gone meanwhile is an error then, nothing written).

        :raises MemoryStoreError: as :meth:`apply` would now (no entry matches, several do, an invalid op)."""
        ops = tuple(ops)
        steps = [self._check(op, i, len(ops)) for i, op in enumerate(ops)]
        entries, pinned = self.entries(), []
        for op, step in zip(ops, steps, strict=True):
            if step.action != "add":
                op = dataclasses.replace(op, match=entries[step.hit(entries, self.shown)], whole=True)
            step.apply_to(entries, self.shown)
            pinned.append(op)
        return pinned

    def _rewrite(self, steps: Sequence[_Step], raw: bytes) -> tuple[bytes | None, WriteResult]:
        """The bytes ``steps`` turn ``raw`` into (``None``: unchanged) and the result to report."""
        before, quirks = _read(raw, self.char_limit)
        after = list(before)
        for step in steps:
            step.apply_to(after, self.shown)
        used, final = _size(before), _size(after)
        # a file already over its limit (it was lowered, or edited from outside) may still shrink: else no entry
        # of it could be removed one at a time, by the model or by `hermes-ctx memory remove`
        if final > self.char_limit and final > used:
            raise LimitExceeded(self.target, used=used, limit=self.char_limit, final=final)
        backup = None
        if quirks:
            backup = self._backup(raw)
            logger.warning(
                "%s was edited outside the memory tool: it %s. Saved it unchanged to %s; read its text as "
                "%d entries, applied this batch of %d operation(s) to them and rewrote the file as a clean "
                "'§'-separated list.", self.path, _sentence(quirks), backup, len(before), len(steps),
            )
        new = DELIMITER.join(after).encode("utf-8") if backup is not None or after != before else None
        return new, WriteResult(self.target, tuple(after), final, self.char_limit, backup)

    # -- helpers --

    def _check(self, op: Op, index: int, count: int) -> _Step:
        """Validate and scan one op; returns it with its text and match cleaned."""
        where = f"{self.target} {op.action}" + (f" (operation {index + 1} of {count})" if count > 1 else "")
        if op.action not in ("add", "replace", "remove"):
            raise InvalidOp(f"{where}: unknown action {op.action!r}; use 'add', 'replace' or 'remove'")
        step = _Step(op.action, _clean(op.text), _clean(op.match), where, whole=op.whole is True)
        for name, value in (("text", step.text), ("match", step.match)):
            odd = LONE_SURROGATE.search(value)
            if odd:  # MEMORY.md / USER.md are UTF-8 files hermes reads: no encoding holds one
                raise InvalidOp(f"{where}: the {name} holds a lone surrogate (U+{ord(odd.group()):04X}) at "
                                f"character {odd.start()}, which a UTF-8 file cannot store; write the text without it")
        if op.action != "add" and not step.match:
            raise InvalidOp(f"{where}: 'match' is empty; give a short substring of the entry to {op.action}")
        if op.action != "remove":
            if not step.text or renders_blank(step.text):  # (one of characters that render as nothing is blank too)
                raise InvalidOp(f"{where}: the text is empty{blank_code_points(step.text)}"
                                + (" (use 'remove')" if op.action == "replace" else ""))
            if "§" in step.text.split("\n"):
                raise InvalidOp(f"{where}: a line holding only '§' separates entries; it cannot be inside one")
            odd = CONTROL.search(step.text)
            if odd:
                raise InvalidOp(f"{where}: the text holds a control character (U+{ord(odd.group()):04X}) at character "
                                f"{odd.start()}; write it without one")
            self.check_fits(step.text)  # before the scan: a page pasted as an entry cost seconds of scanning
            findings = self.scan(step.text) if self.scan is not None else ()
            if findings:
                raise UnsafeEntry(where, findings)
        return step

    def check_fits(self, text: str) -> None:
        """Refuse ``text`` at once when no batch holding it can be written: an entry longer than the limit fits only a
        file already over its limit shrinking (see :meth:`_rewrite`), so only when it is longer than the file now.

        :raises LimitExceeded: it cannot fit."""
        if len(text) <= self.char_limit:
            return
        used = _size(self.entries())
        if len(text) > used:
            raise LimitExceeded(self.target, used=used, limit=self.char_limit, final=len(text), entry=len(text))

    def _raw(self) -> bytes:
        return self.documents.read(self.path)  # no memories yet reads as b"", like an empty file

    def _backup(self, raw: bytes) -> Path:
        stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
        return keep_copy(self.path, raw, stamp=stamp, doing="back up the outside edit to", error=StoreUnavailable)

#: the package's one lock and atomic write, failing with this store's own error
def locked(path: Path) -> contextlib.AbstractContextManager[None]:
    """A memory file's lock (hermes' own sidecar), waited for :data:`~...storage.documents.DOCUMENT_LOCK_SECONDS` at
    most (a lock a stopped process held kept a user's writes, approvals and forget --user waiting for ever, saying
    nothing: a hostile-values pass). :raises StoreUnavailable: it cannot be taken."""
    return files.locked(path, error=StoreUnavailable, timeout=documents.DOCUMENT_LOCK_SECONDS)


atomic_write = functools.partial(files.atomic_write, error=StoreUnavailable)


def _sentence(parts: Sequence[str]) -> str:
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]


class MemoryStore:
    """Both memory files of one hermes home: ``memory`` (MEMORY.md) and ``user`` (USER.md)."""

    def __init__(self, hermes_home: Path, *, memory_char_limit: int = 2200, user_char_limit: int = 1375,
                 scan: Scanner | None = None, folder: Path | None = None, documents: Documents | None = None,
                 shown: Callable[[str], str] = str) -> None:
        """:param folder: where the files are; default ``<hermes_home>/memories`` (hermes' own).
        :param documents: where their bytes are kept (see :class:`MemoryFile`); default the files.
        :param shown: how error messages name an entry (see :class:`MemoryFile`)."""
        folder = Path(folder) if folder is not None else Path(hermes_home) / "memories"
        self.folder = folder
        self.memory = MemoryFile(folder / "MEMORY.md", target="memory", char_limit=memory_char_limit, scan=scan,
                                 documents=documents, shown=shown)
        self.user = MemoryFile(folder / "USER.md", target="user", char_limit=user_char_limit, scan=scan,
                               documents=documents, shown=shown)

    def file(self, target: str) -> MemoryFile:
        """The file for ``"memory"`` or ``"user"``."""
        if target == "memory":
            return self.memory
        if target == "user":
            return self.user
        raise UnknownTarget(target)

    def snapshot(self) -> dict[str, list[str]]:
        """Both files' entries, each read once (for the frozen system-prompt block)."""
        return {"memory": self.memory.entries(), "user": self.user.entries()}

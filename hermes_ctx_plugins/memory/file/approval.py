"""Staged memory writes (``write_approval: stage``): held until the user approves or rejects them.

A JSON file beside MEMORY.md, rewritten atomically under its own cross-process lock; approving
applies the operations through the store (limits, duplicates and the threat scan are checked
again at that moment, against the file as it is then).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import logging
import re
import threading
import time
import uuid
from collections import OrderedDict
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from ...safety.policy import Policy
from .store import MemoryStore, Op, StoreUnavailable, TooManyPending, WriteResult, atomic_write, locked

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class PendingWrite:
    id: str
    target: str
    ops: tuple[Op, ...]
    created: float
    session_id: str = ""

    def describe(self) -> str:
        # a replace names the entry it overwrites: the approver must see what goes, not only what comes
        parts = [f"add {op.text!r}" if op.action == "add" else f"replace {op.match!r} with {op.text!r}"
                 if op.action == "replace" else f"remove {op.match!r}" for op in self.ops]
        return f"{self.id}  {self.target}: " + "; ".join(parts)


def _check_item(item: PendingWrite) -> None:
    """A staged write as :meth:`PendingWrites.stage` writes it; else ``ValueError``. Its id and target are printed as
    they are by ``memory pending`` (an escape sequence in them would rewrite what the approver reads), its texts
    only through ``repr``."""
    if not (isinstance(item.id, str) and _ID.fullmatch(item.id)):
        raise ValueError(f"the id {item.id!r} is not one the stager writes (8 hex digits)")
    if item.target not in ("memory", "user"):
        raise ValueError(f"the target {item.target!r} is neither 'memory' nor 'user'")
    if isinstance(item.created, bool) or not isinstance(item.created, (int, float)):
        raise ValueError(f"the time {item.created!r} is not a number")
    if not isinstance(item.session_id, str):
        raise ValueError(f"the session id {item.session_id!r} is not text")
    for op in item.ops:
        if op.action not in ("add", "replace", "remove") or not isinstance(op.text, str) or not isinstance(
                op.match, str) or not isinstance(op.whole, bool):
            raise ValueError(f"the operation {op!r} is not one the stager writes")


#: the ids :meth:`PendingWrites.stage` gives
_ID = re.compile(r"[0-9a-f]{8}")
#: the most writes held for approval in one owner's file (see :meth:`PendingWrites.stage`)
MAX_PENDING = 200


class Screen:
    """What the scanner's policy says of the texts of one memory write (the gate acts on it): ``refusal`` (the
    tool's error; some text is blocked), else ``held`` (why it is staged; "" when no text is), ``cleared`` (texts the
    judge cleared, to record as approved) and ``warned`` (why a text is written with a warning; "" when none is)."""

    def __init__(self, texts: list[str], policy: Policy) -> None:
        # one write waits for the judge judge_timeout seconds in all, not per text: past that, layers 1-2 decide
        budget = getattr(policy.judge, "timeout", None)
        started, decisions = time.monotonic(), []
        for text in texts:
            left = None if budget is None else budget - (time.monotonic() - started)
            within = getattr(policy.judge, "within", None)
            if left is not None and left <= 0:
                decisions.append(policy.for_recall.decide(text))
            elif left is not None and within is not None:  # the judge waits what is left of the budget, no more
                decisions.append(dataclasses.replace(policy, judge=within(left)).decide(text))
            else:
                decisions.append(policy.decide(text))
        blocked = [d for d in decisions if d.blocked]
        kinds = ", ".join(sorted({f.kind for d in blocked for f in d.findings}))
        self.refusal = (f"refused: the text looks like {kinds} ({'; '.join(d.explain() for d in blocked)}); memory "
                        "is shown to future sessions, so it must not carry instructions or secrets") if blocked else ""
        held = [d.explain() for d in decisions if d.action == "stage"]
        self.held = f" because the scanner's layers disagree ({'; '.join(held)})" if held else ""
        self.cleared = [t for t, d in zip(texts, decisions, strict=True) if d.action == "allow" and d.findings]
        self.warned = "; ".join(d.explain() for d in decisions if d.action == "warn")
        if self.warned:
            log.warning("memory write kept with a warning (ctx_plugins.safety.on_disagreement: warn): %s",
                        self.warned)


class Warnings:
    """The warning a write was let through with (``on_disagreement: warn``), from the gate to the tool's answer,
    by the write's arguments: our tool reads it, and hermes' own through the memory gate. The last 64 are kept."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._given: OrderedDict[str, str] = OrderedDict()

    @staticmethod
    def _key(args: dict[str, Any]) -> str:
        return json.dumps(args, sort_keys=True, default=str, ensure_ascii=True)

    def put(self, args: dict[str, Any], warning: str) -> None:
        if warning:
            with self._lock:
                self._given[self._key(args)] = warning
                while len(self._given) > 64:
                    self._given.popitem(last=False)

    def take(self, args: dict[str, Any]) -> str:
        with self._lock:
            return self._given.pop(self._key(args), "")


#: the file beside ``pending.json`` that records approved texts
APPROVED = "approved.json"


class Approved:
    """Digests of the texts someone approved although the scanner's layers disagreed on them: the user
    (``hermes-ctx memory approve`` or ``memory add``) or the LLM judge. At load an entry the layers disagree on is
    shown only if it is here (under ``on_disagreement: stage`` or ``block``), so a line appended to MEMORY.md from
    outside is not taken as approved. The most recent :data:`LIMIT` are kept."""

    LIMIT = 2_000

    def __init__(self, path: Path) -> None:
        self.path = path
        self._cache: tuple[float, frozenset[str]] | None = None

    @staticmethod
    def digest(text: str) -> str:
        """Of the text as the files keep it (line ends unified, trimmed: hermes' writer and ours both do that)."""
        kept = text.replace("\r\n", "\n").replace("\r", "\n").strip()
        return hashlib.sha256(kept.encode("utf-8", "surrogatepass")).hexdigest()[:32]

    def _read(self) -> list[str]:
        try:
            raw = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return []
        except (OSError, ValueError, RecursionError) as exc:  # nothing counts as approved (safe); the next write keeps
            # a copy (RecursionError: JSON nested deeper than Python's parser goes)
            log.error("the approved memory texts in %s cannot be read (%s); entries the scanner's layers disagree "
                      "on stay withheld until they are approved again", self.path, exc)
            return []
        return [d for d in raw if isinstance(d, str)] if isinstance(raw, list) else []

    def add(self, texts: Iterable[str]) -> None:
        new = [self.digest(t) for t in texts]
        if not new:
            return
        with locked(self.path):
            known = self._read()
            if not known and self.path.exists() and self.path.stat().st_size > 2:  # damaged: keep it for the user
                self.path.replace(self.path.with_name(f"{self.path.name}.damaged-{int(time.time())}"))
            kept = [d for d in known if d not in new] + new
            atomic_write(self.path, json.dumps(kept[-self.LIMIT:]).encode("utf-8"))
        self._cache = None

    def __contains__(self, text: object) -> bool:
        if not isinstance(text, str):
            return False
        try:
            mtime = self.path.stat().st_mtime
        except OSError:
            return False
        if self._cache is None or self._cache[0] != mtime:
            self._cache = (mtime, frozenset(self._read()))
        return self.digest(text) in self._cache[1]


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
        except RecursionError:  # nested deeper than Python's parser goes: named like any damaged file
            raise StoreUnavailable(self.path, "read the pending writes in", OSError(
                "its JSON is nested too deep to read; move it aside to start over")) from None
        try:
            items = [PendingWrite(id=item["id"], target=item["target"], created=item["created"],
                                  session_id=item.get("session_id", ""),
                                  ops=tuple(Op(**op) for op in item["ops"])) for item in raw]
            for item in items:
                _check_item(item)
            ids = [item.id for item in items]
            if len(set(ids)) != len(ids):  # `approve ID` would apply one and drop the others unseen
                raise ValueError(f"the id {next(i for i in ids if ids.count(i) > 1)!r} is used twice")
        except (TypeError, KeyError, AttributeError, ValueError) as exc:  # edited by hand, or written by something else
            raise StoreUnavailable(self.path, "read the pending writes in", OSError(
                f"it is not a list of staged writes ({type(exc).__name__}: {exc}); move it aside to start "
                "over")) from exc
        return items

    def _save(self, items: list[PendingWrite]) -> None:
        data: list[dict[str, Any]] = [asdict(item) for item in items]
        atomic_write(self.path, json.dumps(data, ensure_ascii=False, indent=1).encode("utf-8"))

    def items(self) -> list[PendingWrite]:
        return self._load()

    def stage(self, target: str, ops: list[Op], *, session_id: str = "") -> str:
        """Hold a write for the user; its id. The same write staged again is the one already held (a model
        retrying, or a review writing it each round, made a wall of copies to reject one by one).

        :raises TooManyPending: :data:`MAX_PENDING` writes already wait (each stage rewrote them all, and the
            approver's list grew without end)."""
        item = PendingWrite(id=uuid.uuid4().hex[:8], target=target, ops=tuple(ops), created=time.time(),
                            session_id=session_id)
        with locked(self.path):
            items = self._load()
            same = next((held for held in items if held.target == target and held.ops == item.ops), None)
            if same is not None:
                return same.id
            if len(items) >= MAX_PENDING:
                raise TooManyPending(len(items))
            self._save([*items, item])
        return item.id

    def _absent(self, pending_id: str) -> None:
        """Raise :meth:`_take`'s KeyError when nothing was ever staged here (before locking, which would create the
        owner's folder: a mistyped user is nobody's, and a look-up leaves nothing behind)."""
        if not self.path.exists():
            self._take(pending_id)

    def _take(self, pending_id: str) -> tuple[PendingWrite, list[PendingWrite]]:
        items = self._load()
        match = [item for item in items if item.id == pending_id]
        if not match:
            known = ", ".join(item.id for item in items) or "(none pending)"
            raise KeyError(f"no pending memory write {pending_id!r}; pending: {known}")
        return match[0], [item for item in items if item.id != pending_id]

    def approve(self, pending_id: str, store: MemoryStore) -> WriteResult:
        """Apply a staged write; it leaves the queue only if it was applied. (The CLI records the texts the
        scanner's layers disagreed on as approved once the write succeeded: :class:`Approved`.)"""
        return self.approve_item(pending_id, store)[1]

    def approve_item(self, pending_id: str, store: MemoryStore) -> tuple[PendingWrite, WriteResult]:
        """:meth:`approve`, also returning the write as it was applied (the approver is told what went in)."""
        self._absent(pending_id)
        with locked(self.path):
            item, rest = self._take(pending_id)
            file = store.file(item.target)
            if file.documents.forgotten_since(file.path, item.created):  # on another worker of a fleet
                self._save(rest)
                raise KeyError(f"pending memory write {pending_id!r} was staged before its owner's memories were "
                               "forgotten; it was dropped, nothing was written")
            result = file.apply(item.ops)
            self._save(rest)
        return item, result

    def reject(self, pending_id: str) -> PendingWrite:
        self._absent(pending_id)
        with locked(self.path):
            item, rest = self._take(pending_id)
            self._save(rest)
        return item

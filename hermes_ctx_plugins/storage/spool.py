"""An archive's spool: compactions waiting for the store, one JSON line each.

:meth:`ArchiveBackend.record <hermes_ctx_plugins.storage.base.ArchiveBackend.record>` never raises
and never loses what a compaction removed; this is how a backend keeps that promise. Every backend
whose store can refuse a write — a file or a server: every one but the in-memory backend — records
through :meth:`Spool.deliver`: it imports what the spool holds, then writes the new compaction; if
either fails, the compaction is appended here (fsynced) and imported at the next write that works.
Its ``forget_user`` clears the user's entries with :meth:`Spool.forget`, its ``stats`` reports
:meth:`Spool.count`. The spool is a local file beside the archive's location, :func:`spool_path`,
whatever the backend (a database server that is down cannot hold it).

Every access — appending, importing, rewriting to forget a user — holds the spool's cross-process
lock (a ``.lock`` sidecar), so a rewrite never loses a line another process is appending. An import
counts what it stored as it goes (``.importing.done``), so one killed half-way resumes after it.

An entry is kept in *stored* form (see :func:`hermes_ctx_plugins.scope.to_stored`): ids and each
message's JSON are escaped text, so any string — lone surrogates included — can be written as UTF-8
and comes back exactly. Lines written before that form (no ``"v"``) are upgraded when read.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from ..errors import HermesCtxError
from ..events import Message
from ..scope import from_stored, to_stored
from .files import atomic_write, locked
from .records import ForgetScope, redacted_message

log = logging.getLogger("hermes_ctx_plugins.archive")

#: the entry format: ids and messages in stored form
VERSION = 2
#: when neither the store nor the spool file takes a compaction (a full or read-only disk), a process holds
#: up to this many characters of them in memory and writes them out as soon as either works again
MAX_HELD_CHARS = 64_000_000

#: how long an import that must not keep its caller waiting (a search) goes on at most, in seconds
BRIEF_IMPORT = 1.0

Entry = dict[str, Any]


class UnstorableEntry(HermesCtxError, ValueError):
    """A store can never take this compaction (a value it refuses, not an outage): the spool sets it
    aside in ``<spool>.rejected`` instead of keeping it first in line, where it would hold back every
    compaction after it."""


def spool_path(location: Path) -> Path:
    """The spool of the archive at ``location``: ``<location>.spool.jsonl`` beside it."""
    return location.with_name(location.name + ".spool.jsonl")


class Redacted(dict[str, Any]):
    """A message every string of which went through ``redact_secrets``, JSON-safe (see
    :func:`redacted`): :func:`make_entry` takes it as it is. The archive redacts what a compaction
    removed once, and both stores it and makes its anchor index of it."""


def redacted(message: Message) -> Redacted:
    """``message`` with secrets redacted from every string in it (one already redacted: itself)."""
    return message if isinstance(message, Redacted) else Redacted(redacted_message(message))


def make_entry(*, namespace: str, session_id: str, user_id: str, strategy: str,
               removed: Sequence[tuple[int, Message]], tokens_before: int, tokens_after: int,
               owners: Sequence[str] | None = None) -> Entry:
    """One compaction as the spool keeps it: archived now, secrets redacted from its messages
    (:func:`redacted`), everything in stored form. ``owners``: whose turn each removed message is
    (see :meth:`ArchiveBackend.record <hermes_ctx_plugins.storage.base.ArchiveBackend.record>`)."""
    return entry_of(namespace=to_stored(namespace), session_id=to_stored(session_id), user_id=to_stored(user_id),
                    strategy=to_stored(strategy), created=time.time(), tokens_before=tokens_before,
                    tokens_after=tokens_after,
                    removed=[(position, to_stored(json.dumps(redacted(message), ensure_ascii=False)))
                             for position, message in removed],
                    owners=None if owners is None else [to_stored(owner) for owner in owners])


def entry_of(*, namespace: str, session_id: str, user_id: str, strategy: str, created: float, tokens_before: int,
             tokens_after: int, removed: Sequence[tuple[int, str]], owners: Sequence[str] | None = None) -> Entry:
    """An entry from values already in stored form (``removed``: each position and message JSON;
    ``owners``: each one's user, when not every one is ``user_id``'s): how a backend gives back a
    compaction it holds (:meth:`ArchiveBackend.compactions
    <hermes_ctx_plugins.storage.base.ArchiveBackend.compactions>`)."""
    entry: Entry = {"v": VERSION, "namespace": namespace, "session_id": session_id, "user_id": user_id,
                    "strategy": strategy, "created": created, "tokens_before": tokens_before,
                    "tokens_after": tokens_after}
    if owners is not None and len(owners) != len(removed):
        raise ValueError(f"a compaction of {len(removed)} messages was given {len(owners)} owners")
    if owners is not None and any(owner != user_id for owner in owners):  # a session several users speak in
        entry["owners"] = list(owners)  # before the messages: a line cut short in them still names every speaker
    entry["removed"] = [[position, message] for position, message in removed]
    return entry


def owners_of(entry: Entry) -> list[str]:
    """Whose turn each of ``entry``'s messages is, in stored form: the entry's ``owners`` (a session several
    users speak in: each message its speaker's), else its user's."""
    owners = entry.get("owners")
    if owners is None:
        return [entry["user_id"]] * len(entry["removed"])
    if isinstance(owners, list) and len(owners) == len(entry["removed"]) and all(isinstance(o, str) for o in owners):
        return owners
    # damaged (a wrong length or type): whose each turn is cannot be told, so it is nobody's -- never the compacting
    # user's (a hostile-values pass: alice's words went to bob's scope, and forgetting alice left them)
    return [""] * len(entry["removed"])


def tail_of(entry: Entry, kept: int) -> Entry:
    """``entry`` without its first ``kept`` messages (stored already), their owners with them."""
    owners = owners_of(entry)[kept:]
    shorter = {key: value for key, value in entry.items() if key not in ("owners", "removed")}
    if any(owner != entry["user_id"] for owner in owners):
        shorter["owners"] = owners  # before the messages, as entry_of writes them
    shorter["removed"] = entry["removed"][kept:]
    return shorter


def forgets(entry: Entry, owner: ForgetScope, written: Callable[[str], str] = str) -> bool:
    """Whether forgetting ``owner`` removes ``entry``: its owner's (:meth:`ForgetScope.owns`), or holding a turn
    of the user, or a turn of nobody's in one of the user's sessions, in a session several users speak in (the whole
    compaction goes: its other turns answer or quote theirs). ``written``: the ids as the caller's store compares
    them."""
    namespace, session = written(entry["namespace"]), written(entry["session_id"])
    return any(owner.owns(namespace, session, written(user)) for user in {entry["user_id"], *owners_of(entry)})


def repeated(latest: Sequence[str], removed: Sequence[Sequence[Any]]) -> int:
    """How many of ``removed`` (an entry's positions and stored messages) to take as the session's latest stored
    compaction (its stored messages ``latest``, in order) again: all of those when ``removed`` opens with every one
    of them, else none. A process killed after the archive stored a compaction but before hermes saved the
    compacted session compacts the same history again at its restart: the messages it removes again are the ones
    stored, and storing them twice would show every search hit twice."""
    if not latest or len(latest) > len(removed):
        return 0
    same = all(stored == item[1] for stored, item in zip(latest, removed[:len(latest)], strict=True))
    return len(latest) if same else 0


def _upgraded(entry: Entry) -> Entry:
    """``entry`` in the current form (lines spooled before it held raw ids and message objects)."""
    if entry.get("v") == VERSION:
        return entry
    return {**entry, "v": VERSION, "namespace": "",
            **{key: to_stored(str(entry.get(key, ""))) for key in ("session_id", "user_id", "strategy")},
            "removed": [[position, to_stored(json.dumps(message, ensure_ascii=False))]
                        for position, message in entry["removed"]]}


_TEXTS = ("namespace", "session_id", "user_id", "strategy")
_COUNTS = ("tokens_before", "tokens_after")


def problem_of(entry: Any, *, messages: bool = False) -> str | None:
    """What makes ``entry`` (a spool line read) no compaction a store could take, ``None`` when nothing does; with
    ``messages``, each message's JSON is read too (an import's check: a store decodes them). A hostile-values pass:
    one line of valid JSON with a field of another type raised a plain ValueError or KeyError at every import, which
    read as an outage, and every compaction after it waited behind it for good."""
    if not isinstance(entry, dict):
        return f"a JSON {type(entry).__name__}, not an object"
    wrong = [key for key in _TEXTS if not isinstance(entry.get(key), str)]
    wrong += [key for key in (*_COUNTS, "created") if type(entry.get(key)) not in (int, float)]  # not a bool
    if wrong:
        return f"its {', '.join(wrong)} missing or of another type"
    removed = entry.get("removed")
    if not isinstance(removed, list) or not all(
            isinstance(item, list) and len(item) == 2 and type(item[0]) is int and isinstance(item[1], str)
            for item in removed):
        return "its removed messages are not [position, message] pairs"
    for n, (_, text) in enumerate(removed if messages else ()):
        try:
            message = json.loads(from_stored(text))
        except (ValueError, RecursionError) as exc:
            return f"its message {n} is not JSON ({exc})"
        if not isinstance(message, dict):
            return f"its message {n} is a JSON {type(message).__name__}, not an object"
    return None


def mentions(line: str, user: str) -> bool:
    """Whether a spool line (JSON, maybe cut short or damaged) names ``user``: their id, in stored form, as a JSON
    string in it."""
    return json.dumps(to_stored(user), ensure_ascii=False) in line


def _lines(path: Path) -> list[str]:
    """The file's lines. Only ``\\n`` ends one (JSON leaves U+2028 and U+0085 unescaped, which
    ``splitlines`` would split at), and a torn multi-byte character cannot make the rest unreadable."""
    return [line for line in path.read_text(encoding="utf-8", errors="replace").split("\n") if line]


def import_pending(spool: Spool, insert: Callable[[Entry], object], store: object, *, wait: bool = True) -> int:
    """What ``spool`` holds, imported by ``insert`` (see :meth:`ArchiveBackend.import_spooled
    <hermes_ctx_plugins.storage.base.ArchiveBackend.import_spooled>`): how many; never raises (what the ``store``
    refuses stays spooled). ``wait`` False: not while another process imports, and for :data:`BRIEF_IMPORT` at most."""
    if not spool.pending():
        return 0
    try:
        return spool.import_into(insert, wait=wait, seconds=None if wait else BRIEF_IMPORT)
    except Exception as exc:  # the store still refuses: they wait for the next write or search
        log.info("archive %s: the spooled compactions are not imported yet (%s)", store, exc)
        return 0


class Spool:
    """The spool file next to the archive, and the file an interrupted import left behind."""

    def __init__(self, path: Path) -> None:
        self.path = path
        #: compactions this instance imported so far (a caller tells from it that rows arrived it did not write)
        self.imported = 0
        #: what an import works on (a process killed mid-import leaves it; the next import resumes)
        self.working = path.with_suffix(".importing")
        #: how many of :attr:`working`'s entries are stored already, and which file that was (its inode and
        #: size): an import killed after storing some resumes after them instead of storing them twice
        self.progress = self.working.with_name(self.working.name + ".done")
        #: compactions neither the store nor the spool file took, held by this process (:meth:`deliver`)
        self._held: list[Entry] = []
        self._held_chars = 0
        self._holding = threading.Lock()

    def pending(self) -> bool:
        return self.path.exists() or self.working.exists()

    def where(self) -> str:
        """The files holding what waits, for a reader: the spool file and what an interrupted import left (the spool
        file alone once neither exists). ``archive stats`` named the spool file where only the other was (a newcomer
        walk)."""
        return " and ".join(str(p) for p in (self.path, self.working) if p.exists()) or str(self.path)

    def count(self, *, lock: bool = True) -> int:
        """How many readable compactions wait to be imported (those this process holds included); ``lock=False``: read
        without taking the spool's lock, for a reader that only looks (``archive stats``, ``doctor``: taking it made a
        lock file in a home they may only read, and failed in one they cannot write -- a review)."""
        return len(self.entries(lock=lock))

    @property
    def rejected(self) -> Path:
        """Where compactions the store can never take are set aside (JSON lines, as the spool)."""
        return self.path.with_suffix(".rejected")

    def deliver(self, entry: Entry, insert: Callable[[Entry], list[int]], *, store: Path) -> list[int]:
        """Import what waits, then ``insert(entry)`` and return what it returns; if the ``store``
        refuses either — whatever it raises — keep ``entry`` here and return ``[]``. Never raises. If
        even the spool file cannot be written (its folder is the store's: a full or read-only disk), the
        compaction is held in this process's memory (up to :data:`MAX_HELD_CHARS`, logged as critical)
        and stored or spooled first thing once either works again; past that bound, or if the process
        exits first, it is lost. An entry the store can never take (:class:`UnstorableEntry`) is set
        aside in :attr:`rejected`."""
        try:
            self._release(insert)
            self.import_into(insert)
            return insert(entry)
        except UnstorableEntry as exc:
            self._reject(entry, exc)
            return []
        except Exception as exc:  # whatever keeps the store from taking them, the spool does
            log.error("could not archive %d removed messages in %s (%s); kept in %s until it works again",
                      len(entry["removed"]), store, exc, self.path)
            self._spool_held()
            try:
                self.append(entry)
            except OSError as error:
                self._hold(entry, error)
            return []

    def _hold(self, entry: Entry, error: OSError) -> None:
        size = sum(len(message) for _, message in entry["removed"])
        with self._holding:
            if self._held_chars + size > MAX_HELD_CHARS:
                log.critical("the removed messages could be neither archived nor spooled to %s (%s), and this "
                             "process holds %d others already: they are lost from the archive", self.path, error,
                             len(self._held))
                return
            self._held.append(entry)
            self._held_chars += size
        log.critical("the removed messages could be neither archived nor spooled to %s (%s): held in this "
                     "process's memory until either works (lost if it exits first)", self.path, error)

    def _release(self, insert: Callable[[Entry], object]) -> None:
        """What this process holds, to the store. :raises: what ``insert`` raises (the rest stays held)."""
        def stored(entry: Entry) -> None:
            try:
                insert(entry)
            except UnstorableEntry as exc:
                self._reject(entry, exc)

        self._write_held(stored)

    def _spool_held(self) -> None:
        """What this process holds, to the spool file, while it can be written."""
        with contextlib.suppress(OSError):
            self._write_held(self.append)

    def _write_held(self, write: Callable[[Entry], object]) -> None:
        """Hand what this process holds to ``write``, oldest first, each let go once written.
        :raises: what ``write`` raises (that entry and the rest stay held)."""
        while True:
            with self._holding:
                if not self._held:
                    return
                entry = self._held[0]
            write(entry)
            with self._holding:
                if self._held and self._held[0] is entry:
                    self._held.pop(0)
                    self._held_chars -= sum(len(message) for _, message in entry["removed"])

    def append(self, entry: Entry, *, to: Path | None = None) -> None:
        """Add one compaction (to the spool, or ``to``). :raises OSError: it could not be written."""
        line = json.dumps(entry, ensure_ascii=False) + "\n"
        with locked(self.path):
            self._append_locked(line, to or self.path)

    @staticmethod
    def _append_locked(line: str, path: Path) -> None:
        with open(path, "a+b") as handle:
            if handle.tell():  # a line a killed process left unfinished ends here, not glued to this one (a review)
                handle.seek(-1, os.SEEK_END)
                if handle.read(1) != b"\n":
                    line = "\n" + line
            handle.write(line.encode("utf-8"))
            handle.flush()
            os.fsync(handle.fileno())

    def _reject(self, entry: Entry, exc: Exception, *, locked_already: bool = False) -> None:
        log.error("the archive can never store a compaction of %d messages (%s); set aside in %s, never "
                  "dropped", len(entry["removed"]), exc, self.rejected)
        try:
            line = json.dumps(entry, ensure_ascii=False) + "\n"
            if locked_already:
                self._append_locked(line, self.rejected)
            else:
                self.append(entry, to=self.rejected)
        except OSError as error:
            log.critical("a compaction could be neither archived nor set aside in %s (%s): it is lost from "
                         "the archive", self.rejected, error)

    def _set_aside(self, line: str) -> None:
        """A line no import can read, to :attr:`rejected` as it is (the spool's lock held)."""
        log.error("a line of the archive's spool %s is no compaction a store could take; set aside in %s",
                  self.working, self.rejected)
        try:
            self._append_locked(line + "\n", self.rejected)
        except OSError as error:
            log.critical("an unreadable line of the spool could not be set aside in %s (%s): dropped", self.rejected,
                         error)

    def import_into(self, insert: Callable[[Entry], object], *, wait: bool = True,
                    seconds: float | None = None) -> int:
        """Hand every spooled compaction to ``insert`` (oldest first) and empty the spool; returns
        how many. If ``insert`` raises, what it did not take stays spooled for the next import.

        Each entry stored is counted in :attr:`progress` (fsynced) before the next is tried, so an import
        killed half-way resumes after what it stored (at most the one entry stored but not yet counted
        is stored again) rather than storing everything twice. What was spooled while an earlier import's
        file waited is imported in the same call. ``wait`` False: nothing while another process imports;
        ``seconds``: stop after about that long, the rest left for the next import (a search waited 20 s on
        another process holding the spool, and 5 s on another's import of a long outage's spool)."""
        if not self.pending():
            return 0
        count, until = 0, None if seconds is None else time.monotonic() + seconds
        with contextlib.ExitStack() as held:
            try:
                held.enter_context(locked(self.path, wait=wait))
            except BlockingIOError:
                log.info("the archive's spool %s is being imported by another process", self.path)
                return 0
            while True:
                if self.path.exists() and not self.working.exists():
                    self.progress.unlink(missing_ok=True)  # an old count never names a new file (inodes are reused)
                    os.replace(self.path, self.working)
                if not self.working.exists():  # nothing left (or another process imported it meanwhile)
                    break
                stored, finished = self._import_working(insert, until)
                count += stored
                if not finished:
                    break
        self.imported += count
        log.info("imported %d spooled compactions", count)
        return count

    def _import_working(self, insert: Callable[[Entry], object], until: float | None) -> tuple[int, bool]:
        """:meth:`import_into` of :attr:`working` (the lock held): how many were stored, and whether all were
        (else the time ``until`` ran out first: the rest is the next import's)."""
        count, lines = 0, _lines(self.working)
        stored = self._stored(len(lines))
        rest = lines[stored:]  # what an earlier import stored is not read again (a review: a search's brief import
        # re-read a long outage's whole spool each time, and past ~150 MB imported nothing in its second)
        for done, (line, entry) in enumerate(zip(rest, self._entries(self.working, rest), strict=True), stored):
            if until is not None and time.monotonic() > until:
                return count, False
            if entry is None:  # kept for whoever looks, never first in line (nor dropped unseen)
                self._set_aside(line)
                self._count_stored(done + 1)
                continue
            try:
                problem = problem_of(entry, messages=True)
                if problem is not None:
                    raise UnstorableEntry(f"a spooled compaction that cannot be read: {problem}")
                insert(entry)
            except UnstorableEntry as exc:  # never first in line for good: the others go on
                self._reject(entry, exc, locked_already=True)
            else:
                count += 1
            self._count_stored(done + 1)  # a failure above raises past this: that entry is next
        self.working.unlink()
        self.progress.unlink(missing_ok=True)
        return count, True

    def _stored(self, lines: int) -> int:
        """How many of the import file's first entries are stored already: 0 unless :attr:`progress`
        names this very file (a file rewritten since, by :meth:`forget`, is another inode)."""
        try:
            text = self.progress.read_text(encoding="ascii")
            stat = self.working.stat()
            done, inode, size = (int(part) for part in text.split())
        except (OSError, ValueError):
            return 0
        return min(done, lines) if (inode, size) == (stat.st_ino, stat.st_size) else 0

    def _count_stored(self, done: int) -> None:
        stat = self.working.stat()
        atomic_write(self.progress, f"{done} {stat.st_ino} {stat.st_size}".encode("ascii"))

    def entries(self, *, lock: bool = True) -> list[Entry]:
        """Every readable spooled compaction not stored yet, oldest first, then those this process holds (``lock``:
        see :meth:`count`)."""
        with self._holding:
            held = list(self._held)
        if not self.pending():
            return held
        with locked(self.path) if lock else contextlib.nullcontext():
            found = []
            for path in (self.working, self.path):
                if path.exists():
                    lines = _lines(path)
                    skip = self._stored(len(lines)) if path == self.working else 0
                    found += [entry for entry in self._entries(path, lines[skip:]) if entry is not None]
            return found + held

    def forget(self, belongs: Callable[[Entry], bool], *, user: str | None = None) -> int:
        """Remove every compaction ``belongs`` accepts from the spool, the file being imported and those set aside,
        rewriting each atomically; returns the messages removed. A line that cannot be read goes when it names
        ``user`` (may hold their words: :func:`mentions`), or always without ``user``; else it is kept for whoever
        looks (a review: any user's forget dropped every such line set aside)."""
        removed = 0
        with self._holding:  # what this process holds for the store
            kept_held = [entry for entry in self._held if not belongs(entry)]
            removed += sum(len(entry["removed"]) for entry in self._held if belongs(entry))
            self._held = kept_held
            self._held_chars = sum(len(message) for entry in kept_held for _, message in entry["removed"])
        if not self.pending() and not self.rejected.exists():
            return removed
        with locked(self.path):
            for path in (self.path, self.working, self.rejected):
                if not path.exists():
                    continue
                lines = _lines(path)
                if path == self.working:  # what an import stored already is not the spool's any more
                    lines = lines[self._stored(len(lines)):]
                kept = []
                for line, entry in zip(lines, self._entries(path, lines), strict=True):
                    if entry is None:
                        if user is not None and not mentions(line, user):
                            kept.append(line)
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
                if path == self.working:  # rewritten without what was stored: the count is void
                    self.progress.unlink(missing_ok=True)
        return removed

    @staticmethod
    def _entries(path: Path, lines: list[str]) -> Iterator[Entry | None]:
        """Each line's entry, ``None`` for a line that cannot be read."""
        for line in lines:
            try:
                entry = _upgraded(json.loads(line))
            except (ValueError, KeyError, TypeError, AttributeError, RecursionError):  # a torn line of a process
                log.warning("skipping an unreadable line in %s", path)  # killed mid-append
                yield None
                continue
            problem = problem_of(entry)
            if problem is not None:
                log.warning("skipping a line of %s that is no compaction: %s", path, problem)
            yield None if problem is not None else entry

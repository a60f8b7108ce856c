"""``hermes-ctx storage migrate --from sqlite --to postgres``: copy the stores the package owns from one
backend into another and check that the target holds every item of the source.

What is copied, each read from the source and written to the target through the storage seam:
ctx-local's memories (of every deployment's ``path``) with their quarantined records and the progress
of the write-behind queue beside them — so the queue resumes where it stopped, and records waiting in
it reach the new backend — and the archive, compaction by compaction (owner, strategy, tokens, time,
each message with its position). The stores keep their locations: the target is keyed by the same
paths, so switching ``ctx_plugins.storage.backend`` afterwards finds them there. Compactions waiting in
the archive's spool stay in it: the spool is a local file whichever backend is chosen, and the chosen
one imports it at its next write.

Running it again copies nothing twice: a memory, a quarantined record or a compaction already in the
target is recognised by its content (memories by their key too) and skipped, so an interrupted run is
finished by running it again; one an earlier run copied and the target deleted since is not copied back
(:class:`_Ledger`, beside the source store: the only file it writes there). The ids the stores give
change (a memory's ``#id``, an archived message's ``ctx_expand`` id); order, owners, texts and times do
not. Run it with hermes stopped: it refuses while a process is writing to the memory's queue.

Exit codes: 0 every item verified in the target; 1 an item is missing or differs there, or hermes is
running; 2 the config is invalid; 3 a store cannot be used (the server is down: nothing was changed
in the source); 4 a backend name that cannot be migrated.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import hashlib
import json
import re
import sys
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from .. import storage
from ..cliutil import EXIT_INPUT, EXIT_PLUGIN, EXIT_PROBLEM, Progress, emit, shown
from ..config import Config, hermes_home, load_config
from ..errors import HermesCtxError
from ..memory.local import LocalProvider
from ..memory.local.options import NAME
from ..memory.local.queue import inspect
from ..scope import from_stored
from ..storage import ArchiveError, LocalStoreError, Memory, MemoryBackend, Quarantined, Record
from ..storage.files import atomic_write, locked
from ..storage.segments import SegmentState
from ..storage.spool import Entry
from .common import load_failed

_T = TypeVar("_T")

#: memories per write: one transaction each
BATCH = 500


def add_parser(commands: Any) -> None:
    names = ", ".join(sorted(storage.BACKENDS))
    command = commands.add_parser("storage", help="the backend behind ctx-local's memories and the archive: migrate")
    sub = command.add_subparsers(dest="storage_command", required=True)
    migrate = sub.add_parser("migrate", help="copy ctx-local's memories and the archive into another backend, "
                                             "verified item by item (hermes stopped; safe to run again)")
    migrate.add_argument("--from", dest="source", required=True, metavar="BACKEND", help=f"one of: {names}")
    migrate.add_argument("--to", dest="target", required=True, metavar="BACKEND", help=f"one of: {names}")
    migrate.add_argument("--again", action="store_true",
                         help="copy again what earlier runs copied and the target lacks now (a target emptied or "
                              "restored from a backup since); without it, that is taken for deleted there")


@dataclass
class Copied:
    """What one store's migration did: items in the source, written now, found in the target after."""

    store: str
    source: int = 0
    written: int = 0
    verified: int = 0
    problems: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    #: items the target refused for their own value (each a problem of its own)
    refused: int = field(default=0, repr=False)
    #: items an earlier run copied and the target deleted since: not copied again, not verified either
    deleted_there: int = 0

    @property
    def ok(self) -> bool:
        return not self.problems and self.verified + self.deleted_there == self.source


def run(args: argparse.Namespace) -> int:
    """``storage migrate``: one report line per store; see the module docs for the exit codes."""
    refused = _refused(args.source, args.target)
    if refused:
        print(f"hermes-ctx: {refused}", file=sys.stderr)
        return EXIT_INPUT
    try:
        configs = [load_config(args.config, deployment=name) for name in _deployments(args)]
        paths = list(dict.fromkeys(LocalProvider(c.options_for(NAME), hermes_home=hermes_home(), config=c).path
                                   for c in configs))
    except HermesCtxError as exc:
        return load_failed(exc)
    source, target = (_on(configs[0], name) for name in (args.source, args.target))
    running = [str(s.path) for path in paths for s in _segments(path) if s.live]
    if running:
        print(f"hermes-ctx: a running process is writing to {running[0]}: stop hermes first (what it wrote after "
              "the copy would stay behind in the old backend)", file=sys.stderr)
        return EXIT_PROBLEM
    try:
        with Progress() as bars:
            report = [item for path in paths for item in _memory(source, target, path, bars, again=args.again)]
            report.append(_archive(source, target, bars, again=args.again))
    except (LocalStoreError, ArchiveError) as exc:
        print(f"hermes-ctx: migration from {args.source} to {args.target} stopped: {exc}. Nothing was changed in "
              f"{args.source}; run the command again once both stores can be used (what was copied is not copied "
              "twice)", file=sys.stderr)
        return EXIT_PLUGIN
    ok = all(item.ok for item in report)
    emit(args, {"from": args.source, "to": args.target, "ok": ok,
                "stores": [{**asdict(item), "ok": item.ok} for item in report]},
         lambda: _as_text(report, args.source, args.target, ok))
    return 0 if ok else EXIT_PROBLEM


def _refused(source: str, target: str) -> str:
    """Why a migration between these backends cannot run ("": it can)."""
    for name in (source, target):
        if name not in storage.BACKENDS:
            return f"unknown storage backend {name!r}: the backends are {', '.join(sorted(storage.BACKENDS))}"
    if source == target:
        return f"--from and --to are both {source!r}: nothing to migrate"
    if "memory" in (source, target):
        return "the 'memory' backend keeps nothing beyond one process: there is nothing to migrate from or into it"
    return ""


def _deployments(args: argparse.Namespace) -> list[str | None]:
    """The configs whose ctx-local paths are migrated: the one ``--deployment`` names, else all."""
    if args.deployment:
        return [args.deployment]
    return [None, *sorted(load_config(args.config).plugins.deployments)]


def _on(config: Config, name: str) -> Config:
    """``config`` with both stores on backend ``name`` (per-store choices cleared)."""
    chosen = dataclasses.replace(config.plugins.storage, backend=name, memory="", archive="")
    return dataclasses.replace(config, plugins=dataclasses.replace(config.plugins, storage=chosen))


def _segments(path: Path) -> list[SegmentState]:
    """The segments of ctx-local's queue beside ``path``, each saying whether a process holds it."""
    queue = path.with_name(f"{path.name}.queue")
    return inspect(queue, {}) if queue.is_dir() else []


def _digest(*values: Any) -> bytes:
    """A fingerprint of ``values`` (strings of any kind, numbers): equal exactly when they are."""
    return hashlib.blake2b(repr(values).encode("utf-8"), digest_size=16).digest()


def _copy(copied: Copied, items: Iterable[_T], held: Callable[[], Iterable[_T]], fingerprint: Callable[[_T], bytes],
          write: Callable[[list[_T]], int], bars: Progress, *, batch: int = 1, why: str = "",
          ledger: _Ledger | None = None, same: Callable[[_T], Any] | None = None,
          named: Callable[[_T], str] = lambda item: "an item") -> Copied:
    """Write each of ``items`` the target does not hold yet (``held``, compared by ``fingerprint``,
    as many times as the source has it), then count how many of them it holds; ``why`` says what
    may keep one out. ``ledger``: what earlier runs copied into this target; one of those it lacks now
    was deleted there since (``memory forget``, retention) and is not copied again. ``same``: what makes two
    items one for the target (a memory's key): one the target holds another of is held (a note says so). ``named``: what
    a problem calls an item the target refuses (its own value: the rest is copied, see :func:`_write`)."""
    there = Counter(fingerprint(item) for item in held())
    wiped = ledger is not None and bool(ledger.marks) and not ledger.marks.intersection(there)
    wanted: Counter[bytes] = Counter()
    gone: Counter[bytes] = Counter()
    keys: dict[bytes, Any] = {}
    pending: list[_T] = []
    step = bars.step(copied.store)
    for item in items:
        step.advance()
        mark = fingerprint(item)
        wanted[mark] += 1
        if same is not None:
            keys[mark] = same(item)
        if wanted[mark] > there[mark] and ledger is not None and mark in ledger.marks:
            gone[mark] += 1
        elif wanted[mark] > there[mark]:
            pending.append(item)
        if len(pending) >= batch:
            _write(copied, pending, write, named)
            pending = []
    if pending:
        _write(copied, pending, write, named)
    copied.source = sum(wanted.values())
    now = Counter(fingerprint(item) for item in held())
    lacking = wanted - now - gone
    if same is not None and lacking:  # another copy of the same item (the same turn, another machine's time)
        there_keys = {same(item) for item in held()}
        held_so = {mark: count for mark, count in lacking.items() if keys[mark] in there_keys}
        if held_so:
            lacking -= Counter(held_so)
            copied.notes.append(f"{sum(held_so.values()):,} held by the target under their key already (the same "
                                "turn stored by another machine or run): the target's copy is kept")
    missing = sum(lacking.values())
    copied.deleted_there = sum(gone.values())
    copied.verified = copied.source - missing - copied.deleted_there
    if gone and wiped:  # TRUNCATE, DELETE, a restore -- or each deleted there: the operator tells (a review: taken
        # for emptied, what a user had deleted there came back)
        copied.problems.append(f"the target holds none of the {copied.deleted_there:,} items earlier runs copied "
                               "into it: emptied since (a TRUNCATE, a restore from a backup: run again with --again "
                               "to copy them) or each deleted there (then leave them so)")
    elif gone:
        copied.notes.append(f"{copied.deleted_there:,} copied by an earlier run and deleted in the target since: not "
                            "copied again (a target emptied or restored from a backup since: run with --again)")
    if missing > copied.refused:
        copied.problems.append(f"{missing - copied.refused} of them are not in the target after copying{why}")
    if ledger is not None:
        ledger.save({mark for mark in wanted if now[mark]})
    return copied


def _write(copied: Copied, batch: list[_T], write: Callable[[list[_T]], int], named: Callable[[_T], str]) -> None:
    """``write(batch)``; when the target refuses one of it for its own value (not the store: a user id past
    PostgreSQL's index entry limit), each alone, and each refused a problem naming it (a hostile-values pass: the
    whole run stopped with a traceback at that item, at every run, naming nothing)."""
    try:
        copied.written += write(batch)
    except (LocalStoreError, ArchiveError):
        raise
    except Exception as exc:
        if len(batch) > 1:
            for item in batch:
                _write(copied, [item], write, named)
            return
        reason = str(exc).splitlines()[0] if str(exc).strip() else type(exc).__name__
        copied.problems.append(f"the target refused {named(batch[0])}: {reason[:300]}")
        copied.refused += 1


def _owner(user_id: str, namespace: str) -> str:
    """A store's owner as a report names one: its ids cut to 60 characters, as a terminal shows them."""
    def cut(text: str) -> str:
        return repr(shown(text[:60])) + (f" (cut from {len(text):,} characters)" if len(text) > 60 else "")

    return f"user {cut(user_id)}" + (f" of deployment {cut(namespace)}" if namespace else "")


class _Ledger:
    """What ``storage migrate`` copied from the store at ``path`` into one target (by its
    :func:`~hermes_ctx_plugins.storage.identity`), kept beside the store (``<path>.migrated.json``): a second
    run told an item the target lacks from one deleted there since (a newcomer walk: a memory forgotten in the
    target came back from the SQLite files at the next run). What was noted counts only for the same making of the
    target (``incarnation``, the backend's :meth:`~hermes_ctx_plugins.storage.MemoryBackend.incarnation`): a target
    emptied and made again since is copied into whole (a hostile-values pass: it was "verified", nothing copied).
    Unreadable, nothing was noted (items are copied again, a deleted one too: said) and the file is kept aside."""

    def __init__(self, path: Path, key: str, incarnation: Callable[[], str | None], *, again: bool = False) -> None:
        """``again``: what was noted is not read (``--again``), only added to."""
        self.path, self.key, self._incarnation = path.with_name(f"{path.name}.migrated.json"), key, incarnation
        (every, why), told = self._load(), incarnation()
        if why is not None:
            print(f"hermes-ctx: the note of what earlier runs copied, {self.path}, cannot be read ({why}): what was "
                  "deleted in the target since may be copied again; the file is set aside as "
                  f"{self.path.name}.damaged", file=sys.stderr)
        entry = every.get(key)
        if why is None and entry is not None and not (isinstance(entry, dict) and isinstance(entry.get("marks"), list)):
            print(f"hermes-ctx: the note of what earlier runs copied into this target, in {self.path}, is of another "
                  "form: read as noting nothing (what was deleted in the target since may be copied again)",
                  file=sys.stderr)
        noted = self._marks(entry, told) if told != "" and not again else []
        self.marks = {bytes.fromhex(m) for m in noted}

    def _load(self) -> tuple[dict[str, Any], str | None]:
        """What the file notes, and why it cannot be read (``None``: it can, or there is none)."""
        try:
            found = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {}, None
        except (OSError, ValueError, RecursionError) as exc:
            return {}, str(exc)
        return (found, None) if isinstance(found, dict) else ({}, f"a JSON {type(found).__name__}, not an object")

    @staticmethod
    def _marks(noted: Any, told: str | None) -> list[str]:
        """The marks ``noted`` (a target's entry) holds for the target's making ``told``; none for another's."""
        marks = noted.get("marks") if isinstance(noted, dict) and noted.get("incarnation") == told else []
        return [m for m in marks if isinstance(m, str) and _HEX.fullmatch(m)] if isinstance(marks, list) else []

    def save(self, marks: set[bytes]) -> None:
        try:
            told = self._incarnation()
            with locked(self.path):
                every, why = self._load()
                if why is not None:  # damaged: kept for whoever looks, the other targets' notes with it
                    self.path.replace(self.path.with_name(f"{self.path.name}.damaged"))
                kept = self._marks(every.get(self.key), told)
                every[self.key] = {"incarnation": told, "marks": sorted({*kept, *(m.hex() for m in marks)})}
                atomic_write(self.path, json.dumps(every).encode("utf-8"))
        except OSError as exc:
            print(f"hermes-ctx: could not note what was copied in {self.path} ({exc}): a later run copies again what "
                  "is deleted in the target meanwhile", file=sys.stderr)


_HEX = re.compile(r"[0-9a-f]{32}")


def _memory_mark(memory: Memory) -> bytes:
    return _digest(*(value for name, value in asdict(memory).items() if name != "id"))


def _record(memory: Memory) -> Record:
    return Record(key=memory.key, kind=memory.kind, user_id=memory.user_id, chat_id=memory.chat_id,
                  session_id=memory.session_id, user_text=memory.user_text, assistant_text=memory.assistant_text,
                  fact_text=memory.fact_text, visibility=memory.visibility, source=memory.source,
                  created_at=memory.created_at, namespace=memory.namespace)


def _quarantine_mark(item: Quarantined) -> bytes:
    return _digest(item.segment, item.offset, item.record, item.error, item.attempts)


def _memory(source: Config, target: Config, path: Path, bars: Progress, *, again: bool = False) -> list[Copied]:
    """ctx-local's store at ``path``: memories, quarantined records, queue progress."""
    label = f"ctx-local memories {path}"
    if not storage.memory_exists(source, path):
        return [Copied(label, notes=[f"no {NAME} memory there in the source"])]
    with contextlib.ExitStack() as opened:
        new = storage.open_memory(target, path)  # first: a target that cannot be used stops it before any read
        opened.callback(new.close)
        old = storage.open_memory(source, path)
        opened.callback(old.close)
        memories = _copy(Copied(label), old.memories(), new.memories, _memory_mark,
                         lambda batch: new.write([_record(m) for m in batch]), bars, batch=BATCH,
                         why=" (their owner was forgotten there)",
                         ledger=_Ledger(path, f"memories {storage.identity(target)}", new.incarnation, again=again),
                         same=lambda memory: (memory.namespace, memory.key),
                         named=lambda memory: f"a memory of {_owner(memory.user_id, memory.namespace)}")

        progress = new.progress()  # before quarantine() moves it: a target ahead must stay ahead

        def quarantine(batch: list[Quarantined]) -> int:
            for item in batch:
                new.quarantine(item.segment, item.offset, item.record, item.error, item.attempts)
            return len(batch)

        quarantined = _copy(Copied(f"ctx-local quarantined records {path}"), old.quarantined(), new.quarantined,
                            _quarantine_mark, quarantine, bars)
        return [memories, quarantined, _progress(old, new, path, progress)]


def _progress(old: MemoryBackend, new: MemoryBackend, path: Path, before: dict[str, int]) -> Copied:
    """How far the queue beside ``path`` was applied: moved forward in the target, never back from
    where it was ``before`` the copy (a target that got further — hermes ran on it — is right): a
    queue resuming behind would replay lines whose memories were forgotten since."""
    copied = Copied(f"ctx-local queue segments' progress {path}.queue")
    wanted, there = old.progress(), new.progress()
    for segment, offset in {**wanted, **{s: max(o, wanted.get(s, -1)) for s, o in before.items()}}.items():
        if there.get(segment, -1) < offset:
            new.write([], segment=segment, offset=offset)
            copied.written += segment in wanted
    there = new.progress()
    copied.source = len(wanted)
    copied.verified = sum(1 for segment, offset in wanted.items() if there.get(segment, -1) >= offset)
    if copied.verified < copied.source:
        copied.problems.append("the target's progress stayed behind the source's")
    return copied


def _archive(source: Config, target: Config, bars: Progress, *, again: bool = False) -> Copied:
    old, new = storage.open_archive(source), storage.open_archive(target)
    copied = Copied(f"archive compactions {old.path}")
    try:
        if not old.exists():
            copied.notes.append("no archive there in the source")
            return copied
        messages = 0

        def restore(batch: list[Entry]) -> int:
            nonlocal messages
            for entry in batch:
                new.restore(entry)
                messages += len(entry["removed"])
            return len(batch)

        _copy(copied, old.compactions(), new.compactions, _entry_mark, restore, bars, named=_compaction,
              ledger=_Ledger(storage.archive_path(source), f"archive {storage.identity(target, 'archive')}",
                             new.incarnation, again=again))
        if messages:
            copied.notes.append(f"the compactions written held {messages:,} messages")
        stats = old.stats()
        if stats["spooled"]:
            copied.notes.append(f"{stats['spooled']} compactions wait in the spool {stats['spool']}: the backend the "
                                "config chooses imports them at its next write")
        return copied
    finally:
        old.close()
        new.close()


def _entry_mark(entry: Entry) -> bytes:
    return _digest(json.dumps(entry, sort_keys=True))


def _as_text(report: list[Copied], source: str, target: str, ok: bool) -> str:
    lines = []
    for item in report:
        state = "OK" if item.ok else "DIFFERS"
        since = f", {item.deleted_there:,} deleted there since" if item.deleted_there else ""
        lines.append(f"{item.store}: {item.source:,} in {source}, {item.written:,} written to {target} "
                     f"({item.source - item.written - item.deleted_there:,} there already{since}), "
                     f"{item.verified:,} verified: {state}")
        lines += [f"  {note}" for note in item.notes]
        lines += [f"  ! {problem}" for problem in item.problems]
    deleted = sum(item.deleted_there for item in report)
    lines.append((f"result: every item of {source} is in {target}" + (
        f" but {deleted:,} deleted there since" if deleted else "") + f"; set ctx_plugins.storage.backend: {target} "
        "and restart hermes") if ok else f"result: PROBLEMS: {target} does not hold everything {source} does")
    return "\n".join(lines)


def _compaction(entry: Entry) -> str:
    """An archived compaction as a report names one: its session and owners."""
    owners = dict.fromkeys([entry.get("user_id", ""), *(entry.get("owners") or [])])
    return (f"a compaction of session {shown(str(entry.get('session_id', ''))[:60])!r}, of "
            + ", ".join(_owner(from_stored(str(user)), "") for user in owners))

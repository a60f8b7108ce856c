"""``file``: MEMORY.md and USER.md, the same files hermes 0.19.0 keeps.

Built in and not external: it never counts against the one-external-provider limit. The system
prompt gets a snapshot frozen at session start (writes land on disk at once but leave the prompt —
and the provider's prefix cache — alone until the next session); every entry is scanned before it
is written and again when it is loaded, and a hostile one is withheld from the prompt behind a
placeholder while staying on disk for the user to review (``hermes-ctx memory show``).

**One pair of files per owner** (see :mod:`hermes_ctx_plugins.scope`): the anonymous user of the
top-level settings — hermes' single-user case — keeps hermes' own ``$HERMES_HOME/memories/``;
every other (deployment, user) has its own pair under
``memories/scoped/d<deployment>/u<user>/`` (:func:`memory_folder`), with its own lock files,
backups and staged writes. One provider serves every session of its host, each from its owner's
files.

**A fleet** (``ctx_plugins.storage.backend`` or ``.documents``: ``postgres``): the two memory files
of every owner are kept on the server, one copy every worker with the same configuration reads and
updates under a row lock, each worker's files its mirror (:mod:`hermes_ctx_plugins.storage.postgres.documents`).
Staged writes (``pending.json``) stay on the worker that staged them: they are approved there.

Over 500 lines: besides the provider's own tool it holds the whole of its contract with hermes' writer
(the gate every write passes, the session snapshot and what it withholds, forgetting an owner with every
lock, temp file and review of theirs), which is read as one; the store, the approvals, the review and the
skills are modules of their own.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import logging
import shutil
import threading
from collections import OrderedDict
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ... import storage
from ...chat import SummaryClient, SummaryModel
from ...config import hermes_home
from ...events import Forgotten, Message, SessionInfo, Turn
from ...options import option, short_repr
from ...safety import Finding, placeholder
from ...safety.engine.tables import blank_code_points, renders_blank
from ...safety.judge import policy_for
from ...safety.policy import Policy
from ...scope import path_segment
from ..base import MemoryProvider
from .approval import APPROVED, Approved, PendingWrites, Screen, Warnings
from .review import Reviewer
from .skills import SkillStore
from .store import (
    CONTROL,
    DELIMITER,
    LONE_SURROGATE,
    MEMORY_HEADER,
    USER_HEADER,
    MemoryStore,
    MemoryStoreError,
    Op,
    StoreUnavailable,
    TooManyPending,
    entries_in,
    locked,
)

log = logging.getLogger("hermes_ctx_plugins.memory")

APPROVAL_MODES = ("allow", "stage", "block")
#: owners whose stores / sessions whose snapshots one provider keeps open at most
_MAX_OWNERS = 256
_MAX_SESSIONS = 1024
REVIEW_MODES = ("auto", "on", "off")
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
    write_approval: str = option("allow", choices=APPROVAL_MODES, kind="an approval mode")
    #: background review: ``on``, ``off``, or ``auto`` = on, except inside hermes,
    #: which runs its own review on the same ``memory.nudge_interval`` (its writes still pass our
    #: scan and approval gate there)
    review: str = option("auto", choices=REVIEW_MODES, kind="a review mode")
    #: the review's model; empty = ``auxiliary.compression``, then the main model
    review_base_url: str = ""
    review_model: str = ""
    review_api_key: str = ""
    review_timeout: float = option(60.0, gt=0)
    #: model exchanges per review (each may carry several tool calls)
    review_max_rounds: int = option(4, ge=1)
    #: user turns / tool iterations between reviews; ``None`` = ``memory.nudge_interval`` /
    #: ``skills.creation_nudge_interval`` (set these to run ours while hermes' own is off)
    review_interval: int | None = option(None, ge=0)
    skill_review_interval: int | None = option(None, ge=0)
    #: how long the session's end waits for the final (``flush_min_turns``) review
    flush_timeout: float = option(30.0, ge=0)


def memory_folder(hermes_home: Path, deployment: str, user_id: str) -> Path:
    """Where the MEMORY.md / USER.md of ``(deployment, user_id)`` live: hermes' own folder for the
    anonymous top-level owner, else one folder per owner, named injectively (never aliased)."""
    base = Path(hermes_home) / "memories"
    if not deployment and not user_id:
        return base
    return base / SCOPED_DIR / path_segment(deployment, prefix="d") / path_segment(user_id, prefix="u")


#: the sub-folder of ``memories/`` holding every owner's files but the anonymous top-level one
SCOPED_DIR = "scoped"


@dataclass(frozen=True)
class _Owner:
    """One owner's files: the two memory files and the staged writes."""

    store: MemoryStore
    pending: PendingWrites
    #: the texts approved although the scanner's layers disagreed (by the user, or the judge at write)
    approved: Approved


@dataclass(frozen=True)
class _Snapshot:
    """A session's frozen view: the entries the prompt shows, and which hostile ones it withholds."""

    entries: dict[str, list[str]]
    #: hostile entry -> the placeholder shown instead
    withheld: dict[str, str]
    #: (deployment, user) whose files it shows
    owner: tuple[str, str]
    #: the files as they were when it was taken (:meth:`FileProvider._signature`)
    signature: tuple[Any, ...] = ()


#: how long forgetting a user waits for a background review of theirs under way (one still running then is
#: waiting for its model: none of its writes is made after the user was forgotten)
FORGET_WAITS_FOR_REVIEW = 5.0

#: the order in which the owner's locks are taken wherever more than one is held: ``memory approve`` holds
#: pending.json while it writes MEMORY.md or USER.md, ``forget`` all of them
LOCK_ORDER = ("pending.json", "MEMORY.md", "USER.md", APPROVED)


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
            raise ValueError(f"action must be add, replace or remove, got {short_repr(action)}")
        for key in ("content", "old_text"):  # str() of a number or a list would be written as an entry
            if item.get(key) is not None and not isinstance(item.get(key), str):
                raise ValueError(f"{key} must be text, got {short_repr(item.get(key))}")
        ops.append(Op(action=action, text=item.get("content") or "", match=item.get("old_text") or ""))
    return ops


class FileProvider(MemoryProvider):
    """MEMORY.md / USER.md per owner, byte-compatible with hermes (see the module docstring)."""

    name = "file"
    external = False
    description = "MEMORY.md and USER.md, the same files hermes keeps, one pair per user"
    options_class = FileOptions

    def __init__(self, options: Any = None, **kwargs: Any) -> None:
        super().__init__(options, **kwargs)
        self.home = Path(self.hermes_home or hermes_home())
        #: where every owner's MEMORY.md / USER.md are kept: the files, or a server's shared copy
        self.documents = storage.open_documents(self.config, self.home, error=StoreUnavailable)
        settings = self.config.memory
        self._lock = threading.Lock()
        self._owners: OrderedDict[tuple[str, str], _Owner] = OrderedDict()
        self._snapshots: OrderedDict[str, _Snapshot] = OrderedDict()
        self.skills = SkillStore(self.home / "skills", policy_for(self.config))
        self._review_client: SummaryClient | None = None
        self._review_deferred = False
        self.warnings = Warnings()  # gate() -> the tool's answer (ours, or hermes' through the memory gate)
        options = self.options
        self.reviewer = Reviewer(
            client_factory=self._review_model_client,
            memory_tool=lambda args, session: self.handle_tool_call("memory", args, session=session),
            memory_schema=TOOL_SCHEMA,
            memory_entries=lambda session: self.load_snapshot(session, quiet=True),
            skills=self.skills,
            memory_interval=settings.nudge_interval if options.review_interval is None else options.review_interval,
            skill_interval=(self.config.skills.creation_nudge_interval if options.skill_review_interval is None
                            else options.skill_review_interval),
            flush_min_turns=settings.flush_min_turns, max_rounds=options.review_max_rounds,
            flush_timeout=options.flush_timeout)

    # -- owners -----------------------------------------------------------------------------------
    def owner(self, session: SessionInfo | None = None) -> _Owner:
        """The files of ``session``'s owner (``None``: the anonymous top-level owner)."""
        key = (session.deployment, session.user_id) if session is not None else ("", "")
        with self._lock:
            owner = self._owners.get(key)
            if owner is None:
                folder = memory_folder(self.home, *key)
                settings = self.config.memory
                approved = Approved(folder / APPROVED)
                owner = self._owners[key] = _Owner(
                    store=MemoryStore(self.home, memory_char_limit=settings.memory_char_limit,
                                      user_char_limit=settings.user_char_limit, scan=self._write_scan, folder=folder,
                                      documents=self.documents,
                                      shown=lambda entry: self.shown(entry, approved)),
                    pending=PendingWrites(folder / "pending.json"), approved=approved)
                while len(self._owners) > _MAX_OWNERS:
                    self._owners.popitem(last=False)
            else:
                self._owners.move_to_end(key)
            return owner

    @property
    def store(self) -> MemoryStore:
        """The anonymous top-level owner's files: hermes' own ``memories/``."""
        return self.owner().store

    @property
    def pending(self) -> PendingWrites:
        return self.owner().pending

    # -- background review ------------------------------------------------------------------------
    def defer_review_to_host(self) -> None:
        """The host runs its own background review (hermes does): ``review: auto`` stands down."""
        self._review_deferred = True

    @property
    def policy(self) -> Policy:
        """The scanner's layers and disagreement policy (``ctx_plugins.safety``)."""
        return policy_for(self.config)

    def shown(self, entry: str, approved: Approved) -> str:
        """``entry`` as the model may read it: its placeholder when the prompt withholds it (the memory tool's
        error messages list entries; they must not carry what the prompt leaves out)."""
        decision = self.policy.for_recall.decide(entry)
        return placeholder(list(decision.findings)) if decision.withheld(approved=entry in approved) else entry

    def withhold_in_answer(self, answer: Any, args: dict[str, Any], *, session: SessionInfo | None = None) -> Any:
        """hermes' memory tool answer (a JSON string) with every entry the prompt withholds replaced by its
        placeholder: its error answers list the file's entries verbatim (``current_entries``) or as 80-char
        previews (``matches``), which would hand the model what its prompt leaves out."""
        if not isinstance(answer, str) or '"success": true' in answer[:40]:
            return answer  # hermes' success answers list no entry
        try:
            data = json.loads(answer)
            entries = self.owner(session).store.file(args.get("target") or "memory").entries()
        except (ValueError, MemoryStoreError):
            return answer
        approved = self.owner(session).approved
        hidden: dict[str, str] = {}
        for entry in entries:
            shown = self.shown(entry, approved)
            if shown != entry:
                hidden[entry] = hidden[entry[:80] + "..."] = shown  # hermes' MemoryStore._previews
        if not hidden:
            return answer

        def clean(value: Any) -> Any:
            if isinstance(value, str):
                return hidden.get(value, value)
            if isinstance(value, list):
                return [clean(v) for v in value]
            if isinstance(value, dict):
                return {k: clean(v) for k, v in value.items()}
            return value

        return json.dumps(clean(data), ensure_ascii=False)

    def _write_scan(self, text: str) -> list[Finding]:
        """What :class:`MemoryStore` refuses to write, behind :meth:`gate` (which decided, the judge included): an
        agreement, a secret or hidden characters. A disagreement reaching the store was let through by the gate
        (warn, the judge) or approved by the user (``hermes-ctx memory approve``)."""
        return self.policy.for_recall.unsafe(text, approved=True)

    @property
    def review_active(self) -> bool:
        mode = self.options.review
        return mode == "on" or (mode == "auto" and not self._review_deferred)

    def review_model(self) -> SummaryModel | None:
        """The review's endpoint: our option, else ``auxiliary.compression``, else the main model."""
        options, aux, main = self.options, self.config.summary_model, self.config.model
        base_url = options.review_base_url or aux.base_url or main.base_url
        model = options.review_model or aux.model or main.name
        if not base_url or not model:
            return None
        api_key = options.review_api_key or (aux.api_key if aux.base_url == base_url else "") or (
            main.api_key if main.base_url == base_url else "")
        return SummaryModel(base_url=base_url, model=model, api_key=api_key, timeout=options.review_timeout,
                            purpose="review")

    def _review_model_client(self) -> SummaryClient | None:
        if self._review_client is None:
            model = self.review_model()
            if model is None:
                return None
            self._review_client = SummaryClient(model)
        return self._review_client

    def sync_turn(self, turn: Turn) -> None:
        if self.review_active:
            self.reviewer.observe(turn)

    def on_session_end(self, session: SessionInfo, messages: Sequence[Message]) -> None:
        if self.review_active:
            self.reviewer.finish(session, messages)
        with self._lock:
            self._snapshots.pop(session.session_id, None)

    def flush(self, timeout: float = 5.0) -> bool:
        """Writes land on disk before the tool answers; only running reviews can be waited for."""
        return self.reviewer.wait(timeout)

    def shutdown(self) -> None:
        self.reviewer.wait(self.options.flush_timeout)
        if self._review_client is not None:
            self._review_client.close()
            self._review_client = None

    # -- the prompt -------------------------------------------------------------------------------
    def on_session_start(self, session: SessionInfo) -> None:
        self._remember(session, self._load(session))

    def _remember(self, session: SessionInfo | None, snapshot: _Snapshot) -> None:
        with self._lock:
            key = session.session_id if session is not None else ""
            self._snapshots[key] = snapshot
            self._snapshots.move_to_end(key)
            while len(self._snapshots) > _MAX_SESSIONS:
                self._snapshots.popitem(last=False)

    def _snapshot(self, session: SessionInfo | None) -> _Snapshot:
        """``session``'s frozen snapshot, loaded now if the session did not start through us."""
        owner = (session.deployment, session.user_id) if session is not None else ("", "")
        with self._lock:
            snapshot = self._snapshots.get(session.session_id if session is not None else "")
        if snapshot is None or snapshot.owner != owner:  # a session id is no proof of who asks
            snapshot = self._load(session)
            self._remember(session, snapshot)
        elif snapshot.signature != (now := self._signature(session)):
            # written since (from outside too): hermes reloads the files into the prompt after a compaction,
            # so a hostile entry added since must be withheld as well; the session's entries stay frozen
            fresh = self._load(session)
            snapshot = dataclasses.replace(snapshot, withheld={**snapshot.withheld, **fresh.withheld}, signature=now)
            self._remember(session, snapshot)
        return snapshot

    def _signature(self, session: SessionInfo | None) -> tuple[Any, ...]:
        """What changes when the owner's files are written: each one's inode, size and modification time."""
        store = self.owner(session).store
        found: list[Any] = []
        for target in self._targets():
            try:
                stat = store.file(target).path.stat()
                found.append((stat.st_ino, stat.st_size, stat.st_mtime_ns))
            except (OSError, MemoryStoreError):
                found.append(None)
        return tuple(found)

    def withheld_for(self, session: SessionInfo | None) -> dict[str, str]:
        """Hostile entries of ``session``'s snapshot and the placeholder the model sees instead."""
        return self._snapshot(session).withheld

    def load_snapshot(self, session: SessionInfo | None = None, *, quiet: bool = False) -> dict[str, list[str]]:
        """The owner's entries as the model may see them now: hostile ones replaced by a placeholder."""
        return self._load(session, quiet=quiet).entries

    def _load(self, session: SessionInfo | None, *, quiet: bool = False) -> _Snapshot:
        owner = (session.deployment, session.user_id) if session is not None else ("", "")
        store = self.owner(session).store
        signature = self._signature(session)  # before reading: a write meanwhile is seen at the next look
        snapshot, withheld = {}, {}
        for target in self._targets():
            safe = []
            try:
                entries, problem = store.file(target).entries_and_problem()
                problem = None if quiet else problem
            except MemoryStoreError as exc:  # a folder where the file should be, no permission, ...
                # one broken file must not cost the other one, nor the session
                log.error("%s is left out of the prompt: %s", target, exc)
                entries, problem = [], None
            if problem is not None:  # said at the session's start, not first at a refused write
                log.error("%s: hermes leaves that file out of the prompt and memory writes to it are refused "
                          "until it is fixed (`hermes-ctx memory show` reads what it can of it)", problem)
            used, limit = sum(len(e) + 3 for e in entries), store.file(target).char_limit
            if not quiet and used > 2 * limit:  # written from outside: hermes puts all of it in every request
                log.warning("%s holds %d characters, %.0f times its limit of %d: all of it goes into every "
                            "request's system prompt; trim it (`hermes-ctx memory show`)", store.file(target).path,
                            used, used / limit, limit)
            approved = self.owner(session).approved
            for entry in entries:
                # no judge here (a session's start waits for nobody): what it cleared at write was recorded
                decision = self.policy.for_recall.decide(entry)
                findings = list(decision.findings) if decision.withheld(approved=entry in approved) else []
                if decision.findings and not findings and not quiet:
                    log.warning("memory entry in %s shown although %s", store.file(target).path, decision.explain())
                if findings:
                    if not quiet:
                        log.warning("memory entry in %s withheld from the prompt (%s); review it with "
                                    "`hermes-ctx memory show`", store.file(target).path,
                                    ", ".join(f.kind for f in findings))
                    safe.append(placeholder(findings))
                    withheld[entry] = safe[-1]
                else:
                    safe.append(entry)
            snapshot[target] = safe
        return _Snapshot(entries=snapshot, withheld=withheld, owner=owner, signature=signature)

    def _targets(self) -> list[str]:
        settings = self.config.memory
        targets = ["memory"] if settings.memory_enabled else []
        return [*targets, "user"] if settings.user_profile_enabled else targets

    def system_prompt_block(self, *, session: SessionInfo | None = None) -> str:
        store = self.owner(session).store
        blocks = [self._render(store, target, entries)
                  for target, entries in self._snapshot(session).entries.items() if entries]
        return "\n\n".join(blocks)

    @staticmethod
    def _render(store: MemoryStore, target: str, entries: Sequence[str]) -> str:
        """hermes' own block layout, so a prompt looks the same whichever of us wrote it."""
        content = DELIMITER.join(entries)
        limit = store.file(target).usage()[1]
        pct = min(100, int(len(content) / limit * 100)) if limit else 0
        rule = "═" * 46
        return f"{rule}\n{_HEADERS[target]} [{pct}% — {len(content):,}/{limit:,} chars]\n{rule}\n{content}"

    # -- the memory tool --------------------------------------------------------------------------
    def get_tool_schemas(self) -> list[dict[str, Any]]:
        return [TOOL_SCHEMA]

    def handle_tool_call(self, name: str, args: dict[str, Any], *, session: SessionInfo | None = None) -> str:
        if name != "memory":
            return super().handle_tool_call(name, args, session=session)
        if not isinstance(args, dict):  # the model's mistake, answered: never a raise counted against the provider
            return _error(f"the arguments must be a JSON object, got {type(args).__name__}")
        verdict = self.gate(args, session=session)
        if verdict is not None:
            return verdict
        warning = self.warnings.take(args)
        target = args.get("target", "memory")
        try:
            result = self.owner(session).store.file(target).apply(ops_from_arguments(args))
        except MemoryStoreError as exc:
            return _error(str(exc))
        message = f"{target} now {result.used:,}/{result.limit:,} chars, {len(result.entries)} entries"
        if result.backup is not None:
            message += f"; the file had been edited outside, a backup is at {result.backup}"
        if warning:
            message += f"; written with a warning, the scanner's layers disagree ({warning})"
        return json.dumps({"success": True, "message": message})

    def gate(self, args: dict[str, Any], *, session: SessionInfo | None = None) -> str | None:
        """Everything a memory write must pass before it touches the files.

        Returns the tool result when the write must not happen as asked (bad arguments, blocked,
        hostile text, or staged for approval), ``None`` when it may be applied. hermes' own
        memory tool runs behind this gate when the ``file`` provider is active there.
        """
        target = args.get("target", "memory")  # hermes' schema defaults the target
        if target not in self._targets():
            targets = ", ".join(self._targets()) or "(memory is off)"
            return _error(f"target must be one of {targets}, got {short_repr(target)}")
        try:
            ops = ops_from_arguments(args)
        except ValueError as exc:
            return _error(str(exc))
        odd = next((op for op in ops if LONE_SURROGATE.search(op.text + op.match)), None)
        if odd is not None:  # hermes' own writer would fail on it inside the tool: answer it here
            return _error("the text holds a lone surrogate, which a UTF-8 memory file cannot store; "
                          "write it without one")
        # hermes' writer would split it into two entries: also when the line ends are CRs, which hermes writes as
        # they are and reads back as newlines
        if any("§" in op.text.replace("\r\n", "\n").replace("\r", "\n").split("\n") for op in ops):
            return _error("a line holding only '§' separates entries in the memory file; it cannot be inside "
                          "one: write the text without it")
        control = next((m for op in ops if (m := CONTROL.search(op.text.replace("\r", "\n")))), None)
        if control is not None:  # hermes' writer would store it: a terminal showing the file obeys it
            return _error(f"the text holds a control character (U+{ord(control.group()):04X}); write it without one")
        blank = next((op.text for op in ops if op.action != "remove" and op.text and renders_blank(op.text)), None)
        if blank is not None:  # hermes' writer would store a blank entry, in every later prompt (a review: this gate
            # is the path hermes' own tool takes; the store's own check covered only ours)
            return _error(f"the text is empty{blank_code_points(blank)}")
        file = self.owner(session).store.file(target)
        try:  # hermes' writer takes a file it cannot open as empty and replaces it; it fails on one not UTF-8
            problem = file.unreadable_by_hermes()
        except MemoryStoreError as exc:
            problem = f"{file.path} cannot be read ({exc})"
        if problem is not None:
            log.error("a memory write was refused: %s", problem)
            return _error(f"{problem}; nothing was written, so its entries are not lost. Ask the user to fix or "
                          "move that file (`hermes-ctx memory show` reads what it can of it)")
        mode = self.options.write_approval
        if mode == "block":
            return _error("memory writes are blocked by configuration (ctx_plugins.options.file.write_approval)")
        try:  # before the scan: a page pasted as one entry cost seconds of scanning, then hermes refused its size
            for op in ops:
                file.check_fits(op.text)
        except MemoryStoreError as exc:
            return _error(str(exc))
        screen = Screen([op.text for op in ops if op.text], self.policy)
        if screen.refusal:
            return _error(screen.refusal)
        if mode == "stage" or screen.held:
            try:  # the entries a replace or remove acts on, as they are now: the approver is shown these
                ops = file.pinned(ops)
            except MemoryStoreError as exc:  # what applying it would answer now (no such entry, ...)
                return _error(str(exc))
            try:
                pending_id = self.owner(session).pending.stage(
                    target, ops, session_id=session.session_id if session else "")
            except TooManyPending as exc:
                return _error(str(exc))
            except StoreUnavailable as exc:  # the answer names the file (it was "hermes-ctx could not check it (see
                # the log)", the file and what to do told nowhere: a hostile-values pass); damaged: repaired or moved
                # aside; held by another process or not writable (a review: told to move it aside, the staged writes
                # in it orphaned): said as it is
                damaged = exc.doing.startswith("read")
                return _error(f"memory write not staged: {exc}" + (
                    "; repair that file or move it aside (writes are held for approval in it; nothing is staged until "
                    "it can be read)" if damaged else "; nothing was staged: try again later"))
            return json.dumps({"success": True, "staged": pending_id,
                               "message": f"held for the user's approval{screen.held} (hermes-ctx memory pending)"})
        self.owner(session).approved.add(screen.cleared)  # the judge cleared them: approved, for later loads
        self.warnings.put(args, screen.warned)
        return None

    # -- forgetting -------------------------------------------------------------------------------
    def forget_user(self, user_id: str, *, namespaces: Collection[str] | None = None) -> list[Forgotten]:
        """Delete the owner's MEMORY.md, USER.md, their lock files, backups, staged and approved writes.

        For the anonymous top-level owner that is hermes' own ``memories/`` folder: its files are
        removed, never the other owners' ``scoped/`` folder inside it. On a shared store the server's
        copies go too, also those of owners this worker never served; every other worker's files of
        them go at its next read of them.
        """
        report = []
        if self.reviewer is not None:  # a review under way must not write the user back after this
            self.reviewer.forget(user_id, namespaces, timeout=FORGET_WAITS_FOR_REVIEW)
        user = path_segment(user_id, prefix="u")
        if namespaces is None:
            root = self.home / "memories" / SCOPED_DIR
            found = {p.parent.name for p in root.glob(f"d*/{user}")}
            try:
                found |= {p.parent.parent.name for p in self.documents.stored_under(root)
                          if p.parent.name == user and p.parent.parent.parent == root}
            except MemoryStoreError as exc:  # the owners only the server knows cannot be found
                report.append(Forgotten(store=f"file {root}", removed=None, error=f"{type(exc).__name__}: {exc}"))
            folders = [p / user for p in (root / name for name in sorted(found))]
            if not user_id:
                folders.insert(0, memory_folder(self.home, "", ""))
        else:
            folders = [memory_folder(self.home, ns, user_id) for ns in dict.fromkeys(namespaces)]
        for folder in folders:
            forgotten = self._forget_owner(folder)
            if forgotten is not None:
                report.append(forgotten)
        with self._lock:  # open stores keep no content, but the owner's sessions' snapshots do
            for key, snapshot in list(self._snapshots.items()):
                deployment, user = snapshot.owner
                if user == user_id and (namespaces is None or deployment in namespaces):
                    del self._snapshots[key]
        return report or [Forgotten(store=f"file {self.home / 'memories'}", removed=0,
                                    detail="no memory files for this user")]

    def _forget_owner(self, folder: Path) -> Forgotten | None:
        """Forget the files of one owner's folder: their shared copies first, if the store keeps any,
        then the folder here; ``None`` when there was nothing to forget."""
        shared: list[bytes | None] = []
        if self.documents.shared:
            try:
                shared = [self.documents.forget(folder / name) for name in ("MEMORY.md", "USER.md")]
            except MemoryStoreError as exc:
                return Forgotten(store=f"file {folder}", removed=None, error=f"{type(exc).__name__}: {exc}")
        local = (_forget_folder(folder, shared=folder == memory_folder(self.home, "", ""))
                 if folder.is_dir() else None)
        if all(raw is None for raw in shared) or (local is not None and not local.ok):
            return local  # the files were the only copy (or could not be deleted): they are the report
        return Forgotten(store=f"file {folder}", removed=sum(len(entries_in(raw)) for raw in shared if raw),
                         detail="entries in MEMORY.md and USER.md (the shared copy)")


def _forget_folder(folder: Path, *, shared: bool) -> Forgotten:
    """Remove one owner's folder (its files only, for hermes' shared folder), holding the locks
    hermes' writer and ours take: a write that read the old entries cannot put them back after."""
    entries = 0
    try:
        with contextlib.ExitStack() as held:
            # the order every writer takes them in (approve: pending.json, then the file it applies to)
            for name in LOCK_ORDER:
                held.enter_context(locked(folder / name))
            store = MemoryStore(folder.parent, folder=folder)
            for target in ("memory", "user"):
                with contextlib.suppress(MemoryStoreError):
                    entries += len(store.file(target).entries())
            if shared:
                for path in folder.iterdir():
                    if path.is_file() and (path.name.startswith(("MEMORY.md", "USER.md", "pending.json", APPROVED))
                                           or _temporary(path.name)):
                        path.unlink()
            else:
                shutil.rmtree(folder)
    except (OSError, MemoryStoreError) as exc:
        return Forgotten(store=f"file {folder}", removed=None, error=f"{type(exc).__name__}: {exc}")
    return Forgotten(store=f"file {folder}", removed=entries, detail="entries in MEMORY.md and USER.md")


def _temporary(name: str) -> bool:
    """A temp file a writer killed mid-write left in a memory folder (it may hold the entries' text): ours
    (``.MEMORY.md.<random>.tmp``, the other files' alike) or hermes' (``.mem_<random>.tmp``)."""
    return name.endswith(".tmp") and name.startswith(
        (".mem_", *(f".{base}." for base in ("MEMORY.md", "USER.md", "pending.json", APPROVED))))


def _error(message: str) -> str:
    return json.dumps({"success": False, "error": message})

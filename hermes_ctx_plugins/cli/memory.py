"""``hermes-ctx memory``: MEMORY.md / USER.md (show, add, remove, approve or reject staged writes,
reset) and ctx-local's store (search, stats, export, forget: see :mod:`hermes_ctx_plugins.memory.local.cli`).

``--target memory|user`` chooses the file, written after ``memory`` or after its subcommand."""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..cliutil import EXIT_INPUT, EXIT_PLUGIN, add_id, add_yes, confirm, emit, shown
from ..config import hermes_home, load_config
from ..errors import ConfigError
from ..memory.local import cli as local_cli
from .common import add_anywhere, load_failed

if TYPE_CHECKING:
    from ..memory.file.approval import PendingWrites
    from ..memory.file.store import MemoryStore
    from ..safety import Finding

#: the file commands: (name, help, positional argument or None, takes --yes (and asks: None = does not ask))
_FILE_COMMANDS: tuple[tuple[str, str, str | None, bool | None], ...] = (
    ("show", "every entry, with the threat scan's verdict", None, None),
    ("add", "add an entry", "text", None),
    ("remove", "remove the entry containing MATCH", "match", False),
    ("pending", "staged writes waiting for approval", None, None),
    ("approve", "apply a staged write", "id", None),
    ("reject", "drop a staged write", "id", False),
    ("reset", "empty the file (a backup is kept)", None, True),
)


def add_parser(commands: Any) -> None:
    memory = commands.add_parser("memory", help="MEMORY.md / USER.md: show, edit, approve staged writes, reset; "
                                                "ctx-local: search, stats, export, forget")
    memory_commands = memory.add_subparsers(dest="memory_command", required=True)
    file_commands = []
    for name, about, argument, asks in _FILE_COMMANDS:
        command = memory_commands.add_parser(name, help=about)
        if argument:
            command.add_argument(argument)
        add_id(command, "user", "this user's files (default: hermes' own, single-user ones), in the --deployment's "
                                "namespace", default="")
        if asks is not None:
            add_yes(command, asks=asks)
        file_commands.append(command)
    add_anywhere(memory, file_commands, ("--target",), choices=("memory", "user"), default="memory",
                 help="MEMORY.md (memory, the default) or USER.md (user)")
    local_cli.add_parsers(memory_commands)  # ctx-local: search, stats, export, forget


def run(args: argparse.Namespace) -> int:
    try:  # the config, not the plugins: these commands work on the stores while hermes runs
        config = load_config(args.config, deployment=args.deployment)
    except ConfigError as exc:
        return load_failed(exc)
    if args.memory_command in local_cli.COMMANDS:
        return local_cli.run(args, config)
    from ..memory.file.approval import APPROVED, Approved, PendingWrites
    from ..memory.file.provider import FileOptions, memory_folder
    from ..memory.file.store import MemoryStore, MemoryStoreError, StoreUnavailable
    from ..options import plugin_options
    from ..safety.judge import policy_for
    from ..storage import open_documents

    try:  # the file store's own options, as hermes would read them (`write_approval: stagee` is refused there too)
        plugin_options("file", FileOptions, config.options_for("file"))
    except ConfigError as exc:
        return load_failed(config.locate(exc))
    home = hermes_home()
    folder = memory_folder(home, config.memory_namespace, args.user)
    # the user at the CLI is the approver: a text the layers disagree on is theirs to write (stage), a blocked one
    # is refused as in hermes
    args.safety_policy = policy = policy_for(config).for_recall  # the CLI asks no judge: its user decides
    args.approved = approved = Approved(folder / APPROVED)

    decided: dict[str, str] = {}  # texts the layers disagree on that the user writes, and why: approved once written

    def users_scan(text: str) -> list[Finding]:  # `memory add` / `approve`: the user approves a disagreement
        decision = policy.decide(text)
        if decision.withheld(approved=True):
            return list(decision.findings)
        if decision.findings:
            decided[text] = decision.explain()
        return []

    store = MemoryStore(home, memory_char_limit=config.memory.memory_char_limit,
                        user_char_limit=config.memory.user_char_limit, scan=users_scan, folder=folder,
                        documents=open_documents(config, home, error=StoreUnavailable))
    try:
        code = _FILE_RUNS[args.memory_command](args, store, PendingWrites(folder / "pending.json"))
        if code == 0 and decided:
            approved.add(list(decided))
            for why in decided.values():  # the model's own write of it would have been refused or staged: say so
                done = "approved it" if args.memory_command == "approve" else "wrote it"
                print(shown(f"hermes-ctx: note: one layer of the threat scan flags this entry ({why}); it is written "
                            f"because you {done}, and shown to the model as approved by you ('memory remove' takes "
                            "it out)"), file=sys.stderr)
        return code
    except StoreUnavailable as exc:  # the folder, the file or the server: the store, not what was asked
        print(f"hermes-ctx: {exc}", file=sys.stderr)
        return EXIT_PLUGIN
    except (MemoryStoreError, KeyError) as exc:
        print(f"hermes-ctx: {exc.args[0] if isinstance(exc, KeyError) else exc}", file=sys.stderr)
        return EXIT_INPUT


def _show(args: argparse.Namespace, store: MemoryStore, pending: PendingWrites) -> int:
    file = store.file(args.target)
    used, limit = file.usage()
    drift = file.drift()
    decisions = [(entry, args.safety_policy.decide(entry)) for entry in file.entries()]

    def text() -> str:
        lines = [f"{args.target} ({file.path}): {used:,}/{limit:,} chars"]
        if drift:
            lines.append(f"  ! edited outside hermes: {drift}")
        for number, (entry, decision) in enumerate(decisions, 1):
            flag = ""
            if decision.withheld(approved=entry in args.approved):
                flag = f"  ! WITHHELD from prompts ({decision.explain()})"
            elif decision.findings:
                flag = f"  ! shown, but the scanner's layers disagree ({decision.action}: {decision.explain()})"
            lines.append(f"{number:>3}. {entry}{flag}")
        return "\n".join(lines)

    emit(args, {"target": args.target, "path": str(file.path), "used": used, "limit": limit, "drift": drift,
                "entries": [{"number": number, "text": entry,
                             "withheld": [f.detail for f in decision.findings]
                             if decision.withheld(approved=entry in args.approved) else [],
                             "layers": [f.layer for f in decision.findings],
                             "decision": decision.action, "why": decision.explain()}
                            for number, (entry, decision) in enumerate(decisions, 1)]}, text)
    return 0


def _edit(args: argparse.Namespace, store: MemoryStore, pending: PendingWrites) -> int:
    from ..memory.file.store import Op

    op = Op(action="add", text=args.text) if args.memory_command == "add" else Op(action="remove", match=args.match)
    result = store.file(args.target).apply([op])
    emit(args, asdict(result),
         f"{args.target}: {result.used:,}/{result.limit:,} chars, {len(result.entries)} entries"
         + (f" (outside edit backed up to {result.backup})" if result.backup else ""))
    return 0


def _pending(args: argparse.Namespace, store: MemoryStore, pending: PendingWrites) -> int:
    items = pending.items()
    emit(args, [asdict(item) for item in items],
         lambda: "\n".join(item.describe() for item in items) or "no staged memory writes")
    return 0


def _approve(args: argparse.Namespace, store: MemoryStore, pending: PendingWrites) -> int:
    item, result = pending.approve_item(args.id, store)
    emit(args, {"applied": args.id, "write": asdict(item), **asdict(result)},  # what was applied, not only its id
         f"applied {item.describe()}\n{result.target} now {result.used:,}/{result.limit:,} chars")
    return 0


def _reject(args: argparse.Namespace, store: MemoryStore, pending: PendingWrites) -> int:
    rejected = pending.reject(args.id)
    emit(args, {"rejected": asdict(rejected)}, f"rejected {rejected.describe()}")
    return 0


def _reset(args: argparse.Namespace, store: MemoryStore, pending: PendingWrites) -> int:
    from ..memory.file.store import StoreUnavailable
    from ..storage.documents import keep_copy

    file = store.file(args.target)
    refused = confirm(shown(f"empty {file.path}? a backup is kept [y/N] "), yes=args.yes)
    if refused is not None:
        return refused
    kept: list[Path] = []

    def empty(raw: bytes) -> bytes:  # under the file's lock (on a shared store, the server copy's)
        kept.clear()
        if raw:  # a copy of its own, forced to the disk, never over an earlier one; none half-written
            kept.append(keep_copy(file.path, raw, stamp=f"reset-{int(time.time())}",
                                  doing="keep the memories it empties in", error=StoreUnavailable))
        return b""

    file.documents.update(file.path, empty)
    backup = kept[-1] if kept else None
    emit(args, {"target": args.target, "path": str(file.path), "backup": str(backup) if backup else None},
         f"{args.target} emptied" + (f"; the old content is in {backup}" if backup else ""))
    return 0


_FILE_RUNS = {"show": _show, "add": _edit, "remove": _edit, "pending": _pending, "approve": _approve,
              "reject": _reject, "reset": _reset}

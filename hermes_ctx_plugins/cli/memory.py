"""``hermes-ctx memory``: MEMORY.md / USER.md (show, add, remove, approve or reject staged writes,
reset) and ctx-local's store (search, stats, export, forget: see :mod:`hermes_ctx_plugins.memory.local.cli`)."""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any

from ..cliutil import EXIT_INPUT, EXIT_PLUGIN, confirm
from ..config import Config, hermes_home
from ..memory.local import cli as local_cli


def add_parser(commands: Any) -> None:
    memory = commands.add_parser("memory", help="MEMORY.md / USER.md: show, edit, approve staged writes, reset")
    memory.add_argument("--target", choices=("memory", "user"), default="memory")
    memory_commands = memory.add_subparsers(dest="memory_command", required=True)
    file_commands = [
        memory_commands.add_parser("show", help="every entry, with the threat scan's verdict"),
        memory_commands.add_parser("add", help="add an entry"),
        memory_commands.add_parser("remove", help="remove the entry containing TEXT"),
        memory_commands.add_parser("pending", help="staged writes waiting for approval"),
        memory_commands.add_parser("approve", help="apply a staged write"),
        memory_commands.add_parser("reject", help="drop a staged write"),
        memory_commands.add_parser("reset", help="empty the file (a backup is kept)"),
    ]
    for command, argument in zip(file_commands, (None, "text", "match", None, "id", "id", None), strict=True):
        if argument:
            command.add_argument(argument)
        command.add_argument("--user", default="", help="this user's files (default: hermes' own, single-user "
                                                        "ones); in the --deployment given before the command")
    file_commands[-1].add_argument("--yes", action="store_true", help="do not ask for confirmation")
    local_cli.add_parsers(memory_commands)  # ctx-local: search, stats, export, forget


def run(args: argparse.Namespace, config: Config) -> int:
    if args.memory_command in local_cli.COMMANDS:
        return local_cli.run(args, config)
    from ..memory.file.approval import PendingWrites
    from ..memory.file.provider import memory_folder
    from ..memory.file.store import MemoryStore, MemoryStoreError, Op, StoreUnavailable
    from ..safety import scan
    from ..storage import open_documents

    home = hermes_home()
    folder = memory_folder(home, config.memory_namespace, args.user)
    store = MemoryStore(home, memory_char_limit=config.memory.memory_char_limit,
                        user_char_limit=config.memory.user_char_limit, scan=scan, folder=folder,
                        documents=open_documents(config, home, error=StoreUnavailable))
    pending = PendingWrites(folder / "pending.json")
    file = store.file(args.target)
    command = args.memory_command
    try:
        if command == "show":
            used, limit = file.usage()
            print(f"{args.target} ({file.path}): {used:,}/{limit:,} chars")
            if file.drift():
                print(f"  ! edited outside hermes: {file.drift()}")
            for number, entry in enumerate(file.entries(), 1):
                findings = scan(entry)
                flag = f"  ! WITHHELD from prompts ({', '.join(f.detail for f in findings)})" if findings else ""
                print(f"{number:>3}. {entry}{flag}")
        elif command in ("add", "remove"):
            op = Op(action="add", text=args.text) if command == "add" else Op(action="remove", match=args.match)
            result = file.apply([op])
            print(f"{args.target}: {result.used:,}/{result.limit:,} chars, {len(result.entries)} entries"
                  + (f" (outside edit backed up to {result.backup})" if result.backup else ""))
        elif command == "pending":
            items = pending.items()
            print("\n".join(item.describe() for item in items) or "no staged memory writes")
        elif command == "approve":
            result = pending.approve(args.id, store)
            print(f"applied {args.id}: {result.target} now {result.used:,}/{result.limit:,} chars")
        elif command == "reject":
            print(f"rejected {pending.reject(args.id).describe()}")
        elif command == "reset":
            refused = confirm(f"empty {file.path}? a backup is kept [y/N] ", yes=args.yes)
            if refused is not None:
                return refused
            backup = file.path.with_name(f"{file.path.name}.bak.reset-{int(time.time())}")
            emptied: list[bytes] = []

            def empty(raw: bytes) -> bytes:  # under the file's lock (on a shared store, the server copy's)
                emptied.append(raw)
                if raw:
                    backup.write_bytes(raw)
                return b""

            file.documents.update(file.path, empty)
            print(f"{args.target} emptied" + (f"; the old content is in {backup}" if emptied[-1] else ""))
    except StoreUnavailable as exc:  # the folder, the file or the server: the store, not what was asked
        print(f"hermes-ctx: {exc}", file=sys.stderr)
        return EXIT_PLUGIN
    except (MemoryStoreError, KeyError) as exc:
        print(f"hermes-ctx: {exc.args[0] if isinstance(exc, KeyError) else exc}", file=sys.stderr)
        return EXIT_INPUT
    return 0

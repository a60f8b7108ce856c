"""``hermes-ctx archive search|show|stats|purge``: the archive for its owner, at the command line.

``--session`` and ``--user`` name a session or user of one deployment namespace: the one of the
global ``--deployment`` option (the top level's without it), as hermes-ctx's memory commands do.
"""

from __future__ import annotations

import argparse
import json
import math
import sqlite3
import sys
from dataclasses import asdict
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ..cliutil import (
    EXIT_INPUT,
    EXIT_PLUGIN,
    EXIT_PROBLEM,
    add_id,
    add_yes,
    confirm,
    decimal_number,
    emit,
    load_failed,
    print_json,
    shown,
    wants_json,
    whole_number,
)
from ..config import load_config
from ..errors import ConfigError
from ..scope import describe, typed
from ..storage import (
    ArchiveBackend,
    ArchiveError,
    LocalStoreError,
    Scope,
    archive_unusable,
    open_archive,
    read_only_failure,
    writable_file,
)
from ..tokens import get_counter
from . import tools


def add_parser(commands: Any) -> None:
    archive = commands.add_parser("archive", help="what compaction removed: search, show, stats, purge")
    sub = archive.add_subparsers(dest="archive_command", required=True)
    search = sub.add_parser("search", help="full-text search (any 3+ character substring, BM25 ranked)")
    search.add_argument("query")
    add_id(search, "session", "only this session (of the --deployment's namespace)")
    add_id(search, "user", "only this user (of the --deployment's namespace)")
    search.add_argument("--limit", type=whole_number, default=10)
    show = sub.add_parser("show", help="archived messages verbatim: an id or a range 'first-last'")
    show.add_argument("id")
    show.add_argument("--max-tokens", type=whole_number, default=20_000)
    show.add_argument("--offset", type=whole_number, default=0, metavar="CHARS",
                      help="read one message on from this character (a cut message says where)")
    sub.add_parser("stats", help="size, counts, retention")
    purge = sub.add_parser("purge", help="delete archived compactions (asks first)")
    add_id(purge, "session", "this session's (of the --deployment's namespace)")
    add_id(purge, "user", "this user's (of the --deployment's namespace); alone, erases the user for good: spooled "
                          "compactions too, and the file rewritten")
    purge.add_argument("--older-than", type=decimal_number, metavar="DAYS", help="older than DAYS, in every namespace")
    purge.add_argument("--all", action="store_true", help="everything")
    add_yes(purge)


def run(args: argparse.Namespace) -> int:
    try:  # the config, not the plugins: these commands work on the store while hermes runs
        config = load_config(args.config, deployment=args.deployment)
    except ConfigError as exc:
        return load_failed(exc)
    store = open_archive(config)
    on_server = (config.plugins.storage.archive or config.plugins.storage.backend) == "postgres"
    where = f"PostgreSQL, the rows of {store.path}" if on_server else str(store.path)
    path = Path(store.path)
    try:
        if not store.exists() and args.archive_command != "purge":
            return _no_archive(args, store, where, enabled=config.plugins.archive.enabled)
        # a command that only reads, on a file this user cannot write (a mounted backup, another user's home): read
        # without writing anything (a newcomer walk: it could not be searched at all); read the ordinary way, SQLite
        # leaves a -wal and -shm of this user's beside it, failing its owner's writes (a review)
        writable = None if on_server else writable_file(path)
        if not (args.archive_command in _READS and writable is False):
            try:
                return _run(args, store, config.memory_namespace, where)
            except (ArchiveError, sqlite3.Error) as exc:
                if args.archive_command not in _READS or writable is None or not read_only_failure(
                        exc.__cause__ or exc):
                    raise
        store.close()  # read-only: a read a process writing the file meanwhile tears is made again (storage)
        store = open_archive(config, read_only=True)
        code = _run(args, store, config.memory_namespace, where)
        print(f"hermes-ctx: {where} cannot be written by this user: read without writing", file=sys.stderr)
        return code
    except (ArchiveError, sqlite3.Error) as exc:
        if isinstance(exc, ArchiveError):
            print(f"hermes-ctx: {exc}", file=sys.stderr)
            return EXIT_PLUGIN
        # a file whose header opens but whose pages are damaged fails only when read
        if "locked" in str(exc).lower() or "busy" in str(exc).lower():
            print(f"hermes-ctx: the archive {store.path} stayed locked by another process ({exc}); nothing in it "
                  "was changed: run the command again", file=sys.stderr)
        else:
            print(f"hermes-ctx: {archive_unusable(store.path, exc)}", file=sys.stderr)
        return EXIT_PLUGIN
    except BrokenPipeError:  # stdout closed early (| head): quietly, as every command (cli.main)
        raise
    except (LocalStoreError, OSError) as exc:  # LocalStoreError: a server backend with no server named
        print(f"hermes-ctx: {exc}", file=sys.stderr)
        return EXIT_PLUGIN
    finally:
        store.close()


#: the commands that only read the archive
_READS = frozenset({"search", "show", "stats"})



def _no_archive(args: argparse.Namespace, store: ArchiveBackend, where: str, *, enabled: bool) -> int:
    """What each command finds where nothing was archived yet: nothing (exit 0); with the archive off, that it is off
    (a newcomer walk: "nothing has been compacted" after compactions had run, none archived)."""
    nothing: dict[str, Any] = {"search": [], "show": {"messages": [], "note": "no archive yet"},
                               "stats": {"path": str(store.path), "exists": False}}
    why = "nothing has been compacted" if enabled else "the archive is off: ctx_plugins.archive.enabled: false"
    emit(args, nothing[args.archive_command], f"no archive yet in {where} ({why})")
    return 0


def _scope(args: argparse.Namespace, namespace: str) -> Scope:
    if args.session is not None:  # no --user: any user of the session
        return Scope(session_id=args.session, user_id=args.user, namespace=namespace)
    if args.user is not None:
        return Scope(session_id="", user_id=args.user, all_sessions=True, namespace=namespace)
    return Scope(session_id="", everything=True)


def _when(timestamp: float) -> str:
    return datetime.fromtimestamp(timestamp, UTC).strftime("%Y-%m-%d %H:%M UTC")


def _run(args: argparse.Namespace, store: ArchiveBackend, namespace: str, where: str) -> int:
    """One command on an archive that exists; ``where``: the archive as the user knows it (a server's: its rows, not
    a local file of that name; a newcomer walk)."""
    command = args.archive_command
    if command == "search":
        if not 1 <= args.limit <= tools.MAX_ID:
            print(f"hermes-ctx: --limit must be from 1 to {tools.MAX_ID}, got {args.limit}", file=sys.stderr)
            return EXIT_INPUT
        hits = store.search(args.query, _scope(args, namespace), limit=args.limit)
        if wants_json(args):
            print_json([h.__dict__ for h in hits])
        elif not hits:
            print("no match")
        for hit in [] if wants_json(args) else hits:
            where = f"session {typed(hit.session_id)}" + (f" of namespace {typed(hit.namespace)}" if hit.namespace
                                                          else "")
            print(shown(f"#{hit.id}  {hit.role:9} {where}  {_when(hit.created)}\n    {hit.snippet}"))
        return 0
    if command == "show":
        if args.max_tokens < tools.MIN_TOKENS:  # (it was taken as 200 in silence)
            print(f"hermes-ctx: --max-tokens must be at least {tools.MIN_TOKENS}, got {args.max_tokens}",
                  file=sys.stderr)
            return EXIT_INPUT
        asked = {"id": args.id, "max_tokens": args.max_tokens, **({"offset": args.offset} if args.offset else {})}
        answer = json.loads(tools.expand(asked, store=store, scope=Scope(session_id="", everything=True),
                                         counter=get_counter(), max_tokens=args.max_tokens, cli=True))
        if "error" in answer:
            print(shown(f"hermes-ctx: {answer['error']}"), file=sys.stderr)
            return EXIT_INPUT
        if wants_json(args):
            print_json(answer)
            return 0
        for message in answer["messages"]:
            print(shown(f"--- #{message['id']} {message['role']}"
                         + (f" (result of {message['tool_call_id']})" if message.get("tool_call_id") else "")))
            if message.get("content"):
                content = message["content"]
                print(shown(content if isinstance(content, str) else json.dumps(content, ensure_ascii=False)))
            for call in message.get("tool_calls") or ():
                function = call.get("function") or {}
                print(shown(f"[tool call {call.get('id')}] {function.get('name')}({function.get('arguments')})"))
        if answer.get("note"):
            print(f"\n({answer['note']})")
        return 0
    if command == "stats":
        stats = store.stats()
        if wants_json(args):
            print_json({**stats, "exists": True})
            return 0
        print(f"archive     {where}")
        print(f"size        {stats['bytes'] / 1_000_000:.1f} MB (bound {stats['max_megabytes']:g} MB, "
              f"retention {stats['retention_days']:g} days)")
        print(f"holds       {stats['messages']:,} messages from {stats['compactions']:,} compactions, "
              f"{stats['sessions']:,} sessions, {stats['users']:,} users in {stats['namespaces']:,} namespaces")
        if stats["oldest"] and stats["newest"]:
            print(f"span        {_when(stats['oldest'])} .. {_when(stats['newest'])}")
        if stats["spooled"]:
            print(f"spooled     {stats.get('spool', 'its spool')} holds compactions waiting to be imported")
        return 0
    return _purge(args, store, namespace)


def _purge(args: argparse.Namespace, store: ArchiveBackend, namespace: str) -> int:
    if args.session is None and args.user is None and args.older_than is None and not args.all:
        print("hermes-ctx: purge needs --session, --user, --older-than DAYS or --all", file=sys.stderr)
        return EXIT_INPUT
    if args.older_than is not None and not (math.isfinite(args.older_than) and args.older_than >= 0):
        print(f"hermes-ctx: --older-than must be a number of days, 0 or more, got {args.older_than:g}",
              file=sys.stderr)
        return EXIT_INPUT
    scoped = args.session is not None or args.user is not None
    what = "everything" if args.all else ", ".join(
        f"{k} {v!r}" for k, v in (("session", args.session), ("user", args.user),
                                  ("older than (days)", args.older_than)) if v is not None)
    if scoped:
        what += f" in namespace {namespace!r}"
    refused = confirm(shown(f"delete the archived messages of {what} from {store.path}? [y/N] "), yes=args.yes)
    if refused is not None:
        return refused
    if args.user is not None and args.session is None and args.older_than is None and not args.all:
        return _forget(args, args.user, store, namespace)
    count = store.purge(session_id=args.session, user_id=args.user, older_than_days=args.older_than,
                        everything=args.all, namespace=namespace if scoped else None)
    emit(args, {"purged": count, "session": args.session, "user": args.user, "older_than_days": args.older_than,
                "all": args.all}, f"purged {count} compactions ({what})")
    return 0


def _forget(args: argparse.Namespace, user_id: str, store: ArchiveBackend, namespace: str) -> int:
    """The user's archive erased for good, by the same code as ``hermes-ctx forget``."""
    [report] = store.forget_user(user_id, namespaces=[namespace])
    emit(args, asdict(report), f"forgot {describe(namespace, user_id)}: removed {report.removed} archived messages "
                               f"from {store.path}" + (f" ({report.detail})" if report.detail else ""))
    if report.error:
        print(shown(f"hermes-ctx: {report.error}"), file=sys.stderr)
        return EXIT_PROBLEM
    return 0

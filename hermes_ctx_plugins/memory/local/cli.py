"""``hermes-ctx memory search|stats|export|forget``: the ctx-local store from the command line.

Every command works in the memory namespace of the config's deployment (the global
``--deployment`` option; none: the top level's), and ``--user`` / ``--chat`` / ``--session``
select ids exactly as they are written.

Each works on the store of the backend ``ctx_plugins.storage`` chooses (a SQLite file by
default, or a PostgreSQL server). Exit codes as for the rest of ``hermes-ctx``: 2 the config is
invalid, 3 the store cannot be used (locked, damaged, its server down), 4 bad input (an unknown id,
an unwritable output file).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import stat
import sys
import time
from pathlib import Path
from typing import Any, TextIO

from ...cliutil import (
    EXIT_CONFIG,
    EXIT_INPUT,
    EXIT_PLUGIN,
    Progress,
    add_id,
    add_yes,
    confirm,
    emit,
    json_shown,
    print_json,
    shown,
    wants_json,
    whole_number,
)
from ...config import Config, hermes_home
from ...errors import ConfigError
from ...options import short_repr
from ...scope import typed
from ...storage import LocalStoreError, MemoryBackend, memory_exists, open_memory, writable_file
from ...storage import text as query
from . import recall
from .arguments import describe
from .elsewhere import elsewhere, say_elsewhere
from .options import NAME
from .provider import LocalProvider
from .queue import inspect
from .schemas import MAX_ID

COMMANDS = ("search", "stats", "export", "forget")


def add_parsers(commands: Any) -> None:
    """Add the ctx-local subcommands to ``hermes-ctx memory``."""
    search = commands.add_parser("search", help=f"search the {NAME} store as a user would be recalled")
    search.add_argument("query")
    _scope_arguments(search, "search as this user, in all their chats unless --chat is given "
                             "(default: the CLI user, '')")
    search.add_argument("--all-scopes", action="store_true",
                        help="search every user and chat of the deployment (administrators; not with --user/--chat)")
    search.add_argument("--limit", type=whole_number, default=10, help="results (default 10)")
    commands.add_parser("stats", help=f"what the {NAME} store holds, its queue and quarantined records")
    export = commands.add_parser("export", help=f"write {NAME} memories as JSON lines (with --json: one JSON "
                                                "array on stdout, or with -o a summary)")
    _scope_arguments(export, "only this user's memories")
    add_id(export, "session", "only this session's memories")
    export.add_argument("--output", "-o", type=Path, help="file to write (default: standard output)")
    forget = commands.add_parser("forget", help=f"delete {NAME} memories by id, or a whole user, chat or session")
    forget.add_argument("ids", nargs="*", type=whole_number, help="memory ids (the #numbers in recalled context)")
    _scope_arguments(forget, "forget this user's memories (all of them without ids)")
    add_id(forget, "session", "forget this session's memories")
    add_yes(forget)  # it asks before deleting a user, chat or session; ids it is given, it deletes


def _elsewhere(config: Config) -> str:
    """Where this config's memories are when ctx-local is not one of its providers (an operator exporting a Mem0
    deployment's user read "no ctx-local memory yet" and ``[]`` as "nothing held"; a red-team pass); else ``""``."""
    providers = [*config.provider_names, *([config.memory.provider] if config.memory.provider else [])]
    if NAME in providers:
        return ""
    where = f"deployment {config.deployment!r}" if config.deployment else "this config"
    return (f" -- and {NAME} is not a memory provider of {where} (it uses {', '.join(dict.fromkeys(providers))}): "
            f"these commands read {NAME}'s store only; the file provider's memories are in MEMORY.md / USER.md "
            "(hermes-ctx memory show), Mem0's and Honcho's at their service (hermes-ctx forget --user removes them "
            "there)")


def _scope_arguments(parser: argparse.ArgumentParser, user_help: str) -> None:
    add_id(parser, "user", user_help)
    add_id(parser, "chat", "... and this chat")


def run(args: argparse.Namespace, config: Config) -> int:
    """Run one of :data:`COMMANDS`; returns the exit code."""
    try:
        provider = LocalProvider(config.options_for(NAME), hermes_home=hermes_home(), config=config)
    except ConfigError as exc:
        print(shown(f"hermes-ctx: invalid config: {config.locate(exc)}"), file=sys.stderr)
        return EXIT_CONFIG
    command = args.memory_command
    args.namespace, args.config_read = config.memory_namespace, config
    try:
        if command == "stats":
            return _stats(provider, args)
        if not memory_exists(config, provider.path):
            print(f"hermes-ctx: no {NAME} memory yet at {provider.path}{_elsewhere(config)}", file=sys.stderr)
            if command == "forget":  # a whole user, chat or session with nothing stored is no error (ids are)
                if not args.ids:  # a deployment may keep its store elsewhere (options.ctx-local.path): a review
                    print("hermes-ctx: nothing forgotten here; another deployment's store (--deployment D), and every "
                          "store of ours, are reached by hermes-ctx forget --user", file=sys.stderr)
                return EXIT_INPUT if args.ids else 0
            if wants_json(args):  # nothing found, nothing exported: still the command's document
                print_json([] if command == "search" or args.output is None else _exported(0, args), indent=None)
            return 0
        if command == "export" and args.output is not None:
            ours = _ours(args.output, provider, config)
            if ours is not None:  # opening it for writing would empty it before a line is read
                print(f"hermes-ctx: --output {args.output} is {ours}: exporting into it would destroy it; "
                      "write the export to a file of its own", file=sys.stderr)
                return EXIT_INPUT
        store = open_memory(config, provider.path) if command == "forget" else _opened(config, provider.path)
        try:
            return {"search": _search, "export": _export, "forget": _forget}[command](provider, store, args)
        finally:
            store.close()
    except LocalStoreError as exc:
        print(f"hermes-ctx: {exc}", file=sys.stderr)
        return EXIT_PLUGIN


def _opened(config: Config, path: Path) -> MemoryBackend:
    """The store at ``path`` for a command that only reads it: as usual, else -- when this user cannot write it (a
    mounted backup, another user's home) -- read without writing anything, said on stderr (a newcomer walk: a
    read-only copy could not be searched, counted or exported at all)."""
    # a file this user cannot write is read so from the start: opened the ordinary way, SQLite opens it read-only
    # without a word and, in a folder this user can write, leaves a -wal and -shm of theirs beside it, which fail
    # every write of its owner's from then on (a review)
    writable = writable_file(path)
    if writable is not False:
        try:
            return open_memory(config, path)
        except LocalStoreError as exc:
            if exc.reason != "read-only" or writable is None:
                raise
    store = open_memory(config, path, read_only=True)
    print(f"hermes-ctx: {path} cannot be written by this user: read without writing", file=sys.stderr)
    return store


def _search(provider: LocalProvider, store: MemoryBackend, args: argparse.Namespace) -> int:
    if not 1 <= args.limit <= 200:
        print(f"hermes-ctx: --limit must be from 1 to 200, got {args.limit}", file=sys.stderr)
        return EXIT_INPUT
    terms = query.query_terms(args.query)
    if not terms:
        print(shown(f"hermes-ctx: {short_repr(args.query, 80)} has no searchable words (only stop words or "
                    "punctuation)"), file=sys.stderr)
        return EXIT_INPUT
    if args.all_scopes and (args.user is not None or args.chat is not None):
        print("hermes-ctx: --all-scopes searches every user and chat; drop it to search one user's chats "
              "(--user alone searches all of them), or drop --user/--chat", file=sys.stderr)
        return EXIT_INPUT
    if args.all_scopes:  # every user: each across their chats
        users = {user for user, _ in store.scopes(args.namespace)}
    else:
        users = {args.user or ""}
    # without --chat: all of a user's chats; with it, what a session in that chat recalls
    across = args.chat is None
    hits = [hit for user in sorted(users) for hit in store.search(
        terms, namespace=args.namespace, user_id=user, chat_id=args.chat or "", share_across_chats=across,
        limit=args.limit)]
    options = provider.options
    ranked = recall.rank(list({h.memory.id: h for h in hits}.values()), chat_id=args.chat or "",
                         share_across_chats=options.share_across_chats,
                         half_life_days=options.recency_half_life_days, recency_weight=options.recency_weight)
    ranked = ranked[:args.limit]
    if wants_json(args):
        print_json([{**r.memory.as_json(), "score": round(r.score, 4)} for r in ranked], indent=None)  # one line
    else:
        for item in ranked:
            memory = item.memory
            scope = f"user {typed(memory.user_id)} chat {typed(memory.chat_id)}"
            print(shown(f"[{recall.provenance(memory)} · {scope}] {query.excerpt(memory.text, terms, 300)}"))
        if not ranked:
            print("no matching memories")
    if not ranked:  # (on stderr: --json's stdout stays the one document)
        say_elsewhere(elsewhere(store, args, user_id=None if args.all_scopes else args.user or "",
                                chat_id=None if args.all_scopes else args.chat), args, "searched")
    return 0


def _exported_elsewhere(store: MemoryBackend, args: argparse.Namespace) -> None:
    """After an export: the other namespaces holding what its filters select, on stderr."""
    say_elsewhere(elsewhere(store, args, user_id=args.user, chat_id=args.chat, session_id=args.session), args,
                  "exported")


def _stats(provider: LocalProvider, args: argparse.Namespace) -> int:
    """The store's figures and the local queue's; when the store cannot be asked (a server down), the
    queue all the same — it is on this machine — then exit 3."""
    settings = provider.config.plugins.storage
    report: dict[str, Any] = {"database": str(provider.path), "exists": None, "error": None,
                              "namespace": args.namespace, "queue": str(provider.queue_dir),
                              "backend": settings.memory or settings.backend}
    progress: dict[str, int] | None = {}
    try:
        report["exists"] = memory_exists(provider.config, provider.path)
        if report["exists"]:
            store = _opened(provider.config, provider.path)
            try:
                report.update(store.stats(args.namespace))
                progress = store.progress()
                report["quarantine"] = [vars(q) for q in store.quarantined(args.namespace)]
                report["other_namespaces"] = elsewhere(store, args)
            finally:
                store.close()
    except LocalStoreError as exc:
        report["error"], progress = str(exc), None  # how far the queue is applied is the store's to say
    try:
        segments = inspect(provider.queue_dir, progress or {}) if provider.queue_dir.is_dir() else []
    except OSError as exc:  # its folder cannot be entered (a review: a traceback)
        segments, report["error"] = [], report["error"] or f"the queue {provider.queue_dir} cannot be read: {exc}"
    report["waiting"] = sum(s.waiting for s in segments)
    report["waiting_known"] = progress is not None
    report["segments"] = [{"path": str(s.path), "waiting": s.waiting, "live": s.live} for s in segments]
    emit(args, report, lambda: _stats_text(report))
    if not wants_json(args):
        say_elsewhere(report.get("other_namespaces") or {}, args, "counted")
    if report["error"]:
        print(f"hermes-ctx: {report['error']}", file=sys.stderr)
        return EXIT_PLUGIN
    return 0


def _date(value: Any) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(value)) if isinstance(value, (int, float)) else "-"


def _stats_text(report: dict[str, Any]) -> str:
    namespace = f", namespace {report['namespace']!r}" if report["namespace"] else ""
    if report["backend"] == "postgres":  # the file's path is only the name of this machine's rows on the server
        report = {**report, "database": f"the PostgreSQL server, the rows of {report['database']}"}
    if report["error"]:
        lines = [f"{NAME} memory: {report['database']} ({report['backend']}): cannot be read now: {report['error']}"]
    elif not report["exists"]:
        lines = [f"{NAME} memory: {report['database']} (not created yet)"]
    else:
        lines = [f"{NAME} memory: {report['database']} ({report['backend']}, {report['bytes'] / 1e6:.1f} MB"
                 f"{namespace})",
                 f"  {report['turns']:,} turns, {report['facts']:,} facts, {report['scopes']:,} user/chat scopes, "
                 f"{report['sessions']:,} sessions; oldest {_date(report['oldest'])}, newest {_date(report['newest'])}"]
    live = sum(1 for s in report["segments"] if s["live"])
    waiting = f"{report['waiting']:,}" if report["waiting_known"] else f"at most {report['waiting']:,}"
    lines.append(f"  queue {report['queue']}: {waiting} records waiting in {len(report['segments'])} "
                 f"segment file(s)" + (f", {live} held by a running process" if live else ""))
    quarantine = report.get("quarantine") or []
    kept = " (kept with their errors, never dropped)" if quarantine else ""
    lines.append(f"  quarantined: {len(quarantine)}{kept}")
    for item in quarantine:
        record = item["record"] if len(item["record"]) <= 120 else item["record"][:117] + "..."
        lines.append(f"    #{item['id']} {_date(item['quarantined_at'])} after {item['attempts']} attempt(s): "
                     f"{item['error']}")
        lines.append(f"       record: {record}")
    return "\n".join(lines)


def _export(provider: LocalProvider, store: MemoryBackend, args: argparse.Namespace) -> int:
    """JSON lines to ``--output`` or stdout; with ``--json`` and no ``--output``, one JSON array."""
    memories = store.memories(namespace=args.namespace, user_id=args.user, chat_id=args.chat,
                              session_id=args.session)
    if wants_json(args) and args.output is None:
        print_json([memory.as_json() for memory in memories])
        _exported_elsewhere(store, args)
        return 0
    try:
        out: TextIO = args.output.open("w", encoding="utf-8") if args.output else sys.stdout
    except OSError as exc:
        print(f"hermes-ctx: cannot write {args.output}: {exc.strerror or exc}", file=sys.stderr)
        return EXIT_INPUT
    count = 0
    # the bar only while writing a file: on stdout, the lines themselves show the progress
    with Progress(enabled=args.output is not None) as progress:
        step = progress.step(f"exporting {NAME} memories")
        try:
            try:
                for memory in memories:
                    out.write(json_shown(memory.as_json()) + "\n")
                    count += 1
                    step.advance()
            finally:
                if out is not sys.stdout:
                    out.close()
        except OSError as exc:  # a full disk (/dev/full), a quota: said, not a traceback
            if args.output is None:
                raise
            print(f"hermes-ctx: cannot write {args.output}: {exc.strerror or exc}", file=sys.stderr)
            return EXIT_INPUT
    if wants_json(args):
        print_json(_exported(count, args))
    else:
        print(f"exported {count:,} memories" + (f" to {args.output}" if args.output else ""), file=sys.stderr)
    _exported_elsewhere(store, args)
    return 0


#: the folders hermes (and we) keep in its home: nothing in them is an export's to replace
_HERMES_FOLDERS = frozenset({
    "memories", "ctx_plugins", "ctx-local", "skills", "cron", "plugins", "sessions", "logs", "profiles", "gateway",
    "state", "hooks", "scripts", "checkpoints", "cache", "session-exports", "skill-bundles", "pending", "pastes",
    "whatsapp", "sandboxes", "mcp-installs", "node", "node_modules", "skins", "pets", "moa-traces"})
#: hermes' files at the top of its home, refused whether they exist yet or not (SOUL.md, absent, would become the
#: agent's persona); any other file there is refused when it holds something that is not an earlier export
_HERMES_FILES = frozenset({"config.yaml", "auth.json", "soul.md", "state.db", "projects.db", "response_store.db",
                           "verification_evidence.db", "processes.json", "sticker_cache.json"})
_HERMES_SUFFIXES = (".db", ".db-wal", ".db-shm", ".db-journal", ".lock", ".yaml", ".yml")
#: what an export may be called when it is made in hermes' home
_EXPORT_SUFFIXES = (".jsonl", ".ndjson")
#: what the file store's files are called wherever they are (a folder of memories/ may be a link elsewhere)
_MEMORY_FILES = frozenset({"memory.md", "user.md"})


def _ours(output: Path, provider: LocalProvider, config: Config) -> str | None:
    """What ``output`` is when it is one of the files the stores or hermes live in (the ctx-local database and
    its siblings, the archive, the config, the file store's MEMORY.md / USER.md anywhere, a file with other
    names -- a hard link --, anything in hermes' folders or its own files at the top of its home, a profile's
    too): ``None`` for any other file (a red-team pass found SOUL.md, profiles, hard links and linked folders)."""
    from ...storage import archive_path

    database, archive = provider.path, archive_path(config)
    home = Path(provider.hermes_home or hermes_home())
    candidates = [(database, f"the {NAME} database"), *[(Path(f"{database}{suffix}"), f"the {NAME} database's "
                  "journal") for suffix in ("-wal", "-shm", "-journal")],
                  *[(Path(f"{archive}{suffix}"), "the archive") for suffix in ("", "-wal", "-shm", "-journal",
                                                                                 ".spool.jsonl")]]
    if not config.source.startswith("<"):
        candidates.append((Path(config.source), "the config file"))
    try:
        target, written = output.resolve(), Path(os.path.abspath(output))
        if target == provider.queue_dir.resolve() or provider.queue_dir.resolve() in target.parents:
            return f"inside the {NAME} write queue"
        for path, what in candidates:
            if (path.exists() and output.exists() and output.samefile(path)) or target == path.resolve():
                return what
        if target.parent == database.resolve().parent and target.name.startswith(database.name):
            return f"one of the {NAME} database's files"
        if target.name.lower() in _MEMORY_FILES or written.name.lower() in _MEMORY_FILES:
            return "a MEMORY.md / USER.md (the file memory's)"
        if output.is_dir():
            return "a folder"
        if output.exists() and stat.S_ISREG(output.stat().st_mode) and output.stat().st_nlink > 1:
            return "a file with other names (a hard link): writing it would change them all"
        for path in {target, written}:
            for root in _homes(home, path):
                inside = _in_home(path, root)
                if inside:
                    return inside
    except (OSError, ValueError, RuntimeError):  # unreadable or odd (a symlink loop: RuntimeError before 3.13):
        # opening it for writing says what is wrong
        return None
    return None


def _homes(home: Path, path: Path) -> list[Path]:
    """The hermes homes ``path`` may be in: this one, the root one above a profile, and the profile of the root
    that ``path`` is in (``<root>/profiles/<name>/``)."""
    homes = [home.resolve(), home.absolute()]
    root = homes[0].parent.parent if homes[0].parent.name == "profiles" else homes[0]
    homes.append(root)
    profiles = root / "profiles"
    if profiles in path.parents:
        homes.append(profiles / path.relative_to(profiles).parts[0])
    return homes


def _in_home(path: Path, home: Path) -> str | None:
    """What ``path`` is in hermes home ``home``: inside one of its folders, or one of its own files at its top."""
    if home not in path.parents:
        return None
    parts = path.relative_to(home).parts
    if len(parts) > 1 and parts[0] in _HERMES_FOLDERS:
        return f"inside hermes' {parts[0]}/ folder"
    name = parts[-1]
    if len(parts) == 1 and (name.lower() in _HERMES_FILES or name.startswith(".") or name.endswith(_HERMES_SUFFIXES)):
        return "one of hermes' own files"
    # hermes keeps more files and folders in its home than any list here (honcho.json, backups/, ...; a red-team
    # pass): in it, an export replaces only an earlier export, or makes a new .jsonl file
    if path.exists():
        return None if _an_export(path) else "a file in hermes' home holding something other than an export"
    if not name.lower().endswith(_EXPORT_SUFFIXES):
        return "a new file in hermes' home not named .jsonl (hermes reads files of its own there)"
    return None


def _an_export(path: Path) -> bool:
    """Whether ``path`` is an earlier export: a regular file (never a FIFO: reading one waits for ever) that is empty
    with an export's name, or whose every line (of the first MiB) is a memory record as ``memory export`` writes
    them (a red-team pass: a first line alone was read, and a blank one passed a JSON config starting with a blank
    line)."""
    if not stat.S_ISREG(path.stat().st_mode):
        return False
    with path.open("rb") as file:
        head = file.read(1 << 20)
    if not head:
        return path.name.lower().endswith(_EXPORT_SUFFIXES)
    lines = head.split(b"\n")
    if len(head) == 1 << 20 and len(lines) > 1:
        lines = lines[:-1]  # the last line may be cut: not read
    elif len(head) == 1 << 20:  # one memory longer than a MiB: it begins as the export writes one, keys in order
        return bool(_EXPORT_START.match(head))
    try:
        records = [json.loads(line) for line in lines if line.strip()]
    except (ValueError, RecursionError):
        return False
    return bool(records) and all(isinstance(r, dict) and _EXPORT_KEYS <= r.keys() for r in records)


#: the keys every record ``memory export`` writes holds
_EXPORT_KEYS = frozenset({"id", "key", "kind", "namespace", "user_id", "session_id", "created"})
#: how such a record begins: its first keys, in the order it writes them, with plain values
_EXPORT_START = re.compile(rb'\{"id": \d+, "key": "(?:[^"\\]|\\.){0,300}", "kind": "\w+", '
                           rb'"namespace": "(?:[^"\\]|\\.){0,2000}", "user_id": ')


def _exported(count: int, args: argparse.Namespace) -> dict[str, Any]:
    return {"exported": count, "output": str(args.output)}


def _forget(provider: LocalProvider, store: MemoryBackend, args: argparse.Namespace) -> int:
    bad = [i for i in args.ids if not 1 <= i <= MAX_ID]
    if bad:
        print(f"hermes-ctx: memory ids are whole numbers from 1 to {MAX_ID:,}, got "
              f"{', '.join(describe(i) for i in bad[:5])}", file=sys.stderr)
        return EXIT_INPUT
    if args.ids:
        deleted = store.forget(args.ids, namespace=args.namespace, user_id=args.user, chat_id=args.chat)
        missing = sorted(set(args.ids) - set(deleted))
        if wants_json(args):  # what was deleted is said even when an id was not found
            print_json({"forgotten": sorted(deleted), "missing": missing})
        elif deleted:
            print(f"forgot {len(deleted)} memories: {', '.join(f'#{i}' for i in deleted)}")
        if deleted:
            _compact(store)
        if missing:
            print(f"hermes-ctx: no memory {', '.join(f'#{i}' for i in missing)}"
                  + (" in that scope" if args.user is not None or args.chat is not None else ""), file=sys.stderr)
            return EXIT_INPUT
        return 0
    if args.user is None and args.chat is None and args.session is None:
        print("hermes-ctx: name memory ids, or --user, --chat or --session to forget", file=sys.stderr)
        return EXIT_INPUT
    what = ", ".join(f"{k} {v!r}" for k, v in (("user", args.user), ("chat", args.chat), ("session", args.session))
                     if v is not None)
    refused = confirm(f"forget every memory of {what}? [y/N] ", yes=args.yes)
    if refused is not None:
        return refused
    count = store.forget_where(namespace=args.namespace, user_id=args.user, chat_id=args.chat,
                               session_id=args.session)
    # the namespace searched, and the others holding what was asked (a review: "forgot 0 memories" and exit 0 read as
    # done while her memories in a deployment's namespace stayed)
    others = sorted(elsewhere(store, args, user_id=args.user, chat_id=args.chat, session_id=args.session))
    where = f"namespace {args.namespace!r}" if args.namespace else "the top-level namespace"
    also = (f"; {', '.join(repr(n) if n else 'the top level' for n in others)} also "
            f"{'hold' if len(others) > 1 else 'holds'} some: hermes-ctx --deployment <its deployment> memory forget "
            f"..., or hermes-ctx forget --user for every namespace and store") if others else ""
    emit(args, {"forgotten": count, "user": args.user, "chat": args.chat, "session": args.session,
                "namespace": args.namespace, "other_namespaces": others},
         f"forgot {count:,} memories of {what} in {where}{also}")
    if count:
        _compact(store)
    return 0  # nothing of theirs is no error: a deletion script runs it again (as `hermes-ctx forget --user` says 0)


def _compact(store: MemoryBackend) -> None:
    """Rewrite the file so forgotten text is gone from it, not just unreachable (best effort)."""
    try:
        store.compact()
    except LocalStoreError as exc:  # e.g. hermes is reading it right now; the deletion itself is done
        print(f"hermes-ctx: forgotten, but the file could not be compacted now ({exc}); the deleted text is "
              "overwritten in the table, its index entries go at the next compaction", file=sys.stderr)

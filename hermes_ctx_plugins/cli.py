"""The ``hermes-ctx`` command: inspect what is installed, check a config, replay a compaction.

Exit codes: 0 fine, 1 a problem was found (doctor) or a store could not be cleared (forget), 2 the
config (or any deployment in it) is invalid, 3 a plugin failed to load, 4 unreadable input or a
destructive command without confirmation.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import logging
import os
import sqlite3
import sys
import time
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from .archive import cli as archive_cli
from .archive.archiver import Archiver
from .cliutil import EXIT_CONFIG, EXIT_INPUT, EXIT_PLUGIN, confirm
from .config import Config, hermes_home, load_config
from .errors import ConfigError, HermesCtxError, PluginError, ProviderLimitError, UnknownPluginError
from .events import Forgotten
from .manager import Host, load_host
from .memory.local import cli as local_cli
from .runstate import read_state
from .storage.sqlite.archive import ArchiveStore
from .tokens import get_counter


def _load(args: argparse.Namespace, *, strategy: str | None = None) -> tuple[Config, Host]:
    """The config ``--config`` and ``--deployment`` select (``strategy`` replacing its compressor), and its host."""
    config = load_config(args.config, deployment=args.deployment)
    if strategy:
        config = dataclasses.replace(config, plugins=dataclasses.replace(config.plugins, compressor=strategy))
    return config, load_host(config)


def _load_failed(exc: HermesCtxError) -> int:
    """Say why the config or a plugin could not be loaded; the exit code."""
    if isinstance(exc, (ConfigError, ProviderLimitError, UnknownPluginError)):
        print(f"hermes-ctx: invalid config: {exc}", file=sys.stderr)
        return EXIT_CONFIG
    print(f"hermes-ctx: {exc}", file=sys.stderr)
    return EXIT_PLUGIN if isinstance(exc, PluginError) else 1


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="hermes-ctx", description=__doc__.splitlines()[0])
    parser.add_argument("--config", help="hermes config.yaml (default: $HERMES_HOME/config.yaml)")
    parser.add_argument("--deployment", help="apply this named deployment (default: $HERMES_CTX_DEPLOYMENT)")
    parser.add_argument("-v", "--verbose", action="store_true", help="log with tracebacks")
    commands = parser.add_subparsers(dest="command", required=True)
    plugins = commands.add_parser("plugins", help="list strategies, providers and plugins with their status")
    plugins.add_argument("--json", action="store_true", help="machine-readable output")
    commands.add_parser("check", help="validate the config, every deployment in it and the installed plugins")
    forget = commands.add_parser(
        "forget", help="remove a user from every store we own (memories, queues, spools, archive, the services)")
    forget.add_argument("--user", required=True, help="the user id, exactly as hermes passes it ('' = anonymous)")
    forget.add_argument("--deployment", dest="forget_deployment", default=argparse.SUPPRESS,
                        help="only this deployment's memories (default: every deployment's)")
    forget.add_argument("--yes", "-y", action="store_true", help="do not ask for confirmation")
    forget.add_argument("--json", action="store_true", help="machine-readable report")
    compress = commands.add_parser(
        "compress", help="replay a saved conversation through the configured strategy (writes nothing)")
    compress.add_argument("file", type=Path,
                          help="a JSON list of chat messages, or hermes' state.db")
    compress.add_argument("--session", help="with a state.db: the session id (default: the latest)")
    compress.add_argument("--strategy", help="use this strategy instead of the configured one")
    compress.add_argument("--show", action="store_true", help="print the resulting messages")
    compress.add_argument("--json", action="store_true", help="machine-readable output")
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
    demo = commands.add_parser("demo", help="run a real hermes agent against a local stub model and watch "
                                            "compression and memory work (no API key, no network)")
    demo.add_argument("--keep", type=Path, metavar="DIR", help="use DIR as HERMES_HOME and leave it there")
    demo.add_argument("--turns", type=int, default=6, help="agent turns in the first session (default 6)")
    demo.add_argument("--json", action="store_true", help="print the report as JSON at the end")
    doctor = commands.add_parser("doctor", help="check config, plugins and memory providers: availability, "
                                                "circuit breaker, queued writes, a probe of the service")
    doctor.add_argument("--json", action="store_true", help="machine-readable output")
    doctor.add_argument("--no-probe", action="store_true", help="do not contact the memory services")
    archive_cli.add_parser(commands)
    args = parser.parse_args(argv)
    _log_to_stderr(args.verbose)
    if args.command == "archive":
        try:
            return archive_cli.run(args, load_config(args.config, deployment=args.deployment))
        except ConfigError as exc:
            return _load_failed(exc)
    if args.command == "demo":
        return _demo(args)
    if args.command == "doctor":
        return _doctor(args)
    if args.command == "memory":
        try:
            return _memory(args, load_config(args.config, deployment=args.deployment))
        except ConfigError as exc:
            return _load_failed(exc)
    if args.command == "forget":
        return _forget(args)

    try:
        _, host = _load(args, strategy=getattr(args, "strategy", None))
    except HermesCtxError as exc:
        return _load_failed(exc)

    if args.command in ("check", "plugins"):
        failed = next(iter(_bad_deployments(args, host.config)), None)
        if failed is not None:
            host.shutdown()
            return _load_failed(failed)
    if args.command == "compress":
        return _compress(host, args)
    if args.command == "plugins":
        running = read_state(hermes_home())
        if args.json:
            print(json.dumps({**_as_json(host), "running": running}, indent=2, default=str))
        else:
            print(_as_table(host) + "\n" + _running_text(running))
    else:
        if host.load_failures:
            for name, why in host.load_failures.items():
                print(f"hermes-ctx: plugin {name!r} failed to load and is skipped: {why}", file=sys.stderr)
            return EXIT_PLUGIN
        print(f"config OK: {host.config.source}"
              + (f" (deployment {host.config.deployment!r})" if host.config.deployment else ""))
        print(f"compressor: {host.compressor.name if host.compressor else '(none: hermes built-in)'}")
        print(f"memory providers: {', '.join(p.name for p in host.memory_providers) or '(none)'}")
    return 0


class _OneLine(logging.Formatter):
    """Log lines for a person at a terminal: the message, no traceback (``--verbose`` has them)."""

    def format(self, record: logging.LogRecord) -> str:
        return f"hermes-ctx: {record.getMessage()}"


def _log_to_stderr(verbose: bool) -> None:
    logger = logging.getLogger("hermes_ctx_plugins")
    if any(getattr(h, "_hermes_ctx_cli", False) for h in logger.handlers):
        return
    handler = logging.StreamHandler()
    handler._hermes_ctx_cli = True  # type: ignore[attr-defined]
    handler.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s") if verbose else _OneLine())
    handler.setLevel(logging.DEBUG if verbose else logging.WARNING)
    logger.addHandler(handler)
    if verbose:
        logger.setLevel(logging.DEBUG)


def _memory(args: argparse.Namespace, config: Config) -> int:
    if args.memory_command in local_cli.COMMANDS:
        return local_cli.run(args, config)
    from .memory.file.approval import PendingWrites
    from .memory.file.provider import memory_folder
    from .memory.file.store import MemoryStore, MemoryStoreError, Op, atomic_write, locked
    from .safety import scan

    home = hermes_home()
    folder = memory_folder(home, config.memory_namespace, args.user)
    store = MemoryStore(home, memory_char_limit=config.memory.memory_char_limit,
                        user_char_limit=config.memory.user_char_limit, scan=scan.scan, folder=folder)
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
                findings = scan.scan(entry)
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
            with locked(file.path):
                raw = file.path.read_bytes() if file.path.exists() else b""
                backup = file.path.with_name(f"{file.path.name}.bak.reset-{int(time.time())}")
                if raw:
                    backup.write_bytes(raw)
                atomic_write(file.path, b"")
            print(f"{args.target} emptied" + (f"; the old content is in {backup}" if raw else ""))
    except (MemoryStoreError, KeyError) as exc:
        print(f"hermes-ctx: {exc.args[0] if isinstance(exc, KeyError) else exc}", file=sys.stderr)
        return EXIT_INPUT
    return 0


def _demo(args: argparse.Namespace) -> int:
    try:
        from .hermes import demo
    except ImportError:
        print("hermes-ctx: the demo needs hermes-agent: pip install 'hermes-ctx-plugins[hermes]'", file=sys.stderr)
        return EXIT_INPUT
    report = demo.run(args.keep, turns=args.turns, out=sys.stdout)
    if args.json:
        print(demo.as_json(report))
    return 0 if report.compressions and report.recalled else 1


def _load_messages(path: Path, session: str | None) -> tuple[str, list[dict[str, Any]]]:
    """A transcript from a JSON file or a hermes state.db; raises ValueError with a clear reason."""
    try:
        head = path.read_bytes()[:16]
    except OSError as exc:
        raise ValueError(f"cannot read {path}: {exc.strerror or exc}") from None
    if head.startswith(b"SQLite format 3"):
        try:
            from .hermes.sessions import load_session
        except ImportError:
            raise ValueError("reading a hermes state.db needs hermes-agent (pip install "
                             "'hermes-ctx-plugins[hermes]')") from None
        try:
            return load_session(path, session)
        except LookupError as exc:
            raise ValueError(str(exc)) from None
        except sqlite3.Error as exc:  # a SQLite file that is not hermes' state.db, or a damaged one
            raise ValueError(f"{path} is not a readable hermes state.db: {exc}") from None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"{path} is neither JSON nor a hermes state.db: {exc}") from None
    if isinstance(data, dict) and isinstance(data.get("messages"), list):
        data = data["messages"]
    if not isinstance(data, list) or not all(isinstance(m, dict) and "role" in m for m in data):
        raise ValueError(f"{path} must hold a JSON list of chat messages (objects with a 'role')")
    return str(path), data


def _compress(host: Host, args: argparse.Namespace) -> int:
    try:
        label, messages = _load_messages(args.file, args.session)
    except ValueError as exc:
        print(f"hermes-ctx: {exc}", file=sys.stderr)
        return EXIT_INPUT
    if host.compressor is None:
        print("hermes-ctx: no compressor strategy is active (see `hermes-ctx plugins`)", file=sys.stderr)
        return EXIT_CONFIG
    # A replay is not latency-bound: count everything exactly so the report's figures are exact.
    get_counter(host.compressor.model).count_messages(messages)
    if host.archive is not None:  # a replay shows the anchor index but keeps nothing
        host.archive = Archiver(ArchiveStore(Path(":memory:")), host.archive.settings)
    events: list[str] = []
    host.isolator.on_event = lambda event: events.append(event.message)
    host.compressor.status_callback = host.isolator.on_event
    result = host.compress(messages, force=True)
    host.shutdown()
    kept = sum(1 for m in result.messages if any(m is o for o in messages))
    report = {
        "source": label, "strategy": host.compressor.name, "compressed": result.compressed,
        "messages_before": len(messages), "messages_after": len(result.messages),
        "tokens_before": result.tokens_before, "tokens_after": result.tokens_after,
        "kept_verbatim": kept, "removed_or_rewritten": len(result.removed),
        "summary": result.summary, "used_fallback": result.used_fallback, "notes": list(result.notes),
        "status": events,
    }
    if args.json:
        if args.show:
            report["messages"] = result.messages
        print(json.dumps(report, indent=2, ensure_ascii=False, default=str))
        return 0
    saved = result.saved_ratio * 100
    print(f"{label}: {host.compressor.name} — "
          + ("compressed" if result.compressed else "unchanged"))
    print(f"  messages  {len(messages):>8,} → {len(result.messages):,} "
          f"({kept:,} kept verbatim, {len(result.removed):,} removed or rewritten)")
    print(f"  tokens    {result.tokens_before:>8,} → {result.tokens_after:,} ({saved:.0f}% saved)")
    for line in [*result.notes, *events]:
        print(f"  - {line}")
    if result.summary:
        print("\nsummary:\n" + "\n".join(f"  {line}" for line in result.summary.splitlines()))
    if args.show:
        print("\n" + json.dumps(result.messages, indent=2, ensure_ascii=False, default=str))
    return 0


def _as_json(host: Host) -> dict[str, Any]:
    return {
        "config": host.config.source,
        "hermes_home": str(hermes_home()),
        "deployment": host.config.deployment,
        "compressor": host.compressor.name if host.compressor else None,
        "memory_providers": [p.name for p in host.memory_providers],
        "plugins": [asdict(r) for r in host.plugins()],
        "loaded": [asdict(p) for p in host.loaded_plugins()],
    }


def _as_table(host: Host) -> str:
    rows = [("NAME", "KIND", "EXTERNAL", "STATUS", "SOURCE")]
    rows += [(r.name, r.kind, "yes" if r.external else "no", r.status, r.source) for r in host.plugins()]
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]) - 1)]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=False)) + "  " + row[-1]
             for row in rows]
    if len(rows) == 1:
        lines.append("(no strategies or providers registered)")
    lines.append("")
    lines.append(f"config: {host.config.source}"
                 + (f"   deployment: {host.config.deployment}" if host.config.deployment else ""))
    for plugin in host.loaded_plugins():
        hooks = ", ".join(plugin.hooks) or "-"
        lines.append(f"plugin {plugin.name} ({plugin.source}): {plugin.status}; hooks: {hooks}")
    return "\n".join(lines)


def _running_text(running: dict[str, Any] | None) -> str:
    """What a running hermes last published about its plugins (suspensions happen there, not here)."""
    if running is None:
        return "running hermes: no state published under this hermes home (hermes has not loaded hermes-ctx)"
    when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(float(running.get("updated") or 0)))
    alive = "running" if running["alive"] else "no longer running"
    lines = [f"running hermes: pid {running['pid']} ({alive}), state of {when}"]
    for record in running.get("plugins") or ():
        if record.get("status") not in ("active", "available", "disabled"):
            lines.append(f"  {record.get('kind')} {record.get('name')}: {record.get('status')}")
    for record in running.get("loaded") or ():
        if str(record.get("status", "")).startswith(("failed", "suspended", "failing")):
            lines.append(f"  plugin {record.get('name')}: {record.get('status')}")
    if len(lines) == 1:
        lines.append("  every strategy, provider and plugin healthy")
    return "\n".join(lines)


# ---------------------------------------------------------------- doctor


def _bad_deployments(args: argparse.Namespace, config: Config) -> list[HermesCtxError]:
    """Every other deployment of the config, loaded as it would be at its first request: a bad one
    is found at start-up, its error naming the deployment's key."""
    errors = []
    for name in sorted(config.plugins.deployments):
        if name == config.deployment:
            continue
        try:
            load_host(load_config(args.config, deployment=name)).shutdown()
        except HermesCtxError as exc:
            errors.append(exc)
    return errors


def _forget(args: argparse.Namespace) -> int:
    """``forget --user U [--deployment D]``: one report line per store; 1 when a store failed."""
    deployment = getattr(args, "forget_deployment", None) or args.deployment
    try:
        base = load_config(args.config, deployment=deployment)
        names = [deployment] if deployment else [None, *sorted(base.plugins.deployments)]
        hosts = [load_host(load_config(args.config, deployment=name)) for name in names]
    except HermesCtxError as exc:
        return _load_failed(exc)
    where = f"deployment {deployment!r}" if deployment else "every deployment"
    try:
        refused = confirm(f"forget user {args.user!r} in {where}: delete their memories, queued writes and "
                          "archived messages for good? [y/N] ", yes=args.yes)
        if refused is not None:
            return refused
        merged: dict[str, Forgotten] = {}
        for host in hosts:
            for item in host.forget_user(args.user, every_namespace=deployment is None):
                seen = merged.get(item.store)
                if seen is None:
                    merged[item.store] = item
                else:  # the same store reached through another deployment's host
                    removed = None if seen.removed is None or item.removed is None else seen.removed + item.removed
                    merged[item.store] = dataclasses.replace(seen, removed=removed,
                                                             error=seen.error or item.error)
    finally:
        for host in hosts:
            host.shutdown()
    report = list(merged.values())
    if args.json:
        print(json.dumps({"user": args.user, "deployment": deployment, "ok": all(f.ok for f in report),
                          "stores": [asdict(f) for f in report]}, indent=2))
    else:
        for item in report:
            count = "?" if item.removed is None else f"{item.removed:,}"
            state = f"FAILED: {item.error}" if item.error else f"removed {count}"
            print(f"{item.store}: {state}" + (f" ({item.detail})" if item.detail else ""))
    return 0 if all(f.ok for f in report) else 1


def _doctor(args: argparse.Namespace) -> int:
    """Config, plugins and every memory provider's health; exit 1 when a selected provider is not usable."""
    from .memory.remote.base import RemoteProvider, read_status

    try:
        config, host = _load(args)
    except (ConfigError, ProviderLimitError, PluginError) as exc:
        return _load_failed(exc)
    bad = _bad_deployments(args, config)
    if bad:
        host.shutdown()
        return _load_failed(bad[0])
    selected = {p.name for p in host.memory_providers} | ({config.memory.provider} - {""})
    problems: list[str] = []
    rows: list[dict[str, Any]] = []
    for entry in (r for r in host.registry if r.kind == "memory"):
        row: dict[str, Any] = {"name": entry.name, "external": entry.external, "source": entry.source,
                               "selected": entry.name in selected}
        rows.append(row)
        try:
            provider = host.provider_instance(entry.name)
            availability = getattr(provider, "availability", None)
            available, why = availability() if callable(availability) else (provider.is_available(), "")
        except Exception as exc:  # a provider that cannot even be created is what doctor is for
            row.update(available=False, why=f"{type(exc).__name__}: {exc}")
            if row["selected"]:
                problems.append(f"{entry.name}: {row['why']}")
            continue
        row.update(available=available, why=why)
        if row["selected"] and not available:
            problems.append(f"{entry.name} is selected but unavailable: {why}")
        if not isinstance(provider, RemoteProvider):
            continue
        reported = read_status(provider.state_dir)
        if reported and reported.get("pid") != os.getpid():
            row["last_reported"] = reported
        if row["selected"] and available and not args.no_probe:
            started = time.perf_counter()
            try:
                provider.check()
                row["probe"] = f"ok ({(time.perf_counter() - started) * 1000:.0f} ms)"
            except Exception as exc:
                row["probe"] = f"failed: {type(exc).__name__}: {exc}"
                problems.append(f"{entry.name} probe {row['probe']}")
            finally:
                provider.close_client()
        row.update({k: v for k, v in provider.status().items() if k in (
            "breaker", "queued", "spooled", "sent", "dropped", "rejected")})
    report = {"config": config.source, "hermes_home": str(hermes_home()), "deployment": config.deployment,
              "compressor": host.compressor.name if host.compressor else None,
              "plugins": [asdict(p) for p in host.loaded_plugins()], "memory_providers": rows,
              "ok": not problems, "problems": problems}
    print(json.dumps(report, indent=2, default=str) if args.json else _doctor_text(report))
    return 0 if not problems else 1


def _doctor_text(report: dict[str, Any]) -> str:
    lines = [f"config       {report['config']}" + (f"   deployment: {report['deployment']}"
                                                   if report["deployment"] else ""),
             f"hermes home  {report['hermes_home']}",
             f"compressor   {report['compressor'] or '(none: hermes built-in)'}",
             "plugins"]
    lines += [f"  {p['name']} ({p['source']}): {p['status']}" for p in report["plugins"]]
    lines.append("memory providers")
    width = max((len(r["name"]) for r in report["memory_providers"]), default=4)
    for row in report["memory_providers"]:
        state = "available" if row["available"] else "unavailable"
        why = f": {row['why']}" if row.get("why") else ""
        lines.append(f"  {row['name']:<{width}}  {'external' if row['external'] else 'built-in':<8}  "
                     f"{'selected' if row['selected'] else '-':<8}  {state}{why}")
        pad = " " * (width + 4)
        if "breaker" in row and (row["selected"] or row["queued"] or row["spooled"]):
            lines.append(f"{pad}breaker: {row['breaker']}" + (f"; probe: {row['probe']}" if "probe" in row else ""))
            lines.append(f"{pad}writes: {row['queued']} queued here, {row['spooled']} spooled on disk "
                         f"(sent {row['sent']}, dropped {row['dropped']}, rejected {row['rejected']})")
        last = row.get("last_reported")
        if last:
            when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(float(last.get("updated") or 0)))
            lines.append(f"{pad}last reported by pid {last.get('pid')} at {when}: breaker {last.get('breaker')}; "
                         f"{last.get('queued', 0)} queued, sent {last.get('sent', 0)}, "
                         f"dropped {last.get('dropped', 0)}")
    lines.append("result: OK" if report["ok"] else "result: PROBLEMS\n" + "\n".join(
        f"  - {p}" for p in report["problems"]))
    return "\n".join(lines)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())

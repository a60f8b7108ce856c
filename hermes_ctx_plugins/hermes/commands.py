"""Our commands inside hermes: ``hermes ctx …`` in a shell and ``/ctx`` in a conversation.

hermes 0.19.0 offers plugins both: ``register_cli_command`` adds a ``hermes <name>`` subcommand
(hermes hands us an argparse subparser and calls our handler with the parsed namespace; it ignores
the handler's return value, so a failure exits through ``SystemExit``), and ``register_command``
adds a slash command to its CLI, TUI and gateways (the handler gets the text after the command and
returns the text to show; it is told nothing about the session it was typed in).

- ``hermes ctx ARGS`` is ``hermes-ctx ARGS``: the same commands, options and exit codes.
- ``/ctx`` (or ``/ctx status``) shows this process's state: the strategy, the last compaction, the
  tokens saved, the archive's size, the memory providers and their breakers — numbers and names
  only, never anyone's text, because in a gateway the person asking may not be the one whose
  conversation compacted.
- ``/ctx search QUERY`` and ``/ctx expand ID`` read the archive of the conversation they are typed
  in. hermes does not say which conversation that is, so they answer only in hermes' own interactive
  front ends (CLI, TUI) running exactly one conversation; in a gateway — which runs a plugin command
  before it even looks up the sender's agent, and keeps other users' agents cached — they refuse
  rather than show one user another's archive (the model's ``ctx_search`` / ``ctx_expand`` tools,
  and ``hermes-ctx archive`` on the host, work there).
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
import time
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..manager import Host
    from .runtime import Runtime

NAME = "ctx"
CLI_HELP = "hermes-ctx-plugins: status, doctor, memory, archive, compress, install (same as `hermes-ctx`)"
SLASH_HELP = "context plugins: status, search the archive, expand an archived message"
SLASH_ARGS = "[status | search QUERY | expand ID]"
#: the platforms of hermes' own interactive front ends (one person at one terminal)
INTERACTIVE = frozenset({"", "cli", "tui"})
SLASH_USAGE = ("/ctx                 status: strategy, last compaction, tokens saved, archive, memory providers\n"
               "/ctx search QUERY    search what compactions archived from this conversation\n"
               "/ctx expand ID       read archived messages verbatim (an id from search, or a range 120-135)")


def register_cli(ctx: Any) -> None:
    """Hand hermes ``hermes ctx``: whatever state our config is in (``hermes ctx doctor`` is how a
    user finds out what is wrong with it)."""
    ctx.register_cli_command(NAME, help=CLI_HELP, setup_fn=setup_cli, handler_fn=run_cli,
                             description="Runs `hermes-ctx ARGS`; `hermes ctx help` lists them.")


def register_slash(ctx: Any, runtime: Runtime) -> None:
    """Hand hermes ``/ctx`` for ``runtime``."""
    ctx.register_command(NAME, lambda raw: slash(runtime, raw), description=SLASH_HELP, args_hint=SLASH_ARGS)


def _leading_options() -> list[tuple[tuple[str, ...], dict[str, Any]]]:
    """``hermes-ctx``'s global options (and ``--version``), which may also come before the command."""
    from ..cli.common import GLOBAL_OPTIONS

    return [*GLOBAL_OPTIONS, (("--version",), {"action": "store_true", "default": False,
                                               "help": "print the versions of hermes-ctx and hermes-agent"})]


def _dest(flags: tuple[str, ...]) -> str:
    # a name of our own in hermes' namespace (hermes' parser has a --verbose of its own)
    return "hermes_ctx_" + flags[-1].lstrip("-").replace("-", "_")


def setup_cli(parser: argparse.ArgumentParser) -> None:
    """Our options before the command (hermes parses those; the rest it hands over untouched)."""
    for flags, options in _leading_options():
        parser.add_argument(*flags, **{**options, "dest": _dest(flags), "default": None})
    parser.add_argument("args", nargs=argparse.REMAINDER, metavar="COMMAND ...",
                        help="a hermes-ctx command and its options (`hermes ctx help` lists them)")


def run_cli(args: argparse.Namespace) -> None:
    from ..cli import main

    argv = list(getattr(args, "args", None) or [])
    if argv[:1] == ["help"]:
        argv = ["--help", *argv[1:]]
    leading: list[str] = []
    for flags, options in _leading_options():
        value = getattr(args, _dest(flags), None)
        if value is True:
            leading.append(flags[-1])
        elif isinstance(value, str) and options.get("action") != "store_true":
            leading += [flags[-1], value]
    code = main(leading + argv, prog="hermes ctx")  # nothing at all: a usage error (exit 4), as `hermes-ctx` alone
    if code:
        raise SystemExit(code)


def slash(runtime: Runtime, raw: str) -> str:
    """The answer to ``/ctx RAW`` (never raises: hermes would print a bare traceback line), as a terminal can print
    it: what an archived message tells a terminal, and a lone surrogate, as escapes (:func:`~..cliutil.shown`)."""
    from ..cliutil import shown

    return shown(_slash(runtime, raw))


def _slash(runtime: Runtime, raw: str) -> str:
    try:
        words = shlex.split(raw or "")
    except ValueError as exc:
        return f"/ctx: {exc}\n{SLASH_USAGE}"
    command, rest = (words[0].lower(), words[1:]) if words else ("status", [])
    try:
        if command == "status" and not rest:
            return status(runtime)
        if command in ("search", "expand") and rest:
            return _archive(runtime, command, " ".join(rest))
        if command in ("help", "-h", "--help"):
            return SLASH_USAGE
    except Exception as exc:  # a store that cannot be read is an answer, not a crash
        return f"/ctx {command}: {type(exc).__name__}: {exc}"
    return f"/ctx: unknown or incomplete command {raw.strip()!r}; valid:\n{SLASH_USAGE}"


def status(runtime: Runtime) -> str:
    host = runtime.host
    agents = runtime.agents
    strategy = host.compressor.name if host.compressor else "(none: hermes' built-in compressor)"
    lines = [f"strategy      {strategy}"]
    last = agents.last
    if last is None:
        lines.append("compactions   none yet in this process")
    else:
        ago = _ago(time.time() - last.when)
        lines.append(f"compactions   {agents.compactions:,} in this process, {agents.tokens_saved:,} tokens saved")
        lines.append(f"last          {ago}: {last.strategy}, {last.messages_before:,} -> {last.messages_after:,} "
                     f"messages, {last.tokens_before:,} -> {last.tokens_after:,} tokens"
                     + (" (static fallback summary)" if last.fallback else ""))
    if host.archive is None:
        lines.append("archive       off (ctx_plugins.archive.enabled)")
    else:  # a store that cannot be read is one line of the status, not all of it (a newcomer walk: the DSN unset)
        lines.append(f"archive       {_archive_line(host)}")
    lines.append("memory")
    providers = host.memory_providers
    if not providers:
        lines.append("  (no provider active)")
    for provider in providers:
        health = host.isolator.status(f"memory:{provider.name}")
        extra = getattr(provider, "status", None)
        try:
            state = extra() if callable(extra) else {}
        except Exception as exc:  # another plugin's, or a store that cannot be read
            state, health = {}, f"{health}; its status could not be read: {type(exc).__name__}: {exc}"
        if isinstance(state, dict) and "breaker" in state:
            health += f"; breaker {state['breaker']}, {state.get('queued', 0)} writes queued"
        lines.append(f"  {provider.name}: {health}")
    chosen = host.config.memory.provider  # hermes' own external provider: active in our host once hermes starts it
    if chosen and chosen not in {provider.name for provider in providers}:
        record = next((r for r in host.plugins() if r.kind == "memory" and r.name == chosen), None)
        lines.append(f"  {chosen}: hermes' memory.provider, " + (
            "hermes' own (not one of ours: `hermes memory status` reports on it)" if record is None
            else "disabled (ctx_plugins.disabled): hermes does not start it" if not record.enabled
            else "not active in this process: hermes starts it with a conversation if it is available "
                 "(`hermes-ctx doctor` says whether it is)"))
    troubled = [p for p in host.loaded_plugins() if p.status != "ok" and p.enabled]
    for plugin in troubled:
        lines.append(f"plugin {plugin.name}: {plugin.status}")
    return "\n".join(lines)


def _archive_line(host: Host) -> str:
    """What ``/ctx`` says of the archive: its size and where it is, or why it cannot be read."""
    assert host.archive is not None
    storage = host.config.plugins.storage
    try:
        stats = host.archive.store.stats()
    except Exception as exc:
        return f"unusable: {type(exc).__name__}: {exc}"
    where = (f"PostgreSQL, the rows of {stats['path']}" if (storage.archive or storage.backend) == "postgres"
             else stats["path"])
    return (f"{_count(stats['messages'], 'message')} from {_count(stats['compactions'], 'compaction')}, "
            f"{stats['bytes'] / 1e6:.1f} MB ({where})")


def _archive(runtime: Runtime, command: str, text: str) -> str:
    archive = runtime.host.archive
    if archive is None:
        return "/ctx: the archive is off (ctx_plugins.archive.enabled: false)"
    live = runtime.agents.live()
    platform = str(getattr(live[0], "platform", "") or "") if len(live) == 1 else ""
    if not live and "gateway.run" not in sys.modules:  # `hermes chat` builds its agent at the first message (a
        # newcomer walk: typed first after -r SESSION, it said "a process running 0 conversations")
        return ("/ctx search and /ctx expand read this conversation's archive, and hermes starts the conversation at "
                "its first message: send one first (or run `hermes-ctx archive search` on the host).")
    if len(live) != 1 or platform not in INTERACTIVE or "gateway.run" in sys.modules:
        # A gateway runs a plugin command before it builds (or finds) the sender's agent and keeps other
        # users' agents cached: the one live agent may well be someone else's.
        where = "a gateway" if "gateway.run" in sys.modules or platform not in INTERACTIVE else \
            f"a process running {len(live)} conversations"
        return ("/ctx search and /ctx expand read one conversation's archive, and hermes does not tell plugin "
                f"commands which conversation they were typed in; in {where} that cannot be known. Ask the model "
                "(it has ctx_search / ctx_expand), or run `hermes-ctx archive search` on the host.")
    from ..tokens import get_counter  # not at hermes' start, where only the command is registered

    agent = live[0]
    session = runtime.session(str(getattr(agent, "session_id", "") or ""), runtime.host)
    args: dict[str, Any] = {"query": text, "limit": 10} if command == "search" else {"id": text}
    name = "ctx_search" if command == "search" else "ctx_expand"
    answer = json.loads(archive.handle_tool_call(name, args, session=session,
                                                 counter=get_counter(session.model or "")))
    if "error" in answer:
        return f"/ctx {command}: {answer['error']}"
    if command == "search":
        rows = [f"  #{r['id']}  {r['role']:<9} {r['archived']}  {r['snippet']}" for r in answer["results"]]
        note = "read one with /ctx expand ID" if rows else answer.get("note", "")
        return "\n".join([f"/ctx search {text!r}: {_count(len(rows), 'result')}", *rows, note])
    messages = [f"#{m.get('id')} {m.get('role')}: {m.get('content') or json.dumps(m.get('tool_calls'))}"
                for m in answer.get("messages", [])]
    return "\n\n".join(messages + ([answer["note"]] if answer.get("note") else [])) or "/ctx expand: nothing"


def _count(number: int, noun: str) -> str:
    return f"{number:,} {noun}{'' if number == 1 else 's'}"


def _ago(seconds: float) -> str:
    if seconds < 90:
        return f"{seconds:.0f} s ago"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min ago"
    return f"{seconds / 3600:.1f} h ago"

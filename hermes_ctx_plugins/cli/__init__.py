"""The ``hermes-ctx`` command: inspect what is installed, check a config, replay a compaction.

One module per command, with ``add_parser(commands)`` (it adds its parser, or parsers, to
``commands``) and ``run(args) -> int`` (the exit code), listed in :data:`COMMANDS`; the archive's and
ctx-local's commands live in their rooms (:mod:`hermes_ctx_plugins.archive.cli`,
:mod:`hermes_ctx_plugins.memory.local.cli`). The conventions, the same for every command:

- ``--config``, ``--deployment``, ``-p/--profile`` (the hermes profile whose home to use: without it,
  the one hermes runs, :mod:`hermes_ctx_plugins.hermes.profile`), ``-v/--verbose`` and ``--json`` are
  accepted before or after the command and its subcommand (``hermes-ctx memory search X --json`` =
  ``hermes-ctx --json memory search X``);
- ``--json``: one JSON document on stdout, nothing else (see :mod:`hermes_ctx_plugins.cliutil`);
- ``-y/--yes`` on every command that deletes or overwrites; without it, one that removes many
  things asks at a terminal and refuses (exit 4) without one;
- ``--version``; exit codes of :mod:`hermes_ctx_plugins.cliutil`: 0 fine, 1 a problem was found
  (doctor) or a store could not be cleared (forget), 2 the config (or any deployment in it) is
  invalid, 3 a plugin failed to load or a store is unusable, 4 unreadable input, a usage error
  (missing argument, unknown command or option) or a destructive command without confirmation;
  stdout closed early (``| head``) ends quietly with 1.
"""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Sequence
from importlib import metadata
from typing import Any

from ..archive import cli as archive_cli
from ..cliutil import (
    EXIT_CONFIG,
    EXIT_INPUT,
    EXIT_PLUGIN,
    EXIT_PROBLEM,
    CommandParser,
    emit,
    shown,
    stdout_closed,
)
from ..hermes.profile import follow as follow_profile
from . import compress, demo, doctor, forget, install, memory, new_plugin, plugins, storage
from .common import GLOBAL_OPTIONS, add_anywhere, parsers_below

__all__ = ["COMMANDS", "EXIT_CONFIG", "EXIT_INPUT", "EXIT_PLUGIN", "EXIT_PROBLEM", "build_parser", "main"]


#: every command, in the order ``--help`` lists them: each has ``add_parser(commands)`` and ``run(args)``
COMMANDS: tuple[Any, ...] = (plugins, forget, compress, memory, demo, install, doctor, archive_cli, storage,
                            new_plugin)


def build_parser(prog: str = "hermes-ctx") -> argparse.ArgumentParser:
    """The whole ``hermes-ctx`` command tree (``prog``: how the user called it, e.g. ``hermes ctx``);
    ``parse_args`` gives ``args.run_command(args)``."""
    parser = CommandParser(prog=prog, description=__doc__.splitlines()[0].replace("``", ""))
    parser.add_argument("--version", action="store_true", help="print the versions of hermes-ctx and hermes-agent")
    commands = parser.add_subparsers(dest="command", parser_class=CommandParser)  # and their subcommands'
    for command in COMMANDS:
        before = set(commands.choices)
        command.add_parser(commands)
        for name in commands.choices.keys() - before:
            commands.choices[name].set_defaults(run_command=command.run)
    below = parsers_below(parser)
    for flags, options in GLOBAL_OPTIONS:
        add_anywhere(parser, below, flags, **options)
    return parser


def main(argv: Sequence[str] | None = None, *, prog: str = "hermes-ctx") -> int:
    """Run ``hermes-ctx ARGV``; the exit code (a usage error exits 4 through ``SystemExit``)."""
    try:
        try:
            return _run(argv, prog)
        finally:  # the result's last bytes leave here: at interpreter exit a closed pipe could not be caught
            sys.stdout.flush()
    except BrokenPipeError:
        return stdout_closed()
    except KeyboardInterrupt:  # Ctrl-C: a line, not a traceback; every store is left as its last transaction left it
        print(f"{prog}: interrupted", file=sys.stderr)
        return 130  # as a shell says of a process SIGINT ended (128 + 2): not one of the codes a command chooses


def _run(argv: Sequence[str] | None, prog: str) -> int:
    parser = build_parser(prog)
    args = parser.parse_args(argv)
    if args.version:
        ours, hermes = _version("hermes-ctx-plugins"), _version("hermes-agent")
        emit(args, {"hermes_ctx": ours, "hermes_agent": hermes},
             f"hermes-ctx {ours or 'unknown'} (hermes-agent {hermes or 'not installed'})")
        return 0
    if args.command is None:
        parser.error("a command is required (hermes-ctx --help lists them)")
    try:  # $HERMES_HOME as hermes would run: -p NAME, else its active profile; before anything reads it
        follow_profile(args.profile)
    except LookupError as exc:
        print(f"hermes-ctx: {exc}", file=sys.stderr)
        return EXIT_INPUT
    _log_to_stderr(args.verbose)
    code: int = args.run_command(args)
    return code


def _version(distribution: str) -> str | None:
    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return None


class _OneLine(logging.Formatter):
    """Log lines for a person at a terminal: the message, no traceback (``--verbose`` has them), what it quotes of a
    service's answer or a stored text with its terminal controls as escapes (:func:`~..cliutil.shown`)."""

    def format(self, record: logging.LogRecord) -> str:
        return shown(f"hermes-ctx: {record.getMessage()}")


class _Shown(logging.Formatter):
    """``--verbose``'s log lines, escaped as :class:`_OneLine`'s."""

    def format(self, record: logging.LogRecord) -> str:
        return shown(super().format(record))


def _log_to_stderr(verbose: bool) -> None:
    logger = logging.getLogger("hermes_ctx_plugins")
    if any(getattr(h, "_hermes_ctx_cli", False) for h in logger.handlers):
        return
    handler = logging.StreamHandler()
    handler._hermes_ctx_cli = True  # type: ignore[attr-defined]
    handler.setFormatter(_Shown("%(levelname)s %(name)s: %(message)s") if verbose else _OneLine())
    handler.setLevel(logging.DEBUG if verbose else logging.WARNING)
    logger.addHandler(handler)
    if verbose:
        logger.setLevel(logging.DEBUG)

"""The ``hermes-ctx`` command: inspect what is installed, check a config, replay a compaction.

One module per command (``add_parser`` and ``run``); the archive's and ctx-local's commands live in
their rooms (:mod:`hermes_ctx_plugins.archive.cli`, :mod:`hermes_ctx_plugins.memory.local.cli`). Every
command exits with the codes of :mod:`hermes_ctx_plugins.cliutil`: 0 fine, 1 a problem was found
(doctor) or a store could not be cleared (forget), 2 the config (or any deployment in it) is invalid,
3 a plugin failed to load or a store is unusable, 4 unreadable input or a destructive command
without confirmation.
"""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Sequence
from pathlib import Path

from ..archive import cli as archive_cli
from ..cliutil import EXIT_CONFIG, EXIT_INPUT, EXIT_PLUGIN, EXIT_PROBLEM
from ..config import load_config
from ..errors import ConfigError
from . import compress, doctor, forget, memory, plugins, storage
from .common import load_failed

__all__ = ["EXIT_CONFIG", "EXIT_INPUT", "EXIT_PLUGIN", "EXIT_PROBLEM", "main"]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="hermes-ctx", description=__doc__.splitlines()[0])
    parser.add_argument("--config", help="hermes config.yaml (default: $HERMES_HOME/config.yaml)")
    parser.add_argument("--deployment", help="apply this named deployment (default: $HERMES_CTX_DEPLOYMENT)")
    parser.add_argument("-v", "--verbose", action="store_true", help="log with tracebacks")
    commands = parser.add_subparsers(dest="command", required=True)
    plugins.add_parsers(commands)
    forget.add_parser(commands)
    compress.add_parser(commands)
    memory.add_parser(commands)
    demo = commands.add_parser("demo", help="run a real hermes agent against a local stub model and watch "
                                            "compression and memory work (no API key, no network)")
    demo.add_argument("--keep", type=Path, metavar="DIR", help="use DIR as HERMES_HOME and leave it there")
    demo.add_argument("--turns", type=int, default=6, help="agent turns in the first session (default 6)")
    demo.add_argument("--json", action="store_true", help="print the report as JSON at the end")
    doctor.add_parser(commands)
    archive_cli.add_parser(commands)
    storage.add_parser(commands)
    args = parser.parse_args(argv)
    _log_to_stderr(args.verbose)
    if args.command in ("archive", "memory"):  # they need the config, not the plugins
        run = archive_cli.run if args.command == "archive" else memory.run
        try:
            return run(args, load_config(args.config, deployment=args.deployment))
        except ConfigError as exc:
            return load_failed(exc)
    if args.command == "demo":
        return _demo(args)
    runs = {"plugins": plugins.run, "check": plugins.run, "doctor": doctor.run, "forget": forget.run,
            "compress": compress.run, "storage": storage.run}
    return runs[args.command](args)


def _demo(args: argparse.Namespace) -> int:
    try:
        from ..hermes import demo
    except ImportError:
        print("hermes-ctx: the demo needs hermes-agent: pip install 'hermes-ctx-plugins[hermes]'", file=sys.stderr)
        return EXIT_INPUT
    report = demo.run(args.keep, turns=args.turns, out=sys.stdout)
    if args.json:
        print(demo.as_json(report))
    return 0 if report.compressions and report.recalled else EXIT_PROBLEM


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

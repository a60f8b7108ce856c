"""``hermes-ctx demo``: a real hermes agent on our plugins, against a scripted model on 127.0.0.1.

What it runs and checks is :mod:`hermes_ctx_plugins.hermes.demo`. Progress goes to stdout, or to
stderr with ``--json`` (stdout then holds only the report). Exit 0 when compaction, the archive
round trip and both recalls happened; 1 naming what did not; 3 when hermes did not load the plugin;
4 when ``--keep`` names a folder that is not new or empty (it could be a real hermes home).
"""

from __future__ import annotations

import argparse
import contextlib
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from ..cliutil import EXIT_INPUT, EXIT_PROBLEM, print_json, wants_json
from ..errors import HermesCtxError
from .common import load_failed

if TYPE_CHECKING:
    from ..hermes.demo import DemoReport


def add_parser(commands: Any) -> None:
    demo = commands.add_parser(
        "demo", help="run a real hermes agent against a local scripted model: compaction, the archive, MEMORY.md "
                     "and ctx-local memory at work (no API key, no network)")
    demo.add_argument("--keep", type=Path, metavar="DIR",
                      help="use DIR (new or empty) as HERMES_HOME and leave it there (MEMORY.md, the ctx-local "
                           "database, the archive); by default a temporary home is removed")
    demo.add_argument("--turns", type=_positive, default=6, metavar="N",
                      help="the most log-reading turns before the first compaction (default 6)")


def run(args: argparse.Namespace) -> int:
    try:
        from ..hermes import demo
    except ImportError:
        print("hermes-ctx: the demo needs hermes-agent: pip install 'hermes-ctx-plugins[hermes]'", file=sys.stderr)
        return EXIT_INPUT
    ignored = [flag for flag, value in (("--config", getattr(args, "config", None)),
                                        ("--deployment", getattr(args, "deployment", None)),
                                        ("--profile", getattr(args, "profile", None))) if value]
    if ignored:  # they were accepted and ignored (a newcomer walk): the demo writes its own config in its own home
        print(f"hermes-ctx: demo runs on a config and hermes home of its own; {', '.join(ignored)} does not apply "
              "(--keep DIR keeps that home)", file=sys.stderr)
        return EXIT_INPUT
    if args.keep is not None and args.keep.exists() and (not args.keep.is_dir() or any(args.keep.iterdir())):
        # the demo writes its own config.yaml and memories there: never over a real hermes home
        print(f"hermes-ctx: demo --keep needs a new or empty folder: {args.keep} is not one", file=sys.stderr)
        return EXIT_INPUT
    as_json = wants_json(args)
    progress: TextIO = sys.stderr if as_json else sys.stdout
    try:
        # hermes prints status lines of its own: with --json they join the progress on stderr
        with contextlib.redirect_stdout(progress):
            report = demo.run(args.keep, turns=args.turns, out=progress)
    except HermesCtxError as exc:
        return load_failed(exc)
    return finish(report, as_json=as_json)


def finish(report: DemoReport, *, as_json: bool) -> int:
    """Print the JSON report (``as_json``) and say what did not happen; the exit code."""
    if as_json:
        print_json(report.as_dict())
    if report.missing:
        hint = " (too few --turns to reach a compaction: the default reaches one)" \
            if "compaction" in report.missing else ""
        print(f"hermes-ctx demo: did not happen: {', '.join(report.missing)}{hint}", file=sys.stderr)
        return EXIT_PROBLEM
    return 0


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be 1 or more, got {value}")
    return value

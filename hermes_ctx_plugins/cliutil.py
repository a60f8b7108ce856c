"""What every ``hermes-ctx`` command shares, the archive's and ctx-local's included: the exit codes,
``-y/--yes`` and asking before deleting, the result on stdout and progress on stderr.

Exit codes: 0 fine; 1 a problem was found (``doctor``), a store could not be cleared (``forget``),
the user answered no, or whoever read stdout closed it before the whole result was written
(``hermes-ctx ... | head -1``: no traceback, see :func:`stdout_closed`); 2 the config (or a deployment
in it) is invalid; 3 a plugin failed to load or a store is unusable; 4 unreadable input, a usage error
(a missing argument, an unknown command, option or choice: :class:`CommandParser`), or a destructive
command without confirmation and without a terminal to ask on.

Output: with ``--json`` stdout holds exactly one JSON document and nothing else. A command that fails
before it has anything to report (an invalid config, a store it cannot open, bad input, a refused
confirmation) leaves stdout empty and says why on stderr, with its exit code; a command whose report is
the answer (doctor's problems, a migration that differs) prints it and exits with its code. Without
``--json``, tables are drawn by rich at a terminal and written as plain aligned columns, one row per
line, anywhere else (a pipe, a file), so they stay grep-able. Progress bars go to stderr, and only to a
terminal. rich is imported by the functions that draw: importing the package never loads it.

This module is not in ``cli/`` because the archive's and ctx-local's commands use it too, and they are
imported by ``cli`` (a module they imported from ``cli`` would make a cycle).
"""

from __future__ import annotations

import argparse
import io
import os
import re
import sys
from collections.abc import Callable, Sequence
from types import TracebackType
from typing import Any, NoReturn

from .errors import ConfigError, HermesCtxError, PluginError, ProviderLimitError, UnknownPluginError

EXIT_PROBLEM = 1
EXIT_CONFIG = 2
EXIT_PLUGIN = 3
EXIT_INPUT = 4


class CommandParser(argparse.ArgumentParser):
    """The parser of every ``hermes-ctx`` command: a usage error exits 4, bad input, where argparse's
    own 2 would read as "the config is invalid". The usage and the message go to stderr, as argparse's
    do. Subcommands' parsers are made of this class too: ``add_subparsers`` defaults ``parser_class`` to
    the parent's type, so the class given to the top parser reaches every level."""

    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        # a value that starts with "-" reads as an option (`--user -x`, a query "-pear"): said how to give it (a
        # hostile-values pass: "expected one argument" alone)
        dashed = [word for word in sys.argv[1:] if word.startswith("-") and len(word) > 1 and not word.startswith(
            "--") and not word[1:2].isdigit() and word not in self._option_string_actions]
        if dashed and ("expected one argument" in message or "arguments are required" in message
                       or "unrecognized arguments" in message):
            message += (f" ({dashed[0]!r} reads as an option: give a value that starts with '-' joined to its option, "
                        f"as --user={dashed[0]}, or a query after --: -- {dashed[0]})")
        self.exit(EXIT_INPUT, f"{self.prog}: error: {message}\n")


def stdout_closed() -> int:
    """Whoever read stdout closed it early (``| head -1``): the exit code, 1 (the result was not all
    delivered, so 0 would claim too much; Python's own docs do the same), and nothing said, since the
    user stopped reading on purpose. stdout is pointed at /dev/null first: Python flushes it again on
    the way out, and that flush would fail and print a second error. (SIGPIPE's default action, which
    kills a process quietly, is no option: it would also kill us on a socket to a memory service that
    closes mid-write, and ``hermes ctx`` runs in hermes' own process.)"""
    try:
        descriptor = sys.stdout.fileno()
    except (AttributeError, OSError, ValueError):  # no descriptor (a test's capture): nothing to point elsewhere
        return EXIT_PROBLEM
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, descriptor)
    finally:
        os.close(devnull)
    return EXIT_PROBLEM


def load_failed(exc: HermesCtxError) -> int:
    """Say why the config or a plugin could not be loaded; the exit code."""
    # shown(): a key, a deployment's or a plugin's name, or an exception's text may hold a terminal's controls
    if isinstance(exc, (ConfigError, ProviderLimitError, UnknownPluginError)):
        print(shown(f"hermes-ctx: invalid config: {exc}"), file=sys.stderr)
        return EXIT_CONFIG
    print(shown(f"hermes-ctx: {exc}"), file=sys.stderr)
    return EXIT_PLUGIN if isinstance(exc, PluginError) else EXIT_PROBLEM


def add_id(parser: argparse.ArgumentParser, name: str, help: str, *, required: bool = False,
           default: str | None = None) -> None:
    """``--<name> ID`` (the id exactly as typed) and ``--<name>-json JSON`` (the id as a JSON string) on one
    destination: an id holding a NUL or a lone surrogate cannot be passed as it is, and a listing shows
    such an id as ``json:"..."`` (:func:`hermes_ctx_plugins.scope.typed`), which the second option takes."""
    group = parser.add_mutually_exclusive_group(required=required)
    group.add_argument(f"--{name}", dest=name, default=default, help=help)
    group.add_argument(f"--{name}-json", dest=name, type=_json_id, metavar="JSON",
                       help=f"the {name} id as a JSON string, for one a command line cannot carry (listings "
                            'show it as json:"..."; either form is taken)')


def _json_id(text: str) -> str:
    from .scope import from_typed_json

    try:
        return from_typed_json(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def whole_number(text: str) -> int:
    """An argparse ``type`` for a count or an id: ASCII digits, a minus sign allowed (the command's range check names
    it). Python's ``int()`` also takes fullwidth and other scripts' digits, ``"1_0"``, ``"+6"`` and ``" 7 "``:
    ``memory forget`` given a fullwidth 3 deleted #3, an id no listing shows that way (a red-team pass)."""
    if not _WHOLE.fullmatch(text):
        raise argparse.ArgumentTypeError(f"expected a whole number in ASCII digits (e.g. 42), got {text!r:.80}")
    return int(text)


def decimal_number(text: str) -> float:
    """An argparse ``type`` for a duration such as ``--older-than DAYS``: ASCII digits with an optional fraction (no
    exponent, no inf or nan, no look-alike digits, as :func:`whole_number`)."""
    if not _DECIMAL.fullmatch(text):
        raise argparse.ArgumentTypeError(f"expected a number in ASCII digits (e.g. 30 or 0.5), got {text!r:.80}")
    return float(text)


_WHOLE = re.compile(r"-?[0-9]{1,30}")
_DECIMAL = re.compile(r"-?(?:[0-9]{1,30}(?:\.[0-9]{0,30})?|\.[0-9]{1,30})")


def add_yes(parser: argparse.ArgumentParser, *, asks: bool = True) -> None:
    """``-y/--yes`` on a command that deletes or overwrites. One that removes many things (a user, a
    scope, a whole file) ``asks`` first; one that removes only the item it is given never does, and
    takes ``--yes`` all the same, so a script can pass it to every destructive command alike."""
    why = ("do not ask before deleting (without a terminal to ask on, the command refuses unless given)" if asks
           else "accepted for scripts: this command deletes only what it names, so it does not ask")
    parser.add_argument("-y", "--yes", action="store_true", help=why)


def confirm(question: str, *, yes: bool) -> int | None:
    """``None`` when the command may go ahead (``--yes``, or the user said yes at a terminal);
    otherwise the exit code, after saying why: 4 without a terminal to ask on (a script, CI,
    ``< /dev/null``), 1 when the user said no. The question and the answer's echo go to stderr:
    stdout is the command's result (the JSON document with ``--json``)."""
    if yes:
        return None
    if not sys.stdin.isatty():
        print("hermes-ctx: this deletes data: confirm with --yes (there is no terminal to ask on)", file=sys.stderr)
        return EXIT_INPUT
    print(question, end="", file=sys.stderr, flush=True)
    try:
        answer = input().strip().lower()
    except EOFError:
        answer = ""
    if answer in ("y", "yes"):
        return None
    print("nothing changed", file=sys.stderr)
    return EXIT_PROBLEM


def shown(text: str) -> str:
    """``text`` as a terminal can print it, and shows what it holds: a lone surrogate (kept exactly in the stores) as
    ``\\udXXX``; a control character other than a newline or a tab (ESC, BEL, CR, backspace, DEL, C1) and a bidi
    control as its escape (``\\x1b``, ``\\u202e``), not obeyed: a stored turn quoting a web page or a terminal's output
    may hold sequences that set the title, write the clipboard, clear the screen or hide text behind backspaces
    (a red-team pass, session 26)."""
    text = _TERMINAL_CONTROL.sub(lambda m: m[0].encode("unicode_escape").decode("ascii"), text)
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


#: what a terminal obeys or reorders rather than prints: C0 controls but the newline and the tab, DEL, C1 controls,
#: bidi marks, embeddings, overrides and isolates
_TERMINAL_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def wants_json(args: argparse.Namespace) -> bool:
    return bool(getattr(args, "json", False))


def emit(args: argparse.Namespace, document: Any, text: str | Callable[[], str]) -> None:
    """The command's result on stdout: ``document`` as JSON with ``--json``, else ``text`` (a function
    when it costs something to write)."""
    if wants_json(args):
        print_json(document)
    else:
        print(shown(text() if callable(text) else text))


def print_json(document: Any, *, indent: int | None = 2) -> None:
    """``document`` on stdout as :func:`json_shown` (``indent=None``: on one line)."""
    print(json_shown(document, indent=indent, default=str))


def json_shown(document: Any, **options: Any) -> str:
    """``document`` as JSON that encodes to UTF-8 whatever ids and texts it holds, with what a terminal obeys or
    reorders (DEL, C1 controls, bidi controls: JSON itself escapes the C0 ones) as ``\\u`` escapes: the same JSON
    value, safe to print."""
    from .storage import json_text

    return _JSON_CONTROL.sub(lambda m: f"\\u{ord(m[0]):04x}", json_text(document, **options))


_JSON_CONTROL = re.compile("[\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> None:
    """Print a table on stdout: drawn by rich at a terminal; elsewhere plain columns two spaces apart,
    one row per line, never wrapped or cut, with no trailing blanks (``grep`` and ``cut`` read it)."""
    from rich import box
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    terminal = sys.stdout.isatty()
    drawn = Table(box=box.SIMPLE_HEAD if terminal else None, show_edge=False, pad_edge=False,
                  header_style="bold" if terminal else "", padding=(0, 1) if terminal else (0, 2, 0, 0))
    for header in headers:
        drawn.add_column(header, no_wrap=not terminal, overflow="fold" if terminal else "ignore")
    for row in rows:
        drawn.add_row(*(Text(shown(str(cell))) for cell in row))  # Text: ids and paths are never markup
    if terminal:
        Console(highlight=False).print(drawn)
        return
    plain = io.StringIO()
    Console(file=plain, width=1_000_000, color_system=None, highlight=False, emoji=False, soft_wrap=False,
            force_terminal=False).print(drawn)
    print("\n".join(line.rstrip() for line in plain.getvalue().splitlines()))


class Step:
    """One stage of a :class:`Progress`: ``advance`` by the items done, ``describe`` what is happening."""

    def __init__(self, bar: Any = None, task: Any = None) -> None:
        self._bar, self._task = bar, task

    def advance(self, done: int = 1) -> None:
        if self._bar is not None:
            self._bar.advance(self._task, done)

    def describe(self, text: str) -> None:
        if self._bar is not None:
            self._bar.update(self._task, description=shown(text))


class Progress:
    """Progress bars on stderr while a long command runs (a big replay, an export, a migration), drawn
    by rich only when stderr is a terminal (and ``enabled``): a log, a pipe or CI gets nothing but the
    command's own lines. Use it as a context manager; :meth:`step` adds a bar (``total=None``: a count
    with no end known)."""

    def __init__(self, *, enabled: bool = True) -> None:
        self._bar: Any = None
        self._enabled = enabled

    def __enter__(self) -> Progress:
        if self._enabled and sys.stderr.isatty():
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, SpinnerColumn, TextColumn, TimeElapsedColumn
            from rich.progress import Progress as Bars

            # stdout is not redirected: it is the command's result (data, the JSON document), not the bar's
            # a description is text, never rich markup: a service's error text holding "[/x]" ended the command
            # with a MarkupError, and "[link=...]" drew a hyperlink (a red-team pass)
            self._bar = Bars(SpinnerColumn(), TextColumn("{task.description}", markup=False), BarColumn(),
                             MofNCompleteColumn(),
                             TimeElapsedColumn(), console=Console(stderr=True), transient=True,
                             redirect_stdout=False)
            self._bar.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        if self._bar is not None:
            self._bar.stop()
            self._bar = None

    def step(self, description: str, total: int | None = None) -> Step:
        if self._bar is None:
            return Step()
        return Step(self._bar, self._bar.add_task(shown(description), total=total))

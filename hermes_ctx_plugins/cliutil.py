"""What every ``hermes-ctx`` command shares: the exit codes and asking before deleting.

Exit codes: 0 fine; 1 a problem was found (``doctor``), a store could not be cleared (``forget``) or
the user answered no; 2 the config (or a deployment in it) is invalid; 3 a plugin failed to load or
a store is unusable; 4 unreadable input, or a destructive command without confirmation and without
a terminal to ask on.
"""

from __future__ import annotations

import sys

EXIT_PROBLEM = 1
EXIT_CONFIG = 2
EXIT_PLUGIN = 3
EXIT_INPUT = 4


def confirm(question: str, *, yes: bool) -> int | None:
    """``None`` when the command may go ahead (``--yes``, or the user said yes at a terminal);
    otherwise the exit code, after saying why: 4 without a terminal to ask on (a script, CI,
    ``< /dev/null``), 1 when the user said no."""
    if yes:
        return None
    if not sys.stdin.isatty():
        print("hermes-ctx: this deletes data: confirm with --yes (there is no terminal to ask on)", file=sys.stderr)
        return EXIT_INPUT
    try:
        answer = input(question).strip().lower()
    except EOFError:
        answer = ""
    if answer in ("y", "yes"):
        return None
    print("nothing changed")
    return EXIT_PROBLEM

"""What a ``hermes-ctx memory`` command that reads one namespace says of the others holding what it was asked for.

Each command reads the namespace of the config's deployment (``--deployment``; none: the top level's). On a Bridge's
home every memory is in a deployment's namespace: `memory stats`, `export --user alice` and `search --all-scopes` said
"0" and "no matching memories" there, exit 0 -- an access request's export silently empty (a newcomer walk). They still
read one namespace, and say on stderr which others hold memories (a deployment renamed since included), how many, and
the ``--deployment`` that reads each. The store answers that in one grouped query
(:meth:`~hermes_ctx_plugins.storage.base.MemoryBackend.namespaces`; a review: reading a user's every memory for it made
a search of a 300,000-turn store take 20 s instead of 0.4 s).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping

from ...cliutil import shown
from ...config import Config
from ...storage import MemoryBackend


def elsewhere(store: MemoryBackend, args: argparse.Namespace, *, user_id: str | None = None,
              chat_id: str | None = None, session_id: str | None = None) -> dict[str, int]:
    """The namespaces but the one asked (``args.namespace``) holding memories of that user, chat and session
    (``None``: any), and how many."""
    found = store.namespaces(user_id=user_id, chat_id=chat_id, session_id=session_id)
    found.pop(args.namespace, None)
    return found


def elsewhere_note(others: Mapping[str, int], args: argparse.Namespace, done: str) -> str:
    """What a command that read one namespace says of ``others``."""
    config: Config = args.config_read
    deployments = {config.deployment_namespace(name): name for name in config.plugins.deployments}
    where = f"namespace {args.namespace!r}" if args.namespace else "the top-level namespace"

    def said(namespace: str) -> str:
        if not namespace:
            return f"{others[namespace]:,} in the top-level namespace (without --deployment)"
        reads = (f"--deployment {deployments[namespace]}" if namespace in deployments
                 else "no deployment of this config reads it")
        return f"{others[namespace]:,} in namespace {namespace!r} ({reads})"

    return (f"{done} {where} only; memories are also held: {'; '.join(map(said, sorted(others)))} (each command "
            "reads one namespace; hermes-ctx forget --user reaches every one)")


def say_elsewhere(others: Mapping[str, int], args: argparse.Namespace, done: str) -> None:
    """:func:`elsewhere_note` on stderr, when ``others`` holds any."""
    if others:
        print(shown(f"hermes-ctx: {elsewhere_note(others, args, done)}"), file=sys.stderr)

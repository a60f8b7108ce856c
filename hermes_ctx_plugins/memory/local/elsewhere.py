"""What a ``hermes-ctx memory`` command that reads one namespace says of the others holding what it was asked for.

Each command reads the namespace of the config's deployment (``--deployment``; none: the top level's). On a Bridge's
home every memory is in a deployment's namespace: `memory stats`, `export --user alice` and `search --all-scopes` said
"0" and "no matching memories" there, exit 0 -- an access request's export silently empty (a newcomer walk). They still
read one namespace, and say on stderr which other namespaces of the config's deployments hold memories, and the
``--deployment`` that reads each. Each namespace is asked once, for one memory (or, for ``stats``, its counts): the
store is not read through (a review: reading a user's every memory for it made a search of a 300,000-turn store take
20 s instead of 0.4 s).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping, Sequence

from ...cliutil import shown
from ...config import Config
from ...storage import MemoryBackend


def _others(args: argparse.Namespace) -> list[str]:
    config: Config = args.config_read
    return [namespace for namespace in config.memory_namespaces() if namespace != args.namespace]


def namespaces_of(store: MemoryBackend, args: argparse.Namespace, *, user_id: str | None = None,
                  chat_id: str | None = None, session_id: str | None = None) -> list[str]:
    """The namespaces of the config's deployments but the one asked (``args.namespace``) that hold a memory of that
    user, chat and session (``None``: any)."""
    found = []
    for namespace in _others(args):
        memories = store.memories(namespace=namespace, user_id=user_id, chat_id=chat_id, session_id=session_id)
        try:
            if next(iter(memories), None) is not None:
                found.append(namespace)
        finally:
            close = getattr(memories, "close", None)
            if callable(close):  # a generator stopped after one: its cursor let go now
                close()
    return found


def namespace_counts(store: MemoryBackend, args: argparse.Namespace) -> dict[str, int]:
    """The memories (turns and facts) of each namespace of the config's deployments but the one asked, those holding
    any."""
    counts = {namespace: int(stats["turns"]) + int(stats["facts"])
              for namespace in _others(args) for stats in [store.stats(namespace)]}
    return {namespace: count for namespace, count in counts.items() if count}


def elsewhere_note(others: Mapping[str, int] | Sequence[str], args: argparse.Namespace, done: str) -> str:
    """What a command that read one namespace says of ``others`` (with their counts, when it has them)."""
    config: Config = args.config_read
    deployments = {config.deployment_namespace(name): name for name in config.plugins.deployments}
    where = f"namespace {args.namespace!r}" if args.namespace else "the top-level namespace"

    def said(namespace: str) -> str:
        count = f"{others[namespace]:,} " if isinstance(others, Mapping) else ""
        if not namespace:
            return f"{count}in the top-level namespace (without --deployment)"
        return f"{count}in namespace {namespace!r}" + (f" (--deployment {deployments[namespace]})"
                                                       if namespace in deployments else "")

    return (f"{done} {where} only; memories are also held {'; '.join(map(said, others))} (each command reads one "
            "namespace: --deployment NAME picks it; hermes-ctx forget --user reaches every one)")


def say_elsewhere(others: Mapping[str, int] | Sequence[str], args: argparse.Namespace, done: str) -> None:
    """:func:`elsewhere_note` on stderr, when ``others`` holds any."""
    if others:
        print(shown(f"hermes-ctx: {elsewhere_note(others, args, done)}"), file=sys.stderr)

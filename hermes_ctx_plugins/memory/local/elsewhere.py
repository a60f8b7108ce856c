"""What a ``hermes-ctx memory`` command that reads one namespace says of the others holding what it was asked for.

Each command reads the namespace of the config's deployment (``--deployment``; none: the top level's). On a Bridge's
home every memory is in a deployment's namespace: `memory stats`, `export --user alice` and `search --all-scopes` said
"0" and "no matching memories" there, exit 0 -- an access request's export silently empty (a newcomer walk). They still
read one namespace, and say on stderr which others hold memories and the ``--deployment`` that reads each.
"""

from __future__ import annotations

import argparse
import sys

from ...cliutil import shown
from ...config import Config
from ...storage import MemoryBackend


def namespaces_of(store: MemoryBackend, args: argparse.Namespace, *, user_id: str | None = None,
                   chat_id: str | None = None, session_id: str | None = None) -> dict[str, int]:
    """The namespaces but the one asked (``args.namespace``) holding memories of that user, chat or session
    (``None``: any), and how many: read from those memories alone."""
    found: dict[str, int] = {}
    for memory in store.memories(user_id=user_id, chat_id=chat_id, session_id=session_id):
        if memory.namespace != args.namespace:
            found[memory.namespace] = found.get(memory.namespace, 0) + 1
    return found


def namespaces_holding(store: MemoryBackend, args: argparse.Namespace) -> tuple[dict[str, int], int]:
    """The namespaces but the one asked holding any memory, and how many; then how many more every namespace together
    holds (namespaces this config does not name): each namespace the config's deployments use is asked for its count,
    the store is not read through for it."""
    def held(namespace: str | None) -> int:
        stats = store.stats(namespace)
        return int(stats["turns"]) + int(stats["facts"])

    config: Config = args.config_read
    found = {namespace: count for namespace in config.memory_namespaces() if namespace != args.namespace
             and (count := held(namespace))}
    return found, max(0, held(None) - held(args.namespace) - sum(found.values()))


def elsewhere_note(others: dict[str, int], unnamed: int, args: argparse.Namespace, done: str) -> str:
    """What a command that read one namespace says of the others holding what was asked (a newcomer walk: on a
    Bridge's home `memory stats`, `export --user` and `search --all-scopes` said "0" and "no matching memories" of a
    store holding a deployment's memories, exit 0)."""
    config: Config = args.config_read
    deployments = {config.deployment_namespace(name): name for name in config.plugins.deployments}
    where = f"namespace {args.namespace!r}" if args.namespace else "the top-level namespace"
    parts = [f"{count:,} in the top-level namespace (without --deployment)" if not namespace
             else f"{count:,} in namespace {namespace!r}" + (f" (--deployment {deployments[namespace]})"
                                                            if namespace in deployments else "")
             for namespace, count in others.items()]
    parts += [f"{unnamed:,} in namespaces this config names no deployment for"] if unnamed else []
    return (f"{done} {where} only; memories are also held {'; '.join(parts)} (each command reads one namespace: "
            "--deployment NAME picks it; hermes-ctx forget --user reaches every one)")


def say_elsewhere(store: MemoryBackend, args: argparse.Namespace, done: str) -> None:
    """After an export: the other namespaces holding what its filters select, on stderr."""
    others, unnamed = ((namespaces_of(store, args, user_id=args.user, chat_id=args.chat, session_id=args.session), 0)
                       if args.user is not None or args.chat is not None or args.session is not None
                       else namespaces_holding(store, args))
    if others or unnamed:
        print(shown(f"hermes-ctx: {elsewhere_note(others, unnamed, args, done)}"), file=sys.stderr)

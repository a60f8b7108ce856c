"""``hermes-ctx forget --user U [--deployment D]``: remove a user from every store we own (memories,
queued and spooled writes, the archive, the memory services' copies); one report line per store."""

from __future__ import annotations

import argparse
import dataclasses
from dataclasses import asdict
from typing import Any

from ..cliutil import EXIT_PROBLEM, add_id, add_yes, confirm, print_json, table, wants_json
from ..config import load_config
from ..errors import HermesCtxError
from ..events import Forgotten
from ..manager import load_host
from ..scope import typed
from .common import load_failed


def add_parser(commands: Any) -> None:
    forget = commands.add_parser(
        "forget", help="remove a user from every store we own (memories, queues, spools, archive, the services)")
    add_id(forget, "user", "the user id, exactly as hermes passes it ('' = anonymous); with --deployment only that "
                           "deployment's memories", required=True)
    add_yes(forget)


def run(args: argparse.Namespace) -> int:
    """``forget --user U [--deployment D]``: one report line per store; 1 when a store failed."""
    deployment = args.deployment
    try:
        base = load_config(args.config, deployment=deployment)
        names = [deployment] if deployment else [None, *sorted(base.plugins.deployments)]
        hosts = [load_host(load_config(args.config, deployment=name)) for name in names]
    except HermesCtxError as exc:
        return load_failed(exc)
    where = f"deployment {typed(deployment)}" if deployment else "every deployment"
    try:
        refused = confirm(f"forget user {typed(args.user)} in {where}: delete their memories, queued writes and "
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
    if wants_json(args):
        print_json({"user": args.user, "deployment": deployment, "ok": all(f.ok for f in report),
                    "stores": [asdict(f) for f in report]})
    else:
        # a failure's reason in DETAIL: in RESULT, a long error pushed every row's detail off to the right (a newcomer
        # walk)
        table(("STORE", "RESULT", "DETAIL"), [(item.store, _result(item), _detail(item)) for item in report])
    return 0 if all(f.ok for f in report) else EXIT_PROBLEM


def _result(item: Forgotten) -> str:
    count = "?" if item.removed is None else f"{item.removed:,}"
    return "FAILED" if item.error else f"removed {count}"


def _detail(item: Forgotten) -> str:
    return "; ".join(part for part in (item.error, item.detail) if part) if item.error else item.detail

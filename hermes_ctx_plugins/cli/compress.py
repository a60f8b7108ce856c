"""``hermes-ctx compress``: replay a saved conversation (a JSON list of messages, or hermes' state.db)
through the configured strategy, or another, and report what it did; nothing is written."""

from __future__ import annotations

import argparse
import json
import sqlite3
import sys
from collections import Counter
from pathlib import Path
from typing import Any

from ..archive.archiver import Archiver
from ..cliutil import EXIT_CONFIG, EXIT_INPUT, Progress, Step, print_json, shown, wants_json
from ..errors import HermesCtxError, UnknownPluginError, did_you_mean
from ..isolation import StatusEvent
from ..storage import open_archive
from ..tokens import get_counter
from .common import load, load_failed

#: messages counted between two moves of the progress bar
_BATCH = 500


def add_parser(commands: Any) -> None:
    compress = commands.add_parser(
        "compress", help="replay a saved conversation through the configured strategy (writes nothing)")
    compress.add_argument("file", type=Path,
                          help="a JSON list of chat messages, or hermes' state.db")
    compress.add_argument("--session", help="with a state.db: the session id (default: the latest)")
    compress.add_argument("--strategy", help="use this strategy instead of the configured one")
    compress.add_argument("--show", action="store_true", help="print the resulting messages")


def run(args: argparse.Namespace) -> int:
    try:
        _, host = load(args, strategy=args.strategy)
    except UnknownPluginError as exc:
        if args.strategy and exc.kind == "compressor" and exc.name == args.strategy:  # the command line's
            print(f"hermes-ctx: --strategy: unknown compressor strategy {args.strategy!r}"
                  f"{did_you_mean(args.strategy, exc.available)}; available: {', '.join(exc.available)}",
                  file=sys.stderr)
            return EXIT_INPUT
        return load_failed(exc)
    except HermesCtxError as exc:
        return load_failed(exc)
    try:
        label, messages = _load_messages(args.file, args.session)
    except ValueError as exc:
        print(f"hermes-ctx: {exc}", file=sys.stderr)
        return EXIT_INPUT
    if host.compressor is None:
        host.shutdown()
        if args.strategy:  # the command line named one that is there but switched off
            print(f"hermes-ctx: --strategy: compressor strategy {args.strategy!r} is disabled "
                  "(ctx_plugins.disabled names it or its plugin)", file=sys.stderr)
            return EXIT_INPUT
        print("hermes-ctx: no compressor strategy is active (see `hermes-ctx plugins`)", file=sys.stderr)
        return EXIT_CONFIG
    if host.archive is not None:  # a replay shows the anchor index but keeps nothing
        host.archive = Archiver(open_archive(host.config, backend_name="memory"), host.archive.settings)
    events: list[str] = []
    with Progress() as progress:
        _count(host.compressor.model, messages, progress.step("counting tokens", total=len(messages)))
        replay = progress.step(f"compressing with {host.compressor.name}")

        def on_event(event: StatusEvent) -> None:
            events.append(event.message)
            replay.describe(event.message)

        host.isolator.on_event = on_event
        host.compressor.status_callback = on_event
        result = host.compress(messages, force=True)
    host.shutdown()
    kept = _kept_verbatim(messages, result.messages)
    # the archive of a replay keeps nothing (above): what it would have kept
    notes = [f"would archive {note.removeprefix('archived ')} (a replay keeps nothing)" if note.startswith("archived ")
             else note for note in result.notes]
    report = {
        "source": label, "strategy": host.compressor.name, "compressed": result.compressed,
        "messages_before": len(messages), "messages_after": len(result.messages),
        "tokens_before": result.tokens_before, "tokens_after": result.tokens_after,
        "kept_verbatim": kept, "removed_or_rewritten": len(result.removed),
        "summary": result.summary, "used_fallback": result.used_fallback, "notes": notes,
        "status": events,
    }
    if wants_json(args):
        if args.show:
            report["messages"] = result.messages
        print_json(report)
        return 0
    saved = result.saved_ratio * 100
    print(f"{shown(label)}: {host.compressor.name} — "
          + ("compressed" if result.compressed else "unchanged"))
    print(f"  messages  {len(messages):>8,} → {len(result.messages):,} "
          f"({kept:,} kept verbatim, {len(result.removed):,} removed or rewritten)")
    print(f"  tokens    {result.tokens_before:>8,} → {result.tokens_after:,} ({saved:.0f}% saved)")
    for line in [*notes, *events]:  # a service's error text among them: its terminal controls as escapes
        print(f"  - {shown(line)}")
    if result.summary:
        print(shown("\nsummary:\n" + "\n".join(f"  {line}" for line in result.summary.splitlines())))
    if args.show:
        print()
        print_json(result.messages)
    return 0


def _count(model: str | None, messages: list[dict[str, Any]], step: Step) -> None:
    """Count every message exactly, so the report's figures are exact (a replay is not latency-bound;
    the strategy then finds the counts remembered), a batch at a time for the progress bar."""
    counter = get_counter(model)
    for start in range(0, len(messages), _BATCH):
        batch = messages[start:start + _BATCH]
        counter.count_messages(batch)
        step.advance(len(batch))


def _load_messages(path: Path, session: str | None) -> tuple[str, list[dict[str, Any]]]:
    """A transcript from a JSON file or a hermes state.db; raises ValueError with a clear reason."""
    try:
        head = path.read_bytes()[:16]
    except OSError as exc:
        raise ValueError(f"cannot read {path}: {exc.strerror or exc}") from None
    if head.startswith(b"SQLite format 3"):
        try:
            from ..hermes.sessions import load_session
        except ImportError:
            raise ValueError("reading a hermes state.db needs hermes-agent (pip install "
                             "'hermes-ctx-plugins[hermes]')") from None
        try:
            return load_session(path, session)
        except LookupError as exc:
            raise ValueError(str(exc)) from None
        except sqlite3.Error as exc:  # a SQLite file that is not hermes' state.db, or a damaged one
            raise ValueError(f"{path} is not a readable hermes state.db: {exc}") from None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"{path} is neither JSON nor a hermes state.db: {exc}") from None
    except RecursionError:
        raise ValueError(f"{path} holds JSON nested too deep to read (not a list of chat messages)") from None
    if isinstance(data, dict) and isinstance(data.get("messages"), list):
        data = data["messages"]
    if not isinstance(data, list) or not all(isinstance(m, dict) and "role" in m for m in data):
        raise ValueError(f"{path} must hold a JSON list of chat messages (objects with a 'role')")
    return str(path), data


def _kept_verbatim(messages: list[dict[str, Any]], after: list[dict[str, Any]]) -> int:
    """How many of ``after`` are messages of ``messages`` as they were: the same object (ours keep them), or equal
    (another plugin's strategy works on a copy: counted by identity, it kept none; a newcomer walk)."""
    same = {id(m) for m in messages}
    kept = sum(1 for message in after if id(message) in same)  # ours keep the objects: no message read (a review:
    copies = [message for message in after if id(message) not in same]  # 1.5 s at 20k messages, reading them all)
    if not copies:
        return kept
    kept_ids = {id(message) for message in after}
    left = Counter(_key(m) for m in messages if id(m) not in kept_ids)
    for message in copies:
        key = _key(message)
        if left[key] > 0:
            left[key] -= 1
            kept += 1
    return kept


def _key(message: Any) -> str:
    try:
        return json.dumps(message, sort_keys=True, ensure_ascii=False, default=repr)
    except (TypeError, ValueError, RecursionError):
        return f"unreadable:{id(message)}"

"""``hermes-ctx demo``: a real hermes agent, a stub model on 127.0.0.1, our plugin doing its job.

No API key, no network. A temporary ``HERMES_HOME`` enables our plugin; the agent reads a long
build log with hermes' own ``read_file`` tool turn after turn until our ``summarize`` strategy
compacts the conversation; what the user said is stored by a memory provider and recalled in a
second session. Everything printed is measured, not scripted.
"""

from __future__ import annotations

import json
import os
import random
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from ..testing import FakeMemoryProvider, StubOpenAIServer
from ..tokens import get_counter

MODEL = "demo-model"
FACT = "the release branch is release/2026.12 and the deploy port is 8443"
SUMMARY = (
    "## Goal\nFind out why the nightly build fails.\n"
    "## Completed Actions\nRead build.log several times; the failures are in the cache tests.\n"
    "## Critical Context\n" + FACT + "\n## Remaining Work\nFix the flaky cache test."
)


class DemoNotes(FakeMemoryProvider):
    """In-memory notes for the demo (the SQLite and file providers will take its place)."""

    name = "demo-notes"
    description = "demo only: keeps turns in memory, per user"


class _DemoPlugin:
    from ..hookspecs import hookimpl

    @hookimpl
    def register_memory_providers(self, register: Callable[[type], None]) -> None:
        register(DemoNotes)


@dataclass
class DemoReport:
    home: Path
    turns: list[dict[str, Any]] = field(default_factory=list)
    compressions: int = 0
    messages_before: int = 0
    messages_after: int = 0
    tokens_before: int = 0
    tokens_after: int = 0
    recalled: bool = False
    summary_requests: int = 0


def _write_workspace(root: Path) -> Path:
    rng = random.Random(7)
    lines = []
    for i in range(1800):
        status = "FAILED" if rng.random() < 0.02 else "ok"
        lines.append(f"[{i:05d}] tests/test_cache.py::test_case_{i} {status} in {rng.random():.3f}s")
    log = root / "workspace" / "build.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    log.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return log


def run(keep: Path | None = None, *, turns: int = 6, out: TextIO | None = None) -> DemoReport:
    """Run the demo; returns what happened (also printed to ``out`` as it happens)."""
    home = keep or Path(tempfile.mkdtemp(prefix="hermes-ctx-demo-"))
    home.mkdir(parents=True, exist_ok=True)

    def say(text: str) -> None:
        if out is not None:
            print(text, file=out, flush=True)

    log = _write_workspace(home)
    report = DemoReport(home=home)
    with StubOpenAIServer(model=MODEL) as server:
        # Streaming requests are the agent's turns; the plain one is our summary request.
        server.responder = lambda request: "Noted." if request.get("stream") else SUMMARY
        (home / "config.yaml").write_text(
            f"model: {{default: {MODEL}, provider: custom, base_url: {server.base_url}, context_length: 64000}}\n"
            "plugins: {enabled: [hermes-ctx]}\ncontext: {engine: hermes-ctx}\n"
            "agent: {environment_probe: false}\n"
            "ctx_plugins: {compressor: summarize, memory: {providers: []}}\n"
            "compression: {progress_notices: true}\n", encoding="utf-8")
        os.environ["HERMES_HOME"] = str(home)
        say(f"hermes home: {home}\nstub model:  {server.base_url}")

        import run_agent  # after HERMES_HOME is set: hermes reads it at import
        from hermes_cli import plugins as hermes_plugins

        from .runtime import installed

        hermes_plugins.discover_plugins(force=True)
        runtime = installed()
        if runtime is None:
            raise RuntimeError("hermes did not load hermes-ctx-plugins (is the package installed?)")
        host = runtime.host
        host.add_plugin(_DemoPlugin(), "demo")
        host.activate_provider("demo-notes")
        host.status_callback = lambda event: say(f"  [{event.kind}] {event.message}")

        def agent(session: str) -> Any:
            return run_agent.AIAgent(base_url=server.base_url, api_key="demo", provider="custom", model=MODEL,
                                     quiet_mode=True, skip_context_files=True, enabled_toolsets=["file"],
                                     session_id=session, user_id="demo-user")

        first = agent("demo-session-1")
        engine = first.context_compressor
        engine.strategy.status_callback = host.status_callback
        say(f"engine: {engine.name} running '{engine.strategy.name}', window {engine.context_length:,}, "
            f"compresses at {engine.threshold_tokens:,} tokens\n")
        say(f"{'turn':>4}  {'messages':>8}  {'tokens':>8}  compactions")
        history: list[dict[str, Any]] = []
        counter = get_counter(MODEL)
        for number in range(1, turns + 1):
            # ~40 KB per read: below hermes' threshold for spilling a tool result to disk.
            server.tool_call("read_file", {"path": str(log), "offset": 1 + (number - 1) * 200, "limit": 700})
            server.reply(f"Turn {number}: the log shows failures in tests/test_cache.py.")
            ask = f"Please read {log} again and summarise the failures (pass {number})."
            if number == 1:
                ask += f" Also, remember: {FACT}."
            before = engine.compression_count
            result = first.run_conversation(ask, conversation_history=history)
            history = result["messages"]
            row = {"turn": number, "messages": len(history), "tokens": counter.count_messages(history),
                   "compacted": engine.compression_count > before}
            report.turns.append(row)
            say(f"{number:>4}  {row['messages']:>8,}  {row['tokens']:>8,}  "
                f"{engine.compression_count}{'  <- compressed' if row['compacted'] else ''}")
        report.compressions = engine.compression_count
        first.shutdown_memory_provider(history)
        deadline = time.monotonic() + 10
        notes = next(p for p in host.memory_providers if isinstance(p, DemoNotes))
        while not notes.turns and time.monotonic() < deadline:  # hermes syncs on a worker thread
            time.sleep(0.05)

        say("\nsecond session: asking what was agreed")
        server.reply("You said the release branch is release/2026.12 and the deploy port is 8443.")
        second = agent("demo-session-2")
        second.run_conversation("Which release branch and deploy port did we agree on?", conversation_history=[])
        sent = server.chat_requests[-1].body or {}
        last_user = (sent.get("messages") or [{}])[-1].get("content", "")
        report.recalled = "release/2026.12" in str(last_user)
        report.summary_requests = sum(
            1 for r in server.chat_requests
            if r.body and "<conversation>" in str((r.body.get("messages") or [{}])[-1].get("content")))
        host.status_callback = None

    # the first compaction: the largest the conversation got before it, and its size right after
    first = next((i for i, t in enumerate(report.turns) if t["compacted"]), len(report.turns) - 1)
    before = report.turns[:first] or report.turns[:1]
    report.tokens_before = max(t["tokens"] for t in before)
    report.messages_before = max(t["messages"] for t in before)
    report.tokens_after = report.turns[first]["tokens"]
    report.messages_after = report.turns[first]["messages"]
    say("\n" + "\n".join([
        f"{'':24}{'before':>10}{'after':>10}   (the first compaction)",
        f"{'messages':24}{report.messages_before:>10,}{report.messages_after:>10,}",
        f"{'tokens (exact)':24}{report.tokens_before:>10,}{report.tokens_after:>10,}",
        f"compactions: {report.compressions} (our summary requests to the model: {report.summary_requests})",
        f"recalled in session 2: {'yes' if report.recalled else 'no'} ({FACT!r})",
    ]))
    return report


def as_json(report: DemoReport) -> str:
    data = {k: (str(v) if isinstance(v, Path) else v) for k, v in report.__dict__.items()}
    return json.dumps(data, indent=2)

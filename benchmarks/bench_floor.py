"""Compaction when the system prompt and tool schemas are a large share of the trigger, inside real hermes.

hermes counts the system prompt, the tool schemas and memory in the prompt it compares with the trigger, and
hands a compaction only the messages. On a 64k model (the smallest hermes accepts) with many tools or a long
system prompt, that floor can be most of the trigger. This runs one real ``AIAgent`` per (engine, floor) in a
process of its own against the loopback model, which counts a request's tokens as OpenAI does (o200k over the
messages and the tool schemas, not chars / 4) and refuses one over its 64k window exactly as OpenAI does (HTTP
400, ``context_length_exceeded``), for 16 (``--quick``) or 24 user turns of ~2.5k tokens each, and prints per
engine: automatic compactions, summary-model calls, the largest prompt the model was sent, requests refused
over the window and turns that failed. The floor is a long ephemeral system prompt (English prose, or Chinese:
chars / 4, hermes' estimate, rates the one a fifth high and the other at a quarter); ``+tools`` rows add
hermes' 19 default tools (~10k tokens of schemas).

    PYTHONPATH=. .venv/bin/python benchmarks/bench_floor.py [--quick]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
WINDOW = 64_000

FLOORS = [(8_000, False, "en"), (16_000, True, "en"), (34_000, False, "en"), (42_000, False, "en"),
          (42_000, False, "zh")]
PROSE = ("the report for each region is checked by hand and then filed with the quarterly figures so that "
         "finance can compare the margins of every supplier across the year ").split()
HAN = "季度收入增长北京上海广州深圳成都杭州供应商发票客户流失预测利润率区域报告审核完成数据库迁移部署回滚测试"


def provider_tokens(body: dict[str, object]) -> int:
    """What an OpenAI provider counts: o200k over the messages' text and the tool schemas."""
    from hermes_ctx_plugins.tokens import get_counter

    counter = get_counter("gpt-4o")
    messages = body.get("messages") or []
    total = 3 + sum(4 + counter.count_text(str(m.get("content") or "")) for m in messages  # type: ignore[union-attr]
                    if isinstance(m, dict))
    return total + (counter.count_text(json.dumps(body["tools"])) if body.get("tools") else 0)


def text(lang: str, tokens: int, rng: random.Random) -> str:
    """About ``tokens`` tokens of English prose or Chinese."""
    if lang == "zh":
        return "".join(rng.choice(HAN) for _ in range(tokens))
    return " ".join(rng.choice(PROSE) for _ in range(tokens))


def one(engine: str, floor: int, tools: bool, lang: str, turns: int) -> dict[str, object]:
    """Runs in the child: one agent, ``turns`` turns; the figures as a dict."""
    import run_agent
    from hermes_cli import plugins as hermes_plugins

    from hermes_ctx_plugins.testing import StubOpenAIServer

    home = Path(os.environ["HERMES_HOME"])
    stub = StubOpenAIServer(context_length=WINDOW, prompt_tokens=provider_tokens)
    stub.start()
    summary = "## Goal\nKeep working on the quarterly report.\n## Progress\n" + "figures checked, " * 120
    stub.responder = lambda req: ("Noted; " + "the next step is clear. " * 60) if req.get("stream") else summary
    (home / "config.yaml").write_text(
        f"model: {{default: stub-model, provider: custom, base_url: {stub.base_url}, context_length: {WINDOW}}}\n"
        "plugins: {enabled: [hermes-ctx]}\n"
        + ("context: {engine: hermes-ctx}\nctx_plugins: {compressor: summarize}\n" if engine == "ours" else "")
        + "agent: {environment_probe: false}\n"
        f"auxiliary: {{compression: {{provider: custom, base_url: {stub.base_url}, model: stub-model, api_key: k}}}}\n",
        encoding="utf-8")
    hermes_plugins.discover_plugins(force=True)
    agent = run_agent.AIAgent(base_url=stub.base_url, api_key="k", provider="custom", model="stub-model",
                              quiet_mode=True, skip_context_files=True, enabled_toolsets=None if tools else [],
                              ephemeral_system_prompt="Operator rules. " + text(lang, floor, random.Random(3)))
    rng = random.Random(7)
    history: list[dict[str, object]] = []
    failed = 0
    for turn in range(turns):
        message = f"Turn {turn}. " + text(lang, 2_500, rng)
        result = agent.run_conversation(message, conversation_history=history)
        history = result.get("messages") or history
        failed += int(bool(result.get("failed")) or not result.get("final_response"))
    bodies = [r.body for r in stub.chat_requests if isinstance(r.body, dict)]
    chat = [b for b in bodies if b.get("stream")]
    prompts = [provider_tokens(b) for b in chat]
    stub.stop()
    return {"compactions": int(agent.context_compressor.compression_count),
            "summary_calls": sum(1 for b in bodies if not b.get("stream")),
            "largest_prompt": max(prompts, default=0), "refused": sum(p > WINDOW for p in prompts),
            "failed_turns": failed, "threshold": int(agent.context_compressor.threshold_tokens)}


def run(engine: str, floor: int, tools: bool, lang: str, turns: int) -> dict[str, object]:
    with tempfile.TemporaryDirectory() as home:
        env = {**os.environ, "HERMES_HOME": home, "PYTHONPATH": str(HERE.parent)}
        done = subprocess.run([sys.executable, __file__, "--child", engine, str(floor), str(int(tools)), lang,
                               str(turns)],
                              env=env, capture_output=True, text=True, timeout=900)
        lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
        if done.returncode or not lines:
            raise SystemExit(f"{engine} at floor {floor} failed:\n{done.stderr[-3000:]}")
        return dict(json.loads(lines[-1]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="16 turns instead of 24")
    parser.add_argument("--summary-json", type=Path, help="write the goal rows for benchmarks/run.py here")
    parser.add_argument("--child", nargs=5, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        engine, floor, tools, lang, turns = args.child
        print(json.dumps(one(engine, int(floor), tools == "1", lang, int(turns))))
        return
    turns = 16 if args.quick else 24
    print(f"{turns} turns of ~2.5k tokens on a {WINDOW:,}-token model; trigger 54,400 (hermes' and ours); "
          "the model counts with o200k")
    print(f"{'floor':>17} | {'engine':<24} | {'compactions':>11} | {'summary calls':>13} | "
          f"{'largest prompt':>14} | {'refused':>7} | {'failed turns':>12}")
    goals: list[dict[str, object]] = []
    for floor, tools, lang in FLOORS:
        name = f"~{floor // 1000}k {lang}" + (" +tools" if tools else "")
        figures = {}
        for engine, label in (("hermes", "hermes ContextCompressor"), ("ours", "ours (summarize)")):
            r = figures[engine] = run(engine, floor, tools, lang, turns)
            print(f"{name:>17} | {label:<24} | {r['compactions']:>11} | {r['summary_calls']:>13} | "
                  f"{r['largest_prompt']:>14,} | {r['refused']:>7} | {r['failed_turns']:>12}", flush=True)
        ours, hermes = figures["ours"], figures["hermes"]
        goals.append({"goal": f"floor {name}: turns failed (none)", "measured": ours["failed_turns"], "limit": 0,
                      "ok": ours["failed_turns"] == 0, "anchor": f"hermes {hermes['failed_turns']}"})
        if not hermes["failed_turns"]:
            goals.append({"goal": f"floor {name}: summary calls <= hermes'", "measured": ours["summary_calls"],
                          "limit": hermes["summary_calls"], "ok": ours["summary_calls"] <= hermes["summary_calls"],
                          "anchor": "hermes' compressor, same run"})
    if args.summary_json:
        args.summary_json.write_text(json.dumps(goals), encoding="utf-8")


if __name__ == "__main__":
    main()

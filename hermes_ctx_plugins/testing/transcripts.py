"""Deterministic, valid agent transcripts for tests and benchmarks."""

from __future__ import annotations

import json
import random
from typing import Any

_WORDS: tuple[str, ...] = ("deploy", "config", "parser", "cache", "timeout", "retry", "schema", "index", "token",
                          "server", "client", "build", "migrate", "release", "branch", "commit", "review", "latency")
_TOOLS: tuple[str, ...] = ("terminal", "read_file", "search_files", "write_file", "patch", "web_search")


def make_transcript(
    seed: int,
    turns: int = 20,
    *,
    system: bool = True,
    tool_rounds: int = 3,
    output_lines: int = 60,
    images: bool = True,
    multipart: bool = True,
    reasoning: bool = True,
    end_mid_turn: bool = False,
) -> list[dict[str, Any]]:
    """A deterministic, valid agent transcript in OpenAI chat format.

    Each turn: a user message (sometimes multi-part, sometimes with an image), up to
    ``tool_rounds`` assistant messages with one to three tool calls each followed by their
    results (long shell output, file contents, JSON, sometimes a repeat of an earlier output),
    then a final assistant answer. Roles alternate as strict backends require.
    """
    rng = random.Random(seed)
    messages: list[dict[str, Any]] = []
    if system:
        messages.append({"role": "system", "content": "You are a careful coding agent."})
    outputs: list[str] = []
    call_number = 0

    def words(n: int) -> str:
        return " ".join(rng.choice(_WORDS) for _ in range(n))

    def tool_output(tool: str) -> str:
        if outputs and rng.random() < 0.15:
            return rng.choice(outputs)  # the same file read twice
        lines = rng.randint(output_lines // 4, output_lines)
        if tool == "terminal":
            body = "\n".join(f"[{i:04d}] {words(6)} ok" for i in range(lines))
            text = json.dumps({"output": body, "exit_code": rng.choice((0, 0, 0, 1))})
        elif tool in ("read_file", "write_file", "patch"):
            text = "\n".join(f"def f_{i}(x):\n    return x * {i}  # {words(3)}" for i in range(lines))
        else:
            text = json.dumps({"total_count": lines, "matches": [f"src/{words(1)}_{i}.py:{i}" for i in range(lines)]})
        if rng.random() < 0.1:
            text += f"\nError: {words(4)} failed at src/{words(1)}.py:{rng.randint(1, 999)}"
        outputs.append(text)
        return text

    for turn in range(turns):
        ask = f"turn {turn}: please {words(8)} in src/{rng.choice(_WORDS)}.py"
        if multipart and rng.random() < 0.2:
            parts: list[dict[str, Any]] = [{"type": "text", "text": ask}]
            if images and rng.random() < 0.5:
                parts.append({"type": "image_url",
                              "image_url": {"url": f"data:image/png;base64,{'iVBORw0KGgo' * 20}{turn}"}})
            messages.append({"role": "user", "content": parts})
        else:
            messages.append({"role": "user", "content": ask})
        last_turn = turn == turns - 1
        for _ in range(rng.randint(0, tool_rounds)):
            calls: list[dict[str, Any]] = []
            for _ in range(rng.randint(1, 3)):
                call_number += 1
                tool = rng.choice(_TOOLS)
                arguments = {"command": f"make {words(2)}"} if tool == "terminal" else {
                    "path": f"src/{rng.choice(_WORDS)}_{call_number}.py"}
                if tool == "write_file":
                    arguments["content"] = "\n".join(words(10) for _ in range(rng.randint(5, 80)))
                calls.append({"id": f"call_{call_number}", "type": "function",
                              "function": {"name": tool, "arguments": json.dumps(arguments)}})
            assistant: dict[str, Any] = {"role": "assistant", "content": words(5) if rng.random() < 0.5 else None,
                                         "tool_calls": calls}
            if reasoning and rng.random() < 0.3:
                assistant["reasoning_content"] = f"thinking about {words(12)}"
            messages.append(assistant)
            for call in calls:
                messages.append({"role": "tool", "tool_call_id": call["id"],
                                 "content": tool_output(call["function"]["name"])})
        if last_turn and end_mid_turn and messages[-1]["role"] == "tool":
            break
        messages.append({"role": "assistant", "content": f"done with turn {turn}: {words(10)}"})
    return messages


def agentic_turn(rounds: int, *, seed: int = 6) -> list[dict[str, Any]]:
    """A history (no system prompt) whose last turn is one long agentic run: a greeting, then one user
    request answered by ``rounds`` tool calls (each an assistant message with ~2,000 characters of
    reasoning and a 30-line file read), then the assistant's closing message. Its tail, measured by
    a token budget, starts on an assistant message right after a user message: no summary role fits
    there."""
    rng = random.Random(seed)
    words = "alpha beta gamma delta cache miss key changed retry worker request ok".split()

    def text(n: int) -> str:
        return " ".join(rng.choice(words) for _ in range(n // 6))

    history: list[dict[str, Any]] = [{"role": "user", "content": "hello"},
                                     {"role": "assistant", "content": "hi, what shall we do?"},
                                     {"role": "user", "content": "Migrate the cache module, step by step."}]
    for i in range(rounds):
        call = {"id": f"c{i}", "type": "function",
                "function": {"name": "read_file", "arguments": json.dumps({"path": f"src/cache_{i}.py"})}}
        history += [{"role": "assistant", "content": f"step {i}: " + text(2000), "tool_calls": [call]},
                    {"role": "tool", "tool_call_id": f"c{i}",
                     "content": "\n".join(f"{j:4d}| " + text(60) for j in range(30))}]
    history.append({"role": "assistant", "content": "Migration done."})
    return history

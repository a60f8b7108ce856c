"""Realistic agent transcripts in three shapes, for the compression benchmarks.

``make_transcript`` (the test helper) JSON-encodes its shell output onto one line and keeps tool
results to tens of lines, which hides any cost that grows with the number of lines. These shapes are
what long real sessions look like:

* ``chat``: a conversation, mostly prose: long markdown answers, questions in English and Chinese,
  code blocks, a tool call now and then;
* ``tools``: a coding agent: every turn runs several tools whose results are long multi-line logs
  (hundreds of lines of test runs, build output, server logs with tracebacks, numbered file reads),
  in hermes 0.19.0's own result formats (``terminal`` answers ``{"output", "exit_code", "error"}``
  JSON; ``read_file`` numbered lines in JSON; ``execute_code`` ``{"status", "output", "exit_code", …}`` JSON);
* ``paste``: tool-light turns plus a few huge user messages (a 0.3-2 MB log dump, a CSV export, a
  Chinese document pasted whole).

``shaped_transcript(shape, size, seed)`` returns exactly ``size`` messages (a system prompt first)
ending at a valid boundary: every tool call has its result and the last message is a final answer.
Deterministic for a given seed.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from typing import Any

SHAPES = ("chat", "tools", "paste")

_WORDS = ("deploy", "config", "parser", "cache", "timeout", "retry", "schema", "index", "token", "server",
          "client", "build", "migrate", "release", "branch", "commit", "review", "latency", "worker", "queue",
          "payload", "session", "handler", "router", "storage", "metrics", "backoff", "lease", "shard", "replica")
_ZH = ("我们需要先检查配置文件是否正确加载", "服务器在高峰期的延迟明显上升", "请把这个函数重构成更小的部分",
       "数据库迁移脚本在第二步失败了", "缓存命中率下降到百分之六十", "用户反馈登录页面偶尔会超时",
       "这个问题只在生产环境中出现", "日志显示连接池已经耗尽", "我们应该增加重试和指数退避")
_LEVELS = ("INFO", "INFO", "INFO", "DEBUG", "DEBUG", "WARN", "ERROR")
_EXCEPTIONS = ("ValueError", "KeyError", "TimeoutError", "ConnectionResetError", "AssertionError",
               "ModuleNotFoundError", "sqlite3.OperationalError")


class _Gen:
    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.calls = 0
        self.turn = 0

    def words(self, n: int) -> str:
        return " ".join(self.rng.choice(_WORDS) for _ in range(n))

    def path(self) -> str:
        return f"src/{self.rng.choice(_WORDS)}/{self.rng.choice(_WORDS)}_{self.rng.randint(1, 99)}.py"

    def sentence(self) -> str:
        if self.rng.random() < 0.15:
            return self.rng.choice(_ZH) + "。"
        return self.words(self.rng.randint(6, 18)).capitalize() + "."

    def paragraph(self, sentences: int) -> str:
        return " ".join(self.sentence() for _ in range(sentences))

    # -- tool output, line by line ---------------------------------------------------------------

    def traceback(self) -> list[str]:
        lines = ["Traceback (most recent call last):"]
        for _ in range(self.rng.randint(3, 9)):
            lines += [f'  File "/app/{self.path()}", line {self.rng.randint(1, 900)}, in {self.rng.choice(_WORDS)}',
                      f"    {self.rng.choice(_WORDS)} = "
                      f"self.{self.rng.choice(_WORDS)}({self.words(2).replace(' ', ', ')})"]
        lines.append(f"{self.rng.choice(_EXCEPTIONS)}: {self.words(5)}")
        return lines

    def pytest_log(self, n: int, failing: bool) -> list[str]:
        lines = ["============================= test session starts ==============================",
                 "platform linux -- Python 3.11.9, pytest-8.3.3, pluggy-1.5.0",
                 f"collected {n} items", ""]
        for i in range(n):
            status = "FAILED" if failing and self.rng.random() < 0.03 else "PASSED"
            lines.append(f"tests/test_{self.rng.choice(_WORDS)}.py::test_{self.words(3).replace(' ', '_')} "
                         f"{status} [{100 * (i + 1) // n:3d}%]")
        if failing:
            lines += ["", "=================================== FAILURES ===================================",
                      *self.traceback(), f"FAILED tests/test_{self.rng.choice(_WORDS)}.py::test_x - "
                      f"{self.rng.choice(_EXCEPTIONS)}", f"========= 1 failed, {n - 1} passed in 12.34s ========="]
        else:
            lines.append(f"============================== {n} passed in 9.87s ==============================")
        return lines

    def server_log(self, n: int) -> list[str]:
        lines = []
        for i in range(n):
            level = self.rng.choice(_LEVELS)
            lines.append(f"2026-11-{1 + i % 28:02d}T{i % 24:02d}:{i % 60:02d}:{(i * 7) % 60:02d}.{i % 1000:03d}Z "
                         f"{level:5} [{self.rng.choice(_WORDS)}-{self.rng.randint(1, 8)}] "
                         f"req={self.rng.getrandbits(48):012x} path=/api/v1/{self.rng.choice(_WORDS)} "
                         f"status={self.rng.choice((200, 200, 200, 201, 404, 500))} "
                         f"latency={self.rng.randint(1, 900)}ms")
            if level == "ERROR" and self.rng.random() < 0.3:
                lines += self.traceback()
        return lines

    def build_log(self, n: int) -> list[str]:
        lines = []
        for _ in range(n):
            kind = self.rng.random()
            if kind < 0.7:
                lines.append(f"[{self.rng.randint(1, 400)}/400] Compiling {self.path().replace('.py', '.c')}")
            elif kind < 0.95:
                where = f"{self.path().replace('.py', '.c')}:{self.rng.randint(1, 900)}:{self.rng.randint(1, 80)}"
                lines.append(f"{where}: warning: unused variable '{self.rng.choice(_WORDS)}' [-Wunused-variable]")
            else:
                lines.append(f"npm WARN deprecated {self.rng.choice(_WORDS)}@{self.rng.randint(1, 9)}.0.0: "
                             f"{self.words(6)}")
        return lines

    def source(self, n: int) -> list[str]:
        lines = []
        for i in range(n):
            indent = "    " * self.rng.randint(0, 3)
            if i % 12 == 0:
                lines.append(f"def {self.words(2).replace(' ', '_')}(self, {self.rng.choice(_WORDS)}):")
            elif i % 7 == 0:
                lines.append(f"{indent}# {self.paragraph(1)}")
            else:
                lines.append(f"{indent}{self.rng.choice(_WORDS)} = {self.rng.choice(_WORDS)}."
                             f"{self.rng.choice(_WORDS)}({self.rng.randint(0, 999)})")
        return lines

    def tool_result(self, tool: str, lines: int) -> tuple[dict[str, Any], str]:
        """(arguments, result text) for one call of ``tool`` with about ``lines`` lines of output."""
        if tool == "terminal":
            failing = self.rng.random() < 0.25
            kind = self.rng.random()
            if kind < 0.4:
                body, command = self.pytest_log(lines, failing), "python -m pytest -x tests/"
            elif kind < 0.7:
                body, command = self.server_log(lines), "tail -n 500 /var/log/app/server.log"
            else:
                body, command = self.build_log(lines), "make -j8 build"
            code = (1 if failing else 0) if command.startswith("python") else self.rng.choice((0, 0, 0, 2))
            text = json.dumps({"output": "\n".join(body), "exit_code": code, "error": None}, ensure_ascii=False)
            return {"command": command}, text
        if tool == "read_file":
            path = self.path()
            numbered = "\n".join(f"{i + 1:6d}|{line}" for i, line in enumerate(self.source(lines)))
            return {"path": path}, json.dumps({"content": numbered, "total_lines": lines, "truncated": False})
        if tool == "execute_code":  # hermes 0.19.0's tools/code_execution_tool.py result (a failure: status "error")
            # (the local sandbox's: a failure's stderr is appended to the output and is its "error")
            stdout = "\n".join(self.server_log(lines))
            stderr = "\n".join(self.traceback()) if self.rng.random() < 0.3 else ""
            result: dict[str, Any] = {"status": "error" if stderr else "success",
                                      "output": f"{stdout}\n--- stderr ---\n{stderr}" if stderr else stdout,
                                      "exit_code": 1 if stderr else 0, "tool_calls_made": 0,
                                      "duration_seconds": round(0.05 * lines, 2)}
            if stderr:
                result["error"] = stderr
            return ({"code": f"import {self.rng.choice(_WORDS)}\nprint(run())"},
                    json.dumps(result, ensure_ascii=False))
        matches = [f"{self.path()}:{self.rng.randint(1, 900)}: {self.words(5)}" for _ in range(lines)]
        return ({"pattern": self.rng.choice(_WORDS), "path": "src"},
                json.dumps({"total_count": lines, "matches": matches}))

    # -- turns -------------------------------------------------------------------------------------

    def tool_round(self, tools: tuple[str, ...], lines: tuple[int, int]) -> list[dict[str, Any]]:
        calls, results = [], []
        for _ in range(self.rng.randint(1, 3)):
            self.calls += 1
            tool = self.rng.choice(tools)
            arguments, text = self.tool_result(tool, self.rng.randint(*lines))
            call_id = f"call_{self.calls}"
            calls.append({"id": call_id, "type": "function",
                          "function": {"name": tool, "arguments": json.dumps(arguments, ensure_ascii=False)}})
            results.append({"role": "tool", "tool_call_id": call_id, "content": text})
        assistant: dict[str, Any] = {"role": "assistant", "content": self.words(8) if self.rng.random() < 0.5 else "",
                                     "tool_calls": calls}
        if self.rng.random() < 0.3:
            assistant["reasoning_content"] = self.paragraph(3)
        return [assistant, *results]

    def answer(self, sentences: int) -> dict[str, Any]:
        parts = [f"## {self.words(3).title()}", self.paragraph(sentences)]
        if self.rng.random() < 0.4:
            parts.append("```python\n" + "\n".join(self.source(self.rng.randint(5, 30))) + "\n```")
        parts.append("\n".join(f"- {self.sentence()}" for _ in range(self.rng.randint(2, 6))))
        return {"role": "assistant", "content": "\n\n".join(parts)}

    def chat_turn(self) -> list[dict[str, Any]]:
        turn = [{"role": "user", "content": self.paragraph(self.rng.randint(1, 6))}]
        if self.rng.random() < 0.15:
            turn += self.tool_round(("read_file", "web_search", "terminal"), (5, 40))
        turn.append(self.answer(self.rng.randint(6, 30)))
        return turn

    def tools_turn(self) -> list[dict[str, Any]]:
        turn: list[dict[str, Any]] = [{"role": "user", "content": f"please {self.words(8)} in {self.path()}"}]
        for _ in range(self.rng.randint(1, 4)):
            turn += self.tool_round(("terminal", "terminal", "read_file", "execute_code", "search_files"),
                                    (80, 400))
        turn.append({"role": "assistant", "content": self.paragraph(self.rng.randint(1, 4))})
        return turn

    def paste_turn(self) -> list[dict[str, Any]]:
        if self.rng.random() < 0.004:  # a few per thousands of messages
            kind = self.rng.random()
            target = self.rng.randint(300_000, 2_000_000)
            if kind < 0.4:
                block = "\n".join(self.server_log(400))
            elif kind < 0.7:
                block = "\n".join(",".join(str(self.rng.randint(0, 10 ** 6)) for _ in range(12)) for _ in range(400))
            else:
                block = "\n".join(self.rng.choice(_ZH) + "\uff0c" + self.rng.choice(_ZH) + "。" for _ in range(400))
            paste = (block + "\n") * max(1, target // (len(block) + 1))
            turn = [{"role": "user", "content": f"here is the whole dump, what is wrong?\n\n{paste}"}]
            turn.append(self.answer(self.rng.randint(6, 20)))
            return turn
        turn = [{"role": "user", "content": self.paragraph(self.rng.randint(1, 3))}]
        if self.rng.random() < 0.5:
            turn += self.tool_round(("terminal", "read_file", "search_files"), (20, 120))
        turn.append(self.answer(self.rng.randint(3, 12)))
        return turn


_TURNS: dict[str, Callable[[_Gen], list[dict[str, Any]]]] = {
    "chat": _Gen.chat_turn, "tools": _Gen.tools_turn, "paste": _Gen.paste_turn}


def shaped_transcript(shape: str, size: int, seed: int = 0) -> list[dict[str, Any]]:
    """Exactly ``size`` messages of ``shape`` (see the module docstring), ending with a final answer."""
    if shape not in _TURNS:
        raise ValueError(f"unknown shape {shape!r}; valid: {', '.join(SHAPES)}")
    if size < 3:
        raise ValueError(f"size must be at least 3, got {size}")
    gen = _Gen(seed)
    messages: list[dict[str, Any]] = [{"role": "system", "content": "You are a careful coding agent."}]
    ends = [1]  # where a whole turn ends
    while len(messages) < size:
        messages += _TURNS[shape](gen)
        ends.append(len(messages))
    # The last turn end leaving an even gap (short user/answer pairs fill it) or room for a 5-message turn.
    end = max(e for e in ends if e <= size and ((size - e) % 2 == 0 or size - e >= 5))
    messages = messages[:end]
    gap = size - end
    if gap % 2:
        messages += _two_call_turn(gen)
        gap -= 5
    for _ in range(gap // 2):
        messages += [{"role": "user", "content": gen.sentence()}, {"role": "assistant", "content": gen.paragraph(2)}]
    return messages


def _two_call_turn(gen: _Gen) -> list[dict[str, Any]]:
    """A 5-message turn: ask, two tool calls, their results, answer."""
    turn: list[dict[str, Any]] = []
    while len(turn) != 3:
        turn = gen.tool_round(("terminal", "read_file"), (20, 60))
    return [{"role": "user", "content": gen.sentence()}, *turn, {"role": "assistant", "content": gen.paragraph(2)}]

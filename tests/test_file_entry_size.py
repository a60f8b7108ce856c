"""An entry longer than its memory file may hold is refused before it is scanned.

Before: the threat scan read every op's text first and the size limit came after it, so a model writing a page
(128 kB of a phrase the rules look for) as one MEMORY.md entry cost seconds of scanning in the turn, then was
refused for its size anyway — through our own tool and through hermes' memory tool, whose writes pass our gate.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from hermes_ctx_plugins import SessionInfo, load_host
from hermes_ctx_plugins.memory.file import approval
from hermes_ctx_plugins.memory.file import provider as file_provider
from hermes_ctx_plugins.memory.file.provider import FileProvider

SESSION = SessionInfo(session_id="s1")
PAGE = "preapproved " * 11_000  # 132 kB, the scanner's slowest kind of text


def memory_md() -> Path:
    return Path(os.environ["HERMES_HOME"]) / "memories" / "MEMORY.md"


@pytest.fixture
def scanned(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The length of every text the file provider's two scans (its store's and the gate's screen) read."""
    lengths: list[int] = []
    write_scan, screen = FileProvider._write_scan, approval.Screen

    def counting_scan(self: FileProvider, text: str) -> Any:
        lengths.append(len(text))
        return write_scan(self, text)

    def counting_screen(texts: list[str], policy: Any) -> Any:
        lengths.extend(len(t) for t in texts)
        return screen(texts, policy)

    monkeypatch.setattr(FileProvider, "_write_scan", counting_scan)
    monkeypatch.setattr(file_provider, "Screen", counting_screen)
    return lengths


def provider(config: dict[str, Any] | None = None) -> FileProvider:
    [file] = [p for p in load_host(config or {}).memory_providers if p.name == "file"]
    assert isinstance(file, FileProvider)
    return file


def test_a_page_written_as_one_entry_through_our_tool_is_refused_unscanned(scanned: list[int]) -> None:
    p = provider()
    answer = json.loads(p.handle_tool_call("memory", {"target": "memory", "action": "add", "content": PAGE},
                                           session=SESSION))
    assert answer["success"] is False and f"{len(PAGE):,} chars" in answer["error"]
    assert not memory_md().exists() and scanned == []


def test_a_page_written_through_hermes_memory_tool_is_refused_by_the_gate_unscanned(scanned: list[int]) -> None:
    p = provider()
    verdict = p.gate({"target": "memory", "action": "add", "content": PAGE}, session=SESSION)
    assert verdict is not None and "more than the file may hold" in json.loads(verdict)["error"]
    assert scanned == []
    # an ordinary entry is scanned as before (the count above can see a scan)
    note = "Deploys go out on Fridays"
    assert p.gate({"target": "memory", "action": "add", "content": note}, session=SESSION) is None
    assert scanned == [len(note)]


def test_a_file_over_its_limit_may_still_shrink_by_a_long_entry(scanned: list[int]) -> None:
    """A long entry fits a file already over its limit (lowered since) when the batch shrinks the file: that is still
    written, scanned as always."""
    memory_md().parent.mkdir(parents=True)
    memory_md().write_text("Build notes: " + "x" * 900 + "\n§\nOld: " + "y" * 400, encoding="utf-8")
    p = provider({"memory": {"memory_char_limit": 500}})
    shorter = "Build notes: " + "z" * 600  # over the limit, shorter than what it replaces
    answer = json.loads(p.handle_tool_call(
        "memory", {"target": "memory", "action": "replace", "old_text": "Build notes:", "content": shorter},
        session=SESSION))
    assert answer["success"] is True, answer
    assert shorter in memory_md().read_text(encoding="utf-8") and len(shorter) in scanned

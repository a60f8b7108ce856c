"""What the archive's dense-path test modules share: a strategy archiving everything, hosts built on it,
a compaction of given texts, ``ctx_search`` as the model calls it, and a topic embedder."""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path
from typing import Any

from hermes_ctx_plugins import CompressionResult, CompressorStrategy, SessionInfo, hookimpl, load_host
from hermes_ctx_plugins.manager import Host
from hermes_ctx_plugins.tokens import get_counter

TOPICS = ({"kitten", "feline", "cat", "whiskers"}, {"invoice", "salary", "payment", "bank"},
          {"flight", "airport", "trip", "passport"})
KITTEN = "my kitten knocked the vase off the shelf"
FELINE = "what did the feline break?"
FILLER = ("the weather was grey all week", "the garden needs new tulip bulbs", "we talked about the new sofa")


def topic_vectors(texts: list[str]) -> list[list[float]]:
    """One axis per topic of :data:`TOPICS` (how many of its words a text holds) and a small constant one."""
    vectors = []
    for text in texts:
        words = set(text.lower().replace("?", " ").replace(".", " ").replace(",", " ").split())
        vectors.append([float(len(words & topic)) for topic in TOPICS] + [0.05])
    return vectors


class Keep2(CompressorStrategy):
    """Keeps the first and the last message: everything between is archived."""

    name = "keep2"

    def compress(self, messages: list[dict[str, Any]], **kwargs: Any) -> CompressionResult:
        return CompressionResult(messages=[messages[0], messages[-1]])


class Keep2Plugin:
    @hookimpl
    def register_compressors(self, register: Any) -> None:
        register(Keep2)


def host_for(**archive: Any) -> Host:
    """A host compacting with :class:`Keep2`, ``archive`` its archive settings (``storage``: a backend)."""
    storage = archive.pop("storage", None)
    config: dict[str, Any] = {"model": {"default": "gpt-4o", "context_length": 128_000},
                              "ctx_plugins": {"compressor": "keep2", "archive": archive,
                                              "memory": {"providers": []}}}
    if storage:
        config["ctx_plugins"]["storage"] = {"backend": storage}
    return load_host(config, plugins=[Keep2Plugin()])


def compact(host: Host, session: SessionInfo, *texts: str, flush: bool = True) -> None:
    """Archive ``texts`` (alternately the user's and the assistant's) as one compaction of ``session``, and
    (``flush``) wait for their vectors."""
    said = [{"role": "user" if n % 2 == 0 else "assistant", "content": t} for n, t in enumerate(texts)]
    host.compress([{"role": "system", "content": "sys"}, *said, {"role": "user", "content": "now"}],
                  session=session, force=True)
    assert host.archive is not None
    if flush and host.archive.hybrid is not None:
        assert host.archive.hybrid.flush(30)


def search(host: Host, session: SessionInfo, query: str, limit: int = 5) -> list[str]:
    """The snippets ``ctx_search`` returns, best first, marks removed."""
    assert host.archive is not None
    answer = json.loads(host.archive.handle_tool_call("ctx_search", {"query": query, "limit": limit},
                                                      session=session, counter=get_counter("gpt-4o")))
    assert "error" not in answer, answer
    return [r["snippet"].replace("«", "").replace("»", "") for r in answer["results"]]


def vector_rows(path: Path) -> list[tuple[Any, ...]]:
    db = sqlite3.connect(path)
    try:
        return db.execute("SELECT message_id, model, length(vector) FROM archive_vectors "
                          "ORDER BY message_id").fetchall()
    finally:
        db.close()


def archive_file() -> Path:
    return Path(os.environ["HERMES_HOME"]) / "ctx_archive.db"

"""What the archive costs per compaction grows with what was removed, never faster, and the anchor index
reads no more than it can use. Bounded by counting work (matches checked, characters handed to the
patterns, redactions, vacuums) or by inputs the old quadratic code could not finish, never by a stopwatch."""

from __future__ import annotations

import json
import random
import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

import hermes_ctx_plugins.archive.anchors as anchors
from hermes_ctx_plugins import SessionInfo, load_host, storage
from hermes_ctx_plugins.archive.archiver import INDEX_OPEN
from hermes_ctx_plugins.config import load_config
from hermes_ctx_plugins.manager import Host
from hermes_ctx_plugins.safety import redact_secrets
from hermes_ctx_plugins.storage.sqlite.archive import ArchiveStore
from hermes_ctx_plugins.testing import make_transcript
from hermes_ctx_plugins.tokens import get_counter

ALICE = SessionInfo(session_id="s-alice", user_id="alice")
SECRET = "sk-proj-Zm9vYmFyYmF6cXV4MTIzNDU2Nzg5MGFiY2RlZmdoaWprbG1ub3A"
TAIL = "END-OF-LOG-7f3a9c"


def found(texts: list[str], limit: int | None = None) -> list[tuple[str, str]]:
    return [(a.kind, a.text) for a in anchors.extract(texts, limit=limit)]


# ------------------------------------------------------------------ the overlap check


def test_taken_spans_answer_as_a_scan_of_every_span_would() -> None:
    rng = random.Random(7)
    for _ in range(200):
        taken, spans = anchors._Taken(), []
        for _kind in range(4):
            batch = sorted((s, s + rng.randint(1, 9)) for s in rng.sample(range(200), 12))
            taken.add(batch)
            spans += batch
        for position in range(215):
            assert taken.covers(position) == any(s <= position < e for s, e in spans), (position, spans)


def test_200k_anchors_in_one_piece_are_each_checked_twice(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each version sits inside a path, so it is checked against 200,000 taken spans: a list scanned
    per check (the old code) would take some 10^10 steps here."""
    checks = 0
    covers = anchors._Taken.covers

    def counted(self: anchors._Taken, position: int) -> bool:
        nonlocal checks
        checks += 1
        return covers(self, position)

    monkeypatch.setattr(anchors._Taken, "covers", counted)
    text = ";".join(f"lib/v1.{n}.0/mod{n}.py" for n in range(200_000))  # no whitespace: one piece
    assert " " not in text and len(text) > anchors.PIECE
    result = found([text])
    assert len(result) == 200_000 and {kind for kind, _ in result} == {"path"}
    assert result[0] == ("path", "lib/v1.0.0/mod0.py") and result[-1] == ("path", "lib/v1.199999.0/mod199999.py")
    # the paths and the versions inside them, each checked at its two ends once
    assert checks <= 2 * 2 * 200_000


# ------------------------------------------------------------------ the patterns


def test_long_runs_of_dotted_or_dashed_words_are_read_once() -> None:
    """The old path, port and issue patterns re-read such a run to its end from every dot or dash:
    about 100 s for 40 KB, hours for these 600 KB."""
    runs = ["a." * 100_000, "ab-" * 70_000, "x.y-" * 50_000, "q/" * 50_000 + "q"]
    tail = "see src/app.py, ./build/out.js and db.internal:5432 (acme/web#77)"
    result = found([" ".join([*runs, tail])])
    assert ("path", "src/app.py") in result and ("path", "./build/out.js") in result
    assert ("port", "db.internal:5432") in result and ("issue", "acme/web#77") in result
    assert not [r for r in result if "a.a.a" in r[1] or "ab-ab" in r[1] or "x.y-x" in r[1]]


@pytest.mark.parametrize(("text", "expected"), [
    (".github/workflows/ci.yml failed", [("path", "github/workflows/ci.yml")]),
    ("see ../x.py and ./build/out.js", [("path", "./build/out.js")]),
    ("edit -x/y.py now", [("path", "x/y.py")]),
    ("tracked in acme/web#1234 and #77", [("issue", "acme/web#1234"), ("issue", "#77")]),
    ("proxy-1.internal:3128 and localhost:8080 and [::1]:9000",
     [("port", "proxy-1.internal:3128"), ("port", "localhost:8080"), ("port", "]:9000")]),
    ("foo-localhost:80", [("port", "localhost:80")]),
    ("/usr/lib/python3.11/site-packages/x.py v1.2.3",
     [("path", "/usr/lib/python3.11/site-packages/x.py"), ("version", "v1.2.3")]),
    ("host.example.com:5432/db", [("port", "host.example.com:5432")]),
    # a kind is looked for only in a piece holding what it needs: a port without a colon, a path without a slash
    ("listening on PORT 8080", [("port", "PORT 8080")]),
    ("saved to C:\\Users\\me\\app.py", [("path", "C:\\Users\\me\\app.py")]),
])
def test_the_linear_patterns_find_what_the_old_ones_found(text: str, expected: list[tuple[str, str]]) -> None:
    assert found([text]) == expected


# ------------------------------------------------------------------ reading no more than the index can use


class _Spy:
    """A pattern that counts the characters it is handed."""

    def __init__(self, pattern: Any, read: list[int]) -> None:
        self.pattern, self.read, self.flags = pattern, read, pattern.flags

    def finditer(self, text: str) -> Iterator[Any]:
        self.read.append(len(text))
        return self.pattern.finditer(text)


def _log(n: int) -> str:
    return "\n".join(f"2024-06-01T12:{i % 60:02d}:00Z INFO worker-{i % 8} GET /api/v1/items/{n}-{i} 200 {i % 97}ms "
                     f"commit {n * 7919 + i:09x}f in src/handlers/item_{i % 13}.py" for i in range(100))


def test_the_scan_stops_when_the_index_is_spoken_for(monkeypatch: pytest.MonkeyPatch) -> None:
    read: list[int] = []
    monkeypatch.setattr(anchors, "_PATTERNS", tuple((kind, _Spy(p, read)) for kind, p in anchors._PATTERNS))
    small = [_log(n) for n in range(200)]  # ~2.5 MB
    large = [_log(n) for n in range(1_000)]  # ~12 MB
    first = found(small, limit=100)
    read_small, read[:] = sum(read), []
    assert found(large, limit=100) == first  # the same first anchors, whatever follows them
    assert sum(read) == read_small <= len(anchors.KINDS) * (100 * anchors.READ_PER_ANCHOR + 2 * anchors.PIECE)
    assert sum(map(len, large)) > 20 * sum(read) / len(anchors.KINDS)
    # each kind stops at the limit; the kinds found are still all there
    kinds = {kind for kind, _ in first}
    assert kinds >= {"sha", "path", "quantity"} and all(sum(k == kind for k, _ in first) <= 100 for kind in kinds)


def test_a_huge_text_is_read_in_pieces_so_every_kind_has_its_turn() -> None:
    """A single 2 MB log: the scan stops inside it, after every kind read the same first pieces."""
    text = "\n".join(_log(n) for n in range(160))
    result = found([text], limit=50)
    assert {kind for kind, _ in result} >= {"sha", "path", "quantity"}
    assert ("path", "src/handlers/item_0.py") in result


# ------------------------------------------------------------------ one compaction of a 10 MB tool output


def _big_output() -> str:
    lines = [f"2024-06-01T12:{n % 60:02d}:{n % 59:02d}Z INFO worker-{n % 8} GET /api/v1/items/{n} 200 {n % 97}ms"
             for n in range(150_000)]
    lines[-50] = f"export OPENAI_API_KEY={SECRET}"
    return "\n".join([*lines, TAIL]) + "\n"


def _host(**archive: Any) -> Host:
    return load_host({"model": {"default": "gpt-4o", "context_length": 128_000},
                      "ctx_plugins": {"compressor": "window", "archive": archive}})


def _tool(host: Host, name: str, **args: Any) -> dict[str, Any]:
    assert host.archive is not None
    answer = json.loads(host.archive.handle_tool_call(name, args, session=ALICE, counter=get_counter("gpt-4o")))
    assert isinstance(answer, dict)
    return answer


def _spy(monkeypatch: pytest.MonkeyPatch, target: str, sizes: list[int]) -> None:
    original: Callable[[str], str] = redact_secrets

    def counted(text: str) -> str:
        sizes.append(len(text))
        return original(text)

    monkeypatch.setattr(target, counted)


def test_a_10_mb_tool_output_is_redacted_once_archived_once_and_comes_back_exactly(
        monkeypatch: pytest.MonkeyPatch) -> None:
    big = _big_output()
    assert len(big) > 10_000_000 and big.count("\n") > 100_000
    messages = make_transcript(3, turns=40, images=False)
    call = {"id": "call_big", "type": "function",
            "function": {"name": "terminal", "arguments": json.dumps({"command": "cat server.log"})}}
    at = next(i for i in range(8, len(messages)) if messages[i]["role"] == "user")  # a turn in the middle
    messages[at:at] = [{"role": "assistant", "content": "", "tool_calls": [call]},
                       {"role": "tool", "tool_call_id": "call_big", "content": big}]
    host = _host(expand_max_tokens=10_000_000)
    sizes: list[int] = []
    for target in ("hermes_ctx_plugins.storage.records.redact_secrets",
                   "hermes_ctx_plugins.archive.archiver.redact_secrets"):
        _spy(monkeypatch, target, sizes)
    result = host.compress(messages, session=ALICE, force=True)
    assert result.compressed and TAIL not in json.dumps(result.messages)  # dropped from view
    assert sum(size >= len(big) for size in sizes) == 1  # the store and the index share one redaction
    assert SECRET not in json.dumps(result.messages)  # nor did the index pick the key up
    assert INDEX_OPEN in json.dumps(result.messages)

    hits = _tool(host, "ctx_search", query=TAIL)["results"]
    assert len(hits) == 1  # archived once
    expanded = _tool(host, "ctx_expand", id=hits[0]["id"])
    [original] = [m for m in expanded["messages"] if m.get("tool_call_id") == "call_big"]
    assert original["content"] == redact_secrets(big)  # every byte but the key's, in order
    assert SECRET not in original["content"] and original["content"].endswith(f"{TAIL}\n")
    assert original["content"].count("\n") == big.count("\n")
    assert [m["id"] for m in expanded["messages"]] == [hits[0]["id"] - 1, hits[0]["id"]]  # with its call


# ------------------------------------------------------------------ the size bound


def _compaction(n: int, kilobytes: int) -> list[tuple[int, dict[str, Any]]]:
    return [(i, {"role": "tool", "tool_call_id": f"c{n}-{i}", "content": f"run {n} " + "y" * 1000})
            for i in range(kilobytes)]


def test_the_size_bound_trims_the_oldest_in_one_transaction_with_one_vacuum(tmp_path: Path) -> None:
    store = ArchiveStore(tmp_path / "a.db", retention_days=0, max_megabytes=0)
    statements: list[str] = []
    compaction = _compaction
    for n in range(6):
        store.record(session_id=f"s{n}", user_id="u", strategy="window", removed=compaction(n, 100))
    store.max_megabytes = (store.size_bytes() + 300_000) / 1_000_000
    store._connect().set_trace_callback(statements.append)
    store.record(session_id="s6", user_id="u", strategy="window", removed=compaction(6, 10))
    assert not [s for s in statements if s.startswith("DELETE") or "vacuum" in s]  # under the bound: nothing

    statements.clear()
    store.record(session_id="s7", user_id="u", strategy="window", removed=compaction(7, 300))
    deleted = [s for s in statements if s.startswith("DELETE FROM compactions")]
    assert len(set(deleted)) >= 2 and sum("incremental_vacuum" in s for s in statements) == 1
    assert store.size_bytes() <= store.max_megabytes * 1_000_000
    with sqlite3.connect(tmp_path / "a.db") as db:
        sessions = [row[0] for row in db.execute("SELECT session_id FROM compactions ORDER BY id")]
    db.close()
    assert sessions[-1] == "s7" and sessions == [f"s{n}" for n in range(8 - len(sessions), 8)]  # oldest first
    store.close()


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
def test_over_the_bound_the_oldest_go_first_and_no_more_than_needed(backend: str, tmp_path: Path,
                                                                    request: pytest.FixtureRequest) -> None:
    chosen: dict[str, Any] = {"backend": backend}
    if backend == "postgres":  # a real server
        chosen["dsn"] = request.getfixturevalue("postgres_dsn")
    unbounded = {"path": str(tmp_path / "archive.db"), "retention_days": 0, "max_megabytes": 0}
    archive = storage.open_archive(load_config({"ctx_plugins": {"storage": chosen, "archive": unbounded}}))
    try:
        sizes = []
        for n in range(6):
            before = archive.size_bytes() if n else 0
            archive.record(session_id=f"s{n}", user_id="u", strategy="window", removed=_compaction(n, 40 + 10 * n))
            sizes.append(archive.size_bytes() - before)
        archive.max_megabytes = (sizes[3] + sizes[4] + sizes[5] + sizes[0] // 2) / 1_000_000  # room for s3-s5
        archive.record(session_id="s6", user_id="u", strategy="window", removed=_compaction(6, 60))
        kept = [entry["session_id"] for entry in archive.compactions()]
        assert kept[-1] == "s6" and kept == [f"s{n}" for n in range(7 - len(kept), 7)]  # the oldest went first
        assert archive.size_bytes() <= archive.max_megabytes * 1_000_000
        if backend == "postgres":  # its size is the rows' bytes, exactly: the youngest of those deleted was needed
            assert archive.size_bytes() + sizes[6 - len(kept)] > archive.max_megabytes * 1_000_000
    finally:
        archive.purge(everything=True)
        archive.close()

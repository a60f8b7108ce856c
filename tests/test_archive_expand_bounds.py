"""The archive under a hostile or careless caller (a red-team pass): ctx_expand's bound where a message's bulk
is not a plain text, a tool result behind a large call, long query terms, and the command line on a damaged or
locked file and bad numbers."""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from hermes_ctx_plugins.archive import tools
from hermes_ctx_plugins.cli import main
from hermes_ctx_plugins.storage import Scope, archive_text
from hermes_ctx_plugins.storage.sqlite.archive import ArchiveStore
from hermes_ctx_plugins.tokens import get_counter

COUNTER = get_counter("gpt-4o")
SCOPE = Scope(session_id="s1", user_id="u1")
#: a 300 KB file: what a write_file call carries in its arguments, or a paste beside a screenshot
BIG = "\n".join(f"line {i:06d} of the pasted file, value={i * 7919 % 100003}" for i in range(6000))


def store_with(tmp_path: Path, messages: list[dict[str, Any]]) -> tuple[ArchiveStore, list[int]]:
    store = ArchiveStore(tmp_path / "a.db")
    return store, store.record(session_id="s1", user_id="u1", strategy="t", removed=list(enumerate(messages)))


def expand(store: ArchiveStore, **args: Any) -> tuple[str, dict[str, Any]]:
    raw = tools.handle("ctx_expand", args, store=store, scope=SCOPE, counter=COUNTER, max_tokens=4000)
    return raw, json.loads(raw)


def search(store: ArchiveStore, query: str) -> list[int]:
    raw = tools.handle("ctx_search", {"query": query}, store=store, scope=SCOPE, counter=COUNTER, max_tokens=4000)
    return [hit["id"] for hit in json.loads(raw)["results"]]


def write_call(*results: tuple[str, str]) -> list[dict[str, Any]]:
    """An assistant turn calling write_file with BIG (and a terminal), then the results."""
    written = json.dumps({"path": "gen.py", "content": BIG + "\nEND-OF-FILE-77"})
    calls = [{"id": "call_w", "type": "function", "function": {"name": "write_file", "arguments": written}},
             {"id": "call_ci", "type": "function", "function": {"name": "terminal", "arguments": '{"command": "ci"}'}}]
    return [{"role": "assistant", "content": "", "tool_calls": calls},
            *({"role": "tool", "tool_call_id": call, "content": text} for call, text in results)]


@pytest.mark.parametrize("shape", ["content parts", "tool call arguments"])
def test_expand_stays_within_max_tokens_whatever_holds_the_bulk(tmp_path: Path, shape: str) -> None:
    """Only a plain-text content was cut to fit: a paste beside an image (content parts) or a write_file call
    came back whole, 84,000-90,000 tokens for max_tokens 1,000 (in real hermes, 28,000 for the default 4,000)."""
    messages = ([{"role": "user", "content": [
                    {"type": "text", "text": BIG + "\nEND-OF-PASTE-77"},
                    {"type": "image_url", "image_url": {"url": "data:image/png;base64," + "A" * 50_000}}]}]
                if shape == "content parts" else write_call(("call_w", "wrote gen.py"), ("call_ci", "green")))
    store, ids = store_with(tmp_path, messages)
    for max_tokens in (200, 1000, 4000):
        raw, answer = expand(store, id=ids[0], max_tokens=max_tokens)
        assert COUNTER.count_text(raw) <= max_tokens, (max_tokens, COUNTER.count_text(raw))
        assert answer["messages"][0]["id"] == ids[0]
        assert "END-OF-" in raw  # the end is shown, as for a long log
        assert "AAAAAAAAAAAAAAAA" not in raw  # an image's base64 is no reading
    # what was stored is not touched by the cut
    [stored] = store.get([ids[0]], SCOPE)
    assert stored.message == messages[0]


def test_a_content_in_parts_is_read_on_by_offset_to_its_end(tmp_path: Path) -> None:
    store, [ident] = store_with(tmp_path, [{"role": "user", "content": [
        {"type": "text", "text": BIG[:150_000] + " MIDDLE-PASTE-55 " + BIG[150_000:]},
        {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}}]}])
    raw, _ = expand(store, id=ident)
    seen, pages = raw, 0
    while "reads on from there" in raw and pages < 100:
        offset = int(raw.split("offset=")[1].split(")")[0])
        raw, answer = expand(store, id=ident, offset=offset)
        assert answer["messages"][0]["content"].startswith(f"[... from character {offset:,} of ")
        seen += raw
        pages += 1
    assert "MIDDLE-PASTE-55" in seen and "[image_url part not shown]" in seen


def test_a_result_whose_call_carries_a_whole_file_can_be_read(tmp_path: Path) -> None:
    """ctx_expand(id=the result) returned the call alone (28,000 tokens), not the result asked for, and its
    note said to read the result with ctx_expand(id=the result): the model could never see it."""
    store, _ = store_with(tmp_path, write_call(("call_w", "wrote gen.py"),
                                               ("call_ci", '{"build_hash": "b7e3f0c9a1d2", "status": "green"}')))
    [hit] = search(store, "b7e3f0c9a1d2")
    raw, answer = expand(store, id=hit)
    assert COUNTER.count_text(raw) <= 4000
    assert hit in [m["id"] for m in answer["messages"]] and "b7e3f0c9a1d2" in raw
    assert answer["messages"][0]["tool_calls"][1]["id"] == "call_ci"  # the call still comes with it
    assert f"ctx_expand(id={hit})" not in answer.get("note", "")


def test_a_long_query_term_is_searched_by_its_start(tmp_path: Path) -> None:
    """A query of a few 10,000-character words made SQLite's trigram index hold every trigram's positions at
    once: 0.9 GB for two such words on a 0.8 MB archive, 22 GB (killed) for thirty on 25 MB. Each term is now
    searched by its first MAX_TERM_CHARS characters, and still finds its message."""
    blob = "".join(f"{i:x}" for i in range(4000))  # 14 KB without a space
    phrases, _ = archive_text.phrases(f"{blob} {blob[::-1]} {blob[1:]} {blob[2:]}")
    assert max(len(p) for p in phrases) <= archive_text.MAX_PHRASE_CHARS
    assert all(len(p) <= archive_text.MAX_TERM_CHARS for p in phrases if " " not in p)
    store, [_, ident] = store_with(tmp_path, [{"role": "user", "content": "unrelated"},
                                              {"role": "tool", "tool_call_id": "c", "content": f"x {blob} y"}])
    assert search(store, blob) == [ident]
    assert search(store, "中文" * 5000) == []  # a long Chinese run: a bounded number of pieces


# ------------------------------------------------------------------ the command line


def damaged_archive(home: Path) -> Path:
    """An archive whose header is fine and whose pages are not (it opens; reading fails)."""
    store = ArchiveStore(home / "ctx_archive.db")
    store.record(session_id="s", user_id="u", strategy="t", removed=[(0, {"role": "user", "content": "CODE-1"})])
    store.close()
    with sqlite3.connect(home / "ctx_archive.db") as db:
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.close()
    data = bytearray((home / "ctx_archive.db").read_bytes())
    for start in range(4096 * 2, len(data), 4096):
        data[start:start + 4096] = bytes((start // 4096 * 37 + n) % 251 for n in range(4096))
    (home / "ctx_archive.db").write_bytes(data)
    return home / "ctx_archive.db"


@pytest.mark.parametrize("command", [["stats"], ["search", "CODE"], ["show", "1"], ["purge", "--all", "-y"]])
def test_a_damaged_archive_is_exit_3_with_a_clear_error(command: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    home = Path(os.environ["HERMES_HOME"])
    home.mkdir(parents=True, exist_ok=True)
    path = damaged_archive(home)
    assert main(["archive", *command]) == 3  # was a traceback, exit 1
    err = capsys.readouterr().err
    assert "Traceback" not in err and f"the archive {path} is not usable" in err


@pytest.mark.parametrize("args", [["purge", "--older-than", "-1", "-y"], ["purge", "--older-than", "nan", "-y"],
                                  ["search", "CODE", "--limit", "99999999999999999999"]])
def test_bad_numbers_are_exit_4_and_delete_nothing(args: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    """--older-than -1 deleted every compaction (exit 0); a --limit past SQLite's integers was a traceback."""
    home = Path(os.environ["HERMES_HOME"])
    store = ArchiveStore(home / "ctx_archive.db")
    store.record(session_id="s", user_id="u", strategy="t", removed=[(0, {"role": "user", "content": "CODE-1"})])
    store.close()
    try:
        code = main(["archive", *args])
    except SystemExit as exited:  # "nan" is refused by the parser (a usage error), "-1" by the command
        code = exited.code
    assert code == 4
    assert "Traceback" not in capsys.readouterr().err
    assert ArchiveStore(home / "ctx_archive.db").stats()["compactions"] == 1


@pytest.mark.parametrize("content", ["text", "parts"])
def test_a_match_deep_in_a_long_message_is_read_in_one_call(tmp_path: Path, content: str) -> None:
    """The search result of a 2.4 MB paste gave no hint where its match was: reaching one at character
    1,200,000 took 157 ctx_expand calls following the cut notes. Its result now carries the offset."""
    text = "".join(f"row {i:07d} payload {'x' * 40}\n" for i in range(40_000))
    text = text[:1_200_000] + "MIDDLE-NEEDLE-31 " + text[1_200_000:]
    message = ({"role": "user", "content": text} if content == "text" else
               {"role": "user", "content": [{"type": "text", "text": text}, {"type": "image_url", "image_url": {}}]})
    store, [_, ident, small] = store_with(tmp_path, [{"role": "user", "content": "other"}, message,
                                                     {"role": "assistant", "content": "MIDDLE-NEEDLE-31 is short"}])
    raw = tools.handle("ctx_search", {"query": "MIDDLE-NEEDLE-31"}, store=store, scope=SCOPE, counter=COUNTER,
                       max_tokens=4000)
    results = {hit["id"]: hit for hit in json.loads(raw)["results"]}
    assert "offset" not in results[small]  # a short message is shown whole anyway
    page, _ = expand(store, id=ident, offset=results[ident]["offset"])
    assert "MIDDLE-NEEDLE-31" in page and COUNTER.count_text(page) <= 4000


def test_an_offset_past_the_end_is_an_error_and_the_last_page_shows_no_internal_key(tmp_path: Path) -> None:
    """ctx_expand(id, offset=10**12) answered "[... from character 1,000,000,000,000 of 20,999 ...]" and nothing
    else, and a page read from an offset that fitted whole carried the internal "_from" key."""
    store, [ident] = store_with(tmp_path, [{"role": "tool", "tool_call_id": "c", "content": "y" * 21_000}])
    _, answer = expand(store, id=ident, offset=10**12)
    assert "past the end" in answer["error"] and "21,000 characters" in answer["error"]
    _, answer = expand(store, id=ident, offset=20_000)
    [shown] = answer["messages"]
    assert set(shown) == {"id", "role", "content", "tool_call_id"} and shown["content"].endswith("y" * 1000)


def test_a_search_in_long_logs_holding_the_words_everywhere_snippets_only_what_it_shows(tmp_path: Path) -> None:
    """FTS5's snippet() takes time in proportion to a text's matches times its length, and it was made for every
    message that matched, not only those shown: common words over five 4.8 MB logs held a ctx_search for minutes
    (0.47 MB: 1 s). A long text's snippet is cut here around the first match, marked as FTS5 marks it; FTS5 makes
    the snippets of the short messages shown only."""
    store = ArchiveStore(tmp_path / "a.db", max_megabytes=500)
    line = "2026-05-01 12:00:01 INFO deploy cache timeout retry schema\\n"
    long_log = line * 5_000 + "ERROR marker-9 deploy cache timeout refused\\n" + line * 100
    messages = [{"role": "tool", "tool_call_id": f"c{i}", "content": long_log} for i in range(3)]
    messages += [{"role": "user", "content": f"short note {i}: deploy cache timeout"} for i in range(40)]
    store.record(session_id="s1", user_id="u1", strategy="t", removed=list(enumerate(messages)))
    statements: list[str] = []
    db = store._connect()
    db.set_trace_callback(statements.append)
    hits = store.search("deploy cache timeout", Scope(session_id="s1", user_id="u1"), limit=5)
    db.set_trace_callback(None)
    assert len(hits) == 5 and all("«" in h.snippet and "»" in h.snippet for h in hits)
    assert all(len(h.snippet) < 600 for h in hits)
    snippeted = [s for s in statements if "snippet(" in s]
    assert not any("bm25(" in s for s in snippeted)  # not while ranking every match: for the ids shown, after
    assert len(snippeted) <= 1
    marker = store.search("marker-9", Scope(session_id="s1", user_id="u1"), limit=1)
    assert "«marker-9»" in marker[0].snippet


@pytest.mark.parametrize(("asked", "ids"), [("#2", [2]), (" #1-#2 ", [1, 2]), ("#1-2", [1, 2]), ("1-#2", [1, 2])])
def test_ctx_expand_takes_an_id_as_the_cli_and_ctx_print_it(tmp_path: Path, asked: str, ids: list[int]) -> None:
    """The CLI and /ctx print archived ids as "#5"; ctx_expand refused that spelling (a red-team pass)."""
    store = ArchiveStore(tmp_path / "a.db")
    store.record(session_id="s1", user_id="u1", strategy="t",
                 removed=[(0, {"role": "user", "content": "first"}), (1, {"role": "user", "content": "second"})])
    answer = json.loads(tools.expand({"id": asked}, store=store, scope=Scope(session_id="s1", user_id="u1"),
                                     counter=get_counter(), max_tokens=1000))
    assert [m["id"] for m in answer["messages"]] == ids, answer
    bad = json.loads(tools.expand({"id": "##2"}, store=store, scope=Scope(session_id="s1", user_id="u1"),
                                  counter=get_counter(), max_tokens=1000))
    assert "error" in bad and "'##2'" in bad["error"]


def test_archive_show_cut_to_fit_says_how_to_read_on_with_its_own_options(capsys: pytest.CaptureFixture[str]) -> None:
    """The CLI's notes named the model's tool (``ctx_expand(id=1, offset=83) reads on``), which its user cannot call,
    and it had no offset to read on with (a newcomer's walk)."""
    home = Path(os.environ["HERMES_HOME"])
    text = "".join(f"line {i:05d} of the build log\n" for i in range(3_000)) + "THE-LAST-LINE"
    store = ArchiveStore(home / "ctx_archive.db")
    store.record(session_id="s", user_id="u", strategy="t", removed=[(0, {"role": "tool", "tool_call_id": "c",
                                                                           "content": text})])
    store.close()
    assert main(["archive", "show", "1", "--max-tokens", "400"]) == 0
    out = capsys.readouterr().out
    assert "ctx_expand" not in out
    offset = int(out.split("hermes-ctx archive show 1 --offset ", 1)[1].split()[0])
    assert main(["archive", "show", "1", "--offset", str(offset), "--max-tokens", "400"]) == 0
    assert text[offset:offset + 200] in capsys.readouterr().out.replace("\r", "")
    assert main(["archive", "show", "99"]) == 4
    assert "ids come from hermes-ctx archive search" in capsys.readouterr().err

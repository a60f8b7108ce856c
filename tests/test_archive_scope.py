"""The archive keeps deployments and users apart, stores any id and any text exactly, and forgets a
user for good (real SQLite files throughout)."""

from __future__ import annotations

import copy
import json
import os
import sqlite3
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from hermes_ctx_plugins import SessionInfo, load_host
from hermes_ctx_plugins.archive.changes import fingerprint
from hermes_ctx_plugins.cli import main
from hermes_ctx_plugins.manager import Host
from hermes_ctx_plugins.storage import ArchiveError, Scope
from hermes_ctx_plugins.storage.sqlite.archive import ArchiveStore
from hermes_ctx_plugins.storage.sqlite.archive_schema import SCHEMA_VERSION
from hermes_ctx_plugins.testing import make_transcript
from hermes_ctx_plugins.tokens import get_counter

CONFIG: dict[str, Any] = {
    "model": {"default": "gpt-4o", "context_length": 128_000},
    "ctx_plugins": {"compressor": "window", "memory": {"providers": []}, "deployments": {
        "blue": {}, "green": {},
        # names blue's namespace: shares blue's archive on purpose
        "canary": {"memory": {"providers": [], "namespace": "blue"}}}}}
ALICE = "alice-7f3k"
BOB = "bob-2m9q"


def home() -> Path:
    return Path(os.environ["HERMES_HOME"])


def archive_path() -> Path:
    return home() / "ctx_archive.db"


def host_in(deployment: str | None, **archive: Any) -> Host:
    config = json.loads(json.dumps(CONFIG))
    config["ctx_plugins"]["archive"] = archive
    return load_host(config, deployment=deployment)


def transcript(planted: str, seed: int = 3) -> list[dict[str, Any]]:
    """A conversation whose early part (which ``window`` drops) says ``planted``."""
    messages = make_transcript(seed, turns=30, images=False)
    messages[17] = {**messages[17], "content": f"{messages[17].get('content') or ''} the codeword is {planted}."}
    return messages


def archive_as(host: Host, session_id: str, user_id: str, planted: str, seed: int = 3) -> None:
    host.session_start(SessionInfo(session_id=session_id, user_id=user_id))
    assert host.compress(transcript(planted, seed), session=host.session(session_id), force=True).compressed


def tool(host: Host, name: str, session_id: str, **args: Any) -> dict[str, Any]:
    """A tool call with the session the hermes engine passes: the host's record of it."""
    assert host.archive is not None
    answer = host.archive.handle_tool_call(name, args, session=host.session(session_id),
                                           counter=get_counter("gpt-4o"))
    result = json.loads(answer)
    assert isinstance(result, dict)
    return result


def found(host: Host, session_id: str, query: str) -> list[int]:
    """The ids ``ctx_search`` returns whose expansion really contains ``query``."""
    ids = []
    for hit in tool(host, "ctx_search", session_id, query=query, limit=20)["results"]:
        if query in json.dumps(tool(host, "ctx_expand", session_id, id=hit["id"]), ensure_ascii=False):
            ids.append(hit["id"])
    return ids


def file_bytes() -> bytes:
    """Every byte the archive has on disk: the database, its WAL and shm, the spool files."""
    return b"".join(p.read_bytes() for p in sorted(home().glob("ctx_archive.db*")) if p.is_file())


# ------------------------------------------------------------------ deployments


@pytest.mark.parametrize("scope", ["session", "user"])
def test_the_same_user_in_two_deployments_sees_only_their_own_archive(scope: str) -> None:
    blue, green, top = host_in("blue", scope=scope), host_in("green", scope=scope), host_in(None, scope=scope)
    # the same user id AND the same session id in both deployments, one archive file
    archive_as(blue, "s-1", ALICE, "bluecodeword")
    archive_as(green, "s-1", ALICE, "greencodeword", seed=4)
    for host, own, other in ((blue, "bluecodeword", "greencodeword"), (green, "greencodeword", "bluecodeword")):
        assert found(host, "s-1", own)  # the owner finds it
        assert tool(host, "ctx_search", "s-1", query=other)["results"] == []
    blue_ids = found(blue, "s-1", "bluecodeword")
    for host in (green, top):
        answer = tool(host, "ctx_expand", "s-1", id=f"{min(blue_ids)}-{max(blue_ids)}")
        assert "no archived message" in answer["error"]
    top.session_start(SessionInfo(session_id="s-1", user_id=ALICE))
    assert tool(top, "ctx_search", "s-1", query="codeword")["results"] == []
    if scope == "user":  # another session of the same user: still only that deployment's
        blue.session_start(SessionInfo(session_id="s-2", user_id=ALICE))
        assert found(blue, "s-2", "bluecodeword")
        assert tool(blue, "ctx_search", "s-2", query="greencodeword")["results"] == []


def test_deployments_naming_the_same_namespace_share_its_archive() -> None:
    blue, canary, green = host_in("blue", scope="user"), host_in("canary", scope="user"), host_in("green", scope="user")
    archive_as(blue, "s-1", ALICE, "bluecodeword")
    canary.session_start(SessionInfo(session_id="s-9", user_id=ALICE))
    green.session_start(SessionInfo(session_id="s-9", user_id=ALICE))
    assert found(canary, "s-9", "bluecodeword")
    assert tool(green, "ctx_search", "s-9", query="bluecodeword")["results"] == []


# ------------------------------------------------------------------ ids and text stored exactly

HOSTILE = ["", "*", "%", "_", "../x", "x" * 10_000, "m\ud800", "m?", "m\\ud800", "m\\\\ud800", "\\",
           "'; DROP TABLE messages;--", "assistant", "ualice", "alice", "alice ", "ALICE", "\ud800\udc00", "\U00010000",
           "alice\x00", "9223372036854775808", "dblue-ualice", "alice_40_x", "alice@x"]


def test_hostile_ids_neither_crash_nor_alias(tmp_path: Path) -> None:
    store = ArchiveStore(tmp_path / "archive.db")
    owners = [(namespace, user) for namespace in ("", "blue", "m\ud800") for user in HOSTILE]
    codes = {owner: f"zq{n:03d}codeword" for n, owner in enumerate(owners)}
    for (namespace, user), code in codes.items():
        ids = store.record(session_id=user, user_id=user, namespace=namespace, strategy="window",
                           removed=[(0, {"role": "user", "content": f"{user} said {code}"})])
        assert ids, (namespace, user)  # archived, not spooled
    assert not store.spool.pending()
    for (namespace, user), code in codes.items():
        for scope in (Scope(session_id=user, user_id=user, namespace=namespace),
                      Scope(session_id="other", user_id=user, all_sessions=True, namespace=namespace)):
            if not user and scope.all_sessions:
                continue  # the anonymous user's archive is per session (see Archiver.scope)
            hits = store.search(code, scope, limit=20)
            [stored] = store.get([h.id for h in hits], scope)
            assert (stored.namespace, stored.user_id, stored.session_id) == (namespace, user, user)
            assert stored.message["content"] == f"{user} said {code}"  # exactly, surrogates and all
            others = [c for o, c in codes.items() if o != (namespace, user)]
            assert not store.search(" ".join(others[:20]), scope, limit=20)
            assert not [s for s in store.get(list(range(1, len(owners) + 1)), scope) if s.id != stored.id]
    assert store.stats()["messages"] == len(owners)
    store.close()


def test_a_lone_surrogate_in_removed_text_loses_nothing() -> None:
    """Regression (issue 13 #3): one lone surrogate made the whole compaction's archive fail."""
    host = host_in(None)
    messages = transcript("surrogatecodeword")
    for i in (9, 12, 20):
        messages[i] = {**messages[i], "content": f"odd \ud800 marker{i} \udfff and \ud800\udc00 and \\ud800 literal"}
    before = copy.deepcopy(messages)  # not a JSON round trip: that would join \ud800\udc00 into one character
    host.session_start(SessionInfo(session_id="s-\ud800", user_id="m\ud800"))
    result = host.compress(messages, session=host.session("s-\ud800"), force=True)
    assert result.compressed and host.isolator.status("archive") == "ok"
    survived = {fingerprint(m) for m in result.messages}
    gone = [m for m in before if fingerprint(m) not in survived]
    assert [m for m in gone if "\ud800" in str(m.get("content"))]
    expanded: dict[int, dict[str, Any]] = {}
    for archive_id in range(1, len(gone) + 1):
        for message in tool(host, "ctx_expand", "s-\ud800", id=archive_id)["messages"]:
            expanded[message["id"]] = message
    assert sorted(expanded) == list(range(1, len(gone) + 1))  # every removed message was archived
    for original, (_, back) in zip(gone, sorted(expanded.items()), strict=True):
        for key in ("role", "content", "tool_calls", "tool_call_id"):
            assert back.get(key) == (original.get(key) or None), key  # exactly as it was
    [hit, *_] = tool(host, "ctx_search", "s-\ud800", query="\ud800 marker12")["results"]
    back = tool(host, "ctx_expand", "s-\ud800", id=hit["id"])["messages"]
    assert messages[12]["content"] in [m.get("content") for m in back]
    assert tool(host, "ctx_search", "s-\ud800", query="\\ud800 literal")["results"]
    other = host_in(None)  # "m?" is another user: the replacement character never aliases
    other.session_start(SessionInfo(session_id="s-\ud800", user_id="m?"))
    assert tool(other, "ctx_search", "s-\ud800", query="surrogatecodeword")["results"] == []


def test_any_text_survives_the_spool() -> None:
    path = archive_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"this is not a database" * 100)  # unusable: the compaction is spooled
    host = host_in("blue")
    odd = "spooledcodeword \ud800 \u2028 \x85 \x00 部署"  # JSON leaves U+2028 and U+0085 raw
    archive_as(host, "s-1", "m\ud800", odd)
    spool = path.with_name(path.name + ".spool.jsonl")
    assert "spooledcodeword" in spool.read_text(encoding="utf-8")  # valid UTF-8, nothing lost
    with open(spool, "ab") as handle:  # and a process killed mid-append, inside a character
        handle.write('{"v": 2, "removed": [[0, "部'.encode()[:-1])
    host.shutdown()
    path.rename(path.with_suffix(".broken"))
    again = host_in("blue")
    archive_as(again, "s-2", BOB, "othercodeword")  # the next write imports the spool
    assert not spool.exists()
    again.session_start(SessionInfo(session_id="s-1", user_id="m\ud800"))
    [hit, *_] = tool(again, "ctx_search", "s-1", query="spooledcodeword")["results"]
    assert f"{odd}." in tool(again, "ctx_expand", "s-1", id=hit["id"])["messages"][0]["content"]


def test_a_shared_threads_spooled_compaction_keeps_each_speaker_and_goes_with_a_forgotten_one(
        tmp_path: Path) -> None:
    """A compaction of a thread several users speak in, spooled while the archive is locked, is imported with each
    message its speaker's; one still in the spool goes whole when a user with a turn in it is forgotten."""
    path = tmp_path / "a.db"
    store = ArchiveStore(path)
    store.record(session_id="x", user_id="u", strategy="window", removed=[(0, {"role": "user", "content": "x"})])
    turns = [(0, {"role": "user", "content": "[alice] heron 1"}), (1, {"role": "user", "content": "[bob] heron 2"})]
    holder = sqlite3.connect(path, timeout=0.1)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        store._timeout = 0.2
        store.close()
        assert store.record(session_id="t1", user_id="bob", strategy="window", removed=turns,
                            owners=["alice", "bob"]) == []
        assert store.record(session_id="t2", user_id="bob", strategy="window", removed=turns,
                            owners=["carol", "bob"]) == []
        assert store.stats()["spooled"] == 2
        [report] = store.forget_user("carol")
        assert report.removed == 2 and store.stats()["spooled"] == 1
    finally:
        holder.rollback()
        holder.close()
    store.record(session_id="y", user_id="u", strategy="window", removed=[(0, {"role": "user", "content": "y"})])
    everything = Scope(session_id="", everything=True)
    found = store.get([h.id for h in store.search("heron", everything, limit=10)], everything)
    assert sorted((s.session_id, s.user_id) for s in found) == [("t1", "alice"), ("t1", "bob")]
    store.close()


def test_a_spool_line_written_before_the_stored_form_is_imported_exactly(tmp_path: Path) -> None:
    store = ArchiveStore(tmp_path / "archive.db")
    old = {"session_id": "s\\1", "user_id": "dom\\ain", "strategy": "window", "created": time.time(),
           "tokens_before": 0, "tokens_after": 0,
           "removed": [[0, {"role": "user", "content": "C:\\Users\\u00e9 oldcodeword"}]]}
    store.spool.path.write_text(json.dumps(old) + "\n", encoding="utf-8")
    store.record(session_id="s2", user_id="x", strategy="window", removed=[(0, {"role": "user", "content": "hi"})],
                 namespace="blue")
    scope = Scope(session_id="s\\1", user_id="dom\\ain")
    [hit] = store.search("oldcodeword", scope)
    [stored] = store.get([hit.id], scope)
    assert stored.message["content"] == "C:\\Users\\u00e9 oldcodeword" and stored.namespace == ""
    assert store.search("oldcodeword", Scope(session_id="s\\1", user_id="dom\\ain", namespace="blue")) == []
    store.close()


# ------------------------------------------------------------------ forgetting a user


def spool_as(user_id: str, planted: str, *, session_id: str, namespace: str) -> None:
    """Archive while another process holds the database: the compaction goes to the spool."""
    holder = sqlite3.connect(archive_path(), timeout=0.1)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        store = ArchiveStore(archive_path(), timeout=0.1)
        assert store.record(session_id=session_id, user_id=user_id, namespace=namespace, strategy="window",
                            removed=[(0, {"role": "user", "content": f"the codeword is {planted}"})]) == []
        store.close()
    finally:
        holder.rollback()
        holder.close()


def fts_terms() -> set[str]:
    """Every term the full-text index holds (read through a temporary vocabulary table)."""
    db = sqlite3.connect(archive_path())
    try:
        db.execute("CREATE VIRTUAL TABLE temp.vocab USING fts5vocab(main, messages_fts, row)")
        return {row[0] for row in db.execute("SELECT term FROM temp.vocab")}
    finally:
        db.close()


def test_forget_user_leaves_no_trace_and_keeps_everyone_else() -> None:
    blue, green = host_in("blue", scope="user"), host_in("green", scope="user")
    archive_as(blue, "s-a", ALICE, "zqxvjkwyph")
    archive_as(blue, "s-b", BOB, "bobcodeword", seed=4)
    archive_as(green, "s-a", ALICE, "greencodeword", seed=5)
    # archived before hermes told the host who the session's user was
    assert blue.archive is not None
    blue.archive.store.record(session_id="s-a", user_id="", namespace="blue", strategy="window",
                              removed=[(0, {"role": "user", "content": "early zqxvjkwyph note"})])
    blue.archive.store.record(session_id="s-anon", user_id="", namespace="blue", strategy="window",
                              removed=[(0, {"role": "user", "content": "unattributed anoncodeword"})])
    spool_as(ALICE, "zqxvjkwyph spooled", session_id="s-a", namespace="blue")
    spool_as(BOB, "bobspooledcodeword", session_id="s-b", namespace="blue")
    trigrams = {"zqx", "qxv", "xvj", "vjk", "jkw", "kwy", "wyp", "yph"}
    assert b"zqxvjkwyph" in file_bytes() and ALICE.encode() in file_bytes()
    assert trigrams <= fts_terms()

    [report] = blue.archive.forget_user(ALICE, namespaces=["blue"])
    assert report.ok, report.error
    assert report.store == f"archive {archive_path()}"
    assert report.removed is not None and report.removed > 3  # her compaction, the early note, the spooled one
    assert "1 messages with no user id" in report.detail and "were kept" in report.detail
    blue.shutdown()
    green.shutdown()
    assert b"zqxvjkwyph" not in file_bytes()
    assert not trigrams & fts_terms()

    blue, green = host_in("blue", scope="user"), host_in("green", scope="user")
    archive_as(blue, "s-c", "carol", "carolcodeword", seed=6)  # imports bob's spooled compaction
    assert found(blue, "s-a", "zqxvjkwyph") == []
    blue.session_start(SessionInfo(session_id="s-b", user_id=BOB))
    assert found(blue, "s-b", "bobcodeword") and found(blue, "s-b", "bobspooledcodeword")
    blue.session_start(SessionInfo(session_id="s-anon"))
    assert found(blue, "s-anon", "anoncodeword")
    green.session_start(SessionInfo(session_id="s-a", user_id=ALICE))
    assert found(green, "s-a", "greencodeword")  # another namespace: not asked to forget it

    assert green.archive is not None
    [report] = green.archive.forget_user(ALICE)  # every namespace
    assert report.ok and report.removed
    green.shutdown()
    blue.shutdown()
    assert ALICE.encode() not in file_bytes() and b"greencodeword" not in file_bytes()
    assert b"bobcodeword" in file_bytes()


def test_forget_user_compares_ids_exactly(tmp_path: Path) -> None:
    store = ArchiveStore(tmp_path / "archive.db")
    for n, user in enumerate(HOSTILE):
        store.record(session_id=f"s{n}", user_id=user, strategy="window",
                     removed=[(0, {"role": "user", "content": f"zq{n:03d}codeword"})])
    [report] = store.forget_user("m\ud800")
    assert report.ok and report.removed == 1
    left = {s.user_id for s in store.get(list(range(1, 100)), Scope(session_id="", everything=True))}
    assert left == set(HOSTILE) - {"m\ud800"}
    [report] = store.forget_user("%")
    assert report.removed == 1 and "%" not in {s.user_id for s in store.get(list(range(1, 100)),
                                                                               Scope(session_id="", everything=True))}
    store.close()


def test_forget_user_reports_an_unusable_archive_and_still_clears_the_spool(tmp_path: Path) -> None:
    path = tmp_path / "archive.db"
    path.write_bytes(b"this is not a database" * 100)
    store = ArchiveStore(path)
    for user, code in ((ALICE, "alicecodeword"), (BOB, "bobcodeword")):  # both spooled
        assert store.record(session_id="s", user_id=user, strategy="window",
                            removed=[(0, {"role": "user", "content": code})]) == []
    [report] = store.forget_user(ALICE)
    assert not report.ok and str(path) in report.error and "not usable" in report.error
    assert report.removed == 1
    spooled = store.spool.path.read_bytes()
    assert b"alicecodeword" not in spooled and b"bobcodeword" in spooled
    store.close()


def test_forget_user_without_an_archive_creates_none(tmp_path: Path) -> None:
    store = ArchiveStore(tmp_path / "archive.db")
    assert store.forget_user(ALICE, namespaces=["blue"])[0].removed == 0
    assert not (tmp_path / "archive.db").exists()
    with pytest.raises(TypeError, match="got the string 'blue'"):
        store.forget_user(ALICE, namespaces="blue")


def test_cli_purge_user_forgets_in_the_deployments_namespace(capsys: pytest.CaptureFixture[str]) -> None:
    home().mkdir(parents=True, exist_ok=True)
    (home() / "config.yaml").write_text(yaml.safe_dump(CONFIG), encoding="utf-8")
    archive_as(host_in("blue"), "s-1", ALICE, "bluecodeword")
    archive_as(host_in("green"), "s-1", ALICE, "greencodeword", seed=4)
    capsys.readouterr()
    assert main(["--deployment", "blue", "archive", "search", "codeword", "--user", ALICE, "--json"]) == 0
    hits = json.loads(capsys.readouterr().out)
    assert hits and {h["namespace"] for h in hits} == {"blue"}
    assert main(["--deployment", "blue", "archive", "purge", "--user", ALICE, "--yes"]) == 0
    out = capsys.readouterr().out
    assert f"forgot user {ALICE!r} of deployment 'blue': removed " in out
    assert b"bluecodeword" not in file_bytes()
    assert main(["--deployment", "green", "archive", "search", "greencodeword", "--user", ALICE, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)


# ------------------------------------------------------------------ the first layout

# The DDL of the first archive layout, verbatim (before namespaces and the stored form).
FIRST_LAYOUT = """
CREATE TABLE IF NOT EXISTS compactions (
    id INTEGER PRIMARY KEY, session_id TEXT NOT NULL, user_id TEXT NOT NULL, strategy TEXT NOT NULL,
    created REAL NOT NULL, removed INTEGER NOT NULL, tokens_before INTEGER NOT NULL, tokens_after INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS messages (
    id INTEGER PRIMARY KEY,
    compaction_id INTEGER NOT NULL REFERENCES compactions(id) ON DELETE CASCADE,
    session_id TEXT NOT NULL, user_id TEXT NOT NULL, seq INTEGER NOT NULL, position INTEGER NOT NULL,
    role TEXT NOT NULL, tool_call_id TEXT NOT NULL DEFAULT '', call_ids TEXT NOT NULL DEFAULT '',
    text TEXT NOT NULL, message TEXT NOT NULL, created REAL NOT NULL);
CREATE INDEX IF NOT EXISTS messages_session ON messages(session_id, seq);
CREATE INDEX IF NOT EXISTS messages_user ON messages(user_id);
CREATE INDEX IF NOT EXISTS compactions_created ON compactions(created);
CREATE VIRTUAL TABLE IF NOT EXISTS messages_fts USING fts5(
    text, content='messages', content_rowid='id', tokenize='trigram');
CREATE TRIGGER IF NOT EXISTS messages_ai AFTER INSERT ON messages BEGIN
    INSERT INTO messages_fts(rowid, text) VALUES (new.id, new.text);
END;
CREATE TRIGGER IF NOT EXISTS messages_ad AFTER DELETE ON messages BEGIN
    INSERT INTO messages_fts(messages_fts, rowid, text) VALUES ('delete', old.id, old.text);
END;
"""
OLD_MESSAGES: list[dict[str, Any]] = [
    {"role": "user", "content": "where is C:\\Users\\dom\\u00e9 and the oldcodeword?"},
    {"role": "assistant", "content": "plain old text, second oldcodeword", "tool_calls": [
        {"id": "call\\1", "type": "function", "function": {"name": "ls", "arguments": "{\"p\": \"a\\\\b\"}"}}]},
    {"role": "tool", "tool_call_id": "call\\1", "content": "a\\b listed"},
]


def first_layout_archive(path: Path) -> None:
    """An archive the way the first layout wrote it: ids and text raw, no namespace."""
    db = sqlite3.connect(path)
    db.executescript(FIRST_LAYOUT)
    db.execute("INSERT INTO compactions VALUES (1, 's\\1', 'dom\\ain', 'window', ?, 3, 0, 0)", (time.time(),))
    for seq, message in enumerate(OLD_MESSAGES, 1):
        text = "\n".join([str(message["content"]), *(f"{c['function']['name']}({c['function']['arguments']})"
                                                      for c in message.get("tool_calls", []))])
        call_ids = " ".join(c["id"] for c in message.get("tool_calls", []))
        db.execute("INSERT INTO messages (compaction_id, session_id, user_id, seq, position, role, tool_call_id, "
                   "call_ids, text, message, created) VALUES (1, 's\\1', 'dom\\ain', ?, ?, ?, ?, ?, ?, ?, ?)",
                   (seq, seq, message["role"], message.get("tool_call_id", ""), call_ids, text,
                    json.dumps(message, ensure_ascii=False), time.time()))
    db.commit()
    db.close()


def test_an_archive_of_the_first_layout_is_migrated_exactly(tmp_path: Path) -> None:
    path = tmp_path / "archive.db"
    first_layout_archive(path)
    store = ArchiveStore(path)
    scope = Scope(session_id="s\\1", user_id="dom\\ain")  # the top level's namespace, ""
    hits = store.search("oldcodeword", scope)
    assert len(hits) == 2 and {h.namespace for h in hits} == {""}
    assert store.search("Users", scope)  # the index was rebuilt over the rewritten text
    stored = store.get([1, 2, 3], scope)
    assert [s.message for s in stored] == OLD_MESSAGES  # backslashes and a literal \u00e9 unchanged
    assert {(s.session_id, s.user_id) for s in stored} == {("s\\1", "dom\\ain")}
    assert [s.id for s in store.partners(stored[1], scope)] == [3]  # the tool pairing survived
    assert store.search("oldcodeword", Scope(session_id="s\\1", user_id="dom\\ain", namespace="blue")) == []
    assert store.record(session_id="s\\1", user_id="dom\\ain", namespace="blue", strategy="window",
                        removed=[(0, {"role": "user", "content": "newcodeword"})])
    assert store.search("newcodeword", scope) == []
    store.close()
    db = sqlite3.connect(path)
    assert db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    columns = [row[1] for row in db.execute("PRAGMA table_info(messages)")]
    db.close()
    fresh = tmp_path / "fresh.db"
    new = ArchiveStore(fresh)
    new.stats()
    new.close()
    db = sqlite3.connect(fresh)
    assert [row[1] for row in db.execute("PRAGMA table_info(messages)")] == columns  # same layout either way
    db.close()
    store = ArchiveStore(path)
    [report] = store.forget_user("dom\\ain", namespaces=[""])
    assert report.removed == 3  # not the one archived in "blue" since
    store.close()


def test_an_archive_of_a_newer_layout_is_refused_and_the_compaction_spooled(tmp_path: Path) -> None:
    path = tmp_path / "archive.db"
    db = sqlite3.connect(path)
    db.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    db.close()
    store = ArchiveStore(path)
    with pytest.raises(ArchiveError, match=f"{path}.*layout {SCHEMA_VERSION + 1}.*upgrade"):
        store.stats()
    assert store.record(session_id="s", user_id="u", strategy="window", removed=[(0, {"role": "user"})]) == []
    assert store.spool.pending()
    store.close()


def test_a_layout_2_archive_gains_the_compaction_index_and_keeps_its_text_exactly(tmp_path: Path) -> None:
    """Layout 3 only adds ``messages(compaction_id)``: purging old compactions (and the cascade from
    ``compactions``) scanned every message without it. The text of a layout-2 file is already in
    stored form and must not be rewritten a second time (a backslash would double)."""
    path = tmp_path / "archive.db"
    store = ArchiveStore(path)
    message = {"role": "user", "content": "C:\\deploy\\port 8443 \\u00e9 and a lone \udc80 surrogate"}
    [kept] = store.record(session_id="s\\1", user_id="dom\\ain", strategy="window", removed=[(0, message)])
    store.close()
    db = sqlite3.connect(path)
    db.execute("DROP INDEX messages_compaction")  # the file exactly as layout 2 left it
    db.execute("PRAGMA user_version = 2")
    db.commit()
    db.close()

    store = ArchiveStore(path)
    scope = Scope(session_id="s\\1", user_id="dom\\ain")
    [stored] = store.get([kept], scope)
    assert stored.message == message and (stored.session_id, stored.user_id) == ("s\\1", "dom\\ain")
    assert store.search("deploy\\port", scope)
    store.close()
    db = sqlite3.connect(path)
    assert db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION == 4
    plan = " ".join(row[-1] for row in db.execute(
        "EXPLAIN QUERY PLAN DELETE FROM messages WHERE compaction_id IN (?, ?)", (1, 2)))
    db.close()
    assert "messages_compaction" in plan, plan  # a lookup, not a scan of the whole table

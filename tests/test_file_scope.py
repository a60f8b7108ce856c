"""The ``file`` provider with many owners: one MEMORY.md / USER.md pair per (deployment, user)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from hermes_ctx_plugins import SessionInfo, load_host
from hermes_ctx_plugins.cli import main
from hermes_ctx_plugins.memory.file.provider import FileProvider, memory_folder

HOSTILE_IDS = ["", " ", "*", "%", "../x", "..", "/etc", "x" * 10_000, "m\ud800", "m?", "'; DROP TABLE x;--",
               "hermes", "alice@example.com", "alice_40_example_2e_com", "alice-example-com", "用户",
               "a/b", "a\\b", "a\x00b", "CON", "u", "d"]


def home() -> Path:
    return Path(os.environ["HERMES_HOME"])


def provider(**config: Any) -> FileProvider:
    host = load_host({"ctx_plugins": config})
    [file] = [p for p in host.memory_providers if p.name == "file"]
    assert isinstance(file, FileProvider)
    return file


def remember(p: FileProvider, session: SessionInfo, fact: str) -> dict[str, Any]:
    answer: dict[str, Any] = json.loads(p.handle_tool_call(
        "memory", {"target": "user", "action": "add", "content": fact}, session=session))
    return answer


def recall(p: FileProvider, session: SessionInfo) -> str:
    p.on_session_start(session)
    return p.system_prompt_block(session=session)


def test_each_owner_recalls_their_own_and_nobody_elses() -> None:
    p = provider()
    owners = [SessionInfo(session_id=f"s-{d}-{u}", user_id=u, deployment=d)
              for d in ("", "support", "research") for u in ("", "alice", "bob")]
    for n, owner in enumerate(owners):
        assert remember(p, owner, f"codeword C{n:02d}Z")["success"]
    for n, owner in enumerate(owners):
        seen = recall(p, SessionInfo(session_id=f"later-{n}", user_id=owner.user_id, deployment=owner.deployment))
        assert f"C{n:02d}Z" in seen
        assert [m for m in range(len(owners)) if m != n and f"C{m:02d}Z" in seen] == []
    # the anonymous top-level owner is hermes' single-user case: hermes' own file, byte for byte
    assert (home() / "memories" / "USER.md").read_text(encoding="utf-8") == "codeword C00Z"


def test_hostile_ids_neither_crash_nor_alias_and_stay_inside_the_folder() -> None:
    p = provider()
    sessions = [SessionInfo(session_id=f"s{n}", user_id=user) for n, user in enumerate(HOSTILE_IDS)]
    for n, session in enumerate(sessions):
        assert remember(p, session, f"codeword H{n:02d}Q")["success"], session.user_id[:20]
    folders = {memory_folder(home(), "", s.user_id) for s in sessions}
    assert len(folders) == len(sessions)  # one folder each: nobody aliased
    root = (home() / "memories").resolve()
    for folder in folders:
        assert folder.resolve().is_relative_to(root) and folder.is_dir()
        assert all(len(part) <= 255 for part in folder.parts)
    for n, session in enumerate(sessions):
        seen = recall(p, session)
        assert f"H{n:02d}Q" in seen and [m for m in range(len(sessions)) if m != n and f"H{m:02d}Q" in seen] == []


@given(st.lists(st.text(max_size=40), min_size=2, max_size=4, unique=True))
def test_any_two_distinct_ids_get_distinct_folders(ids: list[str]) -> None:
    folders = {memory_folder(Path("/h"), dep, user) for dep in ("", "x") for user in ids}
    assert len(folders) == 2 * len(ids)


@given(user=st.text(max_size=30))
def test_any_text_id_round_trips(user: str) -> None:
    # a fresh home per example (the test's HERMES_HOME is shared by hypothesis' examples)
    p = FileProvider(hermes_home=home() / f"h{len(list(home().glob('h*')))}")
    session = SessionInfo(session_id="s", user_id=user, deployment="d")
    remember(p, session, "codeword RT77")
    assert "RT77" in recall(p, session)
    assert "RT77" not in recall(p, SessionInfo(session_id="o", user_id=user + "x", deployment="d"))



def test_staged_writes_wait_in_the_owners_folder() -> None:
    p = provider(options={"file": {"write_approval": "stage"}})
    alice = SessionInfo(session_id="a", user_id="alice", deployment="support")
    assert json.loads(p.handle_tool_call("memory", {"target": "user", "action": "add", "content": "likes tea"},
                                         session=alice))["staged"]
    assert len(p.owner(alice).pending.items()) == 1
    assert p.pending.items() == []  # not in the anonymous owner's queue


def test_forget_user_removes_every_file_of_that_user_only() -> None:
    p = provider()
    alice_support = SessionInfo(session_id="a1", user_id="alice", deployment="support")
    alice_research = SessionInfo(session_id="a2", user_id="alice", deployment="research")
    bob = SessionInfo(session_id="b1", user_id="bob", deployment="support")
    for session, word in ((alice_support, "AS11"), (alice_research, "AR22"), (bob, "BS33")):
        remember(p, session, f"codeword {word}")
    report = p.forget_user("alice", namespaces=["support"])
    assert [f.removed for f in report] == [1] and all(f.ok for f in report)
    assert "AS11" not in recall(p, SessionInfo(session_id="a3", user_id="alice", deployment="support"))
    assert "AR22" in recall(p, SessionInfo(session_id="a4", user_id="alice", deployment="research"))
    p.forget_user("alice")  # every namespace
    everything = b"".join(f.read_bytes() for f in (home() / "memories").rglob("*") if f.is_file())
    assert b"AS11" not in everything and b"AR22" not in everything
    assert b"BS33" in everything and "BS33" in recall(p, SessionInfo(session_id="b2", user_id="bob",
                                                                       deployment="support"))


def test_forget_the_anonymous_owner_keeps_the_other_owners() -> None:
    p = provider()
    remember(p, SessionInfo(session_id="s"), "codeword AN01")
    remember(p, SessionInfo(session_id="t", user_id="carol"), "codeword CA02")
    p.forget_user("", namespaces=[""])
    assert not (home() / "memories" / "USER.md").exists()
    assert "CA02" in recall(p, SessionInfo(session_id="u", user_id="carol"))


def test_cli_forget_reports_per_store_and_refuses_without_a_terminal(capsys: pytest.CaptureFixture[str]) -> None:
    p = provider()
    remember(p, SessionInfo(session_id="s", user_id="dave"), "codeword DV03")
    assert main(["forget", "--user", "dave"]) == 4  # no terminal, no --yes: nothing deleted
    assert "--yes" in capsys.readouterr().err
    assert "DV03" in recall(p, SessionInfo(session_id="t", user_id="dave"))
    assert main(["forget", "--user", "dave", "--yes", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["ok"] and any(s["store"].startswith("file ") and s["removed"] == 1 for s in report["stores"])
    assert "DV03" not in recall(p, SessionInfo(session_id="u", user_id="dave"))


def test_cli_shows_and_edits_one_users_files(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    config = tmp_path / "config.yaml"
    config.write_text("ctx_plugins:\n  deployments:\n    support: {}\n")
    p = provider()
    remember(p, SessionInfo(session_id="s", user_id="erin", deployment="support"), "codeword ER04")
    assert main(["--config", str(config), "--deployment", "support", "memory", "--target", "user",
                 "show", "--user", "erin"]) == 0
    assert "ER04" in capsys.readouterr().out
    assert main(["--config", str(config), "memory", "--target", "user", "show", "--user", "erin"]) == 0
    assert "ER04" not in capsys.readouterr().out  # the top-level erin is someone else
    assert main(["--config", str(config), "--deployment", "support", "memory", "--target", "user",
                 "add", "likes rust", "--user", "erin"]) == 0
    assert "likes rust" in recall(p, SessionInfo(session_id="t", user_id="erin", deployment="support"))


def test_deployments_share_memories_only_when_they_name_one_namespace() -> None:
    config = {"ctx_plugins": {"memory": {"providers": ["file"]}, "deployments": {
        "sales": {"memory": {"namespace": "crm"}}, "support": {"memory": {"namespace": "crm"}}, "lab": {}}}}
    hosts = {name: load_host(config, deployment=name) for name in ("sales", "support", "lab")}
    assert hosts["sales"].config.provider_names == ("file",)  # a deployment's memory: inherits key by key
    files = {name: next(p for p in host.memory_providers if isinstance(p, FileProvider))
             for name, host in hosts.items()}
    hosts["sales"].session_start(SessionInfo(session_id="s1", user_id="gil"))
    remember(files["sales"], hosts["sales"].session("s1"), "codeword SH05")
    support = hosts["support"].scoped(SessionInfo(session_id="s2", user_id="gil"))
    lab = hosts["lab"].scoped(SessionInfo(session_id="s3", user_id="gil"))
    assert support.deployment == "crm" and lab.deployment == "lab"
    assert "SH05" in recall(files["support"], support)  # shared, as configured
    assert "SH05" not in recall(files["lab"], lab)  # not shared: its own namespace


_ANY = st.recursive(st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), st.text()),
                    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
                    max_leaves=8)


@given(args=st.fixed_dictionaries(
    {"target": st.sampled_from(["memory", "user"])},
    optional={"action": st.sampled_from(["add", "replace", "remove"]) | _ANY, "content": st.text() | _ANY,
              "old_text": st.text() | _ANY, "operations": _ANY}))
@example(args={"target": "user", "action": "add", "content": "likes \ud800 tea"})  # raised UnicodeEncodeError
@example(args={"target": "memory", "operations": [{"action": "replace", "old_text": "\udfff", "content": "x"}]})
def test_the_memory_tool_answers_any_arguments_without_raising(args: dict[str, Any]) -> None:
    """Issue 13: arbitrary Unicode (lone surrogates included) and ints through the memory tool."""
    p = FileProvider(hermes_home=home() / "any-args")
    session = SessionInfo(session_id="s", user_id="\ud800x", deployment="d")
    answer = json.loads(p.handle_tool_call("memory", args, session=session))
    assert isinstance(answer, dict) and "success" in answer


def test_forget_waits_for_a_write_in_flight_so_nothing_forgotten_comes_back() -> None:
    """A write that re-read the file under hermes' lock must not put back what forget removed."""
    import threading

    pytest.importorskip("tools.memory_tool", reason="the hermes extra is not installed")
    from hermes_ctx_plugins.hermes.scoped_memory import ScopedMemoryStore

    p = provider()
    folder = memory_folder(home(), "d", "alice")
    store = ScopedMemoryStore(folder, memory_char_limit=2200, user_char_limit=1375)
    store.load_from_disk()
    store.add("user", "ALICE-OLD-SECRET-1 lives at 12 Elm St")
    reloaded, go = threading.Event(), threading.Event()
    save = store.save_to_disk

    def slow_save(target: str) -> None:  # hermes' add() re-read the file under its lock, about to save
        reloaded.set()
        go.wait(5)
        save(target)

    store.save_to_disk = slow_save  # type: ignore[method-assign]
    writer = threading.Thread(target=lambda: store.add("user", "new harmless fact"))
    writer.start()
    assert reloaded.wait(5)
    forgetting = threading.Thread(target=lambda: p.forget_user("alice", namespaces=["d"]))
    forgetting.start()
    forgetting.join(0.5)
    assert forgetting.is_alive()  # it waits for the writer's lock ...
    go.set()
    writer.join()
    forgetting.join(5)
    text = (folder / "USER.md").read_text(encoding="utf-8") if (folder / "USER.md").exists() else ""
    assert "ALICE-OLD-SECRET-1" not in text  # ... so the old entries stay gone


def test_a_session_id_is_no_proof_of_who_asks_for_a_snapshot() -> None:
    p = provider()
    alice, bob = (SessionInfo(session_id="same", user_id=u) for u in ("alice", "bob"))
    remember(p, alice, "codeword SN06")
    assert "SN06" in recall(p, alice)
    assert "SN06" not in p.system_prompt_block(session=bob)  # same session id, another owner


def test_owner_folders_differ_where_a_file_system_ignores_case() -> None:
    names = {memory_folder(Path("/h"), dep, user).as_posix().lower()
             for dep in ("support", "Support") for user in ("alice", "Alice", "ALICE")}
    assert len(names) == 6

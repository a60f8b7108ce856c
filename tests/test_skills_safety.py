"""Skill writes never leave ``skills/<name>/``: real symbolic links (the skill folder, SKILL.md, a
folder inside the skill, its lock, dangling ones) are refused naming the path, with nothing
written outside; supporting-file paths and sizes are bounded."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from hermes_ctx_plugins.memory.file import skills as skills_module
from hermes_ctx_plugins.memory.file.skills import MAX_FILE_BYTES, MAX_SUPPORT_DEPTH, SkillStore

SKILL = """---
name: deploy-staging
description: Ship the current branch to staging and check it answers.
---
# Deploy to staging

1. Run `make release TARGET=staging`.
2. Check `curl -fsS https://staging.example.test/health`.
"""
OTHER = SKILL.replace("Check `curl", "Then check `curl")


def call(store: SkillStore, **args: Any) -> dict[str, Any]:
    result = json.loads(store.handle_tool_call(args))
    assert isinstance(result, dict)
    return result


def snapshot(root: Path) -> dict[str, str]:
    """Every entry under ``root`` (links not followed) with what it holds."""
    found = {}
    for path in sorted(root.rglob("*")):
        key = str(path.relative_to(root))
        if path.is_symlink():
            found[key] = "-> " + os.readlink(path)
        elif path.is_dir():
            found[key] = "<dir>"
        else:
            found[key] = path.read_text(encoding="utf-8", errors="replace")
    return found


@pytest.fixture
def store(tmp_path: Path) -> SkillStore:
    return SkillStore(tmp_path / "home" / "skills")


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A folder the model must never write into, with a file of the user's in it."""
    folder = tmp_path / "outside"
    folder.mkdir()
    (folder / "SKILL.md").write_text(SKILL, encoding="utf-8")  # e.g. a skill in a git checkout
    (folder / "notes.txt").write_text("the user's own file\n", encoding="utf-8")
    return folder


def refused(result: dict[str, Any], path: Path) -> None:
    assert result["success"] is False, result
    assert f"refused: {path} is a symbolic link" in result["error"], result["error"]
    assert "nothing was written" in result["error"]


EVERY_WRITE = [
    {"action": "edit", "content": OTHER},
    {"action": "patch", "old_string": "Check `curl", "new_string": "Then check `curl"},
    {"action": "write_file", "file_path": "references/notes.md", "file_content": "x"},
]


def test_a_symlinked_skill_folder_is_never_written_through(store: SkillStore, outside: Path) -> None:
    store.root.mkdir(parents=True)
    (store.root / "deploy-staging").symlink_to(outside, target_is_directory=True)
    before = snapshot(outside)
    for args in [{"action": "create", "content": SKILL}, *EVERY_WRITE]:
        refused(call(store, name="deploy-staging", **args), store.root / "deploy-staging")
    assert snapshot(outside) == before
    # a real skill folder beside it is written as usual
    assert call(store, action="create", name="real-skill", content=SKILL.replace("deploy-staging", "real-skill"))[
        "success"]
    assert call(store, action="patch", name="real-skill", old_string="Check `curl", new_string="Then check `curl")[
        "success"]
    assert "Then check" in store.read("real-skill")


def test_a_symlinked_skill_md_is_never_written_through(store: SkillStore, outside: Path) -> None:
    folder = store.root / "deploy-staging"
    folder.mkdir(parents=True)
    (folder / "SKILL.md").symlink_to(outside / "SKILL.md")
    before = snapshot(outside)
    for args in [{"action": "create", "content": SKILL}, *EVERY_WRITE]:
        refused(call(store, name="deploy-staging", **args), folder / "SKILL.md")
    assert snapshot(outside) == before
    assert (folder / "SKILL.md").is_symlink()  # the user's link is left as it was


@pytest.mark.parametrize("link", ["references", "references/deep"])
def test_a_symlinked_folder_inside_the_skill_is_never_written_through(
        store: SkillStore, outside: Path, link: str) -> None:
    assert call(store, action="create", name="deploy-staging", content=SKILL)["success"]
    folder = store.root / "deploy-staging"
    (folder / link).parent.mkdir(parents=True, exist_ok=True)
    (folder / link).symlink_to(outside, target_is_directory=True)
    before = snapshot(outside)
    result = call(store, action="write_file", name="deploy-staging", file_path="references/deep/notes.txt",
                  file_content="overwritten by the model")
    refused(result, folder / link)
    assert snapshot(outside) == before
    # the owner's own real folder works
    assert call(store, action="write_file", name="deploy-staging", file_path="scripts/check.sh",
                file_content="#!/bin/sh\n")["success"]
    assert (folder / "scripts" / "check.sh").read_text() == "#!/bin/sh\n"


@pytest.mark.parametrize(("where", "args"), [
    ("deploy-staging", {"action": "create", "content": SKILL}),
    ("deploy-staging/SKILL.md", {"action": "create", "content": SKILL}),
    ("deploy-staging/SKILL.md.lock", {"action": "create", "content": SKILL}),
    ("deploy-staging/references/notes.md", {"action": "write_file", "file_path": "references/notes.md",
                                            "file_content": "x"}),
])
def test_dangling_symlinks_are_refused_and_their_targets_never_created(
        store: SkillStore, tmp_path: Path, where: str, args: dict[str, Any]) -> None:
    if args["action"] == "write_file":
        assert call(store, action="create", name="deploy-staging", content=SKILL)["success"]
    target = tmp_path / "outside-target"
    link = store.root / where
    link.parent.mkdir(parents=True, exist_ok=True)
    link.symlink_to(target)
    refused(call(store, name="deploy-staging", **args), link)
    assert not target.exists() and link.is_symlink()


def test_a_link_planted_between_the_check_and_the_write_is_replaced_not_followed(
        store: SkillStore, outside: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The race the descriptors close: SKILL.md turns into a link, and the whole skill folder is
    swapped for a link, after every check; the write still lands in the real folder."""
    assert call(store, action="create", name="deploy-staging", content=SKILL)["success"]
    folder = store.root / "deploy-staging"
    before = snapshot(outside)
    real_token = skills_module.secrets.token_hex

    writes: list[int] = []

    def plant(nbytes: int) -> str:  # runs between the checks and the temp file + rename of SKILL.md (the
        writes.append(nbytes)       # second write: the first keeps a copy of the old one)
        if len(writes) != 2:
            return real_token(nbytes)
        (folder / "SKILL.md").unlink()
        (folder / "SKILL.md").symlink_to(outside / "SKILL.md")
        folder.rename(folder.with_name("moved-away"))
        folder.symlink_to(outside, target_is_directory=True)
        return real_token(nbytes)

    monkeypatch.setattr(skills_module.secrets, "token_hex", plant)
    assert call(store, action="edit", name="deploy-staging", content=OTHER)["success"]
    assert snapshot(outside) == before
    moved = folder.with_name("moved-away") / "SKILL.md"
    assert not moved.is_symlink() and moved.read_text() == OTHER  # the link was replaced, not followed


def test_a_fifo_named_skill_md_is_refused_without_hanging(store: SkillStore) -> None:
    folder = store.root / "deploy-staging"
    folder.mkdir(parents=True)
    os.mkfifo(folder / "SKILL.md")
    result = call(store, action="patch", name="deploy-staging", old_string="a", new_string="b")
    assert not result["success"] and "is a special file, not a file" in result["error"]


# ------------------------------------------------------------------ bounded paths and sizes


def test_supporting_file_depth_is_capped_and_a_deep_path_creates_no_folders(store: SkillStore) -> None:
    assert call(store, action="create", name="deploy-staging", content=SKILL)["success"]
    folder = store.root / "deploy-staging"
    deepest = "references/" + "/".join(["d"] * (MAX_SUPPORT_DEPTH - 1)) + "/api.md"
    assert call(store, action="write_file", name="deploy-staging", file_path=deepest, file_content="ok")["success"]
    assert (folder / deepest).read_text() == "ok"
    folders_before = sorted(p for p in folder.rglob("*") if p.is_dir())
    for too_deep in ("references/" + "/".join(["d"] * MAX_SUPPORT_DEPTH) + "/api.md",
                     "references/" + "a/" * 400 + "x.md"):
        result = call(store, action="write_file", name="deploy-staging", file_path=too_deep, file_content="x")
        assert not result["success"] and f"the limit is {MAX_SUPPORT_DEPTH}" in result["error"]
    assert sorted(p for p in folder.rglob("*") if p.is_dir()) == folders_before


@pytest.mark.parametrize(("file_path", "content", "words"), [
    ("references/big.md", "x" * (MAX_FILE_BYTES + 1), "larger than 1,048,576 bytes"),
    ("references/" + "n" * 256, "x", "more than 255 bytes"),
    ("references/./x.md", "x", "with no '..'"),
    ("references//x.md", "x", "with no '..'"),
    ("references/x.md/", "x", "with no '..'"),
    ("references/\ud800.md", "x", "lone surrogate"),
    ("references/x.md", "text \udcff here", "lone surrogate"),
])
def test_bad_supporting_files_are_refused_with_the_reason(
        store: SkillStore, file_path: str, content: str, words: str) -> None:
    assert call(store, action="create", name="deploy-staging", content=SKILL)["success"]
    result = call(store, action="write_file", name="deploy-staging", file_path=file_path, file_content=content)
    assert not result["success"] and words in result["error"], result
    assert not (store.root / "deploy-staging" / "references").exists()


def test_skill_text_with_a_lone_surrogate_is_refused_not_raised(store: SkillStore) -> None:
    result = call(store, action="create", name="deploy-staging", content=SKILL + "\ud800\n")
    assert not result["success"] and "lone surrogate" in result["error"]
    assert call(store, action="create", name="deploy-staging", content=SKILL)["success"]
    result = call(store, action="patch", name="deploy-staging", old_string="Check", new_string="\udfff")
    assert not result["success"] and "lone surrogate" in result["error"]
    assert store.read("deploy-staging") == SKILL


@pytest.mark.parametrize("args", [None, [], "create", 7])
def test_arguments_that_are_not_an_object_are_an_error_result(store: SkillStore, args: Any) -> None:
    assert json.loads(store.handle_tool_call(args))["success"] is False

"""Skills (SPEC 2.1 layer 4): ``$HERMES_HOME/skills/<name>/SKILL.md`` in hermes' own layout.

Written by the background review through a ``skill_manage`` tool shaped like hermes' (so a model
that knows hermes knows ours): ``create`` and ``edit`` take a whole SKILL.md (YAML front matter
with ``name`` and ``description``, then a body), ``patch`` replaces one unique string,
``write_file`` adds a supporting file under ``references/``, ``templates/``, ``scripts/`` or
``assets/``. Deleting is left to the user: a background job never removes what a person may rely on.

Everything a model names is untrusted: skill names are one safe path segment, supporting files
stay inside their skill folder (no ``..``, no absolute paths, no symlink escapes), and all text
goes through the same threat scan as MEMORY.md before it touches the disk. Writes are atomic and
hold the skill's lock, so hermes' curator or a second review never sees half a file.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

import yaml

from ..errors import HermesCtxError
from . import scan
from .store import atomic_write, locked

#: hermes' rule (tools/skill_manager_tool.py): lowercase, digits, ``.``, ``_``, ``-``; 64 characters
NAME_PATTERN = re.compile(r"[a-z0-9][a-z0-9._-]{0,63}")
SUBDIRS = ("references", "templates", "scripts", "assets")
ACTIONS = ("create", "edit", "patch", "write_file")
MAX_SKILL_CHARS = 100_000
MAX_FILE_BYTES = 1_048_576
MAX_DESCRIPTION_CHARS = 1024

TOOL_SCHEMA: dict[str, Any] = {"type": "function", "function": {
    "name": "skill_manage",
    "description": (
        "Save a reusable procedure as a skill (procedural memory for future sessions). "
        "Actions: create (full SKILL.md: YAML front matter with name and description, then "
        "trigger conditions, numbered steps with exact commands, pitfalls, verification), "
        "edit (full rewrite), patch (old_string -> new_string, old_string unique), "
        "write_file (a supporting file under references/, templates/, scripts/ or assets/). "
        "Only for non-trivial workflows that succeeded; skip one-offs."
    ),
    "parameters": {
        "type": "object",
        "properties": {
            "action": {"type": "string", "enum": list(ACTIONS)},
            "name": {"type": "string", "description": "lowercase letters, digits, '.', '_', '-'; max 64"},
            "content": {"type": "string", "description": "the whole SKILL.md for create / edit"},
            "old_string": {"type": "string"},
            "new_string": {"type": "string"},
            "file_path": {"type": "string", "description": "e.g. scripts/check.sh (write_file)"},
            "file_content": {"type": "string"},
        },
        "required": ["action", "name"],
    },
}}


class SkillError(HermesCtxError, ValueError):
    """A skill write that was refused; the message says why and what would be accepted."""


@dataclass(frozen=True)
class SkillWrite:
    """What a successful write did."""

    name: str
    path: Path
    created: bool


def check_name(name: object) -> str:
    """``name`` if it is one safe path segment in hermes' naming rule; :class:`SkillError` otherwise."""
    if not isinstance(name, str) or not NAME_PATTERN.fullmatch(name) or name.strip(".") == "":
        raise SkillError(f"skill name {name!r} is not valid: use 1-64 lowercase letters, digits, '.', '_' "
                         "or '-', starting with a letter or digit")
    return name


def check_skill_md(content: object, name: str) -> str:
    """``content`` if it is a whole SKILL.md hermes can load; :class:`SkillError` naming the problem."""
    if not isinstance(content, str) or not content.strip():
        raise SkillError("content must be the whole SKILL.md text")
    if len(content) > MAX_SKILL_CHARS:
        raise SkillError(f"SKILL.md is {len(content):,} characters; the limit is {MAX_SKILL_CHARS:,}")
    text = content.lstrip("\ufeff")
    match = re.match(r"---[ \t]*\n(.*?)\n---[ \t]*(?:\n|\Z)", text, re.S)
    if match is None:
        raise SkillError("SKILL.md must start with YAML front matter between two '---' lines")
    try:
        meta = yaml.safe_load(match.group(1))
    except yaml.YAMLError as exc:
        raise SkillError(f"the front matter is not valid YAML: {exc}") from exc
    if not isinstance(meta, dict) or not meta.get("name") or not meta.get("description"):
        raise SkillError("the front matter must be a mapping with 'name' and 'description'")
    if str(meta["name"]) != name:
        raise SkillError(f"the front matter says name {meta['name']!r} but the skill is {name!r}")
    if len(str(meta["description"])) > MAX_DESCRIPTION_CHARS:
        raise SkillError(f"the description is longer than {MAX_DESCRIPTION_CHARS} characters")
    if not text[match.end():].strip():
        raise SkillError("SKILL.md needs a body after the front matter (steps, pitfalls, checks)")
    return content


def _check_safe(text: str, what: str) -> None:
    findings = scan.scan(text)
    if findings:
        raise SkillError(f"refused: {what} looks like " + ", ".join(sorted({f.kind for f in findings}))
                         + "; skills are loaded into future sessions, so they must not carry instructions "
                           "to the model that override the user, exfiltration or secrets")


class SkillStore:
    """The ``skills`` folder of one hermes home."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)

    def path(self, name: str) -> Path:
        return self.root / check_name(name) / "SKILL.md"

    def names(self) -> list[str]:
        if not self.root.is_dir():
            return []
        return sorted(p.parent.name for p in self.root.glob("*/SKILL.md"))

    def read(self, name: str) -> str:
        return self.path(name).read_text(encoding="utf-8")

    def create(self, name: str, content: str) -> SkillWrite:
        path = self.path(name)
        check_skill_md(content, name)
        _check_safe(content, "SKILL.md")
        with locked(path):
            if path.exists():
                raise SkillError(f"skill {name!r} already exists; use patch or edit to change it")
            atomic_write(path, content.encode("utf-8"))
        return SkillWrite(name, path, created=True)

    def edit(self, name: str, content: str) -> SkillWrite:
        path = self.path(name)
        check_skill_md(content, name)
        _check_safe(content, "SKILL.md")
        with locked(path):
            self._require(name, path)
            atomic_write(path, content.encode("utf-8"))
        return SkillWrite(name, path, created=False)

    def patch(self, name: str, old: str, new: str) -> SkillWrite:
        path = self.path(name)
        if not isinstance(old, str) or not old or not isinstance(new, str):
            raise SkillError("patch needs old_string (non-empty) and new_string")
        _check_safe(new, "the new text")
        with locked(path):
            current = self._require(name, path)
            count = current.count(old)
            if count != 1:
                raise SkillError(f"old_string occurs {count} times in {name}/SKILL.md; it must occur exactly once")
            updated = current.replace(old, new, 1)
            check_skill_md(updated, name)
            _check_safe(updated, "the patched SKILL.md")
            atomic_write(path, updated.encode("utf-8"))
        return SkillWrite(name, path, created=False)

    def write_file(self, name: str, file_path: str, content: str) -> SkillWrite:
        skill_md = self.path(name)
        target = self._support_path(skill_md.parent, file_path)
        if not isinstance(content, str):
            raise SkillError("file_content must be text")
        if len(content.encode("utf-8")) > MAX_FILE_BYTES:
            raise SkillError(f"{file_path} is larger than {MAX_FILE_BYTES:,} bytes")
        _check_safe(content, file_path)
        with locked(skill_md):
            self._require(name, skill_md)
            target.parent.mkdir(parents=True, exist_ok=True)
            self._inside(skill_md.parent, target)  # a symlinked sub-folder must not lead outside
            created = not target.exists()
            atomic_write(target, content.encode("utf-8"))
        return SkillWrite(name, target, created=created)

    @staticmethod
    def _require(name: str, path: Path) -> str:
        try:
            return path.read_text(encoding="utf-8")
        except FileNotFoundError:
            raise SkillError(f"skill {name!r} does not exist; create it first") from None

    @classmethod
    def _support_path(cls, skill_dir: Path, file_path: object) -> Path:
        if not isinstance(file_path, str) or not file_path or "\\" in file_path or "\x00" in file_path:
            raise SkillError(f"file_path {file_path!r} is not a relative path like scripts/check.sh")
        parts = PurePosixPath(file_path).parts
        if (PurePosixPath(file_path).is_absolute() or len(parts) < 2 or parts[0] not in SUBDIRS
                or any(part in ("..", ".", "") for part in parts)):
            raise SkillError(f"file_path {file_path!r} must be inside one of {', '.join(SUBDIRS)} "
                             "with no '..' (e.g. references/api.md)")
        target = skill_dir.joinpath(*parts)
        cls._inside(skill_dir, target)
        return target

    @staticmethod
    def _inside(skill_dir: Path, target: Path) -> None:
        root = skill_dir.resolve()
        if not target.resolve().is_relative_to(root):
            raise SkillError(f"{target} leads outside the skill folder {skill_dir}")

    # -- the tool ---------------------------------------------------------------------------------
    def handle_tool_call(self, args: dict[str, Any]) -> str:
        """Run one ``skill_manage`` call; the JSON result tells the model what happened or why not."""
        action = args.get("action")
        try:
            if action == "delete":
                raise SkillError("deleting skills is left to the user (hermes skills / the skills folder)")
            if action not in ACTIONS:
                raise SkillError(f"action must be one of {', '.join(ACTIONS)}, got {action!r}")
            name = check_name(args.get("name"))
            if action == "create":
                done = self.create(name, args.get("content"))  # type: ignore[arg-type]
            elif action == "edit":
                done = self.edit(name, args.get("content"))  # type: ignore[arg-type]
            elif action == "patch":
                done = self.patch(name, args.get("old_string"), args.get("new_string"))  # type: ignore[arg-type]
            else:
                done = self.write_file(name, args.get("file_path"), args.get("file_content"))  # type: ignore[arg-type]
        except (SkillError, OSError) as exc:
            return json.dumps({"success": False, "error": str(exc)}, ensure_ascii=False)
        verb = "created" if done.created else "updated"
        return json.dumps({"success": True, "message": f"{verb} {done.path.relative_to(self.root)}"},
                          ensure_ascii=False)

"""Skills, the procedural memory: ``$HERMES_HOME/skills/<name>/SKILL.md`` in hermes' own layout.

Written by the background review through a ``skill_manage`` tool shaped like hermes' (so a model
that knows hermes knows ours): ``create`` and ``edit`` take a whole SKILL.md (YAML front matter
with ``name`` and ``description``, then a body), ``patch`` replaces one unique string,
``write_file`` adds a supporting file under ``references/``, ``templates/``, ``scripts/`` or
``assets/``. Deleting is left to the user: a background job never removes what a person may rely on.

Everything a model names is untrusted: skill names are one safe path segment, supporting files
stay inside their skill folder (no ``..``, no absolute paths, at most :data:`MAX_SUPPORT_DEPTH`
names below their sub-folder), and all text goes through the same threat scan as MEMORY.md before
it touches the disk. Writes are atomic and hold the skill's lock, so hermes' curator or a second
review never sees half a file.

Nothing is written through a symbolic link. The skills folder itself is the user's (it may be a
link into their dotfiles); below it every folder and file is opened relative to its parent's file
descriptor with ``O_NOFOLLOW``, so a link anywhere in ``<name>/...`` (the skill folder, a
sub-folder, ``SKILL.md``, its lock) is refused, naming it, even if it appears between a check and
the write; files land by rename inside that same descriptor, which replaces a name and never writes
through it. This needs ``dir_fd`` support (Linux, macOS, the BSDs); elsewhere skill writes are refused.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import re
import secrets
import stat
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import yaml

from ...errors import HermesCtxError
from ...safety.policy import DEFAULT as DEFAULT_POLICY
from ...safety.policy import Decision, Policy

log = logging.getLogger("hermes_ctx_plugins")

if sys.platform != "win32":
    import fcntl

#: hermes' rule (tools/skill_manager_tool.py): lowercase, digits, ``.``, ``_``, ``-``; 64 characters
NAME_PATTERN = re.compile(r"[a-z0-9][a-z0-9._-]{0,63}")
SUBDIRS = ("references", "templates", "scripts", "assets")
ACTIONS = ("create", "edit", "patch", "write_file")
MAX_SKILL_CHARS = 100_000
MAX_FILE_BYTES = 1_048_576
MAX_DESCRIPTION_CHARS = 1024
#: the most names below ``references/`` (etc.) in a supporting file's path: ``references/a/b/c/api.md``
MAX_SUPPORT_DEPTH = 4
#: the longest name of one folder or file (what most file systems allow)
MAX_NAME_BYTES = 255

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_OPEN_DIR = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0)
#: O_NONBLOCK: a FIFO planted under a skill's name must not hang the reader
_OPEN_READ = os.O_RDONLY | _NOFOLLOW | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
_OPEN_NEW = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
_OPEN_LOCK = os.O_RDWR | os.O_CREAT | _NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
_DIR_FD_SAFE = _NOFOLLOW != 0 and {os.open, os.mkdir, os.stat, os.unlink, os.readlink} <= os.supports_dir_fd

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


def front_matter_name(text: str) -> str | None:
    """The ``name:`` of a SKILL.md's front matter, or ``None`` (hermes knows a skill by it too)."""
    match = re.match(r"---[ \t]*\n(.*?)\n---[ \t]*(?:\n|\Z)", text.lstrip("\ufeff"), re.S)
    try:
        meta = yaml.safe_load(match.group(1)) if match else None
    except yaml.YAMLError:
        return None
    return str(meta["name"]) if isinstance(meta, dict) and meta.get("name") else None


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


def _check_safe(text: str, what: str, policy: Policy = DEFAULT_POLICY) -> None:
    """Refuse ``text`` when the policy keeps it out (a skill has no approval flow: a disagreement the policy would
    stage is refused)."""
    findings = policy.unsafe(text)
    if findings:
        raise SkillError(f"refused: {what} looks like " + ", ".join(sorted({f.kind for f in findings}))
                         + f" ({Decision('block', tuple(findings)).explain()})"
                         + "; skills are loaded into future sessions, so they must not carry instructions "
                           "to the model that override the user, exfiltration or secrets")


#: how many copies of a skill's earlier SKILL.md the review keeps (the newest)
KEPT_COPIES = 5

#: checks an existing skill must pass before the background review changes it: each takes the skill's name
#: and returns why it must not be changed, or ``None``. Inside hermes (:mod:`hermes_ctx_plugins.hermes.skills`)
#: the ones hermes' own review obeys: pinned, protected built-in, bundled, hub-installed and hand-written
#: skills are not the review's to change.
GUARDS: list[Callable[[str], str | None]] = []


class SkillStore:
    """The ``skills`` folder of one hermes home."""

    def __init__(self, root: Path, policy: Policy = DEFAULT_POLICY) -> None:
        self.root = Path(root)
        #: the scanner's layers and what happens when they disagree (``ctx_plugins.safety``)
        self.policy = policy

    def path(self, name: str) -> Path:
        return self.root / check_name(name) / "SKILL.md"

    def names(self) -> list[str]:
        """Every skill's name: ``skills/<name>/`` and, where hermes keeps bundled and hub skills,
        ``skills/<category>/<name>/``."""
        return sorted({folder.name for folder, _ in self._all()})

    def _all(self) -> list[tuple[Path, str | None]]:
        """Every skill's folder, at any depth (hermes finds them so), with its front matter's name."""
        if not self.root.is_dir():
            return []
        found = []
        for path in self.root.rglob("SKILL.md"):
            try:
                head = path.read_text(encoding="utf-8", errors="replace")[:4_000] if path.is_file() else ""
            except OSError:
                head = ""
            found.append((path.parent, front_matter_name(head)))
        return found

    def read(self, name: str) -> str:
        return self.path(name).read_text(encoding="utf-8")

    def create(self, name: str, content: str) -> SkillWrite:
        path = self.path(name)
        data = _checked_skill_md(content, name, policy=self.policy)
        elsewhere = next((folder for folder, named in self._all()
                          if name in (folder.name, named) and folder != self.root / name), None)
        if elsewhere is not None:  # hermes finds a skill by folder or front matter name, at any depth: one each
            raise SkillError(f"a skill named {name!r} already exists at {elsewhere}")
        with self._skill(name, create=True) as folder:
            if folder.entry("SKILL.md", "file") is not None:
                raise SkillError(f"skill {name!r} already exists; use patch or edit to change it")
            folder.write("SKILL.md", data)
        return SkillWrite(name, path, created=True)

    def edit(self, name: str, content: str) -> SkillWrite:
        path = self.path(name)
        data = _checked_skill_md(content, name, policy=self.policy)
        with self._skill(name, create=False) as folder:
            _keep(folder, self._require(name, folder))
            folder.write("SKILL.md", data)
        return SkillWrite(name, path, created=False)

    def patch(self, name: str, old: str, new: str) -> SkillWrite:
        path = self.path(name)
        if not isinstance(old, str) or not old or not isinstance(new, str):
            raise SkillError("patch needs old_string (non-empty) and new_string")
        _utf8(new, "new_string")
        _check_safe(new, "the new text", self.policy)
        with self._skill(name, create=False) as folder:
            current = self._require(name, folder)
            count = current.count(old)
            if count != 1:
                raise SkillError(f"old_string occurs {count} times in {name}/SKILL.md; it must occur exactly once")
            patched = _checked_skill_md(current.replace(old, new, 1), name, "the patched SKILL.md", policy=self.policy)
            _keep(folder, current)
            folder.write("SKILL.md", patched)
        return SkillWrite(name, path, created=False)

    def write_file(self, name: str, file_path: str, content: str) -> SkillWrite:
        parts = _support_parts(file_path)
        if not isinstance(content, str):
            raise SkillError("file_content must be text")
        data = _utf8(content, file_path)
        if len(data) > MAX_FILE_BYTES:
            raise SkillError(f"{file_path} is larger than {MAX_FILE_BYTES:,} bytes")
        _check_safe(content, file_path, self.policy)
        with self._skill(name, create=False) as folder:
            self._require(name, folder)
            with contextlib.ExitStack() as opened:
                for part in parts[:-1]:
                    folder = opened.enter_context(folder.subfolder(part, create=True))
                created = folder.entry(parts[-1], "file") is None
                folder.write(parts[-1], data)
        return SkillWrite(name, self.root / name / file_path, created=created)

    @contextlib.contextmanager
    def _skill(self, name: str, *, create: bool) -> Iterator[_Folder]:
        """The folder of skill ``name``, opened without following links below the skills folder,
        with the skill's lock (the ``SKILL.md.lock`` sidecar) held."""
        check_name(name)
        if not _DIR_FD_SAFE:
            raise SkillError("skills can only be written where folders can be opened without following "
                             "links (Linux, macOS, BSD); nothing was written")
        if create:
            self.root.mkdir(parents=True, exist_ok=True)
        try:
            root_fd = os.open(self.root, _OPEN_DIR)  # the user's own folder: a link here is theirs
        except FileNotFoundError:
            raise _missing(name) from None
        with _Folder(root_fd, self.root, self.root) as root:
            try:
                opened = root.subfolder(name, create=create)
            except FileNotFoundError:
                raise _missing(name) from None
            with opened as folder:
                lock_fd = folder.open("SKILL.md.lock", _OPEN_LOCK, "file")
                try:
                    fcntl.flock(lock_fd, fcntl.LOCK_EX)
                    yield folder
                finally:
                    os.close(lock_fd)  # releases the lock

    @staticmethod
    def _require(name: str, folder: _Folder) -> str:
        """The skill's SKILL.md, once it may be changed (it exists, and no guard keeps it as it is)."""
        if folder.entry("SKILL.md", "file") is None:
            raise _missing(name)
        current = folder.read("SKILL.md", limit=4 * MAX_SKILL_CHARS)
        for known_as in dict.fromkeys((name, front_matter_name(current) or name)):  # hermes pins by either
            for guard in GUARDS:
                try:
                    refusal = guard(known_as)
                except Exception:  # a guard that cannot tell refuses: the skill stays as it is
                    log.exception("the skill guard %r failed on %r", guard, known_as)
                    refusal = f"whether skill {known_as!r} may be changed cannot be told now"
                if refusal:
                    raise SkillError(refusal)
        return current

    # -- the tool ---------------------------------------------------------------------------------
    def handle_tool_call(self, args: dict[str, Any]) -> str:
        """Run one ``skill_manage`` call; the JSON result tells the model what happened or why not."""
        if not isinstance(args, dict):
            return json.dumps({"success": False, "error": "the arguments must be an object with action and name"})
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


def _keep(folder: _Folder, current: str) -> None:
    """Save ``current`` (the SKILL.md about to be replaced) beside it as ``SKILL.md.bak.<UTC time>[-n]``, the
    newest :data:`KEPT_COPIES` of them kept: the review changes what a person may have written."""
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S.%fZ")  # to the microsecond: names sort as they were made
    name, n = f"SKILL.md.bak.{stamp}", 1
    while folder.entry(name, "file") is not None:
        name, n = f"SKILL.md.bak.{stamp}-{n}", n + 1
    folder.write(name, current.encode("utf-8", "surrogatepass"))
    folder.keep_newest("SKILL.md.bak.", KEPT_COPIES)


def _missing(name: str) -> SkillError:
    return SkillError(f"skill {name!r} does not exist; create it first")


def _checked_skill_md(content: object, name: str, what: str = "SKILL.md", *,
                      policy: Policy = DEFAULT_POLICY) -> bytes:
    """``content`` as the bytes to write, once it is a loadable SKILL.md that passed the scan."""
    text = check_skill_md(content, name)
    data = _utf8(text, what)
    _check_safe(text, what, policy)
    return data


def _utf8(text: str, what: str) -> bytes:
    """``text`` in UTF-8, the encoding hermes reads skills in; text it cannot hold is refused."""
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise SkillError(f"{what} has {text[exc.start]!r} at character {exc.start:,}, a lone surrogate that no "
                         "UTF-8 file can hold; nothing was written") from None


def _support_parts(file_path: object) -> list[str]:
    """The names in a supporting file's path, once it is one that stays inside the skill."""
    if not isinstance(file_path, str) or not file_path or "\\" in file_path or "\x00" in file_path:
        raise SkillError(f"file_path {file_path!r} is not a relative path like scripts/check.sh")
    parts = file_path.split("/")  # not PurePosixPath: it would quietly drop "." and empty names
    if parts[0] not in SUBDIRS or len(parts) < 2 or any(part in ("..", ".", "") for part in parts):
        raise SkillError(f"file_path {file_path!r} must be inside one of {', '.join(SUBDIRS)} "
                         "with no '..' (e.g. references/api.md)")
    if len(parts) > 1 + MAX_SUPPORT_DEPTH:
        raise SkillError(f"file_path {file_path[:200]!r} is {len(parts) - 1} names deep below {parts[0]}/; "
                         f"the limit is {MAX_SUPPORT_DEPTH} (e.g. {parts[0]}/topic/notes.md)")
    for part in parts:
        if len(_utf8(part, "file_path")) > MAX_NAME_BYTES:
            raise SkillError(f"file_path has a name of more than {MAX_NAME_BYTES} bytes ({part[:40]!r}...)")
    return parts


class _Folder:
    """A folder below the skills folder, open by file descriptor: every name in it is opened
    relative to that descriptor and never through a link."""

    def __init__(self, fd: int, path: Path, root: Path) -> None:
        self.fd, self.path, self.root = fd, path, root

    def __enter__(self) -> _Folder:
        return self

    def __exit__(self, *exc: object) -> None:
        os.close(self.fd)

    def subfolder(self, name: str, *, create: bool) -> _Folder:
        """The folder ``name`` in this one (made first when ``create``); :class:`FileNotFoundError`
        when it is missing and not to be made."""
        try:
            return _Folder(self.open(name, _OPEN_DIR | _NOFOLLOW, "folder"), self.path / name, self.root)
        except FileNotFoundError:
            if not create:
                raise
        with contextlib.suppress(FileExistsError):  # another writer made it meanwhile: fine
            os.mkdir(name, 0o755, dir_fd=self.fd)
        return _Folder(self.open(name, _OPEN_DIR | _NOFOLLOW, "folder"), self.path / name, self.root)

    def open(self, name: str, flags: int, expected: str) -> int:
        """``os.open`` of ``name`` here; a link, or not the ``expected`` kind, is a :class:`SkillError`."""
        try:
            return os.open(name, flags, 0o600, dir_fd=self.fd)
        except FileNotFoundError:
            raise
        except OSError:
            misfit = self._misfit(name, expected)
            if misfit is not None:
                raise misfit from None
            raise

    def entry(self, name: str, expected: str) -> os.stat_result | None:
        """What ``name`` is here, not following it (``None``: nothing); a link, or not the
        ``expected`` kind, is a :class:`SkillError`."""
        misfit = self._misfit(name, expected)
        if misfit is not None:
            raise misfit
        with contextlib.suppress(FileNotFoundError):
            return os.stat(name, dir_fd=self.fd, follow_symlinks=False)
        return None

    def read(self, name: str, *, limit: int) -> str:
        fd = self.open(name, _OPEN_READ, "file")
        with os.fdopen(fd, "rb") as handle:
            if not stat.S_ISREG(os.fstat(fd).st_mode):  # replaced since we looked: refuse all the same
                raise self._misfit(name, "file") or SkillError(f"refused: {self.path / name} is not a file")
            data = handle.read(limit + 1)
        if len(data) > limit:
            raise SkillError(f"{self.path / name} is larger than {limit:,} bytes; edit it by hand")
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise SkillError(f"{self.path / name} is not UTF-8 text ({exc}); edit it by hand") from None

    def keep_newest(self, prefix: str, count: int) -> None:
        """Remove all but the newest ``count`` files here whose names start with ``prefix`` (by name: they
        end in a UTC time, the same time then numbered)."""
        def order(name: str) -> tuple[str, int]:
            stamp, _, number = name.removeprefix(prefix).partition("-")
            return stamp, int(number) if number.isdigit() else 0

        names = sorted((n for n in os.listdir(self.fd) if n.startswith(prefix)), key=order)
        for old in names[:-count] if count else names:
            with contextlib.suppress(OSError):
                os.unlink(old, dir_fd=self.fd)

    def write(self, name: str, data: bytes) -> None:
        """Replace ``name`` with ``data`` all at once: a new file beside it, fsync, rename, fsync."""
        self.entry(name, "file")
        prefix = f".{name}."
        for stale in os.listdir(self.fd):  # we hold the lock: a temp file is a killed writer's
            if stale.startswith(prefix) and stale.endswith(".tmp"):
                with contextlib.suppress(OSError):
                    os.unlink(stale, dir_fd=self.fd)
        temp = f"{prefix}{secrets.token_hex(6)}.tmp"
        fd = self.open(temp, _OPEN_NEW, "file")
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(temp, name, src_dir_fd=self.fd, dst_dir_fd=self.fd)
        except BaseException:  # KeyboardInterrupt too: never leave a half-written temp behind
            with contextlib.suppress(OSError):
                os.unlink(temp, dir_fd=self.fd)
            raise
        with contextlib.suppress(OSError):  # some file systems refuse fsync on a folder; data is safe
            os.fsync(self.fd)

    def _misfit(self, name: str, expected: str) -> SkillError | None:
        """The refusal for ``name`` if it is a link or not a ``expected`` ("file" or "folder")."""
        try:
            found = os.stat(name, dir_fd=self.fd, follow_symlinks=False)
        except FileNotFoundError:
            return None
        if stat.S_ISLNK(found.st_mode):
            try:
                what = f"a symbolic link (to {os.readlink(name, dir_fd=self.fd)!r})"
            except OSError:
                what = "a symbolic link"
        else:
            mode = found.st_mode
            kind = "folder" if stat.S_ISDIR(mode) else "file" if stat.S_ISREG(mode) else "special file"
            if kind == expected:
                return None
            what = f"a {kind}, not a {expected}"
        return SkillError(f"refused: {self.path / name} is {what}; skills are written only into real folders "
                          f"and files inside {self.root}, never through links; nothing was written")

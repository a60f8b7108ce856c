"""The skills hermes' own background review leaves alone, for ours (:data:`memory.file.skills.GUARDS`).

hermes 0.19.0's review may change only skills its agent created (``tools/skill_manager_tool.py``:
``_background_review_write_guard``): not a pinned one, a protected built-in, a bundled or hub-installed
one, one in ``skills.external_dirs``, nor one whose usage record says a person wrote it. Our review
(``ctx_plugins.options.file.review: on``) obeys the same, read from hermes' own records; it also keeps a
copy of every SKILL.md it changes.
"""

from __future__ import annotations

import json

from ..memory.file import skills


def review_may_not_change(name: str) -> str | None:
    """Why the background review must leave skill ``name`` as it is, or ``None`` (hermes' records)."""
    from tools import skill_usage

    if skill_usage.get_record(name).get("pinned"):
        return (f"skill {name!r} is pinned: off-limits to the background review (the user can run "
                f"`hermes curator unpin {name}`)")
    if skill_usage.is_protected_builtin(name):
        return f"skill {name!r} is a protected built-in skill: off-limits to the background review"
    if skill_usage.is_hub_installed(name):
        return f"skill {name!r} was installed from the hub: off-limits to the background review"
    if skill_usage.is_bundled(name):
        return f"skill {name!r} is bundled with hermes: off-limits to the background review"
    usage = skill_usage._usage_file()  # hermes reads damaged records as none: that would switch this off
    if usage.exists():
        try:
            records = json.loads(usage.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            return f"hermes' skill records ({usage}) cannot be read ({exc}): no skill is changed until they can"
        if not isinstance(records, dict) or not all(isinstance(r, dict) for r in records.values()):
            return f"hermes' skill records ({usage}) are not what hermes writes: no skill is changed until fixed"
    record = skill_usage.load_usage().get(name)
    if isinstance(record, dict) and not (record.get("created_by") == "agent" or record.get("agent_created") is True):
        return (f"skill {name!r} was not created by the agent (created_by={record.get('created_by')!r}): a "
                "person's skill is off-limits to the background review")
    return None


def install() -> None:
    """Make our review obey hermes' rules (once per process)."""
    if review_may_not_change not in skills.GUARDS:
        skills.GUARDS.append(review_may_not_change)

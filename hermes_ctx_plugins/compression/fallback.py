"""The static fallback summary, built locally when the summary model fails.

It keeps the continuity anchors of the dropped messages — what the user asked, what the assistant
did, which tools ran, which files and errors came up — within :data:`MAX_CHARS`, and carries the
previous summary forward so nothing summarised earlier is lost.

It is built locally, but it stays in the conversation: hermes stores it with the session and sends
it to the main model on every later turn, and the next summary request carries it as the previous
summary. So it is redacted like the summary request (``redact``): a secret the compaction removed
from the conversation, and that the archive keeps only redacted, does not live on in it.
"""

from __future__ import annotations

import itertools
import json
import re
from collections import Counter
from collections.abc import Sequence

from ..events import Message
from .messages import is_real_user, role, text_of
from .prompt import Redactor, redacted_head, unredacted

MAX_CHARS = 8_000
_ITEM_CHARS = 300
_PATH = re.compile(r"(?<![\w.])(?:~|\.{1,2})?/(?:[\w.@+-]+/)*[\w.@+-]+|\b[\w-]+(?:/[\w.-]+)+\.\w{1,8}\b"
                   r"|\b[\w-]+\.(?:py|js|ts|tsx|go|rs|java|rb|md|json|ya?ml|toml|ini|cfg|txt|sh|sql|html|css)\b")
#: how far into each message's text the file names are looked for
_FILES_SCAN_CHARS = 2_000
_ERROR = re.compile(r"^.*\b(?:error|exception|traceback|failed|failure|fatal|denied|refused|not found)\b.*$",
                    re.IGNORECASE | re.MULTILINE)


def _one_line(text: str, limit: int = _ITEM_CHARS) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _unique(items: list[str], limit: int) -> list[str]:
    seen: dict[str, None] = {}
    for item in items:
        if item and item not in seen:
            seen[item] = None
    return list(seen)[-limit:]


def opening(text: str) -> str:
    """The first :data:`_FILES_SCAN_CHARS` characters of ``text``, and the rest of the word they end in
    (a path cut at the limit would be reported cut)."""
    if len(text) <= _FILES_SCAN_CHARS:
        return text
    rest = text[_FILES_SCAN_CHARS:_FILES_SCAN_CHARS + 1000].split(maxsplit=1)
    return text[:_FILES_SCAN_CHARS] + (rest[0] if rest and not text[_FILES_SCAN_CHARS].isspace() else "")


def build(middle: Sequence[Message], *, previous_summary: str | None = None,
          reason: str = "", max_chars: int = MAX_CHARS, redact: Redactor | None = None) -> str:
    """A structured summary of ``middle`` made without a model, at most ``max_chars`` long.

    :param redact: applied to each excerpt before it is cut (so a cut cannot hide a secret from
        it) and to the whole summary; ``None``: nothing is redacted.
    """
    clean = redact or unredacted
    asks, actions, files, errors = [], [], [], []
    tools: Counter[str] = Counter()
    names = {c.get("id"): (c.get("function") or {}).get("name", "?")
             for m in middle for c in m.get("tool_calls") or () if isinstance(c, dict)}
    for message in middle:
        text = text_of(message.get("content"))
        if is_real_user(message):
            asks.append(_one_line(redacted_head(text, _ITEM_CHARS * 4, clean)))
        elif role(message) == "assistant":
            if text.strip():
                actions.append(_one_line(redacted_head(text, _ITEM_CHARS * 4, clean)))
            for call in message.get("tool_calls") or ():
                function = (call.get("function") or {}) if isinstance(call, dict) else {}
                tools[str(function.get("name") or "?")] += 1
                files += _PATH.findall(_arguments_text(function.get("arguments")))
        elif role(message) == "tool":
            tool = names.get(message.get("tool_call_id"), "tool")
            errors += [f"[{tool}] {_one_line(redacted_head(e.group(), 800, clean), 200)}"
                       for e in itertools.islice(_ERROR.finditer(text), 2)]
        files += _PATH.findall(opening(text))  # megabytes of output add no cost

    sections = [
        "## Summary unavailable — static fallback",
        f"The summary model failed ({reason or 'unknown error'}); these anchors were extracted "
        f"mechanically from {len(middle)} compacted messages.",
        _section("User requests", _unique(asks, 10)),
        _section("Assistant actions", _unique(actions, 10)),
        _section("Tools used", [f"{name} x{count}" for name, count in tools.most_common(15)]),
        _section("Files", _unique(files, 25)),
        _section("Errors seen", _unique(errors, 10)),
    ]
    body = clean("\n\n".join(s for s in sections if s))
    if previous_summary:
        previous_summary = clean(previous_summary)
        room = max_chars - len(body) - 40
        carried = previous_summary if len(previous_summary) <= room else previous_summary[:max(room, 0)] + "…"
        if room > 200:
            body = f"## Earlier summary (carried forward)\n{carried}\n\n{body}"
    return body if len(body) <= max_chars else body[: max_chars - 1] + "…"


def _section(title: str, items: list[str]) -> str:
    return f"## {title}\n" + "\n".join(f"- {item}" for item in items) if items else ""


def _arguments_text(arguments: object) -> str:
    if isinstance(arguments, str):
        return arguments
    return json.dumps(arguments, ensure_ascii=False) if arguments is not None else ""

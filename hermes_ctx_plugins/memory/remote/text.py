"""What a remote provider sends, made safe to send: texts fitted (secrets redacted, cut to a
limit, lone surrogates replaced), ids shortened, tool arguments checked, tool answers as JSON.

Everything here is a pure function of its arguments, so the provider layers and both providers
(``ctx-mem0``, ``ctx-honcho``) share one definition of each rule.
"""

from __future__ import annotations

import hashlib
import json
import re
import reprlib
from collections.abc import Collection, Mapping
from typing import Any

from ...errors import HermesCtxError
from ...safety import redact_secrets, scan
from ...scope import to_stored

#: how far past a cut a text is still read for secrets: the longest one (a PEM private key) and the
#: text after it that can make it recognisable (the key id it is paired with)
SECRET_REACH = 8192
#: the longest id-like value (a session id, a platform, a tool's name) sent as itself
ID_CHARS = 100
#: the longest error message a tool answers with
ERROR_CHARS = 2000


class ToolError(HermesCtxError, ValueError):
    """A tool call the provider refuses before any network call (bad arguments, wrong scope)."""


def tool_schema(name: str, description: str, properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    """An OpenAI function-tool schema taking an object with ``properties``."""
    return {"type": "function", "function": {"name": name, "description": description, "parameters": {
        "type": "object", "properties": properties, "required": required}}}


def bounded_int(value: Any, default: int, *, key: str, lo: int, hi: int) -> int:
    """Tool argument ``key`` as a whole number, clamped to ``lo``..``hi`` (``default`` when missing).

    :raises ToolError: it is not a whole number (``5``, ``5.0`` and ``"5"`` are).
    """
    if value is None:
        return default
    number: int | None = None
    if isinstance(value, int) and not isinstance(value, bool):
        number = value
    elif isinstance(value, float) and value.is_integer():  # false for inf and nan
        number = int(value)
    elif isinstance(value, str):
        try:
            number = int(value.strip())
        except ValueError:  # not a number, or more digits than Python converts
            pass
    if number is None:
        raise ToolError(f"{key} must be a whole number from {lo} to {hi}, not {type(value).__name__} {shown(value)}")
    return max(lo, min(hi, number))


def unsendable(write: Mapping[str, Any], *, local: Collection[str] = ()) -> str:
    """Why ``write`` (but its ``local`` keys, never sent) cannot travel as a JSON request body, as
    the SDKs encode one (``""``: it can)."""
    try:
        sent = {key: value for key, value in write.items() if key not in local}
        json.dumps(sent, ensure_ascii=False, allow_nan=False).encode("utf-8")
    except (TypeError, ValueError) as exc:  # a lone surrogate, NaN, an int too long to print
        return f"{type(exc).__name__}: {exc}"[:ERROR_CHARS]
    return ""


def json_int(value: Any) -> int | None:
    """``value`` when it is an int a JSON service stores (64 bits), else ``None``."""
    return value if isinstance(value, int) and not isinstance(value, bool) and -2**63 <= value < 2**63 else None


def sendable(text: str) -> str:
    """``text`` as UTF-8 can carry it: each lone surrogate becomes ``?`` (a write holding one could
    never be sent, and would hold up the queue)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "replace").decode("utf-8")
    return text


def fit(text: str, limit: int, *, mark: bool = True) -> str:
    """``text`` as it may be sent: secrets redacted, lone surrogates replaced (:func:`sendable`) and at
    most ``limit`` characters.

    A longer text keeps its start and, with ``mark``, ends with a marker saying how much was cut
    (a limit too small for the marker keeps nothing); without, as for a search query, it ends at a
    word. Only the start and the next :data:`SECRET_REACH` characters are read, so a 5 MB paste costs
    what a short text does; a secret the cut would split is left out whole, and one recognisable only
    by what follows the cut is still redacted.
    """
    window = text[:limit + SECRET_REACH]
    if len(window) == len(text):
        whole = sendable(redact_secrets(text))
        if len(whole) <= limit:
            return whole
    room = max(0, limit - len(_cut_marker(len(text)))) if mark else limit
    if not room:
        return ""
    secrets = [(f.start, f.end, _secret_label(f.detail)) for f in scan(window, learned=False) if f.kind == "secret"]
    cut = room
    for start, end, _ in sorted(secrets, reverse=True):  # apart from each other: one pass moves the cut out of all
        if start < cut < end:
            cut = start
    if not mark and cut < len(window) and not window[cut].isspace():
        word = max(window.rfind(" ", 0, cut), window.rfind("\n", 0, cut))
        cut = word if word > cut // 2 else cut
    kept = redact_secrets(window[:cut])
    for start, end, label in secrets:  # found with what follows the cut, which window[:cut] alone may not show
        if end <= cut and window[start:end] in kept:
            kept = kept.replace(window[start:end], f"[REDACTED:{label}]")
    kept = sendable(kept)[:room].rstrip()  # a marker longer than its secret may have pushed it past the room
    return kept + _cut_marker(len(text) - cut) if mark else kept


def _secret_label(detail: str) -> str:
    """The kind a secret finding names (``"aws-secret-key (40 chars)"``), as redaction labels it."""
    match = _SECRET_DETAIL.fullmatch(detail)
    return match[1] if match else "secret"


_SECRET_DETAIL = re.compile(r"([\w-]+) \(\d+ chars\)")


def _cut_marker(dropped: int) -> str:
    return f" …[{dropped:,} more characters cut]"


_HASHED = re.compile(r"h[0-9a-f]{48}")


def short_id(value: str) -> str:
    """An id sent as metadata or a tag (a session id, a platform): itself as UTF-8-safe text
    (:func:`~hermes_ctx_plugins.scope.to_stored`) when at most :data:`ID_CHARS` characters, else
    ``h`` and 48 hex digits of its hash. An id already of that form is hashed too: kept as it was, a chat so named
    shared ctx-mem0's run (``recall_scope: run``) with the long id hashing to it (a red-team pass)."""
    stored = to_stored(value)
    if len(stored) <= ID_CHARS and not _HASHED.fullmatch(stored):
        return stored
    return f"h{hashlib.sha256(stored.encode('utf-8')).hexdigest()[:48]}"


_SHOWN = reprlib.Repr()
_SHOWN.maxstring = _SHOWN.maxother = _SHOWN.maxlong = 60
_SHOWN.maxlevel, _SHOWN.maxlist, _SHOWN.maxdict = 2, 4, 4


def shown(value: Any) -> str:
    """``value`` for an error message: short, one line, never raising (a 5 MB text, a deep list)."""
    try:
        return _SHOWN.repr(value)
    except Exception:  # an int too long for repr(), a broken __repr__
        return f"a {type(value).__name__}"


def error_json(message: str) -> str:
    """A tool's answer reporting ``message`` (cut to :data:`ERROR_CHARS`)."""
    return json.dumps({"success": False, "error": sendable(message[:ERROR_CHARS])}, ensure_ascii=False)

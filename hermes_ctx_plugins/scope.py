"""Who a memory belongs to, and how that owner is written where it is stored.

**The scope model.** Every memory, archived message and queued write belongs to one
``(deployment, user)`` pair — and, where a provider is configured so, to one chat or session
inside it:

* ``deployment`` is the *memory namespace* of the deployment a session runs in
  (:attr:`~hermes_ctx_plugins.events.SessionInfo.deployment`). The host stamps it on every session
  it hands a provider; a caller cannot choose another deployment's. By default it is the
  deployment's name (``""`` for the top-level settings), so two deployments never see each other's
  memories. ``ctx_plugins.deployments.<name>.memory.namespace`` sets it explicitly: deployments
  that name the same namespace share memories — on purpose, never by accident.
* ``user_id`` is hermes' user id, an **opaque string**: any Unicode (lone surrogates included),
  compared exactly, never trimmed, folded, truncated or sanitised into another user's id. The
  empty string is the *anonymous* user (hermes' single-user CLI): one scope per deployment, and no
  real user's id can ever map onto it.

Stores that cannot hold an arbitrary string (a file name, a Honcho peer id, an SQLite TEXT column
with a lone surrogate) write the owner through one of the injective encodings below, so two
different owners can never land on the same name.
"""

from __future__ import annotations

import hashlib
import json
import re

#: characters an encoded id keeps as they are
_PLAIN = re.compile(r"[A-Za-z0-9]")
_ESCAPED = re.compile(r"_([0-9a-f]+)_|([A-Za-z0-9])")
#: a hashed service id: ``h`` + 48 hex digits (192 bits of SHA-256)
_HASHED = re.compile(r"h[0-9a-f]{48}")
_SURROGATE = re.compile(r"[\ud800-\udfff]")
#: what a path segment keeps as it is: nothing a case-insensitive file system could fold together
_FOLDED_PLAIN = frozenset("abcdefghijklmnopqrstuvwxyz0123456789")


def escape_id(value: str) -> str:
    """``value`` in ``[A-Za-z0-9_]`` only, injectively: letters and digits stay, every other code
    point (``_`` and lone surrogates included) becomes ``_<hex>_``. ``""`` stays ``""``.

    >>> escape_id("alice@example.com")
    'alice_40_example_2e_com'
    """
    return "".join(c if _PLAIN.fullmatch(c) else f"_{ord(c):x}_" for c in value)


def unescape_id(encoded: str) -> str:
    """The inverse of :func:`escape_id`. :raises ValueError: not an :func:`escape_id` output."""
    out, pos = [], 0
    for match in _ESCAPED.finditer(encoded):
        if match.start() != pos:
            break
        out.append(match.group(2) or chr(int(match.group(1), 16)))
        pos = match.end()
    if pos != len(encoded):
        raise ValueError(f"{encoded!r} is not an escaped id")
    return "".join(out)


def service_id(deployment: str, user_id: str, *, max_chars: int = 100) -> str:
    """One name in ``[A-Za-z0-9_-]`` for the owner ``(deployment, user_id)``, injective.

    The forms cannot overlap: ``anon`` / ``u<user>`` at the top level, ``d<deployment>-anon`` /
    ``d<deployment>-u<user>`` in a named namespace (only these contain ``-``), and, when that would
    exceed ``max_chars``, ``h`` + 48 hex digits of SHA-256 over the pair (collision-free in
    practice, and never equal to an unhashed form, which has no 49-character all-hex spelling).
    """
    who = f"u{escape_id(user_id)}" if user_id else "anon"
    name = f"d{escape_id(deployment)}-{who}" if deployment else who
    if len(name) <= max_chars:
        return name
    digest = hashlib.sha256(name.encode("ascii")).hexdigest()
    return f"h{digest[:48]}"


def namespace_of(owner: str) -> str | None:
    """The namespace of the owner id ``owner`` (:func:`service_id`'s, or a verbatim id of the top level, which is
    never one): ``""`` at the top level, the deployment's for ``d<deployment>-…``; ``None`` when it cannot be told
    (a hashed one)."""
    if _HASHED.fullmatch(owner):
        return None
    head, sep, _ = owner.partition("-")
    if sep and is_service_id(owner):
        return unescape_id(head[1:])
    return ""


def is_service_id(name: str) -> bool:
    """Whether :func:`service_id` could return ``name`` for some owner (so a configured fixed id
    that is one would alias that owner)."""
    if _HASHED.fullmatch(name) or name == "anon":
        return True
    head, sep, who = name.partition("-")
    if sep:
        if not head.startswith("d"):
            return False
        try:
            unescape_id(head[1:])
        except ValueError:
            return False
        name = who
        if name == "anon":
            return True
    if not name.startswith("u") or len(name) < 2:
        return False
    try:
        unescape_id(name[1:])
    except ValueError:
        return False
    return True


def path_segment(value: str, *, prefix: str) -> str:
    """``value`` as one safe file-name segment, injective for a given ``prefix`` (a letter) even on a
    file system that ignores case (macOS, Windows): lower-case letters and digits stay, every other
    code point — capitals included — is escaped; past 120 characters, the prefix, ``#`` and SHA-256
    of the escaped id."""
    encoded = "".join(c if c in _FOLDED_PLAIN else f"_{ord(c):x}_" for c in value)
    if len(encoded) <= 120:
        return f"{prefix}{encoded}"
    return f"{prefix}#{hashlib.sha256(encoded.encode('ascii')).hexdigest()}"


def to_stored(value: str) -> str:
    """``value`` as text any UTF-8 store accepts, injectively: ``\\`` doubles and each lone
    surrogate becomes ``\\uXXXX``; every other string is stored as it is."""
    if "\\" not in value and not _SURROGATE.search(value):
        return value
    return _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", value.replace("\\", "\\\\"))


_STORED_ESCAPE = re.compile(r"\\(\\|u[0-9a-f]{4})")
#: half an escape at the end: what a stored text cut at a length (a search candidate's) may end with, and a whole
#: stored text never does (its backslashes come in pairs or start a ``\uXXXX``)
_TORN_ESCAPE = re.compile(r"(?<!\\)((?:\\\\)*)\\(?:u[0-9a-f]{0,3})?$")


def from_stored(value: str) -> str:
    """The inverse of :func:`to_stored`; of a stored text cut short, the text up to the last whole character (an
    escape the cut tore in two is dropped, not shown as ``\\ud8``)."""
    if "\\" not in value:
        return value
    pieces = value.split("\\\\")
    if not any("\\" in piece for piece in pieces):  # only doubled backslashes (a JSON message: ~40x faster)
        return "\\".join(pieces)
    return _STORED_ESCAPE.sub(lambda m: "\\" if m.group(1) == "\\" else chr(int(m.group(1)[1:], 16)),
                              _TORN_ESCAPE.sub(r"\1", value))


#: how :func:`typed` marks an id given as a JSON string (the ``--user-json`` style options take it)
JSON_MARK = "json:"


def typed(value: str) -> str:
    """An id as one types it back on a command line: in single quotes, which a shell passes literally
    (``'s\\ud800'`` is those seven characters, a backslash among them), or, for an id a command line cannot
    carry (a NUL, a lone surrogate) or hardly can (any other unprintable character), as a JSON string after
    ``json:`` — what the ``--user-json`` style options take. Two ids never print alike."""
    if value.isprintable():
        return "'" + value.replace("'", "'\\''") + "'"
    return JSON_MARK + json.dumps(value)


def from_typed_json(text: str) -> str:
    """The id a ``--user-json`` style option names: a JSON string, with or without :func:`typed`'s ``json:``.

    :raises ValueError: naming the text, when it is not one JSON string.
    """
    body = text[len(JSON_MARK):] if text.startswith(JSON_MARK) else text
    try:
        value = json.loads(body)
    except (ValueError, RecursionError):  # RecursionError: nested deeper than Python's parser goes
        value = None
    if not isinstance(value, str):
        raise ValueError(f"{text!r} is not a JSON string; give the id in double quotes with JSON escapes, "
                         "e.g. '\"s\\ud800\"' for s followed by a lone surrogate U+D800")
    return value


def describe(deployment: str, user_id: str) -> str:
    """A readable name for an owner, for messages and reports (never for storage): ids as :func:`typed` gives
    them, so what is printed names the same owner when typed back."""
    who = f"user {typed(user_id)}" if user_id else "the anonymous user"
    return f"{who} of deployment {typed(deployment)}" if deployment else who

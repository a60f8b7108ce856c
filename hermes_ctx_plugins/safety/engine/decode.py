"""Obfuscation undone: base64 (UTF-8, or UTF-16 as PowerShell's ``-EncodedCommand``), hex (also byte by byte:
"63 75 72 6c"), percent/HTML/``\\u`` escapes, Unicode-tag text, shell quoting inside words (``c''url``), leetspeak
prose ("f0rward th3 pa55w0rd5") and a line that names its own encoding ("ROT13:", "read this backwards").

:func:`regions` finds them; the scanner scans each decoded text again and places what it finds on the encoded part.
"""

from __future__ import annotations

import base64
import binascii
import codecs
import html
import re
from collections.abc import Sequence
from urllib.parse import unquote

from ..rules.invisible import TAG_TEXT
from ..rules.record import lazy

#: at most this many encoded parts are decoded per text, each of at most this many characters
MAX_BLOBS, _MAX_BLOB_CHARS = 32, 8192
#: (start, end) of the encoded part in the text, how it was encoded, the decoded text
Region = tuple[int, int, str, str]

_BASE64 = lazy(r"(?<![\w+/=-])[A-Za-z0-9+/_-]{20,}={0,2}")
_HEX = lazy(r"(?<![0-9A-Fa-f])[0-9A-Fa-f]{16,}+|(?:\\x[0-9A-Fa-f]{2}){4,}+")
_ESCAPE = lazy(r"%[0-9A-Fa-f]{2}|&#x?[0-9A-Fa-f]+;?|&[a-z]+;|\\u[0-9A-Fa-f]{4}")
# hex written byte by byte: "63 75 72 6c", "0x63,0x75", "63:75:72" (eight bytes at least: a MAC address is six)
_SPACED_HEX = lazy(r"(?<![0-9A-Za-z])(?:0x)?[0-9A-Fa-f]{2}(?:[\s,:]{1,3}(?:0x)?[0-9A-Fa-f]{2}){7,}"
                   r"(?![0-9A-Za-z])")
# hex digits read as "h", separators as spaces: four spaced pairs show as " hh hh hh hh " (a substring test, in C)
_HEXISH = (bytes(ord("h") if chr(b) in "0123456789abcdefABCDEF" else ord(" ") if chr(b) in " \t\n:" else ord("x")
                 for b in range(256)), b",")
# words of letters and leet digits, a leet digit after a letter that is not a hex digit: "f0rward", "u5er",
# "h4ck3r" (not "python3", "s3", "gpt4", "k8s", nor ids and hashes, which are hex or hold other digits)
_LEETY = lazy(r"\b[a-z]{0,10}[g-z][013457]+[a-z](?:[a-z]|[013457]+[a-z])*[013457]?\b")  # whole words only
_LEET_PROSE = str.maketrans("013457", "oieast")  # not @ or $: they carry addresses and variables
# an encoding the note names for its reader to undo ("ROT13:", "read this backwards"): its line, and the next, are
# read again undone ("reverse proxy" and "反转链表" name no such thing)
_ROT13_WORDS = ("rot13", "rot-13", "rot 13", "rot_13", "caesar", "凯撒", "凱撒")
_ROT13 = lazy(r"\brot[\s_-]?13\b|\bcaesar\b|凯撒|凱撒")  # searched in the lowered text
_REVERSED_WORDS = ("backward", "reverse", "right to left", "right-to-left", "倒着", "倒序", "倒过来", "反过来")
_REVERSED = lazy(r"\b(?:(?:read|write|written|spelled|spelt|typed)\s+(?:it\s+|this\s+|that\s+)?(?:in\s+)?"
                 r"(?:backwards?|reverse|right[\s-]to[\s-]left)|reversed\s+(?:text|string|order|below|"
                 r"above|instructions?|note)|reverse\s+(?:this|it|the\s+(?:following|text|string|line))|"
                 r"backwards?\s*:)|倒着(?:读|写|看)|倒序|倒过来(?:读|看|写)?|反过来(?:读|看)")


def _declared(low: str, words: Sequence[str], pattern: re.Pattern[str]) -> re.Match[str] | None:
    """The pattern, searched only around its words (a regex that starts with alternatives is slow to fail)."""
    for word in words:
        i = low.find(word)
        while i >= 0:
            if m := pattern.search(low, max(0, i - 40), i + len(word) + 40):
                return m
            i = low.find(word, i + 1)
    return None


def _declared_line(text: str, start: int) -> tuple[int, int]:
    """The line holding a declared encoding, with the next one (the payload often follows on its own line)."""
    first, end = text.rfind("\n", 0, start) + 1, text.find("\n", start)
    end = len(text) if end < 0 else text.find("\n", end + 1)
    return first, len(text) if end < 0 else end


# what a shell drops from inside a word: c''url, c""url, c\url, c^url (cmd.exe), c$@url, c${}url
_SHELL_NOISE = lazy(r"(?<=[A-Za-z])(?:''|\"\"|\\|\^|\$@|\$\{\}|\$\(\))(?=[A-Za-z])")


def decode_blob(blob: str, how: str) -> str | None:
    """The blob decoded, if it decodes to readable UTF-8 text."""
    try:
        digits = blob.replace("\\x", "")
        padded = blob.replace("-", "+").replace("_", "/").rstrip("=")
        raw = bytes.fromhex(digits[:len(digits) // 2 * 2]) if how == "hex" else base64.b64decode(
            padded + "=" * (-len(padded) % 4), validate=True)
        # PowerShell's -EncodedCommand is UTF-16: every other byte of ASCII text is zero
        wide = how == "base64" and len(raw) >= 8 and raw[1::2].count(0) >= 0.8 * (len(raw) // 2)
        text = raw.decode("utf-16-le") if wide else raw.decode()
    except (ValueError, binascii.Error):  # UnicodeDecodeError is a ValueError
        return None
    readable = sum(c.isprintable() or c.isspace() for c in text) >= 0.9 * len(text)
    return text if len(text) >= 6 and readable and any(c.isalpha() for c in text) else None


def regions(text: str) -> list[Region]:
    """The encoded parts of ``text`` (blobs, or an encoded region with its sentence), decoded; at most
    ``MAX_BLOBS``."""
    found: list[Region] = []
    offset = 0
    for token in [t for t in text.split() if 16 <= len(t) <= _MAX_BLOB_CHARS][:MAX_BLOBS]:  # blobs are long tokens
        offset = text.find(token, offset)
        for how, pattern in (("base64", _BASE64), ("hex", _HEX)):
            found += [(offset + m.start(), offset + m.end(), how, decoded) for m in pattern.finditer(token)
                      if (decoded := decode_blob(m[0], how))]
        offset += len(token)
    hexish = text.encode(errors="ignore").translate(*_HEXISH)  # cheap first: the pattern is slow to fail on prose
    if "0x" in text or b" hh hh hh hh " in b" %b " % hexish:
        found += [(m.start(), m.end(), "hex", decoded) for m in _SPACED_HEX.finditer(text)
                  if (decoded := decode_blob(re.sub(r"0x|[\s,:]", "", m[0]), "hex"))]
    low = text.lower()  # substring tests first: these patterns are slow to fail on ordinary prose
    if len(_LEETY.findall(low)) >= 3:  # leetspeak prose ("f0rward th3 u5er'5 pa55w0rd5"): read with letters
        found.append((0, len(text), "leetspeak", text.translate(_LEET_PROSE)))
    if m := _declared(low, _ROT13_WORDS, _ROT13):
        first, end = _declared_line(text, m.start())
        found.append((first, end, "rot13", codecs.decode(text[first:end], "rot13")))
    if m := _declared(low, _REVERSED_WORDS, _REVERSED):
        first, end = _declared_line(text, m.start())
        found.append((first, end, "reversed", text[first:end][::-1]))
    if ("%" in text or "&" in text or "\\u" in text) and len(escapes := list(_ESCAPE.finditer(text))) >= 3:
        encoded = text[max(0, escapes[0].start() - 80):escapes[-1].end() + 80]  # the encoded region, with its sentence
        unescaped = unquote(html.unescape(re.sub(r"\\u([0-9A-Fa-f]{4})", lambda m: chr(int(m[1], 16)), encoded)))
        if unescaped != encoded:
            found.append((escapes[0].start(), escapes[-1].end(), "encoded", unescaped))
    shelly = "''" in text or '""' in text or "\\" in text or "^" in text or "$" in text  # the regex is slower than `in`
    if shelly and (noise := list(_SHELL_NOISE.finditer(text))):  # scanned as the shell would run it
        found.append((noise[0].start(), noise[-1].end(), "shell quoting", _SHELL_NOISE.sub("", text)))
    if not text.isascii():
        found += [(*m.span(), "tag characters", "".join(chr(ord(c) - 0xE0000) for c in m[0]))
                  for m in TAG_TEXT.finditer(text)]
    return found[:MAX_BLOBS]

"""The memory threat scanner: prompt injection, exfiltration, secrets and hidden characters (SPEC 2.5).

Memory entries are pasted into future prompts, so what an attacker gets into them instructs a later session.
:func:`scan` runs before every write and again at load, where :func:`placeholder` stands in for a hostile entry.

Views: the raw text (invisible characters, which are the attack), a *normalised* one (format characters dropped,
NFKC, case kept: secrets' token formats and layouts, however split or widened), a *folded* one (NFKD without combining
marks, fullwidth/mathematical letters to ASCII, Cyrillic/Greek look-alikes to Latin, Traditional Chinese to
Simplified, lower case, format characters removed, symbols to spaces) and a *squeezed* one (folded without spaces or
punctuation, leetspeak read as letters) for phrases hostile however spelt: "i g n o r e", "ign.ore", "1gn0r3",
"忽 略", "請無視". Base64 (UTF-8, or UTF-16 as PowerShell's ``-EncodedCommand``), hex (also byte by byte:
"63 75 72 6c"), percent/HTML/``\\u`` escapes, Unicode-tag text, shell quoting inside words (``c''url``), leetspeak
prose ("f0rward th3 pa55w0rd5") and a line that names its own encoding ("ROT13:", "read this backwards") are decoded
and scanned again (two levels, bounded). A rule's regex runs only when one of its anchors (a word or substring, found
in C) occurs, and only near it, so a 2,200-character entry scans in one to two milliseconds
(``benchmarks/bench_scan.py``). An injection finding inside a short quotation, in a note about attacks, is dropped
(:func:`~hermes_ctx_plugins.safety.rules.quoted_example`).
Spans index the original text; a folded match also covers what the fold removed inside it (zero-width characters,
inserted spaces); a finding in decoded text spans the encoded blob.

:func:`redact_secrets` replaces the secrets :func:`scan` finds with ``[REDACTED:<kind>]`` before a turn, a memory or a
request is stored or sent; base64 or hex that decodes to a secret is replaced whole. It runs on every stored turn, so
it is linear in the text's length (``tests/test_redact.py`` feeds it a megabyte built to make rules backtrack).

The phrase rules, and the judgement calls behind them, are in :mod:`hermes_ctx_plugins.safety.rules`; the secret
formats and layouts in :mod:`hermes_ctx_plugins.safety.secrets`.
"""

from __future__ import annotations

import base64
import binascii
import bisect
import codecs
import html
import re
import unicodedata
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from urllib.parse import unquote

from .rules import (
    FILLERS,
    FOLDED_RULES,
    INVISIBLE,
    LEET,
    LOOKALIKES,
    SQUEEZED_RULES,
    TAG_TEXT,
    TRADITIONAL,
    Rule,
    is_word,
    legitimate_invisible,
    quoted_example,
)
from .secrets import (
    SECRET_RULES,
    Span,
    credential_pair,
    line_spans,
    option_spans,
    paired_spans,
    password_key,
    rule_key,
    table_spans,
    value_span,
)

__all__ = ["KINDS", "Finding", "is_safe", "placeholder", "redact_secrets", "scan"]

#: every finding kind, in the order :func:`placeholder` names them
KINDS = ("injection", "exfiltration", "secret", "invisible")
_LABELS = {"injection": "prompt injection", "exfiltration": "data exfiltration", "secret": "secret",
           "invisible": "hidden characters"}
_MAX_DEPTH, _MAX_BLOBS, _MAX_BLOB_CHARS, _MAX_INVISIBLE = 2, 32, 8192, 20


@dataclass(frozen=True)
class Finding:
    """One reason an entry is unsafe; ``text[start:end]`` is the offending part of the original."""

    kind: str
    detail: str
    start: int
    end: int


# ----------------------------------------------------------------------------------------------------------- views

def _fold_char(ch: str) -> str | None:
    """A character of the folded view: ASCII, or non-ASCII letters and digits (other symbols become spaces)."""
    if ch in LOOKALIKES:
        return LOOKALIKES[ch]
    if ch in TRADITIONAL:
        return TRADITIONAL[ch]
    if unicodedata.category(ch) in ("Cf", "Mn", "Me") or ch in FILLERS:
        return None
    out = "".join(c for c in unicodedata.normalize("NFKD", ch) if not unicodedata.combining(c)).lower()
    return "".join(LOOKALIKES.get(c, c if c.isascii() or c.isalnum() else " ") for c in out) or None


def _norm_char(ch: str) -> str | None:
    """A character of the normalised view: format characters (zero-width, bidi) dropped, the rest NFKC (fullwidth
    letters to ASCII), case kept."""
    if unicodedata.category(ch) == "Cf" or ch in FILLERS:
        return None
    return unicodedata.normalize("NFKC", ch)


class _CharTable(dict[int, str | None]):
    """A ``str.translate`` table filled on first sight of each character (bounded)."""

    def __init__(self, convert: Callable[[str], str | None]) -> None:
        super().__init__()
        self.convert, self.lowers_ascii = convert, convert("A") == "a"  # ASCII is lower-cased, or kept
        self.sizes = _Sizes(self)

    def __missing__(self, code: int) -> str | None:
        converted = self.convert(chr(code))
        if len(self) < 65_536:
            self[code] = converted
        return converted

    def apply(self, text: str) -> str:
        """``text.translate(self)``; in a long text of few non-ASCII runs (a log) those alone are looked up."""
        runs = _RUNS.findall(text)
        if len(runs) * 256 > len(text):
            return text.translate(self)
        return "".join((run.lower() if self.lowers_ascii else run) if run.isascii() else run.translate(self)
                       for run in runs)

    def origin(self, text: str) -> _Origin:
        """For each character of ``self.apply(text)``, the index of the character of ``text`` it came from."""
        origin, shift = _Origin(), 0  # shift: converted index - original index, where one maps to one
        if not _NOT_ONE.search("".join(_NON_ASCII.findall(text)).translate(self.sizes)):
            return origin  # one for one throughout (most text: ASCII maps to one character, and so do CJK letters)
        for run in _NON_ASCII.finditer(text):
            for m in _NOT_ONE.finditer(run[0].translate(self.sizes)):
                at, size = run.start() + m.start(), ord(m[0])
                if size:
                    origin.add(at + shift, at, 0)
                shift += size - 1
                origin.add(at + 1 + shift, at + 1, 1)
        return origin


class _Origin:
    """Index in a converted text -> index of the original character it came from, kept as the pieces where one
    character maps to one and those where one maps to several (a list of every index costs more than the search)."""

    def __init__(self) -> None:
        self.starts, self.origins, self.steps = [0], [0], [1]  # a piece: converted start, original start, 1 or 0

    def add(self, converted: int, original: int, step: int) -> None:
        self.starts.append(converted)
        self.origins.append(original)
        self.steps.append(step)

    def __getitem__(self, index: int) -> int:
        k = bisect.bisect_right(self.starts, index) - 1
        return self.origins[k] + self.steps[k] * (index - self.starts[k])


class _Sizes(dict[int, str]):
    """A ``str.translate`` table: each character to ``chr`` of the length of what ``table`` turns it into."""

    def __init__(self, table: _CharTable) -> None:
        super().__init__()
        self.table = table

    def __missing__(self, code: int) -> str:
        size = chr(len(self.table[code] or ""))
        if len(self) < 65_536:
            self[code] = size
        return size


_NOT_ONE, _NON_ASCII = re.compile("[^\x01]"), re.compile("[^\x00-\x7f]+")
_RUNS = re.compile("[\x00-\x7f]+|[^\x00-\x7f]+")
_FOLD, _NORM = _CharTable(_fold_char), _CharTable(_norm_char)
# bytes.translate over UTF-8 runs in C; the folded view's non-ASCII characters are letters/digits, so they stay
_SQUEEZE_BYTES = bytes(ord(LEET.get(chr(b), chr(b))) if b < 128 else b for b in range(256))
_SQUEEZE_DROP = bytes(b for b in range(128) if not (chr(b).isalnum() or chr(b) in LEET))
_WORD_BYTES = bytes(b if chr(b).isalnum() and b < 128 else 32 for b in range(256))


def _lower(text: str) -> str:
    lowered = text.lower()  # a few characters lower-case to two: keep indices aligned
    return lowered if len(lowered) == len(text) else "".join(c if len(c.lower()) > 1 else c.lower() for c in text)


class _Views:
    """The text as the rules see it; maps back to original indices are built only on a hit."""

    def __init__(self, text: str) -> None:
        self.text, self.ascii, self.lowered = text, text.isascii(), _lower(text)
        self.folded = self.lowered if self.ascii else _FOLD.apply(text)  # the same thing for ASCII
        utf8 = self.folded.encode()
        self.squeezed = utf8.translate(_SQUEEZE_BYTES, _SQUEEZE_DROP).decode()
        self.words = frozenset(utf8.translate(_WORD_BYTES).decode("ascii").split())

    def origin(self, squeezed: bool) -> _Origin | list[int]:
        folded = _Origin() if self.ascii else _FOLD.origin(self.text)
        kept = (i for i, ch in enumerate(self.folded) if ch.isalnum() or ch in LEET or not ch.isascii())
        return [folded[i] for i in kept] if squeezed else folded


# ---------------------------------------------------------------------------------------------------------- engine

class _Index:
    """Which rules have an anchor present: words by one set intersection, substrings by ``in`` or one regex pass.

    :meth:`hits` also returns the triggers present, so that :func:`_near` looks only for the anchors among them (a
    rule with sixty anchors would otherwise search the text sixty times) -- for the rules whose triggers are their
    anchors (:attr:`own`), and only on the view that was indexed.
    """

    def __init__(self, rules: Sequence[Rule], words: bool) -> None:
        self.words: dict[str, list[int]] = {}
        self.substrings: dict[str, list[int]] = {}
        for i, rule in enumerate(rules):
            for a in rule.triggers:
                (self.words if words and is_word(a) else self.substrings).setdefault(a.lower(), []).append(i)
        self.ascii = [s for s in self.substrings if s.isascii()]
        unicode = sorted((s for s in self.substrings if not s.isascii()), key=len, reverse=True)
        self.unicode = re.compile("|".join(map(re.escape, unicode)) or "(?!)")
        self.contained = {s: [t for t in unicode if t in s] for s in unicode}  # a hit stands for these too
        # the triggers found are the anchors found: the same, or the same substrings in upper case ("KEY" for "key")
        self.own = [tuple(t.lower() for t in rule.triggers) == rule.anchors and (
            rule.triggers == rule.anchors or not any(map(is_word, rule.triggers))) for rule in rules]
        self.word_set = frozenset(self.words)  # set & set walks the smaller one

    def hits(self, view: str, views: _Views) -> tuple[list[int], set[str] | None]:
        words = views.words & self.word_set
        substrings = {s for s in self.ascii if s in view}  # "key" may be both: a word here, inside "AccountKey" there
        m = None if views.ascii else self.unicode.search(view)
        while m:  # restart one past each hit, so overlapping substrings are all seen
            substrings.update(self.contained[m[0]])
            m = self.unicode.search(view, m.start() + 1)
        found = {i for w in words for i in self.words[w]}
        found.update(i for s in substrings for i in self.substrings[s])
        return sorted(found), substrings.union(words)


def _required(rule: Rule, view: str, words: frozenset[str]) -> bool:
    return all(not need.isdisjoint(words) or any(s in view for s in subs) for need, subs in rule.requires)


def _near(rule: Rule, view: str, words: frozenset[str] | None,
          present: set[str] | None = None) -> Iterator[re.Match[str]]:
    """Matches near the anchors (``words``: the folded view's, for whole-word anchors; else all are substrings;
    ``present``: the anchors the index found, if it knows)."""
    positions = set()
    for anchor in rule.anchors if present is None else [a for a in rule.anchors if a in present]:
        whole = words is not None and anchor in rule.words
        if whole and anchor not in words:  # type: ignore[operator]
            continue
        i = view.find(anchor)
        while i >= 0:
            j = i + len(anchor)
            if not (whole and ((i and view[i - 1].isalnum()) or (j < len(view) and view[j].isalnum()))):
                positions.add((i, j))
            i = view.find(anchor, j)
    back, forward = rule.reach
    for i, j in sorted(positions):
        if back:
            yield from rule.pattern.finditer(view, max(0, i - back), j + forward)
        elif m := rule.pattern.match(view, i):
            yield m


def _apply(rules: Sequence[Rule], index: _Index, view: str, views: _Views,
           squeezed: bool) -> list[tuple[Rule, re.Match[str]]]:
    hits = []
    numbers, present = index.hits(view, views)
    for number in numbers:
        rule = rules[number]
        near = _near(rule, view, None if squeezed else views.words, present if index.own[number] else None) if (
            _required(rule, view, views.words)) else ()
        for m in near:
            i = m.start()  # bounded: an ASCII match must start a word
            if not (rule.bounded and i and view[i].isascii() and (view[i - 1].isalnum() or view[i - 1] in "_-")) and (
                    rule.check is None or rule.check(view, m)):
                hits.append((rule, m))
                break
    return hits


_FOLDED_INDEX, _SQUEEZED_INDEX = _Index(FOLDED_RULES, words=True), _Index(SQUEEZED_RULES, words=False)


# --------------------------------------------------------------------------------------------------------- secrets

_SECRET_INDEX = _Index(SECRET_RULES, words=True)
_MAX_SECRET_DEPTH = 2  # base64 inside base64: a registry login inside a Kubernetes .dockerconfigjson


class _Normalised:
    """The text as token formats and layouts are matched in: zero-width and bidi characters dropped, NFKC (fullwidth
    letters and ``＿`` are ASCII), case kept; :meth:`span` maps a span found in it back onto the original."""  # noqa: RUF002

    def __init__(self, views: _Views) -> None:
        text = self.original = views.text
        self._origin: _Origin | None = None
        normalised = text if views.ascii else _NORM.apply(text)
        self.text = text if normalised == text else normalised
        self.lowered = views.lowered if self.text is text else _lower(self.text)

    def span(self, span: Span) -> Span:
        start, end, label = span
        if self.text is self.original:
            return span
        self._origin = self._origin or _NORM.origin(self.original)
        return self._origin[start], self._origin[end - 1] + 1, label


def _secret_spans(text: str, views: _Views | None = None, depth: int = 0) -> list[Span]:
    """Sorted, non-overlapping (start, end, label) spans of secrets; overlapping finds are joined, labelled by the most
    specific (the first listed: token formats, then ``key: value`` rules, then layouts, then encoded blobs).

    Token formats are matched in the normalised view (their case matters; zero-width characters or fullwidth letters
    do not hide one); ``key: value`` style secrets in the folded view (so fullwidth letters or Cyrillic look-alikes in
    the key do not hide one); layouts -- options of commands, credential tables and files, the secret next to its key
    id -- and base64 or hex runs that decode to a secret in the normalised view. Every span indexes ``text``.
    """
    markers = [m.span() for m in _MARKER.finditer(text)] if "[REDACTED:" in text else []
    if markers:  # an earlier redaction: read as the word it replaced, so that what is next to it reads as it did then
        views = _Views(_MARKER.sub(lambda m: "x" * len(m[0]), text))  # "xxx" marks no value (see _NOT_A_VALUE)
    views = views or _Views(text)
    norm = _Normalised(views)
    tokens: list[Span] = []  # in the normalised view's indices
    found: list[Span] = []  # in the original's
    origin: _Origin | list[int] | None = None
    numbers, present = _SECRET_INDEX.hits(views.lowered, views)
    if not views.ascii:
        more, also = _SECRET_INDEX.hits(views.folded, views)
        numbers, present = numbers + more, (present or set()) | (also or set())
    for number in sorted(set(numbers)):
        rule = SECRET_RULES[number]
        view = norm.text if rule.detail == "token" else views.folded
        near = _near(rule, view, None, present if _SECRET_INDEX.own[number] else None)
        covered = 0  # a match inside the last one found adds nothing ("password=password=..." stays linear)
        for m in near if _required(rule, view, views.words) else ():
            if m.start() < covered or not (rule.check is None or rule.check(view, m)):
                continue
            start, end = _query_value(view, m.start(), *value_span(m))
            if view is norm.text:
                label = str(m.lastgroup).replace("_", "-")
                whole = norm.span((*m.span(), label))
            else:
                label = "secret" if rule.detail == "password" and not password_key(rule_key(m)) else rule.detail
                origin = origin or views.origin(False)
                (start, end), whole = ((origin[start], origin[end - 1] + 1),
                                       (origin[m.start()], origin[m.end() - 1] + 1, label))
            if markers and _overlaps(markers, whole):
                continue  # read across an earlier redaction, whose length and letters are not the secret's
            covered = m.end()
            (tokens if view is norm.text else found).append((start, end, label))
    gates = views.words.union(present or ())  # the words and rule triggers in the text: what gates a layout
    layouts = paired_spans(norm.text, tokens) + option_spans(norm.text, gates) + line_spans(norm.text)
    layouts += table_spans(norm.text, norm.lowered, gates) + (
        _encoded_spans(norm.text, depth) if depth < _MAX_SECRET_DEPTH else [])
    spans = [*map(norm.span, tokens), *found, *map(norm.span, layouts)]
    return _joined([span for span in spans if not _overlaps(markers, span)] if markers else spans)


_MARKER = re.compile(r"\[REDACTED:[\w-]+\]")


def _overlaps(markers: list[tuple[int, int]], span: Span) -> bool:
    """Whether ``span`` takes in part of a marker (``markers``: in order): it would cut the marker up."""
    i = bisect.bisect_left(markers, (span[1],))
    return i > 0 and markers[i - 1][1] > span[0]


_QUERY = re.compile(r"\?[^\s?'\"<>]*+$")  # in a URL's query string: a "?" before, on the same word


def _query_value(view: str, match: int, start: int, end: int) -> tuple[int, int]:
    """A value in a URL's query string ends at the next "&" (``?password=...&useSSL=true``)."""
    cut = view.find("&", start, end)
    return (start, cut) if cut > start and _QUERY.search(view, max(0, match - 300), match) else (start, end)


def _joined(spans: list[Span]) -> list[Span]:
    """Overlapping spans made one, under the label of the first listed of them."""
    joined: list[tuple[int, int, int]] = []  # start, end, index of the label's span
    for i in sorted(range(len(spans)), key=lambda i: spans[i][0]):
        start, end, _ = spans[i]
        if joined and start < joined[-1][1]:
            first, last, label = joined[-1]
            joined[-1] = (first, max(last, end), min(label, i))
        elif start < end:
            joined.append((start, end, i))
    return [(start, end, spans[i][2]) for start, end, i in joined]


_ENCODED_RUN = re.compile(r"(?<![A-Za-z0-9+/_-])[A-Za-z0-9+/_-]{16,}+={0,2}")
_HEX_DIGITS = frozenset("0123456789abcdefABCDEF")
# how base64 or hex of ASCII text begins (each byte below 0x80: in base64 a quartet's first sextet is below 32 and its
# second has bit 3 clear; in hex, pairs of printable characters): ids, digests and binary are passed over undecoded
_ASCII_ENCODED = {"base64": re.compile(r"(?:[A-Za-f][A-HQ-Xg-nw-z0-3][\w+/=-]{2})*"),
                  "hex": re.compile(r"(?:[2-7][0-9a-fA-F]|0[9aAdD])*")}


def _encoded_spans(text: str, depth: int) -> list[Span]:
    """Base64 or hex runs that decode to text holding a secret, or to a ``user:password`` pair (Basic auth, a
    registry's ``auth``, npm's ``_auth``)."""
    found = []
    for m in _ENCODED_RUN.finditer(text):
        how = "hex" if len(m[0]) % 2 == 0 and _HEX_DIGITS.issuperset(m[0]) else "base64"
        head = len(m[0]) // 4 * 4 if how == "base64" else len(m[0]) // 2 * 2
        if not _ASCII_ENCODED[how].fullmatch(m[0], 0, min(head, 32)) or (decoded := _decode_blob(m[0], how)) is None:
            continue
        inner = _secret_spans(decoded, depth=depth + 1)
        label = inner[0][2].removeprefix("base64-").removeprefix("hex-") if inner else (
            "password" if credential_pair(decoded) else "")
        if label:
            found.append((m.start(), m.end(), f"{how}-{label}"))
    return found


# ---------------------------------------------------------------------------------------------- invisible characters

def _invisible(text: str) -> list[Finding]:
    runs = [m for m in INVISIBLE.finditer(text) if not legitimate_invisible(text, *m.span())][:_MAX_INVISIBLE]
    names = [", ".join(sorted({f"U+{ord(c):04X}" for c in m[0]})) for m in runs]
    return [Finding("invisible", f"invisible characters {n}", *m.span()) for m, n in zip(runs, names, strict=True)]


# -------------------------------------------------------------------------------------------------------- decoding

_BASE64 = re.compile(r"(?<![\w+/=-])[A-Za-z0-9+/_-]{20,}={0,2}")
_HEX = re.compile(r"(?<![0-9A-Fa-f])[0-9A-Fa-f]{16,}+|(?:\\x[0-9A-Fa-f]{2}){4,}+")
_ESCAPE = re.compile(r"%[0-9A-Fa-f]{2}|&#x?[0-9A-Fa-f]+;?|&[a-z]+;|\\u[0-9A-Fa-f]{4}")
# hex written byte by byte: "63 75 72 6c", "0x63,0x75", "63:75:72" (eight bytes at least: a MAC address is six)
_SPACED_HEX = re.compile(r"(?<![0-9A-Za-z])(?:0x)?[0-9A-Fa-f]{2}(?:[\s,:]{1,3}(?:0x)?[0-9A-Fa-f]{2}){7,}"
                         r"(?![0-9A-Za-z])")
# an encoding the note names for its reader to undo ("ROT13:", "read this backwards"): its line, and the next, are
# read again undone ("reverse proxy" and "反转链表" name no such thing)
# hex digits read as "h", separators as spaces: four spaced pairs show as " hh hh hh hh " (a substring test, in C)
_HEXISH = (bytes(ord("h") if chr(b) in "0123456789abcdefABCDEF" else ord(" ") if chr(b) in " \t\n:" else ord("x")
                 for b in range(256)), b",")
# words of letters and leet digits, a leet digit after a letter that is not a hex digit: "f0rward", "u5er",
# "h4ck3r" (not "python3", "s3", "gpt4", "k8s", nor ids and hashes, which are hex or hold other digits)
_LEETY = re.compile(r"\b[a-z]{0,10}[g-z][013457]+[a-z](?:[a-z]|[013457]+[a-z])*[013457]?\b")  # whole words only
_LEET_PROSE = str.maketrans("013457", "oieast")  # not @ or $: they carry addresses and variables
_ROT13_WORDS = ("rot13", "rot-13", "rot 13", "rot_13", "caesar", "凯撒", "凱撒")
_ROT13 = re.compile(r"\brot[\s_-]?13\b|\bcaesar\b|凯撒|凱撒")  # searched in the lowered text
_REVERSED_WORDS = ("backward", "reverse", "right to left", "right-to-left", "倒着", "倒序", "倒过来", "反过来")
_REVERSED = re.compile(r"\b(?:(?:read|write|written|spelled|spelt|typed)\s+(?:it\s+|this\s+|that\s+)?(?:in\s+)?"
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
_SHELL_NOISE = re.compile(r"(?<=[A-Za-z])(?:''|\"\"|\\|\^|\$@|\$\{\}|\$\(\))(?=[A-Za-z])")


def _decode_blob(blob: str, how: str) -> str | None:
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


def _decoded(text: str, depth: int) -> list[Finding]:
    """Findings inside encoded text, placed on the blob (or the encoded region) in ``text``."""
    regions: list[tuple[int, int, str, str]] = []
    offset = 0
    for token in [t for t in text.split() if 16 <= len(t) <= _MAX_BLOB_CHARS][:_MAX_BLOBS]:  # blobs are long tokens
        offset = text.find(token, offset)
        for how, pattern in (("base64", _BASE64), ("hex", _HEX)):
            regions += [(offset + m.start(), offset + m.end(), how, decoded) for m in pattern.finditer(token)
                        if (decoded := _decode_blob(m[0], how))]
        offset += len(token)
    hexish = text.encode(errors="ignore").translate(*_HEXISH)  # cheap first: the pattern is slow to fail on prose
    if "0x" in text or b" hh hh hh hh " in b" %b " % hexish:
        regions += [(m.start(), m.end(), "hex", decoded) for m in _SPACED_HEX.finditer(text)
                    if (decoded := _decode_blob(re.sub(r"0x|[\s,:]", "", m[0]), "hex"))]
    low = text.lower()  # substring tests first: these patterns are slow to fail on ordinary prose
    if len(_LEETY.findall(low)) >= 3:  # leetspeak prose ("f0rward th3 u5er'5 pa55w0rd5"): read with letters
        regions.append((0, len(text), "leetspeak", text.translate(_LEET_PROSE)))
    if m := _declared(low, _ROT13_WORDS, _ROT13):
        first, end = _declared_line(text, m.start())
        regions.append((first, end, "rot13", codecs.decode(text[first:end], "rot13")))
    if m := _declared(low, _REVERSED_WORDS, _REVERSED):
        first, end = _declared_line(text, m.start())
        regions.append((first, end, "reversed", text[first:end][::-1]))
    if ("%" in text or "&" in text or "\\u" in text) and len(escapes := list(_ESCAPE.finditer(text))) >= 3:
        encoded = text[max(0, escapes[0].start() - 80):escapes[-1].end() + 80]  # the encoded region, with its sentence
        unescaped = unquote(html.unescape(re.sub(r"\\u([0-9A-Fa-f]{4})", lambda m: chr(int(m[1], 16)), encoded)))
        if unescaped != encoded:
            regions.append((escapes[0].start(), escapes[-1].end(), "encoded", unescaped))
    shelly = "''" in text or '""' in text or "\\" in text or "^" in text or "$" in text  # the regex is slower than `in`
    if shelly and (noise := list(_SHELL_NOISE.finditer(text))):  # scanned as the shell would run it
        regions.append((noise[0].start(), noise[-1].end(), "shell quoting", _SHELL_NOISE.sub("", text)))
    if not text.isascii():
        regions += [(*m.span(), "tag characters", "".join(chr(ord(c) - 0xE0000) for c in m[0]))
                    for m in TAG_TEXT.finditer(text)]
    return [Finding(f.kind, f"{how} → {f.detail}", start, end)
            for start, end, how, decoded in regions[:_MAX_BLOBS] for f in _scan(decoded, depth + 1)]


# ------------------------------------------------------------------------------------------------------ public API

def _scan(text: str, depth: int) -> list[Finding]:
    views = _Views(text)
    findings = [] if views.ascii else _invisible(text)
    findings += [Finding("secret", f"{label} ({end - start} chars)", start, end)
                 for start, end, label in _secret_spans(text, views, depth)]
    for rules, index, squeezed in ((FOLDED_RULES, _FOLDED_INDEX, False), (SQUEEZED_RULES, _SQUEEZED_INDEX, True)):
        hits = _apply(rules, index, views.squeezed if squeezed else views.folded, views, squeezed)
        origin = views.origin(squeezed) if hits else []
        for rule, m in hits:
            first, last = origin[m.start()], origin[m.end() - 1] + 1
            if rule.kind == "injection" and quoted_example(text, first, last):
                continue  # an attack phrase cited in quotes by a note about attacks: a mention, not an order
            excerpt = " ".join(INVISIBLE.sub("", redact_secrets(text[first:last])).split())
            excerpt = excerpt if len(excerpt) <= 60 else excerpt[:57] + "…"
            findings.append(Finding(rule.kind, f"{rule.detail}: '{excerpt}'", first, last))
    return findings + _decoded(text, depth) if depth < _MAX_DEPTH else findings


def scan(text: str) -> list[Finding]:
    """Return why ``text`` is unsafe to put in a prompt (``[]`` when it is clean); never raises.

    At most one finding per kind and overlapping region, ordered by position.
    """
    kept: list[Finding] = []
    for f in sorted(_scan(text, 0), key=lambda f: (f.start, -f.end)):
        if not any(k.kind == f.kind and f.start < k.end and k.start < f.end for k in kept):
            kept.append(f)
    return kept


def is_safe(text: str) -> bool:
    """Whether :func:`scan` finds nothing in ``text``."""
    return not scan(text)


def placeholder(findings: Sequence[Finding]) -> str:
    """What replaces a hostile entry in a prompt; the entry itself stays on disk for review."""
    kinds = {f.kind for f in findings}
    named = [_LABELS[k] for k in KINDS if k in kinds] + sorted(kinds - set(KINDS))
    return f"[memory entry withheld{': looks like ' + ', '.join(named) if named else ''}; review it with " \
           "`hermes-ctx memory show`]"


_MAX_PASSES = 4


def redact_secrets(text: str) -> str:
    """Replace every secret in ``text`` with ``[REDACTED:<kind>]``; applying it twice changes nothing.

    Any ``str`` is accepted (lone surrogates too) and the work is linear in its length: it runs on every stored turn.
    A marker reads as the word it replaced and no match may take one in (:func:`_secret_spans`), but it is not as long
    as the secret, has no spaces or line breaks in it, and so may still change what a rule sees around it (a glued
    "-----END PRIVATE KEY-----host:5432:db:user:pw" is a pgpass line once the key is out): text in which secrets were
    found is read again until nothing more is (at most four passes; clean text is read once).
    """
    for _ in range(_MAX_PASSES):
        parts, last = [], 0
        for start, end, label in _secret_spans(text):
            parts += [text[last:start], f"[REDACTED:{label}]"]
            last = end
        if not parts:
            break
        text = "".join([*parts, text[last:]])
    return text

"""How the scanner reads a text: the views rules run on, and the maps from each back to the original.

Views: the raw text (invisible characters, which are the attack), a *normalised* one (format characters dropped,
NFKC, case kept: secrets' token formats and layouts, however split or widened), a *folded* one (NFKD without combining
marks, fullwidth/mathematical letters to ASCII, Cyrillic/Greek look-alikes to Latin, Traditional Chinese to
Simplified, lower case, format characters removed, symbols to spaces) and a *squeezed* one (folded without spaces or
punctuation, leetspeak read as letters) for phrases hostile however spelt: "i g n o r e", "ign.ore", "1gn0r3",
"忽 略", "請無視". Maps back to original indices are built only when a rule hits.
"""

from __future__ import annotations

import bisect
import itertools
import re
import unicodedata
from collections.abc import Callable

from ..rules.record import lazy
from .tables import FILLERS, IGNORABLE_RANGES, LEET, LETTER_LOOKALIKES, LOOKALIKES, TRADITIONAL

#: a found span: (start, end, label), as indices into the text
Span = tuple[int, int, str]


def _hidden_control(ch: str) -> bool:
    """A control character but the tab, the line breaks and the vertical tab and form feed (NUL, ESC, DEL, the
    separators U+001C-U+001F, C1 with NEL): it renders as nothing, or as an order to the terminal, so like a
    zero-width character it must not split a secret or a phrase out of the rules' sight ("password:\\x00 hunter2";
    red-team passes, session 26)."""
    return unicodedata.category(ch) == "Cc" and ch not in "\t\n\x0b\x0c\r"


def plain_ascii(text: str) -> bool:
    """Whether no view changes a character of ``text`` but for case: ASCII without a control a view drops."""
    return text.isascii() and not _HIDDEN_ASCII.search(text)


def _ignorable(ch: str) -> bool:
    """A code point Unicode says renders as nothing that this Python's tables leave unassigned (U+2065, U+FFF0-U+FFF8,
    U+E0000-U+E0FFF; U+13439-U+1343F, format characters since Unicode 15): split by one, a token hid (a red-team
    pass)."""
    code = ord(ch)
    return any(low <= code <= high for low, high in IGNORABLE_RANGES)


def _fold_char(ch: str) -> str | None:
    """A character of the folded view: ASCII, or non-ASCII letters and digits (other symbols become spaces)."""
    if ch in LOOKALIKES:
        return LOOKALIKES[ch]
    if ch in TRADITIONAL:
        return TRADITIONAL[ch]
    if unicodedata.category(ch) in ("Cf", "Mn", "Me") or ch in FILLERS or _hidden_control(ch) or _ignorable(ch):
        return None
    out = "".join(c for c in unicodedata.normalize("NFKD", ch) if not unicodedata.combining(c)).lower()
    return "".join(LOOKALIKES.get(c, c if c.isascii() or c.isalnum() else " ") for c in out) or None


def _norm_char(ch: str) -> str | None:
    """A character of the normalised view: format characters (zero-width, bidi), combining marks and variation
    selectors dropped (a token's characters carry none: U+FE0F or U+034F inside one hid it), the rest NFKC
    (fullwidth letters to ASCII), case kept."""
    if unicodedata.category(ch) in ("Cf", "Mn", "Me") or ch in FILLERS or _hidden_control(ch) or _ignorable(ch):
        return None
    if ch in LETTER_LOOKALIKES:  # a token's prefix or a PEM header spelt with a look-alike letter (Cyrillic, Greek)
        return LETTER_LOOKALIKES[ch]
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
        return "".join((run.lower() if self.lowers_ascii else run) if run[0] in _PLAIN else run.translate(self)
                       for run in runs)

    def origin(self, text: str) -> Origin:
        """For each character of ``self.apply(text)``, the index of the character of ``text`` it came from."""
        origin, shift = Origin(), 0  # shift: converted index - original index, where one maps to one
        if not _NOT_ONE.search("".join(_NOT_PLAIN.findall(text)).translate(self.sizes)):
            return origin  # one for one throughout (most text: ASCII maps to one character, and so do CJK letters)
        for run in _NOT_PLAIN.finditer(text):
            for m in _NOT_ONE.finditer(run[0].translate(self.sizes)):
                at, size = run.start() + m.start(), ord(m[0])
                if size:
                    origin.add(at + shift, at, 0)
                shift += size - 1
                origin.add(at + 1 + shift, at + 1, 1)
        return origin


class Origin:
    """Index in a converted text -> index of the original character it came from, kept as the pieces where one
    character maps to one and those where one maps to several (a list of every index costs more than the search).
    A piece's step is 1, 0, or how long each of its characters is in the original (:class:`Unescaped`: 2 or 6)."""

    def __init__(self) -> None:
        self.starts, self.origins, self.steps = [0], [0], [1]  # a piece: converted start, original start, step

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


#: the ASCII characters every view keeps as they are (but for case): white space and the printable ones; the others
#: (:func:`_hidden_control`) are dropped, and a text holding one is not read as plain ASCII
_PLAIN_RANGE = "\t-\r -\x7e"
_PLAIN = frozenset(map(chr, [*range(0x09, 0x0E), *range(0x20, 0x7F)]))
_HIDDEN_ASCII = lazy(f"[^{_PLAIN_RANGE}\x80-\U0010ffff]")
_NOT_ONE, _NOT_PLAIN = lazy("[^\x01]"), lazy(f"[^{_PLAIN_RANGE}]+")
_RUNS = lazy(f"[{_PLAIN_RANGE}]+|[^{_PLAIN_RANGE}]+")
_FOLD, _NORM = _CharTable(_fold_char), _CharTable(_norm_char)
# bytes.translate over UTF-8 runs in C; the folded view's non-ASCII characters are letters/digits, so they stay
_SQUEEZE_BYTES = bytes(ord(LEET.get(chr(b), chr(b))) if b < 128 else b for b in range(256))
_SQUEEZE_DROP = bytes(b for b in range(128) if not (chr(b).isalnum() or chr(b) in LEET))
_WORD_BYTES = bytes(b if chr(b).isalnum() and b < 128 else 32 for b in range(256))


def lower(text: str) -> str:
    lowered = text.lower()  # a few characters lower-case to two: keep indices aligned
    return lowered if len(lowered) == len(text) else "".join(c if len(c.lower()) > 1 else c.lower() for c in text)


class Views:
    """The text as the rules see it; maps back to original indices are built only on a hit."""

    def __init__(self, text: str) -> None:
        self.ascii = plain_ascii(text)
        self.text, self.lowered = text, lower(text)
        self.folded = self.lowered if self.ascii else _FOLD.apply(text)  # the same thing for ASCII
        utf8 = self.folded.encode()
        self.squeezed = utf8.translate(_SQUEEZE_BYTES, _SQUEEZE_DROP).decode()
        self.words = frozenset(utf8.translate(_WORD_BYTES).decode("ascii").split())

    def origin(self, squeezed: bool) -> Origin | Kept:
        """Index in the folded view (``squeezed``: in the squeezed one) -> index in the text."""
        folded = Origin() if self.ascii else _FOLD.origin(self.text)
        if not squeezed:
            return folded
        # the folded characters the squeezed view keeps (letters, digits, leetspeak, anything not ASCII), found in C
        flags = self.folded.translate(_KEPT).encode("latin-1")
        return Kept(list(itertools.compress(range(len(flags)), flags)), folded)


class Kept:
    """Index in the squeezed view -> index in the text: the folded character it is, mapped back (only those asked)."""

    __slots__ = ("_folded", "_kept")

    def __init__(self, kept: list[int], folded: Origin) -> None:
        self._kept, self._folded = kept, folded

    def __getitem__(self, index: int) -> int:
        return self._folded[self._kept[index]]


class _KeptTable(dict[int, str]):
    """A ``str.translate`` table: ``"\x01"`` for a character the squeezed view keeps, ``"\x00"`` for one it drops."""

    def __missing__(self, code: int) -> str:
        return "\x01"  # not ASCII: kept (the folded view's non-ASCII characters are letters and digits)


_KEPT = _KeptTable({b: "\x01" if chr(b).isalnum() or chr(b) in LEET else "\x00" for b in range(128)})


class Normalised:
    """The text as token formats and layouts are matched in: zero-width and bidi characters dropped, NFKC (fullwidth
    letters and ``＿`` are ASCII), case kept; :meth:`span` maps a span found in it back onto the original."""  # noqa: RUF002

    def __init__(self, views: Views) -> None:
        text = self.original = views.text
        self._origin: Origin | None = None
        normalised = text if views.ascii else _NORM.apply(text)
        self.text = text if normalised == text else normalised
        self.lowered = views.lowered if self.text is text else lower(self.text)

    def span(self, span: Span) -> Span:
        start, end, label = span
        if self.text is self.original:
            return span
        self._origin = self._origin or _NORM.origin(self.original)
        return self._origin[start], self._origin[end - 1] + 1, label


#: an escape in a JSON string: ``\\n``, ``\\"``, a run of ``\\u00e9`` (decoded only where letters are asked for)
_JSON_ESCAPE = lazy(r'\\["\\/bfnrt]|(?:\\u[0-9a-fA-F]{4})+')
_JSON_SHORT = lazy(r'\\["\\/bfnrt]|"')  # the two-character escapes, and the quotes that are no escape
_JSON_ESCAPED = {"n": "\n", "r": "\r", "t": "\t", "b": "\b", "f": "\f", '"': '"', "\\": "\\", "/": "/"}


class Unescaped:
    """A JSON string's text as written out (``\\n`` a line break), for the layouts that read lines: hermes' tools
    answer in JSON (``{"output": "user,password\\nalice,..."}``) and take their arguments so, and a credentials table
    or a ``.pgpass`` in one was read as a single line (a red-team pass). A quote that is not escaped, where a JSON
    string starts or ends, reads as a line break (``{"output": "host:5432:...`` starts a line at ``host``).
    ``letters``: ``\\u00e9`` is read as é too (each escape one character, a pair of surrogates for one beyond U+FFFF);
    it costs a step per run of them, so only where a name the layouts look for is written so. :meth:`span` maps a
    span found in :attr:`text` onto the escaped original, whole escapes included."""

    def __init__(self, escaped: str, *, letters: bool = False) -> None:
        self._origin: Origin | None = None
        if not letters:  # every escape is two characters: replaced in one pass, mapped by counting them
            self._at: list[int] = []  # where each escape's character is in the text

            def short(m: re.Match[str]) -> str:
                if m[0] == '"':
                    return "\n"
                self._at.append(m.start() - len(self._at))
                return _JSON_ESCAPED[m[0][1]]

            self.text = _JSON_SHORT.sub(short, escaped)
            return
        parts: list[str] = []
        self._origin = Origin()  # literal text maps one to one; "\\n" two to one; a run of "\\u...." six to one
        last = converted = 0
        for m in _JSON_ESCAPE.finditer(escaped):
            parts.append(escaped[last:m.start()].replace('"', "\n"))
            converted += m.start() - last
            code = m[0][1]
            chars = m[0].encode("ascii").decode("unicode_escape") if code == "u" else _JSON_ESCAPED[code]
            self._origin.add(converted, m.start(), 6 if code == "u" else 2)
            parts.append(chars)
            converted += len(chars)
            last = m.end()
            self._origin.add(converted, last, 1)
        self.text = "".join([*parts, escaped[last:].replace('"', "\n")])

    def _original(self, index: int) -> int:
        if self._origin is not None:
            return self._origin[index]
        return index + bisect.bisect_left(self._at, index)  # the escapes before it: one character longer each

    def span(self, span: Span) -> Span:
        start, end, label = span
        return self._original(start), self._original(end), label


#: a line holding a JSON string, whose escapes end a value's line: a key and its value, an escaped quote, or a line
#: that is one string (an array's element in JSON printed with indentation; not a line that only starts or ends with a
#: quote, as a shell's echo "...", a CSV row or a quoted sentence does: their passwords' backslashes are characters)
_JSON_STRINGS = lazy(r'"\s*:\s*["\[{]|\\"|^\s*"[^"]*"\s*,?\s*$')


def keyed_view_of(views: Views) -> str:
    """The view the ``key: value`` rules read: the folded one. On a line holding no JSON string a backslash is a
    character like another (a password's literal ``\\n`` or ``\\t`` in a user's message or a pasted file is not its
    line's end, as a JSON string's escape is: a red-team pass found such secrets kept), so there it reads as one the
    rules take as such. Line by line: a config snippet elsewhere in a message does not make its password JSON."""
    folded = views.folded
    if "\\" not in folded:
        return folded
    return _PHYSICAL_LINE.sub(lambda m: m[0] if "\\" not in m[0] or _JSON_STRINGS.search(m[0])
                              else m[0].replace("\\", "\x7f"), folded)


_PHYSICAL_LINE = lazy(r"[^\n]+")

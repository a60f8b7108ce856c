"""The secret redactor: every secret the secret rules and layouts find, replaced with ``[REDACTED:<kind>]``.

:func:`redact_secrets` runs before a turn, a memory or a request is stored or sent; base64 or hex that decodes to a
secret is replaced whole. It runs on every stored turn, so it is linear in the text's length (``tests/test_redact.py``
feeds it a megabyte built to make rules backtrack).
"""

from __future__ import annotations

import bisect
import functools
import itertools
import json
import re
from collections.abc import Sequence

from ..rules.record import lazy
from . import match
from .context import holds
from .decode import decode_blob
from .layouts import (
    credential_pair,
    escaped_columns,
    line_spans,
    non_ascii_columns,
    opening_words,
    option_spans,
    paired_spans,
    table_spans,
)
from .values import cased_word, password_key, rule_key, value_span
from .views import Kept, Normalised, Origin, Span, Unescaped, Views, keyed_view_of, lower, plain_ascii

_MAX_SECRET_DEPTH = 2  # base64 inside base64: a registry login inside a Kubernetes .dockerconfigjson


def secret_spans(text: str, views: Views | None = None, depth: int = 0) -> list[Span]:
    """Sorted, non-overlapping (start, end, label) spans of secrets; overlapping finds are joined, labelled by the most
    specific (the first listed: token formats, then ``key: value`` rules, then layouts, then encoded blobs).

    Token formats are matched in the normalised view (their case matters; zero-width characters or fullwidth letters
    do not hide one); ``key: value`` style secrets in the folded view (so fullwidth letters or Cyrillic look-alikes in
    the key do not hide one); layouts -- options of commands, credential tables and files, the secret next to its key
    id -- and base64 or hex runs that decode to a secret in the normalised view. Every span indexes ``text``.
    """
    markers = [m.span() for m in _MARKER.finditer(text)] if "[REDACTED:" in text else []
    if markers:  # an earlier redaction: read as the word it replaced, so that what is next to it reads as it did then
        views = Views(_MARKER.sub(lambda m: "x" * len(m[0]), text))  # "xxx" marks no value (values._NOT_A_VALUE)
    views = views or Views(text)
    norm = Normalised(views)
    json_document = _json_document(norm.text)
    tokens, found, keyed = _rule_spans(views, norm, markers)
    gates = views.words.union(keyed)  # the words and rule triggers in the text: what gates a layout
    # a JSON document's commands are read in its strings alone: read raw, a shell word ran on past the string's end
    # quote ('"-pX", "background": false}' was one word) and its redaction took the JSON's structure with it
    # a key pair's secret half is read with escapes of white space as white space too: its id may have been found so
    pairing = _all_spaced(norm.text) if tokens else norm.text
    layouts = paired_spans(pairing, tokens) + ([] if json_document else option_spans(norm.text, gates))
    layouts += line_spans(norm.text) + table_spans(norm.text, norm.lowered, gates) + (
        _encoded_spans(norm.text, depth) if depth < _MAX_SECRET_DEPTH else [])
    if json_document or _ESCAPED_BREAK in norm.text:  # a JSON string's lines (a tool's answer or arguments)
        layouts += _escaped_layouts(norm.text, norm.lowered, gates)
    if _ESCAPED_QUOTE in norm.text and keyed:
        layouts += _escaped_keys(norm.text)
    if "\\u" in norm.text:
        layouts += _escaped_chinese_keys(norm.text)
    spans = [*map(norm.span, tokens), *found, *map(norm.span, layouts)]
    return _joined([span for span in spans if not _overlaps(markers, span)] if markers else spans)


def _rule_spans(views: Views, norm: Normalised, markers: list[tuple[int, int]],
                keys_only: bool = False) -> tuple[list[Span], list[Span], set[str]]:
    """The secret rules' finds: token formats (in the normalised view's indices), ``key: value`` secrets (in the
    original's), and the rule triggers the text holds; ``keys_only``: the ``key: value`` rules alone.

    Token formats are read a second time with a JSON string's white-space escapes as the white space they write
    (:func:`_spaced_escapes`, :func:`_deep_spaced` for JSON inside JSON): a token after one was read glued to its
    letter ("\\nghp_...": no token starts in "nghp_"; a README audit). ``key: value`` rules read the text as written
    only: read spaced, a quoted JSON value holding an escaped tab was cut there and kept whole, and a line of
    ``\\u``-escaped Chinese after "password" was taken for its value (a red-team pass). (Layouts read a JSON
    string's lines by :func:`_escaped_layouts`.)"""
    tokens, found, keyed = _rules_read(views, norm, markers, keys_only)
    if keys_only or "\\" not in norm.text or not _glued_token().search(norm.text):
        return tokens, found, keyed  # no token's start right after an escape: nothing more to find (most text)
    spaced, deep = _spaced_escapes(views.text), _deep_spaced(views.text)
    for reading in [text for text in (spaced, deep if deep != spaced else None) if text is not None]:
        # the same length, and the same normalised indices: the escapes are ASCII, and so is what they become
        read = Views(reading)
        more, _, present = _rules_read(read, Normalised(read), markers, keys_only, tokens_only=True)
        tokens, keyed = tokens + more, keyed | present
    return tokens, found, keyed


@functools.cache
def _glued_token() -> re.Pattern[str]:
    """A white-space escape (``\\n``, ``\\\\t``, ...) right before where a token format starts (its anchors)."""
    anchors = {anchor for rule in match.table("secrets").rules if rule.view == "normalised" for anchor in rule.anchors}
    # (?<!\\): a run of backslashes is tried once, from its first, not from each (quadratic: a red-team pass)
    return re.compile(r"(?<!\\)\\+[nrtbf](?:" + "|".join(map(re.escape, sorted(anchors))) + ")", re.IGNORECASE)


def _rules_read(views: Views, norm: Normalised, markers: list[tuple[int, int]], keys_only: bool,
                tokens_only: bool = False) -> tuple[list[Span], list[Span], set[str]]:
    """:func:`_rule_spans` of the text ``views`` reads, as it is (``tokens_only``: the token formats alone)."""
    tokens: list[Span] = []  # in the normalised view's indices
    found: list[Span] = []  # in the original's
    origin: Origin | Kept | None = None
    secrets = match.table("secrets")
    numbers, present = secrets.index.hits(views.lowered, views)
    if not views.ascii:
        more, also = secrets.index.hits(views.folded, views)
        numbers, present = numbers + more, (present or set()) | (also or set())
    keyed_view: str | None = None
    for number in sorted(set(numbers)):
        rule = secrets.rules[number]
        if (keys_only and rule.view == "normalised") or (tokens_only and rule.view != "normalised"):
            continue
        if rule.view != "normalised" and keyed_view is None:
            keyed_view = keyed_view_of(views)
        view = norm.text if rule.view == "normalised" else keyed_view or views.folded
        tried = _Tried()
        near = match.near(rule, view, None, present if secrets.index.own[number] else None, tried.skip)
        for m in near if match.required(rule, view, views.words) else ():
            if m.start() < tried.covered:
                continue
            if not holds(rule, view, m):
                tried.rejected(m.start(), m.end())
                continue
            start, end = _query_value(view, m.start(), *value_span(m))
            if rule.view == "normalised":
                label = str(m.lastgroup).replace("_", "-")
                whole = norm.span((*m.span(), label))
            else:
                label = "secret" if rule.detail == "password" and not password_key(rule_key(m)) else rule.detail
                origin = origin or views.origin(False)
                (start, end), whole = ((origin[start], origin[end - 1] + 1),
                                       (origin[m.start()], origin[m.end() - 1] + 1, label))
                if cased_word(views.text[start:end], chinese_key=bool("zh" in m.re.groupindex and m["zh"])):
                    # "密码: Settings", "password=PasswordField", "password=userPassword": a label, a name of code
                    tried.rejected(m.start(), m.end())
                    continue
            if markers and _overlaps(markers, whole):
                continue  # read across an earlier redaction, whose length and letters are not the secret's
            tried.covered = m.end()
            (tokens if rule.view == "normalised" else found).append((start, end, label))
    return tokens, found, present or set()


def _escaped_keys(text: str, levels: int = 4) -> list[Span]:
    """The ``key: value`` secrets of ``text`` read as a JSON string writes it out, in ``text``'s indices: JSON inside a
    tool's JSON answer (``{"output": "{\\"password\\": \\"...\\"}"}``, a ``cat`` of a config file) has its quotes
    escaped, and the rules, which read a key's quotes, read none there (a red-team pass). Four levels deep. Only the
    stretches around an escaped quote next to a ``:`` or ``=`` are read again (:func:`_quoted_stretches`): the rest
    reads as it did, and a long tool answer is not read twice (a third more time on a coding agent's transcript)."""
    found: list[Span] = []
    for start, end in _quoted_stretches(text):
        plain = Unescaped(text[start:end])
        views = Views(plain.text)
        norm = Normalised(views)
        _, inner, _ = _rule_spans(views, norm, [], keys_only=True)
        if levels > 1 and _ESCAPED_QUOTE in plain.text:
            inner += [norm.span(span) for span in _escaped_keys(norm.text, levels - 1)]
        # an escape of the text read is replaced whole or not at all, as redact_secrets does in the outer text: a
        # value ending inside one (the \\ of a quote the secret holds) broke the inner JSON (a red-team pass)
        whole = [(_inner_escape_at(plain.text, a)[0], _inner_escape_at(plain.text, b)[1], label)
                 for a, b, label in inner]
        found += [(start + a, start + b, label) for a, b, label in map(plain.span, whole)]
    return found


#: a Chinese password key as JSON written with ensure_ascii escapes it (密码, 口令, 密钥, 秘钥, 令牌, 私钥)
_ESCAPED_ZH_KEY = lazy(r"\\u(?:5bc6\\u7801|53e3\\u4ee4|5bc6\\u94a5|79d8\\u94a5|4ee4\\u724c|79c1\\u94a5)", re.IGNORECASE)
_ESCAPED_LETTER = lazy(r"\\u[0-9a-f]{4}", re.IGNORECASE)


def _escaped_chinese_keys(text: str) -> list[Span]:
    """The ``key: value`` secrets after a Chinese key that JSON written with ``ensure_ascii`` (Python's default: many
    MCP servers and scripts) writes as ``\\u5bc6\\u7801``, read with those escapes as the letters they write, in
    ``text``'s indices (whole escapes). Only a stretch from a few letters before each such key (a verb before it
    makes it a step, "\\u4fee\\u6539\\u5bc6\\u7801": 修改密码) to :data:`_STRETCH` after it is read again."""
    found: list[Span] = []
    stretches: list[list[int]] = []
    for m in _ESCAPED_ZH_KEY.finditer(text):
        start = m.start()
        for _ in range(4):
            if start < 6 or not _ESCAPED_LETTER.fullmatch(text, start - 6, start):
                break
            start -= 6
        if stretches and start <= stretches[-1][1]:  # one read for keys close together (linear in the text)
            stretches[-1][1] = min(len(text), m.end() + _STRETCH)
        else:
            stretches.append([start, min(len(text), m.end() + _STRETCH)])
    for start, end in stretches:
        plain = Unescaped(text[start:end], letters=True)
        views = Views(plain.text)
        _, inner, _ = _rule_spans(views, Normalised(views), [], keys_only=True)
        whole = [(_inner_escape_at(plain.text, a)[0], _inner_escape_at(plain.text, b)[1], label)
                 for a, b, label in inner]
        found += [(start + a, start + b, label) for a, b, label in map(plain.span, whole)]
    return found


_STRETCH = 512  # read this far on each side of an escaped quote closing a key or opening its value


def _quoted_stretches(text: str) -> list[tuple[int, int]]:
    """The stretches of ``text`` within :data:`_STRETCH` of an escaped quote next to a ``:`` or ``=`` (spaces
    between), joined where they overlap, none starting or ending inside a backslash escape."""
    stretches: list[tuple[int, int]] = []
    at = text.find(_ESCAPED_QUOTE)
    while at >= 0:
        after = at + len(_ESCAPED_QUOTE)
        if text[after:after + 16].lstrip()[:1] in _ASSIGNS or text[max(0, at - 16):at].rstrip()[-1:] in _ASSIGNS:
            start, end = max(0, at - _STRETCH), min(len(text), after + _STRETCH)
            while start and text[start - 1] == "\\":
                start -= 1
            while end < len(text) and text[end - 1] == "\\":
                end += 1
            if stretches and start <= stretches[-1][1]:
                stretches[-1] = (stretches[-1][0], max(end, stretches[-1][1]))
            else:
                stretches.append((start, end))
        at = text.find(_ESCAPED_QUOTE, after)
    return stretches


_ASSIGNS = (":", "=")


_MARKER = lazy(r"\[REDACTED:[\w-]+\]")


def _escaped_layouts(text: str, lowered: str, gates: frozenset[str], levels: int = 2) -> list[Span]:
    """The layouts of ``text`` read as a JSON string writes it out (:class:`~.views.Unescaped`), in ``text``'s
    indices; JSON inside it (a kubectl answer in a tool's answer: its lines are ``\\\\n``) is read too."""
    # escaped letters ("\u5bc6\u7801", 密码) are read only where a column's name or a box-drawn border is written so
    plain = Unescaped(text, letters="\\u" in text and bool(escaped_columns(lowered) or "\\u2502" in lowered))
    # a word right after an escape is glued to its letter ("\\npassword" holds the word "npassword")
    words = gates.union([word[1:] for word in gates if word and word[0] in "nrtbf"], non_ascii_columns(plain.text))
    found = line_spans(plain.text)
    if opening_words(words):  # a command's program, a credential column's name: what the others start from
        found += option_spans(plain.text, words) + table_spans(plain.text, lower(plain.text), words)
    if levels > 1 and _ESCAPED_BREAK in plain.text:
        found += _escaped_layouts(plain.text, lower(plain.text), words, levels - 1)
    return list(map(plain.span, found))


def _json_document(text: str) -> bool:
    """Whether ``text`` is a JSON object or array (a tool call's arguments, a tool's answer)."""
    stripped = text.strip()
    if not ((stripped[:1] == "{" and stripped[-1:] == "}") or (stripped[:1] == "[" and stripped[-1:] == "]")):
        return False
    try:
        json.loads(stripped)
    except (ValueError, RecursionError):
        return False
    return True


_ESCAPED_BREAK = "\\n"  # a line break as a JSON string writes it
_ESCAPED_QUOTE = '\\"'  # a quote as a JSON string writes it
#: a backslash escape, read left to right (so ``\\\\n`` is an escaped backslash, then the letter n)
_ANY_ESCAPE = lazy(r"\\[\s\S]")
_WHITE_ESCAPE = lazy(r"\\[nrtbf]")
#: a JSON string's white-space escapes as white space of the same length (the line break kept: lines are read)
_SPACED = {"\\n": " \n", "\\r": " \r", "\\t": " \t", "\\b": "  ", "\\f": "  "}


def _spaced_escapes(text: str) -> str | None:
    """``text`` with each backslash escape of white space (``\\n``, ``\\t``, ...) written as that white space after a
    blank, every index kept; ``None`` when it holds none."""
    if "\\" not in text or not _WHITE_ESCAPE.search(text):
        return None
    spaced = _ANY_ESCAPE.sub(lambda m: _SPACED.get(m[0], m[0]), text)
    return None if spaced == text else spaced


_DEEP_ESCAPE, _ESCAPE_RUN = lazy(r"(?<!\\)\\{2,}[nrtbf]"), lazy(r"(?<!\\)\\+[nrtbf]")
_WHITE = {"n": "\n", "r": "\r", "t": "\t", "b": " ", "f": " "}


def _deep_spaced(text: str) -> str | None:
    """``text`` with every run of backslashes before ``n``, ``r``, ``t``, ``b`` or ``f`` read as white space (a line
    break or a tab of JSON inside JSON, at any depth), every index kept; ``None`` when it holds no run of two or more
    (:func:`_spaced_escapes` reads the others). Read beside the text as one level writes it: a Windows path's
    ``\\\\new`` reads as a break here too."""
    return _all_spaced(text) if _DEEP_ESCAPE.search(text) else None


def _all_spaced(text: str) -> str:
    """``text`` with every run of backslashes before ``n``, ``r``, ``t``, ``b`` or ``f`` read as white space."""
    if "\\" not in text or not _WHITE_ESCAPE.search(text):
        return text
    return _ESCAPE_RUN.sub(lambda m: " " * (len(m[0]) - 1) + _WHITE[m[0][-1]], text)


class _Tried:
    """Where one rule's matches need not be looked for again, for a rule whose matches start at an anchor.

    A match inside the last one found adds nothing ("password=password=..." stays linear): :attr:`covered`. A match
    that does not hold (``sk-`` then a long run of word characters and dashes, not random) is not looked for again
    at every anchor inside it either: each of those runs to the same end, so a run of ``-sk-sk-sk...`` cost its
    length squared (64 kB: 10 s). Only the first :data:`_RETRIES` anchors inside a match that did not hold are tried
    (a key glued after a word or two, ``sk-old-sk-proj-...``, is still found): each character is read a bounded
    number of times.
    """

    def __init__(self) -> None:
        self.covered = 0  # the end of the last match that holds
        self.refused = 0  # the end of the last match that did not hold, outside any that did
        self.retries = 0  # the anchors tried inside it

    def skip(self, at: int) -> bool:
        if at < self.covered:
            return True
        if at < self.refused:
            self.retries += 1
            return self.retries > _RETRIES
        return False

    def rejected(self, start: int, end: int) -> None:
        if start >= self.refused:
            self.refused, self.retries = end, 0
        else:
            self.refused = max(self.refused, end)


_RETRIES = 4


def _overlaps(markers: list[tuple[int, int]], span: Span) -> bool:
    """Whether ``span`` takes in part of a marker (``markers``: in order): it would cut the marker up."""
    i = bisect.bisect_left(markers, (span[1],))
    return i > 0 and markers[i - 1][1] > span[0]


_QUERY = lazy(r"\?[^\s?'\"<>]*+$")  # in a URL's query string: a "?" before, on the same word


def _query_value(view: str, at: int, start: int, end: int) -> tuple[int, int]:
    """A value in a URL's query string ends at the next "&" (``?password=...&useSSL=true``)."""
    cut = view.find("&", start, end)
    return (start, cut) if cut > start and _QUERY.search(view, max(0, at - 300), at) else (start, end)


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


_ENCODED_RUN = lazy(r"(?<![A-Za-z0-9+/_-])[A-Za-z0-9+/_-]{16,}+={0,2}")
_HEX_DIGITS = frozenset("0123456789abcdefABCDEF")
# how base64 or hex of ASCII text begins (each byte below 0x80: in base64 a quartet's first sextet is below 32 and its
# second has bit 3 clear; in hex, pairs of printable characters): ids, digests and binary are passed over undecoded
_ASCII_ENCODED = {"base64": lazy(r"(?:[A-Za-f][A-HQ-Xg-nw-z0-3][\w+/=-]{2})*"),
                  "hex": lazy(r"(?:[2-7][0-9a-fA-F]|0[9aAdD])*")}


def _encoded_spans(text: str, depth: int) -> list[Span]:
    """Base64 or hex runs that decode to text holding a secret, or to a ``user:password`` pair (Basic auth, a
    registry's ``auth``, npm's ``_auth``)."""
    found = []
    for m in _ENCODED_RUN.finditer(text):
        how = "hex" if len(m[0]) % 2 == 0 and _HEX_DIGITS.issuperset(m[0]) else "base64"
        head = len(m[0]) // 4 * 4 if how == "base64" else len(m[0]) // 2 * 2
        if not _ASCII_ENCODED[how].fullmatch(m[0], 0, min(head, 32)) or (decoded := decode_blob(m[0], how)) is None:
            continue
        inner = secret_spans(decoded, depth=depth + 1)
        label = inner[0][2].removeprefix("base64-").removeprefix("hex-") if inner else (
            "password" if credential_pair(decoded) else "")
        if label:
            found.append((m.start(), m.end(), f"{how}-{label}"))
    return found


_MAX_PASSES = 4


def redact_secrets(text: str) -> str:
    """Replace every secret in ``text`` with ``[REDACTED:<kind>]``; applying it twice changes nothing.

    Any ``str`` is accepted (lone surrogates too) and the work is linear in its length: it runs on every stored turn.
    A marker reads as the word it replaced and no match may take one in (:func:`secret_spans`), but it is not as long
    as the secret, has no spaces or line breaks in it, and so may still change what a rule sees around it (a glued
    "-----END PRIVATE KEY-----host:5432:db:user:pw" is a pgpass line once the key is out): text in which secrets were
    found is read again until nothing more is (at most four passes; clean text is read once).
    """
    for _ in range(_MAX_PASSES):
        parts, last, escapes = [], 0, "\\" in text
        document: bool | None = None  # whether the text is a JSON document (asked only if it matters)
        for start, end, label in secret_spans(text):
            if escapes:  # a backslash escape is replaced whole or not at all: a JSON text stays JSON
                start = max(_escape_at(text, start)[0], last)
                end = min(_escape_at(text, end)[1], len(text))
                if document is None and '"' in text[max(end - 1, 0):end + 1]:  # (asked once, where it matters)
                    document = _json_document(text) or bool(_quoted_stretches(text))  # JSON, or JSON in it
                if document:
                    end = _short_of_escaped_quote(text, start, end)
            parts += [text[last:start], f"[REDACTED:{label}]"]
            last = end
        if not parts:
            break
        text = "".join([*parts, text[last:]])
    return text


def _escape_at(text: str, at: int) -> tuple[int, int]:
    """The backslash escape (``\\"``, ``\\n``, ``\\u00e9``) ``at`` falls inside of, or ``(at, at)``: a redaction
    starting or ending there would leave half of it (a key's value ending before the ``"`` of ``\\"`` took its
    backslash, and the JSON string ended early; a red-team pass)."""
    for start in range(at - 1, max(at - 6, -1), -1):
        if text[start] != "\\":
            continue
        run = start  # the escape starts here if an even number of backslashes is right before it
        while run and text[run - 1] == "\\":
            run -= 1
        if (start - run) % 2:
            continue
        length = 6 if _UNICODE_ESCAPE.match(text, start) else 2
        # (a lone backslash ending the text is an escape cut short: never past its end; a red-team pass)
        return (start, min(start + length, len(text))) if start < at < start + length else (at, at)
    return at, at


_UNICODE_ESCAPE = lazy(r"\\u[0-9a-fA-F]{4}")


def _short_of_escaped_quote(text: str, start: int, end: int) -> int:
    """``end``, or where the run of backslashes before an escaped quote at ``end`` begins: in JSON (a document, or
    text holding escaped quotes next to ``:`` or ``=``: JSON lines, a tool's output around one) a value
    never takes an escaped quote, nor any backslash escaping it at any depth -- that quote may close a string of JSON
    inside JSON (taken, the inner document no longer parsed; a red-team pass); what it leaves is valid at every
    level. (In other text, a shell line's ``-p"secret\\""``, the quote may be the secret's: taken as before.)"""
    quote = end - 1 if start < end <= len(text) and text[end - 1] == '"' else end
    if quote >= len(text) or text[quote] != '"':
        return end
    run = quote
    while run > start and text[run - 1] == "\\":
        run -= 1
    return run if (quote - run) % 2 else end


def _inner_escape_at(text: str, at: int) -> tuple[int, int]:
    """:func:`_escape_at` in the text JSON inside JSON writes out (:class:`~.views.Unescaped`), where a quote that
    ends the outer string reads as a line break: a backslash before one is the secret's last character, not an
    escape (taken as one, the redaction ate the string's closing quote; a red-team pass)."""
    start, end = _escape_at(text, at)
    return (at, at) if end - start == 2 and text[end - 1] not in _JSON_ESCAPES else (start, end)


_JSON_ESCAPES = frozenset('"\\/bfnrt')


def redact_each(texts: Sequence[str]) -> list[str]:
    """``[redact_secrets(text) for text in texts]``, for many short texts at once (what a summary model reads of a
    compaction: a thousand one-line tool summaries, each ~30 us of fixed cost when read alone).

    The ASCII texts are read together, joined by a blank line, for where anything could be found: the secret rules'
    triggers, the words that open a layout (:func:`~.layouts.opening_words`), credential lines, encoded secrets and
    earlier markers. A text holding none of them is returned as it is; the others, and every non-ASCII text, are
    redacted one by one. Why that misses nothing: :func:`secret_spans` finds a span only from one of those (a key
    pair's secret from a rule's find), each is where it was in the joined text -- a blank line is no part of a word,
    a trigger or an encoded run, and starts and ends lines as a text's own start and end did -- and every occurrence
    of a trigger or opening word is looked at (a text's own views are its stretch of the joined text's, as ASCII
    lower-cases one character at a time).
    """
    out = list(texts)
    # plain ASCII only: a text holding a control character a view drops is read alone (in the joined text the
    # control would split a trigger: 'gh\x1bp_…' passed the batch whole; a red-team pass)
    # and so is a text holding a JSON-escaped line break or tab (it is read with them as white space, and its layouts
    # unescaped, not in the joined text)
    batch = [i for i, text in enumerate(texts) if plain_ascii(text) and not _WHITE_ESCAPE.search(text)]
    for i in sorted(set(range(len(out))).difference(batch)):
        out[i] = redact_secrets(out[i])
    if not batch:
        return out
    joined = _BLANK_LINE.join(texts[i] for i in batch)
    starts = list(itertools.accumulate((len(texts[i]) + len(_BLANK_LINE) for i in batch[:-1]), initial=0))
    views = Views(joined)
    secrets = match.table("secrets")
    numbers, present = secrets.index.hits(views.lowered, views)
    # a rule finds only near an occurrence of one of its anchors (in the lower-cased text, which holds them all)
    rules = [secrets.rules[number] for number in numbers]
    anchors = {anchor.lower() for rule in rules for anchor in rule.anchors
               if match.required(rule, joined if rule.view == "normalised" else views.lowered, views.words)}
    found = [m.start() for m in _MARKER.finditer(joined)] if "[REDACTED:" in joined else []
    found += [span[0] for span in line_spans(joined) + _encoded_spans(joined, 0)]
    for word in anchors | opening_words(views.words.union(present or ())):
        at = views.lowered.find(word)
        while at >= 0:
            found.append(at)
            at = views.lowered.find(word, at + 1)
    for k in {bisect.bisect_right(starts, at) - 1 for at in found}:
        out[batch[k]] = redact_secrets(texts[batch[k]])
    return out


_BLANK_LINE = "\n\n"

"""Secrets found by their layout rather than their format, read from the tables of the secret rules' module: the
secret half of a key pair next to its id, passwords given to commands, cells of a credential column, fields of
one-line credential files, and ``user:password`` pairs alone (what Basic auth encodes).
"""

from __future__ import annotations

import itertools
import json
import re
from dataclasses import dataclass
from functools import cache

from ..rules.record import lazy
from ..rules.secrets import (
    CLI_SECRET_OPTIONS,
    CREDENTIAL_COLUMNS,
    CREDENTIAL_LINES,
    NOT_SECRET_KEYS,
    PAIRED_SECRETS,
    PLACEHOLDER,
    USER_PASSWORD,
)
from .values import looks_random, real_value
from .views import Span


def credential_pair(text: str) -> bool:
    """Whether ``text`` is a ``user:password`` pair alone (what an HTTP Basic or registry ``auth`` value encodes)."""
    m = USER_PASSWORD.fullmatch(text.strip())
    return m is not None and real_value(m["value"], password=True)



_PAIRED = {label: (secret, lazy(rf"(?<![A-Za-z0-9/+=_-]){shape}(?![A-Za-z0-9/+=_-])"))
           for label, (secret, shape) in PAIRED_SECRETS.items()}
_PAIR_REACH = 300  # a key id's secret is on its line, the next, or a few fields away (CSV, JSON, an ini section)


def paired_spans(text: str, tokens: list[Span]) -> list[Span]:
    """The secret half of a key pair near its key id (``AKIA…,wJalr…`` in a CSV, ``id:secret``, ``aws configure``)."""
    windows: dict[str, list[tuple[int, int]]] = {}
    for start, end, label in sorted(tokens):
        if label in _PAIRED:  # overlapping windows are searched once: many ids cost no more than one long text
            spans = windows.setdefault(label, [])
            first, last = max(0, start - _PAIR_REACH), end + _PAIR_REACH
            if spans and first <= spans[-1][1]:
                spans[-1] = (spans[-1][0], last)
            else:
                spans.append((first, last))
    found = []
    for label, spans in windows.items():
        secret, pattern = _PAIRED[label]
        found += [(m.start(), m.end(), secret) for first, last in spans for m in pattern.finditer(text, first, last)
                  if _random_mix(m[0])]
    return found


def _random_mix(value: str) -> bool:
    """Upper and lower case letters and digits, as a generated secret has (a hex digest or a word has not)."""
    return (any(c.isupper() for c in value) and any(c.islower() for c in value) and any(c.isdigit() for c in value)
            and looks_random(value) and "EXAMPLE" not in value)


@dataclass(frozen=True)
class _Form:
    """One way an option carries a secret (see ``CLI_SECRET_OPTIONS``)."""

    option: str
    joint: str  # "" attached, " " the next word, "=" after "="
    prefix: str  # literal text before the secret ("pass:"), if any
    separator: str  # the secret follows the first of these in the value ("U:X"), if any


def _form(text: str) -> _Form:
    joint = next((j for j in (" ", "=") if j in text), "")
    option, template = text.partition(joint)[::2] if joint else (text[:2], text[2:])
    prefix = template[:-1]
    if len(prefix) == 2 and prefix[0] in "UK":
        return _Form(option, joint, "", prefix[1])
    return _Form(option, joint, prefix, "")


@cache
def _commands() -> dict[str, list[tuple[tuple[str, ...], tuple[_Form, ...]]]]:
    """Program -> (subcommand words, forms) from ``CLI_SECRET_OPTIONS``."""
    table: dict[str, list[tuple[tuple[str, ...], tuple[_Form, ...]]]] = {}
    for programs, forms in CLI_SECRET_OPTIONS:
        parsed = tuple(map(_form, forms.split(",")))
        for program in programs.split(","):
            name, *subcommands = program.split()
            table.setdefault(name, []).append((tuple(subcommands), parsed))
    return table


@cache
def _program_words() -> dict[str, str]:
    """Program -> the word it starts with, which the text must hold ("redis-cli": "redis")."""
    return {program: re.split(r"[\W_]", program)[0] for program in _commands()}


def non_ascii_columns(text: str) -> set[str]:
    """The credential columns' names of no ASCII word (密码) that ``text`` holds: what gates them (their own words)."""
    return {name for name in _column_forms() if not name.isascii() and name in text}


@cache
def _escaped_columns() -> dict[str, str]:
    """The credential columns' names of no ASCII word, as a JSON string writes them (``\\u5bc6\\u7801``: 密码)."""
    return {json.dumps(name)[1:-1]: name for name in _column_forms() if not name.isascii()}


def escaped_columns(lowered: str) -> set[str]:
    """The names of :func:`non_ascii_columns` that ``lowered`` (a text in lower case) holds JSON-escaped."""
    return {name for escaped, name in _escaped_columns().items() if escaped in lowered}


def opening_words(present: frozenset[str]) -> set[str]:
    """What a text whose words and triggers are ``present`` must hold for a layout found by words to find anything in
    it: a command's program word (:func:`option_spans`), or the first word of a credential column's name whose words
    are all present (:func:`table_spans`)."""
    forms = _column_forms()
    return {word for word in _program_words().values() if word in present} | {
        word for word in forms.keys() & present if any(present.issuperset(needs) for _, needs in forms[word])}


# a shell word (quotes kept) after the blanks before it; a command ends at a newline, | ; & < > ( )
_SHELL_WORD = lazy(r"""(?:[ \t]|\\\r?\n)*+((?:[^\s'"`|;&<>()\\]++|'[^'\n]*+'|"(?:[^"\\\n]|\\.)*+"|\\.)++)""")
_MAX_WORDS = 64


def option_spans(text: str, present: frozenset[str]) -> list[Span]:
    """Passwords given to commands: ``mysql -pS3cret``, ``curl -u user:pass``, ``sshpass -p 'pw'``, ``docker login``.

    ``present``: the words of the text (a program's first word must be one)."""
    found: list[Span] = []
    for program in (p for p, word in _program_words().items() if word in present):
        scanned = 0  # an occurrence among the words of the last one read is an argument of it, and is not re-read
        i = text.find(program)
        while i >= 0:
            end = i + len(program)
            if i >= scanned and not (i and (text[i - 1].isalnum() or text[i - 1] in "_.-")) and text[end:end + 1] in (
                    " ", "\t"):
                words = _command_words(text, end)
                scanned = words[-1][1] if words else end
                for subcommands, forms in _commands()[program]:
                    found += _option_values(text, words, subcommands, forms)
            i = text.find(program, end)
    return found


def _command_words(text: str, pos: int) -> list[tuple[int, int]]:
    words: list[tuple[int, int]] = []
    while len(words) < _MAX_WORDS and (m := _SHELL_WORD.match(text, pos)):
        words.append(m.span(1))
        pos = m.end()
    return words


def _option_values(text: str, words: list[tuple[int, int]], subcommands: tuple[str, ...],
                   forms: tuple[_Form, ...]) -> list[Span]:
    first = 0
    for sub in subcommands:  # "docker login": the options after "login"
        first = next((n + 1 for n in range(first, len(words)) if text[slice(*words[n])] == sub), -1)
        if first < 0:
            return []
    found = []
    for n in range(first, len(words)):
        start, end = words[n]
        word = text[start:end]
        for form in forms:
            if not word.startswith(form.option):
                continue
            if form.joint == " " and word == form.option and n + 1 < len(words):
                value = words[n + 1]
            elif form.joint and form.joint != " " and word.startswith(form.joint, len(form.option)):
                value = (start + len(form.option) + 1, end)
            elif not form.joint and len(word) > len(form.option):
                value = (start + len(form.option), end)
            else:
                continue
            if not PLACEHOLDER.fullmatch(text[slice(*value)]) and (secret := _option_secret(
                    text, *_unquoted(text, *value), form)):
                found.append((*secret, "password"))
                break
    return found


def _unquoted(text: str, start: int, end: int) -> tuple[int, int]:
    quoted = end - start >= 2 and text[start] in "'\"" and text[end - 1] == text[start]
    return (start + 1, end - 1) if quoted else (start, end)


def _option_secret(text: str, start: int, end: int, form: _Form) -> tuple[int, int] | None:
    if form.prefix:
        if not text.startswith(form.prefix, start, end):
            return None
        start += len(form.prefix)
    elif form.separator:
        cut = text.find(form.separator, start, end)
        if cut < 0 or NOT_SECRET_KEYS.fullmatch(text[start:cut]):
            return None
        start, end = _unquoted(text, cut + 1, end)
    value = text[start:end]
    return (start, end) if len(value) >= 3 and not PLACEHOLDER.fullmatch(value) else None


@cache
def _column_names() -> dict[str, tuple[str, ...]]:
    """Each way a credential column's name is written, lower case ("secret access key", "secret_access_key", ...) ->
    what must be in the text for it to be (its words, or itself if it is no ASCII word)."""
    forms = {join.join(name.split()) for name in CREDENTIAL_COLUMNS for join in (" ", "_", "-", "")}
    return {form: tuple(re.split(r"[ _-]", form)) for form in sorted(forms, key=len, reverse=True)}


@cache
def _column_forms() -> dict[str, list[tuple[str, tuple[str, ...]]]]:
    """:func:`_column_names` filed under the first of the words each needs: a text without that word cannot name
    them, so a text naming no credential column costs a set intersection, not a look at every form."""
    forms: dict[str, list[tuple[str, tuple[str, ...]]]] = {}
    for name, needs in _column_names().items():
        forms.setdefault(needs[0], []).append((name, needs))
    return forms


_CELL_PADDING, _DELIMITERS = " \t\"'`*", (",", "\t", "|", "\u2502")  # U+2502: sqlite3 -box, psql's unicode border
_NAME_PADDING = _CELL_PADDING.replace("\t", "")
#: a table's rule line: Markdown's |---|---|, psql's ----+----, mysql's +----+, box drawing's ├────┼────┤
_TABLE_RULE = lazy(r"[\s|:+=\-\u2500-\u257f]*")


def table_spans(text: str, lowered: str, present: frozenset[str]) -> list[Span]:
    """Cells of a credential column of a table pasted as text (CSV, TSV, Markdown): ``Access key ID,Secret access
    key`` then its rows. ``lowered``: the text in lower case, as long; ``present``: the words and rule triggers found
    in it."""
    headers = set()
    forms = _column_forms()
    for name, needs in (form for word in forms.keys() & present for form in forms[word]):
        i = lowered.find(name) if present.issuperset(needs) else -1
        while i >= 0:
            if _delimited(lowered, i, i + len(name)) or _delimited(lowered, _prefixed(lowered, i), i + len(name)):
                if not _GUTTER_ONLY.fullmatch(lowered, start := lowered.rfind("\n", 0, i) + 1, _line(lowered, i)):
                    headers.add(start)
            i = lowered.find(name, i + len(name))
    found: list[Span] = []
    lines_read = 0  # a table's rows are read once, even where a row names a credential column too
    for first in sorted(headers):
        if first >= lines_read:
            lines_read, spans = _table_rows(text, lowered, first)
            found += spans
    return found


_GUTTER_ONLY = lazy(r"[ \t]*\d+\|[^|,\t\u2502\r\n]*\r?")  # read_file's gutter alone (7|password): no header


def _prefixed(text: str, at: int) -> int:
    """Where the word joined to ``text[at:]`` by "_" or "-" starts (``login_password``, Bitwarden's), or ``at``."""
    start = at - 1
    if start < 1 or text[start] not in "_-":
        return at
    while start and text[start - 1].isalnum():
        start -= 1
    return start if start < at - 1 else at


def _is_column(name: str) -> bool:
    """Whether a header cell (lower case, unpadded) names a credential column, itself or after a word joined by "_"
    or "-" (``login_password``, ``root-pwd``, ``aws_secret_access_key``)."""
    names = _column_names()
    return name in names or any(c in "_-" and name[k + 1:] in names for k, c in enumerate(name))


def table_header(text: str, at: int, newline: str = "\n") -> str:
    """The header line of the credentials table whose rows run on from ``at`` (a cut inside them), or ``""``: the
    first of the six topmost lines naming a credential column, among the lines walked back from the first one after
    ``at`` that have as many cells as it or are rules (|---|, ----+----): a table's rows, its header and maybe a title
    above it. What a cut-off part of a table is read under.
    ``newline``: what ends a line (``"\\n"`` in a JSON string). At most :data:`_HEADER_LINES` lines are walked: a
    longer table is read under its header only where that is the text's first line (its cost grows with what is cut
    off, not with the text: a 16 MB paste compacted 4.5x slower walking it all; a red-team pass)."""
    found = text.find(newline, at)
    if found < 0:
        return ""
    first = found + len(newline)
    found = text.find(newline, first)
    row = text[first:found if found >= 0 else len(text)]
    escaped = newline != "\n"  # a JSON string's lines: its tab is "\\t", a line's "\r" is "\\r"
    for delimiter in _DELIMITERS if not escaped else (",", "\\t", "|"):
        cells = row.count(delimiter)
        end, top = first - len(newline), list[str]()  # where the line before the row ends; the run's 6 topmost lines
        for _ in range(_HEADER_LINES if cells else 0):  # counting only: the header is at the top of the run
            if end < 0:
                break
            found = text.rfind(newline, 0, end)
            start = found + len(newline) if found >= 0 else 0
            line = text[start:end]
            if line.count(delimiter) != cells and not (line.strip() and _TABLE_RULE.fullmatch(line)):
                break
            top = [line, *top[:5]]
            end = found
        for line in top:  # titles of as many cells may sit above the header ("Accounts, exported today")
            for name in line.lower().split(delimiter):
                name = name.strip(_CELL_PADDING + "\r")
                if _is_column(name.removesuffix("\\r").strip(_CELL_PADDING) if escaped else name):
                    return line
    return ""


#: the most lines :func:`table_header` walks back over
_HEADER_LINES = 4_000


def _delimited(text: str, start: int, end: int) -> bool:
    """Whether ``text[start:end]`` is a whole cell (padding aside): a delimiter or a line's end on either side. A tab
    next to the name is read as the delimiter, not as padding (a TSV header: ``username<TAB>password``)."""
    while start and text[start - 1] in _NAME_PADDING:
        start -= 1
    while end < len(text) and text[end] in _NAME_PADDING:
        end += 1
    return (not start or text[start - 1] in ",\t|\u2502\n") and (end == len(text) or text[end] in ",\t|\u2502\r\n")


def _line(text: str, start: int) -> int:
    end = text.find("\n", start)
    return len(text) if end < 0 else end


def _table_rows(text: str, lowered: str, start: int) -> tuple[int, list[Span]]:
    """(where the table that starts at ``start`` ends, the secret cells of it) -- if a credential column heads it.

    Rule lines are passed over (a database client's ----+---- under its header); a CSV or TSV cell may be quoted,
    delimiters and all (a row holding "on call, EU" ended the table: its password and every one after it were kept);
    a line naming a credential column under rows of a |-table whose rule is above them, with no rule under it, is
    one of its rows, not a header (an options table's "| token | ... |" row had the rows under it redacted). In a CSV
    that cannot be told: two lines of prose with a comma each above a real header looked like its rows (red-team
    passes), so a schema's "password,text" row still reads as a header."""
    header_end = _line(text, start)
    header = lowered[start:header_end].rstrip("\r")
    for delimiter in _DELIMITERS:
        names = [header[a:b] for a, b in _cells(header, delimiter)]
        columns = [n for n, name in enumerate(names) if _is_column(name.strip(_CELL_PADDING))]
        # two named columns at least: "api_key," alone (a call's argument, a list's item, one per line) is no header,
        # and the lines under it no credentials (a red-team pass: 207 cells of code in 40 of 3,984 files redacted)
        if sum(1 for name in names if name.strip(_CELL_PADDING)) >= 2 and columns:
            break
    else:
        return header_end, []
    if delimiter in "|\u2502" and _under_a_header(text, start, delimiter, len(names)) and not _rule_under(
            text, header_end):
        # a row of the |-table it is in, not its header (nor one of a table under it); of a key/value table, its value
        return header_end, _paired_value(text, lowered, start, _cells(header, delimiter), delimiter)
    found, row = [], header_end + 1
    # a header naming a value column too ("| Secret | Value |"): a row naming a credential has its value there
    values = [n for n, name in enumerate(names) if n not in columns and _VALUE_COLUMN.fullmatch(
        name.strip(_CELL_PADDING))] if delimiter in "|\u2502" else []
    while row < len(text):
        end = _line(text, row)
        line = text[row:end].rstrip("\r")
        if line.strip() and _TABLE_RULE.fullmatch(line):
            row = end + 1
            continue
        cells = _cells(line, delimiter)
        if len(cells) != len(names):
            break
        for n in columns:
            first, last = cells[n]
            cell = line[first:last].strip()
            at = row + first + line[first:last].find(cell)
            start_, end_ = _unquoted(text, at, at + len(cell))
            if end_ - start_ >= 3 and not PLACEHOLDER.fullmatch(text[start_:end_]):
                found.append((start_, end_, "secret"))
        key = _credential_key(lowered, row, cells) if values else None
        if key is not None:
            found += _value_spans(text, row, cells, key, values)
        row = end + 1
    return row, found


def _paired_value(text: str, lowered: str, start: int, cells: list[tuple[int, int]], delimiter: str) -> list[Span]:
    """A row (at ``start``, its cells at ``cells``) of a key/value |-table, naming a credential in its first cell: the
    value in the columns its header names values (``| Setting | Value | Notes |`` then ``| DB_PASSWORD | Tr0ub4dor&3x
    | prod |``; a red-team pass: every one was kept). Not under a column of defaults, examples, sources or access
    modes, which hold words, paths and types far more often (a second pass: 15 of 20 such docs tables were redacted)."""
    key = _credential_key(lowered, start, cells)
    if key is None:
        return []
    return _value_spans(text, start, cells, key, _value_columns(text, start, delimiter, len(cells)))


def _credential_key(lowered: str, row: int, cells: list[tuple[int, int]]) -> int | None:
    """The first cell of the row at ``row`` that is not empty, if it names a credential (``DB_PASSWORD``)."""
    key = next((n for n, (a, b) in enumerate(cells) if lowered[row + a:row + b].strip(_CELL_PADDING)), None)
    if key is None:
        return None
    a, b = cells[key]
    return key if _is_column(lowered[row + a:row + b].strip(_CELL_PADDING)) else None


def _value_spans(text: str, row: int, cells: list[tuple[int, int]], key: int, values: list[int]) -> list[Span]:
    """The cells of the row at ``row`` in the value columns ``values`` after its ``key`` column (not the key's own,
    "| Secret | Value |") that are shaped like a secret value: one word of 6 to 200 characters with a digit, no
    brackets, not a path (``VARCHAR2(100)``, ``Optional[str]``, ``/run/secrets/db_password``), no placeholder
    (``$DB_PASSWORD``), no bare duration, date or version."""
    found: list[Span] = []
    for n in values:
        if n <= key:
            continue
        a, b = cells[n]
        cell = text[row + a:row + b]
        value = cell.strip().strip(_CELL_PADDING)
        if not (6 <= len(value) <= 200) or any(c.isspace() or c in "()[]{}<>" for c in value) or not any(
                c.isdigit() for c in value) or value[0] in "/~." or PLACEHOLDER.fullmatch(value) or _NO_VALUE.fullmatch(
                value):
            continue
        at = row + a + cell.find(value)
        found.append((at, at + len(value), "secret"))
    return found


#: what a value column holds that is no password: a duration or ratio ("15m/30d", "86400s"), a date, a bare version
_NO_VALUE = lazy(r"\d+[a-z]{0,3}(?:/\d+[a-z]{0,3})+|\d+(?:ms|[smhdw]|min|sec)|\d{4}-\d\d-\d\d|v?\d+(?:\.\d+){1,3}")


#: the name of a key/value table's value column (:func:`_paired_value`): not one of examples or defaults
_VALUE_COLUMN = lazy(r"(?i:(?:(?!(?:example|sample|default|placeholder|expected|test|dummy|fake|mock)s?\b)[a-z]+[ _-])?"
                     r"(?:values?|credentials?|secrets?)|(?:(?:secrets?|credentials?|passwords?|tokens?|auth|keys?|login|sensitive"
                     r"|connection|raw)[ _-])?data)(?:\s*\((?!(?i:default)\))[^()]{0,30}\))?|值|内容|取值")


def _value_columns(text: str, start: int, delimiter: str, cells: int) -> list[int]:
    """Which columns of the |-table the line at ``start`` is a row of its header names values (walked up to its rule,
    at most :data:`_ROWS_ABOVE` lines): "Value (staging)" and "Value (prod)" both."""
    end = start - 1
    for _ in range(_ROWS_ABOVE):
        if end <= 0:
            return []
        above = text[text.rfind("\n", 0, end) + 1:end].rstrip("\r")
        end = text.rfind("\n", 0, end)
        if above.strip() and _TABLE_RULE.fullmatch(above):
            header = text[text.rfind("\n", 0, end) + 1:end].rstrip("\r") if end > 0 else ""
            names = [header[a:b].strip(_CELL_PADDING) for a, b in _cells(header, delimiter)]
            if len(names) != cells:
                return []
            return [n for n, name in enumerate(names) if name and _VALUE_COLUMN.fullmatch(name)]
    return []


def _cells(line: str, delimiter: str) -> list[tuple[int, int]]:
    """Where each cell of ``line`` is; a CSV or TSV cell in double quotes may hold the delimiter (RFC 4180)."""
    if '"' not in line or delimiter not in ",\t":
        bounds = list(itertools.accumulate((len(c) + 1 for c in line.split(delimiter)), initial=0))
        return [(a, b - 1) for a, b in itertools.pairwise(bounds)]
    pattern, spans, at = _QUOTED_CELL[delimiter], [], 0
    while True:
        m = pattern.match(line, at)
        assert m is not None  # the pattern matches the empty string
        spans.append(m.span())
        if m.end() >= len(line) or line[m.end()] != delimiter:
            return spans
        at = m.end() + 1


_QUOTED_CELL = {d: lazy(f'{pad}*+"(?:[^"]|"")*+"{pad}*+(?={d}|$)|[^{d}]*+')  # a tab delimits TSV, pads CSV
                for d, pad in ((",", "[ \\t]"), ("\t", "[ ]"))}


def _under_a_header(text: str, start: int, delimiter: str, cells: int) -> bool:
    """Whether the line at ``start`` is below a table's header already: rows of ``cells`` cells above it up to a
    rule line (|---|), or a rule line right above it under a line of as many cells -- a row of the table, not its
    header (a title row of as many cells is no such rule). At most :data:`_ROWS_ABOVE` lines are walked: each
    candidate's walk is bounded (a table of alternating "| token |" rows took time quadratic in its length)."""
    rows, end = 0, start - 1
    for _ in range(_ROWS_ABOVE):
        if end <= 0:
            return False
        above = text[text.rfind("\n", 0, end) + 1:end].rstrip("\r")
        if above.strip() and _TABLE_RULE.fullmatch(above):
            if rows:
                return True
            end = text.rfind("\n", 0, end)  # right under a rule: the line above it is the table's header, or not
            header = text[text.rfind("\n", 0, end) + 1:end].rstrip("\r") if end > 0 else ""
            if header.count(delimiter) + 1 != cells:
                return False
            if cells > 1 and not _JUNCTION.search(above):
                # a line of dashes alone under a row of a table above (a separator, "echo ----", between two tables)
                # is no rule of it: it is one under the first line of its run only (an underlined header)
                top = text.rfind("\n", 0, end)
                over = text[text.rfind("\n", 0, top) + 1:top].rstrip("\r") if top > 0 else ""
                if over.strip() and over.count(delimiter) + 1 == cells:
                    return False
                # and a header names its columns: a line of numbers alone is a one-row result ("3|7", then the rule)
                return all(any(c.isalpha() for c in cell) for cell in header.split(delimiter) if cell.strip())
            return True
        if above.count(delimiter) + 1 != cells:
            return False
        rows += 1
        end = text.rfind("\n", 0, end)
    return False


#: the most lines :func:`_under_a_header` walks up
_ROWS_ABOVE = 64
#: what a rule line of a table of columns has where its columns meet (|---|---|, ----+----, ├──┼──┤)
_JUNCTION = lazy(r"[|+\u2502-\u2503\u250c-\u254b\u2551-\u256c\u2573-\u257f]")


def _rule_under(text: str, end: int) -> bool:
    """Whether the line after the one ending at ``end`` is a rule line (|---|): what follows a header."""
    below = text[end + 1:_line(text, end + 1)].rstrip("\r")
    return bool(below.strip() and _TABLE_RULE.fullmatch(below))


_CREDENTIAL_LINES = [(label, lazy(pattern, re.MULTILINE)) for label, pattern in CREDENTIAL_LINES]


def line_spans(text: str) -> list[Span]:
    """Fields of one-line credential files (``~/.pgpass``)."""
    return [(*m.span("value"), label) for label, pattern in _CREDENTIAL_LINES for m in pattern.finditer(text)
            if not PLACEHOLDER.fullmatch(m["value"])]

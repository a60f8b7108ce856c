"""One informative line about a tool call and its result, in hermes 0.19.0's per-tool formats.

What pruning leaves of an old tool result (``[terminal] ran `npm test` -> exit 1, 47 lines output; error:
...``). Its cost is bounded by the line, not by the output: the error line is found in one forward scan
of the text, and a long argument is read only as far as the line needs.
"""

from __future__ import annotations

import contextvars
import functools
import json
import re
from collections.abc import Callable, Mapping
from typing import Any, ParamSpec, TypeVar

from ..safety.engine.redact import redact_secrets

#: a summary is one line of at most this many characters
SUMMARY_MAX_CHARS = 240
ERROR_MAX_CHARS = 120
_ERROR_SEP = "; error: "
_ERROR_MIN_CHARS = 60  # a long call description is cut so that the error keeps at least this much

_NAME_MAX_CHARS = 64

_EXIT_IN_JSON = re.compile(r'"exit_code"\s*:\s*(-?\d+)')
_TOTAL_IN_JSON = re.compile(r'"total_count"\s*:\s*(\d+)')
_EXIT_IN_TEXT = re.compile(r"exit[ _]code\W{0,3}(-?\d+)\W*\Z", re.IGNORECASE)
# Lines that open with an error label (``ModuleNotFoundError: ...``, ``FAILED test_x``,
# ``error[E0425]: ...``) say more than lines that merely mention one (``raise ValueError(...)``).
# A line is what ``str.splitlines`` would cut; each pattern is matched within one line.
_ERROR_START = re.compile(r"\s*(?:[\w.]*(?:Error|Exception)\b|FAILED\b|FATAL\b|ERROR\b|error\b|panic:)")
_ERROR_ANYWHERE = re.compile(r"\b\w*(?:Error|Exception)\b|\bFAILED\b|\bERR!|\berror:")
# Every line either pattern can match holds one of these: only such lines are looked at.
_ERROR_WORD = re.compile(r"Error|Exception|FAILED|FATAL|ERR|error|panic:")
#: what ``str.splitlines`` cuts a line at
_BREAKS = "\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029"
_BREAK = re.compile(f"[{_BREAKS}]")
_ASCII_BREAKS = "".join(c for c in _BREAKS if c.isascii())
# Tools that run a program: their output is searched for an error line when the exit code is not 0.
_EXECUTING_TOOLS = frozenset({"terminal", "execute_code"})


#: within :func:`redacting_once`: each text :func:`_clip` redacted -> that text redacted
_REDACTED: contextvars.ContextVar[dict[str, str] | None] = contextvars.ContextVar("redacted_heads", default=None)

_P = ParamSpec("_P")
_R = TypeVar("_R")


def redacting_once(function: Callable[_P, _R]) -> Callable[_P, _R]:
    """``function``, during which :func:`_clip` redacts each distinct text once: one pruning pass summarises hundreds
    of results whose calls repeat (the same script, the same traceback), and redacting a few hundred characters
    costs tens of microseconds. The texts are forgotten when it returns (``redact_secrets`` depends on the text
    alone)."""
    @functools.wraps(function)
    def once(*args: _P.args, **kwargs: _P.kwargs) -> _R:
        token = _REDACTED.set({})
        try:
            return function(*args, **kwargs)
        finally:
            _REDACTED.reset(token)

    return once


def _redact(text: str) -> str:
    """``redact_secrets(text)``, remembered within :func:`redacting_once`."""
    seen = _REDACTED.get()
    if seen is None:
        return redact_secrets(text)
    found = seen.get(text)
    if found is None:
        found = seen[text] = redact_secrets(text)
    return found


def as_text(value: object) -> str:
    """``value`` as text: strings as they are, anything else as JSON (as the model wrote it)."""
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError, RecursionError):  # not JSON data, or nested absurdly deep
        return f"<{type(value).__name__}>"


def _clip(value: object, limit: int) -> str:
    """``value`` as one line (whitespace runs collapsed) of at most ``limit`` characters; reads no
    further into ``value`` than that line needs, however long it is. A cut never shows part of a word: the word it
    falls in is left out (the start of a token is no longer recognisable as one, and the summary request's redaction
    would let it through: ``--gh ghp_R8nZq2Lk9XwT4vB7mC1s...``, a red-team pass); a line whose first word is longer
    than the limit is cut inside it once redacted."""
    text = as_text(value)
    prefix = 4 * limit + 64
    while True:  # the collapsed prefix is a prefix of the collapsed whole
        head = text[:prefix]
        if "\n" in head or "\r" in head:  # read as lines first: joined, a heredoc's .env or .netrc lines no longer
            head = _redact(head)  # read as such, and their secrets went out (a red-team pass)
        line = " ".join(head.split())
        if len(line) > limit or prefix >= len(text):
            break
        prefix *= 4
    if len(line) <= limit:
        return line
    keep = max(limit - 3, 0)
    if _in_quote(line, keep):  # the cut falls inside a quoted value ("-p'correct horse battery ..."): what is
        line = _redact(line)  # kept of it would no longer read as a password; redacted whole first
        if len(line) <= limit:
            return line
    if line[keep] != " ":  # the cut falls inside a word
        space = line.rfind(" ", 0, keep)
        if space > 0:
            return line[:space] + " ..."
        if " " not in line and prefix < len(text):  # one long word, read only in part: read it whole (to a bound)
            end = _WHITE.search(text, prefix, prefix + _WORD_MAX)
            if end is None and prefix + _WORD_MAX < len(text):
                return "..."  # a blob longer than any secret redaction reads whole: none of it is shown
            line = " ".join(text[:end.start() if end else len(text)].split())
        line = _redact(line)  # one long word: a URL, a blob (seldom)
        if len(line) <= limit:
            return line
    else:  # the cut falls after a whole word, left out too: "..." glued to it would read as a placeholder
        space = line.rfind(" ", 0, keep)  # ("-pTr0ub4dor..." is no password); kept with a space if it is the only one
        return line[:space] + " ..." if space > 0 else line[:keep] + " ..."
    return line[:keep] + "..."


#: the longest single word :func:`_clip` reads whole to redact it before it cuts it
_WORD_MAX = 8_192
_WHITE = re.compile(r"\s")


def _in_quote(line: str, end: int) -> bool:
    """Whether a quote (shell-style: ``'...'``, ``"..."``, a backslash escaping the next character but in single
    quotes) is still open at ``line[end]``."""
    return _QUOTES_CLOSED.fullmatch(line, 0, end) is None


_QUOTES_CLOSED = re.compile(r"""(?:[^'"\\]|\\.|'[^']*+'|"(?:[^"\\]|\\.)*+")*+""", re.DOTALL)


def label(tool_name: object) -> str:
    """The ``[name]`` a summary starts with; also how an existing summary is recognised."""
    return f"[{_clip(tool_name, _NAME_MAX_CHARS) or 'unknown'}]"


def _json_object(text: str) -> dict[str, Any]:
    """``text`` parsed as a JSON object, or ``{}`` for anything else (never raises)."""
    if not text.lstrip().startswith("{"):
        return {}
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):  # RecursionError: absurdly deep nesting
        return {}
    return value if isinstance(value, dict) else {}


def _first_error_line(text: str) -> str:
    """The most telling error line in ``text``: one opening with an error label, else the first
    one mentioning an error, else ``""``.

    Linear in ``text``: one scan in C finds each error word, and only the lines holding one are
    looked at (a shell log mentions errors on a few of its thousands of lines, if at all).
    """
    # the kinds of line break the text holds (a log mostly "\n" alone): only those are looked for
    breaks = [c for c in (_BREAKS if not text.isascii() else _ASCII_BREAKS) if c in text]
    only = breaks[0] if len(breaks) == 1 else None
    mention, pos = "", 0  # pos: where the line after the last one looked at starts
    while hit := _ERROR_WORD.search(text, pos):  # every line either pattern matches holds an error word
        start = pos
        for c in breaks:
            start = max(start, text.rfind(c, pos, hit.start()) + 1)
        if only is not None:
            end = text.find(only, hit.end())
        else:  # the nearest break of any kind, in one search (a rare kind is not looked for to the end)
            found = _BREAK.search(text, hit.end())
            end = found.start() if found else -1
        line = text[start:end if end >= 0 else len(text)]
        if _ERROR_START.match(line):
            return line.strip()
        if not mention and _ERROR_ANYWHERE.search(line):
            mention = line.strip()
        if end < 0:
            break
        pos = end + 1  # a line break is one character
    return mention


def _exit_code(content: str, data: Mapping[str, Any], output: str) -> str:
    """From the JSON ``exit_code`` (parsed, else found by regex), else a trailing "exit code N"."""
    code = data.get("exit_code")
    if isinstance(code, int) and not isinstance(code, bool):
        return str(code)
    match = _EXIT_IN_JSON.search(content) or _EXIT_IN_TEXT.search(output.rstrip()[-200:])
    return match.group(1) if match else "?"


def _describe(name: str, args: Mapping[str, Any], content: str, output: str, exit_code: str) -> str:
    """The summary line before any error note, in hermes 0.19.0's per-tool formats."""

    def arg(key: str, default: str = "?", limit: int = 100) -> str:
        value = args.get(key)
        return default if value is None or value == "" else _clip(value, limit)

    chars = f"{len(content):,} chars"
    if name in _EXECUTING_TOOLS:  # counted only for the lines that say it: the output may be long
        lines = output.count("\n") + 1 if output and not output.isspace() else 0
    if name == "terminal":
        return f"[terminal] ran `{arg('command', '', 80)}` -> exit {exit_code}, {lines} lines output"
    if name == "read_file":
        return f"[read_file] read {arg('path')} from line {arg('offset', '1')} ({chars})"
    if name == "write_file":
        written = args.get("content")
        count = as_text(written).count("\n") + 1 if written else "?"
        return f"[write_file] wrote to {arg('path')} ({count} lines)"
    if name == "search_files":
        total = _TOTAL_IN_JSON.search(content)
        return (f"[search_files] {arg('target', 'content')} search for '{arg('pattern', limit=60)}' "
                f"in {arg('path', '.')} -> {total.group(1) if total else '?'} matches")
    if name == "patch":
        return f"[patch] {arg('mode', 'replace')} in {arg('path')} ({chars} result)"
    if name.startswith("browser_"):
        target = arg("url", "") or (f"ref={arg('ref', '')}" if args.get("ref") else "")
        return f"[{name}]{' ' + target if target else ''} ({chars})"
    if name == "web_search":
        return f"[web_search] query='{arg('query', limit=80)}' ({chars} result)"
    if name == "web_extract":
        urls = args.get("urls")
        urls = urls if isinstance(urls, list) else [urls] if urls else []
        first = urls[0] if urls else "?"
        if isinstance(first, Mapping):  # models forward web_search hits ({"url": ...}) as they are
            first = first.get("url") or first.get("href") or "?"
        more = f" (+{len(urls) - 1} more)" if len(urls) > 1 else ""
        return f"[web_extract] {_clip(first, 100)}{more} ({chars})"
    if name == "delegate_task":
        return f"[delegate_task] '{arg('goal', '', 60)}' ({chars} result)"
    if name == "execute_code":
        return f"[execute_code] `{arg('code', '', 60)}` -> exit {exit_code}, {lines} lines output"
    if name.startswith("skill"):
        return f"[{name}] name={arg('name')} ({chars})"
    if name == "vision_analyze":
        return f"[vision_analyze] '{arg('question', '', 50)}' ({chars})"
    if name == "memory":
        return f"[memory] {arg('action')} on {arg('target')}"
    if name == "todo":
        return "[todo] updated task list"
    if name == "clarify":
        return f"[clarify] asked '{arg('question', '', 80)}'"
    if name == "cronjob":
        return f"[cronjob] {arg('action')}"
    if name == "process":
        return f"[process] {arg('action')} session={arg('session_id')}"
    shown = "".join(f" {_clip(key, 30)}={_clip(value, 40)}" for key, value in list(args.items())[:2])
    return f"{label(name)}{shown} ({chars} result)"


def summarize_tool_result(tool_name: str, tool_args: str | Mapping[str, Any], tool_content: str) -> str:
    """One informative line about a tool call and its result, e.g.
    ``[terminal] ran `npm test` -> exit 0, 47 lines output``.

    A failure keeps its error line (``...; error: ModuleNotFoundError: No module named 'x'``):
    of everything in an old result, the error is what later turns most need.  Never raises, whatever
    the arguments hold: they come from persisted history, and one malformed call must not make every
    later compression fail.
    """
    name = _clip(tool_name, _NAME_MAX_CHARS) or "unknown"
    args = tool_args if isinstance(tool_args, Mapping) else _json_object(as_text(tool_args or ""))
    content = as_text(tool_content or "")
    executing = name in _EXECUTING_TOOLS
    # Only a program's result is read for its output and exit code; any other is parsed only when
    # it may carry an "error": JSON spells that key with the word, or with \u00.. escapes in it.
    data = _json_object(content) if executing or 'error"' in content or "\\u00" in content else {}
    output = data["output"] if isinstance(data.get("output"), str) else content
    exit_code = _exit_code(content, data, output) if executing else ""
    error = _first_error_line(output) if executing and exit_code != "0" else ""
    if not error and isinstance(data.get("error"), str):
        error = data["error"].strip()
    described = _describe(name, args, content, output, exit_code)
    if not error:
        return _clip(described, SUMMARY_MAX_CHARS)
    head = _clip(described, SUMMARY_MAX_CHARS - len(_ERROR_SEP) - _ERROR_MIN_CHARS)
    room = min(ERROR_MAX_CHARS, SUMMARY_MAX_CHARS - len(head) - len(_ERROR_SEP))
    return f"{head}{_ERROR_SEP}{_clip(error, room)}"

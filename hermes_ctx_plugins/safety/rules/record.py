"""The shape a scanner rule is written in: a :class:`Rule` record, the :class:`Near` requirement, and :func:`lazy`.

A rule is data: where it may match (its anchors), what it matches (a regex), what must hold around a match (its
context) and what the user is told (kind and detail). The engine (:mod:`hermes_ctx_plugins.safety.engine`) decides
where each rule runs and evaluates it; nothing here scans. Regexes are compiled on first use, so importing the
rules costs string building only; each regex is compiled once per process, however many threads scan first.
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Literal, cast

#: which reading of the text a rule runs on (see :mod:`hermes_ctx_plugins.safety.engine.views`): ``folded`` (lower
#: case, look-alikes and widths undone), ``squeezed`` (folded without spaces or punctuation, leetspeak read as
#: letters) or ``normalised`` (case kept: token formats)
View = Literal["folded", "squeezed", "normalised"]

#: where a :class:`Near` pattern is searched: ``before`` / ``after`` the match (``reach`` characters), ``before+match``
#: (``reach`` characters before it, through its end), the match's ``line``, its ``sentence`` (the match with up to 80
#: characters of the sentence before it and 160 after, joined by spaces) or ``sentence-without-match`` (those two
#: pieces joined directly)
Window = Literal["before", "after", "before+match", "line", "sentence", "sentence-without-match"]


_COMPILING = threading.Lock()
_COMPILED: dict[tuple[str, int], re.Pattern[str]] = {}


def compiled(pattern: str, flags: int = 0) -> re.Pattern[str]:
    """``re.compile(pattern, flags)``, once per process: a thread that needs a regex another is compiling waits for
    that one rather than compiling it again (``re``'s own cache lets two threads compile one pattern at once)."""
    with _COMPILING:
        found = _COMPILED.get((pattern, flags))
        if found is None:
            found = _COMPILED[pattern, flags] = re.compile(pattern, flags)
        return found


class _Lazy:
    """A regex compiled the first time it is used; each method of the compiled pattern is looked up once and kept
    as an attribute, so later calls cost what a compiled pattern's do."""

    def __init__(self, pattern: str, flags: int) -> None:
        self._source, self._flags = pattern, flags

    def __getattr__(self, name: str) -> Any:  # only called for what is not kept yet
        pattern = self.__dict__.get("_compiled")
        if pattern is None:
            pattern = self._compiled = compiled(self._source, self._flags)
        value = getattr(pattern, name)
        setattr(self, name, value)
        return value


def lazy(pattern: str, flags: int = 0) -> re.Pattern[str]:
    """``re.compile(pattern, flags)``, deferred to the first use (the scanner's regexes take 0.2 s to compile)."""
    return cast("re.Pattern[str]", _Lazy(pattern, flags))


def is_word(part: str) -> bool:
    """Whether an anchor is a whole word (lower-case ASCII letters and digits) rather than a substring."""
    return part.isascii() and part.isalnum() and part.islower()


@dataclass(frozen=True)
class Near:
    """A requirement on the text around a match: ``pattern`` is found in ``window`` (or, with ``absent``, is not)."""

    pattern: re.Pattern[str]
    window: Window
    reach: int = 0
    absent: bool = False


#: what must hold around a match: :class:`Near` records, and the names of checks that need code (the engine's
#: :data:`~hermes_ctx_plugins.safety.engine.context.CHECKS`, each saying why it is code)
Context = tuple[Near | str, ...]


@dataclass(frozen=True)
class Rule:
    """One thing a memory entry must not say.

    :param id: ``family/name``, unique; the family is the module of :mod:`hermes_ctx_plugins.safety.rules` that
        holds the rule (what it stops).
    :param kind: the finding it raises, which is what the user is told: ``injection``, ``exfiltration`` or
        ``secret``.
    :param detail: the finding's wording ("role hijack"; a secret's label when its pattern has no named group).
    :param reach: (before, after) an anchor within which every match lies; (0, 0): matches start at an anchor.
    :param gate: comma-separated anchors, then ``&``-separated groups of which one member each must be present. A
        lower-case alphanumeric anchor of a folded-view rule, and such a trigger of a folded-view or secret rule,
        must be a whole word; everything else is a substring. A trigger meant to match inside words is written in
        upper case ("KEY" finds "AccountKey").
    :param pattern: the regex (``re.MULTILINE``), tried only near an anchor.
    :param view: the reading of the text it runs on.
    :param context: what must also hold around a match (all of it).
    :param bounded: an ASCII match must start a word (cheaper than a leading ``\\b``).
    :param triggers: what the index looks for, when cheaper words say the same as the anchors (comma-separated).
    :param languages: the phrasing the rule reads, going by its anchors: ``en``, ``zh``, ``pinyin``; none for
        markup, commands and token formats.
    """

    id: str
    kind: str
    detail: str
    reach: tuple[int, int]
    gate: str
    pattern: str
    view: View = "folded"
    context: Context = ()
    bounded: bool = False
    triggers: str = ""
    languages: tuple[str, ...] = ("en",)

    @property
    def family(self) -> str:
        return self.id.partition("/")[0]

    @cached_property
    def _groups(self) -> tuple[tuple[str, ...], ...]:
        return tuple(tuple(p for p in group.split(",") if p) for group in self.gate.split("&"))

    @cached_property
    def anchors(self) -> tuple[str, ...]:
        """The words or substrings every match lies within reach of."""
        return self._groups[0]

    @cached_property
    def words(self) -> frozenset[str]:
        """The anchors that are whole words."""
        return frozenset(filter(is_word, self.anchors))

    @cached_property
    def trigger_list(self) -> tuple[str, ...]:
        """What the index looks for: the triggers, else the anchors."""
        return tuple(self.triggers.split(",")) if self.triggers else self.anchors

    @cached_property
    def requires(self) -> tuple[tuple[frozenset[str], tuple[str, ...]], ...]:
        """The gate's groups after the anchors, each as (its words, its substrings): one of each group is present."""
        return tuple((frozenset(filter(is_word, g)), tuple(p for p in g if not is_word(p))) for g in self._groups[1:])

    @cached_property
    def regex(self) -> re.Pattern[str]:
        return compiled(self.pattern, re.MULTILINE)

"""What a better-ranked memory says already takes no second line of the recall block (:func:`distinct`): a user
asks the same thing again in another session, with other small talk around it, and each asking took a line and
the budget a memory saying something else needed. What the question tells apart, a value that changed, a
negation, and what a withheld (hostile-looking) memory repeats are still shown."""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ...storage import text as query

if TYPE_CHECKING:
    from .recall import Ranked

__all__ = ["DUPLICATE_CHARS", "DUPLICATE_SHARE", "Said", "distinct"]

#: a candidate sharing at least this share of its words with a better-ranked one (words in common over words in
#: either, of their first :data:`DUPLICATE_CHARS` characters) says what that one says (:func:`distinct`); chosen on
#: the tuning half of ``benchmarks/bench_paraphrase.py``
DUPLICATE_SHARE = 0.7
DUPLICATE_CHARS = 2_000
_DIGIT = re.compile(r"\d")


def distinct(ranked: Sequence[Ranked], terms: Sequence[str], *, limit: int,
             withheld: Callable[[Ranked], bool] | None = None) -> list[Ranked]:
    """``ranked`` without the candidates that say what a better-ranked one says: a user asks the same thing again
    with other small talk around it, and each asking took a line of the block and the budget another memory needed.
    A candidate sharing at least :data:`DUPLICATE_SHARE` of its words with one kept is left out -- unless it holds a
    word of the question that one lacks (what the question tells apart stays apart: the notifications replica and
    the media one, asked about the media one), other numbers (a port, a date, a version that changed: both are
    shown, and the block says the newest wins) or another negation ("is allergic", "is not allergic": the words
    of a negation are stop words). A kept one the block withholds as hostile (``withheld``: a placeholder is
    shown for it) leaves out nothing: what it repeats is shown. Two texts alike in their first :data:`DUPLICATE_CHARS`
    characters are compared whole before one is left out. Once ``limit`` are kept the rest follow unchecked: no
    more are shown."""
    said = Said(terms, withheld=withheld)
    kept: list[Ranked] = []
    for at, item in enumerate(ranked):
        if len(kept) >= limit:
            return kept + list(ranked[at:])
        if said.new(item):
            kept.append(item)
    return kept


#: a negation and the word it negates ("not allergic", "can't deploy", "不过敏"): English negations are stop words
#: (:func:`~.text.words` drops them), and a Chinese one is in the bigrams of the words around it
_NEGATED = re.compile(r"(?:\b(?:not|no|never|cannot|nor)|n['\u2019]t)\s+([^\W_]+)"
                      "|[\u4e0d\u6ca1\u672a\u522b]([\u4e00-\u9fff]{2})")  # 不没未别


class Said:
    """What the memories kept so far say, for :func:`distinct`: each one's words, how many, those of the question it
    holds, and its numbers (found when a comparison needs them: most end at the count of words)."""

    def __init__(self, terms: Sequence[str], kept: Sequence[Ranked] = (), *,
                 withheld: Callable[[Ranked], bool] | None = None) -> None:
        self._asked = frozenset(terms)
        self._hostile = withheld
        self._seen = [self._said(item) for item in kept]

    def _said(self, item: Ranked, chars: int | None = DUPLICATE_CHARS) -> _Words:
        memory = item.memory  # its texts, not the labels the stored turn carries ("User:", "Assistant:")
        whole = " ".join((memory.user_text, memory.assistant_text, memory.fact_text))
        said = whole if chars is None else whole[:chars]
        words = frozenset(query.words(said))  # found in C for the most part: a prefetch compares tens of candidates
        return _Words(words, len(words), self._asked & words, item, said, cut=len(said) < len(whole))

    def new(self, item: Ranked) -> bool:
        """Whether ``item`` says something the kept ones do not; if it does, it is kept."""
        own = self._said(item)
        for other in self._seen:
            # _alike, inline: a prefetch compares up to ~120 pairs, and most end here
            if own.size * DUPLICATE_SHARE > other.size or other.size * DUPLICATE_SHARE > own.size:
                continue  # the words two texts share are at most the fewer of theirs
            common = len(own.words & other.words)
            if common < DUPLICATE_SHARE * (own.size + other.size - common) or not common:
                continue
            if own.cut or other.cut:  # alike at their start: the rest may say otherwise
                own_whole, other_whole = own.whole(self), other.whole(self)
                repeats = self._alike(own_whole, other_whole) and self._same(own_whole, other_whole)
            else:
                repeats = self._same(own, other)
            if repeats and not self._withheld(other):
                return False
        self._seen.append(own)
        return True

    @staticmethod
    def _alike(own: _Words, other: _Words) -> bool:
        """Whether the two share at least :data:`DUPLICATE_SHARE` of their words."""
        if own.size * DUPLICATE_SHARE > other.size or other.size * DUPLICATE_SHARE > own.size:
            return False  # the words two texts share are at most the fewer of theirs
        common = len(own.words & other.words)
        union = own.size + other.size - common
        return bool(union and common >= DUPLICATE_SHARE * union)

    @staticmethod
    def _same(own: _Words, other: _Words) -> bool:
        """Whether ``own``, alike ``other``, tells nothing apart from it: no word of the question ``other`` lacks,
        the same numbers, no word both hold negated in one only."""
        if not (own.asked <= other.asked and own.numbers == other.numbers):
            return False
        # a word both say, one of them negating it ("No rush" around a question asked again negates nothing the
        # other says)
        return not any(word in own.words and word in other.words for word in own.negated ^ other.negated)

    def _withheld(self, kept: _Words) -> bool:
        """Whether the block shows a placeholder for ``kept`` (found once, when it would leave another out)."""
        if kept.hostile is None:
            kept.hostile = self._hostile is not None and self._hostile(kept.item)
        return kept.hostile


@dataclass
class _Words:
    words: frozenset[str]
    size: int
    #: the words of the question it holds
    asked: frozenset[str]
    item: Ranked
    #: the text compared, and whether it is cut from a longer one
    said: str
    cut: bool
    #: whether the block withholds it (found when it would leave another out)
    hostile: bool | None = None
    _whole: _Words | None = None

    @functools.cached_property
    def numbers(self) -> frozenset[str]:
        """Its words holding a digit: a port, a date, a version."""
        return frozenset(word for word in self.words if _DIGIT.search(word))

    @functools.cached_property
    def negated(self) -> frozenset[str]:
        """The words it negates."""
        return frozenset(english or chinese for english, chinese in _NEGATED.findall(self.said.casefold()))

    def whole(self, said: Said) -> _Words:
        """These words of the whole text (itself when it is not cut)."""
        if not self.cut:
            return self
        if self._whole is None:
            self._whole = said._said(self.item, None)
        return self._whole

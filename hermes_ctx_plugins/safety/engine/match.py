"""Matching: which rules have an anchor in a view, where near it to run them, and which of their matches hold.

A rule's regex runs only when one of its anchors (a word or substring, found in C) occurs, and only near it, so a
2,200-character entry scans in one to two milliseconds (``benchmarks/bench_scan.py``). The rules are split into three
tables, each with its index: phrases read in the folded view, phrases read in the squeezed view, and secrets (read in
the normalised or the folded view, as each says). Tables and regexes are built on first use.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Literal

from ..rules import RULES
from ..rules.record import Rule, compiled, is_word
from .context import holds
from .views import Views

TableName = Literal["folded", "squeezed", "secrets"]


class Index:
    """Which rules have an anchor present: words by one set intersection, substrings by ``in`` or one regex pass.

    :meth:`hits` also returns the triggers present, so that :func:`near` looks only for the anchors among them (a
    rule with sixty anchors would otherwise search the text sixty times) -- for the rules whose triggers are their
    anchors (:attr:`own`), and only on the view that was indexed.
    """

    def __init__(self, rules: Sequence[Rule], words: bool) -> None:
        self.words: dict[str, list[int]] = {}
        self.substrings: dict[str, list[int]] = {}
        for i, rule in enumerate(rules):
            for a in rule.trigger_list:
                (self.words if words and is_word(a) else self.substrings).setdefault(a.lower(), []).append(i)
        self.ascii = [s for s in self.substrings if s.isascii()]
        unicode = sorted((s for s in self.substrings if not s.isascii()), key=len, reverse=True)
        self.unicode = compiled("|".join(map(re.escape, unicode)) or "(?!)")
        self.contained = {s: [t for t in unicode if t in s] for s in unicode}  # a hit stands for these too
        # the triggers found are the anchors found: the same, or the same substrings in upper case ("KEY" for "key")
        self.own = [tuple(t.lower() for t in rule.trigger_list) == rule.anchors and (
            rule.trigger_list == rule.anchors or not any(map(is_word, rule.trigger_list))) for rule in rules]
        self.word_set = frozenset(self.words)  # set & set walks the smaller one

    def hits(self, view: str, views: Views) -> tuple[list[int], set[str] | None]:
        words = views.words & self.word_set
        substrings = {s for s in self.ascii if s in view}  # "key" may be both: a word here, inside "AccountKey" there
        m = None if views.ascii else self.unicode.search(view)
        while m:  # restart one past each hit, so overlapping substrings are all seen
            substrings.update(self.contained[m[0]])
            m = self.unicode.search(view, m.start() + 1)
        found = {i for w in words for i in self.words[w]}
        found.update(i for s in substrings for i in self.substrings[s])
        return sorted(found), substrings.union(words)


@dataclass(frozen=True)
class Table:
    """Rules tried together, in order, and their index."""

    rules: tuple[Rule, ...]
    index: Index


@cache
def table(name: TableName) -> Table:
    """The phrase rules of one view (``folded``, ``squeezed``) or the secret rules, built on first use."""
    rules = tuple(r for r in RULES if (r.kind == "secret") == (name == "secrets") and (
        name == "secrets" or r.view == name))
    return Table(rules, Index(rules, words=name != "squeezed"))


def required(rule: Rule, view: str, words: frozenset[str]) -> bool:
    """Whether one member of each of the rule's required groups is present."""
    return all(not need.isdisjoint(words) or any(s in view for s in subs) for need, subs in rule.requires)


def near(rule: Rule, view: str, words: frozenset[str] | None,
         present: set[str] | None = None, skip: Callable[[int], bool] | None = None) -> Iterator[re.Match[str]]:
    """Matches near the anchors (``words``: the folded view's, for whole-word anchors; else all are substrings;
    ``present``: the anchors the index found, if it knows). ``skip``, for a rule whose matches start at an anchor:
    asked before matching at each, says the caller has no use for a match there (it is not run)."""
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
            yield from rule.regex.finditer(view, max(0, i - back), j + forward)
        elif (skip is None or not skip(i)) and (m := rule.regex.match(view, i)):
            yield m


def phrase_hits(name: TableName, views: Views) -> list[tuple[Rule, re.Match[str]]]:
    """The first holding match of each phrase rule of table ``name`` that has one, in the table's order."""
    squeezed = name == "squeezed"
    view = views.squeezed if squeezed else views.folded
    rules, index = table(name).rules, table(name).index
    hits = []
    numbers, present = index.hits(view, views)
    for number in numbers:
        rule = rules[number]
        found = near(rule, view, None if squeezed else views.words, present if index.own[number] else None) if (
            required(rule, view, views.words)) else ()
        for m in found:
            i = m.start()  # bounded: an ASCII match must start a word
            if not (rule.bounded and i and view[i].isascii() and (view[i - 1].isalnum() or view[i - 1] in "_-")) and (
                    holds(rule, view, m)):
                hits.append((rule, m))
                break
    return hits

"""The Porter stemmer exactly as SQLite's FTS5 ``porter`` tokenizer applies it.

A backend that ranks ctx-local memories itself (not through FTS5) stems with this, so "adopted"
finds "adoption" there as it does in SQLite. FTS5's version is Martin Porter's 1980 algorithm with
the later "logi → log" and "bli → ble" rules; it works on the UTF-8 bytes of a token (a non-ASCII
byte counts as a consonant) and leaves tokens shorter than 3 or longer than 64 bytes as they are.
``tests/test_local_query.py`` checks it against SQLite's own index word by word.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Callable, Sequence

#: tokens longer than this many bytes pass unstemmed, as in FTS5
MAX_TOKEN_BYTES = 64

_Condition = Callable[[bytes], bool]


def _consonants(word: bytes) -> list[bool]:
    """For each byte, whether it is a consonant (``y`` is one at the start and after a vowel)."""
    flags: list[bool] = []
    previous = False
    for byte in word:
        vowel = byte in b"aeiou" or (byte == ord("y") and previous)
        previous = not vowel
        flags.append(previous)
    return flags


def _measure(stem: bytes) -> int:
    """Porter's *m*: how many vowel-consonant sequences ``stem`` has ([C](VC)^m[V])."""
    flags = _consonants(stem)
    return sum(1 for before, after in itertools.pairwise(flags) if not before and after)


def _has_vowel(stem: bytes) -> bool:
    # FTS5 counts y as a vowel anywhere but at the start here
    return any(byte in b"aeiou" or (byte == ord("y") and i > 0) for i, byte in enumerate(stem))


def _cvc(stem: bytes) -> bool:
    """Porter's *o: ends consonant-vowel-consonant, the last not w, x or y."""
    if len(stem) < 3 or stem[-1:] in (b"w", b"x", b"y"):
        return False
    last = _consonants(stem)[-3:]
    return last == [True, False, True]


def _m_gt0(stem: bytes) -> bool:
    return _measure(stem) > 0


def _m_gt1(stem: bytes) -> bool:
    return _measure(stem) > 1


def _m_gt1_s_or_t(stem: bytes) -> bool:
    return stem[-1:] in (b"s", b"t") and _m_gt1(stem)


#: steps 2, 3 and 4: (suffix, replacement, condition on the stem). FTS5 picks the rule by the
#: word's second-last byte and, among those, takes the first suffix that matches, whether or not
#: its condition holds; a suffix never matches the whole word.
_STEP2 = [(s.encode(), r.encode(), _m_gt0) for s, r in (
    ("ational", "ate"), ("tional", "tion"), ("enci", "ence"), ("anci", "ance"), ("izer", "ize"), ("logi", "log"),
    ("bli", "ble"), ("alli", "al"), ("entli", "ent"), ("eli", "e"), ("ousli", "ous"), ("ization", "ize"),
    ("ation", "ate"), ("ator", "ate"), ("alism", "al"), ("iveness", "ive"), ("fulness", "ful"),
    ("ousness", "ous"), ("aliti", "al"), ("iviti", "ive"), ("biliti", "ble"))]
_STEP3 = [(s.encode(), r.encode(), _m_gt0) for s, r in (
    ("ical", "ic"), ("ness", ""), ("icate", "ic"), ("iciti", "ic"), ("ful", ""), ("ative", ""), ("alize", "al"))]
_STEP4 = [(s.encode(), b"", _m_gt1_s_or_t if s == "ion" else _m_gt1) for s in (
    "al", "ance", "ence", "er", "ic", "able", "ible", "ant", "ement", "ment", "ent", "ion", "ou", "ism", "ate",
    "iti", "ous", "ive", "ize")]


def _apply(word: bytes, rules: Sequence[tuple[bytes, bytes, _Condition]]) -> bytes:
    if len(word) < 2:
        return word
    for suffix, replacement, condition in rules:
        if suffix[-2:-1] == word[-2:-1] and len(word) > len(suffix) and word.endswith(suffix):
            stem = word[:-len(suffix)]
            return stem + replacement if condition(stem) else word
    return word


def _step1ab(word: bytes) -> bytes:
    if word.endswith(b"s"):
        if word.endswith(b"es") and ((len(word) > 4 and word.endswith(b"sses")) or
                                     (len(word) > 3 and word.endswith(b"ies"))):
            word = word[:-2]
        elif not word.endswith(b"ss"):
            word = word[:-1]
    if word.endswith(b"eed") and len(word) > 3:
        return word[:-1] if _m_gt0(word[:-3]) else word
    for suffix in (b"ed", b"ing"):
        if word.endswith(suffix) and len(word) > len(suffix) and _has_vowel(word[:-len(suffix)]):
            return _step1b2(word[:-len(suffix)])
    return word


def _step1b2(word: bytes) -> bytes:
    """After ``-ed`` or ``-ing`` came off: restore an ``e`` or undouble a consonant."""
    if word.endswith((b"at", b"bl", b"iz")) and len(word) > 2:
        return word + b"e"
    last = word[-1:]
    if len(word) > 1 and last == word[-2:-1] and last not in (b"a", b"e", b"i", b"o", b"u", b"l", b"s", b"z"):
        return word[:-1]
    if _measure(word) == 1 and _cvc(word):
        return word + b"e"
    return word


@functools.lru_cache(maxsize=65_536)  # a vocabulary repeats; the steps are pure Python
def stem(token: str) -> str:
    """``token`` (lower case, as the tokenizer folds it) reduced to its Porter stem, as FTS5 does."""
    word = token.encode("utf-8", "surrogatepass")
    if not 3 <= len(word) <= MAX_TOKEN_BYTES:
        return token
    word = _step1ab(word)
    if word.endswith(b"y") and _has_vowel(word[:-1]):
        word = word[:-1] + b"i"
    word = _apply(_apply(_apply(word, _STEP2), _STEP3), _STEP4)
    if word.endswith(b"e"):
        stem_ = word[:-1]
        if _m_gt1(stem_) or (_measure(stem_) == 1 and not _cvc(stem_)):
            word = stem_
    if word.endswith(b"ll") and _m_gt1(word[:-1]):
        word = word[:-1]
    # undoubling a consonant can split a multi-byte character, as in FTS5: keep the bytes apart
    return word.decode("utf-8", "surrogateescape")

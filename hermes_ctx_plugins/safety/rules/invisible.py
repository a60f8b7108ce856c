"""Hidden characters: what renders as nothing (zero-width and format characters, bidi controls, Unicode tags, Hangul
fillers, runs of variation selectors) can hide an order from the user who reviews a note, or spell one out of sight
(tag characters map to ASCII).

Spelling is not hidden: a joiner inside an emoji or an Arabic or Indic word, a selector after a character, and a
subdivision flag's tags are how those are written (the engine's ``legitimate_invisible`` knows them).
"""

from __future__ import annotations

from .record import lazy

_SELECTORS = "\ufe00-\ufe0f\U000e0100-\U000e01ef"  # variation selectors: one after an emoji is spelling, a run smuggles
#: a run of characters that render as nothing
INVISIBLE = lazy("[\u00ad\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2\u180e\u200b-\u200f\u202a-\u202e"
                 "\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb\U000110bd\U000110cd\U00013430-\U0001343f"
                 "\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0001\U000e0020-\U000e007f\u115f\u1160\u3164"
                 # default-ignorable code points this Python's tables leave unassigned (views.IGNORABLE_RANGES)
                 "\u2065\ufff0-\ufff8\U000e0000\U000e0002-\U000e001f\U000e0080-\U000e00ff\U000e01f0-\U000e0fff"
                 f"\uffa0{_SELECTORS}]+")
#: what such a run may be when it is spelling: selectors after an emoji, joiners inside emoji or words
SPELLING = lazy(f"[{_SELECTORS}]{{1,2}}|\u200d|\u200c")
#: Unicode tag characters that spell ASCII text out of sight
TAG_TEXT = lazy("[\U000e0020-\U000e007e]+")

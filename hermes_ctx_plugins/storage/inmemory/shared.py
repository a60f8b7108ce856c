"""What both in-memory stores use: the process-wide data by location, and FTS5's BM25."""

from __future__ import annotations

import math
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, ClassVar, TypeVar

#: BM25's parameters, FTS5's
K1, B = 1.2, 0.75
_D = TypeVar("_D")


def bm25(frequencies: Sequence[int], document_counts: Sequence[int], documents: int, length: float,
         average_length: float) -> float:
    """A document's BM25 over several phrases: how often each occurs in it, in how many of the
    ``documents`` each occurs, the document's length and the average (FTS5's formula: an IDF that
    would not be positive counts as 1e-6)."""
    score = 0.0
    for frequency, count in zip(frequencies, document_counts, strict=True):
        if frequency:
            idf = max(math.log((documents - count + 0.5) / (count + 0.5)), 1e-6)
            norm = 1 - B + B * length / (average_length or 1.0)
            score += idf * frequency * (K1 + 1) / (frequency + K1 * norm)
    return score


class Shared:
    """The data of every location opened in this process, by kind and location."""

    lock = threading.Lock()
    data: ClassVar[dict[tuple[str, str], Any]] = {}

    @classmethod
    def at(cls, path: Path, make: Callable[[], _D]) -> _D:
        key = (make.__name__, str(path))
        with cls.lock:
            if key not in cls.data:
                cls.data[key] = make()
            found: _D = cls.data[key]
            return found

    @classmethod
    def exists(cls, path: Path, make: Callable[[], object]) -> bool:
        with cls.lock:
            return (make.__name__, str(path)) in cls.data


def utf8_size(*texts: str) -> int:
    """What ``texts`` take as UTF-8 (a lone surrogate as three bytes): how a store's size is counted."""
    return sum(len(text.encode("utf-8", "surrogatepass")) for text in texts)

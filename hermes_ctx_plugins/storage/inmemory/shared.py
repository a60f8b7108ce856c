"""What both in-memory stores use: the process-wide data by location, and how their size is counted."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar, TypeVar

_D = TypeVar("_D")


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

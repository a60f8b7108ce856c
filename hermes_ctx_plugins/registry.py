"""Name -> strategy / provider class, remembering which plugin registered each name."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Literal

from .compression.base import CompressorStrategy
from .errors import DuplicatePluginError, PluginLoadError, UnknownPluginError
from .memory.base import MemoryProvider

Kind = Literal["compressor", "memory"]
KINDS: tuple[Kind, ...] = ("compressor", "memory")
_BASES: dict[Kind, type] = {"compressor": CompressorStrategy, "memory": MemoryProvider}
_VALID_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
# hermes' MemoryManager lets a provider named "builtin" bypass its one-external rule.
_RESERVED = {"memory": {"builtin"}, "compressor": {"compressor"}}


@dataclass(frozen=True)
class Registration:
    """One registered strategy or provider."""

    name: str
    kind: Kind
    factory: type
    #: the pluggy plugin (entry-point name, or built-in module) that registered it
    plugin: str
    #: ``built-in`` or ``<distribution> <version>``
    source: str

    @property
    def external(self) -> bool:
        return self.kind == "memory" and bool(getattr(self.factory, "external", True))


class Registry:
    """The registered strategies and providers; a name can be registered once per kind."""

    def __init__(self) -> None:
        self._entries: dict[tuple[Kind, str], Registration] = {}

    def add(self, kind: Kind, factory: object, *, plugin: str, source: str) -> Registration:
        base = _BASES[kind]
        if not (isinstance(factory, type) and issubclass(factory, base)):
            raise PluginLoadError(
                plugin, f"register_{'compressors' if kind == 'compressor' else 'memory_providers'} "
                f"got {factory!r}; expected a subclass of {base.__name__}")
        name = getattr(factory, "name", "")
        if not isinstance(name, str) or not _VALID_NAME.match(name):
            raise PluginLoadError(
                plugin, f"{factory.__name__}.name is {name!r}; expected a non-empty name of "
                "letters, digits, '-', '_' or '.'")
        if name in _RESERVED[kind]:
            raise PluginLoadError(plugin, f"{factory.__name__}.name {name!r} is reserved by hermes")
        existing = self._entries.get((kind, name))
        if existing is not None:
            raise DuplicatePluginError(name, kind, existing.plugin, plugin)
        entry = Registration(name=name, kind=kind, factory=factory, plugin=plugin, source=source)
        self._entries[(kind, name)] = entry
        return entry

    def remove_plugin(self, plugin: str) -> None:
        """Forget everything ``plugin`` registered."""
        for key in [k for k, entry in self._entries.items() if entry.plugin == plugin]:
            del self._entries[key]

    def get(self, kind: Kind, name: str, *, where: str = "") -> Registration:
        try:
            return self._entries[(kind, name)]
        except KeyError:
            raise UnknownPluginError(name, kind, self.names(kind), where=where) from None

    def __contains__(self, key: tuple[Kind, str]) -> bool:
        return key in self._entries

    def names(self, kind: Kind) -> list[str]:
        return sorted(name for k, name in self._entries if k == kind)

    def __iter__(self) -> Iterator[Registration]:
        return iter(sorted(self._entries.values(), key=lambda r: (r.kind, r.name)))

"""The shim packages through which hermes finds our memory providers.

hermes finds memory providers only as directories (bundled ``plugins/memory/<name>/`` or
``$HERMES_HOME/plugins/<name>/``), never through entry points, so our plugin writes a two-line shim
package there for each of our external providers (:mod:`.memory` holds what the shim hands hermes).
Checked at every hermes start: light on purpose, it imports nothing of the package until a shim must
be written.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

log = logging.getLogger("hermes_ctx_plugins.hermes")

#: Provider directories hermes bundles; a user directory of the same name is never loaded.
BUNDLED_MEMORY_PROVIDERS = frozenset({
    "mem0", "honcho", "retaindb", "holographic", "hindsight", "openviking", "supermemory", "byterover",
})
_SHIM = (
    '"""hermes-ctx-plugins MemoryProvider shim for {name!r}: written by hermes-ctx, safe to delete."""\n'
    "from hermes_ctx_plugins.hermes.memory import shim_register as _shim; register = _shim({name!r})\n"
)


@dataclass(frozen=True)
class ShimReport:
    """What :func:`write_shims` did, per provider name."""

    written: tuple[str, ...] = ()
    unchanged: tuple[str, ...] = ()
    #: a different file is already there: left alone, hermes will load that one instead
    conflicts: tuple[Path, ...] = ()
    #: the name is one of hermes' bundled providers, which always win
    shadowed: tuple[str, ...] = ()


def write_shims(hermes_home: Path, names: Iterable[str]) -> ShimReport:
    """Make each provider in ``names`` discoverable by hermes, idempotently and never destructively."""
    written, unchanged, conflicts, shadowed = [], [], [], []
    for name in sorted(set(names)):
        if name in BUNDLED_MEMORY_PROVIDERS:
            shadowed.append(name)
            continue
        path, text = shim_path(hermes_home, name), shim_text(name)
        existing = _read(path)
        if existing != text:  # the lock only when there may be something to write
            existing = _write_if_missing(path, text)
        if existing == text:
            unchanged.append(name)
        elif existing is not None:
            conflicts.append(path)
        else:
            written.append(name)
    for path in conflicts:
        log.warning("not writing the hermes-ctx memory shim %s: a different file is there; "
                    "move it away if hermes should load our provider %r", path, path.parent.name)
    for name in shadowed:
        log.warning("our memory provider %r has the name of a provider bundled with hermes, which hermes "
                    "always loads instead; rename it to use it through memory.provider", name)
    return ShimReport(tuple(written), tuple(unchanged), tuple(conflicts), tuple(shadowed))


def _read(path: Path) -> str | None:
    """``path``'s text; ``None``: no file; ``""``: unreadable. (A writer replaces the file whole, so a
    read without the lock sees the old shim or the new one, never a part.)"""
    try:
        return path.read_text(encoding="utf-8") if path.exists() else None
    except OSError:
        return ""


def _write_if_missing(path: Path, text: str) -> str | None:
    """Under the file's lock, write ``text`` if there is no file; what was there before (see :func:`_read`)."""
    from ..storage.files import atomic_write, locked  # only now: the storage package is not light

    with locked(path):  # a second hermes process starting now checks and writes the same file
        existing = _read(path)
        if existing is None:
            atomic_write(path, text.encode("utf-8"))
    return existing


def shim_path(hermes_home: Path, name: str) -> Path:
    """Where hermes looks for a user memory provider ``name``: the file :func:`write_shims` writes."""
    return hermes_home / "plugins" / name / "__init__.py"


def holds_shim(path: Path, name: str) -> bool | None:
    """Whether ``path`` is exactly our shim for ``name`` (``None``: it cannot be read)."""
    try:
        return bool(path.read_text(encoding="utf-8") == shim_text(name))
    except (OSError, UnicodeDecodeError):
        return None


def shim_text(name: str) -> str:
    """The shim :func:`write_shims` writes for ``name`` (``hermes-ctx doctor`` and ``uninstall`` compare with it)."""
    return _SHIM.format(name=name)

"""The memory-provider shims ``hermes-ctx install`` writes and ``--uninstall`` removes: hermes finds a
user memory provider only as ``$HERMES_HOME/plugins/<name>/__init__.py``; each of ours is a shim there
(written by :func:`hermes_ctx_plugins.hermes.memory.write_shims`, which our plugin also calls at every
hermes start-up). Without hermes installed nothing is written or removed: the shims import it.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from .doctor import hermes_version


def write(home: Path, ours: Mapping[str, bool]) -> list[str]:
    """Write the shims hermes finds our external providers through (as our plugin does at start-up).

    Each shim folder keeps the empty ``__init__.py.lock`` that ``write_shims`` locks (through
    ``storage.files.locked``): our plugin writes the shims under that lock at every hermes start-up,
    so it would come back with the next ``hermes chat``, and deleting a lock file another process may
    have open lets two writers hold "the" lock at once. hermes loads only ``__init__.py`` from the folder.
    """
    if hermes_version() is None:  # the shims import hermes; doctor's report says what to install
        return []
    from ..hermes.memory import write_shims

    report = write_shims(home, _external(ours))
    return [f"wrote {name}" for name in report.written] + [_shim_conflict(path) for path in report.conflicts]


def to_write(home: Path, ours: Mapping[str, bool]) -> list[str]:
    """What :func:`write` would say, for ``--dry-run``: the shims missing, and the other files
    in their place (``write_shims`` writes only where there is no file)."""
    if hermes_version() is None:
        return []
    from ..hermes.memory import BUNDLED_MEMORY_PROVIDERS, shim_path

    said = []
    for name in sorted(set(_external(ours)) - set(BUNDLED_MEMORY_PROVIDERS)):
        path = shim_path(home, name)
        if not path.exists():
            said.append(f"would write {name} ({path})")
        elif _is_shim(path, name) is False:
            said.append(_shim_conflict(path))
    return said


def _external(ours: Mapping[str, bool]) -> list[str]:
    return [name for name, external in ours.items() if external]


def _shim_conflict(path: Path) -> str:
    return f"not written: {path} is another file (move it away for hermes to load ours)"


def to_remove(home: Path) -> list[Path]:
    """The folders under ``home/plugins`` holding a shim of ours (a file that is not exactly ours stays)."""
    if hermes_version() is None:  # without hermes, what the shims are cannot be known: they stay
        return []
    from ..hermes.memory import shim_path

    return [folder for folder in sorted((home / "plugins").glob("*/"))
            if _is_shim(shim_path(home, folder.name), folder.name)]


def _is_shim(path: Path, name: str) -> bool | None:
    """Whether ``path`` is exactly our shim for ``name`` (``None``: it cannot be read)."""
    from ..hermes.shims import holds_shim

    return holds_shim(path, name)


def remove(folders: list[Path]) -> list[str]:
    """Remove the shim ``folders`` (:func:`to_remove`)."""
    for folder in folders:
        _remove_shim_folder(folder)
    return [f"removed {folder.name}" for folder in folders]


def _remove_shim_folder(folder: Path) -> None:
    """The shim, its lock and what Python compiled of it; the folder itself once nothing else is in it."""
    for leftover in (folder / "__init__.py", folder / "__init__.py.lock", *folder.glob("__pycache__/__init__.*")):
        leftover.unlink(missing_ok=True)
    for empty in (folder / "__pycache__", folder):
        if empty.is_dir() and not any(empty.iterdir()):
            empty.rmdir()

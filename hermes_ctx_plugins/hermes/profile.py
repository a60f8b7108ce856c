"""Which hermes home hermes itself runs: its profiles (``hermes profile create/use``, ``hermes -p NAME``).

hermes keeps one home per profile, ``<root>/profiles/<name>`` (``default`` is the root itself), and its
CLI picks one before anything reads the home (``hermes_cli.main._apply_profile_override``): ``-p NAME``,
else ``$HERMES_HOME`` as it is when it already points at a profile's folder, else the name in
``<root>/active_profile`` (what ``hermes profile use`` writes). ``hermes-ctx`` follows the same rule
(:func:`follow`, called first by the CLI), so ``install`` edits and ``doctor`` checks the config hermes
runs, not the root's. hermes is imported inside the functions: without it there are no profiles to
follow.
"""

from __future__ import annotations

import os
from pathlib import Path

#: what hermes calls the root home in its profile list
DEFAULT_PROFILE = "default"


def follow(name: str | None) -> Path | None:
    """Point ``$HERMES_HOME`` at hermes profile ``name`` (``-p NAME``) or, without one, at the profile
    hermes would run (:func:`active_home`); the home it set, ``None`` when it left ``$HERMES_HOME`` alone.

    :raises LookupError: there is no such profile (the message names the ones there are).
    """
    home = profile_home(name) if name else active_home()
    if home is not None:
        os.environ["HERMES_HOME"] = str(home)
    return home


def active_home() -> Path | None:
    """The home of the profile hermes runs when given no ``-p``; ``None`` when that is ``$HERMES_HOME``
    (or ``~/.hermes``) as it is: no profile is active, ``$HERMES_HOME`` already is a profile's folder,
    or hermes is not installed.

    :raises LookupError: ``active_profile`` names a profile that does not exist (hermes refuses to start then).
    """
    root = _root()
    if root is None:
        return None
    home = os.environ.get("HERMES_HOME", "")
    if home and Path(home).parent.name == "profiles":
        return None
    if os.environ.get("HERMES_S6_SUPERVISED_CHILD"):  # a slot of hermes' gateway container: its profile is fixed
        return None
    try:
        name = (root / "active_profile").read_text().strip()
    except (OSError, UnicodeDecodeError):  # none (the usual case), or unreadable: hermes skips it too
        return None
    if not name or name == DEFAULT_PROFILE:
        return None
    return profile_home(name)


def profile_home(name: str) -> Path:
    """The home of hermes profile ``name`` as ``hermes -p NAME`` resolves it (``default``: the root).

    :raises LookupError: no profile of that name, a name hermes refuses, or hermes not installed.
    """
    try:
        from hermes_cli.profiles import resolve_profile_env
    except ImportError:
        raise LookupError(f"hermes profile {name!r}: profiles are hermes', and hermes-agent is not installed "
                          "in this Python") from None
    try:
        return Path(resolve_profile_env(name))
    except (FileNotFoundError, ValueError) as exc:
        raise LookupError(f"no hermes profile {name!r} ({exc}); the profiles are: "
                          f"{', '.join(profile_names())}") from None


def profile_names() -> list[str]:
    """Every profile hermes has here: ``default`` and the folders under ``<root>/profiles``."""
    root = _root()
    folder = root / "profiles" if root is not None else None
    named = sorted(p.name for p in folder.iterdir() if p.is_dir()) if folder and folder.is_dir() else []
    return [DEFAULT_PROFILE, *(n for n in named if n != DEFAULT_PROFILE)]


def _root() -> Path | None:
    """hermes' root home, where ``active_profile`` and ``profiles/`` are (``None`` without hermes)."""
    try:
        from hermes_constants import get_default_hermes_root  # type: ignore[import-untyped]  # no stubs
    except ImportError:
        return None
    return Path(get_default_hermes_root())


def profile_of(home: Path) -> str:
    """The profile whose home ``home`` is, by hermes' own mark: a folder in a ``profiles`` folder."""
    return home.name if home.parent.name == "profiles" else DEFAULT_PROFILE

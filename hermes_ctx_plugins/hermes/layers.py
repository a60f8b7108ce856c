"""hermes' config layers beyond ``config.yaml``, as hermes applies them at start-up: what ``doctor``
and ``install`` must read to say what hermes will really do.

- The env files: hermes loads ``$HERMES_HOME/.env`` over the environment it was started in, then the
  managed scope's ``.env`` over both (``hermes_cli.env_loader.load_hermes_dotenv``), so a
  ``HERMES_SAFE_MODE=1`` written in either turns every plugin off though the shell has none.
- The managed scope (``hermes_cli.managed_scope``: ``$HERMES_MANAGED_DIR``, else ``/etc/hermes``): an
  administrator's ``config.yaml`` whose keys win, leaf by leaf, over the user's.
- hermes' defaults, to tell a value the user chose from one hermes wrote out for them.

hermes is imported inside the functions; without it each answers as if the layer were absent.
"""

from __future__ import annotations

import copy
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

#: where a value came from when it came from no file
ENVIRONMENT = "the environment"


@dataclass(frozen=True)
class EnvValue:
    """An environment variable as hermes sees it once its env files are loaded."""

    value: str | None
    #: the file that set it, or :data:`ENVIRONMENT`
    source: str
    #: set by the managed scope (an administrator's file)
    managed: bool = False


def env_value(name: str, home: Path) -> EnvValue:
    """Variable ``name`` as hermes started in ``home`` reads it: the managed ``.env`` wins, then
    ``home/.env``, then this process' environment."""
    managed = _managed_dir()
    if managed is not None:
        from hermes_cli.managed_scope import load_managed_env

        pinned = load_managed_env()
        if name in pinned:
            return EnvValue(pinned[name], str(managed / ".env"), managed=True)
    user = home / ".env"
    value = _dotenv(user).get(name)
    if value is not None:
        return EnvValue(value, str(user))
    return EnvValue(os.environ.get(name), ENVIRONMENT)


def effective_config(data: Mapping[str, Any]) -> dict[str, Any]:
    """The user's config ``data`` with the managed scope's keys laid over it, as hermes loads it."""
    plain = copy.deepcopy(dict(data))
    if _managed_dir() is None:
        return plain
    from hermes_cli.managed_scope import apply_managed_overlay

    return dict(apply_managed_overlay(plain))


def managed_keys() -> tuple[str, set[str]]:
    """The managed scope's ``config.yaml`` and the dotted keys it sets (``("", set())`` without one)."""
    managed = _managed_dir()
    if managed is None:
        return "", set()
    from hermes_cli.managed_scope import managed_config_keys

    return str(managed / "config.yaml"), managed_config_keys()


def all_defaults_written(section: str, values: Mapping[str, Any]) -> bool:
    """Whether ``values`` hold every key of hermes' default ``section``: the mark of a file hermes wrote
    out with all its defaults (``hermes config edit`` creates one so: ``save_config(DEFAULT_CONFIG,
    strip_defaults=False)``). Every other writer of hermes leaves out the values equal to a default,
    unless the file already had them."""
    try:
        from hermes_cli.config import DEFAULT_CONFIG
    except ImportError:
        return False
    default = DEFAULT_CONFIG.get(section)
    return isinstance(default, Mapping) and bool(default) and default.keys() <= values.keys()


def _managed_dir() -> Path | None:
    try:
        from hermes_cli.managed_scope import get_managed_dir
    except ImportError:
        return None
    found = get_managed_dir()
    return Path(found) if found is not None else None


def _dotenv(path: Path) -> dict[str, str | None]:
    """``path`` read as hermes reads a ``.env`` (python-dotenv, latin-1 when it is not UTF-8); ``{}``
    when there is none."""
    from dotenv import dotenv_values  # hermes' own dependency: there whenever hermes is

    if not path.is_file():
        return {}
    try:
        return dict(dotenv_values(path, encoding="utf-8"))
    except UnicodeDecodeError:
        return dict(dotenv_values(path, encoding="latin-1"))

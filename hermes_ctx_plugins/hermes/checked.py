"""The record of the last config our plugin found usable, so that hermes' start need not check it again.

A config is checked by building the host from it: importing every built-in strategy and provider,
loading the installed plugins, validating every option. hermes loads our plugin at every start, for
commands that never run an agent too, and a broken config must be said then (not at the first turn).
So :func:`~hermes_ctx_plugins.hermes.plugin.register` builds the host only when something the check
depends on changed since it last passed, and otherwise builds it on first use. What it depends on,
and what the record's key is made of:

- the bytes of ``$HERMES_HOME/config.yaml`` (the only file :func:`~hermes_ctx_plugins.config.load_config`
  reads there) and ``$HERMES_CTX_DEPLOYMENT`` (which deployment applies);
- the installed distributions: ``sys.path`` and the modification time of each directory on it
  (installing, upgrading or removing a distribution changes its directory; so the third-party plugins
  and the packages a backend needs are covered);
- this package's code: every module's path, size and modification time.

Code changed in a way none of these shows (a third-party plugin edited in place in its own checkout) is
found at first use instead: the same message, hermes runs that agent with its own compressor, and the
record is dropped, so the next start checks at registration again. The key is taken before the check
runs: a config edited while it runs is checked again at the next start. The record also keeps what
registration needs from the host: which memory providers need a shim (hermes finds them only as
directories). The ``file`` provider's gates are registered at every start, whatever the record says.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import sys
from dataclasses import dataclass
from pathlib import Path

from ..environment import DEPLOYMENT_ENV

#: bump when the record's meaning changes: an older record then never matches
_FORMAT = 2
#: a record is a few hundred bytes: anything much longer is not ours
_MAX_BYTES = 64 * 1024
#: what a provider's name may be, as a shim's directory under ``$HERMES_HOME/plugins``
_SHIM_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,127}")
_PACKAGE = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class Checked:
    """What a passed check left for registration."""

    #: our external memory providers, each needing a shim (:mod:`.shims`)
    shims: tuple[str, ...]


def record_path(hermes_home: Path) -> Path:
    return hermes_home / "ctx_plugins" / "checked.json"


def recall(hermes_home: Path, current: str) -> Checked | None:
    """What the last passed check left, if it checked what :func:`key` now says is ``current``;
    ``None``: a check is due (no record, another key, or a record that is not one of ours)."""
    try:
        with record_path(hermes_home).open("rb") as file:
            raw = file.read(_MAX_BYTES + 1)
        data = json.loads(raw) if len(raw) <= _MAX_BYTES else None
    except Exception:  # unreadable, not JSON, nested past the recursion limit: only a shortcut is lost
        return None
    if not isinstance(data, dict) or data.get("key") != current:
        return None
    shims = data.get("shims")
    if not isinstance(shims, list) or not all(isinstance(name, str) and _SHIM_NAME.fullmatch(name) for name in shims):
        return None
    return Checked(shims=tuple(shims))


def remember(hermes_home: Path, current: str, checked: Checked) -> None:
    """Keep ``checked`` as the result for ``current``, the :func:`key` taken before the check ran (a
    home we cannot write to costs only the shortcut)."""
    from ..storage.files import atomic_write, locked  # only after a check: the storage package is not light

    path = record_path(hermes_home)
    data = {"key": current, "shims": list(checked.shims)}
    try:
        with locked(path):  # processes starting at once write the same thing: one at a time
            atomic_write(path, json.dumps(data).encode("utf-8"))
    except OSError:
        pass


def forget(hermes_home: Path) -> None:
    """Drop the record: the config failed although the record said it passed."""
    try:
        record_path(hermes_home).unlink()
    except OSError:
        pass


def key(hermes_home: Path) -> str:
    """The digest of everything a check depends on (see the module)."""
    digest = hashlib.sha256(f"{_FORMAT}\0{os.environ.get(DEPLOYMENT_ENV, '')}\0".encode())
    try:
        digest.update((hermes_home / "config.yaml").read_bytes())
    except OSError as exc:  # no file: all defaults; unreadable: the check says so (never recorded)
        digest.update(f"\0{type(exc).__name__}".encode())
    for entry in sys.path:
        digest.update(f"\0{_stamp(os.path.abspath(entry or os.curdir))}".encode())
    for folder, _, files in sorted(os.walk(_PACKAGE)):
        for name in sorted(files):
            if name.endswith(".py"):
                digest.update(f"\0{_stamp(os.path.join(folder, name))}".encode())
    return digest.hexdigest()


def _stamp(path: str) -> str:
    try:
        stat = os.stat(path)
    except (OSError, ValueError):  # not there (a path hook's name, a folder since removed)
        return f"{path} -"
    return f"{path} {stat.st_size} {stat.st_mtime_ns}"

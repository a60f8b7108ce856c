"""What our config takes from the process environment: hermes' home and the deployment variable.

A module of its own, outside :mod:`.config`, so that reading them (hermes' plugin registration does, at
every start) builds none of the settings classes; :mod:`.config` offers both names too.
"""

from __future__ import annotations

import os
from pathlib import Path

#: The environment variable that picks the active deployment when no argument does.
DEPLOYMENT_ENV = "HERMES_CTX_DEPLOYMENT"


def hermes_home() -> Path:
    """``$HERMES_HOME``, or ``~/.hermes`` as hermes itself defaults."""
    return Path(os.environ.get("HERMES_HOME") or Path.home() / ".hermes").expanduser()


def under_home(raw: str, home: Path | None = None) -> Path:
    """The file a store's path option names: ``$HERMES_HOME`` (or ``${HERMES_HOME}``) replaced, ``~`` expanded, and a
    relative path taken under the hermes home (``home``, default :func:`hermes_home`), never under the working
    directory: hermes is started from any folder, and each would otherwise get a store of its own."""
    base = hermes_home() if home is None else home
    path = Path(raw.replace("${HERMES_HOME}", str(base)).replace("$HERMES_HOME", str(base))).expanduser()
    return path if path.is_absolute() else base / path

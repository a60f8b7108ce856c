"""The version of the scanner's judgement: a verdict :func:`~hermes_ctx_plugins.safety.scan` gave
under one version may be reused for the same text only under that same version.

It is a digest of everything a verdict can depend on besides the text: the source of every module
of this package and the classifier's weights (the rules, the engine and layer 2; any edit, even a comment, makes a
new version — a
spurious change costs a scan, a missed one could let a newly covered threat through), the Python
version (its regex engine) and the Unicode database (normalisation and character classes).
"""

from __future__ import annotations

import functools
import hashlib
import sys
import unicodedata
from pathlib import Path


@functools.lru_cache(maxsize=1)
def rules_version() -> str:
    """The scanner's version; "" when its source cannot be read (an installation without ``.py``
    files, say): then no verdict is ever reused."""
    return source_digest(Path(__file__).parent)


def source_digest(package: Path) -> str:
    """The digest of every ``.py`` and ``.json.gz`` file under ``package`` (names and bytes), this Python's
    version and its Unicode database; "" when there is no such file or one cannot be read."""
    digest = hashlib.sha256(f"{sys.version}\x00{unicodedata.unidata_version}\x00".encode())
    sources = sorted([*package.rglob("*.py"), *package.rglob("*.json.gz")])
    try:
        for path in sources:
            digest.update(path.relative_to(package).as_posix().encode("utf-8", "surrogateescape") + b"\x00")
            digest.update(path.read_bytes() + b"\x00")
    except OSError:
        return ""
    return digest.hexdigest()[:32] if sources else ""

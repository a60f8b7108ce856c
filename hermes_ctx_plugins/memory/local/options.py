"""``ctx_plugins.options.ctx-local``: ctx-local's options and where its database is."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ...errors import ConfigError
from ...options import option

NAME = "ctx-local"
DEFAULT_PATH = "ctx-local/memory.db"


@dataclass(frozen=True)
class LocalOptions:
    """``ctx_plugins.options.ctx-local``."""

    #: the SQLite file; relative paths are under ``$HERMES_HOME``, ``~`` and ``$HERMES_HOME`` expand
    path: str = DEFAULT_PATH
    #: the most tokens one prefetch adds to the user message
    budget_tokens: int = option(800, ge=50, le=32_000)
    #: the most memories one prefetch shows (the budget usually ends it first: about 16 short turns
    #: fit 800 tokens)
    max_results: int = option(16, ge=1, le=50)
    #: a memory this many days old counts half as recent as a new one
    recency_half_life_days: float = option(30.0, gt=0)
    #: how much recency moves the ranking (0 = not at all, 1 = an old memory can drop to nothing)
    recency_weight: float = option(0.3, ge=0, le=1)
    #: False: a user's memories stay in the chat they were made in (facts saved "for the user"
    #: excepted); True: every chat of the user sees them all
    share_across_chats: bool = False
    #: attempts for a queued record that fails by itself, before it is quarantined
    max_retries: int = option(5, ge=1, le=100)
    #: first retry pause; doubles per attempt
    retry_backoff_seconds: float = option(0.05, gt=0, le=60)
    #: how long shutdown waits for the queue to drain (what is left is stored at the next start)
    drain_timeout_seconds: float = option(5.0, ge=0, le=600)
    #: records per write transaction
    batch_size: int = option(1024, ge=1, le=10_000)
    #: force every queued turn to disk (survives power loss, costs a disk flush per turn)
    fsync: bool = False
    #: longer user or assistant texts are cut to this many characters (and say so)
    max_turn_chars: int = option(200_000, ge=1_000, le=50_000_000)
    #: dense (embedding) recall beside the lexical one: "" = off; "e5-small" = the built-in model (needs
    #: the ``embed`` extra); or ``package.module:function`` mapping a list of texts to vectors. Memories
    #: are embedded in the background after they are stored (:mod:`.dense`)
    embedder: str = ""
    #: CPU threads the built-in model uses (a question: ~13 ms on 2 threads, ~20 ms on 1, here)
    embed_threads: int = option(2, ge=1, le=64)
    #: the dense score's share when fused with BM25's (0 = lexical only, 1 = dense only); measured on
    #: the tune half of benchmarks/recall_eval, see README
    dense_weight: float = option(0.9, ge=0, le=1)
    #: the dense share for a question that names something exactly (an id, a number, a path, a
    #: snake_case or camelCase name, an acronym, a capitalised name inside the sentence:
    #: :func:`hermes_ctx_plugins.dense.names_exactly`),
    #: where the words asked for must win; never more than ``dense_weight``
    exact_dense_weight: float = option(0.7, ge=0, le=1)


def resolve_path(raw: str, home: Path) -> Path:
    """The database path an option value names; raises ConfigError for one that cannot work."""
    where = f"ctx_plugins.options.{NAME}.path"
    text = raw.strip()
    if not text or "\x00" in text:
        raise ConfigError(f"{raw!r} is not a file path", path=where, value=raw,
                          expected=f"a file path such as {DEFAULT_PATH!r} (relative to $HERMES_HOME)")
    text = text.replace("${HERMES_HOME}", str(home)).replace("$HERMES_HOME", str(home))
    path = Path(text).expanduser()
    path = path if path.is_absolute() else home / path
    try:
        folder = path.is_dir()
    except OSError:  # its folder cannot be entered: opening it says why (a review: a traceback here)
        folder = False
    if folder:
        raise ConfigError(f"{str(path)!r} is a directory", path=where, value=raw,
                          expected=f"a file path, e.g. {str(path / 'memory.db')!r}")
    return path

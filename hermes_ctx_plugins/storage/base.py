"""The interfaces of the stores the package owns: what every backend provides and promises.

:class:`MemoryBackend` is ctx-local's memory store, :class:`ArchiveBackend` the archive of what
compactions removed. A backend implements both (``storage/sqlite/`` and ``storage/inmemory.py`` do);
the docstrings below are the whole contract, and the backend contract suite
(:mod:`hermes_ctx_plugins.testing.storage_contract`) checks it. What every method keeps:

* **Exact ids.** Namespaces, user, chat and session ids are opaque strings, compared exactly: never
  trimmed, folded or truncated; lone surrogates, NUL, ``""`` and 10 kB ids are ids like any other,
  and come back exactly as written. ``""`` is the anonymous user, not "any user".
* **Namespaces apart.** Every read and delete that names a namespace touches only rows of that
  namespace; the same user id in two namespaces is two users.
* **Failures name the store.** When the store as a whole cannot be used (locked, damaged, full,
  read-only, unreachable), a method raises :class:`LocalStoreError` (memory) or
  :class:`ArchiveError` (archive) and has changed nothing. Any other exception is about the
  arguments (a record a store cannot take: ``ValueError``), never about the store.
* **Connections.** Every method may be called from any thread. One instance is one connection;
  all those opened at one location (``storage.open_memory(config, path)`` twice) reach the same
  store: what one writes, the others read at once.
"""

from __future__ import annotations

import abc
from collections.abc import Collection, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

from ..errors import HermesCtxError
from ..events import Forgotten, Message
from .records import ArchiveHit, Hit, Memory, Quarantined, Record, Scope, Stored


class LocalStoreError(HermesCtxError):
    """The memory store cannot be used right now; the message names it and what to do.

    :ivar path: the store's location (a file, for SQLite)
    :ivar reason: ``locked``, ``damaged``, ``full``, ``read-only``, ``unsupported`` or ``unavailable``
    """

    def __init__(self, path: Path | str, reason: str, detail: str, hint: str) -> None:
        self.path = path
        self.reason = reason
        super().__init__(f"ctx-local memory database {path}: {detail}; {hint}")


def is_store_failure(exc: BaseException) -> bool:
    """Whether ``exc`` is about the memory store as a whole (retry later), not about one record."""
    return isinstance(exc, LocalStoreError)


class ArchiveError(HermesCtxError):
    """The archive cannot be used; the message names the store and what went wrong."""


class MemoryBackend(abc.ABC):
    """ctx-local's memories, the queue progress written with them, and quarantined records.

    A memory belongs to ``(namespace, user_id, chat_id)``; with visibility ``user`` it is also seen
    from the user's other chats. The write-behind queue is the only writer of turns: it calls
    :meth:`write` with the records of one segment file and how far into that file they reach, and
    reads :meth:`progress` back after a crash to resume exactly there.
    """

    #: where the store is, for messages (a file path for SQLite)
    path: Path

    # -- writing --------------------------------------------------------------------------------------

    @abc.abstractmethod
    def write(self, records: Sequence[Record], *, segment: str = "", offset: int = 0) -> int:
        """Store ``records`` and, when ``segment`` is given, record that the queue has been applied
        up to ``offset`` of it; returns how many records were new.

        Idempotent by key: a record whose key is stored already (or came earlier in ``records``) is
        skipped and the stored one left as it was. All or nothing: if one record cannot be stored
        (``ValueError`` for a kind, visibility or key :meth:`Record.check` refuses), neither the
        batch nor the progress is written — so progress never runs ahead of what is stored, nor
        behind it. Texts are stored as given (the caller redacts).
        """

    @abc.abstractmethod
    def add(self, record: Record) -> Memory:
        """Store one record at once (no segment) and return it as stored; for a known key, the
        memory already stored under it."""

    @abc.abstractmethod
    def quarantine(self, segment: str, offset: int, raw: str, error: str, attempts: int) -> None:
        """Keep a queued line that keeps failing (``raw``, already redacted) with its error, and
        move ``segment``'s progress to ``offset`` — both or neither. Its owner is read from the
        line with :func:`~hermes_ctx_plugins.storage.records.owner_of` (``None`` if unreadable)."""

    @abc.abstractmethod
    def progress(self) -> dict[str, int]:
        """How far each queue segment has been applied: segment name → offset."""

    @abc.abstractmethod
    def drop_progress(self, segments: Iterable[str]) -> None:
        """Forget the progress of ``segments`` (their files are gone); unknown names are ignored."""

    # -- reading --------------------------------------------------------------------------------------

    @abc.abstractmethod
    def search(self, terms: Sequence[str], *, namespace: str, user_id: str, chat_id: str,
               share_across_chats: bool, limit: int) -> list[Hit]:
        """The best ``limit`` memories for ``terms`` (from :func:`~hermes_ctx_plugins.storage.text.query_terms`),
        best first, only from the caller's scope; ``[]`` for no terms.

        The scope: ``namespace`` and ``user_id`` exactly and, unless ``share_across_chats``, only
        memories made in ``chat_id`` or with visibility ``user``. A memory matches when one term
        occurs in its body (the fact, or the user's text and the answer; the first
        :data:`~hermes_ctx_plugins.storage.text.INDEX_CHARS` of it): both normalised by
        :func:`~hermes_ctx_plugins.storage.text.index_text` and cut into words as
        :func:`~hermes_ctx_plugins.storage.text.tokens` does (a term of several words matches
        them in a row). :attr:`Hit.relevance` is BM25 (k1 1.2, b 0.75) summed over the terms,
        positive, higher is better, comparable within one search only; its IDF counts every stored
        memory, whoever owns it (an IDF that would not be positive counts as 1e-6, as in FTS5). Ties
        come in no particular order. The hits' texts may be cut to
        :data:`~hermes_ctx_plugins.storage.records.CANDIDATE_CHARS`.
        """

    @abc.abstractmethod
    def get(self, ids: Iterable[int]) -> list[Memory]:
        """The stored memories with these ids, by id, whole texts (unknown ids are skipped; no scope:
        the caller's ids come from a scoped search or its own records)."""

    @abc.abstractmethod
    def memories(self, *, namespace: str | None = None, user_id: str | None = None, chat_id: str | None = None,
                 session_id: str | None = None) -> Iterator[Memory]:
        """Every stored memory matching the filters (``None``: any), oldest first, whole texts;
        streams (an export of millions must not be read at once)."""

    @abc.abstractmethod
    def scopes(self, namespace: str | None = None) -> list[tuple[str, str]]:
        """Every ``(user_id, chat_id)`` that has memories (in ``namespace``; ``None``: in any), once
        each, in no particular order."""

    @abc.abstractmethod
    def quarantined(self, namespace: str | None = None) -> list[Quarantined]:
        """Quarantined records, oldest first: of ``namespace`` and those whose owner is unknown
        (``None``: all)."""

    @abc.abstractmethod
    def stats(self, namespace: str | None = None) -> dict[str, Any]:
        """What is stored (in ``namespace``; ``None``: everywhere): ``turns``, ``facts``, ``scopes``
        (user/chat pairs), ``sessions``, ``oldest`` and ``newest`` (``created_at``, ``None`` when
        empty), ``quarantined`` (as :meth:`quarantined` counts them) and ``bytes`` (what the whole
        store takes, every namespace)."""

    # -- forgetting -----------------------------------------------------------------------------------

    @abc.abstractmethod
    def forget(self, ids: Iterable[int], *, namespace: str | None = None, user_id: str | None = None,
               chat_id: str | None = None) -> list[int]:
        """Delete memories by id — with a scope, only that scope's (``chat_id``: made in that chat
        or with visibility ``user``) — and return the ids deleted, sorted. An id outside the scope
        is left alone and missing from the answer, exactly like an unknown one."""

    @abc.abstractmethod
    def forget_where(self, *, namespace: str | None = None, user_id: str | None = None, chat_id: str | None = None,
                     session_id: str | None = None) -> int:
        """Delete every memory matching the filters; returns how many.

        :raises ValueError: none of user, chat and session is given (a whole namespace is never
            deleted by accident).
        """

    @abc.abstractmethod
    def forget_user(self, user_id: str, namespaces: Collection[str] | None = None) -> tuple[int, int]:
        """Delete ``user_id``'s memories and the quarantined records known to be theirs, in
        ``namespaces`` (``None``: every one; empty: none), in one step. Returns
        ``(memories, quarantined records)`` deleted."""

    @abc.abstractmethod
    def compact(self) -> None:
        """Make deleted memories unrecoverable from what the store keeps (rewrite files, indexes).

        :raises LocalStoreError: reason ``locked`` when a reader kept old pages alive; the
            deletion itself is done.
        """

    @abc.abstractmethod
    def close(self) -> None:
        """Release the connection; the stored memories stay (for the in-memory backend: until the
        process exits)."""


class ArchiveBackend(abc.ABC):
    """What compactions removed: each message verbatim (secrets redacted), searchable, by owner.

    Each :meth:`record` call is one compaction of one session, owned by ``(namespace, user_id)``.
    Reads always go through a :class:`Scope` and return only what :meth:`Scope.sees`.
    """

    #: where the archive is, for messages (a file path for SQLite)
    path: Path
    retention_days: float
    max_megabytes: float

    @abc.abstractmethod
    def record(self, *, session_id: str, user_id: str, strategy: str, removed: Sequence[tuple[int, Message]],
               tokens_before: int = 0, tokens_after: int = 0, namespace: str = "") -> list[int]:
        """Archive one compaction's removed messages (``(position in the conversation, message)``),
        secrets redacted from every string in them; returns their ids, in order.

        Each message gets the next :attr:`Stored.seq` of its session. Afterwards compactions older
        than :attr:`retention_days` go (0: none), then the oldest ones while the archive is over
        :attr:`max_megabytes` (0: no bound) — never the one just recorded. Never raises: a backend
        that cannot store them keeps them somewhere it imports them from at its next write (and
        returns ``[]``); losing them is the last resort, logged as critical.
        """

    @abc.abstractmethod
    def search(self, text: str, scope: Scope, *, limit: int = 5) -> list[ArchiveHit]:
        """The best ``limit`` messages for ``text`` that ``scope`` sees; ``[]`` when ``text`` has no
        searchable term.

        What is searched is :func:`~hermes_ctx_plugins.storage.records.message_text`, and what is
        asked the phrases of :func:`~hermes_ctx_plugins.storage.archive_text.phrases`, both through
        :func:`~hermes_ctx_plugins.storage.records.searchable`. A phrase matches anywhere inside the
        text, ignoring case (``ECONNREF`` finds ``ECONNREFUSED``; SQLite folds ASCII letters only for
        short terms); any phrase is enough, ranked by BM25 over all of them (a text of n characters
        counts as n - 2 words, as a trigram index sees it), newest first on ties. With only short
        terms, every one must occur, newest first.
        """

    @abc.abstractmethod
    def get(self, ids: Sequence[int], scope: Scope) -> list[Stored]:
        """The messages with these ids that ``scope`` sees (others are skipped, like unknown ids),
        in archive order: by namespace, session, then :attr:`Stored.seq`."""

    @abc.abstractmethod
    def partners(self, stored: Stored, scope: Scope) -> list[Stored]:
        """The other half of ``stored``'s tool-call pairs, from its session and within ``scope``: the
        results of the calls it makes, or the call a result answers (matched by exact call id), by
        :attr:`Stored.seq`."""

    @abc.abstractmethod
    def purge(self, *, session_id: str | None = None, user_id: str | None = None,
              older_than_days: float | None = None, everything: bool = False,
              namespace: str | None = None) -> int:
        """Delete the compactions (and their messages) matching all given conditions; returns how
        many compactions. ``namespace`` narrows the others (``None``: every namespace).

        :raises ArchiveError: no condition and not ``everything``.
        """

    @abc.abstractmethod
    def forget_user(self, user_id: str, *, namespaces: Collection[str] | None = None) -> list[Forgotten]:
        """Remove everything the archive holds of ``user_id`` in ``namespaces`` (``None``: every
        namespace; a lone string is a caller's mistake: ``TypeError``), including what waits to be
        imported, so that no copy of their text remains in what the store keeps.

        Messages with an empty user id (archived before hermes told the host the session's user) go
        with the user when the user's own messages are in the same session; any others are kept
        and counted in ``detail``. Never raises for a store failure: the one :class:`Forgotten`
        returned says what was removed and, in ``error``, what could not be. Forgetting never
        creates an archive.
        """

    @abc.abstractmethod
    def stats(self) -> dict[str, Any]:
        """``path``, ``compactions``, ``messages``, ``sessions``, ``users`` (namespace and user
        pairs), ``namespaces``, ``oldest`` and ``newest`` (archive times, ``None`` when empty),
        ``bytes`` (:meth:`size_bytes`), ``spooled`` (compactions wait to be imported),
        ``retention_days`` and ``max_megabytes``."""

    @abc.abstractmethod
    def size_bytes(self) -> int:
        """What the archive takes, in bytes, as :attr:`max_megabytes` counts it."""

    @abc.abstractmethod
    def exists(self) -> bool:
        """Whether the archive was ever written (reading and forgetting never create one)."""

    @abc.abstractmethod
    def close(self) -> None:
        """Release the connection; what is archived stays."""

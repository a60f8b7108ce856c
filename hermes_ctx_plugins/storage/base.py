"""The interfaces of the stores the package owns: what every backend provides and promises.

:class:`MemoryBackend` is ctx-local's memory store, :class:`ArchiveBackend` the archive of what
compactions removed. A backend implements both (the packages ``storage/sqlite/`` and
``storage/inmemory/`` do); the docstrings below are the whole contract — over 500 lines because a
backend's author must find every promise in one place — and the backend contract suite
(:mod:`hermes_ctx_plugins.testing.storage_contract`) checks it. What a backend reuses rather than
rewrites: the values crossing the seam (:mod:`.records`), the words of a memory search (:mod:`.text`)
and of an archive search (:mod:`.archive_text`), ranking and snippets when it computes them itself
(:mod:`.ranking`), the archive's spool (:mod:`.spool`). What every method keeps:

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
  store: what one writes, the others read at once. A connection opened after another was closed
  finds what it left: a durable backend for good, the in-memory one until the process exits.

**Locations.** A store is opened at a location, a file path: ctx-local's ``path`` option (validated
as a file path: never an existing folder) or ``ctx_plugins.archive.path``. The package keeps files
beside it — ctx-local its write-behind queue in the folder ``<path>.queue/``, the archive its spool
``<path>.spool.jsonl`` (:func:`~hermes_ctx_plugins.storage.spool.spool_path`) with
``<path>.spool.importing`` and ``<path>.spool.jsonl.lock`` — so a backend must never make ``path``
itself a folder; any other name beginning with ``<path>`` beside it is the backend's own (SQLite's
``<path>-wal`` and ``<path>-shm``). A file backend keeps its data in ``path``. A backend whose data
lives elsewhere (a database server) creates no file at ``path`` and keys its data by the location —
e.g. a ``location`` column in each of its tables — so that, as for files, two locations are two
stores and one location is one store, whichever process opens it. It spells a location under
``$HERMES_HOME`` relative to it (PostgreSQL: ``home:ctx-local/memory.db``), so that the workers of a
fleet, each with its own ``$HERMES_HOME`` and the same configuration, share one store; any other
location by its absolute path. The files the package keeps beside the location stay local files
even then (each worker's queue and spool).

**Failures.** A backend maps every failure of the store as a whole onto
:class:`LocalStoreError` (its :attr:`~LocalStoreError.reason` says which, see there) or
:class:`ArchiveError`, and leaves an error caused by one record's content as it is (a
``ValueError``, a driver's integrity error). ctx-local's write-behind queue relies on the
difference: a :class:`LocalStoreError` is an outage — everything stays queued and is retried for as
long as it takes — while any other exception is the record's fault: it is retried a few times, then
quarantined. A driver's connection error that escapes untranslated therefore gets good records
quarantined during an outage.
"""

from __future__ import annotations

import abc
import time
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any, NamedTuple

from ..errors import HermesCtxError
from ..events import Forgotten, Message
from .records import ArchiveHit, ArchiveStats, Hit, Memory, MemoryStats, Quarantined, Record, Scope, Stored
from .spool import Entry


class LocalStoreError(HermesCtxError):
    """The memory store cannot be used right now; the message names it and what to do.

    :ivar path: the store's location (see *Locations* above)
    :ivar reason: one of these; a backend picks the first that fits what its store or driver reports:

        ``locked``
            Another connection holds the lock this call needs for longer than ``busy_timeout``
            (SQLite: busy / locked; PostgreSQL: lock or statement timeout, lock not available,
            deadlock, serialization failure), or :meth:`MemoryBackend.compact` could not finish for
            a reader. The one reason callers treat apart: ctx-local keeps the connection (the store
            works once the lock is released) and a memory tool tells the model to try again in a
            minute; the deletion before a ``compact`` stands.
        ``damaged``
            The store is corrupt or is not a ctx-local store (SQLite: not a database, malformed).
        ``full``
            No space left for the write (disk full; PostgreSQL: disk full, out of memory).
        ``read-only``
            The store or its folder cannot be written or created: permissions, a read-only file or
            system (PostgreSQL: insufficient privilege, read-only transaction or standby).
        ``unsupported``
            This runtime or store lacks what the backend needs: an old SQLite or one without FTS5,
            a store of a newer layout, a missing driver or server extension.
        ``unavailable``
            Anything else about the store as a whole (PostgreSQL: cannot connect, connection lost).

        For every reason but ``locked``, ctx-local closes the connection that failed and opens a
        new one at its next use (the store may be repaired or replaced meanwhile); recall is
        skipped and queued turns wait, whatever the reason.
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

    #: the location it was opened at (see *Locations* above)
    path: Path

    # -- writing --------------------------------------------------------------------------------------

    @abc.abstractmethod
    def write(self, records: Sequence[Record], *, segment: str = "", offset: int = 0) -> int:
        """Store ``records`` and, when ``segment`` is given, record that the queue has been applied
        up to ``offset`` of it; returns how many records were new.

        Idempotent by key: a record whose key is stored already (or came earlier in ``records``) is
        skipped and the stored one left as it was. Keys are one set for the whole store, across
        namespaces and users: a record under a key another owner's memory holds is skipped too
        (ctx-local makes a turn's key from its session id, number and texts, a fact's at random).

        All or nothing: if one record cannot be stored (``ValueError`` for a kind, visibility or
        key :meth:`Record.check` refuses), neither the batch nor the progress is written — so
        progress never runs ahead of what is stored, nor behind it. Texts are stored as given (the
        caller redacts).
        """

    @abc.abstractmethod
    def add(self, record: Record) -> Memory:
        """Store one record at once (no segment) and return it as stored; for a known key, the
        memory already stored under it (whoever's it is, as in :meth:`write`)."""

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
        them in a row). :attr:`Hit.relevance` is BM25 (k1 1.2, b 0.75) summed over the terms, as
        :mod:`~hermes_ctx_plugins.storage.ranking` defines it (FTS5's ``bm25()`` negated): positive,
        higher is better, comparable within one search only; its IDF counts every stored memory,
        whoever owns it (an IDF that would not be positive counts as 1e-6, as in FTS5). Ties come in
        no particular order. The hits' texts may be cut to
        :data:`~hermes_ctx_plugins.storage.records.CANDIDATE_CHARS`.

        A backend may bound the work of a search that matches very many of the owner's memories, as
        SQLite's does (:meth:`~hermes_ctx_plugins.storage.sqlite.memory.LocalStore.search`: past
        2,000 matches it ranks the newest, or those holding the question's rarest terms).
        """

    @abc.abstractmethod
    def get(self, ids: Iterable[int]) -> list[Memory]:
        """The stored memories with these ids, each once, in ascending id order whatever the order
        asked, whole texts (unknown ids are skipped; no scope: the caller's ids come from a scoped
        search or its own records)."""

    @abc.abstractmethod
    def memories(self, *, namespace: str | None = None, user_id: str | None = None, chat_id: str | None = None,
                 session_id: str | None = None) -> Iterator[Memory]:
        """Every stored memory matching the filters (``None``: any), in ascending id order — the order
        they were stored in, not by ``created_at`` (a record queued late may carry an earlier time):
        a new memory's id is greater than that of every memory stored at the time. Whole texts;
        streams (an export of millions must not be read at once)."""

    @abc.abstractmethod
    def scopes(self, namespace: str | None = None) -> list[tuple[str, str]]:
        """Every ``(user_id, chat_id)`` that has memories (in ``namespace``; ``None``: in any), once
        each, in no particular order."""

    def namespaces(self, *, user_id: str | None = None, chat_id: str | None = None,
                   session_id: str | None = None) -> dict[str, int]:
        """Every namespace holding memories of that user, chat and session (``None``: any), and how many. The
        backends answer it in one grouped query; this default reads :meth:`memories` through (a backend of a
        third party that has not caught up)."""
        found: dict[str, int] = {}
        for memory in self.memories(user_id=user_id, chat_id=chat_id, session_id=session_id):
            found[memory.namespace] = found.get(memory.namespace, 0) + 1
        return found

    @abc.abstractmethod
    def quarantined(self, namespace: str | None = None) -> list[Quarantined]:
        """Quarantined records, in the order quarantined: of ``namespace`` and those whose owner is
        unknown (``None``: all)."""

    @abc.abstractmethod
    def stats(self, namespace: str | None = None) -> MemoryStats:
        """What is stored in ``namespace`` (``None``: in every one) — every key of
        :class:`~hermes_ctx_plugins.storage.records.MemoryStats`, always, of the types it declares:
        ``turns``, ``facts``, ``scopes`` (distinct user/chat pairs), ``sessions`` (distinct session
        ids), ``quarantined`` (as :meth:`quarantined` lists them) and ``bytes``, all ``int``;
        ``oldest`` and ``newest`` (``created_at``), ``float`` or ``None`` when there are no memories.

        ``bytes`` is what the whole store takes — every namespace, whatever was asked: for a file
        backend the bytes of its files (SQLite: ``path`` and every file ``<path>*`` beside it — its
        WAL and shared-memory index — not the queue's folder); for a server database what its data
        of this location takes there, as the server measures it; for the in-memory backend the
        UTF-8 size of every memory's key and texts. It is shown to the owner, never compared across
        backends.
        """

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

    #: whether a write of a user forgotten since, made before the forget (another process's queue), is dropped when
    #: it arrives (a tombstone); without it such a write is stored, and forgetting must wait for the writers
    drops_late_writes: bool = False

    @abc.abstractmethod
    def forget_user(self, user_id: str, namespaces: Collection[str] | None = None) -> tuple[int, int]:
        """Delete ``user_id``'s memories and the quarantined records known to be theirs, in
        ``namespaces`` (``None``: every one; empty: none), in one step. Returns
        ``(memories, quarantined records)`` deleted.

        :raises TypeError: ``namespaces`` is a lone string (``"blue"`` is not the namespaces ``b``,
            ``l``, ``u``, ``e``), before anything is deleted — check it with
            :func:`~hermes_ctx_plugins.storage.records.namespaces_asked`.
        """

    # -- embeddings (ctx-local's optional dense recall) ----------------------------------------------
    #
    # One vector per memory at most, of one model (its ``model`` id names model and dimensions, so
    # two models' spaces never mix), kept beside the memory and deleted with it in the same
    # transaction (forgetting a memory or a user forgets its vector). A backend without these keeps
    # :attr:`dense` False and the defaults below, which refuse with reason ``unsupported``; ctx-local
    # then recalls lexically and says so once.

    #: whether this backend keeps embeddings (the four methods below)
    dense: bool = False

    def unembedded(self, model: str, *, keys: Sequence[str] | None = None, below: int | None = None,
                   limit: int = 16) -> list[Memory]:
        """Memories without a vector of ``model`` (none, or another model's), whole texts: those
        stored under ``keys`` (a caller's own records), else those with an id below ``below``
        (``None``: any), newest first; at most ``limit``. Any owner: the caller embeds each memory's
        own text and stores it under the memory's own id, so no vector crosses owners."""
        raise self._no_vectors()

    def put_vectors(self, model: str, vectors: Sequence[tuple[int, bytes]], *,
                    keys: Sequence[str] | None = None) -> int:
        """Store ``(memory id, vector)`` pairs of ``model`` — replacing another model's vector of that
        memory, never the same model's — in one transaction; a memory deleted meanwhile gets none.
        ``keys``: the memories' keys as they were read, one per pair: a vector is stored only while its
        id still holds that key (an id a deleted memory left may be given to the next one stored).
        ``b""`` marks a memory that cannot be embedded (so it is not tried again); it is never
        returned by :meth:`vectors`. Returns how many were stored."""
        raise self._no_vectors()

    def vectors(self, model: str, *, namespace: str, user_id: str, after: int = 0) -> list[Vector]:
        """The non-empty vectors of ``model`` of the memories of exactly ``namespace`` and ``user_id``
        (every chat: the caller applies its chat scope with :attr:`Vector.chat_id` and
        :attr:`Vector.visibility`), stored after position ``after`` (a :attr:`Vector.seq`), in
        :attr:`Vector.seq` order — what a cache of them needs to catch up. Positions grow with every
        vector stored; :meth:`vector_generation` changes whenever a vector is deleted or replaced,
        after which positions already read say nothing (read again from 0)."""
        raise self._no_vectors()

    def vector_generation(self) -> int:
        """A number that changes, in the same transaction, whenever a stored vector is deleted or
        replaced (a memory forgotten, a vector re-made), so a cache of :meth:`vectors` knows to start over."""
        raise self._no_vectors()

    def _no_vectors(self) -> LocalStoreError:
        return LocalStoreError(self.path, "unsupported", f"the {type(self).__name__} backend keeps no embeddings",
                               "ctx-local recalls lexically (set ctx_plugins.options.ctx-local.embedder to '' "
                               "to say so, or use the sqlite backend for dense recall)")

    def incarnation(self) -> str | None:
        """What names this store's making at its location: another text once it was made anew there (a schema
        dropped and created again, a file deleted), ``""`` while none is there, ``None`` from a backend that cannot
        tell. ``storage migrate`` trusts what it noted of a target only while it is the same one (a hostile-values
        pass: a target emptied since an earlier run was "verified", nothing copied). Asking creates no store."""
        return None

    @abc.abstractmethod
    def compact(self) -> None:
        """Make deleted memories unrecoverable from what the store keeps (rewrite files, indexes).

        :raises LocalStoreError: reason ``locked`` when a reader kept old pages alive; the
            deletion itself is done.
        """

    @abc.abstractmethod
    def close(self) -> None:
        """Release the connection (closing it again does nothing); the stored memories stay, for the
        next connection opened at the location (for the in-memory backend: until the process exits)."""


class Vector(NamedTuple):
    """One stored embedding, as :meth:`MemoryBackend.vectors` reads it."""

    #: its position: grows with every vector stored
    seq: int
    memory_id: int
    #: the memory's chat and visibility (the caller's chat scope)
    chat_id: str
    visibility: str
    #: float32 values, little-endian
    vector: bytes


class ArchiveVector(NamedTuple):
    """One stored embedding of an archived message, as :meth:`ArchiveBackend.vectors` reads it."""

    #: its position: grows with every vector stored
    seq: int
    message_id: int
    #: float32 values, little-endian
    vector: bytes


def purge_condition(*, session_id: str | None, user_id: str | None, namespace: str | None,
                    older_than_days: float | None, everything: bool, mark: str,
                    written: Callable[[str], str]) -> tuple[str, list[Any]]:
    """The SQL condition on ``compactions`` of :meth:`ArchiveBackend.purge`'s arguments, for a backend
    that keeps them in a table: its text (placeholders ``mark``, ids as ``written``) and arguments.

    :raises ArchiveError: no condition and not ``everything``.
    """
    where: list[str] = []
    args: list[Any] = []
    for column, value in (("session_id", session_id), ("user_id", user_id), ("namespace", namespace)):
        if value is not None:
            where.append(f"{column} = {mark}")
            args.append(written(value))
    if older_than_days is not None:
        where.append(f"created < {mark}")
        args.append(time.time() - older_than_days * 86400)
    if not where and not everything:
        raise ArchiveError("purge needs a session, a user, an age or everything=True")
    return " AND ".join(where) or "TRUE", args


class ArchiveBackend(abc.ABC):
    """What compactions removed: each message verbatim (secrets redacted), searchable, by owner.

    Each :meth:`record` call is one compaction of one session, owned by ``(namespace, user_id)``.
    Reads always go through a :class:`Scope` and return only what :meth:`Scope.sees`.
    """

    #: the location it was opened at (see *Locations* above)
    path: Path
    retention_days: float
    max_megabytes: float

    @abc.abstractmethod
    def record(self, *, session_id: str, user_id: str, strategy: str, removed: Sequence[tuple[int, Message]],
               tokens_before: int = 0, tokens_after: int = 0, namespace: str = "",
               cited: Callable[[int], bool] | None = None, owners: Sequence[str] | None = None) -> list[int]:
        """Archive one compaction's removed messages (``(position in the conversation, message)``),
        secrets redacted from every string in them; returns their ids, in order.

        ``owners``: whose turn each message is, in a session several users speak in (a chat platform's shared
        thread): each message is then archived as its own speaker's — read by their scope, gone with their
        :meth:`forget_user` — while the compaction is ``user_id``'s (``None``: every message is ``user_id``'s).
        :raises ValueError: ``owners`` has not one owner per message.

        The session's latest compaction made again (its messages opening ``removed`` in order: a process killed
        before hermes saved the compacted session compacts the same history again) is not stored again: its ids
        are reused (:func:`~hermes_ctx_plugins.storage.spool.repeated`) — unless ``cited`` says the conversation
        compacted now cites that compaction's archive ids (its index is in it: a later compaction of a
        conversation that repeats itself).

        Each message gets the next :attr:`Stored.seq` of its session. Afterwards compactions older
        than :attr:`retention_days` go (0: none), then the oldest ones while the archive is over
        :attr:`max_megabytes` (0: no bound) — never the one just recorded.

        Never raises. Every backend whose store can refuse a write (any but the in-memory one)
        records through :meth:`Spool.deliver <hermes_ctx_plugins.storage.spool.Spool.deliver>` with
        a :class:`~hermes_ctx_plugins.storage.spool.Spool` at
        :func:`~hermes_ctx_plugins.storage.spool.spool_path` ``(path)``: what the spool holds is
        imported first, and a compaction the store refuses is spooled (``[]`` returned) and
        imported at the next write that works; only if the spool cannot be written either is it
        lost, logged as critical. Its :meth:`forget_user` and :meth:`stats` cover the spool too.
        """

    @abc.abstractmethod
    def compactions(self) -> Iterator[Entry]:
        """Every compaction archived here (not those waiting in the spool), oldest first, each as
        :func:`~hermes_ctx_plugins.storage.spool.make_entry` made it: owner, strategy, tokens,
        ``created`` and each removed message with its position, in stored form — what
        :meth:`restore` takes, to copy an archive into another backend (``hermes-ctx storage
        migrate``). Streams; sees every namespace.

        :raises ArchiveError: the store cannot be read.
        """

    @abc.abstractmethod
    def restore(self, entry: Entry) -> list[int]:
        """Archive a compaction :meth:`compactions` gave, as it was: ``created`` kept, the messages
        not redacted again (they were when first recorded), each given the next :attr:`Stored.seq`
        of its session; returns their ids, in order. Nothing goes for :attr:`retention_days` or
        :attr:`max_megabytes` here (the next :meth:`record` applies them), and nothing is spooled.

        :raises ArchiveError: the store cannot take it now.
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
        counts as n - 2 words, as a trigram index sees it), newest first on ties: as
        :mod:`~hermes_ctx_plugins.storage.ranking` defines it, whose :func:`~.ranking.snippet` a
        backend without FTS5 uses for :attr:`ArchiveHit.snippet` (every match marked ``«…»``). With
        only short terms, every one must occur, newest first, the snippet the text's first
        :data:`~.ranking.LEADING_CHARS` characters.
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
        namespace), including what waits to be imported, so that no copy of their text remains in
        what the store keeps. A lone string as ``namespaces`` is a caller's mistake: ``TypeError``
        before anything is removed (:class:`~hermes_ctx_plugins.storage.records.ForgetScope` and
        :func:`~hermes_ctx_plugins.storage.records.namespaces_asked` check it).

        A compaction holding any message of the user (a session several users speak in, see :meth:`record`)
        goes whole: the others' turns in it answer or quote theirs. Messages with an empty user id (the
        anonymous user's; before 0.2, also what a gateway archived before hermes named the session's user) go
        with the user when the user's own messages are in the same session (forgetting errs toward removing);
        any others are kept
        and counted in ``detail``. Never raises for a store failure: the one :class:`Forgotten`
        returned says what was removed and, in ``error``, what could not be. Forgetting never
        creates an archive.
        """

    def import_spooled(self, *, wait: bool = True) -> int:
        """Import what the spool holds now, not waiting for the next :meth:`record` (a process that started, a
        search: a compaction spooled in an outage was out of every worker's reach until this one compacted
        again); how many compactions. Never raises: what the store refuses stays spooled. 0 without a spool.
        ``wait`` False (a search): nothing while another process imports the spool, and about a second of it at
        most (the rest at the next import)."""
        return 0

    @property
    def spool_imports(self) -> int:
        """How many spooled compactions (another process's or host's, maybe) this store has imported so
        far: their messages were archived by :meth:`record` without being among the ids it returned.
        0 for a backend without a spool."""
        return 0

    @abc.abstractmethod
    def stats(self) -> ArchiveStats:
        """Every key of :class:`~hermes_ctx_plugins.storage.records.ArchiveStats`, always, of the
        types it declares: ``path`` (``str``); ``compactions``, ``messages``, ``sessions`` (distinct
        namespace/session pairs), ``users`` (distinct namespace/user pairs), ``namespaces``,
        ``bytes`` (:meth:`size_bytes`) and ``spooled`` (compactions waiting in the spool), all
        ``int``; ``spool`` (the spool file, ``None`` for a backend without one); ``oldest`` and
        ``newest`` (when the first and last message still archived were archived, ``float`` or
        ``None`` when empty); ``retention_days`` and ``max_megabytes`` as configured."""

    @abc.abstractmethod
    def size_bytes(self) -> int:
        """What the archive's data takes, in bytes — what :attr:`max_megabytes` bounds, so it must
        fall as soon as compactions are deleted (or the bound would delete all but the newest).
        SQLite: the pages of the database file in use (the file less its free pages; not the WAL,
        not the spool). The in-memory backend: the UTF-8 size of each message's JSON and searchable
        text. A server database whose files do not shrink at a delete counts its live rows of this
        location (e.g. the byte length of each message's stored columns), never its tables' size
        on disk, which falls only after a vacuum."""

    # -- embeddings (the archive's optional hybrid search) ----------------------------------------
    #
    # As for memories: one vector per message at most, of one model (``model`` names model and
    # dimensions), deleted with its message in the same transaction by every path that deletes
    # messages (a purge by age, size, session or user, ``forget_user``). A backend without these keeps
    # :attr:`dense` False and the defaults below, which raise :class:`ArchiveError`; ``ctx_search``
    # then stays lexical and says so once.

    #: whether this backend keeps embeddings (the four methods below)
    dense: bool = False

    def unembedded(self, model: str, *, keys: Sequence[int] | None = None, below: int | None = None,
                   limit: int = 16) -> list[Stored]:
        """Archived messages without a vector of ``model`` (none, or another model's), whole: those
        with the ids ``keys`` (what the caller just recorded), else those with an id below ``below``
        (``None``: any), newest first; at most ``limit``. Any owner, no scope: the caller embeds each
        message's own text and stores it under the message's own id, so no vector crosses owners."""
        raise self._no_vectors()

    def put_vectors(self, model: str, vectors: Sequence[tuple[int, bytes]]) -> int:
        """Store ``(message id, vector)`` pairs of ``model`` — replacing another model's vector of that
        message — in one transaction; a message deleted meanwhile gets none. ``b""`` marks a message
        that cannot be embedded (not tried again, never returned by :meth:`vectors`). Returns how many
        were stored."""
        raise self._no_vectors()

    def vectors(self, model: str, scope: Scope, *, after: int = 0) -> list[ArchiveVector]:
        """The non-empty vectors of ``model`` of exactly the messages ``scope`` sees (as :meth:`get`
        and :meth:`search` see them), stored after position ``after`` (an :attr:`ArchiveVector.seq`),
        in :attr:`ArchiveVector.seq` order — what a cache of one scope's vectors needs to catch up.
        Positions grow with every vector stored, in the order they become visible;
        :meth:`vector_generation` changes whenever a vector is deleted or replaced, after which
        positions already read say nothing (read again from 0)."""
        raise self._no_vectors()

    def vector_generation(self) -> int:
        """A number that changes, in the same transaction, whenever a stored vector is deleted or
        replaced (a message purged or forgotten, a vector re-made), so a cache of :meth:`vectors`
        knows to start over."""
        raise self._no_vectors()

    def _no_vectors(self) -> ArchiveError:
        return ArchiveError(f"the {type(self).__name__} archive backend keeps no embeddings; ctx_search stays "
                            "lexical (set ctx_plugins.archive.embedder to '' to say so)")

    def incarnation(self) -> str | None:
        """What names this store's making at its location: another text once it was made anew there (a schema
        dropped and created again, a file deleted), ``""`` while none is there, ``None`` from a backend that cannot
        tell. ``storage migrate`` trusts what it noted of a target only while it is the same one (a hostile-values
        pass: a target emptied since an earlier run was "verified", nothing copied). Asking creates no store."""
        return None

    @abc.abstractmethod
    def exists(self) -> bool:
        """Whether an archive was created at this location — what a caller asks before reading one
        it must not create (``hermes-ctx archive`` says "no archive yet" instead). One is created
        by the first :meth:`record` (a backend may create an empty one when another method first
        connects, as SQLite does), and stays once created: purging every compaction leaves an
        empty archive that exists. Asking creates nothing; neither does :meth:`forget_user`."""

    @abc.abstractmethod
    def close(self) -> None:
        """Release the connection (closing it again does nothing); what is archived stays, for the
        next connection opened at the location (for the in-memory backend: until the process exits)."""


def side_files_advice(names: list[str]) -> str:
    """What to do about a store's ``-wal`` / ``-shm`` (``names``) that this user cannot write (another user's process
    opened the store): its ``-wal`` may hold writes not in the file yet, so removing it loses them (a review: the
    advice to remove them threw away a turn and a compaction)."""
    them = " and ".join(names)
    return (f"{them} beside it cannot be written by this user (another user's process opened it): let that user open "
            f"the store once with no process holding it (any hermes-ctx memory or archive command does: it folds the "
            f"-wal in and removes {'them' if len(names) > 1 else 'it'}), or give {'them' if len(names) > 1 else 'it'} "
            "to this user (chown); removing a -wal that is not empty loses the writes it holds")


def writable_file(path: Path) -> bool | None:
    """Whether this user can write the file at ``path``; ``None`` when there is no file there (or its folder cannot be
    entered: opening it says why). A store's read commands read one they cannot write without writing anything."""
    import os

    try:
        return os.access(path, os.W_OK) if path.is_file() else None
    except OSError:
        return None


def read_only_failure(exc: BaseException) -> bool:
    """Whether a file store's failure ``exc`` (SQLite's, or the OS's) is that this user cannot write the file or its
    folder (a copy: a backup, another user's home), which a store opened to read only need not."""
    text = (str(exc) or type(exc).__name__).lower()
    return "readonly" in text or "read-only" in text or "permission" in text or "unable to open" in text


def archive_unusable(path: Path, exc: BaseException) -> str:
    """Why the archive at ``path`` cannot be used, and what to do: a file this user may not write is not damaged
    (moving it away, as for a damaged one, left a user's messages in a file the operator took for purged: a newcomer
    walk)."""
    detail = str(exc) or type(exc).__name__
    text = detail.lower()
    if read_only_failure(exc):
        return (f"the archive {path} cannot be written by this user ({detail}); nothing in it was changed: check "
                "that the file and its folder are writable (run the command as the user hermes runs as)")
    if "full" in text:
        return f"the archive {path} cannot be written: the disk is full ({detail}); free some space"
    return (f"the archive {path} is not usable ({detail}); if it is damaged, repair it with `sqlite3 <file> "
            ".recover`, or move it away to start a new one (its messages stay in the file moved away)")

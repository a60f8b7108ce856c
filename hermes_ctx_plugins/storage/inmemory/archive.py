"""The archive in this process: the in-memory implementation of
:class:`~hermes_ctx_plugins.storage.base.ArchiveBackend`.

A search finds each phrase of :func:`~hermes_ctx_plugins.storage.archive_text.phrases` as a substring, case
folded, and ranks and quotes as :mod:`~hermes_ctx_plugins.storage.ranking` defines (BM25 as SQLite's trigram
index computes it). Nothing here can fail to be stored, so it needs no spool. ``bytes`` is the UTF-8 size of
each message's JSON and searchable text.
"""

from __future__ import annotations

import itertools
import json
import math
import threading
import time
from collections.abc import Callable, Collection, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ...events import Forgotten, Message
from ...scope import from_stored, to_stored
from .. import archive_text
from ..base import ArchiveBackend, ArchiveError, ArchiveVector
from ..ranking import LEADING_CHARS, bm25, folded, snippet, substring_count, trigram_length
from ..records import (
    ArchiveHit,
    ArchiveStats,
    ForgetScope,
    Scope,
    Stored,
    message_text,
    pairs_with,
    searchable,
)
from ..spool import Entry, make_entry, owners_of, repeated, tail_of
from .shared import Shared, utf8_size


@dataclass
class _Archived:
    stored: Stored
    created: float
    #: :func:`searchable` text, and it :func:`~hermes_ctx_plugins.storage.ranking.folded` for matching
    text: str
    folded: str
    size: int


@dataclass
class ArchiveData:
    """The archive of one location, shared by every store opened there."""

    lock: threading.RLock = field(default_factory=threading.RLock)
    messages: dict[int, _Archived] = field(default_factory=dict)
    #: compaction id → its owner (namespace, session, user) and when it was archived
    compactions: dict[int, tuple[str, str, str, float]] = field(default_factory=dict)
    #: compaction id → what :meth:`InMemoryArchive.compactions` gives back
    entries: dict[int, Entry] = field(default_factory=dict)
    ids: Iterator[int] = field(default_factory=lambda: itertools.count(1))
    compaction_ids: Iterator[int] = field(default_factory=lambda: itertools.count(1))
    #: whether a compaction was ever recorded here (what :meth:`InMemoryArchive.exists` answers)
    written: bool = False
    #: embeddings by message id: (position, model, float32 bytes); see ArchiveBackend.vectors
    vectors: dict[int, tuple[int, str, bytes]] = field(default_factory=dict)
    vector_seq: Iterator[int] = field(default_factory=lambda: itertools.count(1))
    generation: int = 0


class InMemoryArchive(ArchiveBackend):
    """The archive of one location, in this process."""

    def __init__(self, path: Path, *, retention_days: float = 30.0, max_megabytes: float = 256.0) -> None:
        self.path = path
        self.retention_days = retention_days
        self.max_megabytes = max_megabytes
        self._data = Shared.at(path, ArchiveData)

    def close(self) -> None:
        """Nothing to release: the archive stays until the process exits."""

    def exists(self) -> bool:
        with self._data.lock:
            return self._data.written

    def record(self, *, session_id: str, user_id: str, strategy: str, removed: Sequence[tuple[int, Message]],
               tokens_before: int = 0, tokens_after: int = 0, namespace: str = "",
               cited: Callable[[int], bool] | None = None, owners: Sequence[str] | None = None) -> list[int]:
        return self._insert(make_entry(namespace=namespace, session_id=session_id, user_id=user_id,
                                       strategy=strategy, removed=removed, tokens_before=tokens_before,
                                       tokens_after=tokens_after, owners=owners), limits=True, cited=cited)

    def restore(self, entry: Entry) -> list[int]:
        return self._insert(entry, limits=False, once=False)

    def compactions(self) -> Iterator[Entry]:
        with self._data.lock:
            entries = [self._data.entries[c] for c in sorted(self._data.entries)]
        for entry in entries:  # copies: the caller cannot change what is archived
            yield {**entry, "removed": [list(item) for item in entry["removed"]],
                   **({"owners": list(entry["owners"])} if "owners" in entry else {})}

    def _insert(self, entry: Entry, *, limits: bool, once: bool = True,
                cited: Callable[[int], bool] | None = None) -> list[int]:
        data = self._data
        namespace, session_id, user_id = (from_stored(entry[key]) for key in ("namespace", "session_id", "user_id"))
        created = entry["created"]
        with data.lock:
            latest = max((c for c, owner in data.compactions.items() if owner[:3] == (namespace, session_id, user_id)),
                         default=None)
            again = sorted((a.stored.seq, a.stored.id) for a in data.messages.values()
                           if a.stored.compaction_id == latest) if latest is not None else []
            if again and cited is not None and cited(again[0][1]):
                again = []  # the conversation cites that compaction: a later one, which repeats its messages
            previous = data.entries[latest]["removed"] if latest is not None and again else []
            kept = repeated([item[1] for item in previous], entry["removed"]) if once and len(previous) == len(
                again) else 0  # not once: a restore copies what it is given
            if kept and kept == len(entry["removed"]):
                return [id_ for _, id_ in again]  # the same compaction again: nothing new to store
            reused = [id_ for _, id_ in again[:kept]]
            entry = tail_of(entry, kept)
            speakers = [from_stored(owner) for owner in owners_of(entry)]
            data.written = True
            compaction = next(data.compaction_ids)
            data.compactions[compaction] = (namespace, session_id, user_id, created)
            data.entries[compaction] = entry
            last = max((a.stored.seq for a in data.messages.values()
                        if (a.stored.namespace, a.stored.session_id) == (namespace, session_id)), default=0)
            ids = reused
            for seq, (_, text), speaker in zip(itertools.count(last + 1), entry["removed"], speakers):
                encoded = from_stored(text)
                message = json.loads(encoded)  # a copy the caller cannot change, as a store's would be
                text = searchable(message_text(message))
                stored = Stored(next(data.ids), session_id, speaker, namespace, compaction, seq,
                                str(message.get("role") or ""), message, created)
                data.messages[stored.id] = _Archived(stored, created, text, folded(text), utf8_size(encoded, text))
                ids.append(stored.id)
            if limits:
                self._enforce_limits(compaction)
        return ids

    def _enforce_limits(self, newest: int) -> None:
        if self.retention_days:
            self.purge(older_than_days=self.retention_days)
        data = self._data
        while self.max_megabytes and self.size_bytes() > self.max_megabytes * 1_000_000:
            # never the newest: what was just archived stays, even alone over the bound
            older = sorted((created, c) for c, (*_, created) in data.compactions.items() if c != newest)
            if not older:
                break
            self._delete_compactions({older[0][1]})

    def _delete_compactions(self, chosen: Collection[int]) -> int:
        """Delete these compactions and their messages; returns how many messages went."""
        data = self._data
        gone = [i for i, archived in data.messages.items() if archived.stored.compaction_id in chosen]
        for i in gone:
            del data.messages[i]
            if data.vectors.pop(i, None) is not None:  # its vector goes with it
                data.generation += 1
        for compaction in chosen:
            data.compactions.pop(compaction, None)
            data.entries.pop(compaction, None)
        return len(gone)

    def size_bytes(self) -> int:
        with self._data.lock:
            return (sum(archived.size for archived in self._data.messages.values())
                    + sum(len(vector) for _, _, vector in self._data.vectors.values()))

    def purge(self, *, session_id: str | None = None, user_id: str | None = None,
              older_than_days: float | None = None, everything: bool = False,
              namespace: str | None = None) -> int:
        if session_id is None and user_id is None and namespace is None and older_than_days is None \
                and not everything:
            raise ArchiveError("purge needs a session, a user, an age or everything=True")
        before = time.time() - older_than_days * 86400 if older_than_days is not None else math.inf
        wanted = (namespace, session_id, user_id)
        with self._data.lock:
            chosen = [c for c, (*owner, created) in self._data.compactions.items() if created < before
                      and all(want is None or want == have for want, have in zip(wanted, owner, strict=True))]
            self._delete_compactions(chosen)
        return len(chosen)

    def forget_user(self, user_id: str, *, namespaces: Collection[str] | None = None) -> list[Forgotten]:
        owner = ForgetScope.of(user_id, namespaces)
        data = self._data
        with data.lock:
            owner.sessions = {(a.stored.namespace, a.stored.session_id) for a in data.messages.values()
                              if owner.spoke_in(a.stored.namespace, a.stored.user_id)}
            owner.sessions |= {(ns, session) for ns, session, user, _ in data.compactions.values()
                               if owner.spoke_in(ns, user)}
            holding = {a.stored.compaction_id for a in data.messages.values()  # a shared session's: see record
                       if owner.owns(a.stored.namespace, a.stored.session_id, a.stored.user_id)}
            removed = self._delete_compactions([c for c, (ns, session, user, _) in data.compactions.items()
                                                if owner.owns(ns, session, user) or c in holding])
            kept = sum(1 for a in data.messages.values() if a.stored.user_id == "" and owner.user
                       and (owner.spaces is None or a.stored.namespace in owner.spaces))
        return [Forgotten(store=f"archive (in memory) {self.path}", removed=removed,
                          detail=ForgetScope.kept_note(kept))]

    # -- embeddings -------------------------------------------------------------------------
    dense = True

    def unembedded(self, model: str, *, keys: Sequence[int] | None = None, below: int | None = None,
                   limit: int = 16) -> list[Stored]:
        data = self._data
        with data.lock:
            if keys is not None:
                ids = sorted({int(key) for key in keys if key in data.messages}, reverse=True)
            else:
                ids = sorted((i for i in data.messages if below is None or i < below), reverse=True)
            lacking = (i for i in ids if data.vectors.get(i, (0, "", b""))[1] != model)
            return [data.messages[i].stored for i in itertools.islice(lacking, limit)]

    def put_vectors(self, model: str, vectors: Sequence[tuple[int, bytes]]) -> int:
        data = self._data
        with data.lock:
            stored = 0
            for ident, vector in vectors:
                if ident in data.messages:
                    if ident in data.vectors:
                        if data.vectors[ident][1] == model:  # the same model's: left alone
                            continue
                        data.generation += 1
                    data.vectors[ident] = (next(data.vector_seq), model, bytes(vector))
                    stored += 1
            return stored

    def vectors(self, model: str, scope: Scope, *, after: int = 0) -> list[ArchiveVector]:
        data = self._data
        with data.lock:
            found = [ArchiveVector(seq, ident, vector) for ident, (seq, stored_model, vector) in data.vectors.items()
                     if seq > after and stored_model == model and vector
                     and scope.sees(*self._owner(data.messages[ident].stored))]
        return sorted(found)

    @staticmethod
    def _owner(stored: Stored) -> tuple[str, str, str]:
        return stored.namespace, stored.session_id, stored.user_id

    def vector_generation(self) -> int:
        with self._data.lock:
            return self._data.generation

    def _visible(self, scope: Scope) -> list[_Archived]:
        with self._data.lock:
            return [a for a in self._data.messages.values()
                    if scope.sees(a.stored.namespace, a.stored.session_id, a.stored.user_id)]

    def search(self, text: str, scope: Scope, *, limit: int = 5) -> list[ArchiveHit]:
        phrases, short = archive_text.phrases(searchable(text))
        if not phrases and not short:
            return []
        visible = self._visible(scope)
        if phrases:
            found = self._ranked([folded(p) for p in phrases], visible)
        else:  # only terms too short for an index of three-character pieces: every one, newest first
            wanted = [folded(s) for s in short]
            found = [(a, a.text[:LEADING_CHARS], 0.0) for a in sorted(visible, key=lambda a: -a.stored.id)
                     if all(s in a.folded for s in wanted)]
        return [ArchiveHit(a.stored.id, a.stored.session_id, a.stored.compaction_id, a.stored.role, a.created,
                           from_stored(shown), a.stored.namespace, relevance) for a, shown, relevance in found[:limit]]

    def _ranked(self, phrases: list[str], visible: list[_Archived]) -> list[tuple[_Archived, str, float]]:
        """The visible messages matching a phrase, best first by BM25 over every message (FTS5's
        statistics), with their snippets."""
        with self._data.lock:
            everything = list(self._data.messages.values())
        if not everything:  # nothing archived yet (a search before the first compaction)
            return []
        lengths = {id(a): trigram_length(a.folded) for a in everything}
        average = sum(lengths.values()) / len(everything)
        counts = [sum(1 for a in everything if phrase in a.folded) for phrase in phrases]
        scored = []
        for archived in visible:
            frequencies = [substring_count(archived.folded, phrase) for phrase in phrases]
            if any(frequencies):
                score = bm25(frequencies, counts, len(everything), lengths[id(archived)], average)
                scored.append((-score, -archived.stored.id, archived))
        scored.sort(key=lambda item: item[:2])
        return [(archived, snippet(archived.text, phrases), -score) for score, _, archived in scored]

    @staticmethod
    def _order(archived: _Archived) -> tuple[str, str, int]:
        """Archive order: by namespace, session (compared as a store compares their stored form), seq."""
        stored = archived.stored
        return to_stored(stored.namespace), to_stored(stored.session_id), stored.seq

    def get(self, ids: Sequence[int], scope: Scope) -> list[Stored]:
        wanted = set(ids)
        return [a.stored for a in sorted((a for a in self._visible(scope) if a.stored.id in wanted), key=self._order)]

    def partners(self, stored: Stored, scope: Scope) -> list[Stored]:
        message = stored.message
        if not message.get("tool_calls") and not message.get("tool_call_id"):
            return []
        same = [a for a in self._visible(scope) if pairs_with(message, a.stored.message)
                and (a.stored.namespace, a.stored.session_id) == (stored.namespace, stored.session_id)]
        return [a.stored for a in sorted(same, key=self._order)]

    def stats(self) -> ArchiveStats:
        data = self._data
        with data.lock:
            owners = list(data.compactions.values())
            created = [a.created for a in data.messages.values()]
            messages = len(data.messages)
        return {"path": str(self.path), "compactions": len(owners), "messages": messages,
                "sessions": len({(ns, session) for ns, session, _, _ in owners}),
                "users": len({(ns, user) for ns, _, user, _ in owners}),
                "namespaces": len({ns for ns, *_ in owners}), "oldest": min(created, default=None),
                "newest": max(created, default=None), "bytes": self.size_bytes(), "spooled": 0, "spool": None,
                "retention_days": self.retention_days, "max_megabytes": self.max_megabytes}

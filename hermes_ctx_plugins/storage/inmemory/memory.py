"""ctx-local's memories in this process: the in-memory implementation of
:class:`~hermes_ctx_plugins.storage.base.MemoryBackend`.

A search cuts each memory into the words :func:`~hermes_ctx_plugins.storage.text.tokens`
makes (FTS5's), and ranks as :mod:`~hermes_ctx_plugins.storage.ranking` defines (BM25 with FTS5's
statistics: every memory counts, whoever owns it). ``bytes`` in :meth:`InMemoryMemory.stats` is the
UTF-8 size of every memory's key and texts.
"""

from __future__ import annotations

import dataclasses
import itertools
import threading
import time
from collections import Counter
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from .. import text as query
from ..base import MemoryBackend, Vector
from ..ranking import bm25, memory_length, phrase_count
from ..records import CANDIDATE_CHARS, Hit, Memory, MemoryStats, Quarantined, Record, namespaces_asked, owner_of
from .shared import Shared, utf8_size


@dataclass
class _Indexed:
    memory: Memory
    #: the searchable words of its body, in order, and how often each occurs
    words: tuple[str, ...]
    counts: Counter[str]


@dataclass
class MemoryData:
    """The memories of one location, shared by every store opened there."""

    lock: threading.RLock = field(default_factory=threading.RLock)
    #: by id, in id order: ids only grow and a row is never put back, so insertion order is id order
    rows: dict[int, _Indexed] = field(default_factory=dict)
    keys: dict[str, int] = field(default_factory=dict)
    progress: dict[str, int] = field(default_factory=dict)
    quarantine: list[Quarantined] = field(default_factory=list)
    ids: Iterator[int] = field(default_factory=lambda: itertools.count(1))
    quarantine_ids: Iterator[int] = field(default_factory=lambda: itertools.count(1))
    #: embeddings by memory id: (position, model, float32 bytes); see MemoryBackend.vectors
    vectors: dict[int, tuple[int, str, bytes]] = field(default_factory=dict)
    vector_seq: Iterator[int] = field(default_factory=lambda: itertools.count(1))
    generation: int = 0


def _occurrences(row: _Indexed, phrase: tuple[str, ...]) -> int:
    return row.counts[phrase[0]] if len(phrase) == 1 else phrase_count(row.words, phrase)


def _matches(memory: Memory, namespace: str | None, user_id: str | None, chat_id: str | None,
             session_id: str | None) -> bool:
    return ((namespace is None or memory.namespace == namespace) and (user_id is None or memory.user_id == user_id)
            and (chat_id is None or memory.chat_id == chat_id)
            and (session_id is None or memory.session_id == session_id))


def _cut(memory: Memory) -> Memory:
    return dataclasses.replace(memory, user_text=memory.user_text[:CANDIDATE_CHARS],
                               assistant_text=memory.assistant_text[:CANDIDATE_CHARS],
                               fact_text=memory.fact_text[:CANDIDATE_CHARS])


class InMemoryMemory(MemoryBackend):
    """ctx-local's memories of one location, in this process."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._data = Shared.at(path, MemoryData)

    def close(self) -> None:
        """Nothing to release: the memories stay until the process exits."""

    def write(self, records: Sequence[Record], *, segment: str = "", offset: int = 0) -> int:
        for record in records:
            record.check()
        data = self._data
        with data.lock:
            new = 0
            for record in records:
                if record.key not in data.keys:
                    self._insert(record)
                    new += 1
            if segment:
                data.progress[segment] = offset
            return new

    def _insert(self, record: Record) -> None:
        data = self._data
        memory = Memory(next(data.ids), record.key, record.kind, record.namespace, record.user_id, record.chat_id,
                        record.session_id, record.visibility, record.user_text, record.assistant_text,
                        record.fact_text, record.source, float(record.created_at))
        words = tuple(query.tokens(query.index_text(record.body)))
        data.rows[memory.id] = _Indexed(memory, words, Counter(words))
        data.keys[record.key] = memory.id

    def add(self, record: Record) -> Memory:
        with self._data.lock:
            self.write([record])
            return self._data.rows[self._data.keys[record.key]].memory

    def quarantine(self, segment: str, offset: int, raw: str, error: str, attempts: int) -> None:
        owner = owner_of(raw)
        data = self._data
        with data.lock:
            data.quarantine.append(Quarantined(next(data.quarantine_ids), segment, offset, raw, error, attempts,
                                               time.time(), *(owner or (None, None))))
            data.progress[segment] = offset

    def progress(self) -> dict[str, int]:
        with self._data.lock:
            return dict(self._data.progress)

    def drop_progress(self, segments: Iterable[str]) -> None:
        with self._data.lock:
            for segment in segments:
                self._data.progress.pop(segment, None)

    def search(self, terms: Sequence[str], *, namespace: str, user_id: str, chat_id: str,
               share_across_chats: bool, limit: int) -> list[Hit]:
        phrases = [phrase for phrase in (tuple(query.tokens(term)) for term in terms) if phrase]
        data = self._data
        with data.lock:
            rows = list(data.rows.values())
            if not phrases or not rows:
                return []
            lengths = {row.memory.id: memory_length(len(row.words), row.memory.visibility) for row in rows}
            average = sum(lengths.values()) / len(rows)
            # FTS5 counts a phrase's documents over the whole table, whoever owns them
            counts = [sum(1 for row in rows if _occurrences(row, phrase)) for phrase in phrases]
            hits = []
            for row in rows:
                memory = row.memory
                if (memory.namespace != namespace or memory.user_id != user_id or
                        not (share_across_chats or memory.chat_id == chat_id or memory.visibility == "user")):
                    continue
                frequencies = [_occurrences(row, phrase) for phrase in phrases]
                if any(frequencies):
                    hits.append(Hit(_cut(memory), bm25(frequencies, counts, len(rows), lengths[memory.id], average)))
        hits.sort(key=lambda hit: (-hit.relevance, hit.memory.id))
        return hits[:limit]

    def get(self, ids: Iterable[int]) -> list[Memory]:
        with self._data.lock:
            rows = self._data.rows
            return [rows[i].memory for i in sorted({int(i) for i in ids}) if i in rows]

    def _select(self, keep: Callable[[Memory], bool]) -> list[Memory]:
        with self._data.lock:
            return [row.memory for row in self._data.rows.values() if keep(row.memory)]

    def memories(self, *, namespace: str | None = None, user_id: str | None = None, chat_id: str | None = None,
                 session_id: str | None = None) -> Iterator[Memory]:
        yield from self._select(lambda m: _matches(m, namespace, user_id, chat_id, session_id))

    def scopes(self, namespace: str | None = None) -> list[tuple[str, str]]:
        return list({(m.user_id, m.chat_id) for m in self._select(lambda m: _matches(m, namespace, None, None, None))})

    def namespaces(self, *, user_id: str | None = None, chat_id: str | None = None,
                   session_id: str | None = None) -> dict[str, int]:
        return dict(Counter(m.namespace for m in self._select(lambda m: _matches(m, None, user_id, chat_id,
                                                                                    session_id))))

    def quarantined(self, namespace: str | None = None) -> list[Quarantined]:
        with self._data.lock:
            return [q for q in self._data.quarantine if namespace is None or q.namespace in (namespace, None)]

    def stats(self, namespace: str | None = None) -> MemoryStats:
        chosen = self._select(lambda m: _matches(m, namespace, None, None, None))
        kinds = Counter(m.kind for m in chosen)
        with self._data.lock:
            everything = [row.memory for row in self._data.rows.values()]
        return {"turns": kinds["turn"], "facts": kinds["fact"], "scopes": len({(m.user_id, m.chat_id) for m in chosen}),
                "sessions": len({m.session_id for m in chosen}),
                "oldest": min((m.created_at for m in chosen), default=None),
                "newest": max((m.created_at for m in chosen), default=None),
                "quarantined": len(self.quarantined(namespace)),
                "bytes": sum(utf8_size(m.key, m.user_text, m.assistant_text, m.fact_text) for m in everything)}

    dense = True

    def unembedded(self, model: str, *, keys: Sequence[str] | None = None, below: int | None = None,
                   limit: int = 16) -> list[Memory]:
        data = self._data
        with data.lock:
            if keys is not None:
                ids = sorted({data.keys[key] for key in keys if key in data.keys}, reverse=True)
            else:
                ids = sorted((i for i in data.rows if below is None or i < below), reverse=True)
            lacking = (i for i in ids if data.vectors.get(i, (0, "", b""))[1] != model)
            return [data.rows[i].memory for i in itertools.islice(lacking, limit)]

    def put_vectors(self, model: str, vectors: Sequence[tuple[int, bytes]], *,
                    keys: Sequence[str] | None = None) -> int:
        data = self._data
        with data.lock:
            stored = 0
            for n, (memory_id, vector) in enumerate(vectors):
                row = data.rows.get(memory_id)
                if row is not None and (keys is None or row.memory.key == keys[n]):
                    if memory_id in data.vectors:
                        if data.vectors[memory_id][1] == model:  # the same model's: left alone
                            continue
                        data.generation += 1
                    data.vectors[memory_id] = (next(data.vector_seq), model, bytes(vector))
                    stored += 1
            return stored

    def vectors(self, model: str, *, namespace: str, user_id: str, after: int = 0) -> list[Vector]:
        data = self._data
        with data.lock:
            found = []
            for memory_id, (seq, stored_model, vector) in data.vectors.items():
                memory = data.rows[memory_id].memory
                if (seq > after and stored_model == model and vector and memory.namespace == namespace
                        and memory.user_id == user_id):
                    found.append(Vector(seq, memory_id, memory.chat_id, memory.visibility, vector))
        return sorted(found)

    def vector_generation(self) -> int:
        with self._data.lock:
            return self._data.generation

    def _delete(self, keep: Callable[[Memory], bool]) -> list[int]:
        """Delete every memory ``keep`` refuses, and its vector; the ids deleted, sorted."""
        data = self._data
        with data.lock:
            gone = sorted(i for i, row in data.rows.items() if not keep(row.memory))
            for i in gone:
                del data.keys[data.rows.pop(i).memory.key]
                if data.vectors.pop(i, None) is not None:
                    data.generation += 1
            return gone

    def forget(self, ids: Iterable[int], *, namespace: str | None = None, user_id: str | None = None,
               chat_id: str | None = None) -> list[int]:
        wanted = {int(i) for i in ids}
        return self._delete(lambda m: not (m.id in wanted and _matches(m, namespace, user_id, None, None) and (
            chat_id is None or m.chat_id == chat_id or m.visibility == "user")))

    def forget_where(self, *, namespace: str | None = None, user_id: str | None = None, chat_id: str | None = None,
                     session_id: str | None = None) -> int:
        if user_id is None and chat_id is None and session_id is None:
            raise ValueError("forget needs ids, a user, a chat or a session")
        return len(self._delete(lambda m: not _matches(m, namespace, user_id, chat_id, session_id)))

    def forget_user(self, user_id: str, namespaces: Collection[str] | None = None) -> tuple[int, int]:
        spaces = namespaces_asked(namespaces)

        def theirs(namespace: str | None, user: str | None) -> bool:
            return user == user_id and (spaces is None or namespace in spaces)

        data = self._data
        with data.lock:
            memories = len(self._delete(lambda m: not theirs(m.namespace, m.user_id)))
            kept = [q for q in data.quarantine if not theirs(q.namespace, q.user_id)]
            quarantined, data.quarantine[:] = len(data.quarantine) - len(kept), kept
        return memories, quarantined

    def compact(self) -> None:
        """Nothing to do: a deleted memory is gone with its last reference."""

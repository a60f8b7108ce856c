"""ctx-local's write-behind queue: the durable queue (:mod:`hermes_ctx_plugins.storage.queue`)
between ``sync_turn`` and the store.

``sync_turn`` appends each turn as a :class:`Record` to this process's segment and returns; the
writer thread stores them in batches (at most ``batch_size`` records and :data:`BATCH_BYTES`, so no
batch holds the database's write lock for long), letting them gather for :data:`LINGER` first. A
record is redacted (its texts cut to ``max_text_chars``) before it is written, in the caller's
thread: no secret reaches the file, not even for a moment. Each batch's rows and the segment offset
they reach are committed in one transaction (the store's ``write``), so after a crash — at any
instant — replay resumes exactly where the store stopped: nothing lost, nothing stored twice (keys
are unique as well, so a record replayed twice is stored once). The writer stores the first records
of each batch with their safety verdict (:data:`JUDGED_PER_BATCH`), so recall need not scan them.

A failure of the database (locked, damaged, full) leaves everything queued and retries with back-off
for as long as it takes; a record that fails by itself (undecodable, refused by the database) is
retried up to ``max_retries`` times, then kept in the quarantine table with its error and owner —
visible in ``hermes-ctx memory stats`` — never dropped. A queue that stops with turns not yet stored
leaves them in its segment; the next one to start (in any process) takes them over.

Records reach the OS on every put (they survive the process being killed) but, unless ``fsync`` is
set, are not forced to the disk (a power cut can lose the last moments, as with SQLite's
``synchronous=NORMAL``, which the store uses too).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import logging
import time
from collections.abc import Callable, Collection, Iterable, Sequence
from pathlib import Path

from ...events import Turn
from ...safety import redact_secrets
from ...storage import verdicts
from ...storage.base import MemoryBackend, is_store_failure
from ...storage.queue import BATCH_BYTES, SUFFIX, Consumer, DurableQueue, Failure, inspect, read_lines
from ...storage.records import Record, json_text, owner_of
from ...storage.segments import each_segment

__all__ = ["BATCH_BYTES", "LINGER", "SUFFIX", "WriteBehindQueue", "held_records", "inspect", "with_verdict"]

log = logging.getLogger("hermes_ctx_plugins.memory.local")

#: seconds the writer lets turns gather before storing them: one transaction (and one turn for the
#: store's write lock among processes) per 50 ms at most instead of per turn, and a writer thread
#: woken that much less often beside hermes' own (a turn is recalled at the next one, seconds later)
LINGER = 0.05
#: records of a batch the writer judges (:func:`with_verdict`) before storing them. A live turn comes
#: alone or with a few others (the writer lingers :data:`LINGER` first), so it is judged; the rest of
#: a bigger batch — a backlog — is stored without a verdict, and scanned when recalled (as every
#: memory was before verdicts were kept): a scan costs more than storing a turn, and a backlog must
#: drain fast. Not in ``put``: that is hermes' memory-sync thread's time.
JUDGED_PER_BATCH = 16


class _Records(Consumer[Record]):
    """Turns and facts on their way into ctx-local's store (a :class:`MemoryBackend`)."""

    name = "ctx-local"
    quarantine_note = "see `hermes-ctx memory stats`"

    def __init__(self, open_store: Callable[[], MemoryBackend], *, backoff: float, max_backoff: float,
                 on_stored: Callable[[Sequence[str]], None] | None = None) -> None:
        self.open_store = open_store
        self.backoff = backoff
        self.max_backoff = max_backoff
        self.on_stored = on_stored

    def encode(self, record: Record) -> bytes:
        data = record.as_json()
        # the writer judges each record itself; a line without the field is one older versions read
        del data["verdict"]
        text: str = json_text(data, separators=(",", ":"))
        return text.encode("utf-8")

    def decode(self, line: bytes) -> Record:
        # put() redacted the record; one read back from a file is redacted again, in case an older
        # version wrote it (redacting twice changes nothing)
        record = Record.from_json(json.loads(line)).redacted()
        # a verdict is the writer's own judgement, never a queue file's (whatever the sink: replay after a
        # forget hands records to the store itself)
        return dataclasses.replace(record, verdict="") if record.verdict else record

    def open(self) -> _Judging:
        return _Judging(self.open_store(), self.on_stored)

    def failure(self, exc: Exception) -> Failure:
        return Failure.OUTAGE if is_store_failure(exc) else Failure.RECORD

    def failing(self, error: BaseException | None) -> None:
        if error is None:
            log.warning("ctx-local memory database works again; queued turns are being stored")
            return
        failure = is_store_failure(error)
        message = str(error) if failure else f"{type(error).__name__}: {error}"
        log.error("ctx-local could not store queued memories (retrying every %.1fs at most, nothing is dropped): %s",
                  self.max_backoff, message, exc_info=error if not failure else None)

    def shown(self, line: bytes) -> str:
        return redact_secrets(super().shown(line))


class _Judging:
    """The store as the writer's sink: the first :data:`JUDGED_PER_BATCH` records of a batch are
    stored with their verdict, the rest without one (and :meth:`_Records.decode` drops any a queue file holds)."""

    def __init__(self, store: MemoryBackend, on_stored: Callable[[Sequence[str]], None] | None = None) -> None:
        self.store = store
        self.on_stored = on_stored

    def write(self, records: Sequence[Record], *, segment: str = "", offset: int = 0) -> int:
        judged = []
        for number, record in enumerate(records):
            if number < JUDGED_PER_BATCH:
                judged.append(with_verdict(record))
                # a scan holds the GIL for a fraction of a millisecond: let a thread calling put()
                # have it now, not after the interpreter's 5 ms switch interval
                time.sleep(0)
            else:
                judged.append(dataclasses.replace(record, verdict="") if record.verdict else record)
        added = self.store.write(judged, segment=segment, offset=offset)
        if self.on_stored is not None:  # committed: the embedder may read them now
            self.on_stored([record.key for record in records])
        return added

    def quarantine(self, segment: str, offset: int, raw: str, error: str, attempts: int) -> None:
        self.store.quarantine(segment, offset, raw, error, attempts)

    def progress(self) -> dict[str, int]:
        return self.store.progress()

    def drop_progress(self, segments: Iterable[str]) -> None:
        self.store.drop_progress(segments)

    def close(self) -> None:
        self.store.close()


class WriteBehindQueue(DurableQueue[Record]):
    """The durable queue feeding one ctx-local store."""

    def __init__(self, directory: Path, open_store: Callable[[], MemoryBackend], *, batch_size: int = 1024,
                 max_retries: int = 5, backoff: float = 0.05, max_backoff: float = 5.0, fsync: bool = False,
                 rotate_bytes: int = 8 << 20, max_text_chars: int | None = None,
                 on_stored: Callable[[Sequence[str]], None] | None = None) -> None:
        """:param on_stored: called on the writer's thread with the keys of each batch once stored
            (ctx-local's embedder takes them from there)."""
        super().__init__(directory, _Records(open_store, backoff=backoff, max_backoff=max_backoff,
                                             on_stored=on_stored),
                         batch_size=batch_size, max_retries=max_retries, fsync=fsync, rotate_bytes=rotate_bytes,
                         linger=LINGER)
        self.max_text_chars = max_text_chars

    def put(self, record: Record) -> None:
        """Queue ``record`` — redacted, its texts cut to ``max_text_chars`` — durably and return."""
        super().put(record.redacted(self.max_text_chars))

    def restart_segment(self, store: MemoryBackend, timeout: float) -> bool:
        """Wait until everything put so far is stored, then go on in a fresh segment file and delete
        the old one, so no record lingers in a queue file once stored (forgetting a user needs that).
        False when it could not within ``timeout`` or the queue is closing."""
        return self.restart(timeout, store)

    def replay_dead(self, store: MemoryBackend) -> None:
        """Store now, in the calling thread, what queues that stopped left (forgetting a user needs
        every record it can reach in the store first)."""
        self.replay(store)


def with_verdict(record: Record, *, cleared: str = "") -> Record:
    """``record`` with its :func:`~hermes_ctx_plugins.storage.verdicts.clean_digest` (recall then
    shows its text without scanning it again); ``cleared``: a text the judge found benign when it was written."""
    return dataclasses.replace(record, verdict=verdicts.clean_digest(record, cleared=cleared))


def held_records(directory: Path, user_id: str, namespaces: Collection[str] | None) -> dict[Path, int]:
    """The segment files in ``directory`` holding records of ``user_id`` in ``namespaces`` (None:
    any), stored yet or not, with how many each holds."""
    held = {}
    for path, fd in each_segment(directory):
        owners = (owner_of(line.decode("utf-8", "replace")) for _, line, _ in read_lines(fd, 0))
        count = sum(1 for owner in owners if owner is not None and owner[1] == user_id
                    and (namespaces is None or owner[0] in namespaces))
        if count:
            held[path] = count
    return held


def turn_key(turn: Turn) -> str:
    """The idempotency key of a turn: the same turn synced (or replayed) twice is stored once. Keys
    are one set for the whole store, so the owner is part of it: two owners whose sessions share an id
    (two deployments naming sessions by chat) and say the same thing each keep their own turn."""
    digest = hashlib.sha256()
    # the number in hex: Python refuses decimal text for an int of thousands of digits
    number = format(turn.turn_number, "x")
    session = turn.session
    parts = [part.encode("utf-8", "surrogatepass") for part in (
        session.deployment, session.user_id, session.chat_id, session.session_id, number, turn.user_text,
        turn.assistant_text)]
    if any(b"\x00" in part for part in parts):  # NUL-joined, user "a\0b" of chat "c" was user "a" of chat "b\0c"
        digest.update(b"\x01lengths")  # each part after its length (the NUL-joined keys, made before, stay)
        for part in parts:
            digest.update(len(part).to_bytes(8, "big") + part)
    else:
        digest.update(b"\x00".join(parts) + b"\x00")
    return "turn:" + digest.hexdigest()[:32]

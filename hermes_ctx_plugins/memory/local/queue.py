"""The durable write-behind queue between ``sync_turn`` and the store.

Each process appends records, one JSON line each, to a *segment* file of its own in the queue folder
and returns at once; a writer thread applies them to the store in batches (at most ``batch_size``
records and :data:`BATCH_BYTES`, so no batch holds the database's write lock for long). A record
is redacted (and its texts cut to ``max_text_chars``) before it is written, in the caller's thread:
no secret reaches the file, not even for a moment. Each batch's rows and the
segment offset they reach are committed in one SQLite transaction, so after a crash — at any
instant — replay resumes exactly where the store stopped: nothing lost, nothing applied twice (keys
are unique as well, so even a replay of everything would store each turn once).

A segment is locked (``flock``) by the process writing it. At start, and every minute when idle,
the writer looks for segments nobody holds — left by a process that died — and replays them, then
deletes them. A failure of the database (locked, damaged, full) leaves everything queued and retries
with back-off, for as long as it takes; a record that fails by itself (undecodable, rejected by
SQLite) is retried with back-off up to ``max_retries`` times, then moved to the quarantine table
with its error and owner — visible in ``hermes-ctx memory stats`` — never dropped, and never in the
way of the records after it.

Records are written to the OS on every put (they survive the process being killed) but, unless
``fsync`` is set, not forced to the disk (a power cut can lose the last moments, as with SQLite's
``synchronous=NORMAL``, which the store uses too).
"""

from __future__ import annotations

import itertools
import json
import logging
import os
import sys
import threading
import time
import uuid
from collections import deque
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from ...safety.scan import redact_secrets
from ...storage.sqlite.memory import LocalStore, Record, is_store_failure, json_text, owner_of

if sys.platform == "win32":
    import msvcrt
else:
    import fcntl

log = logging.getLogger("hermes_ctx_plugins.memory.local")

SUFFIX = ".seg"
#: how often an idle writer looks again for segments left by processes that died
RESCAN_SECONDS = 60.0
_READ_CHUNK = 1 << 20
#: records the writer prepares between two chances for other threads to run
_YIELD_EVERY = 8
#: queued bytes per write transaction, besides ``batch_size`` records: a batch holds the write lock
#: for a bounded time (a few hundred milliseconds), so another process's write — a tool call's —
#: waits at most that long, whatever the turns' size
BATCH_BYTES = 1 << 20

#: a queued record: its end offset in the segment, its line, and the record when known (saves decoding)
_Item = tuple[int, bytes, Record | None]


class QueueClosedError(RuntimeError):
    """The queue was closed; nothing more can be put into it."""


class _Stopped(Exception):
    """The drain deadline passed while the writer was waiting to retry."""


@dataclass
class _Segment:
    name: str
    path: Path
    fd: int
    size: int = 0


class WriteBehindQueue:
    """Durable, crash-safe, multi-process write-behind queue feeding one :class:`LocalStore`."""

    def __init__(self, directory: Path, open_store: Callable[[], LocalStore], *, batch_size: int = 1024,
                 max_retries: int = 5, backoff: float = 0.05, max_backoff: float = 5.0, fsync: bool = False,
                 rotate_bytes: int = 8 << 20, max_text_chars: int | None = None) -> None:
        self.directory = directory
        self.max_text_chars = max_text_chars
        self.open_store = open_store
        self.batch_size = batch_size
        self.max_retries = max_retries
        self.backoff = backoff
        self.max_backoff = max_backoff
        self.fsync = fsync
        self.rotate_bytes = rotate_bytes
        #: the last database failure, or ``""`` while the writer is healthy
        self.last_error = ""
        #: records stored / skipped as already stored / quarantined by this process
        self.stored = self.duplicates = self.quarantined = 0
        self._cond = threading.Condition()
        # our own segment's records, in order
        self._pending: deque[_Item] = deque()
        self._segment: _Segment | None = None
        self._thread: threading.Thread | None = None
        self._stopping_at: float | None = None
        self._put = self._done = 0
        self._scanned = False
        self._rescan_at = 0.0
        self._retry_at = 0.0

    # ------------------------------------------------------------------------------------ producer

    def start(self) -> None:
        """Create this process's segment and start the writer thread."""
        self.directory.mkdir(parents=True, exist_ok=True, mode=0o700)
        self._segment = self._create_segment()
        self._thread = threading.Thread(target=self._run, name="ctx-local-writer", daemon=True)
        self._thread.start()

    def put(self, record: Record) -> None:
        """Append ``record`` — redacted, its texts cut to ``max_text_chars`` — durably and return; the
        writer stores it soon after."""
        record = record.redacted(self.max_text_chars)
        line = (json_text(record.as_json(), separators=(",", ":")) + "\n").encode("utf-8")
        with self._cond:
            segment = self._segment
            if segment is None or self._stopping_at is not None:
                raise QueueClosedError("the ctx-local write queue is closed")
            _write_all(segment.fd, line)
            if self.fsync:
                os.fsync(segment.fd)
            segment.size += len(line)
            self._pending.append((segment.size, line, record))
            self._put += 1
            self._cond.notify_all()

    @property
    def pending(self) -> int:
        """Records of this process not yet stored."""
        return len(self._pending)

    def flush(self, timeout: float) -> bool:
        """Wait until everything put so far (and any replay) is stored; False on timeout."""
        deadline = time.monotonic() + timeout
        with self._cond:
            target = self._put
            while self._done < target or not self._scanned:
                left = deadline - time.monotonic()
                if left <= 0 or self._thread is None or not self._thread.is_alive():
                    return False
                self._cond.wait(left)
        return True

    def close(self, timeout: float) -> bool:
        """Drain for at most ``timeout`` seconds, stop the writer, release the segment.

        Returns True when everything was stored; otherwise the rest stays in the segment file and
        the next process to start replays it.
        """
        with self._cond:
            if self._segment is None:
                return True
            self._stopping_at = time.monotonic() + timeout
            self._cond.notify_all()
        thread = self._thread
        if thread is not None:
            # a SQLite call in progress can outlast the deadline by its busy timeout
            thread.join(timeout + 5.0)
        with self._cond:
            segment, self._segment = self._segment, None
            drained = not self._pending
        if segment is not None:
            os.close(segment.fd)
        return drained

    # ------------------------------------------------------------------------------------ writer

    def _run(self) -> None:
        store: LocalStore | None = None
        delay = self.backoff
        try:
            while self._wait_for_work():
                try:
                    if store is None:
                        store = self.open_store()
                    if not self._scanned:
                        self._replay_dead(store)
                        with self._cond:
                            self._scanned = True
                            self._rescan_at = time.monotonic() + RESCAN_SECONDS
                            self._cond.notify_all()
                    self._drain_own(store)
                    self._rotate(store)
                except _Stopped:
                    break
                except Exception as exc:
                    self._failed(exc, delay)
                    delay = min(delay * 2, self.max_backoff)
                    if store is not None:  # reopen: the file may be replaced or repaired meanwhile
                        store.close()
                        store = None
                else:
                    if self.last_error:
                        log.warning("ctx-local memory database works again; queued turns are being stored")
                        self.last_error = ""
                    delay = self.backoff
            self._finish(store)
        finally:
            if store is not None:
                store.close()

    def _wait_for_work(self) -> bool:
        """Block until there is something to do (True) or the writer should stop (False)."""
        with self._cond:
            while True:
                now = time.monotonic()
                # Stopping: when all is stored, past the deadline, or at once while the database fails
                # (waiting would not help; what is queued is safe in the segment for the next start).
                if self._stopping_at is not None and (now >= self._stopping_at or not self._pending
                                                      or self.last_error):
                    return False
                wake = [self._stopping_at] if self._stopping_at is not None else []
                if now < self._retry_at:
                    self._cond.wait(min([self._retry_at, *wake]) - now)
                    continue
                if self._scanned and now >= self._rescan_at:
                    self._scanned = False
                if self._pending or not self._scanned:
                    return True
                self._cond.wait(min([self._rescan_at, *wake]) - now)

    def _failed(self, exc: Exception, delay: float) -> None:
        message = str(exc) if is_store_failure(exc) else f"{type(exc).__name__}: {exc}"
        if message != self.last_error:
            log.error("ctx-local could not store queued memories (retrying every %.1fs at most, nothing is "
                      "dropped): %s", self.max_backoff, message, exc_info=not is_store_failure(exc))
        self.last_error = message
        with self._cond:
            self._retry_at = time.monotonic() + delay

    def _past_deadline(self) -> bool:
        return self._stopping_at is not None and time.monotonic() >= self._stopping_at

    def _pause(self, seconds: float) -> None:
        end = time.monotonic() + seconds
        with self._cond:
            while (left := end - time.monotonic()) > 0:
                if self._past_deadline():
                    raise _Stopped
                self._cond.wait(left)

    def _drain_own(self, store: LocalStore) -> None:
        while True:
            with self._cond:
                batch = _batch(self._pending, self.batch_size)
                segment = self._segment
            if not batch or segment is None:
                return
            self._apply(store, segment.name, batch)
            with self._cond:
                for _ in batch:
                    self._pending.popleft()
                self._done += len(batch)
                self._cond.notify_all()
            if self._past_deadline():
                return

    def _apply(self, store: LocalStore, segment: str, items: Sequence[_Item]) -> None:
        """Store ``items`` (the last one's end offset is recorded with them); bad ones one by one."""
        decoded: list[tuple[int, bytes, Record | None, Exception | None]] = []
        rows = []
        for number, (end, line, known) in enumerate(items, 1):
            try:
                # put() redacted the record; one read back from a file is redacted again, in case
                # an older version wrote it (redacting twice changes nothing)
                parsed = known if known is not None else Record.from_json(json.loads(line)).redacted()
                rows.append(parsed.row())
                decoded.append((end, line, parsed, None))
            except Exception as exc:  # bad JSON or Unicode, a value no column takes: that record's fault
                decoded.append((end, line, None, exc))
            if number % _YIELD_EVERY == 0:
                # Let a thread calling put() have the GIL now, not after the interpreter's 5 ms switch
                # interval: that wait was most of the enqueue's p99.
                time.sleep(0)
        if len(rows) == len(decoded):
            try:
                self._count(store.write_rows(rows, segment=segment, offset=items[-1][0]), len(rows))
                return
            except Exception as exc:
                if is_store_failure(exc):
                    raise
                log.warning("a batch of queued memories failed (%s); storing them one by one", exc)
        for end, line, record, error in decoded:
            self._apply_one(store, segment, end, line, record, error)

    def _apply_one(self, store: LocalStore, segment: str, end: int, line: bytes, record: Record | None,
                   error: Exception | None) -> None:
        attempt = 0
        while True:
            attempt += 1
            if record is not None:
                try:
                    self._count(store.write([record], segment=segment, offset=end), 1)
                    return
                except Exception as exc:
                    if is_store_failure(exc):
                        raise
                    error = exc
            # an undecodable line never gets better; anything else gets its retries
            if record is None or attempt >= self.max_retries:
                raw = redact_secrets(line.rstrip(b"\n").decode("utf-8", "replace"))
                reason = f"{type(error).__name__}: {error}"
                store.quarantine(segment, end, raw, reason, attempt)
                self.quarantined += 1
                log.error("ctx-local quarantined a queued memory after %d attempt(s): %s (see `hermes-ctx memory "
                          "stats`)", attempt, reason)
                return
            self._pause(self.backoff * 2 ** (attempt - 1))

    def _count(self, stored: int, total: int) -> None:
        self.stored += stored
        self.duplicates += total - stored

    # ------------------------------------------------------------------------------------ segments

    def _create_segment(self) -> _Segment:
        name = f"{time.time_ns():020d}-{os.getpid()}-{uuid.uuid4().hex[:8]}{SUFFIX}"
        path = self.directory / name
        # Locked before it has its real name, so no other process can take it for a dead one.
        temp = self.directory / f".{name}.tmp"
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_APPEND, 0o600)
        if not _try_lock(fd):  # pragma: no cover - nobody else knows the name yet
            os.close(fd)
            raise OSError(f"cannot lock the new queue segment {temp}")
        if sys.platform == "win32":  # pragma: no cover - an open file cannot be renamed there
            os.close(fd)
            os.replace(temp, path)
            fd = os.open(path, os.O_WRONLY | os.O_APPEND)
            _try_lock(fd)
        else:
            os.replace(temp, path)
        return _Segment(name=name, path=path, fd=fd)

    def _rotate(self, store: LocalStore) -> None:
        """Start a fresh segment once ours is big and fully stored, so files never grow without end."""
        self._swap_segment(store, self.rotate_bytes)

    def _swap_segment(self, store: LocalStore, min_bytes: int) -> bool:
        """If our segment is fully stored (and at least ``min_bytes`` long), append to a fresh one
        from now on and delete it; whether that happened."""
        with self._cond:
            old = self._segment
            if old is None or self._pending or old.size < min_bytes or self._stopping_at is not None:
                return False
            self._segment = self._create_segment()
        try:
            _retire(store, old.path, old.name)
        finally:
            os.close(old.fd)
        return True

    def restart_segment(self, store: LocalStore, timeout: float) -> bool:
        """Wait until everything put so far is stored, then go on in a fresh segment file and delete
        the old one, so no record lingers in a queue file once it is stored (forgetting a user needs
        that). False when it could not within ``timeout`` (the store fails, puts keep coming) or the
        queue is closing."""
        deadline = time.monotonic() + timeout
        while self.flush(max(0.0, deadline - time.monotonic())):
            if self._swap_segment(store, 0):
                return True
            with self._cond:
                if self._segment is None or self._stopping_at is not None:
                    return False
        return False

    def replay_dead(self, store: LocalStore) -> None:
        """Store now, in the calling thread, what processes that stopped left queued (forgetting a
        user needs every record it can reach in the store first)."""
        self._replay_dead(store)

    def _finish(self, store: LocalStore | None) -> None:
        """At a clean stop with nothing left, remove our segment (a dead one would be replayed)."""
        with self._cond:
            segment = self._segment
            done = not self._pending
        if store is not None and segment is not None and done:
            try:
                _retire(store, segment.path, segment.name)
            except Exception as exc:  # the next start cleans up what is left
                log.warning("ctx-local could not remove its drained queue segment %s: %s", segment.path, exc)

    def _replay_dead(self, store: LocalStore) -> None:
        # Progress first, the listing second: a segment with progress but no file was then really
        # deleted (files exist before their first progress row), so its row can go.
        progress = store.progress()
        present = {path.name for path in self.directory.glob(f"*{SUFFIX}")}
        store.drop_progress(name for name in progress if name not in present)
        own = self._segment.name if self._segment is not None else ""
        for temp in self.directory.glob(f".*{SUFFIX}.tmp"):  # a process died while creating its segment
            if (fd := _claim(temp)) is not None:
                temp.unlink(missing_ok=True)
                os.close(fd)
        for name in sorted(present - {own}):
            path = self.directory / name
            fd = _claim(path)
            if fd is None:
                continue  # a live process holds it
            try:
                self._replay(store, path, fd, progress.get(name, 0))
            finally:
                os.close(fd)

    def _replay(self, store: LocalStore, path: Path, fd: int, offset: int) -> None:
        replayed = size = 0
        batch: list[_Item] = []
        for end, line, complete in _lines(fd, offset):
            if self._past_deadline():
                raise _Stopped
            if batch and (not complete or len(batch) >= self.batch_size or size + len(line) > BATCH_BYTES):
                self._apply(store, path.name, batch)
                replayed += len(batch)
                batch, size = [], 0
            if not complete:
                error = ValueError("incomplete record: the process writing it died in the middle of the write")
                self._apply_one(store, path.name, end, line, None, error)
                continue
            batch.append((end, line, None))
            size += len(line)
        if batch:
            self._apply(store, path.name, batch)
            replayed += len(batch)
        _retire(store, path, path.name)
        if replayed:
            log.warning("ctx-local stored %d memories left queued by a process that stopped (%s)", replayed, path)


def _batch(pending: Iterable[_Item], limit: int) -> list[_Item]:
    """The first records of ``pending`` for one transaction: at most ``limit`` of them, and no more
    than :data:`BATCH_BYTES` (but always one, however big)."""
    batch: list[_Item] = []
    size = 0
    for item in itertools.islice(pending, limit):
        if batch and size + len(item[1]) > BATCH_BYTES:
            break
        batch.append(item)
        size += len(item[1])
    return batch


def _retire(store: LocalStore, path: Path, name: str) -> None:
    # the file first: a progress row without its file is known to be done; the reverse would replay it
    path.unlink(missing_ok=True)
    store.drop_progress([name])


def _lines(fd: int, offset: int) -> Iterator[tuple[int, bytes, bool]]:
    """``(end offset, line, complete)`` for each record from ``offset``; the last may be incomplete."""
    size = os.fstat(fd).st_size
    position = min(offset, size)
    rest = b""
    while position < size:
        chunk = os.pread(fd, min(_READ_CHUNK, size - position), position)
        if not chunk:
            break
        position += len(chunk)
        data = rest + chunk
        start = 0
        base = position - len(data)
        while (newline := data.find(b"\n", start)) != -1:
            yield base + newline + 1, data[start:newline + 1], True
            start = newline + 1
        rest = data[start:]
    if rest:
        yield position, rest, False


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def _try_lock(fd: int) -> bool:
    try:
        if sys.platform == "win32":  # pragma: no cover
            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
        else:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return False
    return True


def _claim(path: Path) -> int | None:
    """Open and lock a segment nobody holds; None when a live process has it (or it just went)."""
    try:
        fd = os.open(path, os.O_RDWR)
    except FileNotFoundError:
        return None
    if _try_lock(fd):
        try:
            if os.fstat(fd).st_ino == os.stat(path).st_ino:
                return fd
        except FileNotFoundError:
            pass  # its owner finished and deleted it after we opened it
    os.close(fd)
    return None


def held_records(directory: Path, user_id: str, namespaces: Collection[str] | None) -> dict[Path, int]:
    """The segment files in ``directory`` holding records of ``user_id`` in ``namespaces`` (None:
    any), stored yet or not, with how many each holds."""
    held = {}
    for path in sorted(directory.glob(f"*{SUFFIX}")):
        try:
            fd = os.open(path, os.O_RDONLY)
        except FileNotFoundError:
            continue
        try:
            owners = (owner_of(line.decode("utf-8", "replace")) for _, line, _ in _lines(fd, 0))
            count = sum(1 for owner in owners if owner is not None and owner[1] == user_id
                        and (namespaces is None or owner[0] in namespaces))
        finally:
            os.close(fd)
        if count:
            held[path] = count
    return held


@dataclass(frozen=True)
class SegmentState:
    """What ``hermes-ctx memory stats`` shows about one queue segment."""

    path: Path
    waiting: int
    #: a running process holds it (it is replayed by the next process to start once that one stops)
    live: bool


def inspect(directory: Path, progress: dict[str, int]) -> list[SegmentState]:
    """The queue segments in ``directory`` and how many records each still has to store."""
    states = []
    for path in sorted(directory.glob(f"*{SUFFIX}")):
        try:
            fd = os.open(path, os.O_RDONLY)
        except FileNotFoundError:
            continue
        try:
            live = not _try_lock(fd)
            if not live and sys.platform != "win32":
                fcntl.flock(fd, fcntl.LOCK_UN)
            waiting = sum(1 for _ in _lines(fd, progress.get(path.name, 0)))
        finally:
            os.close(fd)
        states.append(SegmentState(path, waiting, live))
    return states

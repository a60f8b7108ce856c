"""What the durable queue leaves on disk: bounded by ``limit`` during an outage (and after a crash),
and file names made durable, not only file contents (the queue folder is synced when a segment is
created, rewritten or deleted)."""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from queue_helpers import Note, Notes, Target, leave_dead, note, started_queues

from hermes_ctx_plugins.storage.queue import SUFFIX, DurableQueue


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    return tmp_path / "queue"


@pytest.fixture
def target(folder: Path) -> Target:
    return Target(folder)


@pytest.fixture
def queues(folder: Path, target: Target) -> Iterator[Callable[..., DurableQueue[Note]]]:
    yield from started_queues(folder, target, close_timeout=5)


def segment_bytes(folder: Path) -> int:
    return sum(path.stat().st_size for path in folder.glob(f"*{SUFFIX}"))


def segment_lines(folder: Path) -> list[bytes]:
    return [line for path in sorted(folder.glob(f"*{SUFFIX}")) for line in path.read_bytes().splitlines()]


def test_a_full_queue_keeps_its_files_bounded_through_an_outage(
        queues: Callable[..., DurableQueue[Note]], target: Target, folder: Path) -> None:
    limit, rotate = 10, 4096
    target.down = True
    queue = queues(batch_size=1, limit=limit, rotate_bytes=rotate)
    texts = [f"note {n:04d} " + "x" * 200 for n in range(2000)]
    line = len(Notes(target).encode(note("alice", texts[0]))) + 1
    largest = 0
    for text in texts:
        queue.put(note("alice", text))
        largest = max(largest, segment_bytes(folder))
    # what is queued (limit records, one more in the writer's hand) and less than rotate_bytes of the rest
    assert largest <= rotate + 2 * (limit + 1) * line, f"the segment grew to {largest} bytes"
    assert queue.pending == limit and len(segment_lines(folder)) < 2 * rotate // line + limit

    target.down = False
    assert queue.flush(10)
    applied = target.texts()
    # The newest are kept and applied, in order. A record the writer is applying is never dropped and
    # counts against the limit: if the writer held an older one at the last puts (its retry against the
    # outage), that one and the newest limit - 1 are what is left.
    assert applied[-(limit - 1):] == texts[-(limit - 1):], "the newest are kept and applied, in order"
    assert applied[-limit] == texts[-limit] or applied[-limit] in texts[:-limit]
    assert len(applied) <= limit + 1 and queue.stats.dropped == len(texts) - len(applied)


def test_a_queue_taking_over_a_killed_queue_keeps_no_more_than_its_limit(
        queues: Callable[..., DurableQueue[Note]], target: Target, folder: Path) -> None:
    limit = 10
    texts = [f"note {n:03d}" for n in range(300)]
    leave_dead(folder, [note("alice", text) for text in texts], batch_size=1, limit=limit)
    assert len(segment_lines(folder)) == len(texts), "the premise: the killed queue's file holds every note"

    queue = queues(batch_size=1, limit=limit)
    assert queue.flush(10)
    assert target.texts() == texts[-limit:], "the newest, each once, in order"
    assert len(segment_lines(folder)) == limit, "and only those were written to the queue's own segment"
    assert queue.stats.dropped == len(texts) - limit


@pytest.mark.skipif(os.name != "posix", reason="a folder cannot be synced on Windows")
def test_the_folder_is_synced_when_a_segment_is_created_rewritten_or_deleted(
        queues: Callable[..., DurableQueue[Note]], target: Target, folder: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A file's fsync does not make its name durable: after a power cut a new segment could be missing,
    or one deleted — with a forgotten user's text, or already applied — could be back."""
    folder.mkdir()
    backlog = folder.parent / "backlog.jsonl"
    synced: dict[Path, list[set[str]]] = {folder: [], folder.parent: []}
    real_fsync = os.fsync

    def fsync(fd: int) -> None:
        info = os.fstat(fd)
        for path, states in synced.items():
            if stat.S_ISDIR(info.st_mode) and info.st_ino == path.stat().st_ino:
                states.append(set(os.listdir(path)))  # the state this sync made durable
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", fsync)

    def synced_since(start: int, path: Path = folder) -> list[set[str]]:
        return synced[path][start:]

    queue = queues(fsync=True, backlog=backlog)
    [first] = [path.name for path in folder.glob(f"*{SUFFIX}")]
    assert any(first in state for state in synced_since(0)), "created: its name is on the disk"

    queue.put(note("alice", "alice's note"))
    queue.put(note("bob", "bob's note"))
    assert queue.flush(10)
    before = len(synced[folder])
    assert queue.forget(lambda n: n["owner"] == "alice", wait=5) == 0, "both applied: nothing waiting"
    [second] = [path.name for path in folder.glob(f"*{SUFFIX}")]
    assert any(second in state and first not in state for state in synced_since(before)), \
        "rewritten without alice: the new segment is on the disk, the old one (with her text) gone for good"

    target.down = True
    queue.put(note("bob", "bob's waiting note"))
    before, before_parent = len(synced[folder]), len(synced[folder.parent])
    assert queue.close(0.1) is False and backlog.exists()
    assert any(backlog.name in state for state in synced_since(before_parent, folder.parent)), \
        "handed over: the backlog's name is on the disk ..."
    assert any(second not in state for state in synced_since(before)), "... and the segment's deletion"
    assert [name for name in os.listdir(folder) if name.endswith(SUFFIX)] == []

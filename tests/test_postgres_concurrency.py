"""What a fleet of workers sharing one PostgreSQL store promises when they meet, with real worker
processes (:mod:`pg_fleet_worker`) and a real server:

* several workers writing the same user's turns at once store each turn once — also a turn the
  load balancer retried on another worker (the key is the turn's, not the worker's);
* forgetting a user holds against the other workers: a turn of theirs said before the forget and
  still queued — in a worker that lives on, or one killed and restarted — never appears after it;
  a turn said after it is stored;
* the instant a forget and a batch of turns said before it meet at the store's write lock, the
  forget going first: the batch stores the other users' turns and skips the forgotten user's;
* a queue replayed from an older progress, by its own worker or by another, stores nothing twice;
* a worker frozen in the middle of a write — a machine that lost power or its network: its
  connection is never closed — does not hold the store's write lock, and so every other worker's
  writes and forgets, for longer than the server's idle-in-transaction timeout.

The tests of this module share one database, and so one store: each uses users of its own.
"""

from __future__ import annotations

import os
import shutil
import signal
import sys
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from pg_fleet_worker import (
    FLEET_CONFIG,
    LOCATION,
    Worker,
    fact_word,
    quarantined,
    query,
    stored_turns,
    totals,
    turn_text,
    user_name,
    writes_held,
)

from hermes_ctx_plugins import storage
from hermes_ctx_plugins.config import load_config
from hermes_ctx_plugins.memory.local.options import DEFAULT_PATH
from hermes_ctx_plugins.storage.postgres import DSN_ENV
from hermes_ctx_plugins.testing.loopback import wait_until
from hermes_ctx_plugins.testing.storage_contract import record

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")

Spawn = Callable[[str], Worker]


@pytest.fixture
def spawn(postgres_dsn: str, tmp_path: Path) -> Iterator[Spawn]:
    """``spawn(name)``: a worker in the home ``tmp_path/name`` (the same name again: a worker restarted
    there); all stopped after the test."""
    made: list[Worker] = []

    def factory(name: str) -> Worker:
        worker = Worker(tmp_path / name, postgres_dsn)
        made.append(worker)
        return worker

    yield factory
    for worker in made:
        worker.stop()


def flushed(workers: Sequence[Worker]) -> None:
    assert all(worker.flush() for worker in workers)


def test_workers_writing_one_users_turns_at_once_store_each_turn_once(spawn: Spawn, postgres_dsn: str) -> None:
    user, turns = 20, 60
    workers = [spawn(f"w{i}") for i in range(3)]
    plans: list[list[int]] = [[] for _ in workers]
    for n in range(turns):
        plans[n % 3].append(n)
        if n % 4 == 0:  # the balancer gave up waiting and sent the turn to the next worker as well
            plans[(n + 1) % 3].append(n)

    def say_all(worker: Worker, plan: list[int]) -> None:
        for n in plan:
            worker.say(user, n)

    with ThreadPoolExecutor(len(workers)) as pool:
        list(pool.map(say_all, workers, plans))
    flushed(workers)

    assert sum(map(len, plans)) == turns + turns // 4  # acknowledged: 75 ...
    assert sorted(stored_turns(postgres_dsn, user)) == list(range(turns))  # ... stored: each of the 60 once
    kept, counted = totals(postgres_dsn)
    assert kept == counted and quarantined(postgres_dsn, [user]) == 0
    for index, worker in enumerate(workers):  # each worker recalls what the others stored
        elsewhere = [n for n in range(turns) if n not in plans[index]][:3]
        assert worker.recall(user, [fact_word(user, n) for n in elsewhere]) >= {(user, n) for n in elsewhere}


def test_a_forget_holds_against_turns_other_workers_still_had_queued(spawn: Spawn, postgres_dsn: str) -> None:
    victim, bystander = 30, 31
    forgetter, crashing, busy = spawn("forgetter"), spawn("crashing"), spawn("busy")
    both = (victim, bystander)
    for n in range(6):  # stored before anything happens
        for user in both:
            (forgetter if n % 2 else busy).say(user, n)
    flushed([forgetter, busy])

    with writes_held(postgres_dsn):  # what the other workers are told now stays queued
        for n in range(6, 12):
            for user in both:
                crashing.say(user, n)
        for n in range(12, 18):
            for user in both:
                busy.say(user, n)
        crashing.kill()  # its turns wait in its queue file; busy's in a queue that runs on
    # released: busy's queue stores its turns as the forget runs, before it or after it
    answer = forgetter.forget(victim)
    assert answer["removed"] >= 6 and answer["errors"] == []
    for n in range(18, 22):  # said after the forget returned
        (busy if n % 2 else forgetter).say(victim, n)
    successor = spawn("crashing")  # restarted in the killed worker's home: it replays what that left
    workers = [forgetter, busy, successor]
    flushed(workers)

    assert sorted(stored_turns(postgres_dsn, victim)) == list(range(18, 22))
    # the replay and busy's queue did store: the bystander's turns from both are all there
    assert sorted(stored_turns(postgres_dsn, bystander)) == list(range(18))
    assert "took over" in successor.log()
    before = [fact_word(victim, n) for n in (1, 7, 13)]  # told forgetter, crashing and busy
    for worker in workers:
        # what the forget removed is shown to nobody; the turns said after it may all come (the block's
        # room goes to memories like the one asked for: relevance feedback)
        shown = worker.recall(victim, [*before, fact_word(victim, 19)])
        assert (victim, 19) in shown and shown <= {(victim, n) for n in range(18, 22)}
        assert worker.recall(bystander, [fact_word(bystander, n) for n in (1, 7, 13)]) >= {
            (bystander, n) for n in (1, 7, 13)}
    kept, counted = totals(postgres_dsn)
    assert kept == counted and quarantined(postgres_dsn, [victim, bystander]) == 0


def waiting_for_the_lock(dsn: str) -> int:
    """How many connections wait for an advisory lock in the test's database."""
    return int(query(dsn, "SELECT count(*) FROM pg_locks l JOIN pg_database d ON d.oid = l.database "
                          "WHERE l.locktype = 'advisory' AND NOT l.granted AND d.datname = current_database()")[0][0])


def test_a_batch_waiting_behind_a_forget_for_the_write_lock_skips_the_forgotten_user(
        postgres_dsn: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(DSN_ENV, postgres_dsn)
    victim, bystander = 50, 51
    path = Path(os.environ["HERMES_HOME"]) / DEFAULT_PATH  # the workers' location, from this process
    writer, forgetter = (storage.open_memory(load_config(FLEET_CONFIG), path, busy_timeout=60) for _ in range(2))
    assert writer.write([record(turn_text(victim, 0), user_id=user_name(victim), kind="turn")]) == 1
    # said before the forget is asked, on their way from a queue
    batch = [record(turn_text(user, 1), user_id=user_name(user), kind="turn") for user in (victim, bystander)]
    with ThreadPoolExecutor(2) as pool:
        with writes_held(postgres_dsn):  # both queue up for the lock: the forget first, the batch behind it
            forgetting = pool.submit(forgetter.forget_user, user_name(victim))
            assert wait_until(lambda: waiting_for_the_lock(postgres_dsn) == 1, 30)
            writing = pool.submit(writer.write, batch)
            assert wait_until(lambda: waiting_for_the_lock(postgres_dsn) == 2, 30)
        assert forgetting.result() == (1, 0)
        assert writing.result() == 1  # the batch committed after the forget: the bystander's turn only

    assert stored_turns(postgres_dsn, victim) == []
    assert stored_turns(postgres_dsn, bystander) == [1]
    kept, counted = totals(postgres_dsn)
    assert kept == counted and quarantined(postgres_dsn, [victim, bystander]) == 0


def test_a_queue_replayed_from_an_older_progress_stores_nothing_twice(spawn: Spawn, postgres_dsn: str) -> None:
    user, turns = 40, 20
    first = spawn("first")
    for n in range(turns):
        first.say(user, n)
    flushed([first])
    ids = query(postgres_dsn, "SELECT id FROM memories WHERE location = %s AND user_id = %s ORDER BY id",
                (LOCATION, user_name(user)))
    first.kill()  # no clean stop: its segment, every record in it stored, stays
    left = sorted(first.queue_dir.glob("*.seg"))
    assert left

    # another worker replays it: copied into its queue folder before it starts (a dead machine's
    # queue drained elsewhere); that queue has no progress for it, so it replays from the start
    elsewhere = first.home.parent / "second" / first.queue_dir.relative_to(first.home)
    elsewhere.mkdir(parents=True)
    for path in left:
        shutil.copy2(path, elsewhere / path.name)
    # and its own worker, restarted with its progress behind the rows it stored (as after a crash
    # between committing rows and recording how far it got, were those two steps apart)
    queue = (first.home / (DEFAULT_PATH + ".pg-queue")).read_text().strip()
    assert query(postgres_dsn, "DELETE FROM queue_progress WHERE location = %s AND queue = %s RETURNING segment",
                 (LOCATION, queue))
    workers = [spawn("second"), spawn("first")]
    flushed(workers)

    for worker in workers:
        assert f"took over {turns} queued records" in worker.log()  # each replayed all of it
    assert sorted(stored_turns(postgres_dsn, user)) == list(range(turns))
    assert query(postgres_dsn, "SELECT id FROM memories WHERE location = %s AND user_id = %s ORDER BY id",
                 (LOCATION, user_name(user))) == ids  # the very rows stored first, none added since
    kept, counted = totals(postgres_dsn)
    assert kept == counted and quarantined(postgres_dsn, [user]) == 0


def holding_the_lock_idle(dsn: str) -> int:
    """How many sessions hold an advisory lock in a transaction while their client says nothing."""
    return int(query(dsn, "SELECT count(*) FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid "
                          "WHERE l.locktype = 'advisory' AND l.granted AND a.state = 'idle in transaction'")[0][0])


def test_a_worker_frozen_in_the_middle_of_a_write_does_not_stall_the_others(spawn: Spawn, postgres_dsn: str) -> None:
    frozen_user, user, forgotten = 60, 61, 62
    frozen, other = spawn("frozen"), spawn("other")
    frozen.say(frozen_user, 0)
    for turn_user in (user, forgotten):
        other.say(turn_user, 0)
    flushed([frozen, other])
    with writes_held(postgres_dsn):
        frozen.say(frozen_user, 1)
        assert wait_until(lambda: waiting_for_the_lock(postgres_dsn) == 1, 30)  # its batch waits for the lock
        frozen.process.send_signal(signal.SIGSTOP)
    try:
        # released: the lock is the frozen worker's now, and its client will say nothing more
        assert wait_until(lambda: holding_the_lock_idle(postgres_dsn) == 1, 30)
        other.say(user, 1)
        assert other.flush(60)
        assert other.forget(forgotten)["errors"] == []
        assert sorted(stored_turns(postgres_dsn, user)) == [0, 1]  # while the frozen worker still is
        assert stored_turns(postgres_dsn, forgotten) == []
    finally:
        frozen.process.send_signal(signal.SIGCONT)
    assert frozen.flush(60)  # its write was cut; woken, its queue stores the turn again
    assert sorted(stored_turns(postgres_dsn, frozen_user)) == [0, 1]
    kept, counted = totals(postgres_dsn)
    assert kept == counted and quarantined(postgres_dsn, [frozen_user, user, forgotten]) == 0

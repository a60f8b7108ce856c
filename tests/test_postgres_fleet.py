"""The fleet acceptance test: four worker processes, each a ctx-local provider in its own
``$HERMES_HOME``, one PostgreSQL server; eight users say fifty turns each, every turn to a worker
picked at random. Mid-run one worker is killed with SIGKILL while it holds acknowledged turns it has
not stored (another writer holds the store's write lock meanwhile), then the server is stopped as by
a crash (every connection cut) while turns keep coming, the killed worker is restarted in its home,
and the server is started again. Then: every acknowledged turn is stored exactly once (counted in the
database), the killed worker's turns by the worker restarted in its home, and every user recalls
their own facts from every worker, never another user's — all users talk in one group chat, so only
the user id keeps them apart.

Real processes and a real server (:mod:`pg_fleet_worker`); the run happens once for the module and
each test checks one promise of it.
"""

from __future__ import annotations

import random
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest
from pg_fleet_worker import (
    LOCATION,
    Worker,
    fact_word,
    quarantined,
    query,
    start,
    stored_turns,
    totals,
    user_name,
    writes_held,
)

from hermes_ctx_plugins.storage.postgres.schema import SCHEMA_VERSION
from hermes_ctx_plugins.testing.postgres import EmbeddedPostgres

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")

WORKERS, USERS, TURNS = 4, 8, 50
#: the schedule's cut points: turns said before the store is locked; while it is (the killed worker's
#: pile up); while the server is down, the killed worker gone, then restarted; once it is back
PHASES = (160, 240, 280, 320)
KILLED = 0

Turn = tuple[int, int]  # (user, turn number)


@dataclass
class FleetRun:
    dsn: str
    workers: list[Worker]
    #: every acknowledged turn, with the worker that acknowledged it
    acked: dict[Turn, int]
    #: the turns the killed worker acknowledged and had not stored when it was killed
    killed_unstored: list[Turn]
    #: the segment files the killed worker left
    left: list[Path]


def schedule(rng: random.Random) -> list[tuple[int, int, int]]:
    """(user, turn number, worker) for every turn: users interleaved at random, each user's turns in
    order (a user waits for an answer before saying the next thing), each to a worker at random."""
    users = [user for user in range(USERS) for _ in range(TURNS)]
    rng.shuffle(users)
    said = dict.fromkeys(range(USERS), 0)
    plan = []
    for user in users:
        plan.append((user, said[user], rng.randrange(WORKERS)))
        said[user] += 1
    return plan


@pytest.fixture(scope="module")
def fleet(postgres: EmbeddedPostgres, postgres_dsn: str, tmp_path_factory: pytest.TempPathFactory
          ) -> Iterator[FleetRun]:
    root = tmp_path_factory.mktemp("fleet")
    homes = [root / f"worker-{i}" for i in range(WORKERS)]
    workers = start(homes, postgres_dsn)  # four at once on a fresh database: they migrate it together
    try:
        yield run(postgres, postgres_dsn, homes, workers)
    finally:
        for worker in workers:
            worker.stop()


def run(postgres: EmbeddedPostgres, dsn: str, homes: Sequence[Path], workers: list[Worker]) -> FleetRun:
    plan = schedule(random.Random(15))
    acked: dict[Turn, int] = {}

    def say(turns: Sequence[tuple[int, int, int]], *, avoid: int | None = None) -> None:
        for user, n, chosen in turns:
            if chosen == avoid:  # the balancer sends nothing to a worker that is down
                chosen = (chosen + 1 + n % (WORKERS - 1)) % WORKERS
            workers[chosen].say(user, n)
            acked[(user, n)] = chosen

    first, locked, down, back = PHASES
    say(plan[:first])
    with writes_held(dsn):
        say(plan[first:locked])
        unstored = [(user, n) for user, n, chosen in plan[first:locked] if chosen == KILLED]
        workers[KILLED].kill()
        left = sorted(workers[KILLED].queue_dir.glob("*.seg"))
        assert unstored and left  # the kill leaves acknowledged turns the server has not got
        assert not [turn for turn in unstored if turn[1] in stored_turns(dsn, turn[0])]
        with postgres.down():  # turns keep coming while the server is down (and the lock with it)
            say(plan[locked:down], avoid=KILLED)
            # restarted in its home: once the server is back, it takes over what it left
            workers[KILLED] = Worker(homes[KILLED], dsn)
            say(plan[down:back])
    # the workers' queues have been retrying all along
    say(plan[back:])
    assert all(worker.flush() for worker in workers)
    return FleetRun(dsn, workers, acked, unstored, left)


def test_every_acknowledged_turn_is_stored_exactly_once(fleet: FleetRun) -> None:
    assert len(fleet.acked) == USERS * TURNS
    for user in range(USERS):
        assert sorted(stored_turns(fleet.dsn, user)) == list(range(TURNS)), user_name(user)
    # counted in the database: no key twice (UNIQUE forbids it), and no turn twice under another key
    assert query(fleet.dsn, "SELECT key FROM memories GROUP BY location, key HAVING count(*) > 1") == []
    assert query(fleet.dsn, "SELECT user_id, user_text FROM memories GROUP BY location, user_id, user_text "
                            "HAVING count(*) > 1") == []
    assert query(fleet.dsn, "SELECT count(*) FROM memories")[0][0] == USERS * TURNS
    assert quarantined(fleet.dsn, range(USERS)) == 0  # none was refused (a turn stored twice would be)


def test_the_killed_workers_turns_were_stored_by_the_worker_restarted_in_its_home(fleet: FleetRun) -> None:
    for user, n in fleet.killed_unstored:
        assert n in stored_turns(fleet.dsn, user)
    assert not any(path.exists() for path in fleet.left)  # taken over, then deleted
    assert "took over" in fleet.workers[KILLED].log()


def test_every_user_recalls_their_own_facts_from_every_worker_never_anothers(fleet: FleetRun) -> None:
    rng = random.Random(0)
    for index, worker in enumerate(fleet.workers):
        for user in range(USERS):
            # facts this user told other workers, asked for with facts of two other users
            elsewhere = sorted(n for (u, n), chosen in fleet.acked.items() if u == user and chosen != index)
            own = {(user, n) for n in rng.sample(elsewhere, 3)}
            others = {((user + k) % USERS, rng.randrange(TURNS)) for k in (1, 2)}
            recalled = worker.recall(user, [fact_word(u, n) for u, n in sorted(own | others)])
            assert own <= recalled, (index, user)
            assert {u for u, _ in recalled} == {user}, (index, user)
            for owner, n in others:  # which this worker does recall, to their owners
                assert (owner, n) in worker.recall(owner, [fact_word(owner, n)]), (index, owner, n)


def test_the_fleet_shares_one_store_its_statistics_true_its_schema_migrated_once(fleet: FleetRun) -> None:
    assert query(fleet.dsn, "SELECT DISTINCT location FROM memories") == [(LOCATION,)]
    kept, counted = totals(fleet.dsn)
    assert kept == counted and counted[0] == USERS * TURNS
    # four workers started on a fresh database together: each version recorded once, as one migrated
    # it and the others found it done
    assert query(fleet.dsn, "SELECT version FROM schema_version ORDER BY version") == [
        (version,) for version in range(1, SCHEMA_VERSION + 1)]

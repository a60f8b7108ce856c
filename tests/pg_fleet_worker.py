"""Fleet workers for the PostgreSQL tests: each a real process running ctx-local on the PostgreSQL
backend in its own ``$HERMES_HOME``, as a Bridge worker behind a load balancer would, driven over its
stdin and stdout one JSON line per request (``python tests/pg_fleet_worker.py HOME``); and the test
side's handle on one (:class:`Worker`), with what the tests read from the database.

A worker *acknowledges* a turn once ``sync_turn`` has returned: the turn is then in the worker's
write-behind queue file, forced to the disk (the provider runs with ``fsync: true``). That is all a
worker promises its caller; the queue stores the turn on the server when it can. Every worker names
its store ``ctx-local/memory.db`` under its own home, so on the server they all share one location.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import select
import signal
import subprocess
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

import psycopg

from hermes_ctx_plugins import SessionInfo, Turn, storage
from hermes_ctx_plugins.config import load_config
from hermes_ctx_plugins.memory.local import LocalProvider
from hermes_ctx_plugins.memory.local.options import DEFAULT_PATH
from hermes_ctx_plugins.storage.postgres import DSN_ENV
from hermes_ctx_plugins.storage.postgres.schema import lock_id

FLEET_CONFIG = {"ctx_plugins": {"storage": {"backend": "postgres"}}}
SCHEMA = load_config(FLEET_CONFIG).plugins.storage.schema
#: the one location every worker's store has on the server (its path relative to its own home)
LOCATION = "home:" + DEFAULT_PATH
#: a planted fact's word: unique per user and turn, and nothing else in a turn looks like one
FACT = re.compile(r"\bkx(\d+)q(\d+)v\b")
#: how long a reply may take: generous, never part of what a test asserts
REPLY_SECONDS = 120.0


def fact_word(user: int, n: int) -> str:
    return f"kx{user}q{n:02d}v"


def user_name(user: int) -> str:
    return f"user-{user}"


def turn_text(user: int, n: int) -> str:
    """What user ``user`` says in turn ``n``: the words every user says, and one fact only they do."""
    return f"note {n} for the locker: my code word is {fact_word(user, n)}"


def session(user: str) -> SessionInfo:
    """``user``'s session: every user talks in one group chat, so only the user id keeps their memories apart."""
    return SessionInfo(session_id=f"session-{user}", user_id=user, chat_id="group-chat", platform="bridge")


# -- the worker process ------------------------------------------------------------------------------

def _turn(provider: LocalProvider, user: str, n: int, text: str) -> dict[str, Any]:
    provider.sync_turn(Turn(session=session(user), turn_number=n, user_text=text, assistant_text="Noted."))
    return {}


def _flush(provider: LocalProvider, timeout: float) -> dict[str, Any]:
    return {"done": provider.flush(timeout)}


def _recall(provider: LocalProvider, user: str, query: str) -> dict[str, Any]:
    return {"text": provider.prefetch(query, session=session(user))}


def _forget(provider: LocalProvider, user: str) -> dict[str, Any]:
    reports = provider.forget_user(user)
    return {"removed": sum(r.removed or 0 for r in reports), "errors": [r.error for r in reports if r.error]}


_HANDLERS: dict[str, Callable[..., dict[str, Any]]] = {
    "turn": _turn, "flush": _flush, "recall": _recall, "forget": _forget}


def _reply(message: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def serve(home: Path) -> None:
    provider = LocalProvider({"fsync": True}, hermes_home=home, config=load_config(FLEET_CONFIG))
    # as hermes starts a session: the queue starts, and takes over what a killed worker here left
    provider.on_session_start(SessionInfo(session_id="worker"))
    _reply({"ready": os.getpid()})
    for line in sys.stdin:
        request = json.loads(line)
        op = request.pop("op")
        if op == "stop":
            provider.shutdown()
            storage.release()
            _reply({})
            return
        _reply(_HANDLERS[op](provider, **request))


# -- the test's side ---------------------------------------------------------------------------------

class Worker:
    """One worker process in ``home`` (made if missing) on the server ``dsn``."""

    def __init__(self, home: Path, dsn: str) -> None:
        self.home = home
        home.mkdir(parents=True, exist_ok=True)
        env = {**os.environ, "HERMES_HOME": str(home), "HOME": str(home), DSN_ENV: dsn}
        log = os.open(home / "worker.log", os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        try:  # its log in a file: a pipe nobody reads would block a worker that logs much
            self.process = subprocess.Popen([sys.executable, __file__, str(home)], stdin=subprocess.PIPE,
                                            stdout=subprocess.PIPE, stderr=log, env=env, text=True)
        finally:
            os.close(log)
        self._ready = False

    @property
    def queue_dir(self) -> Path:
        return self.home / (DEFAULT_PATH + ".queue")

    def log(self) -> str:
        return (self.home / "worker.log").read_text(encoding="utf-8", errors="replace")

    def _read(self) -> dict[str, Any]:
        stdout = self.process.stdout
        assert stdout is not None
        ready, _, _ = select.select([stdout], [], [], REPLY_SECONDS)
        line = stdout.readline() if ready else ""
        if not line:
            raise AssertionError(f"worker {self.home.name} did not answer; its log:\n{self.log()[-3000:]}")
        reply: dict[str, Any] = json.loads(line)
        return reply

    def wait_ready(self) -> None:
        if not self._ready:
            self._read()
            self._ready = True

    def call(self, op: str, **args: Any) -> dict[str, Any]:
        self.wait_ready()
        stdin = self.process.stdin
        assert stdin is not None
        stdin.write(json.dumps({"op": op, **args}) + "\n")
        stdin.flush()
        return self._read()

    def say(self, user: int, n: int) -> None:
        """Sync user ``user``'s turn ``n`` (:func:`turn_text`); returns once the worker acknowledged it."""
        self.call("turn", user=user_name(user), n=n, text=turn_text(user, n))

    def flush(self, timeout: float = 90.0) -> bool:
        return bool(self.call("flush", timeout=timeout)["done"])

    def recall(self, user: int, words: Sequence[str]) -> set[tuple[int, int]]:
        """The planted facts (user, turn) the prefetch for user ``user`` asking about ``words`` shows."""
        text = self.call("recall", user=user_name(user), query="my locker code word " + " ".join(words))["text"]
        return {(int(u), int(n)) for u, n in FACT.findall(text)}

    def forget(self, user: int) -> dict[str, Any]:
        return self.call("forget", user=user_name(user))

    def kill(self) -> None:
        """SIGKILL: no handler runs, nothing is flushed or released but by the kernel."""
        self.process.send_signal(signal.SIGKILL)
        self._reap()

    def stop(self) -> None:
        """Shut down cleanly if it still runs (else it is only reaped)."""
        if self.process.poll() is None:
            try:
                self.call("stop")
            except (AssertionError, OSError):
                self.process.send_signal(signal.SIGKILL)
        self._reap()

    def _reap(self) -> None:
        for stream in (self.process.stdin, self.process.stdout):
            if stream is not None:
                with contextlib.suppress(OSError):
                    stream.close()
        self.process.wait(REPLY_SECONDS)


def start(homes: Sequence[Path], dsn: str) -> list[Worker]:
    """Workers in ``homes``, started together (as a fleet is), each ready when this returns."""
    workers = [Worker(home, dsn) for home in homes]
    for worker in workers:
        worker.wait_ready()
    return workers


def query(dsn: str, sql: str, args: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
    """Rows of ``sql`` on the fleet's schema, read by a connection of its own."""
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(f"SET search_path TO {SCHEMA}")
        return conn.execute(sql, args).fetchall()


def stored_turns(dsn: str, user: int) -> list[int]:
    """The turn numbers of user ``user``'s stored turns, every copy, in id order."""
    rows = query(dsn, "SELECT user_text FROM memories WHERE location = %s AND user_id = %s AND kind = 'turn' "
                      "ORDER BY id", (LOCATION, user_name(user)))
    return [int(FACT.findall(text)[0][1]) for (text,) in rows]


def quarantined(dsn: str, users: Iterable[int]) -> int:
    """How many queued records of ``users`` the store refused (a turn stored twice would be one of
    them, were keys not idempotent)."""
    return int(query(dsn, "SELECT count(*) FROM quarantine WHERE location = %s AND user_id = ANY(%s)",
                     (LOCATION, [user_name(user) for user in users]))[0][0])


def totals(dsn: str) -> tuple[tuple[int, int], tuple[int, int]]:
    """The store's statistics as kept (memories, words) by its writes, and as counted from its rows:
    BM25 ranks with the first, so they must stay equal whatever crashed or was replayed."""
    kept = query(dsn, "SELECT documents, words FROM memory_totals WHERE location = %s", (LOCATION,))
    counted = query(dsn, "SELECT count(*), coalesce(sum(length), 0) FROM memories WHERE location = %s", (LOCATION,))
    return (int(kept[0][0]), int(kept[0][1])) if kept else (0, 0), (int(counted[0][0]), int(counted[0][1]))


@contextlib.contextmanager
def writes_held(dsn: str) -> Iterator[None]:
    """Hold the fleet store's write lock, as another worker's long write would: every worker's batch
    (and forget) waits for it, gives up after its busy timeout (reason ``locked``) and stays queued.
    The server going down cuts the connection, which releases the lock as well."""
    conn = psycopg.connect(dsn)
    try:
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (lock_id("hermes-ctx memories", SCHEMA, LOCATION),))
        yield
    finally:
        with contextlib.suppress(psycopg.Error):
            conn.rollback()
        conn.close()


if __name__ == "__main__":
    serve(Path(sys.argv[1]))

"""ctx-local under hostile values (issue 13): the model's arguments are checked at the tool boundary
and never lock the store or count against the provider; no secret reaches any file, not even the
queue's; a tool's write outlasts another process's drain and says truly what happened when it
cannot; and arbitrary text and ints through every tool, ``sync_turn`` and ``prefetch`` leave the
store writable by another process."""

from __future__ import annotations

import itertools
import json
import pickle
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from local_helpers import home

from hermes_ctx_plugins import InvalidSession, SessionInfo, Turn, load_host
from hermes_ctx_plugins.cli import EXIT_INPUT, main
from hermes_ctx_plugins.memory.local import LocalProvider
from hermes_ctx_plugins.memory.local import provider as provider_module
from hermes_ctx_plugins.memory.local import queue as queue_module
from hermes_ctx_plugins.memory.local.queue import SUFFIX
from hermes_ctx_plugins.storage.sqlite.memory import LocalStore

ALICE = SessionInfo(session_id="a-1", user_id="alice", chat_id="dm")
BOB = SessionInfo(session_id="b-1", user_id="bob", chat_id="dm")


def say(provider: LocalProvider, session: SessionInfo, text: str, n: int = 1, assistant: str = "noted") -> None:
    provider.sync_turn(Turn(session=session, turn_number=n, user_text=text, assistant_text=assistant))


def tool(provider: LocalProvider, name: Any, args: Any, session: SessionInfo = ALICE) -> dict[str, Any]:
    """The tool's answer, as the model reads it (valid JSON, sendable as UTF-8)."""
    answer = provider.handle_tool_call(name, args, session=session)
    answer.encode("utf-8")
    result: dict[str, Any] = json.loads(answer)
    return result


def texts(provider: LocalProvider, query: str, session: SessionInfo = ALICE) -> list[str]:
    answer = tool(provider, "ctx_memory_search", {"query": query, "limit": 20}, session)
    assert "results" in answer, answer
    return [hit["text"] for hit in answer["results"]]


# ------------------------------------------------------------------------------------ other processes

PROBE = textwrap.dedent("""
    import sqlite3, sys
    for line in sys.stdin:
        try:
            conn = sqlite3.connect(line.rstrip("\\n"), timeout=1.0, isolation_level=None)
            try:
                conn.execute("BEGIN IMMEDIATE")
                conn.execute("ROLLBACK")
            finally:
                conn.close()
            print("ok", flush=True)
        except Exception as exc:
            print(f"{type(exc).__name__}: {exc}", flush=True)
""")


class WriteProbe:
    """Another process that, when asked, takes the store's write lock with a 1 s busy timeout: a
    liveness check (the store is not left locked), not a measurement of our code."""

    def __init__(self) -> None:
        self.process = subprocess.Popen([sys.executable, "-c", PROBE], stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, text=True)

    def writable(self, path: Path) -> None:
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write(f"{path}\n")
        self.process.stdin.flush()
        answer = self.process.stdout.readline().strip()
        assert answer == "ok", f"another process could not write {path} within 1 s: {answer}"

    def close(self) -> None:
        self.process.communicate("")


@pytest.fixture(scope="module")
def probe() -> Iterator[WriteProbe]:
    checker = WriteProbe()
    yield checker
    checker.close()


HOLDER = textwrap.dedent("""
    import sqlite3, sys, time
    conn = sqlite3.connect(sys.argv[1], isolation_level=None)
    conn.execute("BEGIN IMMEDIATE")
    conn.execute("INSERT INTO meta VALUES ('held', 'by another process') ON CONFLICT DO NOTHING")
    print("locked", flush=True)
    if sys.argv[2] == "until-told":
        sys.stdin.readline()
    else:
        time.sleep(float(sys.argv[2]))
    conn.execute("COMMIT")
    print("released", flush=True)
""")


class Holder:
    """Another process holding the database's write lock, for ``hold`` seconds or until told."""

    def __init__(self, path: Path, hold: str) -> None:
        self.process = subprocess.Popen([sys.executable, "-c", HOLDER, str(path), hold], stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, text=True)
        assert self.process.stdout is not None and self.process.stdout.readline() == "locked\n"

    def release(self) -> str:
        out, _ = self.process.communicate("go\n", timeout=60)
        assert self.process.returncode == 0
        return out


# ------------------------------------------------------------------------------------ 1: the tool boundary

SQLITE_MAX = "9,223,372,036,854,775,807"
EACH_ID = f"a non-empty list of at most 100 items, each a whole number from 1 to {SQLITE_MAX}"


def _deep(levels: int) -> list[Any]:
    nested: list[Any] = []
    for _ in range(levels):
        nested = [nested]
    return nested


BAD_CALLS: list[tuple[Any, Any, str]] = [
    ("ctx_memory_forget", {"ids": [2**63]}, f"'ids' must be {EACH_ID}, got [9223372036854775808]"),
    ("ctx_memory_forget", {"ids": 2**63}, f"'ids' must be {EACH_ID}, got 9223372036854775808"),
    ("ctx_memory_forget", {"ids": [-2**63 - 1]}, "got [-9223372036854775809]"),
    ("ctx_memory_forget", {"ids": [0]}, "got [0]"),
    ("ctx_memory_forget", {"ids": [10**5000]}, "got [a whole number of about 5,001 digits]"),
    ("ctx_memory_forget", {"ids": list(range(1, 102))}, "got a list of 101 items"),
    ("ctx_memory_forget", {"ids": [1, "2"]}, "got [1, '2'] (item 1 is '2')"),
    ("ctx_memory_forget", {"ids": [True]}, "got [true]"),
    ("ctx_memory_forget", {"ids": []}, "got []"),
    ("ctx_memory_forget", {"ids": _deep(100_000)}, "got [a list of 1 item]"),
    ("ctx_memory_forget", {}, f"'ids' is required: {EACH_ID}"),
    ("ctx_memory_search", {"query": "x" * 1_000_000},
     "'query' must be non-empty text of at most 2,000 characters, got 'xxxx"),
    ("ctx_memory_search", {"query": "kettle", "limit": 2**63},
     "'limit' must be a whole number from 1 to 20, got 9223372036854775808"),
    ("ctx_memory_search", {"query": "kettle", "limit": 2.5}, "got 2.5"),
    ("ctx_memory_search", {"query": {"$ne": 1}}, "got an object with 1 key"),
    ("ctx_memory_remember", {"fact": "tea, no sugar", "scope": "\ud800"},
     "'scope' must be 'chat' or 'user', got '\\ud800'"),
    ("ctx_memory_remember", {"fact": "\ud800" * 5000}, "(5,000 characters)"),
    ("ctx_memory_remember", {"fact": " \n\t"}, "'fact' must be non-empty text of at most 2,000 characters"),
    ("ctx_memory_remember", [1, 2], "the arguments must be a JSON object, got [1, 2]"),
    (["ctx_memory_forget"], {"ids": [1]}, "has no tool named ['ctx_memory_forget']; it has ctx_memory_search"),
]


def test_the_models_bad_arguments_are_its_errors_never_the_providers_and_never_lock_the_store(
        probe: WriteProbe) -> None:
    """Issue 13 #1: ``ctx_memory_forget(ids=[2**63])`` left a write transaction open (every process
    then met "database is locked") and raised, which the host counted against ctx-local."""
    host = load_host({"ctx_plugins": {"memory": {"providers": ["ctx-local"]}, "failure_threshold": 3}})
    try:
        provider = host.memory_providers[0]
        assert isinstance(provider, LocalProvider)
        host.turn_finalized(Turn(session=ALICE, turn_number=1, user_text="my bike lock code is walrus",
                                 assistant_text="noted"))
        assert provider.flush(10)
        [memory_id] = [hit["id"] for hit in tool(provider, "ctx_memory_search", {"query": "bike lock"})["results"]]
        for name, args, words in BAD_CALLS:  # through the host's isolator, as hermes calls it
            answer = json.loads(host.isolator.call("memory:ctx-local", provider.handle_tool_call, name, args,
                                                   session=ALICE, default='{"raised": true}'))
            assert answer.get("success") is False and words in answer["error"], (name, answer)
            probe.writable(provider.path)
        assert host.isolator.health("memory:ctx-local").failures == 0
        assert host.isolator.status("memory:ctx-local") == "ok"
        # the owner's own good calls still work, and the next turn is stored
        assert tool(provider, "ctx_memory_forget", {"ids": [memory_id]}) == {"success": True,
                                                                             "forgotten": [memory_id]}
        host.turn_finalized(Turn(session=ALICE, turn_number=2, user_text="the next turn about otters",
                                 assistant_text="noted"))
        assert provider.flush(10) and texts(provider, "otters") and not texts(provider, "bike lock")
    finally:
        host.shutdown()


def test_an_integer_user_id_is_its_text_and_anything_else_is_refused_by_name() -> None:
    """A Bridge giving a platform's numeric id (``user_id=4242``) reached every provider as an int: each failed inside
    its write, the user's turns were never stored, and ctx-local was suspended for every user (a red-team pass)."""
    host = load_host({"ctx_plugins": {"memory": {"providers": ["file", "ctx-local"]}}})
    try:
        provider = next(p for p in host.memory_providers if isinstance(p, LocalProvider))
        numeric = SessionInfo(session_id="n-1", user_id=4242, chat_id=-1001)  # type: ignore[arg-type]
        assert (numeric.user_id, numeric.chat_id) == ("4242", "-1001")
        for n in range(3):
            host.turn_finalized(Turn(session=numeric, turn_number=n, user_text=f"my locker number is 77{n}",
                                     assistant_text="noted"))
        assert provider.flush(10)
        same = SessionInfo(session_id="n-2", user_id="4242", chat_id="-1001")
        assert len(texts(provider, "locker number", same)) == 3  # stored, and "4242" is the same user
        assert texts(provider, "locker number", BOB) == []
        assert host.isolator.status("memory:ctx-local") == "ok"
    finally:
        host.shutdown()
    for field, bad in (("user_id", None), ("user_id", b"4242"), ("user_id", 4242.0), ("chat_id", True),
                       ("session_id", ["s"])):
        with pytest.raises(InvalidSession, match=f"SessionInfo.{field} must be a str, or an int read as its text, got"):
            SessionInfo(**{"session_id": "s", field: bad})
    with pytest.raises(InvalidSession, match="an integer of 16,610 bits is no id") as refused:
        SessionInfo(session_id="s", user_id=10**5000)  # (str() of it raises ValueError)
    again = pickle.loads(pickle.dumps(refused.value))  # a process pool's error comes back whole
    assert isinstance(again, InvalidSession) and again.field == "user_id" and str(again) == str(refused.value)

    class PlatformId:  # numpy's integers and the like: an integer by __index__
        def __index__(self) -> int:
            return 4242

    assert SessionInfo(session_id="s", user_id=PlatformId()).user_id == "4242"  # type: ignore[arg-type]


def test_the_cli_refuses_an_out_of_range_id_by_name(make: Any, probe: WriteProbe,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    provider = make()
    say(provider, ALICE, "a turn about newts")
    assert provider.flush(10)
    provider.shutdown()
    for bad in (str(2**63), "0", str(-2**63 - 1)):
        assert main(["memory", "forget", "--", bad]) == EXIT_INPUT
        err = capsys.readouterr().err
        assert f"memory ids are whole numbers from 1 to {SQLITE_MAX}, got {bad}" in err and "Traceback" not in err
        probe.writable(provider.path)
    assert main(["memory", "forget", "1"]) == 0
    assert "forgot 1 memories: #1" in capsys.readouterr().out


def test_the_cli_forgets_no_memory_for_an_id_written_in_look_alike_digits(make: Any,
                                                                         capsys: pytest.CaptureFixture[str]) -> None:
    """Python's int() reads fullwidth and other scripts' digits, "1_0", "+6" and " 7 ": ``memory forget`` given a
    fullwidth 3 deleted #3 (a red-team pass), an id written as no listing writes it. Only ASCII digits are an id; the
    others are refused by name, and nothing goes."""
    provider = make()
    for n in range(12):
        say(provider, ALICE, f"turn {n} about newts")
    assert provider.flush(10)
    provider.shutdown()
    for bad in ("\uff13", "\u0665", "\u0967", "1_0", "+6", " 7 ", "1e1"):
        with pytest.raises(SystemExit) as exited:
            main(["memory", "forget", "-y", "--", bad])
        err = capsys.readouterr().err
        assert exited.value.code == EXIT_INPUT and f"got {bad!r}" in err and "ASCII digits" in err, err
    assert main(["memory", "forget", "-y", "3"]) == 0 and "forgot 1 memories: #3" in capsys.readouterr().out
    assert main(["memory", "forget", "-y", "1", "5", "6", "7", "10"]) == 0
    assert "forgot 5 memories" in capsys.readouterr().out  # all still there: none went to a look-alike


def test_the_tool_schemas_state_the_bounds_the_tools_enforce(make: Any) -> None:
    schemas = {s["function"]["name"]: s["function"]["parameters"]["properties"] for s in make().get_tool_schemas()}
    assert schemas["ctx_memory_forget"]["ids"]["items"] == {"type": "integer", "minimum": 1, "maximum": 2**63 - 1}
    assert schemas["ctx_memory_forget"]["ids"]["maxItems"] == 100
    assert schemas["ctx_memory_search"]["query"]["maxLength"] == 2_000
    assert schemas["ctx_memory_remember"]["fact"]["maxLength"] == 2_000
    assert schemas["ctx_memory_remember"]["scope"]["enum"] == ["chat", "user"]


def test_arguments_at_the_bounds_are_accepted(make: Any) -> None:
    provider = make()
    saved = tool(provider, "ctx_memory_remember", {"fact": "f" * 1_999 + "\ud800", "scope": "user"})
    assert saved["success"] is True
    assert tool(provider, "ctx_memory_forget", {"ids": [2**63 - 1, *range(1, 100)]}) == {
        "success": True, "forgotten": [saved["id"]], "not_found": sorted({2**63 - 1, *range(1, 100)} - {saved["id"]})}
    assert tool(provider, "ctx_memory_search", {"query": "q" * 2_000, "limit": 20})["results"] == []
    assert tool(provider, "ctx_memory_forget", {"ids": 7})["not_found"] == [7]  # one id: a list of one
    assert tool(provider, "ctx_memory_search", {"query": "tea", "limit": None})["results"] == []  # null: left out


# ------------------------------------------------------------------------------------ 5: redaction

PEM_BODY = ("MIIEowIBAAKCAQEAx3kQ9vZt2Lr8pWb7Yc1NfJ5sH0gUeTqA4mKiR6oXjVdC2yBn\n"
            "q8PzF3lW9tGaE7rSx1cHvLb5uYk0JdNwM4eQiTfO2pXgZ6hRjA8sK3nVyU1mCbDt\n")
SECRETS = {  # fourteen kinds, every value fake
    "aws-access-key": "AKIAZ7Q4M2XK9PLR3TVW",
    "aws-secret": "wJ8rXUtnFEMIaK7MDqNGbPxRfiCYzQ8ku2Lx9TpA",
    "github-token": "ghp_R8mK2pQ9vX4nL7tZ1wB6yH3jC5fD0sGaE2uN",
    "openai-key": "sk-proj-Qm7Xv2Lp9Rk4Tn8Wb1Zc6Hy3Js5Fd0GaE2uNoP4iK",
    "anthropic-key": "sk-ant-api03-Zr4Kp8Xm2Qv6Ln9Tb1Wc7Hy3Js5Fd0GaE2uNoP4iKx",
    "slack-token": "xoxb-2048193746-5820937461-Rk4Tn8Wb1Zc6Hy3Js5Fd0GaE",
    "stripe-key": "sk_live_51Hq7Rk4Tn8Wb1Zc6Hy3Js5Fd0",
    "google-api-key": "AIzaSyD8kP2qX9vL4nT7wZ1bR6yH3jC5fM0sGaE",
    "jwt": "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ1MTIzIiwicm9sZSI6ImFkbWluIn0.Qm7Xv2Lp9Rk4Tn8Wb1Zc6Hy3Js5Fd0GaE2uN",
    "private-key": f"-----BEGIN RSA PRIVATE KEY-----\n{PEM_BODY}-----END RSA PRIVATE KEY-----",
    "url-password": "Tr0ub4dorX3qZ9",
    "auth-header": "b7Kq2Xm9Lp4Rv8Tn1Wz6Hc3Jy5",
    "password": "Zq8kLm2pWx7Rt",
    "huggingface-token": "hf_Rk4Tn8Wb1Zc6Hy3Js5Fd0GaE2uNoP4iKxQm",
}
PASTE = f"""sprocketmarker: here is my whole setup, keep it in mind.
AWS key {SECRETS['aws-access-key']} and aws_secret_access_key = {SECRETS['aws-secret']}
export GITHUB_TOKEN={SECRETS['github-token']}
OPENAI_API_KEY="{SECRETS['openai-key']}"
anthropic: {SECRETS['anthropic-key']}
slack bot {SECRETS['slack-token']}
stripe {SECRETS['stripe-key']}
maps key {SECRETS['google-api-key']}
session {SECRETS['jwt']}
{SECRETS['private-key']}
db: postgres://admin:{SECRETS['url-password']}@db.internal:5432/app
"""
ECHO = f"""Got it (sprocketmarker). I will call the API with
curl -H "Authorization: Bearer {SECRETS['auth-header']}" https://api.internal
and log in with: my password is {SECRETS['password']}; HF_TOKEN={SECRETS['huggingface-token']}"""


SCANNER = textwrap.dedent("""
    import json, sys
    from pathlib import Path
    root, pieces = Path(sys.argv[1]), json.load(sys.stdin)
    found = []
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        data = path.read_bytes()
        for kind, parts in pieces.items():
            if any(p.encode() in data or json.dumps(p)[1:-1].encode() in data for p in parts):
                found.append([str(path.relative_to(root)), kind])
    print(json.dumps(found))
""")


def plaintext_secrets(root: Path) -> list[list[str]]:
    """[file, secret kind] for every secret found in any file under ``root``, as it is or
    JSON-escaped (a queue line escapes newlines). Read by another process: opening and closing the
    database's files in this one would drop the POSIX locks SQLite holds on them here."""
    pieces = {kind: [p for p in value.split("\n") if len(p) >= 12] for kind, value in SECRETS.items()}
    scan = subprocess.run([sys.executable, "-c", SCANNER, str(root)], input=json.dumps(pieces), capture_output=True,
                          text=True, check=True, timeout=60)
    found: list[list[str]] = json.loads(scan.stdout)
    return found


def test_no_planted_secret_reaches_any_file_neither_queued_nor_stored(make: Any) -> None:
    """Issue 13 #5: the queue's segment files held turns unredacted (14 of 14 planted kinds)."""
    assert all(len(p) >= 12 for v in SECRETS.values() for p in v.split("\n") if p)  # each is findable
    provider = make()
    say(provider, BOB, "an ordinary first turn")
    assert provider.flush(10)
    holder = Holder(provider.path, "until-told")  # the writer cannot store: the turn waits in its file
    try:
        say(provider, ALICE, PASTE, assistant=ECHO)
        [segment] = provider.queue_dir.glob(f"*{SUFFIX}")
        assert b"sprocketmarker" in segment.read_bytes() and b"[REDACTED:" in segment.read_bytes()
        assert plaintext_secrets(home()) == []
    finally:
        holder.release()
    assert provider.flush(10)
    [stored] = texts(provider, "sprocketmarker")
    assert stored.count("[REDACTED:") >= 10 and "postgres://admin:" in stored
    assert plaintext_secrets(home()) == []
    provider.shutdown()
    assert plaintext_secrets(home()) == []


def test_a_secret_across_the_cut_of_a_huge_turn_is_redacted_whole(make: Any) -> None:
    provider = make(max_turn_chars=1_000)
    key = SECRETS["openai-key"]
    say(provider, ALICE, "cutmarker " + "a" * 985 + f" {key} " + "b" * 5_000)
    assert provider.flush(10)
    [stored] = texts(provider, "cutmarker")
    assert key[:12] not in stored and plaintext_secrets(home()) == []
    store = LocalStore(provider.path)
    try:
        [memory] = store.memories(user_id="alice")
    finally:
        store.close()
    assert memory.user_text.endswith("more characters not stored]") and len(memory.user_text) < 1_100


# ------------------------------------------------------------------------------------ 9: tool writes and locks


def test_a_tool_write_waits_out_another_processs_write_and_succeeds(make: Any) -> None:
    """Issue 13 #9: tool writes gave up after 0.25 s while another process held the write lock."""
    provider = make()
    say(provider, ALICE, "a first turn about herons")
    assert provider.flush(10)
    holder = Holder(provider.path, "1.5")  # holds it for 1.5 s, then commits
    saved = tool(provider, "ctx_memory_remember", {"fact": "Prefers herons to egrets."})
    assert saved["success"] is True and holder.release() == "released\n"
    holder = Holder(provider.path, "1.5")
    assert tool(provider, "ctx_memory_forget", {"ids": [saved["id"]]})["forgotten"] == [saved["id"]]
    assert holder.release() == "released\n"
    assert [t for t in texts(provider, "herons egrets") if "Prefers" in t] == []


def test_a_tool_write_that_cannot_get_the_lock_says_nothing_was_saved_and_nothing_else(
        make: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(provider_module, "TOOL_BUSY_SECONDS", 0.2)  # not the real 10 s, to keep the test short
    provider = make()
    say(provider, ALICE, "a turn about puffins")
    assert provider.flush(10)
    [memory_id] = [hit["id"] for hit in tool(provider, "ctx_memory_search", {"query": "puffins"})["results"]]
    holder = Holder(provider.path, "until-told")
    try:
        refused = tool(provider, "ctx_memory_remember", {"fact": "Likes puffins best."})
        assert refused["success"] is False
        assert refused["error"].startswith(f"the fact was not saved: another process kept the memory database "
                                           f"{provider.path} locked for more than 0.2 s")
        assert "try again" in refused["error"] and "queue" not in refused["error"]
        kept = tool(provider, "ctx_memory_forget", {"ids": [memory_id]})
        assert kept["success"] is False and kept["error"].startswith("nothing was deleted: another process kept")
        assert texts(provider, "puffins"), "recall still works meanwhile"
    finally:
        holder.release()
    assert tool(provider, "ctx_memory_remember", {"fact": "Likes puffins best."})["success"] is True
    assert tool(provider, "ctx_memory_forget", {"ids": [memory_id]})["forgotten"] == [memory_id]


STUCK_WRITER = textwrap.dedent("""
    import sys, threading, time
    from pathlib import Path
    from hermes_ctx_plugins import SessionInfo, Turn
    from hermes_ctx_plugins.memory.local import LocalProvider
    from hermes_ctx_plugins.storage.sqlite import memory as store

    stuck = threading.Event()
    def never_stores(self, rows, **kwargs):
        stuck.set()
        time.sleep(3600)
    store.LocalStore.write_rows = never_stores
    provider = LocalProvider({}, hermes_home=Path(sys.argv[1]))
    session = SessionInfo(session_id="backlog", user_id="carol")
    filler = " ".join(f"word{i}" for i in range(300))
    for n in range(int(sys.argv[2])):
        provider.sync_turn(Turn(session=session, turn_number=n, user_text=f"backlog turn {n} {filler}",
                                assistant_text=filler))
    stuck.wait(60)
    print("queued", flush=True)
    time.sleep(3600)
""")
REPLAYER = textwrap.dedent("""
    import sys
    from pathlib import Path
    from hermes_ctx_plugins import SessionInfo
    from hermes_ctx_plugins.memory.local import LocalProvider

    provider = LocalProvider({}, hermes_home=Path(sys.argv[1]))
    provider.on_session_start(SessionInfo(session_id="replayer"))  # replays the dead process's backlog
    print("done" if provider.flush(120) else "not drained", flush=True)
    provider.shutdown()
""")


def test_tool_writes_succeed_while_another_process_drains_a_backlog(make: Any) -> None:
    provider = make()
    say(provider, ALICE, "a turn about grebes")
    assert provider.flush(10)
    backlog = 1_000
    dead = subprocess.Popen([sys.executable, "-c", STUCK_WRITER, str(home()), str(backlog)],
                            stdout=subprocess.PIPE, text=True)
    assert dead.stdout is not None and dead.stdout.readline() == "queued\n"
    dead.kill()
    dead.communicate()
    replayer = subprocess.Popen([sys.executable, "-c", REPLAYER, str(home())], stdout=subprocess.PIPE, text=True)
    saved = []
    try:
        for n in itertools.count():  # while it drains (and a few calls after, on a slow machine)
            fact = tool(provider, "ctx_memory_remember", {"fact": f"Grebe sighting number {n}."})
            assert fact["success"] is True, fact
            forgot = tool(provider, "ctx_memory_forget", {"ids": [fact["id"]]})
            assert forgot["success"] is True, forgot
            saved.append(fact["id"])
            if replayer.poll() is not None and n >= 5:
                break
    finally:
        out, _ = replayer.communicate(timeout=180)
    assert out == "done\n"
    store = LocalStore(provider.path)
    try:
        assert sum(1 for _ in store.memories(user_id="carol")) == backlog  # the drain lost nothing either
    finally:
        store.close()


def test_a_drain_transaction_holds_at_most_a_megabyte_of_turns(make: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """So another process's write waits a bounded time, whatever ``batch_size`` and the turns' size:
    in this process's drain and in the replay of a stopped process's queue file."""
    sizes: list[int] = []
    write_rows = LocalStore.write_rows

    def measured(self: LocalStore, rows: Any, **kwargs: Any) -> int:
        stored = write_rows(self, rows, **kwargs)
        sizes.append(sum(len(row[6]) + len(row[7]) for row in rows))  # the user and assistant texts
        return stored

    monkeypatch.setattr(LocalStore, "write_rows", measured)
    big = "zebra " * 20_000  # 120 kB a side
    first = make(batch_size=10_000, drain_timeout_seconds=0)
    say(first, ALICE, "an opening turn")
    assert first.flush(10)
    for stopped in (False, True):
        holder = Holder(first.path, "until-told")  # the turns pile up in the queue file meanwhile
        for n in range(12):
            say(first, ALICE, f"bulky turn {stopped} {n} {big}", n, assistant=big)
        if stopped:
            first.shutdown()  # what it could not store stays in its file, for the next start to replay
        sizes.clear()
        holder.release()
        drainer = make(batch_size=10_000) if stopped else first  # after a stop: the next start, replaying
        drainer.on_session_start(ALICE)
        assert drainer.flush(30)
        assert len(sizes) >= 3 and max(sizes) <= queue_module.BATCH_BYTES, sizes
        assert sum(sizes) == 12 * 2 * len(big) + sum(len(f"bulky turn {stopped} {n} ") for n in range(12))


# ------------------------------------------------------------------------------------ properties

HOSTILE_STRINGS = ["", " ", "*", "%", "../x", "x" * 10_000, "m\ud800", "\udfff", "'; DROP TABLE memories;--",
                   '" OR 1=1 --', "NEAR(a b)", "a\x00b", "\\", "张伟", "hermes"]
HOSTILE_INTS = [2**63, 2**63 - 1, -2**63, -2**63 - 1, 0, -1, 1]
CHARS = st.one_of(st.characters(exclude_categories=[]), st.characters(categories=["Cs"]),
                  st.sampled_from(list("\"'*%\\\x00:^()-")))
TEXT = st.one_of(st.text(CHARS, max_size=40), st.sampled_from(HOSTILE_STRINGS))
# ints of 5,000 digits too (made by the strategy: hypothesis cannot print one in its own description)
INTS = st.one_of(st.integers(), st.sampled_from(HOSTILE_INTS), st.sampled_from([1, -1]).map(lambda s: s * 10**5000))
JSON = st.recursive(st.one_of(st.none(), st.booleans(), INTS, st.floats(), TEXT),
                    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(TEXT, inner, max_size=3)),
                    max_leaves=8)
ARGUMENTS = {
    "ctx_memory_search": st.fixed_dictionaries({"query": TEXT}, optional={"limit": st.one_of(INTS, JSON)}),
    "ctx_memory_remember": st.fixed_dictionaries({"fact": TEXT}, optional={"scope": st.one_of(TEXT, JSON)}),
    "ctx_memory_forget": st.fixed_dictionaries({"ids": st.one_of(st.lists(INTS, max_size=5), INTS, JSON)}),
}


@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalProvider]:
    provider = LocalProvider({}, hermes_home=tmp_path_factory.mktemp("hostile"))
    provider.sync_turn(Turn(session=ALICE, turn_number=0, user_text="seed turn", assistant_text="ok"))
    assert provider.flush(10)
    yield provider
    provider.shutdown()


_example = itertools.count()


@settings(deadline=None)
@given(name=st.sampled_from(sorted(ARGUMENTS)), data=st.data(), extra=st.dictionaries(TEXT, JSON, max_size=2),
       user=TEXT, deployment=TEXT)
def test_any_tool_arguments_are_answered_and_leave_the_store_writable(
        shared: LocalProvider, probe: WriteProbe, name: str, data: st.DataObject, extra: dict[str, Any],
        user: str, deployment: str) -> None:
    args = {**extra, **data.draw(ARGUMENTS[name])}
    session = SessionInfo(session_id="s\ud800", user_id=user, chat_id=user[:3], deployment=deployment)
    answer = tool(shared, name, args, session)
    assert "error" not in answer or (answer["success"] is False and isinstance(answer["error"], str))
    probe.writable(shared.path)


@settings(deadline=None)
@given(user_text=TEXT, assistant_text=TEXT, number=INTS, user=TEXT, chat=TEXT, deployment=TEXT, question=TEXT)
@example(user_text="私钥", assistant_text="", number=0, user="", chat="", deployment="", question="")  # CI, once
def test_any_turn_is_stored_and_recalled_and_leaves_the_store_writable(
        shared: LocalProvider, probe: WriteProbe, user_text: str, assistant_text: str, number: int, user: str,
        chat: str, deployment: str, question: str) -> None:
    marker = f"hostilemark{next(_example)}"
    session = SessionInfo(session_id=f"{user}\ud800{chat}", user_id=user, chat_id=chat, deployment=deployment)
    # the marker first: text after a label such as "私钥" (private key) is rightly redacted as its value
    shared.sync_turn(Turn(session=session, turn_number=number, user_text=f"{marker} {user_text} ",
                          assistant_text=assistant_text))
    assert shared.flush(10)
    probe.writable(shared.path)
    for asked in (question, f"{question} {marker}"):
        shared.prefetch(asked, session=session).encode("utf-8")  # text hermes can send
    assert texts(shared, marker, session), "the turn was stored, in its owner's scope"
    probe.writable(shared.path)


@pytest.mark.parametrize("how", ["deleted", "replaced"])
def test_a_memory_database_deleted_or_replaced_while_open_keeps_what_is_stored_after(tmp_path: Path, how: str) -> None:
    """The open connection kept writing into a deleted file: every memory stored after the deletion was recalled
    in the process and gone when it ended, the writes acknowledged (their queue records retired)."""
    from hermes_ctx_plugins.storage.sqlite.memory import LocalStore
    from hermes_ctx_plugins.testing.storage_contract import found, record
    path = tmp_path / "memory.db"
    store = LocalStore(path)
    store.write([record("the kettle before 7c1d")])
    for leftover in tmp_path.glob("memory.db*"):
        leftover.unlink()
    if how == "replaced":
        LocalStore(path).close()  # another file at the path (a restore from a backup)
    store.write([record("the kettle after 9e4b")])
    assert found(store, "kettle") == ["the kettle after 9e4b"]
    store.close()
    reopened = LocalStore(path)
    assert found(reopened, "kettle") == ["the kettle after 9e4b"]
    reopened.close()

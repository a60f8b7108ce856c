"""The memory store under real processes: concurrent writers, a polling reader, and SIGKILLed writers.

The workers are separate Python interpreters (``python -c``), so the lock and the atomic rename are
exercised across processes exactly as hermes sessions and ours would share a home. Each test prints its
figures (run ``pytest -s`` to see them).
"""

from __future__ import annotations

import json
import random
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from hermes_ctx_plugins.memory.file.store import DELIMITER, MemoryFile, Op

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals and flock")

WRITERS, ADDS = 8, 50
KILL_RUNS = 60

# Each writer adds ADDS distinct entries, one batch each, after every writer is ready (stdin "go").
WRITER = """
import sys
from pathlib import Path
from hermes_ctx_plugins.memory.file.store import MemoryFile, Op
path, writer, adds = Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
memory = MemoryFile(path, target="memory", char_limit=10**6)
print("ready", flush=True)
sys.stdin.readline()
for i in range(adds):
    memory.apply([Op("add", f"w{writer}-{i:03d} " + "x" * 20)])
"""

# Polls the file until the stop file appears, parsing every read on its own (no store code) and
# recording torn reads: undecodable, not canonical, an unknown entry, a writer's entries out of
# order or with a gap, or fewer entries than an earlier read saw (an add that was lost).
READER = r"""
import json, re, sys
from pathlib import Path
path, stop = Path(sys.argv[1]), Path(sys.argv[2])
entry = re.compile(r"w(\d+)-(\d{3}) x{20}")
reads = torn = most = 0
examples = []
print("ready", flush=True)
while True:
    stopping = stop.exists()
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raw = b""
    reads += 1
    problem = None
    try:
        text = raw.decode("utf-8")
        pieces = text.split("\n\u00a7\n") if text else []
        seen = {}
        for piece in pieces:
            m = entry.fullmatch(piece)
            if m is None:
                problem = f"bad entry {piece[:40]!r}"
                break
            w, i = int(m.group(1)), int(m.group(2))
            if i != seen.get(w, -1) + 1:
                problem = f"writer {w}: entry {i} after {seen.get(w, -1)}"
                break
            seen[w] = i
        if problem is None and len(pieces) < most:
            problem = f"{len(pieces)} entries after {most}"
        most = max(most, len(pieces))
    except UnicodeDecodeError as exc:
        problem = str(exc)
    if problem is not None:
        torn += 1
        examples = (examples + [problem])[:5]
    if stopping:
        break
print(json.dumps({"reads": reads, "torn": torn, "examples": examples, "final": most}), flush=True)
"""

# Writes batch k = [add entry(k), remove entry(k - WINDOW)] forever, printing k after each commit, so
# every committed version is known in advance: the SEED entries plus the last WINDOW entries.
KILLED_WRITER = """
import sys
from pathlib import Path
sys.path.insert(0, sys.argv[2])
from test_store_crash import WINDOW, entry
from hermes_ctx_plugins.memory.file.store import MemoryFile, Op
memory = MemoryFile(Path(sys.argv[1]), target="memory", char_limit=10**6)
print("ready", flush=True)
k = 0
while True:
    batch = [Op("add", entry(k))] + ([Op("remove", match=f"e{k - WINDOW:05d} ")] if k >= WINDOW else [])
    memory.apply(batch)
    print(k, flush=True)
    k += 1
"""

SEED = ["seed: the user prefers metric units", "seed: deploys go through `make ship`"]
WINDOW = 5


def entry(k: int) -> str:
    return f"e{k:05d} " + "y" * (40 + 97 * k % 300)  # sizes vary so versions differ in length too


def version(k: int) -> bytes:
    """The file after batch ``k`` committed (``k = -1``: the SEED entries alone)."""
    return DELIMITER.join(SEED + [entry(j) for j in range(max(0, k - WINDOW + 1), k + 1)]).encode()


def spawn(code: str, *args: object) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-c", code, *map(str, args)], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def test_concurrent_writers_lose_nothing_and_readers_never_see_a_torn_file(tmp_path: Path) -> None:
    path, stop = tmp_path / "memories" / "MEMORY.md", tmp_path / "stop"
    reader = spawn(READER, path, stop)
    assert reader.stdout is not None and reader.stdout.readline() == "ready\n"
    writers = [spawn(WRITER, path, w, ADDS) for w in range(WRITERS)]
    for w in writers:
        assert w.stdout is not None and w.stdout.readline() == "ready\n", w.communicate()[1]
    started = time.monotonic()
    for w in writers:
        assert w.stdin is not None
        w.stdin.write("go\n")
        w.stdin.flush()
    for w in writers:
        _, err = w.communicate(timeout=60)
        assert w.returncode == 0, err
    elapsed = time.monotonic() - started
    stop.touch()
    out, err = reader.communicate(timeout=30)
    assert reader.returncode == 0, err
    report = json.loads(out)

    entries = MemoryFile(path, target="memory", char_limit=10**6).entries()
    expected = {f"w{w}-{i:03d} " + "x" * 20 for w in range(WRITERS) for i in range(ADDS)}
    lost, duplicated = len(expected - set(entries)), len(entries) - len(set(entries))
    print(f"\n{WRITERS} writers x {ADDS} adds in {elapsed:.1f}s: {len(entries)} entries, lost={lost}, "
          f"duplicated={duplicated}; reader: {report['reads']} reads, torn={report['torn']}")
    assert report["torn"] == 0, report["examples"]
    assert report["final"] == WRITERS * ADDS
    assert report["reads"] > WRITERS * ADDS // 10  # the reader really polled through the run
    assert (len(entries), lost, duplicated) == (WRITERS * ADDS, 0, 0)
    assert set(entries) == expected
    for n in range(WRITERS):  # each writer's entries in the order it added them
        mine = [e for e in entries if e.startswith(f"w{n}-")]
        assert mine == sorted(mine)


def test_a_writer_killed_at_random_leaves_an_old_or_new_version_never_a_torn_one(tmp_path: Path) -> None:
    rng = random.Random(20260102)
    tests_dir = Path(__file__).parent
    torn = lost = mid_write = 0
    commits: list[int] = []
    problems: list[str] = []
    for run in range(KILL_RUNS):
        path = tmp_path / f"run{run}" / "memories" / "MEMORY.md"
        memory = MemoryFile(path, target="memory", char_limit=10**6)
        memory.apply([Op("add", text) for text in SEED])
        writer = spawn(KILLED_WRITER, path, tests_dir)
        assert writer.stdout is not None and writer.stdout.readline() == "ready\n", writer.communicate()[1]
        time.sleep(rng.uniform(0.0, 0.05))
        writer.send_signal(signal.SIGKILL)
        out, _ = writer.communicate(timeout=10)
        assert writer.returncode == -signal.SIGKILL
        acked = max((int(line) for line in out.split()), default=-1)  # committed, and said so

        raw = path.read_bytes()
        last = re.search(rb"e(\d{5}) y*$", raw)
        k = int(last.group(1)) if last else -1  # the version the file claims to be…
        if raw != version(k):  # …must be that version byte for byte
            torn += 1
            problems.append(f"run {run}: torn file ending {raw[-60:]!r}")
            continue
        if k < acked:
            lost += 1
            problems.append(f"run {run}: file at batch {k}, the writer had acknowledged {acked}")
        commits.append(k + 1)

        mid_write += bool(list(path.parent.glob(".MEMORY.md.*.tmp")))
        memory.apply([Op("add", "written after the crash")])  # the dead writer's lock went with it
        assert path.read_bytes() == version(k) + f"{DELIMITER}written after the crash".encode()
        assert not list(path.parent.glob(".MEMORY.md.*.tmp"))  # temp garbage swept, never read as data
    print(f"\n{KILL_RUNS} SIGKILL runs: torn={torn}, lost={lost}; {sum(commits)} batches committed "
          f"(min {min(commits, default=0)}, max {max(commits, default=0)} per run); "
          f"{mid_write} kills left a temp file behind")
    assert (torn, lost) == (0, 0), problems

"""Time inside our code per hermes turn, beside hermes' own built-ins doing the same job.

Run from the repo root: ``.venv/bin/python benchmarks/bench_turn.py [--quick] [--summary-json PATH]``.

A real hermes 0.19.0 ``AIAgent`` talks to the loopback OpenAI stub (in a process of its own) and runs
turns on a pre-built history of 500 / 2,000 / 8,000 messages (a coding agent's turns: tool calls
whose results are multi-line logs, file reads and search hits; ~205k tokens at 2,000), twice,
interleaved: with our plugin all on — context engine ``hermes-ctx`` (``summarize``), the archive, the
``file`` memory provider and ``ctx-local`` as hermes' ``memory.provider``, remembering 300 turns of
earlier sessions on the topics asked about (every turn recalls a full block; ``--remembered 0``: an
empty store) — and with it off
(hermes' ``ContextCompressor`` and its built-in memory, MEMORY.md the same).

A wall-clock A/B of whole turns cannot resolve a few milliseconds (a turn swings by far more
between runs), so the figure is cProfile's: the time hermes spends inside our functions per turn —
the cumulative time of every call from hermes into our package (our hooks, engine, memory provider
and middleware; a call from the standard library or a builtin is one of ours resumed, already
counted), less the time our middleware hands back to hermes through its ``next_call`` (the model
call itself) — plus "+ copies": hermes deep-copying every request while any request middleware is
registered, a cost our plugin causes. "turn path" is the threads the turn waits for: the caller's
and hermes' memory-prefetch thread; "background" is hermes' memory-sync worker (``sync_turn``,
``queue_prefetch``), which the turn does not wait for. "our calls" counts calls of our functions on
the turn path (a figure no noise moves). The anchor is measured the same way over hermes' own
``context_compressor.py``, ``memory_manager.py`` and ``memory_tool.py``. The garbage collector is off
during profiled turns (a full collection of a long history's objects takes milliseconds and lands on
whichever function happens to allocate). Unprofiled whole-turn medians of both are printed beside.
cProfile's own overhead inflates every profiled figure alike; ``--cpu`` profiles thread CPU time
instead of wall time, which a loaded machine disturbs less.

The timed (unprofiled) turns measure the same thing a second way, without a profiler: every function
of the classes in ``hermes_ctx_plugins.hermes`` (the only code of ours hermes calls) is wrapped with a
clock read at the outermost call on each thread, less the time inside a middleware's ``next_call``
(:class:`EntryTimer`; a few dozen clock reads a turn). cProfile charges its overhead to each of the
~500 calls our code makes and to every builtin those call, and its wall clock keeps running while
the memory-prefetch thread waits for the GIL; the entry timer pays neither. Both are printed; the goal
row is cProfile's, as the issue measured it.
"""

from __future__ import annotations

import argparse
import contextlib
import cProfile
import functools
import gc
import json
import os
import pstats
import random
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from _common import machine_line, write_summary

import hermes_ctx_plugins

SIZES = (500, 2_000, 8_000)
GOAL_SIZE = 2_000
GOAL_MS = 2.0
#: our time per turn at the largest history over the smallest: "not growing with the history"
GROWTH_LIMIT = 1.5
MODEL = "stub-model"
#: big enough that no history here reaches a compaction trigger: the turns measured are plain turns
WINDOW = 4_000_000
#: what ctx-local remembers of earlier sessions when the measured session starts
REMEMBERED_TURNS = 300

OURS = str(Path(hermes_ctx_plugins.__file__).parent) + os.sep
#: the stub server lives in our package but is the benchmark's, not the plugin's
NOT_OURS = OURS + "testing" + os.sep
HERMES_BUILTINS = (f"agent{os.sep}context_compressor.py", f"agent{os.sep}memory_manager.py",
                   f"tools{os.sep}memory_tool.py")
#: hermes' middleware continuation: time our middleware spends in it is hermes' (the API call itself)
PASS_THROUGH = (f"hermes_cli{os.sep}middleware.py", "next_call")
_STDLIB = sysconfig.get_paths()["stdlib"] + os.sep
#: hermes' deep copy of a request or tool arguments, made only while some request middleware is registered
REQUEST_COPY = (f"hermes_cli{os.sep}middleware.py", "_safe_copy")

_WORDS = ("deploy", "config", "parser", "cache", "timeout", "retry", "schema", "index", "token", "server",
          "client", "build", "migrate", "release", "branch", "commit", "review", "latency", "worker", "queue")
_TOOLS = ("terminal", "read_file", "search_files")


# ------------------------------------------------------------------------------------------- history

def history(size: int, seed: int = 0) -> list[dict[str, Any]]:
    """Exactly ``size`` messages of a coding agent's turns (no system prompt: hermes adds its own),
    ending at a turn boundary: user, assistant tool calls, their multi-line results, the answer."""
    rng = random.Random(seed)
    messages: list[dict[str, Any]] = []
    calls = 0

    def words(n: int) -> str:
        return " ".join(rng.choice(_WORDS) for _ in range(n))

    def output(tool: str) -> str:
        lines = rng.randint(4, 22)
        if tool == "terminal":
            log = "\n".join(f"2026-05-0{rng.randint(1, 9)} 12:{i:02d}:07 INFO {words(5)} ({rng.randint(1, 999)} ms)"
                            for i in range(lines))
            return json.dumps({"output": log, "exit_code": 0, "error": None})
        if tool == "read_file":
            return "\n".join(f"{i + 1:>5}|    def {rng.choice(_WORDS)}_{i}(self): return {words(2)!r}"
                             for i in range(lines))
        return "\n".join(f"src/{rng.choice(_WORDS)}/{rng.choice(_WORDS)}.py:{rng.randint(1, 900)}: {words(4)}"
                         for _ in range(lines))

    def turn(tool_calls: int) -> list[dict[str, Any]]:
        nonlocal calls
        out: list[dict[str, Any]] = [{"role": "user", "content": f"please {words(10)} in src/{rng.choice(_WORDS)}.py"}]
        if tool_calls:
            requested = []
            for _ in range(tool_calls):
                calls += 1
                tool = rng.choice(_TOOLS)
                requested.append((f"call_{calls}", tool))
            out.append({"role": "assistant", "content": None, "tool_calls": [
                {"id": cid, "type": "function",
                 "function": {"name": tool, "arguments": json.dumps({"path": f"src/{rng.choice(_WORDS)}.py"})}}
                for cid, tool in requested]})
            out += [{"role": "tool", "tool_call_id": cid, "content": output(tool)} for cid, tool in requested]
        out.append({"role": "assistant", "content": f"Done: {words(rng.randint(20, 60))}."})
        return out

    # turns of 4 or 5 messages (one or two tool calls); the last few sized to land on ``size`` exactly
    finish = {5: (2,), 6: (1, 0), 7: (2, 0), 8: (1, 1), 9: (2, 1)}
    while size - len(messages) > 9:
        messages += turn(rng.choice((1, 2)))
    for calls_in_turn in finish.get(size - len(messages), ()):
        messages += turn(calls_in_turn)
    if len(messages) != size:
        raise ValueError(f"cannot build exactly {size} messages")
    return messages


# -------------------------------------------------------------------------------------------- hermes

def write_config(home: Path, base_url: str, *, ours: bool) -> None:
    """hermes' config.yaml: our plugin all on, or off (hermes' compressor and built-in memory)."""
    memory = "memory_enabled: true, user_profile_enabled: true, nudge_interval: 0"
    text = (f"model: {{default: {MODEL}, provider: custom, base_url: {base_url}, context_length: {WINDOW}}}\n"
            "agent: {environment_probe: false}\n"
            "skills: {creation_nudge_interval: 0}\n")
    if ours:
        text += ("plugins: {enabled: [hermes-ctx]}\n"
                 "context: {engine: hermes-ctx}\n"
                 f"memory: {{{memory}, provider: ctx-local}}\n"
                 "ctx_plugins: {compressor: summarize, archive: {enabled: true}, "
                 "memory: {providers: [file, ctx-local]}}\n")
    else:
        text += f"memory: {{{memory}}}\n"
    home.mkdir(parents=True, exist_ok=True)
    (home / "memories").mkdir(exist_ok=True)
    (home / "memories" / "MEMORY.md").write_text(
        "The staging port is 8443\n§\nDeploys go out on Tuesdays\n§\nCI runs on the self-hosted runners",
        encoding="utf-8")
    (home / "config.yaml").write_text(text, encoding="utf-8")


def seed_memories(home: Path, turns: int) -> None:
    """ctx-local as a user of some weeks has it: ``turns`` turns of earlier sessions, on the topics
    the measured turns ask about (so every turn recalls a full block, at every history size), each
    stored as a live turn is — on its own, not in a backlog's batch (the writer judges a live turn's
    safety when storing it; most of a backlog is judged when recalled instead)."""
    from hermes_ctx_plugins.events import SessionInfo, Turn
    from hermes_ctx_plugins.memory.local import LocalProvider

    rng = random.Random(2)

    def words(n: int) -> str:
        return " ".join(rng.choice(_WORDS) for _ in range(n))

    provider = LocalProvider({}, hermes_home=home)
    try:
        for i in range(turns):
            provider.sync_turn(Turn(
                session=SessionInfo(session_id=f"earlier-{i // 10}", platform="cli"), turn_number=i % 10 + 1,
                user_text=f"the {words(2)} in src/{rng.choice(_WORDS)}.py fails on a {words(1)}: what now?",
                assistant_text=f"We set the {words(2)} to {rng.randint(2, 60)} and {words(12)}."))
            if not provider.flush(timeout=120):
                raise RuntimeError("ctx-local did not store the seeded turns")
    finally:
        provider.shutdown()


def activate(home: Path) -> None:
    """Make hermes read ``home`` and load its plugins again (our ``register`` runs when enabled)."""
    from hermes_cli import plugins as hermes_plugins

    os.environ["HERMES_HOME"] = str(home)
    hermes_plugins.discover_plugins(force=True)


#: the stub, in a process of its own: parsing a request of megabytes in this one would hold the GIL
#: while hermes and our code run, and cProfile counts wall time
_STUB = """
import sys
from hermes_ctx_plugins.testing import StubOpenAIServer
stub = StubOpenAIServer(model=sys.argv[1])
stub.start()
print(stub.base_url, flush=True)
sys.stdin.read()  # until the benchmark closes our stdin
stub.close()
"""


@contextlib.contextmanager
def stub_process() -> Iterator[str]:
    """The loopback OpenAI stub in a child process; yields its base URL, stops it after."""
    child = subprocess.Popen([sys.executable, "-c", _STUB, MODEL], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             text=True, cwd=Path(hermes_ctx_plugins.__file__).parents[1])  # the package we run
    try:
        assert child.stdout is not None
        base_url = child.stdout.readline().strip()
        if not base_url.startswith("http://127.0.0.1:"):
            raise RuntimeError(f"the stub did not start (said {base_url!r})")
        yield base_url
    finally:
        assert child.stdin is not None
        child.stdin.close()
        try:
            child.wait(timeout=10)
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait()


def new_agent(base_url: str) -> Any:
    import run_agent

    return run_agent.AIAgent(base_url=base_url, api_key="k", provider="custom", model=MODEL, quiet_mode=True,
                             skip_context_files=True, enabled_toolsets=["memory"])


def settle(agent: Any) -> None:
    """Wait for hermes' memory-sync worker, then for ctx-local's write-behind thread to store what it
    was given: the next turn starts with nothing of this one pending (a user takes seconds to answer;
    turns run back to back here, and a store still being written would compete for the GIL with the
    next turn's recall)."""
    manager = getattr(agent, "_memory_manager", None)
    if manager is not None:
        manager.flush_pending(timeout=30)
        for adapter in getattr(manager, "providers", None) or getattr(manager, "_providers", None) or ():
            provider = getattr(adapter, "_provider", None)
            if hasattr(provider, "flush"):
                provider.flush(timeout=30)


# ------------------------------------------------------------------------------------------ profiling

class Recorder:
    """cProfile on every thread of a turn that matters: the caller's, hermes' memory-prefetch threads
    (the turn joins them) and the tasks of hermes' memory-sync worker (it does not)."""

    def __init__(self, timer: Callable[[], float] | None = None) -> None:
        self.timer = timer
        self.active = False
        self._lock = threading.Lock()
        self.turn_path: list[cProfile.Profile] = []
        self.background: list[cProfile.Profile] = []

    @contextlib.contextmanager
    def profile(self, into: list[cProfile.Profile]) -> Iterator[None]:
        profiler = cProfile.Profile(self.timer) if self.timer is not None else cProfile.Profile()
        profiler.enable()
        try:
            yield
        finally:
            profiler.disable()
            with self._lock:
                into.append(profiler)

    def take(self) -> tuple[list[cProfile.Profile], list[cProfile.Profile]]:
        with self._lock:
            taken = self.turn_path, self.background
            self.turn_path, self.background = [], []
        return taken

    def install(self) -> None:
        """Wrap hermes' prefetch threads and sync tasks (process-wide, for the benchmark's life)."""
        from agent.memory_manager import MemoryManager

        recorder, run, submit = self, threading.Thread.run, MemoryManager._submit_background

        def profiled_run(thread: threading.Thread) -> None:
            if not (recorder.active and thread.name.startswith("memory-prefetch")):
                run(thread)
                return
            with recorder.profile(recorder.turn_path):
                run(thread)

        def profiled_submit(manager: Any, fn: Callable[[], None], **kwargs: Any) -> None:
            if not recorder.active:
                submit(manager, fn, **kwargs)
                return

            def task() -> None:
                with recorder.profile(recorder.background):
                    fn()

            submit(manager, task, **kwargs)

        threading.Thread.run = profiled_run  # type: ignore[assignment]
        MemoryManager._submit_background = profiled_submit  # type: ignore[method-assign]


class EntryTimer:
    """Time inside our code without a profiler: the functions of every class in ``hermes_ctx_plugins.hermes``
    wrapped, a thread's time counted from its outermost call into them, less what a middleware's
    ``next_call`` (hermes' model call) takes. Turn path: the caller's thread and hermes' memory-prefetch
    threads; background: the others (hermes' memory-sync worker)."""

    def __init__(self) -> None:
        self.active = False
        self._local = threading.local()
        self._lock = threading.Lock()
        self.turn_path = 0.0
        self.background = 0.0
        self.entries: Counter[str] = Counter()
        self._swaps: list[tuple[type, str, Any, Any]] = []

    def take(self) -> tuple[float, float, Counter[str]]:
        with self._lock:
            taken = self.turn_path, self.background, self.entries
            self.turn_path = self.background = 0.0
            self.entries = Counter()
        return taken

    def install(self) -> None:
        """Make the wrappers (:meth:`use` puts them in place)."""
        import importlib
        import inspect
        import pkgutil

        import hermes_ctx_plugins.hermes as adapter

        for info in pkgutil.iter_modules(adapter.__path__):
            module = importlib.import_module(f"{adapter.__name__}.{info.name}")
            for cls in list(vars(module).values()):
                if not (inspect.isclass(cls) and cls.__module__ == module.__name__):
                    continue
                for name, attr in list(vars(cls).items()):
                    where = f"{info.name}.py:{cls.__name__}.{name}"
                    if name.startswith("__") and name != "__call__":
                        continue  # construction and copies: once per agent, not per turn
                    if isinstance(attr, property):
                        self._swaps.append((cls, name, attr, property(
                            self._wrapped(attr.fget, where) if attr.fget else None,
                            self._wrapped(attr.fset, where) if attr.fset else None, attr.fdel, attr.__doc__)))
                    elif inspect.isfunction(attr):
                        self._swaps.append((cls, name, attr, self._wrapped(attr, where)))

    def use(self, wrapped: bool) -> None:
        """Put the wrappers in place (or the originals back) before hermes registers our plugin: it keeps
        bound methods. Never in place while cProfile runs: a wrapper between two of our functions would
        make the inner one an entry point too."""
        for cls, name, original, wrapper in self._swaps:
            setattr(cls, name, wrapper if wrapped else original)

    def _wrapped(self, function: Callable[..., Any], where: str) -> Callable[..., Any]:
        timer, local, clock = self, self._local, time.perf_counter

        def timed(*args: Any, **kwargs: Any) -> Any:
            if not timer.active or getattr(local, "inside", False):
                return function(*args, **kwargs)
            following = kwargs.get("next_call")
            if callable(following):
                kwargs["next_call"] = timer._paused(following)
            saved, local.paused, local.inside = getattr(local, "paused", 0.0), 0.0, True
            start = clock()
            try:
                return function(*args, **kwargs)
            finally:
                spent = clock() - start - local.paused
                local.inside, local.paused = False, saved
                name = threading.current_thread().name
                with timer._lock:
                    if name == "MainThread" or name.startswith("memory-prefetch"):
                        timer.turn_path += spent
                        timer.entries[where] += spent
                    else:
                        timer.background += spent

        return functools.wraps(function)(timed)

    def _paused(self, following: Callable[..., Any]) -> Callable[..., Any]:
        local, clock = self._local, time.perf_counter

        def call(*args: Any, **kwargs: Any) -> Any:
            local.inside = False  # hermes' code: a call of ours from inside it is an entry of its own
            start = clock()
            try:
                return following(*args, **kwargs)
            finally:
                local.paused += clock() - start
                local.inside = True

        return call


def merged(profiles: list[cProfile.Profile]) -> pstats.Stats | None:
    if not profiles:
        return None
    stats = pstats.Stats(profiles[0])
    for profiler in profiles[1:]:
        stats.add(profiler)
    return stats


def inside_ours(filename: str) -> bool:
    return filename.startswith(OURS) and not filename.startswith(NOT_OURS)


def inside_hermes_builtins(filename: str) -> bool:
    return filename.endswith(HERMES_BUILTINS)


@dataclass
class Spent:
    """Time inside a body of code, from its entry points, and where it went."""

    seconds: float = 0.0
    entries: Counter[str] = field(default_factory=Counter)
    calls: Counter[str] = field(default_factory=Counter)
    #: hermes copying requests for request middleware (it has none of its own registered here)
    copies: float = 0.0
    #: each function's own time (not its callees')
    own: Counter[str] = field(default_factory=Counter)


def hermes_frame(filename: str) -> bool:
    """Whether a caller is code that calls into ours from outside: hermes (or the benchmark), not a
    builtin (file ``~``), generated code (``<string>``: a dataclass' ``__init__``) or the standard
    library — those run between two frames of ours (resuming our generator, building our dataclass,
    ``functools.cached_property``, ``contextlib``), already inside an entry's time."""
    installed = "site-packages" in filename or "dist-packages" in filename
    return not filename.startswith(("~", "<")) and (installed or not filename.startswith(_STDLIB))


def label(filename: str, name: str) -> str:
    path = Path(filename)
    return f"{path.parent.name}/{path.name}:{name}"


def spent_inside(stats: pstats.Stats | None, inside: Callable[[str], bool]) -> Spent:
    """The cumulative time of every call from outside ``inside`` into it (an entry point), less the
    time spent in hermes' middleware continuation called from inside; and call counts by function name."""
    spent = Spent()
    if stats is None:
        return spent
    table: dict[Any, Any] = stats.stats  # type: ignore[attr-defined]
    for (filename, _, name), (_, calls, own, cumulative_all, callers) in table.items():
        if inside(filename):
            spent.calls[name] += calls
            spent.own[label(filename, name)] += own
        if filename.endswith(REQUEST_COPY[0]) and name == REQUEST_COPY[1]:
            spent.copies += cumulative_all
        for (caller_file, _, caller_name), edge in callers.items():
            cumulative = edge[3]
            if inside(filename) and not inside(caller_file) and hermes_frame(caller_file):
                spent.seconds += cumulative
                spent.entries[label(filename, name)] += cumulative
            elif (filename.endswith(PASS_THROUGH[0]) and name == PASS_THROUGH[1] and inside(caller_file)):
                spent.seconds -= cumulative
                spent.entries[label(caller_file, caller_name)] -= cumulative
    return spent


# ----------------------------------------------------------------------------------------------- runs

@dataclass
class TurnFigures:
    """Per-turn figures of one configuration at one history size (lists over the measured turns)."""

    wall_ms: list[float] = field(default_factory=list)
    #: our time on the turn path and in the background in the timed turns, by :class:`EntryTimer`
    entry_ms: list[float] = field(default_factory=list)
    entry_background_ms: list[float] = field(default_factory=list)
    entry_points: Counter[str] = field(default_factory=Counter)
    turn_ms: list[float] = field(default_factory=list)
    copies_ms: list[float] = field(default_factory=list)
    background_ms: list[float] = field(default_factory=list)
    count_text: list[int] = field(default_factory=list)
    count_messages: list[int] = field(default_factory=list)
    #: calls of our functions on the turn path (what cProfile's overhead scales with)
    calls: list[int] = field(default_factory=list)
    entries: Counter[str] = field(default_factory=Counter)
    own: Counter[str] = field(default_factory=Counter)
    profiled_turns: int = 0
    compactions: int = 0

    def mean_ms(self, breakdown: str, name: str) -> float:
        """``name``'s time per profiled turn in ``breakdown`` (``"entries"`` or ``"own"``), in ms."""
        seconds: float = getattr(self, breakdown)[name]
        return seconds * 1000 / max(self.profiled_turns, 1)


USER_TURNS = ("what does the retry policy in src/worker.py do on a timeout?",
              "run the parser tests again and tell me which ones fail",
              "where is the cache invalidated after a deploy?",
              "summarise the last build log for me",
              "which branch has the schema migration?")


def run_config(home: Path, ours: bool, messages: list[dict[str, Any]], timed: int, profiled: int, remembered: int,
               recorder: Recorder, figures: TurnFigures, entry_timer: EntryTimer) -> None:
    """Two agents on ``messages`` one after the other, each after a warm-up turn: ``timed`` timed turns
    (with :class:`EntryTimer`'s wrappers for ours), then ``profiled`` profiled ones (without)."""
    with stub_process() as base_url:
        write_config(home, base_url, ours=ours)
        if ours and remembered:
            seed_memories(home, remembered)

        def start(wrapped: bool) -> Callable[[int], None]:
            """A new agent on ``messages`` after its first turn, with the entry timer's wrappers or not."""
            entry_timer.use(wrapped)
            activate(home)
            agent = new_agent(base_url)
            conversation = list(messages)

            def turn(i: int) -> None:
                nonlocal conversation
                result = agent.run_conversation(USER_TURNS[i % len(USER_TURNS)], conversation_history=conversation)
                conversation = result["messages"]

            turn(0)  # the session starts: system prompt, providers, snapshots
            settle(agent)
            agents.append((agent, lambda: conversation))
            return turn

        def stop(agent: Any, conversation: Callable[[], list[dict[str, Any]]]) -> None:
            figures.compactions += int(getattr(agent.context_compressor, "compression_count", 0) or 0)
            agent.shutdown_memory_provider(conversation())

        agents: list[tuple[Any, Callable[[], list[dict[str, Any]]]]] = []
        turn = start(wrapped=ours)
        for i in range(timed):
            entry_timer.take()
            entry_timer.active = ours
            try:
                start_time = time.perf_counter()
                turn(i + 1)
                figures.wall_ms.append((time.perf_counter() - start_time) * 1000)
                settle(agent := agents[-1][0])
            finally:
                entry_timer.active = False
            if ours:
                on_path, background, entries = entry_timer.take()
                figures.entry_points.update(entries)
                figures.entry_ms.append(on_path * 1000)
                figures.entry_background_ms.append(background * 1000)
        stop(*agents.pop())
        turn = start(wrapped=False)  # a second agent, with no wrapper in cProfile's way
        agent = agents[-1][0]
        inside = inside_ours if ours else inside_hermes_builtins
        for i in range(profiled):
            gc.collect()  # a collection lands on whichever function allocates when it is due: not its work
            gc.disable()
            recorder.active = True
            try:
                with recorder.profile(recorder.turn_path):
                    turn(i + 1 + timed)
                settle(agent)
            finally:
                recorder.active = False
                gc.enable()
            on_path, background = recorder.take()
            path_spent = spent_inside(merged(on_path), inside)
            back_spent = spent_inside(merged(background), inside)
            figures.turn_ms.append(path_spent.seconds * 1000)
            figures.copies_ms.append(path_spent.copies * 1000)
            figures.background_ms.append(back_spent.seconds * 1000)
            figures.count_text.append(path_spent.calls["count_text"] + back_spent.calls["count_text"])
            figures.count_messages.append(path_spent.calls["count_messages"] + back_spent.calls["count_messages"])
            figures.calls.append(sum(path_spent.calls.values()))
            figures.entries.update(path_spent.entries)
            figures.own.update(path_spent.own)
            figures.profiled_turns += 1
        stop(*agents.pop())


def median(values: Sequence[float]) -> float:
    return statistics.median(values) if values else float("nan")


def ours_per_turn(figures: TurnFigures) -> float:
    """What our plugin costs a turn on its path: our code plus the request copies it makes hermes do."""
    return median([ours + copies for ours, copies in zip(figures.turn_ms, figures.copies_ms, strict=True)])


def measure(sizes: tuple[int, ...], timed: int, profiled: int, repeats: int, remembered: int,
            timer: Callable[[], float] | None) -> dict[tuple[bool, int], TurnFigures]:
    """Every configuration at every size, ours and hermes' alternating in order; by (ours, size)."""
    results: dict[tuple[bool, int], TurnFigures] = {}
    with tempfile.TemporaryDirectory(prefix="bench-turn-", ignore_cleanup_errors=True) as tmp:
        os.environ["HERMES_HOME"] = str(Path(tmp) / "none")  # before hermes is imported: it reads it then
        recorder = Recorder(timer)
        recorder.install()
        entry_timer = EntryTimer()
        entry_timer.install()
        for size in sizes:
            messages = history(size)
            for repeat in range(repeats):
                for ours in (False, True) if repeat % 2 == 0 else (True, False):
                    home = Path(tmp) / f"{'ours' if ours else 'hermes'}-{size}-{repeat}"
                    run_config(home, ours, messages, timed, profiled, remembered, recorder,
                               results.setdefault((ours, size), TurnFigures()), entry_timer)
            print(f"  {size:,} messages done", file=sys.stderr)
    return results


def print_tables(results: dict[tuple[bool, int], TurnFigures], sizes: tuple[int, ...]) -> None:
    print()
    print("time inside the code per hermes turn, cProfile, median over the profiled turns (ms); "
          "'+ copies': hermes deep-copying requests because request middleware is registered")
    print(f"{'messages':>9} | {'ours: turn path':>15} {'+ copies':>8} {'background':>10} {'our calls':>9} "
          f"{'count_text':>10} {'count_messages':>14} | {'hermes built-ins':>16} {'background':>10} | "
          f"{'whole turn: ours':>16} {'hermes':>8}")
    for size in sizes:
        ours, anchor = results[(True, size)], results[(False, size)]
        print(f"{size:>9,} | {median(ours.turn_ms):>15.2f} {median(ours.copies_ms):>8.2f} "
              f"{median(ours.background_ms):>10.2f} {median(ours.calls):>9.0f} {median(ours.count_text):>10.0f} "
              f"{median(ours.count_messages):>14.0f} | "
              f"{median(anchor.turn_ms):>16.2f} {median(anchor.background_ms):>10.2f} | "
              f"{median(ours.wall_ms):>16.1f} {median(anchor.wall_ms):>8.1f}")
    print("\nthe same without a profiler (EntryTimer: a clock read at each entry into our code), median over "
          "the timed turns (ms)")
    print(f"{'messages':>9} | {'ours: turn path':>15} {'background':>10}")
    for size in sizes:
        ours = results[(True, size)]
        print(f"{size:>9,} | {median(ours.entry_ms):>15.2f} {median(ours.entry_background_ms):>10.2f}")
    timed_turns = max(len(results[(True, GOAL_SIZE)].entry_ms), 1)
    for name, seconds in results[(True, GOAL_SIZE)].entry_points.most_common(8):
        print(f"  {name[:58]:<58}{seconds * 1000 / timed_turns:>10.3f} ms a turn at {GOAL_SIZE:,} messages")
    compactions = sum(f.compactions for f in results.values())
    if compactions:
        print(f"WARNING: {compactions} compaction(s) ran during the turns: the figures include them")

    goal = results[(True, GOAL_SIZE)]
    for title, breakdown in (("the entry points hermes calls (cumulative)", "entries"),
                             ("our functions with the most time of their own", "own")):
        print(f"\nwhere our time goes: {title}, turn path, ms per turn (mean over the profiled turns)")
        print(f"{'':>60}" + "".join(f"{size:>10,}" for size in sizes))
        for name, _ in getattr(goal, breakdown).most_common(12):
            per_size = [results[(True, size)].mean_ms(breakdown, name) for size in sizes]
            print(f"  {name[:58]:<58}" + "".join(f"{value:>10.3f}" for value in per_size))


def goal_rows(results: dict[tuple[bool, int], TurnFigures], sizes: tuple[int, ...]) -> list[dict[str, Any]]:
    goal, anchor = results[(True, GOAL_SIZE)], results[(False, GOAL_SIZE)]
    at_goal = ours_per_turn(goal)
    small, large = ours_per_turn(results[(True, sizes[0])]), ours_per_turn(results[(True, sizes[-1])])
    growth = large / small if small > 0 else float("inf")
    few, many = (median(results[(True, size)].calls) for size in (sizes[0], sizes[-1]))
    return [
        {"goal": f"our code per turn at {GOAL_SIZE:,} messages", "measured": round(at_goal, 3), "limit": GOAL_MS,
         "unit": "ms", "ok": at_goal <= GOAL_MS,
         "anchor": f"hermes' compressor + memory {median(anchor.turn_ms):.2f} ms; whole turn "
                   f"{median(goal.wall_ms):.0f} ms ours vs {median(anchor.wall_ms):.0f} ms hermes'"},
        {"goal": f"our code per turn at {GOAL_SIZE:,} messages, no profiler (EntryTimer)",
         "measured": round(median(goal.entry_ms), 3), "limit": GOAL_MS, "unit": "ms",
         "ok": median(goal.entry_ms) <= GOAL_MS, "anchor": "clock reads at our entry points, timed turns"},
        {"goal": f"growth of our code per turn, {sizes[-1]:,} vs {sizes[0]:,} messages", "measured": round(growth, 2),
         "limit": GROWTH_LIMIT, "unit": "x", "ok": growth <= GROWTH_LIMIT,
         "anchor": f"{small:.2f} ms at {sizes[0]:,}, {large:.2f} ms at {sizes[-1]:,}"},
        {"goal": f"growth of our function calls per turn, {sizes[-1]:,} vs {sizes[0]:,} messages",
         "measured": round(many / few, 2) if few else float("inf"), "limit": GROWTH_LIMIT, "unit": "x",
         "ok": few > 0 and many / few <= GROWTH_LIMIT,
         "anchor": f"{few:.0f} calls at {sizes[0]:,}, {many:.0f} at {sizes[-1]:,} (what no noise moves)"},
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="fewer turns and one repeat (still every table)")
    parser.add_argument("--summary-json", help="also write the goal rows as JSON here")
    parser.add_argument("--sizes", type=int, nargs="+", default=list(SIZES), help="history sizes (messages)")
    parser.add_argument("--remembered", type=int, default=REMEMBERED_TURNS,
                        help="turns of earlier sessions ctx-local remembers (0: an empty store, nothing recalled)")
    parser.add_argument("--cpu", action="store_true",
                        help="profile each thread's CPU time, not wall time: steadier on a loaded machine, but "
                             "the clock costs ~1-2 us a read here, which cProfile charges to every call")
    args = parser.parse_args(argv)
    sizes = tuple(sorted(set(args.sizes) | {GOAL_SIZE}))
    timed, profiled, repeats = (2, 3, 1) if args.quick else (4, 4, 3)
    print(f"command: {' '.join([Path(sys.executable).name, *sys.argv])}")
    print(machine_line())
    print(f"profiler clock: {'thread CPU time' if args.cpu else 'wall time'}; ctx-local remembers "
          f"{args.remembered} turns of earlier sessions")
    print(f"histories: {', '.join(f'{s:,}' for s in sizes)} messages; {repeats} repeat(s) x {timed} timed + "
          f"{profiled} profiled turns per configuration, ours and hermes' interleaved")
    results = measure(sizes, timed, profiled, repeats, args.remembered, time.thread_time if args.cpu else None)
    print_tables(results, sizes)
    rows = goal_rows(results, sizes)
    print()
    for row in rows:
        print(f"{row['goal']}: {row['measured']} {row['unit']} (goal <= {row['limit']}): "
              f"{'OK' if row['ok'] else 'MISSED'}  [{row['anchor']}]")
    if args.summary_json:
        write_summary(args.summary_json, rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())

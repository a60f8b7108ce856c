"""Benchmark: what starting up costs -- importing the package, building a host, ``hermes-ctx check``, and our
share of hermes' own start.

Run from the repository root::

    .venv/bin/python benchmarks/bench_startup.py                 # 15 fresh processes per row
    .venv/bin/python benchmarks/bench_startup.py --quick         # 7
    .venv/bin/python benchmarks/bench_startup.py --summary-json startup.json

Every row is a fresh process, the rows of one table taken in turn round after round (so a busy moment
hits all of them alike); medians, the minimum beside them (the least disturbed run). Absolute times on
a shared machine are noise: read the differences and ratios, which are taken round by round (the median
of each round's difference or ratio) within one run.

- ``import hermes_ctx_plugins`` against ``python -c pass`` (the difference is the import's cost), the
  host's modules (``from hermes_ctx_plugins import load_host``) and what hermes imports through our
  entry point (``hermes_ctx_plugins.hermes.plugin``), with ``-X importtime``'s biggest offenders;
- ``load_host({})``: the first call in a fresh process (cold: its modules are imported then) and the
  calls after it in the same process (warm);
- ``hermes-ctx check`` on a tiny valid config against ``hermes --version``;
- hermes with our plugin enabled (``hermes-ctx install`` in a throw-away ``HERMES_HOME``) and without
  it: ``hermes --version`` (which discovers no plugins), and hermes' plugin discovery itself, which
  every command running an agent does (``hermes chat``, the gateway): the time ``discover_plugins()``
  takes, so the difference is what loading and registering our plugin costs hermes -- also in a process that
  has hermes' slash-command module loaded already, as ``hermes chat`` has (registering our ``/ctx`` makes hermes
  import it, prompt_toolkit and all, where nothing else had). Registration builds our host only at the first
  start after the config (or what is installed) changed, as the check that a broken config is said then
  (``hermes_ctx_plugins/hermes/checked.py``); every other start builds it on first use: the row "config changed"
  deletes that record before each run.

Children run without ``PYTHONDONTWRITEBYTECODE`` after one warm-up run each, so they import from
up-to-date ``.pyc`` files, as an installed package does.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
#: a valid config for ``hermes-ctx check``: the default strategy and memory, said explicitly
TINY_CONFIG = "ctx_plugins:\n  compressor: summarize\n  memory:\n    providers: [file]\n"

_LOAD_HOST = """
import json, sys, time
t0 = time.perf_counter()
from hermes_ctx_plugins import load_host
t1 = time.perf_counter()
load_host({}).shutdown()
t2 = time.perf_counter()
warm = []
for _ in range(int(sys.argv[1])):
    t = time.perf_counter()
    host = load_host({})
    warm.append(time.perf_counter() - t)
    host.shutdown()
print(json.dumps({"import": t1 - t0, "cold": t2 - t1, "warm": warm}))
"""

_DISCOVER = """
import sys, time
from hermes_cli import plugins
if sys.argv[1] == "chat":  # what hermes' chat CLI imports first (registering our /ctx command imports it)
    import hermes_cli.commands
t = time.perf_counter()
plugins.discover_plugins()
print(time.perf_counter() - t, "hermes_ctx_plugins.hermes.plugin" in sys.modules)
"""


def machine() -> str:
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    return (f"{platform.system()} {platform.release()}, {platform.machine()}, {os.cpu_count()} cores, "
            f"load {load:.1f}, Python {platform.python_version()} ({sys.executable})")


def child_env(home: Path) -> dict[str, str]:
    """The environment of a measured process: ``home`` is its ``HERMES_HOME`` (and ``~/.hermes``)."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "HERMES_CTX_DEPLOYMENT")}
    env.update(HERMES_HOME=str(home), HOME=str(home.parent))
    # this tree's package (an earlier PYTHONPATH entry wins: to measure another checkout)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [env.get("PYTHONPATH"), str(ROOT)]))
    return env


def wall(argv: list[str], env: dict[str, str]) -> float:
    """Seconds from starting ``argv`` to its exit (it must succeed)."""
    start = time.perf_counter()
    subprocess.run(argv, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def printed(argv: list[str], env: dict[str, str]) -> str:
    return subprocess.run(argv, env=env, check=True, capture_output=True, text=True).stdout


def interleaved(rows: dict[str, Callable[[], float]], runs: int) -> dict[str, list[float]]:
    """Each row's samples (seconds), the rows taken in turn (every other round backwards, so that no row is always
    first), after one warm-up round."""
    for measure in rows.values():
        measure()
    samples: dict[str, list[float]] = {name: [] for name in rows}
    for round_ in range(runs):
        for name in list(rows)[::-1 if round_ % 2 else 1]:
            samples[name].append(rows[name]())
    return samples


def paired(a: list[float], b: list[float], how: Callable[[float, float], float]) -> float:
    """The median of ``how(a[i], b[i])`` over the rounds: two rows compared round by round, so that what the
    machine was doing during a round weighs on both sides of it."""
    return statistics.median(how(x, y) for x, y in zip(a, b, strict=True))


def ratio(x: float, y: float) -> float:
    return x / y


def difference(x: float, y: float) -> float:
    return x - y


def ms(seconds: float) -> str:
    return f"{seconds * 1000:8.1f}"


def table(title: str, samples: dict[str, list[float]]) -> None:
    print(f"\n{title}")
    width = max(map(len, samples))
    print(f"  {'':{width}}  median ms    min ms")
    for name, values in samples.items():
        print(f"  {name:{width}}  {ms(statistics.median(values))}  {ms(min(values))}")


def offenders(statement: str, env: dict[str, str], top: int) -> list[tuple[str, float]]:
    """The modules ``-X importtime`` charges most for ``statement`` (their own time, the least of 3 runs, ms)."""
    least: dict[str, int] = {}
    for _ in range(3):
        err = subprocess.run([sys.executable, "-X", "importtime", "-c", statement], env=env, check=True,
                             capture_output=True, text=True).stderr
        for own, name in re.findall(r"^import time:\s+(\d+) \|\s+\d+ \| +(\S+)$", err, re.MULTILINE):
            least[name] = min(least.get(name, 1 << 60), int(own))
    return [(name, us / 1000) for name, us in sorted(least.items(), key=lambda kv: -kv[1])[:top]]


def hermes_homes(base: Path) -> tuple[Path, Path, Path]:
    """Homes for ``check`` (the tiny config), hermes with our plugin installed, and the same without it."""
    check, on, off = (base / name / ".hermes" for name in ("check", "on", "off"))
    for home in (check, on, off):
        home.mkdir(parents=True)
    (check / "config.yaml").write_text(TINY_CONFIG, encoding="utf-8")
    (on / "config.yaml").write_text(TINY_CONFIG, encoding="utf-8")
    subprocess.run([str(BIN / "hermes-ctx"), "install", "-y"], env=child_env(on), check=True, capture_output=True)
    # the same file with our plugin not enabled (hermes loads entry-point plugins only when enabled)
    config = yaml.safe_load((on / "config.yaml").read_text(encoding="utf-8"))
    assert config["plugins"]["enabled"] == ["hermes-ctx"], config
    config["plugins"]["enabled"] = []
    (off / "config.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
    return check, on, off


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="7 processes per row instead of 15")
    parser.add_argument("--summary-json", type=Path, help="also write the goal rows as JSON")
    args = parser.parse_args()
    runs = 7 if args.quick else 15
    summary, started_in = (args.summary_json.resolve() if args.summary_json else None), Path.cwd()
    print(f"command: {' '.join([Path(sys.executable).name, *sys.argv])}")
    print(f"machine: {machine()}")
    with tempfile.TemporaryDirectory(prefix="bench-startup-") as tmp:
        os.chdir(tmp)  # what ``python -c`` puts first on sys.path: nothing there to shadow a module
        try:
            hermes = (BIN / "hermes").exists()
            homes = hermes_homes(Path(tmp)) if hermes else (Path(tmp) / "home" / ".hermes",) * 3
            homes[0].mkdir(parents=True, exist_ok=True)
            env = child_env(homes[0])
            goals = import_tables(runs, env) + load_host_table(runs, 20 if args.quick else 50, env)
            if hermes:
                goals += hermes_tables(runs, *homes)
            else:
                print("\nhermes-agent is not installed: the hermes rows are skipped")
        finally:
            os.chdir(started_in)
    if summary:
        summary.write_text(json.dumps(goals, indent=2) + "\n", encoding="utf-8")
    return 0


def import_tables(runs: int, env: dict[str, str]) -> list[dict[str, Any]]:
    statements = {"python -c pass": "pass", "import hermes_ctx_plugins": "import hermes_ctx_plugins",
                  "from hermes_ctx_plugins import load_host": "from hermes_ctx_plugins import load_host",
                  "import hermes_ctx_plugins.hermes.plugin (hermes' entry point)":
                      "import hermes_ctx_plugins.hermes.plugin"}
    imports = interleaved({name: partial(wall, [sys.executable, "-c", code], env) for name, code in statements.items()},
                          runs)
    table(f"fresh processes, {runs} runs each", imports)
    base = statistics.median(imports["python -c pass"])
    cost = {name: paired(samples, imports["python -c pass"], difference) * 1000 for name, samples in imports.items()}
    print(f"  over python -c pass: import hermes_ctx_plugins {cost['import hermes_ctx_plugins']:.1f} ms, the host's "
          f"modules {cost['from hermes_ctx_plugins import load_host']:.1f} ms")
    for statement in ("import hermes_ctx_plugins", "from hermes_ctx_plugins import load_host; load_host({})"):
        print(f"\n-X importtime, biggest own times (least of 3 runs): python -c {statement!r}")
        for name, own in offenders(statement, env, 12):
            print(f"  {own:7.1f} ms  {name}")
    measured = cost["import hermes_ctx_plugins"]
    return [{"goal": "import hermes_ctx_plugins", "measured": round(measured, 1), "limit": 100.0, "unit": "ms",
             "ok": measured <= 100.0, "anchor": f"python -c pass {base * 1000:.0f} ms"}]


def load_host_table(runs: int, calls: int, env: dict[str, str]) -> list[dict[str, Any]]:
    loads = [json.loads(printed([sys.executable, "-c", _LOAD_HOST, str(calls)], env)) for _ in range(runs)]
    cold = [load["cold"] for load in loads]
    warm = [statistics.median(load["warm"]) for load in loads]
    table(f"load_host({{}}) in {runs} fresh processes: cold = the first call (its modules are imported then), "
          f"warm = the median of the {calls} calls after it", {"cold (first call)": cold, "warm": warm})
    measured = statistics.median(warm) * 1000
    return [{"goal": "load_host({}) warm", "measured": round(measured, 2), "limit": 150.0, "unit": "ms",
             "ok": measured <= 150.0, "anchor": f"cold {statistics.median(cold) * 1000:.0f} ms"}]


def hermes_tables(runs: int, check_home: Path, on_home: Path, off_home: Path) -> list[dict[str, Any]]:
    check_env, on_env, off_env = child_env(check_home), child_env(on_home), child_env(off_home)
    cli = interleaved({
        "hermes --version": lambda: wall([str(BIN / "hermes"), "--version"], check_env),
        "hermes-ctx check": lambda: wall([str(BIN / "hermes-ctx"), "check"], check_env),
    }, runs)
    table(f"hermes-ctx check (config: {TINY_CONFIG.strip()!r}) against hermes --version", cli)
    version = statistics.median(cli["hermes --version"])
    check_ratio = paired(cli["hermes-ctx check"], cli["hermes --version"], ratio)
    print(f"  check / --version: {check_ratio:.2f}x")

    def discover(env: dict[str, str], ours: bool, before: str = "") -> float:
        seconds, loaded = printed([sys.executable, "-c", _DISCOVER, before], env).split()
        assert (loaded == "True") == ours, "our plugin was (not) loaded against the config"
        return float(seconds)

    def rechecked(env: dict[str, str]) -> float:
        (on_home / "ctx_plugins" / "checked.json").unlink(missing_ok=True)  # what a changed config.yaml does
        return discover(env, True, "chat")

    started = interleaved({
        "hermes --version, our plugin enabled": lambda: wall([str(BIN / "hermes"), "--version"], on_env),
        "hermes --version, not enabled": lambda: wall([str(BIN / "hermes"), "--version"], off_env),
        "hermes discover_plugins(), our plugin enabled": lambda: discover(on_env, True),
        "hermes discover_plugins(), not enabled": lambda: discover(off_env, False),
        "the same in hermes chat (hermes_cli.commands loaded), enabled": lambda: discover(on_env, True, "chat"),
        "the same in hermes chat (hermes_cli.commands loaded), not enabled": lambda: discover(off_env, False, "chat"),
        "the same, enabled, config changed since the last start (the check runs)": lambda: rechecked(on_env),
    }, runs)
    table("hermes with our plugin enabled (hermes-ctx install) and without it; discover_plugins() timed in-process",
          started)
    def against(row: str, enabled: str, how: Callable[[float, float], float]) -> float:
        return paired(started[f"{row}, {enabled}"], started[f"{row}, not enabled"], how)

    version_ratio = against("hermes --version", "our plugin enabled", ratio)
    share = against("hermes discover_plugins()", "our plugin enabled", difference)
    in_chat = against("the same in hermes chat (hermes_cli.commands loaded)", "enabled", difference)
    checking = paired(started["the same, enabled, config changed since the last start (the check runs)"],
                      started["the same in hermes chat (hermes_cli.commands loaded), not enabled"], difference)
    print(f"  --version enabled / not: {version_ratio:.2f}x; loading and registering our plugin adds "
          f"{share * 1000:.0f} ms to hermes' plugin discovery, {in_chat * 1000:.0f} ms where hermes' slash commands "
          f"are loaded already; {checking * 1000:.0f} ms at the first start after the config changed (the host is "
          "built then, as the check)")
    own = statistics.median(started["the same in hermes chat (hermes_cli.commands loaded), not enabled"])
    return [{"goal": "our plugin's share of hermes' discover_plugins() (chat)", "measured": round(in_chat * 1000, 1),
             "limit": 50.0, "unit": "ms", "ok": in_chat * 1000 <= 50.0,
             "anchor": f"hermes' own discover_plugins() {own * 1000:.0f} ms; bare (no slash commands loaded): "
                       f"ours {share * 1000:.0f} ms"},
            {"goal": "hermes-ctx check / hermes --version", "measured": round(check_ratio, 3), "limit": 1.05,
             "unit": "x", "ok": check_ratio <= 1.05, "anchor": f"hermes --version {version * 1000:.0f} ms"},
            {"goal": "hermes --version, our plugin enabled / not", "measured": round(version_ratio, 3), "limit": 1.05,
             "unit": "x", "ok": version_ratio <= 1.05,
             "anchor": f"our plugin adds {share * 1000:.0f} ms to discover_plugins() "
                       f"({in_chat * 1000:.0f} ms in chat)"}]

if __name__ == "__main__":
    sys.exit(main())

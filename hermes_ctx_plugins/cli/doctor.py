"""``hermes-ctx doctor``: the config, the plugins, every memory provider's health (availability, circuit
breaker, queued writes, a probe of the service) and a storage server's (connection, schema, pool); exit 1
when a selected provider or the storage server is not usable."""

from __future__ import annotations

import argparse
import json
import os
import time
from dataclasses import asdict
from typing import Any

from .. import storage
from ..cliutil import EXIT_PROBLEM
from ..config import hermes_home
from ..errors import ConfigError, PluginError, ProviderLimitError
from .common import bad_deployments, load, load_failed


def add_parser(commands: Any) -> None:
    doctor = commands.add_parser("doctor", help="check config, plugins and memory providers: availability, "
                                                "circuit breaker, queued writes, a probe of the service")
    doctor.add_argument("--json", action="store_true", help="machine-readable output")
    doctor.add_argument("--no-probe", action="store_true",
                        help="do not contact the memory services or the storage server")


def run(args: argparse.Namespace) -> int:
    """Config, plugins and every memory provider's health; exit 1 when a selected provider is not usable."""
    from ..memory.remote.base import RemoteProvider, read_status

    try:
        config, host = load(args)
    except (ConfigError, ProviderLimitError, PluginError) as exc:
        return load_failed(exc)
    bad = bad_deployments(args, config)
    if bad:
        host.shutdown()
        return load_failed(bad[0])
    selected = {p.name for p in host.memory_providers} | ({config.memory.provider} - {""})
    problems: list[str] = []
    rows: list[dict[str, Any]] = []
    for entry in (r for r in host.registry if r.kind == "memory"):
        row: dict[str, Any] = {"name": entry.name, "external": entry.external, "source": entry.source,
                               "selected": entry.name in selected}
        rows.append(row)
        try:
            provider = host.provider_instance(entry.name)
            availability = getattr(provider, "availability", None)
            available, why = availability() if callable(availability) else (provider.is_available(), "")
        except Exception as exc:  # a provider that cannot even be created is what doctor is for
            row.update(available=False, why=f"{type(exc).__name__}: {exc}")
            if row["selected"]:
                problems.append(f"{entry.name}: {row['why']}")
            continue
        row.update(available=available, why=why)
        if row["selected"] and not available:
            problems.append(f"{entry.name} is selected but unavailable: {why}")
        if not isinstance(provider, RemoteProvider):
            continue
        reported = read_status(provider.state_dir)
        if reported and reported.get("pid") != os.getpid():
            row["last_reported"] = reported
        if row["selected"] and available and not args.no_probe:
            started = time.perf_counter()
            try:
                provider.check()
                row["probe"] = f"ok ({(time.perf_counter() - started) * 1000:.0f} ms)"
            except Exception as exc:
                row["probe"] = f"failed: {type(exc).__name__}: {exc}"
                problems.append(f"{entry.name} probe {row['probe']}")
            finally:
                provider.close_client()
        row.update({k: v for k, v in provider.status().items() if k in (
            "breaker", "queued", "spooled", "sent", "dropped", "rejected")})
    stores = [] if args.no_probe else [{"check": what, "ok": ok, "detail": detail}
                                       for what, ok, detail in storage.check(config)]
    problems += [f"{row['check']}: {row['detail']}" for row in stores if not row["ok"]]
    report = {"config": config.source, "hermes_home": str(hermes_home()), "deployment": config.deployment,
              "compressor": host.compressor.name if host.compressor else None,
              "plugins": [asdict(p) for p in host.loaded_plugins()], "memory_providers": rows, "storage": stores,
              "ok": not problems, "problems": problems}
    print(json.dumps(report, indent=2, default=str) if args.json else _as_text(report))
    return 0 if not problems else EXIT_PROBLEM


def _as_text(report: dict[str, Any]) -> str:
    lines = [f"config       {report['config']}" + (f"   deployment: {report['deployment']}"
                                                   if report["deployment"] else ""),
             f"hermes home  {report['hermes_home']}",
             f"compressor   {report['compressor'] or '(none: hermes built-in)'}",
             "plugins"]
    lines += [f"  {p['name']} ({p['source']}): {p['status']}" for p in report["plugins"]]
    lines.append("memory providers")
    width = max((len(r["name"]) for r in report["memory_providers"]), default=4)
    for row in report["memory_providers"]:
        state = "available" if row["available"] else "unavailable"
        why = f": {row['why']}" if row.get("why") else ""
        lines.append(f"  {row['name']:<{width}}  {'external' if row['external'] else 'built-in':<8}  "
                     f"{'selected' if row['selected'] else '-':<8}  {state}{why}")
        pad = " " * (width + 4)
        if "breaker" in row and (row["selected"] or row["queued"] or row["spooled"]):
            lines.append(f"{pad}breaker: {row['breaker']}" + (f"; probe: {row['probe']}" if "probe" in row else ""))
            lines.append(f"{pad}writes: {row['queued']} queued here, {row['spooled']} spooled on disk "
                         f"(sent {row['sent']}, dropped {row['dropped']}, rejected {row['rejected']})")
        last = row.get("last_reported")
        if last:
            when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(float(last.get("updated") or 0)))
            lines.append(f"{pad}last reported by pid {last.get('pid')} at {when}: breaker {last.get('breaker')}; "
                         f"{last.get('queued', 0)} queued, sent {last.get('sent', 0)}, "
                         f"dropped {last.get('dropped', 0)}")
    if report["storage"]:
        lines.append("storage")
        lines += [f"  {row['check']}: {'ok' if row['ok'] else 'FAIL'}: {row['detail']}" for row in report["storage"]]
    lines.append("result: OK" if report["ok"] else "result: PROBLEMS\n" + "\n".join(
        f"  - {p}" for p in report["problems"]))
    return "\n".join(lines)

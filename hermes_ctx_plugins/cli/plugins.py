"""``hermes-ctx plugins`` (what is installed, and its status here and in a running hermes) and
``hermes-ctx check`` (the config, every deployment in it and the installed plugins)."""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import asdict
from typing import Any

from ..cliutil import EXIT_PLUGIN, emit, print_json, shown, table, wants_json
from ..config import hermes_home
from ..errors import HermesCtxError
from ..manager import Host
from ..runstate import read_state
from .common import bad_deployments, build_hermes_provider, load, load_failed


def add_parser(commands: Any) -> None:
    commands.add_parser("plugins", help="list strategies, providers and plugins with their status")
    commands.add_parser("check", help="validate the config, every deployment in it and the installed plugins")


def run(args: argparse.Namespace) -> int:
    """``plugins`` or ``check``, as ``args.command`` says."""
    try:
        _, host = load(args)
    except HermesCtxError as exc:
        return load_failed(exc)
    failed = next(iter(bad_deployments(args, host.config)), None)
    if failed is not None:
        host.shutdown()
        return load_failed(failed)
    if args.command == "plugins":
        running = read_state(hermes_home())
        if wants_json(args):
            print_json({**_as_json(host), "running": running})
        else:
            table(("NAME", "KIND", "EXTERNAL", "STATUS", "SOURCE"),
                  [(r.name, r.kind, "yes" if r.external else "no", _status(r, host), r.source) for r in host.plugins()])
            print(shown(_details(host) + "\n" + _running_text(running)))
        return 0
    if host.load_failures:
        for name, why in host.load_failures.items():
            print(shown(f"hermes-ctx: plugin {name!r} failed to load and is skipped: {why}"), file=sys.stderr)
        return EXIT_PLUGIN
    compressor = host.compressor.name if host.compressor else None
    providers = [p.name for p in host.memory_providers]
    # hermes' memory.provider (what `hermes-ctx install` sets) runs one of ours inside hermes: built as hermes
    # will, so that an option only its construction checks (an embedder, a service address) is said here too
    hermes_provider = host.config.memory.provider
    ours = bool(hermes_provider) and any(r.kind == "memory" and r.name == hermes_provider for r in host.registry)
    try:
        runs = build_hermes_provider(host) is not None
    except HermesCtxError as exc:
        host.shutdown()
        return load_failed(exc)
    source = next((r.source for r in host.registry if r.kind == "memory" and r.name == hermes_provider), "")
    whose = "ours" if source == "built-in" else f"a hermes-ctx plugin from {source}"  # a third party's is not ours
    # (beside "memory providers: file", a newcomer read ctx-local as off: said that hermes runs it too)
    said = (f"({whose}): hermes runs it, beside the providers above" if runs
            else f"({whose}, but hermes runs without it: `hermes-ctx doctor` says why)")
    # listed, but inside hermes an external provider runs only as its memory.provider (hermes' own rule)
    idle = [p.name for p in host.memory_providers if p.external and p.name != hermes_provider]
    wiring = _wiring_problems(args, host)
    stray = host.config.stray_warnings()
    emit(args, {"ok": True, "config": host.config.source, "deployment": host.config.deployment,
                "deployments": sorted(host.config.plugins.deployments), "compressor": compressor,
                "memory_providers": providers, "hermes_memory_provider": hermes_provider if ours else None,
                "not_run_by_hermes": idle, "hermes_wiring_problems": wiring, "config_warnings": stray},
         lambda: "\n".join([f"config OK: {host.config.source}"
                            + (f" (deployment {host.config.deployment!r})" if host.config.deployment else ""),
                            f"compressor: {compressor or '(none: hermes built-in)'}",
                            f"memory providers: {', '.join(providers) or '(none)'}"]
                           + ([f"hermes' memory.provider: {hermes_provider} {said}"] if ours else [])
                           + ([_idle_note(idle, hermes_provider, host.config.line_of("memory.provider") is not None)]
                              if idle else [])
                           + [f"warning: {problem}" for problem in [*stray, *wiring]]
                           + (["hermes-ctx check validates our config; `hermes-ctx doctor` checks hermes' wiring "
                               "too"] if wiring else [])))
    return 0


def _wiring_problems(args: argparse.Namespace, host: Host) -> list[str]:
    """What in hermes' own config keeps hermes from running us as configured (a mistyped ``memory.provider``,
    ``context.engine`` or ``plugins.enabled``): ``check`` said "config OK" and only ``doctor`` said these (a newcomer
    walk). Each with its fix, as ``doctor`` says it; nothing when hermes' config cannot be read here."""
    from .doctor import fixable, hermes_config_path, hermes_wiring, read_hermes_config, set_wrong

    try:
        raw = read_hermes_config(hermes_config_path(args))
    except HermesCtxError:
        return []
    # what a Bridge does without (README: it installs the engine itself, drives the providers through our hooks) is
    # no warning when left unset: only a value set wrong is (a review: check warned on README's Bridge config)
    # the fix as doctor says it: what install cannot edit (plugins.enabled written as a text) is fixed by hand first
    # (check named install, which then refused: a newcomer walk)
    return [f"{w.detail} (fix: {w.fix})" for w in fixable(args, hermes_wiring(raw, hermes_home(), host.plugins()))
            if not w.ok and set_wrong(raw, w.check)]


def _idle_note(idle: list[str], hermes_provider: str, written: bool) -> str:
    """What ``check`` says of listed external providers hermes will not run (a Bridge and the API still do);
    ``written``: ``memory.provider`` is in the file (``''`` there is ``hermes memory off``, the user's own switch)."""
    now = (f"memory.provider is {hermes_provider!r}" if hermes_provider
           else "memory.provider is '' (hermes memory off)" if written else "memory.provider is not set")
    return (f"note: inside hermes {', '.join(idle)} {'runs' if len(idle) == 1 else 'run'} only as hermes' "
            f"memory.provider, and {now}: hermes will not run {'it' if len(idle) == 1 else 'them'} "
            f"(`hermes-ctx install --memory {idle[0]}` sets it; a Bridge and the Python API use the list)")


def _status(record: Any, host: Host) -> str:
    """A record's status as the listing shows it: an external provider hermes runs as its ``memory.provider`` is
    active there, whatever this command's own host selected (its ``ctx_plugins.memory.providers``)."""
    if (record.status == "not selected" and record.kind == "memory" and record.external
            and record.name == host.config.memory.provider):
        return "active in hermes (memory.provider)"
    return str(record.status)


def _as_json(host: Host) -> dict[str, Any]:
    return {
        "config": host.config.source,
        "hermes_home": str(hermes_home()),
        "deployment": host.config.deployment,
        "compressor": host.compressor.name if host.compressor else None,
        "memory_providers": [p.name for p in host.memory_providers],
        "plugins": [asdict(r) for r in host.plugins()],
        "loaded": [asdict(p) for p in host.loaded_plugins()],
    }


def _details(host: Host) -> str:
    """What the table does not say: the config, and each loaded plugin's hooks."""
    lines = ["(no strategies or providers registered)"] if not host.plugins() else []
    lines.append("")
    lines.append(f"config: {host.config.source}"
                 + (f"   deployment: {host.config.deployment}" if host.config.deployment else ""))
    for plugin in host.loaded_plugins():
        hooks = ", ".join(plugin.hooks) or "-"
        lines.append(f"plugin {plugin.name} ({plugin.source}): {plugin.status}; hooks: {hooks}")
    return "\n".join(lines)


def _running_text(running: dict[str, Any] | None) -> str:
    """What a running hermes last published about its plugins (suspensions happen there, not here)."""
    if running is None:
        return "running hermes: no state published under this hermes home (hermes has not loaded hermes-ctx)"
    when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(float(running.get("updated") or 0)))
    alive = "running" if running["alive"] else "no longer running"
    lines = [f"running hermes: pid {running['pid']} ({alive}), state of {when}"]
    for record in running.get("plugins") or ():
        if record.get("status") not in ("active", "not selected", "available", "disabled"):  # (available: before 0.2)
            lines.append(f"  {record.get('kind')} {record.get('name')}: {record.get('status')}")
    for record in running.get("loaded") or ():
        if str(record.get("status", "")).startswith(("failed", "suspended", "failing")):
            lines.append(f"  plugin {record.get('name')}: {record.get('status')}")
    if len(lines) == 1:
        lines.append("  every strategy, provider and plugin healthy")
    return "\n".join(lines)

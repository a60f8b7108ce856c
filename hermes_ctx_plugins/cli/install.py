"""``hermes-ctx install``: wire hermes-ctx-plugins into hermes' ``config.yaml``; ``--uninstall`` unwires it.

hermes runs us only when its config says so: ``plugins.enabled`` lists ``hermes-ctx`` (entry-point
plugins are opt-in), ``context.engine: hermes-ctx`` selects our engine (without it hermes compacts with
its built-in compressor and notes that only in ``agent.log``), and ``memory.provider`` may name one of
our providers, which hermes finds only through a shim under ``$HERMES_HOME/plugins/``. Install writes
those, a ``ctx_plugins:`` section when there is none, and the shims; it never replaces what the user
chose (another engine needs ``--yes``, another memory provider ``--memory``). A second run changes nothing.

``memory.provider`` there but empty is a choice too: ``hermes memory off`` writes ``provider: ''``, so
install leaves it (``--memory ctx-local`` replaces it) and fills in a provider only where the key is
missing: the external provider of ours the top-level ``ctx_plugins.memory.providers`` lists, if it lists
one (0.1.0 ran it from that list; inside hermes it runs only as ``memory.provider``), else ctx-local;
``--memory`` naming another external provider than the listed one is refused (one may be active). One
writer of hermes' puts ``provider: ''`` in a file nobody chose it in: ``hermes config edit``
creating the file writes every default out (``save_config(DEFAULT_CONFIG, strip_defaults=False)``);
every other write (``hermes setup``, ``config set``, ``memory off`` itself) leaves out a value equal to
its default unless the file already had the key, so on a fresh home ``hermes memory off`` writes
nothing and the key stays missing. ``_config_version`` tells none of this apart (every write keeps it).
So an empty provider counts as hermes' written-out default, and is replaced, only when the ``memory``
section holds every one of hermes' default memory keys and ``plugins.enabled`` does not list us yet (a
file we were installed in before holds the user's ``hermes memory off``).

The file is edited with ruamel.yaml in round-trip mode (:mod:`.yaml_edit`), backed up first
(``config.yaml.bak.<time>``) and replaced atomically. Nothing is written when the result would not load,
or would change a key install does not own (an anchor shared with one, say): ``--dry-run`` still shows
that edit, and exits 2.
"""

from __future__ import annotations

import argparse
import difflib
import os
import shutil
import sys
import time
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ..cliutil import EXIT_CONFIG, EXIT_INPUT, EXIT_PROBLEM, confirm, print_json
from ..config import DEFAULT_COMPRESSOR, DEFAULT_PROVIDERS, Config, hermes_home, load_config
from ..config.reader import MAX_CONFIG_BYTES, parse_yaml, read_text
from ..config.settings import line_in
from ..errors import ConfigError, HermesCtxError, ProviderLimitError, did_you_mean
from ..hermes.profile import DEFAULT_PROFILE, profile_of
from ..manager import PluginRecord, load_host
from ..storage.files import atomic_write
from . import shims, yaml_edit
from .common import deployment_errors, load_failed
from .doctor import (
    BUILTIN_ENGINE,
    PLUGIN_NAME,
    Wiring,
    availability,
    hermes_config_path,
    hermes_wiring,
    section_of,
)

#: hermes' ``memory.provider`` install selects when none is set
DEFAULT_MEMORY = "ctx-local"
#: what install and uninstall may change: (section, key; ``None`` for the whole section)
OWNED = (("plugins", "enabled"), ("plugins", "disabled"), ("context", "engine"), ("memory", "provider"),
         ("ctx_plugins", None))
_README = 'every key: README "Configuration"'


def add_parser(commands: Any) -> None:
    install = commands.add_parser(
        "install", help="wire hermes-ctx into hermes' config.yaml (plugins.enabled, context.engine, "
                        "memory.provider, a ctx_plugins section) and write the memory-provider shims")
    install.add_argument("--uninstall", action="store_true",
                         help="remove what install adds (the ctx_plugins section stays: your settings)")
    install.add_argument("--purge", action="store_true", help="with --uninstall: remove the ctx_plugins section too")
    install.add_argument("--dry-run", action="store_true", help="print the diff it would apply and write nothing")
    install.add_argument("--memory", metavar="NAME",
                         help=f"set hermes' memory.provider to our provider NAME (default: {DEFAULT_MEMORY} when "
                              "none is set; another provider you chose is kept); none leaves it as it is")
    install.add_argument("-y", "--yes", action="store_true",
                         help="replace another context engine (or --purge) without asking")


@dataclass
class Plan:
    """What one run does, in words."""

    changes: list[str] = field(default_factory=list)
    #: what was left as it is, and why
    kept: list[str] = field(default_factory=list)
    #: a question to ask before writing (replacing another engine, purging our section)
    ask: str = ""


@dataclass
class Outcome:
    """What a run did, for the text and the JSON report."""

    config: str
    dry_run: bool
    changes: list[str]
    kept: list[str]
    #: the hermes profile whose home this is (``default``: the root)
    profile: str = "default"
    backup: str | None = None
    shims: list[str] = field(default_factory=list)
    wiring: list[Wiring] = field(default_factory=list)
    #: what works but not yet (hermes' memory provider unavailable, as hermes' own check says)
    warnings: list[str] = field(default_factory=list)


def run(args: argparse.Namespace) -> int:
    if args.purge and not args.uninstall:
        print("hermes-ctx: --purge goes with --uninstall", file=sys.stderr)
        return EXIT_INPUT
    path, home = hermes_config_path(args), hermes_home()
    try:
        before = _read(path)
        config = load_config(path if before is not None else {}, deployment=args.deployment)
        ours = {r.name: r.external for r in _memory_plugins(config)[0]}
        bad_memory = _bad_memory(args.memory, ours)
        if bad_memory:
            print(f"hermes-ctx: {bad_memory}", file=sys.stderr)
            return EXIT_INPUT
        doc = _parse(before or "", path)
        try:
            listed = _listed(doc, ours)
            if not args.uninstall and args.memory not in (None, "none", listed) and listed:
                print(f"hermes-ctx: {_conflict(args.memory, listed, path)}", file=sys.stderr)
                return EXIT_INPUT
            plan = (_unwire(doc, ours, purge=args.purge) if args.uninstall
                    else _wire(doc, ours, args.memory, before or "", listed=listed))
        except ConfigError as exc:  # a section that is not a mapping: its line in the file
            raise config.locate(exc) from None
        after = yaml_edit.dump(doc, before or "") if plan.changes else before
        # what hermes and we read next must load and mean what it meant, but for our keys: else no write
        if len((after or "").encode("utf-8")) > MAX_CONFIG_BYTES:  # (a red-team pass: 262,044 bytes became 262,246)
            raise ConfigError(f"the edited file would be larger than {MAX_CONFIG_BYTES:,} bytes, the limit for a "
                              "config file, and would no longer load; keep only settings in it", source=str(path),
                              expected=f"at most {MAX_CONFIG_BYTES:,} bytes")
        data = parse_yaml(after or "", str(path))[0]
        hermes_memory = section_of(data, "memory").get("provider")
        selected = hermes_memory if isinstance(hermes_memory, str) and ours.get(hermes_memory) else ""
        edited = load_config(data, deployment=args.deployment)  # (--deployment, else $HERMES_CTX_DEPLOYMENT)
        try:
            plugins, unavailable = _memory_plugins(edited, check=selected)
        except ProviderLimitError as exc:  # the deployment install runs for: said as for the others
            _refuse_provider(exc, data, parse_yaml(before or "", str(path))[0], path,
                             f"deployment {edited.deployment!r}" if edited.deployment else "the top level")
            raise
        refusal = _other_change(parse_yaml(before or "", str(path))[0], data, path, dry_run=args.dry_run)
        if not args.uninstall and plan.changes:  # every deployment of it must load, as check and doctor demand
            _whole_file_loads(args, data, parse_yaml(before or "", str(path))[0], path)
    except HermesCtxError as exc:
        return load_failed(exc)
    outcome = Outcome(str(path), args.dry_run, plan.changes, plan.kept, profile=profile_of(home),
                      warnings=[unavailable] if unavailable and not args.uninstall else [])
    if args.dry_run:
        outcome.shims = ([f"would remove {folder.name}" for folder in shims.to_remove(home)] if args.uninstall
                         else shims.to_write(home, ours))
        return _dry_run(args, outcome, before, after, plan, refusal)
    if refusal is not None:
        return _refused(refusal)
    if plan.ask:
        refused = _confirm(plan.ask, yes=args.yes)
        if refused is not None:
            return refused
    if after != before and _current(path) != before:  # hermes or the user wrote it meanwhile: their edit stays
        print(f"hermes-ctx: {path} changed while install was working (another program wrote it); "
              "nothing was written: run install again", file=sys.stderr)
        return EXIT_PROBLEM
    try:  # the shims first: one that cannot be written leaves the config as it was, not wired to a missing shim
        if not args.uninstall:
            outcome.shims = shims.write(home, ours)
    except OSError as exc:  # a plugins folder that is read-only or a file
        kept = "" if args.uninstall or _current(path) != before else f"; {path} was not changed"
        print(f"hermes-ctx: {exc}{kept}", file=sys.stderr)
        return EXIT_PROBLEM
    try:
        if after != before:
            outcome.backup = _write(path, before, after or "")
        if args.uninstall:  # after the config: a shim left over is harmless once nothing names it
            outcome.shims = shims.remove(shims.to_remove(home))
    except OSError as exc:  # a read-only home, a full disk: the config is whole, old or new
        if not args.uninstall:  # the shims this run wrote for a config it could not write go again
            written = {said.removeprefix("wrote ") for said in outcome.shims if said.startswith("wrote ")}
            shims.remove([folder for folder in shims.to_remove(home) if folder.name in written])
        kept = "" if args.uninstall or _current(path) != before else f"; {path} was not changed"
        print(f"hermes-ctx: {exc}{kept}", file=sys.stderr)
        return EXIT_PROBLEM
    if not args.uninstall:
        outcome.wiring = hermes_wiring(data, home, plugins)
    _report(args, outcome)
    return EXIT_PROBLEM if any(not w.ok for w in outcome.wiring) else 0


# ------------------------------------------------------------------------------------ the edits

def _wire(doc: Any, ours: Mapping[str, bool], memory: str | None, text: str, *, listed: str) -> Plan:
    plan = Plan()
    enabled = yaml_edit.get(doc, "plugins", "enabled")
    wired_before = isinstance(enabled, list) and PLUGIN_NAME in enabled
    if not wired_before:
        yaml_edit.append_to(doc, ("plugins", "enabled"), PLUGIN_NAME)
        plan.changes.append(f"plugins.enabled: added {PLUGIN_NAME}")
    disabled = yaml_edit.get(doc, "plugins", "disabled")
    if isinstance(disabled, list) and PLUGIN_NAME in disabled:
        for index in reversed([i for i, name in enumerate(disabled) if name == PLUGIN_NAME]):
            del disabled[index]
        plan.changes.append(f"plugins.disabled: removed {PLUGIN_NAME} (hermes lets it win over plugins.enabled)")
    engine = yaml_edit.get(doc, "context", "engine")
    if engine != PLUGIN_NAME:
        if engine not in (None, "", BUILTIN_ENGINE):
            plan.ask = f"context.engine is {engine!r}, another engine: replace it with {PLUGIN_NAME}?"
        yaml_edit.set_in(doc, ("context", "engine"), PLUGIN_NAME)
        plan.changes.append(f"context.engine: {PLUGIN_NAME}" + (f" (was {engine!r})" if engine else ""))
    _select_memory(doc, ours, memory, plan, wired_before=wired_before, listed=listed)
    if "ctx_plugins" in doc:
        plan.kept.append("ctx_plugins: your section, as it is")
    else:
        section = yaml_edit.new_mapping(compressor=DEFAULT_COMPRESSOR)
        section["memory"] = yaml_edit.new_mapping(providers=yaml_edit.flow_list(DEFAULT_PROVIDERS))
        yaml_edit.set_in(doc, ("ctx_plugins",), yaml_edit.with_comment(section, _README, text))
        plan.changes.append(f"ctx_plugins: added (compressor {DEFAULT_COMPRESSOR}, memory providers "
                            f"[{', '.join(DEFAULT_PROVIDERS)}])")
    return plan


def _select_memory(doc: Any, ours: Mapping[str, bool], memory: str | None, plan: Plan, *,
                   wired_before: bool, listed: str) -> None:
    """hermes' ``memory.provider``: ``memory`` (``--memory``), else, where the key is missing (or only
    written out with hermes' defaults), ``listed`` or :data:`DEFAULT_MEMORY`."""
    section = yaml_edit.get(doc, "memory")
    present = isinstance(section, Mapping) and "provider" in section
    current = yaml_edit.get(doc, "memory", "provider") or ""
    if memory == "none":
        plan.kept.append(f"memory.provider: {current!r} (--memory none)" if present
                         else "memory.provider: not set, left alone (--memory none)")
        return
    if current and memory is None:
        if current not in ours:
            plan.kept.append(f"memory.provider: {current!r}, your choice (--memory NAME replaces it)")
        return
    from ..hermes.layers import all_defaults_written  # hermes' defaults: what the module's docstring says

    written_out = present and not wired_before and all_defaults_written("memory", section)
    if present and memory is None and not written_out:
        plan.kept.append(f"memory.provider is '' (hermes memory off): left alone; --memory {listed or DEFAULT_MEMORY} "
                         "to use ours")
        return
    wanted = memory or listed or DEFAULT_MEMORY
    if current != wanted:
        yaml_edit.set_in(doc, ("memory", "provider"), wanted)
        why = (", which ctx_plugins.memory.providers lists: inside hermes it runs as memory.provider"
               if wanted == listed and memory is None else "")
        was = (f" (was {current!r})" if current else
               " (was '', one of the defaults hermes wrote out with all the others; hermes memory off undoes it)"
               if written_out else "")
        plan.changes.append(f"memory.provider: {wanted}{why}{was}")


def _listed(doc: Any, ours: Mapping[str, bool]) -> str:
    """The external provider of ours the top-level ``ctx_plugins.memory.providers`` lists ("" for none;
    the config would not load with two)."""
    listed = yaml_edit.get(doc, "ctx_plugins", "memory", "providers")
    names = [n for n in listed if isinstance(n, str) and ours.get(n)] if isinstance(listed, list) else []
    return names[0] if len(names) == 1 else ""


def _conflict(memory: str, listed: str, path: Path) -> str:
    """Why ``--memory`` and the listed external provider cannot both be: hermes' rule is one external."""
    return (f"--memory {memory} and {listed}, which ctx_plugins.memory.providers lists, would be two external "
            f"memory providers (one may be active; inside hermes it runs as memory.provider): nothing changed; "
            f"either run hermes-ctx install --memory {listed}, or remove {listed} from ctx_plugins.memory.providers "
            f"in {path} and run this again")


def _unwire(doc: Any, ours: Mapping[str, bool], *, purge: bool) -> Plan:
    plan = Plan()
    enabled = yaml_edit.get(doc, "plugins", "enabled")
    if isinstance(enabled, list) and PLUGIN_NAME in enabled:
        for index in reversed([i for i, name in enumerate(enabled) if name == PLUGIN_NAME]):
            yaml_edit.delete(doc, "plugins", "enabled", index)  # the last one may take the list with it
        plan.changes.append(f"plugins.enabled: removed {PLUGIN_NAME}")
    if yaml_edit.get(doc, "context", "engine") == PLUGIN_NAME:
        yaml_edit.delete(doc, "context", "engine")
        plan.changes.append(f"context.engine: removed (hermes goes back to its built-in {BUILTIN_ENGINE})")
    provider = yaml_edit.get(doc, "memory", "provider")
    if provider in ours:
        yaml_edit.delete(doc, "memory", "provider")
        plan.changes.append(f"memory.provider: removed {provider!r} (hermes' own memory only, as `hermes memory off`)")
    if "ctx_plugins" not in doc:
        return plan
    if purge:
        yaml_edit.delete(doc, "ctx_plugins")
        plan.changes.append("ctx_plugins: removed (--purge; the backup has it)")
        plan.ask = "remove the ctx_plugins section, your hermes-ctx settings?"
    else:
        plan.kept.append("ctx_plugins: your settings (--purge removes them)")
    return plan


# ------------------------------------------------------------------------------------ around the edits

def _read(path: Path) -> str | None:
    """The config's text, ``None`` when there is none yet."""
    try:
        return read_text(path, str(path))
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise ConfigError(f"cannot read config file: {exc}", source=str(path)) from None


def _current(path: Path) -> str | None:
    """The config's text now (``""`` standing for one that can no longer be read)."""
    try:
        return _read(path)
    except ConfigError:
        return ""


def _parse(text: str, path: Path) -> Any:
    try:
        return yaml_edit.load(text)
    except ConfigError as exc:
        raise exc.located(source=str(path), line=exc.line) from None


def _whole_file_loads(args: argparse.Namespace, data: Mapping[str, Any], before: Mapping[str, Any],
                      path: Path) -> None:
    """Raise what loading the edited config ``data`` raises in any of its deployments (a Bridge loads each): install
    checked the one it was run for, and wrote a memory.provider a deployment could not run beside its own external
    provider, or into a file one deployment already could not load (a red-team pass: exit 0, then the Bridge did
    not start). A provider of ours install chose that a deployment cannot run says how to choose none."""
    config = load_config(data, deployment=args.deployment)
    errors = deployment_errors(args, config, source=data)
    if not errors:
        return
    name, error = errors[0]
    _refuse_provider(error, data, before, path, f"deployment {name!r}")
    if isinstance(error, ConfigError) and error.source == "<dict>":  # where it is in the file (as it is on disk)
        lines = load_config(path).lines if path.exists() else {}
        error = error.located(source=str(path), line=line_in(lines, error.path, name))
    raise ConfigError(f"not changed: deployment {name!r} would not load: {error}", source=str(path))


def _refuse_provider(error: HermesCtxError, data: Mapping[str, Any], before: Mapping[str, Any], path: Path,
                     who: str) -> None:
    """Raise, saying how to choose none, when ``error`` is two external providers in ``who`` because install set
    ``memory.provider`` to one of ours."""
    chosen = section_of(data, "memory").get("provider")
    if isinstance(error, ProviderLimitError) and chosen != section_of(before, "memory").get("provider"):
        raise ConfigError(f"not changed: install would set memory.provider to {chosen!r}, which {who} cannot run: "
                          f"{error}; run install --memory none (hermes runs no external provider of ours) or "
                          "--memory with one every deployment can run", source=str(path))


def _memory_plugins(config: Config, *, check: str = "") -> tuple[list[PluginRecord], str]:
    """Our memory providers as the plugins ``config`` selects register them (external ones are those
    hermes' ``memory.provider`` may name), and why provider ``check`` is unavailable ("" when it is, or
    none is named); raises what loading them raises."""
    host = load_host(config)
    try:
        return [r for r in host.plugins() if r.kind == "memory"], _unavailable(host, check)
    finally:
        host.shutdown()


def _unavailable(host: Any, name: str) -> str:
    """Why hermes would leave out its memory provider ``name`` now ("" when it would run it)."""
    if not name:
        return ""
    try:
        available, why = availability(host.provider_instance(name))
    except HermesCtxError as exc:  # its options are invalid: the same as unavailable, said why
        available, why = False, str(exc)
    if available:
        return ""
    return (f"memory.provider {name} is unavailable: {why}; hermes runs without it until that is fixed "
            "(hermes-ctx doctor checks again)")



def _bad_memory(memory: str | None, ours: Mapping[str, bool]) -> str:
    """Why ``--memory`` cannot be used ("" when it can)."""
    external = sorted(name for name, is_external in ours.items() if is_external)
    if memory in (None, "none", *external):
        return ""
    return (f"--memory {memory!r} is not one of our memory providers{did_you_mean(memory, external)}; "
            f"choose one of {', '.join(external)}, or none")


def _other_change(before: Mapping[str, Any], after: Mapping[str, Any], path: Path, *,
                  dry_run: bool) -> ConfigError | None:
    """Why the edit must not be written: it would change what hermes reads anywhere but in the keys
    install owns (an anchor shared with one of them, a YAML round trip that went wrong), naming the
    first section that would change; ``None`` when it changes only ours."""
    old, new = _without_ours(before), _without_ours(after)
    changed = next((key for key in {**old, **new} if old.get(key) != new.get(key)), None)
    if changed is None:
        return None
    what = ("install will not write the edit shown above" if dry_run
            else "nothing was written (hermes-ctx install --dry-run shows the edit)")
    return ConfigError(f"editing the file would also change {changed!r}, which hermes-ctx does not own; "
                       f"{what}: make the change by hand", path=str(changed), source=str(path))


def _without_ours(data: Mapping[str, Any]) -> dict[str, Any]:
    """``data`` without the keys install and uninstall change, and without the sections that leaves empty."""
    copy = {key: dict(value) if isinstance(value, Mapping) else value for key, value in data.items()}
    for section, key in OWNED:
        inside = copy.get(section)
        if key is None or (isinstance(inside, dict) and inside.keys() <= {key}):
            copy.pop(section, None)
        elif isinstance(inside, dict):
            inside.pop(key, None)
    return copy


def _confirm(question: str, *, yes: bool) -> int | None:
    if not yes and not sys.stdin.isatty():
        print(f"hermes-ctx: {question} confirm with --yes (there is no terminal to ask on); nothing changed",
              file=sys.stderr)
        return EXIT_INPUT
    return confirm(f"{question} [y/N] ", yes=yes)


def _write(path: Path, before: str | None, after: str) -> str | None:
    """Back up and replace the config atomically, keeping its permissions; the backup's path.

    Not under :func:`~hermes_ctx_plugins.storage.files.locked`: hermes writes config.yaml without a
    lock, and the lock file would stay in the user's home. The caller reads the file again just before
    (an edit made while install worked is refused, not overwritten); what another program writes in the
    milliseconds between that read and the replace is still lost. Two installs at once cost one of them
    an error, never a half-written config.
    """
    backup = None
    if before is not None:
        backup = _backup_path(path)
        shutil.copy2(path, backup)
    mode = path.stat().st_mode & 0o7777 if before is not None else None
    path.parent.mkdir(parents=True, exist_ok=True)  # a fresh HERMES_HOME
    try:
        atomic_write(path, after.encode("utf-8"))
    except OSError:  # not written: no backup of it left behind either
        if backup is not None:
            backup.unlink(missing_ok=True)
        raise
    if mode is not None:  # the temp file was created 0600; config.yaml keeps what it had
        os.chmod(path, mode)
    return str(backup) if backup else None


def _backup_path(path: Path) -> Path:
    stamp = time.strftime("%Y%m%d-%H%M%S")
    candidate, n = path.with_name(f"{path.name}.bak.{stamp}"), 1
    while candidate.exists():  # two runs in one second keep both backups
        candidate, n = path.with_name(f"{path.name}.bak.{stamp}.{n}"), n + 1
    return candidate


# ------------------------------------------------------------------------------------ saying what happened

def _refused(refusal: ConfigError) -> int:
    """Say why install wrote nothing although the config is valid (exit 2, a config matter)."""
    print(f"hermes-ctx: refused to edit the config: {refusal}", file=sys.stderr)
    return EXIT_CONFIG


def _dry_run(args: argparse.Namespace, outcome: Outcome, before: str | None, after: str | None, plan: Plan,
             refusal: ConfigError | None) -> int:
    """The diff a run would apply; exit 2 when a run would refuse to write it (``refusal``)."""
    diff = "".join(difflib.unified_diff((before or "").splitlines(keepends=True), (after or "").splitlines(
        keepends=True), fromfile=outcome.config, tofile=f"{outcome.config} (after)"))
    if args.json:
        print_json({**asdict(outcome), "diff": diff, "asks": plan.ask, "refused": str(refusal) if refusal else None})
    else:
        print(diff or "nothing to change", end="" if diff else "\n")
        for line in plan.kept:
            print(f"kept: {line}")
        for line in outcome.shims:
            print(f"memory shim: {line}")
        for line in outcome.warnings:
            print(f"warning: {line}")
        if plan.ask and refusal is None:
            print(f"it will ask first: {plan.ask} (--yes answers yes)")
    return _refused(refusal) if refusal is not None else 0


def _report(args: argparse.Namespace, outcome: Outcome) -> None:
    if args.json:
        print_json(asdict(outcome))
        return
    verb = "uninstalled" if args.uninstall else "installed"
    if outcome.profile != DEFAULT_PROFILE:
        print(f"hermes profile {outcome.profile}: {outcome.config}")
    if not outcome.changes and not outcome.shims:
        print(f"already {verb}: nothing changed in {outcome.config}")
    for line in outcome.changes:
        print(f"changed: {line}")
    for line in outcome.kept:
        print(f"kept: {line}")
    for line in outcome.shims:
        print(f"memory shim: {line}")
    if outcome.backup:
        print(f"backup: {outcome.backup}")
    broken = [w for w in outcome.wiring if not w.ok]
    for check in broken:
        print(f"still broken: {check.detail}\n  fix: {check.fix}")
    for line in outcome.warnings:
        print(f"warning: {line}")
    if not args.uninstall and not broken:
        print("next: hermes chat   (hermes-ctx doctor checks everything)")
    if args.uninstall:
        print("next: hermes chat runs without hermes-ctx; pip uninstall hermes-ctx-plugins removes the package")

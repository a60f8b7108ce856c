"""``hermes-ctx doctor``: whether hermes will run us at all (the hermes wiring), the config, the plugins,
every memory provider's health (availability, circuit breaker, queued writes, a probe of the service) and a
storage server's (connection, schema, pool); exit 1 when the wiring is broken or a selected provider or the
storage server is not usable.

The wiring is read from hermes' ``config.yaml`` (as YAML) with the layers hermes lays over it at start-up
(:mod:`hermes_ctx_plugins.hermes.layers`: the managed scope's ``config.yaml``, whose keys win, and the
``.env`` files, for ``HERMES_SAFE_MODE``), in the home of the hermes profile the command runs for
(:mod:`hermes_ctx_plugins.hermes.profile`), and from the installed packages' metadata. Of hermes, besides
those layers, only what a memory-provider shim imports (``agent.memory_provider``, a few milliseconds)
is imported, and only when ``memory.provider`` names one of ours. hermes itself only notes in
``agent.log`` that it fell back to its built-in compressor, so a missing key is otherwise silent. Each
broken piece comes with the one command that fixes it.
"""

from __future__ import annotations

import argparse
import difflib
import importlib.metadata
import importlib.util
import os
import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

from .. import storage
from ..cliutil import EXIT_CONFIG, EXIT_PROBLEM, print_json, shown
from ..config import hermes_home
from ..config.reader import parse_yaml, read_text
from ..errors import ConfigError, PluginError, ProviderLimitError, did_you_mean
from ..hermes.profile import profile_of
from ..manager import PluginRecord
from .common import bad_deployments, load, load_failed

#: our name in hermes: the ``hermes_agent.plugins`` entry point (pyproject.toml), what ``plugins.enabled``
#: lists, and our context engine's name (``hermes.ENGINE_NAME``, not imported: that is hermes' room)
PLUGIN_NAME = "hermes-ctx"
ENTRY_POINT_GROUP = "hermes_agent.plugins"
#: the context engine hermes builds in, what ``context.engine`` means when it is not set
BUILTIN_ENGINE = "compressor"
INSTALL = "hermes-ctx install"
#: hermes' truthy strings (``utils.TRUTHY_STRINGS``), for ``HERMES_SAFE_MODE``
_TRUTHY = frozenset({"1", "true", "yes", "on"})
#: the config keys each wiring check reads (a managed scope that sets one of them decides the check)
_READS = {"plugins.enabled": ("plugins.enabled", "plugins.disabled"), "context.engine": ("context.engine",),
          "memory.provider": ("memory.provider",)}


def add_parser(commands: Any) -> None:
    doctor = commands.add_parser("doctor", help="check config, plugins and memory providers: availability, "
                                                "circuit breaker, queued writes, a probe of the service")
    doctor.add_argument("--no-probe", action="store_true",
                        help="do not contact the memory services or the storage server")
    doctor.add_argument("--bridge", action="store_true",
                        help="for a Bridge's config: context.engine and memory.provider left unset are no problem "
                             "(the Bridge installs the engine and drives the providers itself); set wrong, they are")


def run(args: argparse.Namespace) -> int:
    """Config, plugins and every memory provider's health; exit 1 when a selected provider is not usable."""
    from ..memory.remote.base import RemoteProvider, read_status

    try:
        config, host = load(args)
        raw = read_hermes_config(hermes_config_path(args))
    except (ConfigError, ProviderLimitError, PluginError) as exc:
        return load_failed(exc)
    bad = bad_deployments(args, config)
    if bad:
        host.shutdown()
        return load_failed(bad[0])
    selected = {p.name for p in host.memory_providers} | ({config.memory.provider} - {""})
    wiring = fixable(args, hermes_wiring(raw, hermes_home(), host.plugins()))
    if args.bridge:  # a review: every Bridge's doctor said FAIL (exit 1), so its exit code watched nothing
        wiring = [w for w in wiring if w.ok or set_wrong(raw, w.check)]
    problems = [f"{w.detail} (fix: {w.fix})" for w in wiring if not w.ok] + config.stray_warnings()
    rows: list[dict[str, Any]] = []
    for entry in (r for r in host.registry if r.kind == "memory"):
        row: dict[str, Any] = {"name": entry.name, "external": entry.external, "source": entry.source,
                               "selected": entry.name in selected}
        rows.append(row)
        try:
            provider = host.provider_instance(entry.name)
            available, why = availability(provider)
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
        try:  # its queue files, read (a file where a folder should be, one this user cannot read: said, not raised)
            row.update({k: v for k, v in provider.status().items() if k in (
                "breaker", "queued", "spooled", "sent", "dropped", "rejected")})
            elsewhere = provider.waiting_elsewhere()
            held = provider.held_count()
        except OSError as exc:
            row["queue_error"] = f"{type(exc).__name__}: {exc}"
            problems.append(f"{entry.name}: the writes it queued under {provider.state_dir} cannot be read ({exc}): "
                            "how many wait, and whose, cannot be told; fix the file's type or permissions")
            continue
        if elsewhere:
            row["spooled_elsewhere"] = {folder: count for folder, (count, _) in elsewhere.items()}
        if not row["selected"] and row.get("spooled"):  # its folder is read by a queue of this very settings only
            problems.append(f"{entry.name}: {row['spooled']} writes wait in {provider.queue_dir.parent}, but "
                            f"{'deployment ' + repr(config.deployment) if config.deployment else 'the top level'} "
                            f"does not run {entry.name}: no queue sends them (select it there for a while, or forget "
                            "--user / delete the folder to drop them)")
        if held:
            row["held"] = held
            problems.append(f"{entry.name}: {held} writes queued before each deployment had a queue folder of its own "
                            f"wait in {provider.held}: which deployment queued them cannot be told, so none was sent "
                            "(forget --user reaches them; deleting the file drops them)")
        for folder, (count, sent) in elsewhere.items():
            if not sent:
                problems.append(f"{entry.name}: {count} writes wait in {folder}, the queue folder of a deployment the "
                                f"config no longer names or that no longer runs {entry.name}: no queue sends them "
                                f"until a deployment of that name runs {entry.name} again (rename it back or select it "
                                "there for a while, or forget --user / delete the folder to drop them)")
    # --no-probe: what needs no server still said (a server backend naming no server: the newcomer walk)
    stores = [{"check": what, "ok": ok, "detail": detail}
              for what, ok, detail in (storage.configured(config) if args.no_probe else storage.check(config))]
    problems += [f"{row['check']}: {row['detail']}" for row in stores if not row["ok"]]
    archived, archive_detail = storage.archive_health(config)  # a newcomer walk: doctor had no word on it
    if not archived:
        problems.append(f"archive: {archive_detail}")
    report = {"config": config.source, "hermes_home": str(hermes_home()), "hermes_profile": profile_of(hermes_home()),
              "deployment": config.deployment,
              "compressor": host.compressor.name if host.compressor else None,
              "hermes_wiring": [asdict(w) for w in wiring],
              "plugins": [asdict(p) for p in host.loaded_plugins()], "memory_providers": rows, "storage": stores,
              "archive": {"ok": archived, "detail": archive_detail},
              "ok": not problems, "problems": problems}
    if args.json:
        print_json(report)
    else:
        print(shown(_as_text(report)))  # a service's error text may carry escape sequences
    return 0 if not problems else EXIT_PROBLEM


def availability(provider: Any) -> tuple[bool, str]:
    """``(usable, why)`` of a memory provider, asked without the network: its ``availability()`` when
    it has one (the remote providers say why), else its ``is_available()`` (what hermes asks before it
    runs a provider: an unavailable one it silently leaves out)."""
    explained = getattr(provider, "availability", None)
    return explained() if callable(explained) else (provider.is_available(), "")


def _as_text(report: dict[str, Any]) -> str:
    lines = [f"config       {report['config']}" + (f"   deployment: {report['deployment']}"
                                                   if report["deployment"] else ""),
             f"hermes home  {report['hermes_home']}   (hermes profile {report['hermes_profile']})",
             f"compressor   {report['compressor'] or '(none: hermes built-in)'}",
             "hermes wiring"]
    for check in report["hermes_wiring"]:
        lines.append(f"  {'ok' if check['ok'] else 'FAIL':<4}  {check['detail']}")
        if check["fix"]:
            lines.append(f"        fix: {check['fix']}")
    lines.append("plugins")
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
        for folder, count in (row.get("spooled_elsewhere") or {}).items():
            lines.append(f"{pad}writes: {count} spooled in {folder} (another deployment's)")
        last = row.get("last_reported")
        if last:
            when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(float(last.get("updated") or 0)))
            lines.append(f"{pad}last reported by pid {last.get('pid')} at {when}: breaker {last.get('breaker')}; "
                         f"{last.get('queued', 0)} queued, sent {last.get('sent', 0)}, "
                         f"dropped {last.get('dropped', 0)}, rejected {last.get('rejected', 0)}, "
                         f"set aside {last.get('set_aside', 0)}")
    if report["storage"]:
        lines.append("storage")
        lines += [f"  {row['check']}: {'ok' if row['ok'] else 'FAIL'}: {row['detail']}" for row in report["storage"]]
    lines.append(f"archive\n  {'ok' if report['archive']['ok'] else 'FAIL':<4}  {report['archive']['detail']}")
    lines.append("result: OK" if report["ok"] else "result: PROBLEMS\n" + "\n".join(
        f"  - {p}" for p in report["problems"]))
    return "\n".join(lines)


# ---------------------------------------------------------------------------------- the hermes wiring

@dataclass(frozen=True)
class Wiring:
    """One thing hermes needs to run us, as found."""

    check: str
    ok: bool
    detail: str
    #: the one command that fixes it ("" when it is fine)
    fix: str = ""


def set_wrong(raw: Mapping[str, Any], check: str) -> bool:
    """Whether the failing wiring ``check`` is about a value set (wrong), not one left unset, in hermes' config ``raw``;
    only ``context.engine`` and ``memory.provider`` can be left unset where a Bridge runs us (every other check is)."""
    if check not in ("context.engine", "memory.provider"):
        return True
    section, _, key = check.partition(".")
    value = raw.get(section, {}).get(key) if isinstance(raw.get(section), Mapping) else None
    return bool(value) and value != BUILTIN_ENGINE


def hermes_config_path(args: argparse.Namespace) -> Path:
    """hermes' ``config.yaml``: ``--config``, else the one in ``$HERMES_HOME``."""
    return Path(args.config) if args.config else hermes_home() / "config.yaml"


def read_hermes_config(path: Path) -> Mapping[str, Any]:
    """hermes' whole config as plain values (``{}`` when the file does not exist).

    :raises ConfigError: the file cannot be read or is not YAML (file:line).
    """
    try:
        text = read_text(path, str(path))
    except FileNotFoundError:
        return {}
    except OSError as exc:
        raise ConfigError(f"cannot read config file: {exc}", source=str(path)) from None
    return parse_yaml(text, str(path))[0]


def hermes_version() -> str | None:
    """The installed hermes-agent's version; ``None`` when it is not installed in this Python."""
    try:
        return importlib.metadata.version("hermes-agent")
    except importlib.metadata.PackageNotFoundError:
        return None


def fixable(args: argparse.Namespace, wiring: list[Wiring]) -> list[Wiring]:
    """``wiring``, its fixes by ``hermes-ctx install`` checked against install itself (a dry run): a config install
    refuses to edit (a duplicate key, ``plugins.enabled`` written as a text, an alias it would have to change) is
    to be fixed by hand first, where it says (doctor named install, which then exited 2; a red-team pass)."""
    if not any(not w.ok and w.fix.startswith(INSTALL) for w in wiring):
        return wiring
    import contextlib
    import io

    from . import main

    said = io.StringIO()
    asked = ["install", "--dry-run", "--config", str(hermes_config_path(args))]
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(said):
        code = main(asked + (["--deployment", args.deployment] if getattr(args, "deployment", None) else []))
    if code != EXIT_CONFIG:
        return wiring
    why = " ".join(said.getvalue().split()).removeprefix("hermes-ctx: ")
    by_hand = f"first fix what install cannot edit: {why}; then "
    if "run install --memory none" in why:  # install's own way out (a Bridge's deployment runs another provider)
        fix = (f"{INSTALL} --memory none (a plain install is refused: it would set a memory.provider one of the "
               "config's deployments cannot run beside its own)")
        # ... for what it wires; a memory.provider to choose is for the user to settle (a red-team pass: doctor and
        # install sent each other's fix back and forth)
        return [w if w.ok or not w.fix.startswith(INSTALL) else replace(w, fix=by_hand + w.fix)
                if w.check == "memory.provider" else replace(w, fix=fix) for w in wiring]
    return [replace(w, fix=by_hand + w.fix) if not w.ok and w.fix.startswith(INSTALL) else w for w in wiring]


def hermes_wiring(data: Mapping[str, Any], home: Path, plugins: Sequence[PluginRecord]) -> list[Wiring]:
    """What hermes needs to run us, checked in hermes' config ``data`` (with the managed scope laid over
    it, as hermes does), its home and this Python: hermes installed, our entry point, plugin loading on,
    ``plugins.enabled``, ``context.engine`` and, when ``memory.provider`` names one of our providers
    (``plugins``: what our host registered), its shim."""
    version = hermes_version()
    if version is None:
        return [Wiring("hermes-agent", False, "hermes-agent is not installed in this Python: nothing will run us",
                       "pip install 'hermes-ctx-plugins[hermes]'")]
    from ..hermes.layers import effective_config, managed_keys

    effective = effective_config(data)
    checks = [Wiring("hermes-agent", True, f"hermes-agent {version} is installed"), _entry_point(),
              _safe_mode(home), _enabled(effective), _engine(effective), _memory_provider(effective, home, plugins)]
    managed, keys = managed_keys()
    if not keys:
        return checks
    installed = effective_config(_as_installed(data))  # what config.yaml could do, under the managed scope
    after_install = {"plugins.enabled": _enabled(installed), "context.engine": _engine(installed)}
    return [_pinned(check, after_install.get(check.check), managed, keys) for check in checks]


def _as_installed(data: Mapping[str, Any]) -> dict[str, Any]:
    """``data`` with what ``hermes-ctx install`` writes for hermes to load us and select our engine."""
    plugins = dict(section_of(data, "plugins"))
    enabled, disabled = plugins.get("enabled"), plugins.get("disabled")
    plugins["enabled"] = [*(enabled if isinstance(enabled, list) else []), PLUGIN_NAME]
    plugins["disabled"] = [n for n in disabled if n != PLUGIN_NAME] if isinstance(disabled, list) else []
    return {**data, "plugins": plugins, "context": {**section_of(data, "context"), "engine": PLUGIN_NAME}}


def _pinned(check: Wiring, after_install: Wiring | None, managed: str, keys: set[str]) -> Wiring:
    """``check``, said truly when it fails on a key the managed scope sets: when config.yaml cannot fix it
    (``after_install`` fails too) the fix is in the managed file; for the memory provider, which install
    does not force, that the key is pinned is said beside the usual fix."""
    pinned = [read for read in _READS.get(check.check, ())
              if any(read == key or read.startswith(f"{key}.") for key in keys)]
    if check.ok or not pinned or (after_install is not None and after_install.ok):
        return check
    detail = (f"{check.detail}; {', '.join(pinned)} is set by hermes' managed scope ({managed}), which wins "
              "over config.yaml")
    fix = check.fix if after_install is None else f"change {', '.join(pinned)} in {managed} (your administrator's file)"
    return Wiring(check.check, False, detail, fix)


def section_of(data: Mapping[str, Any], key: str) -> Mapping[str, Any]:
    """``data[key]`` as hermes reads a section: a mapping, or empty."""
    value = data.get(key)
    return value if isinstance(value, Mapping) else {}  # hermes reads anything else as unset


def _entry_point() -> Wiring:
    found = importlib.metadata.entry_points(group=ENTRY_POINT_GROUP, name=PLUGIN_NAME)
    if not found:
        return Wiring("entry point", False, f"no {ENTRY_POINT_GROUP} entry point {PLUGIN_NAME!r}: hermes cannot "
                      "find our plugin (hermes-ctx-plugins is not installed where hermes runs)",
                      "pip install hermes-ctx-plugins")
    entry = next(iter(found))
    try:
        spec = importlib.util.find_spec(entry.module)
    except (ImportError, ValueError) as exc:
        spec, why = None, f": {type(exc).__name__}: {exc}"
    else:
        why = ""
    if spec is None:
        return Wiring("entry point", False, f"the entry point {PLUGIN_NAME!r} names {entry.module}, which cannot "
                      f"be imported{why}", "pip install --force-reinstall hermes-ctx-plugins")
    return Wiring("entry point", True, f"entry point {PLUGIN_NAME!r} ({ENTRY_POINT_GROUP}) -> {entry.module}")


def _safe_mode(home: Path) -> Wiring:
    """``HERMES_SAFE_MODE`` as hermes reads it: its ``.env`` files win over the environment."""
    from ..hermes.layers import ENVIRONMENT, env_value

    found = env_value("HERMES_SAFE_MODE", home)
    value = (found.value or "").strip()
    where = "" if found.source == ENVIRONMENT else f" in {found.source}"
    if value.lower() in _TRUTHY:
        fix = ("unset HERMES_SAFE_MODE" if found.source == ENVIRONMENT
               else f"remove HERMES_SAFE_MODE from {found.source}" + (" (your administrator's file)"
                                                                      if found.managed else ""))
        return Wiring("HERMES_SAFE_MODE", False, f"HERMES_SAFE_MODE={value}{where}: hermes loads no plugin at all",
                      fix)
    said = f"HERMES_SAFE_MODE={value!r}{where} is off" if value else "HERMES_SAFE_MODE is not set"
    return Wiring("HERMES_SAFE_MODE", True, f"{said}: hermes loads its enabled plugins")


def _enabled(data: Mapping[str, Any]) -> Wiring:
    plugins = section_of(data, "plugins")
    enabled, disabled = plugins.get("enabled"), plugins.get("disabled")
    fix = INSTALL  # `hermes plugins enable` would ask whether we may replace built-in tools; install does not
    if isinstance(disabled, list) and PLUGIN_NAME in disabled:
        return Wiring("plugins.enabled", False, f"plugins.disabled lists {PLUGIN_NAME}, which wins over "
                      "plugins.enabled: hermes does not load us", fix)
    if not (isinstance(enabled, list) and PLUGIN_NAME in enabled):
        return Wiring("plugins.enabled", False, f"plugins.enabled does not list {PLUGIN_NAME}: hermes loads "
                      "only the plugins listed there", fix)
    return Wiring("plugins.enabled", True, f"plugins.enabled lists {PLUGIN_NAME}")


def _engine(data: Mapping[str, Any]) -> Wiring:
    engine = section_of(data, "context").get("engine")
    if engine == PLUGIN_NAME:
        return Wiring("context.engine", True, f"context.engine is {PLUGIN_NAME}")
    if engine in (None, "", BUILTIN_ENGINE):
        said = "not set" if engine in (None, "") else f"{BUILTIN_ENGINE!r}"
        return Wiring("context.engine", False, f"context.engine is {said}: hermes compacts with its built-in "
                      "compressor, not ours (it says so only in agent.log)", INSTALL)
    if isinstance(engine, str) and difflib.get_close_matches(engine, [PLUGIN_NAME], n=1, cutoff=0.75):
        # a typo of ours: hermes finds no such engine and falls back (a newcomer walk: "runs that engine" misled)
        return Wiring("context.engine", False, f"context.engine is {engine!r} (did you mean {PLUGIN_NAME!r}?): "
                      "hermes finds no engine of that name and compacts with its built-in compressor, not ours "
                      "(agent.log: 'not found')", f"{INSTALL} --yes")
    return Wiring("context.engine", False, f"context.engine is {engine!r}: hermes runs that engine, not ours",
                  f"{INSTALL} --yes")


def _memory_provider(data: Mapping[str, Any], home: Path, plugins: Sequence[PluginRecord]) -> Wiring:
    memory = section_of(data, "memory")
    name = memory.get("provider") or ""
    record = next((r for r in plugins if r.kind == "memory" and r.name == name), None)
    if record is None:  # the user's choice: hermes' own memory, or a provider of hermes'
        return _not_ours(name, switched_off="provider" in memory and not name, plugins=plugins, home=home,
                         listed=section_of(section_of(data, "ctx_plugins"), "memory").get("providers"))
    if not record.external:
        return Wiring("memory.provider", False, f"memory.provider is {name!r}, which hermes cannot load: it runs "
                      "through our plugin when ctx_plugins.memory.providers lists it (the default)",
                      "hermes memory off")
    if not record.enabled:
        return Wiring("memory.provider", False, f"memory.provider is {name!r}, but ctx_plugins.disabled lists it",
                      f"remove {name} from ctx_plugins.disabled in config.yaml")
    return _shim(name, home)


def _hermes_has(name: str, home: Path) -> bool:
    """Whether hermes can find a memory provider ``name``: one it bundles, or a directory of its plugins."""
    from ..hermes.memory import BUNDLED_MEMORY_PROVIDERS

    return name in BUNDLED_MEMORY_PROVIDERS or (home / "plugins" / name).is_dir()


def _not_ours(name: str, *, switched_off: bool, plugins: Sequence[PluginRecord], listed: Any,
              home: Path) -> Wiring:
    """hermes' ``memory.provider`` (``name``) names none of ours. Fine, unless the top-level
    ``ctx_plugins.memory.providers`` lists an external provider of ours: inside hermes that runs only as
    ``memory.provider``, so hermes silently does without it (0.1.0 ran it from the list) — a problem,
    but for ``hermes memory off`` (``switched_off``: the key there and empty), the user's own switch."""
    external = [r.name for r in plugins if r.kind == "memory" and r.external]
    said = (f"{name!r}, not one of ours" if name else "'' (hermes memory off)" if switched_off
            else "not set: hermes' own memory only")
    idle = [n for n in listed if isinstance(n, str) and n in external] if isinstance(listed, list) else []
    detail = f"memory.provider is {said}"
    # a misspelling of ours that `install --memory` takes (not 'file': hermes never loads it as its provider)
    meant = did_you_mean(name, external) if name and not _hermes_has(name, home) else ""
    if meant:  # hermes finds no such provider and runs without one
        close = difflib.get_close_matches(name, external, n=1)[0]
        return Wiring("memory.provider", False, f"{detail}{meant}: hermes finds no provider of that name and runs "
                      "without one", f"{INSTALL} --memory {close}")
    if not idle:
        return Wiring("memory.provider", True, f"{detail} (ours that run in hermes only when named there: "
                      f"{', '.join(external)})")
    named = ", ".join(idle)
    if switched_off:
        return Wiring("memory.provider", True, f"{detail}: ctx_plugins.memory.providers lists {named}, which "
                      f"inside hermes runs only as memory.provider, so it is off too ({INSTALL} --memory "
                      f"{idle[0]} turns it on; a Bridge uses the list)")
    return Wiring("memory.provider", False, f"{detail}, but ctx_plugins.memory.providers lists {named}, which "
                  "inside hermes runs only as memory.provider: hermes does not run it", f"{INSTALL} --memory {idle[0]}")


def _shim(name: str, home: Path) -> Wiring:
    """The shim hermes finds provider ``name`` through: present, ours, and what it imports importable."""
    try:  # what the shim itself imports: if this fails, hermes cannot load the shim either
        from ..hermes.memory import BUNDLED_MEMORY_PROVIDERS, shim_path, shim_text
    except Exception as exc:
        return Wiring("memory.provider", False, f"the shim of memory provider {name!r} cannot be loaded: "
                      f"{type(exc).__name__}: {exc}", "pip install --force-reinstall 'hermes-ctx-plugins[hermes]'")
    if name in BUNDLED_MEMORY_PROVIDERS:
        return Wiring("memory.provider", False, f"memory.provider {name!r} is also the name of a provider hermes "
                      "bundles, which it always loads instead of ours",
                      "rename the provider in the plugin that registers it")
    path = shim_path(home, name)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:  # (it was reported as a problem; hermes found the provider: a red-team pass)
        return Wiring("memory.provider", True, f"memory.provider is {name!r}; its shim {path} is missing, and our "
                      f"plugin writes it again as hermes starts, before hermes looks for the provider ({INSTALL} "
                      "writes it now)")
    except (OSError, UnicodeDecodeError) as exc:
        text = f"(unreadable: {exc})"
    if text != shim_text(name):
        return Wiring("memory.provider", False, f"{path} is not the shim hermes-ctx writes: hermes does not load "
                      f"our memory provider {name!r} through it (keep yours: it is moved, not deleted)",
                      f"mv {path} {path}.bak && {INSTALL}")
    return Wiring("memory.provider", True, f"memory.provider is {name!r}: its shim {path} is in place")

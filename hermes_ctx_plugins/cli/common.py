"""What the ``hermes-ctx`` commands share: the options every command takes wherever they are written,
loading the config and the host, and saying why it failed."""

from __future__ import annotations

import argparse
import dataclasses
from collections.abc import Iterable, Mapping
from typing import Any

from ..cliutil import load_failed
from ..config import Config, load_config
from ..errors import HermesCtxError
from ..manager import Host, load_host

__all__ = ["GLOBAL_OPTIONS", "add_anywhere", "bad_deployments", "build_hermes_provider", "load", "load_failed",
           "parsers_below"]

#: the options of every command, written before or after its name (and its subcommand's): flags, keywords
GLOBAL_OPTIONS: tuple[tuple[tuple[str, ...], dict[str, Any]], ...] = (
    (("--config",), {"metavar": "PATH", "default": None,
                     "help": "hermes config.yaml (default: $HERMES_HOME/config.yaml)"}),
    (("--deployment",), {"metavar": "NAME", "default": None,
                         "help": "apply this named deployment (default: $HERMES_CTX_DEPLOYMENT)"}),
    (("-p", "--profile"), {"metavar": "NAME", "default": None,
                           "help": "the hermes profile whose home to use, as hermes -p NAME (default: the "
                                   "one hermes would run: a $HERMES_HOME that is a profiles/NAME folder, else "
                                   "the profile `hermes profile use` made active, else $HERMES_HOME or ~/.hermes)"}),
    (("-v", "--verbose"), {"action": "store_true", "default": False, "help": "log with tracebacks"}),
    (("--json",), {"action": "store_true", "default": False,
                   "help": "print one JSON document on stdout (errors: stdout empty, the reason on stderr)"}),
)


def add_anywhere(top: argparse.ArgumentParser, below: Iterable[argparse.ArgumentParser], flags: tuple[str, ...],
                 **options: Any) -> None:
    """Accept an option on ``top`` and on each parser ``below`` it (its commands), with one meaning.

    Its default is set once, on ``top``; below, the option is only written when given: argparse copies
    a command's whole namespace over its parent's, so a default there would undo the value given
    before the command. A command that declares the option itself conflicts: argparse says so at once.
    """
    top.add_argument(*flags, **options)
    for parser in below:
        parser.add_argument(*flags, **{**options, "default": argparse.SUPPRESS})


def parsers_below(parser: argparse.ArgumentParser) -> list[argparse.ArgumentParser]:
    """Every command's parser under ``parser``, subcommands' included (each once, aliases or not)."""
    found: list[argparse.ArgumentParser] = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for command in dict.fromkeys(action.choices.values()):
                found += [command, *parsers_below(command)]
    return found


def load(args: argparse.Namespace, *, strategy: str | None = None) -> tuple[Config, Host]:
    """The config ``--config`` and ``--deployment`` select (``strategy`` replacing its compressor), and its host."""
    config = load_config(args.config, deployment=args.deployment)
    if strategy:
        config = dataclasses.replace(config, plugins=dataclasses.replace(config.plugins, compressor=strategy))
    return config, _validated(load_host(config))


def _validated(host: Host) -> Host:
    """``host``, once every plugin's options in the file are valid (the commands vouch for the whole file)."""
    try:
        host.validate_options()
    except HermesCtxError:
        host.shutdown()
        raise
    return host


def bad_deployments(args: argparse.Namespace, config: Config,
                    source: Mapping[str, Any] | None = None) -> list[HermesCtxError]:
    """Every other deployment of the config (``source``: of that config's data instead of ``args.config``), loaded
    as it would be at its first request: a bad one is found at start-up, its error naming the deployment's key."""
    return [error for _, error in deployment_errors(args, config, source)]


def deployment_errors(args: argparse.Namespace, config: Config,
                      source: Mapping[str, Any] | None = None) -> list[tuple[str, HermesCtxError]]:
    """:func:`bad_deployments` with the name of each deployment that failed."""
    errors: list[tuple[str, HermesCtxError]] = []
    for name in sorted(config.plugins.deployments):
        if name == config.deployment:
            continue
        try:
            host = _validated(load_host(load_config(args.config if source is None else source, deployment=name)))
        except HermesCtxError as exc:
            errors.append((name, exc))
            continue
        try:  # hermes run with HERMES_CTX_DEPLOYMENT=<name> builds its memory.provider with that deployment's options
            build_hermes_provider(host)
        except HermesCtxError as exc:
            errors.append((name, exc))
        finally:
            host.shutdown()
    return errors


def build_hermes_provider(host: Host) -> str | None:
    """Build hermes' ``memory.provider`` as hermes will when it is one of ours that hermes runs (external, not
    disabled), so that an option only its construction checks (an embedder, a service address) is found; then
    drop it (constructing opens nothing; its ``shutdown()`` would write a remote provider's ``status.json`` over
    the one a running hermes published). Returns its name, or ``None`` when hermes runs no provider of ours.

    :raises HermesCtxError: it cannot be built (its options; another plugin's constructor failing).
    """
    name = host.config.memory.provider
    record = next((r for r in host.plugins() if r.kind == "memory" and r.name == name), None) if name else None
    if record is None or not record.external or not record.enabled:
        return None
    if all(p.name != name for p in host.memory_providers):
        host.provider_instance(name)
    return name

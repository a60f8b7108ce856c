"""What the ``hermes-ctx`` commands share: loading the config and the host, and saying why it failed."""

from __future__ import annotations

import argparse
import dataclasses
import sys

from ..cliutil import EXIT_CONFIG, EXIT_PLUGIN, EXIT_PROBLEM
from ..config import Config, load_config
from ..errors import ConfigError, HermesCtxError, PluginError, ProviderLimitError, UnknownPluginError
from ..manager import Host, load_host


def load(args: argparse.Namespace, *, strategy: str | None = None) -> tuple[Config, Host]:
    """The config ``--config`` and ``--deployment`` select (``strategy`` replacing its compressor), and its host."""
    config = load_config(args.config, deployment=args.deployment)
    if strategy:
        config = dataclasses.replace(config, plugins=dataclasses.replace(config.plugins, compressor=strategy))
    return config, load_host(config)


def load_failed(exc: HermesCtxError) -> int:
    """Say why the config or a plugin could not be loaded; the exit code."""
    if isinstance(exc, (ConfigError, ProviderLimitError, UnknownPluginError)):
        print(f"hermes-ctx: invalid config: {exc}", file=sys.stderr)
        return EXIT_CONFIG
    print(f"hermes-ctx: {exc}", file=sys.stderr)
    return EXIT_PLUGIN if isinstance(exc, PluginError) else EXIT_PROBLEM


def bad_deployments(args: argparse.Namespace, config: Config) -> list[HermesCtxError]:
    """Every other deployment of the config, loaded as it would be at its first request: a bad one
    is found at start-up, its error naming the deployment's key."""
    errors = []
    for name in sorted(config.plugins.deployments):
        if name == config.deployment:
            continue
        try:
            load_host(load_config(args.config, deployment=name)).shutdown()
        except HermesCtxError as exc:
            errors.append(exc)
    return errors

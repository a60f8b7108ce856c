"""The ``hermes-ctx`` command: inspect what is installed and check a config.

Exit codes: 0 fine, 2 the config is invalid, 3 a plugin failed to load.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from dataclasses import asdict
from typing import Any

from .config import hermes_home
from .errors import ConfigError, HermesCtxError, PluginError, ProviderLimitError, UnknownPluginError
from .manager import Host, load_host

EXIT_CONFIG = 2
EXIT_PLUGIN = 3


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="hermes-ctx", description=__doc__.splitlines()[0])
    parser.add_argument("--config", help="hermes config.yaml (default: $HERMES_HOME/config.yaml)")
    parser.add_argument("--deployment", help="apply this named deployment (default: $HERMES_CTX_DEPLOYMENT)")
    commands = parser.add_subparsers(dest="command", required=True)
    plugins = commands.add_parser("plugins", help="list strategies, providers and plugins with their status")
    plugins.add_argument("--json", action="store_true", help="machine-readable output")
    commands.add_parser("check", help="validate the config and the installed plugins")
    args = parser.parse_args(argv)

    try:
        host = load_host(args.config, deployment=args.deployment)
    except (ConfigError, ProviderLimitError, UnknownPluginError) as exc:
        print(f"hermes-ctx: invalid config: {exc}", file=sys.stderr)
        return EXIT_CONFIG
    except PluginError as exc:
        print(f"hermes-ctx: {exc}", file=sys.stderr)
        return EXIT_PLUGIN
    except HermesCtxError as exc:  # pragma: no cover - every subclass is handled above
        print(f"hermes-ctx: {exc}", file=sys.stderr)
        return 1

    if args.command == "plugins":
        if args.json:
            print(json.dumps(_as_json(host), indent=2))
        else:
            print(_as_table(host))
    else:
        print(f"config OK: {host.config.source}"
              + (f" (deployment {host.config.deployment!r})" if host.config.deployment else ""))
        print(f"compressor: {host.compressor.name if host.compressor else '(none: hermes built-in)'}")
        print(f"memory providers: {', '.join(p.name for p in host.memory_providers) or '(none)'}")
    return 0


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


def _as_table(host: Host) -> str:
    rows = [("NAME", "KIND", "EXTERNAL", "STATUS", "SOURCE")]
    rows += [(r.name, r.kind, "yes" if r.external else "no", r.status, r.source) for r in host.plugins()]
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]) - 1)]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=False)) + "  " + row[-1]
             for row in rows]
    if len(rows) == 1:
        lines.append("(no strategies or providers registered)")
    lines.append("")
    lines.append(f"config: {host.config.source}"
                 + (f"   deployment: {host.config.deployment}" if host.config.deployment else ""))
    for plugin in host.loaded_plugins():
        hooks = ", ".join(plugin.hooks) or "-"
        lines.append(f"plugin {plugin.name} ({plugin.source}): {plugin.status}; hooks: {hooks}")
    return "\n".join(lines)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())

"""``hermes-ctx new-plugin NAME``: a third-party plugin project, ready to install and test.

It writes pyproject.toml (with the ``hermes_ctx_plugins`` entry point ``NAME``), a package with one
compression strategy (``NAME-tool-trim``: drops the oldest tool outputs) and one memory provider
(``NAME-notes``: notes in one JSON file per user), tests that use our pytest plugin and the provider
contract, and a README — from the templates in ``hermes_ctx_plugins/scaffold/`` (package data, not
modules: their ``$name`` placeholders are filled in with :class:`string.Template`). It writes only
into a folder that does not exist yet or is empty, so it never overwrites anyone's work, and refuses
a name whose distribution is installed (``pip install`` of the plugin would replace it:
``hermes-agent``) or whose package is importable already (the plugin's would shadow it, or be
shadowed: hermes' own top-level ``tools``, ``agent``, ``gateway``...).
"""

from __future__ import annotations

import argparse
import importlib.util
import keyword
import re
import string
import sys
from importlib import metadata, resources
from pathlib import Path
from typing import Any

from ..cliutil import EXIT_INPUT, EXIT_PROBLEM, emit

#: a plugin name: lower-case words of letters and digits joined by single ``-`` or ``_``
_NAME = re.compile(r"[a-z][a-z0-9]*(?:[-_][a-z0-9]+)*")
MAX_NAME = 40
#: template (in ``scaffold/``) -> the file it becomes, ``{module}`` being the plugin's package
FILES = {
    "pyproject.toml.tmpl": "pyproject.toml",
    "README.md.tmpl": "README.md",
    "__init__.py.tmpl": "{module}/__init__.py",
    "strategy.py.tmpl": "{module}/strategy.py",
    "provider.py.tmpl": "{module}/provider.py",
    "test_strategy.py.tmpl": "tests/test_strategy.py",
    "test_provider.py.tmpl": "tests/test_provider.py",
}


def add_parser(commands: Any) -> None:
    parser = commands.add_parser(
        "new-plugin", help="create a plugin project: a strategy, a memory provider, tests (see docs/PLUGINS.md)")
    parser.add_argument("name", metavar="NAME", help="the plugin's name, e.g. acme: lower-case letters and digits, "
                                                     "words joined by '-' or '_'")
    parser.add_argument("--dir", type=Path, help="where to create it (default: ./NAME); must be new or empty")


def problem_with(name: str) -> str | None:
    """Why ``name`` cannot name a plugin, or ``None`` when it can."""
    if not _NAME.fullmatch(name) or len(name) > MAX_NAME:
        return ("a plugin name is lower-case letters and digits, words joined by single '-' or '_', starting "
                f"with a letter, at most {MAX_NAME} characters (e.g. acme or acme-notes)")
    clash = _clash(name)
    if clash is None:
        return None
    free = next((other for other in (f"{name}-plugin", f"my-{name}") if len(other) <= MAX_NAME
                 and _clash(other) is None), None)
    return f"{clash}; choose another name" + (f", e.g. {free!r}" if free else "")


def _clash(name: str) -> str | None:
    """What ``name``'s distribution or package would collide with in this Python, or ``None``."""
    module = name.replace("-", "_")
    if keyword.iskeyword(module) or module in sys.stdlib_module_names or module.startswith("hermes_ctx"):
        return f"its Python package {module!r} would clash with Python's own or ours"
    try:  # metadata normalises the name as pip does: hermes_agent and Hermes.Agent are hermes-agent
        installed = metadata.distribution(name)
    except metadata.PackageNotFoundError:
        pass
    else:
        return (f"the distribution {installed.metadata['Name']} {installed.version} is installed here: "
                "pip installing the plugin would replace it")
    try:
        spec = importlib.util.find_spec(module)
    except (ImportError, ValueError):  # imported without a spec, or a finder choked on it: it exists all the same
        where = "in this Python"
    else:
        if spec is None:
            return None
        where = f"at {spec.origin or ', '.join(spec.submodule_search_locations or []) or 'built in'}"
    return f"its Python package {module!r} would shadow (or be shadowed by) the module {module!r} {where}"


def names(name: str) -> dict[str, str]:
    """What the templates' placeholders stand for."""
    module = name.replace("-", "_")
    return {"name": name, "dist": name, "module": module, "strategy": f"{name}-tool-trim",
            "provider": f"{name}-notes", "tool": f"{module}_remember_note"}


def scaffold(name: str, target: Path) -> list[Path]:
    """Write the project for ``name`` into ``target`` (new or empty); the files written."""
    values = names(name)
    templates = resources.files("hermes_ctx_plugins") / "scaffold"
    written = []
    for template, destination in FILES.items():
        text = string.Template((templates / template).read_text(encoding="utf-8")).substitute(values)
        path = target / destination.format(module=values["module"])
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        written.append(path)
    return written


def run(args: argparse.Namespace) -> int:
    problem = problem_with(args.name)
    if problem is not None:
        print(f"hermes-ctx: invalid plugin name {args.name!r}: {problem}", file=sys.stderr)
        return EXIT_INPUT
    target = (args.dir or Path(args.name)).expanduser().resolve()
    if target.exists() and (not target.is_dir() or any(target.iterdir())):
        print(f"hermes-ctx: {target} already exists and is not an empty folder; nothing was written "
              "(choose another --dir)", file=sys.stderr)
        return EXIT_INPUT
    try:
        written = scaffold(args.name, target)
    except OSError as exc:
        print(f"hermes-ctx: cannot write the plugin into {target}: {exc}", file=sys.stderr)
        return EXIT_PROBLEM
    values = names(args.name)
    files = [path.relative_to(target).as_posix() for path in written]
    document = {"name": args.name, "dir": str(target), "distribution": values["dist"], "module": values["module"],
                "strategy": values["strategy"], "provider": values["provider"], "files": files}
    emit(args, document, "".join([
        f"created the plugin {args.name!r} in {target}:\n", *(f"  {file}\n" for file in files),
        f"strategy {values['strategy']}, memory provider {values['provider']}; next:\n",
        f"  cd {target}\n  pip install -e '.[test]' && pytest\n  hermes-ctx plugins"]))
    return 0

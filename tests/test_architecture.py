"""The walls of docs/ARCHITECTURE.md, checked on the source: who may import whom, no import cycles,
modules a reader can hold in their head, and the public API that README promises.

Imports are read from the source (``ast``), so a test here fails on the line that breaks a wall, not
on a symptom somewhere else. Imports made inside functions (lazy on purpose: an optional extra, a heavy
module only some commands need) count like any other, except where a test says otherwise; imports under
``if TYPE_CHECKING:`` are annotations only and do not count.
"""

from __future__ import annotations

import ast
import importlib
import importlib.metadata
from collections.abc import Iterator
from pathlib import Path

import pytest

import hermes_ctx_plugins
from hermes_ctx_plugins import storage

PACKAGE = Path(hermes_ctx_plugins.__file__).parent
NAME = "hermes_ctx_plugins"
#: a module longer than this says in its docstring why (e.g. "a rule table; over 500 lines because …")
MAX_LINES = 520


def _modules() -> dict[str, Path]:
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


MODULES = _modules()
#: every registered backend's package, as a room name (a new backend is covered the day it registers)
BACKENDS = tuple(module.removeprefix(f"{NAME}.") for module in storage.BACKENDS.values())


def _is_package(module: str) -> bool:
    return MODULES[module].name == "__init__.py"


def _imports(module: str, *, lazy: bool) -> Iterator[tuple[str, int]]:
    """``(imported module, line)`` for every import in ``module``: module-level ones only, or with
    ``lazy`` also those inside functions. ``from pkg import name`` counts as importing ``pkg.name``
    when that is a module, else ``pkg``; names under ``if TYPE_CHECKING:`` are not imports at run time."""
    tree = ast.parse(MODULES[module].read_text(encoding="utf-8"))
    base = module.split(".") if _is_package(module) else module.split(".")[:-1]

    def visit(nodes: list[ast.stmt]) -> Iterator[ast.stmt]:
        for node in nodes:
            if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
                yield from visit(node.orelse)
                continue
            yield node
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and not lazy:
                continue
            for field in ("body", "orelse", "finalbody", "handlers"):
                inner = getattr(node, field, None)
                if isinstance(inner, list):
                    yield from visit([n for n in inner if isinstance(n, ast.stmt | ast.excepthandler)])  # type: ignore[misc]

    for node in visit(tree.body):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, node.lineno
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parent = ".".join(base[: len(base) - node.level + 1] + ([node.module] if node.module else []))
            else:
                parent = node.module or ""
            for alias in node.names:
                child = f"{parent}.{alias.name}"
                yield (child if child in MODULES else parent), node.lineno


def _with_packages(module: str, importer: str) -> set[str]:
    """``module`` and the packages Python runs on the way to it (``a.b.c`` runs ``a.b``'s
    ``__init__`` first) — except the importer's own packages, which are already running, and the
    top package, which every import runs."""
    parts = module.split(".")
    own = {".".join(importer.split(".")[:i]) for i in range(1, importer.count(".") + 1)}
    return {".".join(parts[:i]) for i in range(2, len(parts) + 1)} - own


def _graph() -> dict[str, set[str]]:
    # lazy imports count: a cycle broken only by importing inside a function is still two modules
    # that cannot be understood (or moved) one without the other
    return {m: {p for t, _ in _imports(m, lazy=True) for p in _with_packages(t, m) if p in MODULES and p != m}
            for m in MODULES}


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def connect(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph[node]):
            if nxt not in index:
                connect(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            connect(node)
    return found


def test_there_are_no_import_cycles() -> None:
    assert _cycles(_graph()) == []


def test_the_cycle_finder_finds_a_cycle() -> None:
    """The check above cannot pass because the finder is blind."""
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


@pytest.mark.parametrize("module", sorted(MODULES))
def test_a_module_fits_in_a_readers_head(module: str) -> None:
    path = MODULES[module]
    lines = path.read_text(encoding="utf-8").count("\n")
    if lines <= MAX_LINES:
        return
    docstring = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""
    assert "500 lines" in docstring, f"{path.relative_to(PACKAGE.parent)} has {lines} lines and no docstring saying why"


def _hermes_packages() -> set[str]:
    top_level = importlib.metadata.distribution("hermes-agent").read_text("top_level.txt") or ""
    return {line.strip() for line in top_level.splitlines() if line.strip()}


def test_only_the_hermes_room_imports_hermes() -> None:
    hermes = _hermes_packages()
    assert {"agent", "run_agent", "tools", "hermes_cli"} <= hermes  # the check below sees real names
    offenders = [
        f"{m}:{line} imports {target}"
        for m in MODULES
        if not (m == f"{NAME}.hermes" or m.startswith(f"{NAME}.hermes."))
        for target, line in _imports(m, lazy=True)
        if target.split(".")[0] in hermes
    ]
    assert offenders == []


def test_the_runtime_never_imports_the_test_doubles() -> None:
    """``testing`` is for tests and plugin authors. The one exception is ``hermes-ctx demo``, which
    runs offline and so needs the loopback model (``hermes/demo.py``, reached only by that command)."""
    allowed = {f"{NAME}.hermes.demo"}
    offenders = [
        f"{m}:{line} imports {target}"
        for m in MODULES
        if not (m == f"{NAME}.testing" or m.startswith(f"{NAME}.testing.")) and m not in allowed
        for target, line in _imports(m, lazy=True)
        if target == f"{NAME}.testing" or target.startswith(f"{NAME}.testing.")
    ]
    assert offenders == []


def test_the_foundation_does_not_import_the_rooms() -> None:
    """The core (``hookspecs``, ``errors``, ``events``, ``config``, ``scope``, ``tokens``, ``isolation``,
    the base classes) never imports a provider, a strategy, a backend or hermes at module level, so a
    third-party plugin importing the base classes pulls in nothing else."""
    foundation = [f"{NAME}.{m}" for m in ("hookspecs", "errors", "events", "scope", "tokens", "isolation",
                                           "compression.base", "memory.base")]
    rooms = ("memory.file", "memory.local", "memory.remote", *BACKENDS, "hermes", "testing", "archive")
    offenders = [
        f"{m} imports {target}"
        for m in foundation if m in MODULES
        for target, _ in _imports(m, lazy=False)
        if any(target == f"{NAME}.{r}" or target.startswith(f"{NAME}.{r}.") for r in rooms)
    ]
    assert offenders == []


@pytest.mark.parametrize("package", [NAME, f"{NAME}.testing"])
def test_the_public_api_imports(package: str) -> None:
    module = importlib.import_module(package)
    assert module.__all__, f"{package} states no public API"
    missing = [name for name in module.__all__ if not hasattr(module, name)]
    assert missing == []


def _importers_of(prefixes: tuple[str, ...], *, among: list[str]) -> list[str]:
    return [
        f"{m}:{line} imports {target}"
        for m in among
        for target, line in _imports(m, lazy=True)
        if any(target == f"{NAME}.{p}" or target.startswith(f"{NAME}.{p}.") for p in prefixes)
    ]


def _inside(*rooms: str) -> list[str]:
    return [m for m in MODULES if any(m == f"{NAME}.{r}" or m.startswith(f"{NAME}.{r}.") for r in rooms)]




def test_the_rooms_reach_the_stores_only_through_the_seam() -> None:
    """A second backend is a new package, not an edit across providers: nothing outside ``storage/``
    (and the tests of a backend itself) names a backend's module."""
    assert _inside("memory", "archive", "cli", "host", "hermes")  # the check below sees real modules
    assert set(BACKENDS) >= {"storage.sqlite", "storage.inmemory"}
    outside = [m for m in MODULES if not m.startswith(f"{NAME}.storage")
               and m != f"{NAME}.testing.storage_contract"]
    assert _importers_of(BACKENDS, among=outside) == []


def test_storage_depends_on_no_room_above_it() -> None:
    rooms = ("memory", "archive", "compression", "hermes", "host", "manager", "cli", "testing")
    assert _importers_of(rooms, among=_inside("storage")) == []

"""One error tree, true: the drawing in ``errors.py`` lists every exception the package defines, where it
lives and what it derives from, and every one of them is a ``HermesCtxError``."""

from __future__ import annotations

import importlib
import inspect
import re
from dataclasses import dataclass
from pathlib import Path

import pytest

import hermes_ctx_plugins
from hermes_ctx_plugins import errors
from hermes_ctx_plugins.errors import HermesCtxError

PACKAGE = Path(hermes_ctx_plugins.__file__).parent
NAME = "hermes_ctx_plugins"
_LINE = re.compile(r"^(?P<indent>(?:[│ ] {3})*)(?:[├└]── )?(?P<name>[A-Z]\w*)(?: \((?P<bases>[\w, ]+)\))?"
                   r"(?: \[(?P<where>[\w.]+)\])?(?:\s{2,}\S.*)?$")


@dataclass(frozen=True)
class Drawn:
    name: str
    parent: str | None
    #: the other bases, in parentheses
    bases: tuple[str, ...]
    #: the module, relative to the package
    where: str


def drawing(doc: str) -> dict[str, Drawn]:
    """The classes the drawing in ``doc`` lists (the indented block after ``::``)."""
    block = doc.split("::\n", 1)[1]
    drawn: dict[str, Drawn] = {}
    path: list[Drawn] = []  # the ancestors of the line being read
    for raw in block.splitlines():
        if raw and not raw.startswith("    "):
            break  # the end of the indented block
        line = raw[4:]
        match = _LINE.match(line)
        if not line.strip() or match is None:
            assert not line.strip(), f"a line of the drawing that does not parse: {raw!r}"
            path = []
            continue
        depth = len(match["indent"]) // 4 + (1 if line[len(match["indent"]):].startswith(("├", "└")) else 0)
        path = path[:depth]
        parent = path[-1] if path else None
        where = match["where"] or (parent.where if parent else "errors")
        bases = tuple(b.strip() for b in (match["bases"] or "").split(",") if b.strip())
        entry = Drawn(match["name"], parent.name if parent else None, bases, where)
        assert entry.name not in drawn, f"{entry.name} is drawn twice"
        drawn[entry.name] = entry
        path.append(entry)
    return drawn


def defined_exceptions() -> dict[str, type[BaseException]]:
    """Every public exception (and warning) class defined in a module of the package."""
    found: dict[str, type[BaseException]] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.name == "__main__.py":  # runs a command when imported
            continue
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        module = importlib.import_module(".".join(parts))
        for name, value in vars(module).items():
            if (inspect.isclass(value) and issubclass(value, BaseException) and value.__module__ == module.__name__
                    and not name.startswith("_")):
                assert name not in found, f"two exceptions named {name}: {found[name].__module__}, {module.__name__}"
                found[name] = value
    return found


DRAWN = drawing(errors.__doc__ or "")
DEFINED = defined_exceptions()


def test_the_drawing_parses_a_tree() -> None:
    """The checks below cannot pass because the parser reads nothing."""
    sample = drawing("x::\n\n    A\n    ├── B (KeyError)\n    │   └── C [x.y]\n    └── D\n\n    W (UserWarning) [t]\n")
    assert sample == {"A": Drawn("A", None, (), "errors"), "B": Drawn("B", "A", ("KeyError",), "errors"),
                      "C": Drawn("C", "B", (), "x.y"), "D": Drawn("D", "A", (), "errors"),
                      "W": Drawn("W", None, ("UserWarning",), "t")}
    assert {"HermesCtxError", "ConfigError", "MemoryStoreError", "SummaryError"} <= set(DRAWN)


def test_every_exception_the_package_defines_is_drawn_and_nothing_else() -> None:
    assert sorted(set(DEFINED) - set(DRAWN)) == [], "not in the drawing in errors.py"
    assert sorted(set(DRAWN) - set(DEFINED)) == [], "drawn in errors.py but defined nowhere"


@pytest.mark.parametrize("name", sorted(DEFINED))
def test_every_exception_is_a_hermes_ctx_error_drawn_where_and_as_it_is(name: str) -> None:
    cls = DEFINED[name]
    if not issubclass(cls, Warning):
        assert issubclass(cls, HermesCtxError), f"{name} must derive from HermesCtxError"
    drawn = DRAWN.get(name)
    assert drawn is not None
    assert f"{NAME}.{drawn.where}" == cls.__module__, f"{name} lives in {cls.__module__}"
    bases = [b.__name__ for b in cls.__bases__]
    expected = [drawn.parent, *drawn.bases] if drawn.parent else list(drawn.bases)
    if name == "HermesCtxError":
        expected = ["Exception"]
    assert bases == expected, f"{name} derives from {bases}; the drawing says {expected}"


def test_a_caller_catching_the_builtin_still_catches_ours() -> None:
    """The second bases are kept where callers catch the builtin (and the owner of the error sees ours)."""
    from hermes_ctx_plugins.memory.file.store import UnknownTarget

    with pytest.raises(KeyError) as caught:
        raise UnknownTarget("memroy")
    assert isinstance(caught.value, HermesCtxError) and "did you mean 'memory'" in str(caught.value)

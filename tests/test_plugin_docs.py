"""docs/PLUGINS.md names only what exists, with the signatures the code has.

Three checks, each a function from the document's text to the problems it finds (so the checks can be
shown to see a mistake, below):

* every inline code span that names a symbol (``hermes_ctx_plugins.scope.escape_id``,
  ``CompressionResult.unchanged``, ``request.add_context``, ``option()``) resolves, and every
  ``ctx_plugins.*`` key it names is a setting;
* every ``# reference`` block matches the code: each function's parameters (names, kinds, defaults,
  annotations) and return annotation, each class attribute's annotation and value; a dataclass lists
  all of its fields, and the two base classes list every public member — so a member added to the
  code without the document fails here too;
* every example imports only what ``hermes_ctx_plugins`` has, and every TOML example's entry-point
  group is ours.
"""

from __future__ import annotations

import ast
import dataclasses
import functools
import importlib
import importlib.util
import inspect
import re
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hermes_ctx_plugins import (
    CompressionResult,
    CompressorStrategy,
    Config,
    Host,
    MemoryProvider,
    Request,
    Response,
    SessionInfo,
    StatusEvent,
    Turn,
    hookspecs,
)
from hermes_ctx_plugins.config import PluginSettings, ProviderSelection
from hermes_ctx_plugins.errors import ConfigError
from hermes_ctx_plugins.testing import StubOpenAIServer
from hermes_ctx_plugins.testing import pytest_plugin as fixtures

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "PLUGINS.md"
#: where a bare name in the document is looked up, in order
NAMESPACES = ("hermes_ctx_plugins", "hermes_ctx_plugins.events", "hermes_ctx_plugins.options",
              "hermes_ctx_plugins.config", "hermes_ctx_plugins.hookspecs", "hermes_ctx_plugins.testing",
              "hermes_ctx_plugins.testing.contract")
#: what the document calls an instance of a class: ``request.add_context`` is ``Request.add_context``
INSTANCES: dict[str, tuple[type, ...]] = {
    "self": (CompressorStrategy, MemoryProvider), "strategy": (CompressorStrategy,), "provider": (MemoryProvider,),
    "request": (Request,), "response": (Response,), "session": (SessionInfo,), "turn": (Turn,),
    "result": (CompressionResult,), "event": (StatusEvent,), "host": (Host,), "config": (Config,),
    "error": (ConfigError,), "stub": (StubOpenAIServer,),
}
#: names the examples use for what the reader writes or passes (``register(cls)``, ``YourProvider(...)``)
PLACEHOLDERS = {"register", "YourProvider", "super", "KeepRecent", "RecentOptions", "on_call"}
#: the first key of hermes' own sections (``memory.provider``, ``plugins.enabled``): hermes' keys, not symbols
HERMES_SECTIONS = {"memory", "plugins", "context", "compression", "model", "auxiliary", "skills"}
#: classes whose reference block must list every public member
COMPLETE = (CompressorStrategy, MemoryProvider)
REFERENCE = "# reference"
_SPAN = re.compile(r"`([^`\n]+)`")
_FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.S | re.M)
_SYMBOL = re.compile(r"[A-Za-z_]\w*(?:\(\))?(?:\.[A-Za-z_]\w*(?:\(\))?)*(?:\(.*\))?")
_CONFIG_KEY = re.compile(r"(?<![\w.])ctx_plugins(?:\.[\w-]+)+")
_MISSING = object()
#: a span ending so is a file's name, not a symbol
_FILES = (".py", ".toml", ".md", ".yaml", ".json", ".txt")


# ------------------------------------------------------------------ reading the document

def blocks(text: str, language: str) -> list[str]:
    return [body for lang, body in _FENCE.findall(text) if lang == language]


def spans(text: str) -> list[str]:
    """The inline code spans outside fenced blocks."""
    return _SPAN.findall(_FENCE.sub("", text))


# ------------------------------------------------------------------ resolving names

def lookup(name: str) -> Any:
    """``name`` in the first namespace that has it, or Python's builtins; else missing."""
    for module in (*NAMESPACES, "builtins"):
        found = getattr(importlib.import_module(module), name, _MISSING)
        if found is not _MISSING:
            return found
    return _MISSING


@functools.cache
def is_module(name: str) -> bool:
    """Whether ``name`` is an installed top-level module (``json``), found without importing it."""
    return importlib.util.find_spec(name) is not None


def has_member(cls: type, name: str) -> bool:
    """A class attribute, a dataclass field, or an attribute the constructor of ``cls`` (or a base) sets."""
    if hasattr(cls, name) or (dataclasses.is_dataclass(cls) and name in {f.name for f in dataclasses.fields(cls)}):
        return True
    assigned = re.compile(rf"\bself\.{re.escape(name)}\s*(?::[^=\n]+)?=")
    ours = [base for base in cls.__mro__ if base.__module__.startswith("hermes_ctx_plugins")]
    return any(assigned.search(_source(base)) for base in ours)


@functools.cache
def _source(cls: type) -> str:
    return inspect.getsource(cls)


def resolve(dotted: str) -> str | None:
    """Why ``dotted`` (``a.b.c``) names nothing, or ``None`` when it resolves."""
    first, *rest = dotted.split(".")
    if first == "hermes_ctx_plugins":
        for cut in range(len(rest), -1, -1):
            try:
                target: Any = importlib.import_module(".".join([first, *rest[:cut]]))
            except ImportError:
                continue
            rest = rest[cut:]
            break
    elif first in INSTANCES:
        classes = INSTANCES[first]
        if rest and not any(has_member(cls, rest[0]) for cls in classes):
            return f"{dotted}: no {' or '.join(c.__name__ for c in classes)} has {rest[0]!r}"
        return None  # deeper than one attribute the type is not known
    elif first in PLACEHOLDERS:
        return None
    else:
        target = lookup(first)
        if target is _MISSING:
            # another module (`json.dumps`) exists or not; what is in it is its own documentation's business
            return None if is_module(first) else f"{dotted}: {first!r} is nothing hermes_ctx_plugins (or Python) has"
    for attribute in rest:
        if isinstance(target, type) and not hasattr(target, attribute) and has_member(target, attribute):
            return None  # an instance attribute: what it holds is not known here
        target = getattr(target, attribute, _MISSING)
        if target is _MISSING:
            return f"{dotted}: no attribute {attribute!r}"
    return None


def config_key_problem(key: str) -> str | None:
    """Why ``ctx_plugins.<a>.<b>`` is no setting, or ``None``."""
    parts = key.split(".")[1:]
    fields = {f.name: f for f in dataclasses.fields(PluginSettings)}
    if parts[0] not in fields:
        return f"{key}: ctx_plugins has no key {parts[0]!r}"
    selection = {f.name for f in dataclasses.fields(ProviderSelection)}
    if parts[0] == "memory" and len(parts) > 1 and parts[1] not in selection:
        return f"{key}: ctx_plugins.memory has no key {parts[1]!r}"
    return None


def span_problems(text: str) -> Iterator[str]:
    for span in spans(text):
        for key in _CONFIG_KEY.findall(span):
            problem = config_key_problem(key)
            if problem:
                yield problem
        if span.startswith("ctx_plugins") or span.endswith(_FILES) or not _SYMBOL.fullmatch(span):
            continue
        name = span.split("(", 1)[0]
        first = name.split(".")[0]
        if first in HERMES_SECTIONS and "." in name:
            continue
        if "." not in name and any(has_member(cls, name) for classes in INSTANCES.values() for cls in classes):
            continue  # a method or attribute of the class being described: `prefetch(query, *, session)`
        named = "." in name or "(" in span or first[0].isupper()
        problem = resolve(name)
        if problem and (named or lookup(first) is not _MISSING or is_module(first)):
            yield f"`{span}`: {problem}"


# ------------------------------------------------------------------ reference blocks

def _parameters(node: ast.FunctionDef) -> list[tuple[str, str, Any, str | None]]:
    """``(name, kind, default, annotation)`` of each parameter the document writes."""
    args = node.args
    positional = [*args.posonlyargs, *args.args]
    defaults: list[Any] = [inspect.Parameter.empty] * (len(positional) - len(args.defaults)) + [
        ast.literal_eval(d) for d in args.defaults]
    out = [(a.arg, "positional", d, ast.unparse(a.annotation) if a.annotation else None)
           for a, d in zip(positional, defaults, strict=True)]
    if args.vararg:
        out.append((args.vararg.arg, "*args", inspect.Parameter.empty, None))
    out += [(a.arg, "keyword", inspect.Parameter.empty if d is None else ast.literal_eval(d),
             ast.unparse(a.annotation) if a.annotation else None) for a, d in zip(args.kwonlyargs, args.kw_defaults,
                                                                                   strict=True)]
    if args.kwarg:
        out.append((args.kwarg.arg, "**kwargs", inspect.Parameter.empty,
                    ast.unparse(args.kwarg.annotation) if args.kwarg.annotation else None))
    return out


_KINDS = {inspect.Parameter.POSITIONAL_ONLY: "positional", inspect.Parameter.POSITIONAL_OR_KEYWORD: "positional",
          inspect.Parameter.VAR_POSITIONAL: "*args", inspect.Parameter.KEYWORD_ONLY: "keyword",
          inspect.Parameter.VAR_KEYWORD: "**kwargs"}


def signature_problems(where: str, node: ast.FunctionDef, function: Any) -> list[str]:
    real = inspect.signature(function)
    written = _parameters(node)
    actual = [(p.name, _KINDS[p.kind], p.default, p.annotation if p.annotation is not p.empty else None)
              for p in real.parameters.values()]
    problems = []
    if [w[:3] for w in written] != [a[:3] for a in actual]:
        problems.append(f"{where}: the document has ({', '.join(_show(w) for w in written)}), "
                        f"the code ({', '.join(_show(a) for a in actual)})")
    for (name, _, _, annotation), (_, _, _, real_annotation) in zip(written, actual, strict=False):
        if annotation is not None and annotation != real_annotation:
            problems.append(f"{where}: {name} is annotated {annotation!r} in the document, "
                            f"{real_annotation!r} in the code")
    if node.returns is not None and ast.unparse(node.returns) != real.return_annotation:
        problems.append(f"{where}: returns {ast.unparse(node.returns)!r} in the document, "
                        f"{real.return_annotation!r} in the code")
    return problems


def _show(parameter: tuple[str, str, Any, Any]) -> str:
    name, kind, default, _ = parameter
    text = {"*args": f"*{name}", "**kwargs": f"**{name}", "keyword": f"{name} (keyword)"}.get(kind, name)
    return text if default is inspect.Parameter.empty else f"{text}={default!r}"


def _annotation(cls: type, name: str) -> str | None:
    for base in cls.__mro__:
        annotations = vars(base).get("__annotations__", {})
        if name in annotations:
            return str(annotations[name])
    return None


def _member(cls: type, node: ast.FunctionDef) -> Any:
    """The function the document's ``node`` stands for (a property's getter, a classmethod's function),
    or missing when ``cls`` has none of that kind."""
    kinds = {ast.unparse(d) for d in node.decorator_list}
    try:
        static = inspect.getattr_static(cls, node.name)
    except AttributeError:
        return _MISSING
    if "property" in kinds:
        return static.fget if isinstance(static, property) else _MISSING
    if "classmethod" in kinds:
        return static.__func__ if isinstance(static, classmethod) else _MISSING
    return static if inspect.isfunction(static) else _MISSING


def attribute_problems(cls: type, node: ast.AnnAssign) -> list[str]:
    name = node.target.id  # type: ignore[union-attr]
    where = f"{cls.__name__}.{name}"
    if not has_member(cls, name):
        return [f"{where}: no such attribute"]
    problems = []
    written = ast.unparse(node.annotation)
    if written != _annotation(cls, name):
        problems.append(f"{where}: annotated {written!r} in the document, {_annotation(cls, name)!r} in the code")
    fields = {f.name: f for f in dataclasses.fields(cls)} if dataclasses.is_dataclass(cls) else {}
    if name in fields:
        spec = fields[name]
        has_default = spec.default is not dataclasses.MISSING
        if node.value is None and has_default:
            problems.append(f"{where}: the code's default {spec.default!r} is not in the document")
        if node.value is not None and (not has_default or ast.literal_eval(node.value) != spec.default):
            problems.append(f"{where}: default {ast.unparse(node.value)} in the document, "
                            f"{spec.default if has_default else 'none'!r} in the code")
    elif node.value is not None and ast.literal_eval(node.value) != getattr(cls, name):
        problems.append(f"{where}: {ast.unparse(node.value)} in the document, {getattr(cls, name)!r} in the code")
    return problems


def class_problems(node: ast.ClassDef) -> list[str]:
    cls = lookup(node.name)
    if not isinstance(cls, type):
        return [f"class {node.name}: hermes_ctx_plugins has no such class"]
    problems: list[str] = []
    listed = set()
    for item in node.body:
        if isinstance(item, ast.FunctionDef):
            listed.add(item.name)
            function = _member(cls, item)
            if function is _MISSING:
                problems.append(f"{cls.__name__}.{item.name}: no such method (or not the kind the document says)")
            else:
                problems += signature_problems(f"{cls.__name__}.{item.name}", item, function)
        elif isinstance(item, ast.AnnAssign):
            listed.add(item.target.id)  # type: ignore[union-attr]
            problems += attribute_problems(cls, item)
    if dataclasses.is_dataclass(cls):
        fields = [f.name for f in dataclasses.fields(cls)]
        written = [item.target.id for item in node.body if isinstance(item, ast.AnnAssign)]  # type: ignore[union-attr]
        if written != fields:
            problems.append(f"{cls.__name__}: the document lists the fields {written}, the code has {fields}")
    if cls in COMPLETE:
        public = {name for name in vars(cls) if not name.startswith("_") or name == "__init__"} - {"__annotations__"}
        problems += [f"{cls.__name__}.{name}: in the code, not in the document" for name in sorted(public - listed)]
    return problems


def reference_problems(text: str) -> Iterator[str]:
    for block in blocks(text, "python"):
        if not block.startswith(REFERENCE):
            continue
        for node in ast.parse(block).body:
            if isinstance(node, ast.ClassDef):
                yield from class_problems(node)
            elif isinstance(node, ast.FunctionDef):
                function = lookup(node.name)
                if not callable(function):
                    yield f"{node.name}: hermes_ctx_plugins has no such function"
                else:
                    yield from signature_problems(node.name, node, function)


def example_problems(text: str) -> Iterator[str]:
    for block in blocks(text, "python"):
        for node in ast.walk(ast.parse(block)):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("hermes_ctx_plugins"):
                module = importlib.import_module(node.module)  # type: ignore[arg-type]
                yield from (f"from {node.module} import {a.name}: no such name" for a in node.names
                            if not hasattr(module, a.name))
    for block in blocks(text, "toml"):
        groups = tomllib.loads(block).get("project", {}).get("entry-points", {})
        yield from (f"entry-point group {group!r} is not {hookspecs.PROJECT_NAME!r}" for group in groups
                    if group != hookspecs.PROJECT_NAME)


# ------------------------------------------------------------------ the document

TEXT = DOC.read_text(encoding="utf-8")


@pytest.mark.parametrize("check", [span_problems, reference_problems, example_problems])
def test_the_guide_names_only_what_exists_as_it_is(check: Any) -> None:
    assert list(check(TEXT)) == []


def test_the_guide_covers_every_hook_fixture_and_the_opt_in_key() -> None:
    reference = "\n".join(b for b in blocks(TEXT, "python") if b.startswith(REFERENCE))
    specs = [name for name, value in vars(hookspecs).items()
             if callable(value) and hasattr(value, "hermes_ctx_plugins_spec")]
    assert len(specs) == 6 and set(hookspecs.LIFECYCLE_HOOKS) < set(specs)
    assert [name for name in specs if f"def {name}(" not in reference] == []
    named = set(spans(TEXT))
    assert [name for name in fixtures.__all__ if name not in {"ProviderContract"} and name not in named] == []
    assert {"postgres", "postgres_dsn"} <= named and hasattr(fixtures, "postgres_dsn")
    assert "ctx_plugins.plugins" in named and "plugins" in {f.name for f in dataclasses.fields(PluginSettings)}


def test_the_checks_see_a_name_that_does_not_exist_and_a_signature_that_differs() -> None:
    """The checks above cannot pass because they are blind."""
    wrong = """\
Call `CompressionResult.unchanged_ones(messages)`, `hermes_ctx_plugins.scope.escape_ids`,
`request.add_contexts(text)`, `NoSuchClass`, set `ctx_plugins.plugin` and `ctx_plugins.memory.provider`.

```python
# reference: wrong on purpose
class MemoryProvider:
    name: ClassVar[str] = "x"
    def prefetch(self, query: str, *, session: SessionInfo) -> list[str]: ...
    def sync_turn(self, turn, extra) -> None: ...

def option(default: Any, *, ge: float | None = 0) -> Any: ...
```

```python
from hermes_ctx_plugins import NoSuchThing
```

```toml
[project.entry-points.hermes_ctx]
acme = "acme"
```
"""
    found = "\n".join([*span_problems(wrong), *reference_problems(wrong), *example_problems(wrong)])
    for expected in ("unchanged_ones", "escape_ids", "add_contexts", "NoSuchClass", "ctx_plugins.plugin:",
                     "ctx_plugins.memory.provider", "MemoryProvider.name", "MemoryProvider.prefetch: returns",
                     "MemoryProvider.sync_turn", "MemoryProvider.forget_user: in the code, not in the document",
                     "option: the document has", "import NoSuchThing", "'hermes_ctx'"):
        assert expected in found, expected

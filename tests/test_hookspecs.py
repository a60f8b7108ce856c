from __future__ import annotations

import inspect

import pluggy
import pytest

import hermes_ctx_plugins
from hermes_ctx_plugins import hookspecs

SPECS = [
    (name, fn) for name, fn in inspect.getmembers(hookspecs, inspect.isfunction)
    if hasattr(fn, "hermes_ctx_plugins_spec")
]


def test_the_expected_hooks_exist() -> None:
    assert {name for name, _ in SPECS} == {
        "register_compressors", "register_memory_providers",
        "session_start", "pre_request", "post_response", "turn_finalized",
    }
    assert set(hookspecs.LIFECYCLE_HOOKS) <= {name for name, _ in SPECS}


@pytest.mark.parametrize(("name", "spec"), SPECS, ids=[name for name, _ in SPECS])
def test_every_hookspec_documents_every_argument(name: str, spec: object) -> None:
    doc = inspect.getdoc(spec)
    assert doc, f"{name} has no docstring"
    assert doc.startswith("Called "), f"{name}: docstrings say when the hook is called"
    for arg in inspect.signature(spec).parameters:  # type: ignore[arg-type]
        assert f":param {arg}:" in doc, f"{name} does not document its argument {arg!r}"
    semantics = ("All implementations are called; return values are ignored.",
                 "All implementations are called; the non-empty results are collected",
                 "Stops at first non-None result.")
    assert any(s in doc for s in semantics), f"{name} does not state its call semantics"
    returns = inspect.signature(spec).return_annotation  # type: ignore[arg-type]
    if returns not in ("None", None):
        assert ":returns:" in doc, f"{name} returns {returns} but does not document it"


def test_one_name_for_marker_and_entry_point_group() -> None:
    assert hookspecs.PROJECT_NAME == "hermes_ctx_plugins"
    assert hermes_ctx_plugins.hookimpl is hookspecs.hookimpl
    assert isinstance(hermes_ctx_plugins.hookimpl, pluggy.HookimplMarker)
    assert hermes_ctx_plugins.hookimpl.project_name == "hermes_ctx_plugins"


def test_no_historic_per_session_hooks() -> None:
    for name, spec in SPECS:
        opts = spec.hermes_ctx_plugins_spec  # type: ignore[attr-defined]
        assert not opts.get("historic"), f"{name} would make pluggy keep every call forever"

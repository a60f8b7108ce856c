"""``hermes-ctx new-plugin``: the project it writes installs, passes its own tests (our pytest plugin and
the provider contract) and is found by ``hermes-ctx plugins`` through its entry point; a bad name (one
taken in this Python included: hermes' own distribution or packages) or a folder holding someone's work
is refused, naming what is wrong."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tomllib
from fnmatch import fnmatch
from importlib import metadata
from pathlib import Path

import pytest

import hermes_ctx_plugins
from hermes_ctx_plugins.cli import main
from hermes_ctx_plugins.cli.new_plugin import FILES

ROOT = Path(__file__).resolve().parents[1]
SCAFFOLD = Path(hermes_ctx_plugins.__file__).parent / "scaffold"


def run(command: list[str], *, cwd: Path, site: Path, home: Path) -> subprocess.CompletedProcess[str]:
    """``command`` in a fresh process: the venv's Python, ``site`` (an install of the plugin) on its
    path, a hermes home of its own."""
    env = {**os.environ, "HERMES_HOME": str(home), "PYTHONPATH": str(site)}
    return subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=120)


def listed(result: subprocess.CompletedProcess[str]) -> dict[str, tuple[str, str]]:
    assert result.returncode == 0, result.stderr
    return {record["name"]: (record["kind"], record["source"]) for record in json.loads(result.stdout)["plugins"]}


def test_the_generated_plugin_installs_passes_its_own_tests_and_is_listed(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    project, site, home = tmp_path / "acme-tools", tmp_path / "site", tmp_path / "home"
    home.mkdir()
    assert main(["new-plugin", "acme-tools", "--dir", str(project)]) == 0
    assert f"created the plugin 'acme-tools' in {project}" in capsys.readouterr().out
    # installed the way the suite installs its example plugin: offline, into a folder of its own
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-index",
                    "--no-build-isolation", "--target", str(site), str(project)],
                   check=True, capture_output=True, text=True, timeout=120)
    assert (site / "acme_tools" / "provider.py").is_file()

    tests = run([sys.executable, "-m", "pytest", "-q", "-rA", "-p", "no:cacheprovider"],
                cwd=project, site=site, home=home)
    assert tests.returncode == 0, tests.stdout[-3000:] + tests.stderr[-2000:]
    summary = tests.stdout.strip().splitlines()[-1]
    assert re.fullmatch(r"\d+ passed in .*", summary), summary
    contract = "PASSED tests/test_provider.py::TestJsonNotesProvider::test_hostile_ids_recall_only_their_own"
    assert contract in tests.stdout  # the provider contract ran among them

    # found through the installed distribution's entry point (the source names it), not the project folder
    found = listed(run([sys.executable, "-m", "hermes_ctx_plugins.cli", "plugins", "--json"],
                       cwd=tmp_path, site=site, home=home))
    assert found["acme-tools-tool-trim"] == ("compressor", "acme-tools 0.1.0")
    assert found["acme-tools-notes"] == ("memory", "acme-tools 0.1.0")


@pytest.mark.parametrize(("name", "why"), [
    ("Acme", "lower-case letters and digits"),
    ("1acme", "starting with a letter"),
    ("acme--tools", "single '-' or '_'"),
    ("acme tools", "lower-case letters and digits"),
    ("acme!", "lower-case letters and digits"),
    ("a" * 41, "at most 40 characters"),
    ("json", "would clash with Python's own or ours"),
    ("class", "would clash with Python's own or ours"),
    ("hermes-ctx-extra", "would clash with Python's own or ours"),
])
def test_a_bad_name_is_refused_naming_it_and_what_is_valid(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str, why: str) -> None:
    target = tmp_path / "plugin"
    assert main(["new-plugin", name, "--dir", str(target)]) == 4
    out, err = capsys.readouterr()
    assert out == "" and f"invalid plugin name {name!r}" in err and why in err
    assert not target.exists()


#: hermes' own top-level modules, as its installed distribution lists them
HERMES_MODULES = {path.parts[0].removesuffix(".py") for path in metadata.files("hermes-agent") or []}


@pytest.mark.parametrize(("name", "why"), [
    # pip installing a project named so would uninstall hermes (or pluggy) and put the scaffold in its place
    ("hermes-agent", f"the distribution hermes-agent {metadata.version('hermes-agent')} is installed here: "
                     "pip installing the plugin would replace it"),
    ("hermes_agent", "the distribution hermes-agent"),  # the same distribution to pip
    ("pluggy", f"the distribution pluggy {metadata.version('pluggy')} is installed here"),
    # a top-level package named so would shadow hermes' own: `import tools` in hermes would find the plugin
    ("tools", "its Python package 'tools' would shadow (or be shadowed by) the module 'tools' at "),
    ("gateway", "the module 'gateway' at "),
    ("utils", "the module 'utils' at "),
])
def test_a_name_taken_in_this_python_is_refused_and_the_one_suggested_works(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str, why: str) -> None:
    module = name.replace("-", "_")
    assert module in HERMES_MODULES or name in ("hermes-agent", "hermes_agent", "pluggy"), "a real clash"
    target = tmp_path / "plugin"
    assert main(["new-plugin", name, "--dir", str(target)]) == 4
    out, err = capsys.readouterr()
    assert out == "" and f"invalid plugin name {name!r}" in err and why in err
    assert not target.exists()
    suggested = re.search(r"choose another name, e\.g\. '([^']+)'\n", err)
    assert suggested, err
    assert main(["new-plugin", suggested[1], "--dir", str(target), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["name"] == suggested[1] and (target / report["module"] / "provider.py").is_file()


def test_a_folder_with_anything_in_it_is_never_written_into(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    taken = tmp_path / "taken"
    taken.mkdir()
    (taken / "notes.txt").write_text("mine", encoding="utf-8")
    assert main(["new-plugin", "acme", "--dir", str(taken)]) == 4
    assert "already exists and is not an empty folder; nothing was written" in capsys.readouterr().err
    assert [p.name for p in taken.iterdir()] == ["notes.txt"] and (taken / "notes.txt").read_text() == "mine"

    empty = tmp_path / "empty"
    empty.mkdir()
    assert main(["new-plugin", "acme", "--dir", str(empty), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["strategy"] == "acme-tool-trim" and report["provider"] == "acme-notes"
    assert sorted(report["files"]) == sorted(p.relative_to(empty).as_posix() for p in empty.rglob("*") if p.is_file())


def test_every_template_is_used_and_ships_in_the_wheel() -> None:
    templates = sorted(p.name for p in SCAFFOLD.iterdir() if p.is_file())
    assert templates == sorted(FILES)
    globs = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))[
        "tool"]["setuptools"]["package-data"]["hermes_ctx_plugins"]
    assert all(any(fnmatch(f"scaffold/{name}", glob) for glob in globs) for name in templates)

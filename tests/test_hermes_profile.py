"""hermes profiles (`hermes profile create/use`, `hermes -p NAME`): `hermes-ctx install` and `doctor` work on
the home hermes itself runs, not on the root's. The profiles are made by hermes' own CLI, in a fake
``HOME`` with no ``HERMES_HOME`` set, as a user's shell has it."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
import yaml
from install_helpers import hermes

from hermes_ctx_plugins.cli import main
from hermes_ctx_plugins.hermes.memory import shim_path

CONFIG = "agent: {environment_probe: false}\n"


@pytest.fixture
def root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A user's ``~/.hermes`` with a config and a profile ``work`` made by hermes (not active yet)."""
    home = tmp_path / "user"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("HERMES_HOME", raising=False)  # restored after the test, though main() sets it
    (home / ".hermes").mkdir()
    (home / ".hermes" / "config.yaml").write_text(CONFIG, encoding="utf-8")
    run("profile", "create", "work")
    (home / ".hermes" / "profiles" / "work" / "config.yaml").write_text(CONFIG, encoding="utf-8")
    return home / ".hermes"


def run(*args: str) -> str:
    """hermes' own CLI in this test's shell environment (no ``HERMES_HOME``): its stdout."""
    env = {k: v for k, v in os.environ.items() if k != "HERMES_HOME"}
    return hermes(*args, env=env).stdout.strip()


def ctx(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    """``hermes-ctx ARGS`` as a fresh shell runs it: no ``HERMES_HOME`` until it picks the profile's."""
    os.environ.pop("HERMES_HOME", None)
    code = main(list(args))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def engine(home: Path) -> str | None:
    data = yaml.safe_load((home / "config.yaml").read_text(encoding="utf-8"))
    return (data.get("context") or {}).get("engine")  # type: ignore[no-any-return]


def test_install_and_doctor_follow_the_profile_hermes_profile_use_made_active(
        root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    work = root / "profiles" / "work"
    run("profile", "use", "work")
    assert run("config", "path") == str(work / "config.yaml")  # what hermes runs now

    code, out, _ = ctx(capsys, "install")
    assert code == 0 and out.startswith(f"hermes profile work: {work / 'config.yaml'}\n")
    assert engine(work) == "hermes-ctx" and run("config", "get", "context.engine") == "hermes-ctx"
    assert shim_path(work, "ctx-local").is_file()
    assert engine(root) is None and not (root / "plugins").exists()  # the root's config is not hermes' now

    code, out, _ = ctx(capsys, "doctor", "--no-probe")
    assert code == 0 and f"hermes home  {work}   (hermes profile work)" in out
    code, out, _ = ctx(capsys, "doctor", "--no-probe", "--json")
    report = json.loads(out)
    assert code == 0 and report["hermes_home"] == str(work) and report["hermes_profile"] == "work"

    run("profile", "use", "default")  # back to the root: so are we
    code, out, _ = ctx(capsys, "doctor", "--no-probe", "--json")
    report = json.loads(out)
    assert report["hermes_home"] == str(root) and report["hermes_profile"] == "default"
    assert code == 1 and "context.engine is not set" in " ".join(report["problems"])  # the root is not wired


def test_dash_p_picks_a_profile_as_hermes_dash_p_does(root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    work = root / "profiles" / "work"
    run("profile", "use", "work")
    code, _, _ = ctx(capsys, "install", "-p", "default")  # the root, though work is active
    assert code == 0 and engine(root) == "hermes-ctx" and engine(work) is None
    assert run("-p", "default", "config", "get", "context.engine") == "hermes-ctx"

    run("profile", "use", "default")
    code, out, _ = ctx(capsys, "--profile", "work", "install")
    assert code == 0 and out.startswith("hermes profile work:") and engine(work) == "hermes-ctx"


def test_a_hermes_home_that_is_a_profile_folder_is_used_as_it_is(root: Path, capsys: pytest.CaptureFixture[str],
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """hermes trusts ``$HERMES_HOME`` pointing at a profile over ``active_profile``; one pointing at the
    root it does not (``hermes profile use`` wins there)."""
    run("profile", "create", "other")
    run("profile", "use", "work")
    other, work = root / "profiles" / "other", root / "profiles" / "work"
    other.joinpath("config.yaml").write_text(CONFIG, encoding="utf-8")
    monkeypatch.setenv("HERMES_HOME", str(other))
    assert main(["install"]) == 0
    assert engine(other) == "hermes-ctx" and engine(work) is None

    monkeypatch.setenv("HERMES_HOME", str(root))
    assert main(["install"]) == 0
    assert engine(work) == "hermes-ctx" and engine(root) is None
    capsys.readouterr()


def test_a_profile_that_does_not_exist_is_exit_4_naming_the_ones_there_are(
        root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = ctx(capsys, "-p", "nope", "install")
    assert code == 4 and out == ""
    assert "no hermes profile 'nope'" in err and "the profiles are: default, work" in err
    assert engine(root) is None and engine(root / "profiles" / "work") is None

    run("profile", "use", "work")  # then the active one goes: hermes will not start, nor do we
    shutil.rmtree(root / "profiles" / "work")
    assert hermes("config", "path", env={k: v for k, v in os.environ.items() if k != "HERMES_HOME"},
                  ok=False).returncode != 0
    code, out, err = ctx(capsys, "doctor", "--no-probe")
    assert code == 4 and out == "" and "no hermes profile 'work'" in err and "the profiles are: default" in err

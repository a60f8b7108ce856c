"""`hermes-ctx doctor`'s "hermes wiring": each way hermes would not run us is exit 1 with the one command
that fixes it, and running that command (hermes' own where it is hermes') makes the check pass again."""

from __future__ import annotations

import importlib.metadata
import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from install_helpers import hermes

from hermes_ctx_plugins.cli import doctor as doctor_command
from hermes_ctx_plugins.cli import main
from hermes_ctx_plugins.hermes import ENGINE_NAME
from hermes_ctx_plugins.hermes.memory import shim_path

CHECKS = ["hermes-agent", "entry point", "HERMES_SAFE_MODE", "plugins.enabled", "context.engine", "memory.provider"]


def home() -> Path:
    return Path(os.environ["HERMES_HOME"])


def config() -> dict[str, Any]:
    return yaml.safe_load((home() / "config.yaml").read_text(encoding="utf-8"))  # type: ignore[no-any-return]


def rewrite(change: Callable[[dict[str, Any]], None]) -> None:
    data = config()
    change(data)
    (home() / "config.yaml").write_text(yaml.safe_dump(data), encoding="utf-8")


def doctor(capsys: pytest.CaptureFixture[str]) -> tuple[int, str, dict[str, Any]]:
    """Exit code, the text report and the JSON one (the wiring needs no probe of any service)."""
    code = main(["doctor", "--no-probe"])
    text = capsys.readouterr().out
    assert main(["doctor", "--no-probe", "--json"]) == code
    return code, text, json.loads(capsys.readouterr().out)


def wiring(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {row["check"]: row for row in report["hermes_wiring"]}


@pytest.fixture
def installed(capsys: pytest.CaptureFixture[str]) -> Path:
    """A home `hermes-ctx install` wired: hermes' memory.provider is ctx-local, through its shim."""
    home().mkdir(parents=True, exist_ok=True)
    (home() / "config.yaml").write_text("agent: {environment_probe: false}\n", encoding="utf-8")
    assert main(["install"]) == 0
    capsys.readouterr()
    return home()


def test_an_installed_home_passes_every_wiring_check(installed: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, text, report = doctor(capsys)
    assert code == 0 and report["ok"], report["problems"]
    assert list(wiring(report)) == CHECKS and all(row["ok"] and not row["fix"] for row in report["hermes_wiring"])
    assert "hermes wiring\n  ok    hermes-agent " in text and "FAIL" not in text
    assert f"ok    memory.provider is 'ctx-local': its shim {shim_path(installed, 'ctx-local')} is in place" in text
    assert doctor_command.PLUGIN_NAME == ENGINE_NAME  # one name: the entry point, plugins.enabled, context.engine


def _drop_enabled(data: dict[str, Any]) -> None:
    del data["plugins"]


def _disable(data: dict[str, Any]) -> None:
    data["plugins"]["disabled"] = ["hermes-ctx"]


def _drop_engine(data: dict[str, Any]) -> None:
    del data["context"]


def _other_engine(data: dict[str, Any]) -> None:
    data["context"]["engine"] = "lcm"


def _misspelt_engine(data: dict[str, Any]) -> None:
    data["context"]["engine"] = "hermes_ctx"


def _file_as_hermes_provider(data: dict[str, Any]) -> None:
    data["memory"]["provider"] = "file"


def _disable_ctx_local(data: dict[str, Any]) -> None:
    data["ctx_plugins"]["disabled"] = ["ctx-local"]


def _enable_ctx_local(data: dict[str, Any]) -> None:
    del data["ctx_plugins"]["disabled"]


def _list_mem0(data: dict[str, Any]) -> None:
    """ctx-mem0 in ctx_plugins.memory.providers, as 0.1.0 ran it (with a key: available)."""
    data["ctx_plugins"]["memory"]["providers"] = ["file", "ctx-mem0"]
    data["ctx_plugins"]["options"] = {"ctx-mem0": {"api_key": "m0-test", "host": "http://127.0.0.1:9"}}


def _listed_mem0(data: dict[str, Any]) -> None:
    """A 0.1.0 user's config: ctx-mem0 run from the list, hermes' memory.provider not set."""
    del data["memory"]
    _list_mem0(data)


def _misspelt_provider(data: dict[str, Any]) -> None:
    data["memory"]["provider"] = "ctx-locl"


def _no_shim() -> None:
    shim_path(home(), "ctx-local").unlink()


def test_a_deleted_shim_is_no_problem_hermes_writes_it_again_as_it_starts(
        installed: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """doctor called a missing shim a problem, 'hermes cannot find the provider'; hermes found it: our plugin
    writes the shim again as hermes registers it, before hermes looks for its memory provider (a red-team pass)."""
    from hermes_cli import plugins as hermes_plugins
    from plugins.memory import load_memory_provider

    _no_shim()
    code, _, report = doctor(capsys)
    assert code == 0 and wiring(report)["memory.provider"]["ok"]
    assert "writes it again as hermes starts" in wiring(report)["memory.provider"]["detail"]
    hermes_plugins.discover_plugins(force=True)  # what hermes does as it starts
    assert shim_path(installed, "ctx-local").exists() and load_memory_provider("ctx-local") is not None


def _broken_shim() -> None:
    shim_path(home(), "ctx-local").write_text("from hermes_ctx_plugins.hermes.memory import (\n", encoding="utf-8")


BROKEN: list[tuple[str, Callable[[], None], str, str, Callable[[], None]]] = [
    # (what breaks, how, what doctor says, the fix it names, running that fix)
    ("plugins.enabled", lambda: rewrite(_drop_enabled), "plugins.enabled does not list hermes-ctx",
     "hermes-ctx install", lambda: _ok(main(["install"]))),
    ("plugins.enabled", lambda: rewrite(_disable), "plugins.disabled lists hermes-ctx, which wins",
     "hermes-ctx install", lambda: _ok(main(["install"]))),
    ("context.engine", lambda: rewrite(_drop_engine), "context.engine is not set: hermes compacts with its built-in",
     "hermes-ctx install", lambda: _ok(main(["install"]))),
    ("context.engine", lambda: rewrite(_other_engine), "context.engine is 'lcm': hermes runs that engine, not ours",
     "hermes-ctx install --yes", lambda: _ok(main(["install", "--yes"]))),
    ("context.engine", lambda: rewrite(_misspelt_engine), "context.engine is 'hermes_ctx' (did you mean "
     "'hermes-ctx'?): hermes finds no engine of that name", "hermes-ctx install --yes",
     lambda: _ok(main(["install", "--yes"]))),
    ("memory.provider", _broken_shim, "is not the shim hermes-ctx writes", "mv {shim} {shim}.bak && hermes-ctx install",
     lambda: (shim_path(home(), "ctx-local").rename(f"{shim_path(home(), 'ctx-local')}.bak"), _ok(main(["install"])))),
    ("memory.provider", lambda: rewrite(_file_as_hermes_provider), "memory.provider is 'file', which hermes cannot",
     "hermes memory off", lambda: hermes("memory", "off")),
    ("memory.provider", lambda: rewrite(_disable_ctx_local), "but ctx_plugins.disabled lists it",
     "remove ctx-local from ctx_plugins.disabled in config.yaml", lambda: rewrite(_enable_ctx_local)),
    ("memory.provider", lambda: rewrite(_misspelt_provider), "memory.provider is 'ctx-locl', not one of ours (did you "
     "mean 'ctx-local'?): hermes finds no provider of that name", "hermes-ctx install --memory ctx-local",
     lambda: _ok(main(["install", "--memory", "ctx-local"]))),
    ("memory.provider", lambda: rewrite(_listed_mem0), "memory.provider is not set: hermes' own memory only, but "
     "ctx_plugins.memory.providers lists ctx-mem0, which inside hermes runs only as memory.provider: hermes does "
     "not run it", "hermes-ctx install --memory ctx-mem0", lambda: _ok(main(["install", "--memory", "ctx-mem0"]))),
]


def _ok(code: int) -> None:
    assert code == 0


@pytest.mark.parametrize(("check", "breaks", "says", "fix", "fixing"), BROKEN,
                         ids=["not-enabled", "disabled", "no-engine", "other-engine", "misspelt-engine", "broken-shim",
                              "file-as-hermes-provider", "provider-disabled", "misspelt-provider", "listed-not-run"])
def test_each_broken_wiring_is_exit_1_with_the_command_that_fixes_it(
        installed: Path, capsys: pytest.CaptureFixture[str], check: str, breaks: Callable[[], None], says: str,
        fix: str, fixing: Callable[[], None]) -> None:
    fix = fix.format(shim=shim_path(installed, "ctx-local"))
    breaks()
    code, text, report = doctor(capsys)
    assert code == 1 and not report["ok"]
    row = wiring(report)[check]
    assert not row["ok"] and says in row["detail"] and row["fix"] == fix
    assert f"FAIL  {row['detail']}\n        fix: {fix}" in text
    assert f"{row['detail']} (fix: {fix})" in report["problems"]
    assert [name for name, r in wiring(report).items() if not r["ok"]] == [check]  # nothing else is blamed

    fixing()
    capsys.readouterr()
    code, _, report = doctor(capsys)
    assert code == 0 and wiring(report)[check]["ok"], report["problems"]


def test_safe_mode_is_a_problem_until_unset(installed: Path, capsys: pytest.CaptureFixture[str],
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HERMES_SAFE_MODE", "1")
    code, text, report = doctor(capsys)
    assert code == 1
    assert "FAIL  HERMES_SAFE_MODE=1: hermes loads no plugin at all\n        fix: unset HERMES_SAFE_MODE" in text
    monkeypatch.delenv("HERMES_SAFE_MODE")
    code, _, report = doctor(capsys)
    assert code == 0 and wiring(report)["HERMES_SAFE_MODE"]["ok"]


def hermes_skips_plugins() -> bool:
    """Whether hermes, started now in this environment, skips plugin discovery: its own env loader, then
    its own test of ``HERMES_SAFE_MODE`` (``hermes_cli.plugins``), in a fresh process."""
    code = ("from hermes_cli.env_loader import load_hermes_dotenv; load_hermes_dotenv(); "
            "from utils import env_var_enabled; print(env_var_enabled('HERMES_SAFE_MODE'))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    return done.stdout.strip() == "True"


@pytest.fixture
def managed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """hermes' managed scope (an administrator's config.yaml and .env that win), empty for now."""
    folder = tmp_path / "managed"
    folder.mkdir()
    monkeypatch.setenv("HERMES_MANAGED_DIR", str(folder))
    return folder


@pytest.mark.parametrize(("files", "shell", "set_in"), [
    ({"home": "HERMES_SAFE_MODE=1\n"}, None, "home"),
    ({"home": "HERMES_SAFE_MODE=0\n"}, "1", None),  # hermes loads its .env over the shell's
    ({"home": "HERMES_SAFE_MODE=0\n", "managed": "HERMES_SAFE_MODE=true\n"}, None, "managed"),  # and the managed last
    ({"home": "OPENAI_API_KEY=sk-x\n", "managed": "OTHER=1\n"}, None, None),
], ids=["home-env", "home-env-off-beats-shell", "managed-env-beats-home", "neither"])
def test_safe_mode_in_hermes_env_files_is_read_as_hermes_reads_it(
        installed: Path, managed: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
        files: dict[str, str], shell: str | None, set_in: str | None) -> None:
    where = {"home": installed / ".env", "managed": managed / ".env"}
    for name, text in files.items():
        where[name].write_text(text, encoding="utf-8")
    if shell is None:
        monkeypatch.delenv("HERMES_SAFE_MODE", raising=False)
    else:
        monkeypatch.setenv("HERMES_SAFE_MODE", shell)
    code, text, report = doctor(capsys)
    row = wiring(report)["HERMES_SAFE_MODE"]
    assert hermes_skips_plugins() is (set_in is not None)  # doctor's verdict is hermes' own
    if set_in is None:
        assert code == 0 and row["ok"], report["problems"]
        return
    source = where[set_in]
    assert code == 1 and not row["ok"]
    assert row["detail"].endswith(f" in {source}: hermes loads no plugin at all")
    assert row["fix"].startswith(f"remove HERMES_SAFE_MODE from {source}")
    assert f"FAIL  {row['detail']}\n        fix: {row['fix']}" in text


def hermes_reads(key: str) -> str:
    """What hermes itself resolves for ``key`` (its managed scope laid over config.yaml)."""
    return hermes("config", "get", key).stdout.strip()


@pytest.mark.parametrize(("pinned", "check", "hermes_says"), [
    ("context: {engine: compressor}\n", "context.engine", "compressor"),
    ("plugins: {disabled: [hermes-ctx]}\n", "plugins.enabled", "- hermes-ctx"),
], ids=["engine", "disabled"])
def test_a_managed_config_that_undoes_the_wiring_names_its_file(
        installed: Path, managed: Path, capsys: pytest.CaptureFixture[str], pinned: str, check: str,
        hermes_says: str) -> None:
    """config.yaml is wired, but the administrator's keys win: doctor checks what hermes will use, and
    names the file where the fix is (install cannot make it)."""
    code, _, report = doctor(capsys)
    assert code == 0 and wiring(report)[check]["ok"]  # the same home, before the managed file
    (managed / "config.yaml").write_text(pinned, encoding="utf-8")
    key = check if check == "context.engine" else "plugins.disabled"
    assert hermes_reads(key) == hermes_says

    code, text, report = doctor(capsys)
    row = wiring(report)[check]
    assert code == 1 and not row["ok"] and f"FAIL  {row['detail']}\n        fix: {row['fix']}" in text
    assert f"{key} is set by hermes' managed scope ({managed / 'config.yaml'}), which wins over config.yaml" in \
        row["detail"]
    assert row["fix"] == f"change {key} in {managed / 'config.yaml'} (your administrator's file)"
    assert [name for name, r in wiring(report).items() if not r["ok"]] == [check]
    code, out, _ = install_again(capsys)
    assert code == 1 and f"still broken: {row['detail']}\n  fix: {row['fix']}" in out


def test_a_managed_config_that_leaves_the_wiring_alone_is_no_problem(
        installed: Path, managed: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Pinning other keys, or ours the way install sets them; and a user config only install can fix
    under a managed file is told to run install, not to call the administrator."""
    (managed / "config.yaml").write_text("display: {skin: mono}\ncontext: {engine: hermes-ctx}\n"
                                         "plugins: {disabled: [noisy]}\n", encoding="utf-8")
    code, _, report = doctor(capsys)
    assert code == 0 and report["ok"], report["problems"]
    assert hermes_reads("context.engine") == "hermes-ctx"

    rewrite(_drop_enabled)
    code, _, report = doctor(capsys)
    row = wiring(report)["plugins.enabled"]
    assert code == 1 and row["fix"] == "hermes-ctx install" and "managed" not in row["detail"]


def test_a_listed_provider_hermes_memory_off_switched_off_is_a_note_not_a_problem(
        installed: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`hermes memory off` (memory.provider: '') is the user's switch: the listed ctx-mem0 is off with
    hermes' own memory, said in the detail; the same list with the key missing is a problem (above)."""
    hermes("memory", "off")  # it writes provider: '' where the key is (install put ctx-local there)
    rewrite(_list_mem0)
    assert config()["memory"] == {"provider": ""}
    code, text, report = doctor(capsys)
    row = wiring(report)["memory.provider"]
    assert code == 0 and report["ok"] and row["ok"] and not row["fix"], report["problems"]
    assert row["detail"].startswith("memory.provider is '' (hermes memory off): ctx_plugins.memory.providers lists "
                                    "ctx-mem0, which inside hermes runs only as memory.provider, so it is off too "
                                    "(hermes-ctx install --memory ctx-mem0 turns it on")
    assert f"ok    {row['detail']}" in text


def test_a_provider_hermes_bundles_or_has_a_directory_for_is_not_a_misspelling_of_ours(
        installed: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """'honcho' (hermes' own) is close to our 'ctx-honcho', and so is a provider of the user's own in
    $HERMES_HOME/plugins: both are the user's choice, not a typo."""
    (installed / "plugins" / "ctx-mem1").mkdir(parents=True)
    for name in ("honcho", "ctx-mem1"):
        rewrite(lambda data, name=name: data["memory"].__setitem__("provider", name))
        _, _, report = doctor(capsys)
        row = wiring(report)["memory.provider"]
        assert row["ok"] and "did you mean" not in row["detail"], (name, row)


def test_a_name_close_to_file_is_not_sent_to_install_which_refuses_file(
        installed: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Red-team of session 21: memory.provider 'files' was 'did you mean 'file'?' with the fix
    `hermes-ctx install --memory file`, which install refuses (exit 4): 'file' is built in and hermes never loads it
    as its provider. Only an external provider of ours is suggested; a misspelt one still is."""
    rewrite(lambda data: data["memory"].__setitem__("provider", "files"))
    _, _, report = doctor(capsys)
    row = wiring(report)["memory.provider"]
    assert "--memory file" not in (row["fix"] or "") and "did you mean 'file'" not in row["detail"], row
    rewrite(lambda data: data["memory"].__setitem__("provider", "ctx-locl"))
    _, _, report = doctor(capsys)
    row = wiring(report)["memory.provider"]
    assert not row["ok"] and row["fix"].endswith("--memory ctx-local"), row


def install_again(capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(["install"])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_without_hermes_agent_it_is_one_problem_naming_what_to_install(
        installed: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """hermes-agent missing from the environment (simulated: this suite runs inside hermes' own)."""
    monkeypatch.setattr(doctor_command, "hermes_version", lambda: None)
    code, text, report = doctor(capsys)
    assert code == 1
    assert report["hermes_wiring"] == [{
        "check": "hermes-agent", "ok": False, "detail": "hermes-agent is not installed in this Python: nothing "
        "will run us", "fix": "pip install 'hermes-ctx-plugins[hermes]'"}]
    assert "fix: pip install 'hermes-ctx-plugins[hermes]'" in text


@pytest.mark.parametrize(("found", "says", "fix"), [
    ([], "no hermes_agent.plugins entry point 'hermes-ctx'", "pip install hermes-ctx-plugins"),
    ([importlib.metadata.EntryPoint("hermes-ctx", "hermes_ctx_plugins.gone.plugin", "hermes_agent.plugins")],
     "names hermes_ctx_plugins.gone.plugin, which cannot be imported",
     "pip install --force-reinstall hermes-ctx-plugins"),
])
def test_an_entry_point_hermes_cannot_use_is_a_problem(
        installed: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
        found: list[importlib.metadata.EntryPoint], says: str, fix: str) -> None:
    """Stale metadata (the package removed or moved, its dist-info left): simulated for hermes' group only."""
    real = importlib.metadata.entry_points

    def entry_points(**select: Any) -> Any:
        if select.get("group") == "hermes_agent.plugins":
            return importlib.metadata.EntryPoints(found)
        return real(**select)

    code, _, report = doctor(capsys)
    assert code == 0 and wiring(report)["entry point"]["detail"].endswith("-> hermes_ctx_plugins.hermes.plugin")
    monkeypatch.setattr(importlib.metadata, "entry_points", entry_points)
    code, _, report = doctor(capsys)
    row = wiring(report)["entry point"]
    assert code == 1 and not row["ok"] and says in row["detail"] and row["fix"] == fix


@pytest.mark.parametrize(("text", "said"), [
    ("model: gpt-4o\nplugins:\n  enabled: [a]\nplugins:\n  enabled: [b]\n", 'duplicate key "plugins"'),
    ("model: gpt-4o\nplugins:\n  enabled: foo\n", "plugins.enabled must be a list"),
])
def test_a_fix_install_would_refuse_says_what_to_fix_by_hand_first(
        text: str, said: str, capsys: pytest.CaptureFixture[str]) -> None:
    """doctor named 'hermes-ctx install' as the fix of a config install refuses to edit (exit 2) (a red-team pass)."""
    home().mkdir(parents=True, exist_ok=True)
    (home() / "config.yaml").write_text(text, encoding="utf-8")
    code, _, report = doctor(capsys)
    assert code == 1
    fix = wiring(report)["plugins.enabled"]["fix"]
    assert fix.startswith("first fix what install cannot edit") and said in fix and fix.endswith("hermes-ctx install")
    assert main(["install"]) == 2  # as doctor says


def test_doctor_and_install_never_send_each_other_round(capsys: pytest.CaptureFixture[str]) -> None:
    """Top level ctx-local, a deployment ctx-mem0: doctor named 'install --memory none' for the memory.provider
    check too; install --memory none then said to run 'install --memory ctx-local', which install refuses, and
    doctor said --memory none again (a red-team pass). --memory none is the fix of what it wires, the
    memory.provider to choose is the user's to settle first."""
    home().mkdir(parents=True, exist_ok=True)
    (home() / "config.yaml").write_text(
        "plugins: {enabled: [hermes-ctx]}\nagent: {environment_probe: false}\nctx_plugins:\n"
        "  memory: {providers: [file, ctx-local]}\n  deployments:\n    support:\n"
        "      memory: {providers: [ctx-mem0]}\n      options: {ctx-mem0: {api_key: x, host: 'http://127.0.0.1:9'}}\n",
        encoding="utf-8")
    code, _, report = doctor(capsys)
    fixes = {name: row["fix"] for name, row in wiring(report).items() if not row["ok"]}
    assert code == 1 and fixes["context.engine"].startswith("hermes-ctx install --memory none")
    assert fixes["memory.provider"].startswith("first fix what install cannot edit")

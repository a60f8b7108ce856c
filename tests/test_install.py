"""`hermes-ctx install` / `--uninstall`: hermes' config.yaml edited in place (comments, order and layout
kept), a backup, the memory shims; and a real `hermes chat` afterwards runs our engine and ctx-local."""

from __future__ import annotations

import difflib
import json
import os
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from install_helpers import hermes

from hermes_ctx_plugins.cli import main
from hermes_ctx_plugins.hermes.memory import shim_path, shim_text
from hermes_ctx_plugins.testing import StubOpenAIServer

BIN = Path(sys.executable).parent
#: what a user wrote by hand: comments everywhere, four-space indentation, quoting, a block list
HANDWRITTEN = """\
# my hermes setup
model:
    default: qwen3   # the local one
    provider: custom
    base_url: "http://127.0.0.1:9/v1"

# what the agent may use
toolsets:
    - terminal
    - 'web'
display: {skin: mono}   # flow style stays
# the end of my notes
"""


def home() -> Path:
    return Path(os.environ["HERMES_HOME"])


def config_file() -> Path:
    return home() / "config.yaml"


def write(text: str) -> Path:
    config_file().parent.mkdir(parents=True, exist_ok=True)
    config_file().write_text(text, encoding="utf-8")
    return config_file()


def install(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["install", *args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def parsed(text: str) -> Any:
    return yaml.safe_load(text)  # what hermes reads (PyYAML)


def backups() -> list[Path]:
    return sorted(home().glob("config.yaml.bak.*"))


# ------------------------------------------------------------------ end to end, in real hermes
@pytest.mark.timeout(300)
def test_install_on_a_fresh_home_then_hermes_chat_runs_our_engine_and_ctx_local(stub: StubOpenAIServer,
                                                                              tmp_path: Path) -> None:
    """The new user's path: the model part of config.yaml, `hermes-ctx install`, `hermes chat`. A fact
    told in one `hermes chat -Q -q` is recalled by ctx-local in the next, and every request carries our
    engine's archive tools (hermes asks only the selected engine for them)."""
    write(f"model: {{default: stub-model, provider: custom, base_url: {stub.base_url}, context_length: 128000}}\n"
          "agent: {environment_probe: false}\n")
    env = {**os.environ, "HOME": str(tmp_path), "MEM0_TELEMETRY": "False"}
    done = subprocess.run([str(BIN / "hermes-ctx"), "install"], env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "next: hermes chat" in done.stdout and "memory shim: wrote ctx-local" in done.stdout

    def chat(message: str) -> None:
        ran = subprocess.run([str(BIN / "hermes"), "chat", "-Q", "-q", message], env=env, capture_output=True,
                             text=True, timeout=180)
        assert ran.returncode == 0, ran.stderr[-2000:]

    stub.reply("Noted, 4-8-15-16.")
    chat("Remember: my locker combination is 4-8-15-16.")
    told = len(stub.chat_requests)
    stub.reply("It is 4-8-15-16.")
    chat("What is my locker combination?")

    asked = [r.body for r in stub.chat_requests[told:]
             if "What is my locker combination?" in str(r.body["messages"][-1]["content"])]  # type: ignore[index]
    assert asked, "the second hermes chat never asked the model"
    question = str(asked[0]["messages"][-1]["content"])
    assert "ctx-local memory" in question and "my locker combination is 4-8-15-16" in question
    tools = {tool.get("function", tool)["name"] for tool in asked[0]["tools"]}
    assert {"ctx_search", "ctx_expand"} <= tools  # our engine's
    assert "ctx_memory_search" in tools  # ctx-local's, through its shim
    first = stub.chat_requests[0].body["messages"]  # type: ignore[index]
    assert "ctx-local memory" not in json.dumps(first)  # nothing was recalled before it was told
    assert "registered context engine: hermes-ctx" in (home() / "logs" / "agent.log").read_text(encoding="utf-8")


def test_readmes_way_to_try_hermes_without_a_model(tmp_path: Path) -> None:
    """README's "no model at hand": the stub as a server of its own (`python -m hermes_ctx_plugins.testing`), the
    model block it prints pasted into config.yaml, `hermes-ctx install`, `hermes chat` (the newcomer walk found no
    way to try hermes chat without a real model)."""
    env = {**os.environ, "HOME": str(tmp_path), "MEM0_TELEMETRY": "False"}
    server = subprocess.Popen([sys.executable, "-m", "hermes_ctx_plugins.testing", "--seconds", "170"], env=env,
                              stdout=subprocess.PIPE, text=True)
    try:
        assert server.stdout is not None
        url, comment, model = (server.stdout.readline().strip() for _ in range(3))
        assert url.startswith("http://127.0.0.1:") and comment.startswith("#") and model.startswith("model:")
        write(f"{model}\nagent: {{environment_probe: false}}\n")
        done = subprocess.run([str(BIN / "hermes-ctx"), "install"], env=env, capture_output=True, text=True,
                              timeout=60)
        assert done.returncode == 0, done.stderr
        ran = subprocess.run([str(BIN / "hermes"), "chat", "-Q", "-q", "hello from the README"], env=env,
                             capture_output=True, text=True, timeout=120)
        assert ran.returncode == 0, ran.stderr[-2000:]
        assert "stub reply to: hello from the README" in ran.stdout
    finally:
        server.terminate()
        server.wait(10)
        if server.stdout is not None:
            server.stdout.close()


def test_the_model_stub_serves_on_the_port_asked_for(tmp_path: Path) -> None:
    """`--port` was ignored (a newcomer walk: config.yaml named the port, the stub listened on another)."""
    import socket

    with socket.socket() as probe:  # a port free now
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = subprocess.Popen([sys.executable, "-m", "hermes_ctx_plugins.testing", "--port", str(port),
                               "--seconds", "30"], stdout=subprocess.PIPE, text=True)
    try:
        assert server.stdout is not None
        assert server.stdout.readline().strip() == f"http://127.0.0.1:{port}/v1"
        with socket.create_connection(("127.0.0.1", port), timeout=5):
            pass
    finally:
        server.terminate()
        server.wait(10)
        if server.stdout is not None:
            server.stdout.close()


# ------------------------------------------------------------------ idempotent, dry run, backup
def test_a_second_run_changes_nothing_and_says_so(capsys: pytest.CaptureFixture[str]) -> None:
    write(HANDWRITTEN)
    code, out, _ = install(capsys)
    assert code == 0 and "changed: context.engine: hermes-ctx" in out
    after_first = config_file().read_bytes()
    stamp = config_file().stat().st_mtime_ns
    assert len(backups()) == 1

    code, out, _ = install(capsys)
    assert code == 0
    assert f"already installed: nothing changed in {config_file()}" in out and "changed:" not in out
    assert config_file().read_bytes() == after_first and config_file().stat().st_mtime_ns == stamp
    assert len(backups()) == 1  # nothing written, nothing backed up


def test_dry_run_prints_the_diff_and_writes_nothing(capsys: pytest.CaptureFixture[str]) -> None:
    write(HANDWRITTEN)
    code, out, _ = install(capsys, "--dry-run")
    assert code == 0
    assert out.startswith(f"--- {config_file()}\n+++ {config_file()} (after)\n")
    added = [line[1:] for line in out.splitlines() if line.startswith("+") and not line.startswith("+++")]
    assert "    engine: hermes-ctx" in added and "        - hermes-ctx" in added and "    provider: ctx-local" in added
    assert not [line for line in out.splitlines() if line.startswith("-") and not line.startswith("---")]
    assert config_file().read_text(encoding="utf-8") == HANDWRITTEN
    assert backups() == [] and not (home() / "plugins").exists()

    code, out, _ = install(capsys, "--dry-run", "--json")
    report = json.loads(out)
    assert code == 0 and report["dry_run"] and report["backup"] is None and "+    engine: hermes-ctx" in report["diff"]
    assert config_file().read_text(encoding="utf-8") == HANDWRITTEN

    code, out, _ = install(capsys)  # the diff is what the real run applies
    assert code == 0 and parsed(config_file().read_text(encoding="utf-8"))["context"] == {"engine": "hermes-ctx"}


def test_the_backup_is_the_original_and_the_file_keeps_its_permissions(capsys: pytest.CaptureFixture[str]) -> None:
    write(HANDWRITTEN).chmod(0o640)
    code, out, _ = install(capsys)
    [backup] = backups()
    assert code == 0 and f"backup: {backup}" in out
    assert backup.read_text(encoding="utf-8") == HANDWRITTEN
    assert stat.S_IMODE(config_file().stat().st_mode) == 0o640


def test_json_is_one_document_with_the_changes_the_backup_and_what_doctor_says(
        capsys: pytest.CaptureFixture[str]) -> None:
    write(HANDWRITTEN)
    code, out, _ = install(capsys, "--json")
    report = json.loads(out)
    assert code == 0
    assert report["changes"] == ["plugins.enabled: added hermes-ctx", "context.engine: hermes-ctx",
                                 "memory.provider: ctx-local",
                                 "ctx_plugins: added (compressor summarize, memory providers [file])"]
    assert report["backup"] == str(backups()[0])
    assert "wrote ctx-local" in report["shims"]
    assert {w["check"]: w["ok"] for w in report["wiring"]} == {
        "hermes-agent": True, "entry point": True, "HERMES_SAFE_MODE": True, "plugins.enabled": True,
        "context.engine": True, "memory.provider": True}


# ------------------------------------------------------------------ what the file keeps
def test_comments_order_and_layout_survive_install_and_uninstall(capsys: pytest.CaptureFixture[str]) -> None:
    write(HANDWRITTEN)
    assert install(capsys)[0] == 0
    text = config_file().read_text(encoding="utf-8")
    for line in HANDWRITTEN.splitlines():  # every line the user wrote, comments included, unchanged
        assert line in text.splitlines(), line
    data = parsed(text)
    assert list(data) == ["model", "toolsets", "display", "plugins", "context", "memory", "ctx_plugins"]
    assert text.rstrip().endswith("# the end of my notes")  # ours went above the closing comment
    assert "    engine: hermes-ctx" in text.splitlines()  # in the file's own four-space indentation
    assert data["ctx_plugins"] == {"compressor": "summarize", "memory": {"providers": ["file"]}}
    assert '# every key: README "Configuration"' in text

    code, out, _ = install(capsys, "--uninstall")
    assert code == 0 and "kept: ctx_plugins: your settings (--purge removes them)" in out
    text = config_file().read_text(encoding="utf-8")
    assert parsed(text) == {**parsed(HANDWRITTEN), "ctx_plugins": data["ctx_plugins"]}
    assert all(line in text.splitlines() for line in HANDWRITTEN.splitlines())

    code, _, _ = install(capsys, "--uninstall", "--purge", "--yes")
    assert code == 0
    assert config_file().read_text(encoding="utf-8") == HANDWRITTEN  # byte for byte


def test_a_config_hermes_wrote_reads_the_same_to_hermes_after_uninstall(capsys: pytest.CaptureFixture[str]) -> None:
    """hermes' own writer: its full default config, PyYAML layout, its notes as comments at the end."""
    from hermes_cli import config as hermes_config

    chosen = hermes_config.load_config()
    chosen["model"] = {"default": "qwen3", "provider": "custom", "base_url": "http://127.0.0.1:9/v1"}
    chosen["toolsets"] = ["terminal", "file"]
    hermes_config.save_config(chosen)  # it writes what differs from its defaults, then its notes
    original = config_file().read_text(encoding="utf-8")
    assert original.rstrip().endswith("#   model: anthropic/claude-sonnet-4")  # hermes' closing notes
    seen_by_hermes = hermes_config.load_config()

    assert install(capsys)[0] == 0
    text = config_file().read_text(encoding="utf-8")
    assert text.rstrip().endswith("#   model: anthropic/claude-sonnet-4")
    assert hermes_config.load_config()["context"]["engine"] == "hermes-ctx"
    diff = [line for line in difflib.unified_diff(original.splitlines(), text.splitlines(), lineterm="", n=0)
            if line[:1] in "+-" and line[:3] not in ("+++", "---")]
    assert diff == ["+plugins:", "+  enabled:", "+    - hermes-ctx", "+context:", "+  engine: hermes-ctx", "+memory:",
                    "+  provider: ctx-local", "+ctx_plugins:", '+  # every key: README "Configuration"',
                    "+  compressor: summarize", "+  memory:", "+    providers: [file]"]  # added, nothing else

    assert install(capsys, "--uninstall", "--purge", "--yes")[0] == 0
    assert hermes_config.load_config() == seen_by_hermes  # engine and memory back to hermes' defaults


def test_a_comments_only_config_keeps_its_comments(capsys: pytest.CaptureFixture[str]) -> None:
    write("# nothing configured yet\n# model: ...\n")
    assert install(capsys)[0] == 0
    text = config_file().read_text(encoding="utf-8")
    assert text.startswith("# nothing configured yet\n# model: ...\n")
    assert parsed(text)["context"] == {"engine": "hermes-ctx"}


def test_install_never_writes_a_config_past_the_size_it_would_load_at(capsys: pytest.CaptureFixture[str]) -> None:
    """A config 100 bytes under the 256 KiB limit passed ``check``; ``install -y`` wrote it 100 bytes over (exit 0),
    and hermes, ``check`` and ``load_host`` refused it from then on (a red-team pass)."""
    from hermes_ctx_plugins.config import MAX_CONFIG_BYTES

    head = "model: {default: m}\n"
    text = head + "#" * (MAX_CONFIG_BYTES - 100 - len(head) - 1) + "\n"
    write(text)
    code, _, err = install(capsys, "-y")
    assert code == 2 and f"larger than {MAX_CONFIG_BYTES:,} bytes" in err
    assert config_file().read_text(encoding="utf-8") == text and not backups()


# ------------------------------------------------------------------ uninstall
def test_uninstall_removes_exactly_what_install_added(capsys: pytest.CaptureFixture[str]) -> None:
    write(HANDWRITTEN)
    foreign = home() / "plugins" / "my-provider" / "__init__.py"
    foreign.parent.mkdir(parents=True)
    foreign.write_text("# someone else's memory provider\n", encoding="utf-8")
    assert install(capsys)[0] == 0
    assert shim_path(home(), "ctx-local").read_text(encoding="utf-8") == shim_text("ctx-local")

    code, out, _ = install(capsys, "--uninstall")
    assert code == 0
    for said in ("changed: plugins.enabled: removed hermes-ctx", "changed: context.engine: removed",
                 "changed: memory.provider: removed 'ctx-local'", "memory shim: removed ctx-local"):
        assert said in out
    assert not (home() / "plugins" / "ctx-local").exists() and not (home() / "plugins" / "ctx-mem0").exists()
    assert foreign.read_text(encoding="utf-8") == "# someone else's memory provider\n"  # not ours: kept
    assert len(backups()) == 2

    code, out, _ = install(capsys, "--uninstall")
    assert code == 0 and "already uninstalled: nothing changed" in out


def test_purge_asks_first(capsys: pytest.CaptureFixture[str]) -> None:
    write(HANDWRITTEN)
    assert install(capsys)[0] == 0
    installed = config_file().read_text(encoding="utf-8")
    code, _, err = install(capsys, "--uninstall", "--purge")  # stdin is not a terminal under pytest
    assert code == 4 and "--yes" in err and "ctx_plugins" in err
    assert config_file().read_text(encoding="utf-8") == installed
    assert install(capsys, "--purge")[0] == 4  # only with --uninstall


# ------------------------------------------------------------------ what install will not do
BRIDGE = """\
plugins: {enabled: [hermes-ctx]}
ctx_plugins:
  memory: {providers: [file]}
  deployments:
    support:
      memory: {providers: [file, ctx-local]}
    sales:
      memory: {providers: [ctx-mem0]}
      options: {ctx-mem0: {api_key: x, host: 'http://127.0.0.1:9'}}
"""


def test_install_never_writes_what_one_deployment_could_not_load(capsys: pytest.CaptureFixture[str]) -> None:
    """install checked the deployment it ran for only: on a Bridge's config it set memory.provider: ctx-local,
    exited 0, and the Bridge no longer started ('sales' runs ctx-mem0: two external providers); and it wrote into a
    file one deployment already could not load (a red-team pass)."""
    write(BRIDGE)
    code, _, err = install(capsys)
    assert code == 2 and config_file().read_text(encoding="utf-8") == BRIDGE and not backups()
    assert "deployment 'sales'" in err and "install --memory none" in err and "'ctx-local'" in err
    assert not (home() / "plugins").exists()  # no shim written for a config left as it was
    code, _, err = install(capsys, "--deployment", "sales")  # the deployment install runs for: said alike
    assert code == 2 and "deployment 'sales' cannot run" in err and "install --memory none" in err
    assert main(["doctor", "--no-probe", "--json"]) == 1
    fixes = {row["fix"] for row in json.loads(capsys.readouterr().out)["hermes_wiring"] if not row["ok"]}
    assert fixes and all(fix.startswith("hermes-ctx install --memory none") for fix in fixes)
    code, _, _ = install(capsys, "--memory", "none")
    assert code == 0 and parsed(config_file().read_text(encoding="utf-8"))["context"]["engine"] == "hermes-ctx"
    from hermes_ctx_plugins.bridge import Bridge
    Bridge(config_file()).shutdown()  # starts
    broken = BRIDGE.replace("host: 'http://127.0.0.1:9'", "host: 'http://127.0.0.1:9', base_url: x")
    write(broken)
    code, _, err = install(capsys, "--memory", "none")
    assert code == 2 and config_file().read_text(encoding="utf-8") == broken and "deployment 'sales'" in err
    assert f"{config_file()}:9: ctx_plugins.options.ctx-mem0.base_url" in err  # its line in the file


def test_a_config_that_cannot_be_written_leaves_no_shim_or_backup_behind(
        capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """An immutable config.yaml: install exited 1 with the config unchanged, but the shims it had written first and a
    backup stayed (a red-team pass)."""
    from hermes_ctx_plugins.cli import install as install_module

    def refused(path: Path, data: bytes) -> None:
        raise PermissionError(1, "Operation not permitted", str(path))

    write(HANDWRITTEN)
    monkeypatch.setattr(install_module, "atomic_write", refused)
    code, _, err = install(capsys)
    assert code == 1 and "was not changed" in err and config_file().read_text(encoding="utf-8") == HANDWRITTEN
    assert not backups() and not list((home() / "plugins").glob("*/__init__.py"))


def test_broken_yaml_exits_2_naming_the_file_and_line_and_writes_nothing(capsys: pytest.CaptureFixture[str]) -> None:
    broken = "model:\n  default: qwen3\ntoolsets: [terminal\ndisplay: {}\n"
    write(broken)
    code, out, err = install(capsys)
    assert code == 2 and out == ""
    assert f"hermes-ctx: invalid config: {config_file()}:4: malformed YAML" in err
    assert config_file().read_text(encoding="utf-8") == broken and backups() == []


def test_a_section_that_is_not_a_mapping_is_named_with_its_line(capsys: pytest.CaptureFixture[str]) -> None:
    text = "model: {default: qwen3}\nplugins: hermes-ctx\n"
    write(text)
    code, _, err = install(capsys)
    assert code == 2 and f"{config_file()}:2" in err and "plugins must be a mapping" in err
    assert config_file().read_text(encoding="utf-8") == text


def test_another_context_engine_is_replaced_only_when_confirmed(capsys: pytest.CaptureFixture[str]) -> None:
    write("context:\n  engine: lcm   # my engine\n")
    code, _, err = install(capsys)
    assert code == 4
    assert "context.engine is 'lcm', another engine" in err and "--yes" in err and "nothing changed" in err
    assert config_file().read_text(encoding="utf-8") == "context:\n  engine: lcm   # my engine\n"

    code, out, _ = install(capsys, "--yes")
    assert code == 0 and "changed: context.engine: hermes-ctx (was 'lcm')" in out
    assert "  engine: hermes-ctx # my engine" in config_file().read_text(encoding="utf-8")


def test_another_memory_provider_is_kept_unless_named(capsys: pytest.CaptureFixture[str]) -> None:
    write("memory:\n  provider: honcho\n")
    code, out, _ = install(capsys)
    assert code == 0 and "kept: memory.provider: 'honcho', your choice (--memory NAME replaces it)" in out
    assert parsed(config_file().read_text(encoding="utf-8"))["memory"] == {"provider": "honcho"}

    code, out, _ = install(capsys, "--memory", "ctx-local")
    assert code == 0 and "changed: memory.provider: ctx-local (was 'honcho')" in out
    assert parsed(config_file().read_text(encoding="utf-8"))["memory"] == {"provider": "ctx-local"}

    code, _, err = install(capsys, "--memory", "ctx-locl")
    assert code == 4 and "did you mean 'ctx-local'?" in err


def test_memory_none_leaves_hermes_memory_alone(capsys: pytest.CaptureFixture[str]) -> None:
    write(HANDWRITTEN)
    code, out, _ = install(capsys, "--memory", "none")
    assert code == 0 and "kept: memory.provider: not set, left alone (--memory none)" in out
    assert "''" not in out  # the key is not there: it is not said to be empty
    assert "memory" not in parsed(config_file().read_text(encoding="utf-8"))

    write("memory:\n  provider: honcho\n")
    code, out, _ = install(capsys, "--memory", "none")
    assert code == 0 and "kept: memory.provider: 'honcho' (--memory none)" in out
    assert parsed(config_file().read_text(encoding="utf-8"))["memory"] == {"provider": "honcho"}


def test_a_disabled_entry_for_us_is_removed_and_said(capsys: pytest.CaptureFixture[str]) -> None:
    write("plugins:\n  enabled: [other]\n  disabled: [hermes-ctx, noisy]\n")
    code, out, _ = install(capsys)
    assert code == 0
    assert "changed: plugins.disabled: removed hermes-ctx (hermes lets it win over plugins.enabled)" in out
    assert parsed(config_file().read_text(encoding="utf-8"))["plugins"] == {
        "enabled": ["other", "hermes-ctx"], "disabled": ["noisy"]}


def test_a_result_that_would_not_load_is_not_written(capsys: pytest.CaptureFixture[str]) -> None:
    """Selecting ctx-local for hermes where the deployment install runs for already runs ctx-mem0 would
    make two external providers: said with the rule, nothing written."""
    text = "ctx_plugins:\n  deployments:\n    team:\n      memory:\n        providers: [ctx-mem0]\n"
    write(text)
    code, _, err = install(capsys, "--deployment", "team")
    assert code == 2 and "only one external memory provider may be active" in err
    assert config_file().read_text(encoding="utf-8") == text and backups() == []
    assert install(capsys, "--deployment", "team", "--memory", "none")[0] == 0  # the way around it


# ------------------------------------------------------------------ upgrading from 0.1.0
#: a 0.1.0 user's config: ctx-mem0 run from the list (0.2.0 runs an external provider in hermes only as
#: hermes' memory.provider)
LISTED_MEM0 = ("ctx_plugins:\n  memory:\n    providers: [file, ctx-mem0]\n"
               "  options:\n    ctx-mem0: {api_key: m0-test, host: 'http://127.0.0.1:9'}\n")


def test_the_external_provider_a_0_1_0_config_lists_becomes_hermes_memory_provider(
        capsys: pytest.CaptureFixture[str]) -> None:
    write(LISTED_MEM0)
    code, out, err = install(capsys, "--dry-run")
    assert code == 0, err
    assert "+  provider: ctx-mem0" in out and "ctx-local" not in [line[1:].strip() for line in out.splitlines()]

    code, out, _ = install(capsys)
    assert code == 0 and "still broken" not in out
    assert ("changed: memory.provider: ctx-mem0, which ctx_plugins.memory.providers lists: inside hermes it runs "
            "as memory.provider") in out
    assert parsed(config_file().read_text(encoding="utf-8"))["memory"] == {"provider": "ctx-mem0"}
    assert shim_path(home(), "ctx-mem0").read_text(encoding="utf-8") == shim_text("ctx-mem0")
    code, out, _ = install(capsys)
    assert code == 0 and "already installed" in out


def test_hermes_memory_off_stays_off_for_a_listed_external_provider(capsys: pytest.CaptureFixture[str]) -> None:
    write(LISTED_MEM0 + "memory:\n  provider: ''\n")
    code, out, _ = install(capsys)
    assert code == 0 and "kept: memory.provider is '' (hermes memory off): left alone; --memory ctx-mem0" in out
    assert parsed(config_file().read_text(encoding="utf-8"))["memory"] == {"provider": ""}


def test_memory_naming_another_external_provider_than_the_listed_one_is_refused(
        capsys: pytest.CaptureFixture[str]) -> None:
    write(LISTED_MEM0)
    code, out, err = install(capsys, "--memory", "ctx-local")
    assert code == 4 and out == ""
    assert "--memory ctx-local and ctx-mem0, which ctx_plugins.memory.providers lists" in err
    assert (f"either run hermes-ctx install --memory ctx-mem0, or remove ctx-mem0 from ctx_plugins.memory.providers "
            f"in {config_file()}") in err
    assert config_file().read_text(encoding="utf-8") == LISTED_MEM0 and backups() == []

    code, out, _ = install(capsys, "--memory", "ctx-mem0")  # the listed one: no conflict
    assert code == 0 and "changed: memory.provider: ctx-mem0" in out


# ------------------------------------------------------------------ what install says
def test_dry_run_lists_the_shims_install_would_write_and_uninstall_would_remove(
        capsys: pytest.CaptureFixture[str]) -> None:
    write(HANDWRITTEN)
    code, out, _ = install(capsys, "--dry-run")
    assert code == 0 and f"memory shim: would write ctx-local ({shim_path(home(), 'ctx-local')})" in out
    assert not (home() / "plugins").exists()
    code, out, _ = install(capsys, "--dry-run", "--json")
    assert code == 0 and f"would write ctx-mem0 ({shim_path(home(), 'ctx-mem0')})" in json.loads(out)["shims"]

    assert install(capsys)[0] == 0
    code, out, _ = install(capsys, "--dry-run")
    assert code == 0 and "memory shim:" not in out  # all in place: nothing to write

    code, out, _ = install(capsys, "--uninstall", "--dry-run")
    assert code == 0 and "memory shim: would remove ctx-local" in out
    assert shim_path(home(), "ctx-local").exists()
    code, out, _ = install(capsys, "--uninstall")
    assert code == 0 and "memory shim: removed ctx-local" in out and not (home() / "plugins" / "ctx-local").exists()


def test_a_provider_hermes_would_leave_out_is_a_warning_not_a_failure(capsys: pytest.CaptureFixture[str],
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """hermes runs a memory provider only when its is_available() says so (no network asked): ctx-mem0
    without an API key is installed (exit 0), with the warning; with the key, no warning."""
    monkeypatch.delenv("MEM0_API_KEY", raising=False)
    write(HANDWRITTEN)
    code, out, _ = install(capsys, "--memory", "ctx-mem0")
    assert code == 0
    assert ("warning: memory.provider ctx-mem0 is unavailable: no Mem0 API key: set "
            "ctx_plugins.options.ctx-mem0.api_key or MEM0_API_KEY; hermes runs without it") in out

    monkeypatch.setenv("MEM0_API_KEY", "m0-test")
    code, out, _ = install(capsys)
    assert code == 0 and "warning:" not in out and "already installed" in out


def test_an_edit_that_would_change_other_settings_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    """A round trip through ruamel that would change what hermes reads elsewhere (here a YAML 1.1
    directive, under which ruamel reads the key ``y`` as a boolean) is refused, not written."""
    text = "%YAML 1.1\n---\nsizes: {x: 1, y: 2}\n"
    write(text)
    code, _, err = install(capsys)
    assert code == 2 and "would also change 'sizes'" in err
    assert config_file().read_text(encoding="utf-8") == text and backups() == []


# ------------------------------------------------------------------ hermes' own memory switch
def test_hermes_memory_off_is_kept_by_the_next_install(capsys: pytest.CaptureFixture[str]) -> None:
    """`hermes memory off` writes `memory.provider: ''`: a choice, which a second install leaves as it
    is, and says how to undo it; where the key is missing, install fills in ctx-local."""
    write(HANDWRITTEN)
    code, out, _ = install(capsys)
    assert code == 0 and "changed: memory.provider: ctx-local" in out  # missing: ours
    hermes("memory", "off")
    assert parsed(config_file().read_text(encoding="utf-8"))["memory"] == {"provider": ""}

    code, out, _ = install(capsys)
    assert code == 0 and "changed:" not in out
    assert "kept: memory.provider is '' (hermes memory off): left alone; --memory ctx-local to use ours" in out
    assert parsed(config_file().read_text(encoding="utf-8"))["memory"] == {"provider": ""}

    code, out, _ = install(capsys, "--memory", "ctx-local")
    assert code == 0 and "changed: memory.provider: ctx-local" in out
    assert parsed(config_file().read_text(encoding="utf-8"))["memory"] == {"provider": "ctx-local"}


@pytest.mark.parametrize(("memory", "chosen"), [
    ("memory:\n  provider: ''\n", True),
    ("memory:\n  memory_enabled: true\n", False),
], ids=["empty", "missing"])
def test_an_empty_provider_a_user_wrote_is_kept_on_the_first_install(capsys: pytest.CaptureFixture[str],
                                                                     memory: str, chosen: bool) -> None:
    write(memory)
    code, out, _ = install(capsys)
    provider = parsed(config_file().read_text(encoding="utf-8"))["memory"].get("provider")
    assert code == 0
    if chosen:
        assert "left alone; --memory ctx-local to use ours" in out and provider == ""
    else:
        assert "changed: memory.provider: ctx-local" in out and provider == "ctx-local"


def test_the_defaults_hermes_config_edit_writes_out_are_not_a_choice(capsys: pytest.CaptureFixture[str]) -> None:
    """`hermes config edit` on a fresh home writes every default, `memory.provider: ''` among them:
    install selects ctx-local there (and says what it replaced). After that, `hermes memory off` in the
    same file is the user's again."""
    home().mkdir(parents=True, exist_ok=True)
    hermes("config", "edit", env={**os.environ, "EDITOR": "true"})
    memory = parsed(config_file().read_text(encoding="utf-8"))["memory"]
    assert memory["provider"] == "" and len(memory) > 1  # hermes' whole default memory section

    code, out, _ = install(capsys)
    assert code == 0 and "changed: memory.provider: ctx-local (was '', one of the defaults hermes wrote out" in out
    assert parsed(config_file().read_text(encoding="utf-8"))["memory"]["provider"] == "ctx-local"

    hermes("memory", "off")
    code, out, _ = install(capsys)
    assert code == 0 and "kept: memory.provider is '' (hermes memory off): left alone" in out
    assert parsed(config_file().read_text(encoding="utf-8"))["memory"]["provider"] == ""


# ------------------------------------------------------------------ what the file keeps, continued
@pytest.mark.parametrize("enabled", [
    ["    - hermes-ctx", "    # below the first item", "    - foo"],
    ["    - foo", "    - hermes-ctx", "    # below a middle item", "    - bar"],
    ["    - foo", "    - hermes-ctx", "    # below the last item"],
], ids=["first", "middle", "last"])
def test_the_comment_below_the_list_item_uninstall_removes_stays(capsys: pytest.CaptureFixture[str],
                                                                  enabled: list[str]) -> None:
    text = "\n".join(["plugins:", "  enabled:", *enabled, "model: {default: x}", ""])
    write(text)
    code, _, _ = install(capsys, "--uninstall")
    assert code == 0
    assert config_file().read_text(encoding="utf-8") == text.replace("    - hermes-ctx\n", "")


def test_the_comments_below_the_last_key_stay_when_purge_empties_the_file(capsys: pytest.CaptureFixture[str]) -> None:
    write("# my hermes-ctx settings\nctx_plugins:\n  compressor: window\n# my closing note\n")
    assert install(capsys, "--uninstall", "--purge", "--yes")[0] == 0
    assert config_file().read_text(encoding="utf-8") == "# my hermes-ctx settings\n# my closing note\n"


@pytest.mark.parametrize(("bom", "newline"), [("\ufeff", "\r\n"), ("\ufeff", "\n"), ("", "\r\n"), ("", "\n")],
                         ids=["bom-crlf", "bom-lf", "crlf", "lf"])
def test_a_byte_order_mark_and_crlf_line_ends_are_kept(capsys: pytest.CaptureFixture[str], bom: str,
                                                       newline: str) -> None:
    original = (bom + HANDWRITTEN.replace("\n", newline)).encode("utf-8")
    config_file().parent.mkdir(parents=True, exist_ok=True)
    config_file().write_bytes(original)
    assert install(capsys)[0] == 0
    written = config_file().read_bytes()
    assert written.startswith(b"\xef\xbb\xbf") is bool(bom)
    assert written.count(b"\n") > original.count(b"\n")  # ours went in
    assert written.count(b"\r\n") == (written.count(b"\n") if newline == "\r\n" else 0)  # every line end alike
    assert parsed(written.decode("utf-8-sig"))["context"] == {"engine": "hermes-ctx"}

    assert install(capsys, "--uninstall", "--purge", "--yes")[0] == 0
    assert config_file().read_bytes() == original  # byte for byte


def test_a_long_value_on_one_line_stays_on_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    """A quoted value past 4,096 characters (a long system prompt) was folded over several lines by install (a
    red-team pass): hermes read the same value, but the operator's line was rewritten."""
    prompt = "agent:\n  system_prompt: \"" + "Always answer in English. " * 400 + "\"\n"
    config_file().parent.mkdir(parents=True, exist_ok=True)
    config_file().write_text(prompt, encoding="utf-8")
    assert install(capsys)[0] == 0
    assert prompt.splitlines()[1] in config_file().read_text(encoding="utf-8").splitlines()


# ------------------------------------------------------------------ an edit install will not write
ALIASED = "base: &b\n  engine: compressor\n  threshold: 0.5\ncontext: *b\nother:\n  <<: *b\n"


def test_an_edit_that_would_change_a_shared_anchor_is_refused_and_dry_run_shows_it(
        capsys: pytest.CaptureFixture[str]) -> None:
    """`context` is an alias of `base`: setting our engine would change `base` and `other` too. The
    refusal points at --dry-run, and --dry-run shows that edit (exit 2: it will not be written)."""
    write(ALIASED)
    code, out, err = install(capsys)
    assert code == 2 and out == ""
    assert "would also change 'base'" in err and "nothing was written (hermes-ctx install --dry-run shows" in err
    assert err.startswith("hermes-ctx: refused to edit the config: ") and "invalid config" not in err  # it is valid

    code, out, err = install(capsys, "--dry-run")
    assert code == 2
    assert out.startswith(f"--- {config_file()}\n+++ {config_file()} (after)\n")
    assert "-  engine: compressor\n+  engine: hermes-ctx\n" in out  # in base: the change it refuses
    assert "would also change 'base'" in err and "install will not write the edit shown above" in err

    code, out, err = install(capsys, "--dry-run", "--json")
    report = json.loads(out)
    assert code == 2 and "+  engine: hermes-ctx" in report["diff"] and "would also change 'base'" in report["refused"]
    assert config_file().read_text(encoding="utf-8") == ALIASED and backups() == []

    write(ALIASED.replace("context: *b", "context:\n  engine: compressor"))  # unshared: it would write it
    code, out, _ = install(capsys, "--dry-run", "--json")
    assert code == 0 and json.loads(out)["refused"] is None and "+  engine: hermes-ctx" in json.loads(out)["diff"]


def test_an_edit_made_while_install_works_is_kept_and_install_writes_nothing(
        capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """Red-team, session 17: hermes (or the user) wrote config.yaml while install was working (about a
    second, checking plugins); install then replaced the file with its own edit of the old text, and the
    backup held the old text too: the edit was gone. Now install reads the file again before replacing it."""
    from hermes_ctx_plugins.cli import install as install_module

    write(HANDWRITTEN)
    real = install_module._memory_plugins

    def meanwhile(*args: Any, **kwargs: Any) -> Any:  # hermes' `config set` renames a new file over it
        edited = config_file().with_name(".edit.tmp")
        edited.write_text(HANDWRITTEN + "agent:\n    max_turns: 7   # made while install ran\n", encoding="utf-8")
        os.replace(edited, config_file())
        return real(*args, **kwargs)

    monkeypatch.setattr(install_module, "_memory_plugins", meanwhile)
    code, _, err = install(capsys, "--yes")
    assert code == 1 and "changed while install was working" in err and "run install again" in err
    assert "max_turns: 7" in config_file().read_text(encoding="utf-8") and not backups()
    monkeypatch.setattr(install_module, "_memory_plugins", real)
    code, _, _ = install(capsys, "--yes")  # run again: the edit and ours together
    assert code == 0 and parsed(config_file().read_text(encoding="utf-8"))["agent"] == {"max_turns": 7}


def test_a_shim_that_cannot_be_written_leaves_the_config_as_it_was(capsys: pytest.CaptureFixture[str]) -> None:
    """Red-team, session 23: with `plugins` under the home a file (or a read-only folder), install rewrote
    config.yaml (and backed it up), then failed on the shims with only the shim's error on stderr and an
    empty stdout: the config was wired to a memory provider hermes could not find, and nothing said it
    had changed. Now the shims go first: their failure leaves config.yaml untouched, and says so."""
    write(HANDWRITTEN)
    (home() / "plugins").write_text("not a folder\n", encoding="utf-8")
    code, out, err = install(capsys)
    assert code == 1 and out == ""
    assert "plugins" in err and f"{config_file()} was not changed" in err
    assert config_file().read_text(encoding="utf-8") == HANDWRITTEN and not backups()
    (home() / "plugins").unlink()
    code, out, _ = install(capsys)
    assert code == 0 and "memory shim: wrote ctx-local" in out and backups()

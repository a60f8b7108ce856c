"""``hermes-ctx demo`` — the README's first command and CI's — on the real providers, in real hermes.

Each part the demo claims (compaction, the archive round trip, recall from MEMORY.md and from
ctx-local, status events through hermes' own callback) is asserted here from what a user gets: the
report, the JSON document, the files on disk, the exit code and the lines printed.
"""

from __future__ import annotations

import io
import json
import logging
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("run_agent", reason="the hermes extra is not installed")

from hermes_ctx_plugins.cli import demo as demo_command
from hermes_ctx_plugins.cli import main
from hermes_ctx_plugins.hermes import demo


def failure_lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if "failed" in line.lower()]


def test_the_demo_shows_every_part_and_leaves_no_home_behind(capsys: pytest.CaptureFixture[str],
                                                            caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger="hermes_ctx_plugins")
    own_home = os.environ["HERMES_HOME"]
    out = io.StringIO()
    report = demo.run(out=out)
    printed = out.getvalue() + "".join(capsys.readouterr())

    assert report.missing == []
    assert report.compactions >= 1 and report.tokens_after < report.tokens_before
    # one summary request per compaction: the summary model answered the first time
    assert report.summary_requests == report.compactions
    assert report.compacted_away and report.archive_round_trip
    assert report.recall_file and report.recall_ctx_local and report.file_gate
    assert "hostile note refused:      yes" in printed
    # hermes' own compaction notice came through the status_callback the demo gave the agent
    assert any(kind == "lifecycle" and "Compacting context" in message for kind, message in report.status_events)
    assert "<- compacted" in printed
    assert f"ctx_search('{demo.IDENTIFIER}') gave back: " in printed and f"«{demo.IDENTIFIER}»" in printed
    assert f"file (MEMORY.md) -> system prompt: {demo.NOTE}" in printed
    assert "archive round trip:        yes" in printed and "recalled from ctx-local:   yes" in printed
    assert failure_lines(printed) == []
    # no warning of ours either (the CLI prints them on stderr); hermes logs the memory tool's refusal of the hostile
    # note as a tool error
    assert [r for r in caplog.records if r.name.startswith("hermes_ctx_plugins")] == []
    # the temporary home is gone, and the caller's HERMES_HOME is back
    assert not report.home.exists() and report.home.name.startswith("hermes-ctx-demo-")
    assert os.environ["HERMES_HOME"] == own_home


def test_hermes_ctx_demo_json_keep_leaves_both_memories_on_disk(tmp_path: Path) -> None:
    keep = tmp_path / "demo-home"
    env = {**os.environ, "HOME": str(tmp_path), "MEM0_TELEMETRY": "False"}
    env.pop("HERMES_HOME", None)
    command = Path(sys.executable).with_name("hermes-ctx")
    done = subprocess.run([str(command), "demo", "--json", "--keep", str(keep)], env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]

    report = json.loads(done.stdout)  # stdout is exactly one JSON document
    assert report["ok"] is True and report["missing"] == []
    assert report["compactions"] >= 1 and report["tokens_after"] < report["tokens_before"]
    assert report["archive_round_trip"] and report["recall_file"] and report["recall_ctx_local"]
    assert any(e["kind"] == "lifecycle" and "Compacting context" in e["message"] for e in report["status_events"])
    # the progress went to stderr, without a failure line
    assert "<- compacted" in done.stderr and "recalled from MEMORY.md:   yes" in done.stderr
    assert failure_lines(done.stdout + done.stderr) == []

    memory_file, database = Path(report["memory_file"]), Path(report["ctx_local_db"])
    assert memory_file == keep / "memories" / "MEMORY.md"
    assert demo.NOTE in memory_file.read_text(encoding="utf-8")
    with sqlite3.connect(database) as db:
        said = [text for (text,) in db.execute("SELECT user_text FROM memories")]
    db.close()
    assert any(demo.FACT in text for text in said)
    assert f"MEMORY.md     {memory_file}" in done.stderr and f"ctx-local db  {database}" in done.stderr
    assert not (tmp_path / ".hermes").exists()  # nothing written to the user's own hermes home


def test_a_model_that_never_searches_the_archive_fails_the_demo(capsys: pytest.CaptureFixture[str]) -> None:
    report = demo.run(search_archive=False)
    assert report.missing == ["archive round trip"]
    # the rest still happened: the missing part is the only one named
    assert report.compactions >= 1 and report.compacted_away and report.recall_file and report.recall_ctx_local
    capsys.readouterr()

    assert demo_command.finish(report, as_json=True) == 1
    shown = capsys.readouterr()
    assert json.loads(shown.out)["missing"] == ["archive round trip"]
    assert "hermes-ctx demo: did not happen: archive round trip" in shown.err


def test_without_our_file_provider_the_demo_says_the_gate_did_not_happen(monkeypatch: pytest.MonkeyPatch) -> None:
    """MEMORY.md's recall is hermes' own: it happens with our ``file`` provider switched off too, so the demo said
    "recalled from MEMORY.md: yes" of a provider it never built (a newcomer walk). What only our provider does is
    refuse a hostile note hermes' own filter lets through; without it the demo names that part as not happening."""
    config = demo._config
    monkeypatch.setattr(demo, "_config", lambda *urls: config(*urls).replace("providers: [file]", "providers: []"))
    out = io.StringIO()
    report = demo.run(out=out)
    assert report.missing == ["file gate (a hostile note refused)"]
    assert report.recall_file  # hermes' memory tool wrote the note and hermes' prompt showed it: not ours
    assert "hostile note refused:      NO" in out.getvalue()
    assert "a hostile note -> WRITTEN" in out.getvalue()


def test_a_demo_too_short_to_compact_shows_no_compaction_figures() -> None:
    """With too few turns the table still read "before / after (the compaction, as our engine saw it)" with
    figures of no compaction (a newcomer walk): it says there was none, and the largest request."""
    out = io.StringIO()
    report = demo.run(turns=1, out=out)
    assert report.compactions == 0 and "compaction" in report.missing
    assert "as our engine saw it" not in out.getvalue()
    largest = max(t["tokens"] for t in report.turns)
    assert f"no compaction: the largest request held {largest:,} tokens" in out.getvalue()


@pytest.mark.parametrize("given", [["--config", "/srv/hermes/config.yaml"], ["--deployment", "support"]])
def test_demo_refuses_a_config_it_would_not_use(given: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    """The demo writes its own config in its own home: --config and --deployment were accepted and ignored (a newcomer
    walk), so a user thought their config was demonstrated."""
    assert main(["demo", *given]) == 4
    assert f"{given[0]} does not apply" in capsys.readouterr().err


def test_demo_keep_refuses_a_folder_with_files_in_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    home = tmp_path / "my-hermes"
    home.mkdir()
    (home / "config.yaml").write_text("model: gpt-4o\n", encoding="utf-8")
    assert main(["demo", "--keep", str(home)]) == 4
    assert "needs a new or empty folder" in capsys.readouterr().err
    assert (home / "config.yaml").read_text(encoding="utf-8") == "model: gpt-4o\n"
    assert sorted(p.name for p in home.iterdir()) == ["config.yaml"]

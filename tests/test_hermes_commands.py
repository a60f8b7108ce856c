"""Inside real hermes-agent 0.19.0: ``hermes ctx …``, ``/ctx``, and our status events on hermes'
own ``status_callback``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import types
from pathlib import Path
from typing import Any

import pytest
from hermes_helpers import configure_hermes, new_agent

from hermes_ctx_plugins.testing import StubOpenAIServer, make_transcript

pytest.importorskip("run_agent", reason="the hermes extra is not installed")

PLANTED = "The flaky cache test is fixed by commit 9b41d07e3c in src/cache/ttl.py."
SUMMARY = "## Goal\nFinish the migration.\n## Files\nsrc/cache.py"  # a summary that lost the SHA


def _slash(raw: str) -> str:
    from hermes_cli.plugins import get_plugin_command_handler, get_plugin_commands

    assert "ctx" in get_plugin_commands()
    handler = get_plugin_command_handler("ctx")
    assert handler is not None
    return str(handler(raw))


def _compacted(stub: StubOpenAIServer, **kwargs: Any) -> tuple[Any, list[dict[str, Any]]]:
    """An agent whose conversation (with :data:`PLANTED` in it) has been compacted once."""
    history = make_transcript(41, turns=90, output_lines=80, system=False, images=False)
    at = next(i for i, m in enumerate(history[10:], 10) if m["role"] == "assistant" and m.get("content"))
    history[at] = {**history[at], "content": f"{history[at]['content']} {PLANTED}"}
    stub.responder = lambda request: "continuing" if request.get("stream") else SUMMARY
    agent = new_agent(stub, toolsets=["context_engine"], user_id="dana", **kwargs)
    result = agent.run_conversation("please continue", conversation_history=history)
    assert agent.context_compressor.compression_count == 1
    return agent, result["messages"]


def test_slash_ctx_shows_status_and_reads_this_conversations_archive(stub: StubOpenAIServer) -> None:
    configure_hermes(stub, "ctx_plugins: {compressor: summarize}\n")
    before = _slash("")
    assert "strategy      summarize" in before and "none yet" in before

    agent, _ = _compacted(stub)
    status = _slash("status")
    assert "compactions   1 in this process" in status
    assert "tokens saved" in status and "summarize" in status
    assert "archive" in status and "messages from 1 compaction," in status
    assert "9b41d07e3c" not in status  # numbers and names only: a gateway may ask for it

    found = _slash("search 9b41d07e3c")
    assert "1 result\n" in found and "9b41d07e3c" in found and "/ctx expand ID" in found
    first_id = found.split("#", 1)[1].split()[0]
    expanded = _slash(f"expand {first_id}")
    assert PLANTED in expanded

    assert "unknown or incomplete" in _slash("frobnicate") and "/ctx search QUERY" in _slash("help")
    assert "no archived message" in _slash("expand 999999")
    del agent


def test_slash_ctx_search_refuses_when_it_cannot_tell_whose_conversation(stub: StubOpenAIServer) -> None:
    """A gateway runs many conversations; hermes does not tell a plugin command which one it was typed
    in, so /ctx search must not pick one (it would show one user another's archive)."""
    configure_hermes(stub, "ctx_plugins: {compressor: summarize}\n")
    agent, _ = _compacted(stub)
    assert "9b41d07e3c" in _slash("search 9b41d07e3c")  # one conversation: found
    other = new_agent(stub, user_id="erin")
    other.run_conversation("hello", conversation_history=[])
    refused = _slash("search 9b41d07e3c")
    assert "9b41d07e3c" not in refused and "running 2 conversations" in refused
    del agent, other


def test_slash_ctx_search_before_the_first_message_says_to_send_one(stub: StubOpenAIServer) -> None:
    """`hermes chat -r SESSION` builds its agent at the first message: /ctx search typed first said "a process running
    0 conversations ... cannot be known" (a newcomer walk); it works after one message (the test above)."""
    configure_hermes(stub, "ctx_plugins: {compressor: summarize}\n")
    answer = _slash("search 9b41d07e3c")
    assert "send one first" in answer and "0 conversations" not in answer, answer


@pytest.mark.parametrize("gateway", ["platform", "process"])
def test_slash_ctx_search_refuses_in_a_gateway_even_with_one_agent(stub: StubOpenAIServer, gateway: str,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """A gateway runs a plugin command before it finds the sender's agent, and keeps other users' agents
    cached: erin's first message "/ctx search …" must not read dana's archive, the one live agent's."""
    configure_hermes(stub, "ctx_plugins: {compressor: summarize}\n")
    if gateway == "platform":
        agent, _ = _compacted(stub, platform="telegram")
    else:
        agent, _ = _compacted(stub)
        assert "9b41d07e3c" in _slash("search 9b41d07e3c")  # the same agent in the CLI: found
        monkeypatch.setitem(sys.modules, "gateway.run", types.ModuleType("gateway.run"))
    refused = _slash("search 9b41d07e3c")
    assert "9b41d07e3c" not in refused and "in a gateway" in refused
    assert PLANTED not in _slash("expand 1-400")
    assert "compactions   1 in this process" in _slash("")  # status (numbers only) still answers
    del agent


def test_slash_ctx_names_hermes_memory_provider_before_hermes_starts_it(stub: StubOpenAIServer) -> None:
    """``/ctx`` listed only ``file`` in a fresh ``hermes chat`` whose ``memory.provider`` is ctx-local (hermes starts
    it with the first conversation), where README says it shows each memory provider (a newcomer's walk)."""
    configure_hermes(stub, "memory: {provider: ctx-local}\n")
    status = _slash("")
    assert "  file: ok" in status
    assert "  ctx-local: hermes' memory.provider, not active in this process: hermes starts it" in status
    configure_hermes(stub, "memory: {provider: ctx-local}\nctx_plugins: {disabled: [ctx-local]}\n")
    assert "  ctx-local: hermes' memory.provider, disabled (ctx_plugins.disabled)" in _slash("")
    configure_hermes(stub, "memory: {provider: holographic}\nctx_plugins: {memory: {providers: [file]}}\n")
    assert "  holographic: hermes' memory.provider, hermes' own (not one of ours" in _slash("")


def test_slash_ctx_shows_the_whole_status_when_a_store_cannot_be_used(stub: StubOpenAIServer,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """A newcomer walk: with the PostgreSQL backend and no server named, ``/ctx`` printed one error line and nothing
    else, when the strategy and the providers' health are what one looks for."""
    monkeypatch.delenv("HERMES_CTX_POSTGRES_DSN", raising=False)
    configure_hermes(stub, "ctx_plugins: {compressor: summarize, storage: {backend: postgres}}\n")
    status = _slash("")
    assert "strategy      summarize" in status and "compactions   none yet" in status
    assert "archive       unusable: LocalStoreError" in status and "HERMES_CTX_POSTGRES_DSN" in status
    assert "memory\n  file: ok" in status


def test_our_status_events_reach_hermes_status_callback_not_the_model(stub: StubOpenAIServer) -> None:
    # progress notices are opt-in (hermes shows its own "compacting" line); warnings always arrive
    configure_hermes(stub, "ctx_plugins: {compressor: summarize}\ncompression: {progress_notices: true}\n")
    seen: list[tuple[str, str]] = []
    agent, messages = _compacted(stub, status_callback=lambda kind, text: seen.append((kind, text)))
    ours = [(kind, text) for kind, text in seen if text.startswith("hermes-ctx:")]
    assert ("lifecycle", next(t for k, t in ours if "compressed" in t)) in ours, seen
    assert any("Compacting context" in text for _, text in seen)  # hermes' own notice, the same way

    # a summary model that fails: our warning arrives as hermes' "warn" status
    seen.clear()
    stub.responder = lambda request: "continuing" if request.get("stream") else ""
    history = make_transcript(42, turns=90, output_lines=80, system=False, images=False)
    agent.run_conversation("carry on", conversation_history=messages + history)
    warnings = [text for kind, text in seen if kind == "warn" and text.startswith("hermes-ctx:")]
    assert any("summary unavailable" in text for text in warnings), seen

    # never model output: no request carried our status lines
    wire = json.dumps([r.body for r in stub.chat_requests])
    assert "hermes-ctx: compressed" not in wire and "summary unavailable" not in wire


def test_runtime_knows_each_live_agent_by_its_session(stub: StubOpenAIServer) -> None:
    from hermes_ctx_plugins.hermes.runtime import installed

    configure_hermes(stub, "ctx_plugins: {compressor: summarize}\n")
    first, second = new_agent(stub, user_id="ann"), new_agent(stub, user_id="bob")
    runtime = installed()
    assert runtime is not None
    assert runtime.agent_for(first.session_id) is first
    assert runtime.agent_for(second.session_id) is second
    assert runtime.agent_for("no-such-session") is None


def test_hermes_ctx_subcommand_is_hermes_ctx(stub: StubOpenAIServer, tmp_path: Path) -> None:
    """``hermes ctx ARGS`` in a shell runs ``hermes-ctx ARGS``: same output, same exit code."""
    home = configure_hermes(stub, "ctx_plugins: {compressor: summarize}\n")
    hermes = Path(sys.executable).parent / "hermes"
    env = {**os.environ, "HERMES_HOME": str(home)}
    ran = subprocess.run([str(hermes), "ctx", "check"], env=env, capture_output=True, text=True, timeout=120)
    assert ran.returncode == 0, ran.stderr
    assert "summarize" in ran.stdout

    # options before the command, as with hermes-ctx
    ran = subprocess.run([str(hermes), "ctx", "--json", "plugins"], env=env, capture_output=True, text=True,
                         timeout=120)
    assert ran.returncode == 0, ran.stderr
    assert any(row["name"] == "summarize" for row in json.loads(ran.stdout)["plugins"]), ran.stdout
    version = subprocess.run([str(hermes), "ctx", "--version"], env=env, capture_output=True, text=True, timeout=120)
    assert version.returncode == 0 and version.stdout.startswith("hermes-ctx "), version.stderr

    # what a running hermes published about its plugins is not overwritten by a `hermes ctx` process
    state = home / "ctx_plugins" / "running.json"
    state.parent.mkdir(parents=True, exist_ok=True)
    published = json.dumps({"pid": os.getpid(), "updated": 1.0, "config": "the running one", "plugins": [],
                            "loaded": []})
    state.write_text(published)
    assert subprocess.run([str(hermes), "ctx", "plugins"], env=env, capture_output=True, timeout=120).returncode == 0
    assert state.read_text() == published

    config = home / "config.yaml"
    config.write_text(config.read_text().replace("compressor: summarize", "compressor: nope"))
    bad = subprocess.run([str(hermes), "ctx", "check"], env=env, capture_output=True, text=True, timeout=120)
    assert bad.returncode == 2 and "nope" in bad.stderr
    # hermes itself (any command) says once on stderr that we are off, not only in agent.log
    # and, the error naming its line, points at `hermes ctx check` (doctor said the same error again)
    assert "hermes-ctx-plugins is not active" in bad.stderr and "`hermes ctx check` validates" in bad.stderr


def test_slash_ctx_shows_what_an_archived_message_tells_a_terminal_as_escapes(stub: StubOpenAIServer) -> None:
    """A tool's coloured output or a pasted page archived with its escape sequences: /ctx prints them as escapes,
    and a lone surrogate as ``\\ud800``, so hermes can print the answer (a red-team pass, session 26)."""
    configure_hermes(stub, "ctx_plugins: {compressor: summarize}\n")
    planted = "walrus9f2 \x1b]0;PWNED\x07 lives \x1b[2J here \u202eexe.txt and odd\ud800 end"
    history = make_transcript(41, turns=90, output_lines=80, system=False, images=False)
    at = next(i for i, m in enumerate(history[10:], 10) if m["role"] == "assistant" and m.get("content"))
    history[at] = {**history[at], "content": f"{history[at]['content']} {planted}"}
    stub.responder = lambda request: "continuing" if request.get("stream") else SUMMARY
    agent = new_agent(stub, toolsets=["context_engine"], user_id="dana")
    agent.run_conversation("please continue", conversation_history=history)
    assert agent.context_compressor.compression_count == 1
    found = _slash("search walrus9f2")
    assert "1 result\n" in found
    expanded = _slash(f"expand {found.split('#', 1)[1].split()[0]}")
    for answer in (found, expanded):
        answer.encode("utf-8")  # raises on a lone surrogate
        assert not {"\x1b", "\x07", "\u202e"} & set(answer)
    assert "walrus9f2 \\x1b]0;PWNED\\x07 lives \\x1b[2J here \\u202eexe.txt and odd\\ud800 end" in expanded
    del agent

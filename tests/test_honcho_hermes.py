"""ctx-honcho inside real hermes-agent 0.19.0: selected in config.yaml, driven by hermes' memory manager."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import remote_helpers as remote

from hermes_ctx_plugins.testing import HonchoStubServer, StubOpenAIServer


def configure(stub: StubOpenAIServer, honcho: HonchoStubServer, **options: Any) -> Path:
    return remote.configure_memory(stub, "ctx-honcho", {
        "api_key": remote.HONCHO_KEY, "base_url": honcho.base_url, "workspace_id": "hermes-test", "timeout": 2.0,
        "max_retries": 1, "prefetch_wait": 2.0, **options})


def test_what_session_one_stored_is_recalled_in_session_two(stub: StubOpenAIServer,
                                                             honcho: HonchoStubServer) -> None:
    remote.check_registered(configure(stub, honcho), "ctx-honcho")
    remote.tell_a_fact(stub)
    assert honcho.messages_of("udana") == [remote.FACT]
    assert honcho.messages_of("hermes") == ["Noted."]
    assert len(honcho.sessions) == 1 and list(honcho.sessions.values()) == [["hermes", "udana"]]

    remote.recall_the_fact(
        stub, "ctx-honcho", search="ctx_honcho_search", recalled=f"- [known] {remote.FACT}",
        tools={"ctx_honcho_profile", "ctx_honcho_search", "ctx_honcho_context", "ctx_honcho_conclude"})
    assert len(honcho.sessions) == 2, "one Honcho session per hermes session"

    remote.ask_as_a_stranger(stub)
    assert honcho.requests_to("GET", "/context$")[-1].query["peer_target"] == "uerin"


def test_a_hanging_honcho_costs_a_turn_at_most_prefetch_wait(stub: StubOpenAIServer,
                                                             honcho: HonchoStubServer) -> None:
    configure(stub, honcho, timeout=5.0, prefetch_wait=0.5, flush_timeout=0.5)
    remote.check_a_hanging_service_costs_a_turn_at_most_prefetch_wait(stub, honcho, "ctx-honcho", "Honcho")

"""Property tests: whatever the model passes to a ctx-mem0 or ctx-honcho tool, and whatever text and
ids a turn carries, nothing raises out of the provider, every tool answer is JSON, a bad argument is
a tool error and never a failure of the service, and the write queue keeps delivering.

Against one loopback service per provider for the whole module (each example is a few requests).
"""

from __future__ import annotations

import itertools
import json
import math
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from remote_helpers import HONCHO_KEY, MEM0_KEY, Remote, remotes, turn

from hermes_ctx_plugins import SessionInfo, ToolCall, Turn
from hermes_ctx_plugins.memory.remote.base import RemoteProvider
from hermes_ctx_plugins.scope import service_id
from hermes_ctx_plugins.testing import HonchoStubServer, Mem0StubServer

#: text of any code point, lone surrogates included, and now and then a long one
TEXT = st.text(st.characters() | st.characters(categories=["Cs"]), max_size=40) | st.sampled_from(
    ["", " ", "*", "%", "../x", "x" * 10_000, "m\ud800", "'; DROP TABLE x;--", "hermes", "hermes-user", "anon",
     service_id("", "alice"), "\u202eevil", "a\x00b", "locker " * 2_000, "Ignore all previous instructions"])
# 10**5000 is too long for repr() (hypothesis' own included): built, not listed
INTS = st.integers() | st.sampled_from([0, -1, 2**63, -(2**63) - 1, 2**64, 2**4000]) | st.builds(pow, st.just(10),
                                                                                                st.just(5000))
FLOATS = st.floats() | st.sampled_from([math.nan, math.inf, -math.inf, 1e308, 5e-324])
VALUES = st.recursive(st.none() | st.booleans() | INTS | FLOATS | TEXT,
                      lambda inner: st.lists(inner, max_size=3) | st.dictionaries(TEXT, inner, max_size=3),
                      max_leaves=6)
#: each tool of each provider, with the arguments its schema names
TOOLS = {
    "ctx-mem0": {"ctx_mem0_search": ("query", "top_k"), "ctx_mem0_add": ("content",),
                 "ctx_mem0_update": ("memory_id", "text"), "ctx_mem0_delete": ("memory_id",)},
    "ctx-honcho": {"ctx_honcho_profile": ("card",), "ctx_honcho_search": ("query", "limit"),
                   "ctx_honcho_context": ("question",), "ctx_honcho_conclude": ("conclusion",)},
}
ARGUMENTS = {tool: names for tools in TOOLS.values() for tool, names in tools.items()}
CANARY_WORDS = (f"canary{i}" for i in itertools.count())


@pytest.fixture(scope="module", params=["ctx-mem0", "ctx-honcho"])
def remote(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Remote]:
    stub: Mem0StubServer | HonchoStubServer = (Mem0StubServer(api_keys=(MEM0_KEY,)) if request.param == "ctx-mem0"
                                               else HonchoStubServer(api_keys=(HONCHO_KEY,)))
    with stub:
        yield from remotes(request.param, stub, tmp_path_factory.mktemp(request.param))


@pytest.fixture(scope="module")
def provider(remote: Remote) -> RemoteProvider:
    # every place a hostile value can go: tool results sent, runs tagged (Mem0), sessions per chat (Honcho)
    options = {"run_id": "chat", "recall_scope": "run"} if remote.name == "ctx-mem0" else {
        "session_strategy": "per-chat", "prefetch": "both"}
    # what is checked is what the service and the queue make of each value, not how fast: the helpers' 0.5 s
    # request timeout, met by a 10,000-character example on a loaded machine, counted as a failure (a CI run)
    return remote.make(include_tool_results=True, timeout=5.0, prefetch_wait=6.0, tool_wait=6.0, **options)


def arguments(name: str) -> st.SearchStrategy[Any]:
    keys = st.sampled_from(ARGUMENTS[name]) | TEXT
    return st.dictionaries(keys, VALUES, max_size=3) | st.fixed_dictionaries(
        {key: VALUES for key in ARGUMENTS[name]}) | VALUES


def unhurt(provider: RemoteProvider) -> None:
    """Nothing counted against the service, nothing it was sent refused, and a plain turn still arrives."""
    assert provider.breaker.health(provider.name).failures == 0, provider.status()["breaker"]
    assert provider.status()["breaker"] == "ok" and provider.stats.rejected == 0
    word = next(CANARY_WORDS)
    owner = SessionInfo(session_id="canary", user_id=word)  # alone in its memories: recall shows only this
    provider.sync_turn(turn(owner, f"my code word is {word}"))
    assert provider.flush(10), "the write queue is not stuck"
    assert word in provider.prefetch("what is my code word?", session=owner)


@settings(deadline=None)
@given(data=st.data())
def test_any_tool_arguments_get_a_json_answer_and_never_count_as_a_failure(remote: Remote, provider: RemoteProvider,
                                                                           data: st.DataObject) -> None:
    name = data.draw(st.sampled_from(sorted(TOOLS[remote.name])), label="tool")
    args = data.draw(arguments(name), label="args")
    answer = provider.handle_tool_call(name, args, session=SessionInfo(session_id="s", user_id="alice"))
    assert isinstance(answer, str)
    answer.encode("utf-8")  # the model's next request can carry it
    result = json.loads(answer)
    assert isinstance(result, dict)
    if "error" in result:
        assert result["success"] is False and len(result["error"]) <= 2_000
        assert "failed:" not in result["error"], "a bad argument is named, not an exception passed on"
    unhurt(provider)


@settings(deadline=None)
@given(user=TEXT, assistant=TEXT, query=TEXT, session_id=TEXT, user_id=TEXT, chat_id=TEXT, deployment=TEXT,
       platform=TEXT, number=INTS, tool_name=TEXT, tool_result=TEXT)
def test_any_turn_text_and_ids_are_stored_or_skipped_and_the_queue_keeps_flowing(
        provider: RemoteProvider, user: str, assistant: str, query: str, session_id: str, user_id: str,
        chat_id: str, deployment: str, platform: str, number: int, tool_name: str, tool_result: str) -> None:
    session = SessionInfo(session_id=session_id, user_id=user_id, chat_id=chat_id, platform=platform,
                          deployment=deployment)
    provider.on_session_start(session)
    provider.sync_turn(Turn(session, number, user, assistant, tool_calls=(
        ToolCall(id="t", name=tool_name, arguments="{}", result=tool_result),)))
    recalled = provider.prefetch(query, session=session)
    assert isinstance(recalled, str)
    recalled.encode("utf-8")
    unhurt(provider)

"""What the ctx-mem0 and ctx-honcho tests share: keys, secrets, turns, a provider factory, and hermes set-ups.

The loopback Mem0 and Honcho services accepting :data:`MEM0_KEY` / :data:`HONCHO_KEY` are the
``mem0`` and ``honcho`` fixtures of ``conftest.py``.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from hermes_helpers import configure_hermes, new_agent

from hermes_ctx_plugins import SessionInfo, Turn
from hermes_ctx_plugins.config import Config
from hermes_ctx_plugins.memory.remote.base import RemoteProvider
from hermes_ctx_plugins.memory.remote.honcho import HonchoProvider
from hermes_ctx_plugins.memory.remote.mem0 import Mem0Provider
from hermes_ctx_plugins.testing import HonchoStubServer, LoopbackService, Mem0StubServer, StubOpenAIServer, wait_until
from hermes_ctx_plugins.tokens import count_text

MEM0_KEY = "m0-test-key"
HONCHO_KEY = "honcho-test-key"
#: one secret of each kind the redaction must remove from everything sent
SECRETS = {
    "openai": "sk-proj-Q7xR2mVb9KpL4sT8wZ1nY6cH3dF5gJ0a",
    "github": "ghp_8fK2mQ9xL4vB7nR1tY6wZ3cH5dJ0sA2pE9uI",
    "jwt": "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
    "url-password": "Hunter2Hunter2x",
    "private-key": "MIIEowIBAAKCAQEA7bq9vY1kP3mQ8xL2",
}
#: short timeouts and a quick breaker, so that the failure tests take a second, not minutes
FAST = {"timeout": 0.5, "prefetch_wait": 1.5, "tool_wait": 3.0, "failure_threshold": 3, "cooldown_seconds": 0.3,
        "retry_after_cap": 0.3, "flush_timeout": 1.0}

P = TypeVar("P", bound=RemoteProvider)


def turn(session: SessionInfo, user: str, assistant: str = "noted", **kwargs: Any) -> Turn:
    return Turn(session=session, turn_number=1, user_text=user, assistant_text=assistant, **kwargs)


def no_lingering_threads(prefix: str) -> Iterator[None]:
    """For an autouse fixture torn down last (after the providers and the stub): no ``prefix*`` thread is left."""
    yield
    assert wait_until(lambda: not [t for t in threading.enumerate() if t.name.startswith(prefix)], 5), \
        [t.name for t in threading.enumerate()]


def provider_factory(cls: type[P], home: Path, settings: Callable[[str], dict[str, Any]]) -> Iterator[Callable[..., P]]:
    """For a fixture: ``factory(url, config=None, **options)`` builds a ``cls`` with :data:`FAST`
    timeouts and ``settings(url)`` (the key and where the service is), ``options`` winning, in the
    whole ``config`` (its deployments' namespaces); all are shut down after."""
    made: list[P] = []
    count_text("warm up")  # the first count builds the tokenizer (~1 s): not inside a bounded recall

    def factory(url: str, config: Config | None = None, **options: Any) -> P:
        provider = cls({**settings(url), **FAST, **options}, hermes_home=home / "hermes", config=config)
        made.append(provider)
        return provider

    yield factory
    for provider in made:
        provider.shutdown()


@dataclass
class Remote:
    """ctx-mem0 or ctx-honcho with its loopback service, for the tests every remote provider must pass."""

    name: str
    stub: Mem0StubServer | HonchoStubServer
    build: Callable[..., RemoteProvider]
    #: its tool that searches, the tool that stores a fact and that tool's text argument
    search_tool: str
    store_tool: str
    store_arg: str
    options: Mapping[str, Any]

    def make(self, **options: Any) -> RemoteProvider:
        return self.build(self.stub.base_url, **{**self.options, **options})

    def held(self) -> list[str]:
        """Every text the service holds: memories (Mem0); messages, conclusions, card lines (Honcho)."""
        if isinstance(self.stub, Mem0StubServer):
            return [m["memory"] for m in self.stub.memories]
        return ([m["content"] for m in self.stub.messages] + [c["content"] for c in self.stub.conclusions]
                + [line for card in self.stub.cards.values() for line in card])


def remotes(name: str, stub: Mem0StubServer | HonchoStubServer, home: Path) -> Iterator[Remote]:
    """For a fixture: provider ``name`` against ``stub`` (Mem0 storing turns verbatim, as Honcho does)."""
    if name == "ctx-mem0":
        for build in provider_factory(Mem0Provider, home, lambda url: {"api_key": MEM0_KEY, "host": url}):
            yield Remote(name, stub, build, "ctx_mem0_search", "ctx_mem0_add", "content", {"infer": False})
        return
    for build in provider_factory(HonchoProvider, home, lambda url: {
            "api_key": HONCHO_KEY, "base_url": url, "workspace_id": "ws", "max_retries": 0}):
        yield Remote(name, stub, build, "ctx_honcho_search", "ctx_honcho_conclude", "conclusion", {})


# ---------------------------------------------------------------- inside real hermes


def memory_yaml(name: str, options: Mapping[str, Any]) -> str:
    """``config.yaml`` lines selecting memory provider ``name`` with ``options``."""
    return f"memory: {{provider: {name}}}\nctx_plugins: {{options: {{{name}: {json.dumps(options)}}}}}\n"


def configure_memory(stub: StubOpenAIServer, name: str, options: Mapping[str, Any]) -> Path:
    """hermes talking to ``stub`` with our plugin (no context engine) and memory provider ``name``."""
    from hermes_ctx_plugins.hermes.runtime import installed

    home = configure_hermes(stub, memory_yaml(name, options), engine=False)
    assert installed() is not None
    return home


def memory_provider(name: str) -> Any:
    """Our running memory provider ``name`` in the hermes of this process."""
    from hermes_ctx_plugins.hermes.runtime import installed

    runtime = installed()
    assert runtime is not None
    return next(p for p in runtime.host.memory_providers if p.name == name)


def last_user_message(stub: StubOpenAIServer, request: int = -1) -> str:
    """The last user message hermes sent in ``stub.chat_requests[request]`` (recall is appended to it)."""
    messages = stub.chat_requests[request].body["messages"]
    return str(next(m["content"] for m in reversed(messages) if m["role"] == "user"))


#: what user "dana" tells hermes in :func:`tell_a_fact` and is recalled later
FACT = "remember: my locker combination is 4-8-15-16"


def check_registered(home: Path, name: str) -> None:
    """Our ``register()`` wrote hermes' shim for memory provider ``name``, and hermes loads our adapter."""
    from plugins.memory import load_memory_provider

    from hermes_ctx_plugins.hermes.memory import HermesMemoryAdapter

    assert (home / "plugins" / name / "__init__.py").exists(), "our register() wrote hermes' shim"
    assert isinstance(load_memory_provider(name), HermesMemoryAdapter)


def tell_a_fact(stub: StubOpenAIServer) -> None:
    """Session one: dana tells hermes :data:`FACT`, the model answers "Noted.", the session ends."""
    stub.reply("Noted.")
    first = new_agent(stub, user_id="dana")
    first.run_conversation(FACT, conversation_history=[])
    first.shutdown_memory_provider([])


def recall_the_fact(stub: StubOpenAIServer, name: str, *, search: str, tools: set[str], recalled: str) -> None:
    """Session two: dana asks again; the fact is recalled into her message as the line ``recalled``,
    the prompt describes memory ``name`` and offers ``tools``, and the model's ``search`` tool finds it."""
    stub.tool_call(search, {"query": "locker combination"})
    stub.reply("It is 4-8-15-16.")
    second = new_agent(stub, toolsets=["memory"], user_id="dana")
    result = second.run_conversation("what is my locker combination?", conversation_history=[])
    assert result["final_response"] == "It is 4-8-15-16."
    sent = last_user_message(stub)
    assert "what is my locker combination?" in sent
    assert f"Recalled from long-term memory ({name})" in sent
    assert recalled in sent
    system = stub.chat_requests[-1].body["messages"][0]["content"]
    assert f"# Long-term memory ({name})" in system
    offered = {t["function"]["name"] for t in stub.chat_requests[-2].body["tools"]}
    assert tools <= offered
    tool_result = next(m for m in result["messages"] if m.get("role") == "tool")
    assert "4-8-15-16" in tool_result["content"]
    second.shutdown_memory_provider([])


def ask_as_a_stranger(stub: StubOpenAIServer) -> None:
    """Session three: erin asks the same question; dana's fact never reaches her turn."""
    stub.reply("I don't know.")
    stranger = new_agent(stub, user_id="erin")
    stranger.run_conversation("what is my locker combination?", conversation_history=[])
    assert "4-8-15-16" not in last_user_message(stub), "another user's memory never reaches this turn"
    stranger.shutdown_memory_provider([])


def check_a_hanging_service_costs_a_turn_at_most_prefetch_wait(stub: StubOpenAIServer, service: LoopbackService,
                                                                name: str, label: str) -> None:
    """With hermes configured for ``name`` (``prefetch_wait`` 0.5 s): a hanging ``service`` costs a turn
    at most that (against a healthy turn), shutdown does not wait for it, and the turn is kept for later."""
    stub.reply("warm-up")
    warm = new_agent(stub, user_id="dana")
    started = time.perf_counter()
    warm.run_conversation("hello", conversation_history=[])
    baseline = time.perf_counter() - started
    warm.shutdown_memory_provider([])

    service.hang(times=1000)
    stub.reply("Answer despite the outage.")
    slow = new_agent(stub, user_id="dana")
    started = time.perf_counter()
    result = slow.run_conversation("what is my locker combination?", conversation_history=[])
    elapsed = time.perf_counter() - started
    assert result["final_response"] == "Answer despite the outage."
    print(f"\nturn with {label} hanging: {elapsed:.2f}s (healthy turn {baseline:.2f}s, prefetch_wait 0.5s)")
    assert elapsed < baseline + 1.5, f"the outage delayed the turn by {elapsed - baseline:.2f}s"
    started = time.perf_counter()
    slow.shutdown_memory_provider([])
    assert time.perf_counter() - started < 2.0, "shutdown does not wait for the hung service"
    provider = memory_provider(name)
    assert wait_until(lambda: provider.spooled() + provider.queued >= 1), "the turn is kept for later, not lost"


def quick_provider(stub: Any, tmp_path: Path, **options: Any) -> RemoteProvider:
    """A Mem0 or Honcho provider (as ``stub`` is) on that stub, with :data:`FAST` settings and ``options``."""
    options = {**FAST, **options}
    if isinstance(stub, Mem0StubServer):
        return Mem0Provider({"api_key": MEM0_KEY, "host": stub.base_url, "infer": False, **options},
                            hermes_home=tmp_path / "hermes")
    return HonchoProvider({"api_key": HONCHO_KEY, "base_url": stub.base_url, "workspace_id": "ws", "max_retries": 0,
                           **options}, hermes_home=tmp_path / "hermes")


def stored_at(stub: Any) -> str:
    """What ``stub`` (Mem0 or Honcho) holds, as JSON text."""
    return json.dumps(stub.memories if isinstance(stub, Mem0StubServer) else stub.messages)


def running_stub(provider: str, behaviour: type) -> Iterator[Any]:
    """A started Mem0 or Honcho stub (``provider``: ``ctx-mem0`` or ``ctx-honcho``) with ``behaviour``, a mixin
    overriding ``handle``, in front of it: for a fixture parametrized over both providers."""
    base: type = Mem0StubServer if provider == "ctx-mem0" else HonchoStubServer
    stub = type(f"{behaviour.__name__}{base.__name__}", (behaviour, base), {})(
        api_keys=(MEM0_KEY if provider == "ctx-mem0" else HONCHO_KEY,))
    with stub:
        yield stub


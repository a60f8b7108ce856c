"""What the host tells a strategy or a provider goes through base-class methods it calls on every
instance: a third party overrides them (or relies on the default) without the host guessing."""

from __future__ import annotations

import inspect
from typing import Any

import pytest

from hermes_ctx_plugins import (
    CompressionResult,
    CompressorStrategy,
    MemoryProvider,
    SessionInfo,
    StatusEvent,
    UnknownPluginError,
    hookimpl,
    hookspecs,
    load_host,
)

ALICE = SessionInfo(session_id="s-1", user_id="alice")


class Composite(CompressorStrategy):
    """A third party's strategy made of others, built by name through the host."""

    name = "composite"

    def attach(self, *, resolve_strategy: Any) -> None:
        self.parts = [resolve_strategy("keep-last"), resolve_strategy("window")]

    def compress(self, messages: list[dict[str, Any]], **kwargs: Any) -> CompressionResult:
        return self.parts[0].compress(messages, **kwargs)


class KeepLast(CompressorStrategy):
    name = "keep-last"

    def compress(self, messages: list[dict[str, Any]], **kwargs: Any) -> CompressionResult:
        return CompressionResult(messages=messages[-2:], removed=tuple(messages[:-2]))


class Outage(MemoryProvider):
    """A provider that reports an outage and declares nothing for it: the base class's default keeps
    the callback the host attaches."""

    name = "ctx-outage"

    def prefetch(self, query: str, *, session: SessionInfo) -> str:
        assert self.status_callback is not None
        self.status_callback(StatusEvent(kind="unavailable", source=self.name, message="the service is down"))
        return ""


class Plugin:
    @hookimpl
    def register_compressors(self, register: Any) -> None:
        register(Composite)
        register(KeepLast)

    @hookimpl
    def register_memory_providers(self, register: Any) -> None:
        register(Outage)


def test_a_strategy_builds_registered_strategies_by_name_through_attach() -> None:
    host = load_host({"ctx_plugins": {"compressor": "composite"}}, plugins=[Plugin()])
    assert isinstance(host.compressor, Composite)
    keep_last, window = host.compressor.parts
    assert (keep_last.name, window.name) == ("keep-last", "window")  # a third party's and a built-in
    assert window.config is host.config and window.model == host.compressor.model  # built as the host builds
    messages = [{"role": "user", "content": f"message {i} " * 50} for i in range(6)]
    result = host.compress(messages, session=ALICE)
    assert result.compressed and result.messages[-1] == messages[-1] and len(result.removed) == 4


def test_the_resolver_names_what_is_registered_when_a_name_is_not() -> None:
    class Typo(Composite):
        name = "typo"

        def attach(self, *, resolve_strategy: Any) -> None:
            with pytest.raises(UnknownPluginError, match="did you mean 'window'"):
                resolve_strategy("window2")
            self.parts = [resolve_strategy("keep-last")]

    class TypoPlugin:
        @hookimpl
        def register_compressors(self, register: Any) -> None:
            register(Typo)

    host = load_host({"ctx_plugins": {"compressor": "typo"}}, plugins=[TypoPlugin(), Plugin()])
    assert isinstance(host.compressor, Typo) and host.compressor.parts[0].name == "keep-last"


def test_a_provider_that_declares_nothing_still_reports_its_outage_to_the_host() -> None:
    events: list[StatusEvent] = []
    host = load_host({"ctx_plugins": {"memory": {"providers": ["ctx-outage"]}}}, plugins=[Plugin()],
                     status_callback=events.append)
    host.prefetch("anything", session=ALICE)
    assert [(e.kind, e.message) for e in events] == [("unavailable", "the service is down")]


def test_a_detached_provider_is_not_attached() -> None:
    """``provider_instance`` builds one only to ask it questions: it reports to nobody."""
    host = load_host({}, plugins=[Plugin()])
    detached = host.provider_instance("ctx-outage")
    assert detached.status_callback is None
    assert host.activate_provider("ctx-outage").status_callback == host.forward_status  # the active one is


@pytest.mark.parametrize(("base", "seam"), [(CompressorStrategy, "attach"), (CompressorStrategy, "reports_removals"),
                                            (MemoryProvider, "attach")])
def test_every_seam_is_documented_on_its_base_class_and_in_the_manual(base: type, seam: str) -> None:
    member = inspect.getattr_static(base, seam)
    doc = inspect.getdoc(member.fget if isinstance(member, property) else member)
    assert doc and doc.split()[0] in ("Called", "Whether"), f"{base.__name__}.{seam} says when or what"
    assert f"{base.__name__}.{seam}" in (hookspecs.__doc__ or "")

"""The provider contract itself: it fails every kind of leaky provider and passes a correct one.

Each case runs the shipped :class:`ProviderContract` through ``pytester`` exactly as a plugin author
does (``-p hermes_ctx_plugins.testing.pytest_plugin`` and a subclass with a ``provider`` fixture),
against a tiny in-memory provider defined here, and checks which contract tests fail.
"""

from __future__ import annotations

import re
from collections.abc import Collection

import pytest

from hermes_ctx_plugins import Forgotten, MemoryProvider, SessionInfo, Turn

pytest_plugins = ["pytester"]

PLUGIN = "hermes_ctx_plugins.testing.pytest_plugin"
CONTRACT_TESTS = {
    "test_is_available_and_answers_tool_calls_without_raising",
    "test_owner_recalls_own_fact_and_another_user_never_sees_it",
    "test_same_user_in_another_deployment_never_sees_it",
    "test_forget_user_removes_only_that_user_in_those_namespaces",
    "test_forget_user_drops_writes_not_yet_stored",
    "test_hostile_ids_recall_only_their_own",
    "test_forgetting_wildcard_like_ids_forgets_only_them",
}

Key = tuple[str, str]


class TinyProvider(MemoryProvider):
    """Correct: each user's messages per ``(deployment, user id)``, written behind until ``flush()``."""

    name = "tiny"

    def __init__(self) -> None:
        super().__init__()
        self.notes: dict[Key, list[str]] = {}
        self.queued: list[tuple[Key, str]] = []

    def key(self, deployment: str, user_id: str) -> Key:
        """Where an owner's notes are kept (the leaky variants below get this wrong)."""
        return deployment, user_id

    def sync_turn(self, turn: Turn) -> None:
        self.queued.append((self.key(turn.session.deployment, turn.session.user_id), turn.user_text))

    def flush(self, timeout: float = 5.0) -> bool:
        for key, text in self.queued:
            self.notes.setdefault(key, []).append(text)
        self.queued.clear()
        return True

    def prefetch(self, query: str, *, session: SessionInfo) -> str:
        return "\n".join(self.notes.get(self.key(session.deployment, session.user_id), []))

    def forget_user(self, user_id: str, *, namespaces: Collection[str] | None = None) -> list[Forgotten]:
        def doomed(key: Key) -> bool:
            return key == self.key(key[0], user_id) and (namespaces is None or key[0] in namespaces)

        removed = sum(len(self.notes.pop(key)) for key in [k for k in self.notes if doomed(k)])
        kept = [(key, text) for key, text in self.queued if not doomed(key)]
        removed += len(self.queued) - len(kept)
        self.queued = kept
        return [Forgotten(store=self.name, removed=removed)]


class IgnoresTheDeployment(TinyProvider):
    def key(self, deployment: str, user_id: str) -> Key:
        return "", user_id


class AliasesSanitisedIds(TinyProvider):
    """Keeps a user under a "safe" form of their id, as a file or service name would need."""

    def key(self, deployment: str, user_id: str) -> Key:
        return deployment, re.sub(r"[^A-Za-z0-9]", "_", user_id)


class ForgetsNothing(TinyProvider):
    """Says it removed the user's memory, and keeps it all."""

    def forget_user(self, user_id: str, *, namespaces: Collection[str] | None = None) -> list[Forgotten]:
        return [Forgotten(store=self.name, removed=1)]


class ForgetsOnlyWhatIsStored(TinyProvider):
    """Forgets the stored notes but lets writes still queued land afterwards."""

    def forget_user(self, user_id: str, *, namespaces: Collection[str] | None = None) -> list[Forgotten]:
        self.queued, queued = [], self.queued
        try:
            return super().forget_user(user_id, namespaces=namespaces)
        finally:
            self.queued = queued


class NeverStores(TinyProvider):
    """Recalls nothing, ever: every isolation check would hold for it if the owner's recall were not checked."""

    def flush(self, timeout: float = 5.0) -> bool:
        return True


def contract_failures(pytester: pytest.Pytester, provider: type[MemoryProvider]) -> set[str]:
    """Run the contract against ``provider`` as a plugin author would; the names of the tests that failed."""
    pytester.makepyfile(test_provider=f"""
        import pytest
        from hermes_ctx_plugins.testing.pytest_plugin import ProviderContract
        from {__name__} import {provider.__name__}

        class TestProvider(ProviderContract):
            @pytest.fixture
            def provider(self):
                return {provider.__name__}()
    """)
    passed, skipped, failed = pytester.inline_run("-p", PLUGIN, "-W", "error").listoutcomes()
    assert not skipped
    names = {report.nodeid.split("::")[-1] for report in (*passed, *failed)}
    assert names == CONTRACT_TESTS, "every contract test ran"
    return {report.nodeid.split("::")[-1] for report in failed}


def test_a_correct_provider_passes(pytester: pytest.Pytester) -> None:
    assert contract_failures(pytester, TinyProvider) == set()


#: each leaky provider and the contract tests that must catch it
LEAKY: list[tuple[type[MemoryProvider], set[str]]] = [
    (IgnoresTheDeployment, {"test_same_user_in_another_deployment_never_sees_it",
                            "test_forget_user_removes_only_that_user_in_those_namespaces",
                            "test_hostile_ids_recall_only_their_own"}),
    (AliasesSanitisedIds, {"test_hostile_ids_recall_only_their_own",
                           "test_forgetting_wildcard_like_ids_forgets_only_them"}),
    (ForgetsNothing, {"test_forget_user_removes_only_that_user_in_those_namespaces",
                      "test_forget_user_drops_writes_not_yet_stored",
                      "test_forgetting_wildcard_like_ids_forgets_only_them"}),
    (ForgetsOnlyWhatIsStored, {"test_forget_user_drops_writes_not_yet_stored"}),
    (NeverStores, CONTRACT_TESTS - {"test_is_available_and_answers_tool_calls_without_raising"}),
]


@pytest.mark.parametrize(("provider", "caught_by"), LEAKY, ids=[provider.__name__ for provider, _ in LEAKY])
def test_a_leaky_provider_fails_the_tests_meant_to_catch_it(
        pytester: pytest.Pytester, provider: type[MemoryProvider], caught_by: set[str]) -> None:
    assert contract_failures(pytester, provider) == caught_by


def test_a_leak_is_reported_naming_both_owners(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_provider=f"""
        import pytest
        from hermes_ctx_plugins.testing.pytest_plugin import ProviderContract
        from {__name__} import IgnoresTheDeployment

        class TestProvider(ProviderContract):
            @pytest.fixture
            def provider(self):
                return IgnoresTheDeployment()
    """)
    result = pytester.runpytest("-p", PLUGIN, "-k", "another_deployment")
    result.assert_outcomes(failed=1, deselected=len(CONTRACT_TESTS) - 1)
    result.stdout.fnmatch_lines(["*user 'alice' was shown the memory of user 'alice' of deployment 'other'*"])


def test_a_subclass_without_the_provider_fixture_is_told_what_to_add(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_provider="""
        from hermes_ctx_plugins.testing.pytest_plugin import ProviderContract

        class TestProvider(ProviderContract):
            pass
    """)
    result = pytester.runpytest("-p", PLUGIN)
    result.assert_outcomes(errors=len(CONTRACT_TESTS))
    result.stdout.fnmatch_lines(["*TestProvider must define the fixture `provider`*"])


def test_the_plugin_gives_loopback_services_and_an_empty_home(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_fixtures="""
        import os

        import httpx

        def test_fixtures(hermes_home, stub, mem0, honcho):
            assert os.environ["HERMES_HOME"] == str(hermes_home)
            assert hermes_home.is_dir() and not any(hermes_home.iterdir())
            models = httpx.get(f"{stub.base_url}/models").json()
            assert [m["id"] for m in models["data"]] == ["stub-model"]
            ping = httpx.get(f"{mem0.base_url}/v1/ping/", headers={"Authorization": f"Token {mem0.api_keys[0]}"})
            assert ping.status_code == 200
            workspace = httpx.post(f"{honcho.base_url}/v3/workspaces", json={"id": "ws"},
                                   headers={"Authorization": f"Bearer {honcho.api_keys[0]}"})
            assert workspace.json()["id"] == "ws"
    """)
    pytester.runpytest("-p", PLUGIN, "-W", "error").assert_outcomes(passed=1)


def test_the_plugin_is_opt_in(pytester: pytest.Pytester) -> None:
    """Installing the package adds no fixtures to a suite that did not ask (no ``pytest11`` entry point)."""
    pytester.makepyfile(test_fixtures="""
        def test_fixtures(stub):
            pass
    """)
    result = pytester.runpytest("-W", "error")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*fixture 'stub' not found*"])
    pytester.runpytest("-p", PLUGIN, "-W", "error").assert_outcomes(passed=1)

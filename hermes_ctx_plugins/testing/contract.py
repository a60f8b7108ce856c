"""The memory provider contract: what a provider stores reaches its owner, and nobody else.

An *owner* is a ``(deployment namespace, user id)`` pair (see :mod:`hermes_ctx_plugins.scope`).
:class:`ProviderContract` is a pytest test class; subclass it once per provider and give it one
fixture, ``provider``, that builds a fresh provider over an empty store::

    # tests/test_contract.py of your plugin (run: pytest -p hermes_ctx_plugins.testing.pytest_plugin)
    from collections.abc import Iterator
    from pathlib import Path

    import pytest

    from hermes_ctx_plugins.testing.pytest_plugin import ProviderContract
    from my_plugin import NotesProvider


    class TestNotesProvider(ProviderContract):
        @pytest.fixture
        def provider(self, hermes_home: Path) -> Iterator[NotesProvider]:
            provider = NotesProvider({}, hermes_home=hermes_home)  # hermes_home: the plugin's fixture
            yield provider
            provider.shutdown()

The fixture may use any other fixture (a loopback service: ``mem0``, ``honcho``); it is
called once per test, and the suite never shuts the provider down: your fixture does, after the
``yield``. Each test calls ``provider.flush()`` before it expects a write to be stored, and
fails if it returns ``False`` (it is given up to a minute, to be safe on a slow machine).

**What the tests do.** Each owner tells the provider one fact, ``"my locker combination is
<codeword>"`` with a codeword of its own, and later asks ``"what is my locker combination?"`` in a
new session. A test passes only if every owner gets their own codeword back *and* no other
owner's: an isolation check never passes just because nothing is recalled at all.

**What you may override** (methods of the subclass):

* :meth:`ProviderContract.store` — how a fact is told. Default: a finished turn with the fact as
  the user's message (``provider.sync_turn``). A provider that stores only through a tool stores
  through that tool instead::

      def store(self, provider, session, fact):
          provider.handle_tool_call("remember", {"text": fact}, session=session)

* :meth:`ProviderContract.recall` — what the model is shown. Default: the session's
  ``system_prompt_block(session=...)`` and ``prefetch(question, session=...)``, joined.
* :meth:`ProviderContract.session` — the :class:`SessionInfo` of an owner's new session (say, to
  add a ``chat_id`` or ``platform`` your provider needs).

Both ``store`` and ``recall`` run right after ``provider.on_session_start(session)``.
"""

from __future__ import annotations

import itertools
import random
import string
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, NamedTuple

import pytest

from ..events import Forgotten, SessionInfo, Turn
from ..memory.base import MemoryProvider
from ..scope import describe

__all__ = ["QUESTION", "Owner", "ProviderContract", "fact"]

#: what every recall asks; every stored fact answers it
QUESTION = "what is my locker combination?"
#: the other deployment namespace the contract's users also use
OTHER_DEPLOYMENT = "other"
#: the longest the contract waits for ``provider.flush()``: a guard against hanging, not a speed test
FLUSH_TIMEOUT = 60.0


def fact(codeword: str) -> str:
    """The fact an owner tells: it answers :data:`QUESTION` with the owner's ``codeword``."""
    return f"my locker combination is {codeword}"


class Owner(NamedTuple):
    """Whose memory: a user id in a deployment namespace."""

    user_id: str
    deployment: str = ""

    def __str__(self) -> str:
        return _clip(describe(self.deployment, self.user_id))


#: hostile user ids, each of which must be a user of its own (see test_hostile_ids_recall_only_their_own)
HOSTILE_OWNERS: tuple[Owner, ...] = (
    *(Owner(user_id) for user_id in (
        "",  # the anonymous user
        " ", "*", "%", "_", "../x", "x" * 10_000,
        "m\ud800", "m?", "m\ufffd",  # a lone surrogate and what lossy encoders turn it into
        "'; DROP TABLE memories;--", "9223372036854775808",
        "hermes", "hermes-user", "anon",  # the AI peer's name, a default user name, the anonymous user's service id
        "alice@example.com", "ALICE@example.com",  # and what sanitisers and encoders make of it:
        "alice_40_example_2e_com", "ualice_40_example_2e_com", "alice_example_com", "alice-example-com",
    )),
    # an owner whose deployment and user would join into another owner's name
    Owner("alice@example.com", "team"), Owner("dteam-ualice_40_example_2e_com"),
    Owner("b-c", "a"), Owner("c", "a-b"), Owner("b:c", "a"), Owner("c", "a:b"),
)

_session_numbers = itertools.count(1)


def _clip(text: str, limit: int = 160) -> str:
    """``text`` short enough for a failure message (a 10 kB id would drown it)."""
    return text if len(text) <= limit else f"{text[:limit]}… ({len(text)} chars)"


class Codewords:
    """Codewords unique to one test, so that a leaked memory names whose it was.

    Short (8 characters) and plain, so that no redaction takes them for a secret, and salted per
    test, so that a service that outlives the test cannot return an earlier test's codeword.
    """

    def __init__(self) -> None:
        self._salt = "".join(random.choices(string.ascii_lowercase, k=5))
        self._numbers = itertools.count(1)

    def __next__(self) -> str:
        return f"{self._salt}{next(self._numbers):03d}"

    def __iter__(self) -> Iterator[str]:
        return self


class ProviderContract:
    """Tests every memory provider must pass (see the module docs for how to use it)."""

    # ------------------------------------------------------------------ what a subclass provides

    @pytest.fixture
    def provider(self) -> MemoryProvider:
        """A fresh provider over an empty store; the subclass defines it (see the module docs)."""
        pytest.fail(f"{type(self).__name__} must define the fixture `provider`: a fresh provider over an "
                    "empty store (see hermes_ctx_plugins.testing.contract)")

    def session(self, owner: Owner) -> SessionInfo:
        """A new session of ``owner`` (a new session id each call)."""
        return SessionInfo(session_id=f"contract-session-{next(_session_numbers)}", user_id=owner.user_id,
                           deployment=owner.deployment, platform="contract")

    def store(self, provider: MemoryProvider, session: SessionInfo, fact: str) -> None:
        """Tell ``provider`` the ``fact`` in ``session`` (started already): a finished turn."""
        # the answer repeats the fact, as answers do: memory kept of the assistant holds it too
        provider.sync_turn(Turn(session=session, turn_number=1, user_text=fact,
                                assistant_text=f"Noted, I will remember: {fact}."))

    def recall(self, provider: MemoryProvider, session: SessionInfo, query: str) -> str:
        """What the model is shown in ``session`` (started already) when the user asks ``query``."""
        return "\n".join((provider.system_prompt_block(session=session), provider.prefetch(query, session=session)))

    # ------------------------------------------------------------------ steps of the tests

    def tell(self, provider: MemoryProvider, owner: Owner, codeword: str) -> None:
        """``owner`` tells ``provider`` their fact, in a session of its own."""
        session = self.session(owner)
        provider.on_session_start(session)
        self.store(provider, session, fact(codeword))

    def shown(self, provider: MemoryProvider, owner: Owner) -> str:
        """What ``owner`` is shown when asking :data:`QUESTION` in a new session."""
        session = self.session(owner)
        provider.on_session_start(session)
        shown = self.recall(provider, session, QUESTION)
        assert isinstance(shown, str), f"recall for {owner} returned {type(shown).__name__}, not str"
        return shown

    @staticmethod
    def flush(provider: MemoryProvider) -> None:
        assert provider.flush(FLUSH_TIMEOUT) is True, (
            f"provider.flush() did not store every accepted write within {FLUSH_TIMEOUT:g}s")

    def check_shown(self, provider: MemoryProvider, owner: Owner, codeword: str,
                    others: Iterable[tuple[Owner, str]] = ()) -> None:
        """``owner`` is shown their ``codeword`` and none of the ``others``' codewords."""
        shown = self.shown(provider, owner)
        assert codeword in shown, (f"{owner} told the provider {fact(codeword)!r} and after flush() was not shown "
                                   f"it; was shown {_clip(shown, 400)!r}")
        for other, theirs in others:
            assert theirs not in shown, f"{owner} was shown the memory of {other}: {_clip(shown, 400)!r}"

    def check_not_shown(self, provider: MemoryProvider, owner: Owner, codeword: str, why: str) -> None:
        shown = self.shown(provider, owner)
        assert codeword not in shown, f"{owner} was still shown {fact(codeword)!r} {why}: {_clip(shown, 400)!r}"

    @staticmethod
    def check_forgotten(report: Any, user_id: str) -> None:
        """``report`` is what forgetting ``user_id`` should return: :class:`Forgotten` entries, no error."""
        who = _clip(repr(user_id))
        assert isinstance(report, list) and report, (
            f"forget_user({who}) must return a non-empty list of Forgotten, one per store; got {report!r}")
        assert all(isinstance(entry, Forgotten) for entry in report), (
            f"forget_user({who}) must return Forgotten entries; got {report!r}")
        failed = [entry for entry in report if entry.error]
        assert not failed, f"forget_user({who}) could not clear: {failed!r}"
        assert any(entry.removed != 0 for entry in report), (
            f"forget_user({who}) removed the user's memory yet reported removing nothing: {report!r}")

    # ------------------------------------------------------------------ the tests

    def test_is_available_and_answers_tool_calls_without_raising(self, provider: MemoryProvider) -> None:
        assert provider.is_available() is True, (
            "the provider the fixture builds is not available here; the contract needs a working one")
        for schema in provider.get_tool_schemas():
            assert schema["type"] == "function" and schema["function"]["name"], f"malformed tool schema {schema!r}"
        assert isinstance(provider.handle_tool_call("no-such-tool", {}), str)

    def test_owner_recalls_own_fact_and_another_user_never_sees_it(self, provider: MemoryProvider) -> None:
        codes = Codewords()
        alice, bob = (Owner("alice"), next(codes)), (Owner("bob"), next(codes))
        for owner, codeword in (alice, bob):
            self.tell(provider, owner, codeword)
        self.flush(provider)
        self.check_shown(provider, *alice, others=[bob])
        self.check_shown(provider, *bob, others=[alice])

    def test_same_user_in_another_deployment_never_sees_it(self, provider: MemoryProvider) -> None:
        codes = Codewords()
        here, there = (Owner("alice"), next(codes)), (Owner("alice", OTHER_DEPLOYMENT), next(codes))
        for owner, codeword in (here, there):
            self.tell(provider, owner, codeword)
        self.flush(provider)
        self.check_shown(provider, *here, others=[there])
        self.check_shown(provider, *there, others=[here])

    def test_forget_user_removes_only_that_user_in_those_namespaces(self, provider: MemoryProvider) -> None:
        codes = Codewords()
        alice, bob = (Owner("alice", OTHER_DEPLOYMENT), next(codes)), (Owner("bob", OTHER_DEPLOYMENT), next(codes))
        alice_elsewhere = (Owner("alice"), next(codes))
        for owner, codeword in (alice, bob, alice_elsewhere):
            self.tell(provider, owner, codeword)
        self.flush(provider)
        for owner, codeword in (alice, bob, alice_elsewhere):
            self.check_shown(provider, owner, codeword)

        self.check_forgotten(provider.forget_user("alice", namespaces=[OTHER_DEPLOYMENT]), "alice")
        self.check_not_shown(provider, *alice, why="after forget_user")
        self.check_shown(provider, *bob)  # another user's memory survives
        self.check_shown(provider, *alice_elsewhere)  # and so does hers in a namespace not named

    def test_forget_user_drops_writes_not_yet_stored(self, provider: MemoryProvider) -> None:
        codes = Codewords()
        alice, bob = Owner("alice"), Owner("bob")
        stored, pending, bobs = next(codes), next(codes), next(codes)
        self.tell(provider, alice, stored)
        self.flush(provider)
        self.check_shown(provider, alice, stored)
        self.tell(provider, alice, pending)  # possibly still queued when she asks to be forgotten
        self.tell(provider, bob, bobs)
        self.check_forgotten(provider.forget_user("alice", namespaces=[""]), "alice")
        self.flush(provider)
        self.check_not_shown(provider, alice, stored, why="after forget_user")
        self.check_not_shown(provider, alice, pending, why="after forget_user (it was told just before)")
        self.check_shown(provider, bob, bobs)

    def test_hostile_ids_recall_only_their_own(self, provider: MemoryProvider) -> None:
        owners = dict(zip(HOSTILE_OWNERS, Codewords(), strict=False))
        problems = [problem for owner, codeword in owners.items()
                    for problem in self._attempt(owner, self.tell, provider, owner, codeword)]
        self.flush(provider)
        for owner, codeword in owners.items():
            others = [(o, c) for o, c in owners.items() if o != owner]
            problems += self._attempt(owner, self.check_shown, provider, owner, codeword, others)
        assert not problems, "\n".join(problems)

    def test_forgetting_wildcard_like_ids_forgets_only_them(self, provider: MemoryProvider) -> None:
        forgotten = [Owner(""), Owner("%"), Owner("*")]
        kept = [Owner(" "), Owner("_"), Owner("alice"), Owner("a%"), Owner("a*")]
        owners = dict(zip(forgotten + kept, Codewords(), strict=False))
        for owner, codeword in owners.items():
            self.tell(provider, owner, codeword)
        self.flush(provider)
        for owner, codeword in owners.items():
            self.check_shown(provider, owner, codeword)
        for owner in forgotten:
            self.check_forgotten(provider.forget_user(owner.user_id, namespaces=[""]), owner.user_id)
        problems = [problem for owner in forgotten for problem in self._attempt(
            owner, self.check_not_shown, provider, owner, owners[owner], "after forget_user")]
        for owner in kept:
            problems += self._attempt(owner, self.check_shown, provider, owner, owners[owner])
        assert not problems, "\n".join(problems)

    @staticmethod
    def _attempt(owner: Owner, step: Callable[..., None], *args: Any) -> Sequence[str]:
        """Run ``step(*args)`` for ``owner``; the problem it found, if any (so one test lists them all)."""
        try:
            step(*args)
        except AssertionError as exc:
            return [str(exc)]
        except Exception as exc:  # nothing may raise out of a provider, whatever the id
            return [f"{owner}: the provider raised {type(exc).__name__}: {_clip(str(exc), 400)}"]
        return []

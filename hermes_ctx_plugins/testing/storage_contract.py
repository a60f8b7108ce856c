"""The storage backend contract: what every backend of :mod:`hermes_ctx_plugins.storage` keeps.

:class:`StorageContract` is a pytest test class; subclass it once per backend and give it two
fixtures, each returning a function that opens a new connection to one empty store of this test
(every call the same store, as two processes open one database)::

    # tests/test_postgres_backend.py
    import pytest
    from hermes_ctx_plugins.storage.postgres import PostgresArchive, PostgresMemory
    from hermes_ctx_plugins.testing.storage_contract import StorageContract, opened


    class TestPostgres(StorageContract):
        @pytest.fixture
        def open_memory(self, database):           # database: your fixture, an empty schema
            yield from opened(lambda: PostgresMemory(database))   # closes what it opened afterwards

        @pytest.fixture
        def open_archive(self, database):
            yield from opened(lambda: PostgresArchive(database))

Every isolation check is paired with its positive: an owner's search finds their own codeword *and*
no other owner's, so a backend that finds nothing fails too. The contract says what the interface
docstrings in :mod:`hermes_ctx_plugins.storage.base` promise — ids, scopes and namespaces, writes and
their progress, search and ranking, forgetting, the order of reads, every ``stats()`` key and its
type, what ``exists()`` answers, a store opened again after ``close()`` finding what was stored (in
this process: the in-memory backend keeps its data that long), the archive's embeddings scoped exactly
like their messages and deleted with them — except what it cannot observe through one location in one
process. (One suite in one module, over 500 lines because a backend's author should find every promise
the backend is held to in one place.) A backend's own tests must cover that:

* durability across processes and crashes (a store opened by another process, after a kill);
* failure modes: which :class:`~hermes_ctx_plugins.storage.base.LocalStoreError` reason each failure
  of the store becomes, a record refused without the store failing, the archive spooling what its
  store refuses (:mod:`hermes_ctx_plugins.storage.spool`) and importing it later;
* retention and the size bound (``retention_days``, ``max_megabytes``) and ``size_bytes()`` falling
  as compactions go;
* erasure: that ``compact()`` and ``forget_user`` leave no deleted text in what the store keeps;
* two locations being two stores (the fixtures give one location);
* concurrency beyond two connections taking turns.
"""

from __future__ import annotations

import dataclasses
import itertools
import struct
import typing
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import pytest

from ..events import Message
from ..storage.base import ArchiveBackend, ArchiveError, MemoryBackend
from ..storage.records import ArchiveStats, MemoryStats, Record, Scope
from ..storage.text import query_terms

__all__ = ["HOSTILE_IDS", "OpenArchive", "OpenMemory", "StorageContract", "opened", "record"]

#: ids every store must keep apart and give back exactly: the anonymous user, near-misses of
#: "alice", lone surrogates, NUL, an escape-looking text and 10 kB
HOSTILE_IDS = ("", "alice", "alice ", "Alice", "alice\x00", "a\x00b", "\ud800", "m\udfff", "a\\ud800", "x" * 10_000)

OpenMemory = Callable[[], MemoryBackend]
OpenArchive = Callable[[], ArchiveBackend]

_keys = itertools.count(1)


def record(text: str, *, user_id: str = "alice", chat_id: str = "c1", namespace: str = "", kind: str = "fact",
           visibility: str = "chat", session_id: str = "s1", key: str = "") -> Record:
    """A record of ``text`` (a fact, or a turn whose user said it) for the owner given."""
    texts = {"fact_text": text} if kind == "fact" else {"user_text": text, "assistant_text": "noted"}
    return Record(key=key or f"k{next(_keys)}", kind=kind, namespace=namespace, user_id=user_id, chat_id=chat_id,
                  session_id=session_id, visibility=visibility, created_at=1_700_000_000.0, **texts)


def found(store: MemoryBackend, text: str, *, user_id: str = "alice", chat_id: str = "c1", namespace: str = "",
          share_across_chats: bool = False, limit: int = 20) -> list[str]:
    """The facts and user texts a search for ``text`` returns to that owner, best first."""
    hits = store.search(query_terms(text), namespace=namespace, user_id=user_id, chat_id=chat_id,
                        share_across_chats=share_across_chats, limit=limit)
    return [hit.memory.fact_text or hit.memory.user_text for hit in hits]


def said(text: str, role: str = "user", **extra: Any) -> Message:
    return {"role": role, "content": text, **extra}


def assert_declared(stats: Mapping[str, Any], declared: type) -> None:
    """``stats`` has exactly the keys of the TypedDict ``declared``, each of its declared type (an
    ``int`` passes for a ``float``, as in Python's typing; a ``bool`` never passes for a number)."""
    hints = typing.get_type_hints(declared)
    assert set(stats) == set(hints)
    for key, hint in hints.items():
        kinds = typing.get_args(hint) or (hint,)
        kinds += (int,) if float in kinds else ()
        value = stats[key]
        assert isinstance(value, kinds) and not isinstance(value, bool), f"{key}: {value!r} is not {hint}"


class StorageContract:
    """Tests every storage backend must pass (see the module docs for how to use it)."""

    @pytest.fixture
    def open_memory(self) -> OpenMemory:
        """Opens a connection to this test's empty memory store; the subclass defines it."""
        pytest.fail(f"{type(self).__name__} must define the fixture `open_memory` (see storage_contract)")

    @pytest.fixture
    def open_archive(self) -> OpenArchive:
        """Opens a connection to this test's empty archive; the subclass defines it."""
        pytest.fail(f"{type(self).__name__} must define the fixture `open_archive` (see storage_contract)")

    @pytest.fixture
    def memory(self, open_memory: OpenMemory) -> MemoryBackend:
        return open_memory()

    @pytest.fixture
    def archive(self, open_archive: OpenArchive) -> ArchiveBackend:
        return open_archive()

    # -- the memory store: ids, scopes, namespaces -------------------------------------------------

    @pytest.mark.parametrize("hostile", HOSTILE_IDS, ids=lambda i: repr(i[:12]) + (f"…{len(i)}" if len(i) > 12 else ""))
    def test_any_id_is_kept_exactly_and_apart(self, memory: MemoryBackend, hostile: str) -> None:
        memory.write([record("kumquat codeword1", user_id=hostile, chat_id=hostile, namespace=hostile,
                             session_id=hostile, key=hostile or "empty")])
        memory.write([record("kumquat codeword2", user_id="alice", chat_id="c1", namespace="")])
        [mine] = memory.memories(namespace=hostile, user_id=hostile)
        assert (mine.namespace, mine.user_id, mine.chat_id, mine.session_id, mine.key) == (
            hostile, hostile, hostile, hostile, hostile or "empty")
        assert memory.get([mine.id]) == [mine]
        assert found(memory, "kumquat", user_id=hostile, chat_id=hostile, namespace=hostile) == ["kumquat codeword1"]
        if hostile != "alice":
            assert found(memory, "kumquat") == ["kumquat codeword2"]
        assert (hostile, hostile) in memory.scopes(hostile)

    def test_a_search_sees_its_owner_and_chat_only(self, memory: MemoryBackend) -> None:
        owners = [("", "alice", "c1"), ("", "alice", "c2"), ("", "bob", "c1"), ("other", "alice", "c1"),
                  ("", "", "c1"), ("", "alice ", "c1")]
        for n, (namespace, user, chat) in enumerate(owners):
            memory.write([record(f"walrus code{n}word", namespace=namespace, user_id=user, chat_id=chat)])
        memory.write([record("walrus profilefact", user_id="alice", chat_id="c2", visibility="user")])
        for n, (namespace, user, chat) in enumerate(owners):
            seen = found(memory, "walrus", namespace=namespace, user_id=user, chat_id=chat)
            profile = {"walrus profilefact"} if (namespace, user) == ("", "alice") else set()
            assert set(seen) == {f"walrus code{n}word", *profile}, (namespace, user, chat)
        across = found(memory, "walrus", user_id="alice", chat_id="c1", share_across_chats=True)
        assert set(across) == {"walrus code0word", "walrus code1word", "walrus profilefact"}

    def test_namespaces_are_apart_for_every_read_and_delete(self, memory: MemoryBackend) -> None:
        memory.write([record("otter blue", namespace="blue"), record("otter green", namespace="green")])
        assert [m.fact_text for m in memory.memories(namespace="blue")] == ["otter blue"]
        assert memory.stats("blue")["facts"] == 1 and memory.stats()["facts"] == 2
        assert memory.forget_where(namespace="blue", user_id="alice") == 1
        assert found(memory, "otter", namespace="green") == ["otter green"]
        assert found(memory, "otter", namespace="blue") == []

    def test_namespaces_count_the_memories_of_each_for_an_owner_or_all(self, memory: MemoryBackend) -> None:
        """``namespaces()``: what ``hermes-ctx memory`` commands name when they read one namespace of several."""
        memory.write([record("otter a1", namespace="", user_id="alice"),
                      record("otter a2", namespace="blue", user_id="alice"),
                      record("otter a3", namespace="blue", user_id="alice", chat_id="c9"),
                      record("otter b1", namespace="green", user_id="bob"),
                      record("otter x", namespace="blue\x00", user_id="alice ")])
        assert memory.namespaces() == {"": 1, "blue": 2, "green": 1, "blue\x00": 1}
        assert memory.namespaces(user_id="alice") == {"": 1, "blue": 2}
        assert memory.namespaces(user_id="alice", chat_id="c9") == {"blue": 1}
        assert memory.namespaces(user_id="carol") == {}

    # -- writing -------------------------------------------------------------------------------------

    def test_a_write_is_idempotent_by_key(self, memory: MemoryBackend) -> None:
        first = record("heron first", key="turn:1")
        assert memory.write([first, record("heron again", key="turn:1")]) == 1
        assert memory.write([record("heron later", key="turn:1")]) == 0
        assert [m.fact_text for m in memory.memories()] == ["heron first"]
        assert memory.add(record("heron added", key="turn:1")).fact_text == "heron first"
        added = memory.add(record("heron new", key="fact:2"))
        assert memory.get([added.id]) == [added] and added.fact_text == "heron new"

    def test_progress_is_written_with_the_rows_or_not_at_all(self, memory: MemoryBackend) -> None:
        assert memory.write([record("ibis one")], segment="seg-1", offset=40) == 1
        assert memory.progress() == {"seg-1": 40}
        with pytest.raises(ValueError, match="kind"):
            memory.write([record("ibis two"), record("ibis bad", kind="bogus")], segment="seg-1", offset=99)
        assert memory.progress() == {"seg-1": 40}
        assert [m.fact_text for m in memory.memories()] == ["ibis one"]
        memory.quarantine("seg-1", 120, '{"namespace":"ns","user_id":"carol","key":"k"', "ValueError: torn", 3)
        memory.quarantine("seg-2", 7, "not json at all", "ValueError: undecodable", 1)
        assert memory.progress() == {"seg-1": 120, "seg-2": 7}
        assert [(q.namespace, q.user_id, q.attempts) for q in memory.quarantined()] == [("ns", "carol", 3),
                                                                                         (None, None, 1)]
        assert [q.offset for q in memory.quarantined("ns")] == [120, 7]  # unknown owners show everywhere
        assert [q.offset for q in memory.quarantined("elsewhere")] == [7]
        memory.drop_progress(["seg-1", "never-known"])
        assert memory.progress() == {"seg-2": 7}

    def test_a_second_connection_sees_the_first_ones_writes(self, open_memory: OpenMemory) -> None:
        writer, reader = open_memory(), open_memory()
        writer.write([record("jackal shared")], segment="seg", offset=5)
        assert found(reader, "jackal") == ["jackal shared"] and reader.progress() == {"seg": 5}

    def test_a_store_opened_again_finds_what_was_stored(self, open_memory: OpenMemory) -> None:
        first = open_memory()
        first.write([record("quail kept")], segment="seg", offset=9)
        first.quarantine("seg", 12, "not json at all", "ValueError: undecodable", 1)
        first.close()
        first.close()  # closing twice does nothing
        again = open_memory()
        assert found(again, "quail") == ["quail kept"]
        assert again.progress() == {"seg": 12} and [q.offset for q in again.quarantined()] == [12]

    def test_memories_come_in_the_order_stored_and_get_by_id(self, memory: MemoryBackend) -> None:
        # each written later than the one before, yet made earlier: the order is the store's, not created_at's
        made = [dataclasses.replace(record(f"robin {n}"), created_at=1_700_000_000.0 - n) for n in range(4)]
        memory.write(made[:2])
        memory.write(made[2:])
        listed = list(memory.memories())
        assert [m.fact_text for m in listed] == ["robin 0", "robin 1", "robin 2", "robin 3"]
        ids = [m.id for m in listed]
        assert ids == sorted(ids) and len(set(ids)) == 4
        assert [m.fact_text for m in memory.memories(user_id="alice", chat_id="c1")] == [m.fact_text for m in listed]
        assert memory.get([ids[3], ids[0], 10**12, ids[2], ids[0]]) == [listed[0], listed[2], listed[3]]
        assert memory.forget([ids[3]]) == [ids[3]]
        newest = memory.add(record("robin 4"))
        assert newest.id > ids[2]  # greater than every memory stored at the time
        assert [m.fact_text for m in memory.memories()] == ["robin 0", "robin 1", "robin 2", "robin 4"]

    # -- search ----------------------------------------------------------------------------------

    def test_search_ranks_by_bm25_over_stemmed_words(self, memory: MemoryBackend) -> None:
        memory.write([
            record("we adopted a greyhound called Biscuit"),
            record("the adoption papers for the greyhound are signed"),
            record("greyhound greyhound racing is on tonight"),
            record("a long note about the weather, the garden, the roof, the car and a greyhound somewhere"),
            record("Café au lait every morning"),
            record("我妹妹住在上海"),
            *(record(f"an unrelated note number {n}") for n in range(4)),  # so that "greyhound" is not common
        ])
        assert set(found(memory, "adopt")) == {"we adopted a greyhound called Biscuit",
                                               "the adoption papers for the greyhound are signed"}
        ranked = found(memory, "greyhound")
        assert ranked[0] == "greyhound greyhound racing is on tonight" and len(ranked) == 4
        assert ranked[-1].startswith("a long note")
        assert set(found(memory, "greyhound adoption")[:2]) == {"we adopted a greyhound called Biscuit",
                                                                "the adoption papers for the greyhound are signed"}
        assert found(memory, "cafe") == ["Café au lait every morning"]
        assert found(memory, "妹妹住在哪里") == ["我妹妹住在上海"]
        assert found(memory, "greyhound", limit=2) == ranked[:2]
        hits = memory.search(query_terms("greyhound"), namespace="", user_id="alice", chat_id="c1",
                             share_across_chats=False, limit=10)
        assert all(hit.relevance > 0 for hit in hits)
        assert memory.search([], namespace="", user_id="alice", chat_id="c1", share_across_chats=False,
                             limit=10) == []

    # -- forgetting ------------------------------------------------------------------------------

    def test_forget_by_id_deletes_only_inside_the_scope(self, memory: MemoryBackend) -> None:
        mine = memory.add(record("lynx mine", user_id="alice", chat_id="c1"))
        profile = memory.add(record("lynx profile", user_id="alice", chat_id="c2", visibility="user"))
        theirs = memory.add(record("lynx theirs", user_id="bob", chat_id="c1"))
        assert memory.forget([theirs.id, 10**12], namespace="", user_id="alice", chat_id="c1") == []
        assert found(memory, "lynx", user_id="bob") == ["lynx theirs"]
        assert memory.forget([profile.id, mine.id], namespace="", user_id="alice", chat_id="c1") == sorted(
            [mine.id, profile.id])
        assert found(memory, "lynx", share_across_chats=True) == []
        assert found(memory, "lynx", user_id="bob") == ["lynx theirs"]

    def test_forget_where_needs_a_user_chat_or_session(self, memory: MemoryBackend) -> None:
        memory.write([record("moose s1", session_id="s1"), record("moose s2", session_id="s2")])
        with pytest.raises(ValueError):
            memory.forget_where(namespace="")
        assert memory.forget_where(session_id="s1") == 1
        assert found(memory, "moose") == ["moose s2"]

    def test_forget_user_takes_their_memories_and_quarantine_in_the_namespaces_asked(
            self, memory: MemoryBackend) -> None:
        memory.write([record("newt alice"), record("newt alice blue", namespace="blue"),
                      record("newt bob", user_id="bob"), record("newt alice turn", kind="turn", chat_id="c9")])
        memory.quarantine("seg", 1, '{"namespace":"","user_id":"alice","key":"x"', "ValueError", 1)
        memory.quarantine("seg", 2, '{"namespace":"","user_id":"bob","key":"y"', "ValueError", 1)
        assert memory.forget_user("alice", []) == (0, 0)
        assert memory.forget_user("alice", [""]) == (2, 1)
        assert found(memory, "newt", share_across_chats=True) == []
        assert found(memory, "newt", namespace="blue") == ["newt alice blue"]
        assert found(memory, "newt", user_id="bob") == ["newt bob"]
        assert [q.user_id for q in memory.quarantined()] == ["bob"]
        assert memory.forget_user("alice") == (1, 0)
        memory.compact()
        assert found(memory, "newt", user_id="bob") == ["newt bob"]

    def test_a_lone_string_is_not_a_list_of_namespaces(self, memory: MemoryBackend, archive: ArchiveBackend) -> None:
        memory.write([record("stork a", namespace="a"), record("stork ab", namespace="ab")])
        archive.record(session_id="s", user_id="alice", namespace="a", strategy="w", removed=[(0, said("stork"))])
        with pytest.raises(TypeError, match="got the string 'ab'"):
            memory.forget_user("alice", "ab")  # iterated, it would be the namespaces "a" and "b"
        with pytest.raises(TypeError, match="got the string 'ab'"):
            archive.forget_user("alice", namespaces="ab")
        assert found(memory, "stork", namespace="a") == ["stork a"]  # nothing deleted
        assert archive.stats()["messages"] == 1
        assert memory.forget_user("alice", ["ab"]) == (1, 0)  # in a list, the same name is a namespace
        assert archive.forget_user("alice", namespaces=["a"])[0].removed == 1

    def test_stats_count_what_is_stored(self, memory: MemoryBackend) -> None:
        assert memory.stats()["turns"] == 0 and memory.stats()["oldest"] is None
        memory.write([record("okapi", kind="turn"), record("okapi fact", chat_id="c2", session_id="s2")])
        stats = memory.stats("")
        assert (stats["turns"], stats["facts"], stats["scopes"], stats["sessions"]) == (1, 1, 2, 2)
        assert stats["oldest"] == stats["newest"] == 1_700_000_000.0 and stats["bytes"] > 0

    def test_stats_report_every_key_with_its_type(self, memory: MemoryBackend) -> None:
        assert_declared(memory.stats(), MemoryStats)
        memory.write([record("puffin", kind="turn"), record("puffin fact", namespace="blue")])
        memory.quarantine("seg", 3, '{"namespace":"blue","user_id":"alice","key":"q"', "ValueError", 2)
        for namespace in (None, "", "blue", "nowhere"):
            assert_declared(memory.stats(namespace), MemoryStats)
        assert memory.stats("blue")["quarantined"] == 1 and memory.stats("nowhere")["oldest"] is None
        assert memory.stats("nowhere")["bytes"] == memory.stats()["bytes"] > 0  # the whole store, always

    # -- the archive -------------------------------------------------------------------------------

    @pytest.mark.parametrize("hostile", HOSTILE_IDS, ids=lambda i: repr(i[:12]) + (f"…{len(i)}" if len(i) > 12 else ""))
    def test_an_archived_message_comes_back_exactly_to_its_scope_only(self, archive: ArchiveBackend,
                                                                     hostile: str) -> None:
        message = said(f"the build failed with ECONNREFUSED {hostile!r}", name=hostile)
        [ident] = archive.record(session_id=hostile, user_id=hostile, namespace=hostile, strategy="window",
                                 removed=[(3, message)])
        archive.record(session_id="s", user_id="bob", namespace="", strategy="window",
                       removed=[(0, said("ECONNREFUSED for bob"))])
        scope = Scope(session_id=hostile, user_id=hostile, namespace=hostile)
        [stored] = archive.get([ident], scope)
        assert (stored.session_id, stored.user_id, stored.namespace, stored.message) == (
            hostile, hostile, hostile, message)
        assert [hit.id for hit in archive.search("econnref", scope)] == [ident]
        others = Scope(session_id="s", user_id="bob")
        assert archive.get([ident], others) == []
        assert [hit.session_id for hit in archive.search("ECONNREFUSED", others)] == ["s"]

    def test_scopes_see_a_session_a_users_sessions_or_everything(self, archive: ArchiveBackend) -> None:
        def put(session: str, user: str, namespace: str = "") -> int:
            return archive.record(session_id=session, user_id=user, namespace=namespace, strategy="prune",
                                  removed=[(0, said(f"quokka from {session} {user} {namespace}"))])[0]

        ids = [put("s1", "alice"), put("s2", "alice"), put("s3", "bob"), put("s1", "alice", "blue"), put("s1", "")]
        a1, a2, _, blue, early = ids

        def seen(scope: Scope) -> set[int]:
            return {s.id for s in archive.get(ids, scope)}

        # an owner is compared exactly: the anonymous user's rows of a session are not a named user's of the same id
        assert seen(Scope(session_id="s1", user_id="alice")) == {a1}
        assert seen(Scope(session_id="s1", user_id="")) == {early}
        assert seen(Scope(session_id="s1", user_id="alice", all_sessions=True)) == {a1, a2}
        assert seen(Scope(session_id="s1", user_id="alice", namespace="blue")) == {blue}
        assert seen(Scope(session_id="s1", user_id=None)) == {a1, early}
        assert seen(Scope(session_id="", everything=True)) == set(ids)
        hits = archive.search("quokka", Scope(session_id="s1", user_id="alice"), limit=20)
        assert {hit.id for hit in hits} == {a1}
        assert {hit.id for hit in archive.search("quokka", Scope(session_id="s1"), limit=20)} == {early}
        # a conversation hermes moved from s1 to s9 (a compaction with in_place: false) reads what s1 archived
        moved = Scope(session_id="s9", user_id="alice", earlier_sessions=("s1",))
        assert seen(moved) == {a1}
        assert {hit.id for hit in archive.search("quokka", moved, limit=20)} == {a1}
        assert seen(Scope(session_id="s9", user_id="bob", earlier_sessions=("s1",))) == set()  # not alice's
        assert seen(Scope(session_id="s9", earlier_sessions=("s1",))) == {early}
        assert seen(Scope(session_id="s9", user_id="alice")) == set()

    def test_a_shared_sessions_messages_are_each_their_speakers(self, archive: ArchiveBackend) -> None:
        """A thread several users speak in, compacted in bob's turn: alice's turns are hers (her search finds them,
        bob's every-session scope does not), and forgetting her takes the compaction holding them, not bob's
        other sessions or anyone else's."""
        removed = [(n, said(f"heron {who} {n}", role=role)) for n, (who, role) in enumerate(
            [("alice", "user"), ("alice", "assistant"), ("bob", "user"), ("bob", "assistant")], 1)]
        shared = archive.record(session_id="t", user_id="bob", strategy="prune", removed=removed,
                                owners=["alice", "alice", "bob", "bob"])
        [own] = archive.record(session_id="dm", user_id="bob", strategy="prune", removed=[(1, said("heron bob dm"))])
        [carol] = archive.record(session_id="t2", user_id="carol", strategy="prune", removed=[(1, said("heron c"))])
        # a later compaction of the thread: a turn nobody can be told the sender of (hers, maybe), then bob's
        later = archive.record(session_id="t", user_id="bob", strategy="prune", owners=["", "bob"],
                               removed=[(5, said("heron nobody 5")), (6, said("heron bob 6"))])
        elsewhere = archive.record(session_id="t3", user_id="bob", strategy="prune", owners=["", "bob"],
                                   removed=[(1, said("heron nobody t3")), (2, said("heron bob t3"))])

        def found(scope: Scope) -> list[str]:
            return sorted(hit.snippet.replace("«", "").replace("»", "") for hit in archive.search("heron", scope,
                                                                                                 limit=20))

        assert found(Scope(session_id="t", user_id="alice")) == ["heron alice 1", "heron alice 2"]
        assert found(Scope(session_id="t", user_id="bob")) == ["heron bob 3", "heron bob 4", "heron bob 6"]
        assert found(Scope(session_id="dm", user_id="bob", all_sessions=True)) == [
            "heron bob 3", "heron bob 4", "heron bob 6", "heron bob dm", "heron bob t3"]  # never alice's, nor nobody's
        assert [s.user_id for s in archive.get(shared, Scope(session_id="t", user_id=None))] == [
            "alice", "alice", "bob", "bob"]
        entry = next(e for e in archive.compactions() if e["session_id"] == "t")
        assert entry["owners"] == ["alice", "alice", "bob", "bob"] and entry["user_id"] == "bob"
        with pytest.raises(ValueError, match="2 messages was given 1 owners"):
            archive.record(session_id="t", user_id="bob", strategy="prune", removed=removed[:2], owners=["bob"])
        assert archive.forget_user("alice")[0].removed == 6  # and nobody's turn in her thread, with its compaction
        assert found(Scope(session_id="t", user_id="bob")) == []  # the compaction holding her turns went whole
        everything = Scope(session_id="", everything=True)
        assert [s.id for s in archive.get([own, carol, *elsewhere, *later], everything)] == [own, carol, *elsewhere]

    def test_the_same_compaction_made_again_is_stored_once(self, archive: ArchiveBackend) -> None:
        """A process killed after the archive stored a compaction, before hermes saved the compacted session,
        compacts the same history again at its restart: one copy, the same ids; what it removes beyond is added."""
        removed = [(n, said(f"kestrel step {n}", role="user" if n % 2 else "assistant")) for n in range(1, 7)]
        scope = Scope(session_id="s", user_id="u")
        first = archive.record(session_id="s", user_id="u", strategy="summarize", removed=removed)
        assert archive.record(session_id="s", user_id="u", strategy="summarize", removed=removed) == first
        more = [*removed, (7, said("kestrel step 7"))]
        again = archive.record(session_id="s", user_id="u", strategy="summarize", removed=more)
        assert again[:6] == first and again[6] not in first
        hits = archive.search("kestrel", scope, limit=50)
        assert sorted(hit.id for hit in hits) == sorted(again)  # every message once
        # another user's or session's identical compaction is theirs, stored apart
        for session, user in (("s", "v"), ("t", "u")):
            theirs = archive.record(session_id=session, user_id=user, strategy="summarize", removed=removed)
            assert not set(theirs) & set(first)

    def test_a_later_compaction_of_a_conversation_that_repeats_itself_is_stored_whole(
            self, archive: ArchiveBackend) -> None:
        """A status bot says the same again: the next compaction opens with messages equal to the last one's, and
        its conversation cites that compaction's ids (its index is in it): a new compaction, stored in full."""
        said_twice = [(1, said("status?")), (2, said("all green", role="assistant"))]
        first = archive.record(session_id="s", user_id="u", strategy="window", removed=said_twice)
        later = [*said_twice, (3, said("and the disk?")), (4, said("91 percent", role="assistant"))]
        ids = archive.record(session_id="s", user_id="u", strategy="window", removed=later,
                             cited=lambda ident: ident in first)
        assert len(ids) == 4 and not set(ids) & set(first)
        stored = archive.get(ids, Scope(session_id="s", user_id="u"))
        assert [s.message for s in stored] == [m for _, m in later]
        assert len(archive.search("green", Scope(session_id="s", user_id="u"), limit=9)) == 2  # said twice, kept twice

    def test_messages_keep_their_order_and_secrets_are_redacted(self, archive: ArchiveBackend) -> None:
        secret = "sk-ant-api03-Xk29fLq81mZp0Rt7vBn3cQw5yHs6dJu4eTg2aKo9iLm1nPx8rCv0bZ"
        first = archive.record(session_id="s", user_id="u", strategy="window",
                               removed=[(0, said("one")), (1, said(f"my key is {secret}"))])
        second = archive.record(session_id="s", user_id="u", strategy="window", removed=[(2, said("three"))])
        stored = archive.get([*first, *second], Scope(session_id="s", user_id="u"))
        assert [s.seq for s in stored] == [1, 2, 3] and [s.id for s in stored] == [*first, *second]
        assert stored[1].message == said("my key is [REDACTED:anthropic-key]")

    def test_a_tool_call_and_its_results_are_partners_by_exact_id(self, archive: ArchiveBackend) -> None:
        call = said("", role="assistant", tool_calls=[{"id": "call_1", "type": "function",
                                                        "function": {"name": "read", "arguments": "{}"}}])
        ids = archive.record(session_id="s", user_id="u", strategy="prune", removed=[
            (0, call), (1, said("result one", role="tool", tool_call_id="call_1")),
            (2, said("result ten", role="tool", tool_call_id="call_10"))])
        scope = Scope(session_id="s", user_id="u")
        call_stored, result, other = archive.get(ids, scope)
        assert [p.id for p in archive.partners(call_stored, scope)] == [result.id]
        assert [p.id for p in archive.partners(result, scope)] == [call_stored.id]
        assert archive.partners(other, scope) == []
        assert archive.partners(result, Scope(session_id="s", user_id="someone else")) == []

    def test_search_finds_substrings_and_ranks_phrases_first(self, archive: ArchiveBackend) -> None:
        ids = archive.record(session_id="s", user_id="u", strategy="window", removed=[
            (0, said("the deploy script failed")), (1, said("the script ran; deploy later")),
            (2, said("src/app.py line 42")), (3, said("ok"))])
        scope = Scope(session_id="s", user_id="u")
        assert archive.search("deploy script", scope)[0].id == ids[0]
        assert [h.id for h in archive.search("app.py", scope)] == [ids[2]]
        assert [h.id for h in archive.search("ok", scope)] == [ids[3]]  # short terms: all must occur
        assert archive.search("the", scope) == []  # only stop words
        assert "«" in archive.search("deploy script", scope)[0].snippet

    def test_a_search_before_anything_is_archived_finds_nothing(self, archive: ArchiveBackend) -> None:
        """The model may call ``ctx_search`` before the first compaction."""
        scope = Scope(session_id="s", user_id="u")
        assert archive.search("deploy port", scope) == [] and archive.search("ok", scope) == []
        archive.record(session_id="s", user_id="u", strategy="window", removed=[(0, said("deploy port 8443"))])
        assert [h.session_id for h in archive.search("deploy port", scope)] == ["s"]

    def test_purge_by_condition_and_never_without_one(self, archive: ArchiveBackend) -> None:
        for session, user, namespace in (("s1", "u1", ""), ("s2", "u1", ""), ("s1", "u2", "blue")):
            archive.record(session_id=session, user_id=user, namespace=namespace, strategy="window",
                           removed=[(0, said(f"pelican {session}"))])
        with pytest.raises(ArchiveError):
            archive.purge()
        assert archive.purge(session_id="s1", namespace="") == 1
        assert archive.stats()["compactions"] == 2
        assert archive.purge(user_id="u2") == 1 and archive.purge(older_than_days=0) == 1
        assert archive.stats()["messages"] == 0

    def test_forget_user_takes_their_sessions_and_keeps_everyone_else(self, archive: ArchiveBackend) -> None:
        assert not archive.exists()
        archive.forget_user("alice")
        assert not archive.exists()  # forgetting created nothing
        archive.record(session_id="s1", user_id="", strategy="w", removed=[(0, said("raven before the user"))])
        archive.record(session_id="s1", user_id="alice", strategy="w", removed=[(1, said("raven alice"))])
        archive.record(session_id="s2", user_id="", strategy="w", removed=[(0, said("raven nobody's"))])
        archive.record(session_id="s3", user_id="bob", strategy="w", removed=[(0, said("raven bob"))])
        archive.record(session_id="s1", user_id="alice", namespace="blue", strategy="w",
                       removed=[(0, said("raven alice blue"))])
        assert archive.exists()
        with pytest.raises(TypeError):
            archive.forget_user("alice", namespaces="")
        [report] = archive.forget_user("alice", namespaces=[""])
        assert report.removed == 2 and "1 messages" in report.detail and not report.error
        everything = Scope(session_id="", everything=True)
        left = archive.search("raven", everything, limit=9)
        assert sorted(hit.snippet.replace("«", "").replace("»", "") for hit in left) == [
            "raven alice blue", "raven bob", "raven nobody's"]
        assert archive.forget_user("alice")[0].removed == 1

    def test_stats_describe_the_archive(self, archive: ArchiveBackend) -> None:
        assert archive.stats()["messages"] == 0
        archive.record(session_id="s", user_id="u", namespace="n", strategy="w", removed=[(0, said("a")),
                                                                                          (1, said("b"))])
        stats = archive.stats()
        assert (stats["compactions"], stats["messages"], stats["sessions"], stats["users"], stats["namespaces"]) == (
            1, 2, 1, 1, 1)
        assert stats["oldest"] is not None and stats["newest"] is not None
        assert stats["bytes"] == archive.size_bytes() > 0 and stats["oldest"] <= stats["newest"]

    def test_archive_stats_report_every_key_with_its_type(self, archive: ArchiveBackend) -> None:
        assert_declared(archive.stats(), ArchiveStats)
        archive.record(session_id="s", user_id="u", strategy="w", removed=[(0, said("gannet"))])
        stats = archive.stats()
        assert_declared(stats, ArchiveStats)
        assert stats["path"] == str(archive.path) and stats["spooled"] == 0  # the store took it
        assert (stats["retention_days"], stats["max_megabytes"]) == (archive.retention_days, archive.max_megabytes)

    def test_an_archive_exists_from_its_first_record_on(self, open_archive: OpenArchive) -> None:
        archive = open_archive()
        assert not archive.exists()
        archive.forget_user("alice")
        assert not archive.exists() and not open_archive().exists()  # asking and forgetting create nothing
        archive.record(session_id="s", user_id="u", strategy="w", removed=[(0, said("gull"))])
        assert archive.exists() and open_archive().exists()
        assert archive.purge(everything=True) == 1
        assert archive.exists() and open_archive().exists()  # emptied, not gone

    def test_an_archive_opened_again_finds_what_was_archived(self, open_archive: OpenArchive) -> None:
        first = open_archive()
        ids = first.record(session_id="s", user_id="u", strategy="w", removed=[(0, said("wren kept"))])
        first.close()
        first.close()  # closing twice does nothing
        again = open_archive()
        assert again.exists()
        assert [s.message for s in again.get(ids, Scope(session_id="s", user_id="u"))] == [said("wren kept")]
        assert [hit.id for hit in again.search("wren", Scope(session_id="s", user_id="u"))] == ids

    def test_compactions_read_back_are_restored_exactly(self, archive: ArchiveBackend) -> None:
        odd = "a\x00b \ud800 \\u0000"
        archive.record(session_id=odd, user_id=odd, namespace=odd, strategy="summarize", tokens_before=900,
                       tokens_after=300, removed=[(4, said(f"kiwi {odd}")), (5, said("kiwi two", role="assistant"))])
        archive.record(session_id="s2", user_id="", strategy="prune", removed=[(0, said("kiwi three"))])
        originals = list(archive.compactions())
        assert [(e["strategy"], e["tokens_before"], e["tokens_after"], [p for p, _ in e["removed"]])
                for e in originals] == [("summarize", 900, 300, [4, 5]), ("prune", 0, 0, [0])]
        restored = [archive.restore(entry) for entry in originals]
        restored.append(archive.restore({**originals[1], "created": 1.0}))  # no retention applied here
        assert list(archive.compactions()) == [*originals, *originals, {**originals[1], "created": 1.0}]
        copies = archive.get(restored[0], Scope(session_id=odd, user_id=odd, namespace=odd))
        assert [(s.message, s.seq) for s in copies] == [(said(f"kiwi {odd}"), 3),
                                                         (said("kiwi two", role="assistant"), 4)]
        assert len(archive.search("kiwi three", Scope(session_id="s2", user_id=""), limit=9)) == 3

    # -- the archive's embeddings (the hybrid ctx_search) -------------------------------------------

    def test_archive_vectors_are_scoped_like_their_messages_and_go_with_them(self, archive: ArchiveBackend) -> None:
        if not archive.dense:  # a backend may keep none: it says so, and ctx_search stays lexical
            with pytest.raises(ArchiveError):
                archive.unembedded("m/2")
            return

        def put(session: str, user: str, namespace: str = "") -> int:
            return archive.record(session_id=session, user_id=user, namespace=namespace, strategy="w",
                                  removed=[(0, said(f"heron {session} {user!r} {namespace}"))])[0]

        a1, a2, early, bob, blue, near = (put("s1", "alice"), put("s2", "alice"), put("s1", ""), put("s3", "bob"),
                                          put("s1", "alice", "blue"), put("s9", "alice\x00"))
        every = [a1, a2, early, bob, blue, near]
        assert [s.id for s in archive.unembedded("m/2", limit=10)] == every[::-1]  # newest first, every owner's
        assert [s.id for s in archive.unembedded("m/2", keys=[a1, 10**12])] == [a1]
        assert "heron s1 'alice'" in str(archive.unembedded("m/2", keys=[a1])[0].message)
        assert archive.put_vectors("m/2", [(i, struct.pack("<2f", n, 1.0)) for n, i in enumerate(every)]) == 6

        def seen(scope: Scope, model: str = "m/2") -> set[int]:
            return {v.message_id for v in archive.vectors(model, scope)}

        assert seen(Scope(session_id="s1", user_id="alice")) == {a1}  # as get and search see them
        assert seen(Scope(session_id="s1")) == {early}  # the anonymous user's
        assert seen(Scope(session_id="s1", user_id="alice", all_sessions=True)) == {a1, a2}  # not "alice\x00"
        assert seen(Scope(session_id="s9", user_id="alice\x00", all_sessions=True)) == {near}
        assert seen(Scope(session_id="s1", user_id="alice", namespace="blue")) == {blue}
        assert seen(Scope(session_id="s3", user_id="bob")) == {bob}
        assert seen(Scope(session_id="s1", user_id="alice"), "m/3") == set()  # another model's space
        assert archive.unembedded("m/2") == [] and len(archive.unembedded("m/3", limit=10)) == 6
        [last] = archive.vectors("m/2", Scope(session_id="s3", user_id="bob"))
        assert archive.vectors("m/2", Scope(session_id="s3", user_id="bob"), after=last.seq) == []
        generation = archive.vector_generation()
        assert archive.purge(session_id="s1", namespace="") == 2  # alice's and the early one
        assert archive.vector_generation() != generation  # a cache of them starts over
        assert seen(Scope(session_id="s1", user_id="alice")) == set()
        assert archive.put_vectors("m/2", [(a1, b"\x00" * 8)]) == 0  # a purged message gets none
        archive.forget_user("alice")
        assert seen(Scope(session_id="", everything=True)) == {bob, near}  # every namespace's alice, no one else


def opened(factory: Callable[[], Any]) -> Iterator[Callable[[], Any]]:
    """A fixture body: ``factory`` as the opener, every connection it opened closed after the test."""
    connections: list[Any] = []

    def open_() -> Any:
        connections.append(factory())
        return connections[-1]

    yield open_
    for connection in connections:
        connection.close()

"""The storage seam: every registered backend passes the backend contract, the seam picks the backend
the config names, ctx-local and the archive work end to end on the in-memory one, and its words and
ranking agree with SQLite's FTS5."""

from __future__ import annotations

import dataclasses
import inspect
import json
import re
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hermes_ctx_plugins import SessionInfo, Turn, config, load_host, storage
from hermes_ctx_plugins.config import Config, load_config
from hermes_ctx_plugins.errors import HermesCtxError
from hermes_ctx_plugins.memory.file import store as file_store
from hermes_ctx_plugins.memory.file.store import StoreUnavailable
from hermes_ctx_plugins.memory.local import LocalProvider
from hermes_ctx_plugins.storage import Scope, files
from hermes_ctx_plugins.storage import text as memory_query
from hermes_ctx_plugins.storage.inmemory import InMemoryArchive, InMemoryMemory
from hermes_ctx_plugins.storage.inmemory.memory import MemoryData
from hermes_ctx_plugins.storage.sqlite import ArchiveStore, LocalStore
from hermes_ctx_plugins.testing.storage_contract import OpenArchive, OpenMemory, StorageContract, opened, record


def settings(backend: str, tmp_path: Path) -> Config:
    return load_config({"ctx_plugins": {"storage": {"backend": backend},
                                        "archive": {"path": str(tmp_path / "archive.db")}}})


@pytest.fixture(params=sorted(storage.BACKENDS))
def backend(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    name: str = request.param
    if name == "postgres":  # a real server: this module's own database on the session's
        monkeypatch.setenv("HERMES_CTX_POSTGRES_DSN", request.getfixturevalue("postgres_dsn"))
    return name


class TestEveryBackend(StorageContract):
    """The contract, once per registered backend, each store opened through the seam."""

    @pytest.fixture
    def open_memory(self, backend: str, tmp_path: Path) -> Iterator[OpenMemory]:
        yield from opened(lambda: storage.open_memory(settings(backend, tmp_path), tmp_path / "memory.db"))

    @pytest.fixture
    def open_archive(self, backend: str, tmp_path: Path) -> Iterator[OpenArchive]:
        yield from opened(lambda: storage.open_archive(settings(backend, tmp_path)))


# -- the seam --------------------------------------------------------------------------------------


def test_the_seam_opens_the_backend_the_config_names(tmp_path: Path) -> None:
    assert set(storage.BACKENDS) == set(config.STORAGE_BACKENDS)  # every choice config allows has a module
    sqlite_memory = storage.open_memory(settings("sqlite", tmp_path), tmp_path / "memory.db")
    memory_memory = storage.open_memory(settings("memory", tmp_path), tmp_path / "memory.db")
    try:
        assert isinstance(sqlite_memory, LocalStore) and isinstance(memory_memory, InMemoryMemory)
        assert isinstance(storage.open_archive(settings("sqlite", tmp_path)), ArchiveStore)
        assert isinstance(storage.open_archive(settings("memory", tmp_path)), InMemoryArchive)
        # the same location, two backends: what one holds, the other does not
        memory_memory.write([record("emu only in memory")])
        assert [m.fact_text for m in memory_memory.memories()] == ["emu only in memory"]
        assert list(sqlite_memory.memories()) == []
    finally:
        sqlite_memory.close()
        memory_memory.close()


def test_two_locations_are_two_stores(backend: str, tmp_path: Path) -> None:
    chosen = settings(backend, tmp_path)
    here, there = (storage.open_memory(chosen, tmp_path / name) for name in ("here.db", "there.db"))
    archive_here = storage.open_archive(chosen)
    archive_there = storage.open_archive(settings(backend, tmp_path / "elsewhere"))
    try:
        here.write([record("kiwi here")])
        archive_here.record(session_id="s", user_id="u", strategy="w",
                            removed=[(0, {"role": "user", "content": "kiwi"})])
        assert [m.fact_text for m in here.memories()] == ["kiwi here"] and list(there.memories()) == []
        assert archive_here.exists() and archive_here.stats()["messages"] == 1
        assert not archive_there.exists() and archive_there.stats()["messages"] == 0
    finally:
        for store in (here, there, archive_here, archive_there):
            store.close()


def test_the_in_memory_backend_writes_no_file(tmp_path: Path) -> None:
    chosen = settings("memory", tmp_path)
    assert not storage.memory_exists(chosen, tmp_path / "m.db")
    store = storage.open_memory(chosen, tmp_path / "m.db")
    store.write([record("a fact in memory only")])
    archive = storage.open_archive(chosen)
    archive.record(session_id="s", user_id="u", strategy="w", removed=[(0, {"role": "user", "content": "hi"})])
    assert storage.memory_exists(chosen, tmp_path / "m.db") and archive.exists()
    assert list(tmp_path.iterdir()) == []
    assert storage.memory_exists(settings("sqlite", tmp_path), tmp_path / "m.db") is False


def test_the_file_helpers_fail_with_a_neutral_error_naming_the_path(tmp_path: Path) -> None:
    """``storage.files`` is every store's lock and atomic write; its error is an OSError of our tree,
    and a store passes its own subclass (the file store's ``StoreUnavailable``) to keep one family."""
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    with pytest.raises(files.FileUnavailable, match="cannot create the lock file") as failed:
        with files.locked(blocker / "data.json"):
            pass
    assert isinstance(failed.value, OSError) and isinstance(failed.value, HermesCtxError)
    assert failed.value.path == blocker / "data.json.lock" and failed.value.doing == "create the lock file"
    with pytest.raises(StoreUnavailable, match="memory store unavailable: cannot create the lock file"):
        with file_store.locked(blocker / "MEMORY.md"):
            pass
    target = tmp_path / "data.json"
    with files.locked(target):
        files.atomic_write(target, b"{}")
    assert target.read_bytes() == b"{}" and sorted(p.name for p in tmp_path.iterdir()) == [
        "a-file", "data.json", "data.json.lock"]


# -- ctx-local and the archive on the in-memory backend, end to end -----------------------------------


@pytest.fixture
def memory_config(tmp_path: Path) -> Path:
    path = tmp_path / "config.yaml"
    path.write_text("ctx_plugins:\n  storage:\n    backend: memory\n  memory:\n    providers: [ctx-local]\n")
    return path


def tool(provider: LocalProvider, name: str, args: dict[str, Any], session: SessionInfo) -> Any:
    return json.loads(provider.handle_tool_call(name, args, session=session))


def test_ctx_local_remembers_and_recalls_on_the_in_memory_backend(memory_config: Path, tmp_path: Path) -> None:
    chosen = load_config(memory_config)
    alice, bob = SessionInfo(session_id="a1", user_id="alice"), SessionInfo(session_id="b1", user_id="bob")
    provider = LocalProvider(chosen.options_for("ctx-local"), hermes_home=tmp_path, config=chosen)
    try:
        provider.on_session_start(alice)
        saved = tool(provider, "ctx_memory_remember", {"fact": "My locker code is wombat42."}, alice)
        provider.sync_turn(Turn(session=alice, turn_number=1, user_text="I keep bees on the roof",
                                assistant_text="noted"))
        assert saved["success"] is True and provider.flush(10)
        again = SessionInfo(session_id="a2", user_id="alice")
        recalled = provider.prefetch("what is my locker code? and the bees?", session=again)
        assert "wombat42" in recalled and "bees on the roof" in recalled
        assert provider.prefetch("what is my locker code? and the bees?", session=bob) == ""
        [found] = tool(provider, "ctx_memory_search", {"query": "locker"}, again)["results"]
        assert tool(provider, "ctx_memory_forget", {"ids": [found["id"]]}, bob)["success"] is False
        assert tool(provider, "ctx_memory_forget", {"ids": [found["id"]]}, again)["forgotten"] == [found["id"]]
        assert "wombat42" not in provider.prefetch("what is my locker code?", session=again)
    finally:
        provider.shutdown()
    assert not (tmp_path / "ctx-local" / "memory.db").exists()  # nothing but the queue's folder on disk
    restarted = LocalProvider(chosen.options_for("ctx-local"), hermes_home=tmp_path, config=chosen)
    try:  # the same process: a provider started again finds what the first one stored
        assert "bees on the roof" in restarted.prefetch("the bees", session=again)
        [report] = restarted.forget_user("alice")
        assert report.removed == 1 and not report.error
        assert restarted.prefetch("the bees", session=again) == ""
    finally:
        restarted.shutdown()


def test_the_host_opens_its_archive_in_the_backend_the_config_names(memory_config: Path) -> None:
    host = load_host(memory_config)
    try:
        assert host.archive is not None and isinstance(host.archive.store, InMemoryArchive)
    finally:
        host.shutdown()


# -- the in-memory backend agrees with SQLite's FTS5 ------------------------------------------------------


def fts5_words(text: str) -> list[str]:
    """The words SQLite's FTS5 indexes for ``text`` with ctx-local's tokenizer, in order."""
    db = sqlite3.connect(":memory:")
    try:
        db.execute("CREATE VIRTUAL TABLE f USING fts5(x, tokenize='porter unicode61 remove_diacritics 2')")
        db.execute("CREATE VIRTUAL TABLE v USING fts5vocab(f, 'instance')")
        db.execute("INSERT INTO f VALUES (?)", (text,))
        return [row[0] for row in db.execute("SELECT term FROM v ORDER BY offset")]
    finally:
        db.close()


def test_the_words_are_fts5s_words() -> None:
    """Every word of this repository's source and documentation (tens of thousands, English and
    otherwise), and text in other scripts, is cut and stemmed as FTS5 does."""
    root = Path(__file__).resolve().parent.parent
    words = sorted({w for path in [*root.glob("hermes_ctx_plugins/**/*.py"), *root.glob("*.md")]
                    for w in re.findall(r"\w+", path.read_text(encoding="utf-8"))})
    assert len(words) > 5_000
    for start in range(0, len(words), 2_000):
        text = " ".join(words[start:start + 2_000])
        assert memory_query.tokens(text) == fts5_words(text)
    for text in ("Café naïve résumé İstanbul e\u0301cole Москва́ ÀÉÎÕÜ Straße µs ς \u017fun",
                 memory_query.index_text("我妹妹住在上海, Tokyo 東京タワー ok"), "hyphen-ated_under score's 3.14"):
        assert memory_query.tokens(text) == fts5_words(text), text


def test_both_backends_rank_a_corpus_alike(tmp_path: Path) -> None:
    corpus = ["the kettle boiled dry", "kettle kettle kettle descaling day", "a kettle, a teapot and cups",
              "teapot repair shop", "we bought a new teapot and a new kettle for the office kitchen today",
              "descaling the kettle with vinegar", "cups and saucers"]
    stores = [storage.open_memory(settings(name, tmp_path), tmp_path / "memory.db") for name in ("sqlite", "memory")]
    try:
        for store in stores:
            store.write([record(text) for text in corpus])
        for question in ("kettle", "teapot kettle", "descaling kettle", "cups"):
            terms = memory_query.query_terms(question)
            sqlite_order, memory_order = ([hit.memory.fact_text for hit in store.search(
                terms, namespace="", user_id="alice", chat_id="c1", share_across_chats=False, limit=10)]
                for store in stores)
            assert memory_order == sqlite_order, question
    finally:
        for store in stores:
            store.close()


# -- the contract fails backends that break it ----------------------------------------------------------


class IgnoresChats(InMemoryMemory):
    def search(self, terms: Any, **scope: Any) -> Any:
        return super().search(terms, **{**scope, "share_across_chats": True})


class FindsNothing(InMemoryMemory):
    def search(self, terms: Any, **scope: Any) -> Any:
        return []


class TrimsIds(InMemoryMemory):
    def write(self, records: Any, **progress: Any) -> int:
        return super().write([dataclasses.replace(r, user_id=r.user_id.strip()) for r in records], **progress)


class StoresDuplicates(InMemoryMemory):
    def write(self, records: Any, **progress: Any) -> int:
        return super().write([dataclasses.replace(r, key=f"{r.key}-{id(r)}") for r in records], **progress)


class ProgressFirst(InMemoryMemory):
    def write(self, records: Any, *, segment: str = "", offset: int = 0) -> int:
        super().write([], segment=segment, offset=offset)
        return super().write(records)


class ForgetsEveryNamespace(InMemoryMemory):
    def forget_user(self, user_id: str, namespaces: Any = None) -> tuple[int, int]:
        return super().forget_user(user_id, None if namespaces else namespaces)  # [""] as every namespace


class PerConnection(InMemoryMemory):
    def __init__(self, path: Path) -> None:
        super().__init__(path)
        self._data = MemoryData()  # forgets everything once closed


class ListsNewestFirst(InMemoryMemory):
    def memories(self, **filters: Any) -> Any:
        return reversed(list(super().memories(**filters)))


class GetsInTheOrderAsked(InMemoryMemory):
    def get(self, ids: Any) -> Any:
        found = {m.id: m for m in super().get(ids)}
        return [found[i] for i in ids if i in found]


class SpellsOutNamespaces(InMemoryMemory):
    def forget_user(self, user_id: str, namespaces: Any = None) -> tuple[int, int]:
        return super().forget_user(user_id, None if namespaces is None else set(namespaces))


class GoneWhenEmptied(InMemoryArchive):
    def exists(self) -> bool:
        return self.stats()["compactions"] > 0


class SpooledAsAFlag(InMemoryArchive):
    def stats(self) -> Any:
        return {**super().stats(), "spooled": False}


class IgnoresNamespaces(InMemoryArchive):
    def get(self, ids: Any, scope: Scope) -> Any:  # the top level's messages show in every namespace
        return super().get(ids, dataclasses.replace(scope, namespace="")) + (
            super().get(ids, scope) if scope.namespace else [])


@pytest.mark.parametrize(("broken", "test"), [
    (IgnoresChats, "test_a_search_sees_its_owner_and_chat_only"),
    (FindsNothing, "test_a_search_sees_its_owner_and_chat_only"),
    (TrimsIds, "test_a_search_sees_its_owner_and_chat_only"),
    (StoresDuplicates, "test_a_write_is_idempotent_by_key"),
    (ProgressFirst, "test_progress_is_written_with_the_rows_or_not_at_all"),
    (ForgetsEveryNamespace, "test_forget_user_takes_their_memories_and_quarantine_in_the_namespaces_asked"),
    (IgnoresNamespaces, "test_scopes_see_a_session_a_users_sessions_or_everything"),
])
def test_the_contract_fails_a_backend_that_breaks_it(broken: type, test: str, tmp_path: Path) -> None:
    with pytest.raises(AssertionError):
        getattr(StorageContract(), test)(broken(tmp_path / broken.__name__))
    assert getattr(StorageContract(), test)(broken.__mro__[1](tmp_path / "correct")) is None  # the unbroken passes


def run_contract(test: str, memory: type, archive: type, path: Path) -> None:
    """Run one contract test on these store classes at ``path``, giving it the fixtures it asks for."""
    method = getattr(StorageContract(), test)
    openers = {"open_memory": lambda: memory(path), "open_archive": lambda: archive(path)}
    method(**{name: openers[name] if name in openers else openers[f"open_{name}"]()
              for name in inspect.signature(method).parameters})


@pytest.mark.parametrize(("broken", "test"), [
    (PerConnection, "test_a_store_opened_again_finds_what_was_stored"),
    (ListsNewestFirst, "test_memories_come_in_the_order_stored_and_get_by_id"),
    (GetsInTheOrderAsked, "test_memories_come_in_the_order_stored_and_get_by_id"),
    (SpellsOutNamespaces, "test_a_lone_string_is_not_a_list_of_namespaces"),
    (GoneWhenEmptied, "test_an_archive_exists_from_its_first_record_on"),
    (SpooledAsAFlag, "test_archive_stats_report_every_key_with_its_type"),
])
def test_the_contract_fails_a_backend_that_breaks_its_reads_and_reports(broken: type, test: str,
                                                                        tmp_path: Path) -> None:
    correct = broken.__mro__[1]
    stores = (broken, InMemoryArchive) if correct is InMemoryMemory else (InMemoryMemory, broken)
    with pytest.raises((AssertionError, pytest.fail.Exception)):  # a failed check, or pytest.raises unmet
        run_contract(test, *stores, tmp_path / broken.__name__)
    run_contract(test, InMemoryMemory, InMemoryArchive, tmp_path / "correct")  # the unbroken passes

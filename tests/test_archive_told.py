"""The archive is told what a compaction removed: a strategy's report is checked without reading what
it kept, a wrong report is caught with nothing lost, and a strategy that reports nothing is archived
exactly as one that does."""

from __future__ import annotations

import dataclasses
import json
import logging
import os
import re
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from hermes_ctx_plugins import CompressionResult, CompressorStrategy, SessionInfo, hookimpl, load_host
from hermes_ctx_plugins.archive.archiver import INDEX_OPEN
from hermes_ctx_plugins.compression.window import WindowStrategy
from hermes_ctx_plugins.manager import Host
from hermes_ctx_plugins.scope import from_stored
from hermes_ctx_plugins.testing import make_transcript

ALICE = SessionInfo(session_id="s-alice", user_id="alice")
#: the same transcript compacted again to compare what is archived goes to another conversation of hers: in the
#: same session it would be the same compaction made again, which the archive stores once
ALICE_AGAIN = SessionInfo(session_id="s-alice-again", user_id="alice")


class Untouchable:
    """A value nothing may read: copying it, printing it or comparing it fails the compaction's
    archive step (the host isolates that step, so its note "archived N messages" would be missing)."""

    def _refuse(self, *_: Any) -> Any:
        raise AssertionError("a message the compaction kept was copied, serialised or compared")

    __deepcopy__ = __copy__ = __reduce_ex__ = __str__ = __repr__ = __eq__ = _refuse
    __hash__ = None  # type: ignore[assignment]


class SilentWindow(WindowStrategy):
    """``window`` as a third party might ship it: its results say nothing of what it removed."""

    name = "silent-window"

    @property
    def reports_removals(self) -> bool:
        return False

    def compress(self, messages: list[dict[str, Any]], **kwargs: Any) -> CompressionResult:
        result = super().compress(messages, **kwargs)
        return dataclasses.replace(result, removed=(), removed_at=(), summary_at=None)


#: ways a strategy's report can be wrong
LIES = ["kept-reported-removed", "removal-unreported", "position-out-of-bounds", "positions-out-of-order",
        "summary-is-an-original", "fewer-positions-than-messages"]


class LyingWindow(WindowStrategy):
    """``window`` claiming to report its removals, with one thing in the report wrong (``lie``)."""

    name = "lying-window"
    lie = ""

    @property
    def reports_removals(self) -> bool:  # it overrides compress, so it vouches for its report itself
        return True

    def compress(self, messages: list[dict[str, Any]], **kwargs: Any) -> CompressionResult:
        result = super().compress(messages, **kwargs)
        at, removed = list(result.removed_at), list(result.removed)
        if self.lie == "kept-reported-removed":  # the head's first message is still there
            at, removed = [0, *at], [messages[0], *removed]
        elif self.lie == "removal-unreported":
            at, removed = at[:-1], removed[:-1]
        elif self.lie == "position-out-of-bounds":
            at[-1] = len(messages) + 3
        elif self.lie == "positions-out-of-order":
            at[0], at[1] = at[1], at[0]
            removed[0], removed[1] = removed[1], removed[0]
        elif self.lie == "summary-is-an-original":
            return dataclasses.replace(result, summary_at=0)
        elif self.lie == "fewer-positions-than-messages":
            at = at[1:]
        return dataclasses.replace(result, removed=tuple(removed), removed_at=tuple(at))


class Plugin:
    @hookimpl
    def register_compressors(self, register: Any) -> None:
        register(SilentWindow)
        register(LyingWindow)


def host_for(strategy: str) -> Host:
    return load_host({"model": {"default": "gpt-4o", "context_length": 128_000},
                      "ctx_plugins": {"compressor": strategy}}, plugins=[Plugin()])


def transcript() -> list[dict[str, Any]]:
    return make_transcript(5, turns=40, images=False)


def archived(compaction: int) -> list[tuple[int, str, Any]]:
    """``(position, role, message)`` of what one compaction archived, in order."""
    with sqlite3.connect(Path(os.environ["HERMES_HOME"]) / "ctx_archive.db") as db:
        rows = db.execute("SELECT position, role, message FROM messages WHERE compaction_id = ? ORDER BY id",
                          (compaction,)).fetchall()
    db.close()
    return [(position, from_stored(role), json.loads(from_stored(message))) for position, role, message in rows]


def shown(messages: list[dict[str, Any]]) -> str:
    """What the model sees, but for the archive ids (each compaction in one archive gets new ones)."""
    return re.sub(r"archive ids \d+-\d+|ctx_expand\(id=\d+\)", "<ids>", json.dumps(messages))


def index_carriers(messages: list[dict[str, Any]]) -> list[int]:
    return [i for i, m in enumerate(messages) if INDEX_OPEN in str(m.get("content"))]


@pytest.mark.parametrize("strategy", ["window", "prune", "summarize", "pipeline"])
def test_what_a_compaction_kept_is_never_copied_serialised_or_compared(strategy: str) -> None:
    plain = host_for(strategy).compress(transcript(), session=ALICE, force=True)
    assert plain.compressed and any("archived" in note for note in plain.notes)
    archived_first = archived(1)
    gone = {position for position, _, _ in archived_first}

    messages = transcript()
    for position, message in enumerate(messages):
        if position not in gone:  # what the strategy keeps carries a value nothing may touch
            message["_trace"] = Untouchable()
    result = host_for(strategy).compress(messages, session=ALICE_AGAIN, force=True)

    assert f"archived {len(gone)} messages" in result.notes  # the archive step ran to its end
    assert archived(2) == archived_first  # and archived exactly what it archives without the traps
    kept = [m for m in result.messages if "_trace" in m]
    assert len(kept) == len(messages) - len(gone)  # the owner of the conversation still has them all


def test_a_strategy_that_reports_nothing_is_archived_like_one_that_does() -> None:
    told = host_for("window").compress(transcript(), session=ALICE, force=True)
    silent = host_for("silent-window").compress(transcript(), session=ALICE_AGAIN, force=True)

    assert archived(2) == archived(1) and archived(1)
    assert shown(silent.messages) == shown(told.messages)  # the index rides on the same marker
    assert len(index_carriers(told.messages)) == 1


def test_a_strategy_that_reports_nothing_and_edits_in_place_is_archived_as_it_was() -> None:
    class Editing(SilentWindow):
        name = "editing-window"

        def compress(self, messages: list[dict[str, Any]], **kwargs: Any) -> CompressionResult:
            result = super().compress(messages, **kwargs)
            result.messages[-1]["content"] = "(edited in place)"
            return result

    class EditingPlugin:
        @hookimpl
        def register_compressors(self, register: Any) -> None:
            register(Editing)

    messages = transcript()
    last = dict(messages[-1])
    host = load_host({"model": {"default": "gpt-4o", "context_length": 128_000},
                      "ctx_plugins": {"compressor": "editing-window"}}, plugins=[EditingPlugin()])
    result = host.compress(messages, session=ALICE, force=True)

    assert result.compressed and result.messages[-1]["content"] == "(edited in place)"
    positions = [(position, message) for position, _, message in archived(1)]
    assert (len(messages) - 1, last) in positions  # the original, as it was before the edit


@pytest.mark.parametrize("lie", LIES)
def test_a_wrong_report_is_caught_and_nothing_is_lost(lie: str, caplog: pytest.LogCaptureFixture,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    honest = host_for("window").compress(transcript(), session=ALICE, force=True)
    monkeypatch.setattr(LyingWindow, "lie", lie)

    with caplog.at_level(logging.ERROR, logger="hermes_ctx_plugins"):
        lying = host_for("lying-window").compress(transcript(), session=ALICE_AGAIN, force=True)

    [error] = [r.getMessage() for r in caplog.records if r.levelno == logging.ERROR]
    assert "'lying-window' reported its removals wrongly" in error and "nothing is lost" in error
    assert archived(2) == archived(1) and archived(1)  # every original the honest window archives
    assert shown(lying.messages) == shown(honest.messages)


def test_an_honest_report_logs_no_error(caplog: pytest.LogCaptureFixture) -> None:
    """The check above is not simply always failing."""
    with caplog.at_level(logging.ERROR, logger="hermes_ctx_plugins"):
        result = host_for("lying-window").compress(transcript(), session=ALICE, force=True)
    assert result.compressed and not [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert len(index_carriers(result.messages)) == 1 and archived(1)


def test_a_subclass_that_overrides_compress_and_edits_in_place_is_archived_as_it_was() -> None:
    """A built-in's ``reports_removals`` vouches for the built-in's ``compress``, not for a subclass
    that rewrites it: the host checks such a strategy against a copy instead of believing it."""
    class Annotating(WindowStrategy):
        name = "annotating-window"

        def compress(self, messages: list[dict[str, Any]], **kwargs: Any) -> CompressionResult:
            result = super().compress(messages, **kwargs)
            result.messages[-1]["content"] = "(edited in place)"
            return result

    class AnnotatingPlugin:
        @hookimpl
        def register_compressors(self, register: Any) -> None:
            register(Annotating)

    messages = transcript()
    last = json.loads(json.dumps(messages[-1]))
    host = load_host({"model": {"default": "gpt-4o", "context_length": 128_000},
                      "ctx_plugins": {"compressor": "annotating-window"}}, plugins=[AnnotatingPlugin()])
    result = host.compress(messages, session=ALICE, force=True)

    assert result.compressed and result.messages[-1]["content"] == "(edited in place)"
    assert (len(messages) - 1, last) in [(position, message) for position, _, message in archived(1)]


def test_a_nested_value_edited_in_place_is_archived_as_it_was() -> None:
    class NestedEdit(SilentWindow):
        name = "nested-edit-window"

        def compress(self, messages: list[dict[str, Any]], **kwargs: Any) -> CompressionResult:
            result = super().compress(messages, **kwargs)
            calls = next(m for m in result.messages if m.get("tool_calls"))
            calls["tool_calls"][0]["function"]["arguments"] = "{}"
            return result

    class NestedPlugin:
        @hookimpl
        def register_compressors(self, register: Any) -> None:
            register(NestedEdit)

    messages = transcript()
    originals = json.loads(json.dumps(messages))
    host = load_host({"model": {"default": "gpt-4o", "context_length": 128_000},
                      "ctx_plugins": {"compressor": "nested-edit-window"}}, plugins=[NestedPlugin()])
    result = host.compress(messages, session=ALICE, force=True)

    assert messages == originals  # another plugin's strategy works on a copy: hermes' history is untouched
    edited = next(i for i, m in enumerate(result.messages) if m.get("tool_calls")
                  and m["tool_calls"][0]["function"]["arguments"] == "{}")
    original = next(i for i, m in enumerate(originals) if m.get("tool_calls")
                    and m["tool_calls"][0]["id"] == result.messages[edited]["tool_calls"][0]["id"])
    assert result.compressed and originals[original]["tool_calls"][0]["function"]["arguments"] != "{}"
    assert (original, originals[original]) in [(position, message) for position, _, message in archived(1)]


def test_a_report_of_the_wrong_type_is_worked_out_and_never_suspends_the_archive(
    caplog: pytest.LogCaptureFixture,
) -> None:
    class NoneReport(LyingWindow):
        name = "none-report-window"

        @property
        def reports_removals(self) -> bool:
            return True

        def compress(self, messages: list[dict[str, Any]], **kwargs: Any) -> CompressionResult:
            result = super().compress(messages, **kwargs)
            return dataclasses.replace(result, removed_at=None)

    class NonePlugin:
        @hookimpl
        def register_compressors(self, register: Any) -> None:
            register(NoneReport)

    honest = host_for("window").compress(transcript(), session=ALICE, force=True)
    host = load_host({"model": {"default": "gpt-4o", "context_length": 128_000},
                      "ctx_plugins": {"compressor": "none-report-window"}}, plugins=[NonePlugin()])
    with caplog.at_level(logging.ERROR, logger="hermes_ctx_plugins"):
        for n in range(host.config.plugins.failure_threshold + 1):
            host.compress(transcript(), session=SessionInfo(session_id=f"s-alice-{n}", user_id="alice"), force=True)

    assert "'none-report-window' reported its removals wrongly" in caplog.text
    for compaction in range(2, host.config.plugins.failure_threshold + 3):
        assert archived(compaction) == archived(1) and archived(1)  # every time, all of it
    assert honest.compressed


def test_another_plugins_strategy_keeping_equal_messages_has_them_archived_at_their_own_positions() -> None:
    """Such a strategy works on a copy (session 17); matched by content alone, the user's second "continue",
    kept, stood for the first, and the first was archived at the second's position."""
    class KeepTail(CompressorStrategy):
        name = "keep-tail"

        def compress(self, messages: list[dict[str, Any]], **kwargs: Any) -> CompressionResult:
            return CompressionResult(messages=[messages[0], *messages[-2:]], compressed=True)

    class Plugin:
        @hookimpl
        def register_compressors(self, register: Any) -> None:
            register(KeepTail)

    long = "word " * 400
    messages = [{"role": "system", "content": "You are helpful."},
                {"role": "user", "content": "Write the report on the Q3 numbers."},
                {"role": "assistant", "content": "Part 1: revenue 4.2M. " + long},
                {"role": "user", "content": "continue"},
                {"role": "assistant", "content": "Part 2: costs 3.1M. " + long},
                {"role": "user", "content": "continue"},
                {"role": "assistant", "content": "Part 3: margin 26%. " + long}]
    host = load_host({"model": {"default": "gpt-4o", "context_length": 128_000},
                      "ctx_plugins": {"compressor": "keep-tail", "disabled": ["summarize"]}}, plugins=[Plugin()])
    assert host.compress(messages, session=ALICE, force=True).compressed
    assert [(position, message["content"][:7]) for position, _, message in archived(1)] == [
        (1, "Write t"), (2, "Part 1:"), (3, "continu"), (4, "Part 2:")]

"""Running a compaction: the strategy, the default one when it fails, and the archive around it.

A strategy's failure (it raises, is suspended, returns something that is not a result or messages
that are not messages, says it changed nothing but returns other messages, claims a compaction that
does not shrink the prompt, or — one that is not built in — runs past
``ctx_plugins.compress_timeout_seconds``) is counted against it and never reaches the user; the default
strategy compacts instead. A strategy that is not built in (nor a pipeline holding one) works on a deep
copy of the conversation, so one that edits messages in place and then fails has not changed hermes'
history. What a compaction removed is archived before the compacted conversation is returned (see
:mod:`hermes_ctx_plugins.archive`).
"""

from __future__ import annotations

import copy
import dataclasses
import logging
from collections.abc import Callable
from typing import Any

from ..archive.archiver import Archiver
from ..archive.changes import Changes, Snapshot, derived, reported
from ..compression import floor
from ..compression.base import (
    RESERVE_SHARE,
    CompressionResult,
    CompressorStrategy,
    provider_count,
    reports_removals,
    shrinks,
)
from ..compression.messages import is_real_user, is_summary
from ..config import DEFAULT_COMPRESSOR, Config
from ..events import Message, SessionInfo
from ..isolation import FaultIsolator
from ..registry import Registration, Registry
from ..tokens import get_counter
from . import foreign_code, owner_key

log = logging.getLogger("hermes_ctx_plugins")


class Compaction:
    """The host's active strategy at work."""

    # what this part uses of the rest of the host
    config: Config
    isolator: FaultIsolator
    registry: Registry
    archive: Archiver | None
    compressor: CompressorStrategy | None
    _fallback: CompressorStrategy | None
    _instantiate: Callable[[Registration], Any]
    _is_enabled: Callable[[Registration], bool]
    session: Callable[[str], SessionInfo]
    scoped: Callable[[SessionInfo], SessionInfo]

    def should_compress(self, prompt_tokens: int | None = None) -> bool:
        """Whether the active strategy wants to compress now (``False`` without one)."""
        if self.compressor is None:
            return False
        return self.isolator.call(owner_key("compressor", self.compressor.name),
                                  self.compressor.should_compress, prompt_tokens, default=False, resets=False)

    def compress(self, messages: list[Message], *, session: SessionInfo | None = None,
                 **kwargs: Any) -> CompressionResult:
        """Run the active strategy; any failure leaves ``messages`` as they were."""
        if self.compressor is None or not messages:  # nothing to compact (hermes' engine does not ask either)
            return CompressionResult.unchanged(messages)
        return self.run_compression(self.compressor, messages, session=session, fallback=self._host_fallback,
                                    **kwargs)

    def _host_fallback(self) -> CompressorStrategy | None:
        if self._fallback is None:
            self._fallback = self.fallback_strategy()
        return self._fallback

    def run_compression(self, strategy: CompressorStrategy, messages: list[Message], *,
                        session: SessionInfo | None = None,
                        fallback: Callable[[], CompressorStrategy | None] | None = None,
                        prompt_floor: int | None = None, speaker: Callable[[Message], str | None] | None = None,
                        **kwargs: Any) -> CompressionResult:
        """Run ``strategy`` (the host's, or an agent's copy of it) with the archive around it.

        Whatever the strategy removes or rewrites is archived first (see :mod:`.archive`) and the
        compacted conversation carries an index of its exact identifiers. A strategy that raises, is
        suspended, returns something that is not a result, or grows the prompt while claiming to
        compress has failed (counted against it); the strategy ``fallback()`` returns (the default
        one, see :meth:`fallback_strategy`) then runs instead, and without one ``messages`` stay as
        they were. ``prompt_floor``: the prompt's part outside ``messages`` (system prompt, tool schemas),
        when the caller knows it (hermes' engine counts it off its agent); else it is measured
        (:func:`.compression.floor.measure`). ``speaker``: who sent a user message, in a session several users
        speak in; each archived message is then its turn's speaker's (see :func:`turn_owners`).
        """
        # taken before any strategy runs: one that edits the messages in place cannot hide the originals
        snapshot = self._snapshot(strategy, messages)
        result, given = self._attempt(strategy, messages, kwargs, prompt_floor)
        if given is not messages and self.archive is not None and not reports_removals(strategy):
            # another plugin's strategy worked on ``given``, a copy: matched by identity there, what it kept as
            # it was counts where it was (content alone cannot tell two equal messages apart)
            snapshot = Snapshot(given, copies=messages)
        substitute = fallback() if result is None and fallback is not None else None
        if substitute is not None and substitute is not strategy:
            log.warning("compressor %r failed; the default strategy %r compacts instead", strategy.name,
                        substitute.name)
            snapshot = snapshot or self._snapshot(substitute, messages)
            strategy, (result, given) = substitute, self._attempt(substitute, messages, kwargs, prompt_floor)
        if result is None:
            return CompressionResult.unchanged(messages)
        if self.archive is not None and result.compressed:
            if session is None:
                session = SessionInfo(session_id="")
            elif not session.user_id:
                session = self.session(session.session_id)
            result = self.isolator.call("archive", self._archive, self.archive, strategy, messages, given,
                                        snapshot, result, self.scoped(session), speaker, default=result)
        return result

    def _snapshot(self, strategy: CompressorStrategy, messages: list[Message]) -> Snapshot | None:
        """What the archive needs kept before ``strategy`` runs: nothing when it reports its removals
        (or nothing is archived), else a copy of the conversation (see :mod:`.archive.changes`); for a
        strategy that is not ours, which works on a copy, nothing yet (the copy is the snapshot)."""
        if self.archive is None or reports_removals(strategy) or foreign(strategy):  # foreign: see run_compression
            return None
        return Snapshot(messages)

    def _archive(self, archive: Archiver, strategy: CompressorStrategy, messages: list[Message],
                 given: list[Message], snapshot: Snapshot | None, result: CompressionResult,
                 session: SessionInfo, speaker: Callable[[Message], str | None] | None = None) -> CompressionResult:
        """``result`` with what it removed archived and the anchor index attached. ``given``: what the
        strategy worked on (``messages``, or a copy of them for another plugin's strategy)."""
        changes: Changes
        if snapshot is not None:
            changes = snapshot.changes(result)
        else:
            try:
                changes = reported(given, result)
            except Exception as exc:  # a refuted report, or one of the wrong types (removed_at=None)
                log.error("compressor %r reported its removals wrongly (%s); the archive works them out "
                          "itself, nothing is lost", strategy.name, exc)
                changes = derived(given, result)
            if given is not messages:  # the originals, as they were, in place of the strategy's copies
                changes = dataclasses.replace(changes, removed=[(p, messages[p]) for p, _ in changes.removed])
        ceiling = int((strategy.threshold_tokens or result.tokens_before) * RESERVE_SHARE)
        counter = get_counter(strategy.model)
        owners = None if speaker is None else turn_owners(messages, speaker)
        return archive.apply(changes, result, session=session, strategy=strategy.name, counter=counter,
                             ceiling=ceiling, smaller=lambda tokens: shrinks(messages, tokens, counter),
                             owner_at=None if owners is None else owners.__getitem__)

    def _attempt(self, strategy: CompressorStrategy, messages: list[Message], kwargs: dict[str, Any],
                 prompt_floor: int | None = None) -> tuple[CompressionResult | None, list[Message]]:
        """One strategy's result, checked, ``None`` when it failed (the failure is counted); and what the
        strategy worked on: ``messages`` itself, or for another plugin's strategy a deep copy of them."""
        owner = owner_key("compressor", strategy.name)
        count_before = strategy.compression_count
        if self.archive is not None:
            strategy.reserved_tokens = self.archive.settings.index_max_tokens  # room for the anchor index
        strategy.floor_tokens = prompt_floor if prompt_floor is not None else self._floor(
            strategy, messages, kwargs.get("current_tokens"))
        failed = CompressionResult.unchanged(messages)
        # Ours get their own list (they never edit a message); another plugin's a deep copy, so one that
        # edits messages in place and then fails has not changed hermes' history, and it is bounded in time.
        others = foreign(strategy)
        given = copy.deepcopy(messages) if others else messages
        # resets=False: a call that returned is no success yet -- its result is checked first (a strategy whose
        # results were refused each time was never suspended: the call's return cleared the count; a README audit)
        result = self.isolator.call(owner, strategy.compress, given if others else list(messages), default=failed,
                                    **kwargs, resets=False,
                                    timeout=self.config.plugins.compress_timeout_seconds if others else None)
        if result is failed:
            return None, given
        wrong = _wrong_result(result, messages)
        if wrong:
            self.isolator.record_failure(owner, TypeError(f"compress returned {wrong}; the result was discarded"))
            return None, given
        if not result.compressed:  # the conversation as it was, whatever list came back
            self.isolator.record_success(owner)
            return (result if result.messages is messages else dataclasses.replace(result, messages=messages)), given
        counter = get_counter(strategy.model)
        try:
            after = counter.count_messages(result.messages)
            grows = not shrinks(messages, after, counter)  # counted by us, not taken on trust
        except Exception as exc:  # values no prompt can hold (tool_calls that are not a list ...)
            self.isolator.record_failure(owner, TypeError(f"compress returned messages that cannot be counted "
                                                          f"({type(exc).__name__}: {exc}); the result was discarded"))
            return None, given
        if grows:
            self.isolator.record_failure(owner, ValueError(
                f"compress reported a compaction that does not shrink the prompt ({after:,} tokens after); "
                "the result was discarded"))
            return None, given
        self.isolator.record_success(owner)
        # our counts, not the claim: a strategy leaving tokens_before 0 (the scaffold's, PLUGINS.md's) had /ctx show
        # "0 -> 35,865 tokens"; one claiming 9,999,999 "100% saved" (a review). Ours count exactly (checked()).
        before = counter.count_messages(messages) if others or result.tokens_before <= after else result.tokens_before
        if (before, after) != (result.tokens_before, result.tokens_after):
            result = dataclasses.replace(result, tokens_before=before, tokens_after=after)
        if strategy.compression_count == count_before:
            strategy.compression_count += 1  # for strategies that do not count themselves
        strategy.verify_pending = True  # the provider's next count says whether it cleared the trigger
        strategy.provider_prompt_tokens = 0  # it counted messages that are gone
        return result, given

    def _floor(self, strategy: CompressorStrategy, messages: list[Message], current_tokens: Any) -> int:
        """The prompt's part outside ``messages`` (:func:`.compression.floor.measure`); 0 when unknown, or
        when measuring fails (a value it cannot read: the budgets are then the trigger's alone)."""
        try:
            measured = floor.measure(messages, counter=get_counter(strategy.model),
                                     last_prompt_tokens=provider_count(strategy),
                                     current_tokens=int(current_tokens) if current_tokens else None)
        except Exception as exc:  # a budget, never a reason to fail a compaction
            log.warning("could not measure the prompt outside the messages (%s: %s); budgets use the trigger "
                        "alone", type(exc).__name__, exc)
            return 0
        return measured or 0

    def fallback_strategy(self) -> CompressorStrategy | None:
        """A fresh instance of the default strategy, for when the selected one fails (``None`` when the
        selected one is the default, or it is not installed)."""
        if self.compressor is None or self.compressor.name == DEFAULT_COMPRESSOR \
                or ("compressor", DEFAULT_COMPRESSOR) not in self.registry:
            return None
        entry = self.registry.get("compressor", DEFAULT_COMPRESSOR)
        if not self._is_enabled(entry):  # the operator switched it off: no stand-in then
            return None
        strategy: CompressorStrategy = self._instantiate(entry)
        return strategy


def foreign(strategy: CompressorStrategy) -> bool:
    """Whether ``strategy`` runs code that is not this package's: another plugin's strategy (a subclass of
    a built-in one too), or a pipeline with such a step."""
    if foreign_code(strategy):
        return True
    return any(foreign(step) for step in getattr(strategy, "steps", ()) or ())


def _wrong_result(result: object, messages: list[Message]) -> str:
    """What is wrong with what ``compress`` returned for ``messages``, or ``""``: not a result, no messages,
    a message that is not a dict with a string role, or "unchanged" with other messages than those."""
    if not isinstance(result, CompressionResult) or not isinstance(result.messages, list) or not result.messages:
        return f"{_shown(result)}; expected a CompressionResult with messages"
    for index, message in enumerate(result.messages):
        if not isinstance(message, dict) or not isinstance(message.get("role"), str):
            return f"message {index} as {_shown(message)}; expected a dict with a string 'role'"
    if not result.compressed and result.messages is not messages and (
            len(result.messages) != len(messages)
            or any(a is not b and a != b for a, b in zip(result.messages, messages, strict=True))):
        return (f"'unchanged' with other messages ({len(result.messages)} for {len(messages)}); a strategy that "
                "changes the conversation says compressed=True")
    return ""


def _shown(value: object) -> str:
    """``value`` for an error message, even when its ``repr`` raises (a lazy proxy's)."""
    try:
        shown = repr(value)
    except Exception:  # whatever a foreign object does
        return f"<{type(value).__name__}>"
    return shown if len(shown) <= 120 else f"{shown[:117]}..."  # a cut said as one, not a repr ending mid-field


def turn_owners(messages: list[Message], speaker: Callable[[Message], str | None]) -> list[str]:
    """Whose turn each of ``messages`` is, in a session several users speak in: the sender of the user message
    opening it (``speaker``). A turn whose sender ``speaker`` cannot tell, a summary of earlier turns (everyone's)
    and what comes before the first user message are nobody's: the anonymous user's, which no named user's scope
    reads -- never the user compacting, who would read another's turn as theirs."""
    owners, current = [], ""
    for message in messages:
        if is_real_user(message):
            current = speaker(message) or ""
        owners.append("" if is_summary(message) else current)
    return owners

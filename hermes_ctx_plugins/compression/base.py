"""The base class every compressor strategy derives from, and what ``compress`` returns.

Over 500 lines because it is the whole contract a third-party strategy codes against (the trigger, the
budgets, the result and its checks, the model-free base) and docs/PLUGINS.md documents it as one piece.
"""

from __future__ import annotations

import abc
import copy
import dataclasses
import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from ..config import CompressionSettings, Config, plugin_options
from ..events import Message, Usage
from ..isolation import StatusEvent
from ..tokens import REPLY_PRIMING, TokenCounter
from . import floor, oversize, trigger
from .messages import call_ids, nothing_new_since_compaction, role


@dataclass(frozen=True)
class CompressionResult:
    """What a strategy did to a conversation.

    ``messages`` is the new list (the system prompt excluded, as hermes passes it). Returning the
    input list unchanged with ``compressed=False`` means "nothing to do" (or "cannot shrink it"):
    a result with ``compressed=True`` must cost fewer tokens than its input.
    """

    messages: list[Message]
    compressed: bool = True
    #: exact, except that a strategy may estimate messages its counter never saw (then ``notes`` says so)
    tokens_before: int = 0
    #: exact
    tokens_after: int = 0
    #: the original messages this compaction removed or rewrote, in their original order
    removed: tuple[Message, ...] = ()
    #: where each of ``removed`` was in the input (same order); empty when the strategy does not say
    removed_at: tuple[int, ...] = ()
    #: where in ``messages`` the new message standing for what was removed is (the summary, a marker):
    #: the archive's index rides on it. ``None``: there is none (each rewritten message stands for its
    #: original). Read only from strategies that report their removals (``reports_removals``)
    summary_at: int | None = None
    summary: str | None = None
    #: the summary model failed and ``summary`` is the static fallback built without it (a pipeline:
    #: or a step whose summary failed was skipped, and what its other steps did stands in for it)
    used_fallback: bool = False
    #: the summary model failed and the strategy left the conversation as it was: on purpose (a failure
    #: a placeholder summary would only make worse), or because its fallback would not be smaller;
    #: always with ``compressed=False``
    aborted: bool = False
    #: why the summary model failed, with ``used_fallback`` or ``aborted`` ("" otherwise)
    summary_error: str = ""
    #: how many input messages the summary (or a marker) replaced; 0 when none was inserted
    summarized: int = 0
    #: ``in_place: false``: the host should continue in a child session and keep the originals
    new_session: bool = False
    #: text for the system prompt after this compaction (empty: leave the prompt alone)
    system_note: str = ""
    notes: tuple[str, ...] = field(default=())

    @property
    def saved_ratio(self) -> float:
        """Share of the tokens this compaction saved (0 when unknown)."""
        if not self.tokens_before:
            return 0.0
        return max(0.0, (self.tokens_before - self.tokens_after) / self.tokens_before)

    @classmethod
    def unchanged(cls, messages: list[Message], tokens: int = 0, *, note: str = "",
                  aborted_by: str = "") -> CompressionResult:
        """``messages`` left as they were; ``aborted_by``: the summary failure that made the strategy
        abandon the compaction (then the result is ``aborted`` and says why)."""
        return cls(messages=messages, compressed=False, tokens_before=tokens, tokens_after=tokens,
                   notes=(note,) if note else (), aborted=bool(aborted_by), summary_error=aborted_by)

    @classmethod
    def replacing(cls, before: Sequence[Message], after: list[Message], *, summary_message: Message | None = None,
                  **fields: Any) -> CompressionResult:
        """A compaction of ``before`` into ``after`` that kept every message it left alone as the same
        object (as every built-in strategy does): ``removed`` and ``removed_at`` are the originals that
        are not in ``after``; ``summary_at`` is where ``summary_message`` (the new message standing for
        what was removed) ended up, or without one where :func:`first_plain` finds a new message that
        can carry the archive's index. One pass over each list, comparing identities."""
        kept = {id(message) for message in after}
        gone = [(position, message) for position, message in enumerate(before) if id(message) not in kept]
        if summary_message is not None:
            summary_at = next((i for i, message in enumerate(after) if message is summary_message), None)
        else:
            originals = {id(message) for message in before}
            summary_at = first_plain(after, [i for i, message in enumerate(after) if id(message) not in originals])
        return cls(messages=after, removed=tuple(m for _, m in gone), removed_at=tuple(p for p, _ in gone),
                   summary_at=summary_at, **fields)


@dataclass(frozen=True)
class Cooldown:
    """A summary-failure cool-down in effect: automatic compaction waits it out (a manual
    ``/compress`` does not)."""

    remaining_seconds: float
    #: the failure that started it
    error: str = ""


#: why a compaction that finds nothing new since its own last summary or marker does nothing
NOTHING_NEW = "nothing new since the last compaction"


#: the largest share of a strategy's budget the host may reserve for what it adds afterwards
RESERVE_SHARE = 0.15


def size_before(counter: TokenCounter, messages: Sequence[Message]) -> tuple[int, str]:
    """A compaction's ``tokens_before``, and what to add to its note when part of it is an estimate:
    messages the counter never saw are weighed by characters (see
    :meth:`TokenCounter.estimate_messages`), so that a compaction costs what it keeps, not what it
    throws away. Exact for a live session, where every message was counted as it arrived; estimated
    for a history nobody counted (a resumed one). :meth:`CompressorStrategy.checked` counts exactly
    after all when the estimate would not even exceed what is left."""
    tokens, unseen = counter.estimate_messages(messages)
    return tokens, f"; size before estimated for {unseen} never-counted messages" if unseen else ""


#: what a note says of a size before that is partly estimated (see :func:`size_before`)
ESTIMATED_NOTE = re.compile(r"(?:; )?size before estimated for \d+ never-counted messages")


def _exact_note(note: str) -> str:
    return ESTIMATED_NOTE.sub("", note)


def shrinks(before: Sequence[Message], tokens_after: int, counter: TokenCounter) -> bool:
    """Whether the prompt ``before`` costs more than ``tokens_after`` tokens, exactly.

    Counts only as far as it must: lower bounds first (:meth:`TokenCounter.at_least`: the remembered
    count, else the length, else a word count), which settle it whenever a compaction dropped or shrank
    bulky messages nobody tokenised (a resumed session); exact counts, from the recent end, only when
    they do not.
    """
    total = REPLY_PRIMING
    for message in reversed(before):  # remembered counts and lengths alone first (``enough=0``: no word read)
        total += counter.at_least(message, enough=0)
        if total > tokens_after:
            return True
    total = REPLY_PRIMING
    for message in reversed(before):  # the recent end is the part already counted (memoised)
        total += counter.at_least(message, enough=tokens_after - total + 1)
        if total > tokens_after:
            return True
    total = REPLY_PRIMING
    for message in reversed(before):
        total += counter.count_message(message)
        if total > tokens_after:
            return True
    return False


def first_plain(messages: Sequence[Message], indexes: Sequence[int]) -> int | None:
    """The first of ``indexes`` where ``messages`` holds a plain user or assistant message, tied to no
    tool call: a rewritten one (cut to fit the window), or a third party's own summary or marker. The
    archive's index can ride on it (on a tool result or a call it would stand for that one message)."""
    return next((i for i in indexes if role(messages[i]) in ("user", "assistant")
                 and not messages[i].get("tool_call_id") and not call_ids(messages[i])), None)


#: how near the model's window a prompt must be for no pause to hold (see :meth:`CompressorStrategy.at_window`)
WINDOW_MARGIN = 0.05


#: after an automatic compaction that changed nothing, the next waits for the prompt to grow by this share of
#: the trigger (hermes asks up to four times a turn: each a full pass over a history that cannot shrink)
FUTILE_GROWTH = 0.05


class CompressorStrategy(abc.ABC):
    """A way of shrinking a conversation that nears the model's context window.

    Subclasses set ``name`` (what users write in ``ctx_plugins.compressor``) and implement
    :meth:`compress`. Everything else has a working default: the trigger compares the prompt size
    with ``threshold_tokens``, derived from the model's window and ``compression.threshold``.

    The host builds one instance per agent and may deep-copy it (hermes does), so keep state in
    plain attributes.
    """

    #: the strategy's name in config; letters, digits, ``-``, ``_`` and ``.``
    name: ClassVar[str] = ""
    #: one line shown by ``hermes-ctx plugins``
    description: ClassVar[str] = ""
    #: a frozen dataclass for ``ctx_plugins.options.<name>``, or ``None`` for a plain mapping
    options_class: ClassVar[type[Any] | None] = None
    #: attributes shared, not copied, when hermes deep-copies the engine (callbacks, clients)
    shared_on_copy: ClassVar[tuple[str, ...]] = ("status_callback", "config")
    #: the prompt size at which the last automatic compaction changed nothing (None: it did, or none ran), and
    #: the one the last :meth:`should_compress` said yes to, which such a compaction is measured from (the host's
    #: ``current_tokens`` may be another estimate: hermes' engine corrects hermes' own)
    _futile_at: int | None = None
    _asked_at: int | None = None

    def __init__(
        self,
        options: Any = None,
        *,
        settings: CompressionSettings | None = None,
        model: str = "",
        context_length: int | None = None,
        max_tokens: int | None = None,
        status_callback: Callable[[StatusEvent], None] | None = None,
        config: Config | None = None,
    ) -> None:
        #: the whole config, for strategies that need more than ``compression:`` (read-only)
        self.config = config or Config()
        self.options = plugin_options(type(self).name, type(self).options_class, options)
        self.settings = settings or self.config.compression
        self.model = model
        self.context_length = context_length
        self.max_tokens = max_tokens
        self.base_url = ""
        self.api_key = ""
        self.provider = ""
        self.status_callback = status_callback
        self.last_prompt_tokens = 0
        self.compression_count = 0
        #: tokens the host adds after a compaction (the archive's anchor index): see :meth:`leave_room`
        self.reserved_tokens = 0
        #: tokens of the prompt outside the messages (system prompt, tool schemas, memory), measured by the
        #: host before each compaction: see :meth:`within_floor`
        self.floor_tokens = 0
        #: a compaction ran and the provider has not counted a prompt since (see :meth:`update_from_response`)
        self.verify_pending = False
        #: the provider's own count of the last request, as :meth:`update_from_response` got it (0: none since
        #: the last compaction or the conversation's start). ``last_prompt_tokens`` is not that: hermes writes it
        #: too (its rough estimate of the next request before a preflight compaction, -1 after one)
        self.provider_prompt_tokens = 0
        #: whether the user was told about the current pause (see :meth:`paused`)
        self._pause_reported = False

    def within_floor(self, budget: int) -> int:
        """``budget`` (tokens of messages a compaction keeps), within the room the prompt's floor leaves
        under the trigger (:func:`.floor.fit`)."""
        return floor.fit(budget, threshold=self.threshold_tokens, floor=self.floor_tokens)

    def leave_room(self, budget: int) -> int:
        """``budget`` less the host's reservation (at most ``RESERVE_SHARE`` of it), at least 1."""
        reserved = min(getattr(self, "reserved_tokens", 0), int(budget * RESERVE_SHARE))
        return max(1, budget - reserved)

    def fit_oversized(self, messages: list[Message], counter: TokenCounter, *,
                      total: int | None = None) -> tuple[list[Message], int]:
        """``messages`` with oversized messages cut until the prompt leaves a quarter of the trigger
        free (see :mod:`.oversize`), and how many were cut; unchanged when nothing bounds it. ``total``:
        ``counter.count_messages(messages)``, when the caller has it. The prompt is the messages and the
        floor (:attr:`floor_tokens`): both the limit and the window are what the floor leaves of them."""
        threshold = self.threshold_tokens
        if not threshold:
            return messages, 0
        floor_tokens = max(0, self.floor_tokens)
        window = self._input_window
        window = max(1, window - floor_tokens) if window else None
        usual = oversize.limit_tokens(threshold)
        limit = max(1, usual - floor_tokens)
        return oversize.fit(messages, counter=counter, limit=self.leave_room(limit), above=limit,
                            window=window, archived=self.config.plugins.archive.enabled, total=total,
                            keep=oversize.floor_tokens(usual))

    def checked(self, messages: list[Message], result: CompressionResult,
                counter: TokenCounter, *, counted: bool = False) -> CompressionResult:
        """``result``, unless it claims a compaction that does not make the prompt smaller: then
        "unchanged", saying so. ``tokens_after`` is recounted, not trusted, unless ``counted`` says the
        caller has just counted ``result.messages`` exactly with ``counter``."""
        if not result.compressed:
            return result
        tokens_after = result.tokens_after if counted else counter.count_messages(result.messages)
        if not shrinks(messages, tokens_after, counter):
            return CompressionResult.unchanged(messages, counter.count_messages(messages), note=(
                f"the result would not be smaller than the input ({tokens_after:,} tokens)"))
        if result.tokens_before <= tokens_after:  # an estimate below the truth: count exactly after all
            return dataclasses.replace(result, tokens_after=tokens_after,
                                       tokens_before=counter.count_messages(messages),
                                       notes=tuple(n for n in map(_exact_note, result.notes) if n))
        return dataclasses.replace(result, tokens_after=tokens_after)

    def __deepcopy__(self, memo: dict[int, Any]) -> CompressorStrategy:
        clone = object.__new__(type(self))
        memo[id(self)] = clone
        for key, value in self.__dict__.items():
            shared = key in type(self).shared_on_copy
            clone.__dict__[key] = value if shared else copy.deepcopy(value, memo)
        return clone

    # -- what the host tells the strategy
    def attach(self, *, resolve_strategy: Callable[[str], CompressorStrategy]) -> None:  # noqa: B027 - no-op default
        """Called by the host once, right after it builds the strategy and tells it the model.

        :param resolve_strategy: builds the registered strategy of a name the way the host builds its
            own (its options, this model, the status callback); raises ``UnknownPluginError``.

        The default ignores it; a strategy made of others (``pipeline``) keeps it to build its steps.
        """

    @property
    def reports_removals(self) -> bool:
        """Whether :meth:`compress` never edits the messages it is given (it makes new dicts) and every
        compacted result says what it removed and where its summary is (``removed``, ``removed_at``,
        ``summary_at``; :meth:`CompressionResult.replacing` fills them).

        The host archives what a compaction removed. A strategy that reports is checked in one pass
        that compares identities and copies nothing (a report the check refutes is logged as an error
        and worked out instead, so nothing is lost). For one that does not (the default), the host keeps
        a deep copy of the conversation before it runs and works out afterwards what went: a message
        edited in place is archived as it was (at a cost that grows with the history).

        The host believes it only from the class that says it: a subclass that overrides
        ``compress`` or ``compact`` below that class is treated as not reporting until it says so
        itself (see :func:`reports_removals`).
        """
        return False

    def update_model(
        self,
        model: str,
        context_length: int | None,
        *,
        base_url: str = "",
        api_key: str = "",
        provider: str = "",
        max_tokens: int | None = None,
    ) -> None:
        """Called when the host switches model (window size, endpoint, output reserve)."""
        self.model = model
        self.context_length = context_length
        self.base_url = base_url or self.base_url
        self.api_key = api_key or self.api_key
        self.provider = provider or self.provider
        if max_tokens is not None:
            self.max_tokens = max_tokens

    def get_tool_schemas(self) -> list[dict[str, Any]]:
        """OpenAI function schemas of tools this strategy offers the model (none by default)."""
        return []

    def handle_tool_call(self, name: str, args: dict[str, Any]) -> str:
        """Run one of this strategy's tools; returns the result text (JSON by convention)."""
        return json.dumps({"error": f"strategy {self.name!r} has no tool named {name!r}"})

    def close(self) -> None:  # noqa: B027 - an optional hook, deliberately a no-op by default
        """Release connections or files; called when the host shuts down."""

    def reset_session(self) -> None:
        """Forget what belongs to one conversation (cool-downs, blocks, pending modes): the host
        starts a new one (hermes' ``/new``, ``/reset``, ``/resume``). Counters are kept."""
        self._pause_reported = False
        self.verify_pending = False  # a count in the next conversation says nothing of this one's compaction
        self.provider_prompt_tokens = 0
        self._futile_at = self._asked_at = None  # a yes to the last conversation measures nothing of the next

    def failure_cooldown(self) -> Cooldown | None:
        """The summary-failure cool-down automatic compaction is waiting out now, or ``None``.

        The host asks before it compacts on its own (hermes' preflight); strategies without a summary
        model have none.
        """
        return None

    def pause_reason(self) -> str | None:
        """Why automatic compaction must not run now (a cool-down, a block after ineffective
        compactions), or ``None`` when it may. :meth:`should_compress` says no while there is one."""
        return None

    def nothing_to_compress(self, messages: list[Message]) -> str | None:
        """Why even a forced compaction (a manual ``/compress``) could not change ``messages``, or
        ``None`` when it may. No model call: the host asks before a manual ``/compress`` and tells the
        user "nothing to compress yet" when there is a reason. By default only an empty conversation,
        or one with nothing new since this strategy's last summary or marker, has one."""
        if not messages:
            return "the conversation is empty"
        return NOTHING_NEW if nothing_new_since_compaction(messages) else None

    def emit(self, kind: str, message: str) -> None:
        """Report a status change to the user (its own channel, never model output)."""
        if self.status_callback is not None:
            self.status_callback(StatusEvent(kind=kind, source=f"compressor:{self.name}", message=message))

    def update_from_response(self, usage: Usage) -> None:
        """Called after each API response with the provider's exact token usage. The first count after
        a compaction says whether it cleared the trigger (:meth:`compaction_cleared`): only the
        provider's count of the whole prompt can, the floor included."""
        if usage.prompt_tokens:
            self.last_prompt_tokens = usage.prompt_tokens
            if usage.prompt_tokens > 0:
                self.provider_prompt_tokens = usage.prompt_tokens
            if self.verify_pending:
                self.verify_pending = False
                threshold = self.threshold_tokens
                self.compaction_cleared(not threshold or usage.prompt_tokens < threshold, usage.prompt_tokens)

    def compaction_cleared(self, cleared: bool, prompt_tokens: int) -> None:
        """What the provider's first count after a compaction said: ``cleared`` unless the prompt is still at
        the trigger (``prompt_tokens``). Strategies that can stop trying do so here; by default nothing."""
        return None

    # -- the trigger
    @property
    def threshold_percent(self) -> float:
        """``compression.threshold``, overridden by the longest matching ``model_thresholds`` key."""
        return trigger.threshold_percent(self.model, self.settings.threshold,
                                         self.settings.model_thresholds)[0]

    @property
    def threshold_tokens(self) -> int | None:
        """The prompt size that triggers compression, ``None`` when nothing bounds it."""
        percent, explicit = trigger.threshold_percent(self.model, self.settings.threshold,
                                                      self.settings.model_thresholds)
        return trigger.threshold_tokens(
            self.context_length, percent=percent, explicit_percent=explicit,
            max_tokens=self.max_tokens, absolute=self.settings.threshold_tokens,
            cap=self.settings.threshold_tokens_cap,
        )

    def should_compress(self, prompt_tokens: int | None = None) -> bool:
        """Whether the conversation should be compressed before the next request: the prompt reached
        the trigger and automatic compaction is not paused (:meth:`pause_reason`).

        :param prompt_tokens: the current prompt size; defaults to the last response's usage.
        """
        tokens = self.last_prompt_tokens if prompt_tokens is None else prompt_tokens
        return self.over_threshold(prompt_tokens) and (self.pressed(tokens) or not self.paused())

    def pressed(self, tokens: int) -> bool:
        """Whether the pause in effect gives way to a prompt of ``tokens``: it only holds back compactions that the
        prompt's floor kept over the trigger (:meth:`pause_yields`), and the prompt is near the window
        (:meth:`at_window`)."""
        return self.pause_yields() and self.at_window(tokens)

    def pause_yields(self) -> bool:
        """Whether the pause in effect (if any) is only for compactions that left the prompt over the trigger (not a
        summary failure's cool-down, nor compactions that saved nothing or fell back): see :meth:`pressed`."""
        return False

    def at_window(self, tokens: int) -> bool:
        """Whether a prompt of ``tokens`` is within :data:`WINDOW_MARGIN` of the model's window (less the output
        reserve): a pause for compactions the prompt's floor kept over the trigger does not hold then (see
        :meth:`pressed`) -- the request would be refused, and hermes compacts after the refusal anyway (its overflow
        handling calls ``compress`` whatever ``should_compress`` says); such a pause let the prompt grow past the
        window every few turns."""
        window = self._input_window
        return bool(window and tokens > 0 and tokens >= int(window * (1 - WINDOW_MARGIN)))

    @property
    def _input_window(self) -> int | None:
        """The most tokens one request can carry: the window less the output reserve (``None`` unknown)."""
        window = self.context_length
        if not window:
            return None
        return window - (self.max_tokens if self.max_tokens and self.max_tokens < window else 0)

    def _futile(self, tokens: int) -> bool:
        """Right after an automatic compaction that changed nothing, until the prompt of ``tokens`` has grown by
        :data:`FUTILE_GROWTH` of the trigger (hermes asks up to three times before a request, and each time
        would plan the same nothing)."""
        futile = self._futile_at
        return futile is not None and tokens < futile + int((self.threshold_tokens or 0) * FUTILE_GROWTH)

    def _record_futile(self, size: int, result: CompressionResult, said: str) -> None:
        """An automatic compaction of a prompt of ``size`` changed nothing (``result``): the next waits for growth
        (:meth:`_futile`), and the user is told ``said`` once -- not for hermes' second, empty pass right after a
        compaction."""
        if self._futile_at is None and result.notes != (NOTHING_NEW,):
            self.emit("blocked", said)
        self._futile_at = size

    def over_threshold(self, prompt_tokens: int | None = None) -> bool:
        """Whether compression is on and the prompt (default: the last response's) reached the trigger."""
        threshold = self.threshold_tokens
        tokens = self.last_prompt_tokens if prompt_tokens is None else prompt_tokens
        return bool(self.settings.enabled and threshold and tokens >= threshold)

    def paused(self) -> bool:
        """Whether automatic compaction is paused now; the first time in a pause, the user is told
        why (and that ``/compress`` still works)."""
        reason = self.pause_reason()
        if reason is None:
            self._pause_reported = False
            return False
        if not self._pause_reported:
            self._pause_reported = True
            until = " until it nears the model's window" if self.pause_yields() else ""  # only that pause gives way
            self.emit("blocked", f"automatic compression paused: {reason}; the conversation continues "
                                 f"uncompressed{until} (use /compress to force it)")
        return True

    @abc.abstractmethod
    def compress(
        self,
        messages: list[Message],
        *,
        current_tokens: int | None = None,
        focus_topic: str | None = None,
        force: bool = False,
        memory_context: str = "",
    ) -> CompressionResult:
        """Shrink ``messages`` (the system prompt excluded) and say what was done.

        Mirrors hermes' ``ContextEngine.compress``. Must not mutate ``messages``, and must not
        claim ``compressed=True`` for a result that is not smaller (:meth:`checked` tells);
        :meth:`fit_oversized` cuts messages too big for any compaction to make room for.

        :param current_tokens: the prompt size if the host knows it.
        :param focus_topic: what the user asked to keep (``/compress <topic>``).
        :param force: a manual ``/compress``: compress even if the trigger says no, and whatever is
            compactable (a short conversation too: what protects the tail yields, see
            :mod:`.selection`); when nothing is, say why in ``notes`` (and in
            :meth:`nothing_to_compress`, which the host asks first).
        :param memory_context: text the memory providers want the summary to keep.
        """


class ModelFreeStrategy(CompressorStrategy):
    """A strategy that calls no model (``prune``, ``window``): its compaction is a pure function of
    the messages, so the host's "could a forced compaction change anything?" is answered by simply
    running one, unrecorded. Subclasses implement :meth:`compact` (with
    :meth:`CompressionResult.replacing`) and say ``reports_removals`` themselves."""

    @abc.abstractmethod
    def compact(self, messages: list[Message], *, force: bool) -> CompressionResult:
        """The compaction of ``messages`` (``force``: a manual ``/compress``), without side effects."""

    FUTILE_GROWTH = FUTILE_GROWTH

    def compress(self, messages: list[Message], *, current_tokens: int | None = None, focus_topic: str | None = None,
                 force: bool = False, memory_context: str = "") -> CompressionResult:
        result = self.compact(messages, force=force)
        asked, self._asked_at = self._asked_at, None
        size = asked or max(current_tokens or 0, result.tokens_before)
        if result.compressed:
            self.compression_count += 1
            self._futile_at = None
        elif not force and self.over_threshold(size):
            self._record_futile(size, result, f"{self.name} cannot shrink this conversation "
                                              f"({'; '.join(result.notes)}); automatic compaction waits until it "
                                              "has grown (use /compress, or a strategy that summarises: summarize, "
                                              "pipeline)")
        return result

    def should_compress(self, prompt_tokens: int | None = None) -> bool:
        """As :meth:`CompressorStrategy.should_compress`, but not again right after a compaction that changed
        nothing, until the prompt has grown by :data:`FUTILE_GROWTH` of the trigger."""
        if not super().should_compress(prompt_tokens):
            return False
        tokens = self.last_prompt_tokens if prompt_tokens is None else prompt_tokens
        due = not self._futile(tokens)
        self._asked_at = tokens if due else None
        return due

    def compaction_cleared(self, cleared: bool, prompt_tokens: int) -> None:
        """A compaction that left the prompt over the trigger is futile too: the next waits for growth."""
        if not cleared:
            if self._futile_at is None:
                said = floor.note(prompt_tokens, threshold=self.threshold_tokens, floor=self.floor_tokens)
                self.emit("blocked", f"{said}; automatic compaction waits until the conversation has grown")
            self._futile_at = prompt_tokens

    def nothing_to_compress(self, messages: list[Message]) -> str | None:
        if not messages:
            return super().nothing_to_compress(messages)
        result = self.compact(messages, force=True)
        return None if result.compressed else "; ".join(result.notes)


def provider_count(strategy: CompressorStrategy) -> int:
    """The provider's count of the last request: ``provider_prompt_tokens``, set only from a response's usage
    (hermes overwrites ``last_prompt_tokens`` with its rough estimate of the NEXT request before a preflight
    compaction, -1 after one). A strategy built before that attribute existed (another plugin's, not calling our
    ``__init__``) falls back to ``last_prompt_tokens``."""
    count = getattr(strategy, "provider_prompt_tokens", None)
    return int((strategy.last_prompt_tokens if count is None else count) or 0)


#: the methods a compaction runs through, which a class saying ``reports_removals`` vouches for
_COMPACTING = ("compress", "compact")


def reports_removals(strategy: CompressorStrategy) -> bool:
    """Whether the host may believe ``strategy``'s report of its removals: its ``reports_removals``
    says so, and was said by a class at or below every override of :meth:`~CompressorStrategy.compress`
    (and ``compact``) — a subclass of a built-in strategy that rewrites ``compress`` (and might edit a
    message in place) has not vouched for its own code. A property that raises (a pipeline step that
    cannot be built) counts as no."""
    mro = type(strategy).__mro__
    declarer = next((cls for cls in mro if "reports_removals" in vars(cls)), CompressorStrategy)
    for name in _COMPACTING:
        definer = next((cls for cls in mro if name in vars(cls)), None)
        if definer is not None and definer is not declarer and issubclass(definer, declarer):
            return False
    try:
        return bool(strategy.reports_removals)
    except Exception:
        return False

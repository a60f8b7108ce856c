"""The base class every compressor strategy derives from, and what ``compress`` returns."""

from __future__ import annotations

import abc
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

from ..config import CompressionSettings
from ..events import Message, Usage


@dataclass(frozen=True)
class CompressionResult:
    """What a strategy did to a conversation.

    ``messages`` is the new list (the system prompt excluded, as hermes passes it). Returning the
    input list unchanged with ``compressed=False`` means "nothing to do".
    """

    messages: list[Message]
    compressed: bool = True
    tokens_before: int = 0
    tokens_after: int = 0
    #: the original messages this compaction removed or rewrote, in their original order
    removed: tuple[Message, ...] = ()
    summary: str | None = None
    used_fallback: bool = False
    #: ``in_place: false``: the host should continue in a child session and keep the originals
    new_session: bool = False
    notes: tuple[str, ...] = field(default=())

    @classmethod
    def unchanged(cls, messages: list[Message], tokens: int = 0, *, note: str = "") -> CompressionResult:
        return cls(messages=messages, compressed=False, tokens_before=tokens, tokens_after=tokens,
                   notes=(note,) if note else ())


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

    def __init__(
        self,
        options: Any = None,
        *,
        settings: CompressionSettings | None = None,
        model: str = "",
        context_length: int | None = None,
    ) -> None:
        self.options = options if options is not None else {}
        self.settings = settings or CompressionSettings()
        self.model = model
        self.context_length = context_length
        self.last_prompt_tokens = 0
        self.compression_count = 0

    # -- what the host tells the strategy
    def update_model(self, model: str, context_length: int | None) -> None:
        """Called when the host switches model (and window size)."""
        self.model = model
        self.context_length = context_length

    def update_from_response(self, usage: Usage) -> None:
        """Called after each API response with the provider's exact token usage."""
        if usage.prompt_tokens:
            self.last_prompt_tokens = usage.prompt_tokens

    # -- the trigger
    @property
    def threshold_percent(self) -> float:
        """``compression.threshold``, overridden by the longest matching ``model_thresholds`` key."""
        overrides: Mapping[str, float] = self.settings.model_thresholds
        model = self.model.lower()
        matches = [key for key in overrides if key.lower() in model]
        return overrides[max(matches, key=len)] if matches else self.settings.threshold

    @property
    def threshold_tokens(self) -> int | None:
        """The prompt size that triggers compression, or ``None`` when the window is unknown."""
        limits = [t for t in (self.settings.threshold_tokens, self.settings.threshold_tokens_cap) if t]
        if self.context_length:
            limits.append(int(self.context_length * self.threshold_percent))
        return min(limits) if limits else None

    def should_compress(self, prompt_tokens: int | None = None) -> bool:
        """Whether the conversation should be compressed before the next request.

        :param prompt_tokens: the current prompt size; defaults to the last response's usage.
        """
        threshold = self.threshold_tokens
        tokens = self.last_prompt_tokens if prompt_tokens is None else prompt_tokens
        return bool(self.settings.enabled and threshold and tokens >= threshold)

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

        Mirrors hermes' ``ContextEngine.compress``. Must not mutate ``messages``.

        :param current_tokens: the prompt size if the host knows it.
        :param focus_topic: what the user asked to keep (``/compress <topic>``).
        :param force: compress even if the trigger says no (a manual ``/compress``).
        :param memory_context: text the memory providers want the summary to keep.
        """

"""The value objects the lifecycle hooks receive.

They are our own small types, never hermes objects, so a plugin written against them works whichever
host drives it (hermes, the Bridge, a test). Messages are plain OpenAI chat-format dicts. A plugin that is
not built in gets them as a :class:`MessageView`: each message a copy of the host's, so changing one never
reaches the conversation.
"""

from __future__ import annotations

import copy
import operator
import uuid
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, SupportsIndex, overload

from .errors import InvalidSession
from .options import FrozenMap, short_repr

Message = dict[str, Any]

_EMPTY: Mapping[str, Any] = FrozenMap()


@dataclass(frozen=True)
class SessionInfo:
    """Who and where a conversation is.

    ``deployment`` and ``user_id`` (and, where a provider is configured so, ``chat_id``) scope
    anything a memory provider stores: two sessions that differ in them must never see each
    other's memories (see :mod:`hermes_ctx_plugins.scope`). ``user_id`` is opaque: compare it
    exactly; ``""`` is the anonymous user.
    """

    session_id: str
    user_id: str = ""
    chat_id: str = ""
    platform: str = ""
    model: str = ""
    hermes_home: Path | None = None
    parent_session_id: str = ""
    #: every id this conversation had before ``session_id``, newest first (``parent_session_id`` and its own
    #: earlier ones): hermes moves a conversation to a new id at a compaction with ``compression.in_place: false``
    earlier_sessions: tuple[str, ...] = ()
    #: anything else the host knows (hermes' gateway_session_key, chat_type, thread_id, ...)
    extra: Mapping[str, Any] = field(default_factory=lambda: _EMPTY)
    #: the memory namespace of the deployment this session runs in, stamped by the host
    #: (``""``: the top-level settings); a provider keeps every namespace apart
    deployment: str = ""

    def __post_init__(self) -> None:
        """Every id is text: a platform's integer id is its text (``4242`` and ``"4242"`` are one user); anything else
        is refused here, naming it. A red-team pass: ``user_id=4242`` given by a Bridge reached every provider, each
        failed deep inside its write, and the user's turns were never stored (ctx-local was suspended for everyone)."""
        for name in _TEXT_FIELDS:
            value = getattr(self, name)
            if type(value) is not str:
                object.__setattr__(self, name, _text(name, value, number=name in _ID_FIELDS))
        earlier = self.earlier_sessions
        if type(earlier) is not tuple or any(type(item) is not str for item in earlier):
            if isinstance(earlier, (str, bytes)) or not isinstance(earlier, Sequence):
                raise InvalidSession(f"SessionInfo.earlier_sessions must be a tuple of session ids, "
                                     f"got {short_repr(earlier)}", field="earlier_sessions", value=earlier)
            object.__setattr__(self, "earlier_sessions",
                               tuple(_text("earlier_sessions", item, number=True) for item in earlier))


#: the fields of :class:`SessionInfo` that hold text, and those of them an integer may be given for (an id)
_TEXT_FIELDS = ("session_id", "user_id", "chat_id", "platform", "model", "parent_session_id", "deployment")
_ID_FIELDS = frozenset({"session_id", "user_id", "chat_id", "parent_session_id"})


def id_text(value: object, field: str = "user_id") -> str:
    """An id hermes or a Bridge's caller gave, as :class:`SessionInfo` keeps it: a ``str``, an integer's or a UUID's
    text; anything else (bytes from a database driver, a bool, a float) raises :class:`InvalidSession` naming it.
    ``str()`` would alias it with another user's id (``b"zed"`` is not the user ``"b'zed'"``; a red-team pass)."""
    return _text(field, value, number=True)


def _text(name: str, value: object, *, number: bool) -> str:
    """``value`` of the field ``name`` as text: a ``str`` (a subclass made plain), an integer for an id, else an
    error."""
    if isinstance(value, str):
        return str.__str__(value)
    if number and isinstance(value, uuid.UUID):  # what database drivers return for a uuid column: its text
        return str(value)
    if number and not isinstance(value, (bool, float)) and isinstance(value, SupportsIndex):  # numpy's too
        whole = operator.index(value)
        try:
            return str(whole)
        except ValueError:  # past Python's digits limit for str(): no platform's id
            raise InvalidSession(f"SessionInfo.{name}: an integer of {whole.bit_length():,} bits is no id",
                                 field=name, value=value) from None
    what = "a str, or an int read as its text" if number else "a str"  # (or a UUID: see above)
    raise InvalidSession(f"SessionInfo.{name} must be {what}, got {short_repr(value)}", field=name, value=value)


@dataclass(frozen=True)
class Forgotten:
    """What forgetting a user did to one store (one line of ``hermes-ctx forget``'s report)."""

    #: the store, readable and unique: ``ctx-local /home/me/.hermes/ctx-local/memory.db``
    store: str
    #: rows, entries, files or records removed; ``None`` when the store cannot count them
    removed: int | None = 0
    #: anything else worth saying (what was kept, why a count is unknown)
    detail: str = ""
    #: why the store could not be cleared (empty: it was); the user's data may still be there
    error: str = ""

    @property
    def ok(self) -> bool:
        return not self.error


@dataclass(frozen=True)
class ContextContribution:
    """A piece of context a plugin added to an outgoing request."""

    source: str
    text: str


class _CountedOnFirstRead:
    """:attr:`Request.token_estimate`: the count the host gave, else the messages' tokens, counted the
    first time someone reads it and then kept.

    Counting a long history is work in every turn that grows with the history (every message looked
    at, the new ones tokenised), and most turns nobody reads the figure; so a host passes none and
    only a plugin that reads it pays. A data descriptor installed over the dataclass field, so
    ``token_estimate=`` stays a constructor keyword (a count given is kept as given, ``None`` is
    counted on first read) and the field keeps its plain default.
    """

    _slot = "_token_estimate"

    @overload
    def __get__(self, request: None, owner: type | None = None) -> _CountedOnFirstRead: ...

    @overload
    def __get__(self, request: Request, owner: type | None = None) -> int: ...

    def __get__(self, request: Request | None, owner: type | None = None) -> int | _CountedOnFirstRead:
        if request is None:
            return self
        known: int | None = request.__dict__.get(self._slot)
        if known is None:
            from .tokens import get_counter  # tiktoken loads on the first count, not at import

            messages = request.messages  # a plugin's view is counted from the host's messages, not copied
            known = request.__dict__[self._slot] = get_counter(request.model).count_messages(
                messages._source if isinstance(messages, MessageView) else messages)
        return known

    def __set__(self, request: Request, value: int | None) -> None:
        request.__dict__[self._slot] = value


@dataclass
class Request:
    """An outgoing model request, before it is sent.

    Plugins add context either by returning a string from ``pre_request`` or by calling
    :meth:`add_context`; the host appends the joined contributions to the user message it sends
    (hermes never lets plugins touch the system prompt, which keeps the prefix cache warm).

    ``token_estimate`` is the prompt's size in tokens: as the host gave it, or (``None``, as hermes'
    host gives it) counted from ``messages`` when first read and kept from then on. Reading it is
    always an ``int``.
    """

    session: SessionInfo
    messages: Sequence[Message]
    model: str
    #: not in the repr: printing a request must not count its history
    token_estimate: int = field(default=None, repr=False)  # type: ignore[assignment]
    turn_number: int = 0
    user_message: str = ""
    contributions: list[ContextContribution] = field(default_factory=list)

    def add_context(self, text: str, *, source: str) -> None:
        """Contribute ``text`` to this request; blank text is ignored."""
        if not isinstance(text, str):
            raise TypeError(f"context from {source!r} must be a str, got {type(text).__name__}")
        if text.strip():
            self.contributions.append(ContextContribution(source=source, text=text.strip()))

    @property
    def context(self) -> str:
        """Every contribution joined, in the order they were added."""
        return "\n\n".join(c.text for c in self.contributions)


Request.token_estimate = _CountedOnFirstRead()  # type: ignore[assignment]  # over the field: see the class


@dataclass(frozen=True)
class Usage:
    """Token usage the provider reported for one API call (zero when it reported none)."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    total_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    reasoning_tokens: int = 0

    @classmethod
    def from_mapping(cls, usage: Mapping[str, Any] | None) -> Usage:
        """Read hermes' normalised usage dict (which may be empty, or use input/output names)."""
        usage = usage or {}

        def pick(*keys: str) -> int:
            for key in keys:
                value = usage.get(key)
                if isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0:
                    return int(value)
            return 0

        prompt = pick("prompt_tokens", "input_tokens")
        completion = pick("completion_tokens", "output_tokens")
        return cls(
            prompt_tokens=prompt,
            completion_tokens=completion,
            total_tokens=pick("total_tokens") or prompt + completion,
            cache_read_tokens=pick("cache_read_tokens"),
            cache_write_tokens=pick("cache_write_tokens"),
            reasoning_tokens=pick("reasoning_tokens"),
        )


@dataclass(frozen=True)
class Response:
    """A model response, as soon as it has arrived."""

    session: SessionInfo
    model: str
    usage: Usage
    assistant_message: Message | None = None
    turn_number: int = 0


@dataclass(frozen=True)
class ToolCall:
    """One tool call the assistant made during a turn, with its result when known."""

    id: str
    name: str
    arguments: str
    result: str | None = None


@dataclass(frozen=True)
class Turn:
    """A finished turn: the user's message and the assistant's final answer.

    ``messages`` is the whole conversation after the turn when the host has it (a :class:`MessageView` for a
    plugin or provider that is not built in).
    """

    session: SessionInfo
    turn_number: int
    user_text: str
    assistant_text: str
    tool_calls: tuple[ToolCall, ...] = ()
    messages: Sequence[Message] = ()


class MessageView(list[Message]):
    """The conversation as a plugin that is not built in sees it: a list of the host's messages in which each
    message is a deep copy, made when the plugin first reads it (an index, a slice, a loop, ``pop``) and kept in
    the list from then on. A plugin may change what it reads, and the list itself; the conversation the host
    (hermes) keeps and sends does not change with it (a hook that set ``request.messages[i]["content"]`` rewrote
    hermes' history, and one that cleared the list emptied the caller's; a red-team pass). Messages never read are
    never copied: a view of a long history costs a list of references until read.

    It is a ``list``: ``json.dumps``, ``==``, ``+``, ``copy()`` and ``isinstance(view, list)`` work as on the list
    it replaced. What only reads (``json.dumps``, ``==``, ``in``) reads the host's messages as they are.
    """

    __slots__ = ("_copies", "_source")
    _source: Sequence[Message]
    _copies: set[int]

    def __init__(self, messages: Sequence[Message] = ()) -> None:
        source = messages._source if isinstance(messages, MessageView) else messages
        super().__init__(source)
        self._source = source  # the host's messages: what a token estimate counts
        self._copies = set()  # ids of the copies this list holds (alive while it holds them)

    def _copy(self, at: int) -> Message:
        held = list.__getitem__(self, at)
        if id(held) in self._copies:
            return held
        copied = copy.deepcopy(held)
        list.__setitem__(self, at, copied)
        self._copies.add(id(copied))
        return copied

    @overload
    def __getitem__(self, index: SupportsIndex) -> Message: ...

    @overload
    def __getitem__(self, index: slice) -> list[Message]: ...

    def __getitem__(self, index: SupportsIndex | slice) -> Message | list[Message]:
        if isinstance(index, slice):
            return [self._copy(i) for i in range(*index.indices(len(self)))]
        at = operator.index(index)
        if not -len(self) <= at < len(self):
            raise IndexError(f"message index {at} out of range (there are {len(self)})")
        return self._copy(at % len(self))

    def __iter__(self) -> Iterator[Message]:
        i = 0
        while i < len(self):
            yield self._copy(i)
            i += 1

    def __reversed__(self) -> Iterator[Message]:
        return (self._copy(i) for i in range(len(self) - 1, -1, -1))

    def pop(self, index: SupportsIndex = -1) -> Message:
        self._copy(operator.index(index) % len(self) if len(self) else 0)
        return list.pop(self, index)

    def copy(self) -> list[Message]:
        return self[:]

    def __add__(self, other: list[Message]) -> list[Message]:  # type: ignore[override]
        return [*self, *other]

    def __radd__(self, other: list[Message]) -> list[Message]:
        return [*other, *self]

    def __mul__(self, times: SupportsIndex) -> list[Message]:
        return [copy.deepcopy(m) for _ in range(operator.index(times)) for m in self]

    __rmul__ = __mul__

    def __reduce_ex__(self, protocol: SupportsIndex) -> tuple[Any, ...]:  # pickled as the plain list it reads as
        return list, (list(self),)

    def __repr__(self) -> str:
        return f"MessageView({len(self)} messages)"


def tool_calls_since_last_user(messages: Sequence[Message]) -> tuple[ToolCall, ...]:
    """The tool calls of the turn in progress (after the last user message), with their results."""
    start = 0
    for i in range(len(messages) - 1, -1, -1):
        if messages[i].get("role") == "user":
            start = i + 1
            break
    results = {m.get("tool_call_id"): m.get("content") for m in messages[start:] if m.get("role") == "tool"}
    calls = []
    for message in messages[start:]:
        for call in message.get("tool_calls") or ():
            if not isinstance(call, dict):
                continue
            function = call.get("function") or {}
            result = results.get(call.get("id"))
            calls.append(ToolCall(id=str(call.get("id") or ""), name=str(function.get("name") or ""),
                                  arguments=str(function.get("arguments") or ""),
                                  result=result if isinstance(result, str) else None))
    return tuple(calls)

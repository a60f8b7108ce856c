"""The values that cross the storage seam, the same for every backend.

ctx-local's memory store takes :class:`Record` s and gives back :class:`Memory`, :class:`Hit`,
:class:`Quarantined` and :class:`MemoryStats`; the archive takes removed messages and gives back
:class:`Stored` messages and :class:`ArchiveHit` s, always within a :class:`Scope`, and
:class:`ArchiveStats`. Ids, namespaces and texts are any Python string
— lone surrogates, NUL and ``""`` included — and come back exactly as they went in.
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import re
import time
from collections.abc import Callable, Collection
from dataclasses import asdict, dataclass
from typing import Any, TypedDict

from ..events import Message
from ..safety import redact_secrets
from ..scope import to_stored

#: how much of each side of a search candidate a backend returns (huge turns stay in the store)
CANDIDATE_CHARS = 8_000
#: how far past a cut a text is redacted (an armoured private key is a few thousand characters)
CUT_MARGIN = 8_192

# the owner at the start of a queued record's JSON line: this version's order, then version 1's
_JSON_TEXT = r'"(?:[^"\\]|\\.)*"'
_OWNER = re.compile(rf'\{{"namespace":({_JSON_TEXT}),"user_id":({_JSON_TEXT})'
                    rf'|\{{"key":{_JSON_TEXT},"kind":{_JSON_TEXT},"user_id":({_JSON_TEXT})')


# -- ctx-local's memories ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Record:
    """One memory on its way into the store (what the write-behind queue carries)."""

    #: the idempotency key: a record whose key is already stored is not stored again — whoever's it
    #: is: keys are one set for the whole store, across namespaces and users
    key: str
    #: ``turn`` (a user text and the assistant's answer) or ``fact`` (one remembered sentence)
    kind: str
    user_id: str
    chat_id: str
    session_id: str
    user_text: str = ""
    assistant_text: str = ""
    fact_text: str = ""
    #: ``chat``: recalled in ``chat_id`` only; ``user``: in every chat of the user
    visibility: str = "chat"
    source: str = "turn"
    created_at: float = 0.0
    #: the memory namespace of the deployment (:attr:`SessionInfo.deployment`)
    namespace: str = ""
    #: :func:`~hermes_ctx_plugins.storage.verdicts.clean_digest` of the texts as written ("": none)
    verdict: str = ""

    @classmethod
    def from_json(cls, data: Any) -> Record:
        """A record from its decoded JSON form; raises ValueError naming what is wrong."""
        if not isinstance(data, dict):
            raise ValueError(f"a queued record must be a JSON object, got {type(data).__name__}")
        try:
            record = cls(**data)
        except TypeError as exc:
            raise ValueError(f"malformed queued record: {exc}") from None
        for name in ("key", "kind", "user_id", "chat_id", "session_id", "user_text", "assistant_text",
                     "fact_text", "visibility", "source", "namespace", "verdict"):
            if not isinstance(getattr(record, name), str):
                raise ValueError(f"queued record field {name!r} must be text, got {getattr(record, name)!r:.40}")
        if not isinstance(record.created_at, (int, float)) or isinstance(record.created_at, bool):
            raise ValueError(f"queued record field 'created_at' must be a number, got {record.created_at!r:.40}")
        record.check()
        return record

    def check(self) -> None:
        """:raises ValueError: the kind, visibility or key is not one a store takes."""
        if self.kind not in ("turn", "fact") or self.visibility not in ("chat", "user") or not self.key:
            raise ValueError(f"queued record has kind {self.kind!r}, visibility {self.visibility!r}, "
                             f"key {self.key!r}; expected turn|fact, chat|user and a key")

    @property
    def body(self) -> str:
        """What a search looks in: the fact, or the user's text and the answer."""
        return self.fact_text if self.kind == "fact" else f"{self.user_text}\n{self.assistant_text}"

    def as_json(self) -> dict[str, Any]:
        """The JSON form, its owner first: :func:`owner_of` reads it even from a torn line."""
        # the fields as they are: ``asdict`` deep-copies every value, 25 µs of each ``sync_turn``
        return {"namespace": self.namespace, "user_id": self.user_id, **vars(self)}

    def redacted(self, limit: int | None = None) -> Record:
        """This record with every secret in its texts replaced by ``[REDACTED:<kind>]`` and, given
        a ``limit``, each text longer than that cut to it (see :func:`stored_text`)."""
        return dataclasses.replace(self, user_text=stored_text(self.user_text, limit),
                                   assistant_text=stored_text(self.assistant_text, limit),
                                   fact_text=stored_text(self.fact_text, limit))


def stored_text(text: str, limit: int | None = None) -> str:
    """``text`` as it may touch the disk: every secret replaced by ``[REDACTED:<kind>]`` and, when
    it is longer than ``limit`` characters, cut to that with a note saying so.

    Only what is kept is redacted, so a huge paste costs no more than ``limit`` characters' worth —
    plus :data:`CUT_MARGIN` past the cut, so a secret the cut runs through is still seen whole (a
    secret cut first could be a piece no rule recognises) and replaced.
    """
    if not text:  # a turn's fact text, a fact's turn texts: the scanner's fixed cost, 20 µs, for nothing
        return text
    if limit is None or len(text) <= limit:
        return redact_secrets(text)
    kept = redact_secrets(text[:limit + CUT_MARGIN])[:limit]
    return f"{kept}\n[… {len(text) - limit:,} more characters not stored]"


def owner_of(line: str) -> tuple[str, str] | None:
    """``(namespace, user_id)`` of a queued record's JSON line, read from its start — so a line a
    crash cut short, or one undecodable further on, is still attributed; None if it names none."""
    match = _OWNER.match(line)
    if match is None:  # not as the queue writes it (spaced, reordered): whole, if it reads
        try:
            data = json.loads(line)
        except ValueError:
            return None
        user, namespace = (data.get("user_id"), data.get("namespace", "")) if isinstance(data, dict) else (None, None)
        return (namespace, user) if isinstance(user, str) and isinstance(namespace, str) else None
    try:
        if match[1] is not None:
            return json.loads(match[1]), json.loads(match[2])
        return "", json.loads(match[3])  # version 1 had no namespaces
    except ValueError:
        return None


def json_text(data: Any, **options: Any) -> str:
    """``data`` as JSON that always encodes to UTF-8 and decodes to exactly ``data``: non-ASCII
    stays readable, unless a lone surrogate (which UTF-8 cannot carry) makes it ``\\u`` escapes."""
    text = json.dumps(data, ensure_ascii=False, **options)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return json.dumps(data, **options)
    return text


def memory_text(kind: str, user_text: str, assistant_text: str, fact_text: str) -> str:
    """A memory's text as recall shows it: the fact, or the user's text and the answer, labelled."""
    if kind == "fact":
        return fact_text
    return f"User: {user_text}\nAssistant: {assistant_text}"


@dataclass(frozen=True)
class Memory:
    """A stored memory (texts may be cut to :data:`CANDIDATE_CHARS` when read as a search candidate)."""

    #: given by the store: a positive integer of at most 63 bits, one memory's alone while it is stored
    id: int
    key: str
    kind: str
    namespace: str
    user_id: str
    chat_id: str
    session_id: str
    visibility: str
    user_text: str
    assistant_text: str
    fact_text: str
    source: str
    created_at: float

    @property
    def text(self) -> str:
        return memory_text(self.kind, self.user_text, self.assistant_text, self.fact_text)

    def as_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["created"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(self.created_at))
        return data


@dataclass(frozen=True)
class Hit:
    """A search candidate: the memory and its BM25 relevance (higher is better)."""

    memory: Memory
    relevance: float
    #: the memory's stored :attr:`Record.verdict` ("": none; a backend that keeps none gives that)
    verdict: str = ""


@dataclass(frozen=True)
class Quarantined:
    """A queued record that kept failing, kept with its error instead of being dropped."""

    id: int
    segment: str
    offset: int
    #: the queued line as it was (redacted)
    record: str
    error: str
    attempts: int
    quarantined_at: float
    #: whose it is, when that can be read from the record (None: unknown)
    namespace: str | None
    user_id: str | None


class MemoryStats(TypedDict):
    """What :meth:`~hermes_ctx_plugins.storage.base.MemoryBackend.stats` reports: every key, always."""

    #: memories of each kind
    turns: int
    facts: int
    #: distinct ``(user_id, chat_id)`` pairs with memories
    scopes: int
    #: distinct session ids with memories
    sessions: int
    #: the smallest and largest ``created_at`` of those memories; ``None`` when there are none
    oldest: float | None
    newest: float | None
    #: quarantined records, as :meth:`~hermes_ctx_plugins.storage.base.MemoryBackend.quarantined` lists them
    quarantined: int
    #: what the whole store takes, every namespace whatever was asked (see ``MemoryBackend.stats``)
    bytes: int


# -- the archive -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Scope:
    """Whose archive a search or an expansion may see: always one deployment namespace's."""

    session_id: str
    #: ``None`` = any user of the session (the command line only)
    user_id: str | None = ""
    #: every session of ``user_id`` instead of just ``session_id`` (needs a user id, ``""`` the anonymous user's:
    #: the command line's ``--user ''``; the model's tools ask it only for a named user)
    all_sessions: bool = False
    #: the whole archive, every namespace: for its owner at the command line, never for a model
    everything: bool = False
    #: the deployment namespace (:attr:`SessionInfo.deployment <hermes_ctx_plugins.events.SessionInfo>`)
    namespace: str = ""
    #: the session ids this conversation had before ``session_id``, newest first (hermes moves a conversation to a
    #: new id at a compaction with ``compression.in_place: false``: what it archived stays under the old id)
    earlier_sessions: tuple[str, ...] = ()

    @property
    def sessions(self) -> tuple[str, ...]:
        """``session_id`` and :attr:`earlier_sessions`: the session ids this scope reads."""
        return (self.session_id, *self.earlier_sessions)

    def sees(self, namespace: str, session_id: str, user_id: str) -> bool:
        """Whether a message archived for this owner is inside the scope."""
        if self.everything:
            return True
        if namespace != self.namespace:
            return False
        if self.all_sessions and self.user_id is not None:
            return user_id == self.user_id
        if session_id != self.session_id and session_id not in self.earlier_sessions:
            return False
        # exactly the owner's: an empty user id is the anonymous user's, never a named user's (a Bridge's anonymous
        # agent and a named one given the same session id later are two owners)
        return self.user_id is None or user_id == self.user_id


@dataclass(frozen=True)
class ArchiveHit:
    """A search result: which message, and a snippet with the matches between ``«`` and ``»``."""

    id: int
    session_id: str
    compaction_id: int
    role: str
    created: float
    snippet: str
    namespace: str
    #: the message's lexical relevance (BM25, positive, higher is better; comparable within one search
    #: only), 0.0 where no score was computed (a search of short terms only)
    relevance: float = 0.0


@dataclass(frozen=True)
class Stored:
    """One archived message as it was (secrets redacted)."""

    #: given by the store: a positive integer of at most 63 bits, increasing in archive order
    id: int
    session_id: str
    user_id: str
    namespace: str
    compaction_id: int
    #: its place in its session's archive (1, 2, ...; later compactions continue the count)
    seq: int
    role: str
    message: Message
    #: when it was archived (``time.time()`` of its compaction)
    created: float = 0.0


class ArchiveStats(TypedDict):
    """What :meth:`~hermes_ctx_plugins.storage.base.ArchiveBackend.stats` reports: every key, always."""

    #: the archive's location, ``str(path)``
    path: str
    compactions: int
    messages: int
    #: distinct ``(namespace, session_id)`` pairs with compactions
    sessions: int
    #: distinct ``(namespace, user_id)`` pairs with compactions (the empty user id is one of them)
    users: int
    namespaces: int
    #: when the first and the last message still archived were archived (Unix time); ``None`` when empty
    oldest: float | None
    newest: float | None
    #: :meth:`~hermes_ctx_plugins.storage.base.ArchiveBackend.size_bytes`
    bytes: int
    #: compactions waiting in the spool to be imported (always 0 for a backend without a spool)
    spooled: int
    #: the spool file, ``None`` for a backend that never spools
    spool: str | None
    retention_days: float
    max_megabytes: float


class ForgetScope:
    """Whose archived messages forgetting a user removes: their own in the namespaces asked, and
    those with an empty user id in a session where the user's own are (ids in one written form)."""

    def __init__(self, user: str, spaces: set[str] | None) -> None:
        self.user = user
        self.spaces = spaces
        #: (namespace, session) pairs in which the user's own messages are archived or waiting
        self.sessions: set[tuple[str, str]] = set()

    @classmethod
    def of(cls, user_id: str, namespaces: Collection[str] | None, *,
           written: Callable[[str], str] = str) -> ForgetScope:
        """Forgetting ``user_id`` in ``namespaces`` (``None``: all), ids compared as ``written``
        (the form the store keeps them in). :raises TypeError: ``namespaces`` is a lone string."""
        return cls(written(user_id), namespaces_asked(namespaces, written))

    def spoke_in(self, namespace: str, user: str) -> bool:
        """Whether a message of ``user`` in ``namespace`` is the user's own."""
        return user == self.user and (self.spaces is None or namespace in self.spaces)

    def owns(self, namespace: str, session: str, user: str) -> bool:
        """Whether a message is the user's: their own, or unattributed in one of their sessions."""
        return self.spoke_in(namespace, user) or (user == "" and (namespace, session) in self.sessions)

    @staticmethod
    def kept_note(unattributed: int) -> str:
        """What a report says of the messages with an empty user id that forgetting kept."""
        if not unattributed:
            return ""
        return (f"{unattributed} messages with no user id (the anonymous user's, as the hermes CLI's are, or archived "
                "before a session's user was known), in sessions without any of this user's messages, were kept")


def namespaces_asked(namespaces: Collection[str] | None, written: Callable[[str], str] = str) -> set[str] | None:
    """The namespaces a ``forget_user`` call names, each as ``written`` (``None``: every one).

    :raises TypeError: ``namespaces`` is a lone string — iterated, ``"blue"`` would be the
        namespaces ``b``, ``l``, ``u`` and ``e``: a caller's mistake, never guessed at.
    """
    if isinstance(namespaces, str):
        raise TypeError(f"namespaces must be a collection of namespace names or None (every namespace), "
                        f"got the string {namespaces!r}; pass [{namespaces!r}]")
    return None if namespaces is None else {written(n) for n in namespaces}


def message_text(message: Message) -> str:
    """What a message says, as searchable text: content, tool calls (name and arguments)."""
    parts = []
    content = message.get("content")
    if isinstance(content, str):
        parts.append(content)
    elif isinstance(content, list):
        parts += [p["text"] for p in content if isinstance(p, dict) and isinstance(p.get("text"), str)]
    for call in message.get("tool_calls") or ():
        function = call.get("function") if isinstance(call, dict) else None
        if isinstance(function, dict):
            parts.append(f"{function.get('name', '')}({function.get('arguments', '')})")
    return "\n".join(parts)


def searchable(text: str) -> str:
    """``text`` as an archive search sees it, on both sides — what is searched and what is asked:
    in stored form, and with each NUL character (at which SQLite's index stops reading) a space."""
    return to_stored(text).replace("\x00", " ")


def call_ids(message: Message) -> list[str]:
    """The ids of the tool calls ``message`` makes."""
    ids = [c.get("id") for c in message.get("tool_calls") or () if isinstance(c, dict)]
    return [i for i in ids if isinstance(i, str)]


def pairs_with(message: Message, other: Message) -> bool:
    """Whether ``other`` is the other half of a tool-call pair with ``message`` (a message making
    calls or a tool result): a result of one of its calls, or the call it answers — by exact id."""
    if message.get("tool_calls"):
        return str(other.get("tool_call_id") or "") in call_ids(message)
    return str(message.get("tool_call_id") or "") in call_ids(other)


def redacted_message(message: Message) -> Message:
    """A JSON-safe copy of ``message`` with secrets redacted from every string in it, a mapping's keys included (a
    key was kept as it was: an API key used as one was archived whole; a red-team pass)."""

    def walk(value: Any) -> Any:
        if isinstance(value, str):
            return redact_secrets(value)
        if isinstance(value, dict):
            out: dict[str, Any] = {}
            for k, v in value.items():
                key = _key(k)
                if key in out:  # two secrets redacted alike: both values kept (the second was lost; a red-team pass)
                    key = next(f"{key} #{n}" for n in itertools.count(2) if f"{key} #{n}" not in out)
                out[key] = walk(v)
            return out
        if isinstance(value, (list, tuple)):
            return [walk(v) for v in value]
        if value is None or isinstance(value, (int, float, bool)):
            return value
        return redact_secrets(str(value))

    return walk(message)  # type: ignore[no-any-return]


def _key(key: object) -> str:
    text = str(key)
    # a short name ("role", "tool_calls") holds no secret the redactor could tell: it is not read
    return text if len(text) <= 16 and text.isidentifier() else redact_secrets(text)

"""Who sent each user message of a session several users speak in.

hermes' gateway gives a chat platform's shared thread (or a group with ``group_sessions_per_user: false``)
one session and one agent; each turn's ``pre_llm_call`` names that turn's sender, so the session's owner
as the hooks tell it is whoever spoke last. A compaction in such a session removes the turns of several
users: archived as the last speaker's, the others could not search their own words and forgetting one of
them left their words in someone else's archive — readable from that person's private chat with
``archive.scope: user`` (a red-team pass through hermes' real gateway). So the session table remembers,
per session, which user sent each user message it heard (a digest of its text, as hermes stores it), and
the archive keeps each removed message as the speaker of the turn it belongs to.

A turn no sender can be told for — not heard by this process (a restart, a session the table dropped, more
turns than it keeps), or a text more than one user sent ("ok", the same display name twice: hermes' only mark
of the sender in the text) — is nobody's in a session known to be shared: archived as the anonymous user's,
which no named user's scope reads (a review: given to the user compacting, it handed one user's turn, tool
results and all, to another). A session one user spoke in keeps a few digests only (a DM is most sessions).

Whether a session is shared is hermes' own answer where its agent tells it (:func:`origin`: hermes'
row of the session, else a gateway agent's chat type and session key, which hermes builds per user unless the chat is
shared) — the same after a
restart, whatever the text holds. Elsewhere (an agent that tells nothing), a session is known to be shared when this
process heard two users in it, or when its user messages carry two display names in hermes' sender prefix
(``[alice] ...``: the gateway writes it in a shared session only). A review: read from the text alone, a DM whose
user pasted two log lines (``[WARN] ...``, ``[ERROR] ...``) was shared, and after a restart its earlier turns were
nobody's; hermes' background review (no sender) made every DM shared; a thread whose names hold a ``]`` or whose
messages start with a reply quote was not, and after a restart the one participant heard since got the others' turns.
"""

from __future__ import annotations

import hashlib
import re
import threading
from collections.abc import Iterable
from typing import TypeVar

from ..events import Message

#: user messages remembered per session, once a second user spoke in it (the oldest are forgotten first:
#: their turns are then nobody's)
MAX_HEARD = 4096
#: ... and while one user alone did (the turns a second user's arrival finds: older ones are nobody's then)
MAX_HEARD_ALONE = 16
#: gateway session keys whose sharing :class:`Origins` remembers
MAX_ORIGINS = 4096
#: a text more than one user sent: nobody's (the anonymous user's id, which a turn of nobody's is archived as)
_AMBIGUOUS = ""


def _digest(text: str) -> int:
    return int.from_bytes(hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=8).digest(), "big")


#: hermes' sender prefix of a user message in a shared session (``gateway/run.py``: ``f"[{name}] {text}"``)
_SENDER = re.compile(r"\[([^\]\n]{1,100})\] ")


#: what hermes' gateway makes of a conversation (:func:`origin`): a DM, a group's or thread's kept per user, shared
DM, OWN, SHARED = "dm", "own", "shared"


def origin(agent: object) -> str | None:
    """What hermes' gateway makes of ``agent``'s conversation (:data:`DM`, :data:`OWN`, :data:`SHARED`): hermes' own
    row of the session (``state.db``: its hygiene and ``/compress`` agents carry neither chat nor key), else the
    agent's chat and key; ``None`` when neither tells (not a gateway's: the CLI, a Bridge, hermes' background
    review). hermes rewrites the row at every turn (its current chat and key), so a session that was shared and is
    now under a per-user key (a config change, hermes handing the new key the older session) reads as OWN: the
    caller still reads the history's sender prefixes then (:class:`Origins` keeps what it saw)."""
    stored = _stored(agent)
    if stored is not None:
        return _origin_of(stored.get("chat_type"), stored.get("chat_id"), stored.get("thread_id"),
                          stored.get("session_key"))
    return _origin_of(getattr(agent, "_chat_type", None), getattr(agent, "_chat_id", None),
                      getattr(agent, "_thread_id", None), getattr(agent, "_gateway_session_key", None))


def _stored(agent: object) -> dict[str, object] | None:
    """hermes' row of ``agent``'s session (``SessionDB.get_session``), when it names the session's chat."""
    db, session_id = getattr(agent, "_session_db", None), getattr(agent, "session_id", None)
    get = getattr(db, "get_session", None)
    if not callable(get) or not isinstance(session_id, str) or not session_id:
        return None
    try:
        row = get(session_id)
    except Exception:  # hermes' database: never our turn's failure
        return None
    return row if isinstance(row, dict) and isinstance(row.get("chat_type"), str) and row["chat_type"] else None


def _origin_of(chat_type: object, chat_id: object, thread_id: object, key: object) -> str | None:
    """The session key's answer (``gateway/session.py``, ``build_session_key``): a DM is never shared; a group's or a
    thread's key ends with the sender's id when it is kept per user, else with the chat's and thread's ids."""
    if not isinstance(chat_type, str) or not chat_type:
        return None
    if chat_type == "dm":
        return DM
    if not isinstance(key, str) or not key:
        return None
    place = [str(part) for part in (chat_type, chat_id, thread_id) if part not in (None, "")]
    return SHARED if key.endswith(":" + ":".join(place)) else OWN


class Origins:
    """What :func:`origin` said of each gateway session key lately (bounded), for an agent that tells the key alone
    and whose session hermes has no row of, and the sessions it said were shared: shared they stay, whatever a later
    agent says (a review: after a config change hermes rewrote the row under bob's per-user key). A key not met yet
    says a DM by its form (hermes reads its parts by position too: ``agent:<profile>:<platform>:<chat type>:...``).
    Thread-safe."""

    def __init__(self, size: int = MAX_ORIGINS) -> None:
        self._by_key: dict[str, str] = {}
        self._shared: dict[str, None] = {}  # session ids
        self._size = size
        self._lock = threading.Lock()

    def of(self, agent: object) -> str | None:
        """What ``agent``'s conversation is (see :func:`origin`), noted for its key and session."""
        told, key = origin(agent), getattr(agent, "_gateway_session_key", None)
        session = getattr(agent, "session_id", None)
        dm_form = isinstance(key, str) and key.startswith("agent:") and key.split(":")[3:4] == [DM]
        with self._lock:
            if told is None and isinstance(key, str):
                told = self._by_key.get(key)
            elif told is not None and isinstance(key, str) and key and not dm_form:  # a DM's key says so itself
                _bounded(self._by_key, key, told, self._size)
            if isinstance(session, str) and session:
                if told == SHARED:
                    _bounded(self._shared, session, None, self._size)
                elif session in self._shared:
                    told = SHARED
        return DM if told is None and dm_form else told


_V = TypeVar("_V")


def _bounded(table: dict[str, _V], key: str, value: _V, size: int) -> None:
    """``table[key] = value`` as its newest, the oldest dropped past ``size``."""
    table.pop(key, None)
    table[key] = value
    while len(table) > size:
        del table[next(iter(table))]


def _is_real_user(message: Message) -> bool:
    """A message the user wrote (a compaction's summary in the user role is nobody's words); imported when first asked:
    registering with hermes imports this module, and must not import the compression package (its start-up cost)."""
    from ..compression.messages import is_real_user

    return is_real_user(message)


def prefixed_unheard(messages: Iterable[Message], heard: Speakers | None) -> bool:
    """Whether a user message of ``messages`` that this process did not hear carries hermes' sender prefix: written
    while the session was shared (a per-user key's session hermes handed over after a config change: a review found
    the one name before the change, alice's, and bob's turns since without one)."""
    for message in messages:
        text = said(message) if _is_real_user(message) else None  # a summary in the user role is nobody's words
        if text and _SENDER.match(text) and (heard is None or heard.of(message) is None):
            return True
    return False


def names_several(messages: Iterable[Message]) -> bool:
    """Whether the user messages of ``messages`` carry more than one sender name in hermes' prefix."""
    names: set[str] = set()
    for message in messages:
        text = said(message) if _is_real_user(message) else None  # a summary in the user role is nobody's words
        found = _SENDER.match(text) if text else None
        if found is not None:
            names.add(found[1])
            if len(names) > 1:
                return True
    return False


def said(message: Message) -> str | None:
    """The text of a user message as hermes keeps it (its parts' texts joined), ``None`` for none."""
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [p.get("text") for p in content if isinstance(p, dict)]
        return "\n".join(p for p in parts if isinstance(p, str))
    return None


class Speakers:
    """The senders of one session's user messages, by their text's digest (bounded)."""

    def __init__(self) -> None:
        self._by_text: dict[int, str] = {}  # in the order last heard (a dict keeps it, at half an OrderedDict's size)
        #: the user heard first; a second one makes the session shared, for good
        self._first: str | None = None
        self.shared = False
        #: a second named user was heard (hermes' background review names none): shared whatever hermes' chat type
        #: says (Slack's group DMs are "dm" to hermes, and their members share one session: a review)
        self.named_several = False
        self._first_named: str | None = None

    def heard(self, user_id: str, texts: Iterable[str]) -> None:
        """``user_id`` sent the user message whose text is each of ``texts`` (forms of one message)."""
        if self._first is None:
            self._first = user_id
        elif user_id != self._first:
            self.shared = True
        if user_id and self._first_named is None:
            self._first_named = user_id
        elif user_id and user_id != self._first_named:
            self.named_several = True
        for key in {_digest(text) for text in texts}:
            before = self._by_text.pop(key, None)
            self._by_text[key] = user_id if before is None or before == user_id else _AMBIGUOUS
        bound = MAX_HEARD if self.shared else MAX_HEARD_ALONE
        while len(self._by_text) > bound:
            del self._by_text[next(iter(self._by_text))]

    def of(self, message: Message) -> str | None:
        """Who sent ``message`` (a user message); ``None``: not heard here, sent by more than one user, or by the
        anonymous user."""
        text = said(message)
        return (self._by_text.get(_digest(text)) if text is not None else None) or None

    def copy(self) -> Speakers:
        other = Speakers()
        other._by_text, other._first, other.shared = dict(self._by_text), self._first, self.shared
        other.named_several, other._first_named = self.named_several, self._first_named
        return other

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

A session is known to be shared when this process heard two users in it, or when its user messages carry two
display names in hermes' sender prefix (``[alice] ...``: the gateway writes it in a shared session only) — what a
restarted process, or one whose table dropped the session, still sees (a review: there, the one user heard since
got every earlier turn, the others' too).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable

from ..events import Message

#: user messages remembered per session, once a second user spoke in it (the oldest are forgotten first:
#: their turns are then nobody's)
MAX_HEARD = 4096
#: ... and while one user alone did (the turns a second user's arrival finds: older ones are nobody's then)
MAX_HEARD_ALONE = 16
#: a text more than one user sent: nobody's (the anonymous user's id, which a turn of nobody's is archived as)
_AMBIGUOUS = ""


def _digest(text: str) -> int:
    return int.from_bytes(hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=8).digest(), "big")


#: hermes' sender prefix of a user message in a shared session (``gateway/run.py``: ``f"[{name}] {text}"``)
_SENDER = re.compile(r"\[([^\]\n]{1,100})\] ")


def names_several(messages: Iterable[Message]) -> bool:
    """Whether the user messages of ``messages`` carry more than one sender name in hermes' prefix."""
    names: set[str] = set()
    for message in messages:
        text = said(message) if message.get("role") == "user" else None
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

    def heard(self, user_id: str, texts: Iterable[str]) -> None:
        """``user_id`` sent the user message whose text is each of ``texts`` (forms of one message)."""
        if self._first is None:
            self._first = user_id
        elif user_id != self._first:
            self.shared = True
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
        return other

"""Who said each user message of a session several users speak in.

hermes' gateway gives a chat platform's shared thread (or a group with ``group_sessions_per_user: false``)
one session and one agent; each turn's ``pre_llm_call`` names that turn's sender, so the session's owner
as the hooks tell it is whoever spoke last. A compaction in such a session removes the turns of several
users: archived as the last speaker's, the others could not search their own words and forgetting one of
them left their words in someone else's archive — readable from that person's private chat with
``archive.scope: user`` (a red-team pass through hermes' real gateway). So the session table remembers,
per session, which user sent each user message it heard (a digest of its text, as hermes stores it), and
the archive keeps each removed message as the speaker of the turn it belongs to.

Only what this process heard: a user message from before a restart, or from a session the table dropped,
is the compaction's owner's, as before.
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from collections.abc import Iterable

from ..events import Message

#: user messages remembered per session (the oldest are forgotten first)
MAX_HEARD = 512


def _digest(text: str) -> str:
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()


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
        self._by_text: OrderedDict[str, str] = OrderedDict()

    def heard(self, user_id: str, texts: Iterable[str]) -> None:
        """``user_id`` sent the user message whose text is each of ``texts`` (forms of one message)."""
        for text in dict.fromkeys(texts):
            key = _digest(text)
            self._by_text[key] = user_id
            self._by_text.move_to_end(key)
        while len(self._by_text) > MAX_HEARD:
            self._by_text.popitem(last=False)

    def several(self) -> bool:
        """Whether more than one user spoke (else the session's owner is every turn's)."""
        users = iter(self._by_text.values())
        first = next(users, None)
        return any(user != first for user in users)

    def of(self, message: Message) -> str | None:
        """Who sent ``message`` (a user message), ``None``: not heard here."""
        text = said(message)
        return None if text is None else self._by_text.get(_digest(text))

    def copy(self) -> Speakers:
        other = Speakers()
        other._by_text = OrderedDict(self._by_text)
        return other

"""What of the conversation the model still sees: the recall block leaves it out.

hermes sends the model the conversation so far (after a compaction: the summary and the turns kept
after it). A memory of one of those turns, recalled, repeats what the prompt already holds and takes
the place of one from an earlier conversation: eight turns into a session on one topic, every line of
the block was one of that session's own turns, all of them still in the prompt. ``sync_turn`` gives
the history as hermes has it after each turn; :class:`InContext` remembers the user messages in it
(a digest of each one's start), per conversation, and a turn memory of the same conversation (its
session id, its parent's or an earlier one's: hermes moves a conversation to a new id at a compaction
with ``compression.in_place: false``) whose user text is one of them is left out of the prefetch block.

What a compaction takes out of the history is recalled again: the next sync no longer holds it, and
until then (between hermes' ``on_pre_compress`` and that sync) nothing is left out. A turn whose
stored text differs from what was said (a secret redacted before storing) is not recognised and is
shown as before; so is everything in a process that has not yet seen the conversation's history
(the first turn after a restart). The same words said in another conversation are never left out,
and the search tool still finds every memory.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from typing import Any

from ...events import SessionInfo
from ...storage import Memory

#: the characters of a user message that identify it: a search candidate's texts may be cut (at 8,000
#: stored characters, never fewer than ~1,300 of the text), so only a start they all keep is compared
COMPARED_CHARS = 1_000
#: conversations remembered at once (a Bridge's provider serves many): the least recently synced go first
CONVERSATIONS = 512


def _digest(text: str) -> bytes:
    return hashlib.blake2b(text.strip()[:COMPARED_CHARS].encode("utf-8", "surrogatepass"), digest_size=16).digest()


def _key(session: SessionInfo) -> tuple[str, str, str, str]:
    return (session.deployment, session.user_id, session.chat_id, session.session_id)


def _user_text(message: Mapping[str, Any]) -> str | None:
    """A user message's text as hermes gives it to memory providers (parts joined by line breaks)."""
    if message.get("role") != "user":
        return None
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [p if isinstance(p, str) else p.get("text") for p in content if isinstance(p, (str, Mapping))]
        return "\n".join(p for p in parts if isinstance(p, str))
    return None


class _History:
    """One conversation's user messages as of its last sync; a history that only grew is read from
    where it was left (hermes appends to one list), any other is read again. The first and last message
    read are kept, not their ids: an id is reused once its object is gone."""

    __slots__ = ("digests", "ends", "length")

    def __init__(self) -> None:
        self.digests: set[bytes] = set()
        self.length = 0
        self.ends: tuple[object, object] | None = None

    def update(self, messages: Sequence[Mapping[str, Any]]) -> None:
        grew = (self.ends is not None and len(messages) >= self.length
                and messages[0] is self.ends[0] and messages[self.length - 1] is self.ends[1])
        start = self.length if grew else 0
        if not grew:
            self.digests = set()
        for message in messages[start:]:
            text = _user_text(message) if isinstance(message, Mapping) else None
            if text and text.strip():
                self.digests.add(_digest(text))
        self.length = len(messages)
        self.ends = (messages[0], messages[-1]) if messages else None


class InContext:
    """The user messages in each conversation's history, for :meth:`holds`. Thread-safe."""

    def __init__(self, conversations: int = CONVERSATIONS) -> None:
        self._lock = threading.Lock()
        self._size = conversations
        #: by owner and conversation: two deployments (or users) may name a session alike
        self._histories: OrderedDict[tuple[str, str, str, str], _History] = OrderedDict()

    def update(self, session: SessionInfo, messages: Sequence[Mapping[str, Any]]) -> None:
        """``messages``: the conversation of ``session`` as hermes has it after a turn (none: nothing known)."""
        if not messages:
            return
        key = _key(session)
        with self._lock:
            history = self._histories.pop(key, None) or _History()
            self._histories[key] = history
            while len(self._histories) > self._size:
                self._histories.popitem(last=False)
            history.update(messages)

    def forget(self) -> None:
        """A compaction is about to change histories: nothing is left out until each is synced again."""
        with self._lock:
            self._histories.clear()

    def holds(self, session: SessionInfo, memory: Memory) -> bool:
        """Whether ``memory`` is a turn still in the prompt of ``session``'s conversation."""
        if memory.kind != "turn" or not memory.user_text.strip():
            return False
        ids = {session.session_id, session.parent_session_id, *session.earlier_sessions}
        if memory.session_id not in ids:
            return False
        with self._lock:
            history = self._histories.get(_key(session))
            return history is not None and _digest(memory.user_text) in history.digests

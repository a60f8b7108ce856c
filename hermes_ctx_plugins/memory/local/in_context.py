"""What the conversation's prompt already holds: the recall block leaves it out.

hermes sends the model the conversation so far (after a compaction: the summary and the turns kept after
it), each user message as it was sent, the recall block of its turn included (hermes replays the
``api_content`` it stamped on the message, for the provider's prompt cache). So a memory recalled again
repeats what the prompt holds and takes the place of one it does not: eight turns into a session on one
topic, every line of the block was one of that session's own turns, all still in the prompt, and the
same earlier memory was in the prompt once per turn that recalled it.

``sync_turn`` gives the history as hermes has it after each turn. :class:`InContext` reads it, per owner
and conversation, for two things the prompt holds:

* each turn, as the pair of its user message and the final answer after it (a digest of each one's start:
  a search candidate's texts may be cut; what hermes merged into the message after a compaction, such as
  the task list it keeps, is not part of it); a turn memory of this session with the same pair is left out;
* the ids in ctx-local's recall blocks replayed with the user messages; those memories are left out.

Only this session's turns are compared: hermes names a session's parent when the user resumes another
one (``/resume``) or starts anew (``/new``) as well as when a compaction moves a conversation to a new
id, so a parent's turns are not known to be in the prompt, and are shown. What a compaction takes out of
the history is recalled again from the next sync on (the prefetch of a compaction made at the start of a
turn still reads the history before it). A turn whose stored texts differ from the history's (a secret
redacted before storing, an image's placeholder, a model's thinking stripped from the answer) is not
recognised and is shown as before; so is everything in a process that has not yet seen the
conversation's history (the first turn after a restart). Another conversation, chat or owner is never
affected, and the search tool still finds every memory.
"""

from __future__ import annotations

import hashlib
import re
import threading
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from typing import Any

from ...events import SessionInfo
from ...storage import Memory
from .recall import HEADER

#: the characters of a text that identify it: a search candidate's texts may be cut (at 8,000 stored
#: characters, never fewer than ~1,300 of the text), so only a start they all keep is compared
COMPARED_CHARS = 1_000
#: conversations remembered at once (a Bridge's provider serves many): the least recently synced go first
CONVERSATIONS = 256
#: a memory's line in a recall block (:func:`.recall.provenance`)
_SHOWN_ID = re.compile(r"^- \[#(\d+) · ", re.MULTILINE)
#: what hermes may merge into a user message after what the user said (a blank line before it): the task list it
#: keeps across a compaction, its system notes, a background process' news
_SCAFFOLDING = ("[Your active task list was preserved across context compression]", "[System: ",
                "[IMPORTANT: Background process ")


def _said(text: str) -> tuple[str, ...]:
    """``text``, and what comes before each piece of hermes' scaffolding merged into it."""
    cut = [text[:at] for at in (text.find("\n\n" + mark) for mark in _SCAFFOLDING) if at > 0]
    return (text, *cut)


def _digest(user: str, answer: str) -> int:
    digest = hashlib.blake2b(digest_size=8)
    for text in (user, answer):
        digest.update(text.strip()[:COMPARED_CHARS].encode("utf-8", "surrogatepass"))
        digest.update(b"\x00")
    return int.from_bytes(digest.digest(), "big")


def _text(content: Any) -> str | None:
    """A message's text as hermes gives it to memory providers (parts joined by line breaks)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [p if isinstance(p, str) else p.get("text") for p in content if isinstance(p, (str, Mapping))]
        return "\n".join(p for p in parts if isinstance(p, str))
    return None


def _fingerprint(message: object) -> tuple[int, int]:
    """A message told apart without keeping it (an id alone is reused once its object is gone)."""
    content = message.get("content") if isinstance(message, Mapping) else None
    return id(message), hash(content[:200]) if isinstance(content, str) else id(content)


class _History:
    """One conversation's prompt as of its last sync. A history that only grew is read on from where it was
    left (hermes appends to one list); any other is read again."""

    __slots__ = ("ends", "length", "pairs", "pending", "shown")

    def __init__(self) -> None:
        self.pairs: set[int] = set()
        self.shown: set[int] = set()
        self.length = 0
        self.ends: tuple[tuple[int, int], tuple[int, int]] | None = None
        #: what the last user message read may have said (:func:`_said`) and the latest answer after it (a turn
        #: may go on in the next read)
        self.pending: tuple[tuple[str, ...], str] | None = None

    def read(self, messages: Sequence[object]) -> None:
        grew = (self.ends is not None and len(messages) >= self.length
                and _fingerprint(messages[0]) == self.ends[0]
                and _fingerprint(messages[self.length - 1]) == self.ends[1])
        if not grew:
            self.pairs, self.shown, self.pending = set(), set(), None
        pending = self.pending
        for message in messages[self.length if grew else 0:]:
            if not isinstance(message, Mapping):
                continue
            role = message.get("role")
            if role == "user":
                sent = message.get("api_content")
                if isinstance(sent, str) and HEADER in sent:
                    self.shown.update(int(n) for n in _SHOWN_ID.findall(sent, sent.index(HEADER)))
                text = _text(message.get("content"))
                pending = (_said(text), "") if text and text.strip() else None
            elif role == "assistant" and pending is not None:
                answer = _text(message.get("content"))
                if answer and answer.strip():
                    pending = (pending[0], answer)
                    self.pairs.update(_digest(said, answer) for said in pending[0])
        self.pending = pending
        self.length = len(messages)
        self.ends = (_fingerprint(messages[0]), _fingerprint(messages[-1])) if messages else None


class InContext:
    """What each conversation's prompt holds, for :meth:`holds`. Thread-safe."""

    def __init__(self, conversations: int = CONVERSATIONS) -> None:
        self._lock = threading.Lock()
        self._size = conversations
        #: by owner and conversation: two deployments, users or chats may name a session alike
        self._histories: OrderedDict[tuple[str, str, str, str], _History] = OrderedDict()

    def update(self, session: SessionInfo, messages: Sequence[object]) -> None:
        """``messages``: the conversation of ``session`` as hermes has it after a turn (none: nothing known)."""
        if not messages:
            return
        key = _key(session)
        with self._lock:
            history = self._histories.pop(key, None) or _History()
            self._histories[key] = history
            while len(self._histories) > self._size:
                self._histories.popitem(last=False)
        fresh = _History()  # read outside the lock: a gateway gives a history of new objects each time
        fresh.pairs, fresh.shown, fresh.length, fresh.ends, fresh.pending = (
            set(history.pairs), set(history.shown), history.length, history.ends, history.pending)
        fresh.read(messages)
        with self._lock:
            if key in self._histories:
                self._histories[key] = fresh

    def holds(self, session: SessionInfo, memory: Memory) -> bool:
        """Whether the prompt of ``session``'s conversation already holds ``memory``."""
        with self._lock:
            history = self._histories.get(_key(session))
        if history is None:
            return False
        if memory.id in history.shown:
            return True
        return (memory.kind == "turn" and memory.session_id == session.session_id
                and memory.chat_id == session.chat_id and _digest(memory.user_text, memory.assistant_text)
                in history.pairs)


def _key(session: SessionInfo) -> tuple[str, str, str, str]:
    return (session.deployment, session.user_id, session.chat_id, session.session_id)

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
* the memories in ctx-local's recall blocks replayed with the user messages (a block's lines after its header, in
  what hermes appended to what the user typed: a block the user pasted is not ours to trust), each by its id, its
  date and the start and end of its text, so an id the store gave again to another memory (SQLite reuses the
  newest row's id once it is deleted) is not taken for it; those memories are left out.

Only this session's turns are compared: hermes names a session's parent when the user resumes another one
(``/resume``) or starts anew (``/new``) as well as when a compaction moves a conversation to a new id, so a parent's
turns are not known to be in the prompt, and are shown. What a compaction takes out of the history is recalled again
from the next sync on; the recall right after a compaction made at the start of a turn (hermes says so:
``on_session_switch``, reason "compression") leaves out only what came with the first messages and the latest turn,
which compactions keep (the rest may be in the summary alone); after an ``/undo`` (hermes says so too: rewound), and
when a new agent takes the conversation up (hermes initialises its memory: a Bridge may build one for the session
with an empty history), nothing is left out until the next sync, and a recall for the user message the last sync
ended with (``/retry`` sends it again, telling no provider) does not leave out what came with it. A turn whose
stored texts differ from the history's (a secret redacted before storing, an image's placeholder, a model's thinking
stripped from the answer) is not recognised and is shown as before; so is everything in a process that has not yet
seen the conversation's history (the first turn after a restart). Another conversation, chat or owner is never
affected, and the search tool still finds every memory.
"""

from __future__ import annotations

import hashlib
import logging
import re
import sys
import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ...compression.messages import text_of
from ...events import SessionInfo
from ...storage import Memory
from ...storage.text import printable
from .recall import HEADER, provenance

log = logging.getLogger("hermes_ctx_plugins.memory.local")

#: the characters of a text that identify it: a search candidate's texts may be cut (at 8,000 stored
#: characters, never fewer than ~1,300 of the text), so only a start they all keep is compared
COMPARED_CHARS = 1_000
#: the first messages of a conversation a compaction keeps (hermes' ``compression.protect_first_n``, 3 unless set)
HEAD = 3
#: conversations remembered at once (a Bridge's provider serves many): the least recently synced go first
CONVERSATIONS = 256
#: a memory's line in a recall block: its provenance (:func:`.recall.provenance`: an id of 1 to 2**63-1, at most 19
#: digits -- int() refuses more than 4,300, and a user can type a line like it) and its text
_SHOWN = re.compile(r"- \[(#([0-9]{1,19}) · [^\]\n]*)\] (.*)")
#: the start and the end of a line's text tell the memory it shows (with its provenance)
SNIPPET_CHARS = 24
#: how a line whose memory is withheld starts (:func:`~hermes_ctx_plugins.safety.placeholder`): its text is not the
#: memory's
_WITHHELD = "[memory entry withheld"
#: what :meth:`InContext.holds` remembers of the memories it compared (a long conversation on one topic compares the
#: same ~200 search candidates with the blocks' lines every turn): so many comparisons, then it starts again
REMEMBERED = 8_192
#: what hermes may merge into a user message after what the user said (a blank line before it): the task list it
#: keeps across a compaction, its system notes, a background process' news
_SCAFFOLDING = ("[Your active task list was preserved across context compression]", "[System: ",
                "[IMPORTANT: Background process ")


def _said(text: str) -> tuple[str, ...]:
    """``text``, and what comes before each piece of hermes' scaffolding merged into it."""
    cut = [text[:at] for at in (text.find("\n\n" + mark) for mark in _SCAFFOLDING) if at > 0]
    return (text, *cut)


def _shown(sent: str, content: object) -> dict[int, tuple[int, str, str]]:
    """The memories of the ctx-local recall block in ``sent`` (a user message's ``api_content``): by id, what its line
    says of it (the hash of its provenance, the start and the end of its text). Only what hermes appended to what
    the user typed (its ``content``) is read, and only the lines right after the header."""
    injected = sent[len(content):] if isinstance(content, str) and sent.startswith(content) else sent
    at = injected.rfind(HEADER)
    shown: dict[int, tuple[int, str, str]] = {}
    if at < 0:
        return shown
    for line in injected[at + len(HEADER):].split("\n")[1:]:
        match = _SHOWN.fullmatch(line)
        if match is None:
            break
        text = "" if match[3].startswith(_WITHHELD) else match[3].strip("…")
        shown[int(match[2])] = (hash(match[1]), text[:SNIPPET_CHARS], text[-SNIPPET_CHARS:])
    return shown


def _same(seen: tuple[int, str, str, int], memory: Memory) -> bool:
    """Whether a block's line that showed ``seen`` (:func:`_shown`) showed ``memory``."""
    if seen[0] != hash(provenance(memory, session=False)):
        return False
    flat = " ".join(printable(memory.text).split())
    return seen[1] in flat and seen[2] in flat


def _pair(_: object, memory: Memory) -> int:
    """The digest a turn memory's exchange has in :attr:`_History.pairs`."""
    return _digest(memory.user_text, memory.assistant_text)


def _digest(user: str, answer: str) -> int:
    digest = hashlib.blake2b(digest_size=8)
    for text in (user, answer):
        digest.update(text.strip()[:COMPARED_CHARS].encode("utf-8", "surrogatepass"))
        digest.update(b"\x00")
    return int.from_bytes(digest.digest(), "big")


def _fingerprint(message: object) -> tuple[int, int]:
    """A message told apart without keeping it (an id alone is reused once its object is gone)."""
    content = message.get("content") if isinstance(message, Mapping) else None
    return id(message), hash(content[:200]) if isinstance(content, str) else id(content)


class _History:
    """One conversation's prompt as of its last sync. A history that only grew is read on from where it was
    left (hermes appends to one list); any other is read again. Each thing known is kept with the position of the
    message it came with (:meth:`compacted`): a block's, its user message's; a turn's, its answer's."""

    __slots__ = ("ends", "last", "length", "pairs", "pending", "said", "shown")

    def __init__(self) -> None:
        self.pairs: dict[int, int] = {}
        #: by id: the hash of what a block's line said of the memory (its provenance), the start and the end of its
        #: text, and where it was
        self.shown: dict[int, tuple[int, str, str, int]] = {}
        self.length = 0
        self.ends: tuple[tuple[int, int], tuple[int, int]] | None = None
        #: what the last user message read may have said (:func:`_said`), the latest answer after it (a turn may go
        #: on in the next read) and its position
        self.pending: tuple[tuple[str, ...], str, int] | None = None
        #: the position of the last user message read, and the start of what it said (:meth:`InContext.holds`)
        self.last = -1
        self.said: str | None = None

    def copy(self) -> _History:
        made = _History()
        made.pairs, made.shown, made.length, made.ends, made.pending, made.last, made.said = (
            dict(self.pairs), dict(self.shown), self.length, self.ends, self.pending, self.last, self.said)
        return made

    def read(self, messages: Sequence[object]) -> None:
        grew = (self.ends is not None and len(messages) >= self.length
                and _fingerprint(messages[0]) == self.ends[0]
                and _fingerprint(messages[self.length - 1]) == self.ends[1])
        if not grew:
            self.pairs, self.shown, self.pending, self.last, self.said = {}, {}, None, -1, None
        pending = self.pending
        for at in range(self.length if grew else 0, len(messages)):
            message = messages[at]
            if not isinstance(message, Mapping):
                continue
            role = message.get("role")
            if role == "user":
                self.last = at
                sent = message.get("api_content")
                if isinstance(sent, str) and HEADER in sent:
                    self.shown.update((n, (*seen, at)) for n, seen in _shown(sent, message.get("content")).items())
                text = text_of(message.get("content"))
                pending = (_said(text), "", at) if text and text.strip() else None
                self.said = text.strip()[:COMPARED_CHARS] if text else None
            elif role == "assistant" and pending is not None:
                answer = text_of(message.get("content"))
                if answer and answer.strip():
                    pending = (pending[0], answer, pending[2])
                    self.pairs.update((_digest(said, answer), at) for said in pending[0])  # where it is all there
        self.pending = pending
        self.length = len(messages)
        self.ends = (_fingerprint(messages[0]), _fingerprint(messages[-1])) if messages else None

    def compacted(self) -> _History:
        """What is still known once a compaction was made since the last read, until the next read says what it
        kept: what came with the first messages (hermes and our compressors keep them: ``protect_first_n``) and with
        the latest turn's user message (the tail they keep ends with it); the rest may be in its summary alone."""
        def kept(at: int) -> bool:
            return at < HEAD or at >= self.last

        made = _History()  # read whole next time: its ends are not known
        made.pairs = {digest: at for digest, at in self.pairs.items() if kept(at)}
        made.shown = {n: seen for n, seen in self.shown.items() if kept(seen[-1])}
        return made


class InContext:
    """What each conversation's prompt holds, for :meth:`holds`. Thread-safe."""

    def __init__(self, conversations: int = CONVERSATIONS) -> None:
        self._lock = threading.Lock()
        self._size = conversations
        #: what :func:`_same` and :func:`_digest` said of a memory (told by its id, key, time and texts' lengths:
        #: a key names one text, and an id the store gives again comes with another key), so that a memory read
        #: again is not compared again; a comparison depends on nothing else, whoever asks
        self._compared: dict[tuple[object, ...], object] = {}
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
        fresh = history.copy()  # read outside the lock: a gateway gives a history of new objects each time
        try:
            fresh.read(messages)
        except Exception:  # never what was known before: a compaction since may have taken it out of the prompt
            log.exception("ctx-local: the history of session %r could not be read; recall leaves nothing of it out",
                          session.session_id)
            fresh = _History()
        with self._lock:
            if key in self._histories:
                self._histories[key] = fresh

    def compacted(self, session: SessionInfo) -> None:
        """hermes compacted the conversation of ``session`` before this turn's recall (:meth:`_History.compacted`)."""
        key = _key(session)
        with self._lock:
            history = self._histories.get(key)
            if history is not None:
                self._histories[key] = history.compacted()

    def forget(self, session: SessionInfo) -> None:
        """What the prompt of ``session``'s conversation holds is no longer known until the next sync: hermes took
        its last turns out (``/undo``), or a new agent took it up, with whatever history it was given (a Bridge may
        build one for the session with none)."""
        with self._lock:
            self._histories.pop(_key(session), None)

    def holds(self, session: SessionInfo, memory: Memory, question: str = "") -> bool:
        """Whether the prompt of ``session``'s conversation already holds ``memory``, for the recall of ``question``.
        ``question`` the user message the last sync ended with: a retry (hermes' ``/retry`` takes that exchange out
        and sends its message again, telling no provider), so what came with that message is not held."""
        with self._lock:
            history = self._histories.get(_key(session))
        if history is None:
            return False
        asked = question.strip()[:COMPARED_CHARS]
        again = history.last if asked and asked == history.said else sys.maxsize
        seen = history.shown.get(memory.id)
        if seen is not None and seen[-1] < again and self._compare(_same, seen, memory):
            return True
        if memory.kind != "turn" or memory.session_id != session.session_id or memory.chat_id != session.chat_id:
            return False
        at = history.pairs.get(self._compare(_pair, None, memory))
        return at is not None and at < again

    def _compare(self, how: Callable[[Any, Memory], object], seen: object, memory: Memory) -> Any:
        """``how(seen, memory)``, remembered (see ``_compared``)."""
        key = (how, seen, memory.id, memory.key, memory.created_at, len(memory.user_text),
               len(memory.assistant_text), len(memory.fact_text))
        found = self._compared.get(key, self)
        if found is self:
            if len(self._compared) >= REMEMBERED:
                self._compared = {}
            found = self._compared[key] = how(seen, memory)
        return found


def _key(session: SessionInfo) -> tuple[str, str, str, str]:
    return (session.deployment, session.user_id, session.chat_id, session.session_id)

"""The parts of the plugin host, one seam per module, combined in :class:`~hermes_ctx_plugins.manager.Host`.

* :mod:`.plugins` — loading plugins and calling their lifecycle hooks (an installed plugin's only once
  opted in): the only code that talks to pluggy;
* :mod:`.providers` — the memory fan-out: activating providers and telling each of them, isolated;
* :mod:`.compaction` — running a strategy with its fallback and the archive around it.

Each part is a mixin class that names, at its top, what it uses of the rest of the host. Import the
host from :mod:`hermes_ctx_plugins.manager`, never from here.
"""

from __future__ import annotations

import copy
import dataclasses
import logging
from collections.abc import Callable

from ..events import MessageView, Request, Response, Turn

log = logging.getLogger("hermes_ctx_plugins")


def owner_key(kind: str, name: str) -> str:
    """The key the host's isolator counts failures under: ``plugin:<name>``, ``compressor:<name>``,
    ``memory:<name>``."""
    return f"{kind}:{name}"


#: the calls into a provider never abandoned at a time limit (see :mod:`hermes_ctx_plugins.isolation`): writes,
#: whose loss would be worse than the wait (a turn stored, the end of a session, a shutdown's flush, a forget)
UNBOUNDED_METHODS = frozenset({"sync_turn", "on_session_end", "shutdown", "forget_user", "on_memory_write", "flush"})

#: the most characters a memory provider that is not built in may add to a prompt in one recall (built-in
#: ones keep their own token budgets); what is over it is cut, saying so
MAX_RECALL_CHARS = 16_000


def foreign_code(obj: object) -> bool:
    """Whether ``obj`` is an instance of a class defined outside this package (another plugin's)."""
    return type(obj).__module__.split(".", 1)[0] != __name__.split(".", 1)[0]


def read_only(value: object) -> object:
    """``value`` as a plugin or provider that is not built in is given it: the conversation in a request or a turn,
    or a list of messages, as a :class:`~hermes_ctx_plugins.events.MessageView` (each message a copy when read), a
    response's assistant message a copy; anything else as it is. What such code changes in it never reaches the
    conversation the host keeps (a hook rewrote hermes' history in place, a red-team pass). A request's context is
    added to the copy: the host takes what each plugin added when its call returns (nothing added later reaches
    the request)."""
    if isinstance(value, Request):
        counted = value.__dict__.get("_token_estimate")  # None: counted if read (from the host's messages)
        return Request(session=value.session, messages=MessageView(value.messages), model=value.model,
                       token_estimate=counted, turn_number=value.turn_number,  # type: ignore[arg-type]
                       user_message=value.user_message, contributions=list(value.contributions))
    if isinstance(value, Turn):
        return dataclasses.replace(value, messages=MessageView(value.messages))
    if isinstance(value, Response) and value.assistant_message is not None:
        return dataclasses.replace(value, assistant_message=copy.deepcopy(value.assistant_message))
    if isinstance(value, list):  # hermes' memory calls pass the conversation so (on_session_end, on_pre_compress)
        return MessageView(value)
    return value


def bounded_text(value: object, *, owner: str, foreign: bool, fail: Callable[[str, BaseException], None],
                 what: str, limit: int) -> str:
    """What a provider's ``what`` returned, as text for the prompt: ``""`` for nothing, and for anything that
    is not text (counted as ``owner``'s failure through ``fail``: never ``str()`` of it); a foreign
    provider's text cut to ``limit`` characters, saying so in the text and the log. Never raises, whatever
    the value (its ``==`` and ``repr`` are never called)."""
    if value is None:
        return ""
    if type(value) is not str:  # a str subclass may override what it likes: plain text only
        fail(owner, TypeError(f"{what} returned {type(value).__name__}, not text; nothing of it was used"))
        return ""
    if foreign and len(value) > limit:
        log.warning("%s: %s returned %d characters; only the first %d are used", owner, what, len(value), limit)
        return cut_saying_so(value, limit)
    return value


def cut_saying_so(text: str, limit: int) -> str:
    """The first ``limit`` characters of ``text``, saying how many more were left out."""
    return text[:limit] + f"\n[… cut: {len(text) - limit:,} more characters left out]"

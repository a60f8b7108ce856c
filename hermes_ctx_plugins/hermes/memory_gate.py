"""The ``file`` provider inside hermes: hermes' own ``memory`` tool behind our gates.

hermes 0.19.0 keeps MEMORY.md / USER.md itself (the ``memory`` tool and its ``MemoryStore``; it
is not a memory provider) and its files are byte-for-byte ours. So rather than a second writer,
the ``file`` provider governs hermes' writer through hermes' middleware API:

* ``tool_execution`` middleware: every ``memory`` tool call — the model's, and those of hermes'
  own background review fork — first passes :meth:`FileProvider.gate`: our threat scan and our
  approval mode (``block`` refuses, ``stage`` holds the write in ``pending.json`` for
  ``hermes-ctx memory approve``). Only a call that passes reaches hermes' writer, which then also
  mirrors it to hermes' external provider as usual. If our check itself fails the write is
  refused (fail closed), never the turn.
* ``llm_execution`` middleware: a hostile entry that reached the files from outside (an editor, a
  shell append) and that hermes' own load-time filter let through is replaced, on the wire, by
  our placeholder. The replacement is fixed for the session, so the prompt prefix stays cacheable.

Not ``llm_request`` middleware: while any is registered hermes deep-copies every request twice
before each model call (about 8 ms per call at 190k tokens of history, growing with it). Execution
middleware gets hermes' own request and hands the call on, so the gate copies only what it changes:
nothing when no entry is withheld (the common case), else the request's outer dict, its message
list and the system message it rewrites; every other message goes out as hermes' own object, and
hermes' request is never changed. (hermes' ``pre_api_request`` observers, which run before the call,
see the request as hermes built it, as its ``HERMES_DUMP_REQUESTS`` dump does; the model does not.)
:func:`install` registers the gates at every start; each call passes straight through unless the
host its session belongs to (hermes' config's, or a Bridge deployment's) has ``file`` active, so what
the config says when the host is built decides, not what it said when hermes started. When our host
cannot be built, hermes runs without us: the gates pass everything through, as if not registered.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..events import SessionInfo
from ..isolation import party_of

if TYPE_CHECKING:
    from ..manager import Host
    from ..memory.file.provider import FileProvider
    from .runtime import Runtime

log = logging.getLogger("hermes_ctx_plugins.hermes")

_CHECK_FAILED: str | None = json.dumps({"success": False, "error": (
    "memory write not applied: hermes-ctx could not check it (see the log); nothing was changed")})


#: hermes' memory tool actions that write (hermes' own approval gate stages these)
_WRITES = frozenset({"add", "replace", "remove"})
#: why a Bridge owner's write is refused while hermes' own approval gate is on
HERMES_STAGES = ("hermes' memory.write_approval is on: hermes would stage a memory write in one folder for every "
                 "user of this hermes home ($HERMES_HOME/pending/memory, naming no owner, out of reach of forget) and "
                 "approve it into the top-level USER.md / MEMORY.md, not its owner's; in a Bridge, set hermes' "
                 "memory.write_approval: false and stage per owner with ctx_plugins.options.file.write_approval: stage")


def hermes_stages_memory_writes() -> bool:
    """Whether hermes' own approval gate (``memory.write_approval`` in its config.yaml, read at every write, as hermes
    reads it) would stage a memory tool write."""
    try:
        from tools import write_approval

        return bool(write_approval.write_approval_enabled(write_approval.MEMORY))
    except Exception:  # not this hermes: no such gate
        return False


def file_provider(host: Host) -> FileProvider | None:
    """The host's active ``file`` provider, if any."""
    from ..memory.file.provider import FileProvider  # not at hermes' start, where the gates are only registered

    return next((p for p in host.memory_providers if isinstance(p, FileProvider)), None)


class MemoryGate:
    """The two middleware callbacks, routed per session like the hooks."""

    def __init__(self, runtime: Runtime) -> None:
        self.runtime = runtime

    def callbacks(self) -> dict[str, Callable[..., Any]]:
        return {"tool_execution": self.tool_execution, "llm_execution": self.llm_execution}

    def files_session(self, session_id: str) -> SessionInfo:
        """The session whose owner's files hermes' memory tool and prompt use for ``session_id``.

        A Bridge gives each agent its owner's files (:mod:`.scoped_memory`); any other hermes agent
        uses hermes' single pair of files, the anonymous top-level owner's — so that is what our
        gate must check and stage into, whoever the session's user is.
        """
        bound = self.runtime.sessions.binding(session_id)
        if bound is not None:
            host, session = bound
            return host.scoped(session)
        return SessionInfo(session_id=session_id)

    def tool_execution(self, *, tool_name: str = "", args: dict[str, Any] | None = None,
                       next_call: Callable[[Any], Any], session_id: str = "", **_: Any) -> Any:
        if tool_name != "memory" or not self.runtime.usable():
            return next_call(args)
        if args is not None and not isinstance(args, dict):  # the model's mistake: answered, nothing written
            return json.dumps({"success": False, "error": f"the arguments must be a JSON object, got "
                                                          f"{type(args).__name__}"})
        host, left_out = self.runtime.route(session_id)
        provider = file_provider(host)
        if provider is None or provider.name in left_out:  # an agent without memory: hermes refuses it
            return next_call(args)
        if (self.runtime.sessions.binding(session_id) is not None and _writes(args)
                and hermes_stages_memory_writes()):  # a Bridge owner's files: hermes' staging would lose the owner
            return json.dumps({"success": False, "error": HERMES_STAGES})
        session = self.files_session(session_id)
        verdict = host.isolator.call("memory:file", provider.gate, dict(args or {}), session=session,
                                     default=_CHECK_FAILED, party=party_of(session))
        if verdict is not None:
            return verdict
        result = next_call(args)
        try:  # its error answers list the entries: not the ones the prompt withholds
            result = provider.withhold_in_answer(result, dict(args or {}), session=session)
        except Exception:  # never the user's turn
            log.exception("hermes-ctx could not check the memory tool's answer for withheld entries")
        warning = provider.warnings.take(dict(args or {}))
        if warning and isinstance(result, str):  # warn: hermes' answer says the layers disagreed
            try:
                answer = json.loads(result)
            except ValueError:
                return result
            if isinstance(answer, dict) and answer.get("success"):
                answer["warning"] = f"written, but the memory scanner's layers disagree ({warning})"
                return json.dumps(answer, ensure_ascii=False)
        return result

    def llm_execution(self, *, request: Any = None, next_call: Callable[[Any], Any], session_id: str = "",
                      **_: Any) -> Any:
        """Make the model call with the session's withheld entries replaced (see the module)."""
        try:
            filtered = self._withheld_copy(request, session_id)
        except Exception:  # never the user's turn: send the request as hermes built it
            log.exception("hermes-ctx could not filter the memory block of this request")
            filtered = None
        return next_call(filtered)  # None: hermes' request as it is; what the call raises is hermes'

    def _withheld_copy(self, request: Any, session_id: str) -> dict[str, Any] | None:
        """``request`` with the hostile entries of the session's snapshot replaced, or ``None`` when
        there is nothing to replace."""
        if not isinstance(request, dict) or not self.runtime.usable():
            return None
        provider = file_provider(self.runtime.route(session_id)[0])
        if provider is None:
            return None
        withheld = provider.withheld_for(self.files_session(session_id))
        return _withhold(request, withheld) if withheld else None


def _writes(args: dict[str, Any] | None) -> bool:
    """Whether a memory tool call writes (one action, or a batch of operations)."""
    args = args or {}
    return args.get("action") in _WRITES or bool(args.get("operations"))


def _withhold(request: dict[str, Any], withheld: dict[str, str]) -> dict[str, Any] | None:
    """A copy of ``request`` with the ``withheld`` entries replaced in its system prompt, or ``None``
    when none appears there. Copy-on-write: ``request`` and everything in it stay as they are, and
    the copy shares every part it does not change.

    The system prompt is what leads the request: the leading ``system`` / ``developer`` messages
    (hermes puts its prompt, with the memory block, first), ``system`` (Anthropic-style transports)
    or ``instructions`` (the Responses API). The conversation after it is not looked at, so the cost
    does not grow with the history.
    """
    changes: dict[str, Any] = {}
    messages = request.get("messages")
    if isinstance(messages, list):
        changed: list[Any] | None = None
        for i, message in enumerate(messages):
            if not isinstance(message, dict) or message.get("role") not in ("system", "developer"):
                break
            cleaned = _cleaned_message(message, withheld)
            if cleaned is not None:
                changed = changed if changed is not None else list(messages)
                changed[i] = cleaned
        if changed is not None:
            changes["messages"] = changed
    for key in ("system", "instructions"):
        text = request.get(key)
        if isinstance(text, str) and (cleaned_text := _cleaned(text, withheld)) != text:
            changes[key] = cleaned_text
    return {**request, **changes} if changes else None


def _cleaned_message(message: dict[str, Any], withheld: dict[str, str]) -> dict[str, Any] | None:
    """A copy of ``message`` with the withheld entries replaced in its content, or ``None`` if none is there."""
    content = message.get("content")
    if isinstance(content, str):
        text = _cleaned(content, withheld)
        return {**message, "content": text} if text != content else None
    if not isinstance(content, list):
        return None
    parts = [_cleaned_part(part, withheld) for part in content]
    changed = any(new is not old for new, old in zip(parts, content, strict=True))
    return {**message, "content": parts} if changed else None


def _cleaned_part(part: Any, withheld: dict[str, str]) -> Any:
    """A content part with the withheld entries replaced in its text: a copy if any was, else ``part``."""
    if isinstance(part, dict) and isinstance(part.get("text"), str):
        text = _cleaned(part["text"], withheld)
        if text != part["text"]:
            return {**part, "text": text}
    return part


def _cleaned(text: str, withheld: dict[str, str]) -> str:
    """``text`` with every withheld entry replaced by its placeholder."""
    for entry, placeholder in withheld.items():
        if entry in text:
            text = text.replace(entry, placeholder)
    return text


def install(ctx: Any, runtime: Runtime) -> None:
    """Register the gates (see the module)."""
    gate = MemoryGate(runtime)
    for kind, callback in gate.callbacks().items():
        ctx.register_middleware(kind, callback)


def defer_reviews_to_hermes(host: Host) -> None:
    """hermes runs its own background review on the same ``memory.nudge_interval``; running ours
    too would double the model calls, so ``review: auto`` stands down (``on`` insists)."""
    provider = file_provider(host)
    if provider is not None:
        provider.defer_review_to_host()

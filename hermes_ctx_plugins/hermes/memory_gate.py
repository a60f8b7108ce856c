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
* ``llm_request`` middleware: a hostile entry that reached the files from outside (an editor, a
  shell append) and that hermes' own load-time filter let through is replaced, on the wire, by
  our placeholder. The replacement is fixed for the session, so the prompt prefix stays cacheable.

hermes deep-copies each request for request middleware (about 8 ms per call at 190k tokens of
history, measured), so :func:`install` registers it only when the ``file`` provider is active.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..events import SessionInfo
from ..manager import Host
from ..memory.file.provider import FileProvider

if TYPE_CHECKING:
    from .runtime import Runtime

log = logging.getLogger("hermes_ctx_plugins.hermes")

_CHECK_FAILED: str | None = json.dumps({"success": False, "error": (
    "memory write not applied: hermes-ctx could not check it (see the log); nothing was changed")})


def file_provider(host: Host) -> FileProvider | None:
    """The host's active ``file`` provider, if any."""
    return next((p for p in host.memory_providers if isinstance(p, FileProvider)), None)


class MemoryGate:
    """The two middleware callbacks, routed per session like the hooks."""

    def __init__(self, runtime: Runtime) -> None:
        self.runtime = runtime

    def callbacks(self) -> dict[str, Callable[..., Any]]:
        return {"tool_execution": self.tool_execution, "llm_request": self.llm_request}

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
        if tool_name != "memory":
            return next_call(args)
        host, left_out = self.runtime.route(session_id)
        provider = file_provider(host)
        if provider is None or provider.name in left_out:  # an agent without memory: hermes refuses it
            return next_call(args)
        session = self.files_session(session_id)
        verdict = host.isolator.call("memory:file", provider.gate, dict(args or {}), session=session,
                                     default=_CHECK_FAILED)
        if verdict is not None:
            return verdict
        return next_call(args)

    def llm_request(self, *, request: dict[str, Any] | None = None, session_id: str = "",
                    **_: Any) -> dict[str, Any] | None:
        if not isinstance(request, dict):
            return None
        host = self.runtime.route(session_id)[0]
        provider = file_provider(host)
        if provider is None:
            return None
        withheld = provider.withheld_for(self.files_session(session_id))
        if not withheld:
            return None
        try:
            changed = _withhold(request, withheld)
        except Exception:  # never the user's turn: send the request as hermes built it
            log.exception("hermes-ctx could not filter the memory block of this request")
            return None
        if not changed:
            return None
        return {"request": request, "source": "hermes-ctx", "reason": "hostile memory entries withheld"}


def _withhold(request: dict[str, Any], withheld: dict[str, str]) -> bool:
    """Replace withheld entries in the system prompt of ``request`` (in place); whether any was."""
    changed = False

    def clean(text: str) -> str:
        nonlocal changed
        for entry, placeholder in withheld.items():
            if entry in text:
                text = text.replace(entry, placeholder)
                changed = True
        return text

    for message in request.get("messages") or ():
        if not isinstance(message, dict) or message.get("role") not in ("system", "developer"):
            continue
        content = message.get("content")
        if isinstance(content, str):
            message["content"] = clean(content)
        elif isinstance(content, list):
            for part in content:
                if isinstance(part, dict) and isinstance(part.get("text"), str):
                    part["text"] = clean(part["text"])
    if isinstance(request.get("system"), str):  # Anthropic-style transports
        request["system"] = clean(request["system"])
    if isinstance(request.get("instructions"), str):  # the Responses API
        request["instructions"] = clean(request["instructions"])
    return changed


def install(ctx: Any, runtime: Runtime) -> bool:
    """Register the gates when the ``file`` provider is active at the top level or in any
    deployment (a Bridge's agents use them); whether they were registered."""
    config = runtime.host.config
    selected = {*config.provider_names}
    for dep in config.plugins.deployments.values():
        if dep.memory is not None and dep.memory.providers is not None:
            selected.update(dep.memory.providers)
    if "file" not in selected:
        return False
    gate = MemoryGate(runtime)
    for kind, callback in gate.callbacks().items():
        ctx.register_middleware(kind, callback)
    return True


def defer_reviews_to_hermes(host: Host) -> None:
    """hermes runs its own background review on the same ``memory.nudge_interval``; running ours
    too would double the model calls, so ``review: auto`` stands down (``on`` insists)."""
    provider = file_provider(host)
    if provider is not None:
        provider.defer_review_to_host()

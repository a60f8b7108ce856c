"""``ctx-honcho``: long-term memory in Honcho, through the official ``honcho-ai`` SDK (extra ``honcho``).

``Honcho(base_url, api_key, workspace_id, timeout, max_retries)`` with our own ``httpx.Client``: the
SDK retries 429 and 5xx answers ``max_retries`` times and sleeps whatever ``Retry-After`` says (an
hour, if the server says so), so our transport caps that header at ``retry_after_cap`` seconds.
Building the client needs no network; peers and sessions are get-or-create calls made lazily on
a background thread and cached.

Two peers per conversation: the owner's and the AI's (``ai_peer``). The owner's peer id is one per
(namespace, user) — ``u<user>``, ``d<namespace>-u<user>`` (escaped into Honcho's ``[A-Za-z0-9_-]``,
hashed past the server's 100 characters, see :func:`~hermes_ctx_plugins.scope.service_id`) or the
``default_user_id`` for the CLI's anonymous user — and ``ai_peer`` can never be one of them. Each
owner has Honcho sessions of their own: one per hermes session (``session_strategy: per-session``),
per chat (``per-chat``: chat id or gateway session key) or one in all (``per-user``), named
``<owner>-<which>`` (see :meth:`HonchoProvider.session_key`), so users who share a chat or a
session id never share a Honcho session. Each finished turn is added on the background queue: its
message and reply cut to ``max_turn_chars`` (100,000 by default, marked as cut), then chunked under
the server's message size limit (``message_max_chars``, continuation chunks marked ``[continued]``)
in batches of at most 100. Queries and questions are cut to ``max_query_chars`` (the server's
4,000), conclusions and profile lines to ``max_fact_chars`` (see
:mod:`~hermes_ctx_plugins.memory.remote.base`).

Recall (``recall_mode`` ``hybrid`` | ``context`` | ``tools``): the session context targeted at the
user's peer (summary, peer card, representation, searched with the turn's message) and/or
(``prefetch``) the dialectic answer of ``peer.chat``, always about the user's own peer, so one
user's memory never reaches another's turn. Tools: ``ctx_honcho_profile``, ``ctx_honcho_search``,
``ctx_honcho_context``, ``ctx_honcho_conclude``.

``forget_user`` deletes the owner's sessions (with their messages and conclusions), the other
conclusions about or by the owner and clears their peer cards. honcho-ai 2.7 cannot delete a peer:
the owner's peer itself stays, holding nothing.
"""

from __future__ import annotations

import hashlib
import logging
import os
import re
import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any, ClassVar

from ...errors import ConfigError
from ...events import SessionInfo, Turn
from ...isolation import known_secret
from ...options import option
from ...scope import escape_id
from .base import RecallItem, RemoteProvider
from .options import RemoteOptions
from .service import SDK_IMPORTS, key_problem
from .text import ToolError, bounded_int, json_int, short_id, shown, tool_schema

log = logging.getLogger("hermes_ctx_plugins.memory")

DEFAULT_BASE_URL = "https://api.honcho.dev"
SESSION_STRATEGIES = ("per-session", "per-chat", "per-user")
PREFETCH_SOURCES = ("context", "dialectic", "both")
REASONING_LEVELS = ("", "minimal", "low", "medium", "high", "max")
#: Honcho accepts at most this many messages per request
BATCH_LIMIT = 100
#: the longest search query the server takes (longer: 422); the bound of ``max_query_chars``
QUERY_CHARS = 4000
#: the most lines a profile card set by ``ctx_honcho_profile`` may have
CARD_LINES = 100
CONTINUED = "[continued] "
#: what the Honcho server takes as a workspace, peer or session id (its schemas; the SDK allows 512)
ID_CHARS = 100
_ID_OK = re.compile(rf"[A-Za-z0-9_-]{{1,{ID_CHARS}}}")


TOOLS = (
    tool_schema("ctx_honcho_profile",
                "Read the user's profile card (short standing facts: name, role, preferences); pass `card` to "
                "replace it with a corrected list.",
                {"card": {"type": "array", "items": {"type": "string"},
                          "description": "New card lines; omit to read."}},
                []),
    tool_schema("ctx_honcho_search",
                "Search what the user actually said in earlier conversations; returns matching messages.",
                {"query": {"type": "string"}, "limit": {"type": "integer", "description": "1-50, default 10."}},
                ["query"]),
    tool_schema("ctx_honcho_context",
                "What long-term memory holds about the user: summary, profile and known facts. Pass `question` "
                "to get a reasoned answer about the user instead.",
                {"question": {"type": "string", "description": "Optional question about the user."}}, []),
    tool_schema("ctx_honcho_conclude",
                "Record one durable conclusion about the user (a preference, a fact, a correction) for future "
                "sessions.",
                {"conclusion": {"type": "string"}}, ["conclusion"]),
)


@dataclass(frozen=True)
class HonchoOptions(RemoteOptions):
    """``ctx_plugins.options.ctx-honcho`` (besides the :class:`RemoteOptions`)."""

    #: the server; empty: ``$HONCHO_URL`` or ``$HONCHO_BASE_URL``, else the hosted service
    base_url: str = ""
    #: empty: ``$HONCHO_API_KEY`` (a self-hosted server may need none)
    api_key: str = ""
    #: empty: ``$HONCHO_WORKSPACE_ID``, else ``hermes``
    workspace_id: str = ""
    #: the SDK's retries of 429 / 5xx / network errors per call (each honours a capped Retry-After)
    max_retries: int = option(2, ge=0, le=5)
    #: the assistant's peer id
    ai_peer: str = "hermes"
    #: one Honcho session per hermes session, per chat, or per user
    session_strategy: str = option("per-session", choices=SESSION_STRATEGIES)
    #: what recall uses: the session ``context``, the ``dialectic`` answer, or ``both``
    prefetch: str = option("context", choices=PREFETCH_SOURCES)
    #: the server's limit on one message; longer text is sent in chunks
    message_max_chars: int = option(25_000, ge=200, le=1_000_000)
    #: Honcho keeps the conversation itself, so a long turn is kept (in ``message_max_chars`` chunks)
    #: up to this many characters of the message and of the reply, then cut and marked
    max_turn_chars: int = option(100_000, ge=200, le=1_000_000)
    #: cut before sending: the server refuses a longer query with a 422
    max_query_chars: int = option(QUERY_CHARS, ge=50, le=QUERY_CHARS)
    #: dialectic reasoning level (empty: the server's default)
    reasoning_level: str = option("", choices=REASONING_LEVELS)


def chunks(text: str, limit: int) -> list[str]:
    """``text`` in pieces of at most ``limit`` chars, cut at whitespace when possible."""
    out: list[str] = []
    rest = text
    while rest:
        room = limit - (len(CONTINUED) if out else 0)
        if len(rest) <= room:
            piece, rest = rest, ""
        else:
            cut = rest.rfind("\n", room // 2, room)
            if cut < 0:
                cut = rest.rfind(" ", room // 2, room)
            cut = cut if cut > 0 else room
            piece, rest = rest[:cut], rest[cut:].lstrip()
        out.append(CONTINUED + piece if out else piece)
    return out


class HonchoProvider(RemoteProvider):
    """Long-term memory in Honcho (see the module docs)."""

    name = "ctx-honcho"
    description = "Honcho peers, sessions and dialectic recall through the honcho-ai SDK, with breaker and queue"
    options_class = HonchoOptions
    sdk_module = "honcho"
    sdk_package = "honcho-ai"
    extra = "honcho"
    tools = TOOLS
    text_arguments: ClassVar[dict[str, str]] = {"query": "query", "question": "query", "conclusion": "fact",
                                                "card": "fact"}
    local_keys = ("scope", "owner")
    url_options = ("base_url",)
    id_max_chars = ID_CHARS
    options: HonchoOptions

    def __init__(self, options: Any = None, **kwargs: Any) -> None:
        super().__init__(options, **kwargs)
        self.check_api_key()
        self.check_fixed_id("ai_peer", required=True)
        workspace = self.options.workspace_id  # empty: $HONCHO_WORKSPACE_ID or the default, checked where used
        if workspace and not _ID_OK.fullmatch(workspace):
            raise ConfigError(f"{workspace!r} is not a valid Honcho id", value=workspace,
                              path=f"ctx_plugins.options.{self.name}.workspace_id",
                              expected=f"letters, digits, '_' and '-', 1-{ID_CHARS} characters")
        ai_peer = self.options.ai_peer
        for key in self.fixed_id_options:
            if getattr(self.options, key) == ai_peer:
                raise ConfigError(f"{ai_peer!r} is also {key}: that user's peer would be the AI's, and would "
                                  "see every user's assistant replies", value=ai_peer,
                                  path=f"ctx_plugins.options.{self.name}.ai_peer", expected=f"an id other than {key}")
        self._client_lock = threading.Lock()
        self._honcho: Any = None
        self._http: Any = None
        self._scopes: OrderedDict[tuple[str, str], tuple[Any, Any, Any]] = OrderedDict()

    # ------------------------------------------------------------------ configuration

    @property
    def base_url(self) -> str:
        return (self.options.base_url or os.environ.get("HONCHO_URL") or os.environ.get("HONCHO_BASE_URL")
                or DEFAULT_BASE_URL)

    @property
    def api_key(self) -> str:
        key = self.options.api_key or os.environ.get("HONCHO_API_KEY", "")
        known_secret(key)  # an error page echoing it is redacted wherever it is shown (the environment's too)
        return key

    @property
    def workspace_id(self) -> str:
        return self.options.workspace_id or os.environ.get("HONCHO_WORKSPACE_ID") or "hermes"

    def configuration_problem(self) -> str:
        if self.base_url == DEFAULT_BASE_URL and not self.api_key:
            return (f"no Honcho API key for the hosted service: set ctx_plugins.options.{self.name}.api_key "
                    f"or HONCHO_API_KEY (or base_url for a self-hosted server)")
        problem = key_problem(self.api_key)
        if problem:
            return f"the Honcho API key in HONCHO_API_KEY is not valid: {problem}"
        if not _ID_OK.fullmatch(self.workspace_id):
            return f"workspace id {self.workspace_id!r} is not a valid Honcho id ([A-Za-z0-9_-], 1-{ID_CHARS})"
        return ""

    def target(self) -> str:
        return f"{self.base_url} (workspace {self.workspace_id})"

    # ------------------------------------------------------------------ scope

    def id_problem(self, value: str) -> str:
        return "" if _ID_OK.fullmatch(value) else f"Honcho ids are 1-{ID_CHARS} letters, digits, '-' and '_'"

    def session_key(self, session: SessionInfo, owner: str | None = None) -> str:
        """The Honcho session of ``session``: ``<owner>-<which>``, which is ``user`` (per-user),
        ``c<chat>`` (per-chat) or ``s<session>`` (per-session, and per-chat without a chat), escaped.

        One-to-one: only the part after the last ``-`` has no ``-``, and the owner is one-to-one
        with its (namespace, user). Past Honcho's length limit, ``k`` and a hash (no ``-``).
        """
        chat = self.chat_key(session) if self.options.session_strategy == "per-chat" else ""
        which = ("user" if self.options.session_strategy == "per-user"
                 else f"c{escape_id(chat)}" if chat else f"s{escape_id(session.session_id)}")
        # a queued write's stamped owner: its session is that owner's, whatever ``user_id`` says now (a review: sent
        # after a change of ``user_id``, its peer joined the new owner's session, and a forget of either deleted both)
        key = f"{owner or self.owner_id(session)}-{which}"
        if len(key) <= ID_CHARS:
            return key
        return f"k{hashlib.sha256(key.encode('ascii')).hexdigest()[:48]}"

    # ------------------------------------------------------------------ the SDK client

    def _client(self) -> Any:
        with self._client_lock:
            if self._honcho is None:
                import httpx

                with SDK_IMPORTS:
                    from honcho import Honcho

                from .transport import BoundedAnswers, CappedRetryAfter

                bounded = BoundedAnswers(httpx.HTTPTransport(), seconds=self.options.timeout)
                http = httpx.Client(transport=CappedRetryAfter(bounded, self.options.retry_after_cap),
                                    timeout=httpx.Timeout(self.options.timeout))
                try:
                    self._honcho = Honcho(base_url=self.base_url, api_key=self.api_key or None,
                                          workspace_id=self.workspace_id, timeout=self.options.timeout,
                                          max_retries=self.options.max_retries, http_client=http)
                except BaseException:
                    http.close()
                    raise
                self._http = http
            return self._honcho

    def _scope(self, session: SessionInfo, owner: str | None = None) -> tuple[Any, Any, Any]:
        """``(honcho session, user peer, AI peer)`` for ``session``, created on first use and cached; ``owner``: the
        user peer's id when it is known already (a queued write's), else :meth:`owner_id`'s."""
        key = (self.session_key(session, owner), owner or self.owner_id(session))
        with self._client_lock:
            cached = self._scopes.get(key)
            if cached is not None:
                self._scopes.move_to_end(key)
                return cached
        honcho = self._client()
        user, ai = honcho.peer(key[1]), honcho.peer(self.options.ai_peer)
        scope = (honcho.session(key[0], peers=[user, ai]), user, ai)
        with self._client_lock:
            if self._honcho is honcho:
                self._scopes[key] = scope
                while len(self._scopes) > 256:
                    self._scopes.popitem(last=False)
        return scope

    def _scoped(self, session: SessionInfo) -> tuple[Any, Any, Any]:
        """:meth:`_scope` through the breaker when it asks the service; a cached one is no call, so no success (a
        red-team pass: every tool call's cached scope counted as the service answering, so its failures never opened
        the breaker, and the probe after a cool-down said the service was back while it answered 503)."""
        with self._client_lock:
            cached = self._scopes.get((self.session_key(session), self.owner_id(session)))
        return cached if cached is not None else self.call(self._scope, session)

    def close_client(self) -> None:
        with self._client_lock:
            http, self._honcho, self._http = self._http, None, None
            self._scopes.clear()
        if http is not None:
            self.retire(http.close)

    def check(self) -> None:
        self.call(lambda: self._client().get_configuration())  # the workspace get-or-create route

    def http_status(self, exc: BaseException) -> int | None:
        status = getattr(exc, "status", None)
        return status if isinstance(status, int) else None

    def retry_after(self, exc: BaseException) -> float | None:
        after = getattr(exc, "retry_after", None)
        return float(after) if isinstance(after, (int, float)) else None

    # ------------------------------------------------------------------ writes

    def writes_for_turn(self, turn: Turn) -> list[dict[str, Any]]:
        limit = self.options.message_max_chars
        meta = {"source": "hermes", "hermes_session": short_id(turn.session.session_id),
                "turn": json_int(turn.turn_number)}
        messages = [{"peer": "user", "content": c, "metadata": meta}
                    for c in chunks(self.turn_text(turn.user_text), limit)]
        for name, result in self.tool_results(turn):
            messages += [{"peer": "ai", "content": c, "metadata": {**meta, "tool": name}}
                         for c in chunks(f"[{name} output] {result}", limit)]
        messages += [{"peer": "ai", "content": c, "metadata": meta}
                     for c in chunks(self.turn_text(turn.assistant_text), limit)]
        scope, owner = _scope_of(turn.session), self.owner_id(turn.session)
        return [{"kind": "messages", "scope": scope, "owner": owner, "messages": messages[i:i + BATCH_LIMIT]}
                for i in range(0, len(messages), BATCH_LIMIT)]

    def write_problem(self, write: dict[str, Any]) -> str | None:
        if write.get("kind") == "conclusion":
            return None if isinstance(write.get("content"), str) else "a conclusion without its text"
        messages = write.get("messages")
        if not isinstance(messages, list) or not all(
                isinstance(m, dict) and isinstance(m.get("content"), str) and isinstance(m.get("metadata"), dict)
                and m.get("peer") in ("user", "ai") for m in messages):
            return "'messages' is not a list of messages"
        return None

    def send_write(self, write: dict[str, Any]) -> None:
        honcho_session, user, ai = self._scope(_session_of(write), _stamped_owner(write))
        if write.get("kind") == "conclusion":
            ai.conclusions_of(user).create([{"content": write["content"], "session_id": honcho_session.id}])
            return
        honcho_session.add_messages([(user if m["peer"] == "user" else ai).message(m["content"], metadata=m["metadata"])
                                     for m in write["messages"]])

    def write_owner(self, write: dict[str, Any]) -> str:
        """The owner the write was queued for (stamped by the provider that queued it, with that deployment's
        ``user_id``: a review, a deployment storing every session under one fixed id read every other deployment's
        writes as that id's, and ``forget --user <that id>`` deleted them). A write queued before owners were stamped:
        by this provider's settings when it is of this provider's namespace, else by its session's own user id (the
        settings of another namespace are not known here)."""
        stamped = _stamped_owner(write)
        if stamped is not None:
            return stamped
        session = _session_of(write)
        if session.deployment == self.config.memory_namespace:
            return self.owner_id(session)
        return self.owner_for(session.deployment, session.user_id)

    def foreign_owner(self, write: dict[str, Any]) -> str:
        stamped = _stamped_owner(write)
        if stamped is not None:
            return stamped
        session = _session_of(write)
        return self.owner_for(session.deployment, session.user_id)

    def write_namespace(self, write: dict[str, Any]) -> str | None:
        return _session_of(write).deployment

    def forget_owner(self, owner: str) -> tuple[int | None, str]:
        from honcho import Peer

        honcho = self._client()
        peer, ai = Peer(owner, honcho), Peer(self.options.ai_peer, honcho)  # no call: never creates them
        sessions = list(self._unless_missing([], peer.sessions))
        for session in sessions:
            self._unless_missing(None, session.delete)  # with its messages and their conclusions
        conclusions = {c.id for field in ("observed_id", "observer_id")
                       for c in self._unless_missing([], honcho.conclusions.list, filters={field: owner})}
        for conclusion_id in conclusions:
            self._unless_missing(None, peer.conclusions.delete, conclusion_id)
        cards = 0
        for holder, target in ((peer, None), (ai, owner)):  # the owner's own card, the AI's card of them
            if self._unless_missing(None, holder.get_card, target=target):
                holder.set_card([], target=target)
                cards += 1
        with self._client_lock:  # cached scopes name the deleted sessions
            for key in [key for key in self._scopes if key[1] == owner]:
                del self._scopes[key]
        return len(sessions) + len(conclusions) + cards, (
            f"sessions deleted with their messages: {len(sessions)}, other conclusions: {len(conclusions)}, "
            f"peer cards cleared: {cards}; the peer {owner!r} itself, if it exists, stays, empty "
            "(honcho-ai cannot delete a peer)")

    def _unless_missing(self, missing: Any, fetch: Any, *args: Any, **kwargs: Any) -> Any:
        """``fetch(*args, **kwargs)``, or ``missing`` when Honcho answers 404 (gone, or never there)."""
        try:
            return fetch(*args, **kwargs)
        except Exception as exc:
            if self.http_status(exc) == 404:
                return missing
            raise

    # ------------------------------------------------------------------ recall

    def recall(self, query: str, session: SessionInfo) -> list[RecallItem]:
        honcho_session, user, _ = self._scope(session)
        items: list[RecallItem] = []
        if self.options.prefetch in ("context", "both"):
            items += self._context_items(honcho_session, user, query)
        if self.options.prefetch in ("dialectic", "both"):
            answer = self._ask(user, query)
            if answer:
                items.append(RecallItem(answer, label="insight"))
        return items

    def _context_items(self, honcho_session: Any, user: Any, query: str | None) -> list[RecallItem]:
        context = honcho_session.context(summary=True, tokens=max(self.options.recall_tokens, 1),
                                         peer_target=user.id, search_query=query or None)
        items = []
        if context.summary is not None and context.summary.content:
            items.append(RecallItem(context.summary.content, label="summary"))
        items += [RecallItem(line, label="profile") for line in context.peer_card or () if line.strip()]
        for line in (context.peer_representation or "").splitlines():
            line = line.strip().removeprefix("- ").strip()
            if line:
                items.append(RecallItem(line, label="known"))
        return items

    def _ask(self, user: Any, question: str) -> str:
        kwargs = {"reasoning_level": self.options.reasoning_level} if self.options.reasoning_level else {}
        answer = user.chat(question, **kwargs)
        return answer if isinstance(answer, str) else str(getattr(answer, "content", "") or "")

    # ------------------------------------------------------------------ tools

    def run_tool(self, name: str, args: dict[str, Any], session: SessionInfo) -> dict[str, Any]:
        if name == "ctx_honcho_search":
            query = self.text_argument(args, "query")
            limit = bounded_int(args.get("limit"), 10, key="limit", lo=1, hi=50)
            _, user, _ = self._scoped(session)
            # at most limit even if the server ignores it; only the user's own messages (defence in depth: a search
            # answered with another peer's messages -- a service or proxy bug -- reached this user's model)
            found = [m for m in self.call(lambda: user.search(query, limit=limit)) if self._authored_by(m, user)]
            found = found[:limit]
            return {"results": [{"content": self.safe(m.content), "session_id": m.session_id,
                                 "created_at": str(m.created_at)} for m in found], "count": len(found)}
        if name == "ctx_honcho_profile":
            lines = self._card(args.get("card"))
            _, user, _ = self._scoped(session)
            if lines is None:
                return {"card": [self.safe(line) for line in (self.call(user.get_card) or [])[:CARD_LINES]]}
            return {"success": True, "card": self.call(lambda: user.set_card(lines))}
        if name == "ctx_honcho_context":
            question = self.text_argument(args, "question", required=False)
            honcho_session, user, _ = self._scoped(session)
            if question:
                return {"answer": self.safe(self.call(self._ask, user, question) or "")}
            items = self.call(self._context_items, honcho_session, user, None)
            return {"context": [{"kind": item.label, "text": self.safe(item.text)} for item in items]}
        content = self.text_argument(args, "conclusion")  # ctx_honcho_conclude
        write = {"kind": "conclusion", "content": content, "scope": _scope_of(session), "owner": self.owner_id(session)}
        return self.send_or_queue(write, what="the conclusion", sent="recorded")

    def _authored_by(self, message: Any, user: Any) -> bool:
        """Whether a message a peer search found is that peer's (one naming no peer is taken as the search's)."""
        peer = getattr(message, "peer_id", None)
        if peer in (None, "", user.id):
            return True
        log.warning("%s: dropped a searched message of another peer (%r)", self.name, peer)
        return False

    def _card(self, card: Any) -> list[str] | None:
        """The ``card`` argument of ``ctx_honcho_profile`` as lines to set (``None``: read the card)."""
        if card is None:
            return None
        if not isinstance(card, list):
            raise ToolError(f"card must be a list of strings (the card's lines; omit it to read the card), not "
                            f"{type(card).__name__} {shown(card)}")
        if len(card) > CARD_LINES:
            raise ToolError(f"card has {len(card)} lines; a profile card has at most {CARD_LINES}")
        return [self.text_value(line, "card", label=f"card[{i}]") for i, line in enumerate(card)]


def _scope_of(session: SessionInfo) -> dict[str, str]:
    """What a queued write keeps of ``session`` to find its owner and Honcho session again."""
    return {"session_id": session.session_id, "user_id": session.user_id, "chat_id": session.chat_id,
            "gateway_session_key": str(session.extra.get("gateway_session_key") or ""),
            "deployment": session.deployment}


def _stamped_owner(write: dict[str, Any]) -> str | None:
    """The owner id a queued write was stamped with, if any (writes queued before stamping have none)."""
    owner = write.get("owner")
    return owner if isinstance(owner, str) and owner else None


def _session_of(write: dict[str, Any]) -> SessionInfo:
    """The session a queued write was made in (writes spooled before namespaces: the top level)."""
    scope = write.get("scope")
    scope = scope if isinstance(scope, dict) else {}
    return SessionInfo(session_id=str(scope.get("session_id") or ""), user_id=str(scope.get("user_id") or ""),
                       chat_id=str(scope.get("chat_id") or ""), deployment=str(scope.get("deployment") or ""),
                       extra={"gateway_session_key": str(scope.get("gateway_session_key") or "")})

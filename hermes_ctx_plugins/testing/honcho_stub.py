"""A stateful loopback Honcho server: the ``/v3/workspaces/...`` routes ``honcho-ai`` speaks.

Shapes follow the models ``honcho-ai`` 2.7 validates (``WorkspaceResponse``, ``PeerResponse``,
``SessionResponse``, ``MessageResponse``, ``ConclusionResponse``, ...)::

    POST /v3/workspaces                                   {"id"}            get-or-create
    POST /v3/workspaces/{ws}/peers                        {"id"}            get-or-create
    POST /v3/workspaces/{ws}/sessions                     {"id", "peers"?}  get-or-create
    POST /v3/workspaces/{ws}/sessions/{sid}/peers         {peer_id: {}}
    POST /v3/workspaces/{ws}/sessions/{sid}/messages      {"messages": [...]}  1-100, each <= max_message_chars
    GET  /v3/workspaces/{ws}/sessions/{sid}/context       ?summary&tokens&peer_target&search_query
    POST /v3/workspaces/{ws}/peers/{pid}/chat             {"query", "stream": false, "target"?, "session_id"?}
    GET  /v3/workspaces/{ws}/peers/{pid}/context          ?target&search_query
    POST /v3/workspaces/{ws}/peers/{pid}/representation   {"target"?, "search_query"?}
    GET|PUT /v3/workspaces/{ws}/peers/{pid}/card          ?target
    POST /v3/workspaces/{ws}/peers/{pid}/search           {"query", "limit"}
    POST /v3/workspaces/{ws}/search                       {"query", "filters", "limit"}
    POST /v3/workspaces/{ws}/conclusions                  {"conclusions": [{content, observer_id, observed_id}]}
    DELETE /v3/workspaces/{ws}/sessions/{sid}             the session, its messages and their conclusions
    POST /v3/workspaces/{ws}/peers/{pid}/sessions         {"filters"?} ?page&size   the peer's sessions (a page)
    POST /v3/workspaces/{ws}/conclusions/list             {"filters"?} ?page&size   (a page)
    DELETE /v3/workspaces/{ws}/conclusions/{cid}

A page is ``{"items", "total", "page", "size", "pages"}``; list filters are equalities on the
fields (``{"observed_id": "alice"}``). There is no route to delete a peer: Honcho has none.

Authentication is ``Authorization: Bearer <key>``. Ids must match ``[A-Za-z0-9_-]{1,100}`` (else a
FastAPI-style 422), and the server's size limits answer a 422 too: a message's content at most
``max_message_chars`` (25,000), a search query or ``search_query`` at most ``max_query_chars``
(4,000), a dialectic question at most 10,000 and a conclusion at most 65,535 characters. The
"reasoning" is deterministic: what Honcho knows about a peer is what that peer said plus the
conclusions drawn about it, ranked by words shared with the query, so recall is testable and
strictly per peer.
"""

from __future__ import annotations

import itertools
import re
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from .loopback import LoopbackService, Reply, ServiceRequest, relevance

__all__ = ["HonchoStubServer"]

_ID = re.compile(r"[A-Za-z0-9_-]{1,100}")
#: the longest dialectic question (``DialecticOptions.query``) and conclusion the server accepts
DIALECTIC_CHARS = 10_000
CONCLUSION_CHARS = 65_535
_WS = r"^/v3/workspaces/(?P<ws>[^/]+)"


def _now() -> str:
    return datetime.now(UTC).isoformat()


@dataclass
class _Session:
    id: str
    workspace_id: str
    peers: dict[str, dict[str, Any]] = field(default_factory=dict)
    metadata: dict[str, Any] = field(default_factory=dict)
    created_at: str = field(default_factory=_now)


class HonchoStubServer(LoopbackService):
    """A loopback Honcho keeping workspaces, peers, sessions, messages and conclusions in memory.

    ``base_url`` is what ``Honcho(base_url=...)`` takes.

    :param max_message_chars: the longest message content accepted (the server's size limit)
    :param max_query_chars: the longest search query (``query`` of a search, ``search_query``) accepted
    """

    def __init__(self, *, api_keys: tuple[str, ...] | None = ("honcho-test-key",), max_message_chars: int = 25_000,
                 max_query_chars: int = 4_000, hang_limit: float = 30.0) -> None:
        self.max_message_chars = max_message_chars
        self.max_query_chars = max_query_chars
        self._workspaces: dict[str, str] = {}
        self._peers: dict[tuple[str, str], dict[str, Any]] = {}
        self._sessions: dict[tuple[str, str], _Session] = {}
        self._messages: list[dict[str, Any]] = []
        self._conclusions: list[dict[str, Any]] = []
        self._cards: dict[tuple[str, str, str], list[str]] = {}
        self._ids = itertools.count(1)
        super().__init__(api_keys=api_keys, auth_scheme="Bearer", hang_limit=hang_limit)

    # -- inspection -------------------------------------------------------------------------------

    @property
    def messages(self) -> list[dict[str, Any]]:
        """Every stored message, oldest first (copies)."""
        with self.lock:
            return [dict(m) for m in self._messages]

    def messages_of(self, peer_id: str) -> list[str]:
        return [m["content"] for m in self.messages if m["peer_id"] == peer_id]

    @property
    def conclusions(self) -> list[dict[str, Any]]:
        with self.lock:
            return [dict(c) for c in self._conclusions]

    @property
    def sessions(self) -> dict[str, list[str]]:
        """Session id -> the ids of its peers."""
        with self.lock:
            return {sid: sorted(s.peers) for (_, sid), s in self._sessions.items()}

    @property
    def peers(self) -> list[str]:
        """The ids of every peer, in every workspace."""
        with self.lock:
            return [peer_id for _, peer_id in self._peers]

    @property
    def cards(self) -> dict[tuple[str, str], list[str]]:
        """``(observer, observed)`` -> the peer card (``[]``: cleared)."""
        with self.lock:
            return {(observer, observed): list(card) for (_, observer, observed), card in self._cards.items()}

    # -- routes -----------------------------------------------------------------------------------

    def handle(self, request: ServiceRequest) -> Reply:
        method, path, body, query = request.method, request.path.rstrip("/"), request.body, request.query
        if method == "POST" and path == "/v3/workspaces":
            return self._workspace(body)
        match = re.match(_WS + r"(?P<rest>/.*)?$", path)
        if not match:
            return Reply(404, {"detail": "Not Found"})
        ws, rest = match["ws"], match["rest"] or ""
        with self.lock:
            known = ws in self._workspaces
        if not known:
            return Reply(404, {"detail": f"Workspace {ws} not found"})
        routes: list[tuple[str, str, Any]] = [
            ("POST", r"/peers", lambda m: self._peer(ws, body)),
            ("POST", r"/sessions", lambda m: self._session(ws, body)),
            ("POST", r"/sessions/(?P<sid>[^/]+)/peers", lambda m: self._session_peers(ws, m["sid"], body)),
            ("POST", r"/sessions/(?P<sid>[^/]+)/messages", lambda m: self._add_messages(ws, m["sid"], body)),
            ("GET", r"/sessions/(?P<sid>[^/]+)/context", lambda m: self._session_context(ws, m["sid"], query)),
            ("POST", r"/peers/(?P<pid>[^/]+)/chat", lambda m: self._chat(ws, m["pid"], body)),
            ("GET", r"/peers/(?P<pid>[^/]+)/context", lambda m: self._peer_context(ws, m["pid"], query)),
            ("POST", r"/peers/(?P<pid>[^/]+)/representation",
             lambda m: self._representation_route(ws, m["pid"], body)),
            ("GET", r"/peers/(?P<pid>[^/]+)/card", lambda m: self._get_card(ws, m["pid"], query)),
            ("PUT", r"/peers/(?P<pid>[^/]+)/card", lambda m: self._set_card(ws, m["pid"], query, body)),
            ("POST", r"/peers/(?P<pid>[^/]+)/search", lambda m: self._search(ws, body, author=m["pid"])),
            ("POST", r"/search", lambda m: self._search(ws, body)),
            ("POST", r"/conclusions", lambda m: self._conclude(ws, body)),
            ("DELETE", r"/sessions/(?P<sid>[^/]+)", lambda m: self._delete_session(ws, m["sid"])),
            ("POST", r"/peers/(?P<pid>[^/]+)/sessions", lambda m: self._peer_sessions(ws, m["pid"], body, query)),
            ("POST", r"/conclusions/list", lambda m: self._list_conclusions(ws, body, query)),
            ("DELETE", r"/conclusions/(?P<cid>[^/]+)", lambda m: self._delete_conclusion(ws, m["cid"])),
        ]
        for route_method, pattern, action in routes:
            found = re.fullmatch(pattern, rest)
            if found and route_method == method:
                with self.lock:
                    reply: Reply = action(found)
                return reply
        return Reply(404, {"detail": "Not Found"})

    def _workspace(self, body: Any) -> Reply:
        workspace_id = body.get("id") if isinstance(body, dict) else None
        if not isinstance(workspace_id, str) or not _ID.fullmatch(workspace_id):
            return _invalid("id", "String should match pattern '^[a-zA-Z0-9_-]+$'")
        with self.lock:
            created = self._workspaces.setdefault(workspace_id, _now())
        return Reply(200, {"id": workspace_id, "metadata": {}, "configuration": {}, "created_at": created})

    def _ensure_peer(self, ws: str, peer_id: str) -> dict[str, Any]:
        return self._peers.setdefault((ws, peer_id), {
            "id": peer_id, "workspace_id": ws, "created_at": _now(), "metadata": {}, "configuration": {}})

    def _peer(self, ws: str, body: Any) -> Reply:
        peer_id = body.get("id") if isinstance(body, dict) else None
        if not isinstance(peer_id, str) or not _ID.fullmatch(peer_id):
            return _invalid("id", "String should match pattern '^[a-zA-Z0-9_-]+$'")
        return Reply(200, dict(self._ensure_peer(ws, peer_id)))

    def _session_json(self, session: _Session) -> dict[str, Any]:
        return {"id": session.id, "is_active": True, "workspace_id": session.workspace_id,
                "metadata": session.metadata, "configuration": {}, "created_at": session.created_at}

    def _session(self, ws: str, body: Any) -> Reply:
        session_id = body.get("id") if isinstance(body, dict) else None
        if not isinstance(session_id, str) or not _ID.fullmatch(session_id):
            return _invalid("id", "String should match pattern '^[a-zA-Z0-9_-]+$'")
        session = self._sessions.setdefault((ws, session_id), _Session(session_id, ws))
        peers = body.get("peers")
        if isinstance(peers, dict):
            reply = self._join(ws, session, peers)
            if reply is not None:
                return reply
        if isinstance(body.get("metadata"), dict):
            session.metadata = body["metadata"]
        return Reply(200, self._session_json(session))

    def _join(self, ws: str, session: _Session, peers: dict[str, Any]) -> Reply | None:
        for peer_id, config in peers.items():
            if not _ID.fullmatch(peer_id):
                return _invalid("peers", f"invalid peer id {peer_id!r}")
            self._ensure_peer(ws, peer_id)
            session.peers[peer_id] = config if isinstance(config, dict) else {}
        return None

    def _session_peers(self, ws: str, session_id: str, body: Any) -> Reply:
        session = self._sessions.get((ws, session_id))
        if session is None:
            return Reply(404, {"detail": f"Session {session_id} not found"})
        if not isinstance(body, dict):
            return _invalid("body", "expected an object of peer ids")
        return self._join(ws, session, body) or Reply(200, self._session_json(session))

    def _add_messages(self, ws: str, session_id: str, body: Any) -> Reply:
        session = self._sessions.get((ws, session_id))
        if session is None:
            return Reply(404, {"detail": f"Session {session_id} not found"})
        messages = body.get("messages") if isinstance(body, dict) else None
        if not isinstance(messages, list) or not 1 <= len(messages) <= 100:
            return _invalid("messages", "List should have at least 1 item and at most 100 items")
        for i, message in enumerate(messages):
            if not isinstance(message, dict) or not isinstance(message.get("content"), str):
                return _invalid(f"messages.{i}.content", "Field required")
            if too_long := _too_long(f"body.messages.{i}.content", message["content"], self.max_message_chars):
                return too_long
            if not isinstance(message.get("peer_id"), str) or not _ID.fullmatch(message["peer_id"]):
                return _invalid(f"messages.{i}.peer_id", "String should match pattern '^[a-zA-Z0-9_-]+$'")
        stored = []
        for message in messages:
            self._ensure_peer(ws, message["peer_id"])
            session.peers.setdefault(message["peer_id"], {})
            record = {"id": f"msg_{next(self._ids)}", "content": message["content"], "peer_id": message["peer_id"],
                      "session_id": session_id, "metadata": message.get("metadata") or {},
                      "created_at": message.get("created_at") or _now(), "workspace_id": ws,
                      "token_count": max(1, len(message["content"]) // 4)}
            self._messages.append(record)
            stored.append(dict(record))
        return Reply(200, stored)

    # -- what Honcho "knows" ----------------------------------------------------------------------

    def _facts(self, ws: str, peer_id: str, query: str | None = None, limit: int = 10) -> list[str]:
        """What is known about ``peer_id``: its own messages and conclusions about it, most relevant first."""
        facts = [m["content"] for m in self._messages if m["workspace_id"] == ws and m["peer_id"] == peer_id]
        facts += [c["content"] for c in self._conclusions
                  if c["workspace_id"] == ws and c["observed_id"] == peer_id]
        if query:
            ranked = sorted(((relevance(query, f), i, f) for i, f in enumerate(facts)), key=lambda t: (-t[0], -t[1]))
            facts = [f for score, _, f in ranked if score > 0]
        else:
            facts = facts[::-1]
        return facts[:limit]

    def _representation(self, ws: str, peer_id: str, query: str | None) -> str:
        return "\n".join(f"- {fact}" for fact in self._facts(ws, peer_id, query))

    def _session_context(self, ws: str, session_id: str, query: dict[str, str]) -> Reply:
        session = self._sessions.get((ws, session_id))
        if session is None:
            return Reply(404, {"detail": f"Session {session_id} not found"})
        budget = int(query["tokens"]) if query.get("tokens", "").isdigit() else 100_000
        messages: list[dict[str, Any]] = []
        used = 0
        for message in reversed([m for m in self._messages if m["workspace_id"] == ws
                                 and m["session_id"] == session_id]):
            used += message["token_count"]
            if used > budget:
                break
            messages.insert(0, dict(message))
        if too_long := _too_long("query.search_query", query.get("search_query"), self.max_query_chars):
            return too_long
        target = query.get("peer_target")
        representation = self._representation(ws, target, query.get("search_query")) if target else ""
        card = self._cards.get((ws, query.get("peer_perspective") or target, target)) if target else None
        return Reply(200, {"id": session_id, "messages": messages, "summary": None,
                           "peer_representation": representation or None, "peer_card": card})

    def _chat(self, ws: str, peer_id: str, body: Any) -> Reply:
        question = body.get("query") if isinstance(body, dict) else None
        if not isinstance(question, str) or not question.strip():
            return _invalid("query", "Field required")
        if too_long := _too_long("body.query", question, DIALECTIC_CHARS):
            return too_long
        if body.get("stream"):
            return _invalid("stream", "the stub does not stream")
        about = body.get("target") if isinstance(body.get("target"), str) else peer_id
        facts = self._facts(ws, about, question, limit=5)
        return Reply(200, {"content": f"What I know about {about}: " + "; ".join(facts) if facts else None})

    def _peer_context(self, ws: str, peer_id: str, query: dict[str, str]) -> Reply:
        if too_long := _too_long("query.search_query", query.get("search_query"), self.max_query_chars):
            return too_long
        target = query.get("target") or peer_id
        return Reply(200, {"peer_id": peer_id, "target_id": target,
                           "representation": self._representation(ws, target, query.get("search_query")) or None,
                           "peer_card": self._cards.get((ws, peer_id, target))})

    def _representation_route(self, ws: str, peer_id: str, body: Any) -> Reply:
        body = body if isinstance(body, dict) else {}
        if too_long := _too_long("body.search_query", body.get("search_query"), self.max_query_chars):
            return too_long
        target = body.get("target") or peer_id
        return Reply(200, {"representation": self._representation(ws, target, body.get("search_query"))})

    def _get_card(self, ws: str, peer_id: str, query: dict[str, str]) -> Reply:
        return Reply(200, {"peer_card": self._cards.get((ws, peer_id, query.get("target") or peer_id))})

    def _set_card(self, ws: str, peer_id: str, query: dict[str, str], body: Any) -> Reply:
        card = body.get("peer_card") if isinstance(body, dict) else None
        if not isinstance(card, list) or not all(isinstance(line, str) for line in card):
            return _invalid("peer_card", "Input should be a valid list of strings")
        self._ensure_peer(ws, peer_id)
        self._cards[(ws, peer_id, query.get("target") or peer_id)] = list(card)
        return Reply(200, {"peer_card": list(card)})

    def _search(self, ws: str, body: Any, *, author: str | None = None) -> Reply:
        question = body.get("query") if isinstance(body, dict) else None
        if not isinstance(question, str) or not question.strip():
            return _invalid("query", "Field required")
        if too_long := _too_long("body.query", question, self.max_query_chars):
            return too_long
        limit = body.get("limit") if isinstance(body.get("limit"), int) else 10
        filters = body.get("filters") if isinstance(body.get("filters"), dict) else {}
        found = []
        for message in self._messages:
            if message["workspace_id"] != ws or (author and message["peer_id"] != author):
                continue
            if any(message.get(k) != v for k, v in filters.items() if k in ("peer_id", "session_id")):
                continue
            score = relevance(question, message["content"])
            if score > 0:
                found.append((score, dict(message)))
        found.sort(key=lambda pair: -pair[0])
        return Reply(200, [message for _, message in found[:limit]])

    def _conclude(self, ws: str, body: Any) -> Reply:
        items = body.get("conclusions") if isinstance(body, dict) else None
        if not isinstance(items, list) or not 1 <= len(items) <= 100:
            return _invalid("conclusions", "List should have at least 1 item and at most 100 items")
        created = []
        for i, item in enumerate(items):
            if not isinstance(item, dict) or not isinstance(item.get("content"), str) or not item["content"]:
                return _invalid(f"conclusions.{i}.content", "Field required")
            if too_long := _too_long(f"body.conclusions.{i}.content", item["content"], CONCLUSION_CHARS):
                return too_long
            for key in ("observer_id", "observed_id"):
                if not isinstance(item.get(key), str) or not _ID.fullmatch(item[key]):
                    return _invalid(f"conclusions.{i}.{key}", "Field required")
        for item in items:
            record = {"id": f"concl_{uuid.uuid4().hex[:12]}", "content": item["content"],
                      "observer_id": item["observer_id"], "observed_id": item["observed_id"],
                      "session_id": item.get("session_id"), "level": "explicit", "created_at": _now(),
                      "workspace_id": ws}
            self._conclusions.append(record)
            created.append({k: v for k, v in record.items() if k != "workspace_id"})
        return Reply(200, created)

    # -- deleting ---------------------------------------------------------------------------------

    def _delete_session(self, ws: str, session_id: str) -> Reply:
        if self._sessions.pop((ws, session_id), None) is None:
            return Reply(404, {"detail": f"Session {session_id} not found"})
        self._messages = [m for m in self._messages if (m["workspace_id"], m["session_id"]) != (ws, session_id)]
        self._conclusions = [c for c in self._conclusions
                             if (c["workspace_id"], c["session_id"]) != (ws, session_id)]
        return Reply(200, {"message": "Session deleted successfully"})

    def _peer_sessions(self, ws: str, peer_id: str, body: Any, query: dict[str, str]) -> Reply:
        found = [self._session_json(s) for (w, _), s in self._sessions.items() if w == ws and peer_id in s.peers]
        return _page(found, body, query)

    def _list_conclusions(self, ws: str, body: Any, query: dict[str, str]) -> Reply:
        found = [{k: v for k, v in c.items() if k != "workspace_id"} for c in self._conclusions
                 if c["workspace_id"] == ws]
        return _page(found, body, query)

    def _delete_conclusion(self, ws: str, conclusion_id: str) -> Reply:
        kept = [c for c in self._conclusions if (c["workspace_id"], c["id"]) != (ws, conclusion_id)]
        if len(kept) == len(self._conclusions):
            return Reply(404, {"detail": f"Conclusion {conclusion_id} not found"})
        self._conclusions = kept
        return Reply(200, {"message": "Conclusion deleted successfully"})


def _page(items: list[dict[str, Any]], body: Any, query: dict[str, str]) -> Reply:
    """One page of the ``items`` matching the body's ``filters`` (equalities), as fastapi-pagination
    answers: ``{"items", "total", "page", "size", "pages"}``."""
    filters = body.get("filters") if isinstance(body, dict) else None
    if filters is not None and not isinstance(filters, dict):
        return _invalid("filters", "Input should be a valid dictionary")
    found = [item for item in items if all(item.get(k) == v for k, v in (filters or {}).items())]
    page = int(query["page"]) if query.get("page", "").isdigit() else 1
    size = int(query["size"]) if query.get("size", "").isdigit() else 50
    if page < 1 or not 1 <= size <= 100:
        return Reply(422, {"detail": [{"type": "value_error", "loc": ["query", "page"],
                                       "msg": "page >= 1 and 1 <= size <= 100"}]})
    start = (page - 1) * size
    return Reply(200, {"items": found[start:start + size], "total": len(found), "page": page, "size": size,
                       "pages": max(1, -(-len(found) // size))})


def _too_long(location: str, value: Any, limit: int) -> Reply | None:
    """The 422 the server answers when string ``value`` at ``location`` (``body.query``,
    ``query.search_query``) is longer than ``limit`` characters; ``None`` when it is not."""
    if not isinstance(value, str) or len(value) <= limit:
        return None
    where, _, field_path = location.partition(".")
    return Reply(422, {"detail": [{"type": "string_too_long", "loc": [where, *field_path.split(".")],
                                   "msg": f"String should have at most {limit} characters",
                                   "ctx": {"max_length": limit}}]})


def _invalid(location: str, message: str) -> Reply:
    """FastAPI's validation error shape, as the real server sends it."""
    return Reply(422, {"detail": [{"type": "value_error", "loc": ["body", *location.split(".")], "msg": message}]})

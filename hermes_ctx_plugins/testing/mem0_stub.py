"""A stateful loopback Mem0 platform: the REST routes ``mem0ai``'s ``MemoryClient`` speaks.

Shapes and status codes follow what ``mem0ai`` 2.2 sends and parses::

    GET    /v1/ping/              -> {"status", "org_id", "project_id", "user_email"}  (the constructor's check)
    POST   /v3/memories/add/      {"messages", "user_id"?, "agent_id"?, "app_id"?, "run_id"?, "infer"?, "metadata"?}
                                  -> {"status": "PENDING", "event_id"}                 (infer, the default)
                                  -> {"status": "SUCCEEDED", "results": [{"id", "data": {"memory"}, "event"}]}
    POST   /v3/memories/search/   {"query", "filters", "top_k"?, "threshold"?}  -> {"results": [memory + "score"]}
    POST   /v3/memories/          {"filters"} ?page&page_size       -> {"count", "next", "previous", "results"}
    GET|PUT|DELETE /v1/memories/{id}/
    DELETE /v1/memories/          ?user_id&agent_id&app_id&run_id   -> {"message"}  (``delete_all``; ``*``: any)

Authentication is ``Authorization: Token <key>``; a bad key gets ``401 {"detail": ...}``. "Inference" is
deterministic: with ``infer`` every user message becomes a memory (assistant text is context, as on the
platform); with ``infer: false`` every message is stored verbatim. Search ranks by shared words, so
"what is my locker combination" finds "my locker combination is 4-8-15-16". Filters are ANDed entity
ids (``{"user_id": "a"}``, also ``{"AND": [...]}`` / ``{"OR": [...]}``), and search refuses to run
without one, as the platform does; so does ``delete_all``, whose filters are query parameters.
"""

from __future__ import annotations

import hashlib
import re
import uuid
from datetime import UTC, datetime
from typing import Any

from .loopback import LoopbackService, Reply, ServiceRequest, relevance

__all__ = ["Mem0StubServer"]

ENTITY_IDS = ("user_id", "agent_id", "app_id", "run_id")
_MEMORY = re.compile(r"^/v1/memories/([^/]+)/?$")


def _now() -> str:
    return datetime.now(UTC).isoformat()


class Mem0StubServer(LoopbackService):
    """A loopback Mem0 platform keeping memories in memory (see the module docs).

    ``base_url`` is what ``MemoryClient(host=...)`` takes.
    """

    def __init__(self, *, api_keys: tuple[str, ...] | None = ("m0-test-key",), hang_limit: float = 30.0) -> None:
        self._memories: dict[str, dict[str, Any]] = {}
        self.events: list[dict[str, Any]] = []
        super().__init__(api_keys=api_keys, auth_scheme="Token", hang_limit=hang_limit)

    # -- inspection -------------------------------------------------------------------------------

    @property
    def memories(self) -> list[dict[str, Any]]:
        """Every stored memory, oldest first (copies)."""
        with self.lock:
            return [dict(m) for m in self._memories.values()]

    def memories_of(self, **entity: str) -> list[str]:
        """The texts of the memories whose entity ids match, e.g. ``memories_of(user_id="alice")``."""
        return [m["memory"] for m in self.memories if all(m.get(k) == v for k, v in entity.items())]

    @property
    def add_requests(self) -> list[ServiceRequest]:
        return self.requests_to("POST", r"^/v3/memories/add/?$")

    def seed(self, text: str, **entity: str) -> str:
        """Store a memory directly (as if added earlier); returns its id."""
        with self.lock:
            return str(self._store(text, entity, None)["id"])

    # -- routes -----------------------------------------------------------------------------------

    def handle(self, request: ServiceRequest) -> Reply:
        path, method, body = request.path, request.method, request.body
        if method == "GET" and path.rstrip("/") == "/v1/ping":
            return Reply(200, {"status": "ok", "org_id": "org_stub", "project_id": "proj_stub",
                               "user_email": "stub@example.invalid"})
        if method == "POST" and path.rstrip("/") == "/v3/memories/add":
            return self._add(body)
        if method == "POST" and path.rstrip("/") == "/v3/memories/search":
            return self._search(body)
        if method == "POST" and path.rstrip("/") == "/v3/memories":
            return self._list(body, request.query)
        if method == "DELETE" and path.rstrip("/") == "/v1/memories":
            return self._delete_all(request.query)
        match = _MEMORY.match(path)
        if match:
            return self._one(method, match.group(1), body)
        return Reply(404, {"detail": f"Not found: {method} {path}"})

    def _add(self, body: Any) -> Reply:
        if not isinstance(body, dict) or not isinstance(body.get("messages"), list) or not body["messages"]:
            return Reply(400, {"detail": "messages must be a non-empty list"})
        messages = body["messages"]
        if not all(isinstance(m, dict) and isinstance(m.get("content"), str) and m.get("role") for m in messages):
            return Reply(400, {"detail": "each message needs a role and string content"})
        entity = {k: body[k] for k in ENTITY_IDS if isinstance(body.get(k), str) and body[k]}
        filters = body.get("filters")
        if isinstance(filters, dict):
            entity.update({k: filters[k] for k in ENTITY_IDS if isinstance(filters.get(k), str) and filters[k]})
        if not entity:
            return Reply(400, {"detail": "At least one of user_id, agent_id, app_id or run_id is required."})
        infer = body.get("infer", True) is not False
        texts = [m["content"] for m in messages if m["role"] == "user" or not infer]
        metadata = body.get("metadata") if isinstance(body.get("metadata"), dict) else None
        event_id = str(uuid.uuid4())
        with self.lock:
            results = []
            for text in texts:
                if infer and any(m["memory"] == text and all(m.get(k) == v for k, v in entity.items())
                                 for m in self._memories.values()):
                    continue  # inference deduplicates
                stored = self._store(text, entity, metadata)
                results.append({"id": stored["id"], "data": {"memory": text}, "event": "ADD"})
            self.events.append({"event_id": event_id, "infer": infer, "entity": entity, "results": results})
        if infer:
            return Reply(200, {"status": "PENDING", "event_id": event_id})
        return Reply(200, {"status": "SUCCEEDED", "event_id": event_id, "results": results})

    def _store(self, text: str, entity: dict[str, str], metadata: dict[str, Any] | None) -> dict[str, Any]:
        now = _now()
        memory_id = str(uuid.uuid4())
        memory: dict[str, Any] = {
            "id": memory_id, "memory": text, **{k: entity.get(k) for k in ENTITY_IDS},
            "hash": hashlib.md5(text.encode()).hexdigest(), "metadata": metadata, "categories": [],
            "created_at": now, "updated_at": now, "expiration_date": None, "immutable": False}
        self._memories[memory_id] = memory
        return memory

    def _search(self, body: Any) -> Reply:
        if not isinstance(body, dict) or not isinstance(body.get("query"), str) or not body["query"].strip():
            return Reply(400, {"detail": "query is required"})
        filters = body.get("filters")
        if not isinstance(filters, dict) or not _names_entity(filters):
            return Reply(400, {"detail": "filters must name at least one of user_id, agent_id, app_id, run_id"})
        top_k: int = body["top_k"] if isinstance(body.get("top_k"), int) else 10
        threshold: float = body["threshold"] if isinstance(body.get("threshold"), (int, float)) else 0.0
        with self.lock:
            scored = [(relevance(body["query"], m["memory"]), m) for m in self._memories.values()
                      if _matches(m, filters)]
        hits = sorted((pair for pair in scored if pair[0] > 0 and pair[0] >= threshold),
                      key=lambda pair: -pair[0])[:max(0, top_k)]
        return Reply(200, {"results": [{**m, "score": round(score, 4)} for score, m in hits]})

    def _list(self, body: Any, query: dict[str, str]) -> Reply:
        filters = body.get("filters") if isinstance(body, dict) else None
        if not isinstance(filters, dict) or not _names_entity(filters):
            return Reply(400, {"detail": "filters must name at least one of user_id, agent_id, app_id, run_id"})
        page = int(query.get("page") or 1)
        size = int(query.get("page_size") or 100)
        with self.lock:
            found = [dict(m) for m in self._memories.values() if _matches(m, filters)]
        start = (page - 1) * size
        return Reply(200, {"count": len(found), "next": None if start + size >= len(found) else f"?page={page + 1}",
                           "previous": None if page <= 1 else f"?page={page - 1}",
                           "results": found[start:start + size]})

    def _delete_all(self, query: dict[str, str]) -> Reply:
        filters = {k: query[k] for k in ENTITY_IDS if query.get(k)}
        if not filters:
            return Reply(400, {"detail": "At least one filter is required: user_id, agent_id, app_id or run_id "
                                         "('*' for all)."})
        with self.lock:
            for memory_id in [i for i, m in self._memories.items() if _matches(m, filters)]:
                del self._memories[memory_id]
        return Reply(200, {"message": "Memories deleted successfully!"})

    def _one(self, method: str, memory_id: str, body: Any) -> Reply:
        with self.lock:
            memory = self._memories.get(memory_id)
            if memory is None:
                return Reply(404, {"detail": "Memory not found"})
            if method == "GET":
                return Reply(200, dict(memory))
            if method == "DELETE":
                del self._memories[memory_id]
                return Reply(200, {"message": "Memory deleted successfully!"})
            if method == "PUT":
                if not isinstance(body, dict) or not any(k in body for k in ("text", "metadata")):
                    return Reply(400, {"detail": "text or metadata is required"})
                if isinstance(body.get("text"), str):
                    memory["memory"] = body["text"]
                    memory["hash"] = hashlib.md5(body["text"].encode()).hexdigest()
                if isinstance(body.get("metadata"), dict):
                    memory["metadata"] = body["metadata"]
                memory["updated_at"] = _now()
                return Reply(200, dict(memory))
        return Reply(405, {"detail": f"Method {method} not allowed"})


def _names_entity(filters: dict[str, Any]) -> bool:
    if any(isinstance(filters.get(k), str) and filters[k] for k in ENTITY_IDS):
        return True
    return any(isinstance(sub, dict) and _names_entity(sub)
               for key in ("AND", "OR") for sub in filters.get(key) or ())


def _matches(memory: dict[str, Any], filters: dict[str, Any]) -> bool:
    for key, value in filters.items():
        if key == "AND":
            if not all(isinstance(f, dict) and _matches(memory, f) for f in value or ()):
                return False
        elif key == "OR":
            if not any(isinstance(f, dict) and _matches(memory, f) for f in value or ()):
                return False
        elif key in ENTITY_IDS:
            if value != "*" and memory.get(key) != value:
                return False
            if value == "*" and memory.get(key) is None:
                return False
    return True

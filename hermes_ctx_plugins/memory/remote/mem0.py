"""``ctx-mem0``: long-term memory in Mem0, through the official ``mem0ai`` SDK (extra ``mem0``).

The hosted platform by default, or any server speaking its API (``host``), through
``MemoryClient`` with our own ``httpx.Client`` (``timeout``, 10 s, instead of the SDK's 300 s). The
client's constructor pings the service, so it is built lazily on a background thread, never in
``is_available()`` or a turn. Before ``mem0`` is first imported, ``MEM0_TELEMETRY=False`` and
``MEM0_DIR=$HERMES_HOME/mem0`` are set unless the user set them (the SDK otherwise starts a
telemetry client at import and writes ``~/.mem0``). ``mode: oss`` uses ``Memory.from_config(oss)``
instead: the same calls against a local vector store and the models that config names.

Scope: memories are written with ``user_id`` — the owner's id, one per (namespace, user): ``u<user>``,
``d<namespace>-u<user>`` (escaped, see :func:`~hermes_ctx_plugins.scope.service_id`), the
``default_user_id`` for the CLI's anonymous user — ``agent_id`` and, with ``run_id: session | chat``,
a ``run_id`` (the session id, or the chat id / gateway session key); recall searches the owner's
memories (``recall_scope: run`` narrows it to the run), and a result naming another owner is dropped.
``forget_user`` deletes an owner's memories with ``delete_all(user_id=...)``
(``DELETE /v1/memories/?user_id=``).

Each finished turn is added in the background (``infer`` decides whether Mem0 extracts facts or
stores the messages verbatim); recall runs at turn start. Tools: ``ctx_mem0_search``,
``ctx_mem0_add``, ``ctx_mem0_update``, ``ctx_mem0_delete``. Mem0 caps nothing itself: a turn's
message and reply are sent cut to ``max_turn_chars`` (16,000 by default) with a marker, since its
extraction reads text and a 5 MB paste is never useful there. The rest — breaker, queue, bounded
waits, redaction and size caps, checked tool arguments, safe recall — is
:mod:`~hermes_ctx_plugins.memory.remote.base`.
"""

from __future__ import annotations

import logging
import os
import re
import sys
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from ...errors import ConfigError
from ...events import SessionInfo, Turn
from ...isolation import known_secret
from ...options import option
from .base import RecallItem, RemoteProvider
from .options import RemoteOptions
from .service import SDK_IMPORTS, key_problem
from .text import ToolError, bounded_int, short_id, shown, tool_schema

log = logging.getLogger("hermes_ctx_plugins.memory")

DEFAULT_HOST = "https://api.mem0.ai"
MODES = ("platform", "oss")
RUN_IDS = ("", "session", "chat")
RECALL_SCOPES = ("user", "run")
#: what a Mem0 memory id looks like (a UUID); anything else is refused before it reaches a URL path
_MEMORY_ID = re.compile(r"[A-Za-z0-9_-]{1,128}")


TOOLS = (
    tool_schema("ctx_mem0_search",
                "Search this user's long-term memories by meaning; returns facts with their ids, most relevant "
                "first. Use it before answering anything that may depend on what you know about the user.",
                {"query": {"type": "string", "description": "What to look for."},
                 "top_k": {"type": "integer", "description": "Most results to return (1-50, default 10)."}},
                ["query"]),
    tool_schema("ctx_mem0_add",
                "Store one durable fact about the user verbatim (a preference, a correction, a decision). "
                "Skip chit-chat and facts already stored.",
                {"content": {"type": "string", "description": "The fact to store."}}, ["content"]),
    tool_schema("ctx_mem0_update",
                "Replace the text of a stored memory (take the id from ctx_mem0_search) when a fact changed.",
                {"memory_id": {"type": "string"}, "text": {"type": "string", "description": "The new text."}},
                ["memory_id", "text"]),
    tool_schema("ctx_mem0_delete",
                "Delete a stored memory by id (from ctx_mem0_search) when it is obsolete or the user asks to "
                "forget it.",
                {"memory_id": {"type": "string"}}, ["memory_id"]),
)


@dataclass(frozen=True)
class Mem0Options(RemoteOptions):
    """``ctx_plugins.options.ctx-mem0`` (besides the :class:`RemoteOptions`)."""

    #: the API key; empty: ``$MEM0_API_KEY``
    api_key: str = ""
    #: the service's base URL; empty: the hosted platform
    host: str = ""
    #: ``platform`` (MemoryClient, hosted or self-hosted) or ``oss`` (Memory.from_config)
    mode: str = option("platform", choices=MODES)
    #: with ``mode: oss``, the mapping given to ``Memory.from_config``
    oss: Mapping[str, Any] = option({})
    #: let Mem0 extract facts from each turn (``false``: store the messages verbatim)
    infer: bool = True
    #: written with every memory; empty: none
    agent_id: str = "hermes"
    #: tag writes with a run: ``session`` (hermes' session id), ``chat`` (chat id / gateway session key), or none
    run_id: str = option("", choices=RUN_IDS)
    #: recall from all the user's memories (``user``) or only this run's (``run``)
    recall_scope: str = option("user", choices=RECALL_SCOPES)
    #: memories recalled per turn
    top_k: int = option(10, ge=1, le=100)
    #: minimum relevance score of a recalled memory (the service's default when unset)
    threshold: float | None = option(None, ge=0, le=1)


_TELEMETRY_WARNED: list[bool] = []


def prepare_environment(hermes_home: Path) -> None:
    """Turn telemetry off and keep Mem0's files under ``$HERMES_HOME``, unless the user chose otherwise.

    Must run before ``mem0`` is first imported: the SDK reads both at import time.
    """
    if "mem0" in sys.modules:
        telemetry = sys.modules.get("mem0.memory.telemetry")
        if getattr(telemetry, "MEM0_TELEMETRY", False) and not _TELEMETRY_WARNED:
            _TELEMETRY_WARNED.append(True)
            log.warning("mem0 was imported before ctx-mem0 could turn its telemetry off; "
                        "set MEM0_TELEMETRY=False in the environment")
        return
    os.environ.setdefault("MEM0_TELEMETRY", "False")
    os.environ.setdefault("MEM0_DIR", str(hermes_home / "mem0"))


class Mem0Provider(RemoteProvider):
    """Long-term memory in Mem0 (see the module docs)."""

    name = "ctx-mem0"
    description = "Mem0 (hosted, self-hosted or OSS) through the mem0ai SDK, with breaker and write queue"
    options_class = Mem0Options
    sdk_module = "mem0"
    sdk_package = "mem0ai"
    extra = "mem0"
    tools = TOOLS
    text_arguments: ClassVar[dict[str, str]] = {"query": "query", "content": "fact", "text": "fact"}
    url_options = ("host",)
    refusal_reason = "stored memories are shown to future sessions, so they must not carry instructions"
    options: Mem0Options

    def __init__(self, options: Any = None, **kwargs: Any) -> None:
        super().__init__(options, **kwargs)
        self.check_api_key()
        agent_id = self.options.agent_id  # sent with every write and search: a bad one would drop every turn
        reason = self.id_problem(agent_id) if agent_id else ""  # empty: none sent
        if reason:
            raise ConfigError(f"{agent_id!r} is not a valid id: {reason}", value=agent_id,
                              path=f"ctx_plugins.options.{self.name}.agent_id", expected="an id valid at the service")
        self._client_lock = threading.Lock()
        self._sdk_client: Any = None
        self._http: Any = None

    # ------------------------------------------------------------------ configuration

    @property
    def api_key(self) -> str:
        key = self.options.api_key or os.environ.get("MEM0_API_KEY", "")
        known_secret(key)  # an error page echoing it is redacted wherever it is shown (the environment's too)
        return key

    def configuration_problem(self) -> str:
        if self.options.mode == "oss":
            return "" if self.options.oss else (
                f"mode oss needs ctx_plugins.options.{self.name}.oss (the mapping for Memory.from_config)")
        if not self.api_key:
            return f"no Mem0 API key: set ctx_plugins.options.{self.name}.api_key or MEM0_API_KEY"
        problem = key_problem(self.api_key)
        return f"the Mem0 API key in MEM0_API_KEY is not valid: {problem}" if problem else ""

    def target(self) -> str:
        return "Mem0 OSS (local store)" if self.options.mode == "oss" else (self.options.host or DEFAULT_HOST)

    # ------------------------------------------------------------------ scope

    def run_id(self, session: SessionInfo) -> str:
        """The run a write is tagged with; filtered together with the owner, so it only has to
        tell one owner's runs apart (:func:`~hermes_ctx_plugins.memory.remote.base.short_id`: sendable
        as JSON, and short, whatever the id holds)."""
        if self.options.run_id == "session":
            return short_id(session.session_id)
        if self.options.run_id == "chat":
            return short_id(self.chat_key(session) or session.session_id)
        return ""

    def entity_ids(self, session: SessionInfo) -> dict[str, str]:
        """The entity ids every write of this session carries."""
        ids = {"user_id": self.owner_id(session), "agent_id": self.options.agent_id, "run_id": self.run_id(session)}
        return {k: v for k, v in ids.items() if v}

    def read_filters(self, session: SessionInfo) -> dict[str, str]:
        filters = {"user_id": self.owner_id(session)}
        run = self.run_id(session)
        if self.options.recall_scope == "run" and run:
            filters["run_id"] = run
        return filters

    def _belongs(self, memory: Mapping[str, Any], session: SessionInfo) -> bool:
        """Defence in depth: a result naming another user (a service bug) never reaches the prompt."""
        owner = memory.get("user_id")
        if owner not in (None, "", self.owner_id(session)):
            log.warning("%s: dropped a recalled memory of another owner (%r)", self.name, owner)
            return False
        return True

    # ------------------------------------------------------------------ the SDK client

    def _client(self) -> Any:
        with self._client_lock:
            if self._sdk_client is not None:
                return self._sdk_client
        # Built without the lock held: the constructor pings, and shutdown must never wait for that.
        client, http = self._build_client()
        with self._client_lock:
            if self._sdk_client is None:
                self._sdk_client, self._http = client, http
                return client
            winner = self._sdk_client  # another thread built one meanwhile
        self.retire(lambda: self._close(client, http))
        return winner

    def _build_client(self) -> tuple[Any, Any]:
        prepare_environment(self.home)
        with SDK_IMPORTS:
            import mem0
        if self.options.mode == "oss":
            return mem0.Memory.from_config(_thaw(self.options.oss)), None
        import httpx
        from mem0 import MemoryClient

        from .transport import BoundedAnswers

        http = httpx.Client(transport=BoundedAnswers(httpx.HTTPTransport(), seconds=self.options.timeout),
                            timeout=httpx.Timeout(self.options.timeout))
        try:
            return MemoryClient(api_key=self.api_key, host=self.options.host or DEFAULT_HOST, client=http), http
        except BaseException:
            http.close()
            raise

    def close_client(self) -> None:
        with self._client_lock:
            client, http, self._sdk_client, self._http = self._sdk_client, self._http, None, None
        if client is not None or http is not None:
            self.retire(lambda: self._close(client, http))

    def _close(self, client: Any, http: Any) -> None:
        if self.options.mode == "oss" and client is not None:
            client.close()
        if http is not None:
            http.close()

    def check(self) -> None:
        self.close_client()
        self.call(self._client)  # platform: the constructor's ping; oss: opening the store

    def http_status(self, exc: BaseException) -> int | None:
        info = getattr(exc, "debug_info", None)
        status = info.get("status_code") if isinstance(info, dict) else None
        return status if isinstance(status, int) else None

    def retry_after(self, exc: BaseException) -> float | None:
        value = getattr(exc, "debug_info", None)
        after = value.get("retry_after") if isinstance(value, dict) else None
        return float(after) if isinstance(after, (int, float)) else None

    # ------------------------------------------------------------------ writes

    def writes_for_turn(self, turn: Turn) -> list[dict[str, Any]]:
        user, assistant = self.turn_text(turn.user_text), self.turn_text(turn.assistant_text)
        messages = [{"role": "user", "content": user}] if user else []
        messages += [{"role": "assistant", "content": f"[{name} output] {result}"}
                     for name, result in self.tool_results(turn)]
        if assistant:
            messages.append({"role": "assistant", "content": assistant})
        if not messages:
            return []
        return [self._write(messages, turn.session, infer=self.options.infer)]

    def _write(self, messages: list[dict[str, str]], session: SessionInfo, *, infer: bool) -> dict[str, Any]:
        metadata = {"source": "hermes", "session_id": short_id(session.session_id)}
        if session.platform:
            metadata["platform"] = short_id(session.platform)
        return {"messages": messages, "ids": self.entity_ids(session), "infer": infer, "metadata": metadata}

    def write_owner(self, write: dict[str, Any]) -> str:
        ids = write.get("ids")
        return str(ids.get("user_id") or "") if isinstance(ids, dict) else ""

    def write_problem(self, write: dict[str, Any]) -> str | None:
        for key, kind in (("messages", list), ("ids", dict), ("infer", bool), ("metadata", dict)):
            if not isinstance(write.get(key), kind):
                return f"{key!r} is not a {kind.__name__}"
        return None

    def send_write(self, write: dict[str, Any]) -> None:
        response = self._client().add(write["messages"], **write["ids"], infer=write["infer"],
                                      metadata=write["metadata"])
        if not _acknowledged(response):  # raised: the write stays queued and is sent again
            raise ValueError(f"unexpected reply to add: {response!r:.120}")

    def forget_owner(self, owner: str) -> tuple[int | None, str]:
        client = self._client()
        if self.options.mode == "oss":
            client.delete_all(user_id=owner)
            return None, "the local store does not say how many memories it deleted"
        listed = client.get_all(filters={"user_id": owner}, page=1, page_size=1)
        count = listed.get("count") if isinstance(listed, dict) else None
        client.delete_all(user_id=owner)
        return (count if isinstance(count, int) else None), ""

    # ------------------------------------------------------------------ recall

    def _search(self, query: str, session: SessionInfo, top_k: int) -> list[dict[str, Any]]:
        kwargs: dict[str, Any] = {"filters": self.read_filters(session), "top_k": top_k}
        if self.options.threshold is not None:
            kwargs["threshold"] = self.options.threshold
        results = _results(self._client().search(query, **kwargs))
        # at most top_k even when the service ignores it (a proxy, an older server): a tool answer
        # of every memory it holds would flood the model's context
        return [r for r in results if self._belongs(r, session)][:top_k]

    def recall(self, query: str, session: SessionInfo) -> list[RecallItem]:
        hits = self._search(query, session, self.options.top_k)
        return [RecallItem(r["memory"], str(r.get("id") or "")) for r in hits]

    # ------------------------------------------------------------------ tools

    def run_tool(self, name: str, args: dict[str, Any], session: SessionInfo) -> dict[str, Any]:
        if name == "ctx_mem0_search":
            query = self.text_argument(args, "query")
            top_k = bounded_int(args.get("top_k"), 10, key="top_k", lo=1, hi=50)
            hits = self.call(self._search, query, session, top_k)
            return {"results": [{"id": r.get("id"), "memory": self.safe(r["memory"]), "score": r.get("score")}
                                for r in hits], "count": len(hits)}
        if name == "ctx_mem0_add":
            content = self.text_argument(args, "content")
            write = self._write([{"role": "user", "content": content}], session, infer=False)
            return self.send_or_queue(write, what="the fact", sent="stored")
        memory_id = _memory_id(args.get("memory_id"))
        text = self.text_argument(args, "text") if name == "ctx_mem0_update" else ""
        self._owned(memory_id, session)
        if name == "ctx_mem0_update":
            self.call(lambda: self._client().update(memory_id, text=text))
            return {"success": True, "memory_id": memory_id, "message": "updated"}
        self.call(lambda: self._client().delete(memory_id))
        return {"success": True, "memory_id": memory_id, "message": "deleted"}

    def _owned(self, memory_id: str, session: SessionInfo) -> None:
        """Refuse ids of another user's memories, exactly as if they did not exist."""
        try:
            memory = self.call(lambda: self._client().get(memory_id))
        except Exception as exc:
            if self.is_client_error(exc):
                raise ToolError(f"no memory {memory_id!r} for this user") from None
            raise
        # strict, unlike recall: a memory naming no owner is nobody's to change (an agent's, say); and with
        # recall_scope: run, another chat's (run's) is not this chat's to change either
        if not isinstance(memory, Mapping) or any(memory.get(k) != v for k, v in self.read_filters(session).items()):
            raise ToolError(f"no memory {memory_id!r} for this user")


def _memory_id(value: Any) -> str:
    """The ``memory_id`` argument of a tool call, checked before it becomes part of a URL."""
    if value is None or value == "":
        raise ToolError("memory_id is required")
    if not isinstance(value, str):
        raise ToolError(f"memory_id must be a string (an id ctx_mem0_search returned), not "
                        f"{type(value).__name__} {shown(value)}")
    memory_id = value.strip()
    if not _MEMORY_ID.fullmatch(memory_id):  # no memory has such an id: answered as for any unknown one
        raise ToolError(f"no memory {shown(memory_id)} for this user")
    return memory_id


def _results(response: Any) -> list[dict[str, Any]]:
    """The memories of a search reply (``{"results": [...]}`` or a bare list); anything else is an error."""
    results = response.get("results") if isinstance(response, dict) else response
    if not isinstance(results, list):
        raise ValueError(f"unexpected search reply from Mem0: {response!r:.120}")
    found = [r for r in results if isinstance(r, dict) and isinstance(r.get("memory"), str)]
    if results and not found:  # ([1, 2, 3], [null, {"memory": null}]: no memory at all is no answer, not "none")
        raise ValueError(f"unexpected search reply from Mem0, no memory in it: {response!r:.120}")
    return found


def _thaw(value: Any) -> Any:
    """Config values (FrozenMap, tuples) back to the dicts and lists an SDK's pydantic models expect."""
    if isinstance(value, Mapping):
        return {k: _thaw(v) for k, v in value.items()}
    if isinstance(value, tuple):
        return [_thaw(v) for v in value]
    return value


def _acknowledged(response: object) -> bool:
    """Whether ``response`` says an add was taken: the platform's ``{"status": "PENDING", "event_id"}`` or
    ``{"status": "SUCCEEDED", "results": [...]}``, the open-source ``{"results": [...]}``, or an older API's list of
    events. A 200 carrying ``{}`` or ``{"error": ...}`` (a proxy's, say) is not: the write would be lost."""
    if isinstance(response, list):
        return all(isinstance(item, dict) for item in response)
    if not isinstance(response, dict) or "error" in response:
        return False
    return isinstance(response.get("results"), list) or bool(response.get("event_id")) or (
        response.get("status") in ("PENDING", "SUCCEEDED"))

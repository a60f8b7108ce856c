"""Our compressor strategies behind hermes' ``ContextEngine`` interface.

hermes keeps one plugin engine per process and deep-copies it for every agent: the copy shares the
host (plugins, config) and the runtime (who each session is), and gets its own strategy state
(counts, cool-downs, previous summary) and its own limits from hermes (the trigger its feasibility
check lowers).
"""

from __future__ import annotations

import copy
import dataclasses
import json
import logging
import math
import time
import weakref
from pathlib import Path
from typing import Any

from agent.context_engine import ContextEngine

from ..archive import tools as archive_tools
from ..compression.base import CompressionResult, CompressorStrategy, Cooldown, provider_count
from ..errors import InvalidSession
from ..events import SessionInfo, Usage, id_text
from ..manager import Host
from ..tokens import get_counter
from . import ENGINE_NAME, bare_schemas, sendable
from .agents import Compaction, find_caller_agent
from .memory_gate import file_provider
from .prompt_floor import PromptFloor
from .runtime import Runtime, SessionInUseError, compaction_ancestors
from .scoped_memory import ScopedMemoryStore

log = logging.getLogger("hermes_ctx_plugins.hermes")

#: no compaction yet (or a new conversation): nothing to report to hermes
_NO_RESULT = CompressionResult.unchanged([])


def share_of(tokens: int, window: int) -> float:
    """The share ``p`` of ``window`` with ``int(window * p) == tokens``: hermes computes a trigger back
    from a share that way, so the share it reads must give exactly the trigger we act on."""
    share = tokens / window
    while int(window * share) < tokens:  # a rounding ulp at most
        share = math.nextafter(share, math.inf)
    return share


class HermesCtxEngine(ContextEngine):
    """Dispatches hermes' compression calls to the strategy our config selects.

    :param host: the host whose strategy, archive and settings this engine uses
    :param runtime: the runtime that knows this engine's sessions (who they are, which agent holds
        them); ``None``: one of its own, for an engine used outside hermes' plugin loading
    """

    def __init__(self, host: Host, runtime: Runtime | None = None) -> None:
        self._host = host
        self._runtime = runtime if runtime is not None else Runtime(host)
        self._strategy: CompressorStrategy | None = host.compressor
        self._overrides: dict[str, Any] = {}
        #: the trigger ceilings hermes set on this agent's copy (its auxiliary-model feasibility check)
        self._host_tokens: int | None = None
        self._host_percent: float | None = None
        self._fallback_strategy: CompressorStrategy | None = None
        self.last_completion_tokens = 0
        self.last_total_tokens = 0
        self.awaiting_real_usage_after_compression = False
        self._prompt_floor = PromptFloor()
        #: the session of the agent this copy belongs to (hermes tells each copy at its start)
        self.session_id = ""
        #: the Bridge agent this copy serves (see :meth:`bind`); weak, like the runtime's table
        self._holder: weakref.ref[Any] | None = None
        #: the hermes agent this copy belongs to (see :meth:`on_session_start`); weak
        self._agent: weakref.ref[Any] | None = None
        #: (session id, the ids its conversation had before it) read from hermes' session database (see
        #: :meth:`bind_session_state`): a conversation resumed in a new process
        self._earlier: tuple[str, tuple[str, ...]] = ("", ())
        #: the owner of the Bridge agent whose subagent (hermes' ``delegate_task``) this copy's agent is (see
        #: :meth:`_adopt_delegated`); ``None``: not a Bridge agent's subagent
        self._delegated: SessionInfo | None = None
        self._report()

    @property
    def name(self) -> str:
        return ENGINE_NAME

    @property
    def strategy(self) -> CompressorStrategy | None:
        return self._strategy

    def __deepcopy__(self, memo: dict[int, Any]) -> HermesCtxEngine:
        clone = object.__new__(type(self))
        memo[id(self)] = clone
        clone.__dict__.update(self.__dict__)
        clone._strategy = copy.deepcopy(self._strategy, memo)
        clone._fallback_strategy = None
        clone._overrides = dict(self._overrides)
        clone._prompt_floor = PromptFloor()
        return clone

    # -- the attributes hermes reads and writes ---------------------------------------------
    @property  # type: ignore[override]
    def last_prompt_tokens(self) -> int:
        return int(self._strategy.last_prompt_tokens or 0) if self._strategy is not None else 0

    @last_prompt_tokens.setter
    def last_prompt_tokens(self, value: int) -> None:
        """hermes writes 0 (a new conversation), -1 (after a compaction, until real usage arrives) and, before
        a preflight compaction, its rough estimate of the next request when that is larger: the first two void
        the provider's count the prompt's floor is measured from, the estimate is no count and leaves it."""
        if self._strategy is not None:
            self._strategy.last_prompt_tokens = value
            if not value or value <= 0:
                self._strategy.provider_prompt_tokens = 0

    @property  # type: ignore[override]
    def compression_count(self) -> int:
        return int(self._strategy.compression_count or 0) if self._strategy is not None else 0

    @compression_count.setter
    def compression_count(self, value: int) -> None:
        if self._strategy is not None:
            self._strategy.compression_count = value

    @property  # type: ignore[override]
    def context_length(self) -> int:
        return int(self._strategy.context_length or 0) if self._strategy is not None else 0

    @context_length.setter
    def context_length(self, value: int) -> None:
        if self._strategy is not None:
            self._strategy.context_length = value

    # What hermes reads about the trigger is exactly what the strategy acts on: the strategy's own
    # threshold (small-window floor, output reserve, caps) within the ceilings hermes set.
    @property  # type: ignore[override]
    def threshold_tokens(self) -> int:
        return int(self._strategy.threshold_tokens or 0) if self._strategy is not None else 0

    @threshold_tokens.setter
    def threshold_tokens(self, value: int) -> None:
        """hermes lowers the trigger to its summary model's window (the feasibility check): honoured as a
        ceiling, kept across model switches (that window does not change with the main model)."""
        self._host_tokens = int(value) if value and value > 0 else None
        self._apply_host_limits()

    @property  # type: ignore[override]
    def threshold_percent(self) -> float:
        """The share of the window the engine really triggers at: ``int(context_length *
        threshold_percent) == threshold_tokens`` (hermes prints it at start-up and predicts the trigger
        for another model's window from it), not the configured ``compression.threshold``."""
        window, threshold = self.context_length, self.threshold_tokens
        if window and threshold:
            return share_of(threshold, window)
        if self._strategy is not None:
            return float(self._strategy.threshold_percent)
        return float(self._host.config.compression.threshold)

    @threshold_percent.setter
    def threshold_percent(self, value: float) -> None:
        """hermes sets this with ``threshold_tokens`` (the same limit as a share of the window):
        honoured as a ceiling that follows the window when the model changes."""
        self._host_percent = float(value) if value and value > 0 else None
        self._apply_host_limits()

    def _apply_host_limits(self) -> None:
        """Hand hermes' ceilings to the strategies as the absolute ``threshold_tokens`` setting, which
        their trigger (and every budget derived from it) already honours. The host builds each
        strategy with the ``compression:`` settings, so those are the base the ceilings apply to."""
        configured = self._host.config.compression
        for strategy in (self._strategy, self._fallback_strategy):
            if strategy is None:
                continue
            window = strategy.context_length
            ceilings = [configured.threshold_tokens, self._host_tokens,
                        max(1, int(window * self._host_percent)) if window and self._host_percent else None]
            limit = min((c for c in ceilings if c), default=None)
            strategy.settings = dataclasses.replace(configured, threshold_tokens=limit)

    @property  # type: ignore[override]
    def protect_first_n(self) -> int:
        return int(self._overrides.get("protect_first_n", self._host.config.compression.protect_first_n))

    @protect_first_n.setter
    def protect_first_n(self, value: int) -> None:
        self._overrides["protect_first_n"] = value

    @property  # type: ignore[override]
    def protect_last_n(self) -> int:
        return int(self._overrides.get("protect_last_n", self._host.config.compression.protect_last_n))

    @protect_last_n.setter
    def protect_last_n(self, value: int) -> None:
        self._overrides["protect_last_n"] = value

    # -- the calls ---------------------------------------------------------------------------
    def _fallback(self) -> CompressorStrategy | None:
        """This copy's default strategy, built the first time the selected one is needed to fail
        over (each agent's copy keeps its own state, like the selected strategy)."""
        if self._fallback_strategy is None and self._strategy is not None:
            fallback = self._host.fallback_strategy()
            if fallback is not None:
                fallback.update_model(self._strategy.model, self._strategy.context_length)
            self._fallback_strategy = fallback
            self._apply_host_limits()
        return self._fallback_strategy

    def _owner(self) -> str:
        return f"compressor:{self._strategy.name if self._strategy else 'none'}"

    def update_model(self, model: str, context_length: int | None, base_url: str = "", api_key: str = "",
                     provider: str = "", api_mode: str = "", **_: Any) -> None:
        if self._strategy is not None:
            self._host.isolator.call(self._owner(), self._strategy.update_model, model, context_length,
                                     base_url=base_url, api_key=api_key, provider=provider, default=None,
                                     resets=False)
        if self._host_percent is not None:  # a share of the new window
            self._apply_host_limits()

    def update_from_response(self, usage: dict[str, Any]) -> None:
        parsed = Usage.from_mapping(usage)
        self.last_completion_tokens = parsed.completion_tokens
        self.last_total_tokens = parsed.total_tokens
        self.awaiting_real_usage_after_compression = False
        if self._strategy is not None:
            with self._runtime.agents.acting_for(self.agent()):  # "paused: ..." reaches this agent's user
                self._host.isolator.call(self._owner(), self._strategy.update_from_response, parsed, default=None,
                                         resets=False)

    def should_compress(self, prompt_tokens: int | None = None) -> bool:
        """hermes passes its rough estimate of the next request (its system prompt and tools weighed by
        their count here, see :meth:`.prompt_floor.PromptFloor.corrected`), or the provider's count of the
        last one; that count counts too (hermes sets -1 after a compaction until real usage arrives, and
        writes its estimate over it before a turn's preflight: only a response's count is taken)."""
        if self._strategy is None:
            return False
        real = provider_count(self._strategy)
        estimate = prompt_tokens or 0
        agent = self.agent()
        if estimate and estimate != real and agent is not None:
            try:
                estimate = self._prompt_floor.corrected(estimate, agent, self._strategy.model)
            except Exception as exc:  # the estimate as hermes made it, then
                log.warning("hermes-ctx: could not weigh the system prompt and tools (%s: %s)",
                            type(exc).__name__, exc)
        tokens = max(estimate, real) if prompt_tokens is not None else max(self.last_prompt_tokens, real)
        if prompt_tokens is not None and real > 0 and agent is not None:
            try:  # at least the provider's count and what was added since, counted (hermes weighs it at chars/4)
                room = (self.threshold_tokens or 0) - real
                tokens = max(tokens, real + self._prompt_floor.unsent(self._strategy.model, room=room))
            except Exception as exc:
                log.warning("hermes-ctx: could not count the messages added since the last request (%s: %s)",
                            type(exc).__name__, exc)
        with self._runtime.agents.acting_for(agent):  # "automatic compression paused: ..." reaches its user
            return bool(self._host.isolator.call(self._owner(), self._strategy.should_compress, tokens,
                                                 default=False, resets=False))

    def compress(self, messages: list[dict[str, Any]], current_tokens: int | None = None,
                 focus_topic: str | None = None, force: bool = False,
                 memory_context: str = "") -> list[dict[str, Any]]:
        self._report()
        if self._strategy is None or not messages:
            return messages
        with self._runtime.agents.acting_for(self.agent()):  # its status events reach this agent's user
            result = self._host.run_compression(
                self._strategy, list(messages), session=self._session(), fallback=self._fallback,
                prompt_floor=self._floor(), current_tokens=current_tokens, focus_topic=focus_topic, force=force,
                memory_context=memory_context, speaker=self._runtime.sessions.speakers(
                    self.session_id, messages, origin=self._runtime.origins.of(self.agent())))
        self._report(result)
        if not result.messages:
            return messages
        if result.compressed:
            self._runtime.agents.record(Compaction(
                when=time.time(), strategy=self._strategy.name, messages_before=len(messages),
                messages_after=len(result.messages), tokens_before=result.tokens_before,
                tokens_after=result.tokens_after, removed=len(result.removed), fallback=result.used_fallback))
            self.awaiting_real_usage_after_compression = True
            log.info("hermes-ctx %s: %d -> %d messages, %d -> %d tokens", self._strategy.name,
                     len(messages), len(result.messages), result.tokens_before, result.tokens_after)
        elif force:
            log.info("hermes-ctx %s: /compress changed nothing: %s", self._strategy.name,
                     "; ".join(result.notes) or "no reason given")
        return result.messages

    def _floor(self) -> int | None:
        """This agent's system prompt and tool schemas, counted (:mod:`.prompt_floor`); ``None`` without one."""
        agent = self.agent()
        if agent is None or self._strategy is None:
            return None
        try:
            return self._prompt_floor.tokens(agent, self._strategy.model)
        except Exception as exc:  # a budget only: the host measures it another way
            log.warning("hermes-ctx: could not count the agent's system prompt and tools (%s: %s)",
                        type(exc).__name__, exc)
            return None

    def _report(self, result: CompressionResult = _NO_RESULT) -> None:
        """What hermes tells the user after a compaction, in the attributes it reads from its built-in
        compressor: "⚠ Compression summary failed …" and "⚠ Compression aborted …" after an automatic
        one, "Compressed with fallback: …" and "Compression aborted: …" after ``/compress``. hermes words
        a summary error as "inserted a fallback" or "aborted", so one is reported only with either."""
        fell_back = result.compressed and result.used_fallback
        self._last_summary_error = result.summary_error if fell_back or result.aborted else ""
        self._last_summary_fallback_used = fell_back
        self._last_summary_dropped_count = result.summarized if fell_back else 0
        self._last_compress_aborted = result.aborted

    def has_content_to_compress(self, messages: list[dict[str, Any]]) -> bool:
        """For hermes' manual ``/compress`` (the gateway asks first, and says "nothing to compress yet"
        on False): whether the strategy's forced compaction could change anything, decided the way its
        ``compress(force=True)`` decides it."""
        if self._strategy is None:
            return False
        reason = self._host.isolator.call(self._owner(), self._strategy.nothing_to_compress, list(messages),
                                          default=None, resets=False)
        if reason is not None:
            log.info("hermes-ctx %s: nothing to compress: %s", self._strategy.name, reason)
        return reason is None

    def get_active_compression_failure_cooldown(self, *, refresh: bool = False,
                                                **_: Any) -> dict[str, Any] | None:
        """The summary-failure cool-down hermes' automatic compaction waits out, in the built-in's
        shape (``cooldown_until`` wall-clock seconds, ``remaining_seconds``, ``error``), or ``None``.

        hermes passes ``refresh=True`` before every automatic compaction so that the built-in re-reads
        the copy it keeps in hermes' session database; ours lives in this agent's strategy alone, so
        it is always current and ``refresh`` changes nothing.
        """
        if self._strategy is None:
            return None
        none: Cooldown | None = None
        cooldown = self._host.isolator.call(self._owner(), self._strategy.failure_cooldown, default=none,
                                            resets=False)
        if cooldown is None:
            return None
        return {"cooldown_until": time.time() + cooldown.remaining_seconds,
                "remaining_seconds": cooldown.remaining_seconds, "error": cooldown.error or None}

    def get_tool_schemas(self) -> list[dict[str, Any]]:
        if self._strategy is None:
            return []
        none: list[dict[str, Any]] = []
        schemas = list(self._host.isolator.call(self._owner(), self._strategy.get_tool_schemas, default=none,
                                                resets=False))
        if self._host.archive is not None:  # ctx_search / ctx_expand: the way back into the archive
            schemas += self._host.archive.tool_schemas()
        return bare_schemas(schemas)

    def handle_tool_call(self, name: str, args: dict[str, Any], **kwargs: Any) -> str:
        error = json.dumps({"error": f"context engine tool {name!r} is unavailable right now"})
        if self._strategy is None:
            return error
        archive = self._host.archive
        if archive is not None and name in archive_tools.NAMES:
            return sendable(str(self._host.isolator.call(
                "archive-tools", archive.handle_tool_call, name, args, session=self._session(),
                counter=get_counter(self._strategy.model), default=error)))
        return sendable(str(self._host.isolator.call(self._owner(), self._strategy.handle_tool_call, name, args,
                                                     default=error, resets=False)))

    def _session(self) -> SessionInfo:
        delegated = self._delegated
        if delegated is None:
            self._tell_owner()
        session = (dataclasses.replace(delegated, session_id=self.session_id) if delegated is not None
                   else self._runtime.session(self.session_id, self._host))
        resumed, earlier = self._earlier
        if resumed != session.session_id or not earlier:
            return session
        merged = tuple(dict.fromkeys((*session.earlier_sessions, *earlier)))
        return dataclasses.replace(session, earlier_sessions=merged)

    def _tell_owner(self) -> None:
        """hermes' own agent (not a Bridge's: bound, its owner is fixed) names its session's owner in
        ``pre_llm_call``'s ``sender_id`` -- its ``_user_id`` -- but a preflight compaction runs before that
        hook: in a process no hook of the session has reached yet (a gateway restarted, a resumed
        session) it would be archived as nobody's, which its owner's scope, exact, never reads."""
        agent = self.agent()
        if agent is None or self._holder is not None or not self.session_id:
            return
        owner = getattr(agent, "_user_id", None)
        try:
            user_id = "" if owner is None else id_text(owner)
        except InvalidSession as exc:  # never the compaction's failure: the session's owner stays untold
            log.error("the agent of session %r names no user hermes-ctx can keep: %s", self.session_id, exc)
            return
        self._runtime.sessions.observe(self.session_id, user_id=user_id)

    def bind_session_state(self, session_db: Any = None, session_id: str = "", **kwargs: Any) -> None:
        """hermes hands its session database when it builds an agent or moves it to a session: the ids the
        conversation had before ``session_id`` (a compaction with ``compression.in_place: false`` continues in a
        child session) are read from it, so that a conversation resumed in a new process still reaches what the
        archive kept under them."""
        self._earlier = (session_id or "", compaction_ancestors(session_db, session_id or ""))

    def bind(self, session: SessionInfo, *, holder: object) -> None:
        """This copy serves the Bridge agent ``holder``, bound as ``session`` in the runtime: when
        hermes moves the agent to a new session id (a compaction with ``in_place: false``, ``/new``,
        ``/resume``) the new id is bound to the same owner, so its hooks stay in the agent's
        deployment."""
        self._holder = weakref.ref(holder)
        # hermes' on_session_start ran on the engine this one replaces: the agent is known here, not there (its
        # status lines, its floor counted off it, hermes' estimate corrected by it)
        self._agent = weakref.ref(holder)
        self.session_id = session.session_id

    def agent(self) -> Any | None:
        """The live hermes agent this copy belongs to, or ``None``."""
        return self._agent() if self._agent is not None else None

    def on_session_start(self, session_id: str, **kwargs: Any) -> None:
        self.session_id = session_id or ""
        agent = self._holder() if self._holder is not None else None
        self._runtime.serving()
        owner = agent if agent is not None else find_caller_agent(self)
        if owner is not None:
            self._agent = weakref.ref(owner)
            self._runtime.agents.remember(self.session_id, owner)
            self._runtime.origins.of(owner)  # noted for its key: hermes' /compress agent tells the key alone
        if not self.session_id:
            return
        if agent is None:  # hermes' own agent: its owner, named by pre_llm_call, goes along (see follow)
            if owner is not None:
                self._fresh_memory_files(owner)
            if self._delegated is None and owner is not None:
                self._adopt_delegated(owner)
            if self._delegated is None:
                self._runtime.sessions.follow(str(kwargs.get("old_session_id") or ""), self.session_id)
            return
        try:
            self._runtime.sessions.move(agent, self.session_id)
        except SessionInUseError as exc:  # never the user's turn; the hooks then use another host
            log.error("hermes-ctx could not keep session %r in its deployment: %s", self.session_id, exc)

    def _fresh_memory_files(self, agent: Any) -> None:
        """hermes' own memory store (not a Bridge's) read its MEMORY.md / USER.md when it built ``agent``, before any
        hook of ours: where the files are mirrors of a shared copy (PostgreSQL), bring them up to date and let it
        read them again, or the conversation is one behind the other workers' (a fleet pass: an entry added on
        another worker appeared a conversation later, one removed there was shown once more)."""
        store: Any = getattr(agent, "_memory_store", None)
        files = file_provider(self._host) if store is not None and not isinstance(store, ScopedMemoryStore) else None
        if files is None or not files.documents.shared:
            return
        try:
            for target in ("memory", "user"):
                files.documents.read(Path(store._path_for(target)))
            store.load_from_disk()
        except Exception as exc:  # the snapshot hermes took stands
            log.warning("hermes-ctx: hermes' memory files were not brought up to date from the shared copy: %s", exc)

    def _adopt_delegated(self, agent: Any) -> None:
        """``agent`` is a subagent hermes built (``delegate_task``: ``platform="subagent"``, its parent's session id,
        no user id, hermes' engine, i.e. the top-level settings'): it archives as its parent's owner, never as the
        anonymous user of the top-level settings (whose archive is not the user's, and where forgetting the user
        does not look), and a Bridge agent's compacts with its parent's deployment's strategy. Its hooks stay
        hermes' own: hermes built it without memory, so no provider runs for it."""
        parent_id = str(getattr(agent, "_parent_session_id", None) or "")
        if getattr(agent, "platform", None) != "subagent" or not parent_id:
            return
        found = self._runtime.sessions.binding(parent_id)
        if found is None:  # a hermes agent's (a gateway's user): the owner a hook named for the parent, if any
            known = self._runtime.sessions.session(parent_id)
            if known is not None and self._runtime.sessions.knows_owner(parent_id):
                self._delegated = dataclasses.replace(
                    self._host.scoped(known), session_id=self.session_id, parent_session_id=parent_id,
                    earlier_sessions=(), platform="subagent")
            return
        host, parent = found
        self._delegated = dataclasses.replace(
            host.scoped(parent), session_id=self.session_id, parent_session_id=parent_id, earlier_sessions=(),
            platform="subagent")
        if host is self._host or host.compressor is None:
            return
        window = self.context_length or None
        self._host = host
        self._strategy = copy.deepcopy(host.compressor)
        self._fallback_strategy = None
        self._overrides = {}
        self.update_model(model=str(getattr(agent, "model", "") or ""), context_length=window,
                          base_url=getattr(agent, "base_url", "") or "", api_key=getattr(agent, "api_key", "") or "",
                          provider=getattr(agent, "provider", "") or "")
        self._apply_host_limits()

    def on_session_end(self, session_id: str, messages: list[dict[str, Any]]) -> None:
        """Keeps the summary-failure cool-down and the anti-thrash block, on purpose.

        hermes calls this at a real end (exit, gateway expiry) but also inside every compaction and
        session rotation (``commit_memory_session``). A failing summary model is not cured by a
        compaction boundary: forgetting the cool-down there would let the next automatic compaction
        retry it at once, the thrash the cool-down exists to stop. (The built-in clears its copy here;
        compacting in place, hermes' default, it reloads it from hermes' session database at the
        boundary, and with ``compression.in_place: false`` it loses it to the child session.) A new
        conversation starts clean through :meth:`on_session_reset` (``/new``, ``/reset``,
        ``/resume``), and a manual ``/compress`` goes through a cool-down anyway.

        The report of the last compaction (summary failed, fell back, aborted) is kept too: hermes
        reads it for ``/compress``'s feedback after the compaction, and so after this call (the
        built-in has cleared its copy by then, and reports a fallback as a plain "Compressed").
        """

    def on_session_reset(self) -> None:
        """A new conversation (``/new``, ``/reset``, ``/resume``): the strategies forget their cool-downs
        and blocks, and nothing from the last compaction is reported any more."""
        super().on_session_reset()
        self._report()
        for strategy in (self._strategy, self._fallback_strategy):
            if strategy is not None:
                self._host.isolator.call(f"compressor:{strategy.name}", strategy.reset_session, default=None,
                                         resets=False)

    def get_status(self) -> dict[str, Any]:
        status: dict[str, Any] = dict(super().get_status())
        status["strategy"] = self._strategy.name if self._strategy else None
        status["plugin_status"] = self._host.isolator.status(self._owner())
        status["last_summary_error"] = self._last_summary_error
        return status

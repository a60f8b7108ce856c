"""What our plugin keeps in one hermes process: one :class:`Runtime`, no module globals.

``register(ctx)`` (:mod:`.plugin`) builds one :class:`Runtime` per call: it owns the host loaded from
hermes' config (built on first use: hermes registers our plugin at every start), the one record of
hermes sessions (:class:`SessionTable`, bounded) and the hook mapping
(:class:`~hermes_ctx_plugins.hermes.hooks.HookDispatcher`) it hands to hermes. The context engine and
the memory gate get it passed in. What hermes builds on its own — a memory provider
loaded through a shim, and a :class:`~hermes_ctx_plugins.bridge.Bridge` the service builds — find it
with :func:`installed`, the one accessor: it asks hermes' plugin registry whose hooks it calls, so
it is always the runtime hermes uses (a rediscovery replaces it) and this package keeps no module
global that two registrations, or two Bridges, could share.

Over 500 lines because the session table is most of it, and its rules -- the bound, what a running turn, a
released agent and a dropped owner each keep -- are one lock's invariants, read together or misread.
"""

from __future__ import annotations

import dataclasses
import inspect
import logging
import sys
import threading
import weakref
from collections import OrderedDict
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any

from ..errors import HermesCtxError
from ..events import Message, SessionInfo
from ..scope import describe
from .agents import Agents
from .hooks import ANCHOR_HOOK, HookDispatcher
from .memory_switches import left_to_hermes
from .prompt_owners import PromptOwnerRecords
from .speakers import DM, OWN, SHARED, Origins, Speakers, names_several, prefixed_unheard

if TYPE_CHECKING:
    from ..manager import Host

log = logging.getLogger("hermes_ctx_plugins.hermes")

#: how many sessions a runtime remembers (see :class:`SessionTable` for what happens beyond)
MAX_SESSIONS = 4096
#: the earlier ids a moved conversation keeps (one per compaction with ``in_place: false``; the oldest are dropped)
MAX_EARLIER_SESSIONS = 64


class SessionInUseError(HermesCtxError, ValueError):
    """A session id is already bound to another owner: hermes' hooks tell us only the session id, so
    two live agents of different owners may not share one."""


@dataclasses.dataclass
class _Entry:
    session: SessionInfo
    #: the deployment host a Bridge bound the session to; ``None``: the runtime's own host
    host: Host | None = None
    #: the agent a Bridge bound the session for (weak: the table never keeps an agent alive)
    holder: weakref.ref[Any] | None = None
    #: ``pre_llm_call`` calls in this conversation
    turns: int = 0
    #: a Bridge or a hook said who the owner is (hermes' ``pre_llm_call`` does, ``sender_id=""`` for the
    #: anonymous user); an entry only the other hooks made knows the platform and model, not the owner
    told: bool = False
    #: a turn is running: ``pre_llm_call`` started it, hermes' ``on_session_end`` hook has not ended it
    in_turn: bool = False
    #: the Bridge released the holder during its running turn: the entry goes when that turn ends
    released: bool = False
    #: the thread running the turn (hermes calls the hooks of a turn on the thread that runs it)
    turn_thread: threading.Thread | None = None
    #: who sent each user message hooks told of (a session several users speak in: see :mod:`.speakers`)
    speakers: Speakers | None = None

    def held_by(self) -> Any:
        """The live agent holding this entry, or ``None``."""
        return self.holder() if self.holder is not None else None

    def running(self) -> bool:
        """Whether the turn may still be running: started and not ended, its agent (a Bridge's) alive. A turn hermes
        ended with an error (a 400, 401 or 413 from the model) never fires ``on_session_end``: its entry stayed 'in
        a turn', and once released, for good (a red-team pass: one stale entry per failed turn, and the next owner
        of the id inherited its turn count)."""
        return self.in_turn and (self.holder is None or self.holder() is not None)

    def over_here(self) -> bool:
        """Whether the turn is surely over as seen from this thread: it ran on one that ended, or on this one and
        this thread is not inside its agent's ``run_conversation`` (a Bridge releasing the agent once it returned,
        not from a callback of the turn: a user disconnecting mid-turn)."""
        thread = self.turn_thread
        if thread is None:
            return False
        if thread is not threading.current_thread():
            return not thread.is_alive()
        agent = self.held_by()
        frame = sys._getframe(1)
        while frame is not None:
            if _in_turn_frame(frame, agent):
                return False
            frame = frame.f_back  # type: ignore[assignment]
        return True


def _in_turn_frame(frame: Any, agent: Any) -> bool:
    """Whether ``frame`` runs a turn of ``agent``: hermes' own ``AIAgent.run_conversation`` (its code in hermes'
    module, whatever wraps or patches it: a subclass's override calling it, then releasing the agent once it
    returned, is after the turn), else -- for an agent that is no hermes one -- a ``run_conversation`` of its
    first class to define one (a red-team pass each)."""
    code = frame.f_code
    if code.co_name != "run_conversation" or frame.f_locals.get("self") is not agent:
        return False
    hermes = sys.modules.get("run_agent")  # never imported here: an agent of hermes means hermes is loaded
    if hermes is not None and any(cls.__module__ == "run_agent" for cls in type(agent).__mro__):
        # hermes' module itself (its AIAgent may have been rebound to a subclass defined elsewhere; a red-team pass)
        return bool(code.co_filename == getattr(hermes, "__file__", None))
    try:
        defined = [vars(cls)["run_conversation"] for cls in type(agent).__mro__ if "run_conversation" in vars(cls)]
        return bool(defined) and code is getattr(inspect.unwrap(defined[-1]), "__code__", None)
    except Exception:  # an odd attribute (a wrapper loop, a descriptor that raises): the name and the agent say it
        return True


class SessionTable:
    """The one record of hermes sessions in a runtime: session id -> who it is, the host its hooks go
    to, the agent holding it, its turn count.

    Two kinds of entries: *bound* ones, which a Bridge made for one of its agents (a deployment's
    host; hooks cannot change who the session is), and *observed* ones, which hermes' hooks taught
    us (the runtime's own host; ``pre_llm_call`` says who the user is, the turn's later hooks do not).

    **Bounded.** At most ``max_sessions`` entries; beyond that the least recently used entry goes —
    but never one a live agent holds. A bound entry is held while the agent a Bridge bound it for is
    alive; dropping it would send that user's turns to the wrong deployment. So when every entry over
    the cap is held, the table grows past the cap (logging a warning once): those agents live in the
    service's own cache, which bounds them, and the table shrinks back as the service releases them
    (:meth:`release`) or they are garbage-collected (their entries then age out like any other).

    **A running turn keeps its entry.** Only ``pre_llm_call`` names the user; ``post_llm_call`` (which
    stores the turn) and ``on_session_finalize`` (which ends the conversation) find the owner here.
    So an entry whose turn is running (:meth:`start_turn` until :meth:`end_turn`) goes only after
    every idle one has. It is not held outright like a bound entry: hermes returns early from some
    failed turns without the hook that ends them, and such a turn must not pin its entry for the life
    of the process.

    **Anonymous or unknown** (:meth:`knows_owner`). When an entry is gone after all (its session was
    idle, or more turns than ``max_sessions`` ran at once) a later hook cannot say who the owner was,
    and storing the turn as the anonymous user's would hand one user's words to another. The
    anonymous user is only assumed while this table has never met a named owner — hermes' CLI
    (``sender_id=""`` from an agent without ``user_id``) and a gateway whose platforms name no user
    run exactly as before; one named owner (a gateway sender, a Bridge agent's user) makes every
    session whose owner no hook told the table *unknown*, and nothing is stored in its name. The table
    remembers which sessions it dropped (as many as it keeps) only to say so: a turn lost to the bound
    is worth a warning, a session never seen is not (a gateway's ``/new`` announces a new session
    before its first turn, a restarted process finalises the last one's sessions).
    """

    def __init__(self, max_sessions: int = MAX_SESSIONS) -> None:
        if max_sessions < 1:
            raise ValueError(f"max_sessions must be at least 1, got {max_sessions}")
        self.max_sessions = max_sessions
        self._entries: OrderedDict[str, _Entry] = OrderedDict()
        self._lock = threading.Lock()
        self._over_cap = False
        #: a named owner was seen: from now on an untold owner is unknown, not anonymous
        self._named = False
        #: sessions dropped to stay within the bound, oldest first (at most ``max_sessions``)
        self._dropped: OrderedDict[str, None] = OrderedDict()
        #: entries released while their turn ran (:meth:`release`): dropped once it no longer does
        self._released: set[str] = set()

    def __len__(self) -> int:
        return len(self._entries)

    def clear(self) -> None:
        """Forget everything, as a new table would (the named owners seen included)."""
        with self._lock:
            self._entries.clear()
            self._dropped.clear()
            self._released.clear()
            self._named = False

    # -- bindings (a Bridge's agents) ---------------------------------------------------------
    def bind(self, session: SessionInfo, host: Host, *, holder: object) -> None:
        """Route hermes' hooks for ``session`` to ``host``, held by the agent ``holder``.

        :raises SessionInUseError: another live agent holds this session id for another owner.
        """
        with self._lock:
            self._bind(session, host, holder)

    def _bind(self, session: SessionInfo, host: Host, holder: object) -> None:
        known = self._entries.get(session.session_id)
        other = known.held_by() if known is not None else None
        if known is not None and other is not None and other is not holder and (
                known.host is not host or known.session.user_id != session.user_id):
            raise SessionInUseError(
                f"session id {session.session_id!r} is already in use by another agent of "
                f"{describe(known.session.deployment, known.session.user_id)}; give every agent its own session "
                "id (hooks know a turn's owner only by it), or release the other agent first")
        # a released agent's turn that ended (or failed) is over: a new binding starts counting afresh
        inherits = known is not None and (not known.released or known.running())
        turns, in_turn = (known.turns, known.in_turn) if known is not None and inherits else (0, False)
        entry = self._store(session.session_id, _Entry(session, host, weakref.ref(holder), turns, in_turn=in_turn))
        self._told(entry, session.session_id, session.user_id)

    def move(self, holder: object, session_id: str) -> None:
        """hermes moved ``holder``'s conversation to ``session_id`` (a compaction with ``in_place:
        false``, ``/new``, ``/resume``): bind the new id to the same owner, forget the old one.

        :raises SessionInUseError: the new id is held by another owner's agent (the old one stays).
        """
        with self._lock:
            old_id = next((sid for sid, e in reversed(self._entries.items()) if e.held_by() is holder), None)
            if old_id is None or old_id == session_id:
                return
            old = self._entries[old_id]
            assert old.host is not None  # only bound entries have a holder
            moved = _moved(old.session, session_id, old_id)
            self._bind(moved, old.host, holder)
            del self._entries[old_id]

    def unbind(self, session_id: str, *, holder: object) -> None:
        """Forget a binding, if ``holder`` holds it (another agent that took the id over keeps it)."""
        with self._lock:
            known = self._entries.get(session_id)
            if known is not None and known.held_by() is holder:
                del self._entries[session_id]

    def release(self, holder: object, *, host: Host | None = None) -> None:
        """Forget every binding ``holder`` holds (its first session id and any hermes moved it to);
        with ``host``, only those to that host (another Bridge's binding of the agent is its own)."""
        with self._lock:
            for session_id in [sid for sid, e in self._entries.items()
                               if e.held_by() is holder and (host is None or e.host is host)]:
                entry = self._entries[session_id]
                if entry.running() and not entry.over_here():  # its turn's last hooks must still reach its owner
                    entry.released = True
                    self._released.add(session_id)
                else:
                    del self._entries[session_id]

    def binding(self, session_id: str) -> tuple[Host, SessionInfo] | None:
        """The host and owner a Bridge bound ``session_id`` to (``None``: not bound)."""
        with self._lock:
            known = self._touch(session_id)
            if known is None or known.host is None:
                return None
            return known.host, known.session

    def bound(self, session_id: str) -> SessionInfo | None:
        """Who a Bridge-bound session is (``None``: not bound)."""
        found = self.binding(session_id)
        return found[1] if found is not None else None

    # -- what hermes' hooks say ---------------------------------------------------------------
    def observe(self, session_id: str, *, user_id: str | None = None, platform: str = "",
                model: str = "") -> SessionInfo:
        """The session as far as hermes has told us, with what this hook adds (kept for the hooks
        that say less). A bound session's owner is fixed: only ``platform`` and ``model`` follow
        the hook, and are not kept.

        :param user_id: who the owner is, as the hook says it (``""``: the anonymous user);
            ``None``: the hook does not say (see :meth:`knows_owner`)
        """
        with self._lock:
            known = self._touch(session_id)
            if known is not None and known.host is not None:
                return dataclasses.replace(known.session, platform=platform or known.session.platform,
                                           model=model or known.session.model)
            if known is None:
                known = self._store(session_id, _Entry(SessionInfo(session_id=session_id)))
            before = known.session
            told = (user_id or before.user_id, platform or before.platform, model or before.model)
            if told != (before.user_id, before.platform, before.model):  # most hooks say nothing new
                known.session = dataclasses.replace(before, user_id=told[0], platform=told[1], model=told[2])
            if user_id is not None:
                self._told(known, session_id, user_id)
            return known.session

    def heard(self, session_id: str, user_id: str, texts: Iterable[str]) -> None:
        """``user_id`` sent ``session_id``'s current user message (its text in each of ``texts``' forms); a bound
        session's every message is its owner's."""
        with self._lock:
            known = self._entries.get(session_id)
            if known is not None and known.host is None:
                if known.speakers is None:
                    known.speakers = Speakers()
                known.speakers.heard(user_id, texts)

    def speakers(self, session_id: str, messages: Sequence[Message] = (), *,
                 origin: str | None = None) -> Callable[[Message], str | None] | None:
        """Who sent a user message of ``session_id``, when more than one user spoke in it -- heard here, or named in
        the sender prefixes of its ``messages`` (see :mod:`.speakers`; unheard: ``None`` from the callable, nobody's);
        ``None``: every message is the owner's. ``origin``: hermes' own answer, when its agent tells it
        (:func:`.speakers.origin`): shared, it is; a DM is not unless two named users were heard in it (a chat hermes
        calls a DM that several share: Slack's group DMs); a per-user group's session is not unless two were heard or
        a message this process did not hear carries a sender prefix (a session shared before a config change, now
        under one user's key)."""
        with self._lock:
            known = self._entries.get(session_id)
            heard = known.speakers.copy() if known is not None and known.speakers is not None else None
        several = heard is not None and heard.named_several
        if origin == SHARED or (origin == OWN and (several or prefixed_unheard(messages, heard))):
            return heard.of if heard is not None else (lambda message: None)
        if origin in (DM, OWN):
            return heard.of if heard is not None and several else None
        if heard is not None and heard.shared:
            return heard.of
        if not names_several(messages):
            return None
        return heard.of if heard is not None else (lambda message: None)

    def knows_owner(self, session_id: str) -> bool:
        """Whether what ``session_id``'s hooks store may be stored as the owner's :meth:`observe`
        returns: a Bridge bound the session or a hook said who it is, or this table has never met a
        named owner (so every owner is the anonymous user). ``False``: the owner is unknown."""
        with self._lock:
            known = self._entries.get(session_id)
            return not self._named or (known is not None and known.told)

    def forgot(self, session_id: str) -> bool:
        """Whether this table dropped ``session_id`` to stay within its bound (and has not seen it
        since); said once: the next call answers ``False``."""
        with self._lock:
            if session_id not in self._dropped:
                return False
            del self._dropped[session_id]
            return True

    def start_turn(self, session_id: str) -> int:
        """Count a new turn of ``session_id``; its number (1 for the first). The entry stays until
        :meth:`end_turn` (see the class)."""
        with self._lock:
            known = self._touch(session_id)
            if known is None:
                known = self._store(session_id, _Entry(SessionInfo(session_id=session_id)))
            known.turns += 1
            known.in_turn, known.turn_thread = True, threading.current_thread()
            return known.turns

    def end_turn(self, session_id: str) -> None:
        """``session_id``'s turn is over (hermes' ``on_session_end`` hook): its entry ages out again."""
        with self._lock:
            known = self._entries.get(session_id)
            if known is not None:
                known.in_turn = False
                if known.released:
                    del self._entries[session_id]

    def follow(self, old_id: str, session_id: str) -> None:
        """hermes moved an observed conversation from ``old_id`` to ``session_id`` (a compaction with
        ``in_place: false``) in the middle of a turn: the same agent, so the same owner, whom no hook of
        the new id will name again. A bound conversation moves with :meth:`move`; an id some hook
        already told the owner of keeps what it was told."""
        with self._lock:
            old = self._entries.get(old_id) if old_id and old_id != session_id else None
            new = self._entries.get(session_id)
            if old is None or old.host is not None or (new is not None and new.told):
                return
            moved = _moved(old.session, session_id, old_id)
            self._store(session_id, _Entry(moved, turns=old.turns, told=old.told, in_turn=old.in_turn,
                                           speakers=old.speakers))
            old.in_turn = False

    def turn(self, session_id: str) -> int:
        """The number of ``session_id``'s current turn (0: none yet)."""
        with self._lock:
            known = self._entries.get(session_id)
            return known.turns if known is not None else 0

    def end(self, session_id: str) -> None:
        """The conversation ended: its turns start again from 1; what hooks taught us is forgotten
        (a binding stays until its agent is released)."""
        with self._lock:
            known = self._entries.get(session_id)
            if known is not None and known.host is not None and known.released:
                del self._entries[session_id]
            elif known is not None and known.host is not None:
                known.turns, known.in_turn = 0, False
            elif known is not None:
                del self._entries[session_id]

    def session(self, session_id: str) -> SessionInfo | None:
        """Who ``session_id`` is, bound or observed (``None``: unknown)."""
        with self._lock:
            known = self._entries.get(session_id)
            return known.session if known is not None else None

    def _told(self, entry: _Entry, session_id: str, user_id: str) -> None:
        entry.told = True
        self._named = self._named or bool(user_id)
        self._dropped.pop(session_id, None)  # known again: no longer a dropped owner

    # -- the bound ----------------------------------------------------------------------------
    def _touch(self, session_id: str) -> _Entry | None:
        known = self._entries.get(session_id)
        if known is not None:
            self._entries.move_to_end(session_id)
        return known

    def _store(self, session_id: str, entry: _Entry) -> _Entry:
        self._sweep_released()
        self._entries[session_id] = entry
        self._entries.move_to_end(session_id)
        self._evict(keep=session_id)
        return entry

    def _sweep_released(self) -> None:
        """Drop the entries released in a turn that is no longer running (:meth:`_Entry.running`)."""
        for session_id in list(self._released):
            known = self._entries.get(session_id)
            if known is None or not known.released:
                self._released.discard(session_id)
            elif not known.running():
                del self._entries[session_id]
                self._released.discard(session_id)

    def _evict(self, keep: str) -> None:
        """Drop the least recently used entries no live agent holds, down to the cap: idle ones
        first, then those in a running turn, ``keep`` (just stored, its turn about to start) last."""
        excess = len(self._entries) - self.max_sessions
        idle: list[str] = []
        busy: list[str] = []
        for session_id, entry in self._entries.items():  # oldest first
            if len(idle) >= excess:
                break
            if session_id == keep or entry.held_by() is not None:
                continue
            if not entry.in_turn:
                idle.append(session_id)
            elif len(busy) < excess:
                busy.append(session_id)
        last = [keep] if excess > len(idle) + len(busy) and self._entries[keep].held_by() is None else []
        for session_id in (idle + busy + last)[:excess]:
            del self._entries[session_id]
            self._dropped[session_id] = None
        while len(self._dropped) > self.max_sessions:
            self._dropped.popitem(last=False)
        over = len(self._entries) > self.max_sessions
        if over and not self._over_cap:
            log.warning("hermes-ctx: %d sessions are held by live Bridge agents, more than the %d it keeps; "
                        "they stay bound (release agents with plan.release() when evicting them)",
                        len(self._entries), self.max_sessions)
        self._over_cap = over


class Runtime:
    """Our plugin in one hermes process: the host, the session table and the hook mapping.

    :param host: the host, built already (an engine used outside hermes' plugin loading, tests)
    :param build: instead of ``host``: how to build it, on first use (hermes' plugin registration builds
        nothing: hermes loads our plugin at every start, for commands that never run an agent too)
    :ivar sessions: every session hermes' hooks or a Bridge told us about
    :ivar hooks: the callbacks ``register(ctx)`` hands to hermes
    :ivar agents: the live hermes agents by session id, and what our status events reach
    """

    def __init__(self, host: Host | None = None, *, build: Callable[[], Host] | None = None,
                 max_sessions: int = MAX_SESSIONS, publish: Callable[[], None] | None = None,
                 sessions: SessionTable | None = None) -> None:
        if (host is None) == (build is None):
            raise TypeError("Runtime needs a host or a way to build one (build=), not both")
        self._host = host
        self._build = build
        self._building = threading.Lock()
        #: why the host could not be built (then it is not tried again: the error was said once)
        self._failure: HermesCtxError | None = None
        self.sessions = sessions if sessions is not None else SessionTable(max_sessions)
        self.hooks = HookDispatcher(self)
        self.agents = Agents()
        #: whether each gateway conversation is shared, as hermes' agents told it (see :mod:`.speakers`)
        self.origins = Origins()
        self._publish = publish
        #: per hermes home, whose memory each session's stored system prompt holds (a Bridge's hand-overs)
        self.prompt_owners = PromptOwnerRecords()

    @property
    def host(self) -> Host:
        """The host loaded from hermes' ``config.yaml`` (its top-level settings), built the first time
        it is asked for when the runtime was given ``build``.

        :raises HermesCtxError: it could not be built (``build`` said why, once; every later call
            raises the same error without trying again)
        """
        host = self._host
        if host is not None:
            return host
        with self._building:  # hermes' hooks and agents may ask from several threads at once
            if self._host is None:
                if self._failure is not None:
                    raise self._failure
                assert self._build is not None
                try:
                    self._host = self._build()
                except HermesCtxError as exc:
                    self._failure = exc
                    raise
                if self._host.archive is not None:  # what an outage spooled here before a restart (a fleet pass)
                    threading.Thread(target=self._host.archive.import_spooled, name="ctx-archive-import",
                                     daemon=True).start()
            return self._host

    def usable(self) -> bool:
        """Whether the host is there, building it now if it was not built yet."""
        try:
            self.host  # noqa: B018 -- the property builds it
        except HermesCtxError:
            return False
        return True

    def serving(self) -> None:
        """A conversation runs in this process: call ``publish`` (given at construction) the first time."""
        publish, self._publish = self._publish, None
        if publish is not None:
            publish()

    def agent_for(self, session_id: str) -> Any | None:
        """The live hermes agent running ``session_id``, or ``None`` (unknown, or garbage-collected)."""
        return self.agents.agent_for(session_id)

    def route(self, session_id: str) -> tuple[Host, set[str]]:
        """The host ``session_id``'s hooks go to, and the providers our hooks must not drive: hermes'
        memory switches decide (:mod:`.memory_switches`: an external provider runs only as hermes'
        ``memory.provider``, through hermes' memory manager; none runs for an agent without memory).
        A Bridge-bound session's memory is its deployment host's alone (the Bridge builds its agents
        without hermes' memory manager)."""
        bound = self.sessions.binding(session_id)
        if bound is not None:
            return bound[0], set()
        return self.host, left_to_hermes(self.host, self.agent_for(session_id))

    def session(self, session_id: str, host: Host) -> SessionInfo:
        """Who ``session_id`` is, in ``host``'s namespace: what a Bridge or hermes' hooks told this
        runtime, else what ``host`` itself was told (``Host.session``)."""
        known = self.sessions.session(session_id)
        return host.scoped(known) if known is not None else host.session(session_id)


#: where a process's session table lives on hermes' plugin manager (see :func:`process_sessions`)
_SESSIONS_ON_MANAGER = "_hermes_ctx_sessions"


def manager_sessions(manager: object) -> SessionTable:
    """The session table of hermes' plugin ``manager`` (the one registering us), kept on it — it lives as long
    as the process — not in a runtime: a rediscovery (``discover_plugins(force=True)``: hermes' dashboard does
    one, a service may) clears the manager's hooks and registers a new runtime, and the sessions a Bridge bound
    to their deployments must still reach them. In the old runtime's table alone, the bound users' turns
    went to the new runtime's own host, that is to another deployment's stores. Another manager (a second
    one in the process) has a table of its own."""
    table = getattr(manager, _SESSIONS_ON_MANAGER, None)
    if not isinstance(table, SessionTable):
        table = SessionTable()
        setattr(manager, _SESSIONS_ON_MANAGER, table)
    return table


def installed() -> Runtime | None:
    """The runtime whose hooks hermes calls in this process, its host built (``None``: hermes has not
    loaded our plugin, or its config could not be loaded — the log says why).

    Read from hermes' plugin registry, not kept by us: after a rediscovery
    (``discover_plugins(force=True)``) it is the new registration's runtime, the old one is gone.
    """
    plugins = sys.modules.get("hermes_cli.plugins")  # not imported: hermes has loaded no plugin
    if plugins is None:
        return None
    for callback in reversed(plugins.get_plugin_manager()._hooks.get(ANCHOR_HOOK, ())):
        runtime = getattr(getattr(callback, "__self__", None), "runtime", None)
        if isinstance(runtime, Runtime):
            return runtime if runtime.usable() else None  # its host is built here if it was not yet
    return None


def _moved(session: SessionInfo, session_id: str, old_id: str) -> SessionInfo:
    """``session`` moved by hermes from ``old_id`` to ``session_id``: the old id joins its earlier ones (what the
    archive kept under them is still this conversation's)."""
    earlier = (old_id, *(s for s in session.earlier_sessions if s not in (old_id, session_id)))
    return dataclasses.replace(session, session_id=session_id, parent_session_id=old_id,
                               earlier_sessions=earlier[:MAX_EARLIER_SESSIONS])


def compaction_ancestors(session_db: Any, session_id: str) -> tuple[str, ...]:
    """The sessions ``session_id`` continues, newest first, from hermes' session database (``SessionDB``): each a
    parent that ended in a compaction (``end_reason = 'compression'``) of a child that is no branch or delegated
    task -- hermes' own rule for a compression chain -- and of the same user (hermes' ``user_id`` of both rows).
    ``()`` without a database or when reading it fails."""
    found: list[str] = []
    if session_db is None or not session_id:
        return ()
    try:
        current = session_db.get_session(session_id)
        while current is not None and len(found) < MAX_EARLIER_SESSIONS:
            parent_id = current.get("parent_session_id")
            config = current.get("model_config") or "{}"
            if not parent_id or parent_id == session_id or parent_id in found or "_branched_from" in config or (
                    "_delegate_from" in config) or current.get("source") == "tool":
                break
            parent = session_db.get_session(parent_id)
            if parent is None or parent.get("end_reason") != "compression" or (
                    (parent.get("user_id") or "") != (current.get("user_id") or "")):  # another user's: never theirs
                break
            found.append(parent_id)
            current = parent
    except Exception as exc:  # hermes' database is its own: a failure leaves the archive to this session's id
        log.debug("hermes-ctx could not read session %r's compaction chain: %s", session_id, exc)
    return tuple(found)

"""Per-deployment control for a service that embeds hermes for many users (the "Bridge").

A Bridge builds ``AIAgent`` objects itself (cached per ``session_id::hermes_home::model_id``). For a
named deployment of our config, :class:`Bridge` gives the agent keyword arguments to use and then
:meth:`DeploymentPlan.apply` switches the agent's compression engine, routes its hooks (context
contributions, memory recall, turn storage) to that deployment's plugins, strategy and providers,
and gives hermes' own memory tool and prompt the files of the agent's owner — all without code
changes::

    bridge = Bridge("/srv/hermes/config.yaml")       # every deployment validated here
    plan = bridge.deployment("support-bot")
    agent = AIAgent(model=..., base_url=..., session_id=sid, user_id=uid, **plan.agent_kwargs())
    plan.apply(agent)
    ...
    plan.release(agent)          # when the Bridge evicts the agent from its cache

**Memory belongs to (deployment, user)** (:mod:`hermes_ctx_plugins.scope`): every provider, the
archive and hermes' memory tool of an applied agent see only that owner's memories. hermes keeps a
single MEMORY.md / USER.md per ``HERMES_HOME``; an applied agent gets hermes' store class on its
owner's own pair instead (:mod:`.scoped_memory`) when the deployment selects ``file``, and no
hermes file memory at all when it does not. Our other providers are driven through our hooks, never
through hermes' memory manager, so agents are built with ``skip_memory=True``
(:meth:`DeploymentPlan.agent_kwargs`).

hermes only calls our hooks when it loads our plugin, so a Bridge refuses to start unless hermes'
``config.yaml`` has ``plugins: {enabled: [hermes-ctx]}``.

**Sessions.** hermes' hooks name a turn's session id and nothing more, so :meth:`DeploymentPlan.apply`
binds the agent's session id to its deployment and owner in the runtime whose hooks hermes calls
(:func:`~hermes_ctx_plugins.hermes.runtime.installed`; one per process, shared by every Bridge in it:
two agents of different owners, even of different Bridges, cannot hold one session id). The binding
is held by the agent until :meth:`DeploymentPlan.release` or until the agent is garbage-collected;
the runtime's table is bounded and never drops a binding a live agent holds.

This module is internal: import the API from :mod:`hermes_ctx_plugins.bridge`.
"""

from __future__ import annotations

import copy
import logging
import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from ..config import Config, hermes_home, load_config
from ..errors import ConfigError, HermesCtxError, PluginLoadError
from ..events import SessionInfo, id_text
from ..isolation import StatusEvent
from ..manager import Host, load_host
from ..memory.file.provider import memory_folder
from . import skills
from .engine import HermesCtxEngine
from .memory import HermesMemoryAdapter, chat_of
from .memory_gate import HERMES_STAGES, defer_reviews_to_hermes, file_provider, hermes_stages_memory_writes
from .prompt_owners import forget_foreign_prompt
from .runtime import Runtime, installed
from .scoped_memory import ScopedMemoryStore

log = logging.getLogger("hermes_ctx_plugins.hermes")

#: the name hermes knows our plugin by (the entry point in ``hermes_agent.plugins``)
PLUGIN_NAME = "hermes-ctx"


class AnonymousAgentError(HermesCtxError, ValueError):
    """An agent without a user id was applied to a deployment that keeps memories.

    :ivar deployment: the deployment's name; :ivar session_id: the agent's session
    """

    def __init__(self, deployment: str | None, session_id: str, providers: list[str]) -> None:
        self.deployment, self.session_id = deployment, session_id
        where = f"deployment {deployment!r}" if deployment else "the top-level settings"
        super().__init__(
            f"agent of session {session_id!r} has no user_id, but {where} keeps memories "
            f"({', '.join(providers)}): build it with AIAgent(user_id=...) so its memories are its "
            "user's own, or call plan.apply(agent, anonymous=True) to let every agent without a "
            "user id share one anonymous memory in this deployment")


@dataclass
class DeploymentPlan:
    """What one deployment switches on or off, and how to apply it to an agent."""

    name: str | None
    host: Host
    #: whether this deployment's agents were said to hold hermes' host tools (:func:`_host_tools`), once
    warned_host_tools: bool = field(default=False, init=False, repr=False, compare=False)

    @property
    def compressor(self) -> str | None:
        return self.host.compressor.name if self.host.compressor else None

    @property
    def memory_providers(self) -> list[str]:
        return [p.name for p in self.host.memory_providers]

    def agent_kwargs(self) -> dict[str, Any]:
        """Keyword arguments for ``AIAgent``: hermes' own memory manager stays off.

        This deployment's memory (``ctx_plugins.memory.providers``) is driven through our hooks and,
        for ``file``, through the owner's files that :meth:`apply` gives hermes' memory tool.
        """
        return {"skip_memory": True}

    def apply(self, agent: Any, *, anonymous: bool = False) -> Any:
        """Give ``agent`` this deployment's strategy, its owner's memory, and route its hooks here.

        :param anonymous: allow an agent without ``user_id`` in a deployment that keeps memories
            (it then shares this deployment's anonymous memory with every other such agent).
        :raises AnonymousAgentError: no user id, memory on, ``anonymous`` not given.
        :raises InvalidSession: the agent's user id is neither text nor an integer (bytes, a bool, a float), named.
        :raises ConfigError: the agent was built with hermes' memory manager driving one of our
            providers (build it with :meth:`agent_kwargs`).
        :raises SessionInUseError: another live agent of another owner holds the agent's session id.
        :raises PluginLoadError: hermes has not loaded our plugin in this process, so no hook of
            this agent would reach the deployment.
        """
        raw_user = getattr(agent, "_user_id", None)
        user_id = "" if raw_user is None else id_text(raw_user)
        if not user_id and self.memory_providers and not anonymous:
            raise AnonymousAgentError(self.name, agent.session_id, self.memory_providers)
        _refuse_hermes_manager_of_ours(agent)
        session = self.host.scoped(SessionInfo(
            session_id=agent.session_id, user_id=user_id, platform=str(getattr(agent, "platform", "") or ""),
            chat_id=chat_of(getattr(agent, "_chat_id", None), getattr(agent, "_gateway_session_key", None),
                            getattr(agent, "platform", ""), agent.session_id),
            model=str(getattr(agent, "model", "") or "")))
        runtime = hermes_runtime()
        # first: a session id in use refuses here; and hermes may compact (and archive) before its
        # first hook, so the engine must already find the owner in the runtime
        runtime.sessions.bind(session, self.host, holder=agent)
        # the hooks show this deployment's status events (a provider suspended, ...) to the agent running the
        # turn: they find it by its session id (without our engine in hermes' config, nothing else told them)
        runtime.agents.remember(session.session_id, agent)
        current = getattr(agent, "context_compressor", None)
        if self.host.compressor is not None:
            engine = copy.deepcopy(HermesCtxEngine(self.host, runtime))
            engine.update_model(model=agent.model, context_length=_context_length(agent),
                                base_url=getattr(agent, "base_url", "") or "",
                                api_key=getattr(agent, "api_key", "") or "",
                                provider=getattr(agent, "provider", "") or "")
            engine.bind(session, holder=agent)
            # hermes bound the engine it built to its session database; this one reads it too (a resumed
            # conversation's earlier ids)
            engine.bind_session_state(getattr(agent, "_session_db", None), session.session_id)
            agent.context_compressor = engine
            _offer_engine_tools(agent, engine)
        elif isinstance(current, HermesCtxEngine):  # another deployment's engine must not stay on it
            runtime.sessions.unbind(session.session_id, holder=agent)
            raise ConfigError(
                f"deployment {self.name!r} selects no compressor, but this agent runs our engine (hermes' "
                "context.engine: hermes-ctx), which would compact it with another deployment's strategy "
                "and archive; give the deployment a compressor, or build its agents with hermes' "
                "built-in compressor (context.engine: compressor)",
                path=f"ctx_plugins.deployments.{self.name}.compressor", value=None,
                expected="a compressor, since hermes runs our engine")
        self._give_owner_files(agent, session)
        if session.user_id or session.deployment:
            _withhold_session_search(agent)
            tools = _host_tools(agent)
            if tools and not self.warned_host_tools:
                self.warned_host_tools = True
                log.warning(
                    "Bridge deployment %r: its agents have hermes' tools %s, which read and run anything on this "
                    "machine that this process may: every user's files under %s (memories, ctx-local's store, "
                    "hermes' own sessions and logs) unless hermes' terminal backend is a sandbox; build Bridge "
                    "agents with enabled_toolsets that leave out terminal, file and code_execution", self.name or "",
                    ", ".join(tools), hermes_home())
        # hermes resends a continued session's stored system prompt, its owner's memory snapshot in it: not another's
        forget_foreign_prompt(runtime.prompt_owners, agent, session)
        return agent

    def _give_owner_files(self, agent: Any, session: SessionInfo) -> None:
        """hermes' memory tool and prompt snapshot on the owner's files (or off, without ``file``)."""
        settings = self.host.config.memory
        files = file_provider(self.host)
        store = None
        if files is not None and (settings.memory_enabled or settings.user_profile_enabled):
            store = ScopedMemoryStore(memory_folder(hermes_home(), session.deployment, session.user_id),
                                      files.documents,
                                      memory_char_limit=settings.memory_char_limit,
                                      user_char_limit=settings.user_char_limit)
            store.load_from_disk()
        agent._memory_store = store
        agent._memory_enabled = bool(store) and settings.memory_enabled
        agent._user_profile_enabled = bool(store) and settings.user_profile_enabled
        agent._memory_nudge_interval = settings.nudge_interval if store else 0
        # skills are one folder for every user of the hermes home: hermes' review must not turn one
        # user's conversation into a skill every user sees (the skill_manage tool is the operator's call)
        if session.user_id or session.deployment:
            agent._skill_nudge_interval = 0
        agent._cached_system_prompt = None  # built from the store on the next turn

    def release(self, agent: Any) -> None:
        """Forget ``agent``'s session routing to this deployment (call when evicting it): its first
        session id and any hermes moved it to; a binding another agent took over is left to that
        agent. (An agent that is garbage-collected unreleased loses its hold too, see
        :class:`~hermes_ctx_plugins.hermes.runtime.SessionTable`.)"""
        runtime = installed()
        if runtime is not None:
            runtime.sessions.release(agent, host=self.host)


def hermes_runtime() -> Runtime:
    """The runtime whose hooks hermes calls (plugin discovery runs first if hermes has not run it).

    :raises PluginLoadError: hermes did not load our plugin, or its ``register`` failed.
    """
    from hermes_cli import plugins as hermes_plugins

    hermes_plugins.discover_plugins()  # what hermes does on `import run_agent`; once per process
    runtime = installed()
    if runtime is None:
        raise PluginLoadError(PLUGIN_NAME, "hermes has not loaded it in this process (its log says why, e.g. a "
                                           "config error), so no hook of a Bridge agent would reach its deployment")
    return runtime


def _refuse_hermes_manager_of_ours(agent: Any) -> None:
    manager = getattr(agent, "_memory_manager", None)
    ours = [p.name for p in getattr(manager, "providers", None) or () if isinstance(p, HermesMemoryAdapter)]
    if ours:
        raise ConfigError(
            f"this agent was built with hermes' memory manager driving our provider {ours[0]!r} "
            "(hermes' memory.provider), which would store its user's turns outside the deployment's "
            "scope; build Bridge agents with **plan.agent_kwargs()** (skip_memory=True): the plan "
            "drives the deployment's providers itself",
            path="memory.provider", value=ours[0], expected="agents built with skip_memory=True")


def _refuse_hermes_staging(plans: Iterable[DeploymentPlan]) -> None:
    """A Bridge gives each owner their own files; hermes' own approval gate stages every write in one folder and
    approves it into the top-level files (the memory gate refuses such writes too, at each write, since hermes reads
    its config then)."""
    keeping = [plan.name or "(top level)" for plan in plans if file_provider(plan.host) is not None
               and (plan.host.config.memory.memory_enabled or plan.host.config.memory.user_profile_enabled)]
    if keeping and hermes_stages_memory_writes():
        raise ConfigError(f"deployment {keeping[0]!r} keeps file memory per owner, but {HERMES_STAGES}",
                          path="memory.write_approval", value=True, expected="false (or unset) in a Bridge",
                          source=str(hermes_home() / "config.yaml"))


def _context_length(agent: Any) -> int | None:
    current = getattr(getattr(agent, "context_compressor", None), "context_length", None)
    return int(current) if current else None


class Bridge:
    """Loads our config once, validates every deployment, hands out one :class:`DeploymentPlan` each."""

    def __init__(self, config: str | os.PathLike[str] | dict[str, Any] | None = None, *,
                 plugins: Iterable[object] = ()) -> None:
        """:param config: as for :func:`~hermes_ctx_plugins.load_host`.
        :param plugins: in-process plugin objects to register besides the installed ones.
        :raises ConfigError: the config, or any deployment in it, is invalid (naming the deployment
            and the key), or hermes will not load our plugin. :raises PluginError: a plugin failed.
        """
        self._source = config
        self._plugins = tuple(plugins)
        self._base: Config = load_config(config)  # validate early: a typo fails at start-up
        _require_hermes_loads_us()
        skills.install()  # our background review leaves alone the skills hermes' own review must
        self._plans: dict[str | None, DeploymentPlan] = {}
        for name in (None, *self.deployments):  # every deployment, now rather than at its first request
            self.deployment(name)
        _refuse_hermes_staging(self._plans.values())

    @property
    def runtime(self) -> Runtime:
        """The runtime the plans bind their agents' sessions in: the one whose hooks hermes calls.

        :raises PluginLoadError: hermes has not loaded our plugin in this process.
        """
        return hermes_runtime()

    @property
    def deployments(self) -> list[str]:
        return sorted(self._base.plugins.deployments)

    def deployment(self, name: str | None = None) -> DeploymentPlan:
        """The plan for deployment ``name`` (``None``: the top-level settings), built once."""
        plan = self._plans.get(name)
        if plan is None:
            config = load_config(self._source, deployment=name) if name else self._base
            # its status events reach the user of the agent the turn runs for, as the runtime's own host's do
            host = load_host(config, plugins=self._plugins, status_callback=_forward_status)
            defer_reviews_to_hermes(host)
            plan = self._plans[name] = DeploymentPlan(name=name, host=host)
        return plan

    def shutdown(self) -> None:
        """Shut every deployment's providers down (flushing what they queued)."""
        for plan in self._plans.values():
            plan.host.shutdown()


def _forward_status(event: StatusEvent) -> None:
    """A deployment host's status event, to hermes' status line of the agent the current thread works for (the
    runtime hermes calls now: a rediscovery replaces it). Logged there too; never raises."""
    try:
        runtime = installed()
        if runtime is not None:
            runtime.agents.on_event(event)
    except Exception:  # a status line must never cost the turn (a compaction reports through this too)
        logging.getLogger("hermes_ctx_plugins.hermes").debug("status event %r not shown", event, exc_info=True)


def _require_hermes_loads_us() -> None:
    """hermes calls our hooks only when it loads our plugin: refuse to run a Bridge that would
    silently have no memory and no context contributions."""
    from hermes_cli import plugins as hermes_plugins

    path = hermes_home() / "config.yaml"
    if os.environ.get("HERMES_SAFE_MODE", "").strip().lower() in ("1", "true", "yes", "on"):
        raise ConfigError("HERMES_SAFE_MODE is set, so hermes loads no plugin and a Bridge would run without "
                          "our hooks; unset it", path="HERMES_SAFE_MODE", value=os.environ["HERMES_SAFE_MODE"],
                          expected="unset", source=str(path))
    enabled = hermes_plugins._get_enabled_plugins() or set()
    if PLUGIN_NAME in hermes_plugins._get_disabled_plugins():
        raise ConfigError(f"hermes' plugins.disabled lists {PLUGIN_NAME!r}; remove it so hermes calls our hooks",
                          path="plugins.disabled", value=PLUGIN_NAME, expected=f"a list without {PLUGIN_NAME!r}",
                          source=str(path))
    if PLUGIN_NAME not in enabled:
        raise ConfigError(
            f"hermes will not load {PLUGIN_NAME}, so a Bridge would have no memory and no context hooks: add "
            f"`plugins: {{enabled: [{PLUGIN_NAME}]}}` to {path} (or run `hermes-ctx install`)",
            path="plugins.enabled", value=sorted(enabled), expected=f"a list containing {PLUGIN_NAME!r}",
            source=str(path))


#: hermes' tools that read, write or run anything this process may on this machine (its home, every user's files)
HOST_TOOLS = ("terminal", "process", "read_file", "write_file", "patch", "search_files", "execute_code")


def _host_tools(agent: Any) -> list[str]:
    valid = getattr(agent, "valid_tool_names", None)
    return [name for name in HOST_TOOLS if isinstance(valid, (set, frozenset, list)) and name in valid]


#: hermes' tool (and its toolset, of the same name) reading every session of hermes' state.db, whoever's
HERMES_SESSION_SEARCH = "session_search"


def _withhold_session_search(agent: Any) -> None:
    """hermes' ``session_search`` off ``agent``: it reads every conversation in hermes' session database, every
    user's and every deployment's alike (hermes keeps one per home and filters by no user), so bob's agent could
    search and read alice's conversations word for word (a red-team pass). Taken off the tools the model is offered
    and the names hermes accepts a call by; its toolset disabled, which hermes hands on to subagents. The archive's
    ``ctx_search`` / ``ctx_expand`` search the owner's own compacted turns."""
    tools = getattr(agent, "tools", None)
    if isinstance(tools, list):
        tools[:] = [t for t in tools if not (isinstance(t, dict) and isinstance(t.get("function"), dict)
                                             and t["function"].get("name") == HERMES_SESSION_SEARCH)]
    valid = getattr(agent, "valid_tool_names", None)
    if isinstance(valid, set):
        valid.discard(HERMES_SESSION_SEARCH)
    disabled = getattr(agent, "disabled_toolsets", None)
    if isinstance(disabled, list):
        if HERMES_SESSION_SEARCH not in disabled:
            disabled.append(HERMES_SESSION_SEARCH)
    else:
        agent.disabled_toolsets = [*(disabled or ()), HERMES_SESSION_SEARCH]


def _offer_engine_tools(agent: Any, engine: HermesCtxEngine) -> None:
    """The engine's tools (``ctx_search``, ``ctx_expand``) on ``agent``'s tool list, as hermes offers a context
    engine's when it builds an agent with one (``agent_init``: where its toolsets allow ``context_engine``): the
    agent was built with hermes' own compressor, which has none, so without this a Bridge agent never saw them
    unless hermes' config also named our engine, while its summaries pointed the model at ``ctx_expand`` (a fleet
    pass)."""
    tools = getattr(agent, "tools", None)
    enabled = getattr(agent, "enabled_toolsets", None)
    if not isinstance(tools, list) or (enabled is not None and "context_engine" not in enabled):
        return
    from agent.memory_manager import normalize_tool_schema  # hermes' own: the shape it gives a context engine's

    names = {t.get("function", {}).get("name") for t in tools if isinstance(t, dict)}
    valid = getattr(agent, "valid_tool_names", None)
    engine_names = getattr(agent, "_context_engine_tool_names", None)
    for raw in engine.get_tool_schemas():
        schema = normalize_tool_schema(raw)
        if schema is None or schema["name"] in names:
            continue
        tools.append({"type": "function", "function": schema})
        names.add(schema["name"])
        if isinstance(valid, set):
            valid.add(schema["name"])
        if isinstance(engine_names, set):
            engine_names.add(schema["name"])
        else:
            agent._context_engine_tool_names = engine_names = {schema["name"]}

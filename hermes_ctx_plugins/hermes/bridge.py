"""Per-deployment control for a service that embeds hermes (the "Bridge").

A Bridge builds ``AIAgent`` objects itself (typically ``skip_memory=True``, cached per
``session_id::hermes_home::model_id``). For a named deployment of our config, :class:`Bridge`
gives the agent keyword arguments to use and then :meth:`DeploymentPlan.apply` switches the
agent's compression engine and routes its hooks (context contributions, memory recall, turn
storage) to that deployment's plugins, strategy and providers — all without code changes::

    bridge = Bridge("/srv/hermes/config.yaml")
    plan = bridge.deployment("support-bot")
    agent = AIAgent(model=..., base_url=..., session_id=sid, user_id=uid, **plan.agent_kwargs())
    plan.apply(agent)
    ...
    plan.release(agent)          # when the Bridge evicts the agent from its cache

Memory is scoped by the agent's user id: two cached agents of different users never see each
other's memories, whatever deployment they share.
"""

from __future__ import annotations

import copy
import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from ..config import Config, load_config
from ..manager import Host, load_host
from .engine import HermesCtxEngine
from .hooks import bind_session, unbind_session
from .memory_gate import defer_reviews_to_hermes


@dataclass
class DeploymentPlan:
    """What one deployment switches on or off, and how to apply it to an agent."""

    name: str | None
    host: Host
    _engines: list[HermesCtxEngine] = field(default_factory=list, repr=False)

    @property
    def compressor(self) -> str | None:
        return self.host.compressor.name if self.host.compressor else None

    @property
    def memory_providers(self) -> list[str]:
        return [p.name for p in self.host.memory_providers]

    def agent_kwargs(self) -> dict[str, Any]:
        """Keyword arguments for ``AIAgent``: memory stays off unless this deployment turns it on.

        hermes' own memory (MEMORY.md and its ``memory.provider``) follows ``skip_memory``; our
        providers are driven through our hooks and follow this deployment's
        ``ctx_plugins.memory.providers``.
        """
        return {"skip_memory": not self.host.config.memory.memory_enabled or not self.memory_providers}

    def apply(self, agent: Any) -> Any:
        """Give ``agent`` this deployment's strategy and route its session's hooks here."""
        if self.host.compressor is not None:
            engine = copy.deepcopy(HermesCtxEngine(self.host))
            engine.update_model(model=agent.model, context_length=_context_length(agent),
                                base_url=getattr(agent, "base_url", "") or "",
                                api_key=getattr(agent, "api_key", "") or "",
                                provider=getattr(agent, "provider", "") or "")
            agent.context_compressor = engine
        bind_session(agent.session_id, self.host)
        return agent

    def release(self, agent: Any) -> None:
        """Forget ``agent``'s session routing (call when evicting it)."""
        unbind_session(agent.session_id)


def _context_length(agent: Any) -> int | None:
    current = getattr(getattr(agent, "context_compressor", None), "context_length", None)
    return int(current) if current else None


class Bridge:
    """Loads our config once and hands out one :class:`DeploymentPlan` per deployment name."""

    def __init__(self, config: str | os.PathLike[str] | dict[str, Any] | None = None, *,
                 plugins: Iterable[object] = ()) -> None:
        """:param config: as for :func:`~hermes_ctx_plugins.load_host`.
        :param plugins: in-process plugin objects to register besides the installed ones."""
        self._source = config
        self._plugins = tuple(plugins)
        self._base: Config = load_config(config)  # validate early: a typo fails at start-up
        self._plans: dict[str | None, DeploymentPlan] = {}

    @property
    def deployments(self) -> list[str]:
        return sorted(self._base.plugins.deployments)

    def deployment(self, name: str | None = None) -> DeploymentPlan:
        """The plan for deployment ``name`` (``None``: the top-level settings), built once."""
        plan = self._plans.get(name)
        if plan is None:
            config = load_config(self._source, deployment=name) if name else self._base
            host = load_host(config, plugins=self._plugins)
            defer_reviews_to_hermes(host)
            plan = self._plans[name] = DeploymentPlan(name=name, host=host)
        return plan

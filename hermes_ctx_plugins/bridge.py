"""Per-deployment control for services that embed hermes: the public import path of the Bridge API.

``from hermes_ctx_plugins.bridge import Bridge`` is the stable spelling (README, examples), and these
four names are all it exports; the implementation lives in :mod:`hermes_ctx_plugins.hermes.bridge`,
which is internal and may move. Needs the ``hermes`` extra (it works on hermes ``AIAgent`` objects).
"""

from __future__ import annotations

from .hermes.bridge import AnonymousAgentError, Bridge, DeploymentPlan
from .hermes.runtime import SessionInUseError

__all__ = ["AnonymousAgentError", "Bridge", "DeploymentPlan", "SessionInUseError"]

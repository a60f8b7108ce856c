"""Per-deployment control for services that embed hermes; see :mod:`hermes_ctx_plugins.hermes.bridge`.

Needs the ``hermes`` extra (it works on hermes ``AIAgent`` objects).
"""

from __future__ import annotations

from .hermes.bridge import Bridge, DeploymentPlan

__all__ = ["Bridge", "DeploymentPlan"]

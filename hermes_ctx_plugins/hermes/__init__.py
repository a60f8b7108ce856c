"""The bridge to hermes-agent 0.19.0 — the only package that imports hermes.

``plugin.register(ctx)`` is what hermes calls through the ``hermes_agent.plugins`` entry point; it
loads our host from hermes' own ``config.yaml``, registers one context engine
(:class:`~hermes_ctx_plugins.hermes.engine.HermesCtxEngine`, selected with
``context.engine: hermes-ctx``) and maps hermes' hooks onto our lifecycle hooks.
"""

ENGINE_NAME = "hermes-ctx"

"""The bridge to hermes-agent 0.19.0 — the only package that imports hermes.

``plugin.register(ctx)`` is what hermes calls through the ``hermes_agent.plugins`` entry point; it
loads our host from hermes' own ``config.yaml``, registers one context engine
(:class:`~hermes_ctx_plugins.hermes.engine.HermesCtxEngine`, selected with
``context.engine: hermes-ctx``) and maps hermes' hooks onto our lifecycle hooks.
"""

from __future__ import annotations

ENGINE_NAME = "hermes-ctx"


def bare_schemas(schemas: object) -> list[dict[str, object]]:
    """Tool schemas in the bare ``{"name", "description", "parameters"}`` shape hermes expects.

    Our providers and strategies return OpenAI's wrapped ``{"type": "function", "function": …}``;
    anything without a name is dropped (hermes would otherwise send a nameless tool, which strict
    providers reject with a 400 on every turn).
    """
    out = []
    for schema in schemas if isinstance(schemas, list) else ():
        if isinstance(schema, dict) and schema.get("type") == "function" and isinstance(schema.get("function"), dict):
            schema = schema["function"]
        if isinstance(schema, dict) and isinstance(schema.get("name"), str) and schema["name"]:
            out.append(schema)
    return out

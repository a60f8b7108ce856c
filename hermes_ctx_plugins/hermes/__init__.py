"""Our adapter to hermes-agent 0.19.0 — the only package that imports hermes.

``plugin.register(ctx)`` is what hermes calls through the ``hermes_agent.plugins`` entry point, at
every start; it builds one :class:`~.runtime.Runtime` holding our host (loaded from hermes' own
``config.yaml`` on first use, or at once when the config changed since it was last found usable:
:mod:`.checked`), the session table and the hook mapping (:class:`~.hooks.HookDispatcher`), then hands
hermes one context engine (:mod:`.deferred`: each agent's copy is a :class:`~.engine.HermesCtxEngine`,
selected with ``context.engine: hermes-ctx``), the hooks and the memory gates (:mod:`.memory_gate`),
and writes the memory shims (:mod:`.shims`). Our memory providers reach
hermes through shims (:mod:`.memory`); services that embed hermes use the Bridge (:mod:`.bridge`,
imported from :mod:`hermes_ctx_plugins.bridge`). No module here keeps state: it lives in the runtime.
"""

from __future__ import annotations

import re

ENGINE_NAME = "hermes-ctx"


def sendable(text: str) -> str:
    """``text`` as hermes can send and store it: a lone surrogate (a user's id or text stored exactly, a query
    echoed back) is U+FFFD. hermes dropped a tool answer holding one: the model got an empty tool message."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return _LONE_SURROGATE.sub("\ufffd", text)
    return text


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


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

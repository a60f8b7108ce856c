"""What the end-to-end tests in real hermes-agent 0.19.0 share: a config, an agent, the home.

hermes reads ``$HERMES_HOME/config.yaml`` (the root conftest gives every test its own home) and
discovers plugins once per process; :func:`configure_hermes` writes the config and makes hermes
discover again, so our ``register()`` runs against it.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from hermes_ctx_plugins.testing import StubOpenAIServer

MODEL = "stub-model"


def hermes_home() -> Path:
    return Path(os.environ["HERMES_HOME"])


def configure_hermes(stub: StubOpenAIServer, extra: str = "", *, engine: bool = True, window: int = 128_000) -> Path:
    """Point hermes at ``stub`` (a model of ``window`` tokens), enable our plugin (and engine), add ``extra``
    YAML, rediscover."""
    from hermes_cli import plugins as hermes_plugins

    home = hermes_home()
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.yaml").write_text(
        f"model: {{default: {MODEL}, provider: custom, base_url: {stub.base_url}, context_length: {window}}}\n"
        "plugins: {enabled: [hermes-ctx]}\n"
        + ("context: {engine: hermes-ctx}\n" if engine else "")
        + "agent: {environment_probe: false}\n" + extra, encoding="utf-8")
    hermes_plugins.discover_plugins(force=True)
    return home


def new_agent(stub: StubOpenAIServer, *, toolsets: list[str] | None = None, **kwargs: Any) -> Any:
    """A headless hermes agent talking to ``stub`` (no context files, the given toolsets only)."""
    import run_agent

    return run_agent.AIAgent(base_url=stub.base_url, api_key="k", provider="custom", model=MODEL,
                             quiet_mode=True, skip_context_files=True, enabled_toolsets=toolsets or [], **kwargs)


def exact_prompt_tokens(body: dict[str, Any]) -> int:
    """``usage.prompt_tokens`` as an OpenAI provider counts it (o200k over the messages' text, their tool calls
    and the tool schemas), not chars / 4 as the stub does by default."""
    from hermes_ctx_plugins.tokens import get_counter

    counter = get_counter("gpt-4o")
    total = 3 + (counter.count_text(json.dumps(body["tools"])) if body.get("tools") else 0)
    for message in body.get("messages") or []:
        total += 4 + counter.count_text(str(message.get("content") or ""))
        for call in message.get("tool_calls") or []:
            total += 6 + counter.count_text(json.dumps(call.get("function", {})))
    return total

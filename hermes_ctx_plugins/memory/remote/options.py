"""The options every remote memory provider has (``ctx_plugins.options.<name>``); each provider's
own options class extends :class:`RemoteOptions`."""

from __future__ import annotations

from dataclasses import dataclass

from ...options import option

RECALL_MODES = ("hybrid", "context", "tools")


@dataclass(frozen=True)
class RemoteOptions:
    """Options every remote provider has (``ctx_plugins.options.<name>``)."""

    #: seconds one HTTP request may take
    timeout: float = option(10.0, gt=0)
    #: the longest a turn waits for recall, in seconds (0: never wait; recall then only via tools)
    prefetch_wait: float = option(3.0, ge=0)
    #: the longest a tool call waits for the service, in seconds
    tool_wait: float = option(15.0, gt=0)
    #: token budget of the recalled memory added to a turn
    recall_tokens: int = option(800, ge=0)
    #: ``hybrid`` (recall each turn and tools), ``context`` (recall only) or ``tools`` (tools only)
    recall_mode: str = option("hybrid", choices=RECALL_MODES)
    #: consecutive failures after which calls stop for ``cooldown_seconds``
    failure_threshold: int = option(5, ge=1)
    cooldown_seconds: float = option(120.0, ge=0)
    #: writes kept while the service is unreachable; beyond it the oldest are dropped (and reported)
    queue_limit: int = option(1000, ge=1)
    #: the longest a Retry-After from the service is honoured, in seconds
    retry_after_cap: float = option(10.0, ge=0)
    #: how long shutdown keeps delivering queued writes before spooling the rest to disk
    flush_timeout: float = option(2.0, ge=0)
    #: single-user setups only: store every session of the top-level namespace under this one id
    #: (verbatim, whoever the session's user is); in a named namespace every session is this user
    #: of that namespace. Empty: each session's own user
    user_id: str = ""
    #: the id the anonymous user of the top-level namespace (hermes' CLI) is stored under, verbatim
    #: (empty: ``anon``); anonymous users of named namespaces get their namespace's own id
    default_user_id: str = "hermes-user"
    #: also send tool results (redacted, cut to ``tool_result_chars``) with each turn
    include_tool_results: bool = False
    tool_result_chars: int = option(2000, ge=0, le=100_000)
    #: the longest user message or assistant reply of a turn that is sent: a longer one is sent cut,
    #: ending with a marker that says how much was left out
    max_turn_chars: int = option(16_000, ge=200, le=1_000_000)
    #: the longest text a tool stores (a fact, a conclusion, a profile line), cut and marked the same way
    max_fact_chars: int = option(4_000, ge=200, le=65_535)
    #: the longest search query or question sent (the turn's message for recall, the tools' queries),
    #: cut at a word without a marker
    max_query_chars: int = option(4_000, ge=50, le=32_000)

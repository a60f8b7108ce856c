"""Hook specifications for hermes-ctx-plugins.

Two families, never mixed:

* **registration** hooks run once, when the host loads: a plugin hands the host its compressor
  strategies and memory providers (built-ins use the very same hooks);
* **lifecycle** hooks run during a conversation. The host calls every implementation of a
  lifecycle hook even when one of them raises: the failure is logged with the plugin's name and
  counted, and a plugin that keeps failing is switched off for a cool-down (see ``Host.plugins()``).

Implement any of these in a module or class decorated with :data:`hookimpl` and expose it through
the ``hermes_ctx_plugins`` entry-point group.

**Installed is not on.** An installed (entry-point) plugin's registrations always run, so its
strategies and providers can be selected by name; its lifecycle hooks run only once the plugin is
opted in:

* it is listed in ``ctx_plugins.plugins`` (``plugins: [acme]``; a deployment's list adds to it), or
* one of its strategies or providers is in use: the selected compressor, a provider in
  ``ctx_plugins.memory.providers``, the provider hermes' ``memory.provider`` names (from when hermes
  starts it), a pipeline step (from when the pipeline builds its steps, at its first compaction).
  Choosing a plugin's code by name opts in the whole plugin, because its hooks often feed that very
  strategy or provider.

The built-in plugins and plugin objects handed to the host (``Host.add_plugin``,
``load_host(plugins=...)``) always run. ``ctx_plugins.disabled`` still wins: a disabled plugin is
never imported. ``hermes-ctx plugins`` shows ``hooks off: list it in ctx_plugins.plugins to run them``
for an installed plugin whose hooks wait. **Migration**: a deployment that relied on an installed
plugin's ``pre_request`` (or any lifecycle hook) running merely because it was installed adds the
plugin's entry-point name to ``ctx_plugins.plugins``.

What the host tells a registered strategy or provider goes through methods of its base class, each
with a working default, which the host calls on every instance (never "if it has the attribute"):

* ``CompressorStrategy.attach(resolve_strategy=...)``: right after the host builds the strategy; a
  strategy made of others (``pipeline``) keeps the resolver to build its steps by name;
* ``CompressorStrategy.reports_removals``: whether the strategy's results say what it removed and
  where its summary is (``CompressionResult.removed_at`` / ``summary_at``); the host then checks the
  report instead of copying the conversation before each compaction for the archive (a subclass that
  overrides ``compress`` must say it again: a base class vouches only for its own code);
* ``MemoryProvider.attach(status_callback=...)``: right after the host builds a provider to use;
  where the provider reports what the user should see (an outage, a recovery).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import pluggy

if TYPE_CHECKING:
    from .compression.base import CompressorStrategy
    from .events import Request, Response, SessionInfo, Turn
    from .memory.base import MemoryProvider

#: The project name: the pluggy marker name and the entry-point group are both this string.
PROJECT_NAME = "hermes_ctx_plugins"

hookspec = pluggy.HookspecMarker(PROJECT_NAME)
hookimpl = pluggy.HookimplMarker(PROJECT_NAME)

#: The lifecycle hooks (the ones the host isolates from each other's failures, and the ones an
#: installed plugin must be opted in for).
LIFECYCLE_HOOKS = ("session_start", "pre_request", "post_response", "turn_finalized")


@hookspec
def register_compressors(register: Callable[[type[CompressorStrategy]], None]) -> None:
    """Called once at load time so a plugin can register its compressor strategies.

    Call ``register(StrategyClass)`` for each :class:`~hermes_ctx_plugins.CompressorStrategy`
    subclass; the class's ``name`` is what users put in ``ctx_plugins.compressor``.

    All implementations are called; return values are ignored.

    :param register: registers one strategy class; raises ``DuplicatePluginError`` when another
        plugin already registered the same name.
    """


@hookspec
def register_memory_providers(register: Callable[[type[MemoryProvider]], None]) -> None:
    """Called once at load time so a plugin can register its memory providers.

    Call ``register(ProviderClass)`` for each :class:`~hermes_ctx_plugins.MemoryProvider`
    subclass; the class's ``name`` is what users list in ``ctx_plugins.memory.providers``.

    All implementations are called; return values are ignored.

    :param register: registers one provider class; raises ``DuplicatePluginError`` when another
        plugin already registered the same name.
    """


@hookspec
def session_start(session: SessionInfo) -> None:
    """Called when a conversation starts, or a new session replaces the current one.

    All implementations are called; return values are ignored.

    :param session: who and where the conversation is.
    """


@hookspec
def pre_request(request: Request) -> str | None:
    """Called before each model request is sent, with the messages about to go out.

    Return text to add to the request's context (or call ``request.add_context``); the host
    appends the contributions to the outgoing user message, never to the system prompt.

    All implementations are called; the non-empty results are collected in call order.

    :param request: the outgoing request: messages (copies: a :class:`~hermes_ctx_plugins.events.MessageView`;
        changing them changes nothing that is sent), model, token estimate, turn number.
    :returns: context text to contribute, or ``None``.
    """


@hookspec
def post_response(response: Response) -> None:
    """Called after each model response arrives, with the provider's exact token usage.

    All implementations are called; return values are ignored.

    :param response: the usage tokens and the assistant message of one API call.
    """


@hookspec
def turn_finalized(turn: Turn) -> None:
    """Called once a turn is complete and the answer has been delivered to the user.

    Runs off the user's critical path where the host allows it; keep it quick anyway.

    All implementations are called; return values are ignored.

    :param turn: the user and assistant text, the tool calls, the session and the turn number.
    """

"""The memory fan-out: which providers are active, and telling each of them, one at a time.

Every call goes through the host's :class:`~hermes_ctx_plugins.isolation.FaultIsolator`, so a provider
that raises is logged and counted, and never stops the others or the user's turn. At most one external
provider is active: the one-external-provider rule is enforced here, with an error naming both.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable, Collection, Sequence
from pathlib import Path
from typing import Any

from ..archive.archiver import Archiver
from ..config import Config, hermes_home
from ..errors import ConfigError, PluginError, PluginLoadError, ProviderLimitError
from ..events import Forgotten, Message, SessionInfo
from ..isolation import FaultIsolator, party_of
from ..memory.base import MemoryProvider
from ..memory.local.options import NAME as LOCAL
from ..registry import Registration, Registry
from ..storage import open_archive
from . import MAX_RECALL_CHARS, UNBOUNDED_METHODS, bounded_text, foreign_code, owner_key, read_only

log = logging.getLogger("hermes_ctx_plugins")


class MemoryFanOut:
    """The host's active memory providers."""

    # what this part uses of the rest of the host
    config: Config
    isolator: FaultIsolator
    registry: Registry
    archive: Archiver | None
    memory_providers: list[MemoryProvider]
    _instantiate: Callable[[Registration], Any]
    _is_enabled: Callable[[Registration], bool]
    _options: Callable[[Registration], Any]
    scoped: Callable[[SessionInfo], SessionInfo]

    def activate_provider(self, name: str) -> MemoryProvider:
        """Make the memory provider ``name`` active (no-op if it already is).

        :raises UnknownPluginError: no such provider. :raises ProviderLimitError: it is external
            and another external provider is already active.
        """
        for existing in self.memory_providers:
            if existing.name == name:
                return existing
        entry = self.registry.get("memory", name)
        if not self._is_enabled(entry):
            raise ConfigError(f"memory provider {name!r} is disabled", path="ctx_plugins.disabled",
                              value=name, expected="a provider that is not disabled")
        if entry.external:
            active = [p.name for p in self.memory_providers if p.external]
            if active:
                where = (f"ctx_plugins.deployments.{self.config.deployment}.memory.providers"
                         if self.config.deployment else "ctx_plugins.memory.providers")
                line = self.config.line_of("ctx_plugins.memory.providers")  # (the deployment's, when it has one)
                if line is not None:  # a config file: its line, as every config error says
                    where = f"{where}, {self.config.source}:{line}"
                raise ProviderLimitError([*active, name], where=where)
        provider: MemoryProvider = self._instantiate(entry)
        self.memory_providers.append(provider)
        return provider

    def provider_instance(self, name: str) -> MemoryProvider:
        """The active provider ``name``, else a detached instance of it — not activated, not counted
        against the one-external limit — for questions such as its availability (``doctor``,
        hermes' provider listing). Constructing a provider opens nothing, so dropping it is free.

        :raises UnknownPluginError: no such provider. :raises ConfigError: its options are invalid.
        """
        active = next((p for p in self.memory_providers if p.name == name), None)
        if active is not None:
            return active
        entry = self.registry.get("memory", name)
        try:
            provider: MemoryProvider = entry.factory(self._options(entry), hermes_home=hermes_home(),
                                                     config=self.config)
        except ConfigError as exc:  # the provider checking its own options: with the file and line
            raise self.config.locate(exc) from None
        except (PluginError, KeyboardInterrupt):  # KeyboardInterrupt: maybe the user's Ctrl-C
            raise
        except BaseException as exc:  # another plugin's constructor failing (an SDK missing): as _instantiate says it
            raise PluginLoadError(entry.plugin, f"could not create {entry.kind} {entry.name!r}: "
                                                f"{type(exc).__name__}: {exc}") from exc
        return provider

    def deactivate_provider(self, name: str) -> None:
        """Stop using the memory provider ``name`` (shut down, kept registered)."""
        for provider in list(self.memory_providers):
            if provider.name == name:
                self.memory_providers.remove(provider)
                self.isolator.call(owner_key("memory", name), provider.shutdown, default=None, bounded=False)

    def _check_hermes_provider(self) -> None:
        """Agree with hermes' own one-external rule, with the clearer error.

        hermes' ``memory.provider`` is its one external provider. Naming one of ours is how hermes
        drives it; naming another (its bundled mem0, honcho, ...) beside an external provider of
        ours would make two.
        """
        chosen = self.config.memory.provider
        ours = [p.name for p in self.memory_providers if p.external]
        if chosen and ours and chosen not in ours:
            raise ProviderLimitError(
                [ours[0], chosen], where="ctx_plugins.memory.providers and hermes' memory.provider")

    def _each_provider(self, method: str, *args: Any, default: Any = None, exclude: Collection[str] = (),
                       session: SessionInfo | None = None, pass_session: bool = True,
                       **kwargs: Any) -> list[tuple[str, Any]]:
        """``(name, what it returned)`` of calling ``method`` on every active provider, each isolated.

        ``exclude`` names providers another host drives itself (hermes drives the one its
        ``memory.provider`` selects), so they are not told twice. ``session``: whom the calls are made for
        (one user's failures suspend that user's calls only), passed as the keyword ``session`` unless
        ``pass_session`` is false.
        """
        party = None if session is None else party_of(session)
        if session is not None and pass_session:
            kwargs["session"] = session
        return [
            (p.name, self.isolator.call(owner_key("memory", p.name), getattr(p, method),
                                        *(map(read_only, args) if foreign_code(p) else args), default=default,
                                        bounded=method not in UNBOUNDED_METHODS, party=party, **kwargs))
            for p in list(self.memory_providers) if p.name not in exclude
        ]

    def prefetch(self, query: str, *, session: SessionInfo, exclude: Collection[str] = ()) -> str:
        """What the active memory providers recall for ``query``, joined."""
        session = self.scoped(session)
        providers = {p.name: p for p in self.memory_providers}
        blocks = [bounded_text(value, owner=owner_key("memory", name), foreign=foreign_code(providers.get(name)),
                               fail=functools.partial(self.isolator.record_failure, party=party_of(session)),
                               what="prefetch", limit=MAX_RECALL_CHARS)
                  for name, value in self._each_provider("prefetch", query, default="", session=session,
                                                         exclude=exclude)]
        return "\n\n".join(text.strip() for text in blocks if text.strip())

    def session_end(self, session: SessionInfo, messages: Sequence[Message], *,
                    exclude: Collection[str] = ()) -> None:
        """The conversation really ended (not just a turn)."""
        session = self.scoped(session)
        self._each_provider("on_session_end", session, messages, exclude=exclude, session=session, pass_session=False)

    def forget_user(self, user_id: str, *, every_namespace: bool = False) -> list[Forgotten]:
        """Remove ``user_id`` (compared exactly; ``""`` is the anonymous user) from every store this
        host owns: each active memory provider's (queued and spooled writes included; the memory
        services are asked to delete theirs), the one hermes' ``memory.provider`` names when it is
        ours (inside hermes that is how an external provider runs, so it holds the user's memories
        even where ``ctx_plugins.memory.providers`` does not list it), and the archive.

        :param every_namespace: every deployment's memories, not only this host's namespace.
        :returns: one :class:`Forgotten` per store, in order; a store that could not be cleared
            carries an ``error`` (it never raises for one store).
        """
        namespaces = None if every_namespace else [self.config.memory_namespace]
        report: list[Forgotten] = []
        stores: list[tuple[str, Callable[..., list[Forgotten]]]] = [
            (p.name, p.forget_user) for p in self.memory_providers]
        hermes_choice = self.config.memory.provider
        if hermes_choice and hermes_choice not in {p.name for p in self.memory_providers} and any(
                r.kind == "memory" and r.name == hermes_choice for r in self.registry):
            stores.append((hermes_choice, functools.partial(self._forget_detached, hermes_choice)))
        # ctx-local's store outlives its choice (a switch to another provider, a store on a server hermes' config
        # does not name): what it holds is ours alone, and it says "nothing stored yet" where there is none (a
        # review: the user's memories stayed after forget --user)
        if LOCAL not in {name for name, _ in stores} and any(
                r.kind == "memory" and r.name == LOCAL for r in self.registry):
            stores.append((LOCAL, functools.partial(self._forget_detached, LOCAL)))
        # a memory service's provider the deployment no longer runs: its unsent writes wait in its queue folder until
        # it runs again, and are the user's still (a review: a forget scoped to that deployment left them)
        # (asked in its own turn below: a queue file that cannot be read fails that provider's row alone -- asked
        # here, it stopped the whole forget with a traceback and nothing anywhere was forgotten, a review)
        for entry in self.registry:
            waiting = getattr(entry.factory, "writes_waiting", None) if entry.kind == "memory" else None
            if waiting is not None and entry.name not in {name for name, _ in stores}:
                stores.append((entry.name, functools.partial(self._forget_left_queued, entry.name, waiting)))
        # a disabled archive may still hold what it archived while it was on
        archive = self.archive.store if self.archive is not None else open_archive(self.config)
        stores.append(("archive", archive.forget_user))
        for name, forget in stores:
            try:
                report.extend(forget(user_id, namespaces=namespaces))
            except Exception as exc:  # one store's failure must not stop the others
                log.exception("%s could not forget a user", name)
                report.append(Forgotten(store=name, removed=None, error=f"{type(exc).__name__}: {exc}"))
        return report

    def _forget_left_queued(self, name: str, waiting: Callable[[Path], bool], user_id: str, *,
                            namespaces: Collection[str] | None) -> list[Forgotten]:
        """``user_id``'s writes provider ``name`` (not run here) left queued on this machine, when its class's
        ``waiting`` (``writes_waiting``, read from the files) says some wait -- a provider that cannot be built any
        more (options it refuses, left from when it ran) fails a forget only then, a review -- taken by a detached
        instance's ``forget_queued`` (nothing asked of the service)."""
        try:
            if not waiting(hermes_home()):
                return []
        except OSError as exc:  # the store's row says it, naming where (the error may name no file)
            raise OSError(exc.errno, f"cannot read what {name} left queued under "
                                     f"{hermes_home() / 'ctx_plugins' / name}: {exc.strerror or exc}") from exc
        provider = self.provider_instance(name)
        try:
            forget = getattr(provider, "forget_queued", None)
            return list(forget(user_id, namespaces=namespaces)) if forget is not None else []
        finally:
            self.isolator.call(owner_key("memory", name), provider.shutdown, default=None, resets=False,
                               bounded=False)

    def _forget_detached(self, name: str, user_id: str, *, namespaces: Collection[str] | None) -> list[Forgotten]:
        """Forget ``user_id`` in provider ``name``'s store through a detached instance, closed after."""
        provider = self.provider_instance(name)
        try:
            return list(provider.forget_user(user_id, namespaces=namespaces))
        finally:
            self.isolator.call(owner_key("memory", name), provider.shutdown, default=None, resets=False,
                               bounded=False)

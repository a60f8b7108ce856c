"""The exceptions hermes-ctx-plugins raises: every one of them, and where it lives.

Every error derives from :class:`HermesCtxError` (``except HermesCtxError`` catches anything the
package raises on purpose), and from the builtin a caller would catch where there is one (in
parentheses). It carries structured attributes besides its message, and the message names the bad
value and what would have been valid. A family defined outside this module names its module in
brackets (relative to ``hermes_ctx_plugins``); its members live there too. ``tests/test_errors.py``
keeps this drawing true::

    HermesCtxError
    ├── ConfigError (ValueError)                    a config value is wrong; .path .value .expected .line
    ├── ProviderLimitError                          a second external memory provider; .providers
    ├── EmbedderFailure (RuntimeError)              an embedder function exited (sys.exit()): recall goes on by words
    ├── InvalidSession (TypeError)                  a SessionInfo field that is no text (an id may be an int); .field
    ├── PluginError                                 something about a plugin
    │   ├── UnknownPluginError (KeyError)           no strategy / provider of that name; .name .kind .available
    │   ├── DuplicatePluginError                    two plugins registered one name; .name .kind .plugins
    │   ├── PluginLoadError                         a plugin failed to import, register or validate; .plugin
    │   ├── PluginTimeout (TimeoutError)            a plugin's call passed its time limit: the turn went on
    │   └── PluginRaisedBaseException               a plugin's code raised a BaseException (not SystemExit)
    ├── SummaryError [chat]                         the summary or review model failed; .kind .retry_on_main_model
    │   ├── SummaryModelUnavailable                 404 / 503: the main model is tried next
    │   ├── SummaryTimeout                          no answer in time: the main model is tried next
    │   ├── SummaryRateLimited                      429; .retry_after
    │   ├── SummaryRequestRejected                  another 4xx
    │   ├── SummaryBadResponse                      an answer that is no completion
    │   ├── SummaryAuthError                        401 / 403: the compaction aborts
    │   └── SummaryNetworkError                     the network is down: the compaction aborts
    ├── FileUnavailable (OSError) [storage.files]   a file or folder cannot be read, written or locked; .path .doing
    │   └── CopyRoomError [storage.sqlite.opening]  another user's store: no room for the copy a read needs
    ├── LocalStoreError [storage.base]              ctx-local's store cannot be used now; .path .reason
    ├── ArchiveError [storage.base]                 the archive cannot be used
    ├── UnstorableEntry (ValueError) [storage.spool]  a compaction the archive's store can never take
    ├── QueueClosedError (RuntimeError) [storage.queue]  the write queue is closed: nothing more goes in
    ├── MemoryStoreError [memory.file.store]        a MEMORY.md / USER.md write was refused; nothing was written
    │   ├── InvalidOp (ValueError)                  a malformed operation
    │   ├── UnknownTarget (KeyError)                neither memory nor user; .target
    │   ├── LimitExceeded                           over the file's character limit; .used .limit .needed
    │   ├── DuplicateEntry                          already an entry; .entry
    │   ├── NoMatch (LookupError)                   no entry contains the text; .match
    │   ├── AmbiguousMatch (LookupError)            several entries contain it; .match .matches
    │   ├── UnsafeEntry                             the threat scan refused it; .findings
    │   ├── TooManyPending                          so many writes await approval that no more is staged; .count
    │   └── StoreUnavailable (FileUnavailable)      the memory folder or file cannot be used
    ├── SkillError (ValueError) [memory.file.skills]  a skill write was refused
    ├── ArgumentError (ValueError) [memory.local.arguments]  a ctx-local tool argument the model got wrong
    ├── ToolError (ValueError) [memory.remote.text]  a remote provider refused a tool call before any request
    ├── ServiceUnavailable (RuntimeError) [memory.remote.queue]  the circuit breaker is open: no request made
    ├── SessionInUseError (ValueError) [hermes.runtime]  a session id already bound to another owner
    ├── AnonymousAgentError (ValueError) [hermes.bridge]  no user id on a deployment that keeps memories
    └── NetworkBlocked (RuntimeError) [testing.network]  a test reached beyond loopback

    TokenEstimateWarning (UserWarning) [tokens]     a warning, not an error: counts are estimated

Exceptions whose name starts with an underscore are private control flow (``summarize._Abort``): they
never leave the module that raises them.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from typing import Any


def did_you_mean(value: object, choices: Iterable[str]) -> str:
    """Return `` (did you mean 'x'?)`` for the closest choice, or an empty string."""
    if not isinstance(value, str):
        return ""
    close = difflib.get_close_matches(value, list(choices), n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


def _listing(names: Iterable[str]) -> str:
    names = sorted(names)
    return ", ".join(names) if names else "(none registered)"


class HermesCtxError(Exception):
    """Base class of every error raised by hermes-ctx-plugins."""


class ConfigError(HermesCtxError, ValueError):
    """A configuration value is malformed or invalid.

    :ivar path: dotted key path, e.g. ``ctx_plugins.memory.providers[1]`` (empty for the whole file)
    :ivar value: the offending value as read
    :ivar expected: what would have been valid
    :ivar source: the file (or ``<dict>``) the config came from
    :ivar line: 1-based line in ``source`` when known
    """

    def __init__(
        self,
        message: str,
        *,
        path: str = "",
        value: Any = None,
        expected: str = "",
        source: str = "",
        line: int | None = None,
    ) -> None:
        self.path = path
        self.value = value
        self.expected = expected
        self.source = source
        self.line = line
        self.message = message
        super().__init__(self._render())

    def _render(self) -> str:
        where = self.source
        if where and self.line is not None:
            where = f"{where}:{self.line}"
        prefix = ": ".join(part for part in (where, self.path) if part)
        return f"{prefix}: {self.message}" if prefix else self.message

    def located(self, *, source: str, line: int | None) -> ConfigError:
        """The same error, annotated with where it was found."""
        return ConfigError(
            self.message,
            path=self.path,
            value=self.value,
            expected=self.expected,
            source=source,
            line=line if line is not None else self.line,
        )


class ProviderLimitError(HermesCtxError):
    """More than one external memory provider was configured or activated.

    :ivar providers: the external providers involved, the one already active first
    """

    def __init__(self, providers: Iterable[str], *, where: str = "") -> None:
        self.providers = tuple(providers)
        names = " and ".join(repr(p) for p in self.providers)
        location = f" ({where})" if where else ""
        super().__init__(
            f"only one external memory provider may be active, got {names}{location}; "
            "keep one of them (the built-in 'file' provider is always allowed besides it)"
        )


class EmbedderFailure(HermesCtxError, RuntimeError):
    """An embedder function ended with an exit or interrupt of its own (a library calling ``sys.exit()``):
    caught where it runs, reported as a failure to embed (recall goes on by words), never let out to end
    hermes' turn or the embedding thread."""


class InvalidSession(HermesCtxError, TypeError):
    """A :class:`~hermes_ctx_plugins.SessionInfo` field given a value that is no text: ``user_id=None``, bytes, a
    float (an integer id is taken as its text). Raised where the session is made, before any provider sees it.

    :ivar field: the field's name
    :ivar value: what it was given
    """

    def __init__(self, message: str, *, field: str, value: object) -> None:
        super().__init__(message)
        self.field = field
        self.value = value

    def __reduce__(self) -> tuple[Any, ...]:  # keyword-only arguments: pickled by hand (a process pool's error)
        return _invalid_session, (str(self), self.field, self.value)


def _invalid_session(message: str, field: str, value: object) -> InvalidSession:
    return InvalidSession(message, field=field, value=value)


class PluginError(HermesCtxError):
    """Something is wrong with a plugin, a strategy or a provider."""


class UnknownPluginError(PluginError, KeyError):
    """No compressor strategy or memory provider is registered under that name.

    :ivar name: the name asked for
    :ivar kind: ``"compressor"`` or ``"memory"``
    :ivar available: the names that are registered for that kind
    """

    def __init__(self, name: str, kind: str, available: Iterable[str], *, where: str = "") -> None:
        self.name = name
        self.kind = kind
        self.available = tuple(sorted(available))
        label = "compressor strategy" if kind == "compressor" else "memory provider"
        location = f" ({where})" if where else ""
        self.message = (
            f"unknown {label} {name!r}{location}{did_you_mean(name, self.available)}; "
            f"available: {_listing(self.available)}"
        )
        super().__init__(self.message)

    def __str__(self) -> str:  # KeyError would repr() the message
        return self.message


class DuplicatePluginError(PluginError):
    """Two plugins registered a strategy or provider under the same name.

    :ivar name: the contested name
    :ivar kind: ``"compressor"`` or ``"memory"``
    :ivar plugins: the plugin that registered it first, then the one that tried again
    """

    def __init__(self, name: str, kind: str, first: str, second: str) -> None:
        self.name = name
        self.kind = kind
        self.plugins = (first, second)
        label = "compressor strategy" if kind == "compressor" else "memory provider"
        what = "strategy" if kind == "compressor" else "provider"
        super().__init__(
            f"{label} {name!r} is registered twice by plugin {first!r}: register each {what} once"
            if first == second else
            f"{label} {name!r} is registered by both plugin {first!r} and plugin {second!r}; "
            f"uninstall or disable one of them (ctx_plugins.disabled) or rename its {what}"
        )


class PluginLoadError(PluginError):
    """A plugin could not be imported, or registered something invalid.

    :ivar plugin: the plugin (entry-point or module) name
    """

    def __init__(self, plugin: str, message: str) -> None:
        self.plugin = plugin
        super().__init__(f"plugin {plugin!r}: {message}")


class PluginTimeout(PluginError, TimeoutError):
    """A call into a strategy, provider or plugin that is not built in took longer than its limit
    (``ctx_plugins.call_timeout_seconds`` / ``compress_timeout_seconds``), or was not made because an
    earlier call past its limit still runs. The host counts it as that plugin's failure and goes on
    without it (see :mod:`hermes_ctx_plugins.isolation`)."""


class PluginRaisedBaseException(PluginError):
    """Code of a plugin that is not built in raised a ``BaseException`` that is no ``Exception``
    (``asyncio.CancelledError``, ``GeneratorExit``, a library's own, or ``KeyboardInterrupt`` raised on a
    worker thread, where no Ctrl-C is ever delivered): a failure of that plugin like any other, never the
    end of the user's turn or of hermes. ``SystemExit`` is counted as it is. A ``KeyboardInterrupt`` on
    the thread that loads plugins may be the user's Ctrl-C and is left to end the process.

    :ivar original: the exception the plugin raised
    """

    def __init__(self, original: BaseException) -> None:
        self.original = original
        super().__init__(f"{type(original).__name__}: {original}")

    @staticmethod
    def of(exc: BaseException) -> BaseException:
        """``exc`` when it is an ``Exception`` or a ``SystemExit`` (counted as they are), else ``exc`` wrapped."""
        return exc if isinstance(exc, (Exception, SystemExit)) else PluginRaisedBaseException(exc)

"""Text as PostgreSQL keeps it: every string, id or text, goes in through :func:`stored` and comes
back through :func:`unstored`, exactly as it was written.

PostgreSQL's ``text`` takes neither NUL nor a lone surrogate; :func:`~hermes_ctx_plugins.scope.to_stored`
(what every backend stores) escapes the surrogates and doubles each backslash, and here each NUL
becomes ``\\u0000`` too, which :func:`~hermes_ctx_plugins.scope.from_stored` reads back. Equal
strings stay equal and different ones different, so comparing stored forms is comparing ids.
"""

from __future__ import annotations

from ...scope import from_stored, to_stored


def stored(value: str) -> str:
    # to_stored doubles every backslash whenever the value has one, so a "\u0000" it returns is
    # always one this function wrote
    return to_stored(value).replace("\x00", "\\u0000")


def unstored(value: str) -> str:
    return from_stored(value)

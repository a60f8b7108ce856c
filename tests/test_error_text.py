"""What an error's text shows (``isolation.error_text``): status events, status.json, the log and a memory tool's
answer to the model all read it. A service's error page echoing a credential must not show it in any form."""

from __future__ import annotations

import base64

import pytest

from hermes_ctx_plugins.isolation import ERROR_TEXT_CHARS, error_text, known_secret

KEY = "sk-live-Q7xR2mVb9ZpL4wNc-8TfY"
TOKEN = "ghp_R8nZq2Lk9XwT4vB7mC1sD6fH3jK5pQ0aY2uE"


def shows_part_of(secret: str, text: str, run: int = 10) -> bool:
    return any(secret[i:i + run] in text for i in range(len(secret) - run + 1))


@pytest.mark.parametrize("echoed", [
    KEY.replace("-", "\\u002d"), KEY.replace("-", "\\u002D", 1), "".join(f"\\u{ord(c):04x}" for c in KEY),
    base64.b64encode(KEY.encode()).decode(), base64.b64encode(KEY.encode()).decode().rstrip("="),
    base64.urlsafe_b64encode(KEY.encode()).decode(),
])
def test_a_configured_key_echoed_escaped_or_in_base64_is_not_shown(echoed: str) -> None:
    """A serializer writing '-' as \\u002d, or a page quoting the key's base64, showed it (a red-team pass)."""
    known_secret(KEY)
    shown, whole = error_text(RuntimeError(f'{{"detail": "no project for credential {echoed}"}}'))
    assert not shows_part_of(KEY, shown) and echoed not in shown and "[REDACTED:api-key]" in shown and not whole


@pytest.mark.parametrize("before", range(ERROR_TEXT_CHARS * 2 - 45, ERROR_TEXT_CHARS * 2 + 5))
def test_a_token_the_first_cut_goes_through_is_not_half_shown(before: int) -> None:
    """Only the first 1,000 characters are read: a token the cut went through was too short to be known as one,
    and in a page of white space, 30 of its 40 characters were shown (a red-team pass)."""
    padding = " " * (before - len("RuntimeError: <html>"))
    shown, _ = error_text(RuntimeError("<html>" + padding + TOKEN + " </html>"))
    assert not shows_part_of(TOKEN, shown), shown


def test_a_short_message_is_shown_whole() -> None:
    assert error_text(RuntimeError("the service answered 503")) == ("RuntimeError: the service answered 503", True)

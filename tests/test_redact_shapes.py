"""Secrets in the shapes hermes' tools print them, and the text around them kept: each case as raw text and as the
JSON answer hermes' terminal tool gives (``{"output": ..., "exit_code": 0}``), which must stay valid JSON."""

from __future__ import annotations

import json

import pytest

from hermes_ctx_plugins.safety import redact_secrets, scan

KEY_LINES = ["b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAABlwAAAAdzc2gtcn",
             "NhAAAAAwEAAQAAAYEAx3kQ9vZt2Lr8pWb7Yc1NfJ5sH0gUeTqA4mKiR6oXjVdC2yBnq8Pz"]


def both_forms(text: str) -> list[tuple[str, str]]:
    """``text`` redacted raw and as a terminal tool's JSON answer (decoded again: it must still be JSON)."""
    answer = redact_secrets(json.dumps({"output": text, "exit_code": 0}))
    decoded = json.loads(answer)  # raises if the redaction broke the answer
    assert decoded["exit_code"] == 0
    return [("raw", redact_secrets(text)), ("json", decoded["output"])]


@pytest.mark.parametrize("text", [
    'if not pem.startswith("-----BEGIN RSA PRIVATE KEY-----"):\n    raise ValueError("not an RSA key")\nreturn pem',
    "Paste the key (it starts with -----BEGIN OPENSSH PRIVATE KEY-----).\nThen click Save and restart the agent.",
    "src/keys.py:12:    HEADER = '-----BEGIN EC PRIVATE KEY-----'\nsrc/keys.py:13:    FOOTER = None\n",
    "-----BEGIN RSA PRIVATE KEY-----\nexpected, got an empty file\nretrying in 5 s",
])
def test_a_begin_line_without_a_key_body_is_kept_with_what_follows(text: str) -> None:
    """Code testing for a key's BEGIN line, docs naming it, a log quoting it: no key, nothing redacted. The BEGIN
    line alone used to be read as a key cut short and its redaction took the rest of the text, the JSON answer's
    closing quote and exit code with it (a red-team pass: 1,200 of 1,200 such answers broken)."""
    for form, redacted in both_forms(text):
        assert redacted == text, form


@pytest.mark.parametrize("cut", [
    "\n",  # `head -3 ~/.ssh/id_rsa`
    "\n\n... [OUTPUT TRUNCATED - 48211 chars omitted out of 60000 total] ...\n\n",  # hermes' terminal tool
])
def test_a_key_cut_short_loses_its_body_and_keeps_the_next_commands_output(cut: str) -> None:
    text = ("$ head -3 ~/.ssh/id_rsa\n-----BEGIN OPENSSH PRIVATE KEY-----\n" + "\n".join(KEY_LINES) + cut
            + "npm notice created a lockfile\nadded 312 packages in 4s\nDone")
    for form, redacted in both_forms(text):
        assert not any(line[:20] in redacted for line in KEY_LINES), form
        assert redacted.startswith("$ head -3 ~/.ssh/id_rsa\n[REDACTED:private-key]"), form
        assert redacted.endswith("npm notice created a lockfile\nadded 312 packages in 4s\nDone"), form


def test_a_whole_key_still_goes_and_what_follows_its_end_line_stays() -> None:
    text = ("-----BEGIN RSA PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\nDEK-Info: AES-128-CBC,2E65A1B4C3D2E1F0\n\n"
            + "\n".join(KEY_LINES) + "\n-----END RSA PRIVATE KEY-----\nkey written to id_rsa")
    for form, redacted in both_forms(text):
        assert redacted == "[REDACTED:private-key]\nkey written to id_rsa", form
    assert "secret" in {f.kind for f in scan(text, learned=False)}
    assert "secret" not in {f.kind for f in scan("the file starts with -----BEGIN RSA PRIVATE KEY-----, then "
                                                 "base64 lines", learned=False)}

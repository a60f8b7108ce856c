"""Issue 13 finding 7: the summary request never carries the conversation's secrets.

``auxiliary.compression`` may be a third party's endpoint, so everything ``summarize`` (alone or as a
``pipeline`` step) sends it passes through the project's redactor first, unless
``ctx_plugins.options.summarize.redact_secrets`` is ``false`` (a trusted local model). The static
fallback summary, which stays in the conversation, is redacted the same way. Each "never on the
wire" check is paired with the same run with redaction off, where every planted secret is on the
wire: the planting reaches the summary model, so the check cannot pass vacuously.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hermes_ctx_plugins import load_host
from hermes_ctx_plugins.compression import prompt
from hermes_ctx_plugins.compression.messages import SUMMARY_KEY, text_of
from hermes_ctx_plugins.manager import Host
from hermes_ctx_plugins.safety import redact_secrets
from hermes_ctx_plugins.testing import StubOpenAIServer, make_transcript

SUMMARY = "## Goal\nShip the release.\n## Files\nsrc/release.py"
PEM_BODY = ("MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun\n"
            "VTLw7onLRnrq0/IzW7yWR7QkrmBL7jTKEn5u+qKhbwKfBstIs+bMY2Zkp18gnTxK\n"
            "LxoS2tFczGkPLPgizskuemMghRniWaoLcyehkd3qqGElvW/VDL5AaWTg0nLVkjRo\n")
PEM = f"-----BEGIN RSA PRIVATE KEY-----\n{PEM_BODY}-----END RSA PRIVATE KEY-----"

#: kind -> (where it is planted, the text planted, the part of it that must never leave)
PLANTED: dict[str, tuple[str, str, str]] = {
    "aws-key-id": ("user", "export AWS_ACCESS_KEY_ID=AKIAQ3EGRT5VXPL7WZKM", "AKIAQ3EGRT5VXPL7WZKM"),
    "aws-secret": ("tool", "aws_secret_access_key = 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",
                   "Zq8v3Lk2Jp9Xy4Rb7Tn1Wm6Hd5Fg0Sc2Ae3Uo4Ii"),
    "github-pat": ("assistant", "pushed with ghp_R7d2Kq9XvL4mN8pT3wY6zB1cF5hJ0sA2eG7u",
                   "ghp_R7d2Kq9XvL4mN8pT3wY6zB1cF5hJ0sA2eG7u"),
    "openai-key": ("user", "my key is sk-proj-4fT9qLm2Xv8RkP1sZw7YbN3cJ6hD0gA5eU2iO9tQ",
                   "sk-proj-4fT9qLm2Xv8RkP1sZw7YbN3cJ6hD0gA5eU2iO9tQ"),
    "slack-token": ("tool", "SLACK_BOT_TOKEN=xoxb-2048613579-4096827153-Qw8Er7Ty6Ui5Op4As3Df2Gh1",
                    "xoxb-2048613579-4096827153-Qw8Er7Ty6Ui5Op4As3Df2Gh1"),
    "stripe-key": ("assistant", "use sk_live_51Hq8ZxT4mN9vB2cK7rL3pW6y for the charge test",
                   "sk_live_51Hq8ZxT4mN9vB2cK7rL3pW6y"),
    "jwt": ("user", "the session cookie is eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJ1c2VyLTQyIiwiaWF0IjoxNzAw"
                    "MDAwMDAwfQ.Xk3vQ9pL2mR7tY1wZ5nB8cF4hJ6sD0gA3eU9iO2qT7k",
            "Xk3vQ9pL2mR7tY1wZ5nB8cF4hJ6sD0gA3eU9iO2qT7k"),
    # pasted inside a long log, straddling the point where the summary input cuts each message
    "private-key": ("user-long", PEM, "LxoS2tFczGkPLPgizskuemMghRniWaoLcyehkd3qqGElvW"),
    "url-password": ("tool", "DATABASE_URL=postgres://admin:Hunter2Qz9Secret@db.internal:5432/app",
                     "Hunter2Qz9Secret"),
    "mysql-password": ("arguments", "mysql -h db.internal -u root -pS3cretPassw0rdQ7 shop", "S3cretPassw0rdQ7"),
    "curl-user": ("arguments", "curl -u deploy:Sup3rS3cretPwX4 https://ci.internal/api", "Sup3rS3cretPwX4"),
    "env-line": ("user", "my .env has\nDB_PASSWORD=correcthorse7batterystaple\n", "correcthorse7batterystaple"),
    "bearer": ("assistant", "I called it with Authorization: Bearer 9f8e7d6c5b4a39281706f5e4d3c2b1a0fedcba98",
               "9f8e7d6c5b4a39281706f5e4d3c2b1a0fedcba98"),
    "gcp-key": ("tool", "GOOGLE_API_KEY=AIzaSyD4x9Qm2Lk7Pz3Rt8Vw1Yb6Nc5Hj0Fg2Es",
                "AIzaSyD4x9Qm2Lk7Pz3Rt8Vw1Yb6Nc5Hj0Fg2Es"),
    "anthropic-key": ("user", "ANTHROPIC_API_KEY=sk-ant-api03-Zx9Qw8Er7Ty6Ui5Op4As3Df2Gh1Jk0Lz9Xc8Vb7Nm6Qw5Er4Ty3Ui2"
                              "Op1-AsDfGhAA",
                      "sk-ant-api03-Zx9Qw8Er7Ty6Ui5Op4As3Df2Gh1Jk0Lz9Xc8Vb7Nm6Qw5Er4Ty3Ui2Op1-AsDfGhAA"),
}
#: what the user asks ``/compress`` to focus on and what a memory provider wants kept: also redacted
FOCUS_SECRET = "sk-proj-Fq7Lm2Xv8RkP1sZw7YbN3cJ6hD0gA5eU2iO9tQ4T"
MEMORY_SECRET = "ghp_M3m0ryK9XvL4mN8pT3wY6zB1cF5hJ0sA2eG7"
NEEDLES = {kind: needle for kind, (_, _, needle) in PLANTED.items()} | {
    "focus-topic": FOCUS_SECRET, "memory-context": MEMORY_SECRET}
FILLER = "INFO worker heartbeat ok queue=ingest lag=0ms\n"


def planted_transcript() -> list[dict[str, Any]]:
    """A 30-turn agent transcript with the secrets planted early (in what gets summarised)."""
    messages = make_transcript(5, turns=30, output_lines=30, images=False, multipart=False)
    slots: dict[str, list[int]] = {"user": [], "assistant": [], "tool": [], "arguments": []}
    for i, message in enumerate(messages[5:60], 5):
        if message["role"] == "assistant" and message.get("tool_calls"):
            slots["arguments"].append(i)
        elif message["role"] == "assistant" and message.get("content"):
            slots["assistant"].append(i)
        elif message["role"] in ("user", "tool"):
            slots[message["role"]].append(i)
    slots["user-long"] = slots["user"]
    for where, text, _ in PLANTED.values():
        i = slots[where].pop()
        message = messages[i]
        if where == "arguments":
            call = message["tool_calls"][0]
            arguments = json.dumps({"command": text})
            message = {**message, "tool_calls": [{**call, "function": {**call["function"], "arguments": arguments}}]}
        elif where == "user-long":
            message = {**message, "content": FILLER * 80 + text + "\n" + FILLER * 200}
        elif where == "tool":
            message = {**message, "content": text}  # short: pruning keeps it verbatim
        else:
            message = {**message, "content": f"{text_of(message['content'])}\n{text}"}
        messages[i] = message
    return messages


@pytest.fixture
def main() -> Iterator[StubOpenAIServer]:
    with StubOpenAIServer(model="gpt-4o", responder=lambda request: SUMMARY) as stub:
        yield stub


@pytest.fixture
def aux() -> Iterator[StubOpenAIServer]:
    """The summary model (``auxiliary.compression``): in production, possibly a third party's."""
    with StubOpenAIServer(model="aux-model", responder=lambda request: SUMMARY) as stub:
        yield stub


def host_for(compressor: str, *, redact: bool | None, model: dict[str, Any],
             aux: StubOpenAIServer | None = None) -> Host:
    # the pipeline's budget is set low, so that its summarize step runs after prune
    options: dict[str, Any] = {"pipeline": {"budget_ratio": 0.05}}
    if redact is not None:  # the pipeline's summarize step reads the same options as summarize alone
        options["summarize"] = {"redact_secrets": redact}
    config: dict[str, Any] = {"model": {"default": "gpt-4o", "context_length": 128_000, **model},
                              "ctx_plugins": {"compressor": compressor, "options": options}}
    if aux is not None:
        config["auxiliary"] = {"compression": {"base_url": aux.base_url, "model": "aux-model", "api_key": "aux-key"}}
    return load_host(config)


def wire(*stubs: StubOpenAIServer) -> str:
    """Every request body the stubs recorded, raw and decoded (JSON escapes undone)."""
    texts = []
    for stub in stubs:
        for request in stub.requests:
            texts += [request.raw.decode("utf-8", "replace"), json.dumps(request.body, ensure_ascii=False)]
    return "\n".join(texts)


def compact(host: Host) -> Any:
    result = host.compress(planted_transcript(), force=True, focus_topic=f"the deploy key {FOCUS_SECRET}",
                           memory_context=f"the user's GitHub token is {MEMORY_SECRET}")
    assert result.compressed
    return result


@pytest.mark.parametrize("compressor", ["summarize", "pipeline"])
def test_no_planted_secret_reaches_the_summary_model(compressor: str, main: StubOpenAIServer,
                                                     aux: StubOpenAIServer) -> None:
    host = host_for(compressor, redact=None, model={"base_url": main.base_url}, aux=aux)  # the default
    result = compact(host)
    assert not result.used_fallback and result.summary == SUMMARY
    assert len(aux.chat_requests) == 1 and not main.chat_requests  # the summary model got the request
    sent = wire(aux, main)
    leaked = sorted(kind for kind, needle in NEEDLES.items() if needle in sent)
    assert leaked == [], f"secrets on the wire to the summary model: {leaked}"
    assert sent.count("[REDACTED:") >= len(PLANTED)
    assert "ci.internal/api" in sent and "db.internal" in sent  # only the secrets went, not the context


@pytest.mark.parametrize("compressor", ["summarize", "pipeline"])
def test_with_redaction_off_every_planted_secret_reaches_the_summary_model(
        compressor: str, main: StubOpenAIServer, aux: StubOpenAIServer) -> None:
    """The negative control: the same compaction for a trusted local model sends them all."""
    host = host_for(compressor, redact=False, model={"base_url": main.base_url}, aux=aux)
    compact(host)
    sent = wire(aux)
    missing = sorted(kind for kind, needle in NEEDLES.items() if needle not in sent)
    assert missing == [], f"planted secrets that never reached the summary request: {missing}"


def test_the_static_fallback_summary_is_redacted_too() -> None:
    """No summary model: the summary is built locally, but it stays in the conversation."""
    redacted, verbatim = (compact(host_for("summarize", redact=redact, model={})) for redact in (True, False))
    for result in (redacted, verbatim):
        assert result.used_fallback
        [message] = [m for m in result.messages if m.get(SUMMARY_KEY)]
        assert result.summary and result.summary in text_of(message["content"])
    assert not [kind for kind, needle in NEEDLES.items() if needle in redacted.summary]
    assert "[REDACTED:" in redacted.summary
    # with redaction off the fallback quotes what the user said, secrets included
    assert PLANTED["openai-key"][2] in verbatim.summary and PLANTED["aws-key-id"][2] in verbatim.summary


def test_nothing_under_hermes_home_holds_a_planted_secret(main: StubOpenAIServer, aux: StubOpenAIServer) -> None:
    """After a compaction (the archive on, as by default): every file the package wrote."""
    host = host_for("summarize", redact=None, model={"base_url": main.base_url}, aux=aux)
    result = compact(host)
    host.shutdown()
    files = [p for p in Path(os.environ["HERMES_HOME"]).rglob("*") if p.is_file()]
    assert any(p.name.startswith("ctx_archive.db") for p in files)
    archived = b"".join(p.read_bytes() for p in files)
    assert b"src/" in archived and len(result.removed) > 20  # the originals are there...
    leaked = sorted(kind for kind, needle in NEEDLES.items() if needle.encode() in archived)
    assert leaked == [], f"secrets stored under $HERMES_HOME: {leaked}"  # ...redacted


def test_a_previous_summary_carried_into_the_request_is_redacted(aux: StubOpenAIServer) -> None:
    """hermes' own summary from a resumed session (made by hermes, unredacted) is the previous
    summary of the next request: it goes through the redactor like the turns."""
    secret = PLANTED["stripe-key"][2]
    hermes_summary = {"role": "user", "content": f"[CONTEXT COMPACTION]:\n## Goal\nCharge test with {secret}."}
    messages = make_transcript(6, turns=30, output_lines=30, images=False)
    messages[1:1] = [hermes_summary, {"role": "assistant", "content": "Understood."}]
    for redact, expected in ((None, False), (False, True)):
        host = host_for("summarize", redact=redact, model={}, aux=aux)
        assert host.compress(messages, force=True).compressed
        request = aux.chat_requests[-1]
        assert "<previous-summary>" in request.body["messages"][1]["content"]
        assert (secret in request.raw.decode()) is expected


@pytest.mark.parametrize("where", ["head", "tail"])
def test_redaction_sees_a_secret_whole_where_the_excerpt_cuts_it(where: str) -> None:
    """The summary model reads each long message as its start and its end; a secret straddling
    either cut is still recognised, because each excerpt is redacted with context beyond the cut."""
    pieces = [line for line in PEM.splitlines() if len(line) > 20]
    for shift in range(0, 120, 10):  # the cut moves from the key's first line to its last
        if where == "head":  # the head excerpt (4,000 characters) ends inside the key
            text = "x" * (3_850 + shift) + "\n" + PEM + "\n" + "y" * 9_000
        else:  # the tail excerpt (1,500 characters) starts inside the key
            text = "x" * 9_000 + "\n" + PEM + "\n" + "y" * (1_350 + shift)
        message = {"role": "user", "content": text}
        plain = prompt.serialize([message])
        assert any(piece[:24] in plain for piece in pieces), shift  # the cut did land inside the key
        redacted = prompt.serialize([message], redact=redact_secrets)
        assert not any(piece[:24] in redacted for piece in pieces), shift


@pytest.mark.parametrize("where", ["head", "tail"])
def test_a_secret_cut_at_the_far_end_of_what_redaction_read_never_moves_into_the_excerpt(where: str) -> None:
    """Redaction reads past each cut (8 KB) and a secret there is cut by the end of what it reads, so not recognised;
    a long secret replaced before the cut shortened the text and pulled that one into the excerpt (a red-team pass:
    33 of a GitHub token's 40 characters reached the summary model behind a pasted 11 KB key)."""
    lines = 170 if where == "head" else 135  # ~11 / ~8.8 KB, replaced by ~22 characters: within what is read
    big_key = "\n".join(["-----BEGIN RSA PRIVATE KEY-----", *[PEM_BODY.splitlines()[i % 3] for i in range(lines)],
                         "-----END RSA PRIVATE KEY-----"])
    token = "ghp_R8nZq2Lk9XwT4vB7mC1sD6fH3jK5pQ0aY2uE"
    reach = (4_000 if where == "head" else 1_500) + prompt.REDACT_SLACK
    fill = "lorem ipsum " * 2_000
    leaked = []
    for straddle in range(5, 40, 3):  # the token starts this many characters before the far end of what is read
        if where == "head":
            before = f"my key:\n{big_key}\nand the token "
            text = before + fill[:reach - len(before) - straddle - 1] + " " + token + " " + "after " * 3_000
        else:
            after = f" and my key:\n{big_key}\nend"
            text = "x " * 5_000 + token + " " + fill[:reach - len(after) - (len(token) - straddle) - 1] + after
        assert token not in redact_secrets(text)  # whole, it is recognised
        clipped = prompt.serialize([{"role": "user", "content": text}], redact=redact_secrets)
        piece = token[:12] if where == "head" else token[-12:]
        leaked += [straddle] if piece in clipped else []
    assert leaked == []
    assert prompt.redacted_head("a b " * 5_000, 4_000, redact_secrets) == ("a b " * 5_000)[:4_000]  # no secret: as cut
    assert prompt.redacted_tail("a b " * 5_000, 1_500, redact_secrets) == ("a b " * 5_000)[-1_500:]


@pytest.mark.parametrize(("header", "row"), [("username,password", "user{n},{p}"),
                                           ("| user | password |\n|---|---|", "| user{n} | {p} |")])
def test_a_credentials_table_cut_from_its_header_is_redacted_in_the_excerpt(header: str, row: str) -> None:
    """A pasted credentials table is known by its header; the summary request shows a long message's end, where the
    header is gone, and 62 of 600 passwords reached the summary model (a red-team pass). The end is read under the
    text's first lines."""
    import random

    rng = random.Random(3)
    passwords = ["".join(rng.choice("abcdefghjkmnpqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789") for _ in range(14)) + "!"
                 for _ in range(600)]
    text = header + "\n" + "\n".join(row.format(n=n, p=p) for n, p in enumerate(passwords))
    whole = redact_secrets(text)
    assert not any(p in whole for p in passwords)  # read whole, every one is recognised
    sent = prompt.serialize([{"role": "user", "content": text}], redact=redact_secrets)
    assert "user599" in sent  # the excerpt does show the table's end
    assert [p for p in passwords if p in sent] == []


@pytest.mark.parametrize(("intro", "header", "row"), [
    ("Here are the staging accounts:\n\n", "| user | password |\n|---|---|", "| user{n} | {p} |"),
    ("creds.csv:\n", "username,password", "user{n},{p}"),
    ("```csv\n", "username,password", "user{n},{p}"),
    ("# Credentials\n", "| host | user | password |\n| --- | --- | --- |", "| db{n}.internal | user{n} | {p} |"),
    ("$ cat creds.tsv\n", "username\tpassword", "user{n}\t{p}")])
@pytest.mark.parametrize("as_json", [False, True])
def test_a_credentials_table_under_a_line_of_its_own_is_redacted_in_the_excerpt(intro: str, header: str, row: str,
                                                                                 as_json: bool) -> None:
    """The excerpt's end is read under the header of the table it cuts into, wherever that header is: with a line
    above it (a title, a code fence, the command that printed it) 33-62 of 600 passwords reached the summary model (a
    red-team pass), and in a tool's JSON answer, whose lines are the two characters \\n, 59."""
    import random

    rng = random.Random(5)
    passwords = ["".join(rng.choice("abcdefghjkmnpqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789") for _ in range(14)) + "!"
                 for _ in range(600)]
    text = intro + header + "\n" + "\n".join(row.format(n=n, p=p) for n, p in enumerate(passwords))
    if as_json:
        text = json.dumps({"output": text, "exit_code": 0})
    whole = redact_secrets(text)
    assert not any(p in whole for p in passwords)  # read whole, every one is recognised
    sent = prompt.serialize([{"role": "user", "content": text}], redact=redact_secrets)
    assert "user599" in sent  # the excerpt does show the table's end
    assert [p for p in passwords if p in sent] == []


@pytest.mark.parametrize("shape", ["note with a comma", "tsv name with a comma", "json indented", "json then a line",
                                   "json crlf", "tsv json indented"])
def test_a_credentials_table_of_mixed_delimiters_or_in_indented_json_is_redacted_in_the_excerpt(shape: str) -> None:
    """The header was looked for under the first delimiter the cut row held (a comma in a Markdown note or a TSV
    name hid the table: 36-54 of 600), and in a JSON answer only when the excerpt held no real line break
    (pretty-printed JSON, or a line after it: 55-59 of 600; a red-team pass)."""
    import random

    rng = random.Random(9)
    passwords = ["".join(rng.choice("abcdefghjkmnpqrstuvwyzABCDEFGHJKLMNPQRSTUVWYZ23456789") for _ in range(14)) + "!"
                 for _ in range(600)]
    if shape == "note with a comma":
        table = "| user | password | note |\n|---|---|---|\n" + "\n".join(
            f"| user{n} | {p} | on call, EU |" for n, p in enumerate(passwords))
    elif shape.startswith("tsv"):
        table = "name\tusername\tpassword\n" + "\n".join(f"Smith, A{n}\tuser{n}\t{p}" for n, p in enumerate(passwords))
    else:
        table = "username,password\n" + "\n".join(f"user{n},{p}" for n, p in enumerate(passwords))
    text = "Accounts exported today:\n" + table
    if shape == "json crlf":
        text = json.dumps({"output": text.replace("\n", "\r\n"), "exit_code": 0})
    elif shape.endswith("indented"):
        text = json.dumps({"output": text, "exit_code": 0}, indent=2)
    elif shape == "json then a line":
        text = json.dumps({"output": text, "exit_code": 0}) + "\n(the command took 0.2 s)"
    sent = prompt.serialize([{"role": "user", "content": text}], redact=redact_secrets)
    assert "user599" in sent
    assert [p for p in passwords if p in sent] == []


def test_the_header_above_a_cut_is_looked_for_over_a_bounded_number_of_lines() -> None:
    """Walking back over every line of a 16 MB table took a compaction from 3 s to 14 s (a red-team pass): the walk
    stops after a bounded number of lines, however long the text."""
    from hermes_ctx_plugins.safety.engine import layouts

    rows = [f"user{n},pw{n:07d}" for n in range(200_000)]
    text = "Accounts:\nusername,password\n" + "\n".join(rows)
    near = text.index(rows[layouts._HEADER_LINES // 2])
    assert layouts.table_header(text, near) == "username,password"  # within reach: found
    assert layouts.table_header(text, text.index(rows[-10])) == ""  # 200,000 lines back: not walked to


def test_a_pruned_tool_call_line_never_shows_the_start_of_a_secret() -> None:
    """The one-line summary of a pruned tool call cuts its command at 80 characters: a token cut there was no longer
    recognisable, and the summary request carried 24 of its 40 characters (a red-team pass)."""
    from hermes_ctx_plugins.compression.tool_summary import summarize_tool_result

    token = "ghp_R8nZq2Lk9XwT4vB7mC1sD6fH3jK5pQ0aY2uE"
    output = json.dumps({"output": "released\n" * 300, "exit_code": 0})
    for pad in range(0, 70, 3):  # the cut falls before, inside and after the token
        command = f"./scripts/release.sh --verbose{' -q' * (pad // 3)} --gh {token} --channel=stable"
        line = summarize_tool_result("terminal", {"command": command}, output)
        assert "./scripts/release.sh" in line and "exit 0" in line
        assert not any(token[:n] in redact_secrets(line) for n in range(8, len(token) + 1)), line
    url = f"https://ci.example.com/api/v4/projects/7/trigger?token={token}&ref=main"
    line = summarize_tool_result("browser_navigate", {"url": url}, "ok")
    assert "ci.example.com" in line and token[:8] not in line  # one long word: redacted before it is cut


def test_a_pruned_tool_call_line_never_shows_part_of_a_quoted_passphrase_or_of_a_long_token() -> None:
    """A cut at a space inside a quoted value kept "-p'correct horse battery", no longer read as a password (29 of
    32 characters reached the summary model); a JWT longer than the line's read was redacted only as far as read,
    not recognised, and its start kept (a red-team pass)."""
    from hermes_ctx_plugins.compression.tool_summary import summarize_tool_result

    passphrase = "correct horse battery staple 42!"
    ok = json.dumps({"output": "ok", "exit_code": 0})
    for pad in range(0, 40, 2):
        for command in (f"mysql -uroot{' -v' * pad} -p'{passphrase}' prod",
                        f'curl -s{" -s" * pad} -u admin:"{passphrase}" https://x.example.com'):
            line = summarize_tool_result("terminal", {"command": command}, ok)
            assert line.startswith("[terminal] ran `") and "exit 0" in line
            sent = redact_secrets(line)  # as the summary request's redaction leaves it
            assert not any(passphrase[:n] in sent for n in range(6, len(passphrase) + 1)), line
    jwt = ("eyJhbGciOiJSUzI1NiIsInR5cCI6IkpXVCJ9." + "eyJzdWIiOiIyNDgyODk3NjEwMDEiLCJuYW1lIjoiSmFuZSBEb2UifQ" * 8
           + "." + "rHQjEmBqn9Jre0OLykYNnspA10Qql2rvx4FsD00jwlB0Sym4NzpgvPKsDjn_wMkHxcp6CilPcoKrWHcipR2iAjz")
    line = summarize_tool_result("browser_navigate", {"url": f"https://app.example.com/cb/{jwt}"}, "ok")
    assert "app.example.com" in line and jwt[:40] not in redact_secrets(line)
    prose = "what's the deploy plan for the staging cluster tomorrow morning, and who's on call for it?"
    assert "what's the deploy plan" in summarize_tool_result("clarify", {"question": prose}, "ok")  # no quote there


def test_a_pruned_tool_call_line_never_glues_its_ellipsis_to_a_password_nor_miscounts_escaped_quotes() -> None:
    """A cut right after a password left "-pTr0ub4dorX3xQ9...", which the redactor reads as a placeholder: the whole
    password reached the summary request; an escaped apostrophe (It\\'s) before a quoted passphrase flipped the quote
    count, and 29 of its 32 characters did (a red-team pass)."""
    from hermes_ctx_plugins.compression.tool_summary import summarize_tool_result

    password, passphrase = "Tr0ub4dorX3xQ9", "correct horse battery staple 42!"
    ok = json.dumps({"output": "ok", "exit_code": 0})
    for pad in range(0, 60):
        for command in (f"mysql -uroot{' -v' * (pad // 3)}{'x' * (pad % 3)} -p{password} prod",
                        f"curl -s{' -s' * (pad // 3)}{'x' * (pad % 3)} -u admin:{password} https://x.example.com",
                        f"echo It\\'s done;{' x' * pad} mysql -uroot -p'{passphrase}' prod"):
            sent = redact_secrets(summarize_tool_result("terminal", {"command": command}, ok))
            assert password not in sent and not any(passphrase[:n] in sent for n in range(6, 33)), sent


@pytest.mark.parametrize("redact", [True, False])
def test_inside_hermes_the_summary_request_is_redacted(redact: bool, main: StubOpenAIServer,
                                                       aux: StubOpenAIServer) -> None:
    """As a hermes user meets it: ``auxiliary.compression`` in hermes' config.yaml, our engine."""
    run_agent = pytest.importorskip("run_agent", reason="the hermes extra is not installed")
    from hermes_cli import plugins as hermes_plugins

    home = Path(os.environ["HERMES_HOME"])
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.yaml").write_text(
        f"model: {{default: gpt-4o, provider: custom, base_url: {main.base_url}, context_length: 64000}}\n"
        "compression: {threshold_tokens: 30000}\n"
        f"auxiliary: {{compression: {{base_url: {aux.base_url}, model: aux-model, api_key: aux-key}}}}\n"
        "plugins: {enabled: [hermes-ctx]}\ncontext: {engine: hermes-ctx}\nagent: {environment_probe: false}\n"
        f"ctx_plugins: {{compressor: summarize, options: {{summarize: {{redact_secrets: {str(redact).lower()}}}}}}}\n",
        encoding="utf-8")
    hermes_plugins.discover_plugins(force=True)
    main.responder = lambda request: "Done."
    agent = run_agent.AIAgent(base_url=main.base_url, api_key="k", provider="custom", model="gpt-4o",
                              quiet_mode=True, skip_context_files=True, enabled_toolsets=[])
    result = agent.run_conversation("please continue", conversation_history=planted_transcript()[1:])

    assert result["final_response"] == "Done." and agent.context_compressor.compression_count == 1
    assert len(aux.chat_requests) == 1  # the summary request went to the summary model
    sent = wire(aux)
    on_the_wire = sorted(kind for kind in PLANTED if NEEDLES[kind] in sent)
    assert on_the_wire == (sorted(PLANTED) if redact is False else [])


@pytest.mark.parametrize("cap", [500, 2_000, 9_000])
def test_only_what_the_cap_keeps_is_redacted_and_all_of_it_is(cap: int) -> None:
    """serialize redacts just the kept blocks (cost bounded by the cap), never leaving one unredacted
    even where redaction changes the lengths that decide what is kept."""
    from hermes_ctx_plugins.compression.prompt import serialize
    from hermes_ctx_plugins.safety import redact_secrets

    key = "sk-proj-Q7xR2mVb9KpL4sT8wZ1nY6cH3dF5gJ0a"
    messages = [{"role": "user" if i % 2 else "assistant", "content": f"step {i} key {key} " + "x" * (i * 37 % 400)}
                for i in range(300)]
    calls: list[str] = []

    def counting(text: str) -> str:
        calls.append(text)
        return redact_secrets(text)

    text = serialize(messages, char_cap=cap, redact=counting)
    assert key not in text and "[REDACTED" in text
    assert len(calls) < len(messages) // 2  # the elided middle was never scanned


def test_a_credentials_file_read_through_a_tool_reaches_neither_the_summary_model_nor_the_disk(
        aux: StubOpenAIServer, main: StubOpenAIServer) -> None:
    """hermes' tools answer in JSON: the file's line breaks are the two characters ``\\n``, and a credentials CSV, a
    .pgpass written by write_file or a Markdown table in one went to the summary model and the archive whole (a
    red-team pass). The accounts' names still go: only the passwords are taken out."""
    passwords = ["kT9#vLq2Wz8mRx", "Hq7!pNc4Yt2sZa", "Zp4$wQm8Lr2Vn6", "Bx7&cJ3kTn9Wq5"]
    csv = f"username,password\nalice,{passwords[0]}\nbob,{passwords[1]}\n"
    pgpass = f"db.internal:5432:app:carol:{passwords[2]}\n"
    table = f"| user | password |\n|---|---|\n| dave | {passwords[3]} |\n"
    messages: list[dict[str, Any]] = [m for i in range(3) for m in (  # the protected head: kept as it is
        {"role": "user", "content": f"warm-up {i}"}, {"role": "assistant", "content": "ok"})]
    messages.append({"role": "user", "content": "which accounts do we have?"})
    for n, (tool, arguments, output) in enumerate([
            ("terminal", {"command": "cat creds.csv"}, json.dumps({"output": csv, "exit_code": 0, "error": None})),
            ("write_file", {"path": "/home/me/.pgpass", "content": pgpass}, json.dumps({"success": True})),
            ("read_file", {"path": "notes.md"}, json.dumps({"content": table, "total_lines": 3}))]):
        call = {"id": f"c{n}", "type": "function", "function": {"name": tool, "arguments": json.dumps(arguments)}}
        messages += [{"role": "assistant", "content": "", "tool_calls": [call]},
                     {"role": "tool", "tool_call_id": f"c{n}", "content": output}]
    messages.append({"role": "assistant", "content": "alice, bob, carol and dave."})
    for i in range(12):
        messages += [{"role": "user", "content": f"question {i} " + "words " * 100},
                     {"role": "assistant", "content": f"answer {i} " + "words " * 100}]
    host = host_for("summarize", redact=None, model={"base_url": main.base_url}, aux=aux)
    assert host.compress(messages, force=True).compressed
    host.shutdown()
    sent = wire(aux, main)
    assert "alice" in sent and "carol" in sent and "dave" in sent  # the accounts reached the summary model...
    assert [p for p in passwords if p in sent] == []  # ...their passwords did not
    archived = b"".join(p.read_bytes() for p in Path(os.environ["HERMES_HOME"]).rglob("ctx_archive.db*"))
    assert b"creds.csv" in archived
    assert [p for p in passwords if p.encode() in archived] == []

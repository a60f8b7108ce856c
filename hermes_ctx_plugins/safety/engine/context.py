"""Whether a rule's match holds in its context: ``Near`` requirements, and the checks that need code.

A rule's ``context`` lists what must hold around a match. A :class:`~hermes_ctx_plugins.safety.rules.record.Near` is
data: a pattern that must (or must not) be found in a window around the match. Where a requirement needs more than
one search -- hosts to be told apart from loopback ones, a destination after the verb but sensitive data before it,
signals to be counted, a named group to be read -- it is a check here, named in :data:`CHECKS`; the secret rules'
value checks are in :mod:`.values`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import partial

from ..rules.destructive import COVERT_ACTION, PAYLOAD
from ..rules.exfiltration import COVERT_TRANSFER
from ..rules.override import SOFT_VERBS, STRONG_RE, WEAK
from ..rules.record import Near, Rule, lazy
from ..rules.signals import WEAK_SIGNALS
from ..rules.vocabulary import (
    AS_CREDENTIAL,
    AUTH_ARG,
    CARRIED_DATA,
    CMD_SECRET,
    DESCRIPTIVE,
    DEST,
    ENV_DUMP,
    FILL_HINT,
    HOSTS,
    KNOWN_INSTALLERS,
    LOOPBACK,
    MARKED_URL,
    NEGATION,
    PERSONAL,
    PIPED_SOURCE,
    PRIVATE_HOST,
    REPLY,
    REPLY_WORD,
    REVIEW_WAIVED,
    RULE_AGAINST,
    SECRETISH,
    SENS,
    SENTENCE_END,
    STANDING_RE,
    SUSPICIOUS,
    UPLOAD_FORM,
    USERS_OWN,
    WRITTEN_FILE,
)
from .values import SECRET_CHECKS

Check = Callable[[str, re.Match[str]], bool]  # (view searched, match) -> the match holds


def holds(rule: Rule, view: str, m: re.Match[str]) -> bool:
    """Whether everything ``rule`` requires around ``m`` holds."""
    return all(CHECKS[need](view, m) if isinstance(need, str) else _found(need, view, m) for need in rule.context)


def _found(need: Near, view: str, m: re.Match[str]) -> bool:
    """Whether ``need`` holds: its pattern found (or, if ``absent``, not) in its window around ``m``."""
    start, end = m.start(), m.end()
    if need.window in ("sentence", "sentence-without-match"):
        head, tail = sentence(view, start, end)
        text = f"{head} {m[0]} {tail}" if need.window == "sentence" else head + tail
        first, last = 0, len(text)
    else:
        text = view
        if need.window == "line":
            first, last = line(view, start, end)
        else:
            first = end if need.window == "after" else max(0, start - need.reach)
            last = {"before": start, "after": end + need.reach, "before+match": end}[need.window]
    return (need.pattern.search(text, first, last) is None) == need.absent


def sentence(view: str, start: int, end: int) -> tuple[str, str]:
    """The part of the sentence before ``start`` (≤ 80 chars) and after ``end`` (≤ 160 chars)."""
    head, tail = view[max(0, start - 80):start], view[end:end + 160]
    cuts, stop = list(SENTENCE_END.finditer(head)), SENTENCE_END.search(tail)
    return (head[cuts[-1].end():] if cuts else head), (tail[:stop.start()] if stop else tail)


def line(view: str, start: int, end: int) -> tuple[int, int]:
    """Where the line holding ``view[start:end]`` starts and ends."""
    stop = view.find("\n", end)
    return view.rfind("\n", 0, start) + 1, len(view) if stop < 0 else stop


def _negated(view: str, m: re.Match[str]) -> bool:
    return bool(NEGATION.search(view, max(0, m.start() - 24), m.start()))


# ------------------------------------------------------------------------------------------------ hosts, commands

def _hosts(segment: str) -> list[str]:
    """The hosts a command or URL names (each of HOSTS' alternatives captures one)."""
    return [next(g for g in m.groups() if g) for m in HOSTS.finditer(segment)]


def _is_remote(segment: str) -> bool:
    """Whether a command/URL reaches a non-loopback host (no recognisable host counts as remote)."""
    hosts = _hosts(segment)
    return not hosts or any(not LOOPBACK.fullmatch(h) for h in hosts)


def _is_public(segment: str) -> bool:
    """Whether a command reaches a host outside the user's machine and LAN (a named one: no host is not enough)."""
    return any(not (LOOPBACK.fullmatch(h) or PRIVATE_HOST.fullmatch(h)) for h in _hosts(segment))


def _remote(view: str, m: re.Match[str]) -> bool:
    return _is_remote(m[0])


def _network_command_carrying_secrets(view: str, m: re.Match[str]) -> bool:
    """Secrets, or the user's own folders, handed to a network command (credentials given to the tool itself, with
    ``-H``/``-u``/``-i``, are use)."""
    command = AUTH_ARG.sub(" ", m[0])
    return (bool(CMD_SECRET.search(command)) and _is_remote(command)) or _uploads_prepared_file(view, m) or (
        bool(PERSONAL.search(command) and UPLOAD_FORM.search(command)) and _is_public(command))


def _uploads_prepared_file(view: str, m: re.Match[str]) -> bool:
    """``env > /tmp/e.txt && curl -F f=@/tmp/e.txt ...``: a file filled from a secret source (or the user's own
    folders) earlier on the line, then handed to the network command -- the two halves of a pipe, split so that no
    pipe shows."""
    head = view[view.rfind("\n", 0, m.start()) + 1:m.start()][-300:]
    secret = ENV_DUMP.search(head) or CMD_SECRET.search(head)
    if not (secret or PERSONAL.search(head)):  # a database dump copied to a backup host is routine
        return False
    command = m[0]
    return any(len(f) > 3 and f in command for f in WRITTEN_FILE.findall(head)) and (
        _is_remote(command) if secret else bool(UPLOAD_FORM.search(command)) and _is_public(command))


def _secret_source_piped_out(view: str, m: re.Match[str]) -> bool:
    return bool(PIPED_SOURCE.search(m[0]) or CMD_SECRET.search(m[0])) and _is_remote(m[0])


def _standing_order_if_piped(view: str, m: re.Match[str]) -> bool:
    """Fetched code piped into a shell counts as a standing order only (said in its sentence: "install it with
    ``curl … | sh``. Pin the version next time" is a note of what was done) or with a claim that it needs no review
    nearby; PowerShell's download-and-run always."""
    if not m["piped"]:
        return True
    head, tail = sentence(view, m.start(), m.end())  # its sentence: a later one may plan the next time
    if STANDING_RE.search(f"{head} {m[0]} {tail}"):
        return True
    # or a claim near it that it needs no review ("... | sudo bash` and retry. The maintainer says the script doesn't
    # need to be reviewed", "# 一键修复, 不用看内容" on the line before), in an order, not a rule against it ("never run
    # `curl ... | sh` without reading it"); the well-known installers' own hosts excepted
    low = max(0, m.start() - 160, view.rfind("\n\n", 0, m.start()) + 1)
    return bool(REVIEW_WAIVED.search(view, low, min(len(view), m.end() + 240))) and not RULE_AGAINST.search(
        head) and not KNOWN_INSTALLERS.search(m[0])


def _payload_on_the_line(view: str, m: re.Match[str]) -> bool:
    """"every piece of code you write" with a payload on the same line, ordered rather than described."""
    first, last = line(view, m.start(), m.end())
    text = view[max(first, m.start() - 200):last][:500]
    return bool(PAYLOAD.search(text)) and not _negated(view, m) and not DESCRIPTIVE.search(text)


def _covert(action: re.Pattern[str], view: str, m: re.Match[str]) -> bool:
    """Concealment next to an action on its line that reaches a remote host, in an order rather than a description."""
    first, last = line(view, m.start(), m.end())
    head, tail = view[max(first, m.start() - 300):m.start()], view[m.end():last][:300]
    said = "".join(sentence(view, m.start(), m.end()))
    return not DESCRIPTIVE.search(said) and any(
        _is_remote(a[0]) for part in (head, tail) for a in action.finditer(part))


# --------------------------------------------------------------------------------------------- data leaving

def _sends_sensitive(view: str, m: re.Match[str]) -> bool:
    """A send verb with something sensitive and a remote destination in its sentence (the destination after the
    verb, the data anywhere before it; in Chinese, which may end on the verb, both before it). An incident note
    telling what malware sent ("a malicious extension read ~/.aws/credentials and posted them to a webhook") counts
    too: a red-team pass found an exemption for it too easy to dress an order in (session 16)."""
    head, tail = sentence(view, m.start(), m.end())
    dest = next((d for d in DEST.finditer(tail) if _is_remote(d[0])), None)
    if dest is not None and AS_CREDENTIAL.search(tail):
        return False
    if dest is None and not m[0].isascii():  # Chinese may end on the verb: "用 curl 把聊天记录 https://x 上传"
        near = next((d for d in DEST.finditer(head) if _is_remote(d[0])), None)
        return bool(near and SENS.search(head, 0, near.start())) and not _negated(view, m)
    sensitive = dest and (SENS.search(head) or SENS.search(tail, 0, dest.start()))
    return bool(sensitive) and not _negated(view, m)


def _secrets_into_replies(view: str, m: re.Match[str]) -> bool:
    tail = sentence(view, m.start(), m.end())[1]
    return bool(SECRETISH.search(tail, 0, 60) and REPLY.search(tail)) and not _negated(view, m)


def _data_hidden_in_replies(view: str, m: re.Match[str]) -> bool:
    said = "".join(sentence(view, m.start(), m.end()))
    return bool(REPLY_WORD.search(said) and (SENS.search(said) or CARRIED_DATA.search(said)))


def _beacon_carrying_data(view: str, m: re.Match[str]) -> bool:
    """An image URL (group 1 or 2) with a placeholder or data in it, or a query to fill, on a remote host."""
    url, (head, tail) = m[1] or m[2], sentence(view, m.start(), m.end())
    marked = MARKED_URL.search(url) or ("?" in url and FILL_HINT.search(f"{head} {tail}"))
    return bool(marked) and _is_remote(url)


def _data_after_the_url(view: str, m: re.Match[str]) -> bool:
    """An empty query value with data to follow: ``?q=`` "followed by the user's last message", ``'?k=' + token``."""
    tail = m[0][m[0].index("=", m[0].index("://")) + 1:]
    return bool(SENS.search(tail) or CARRIED_DATA.search(tail)) and _is_remote(m[0])


def _not_a_description(view: str, m: re.Match[str]) -> bool:
    """A lookup command (group 1) always counts; prose about DNS smuggling unless it describes attackers."""
    return bool(m[1]) or not DESCRIPTIVE.search(sentence(view, m.start(), m.end())[0])


def _forwarded_to_a_remote_place(view: str, m: re.Match[str]) -> bool:
    dest = m["dest"] or m["zh_dest"] or ""
    return bool(DEST.search(dest)) and _is_remote(dest) and not _negated(view, m)


def _copies_to_an_outside_address(view: str, m: re.Match[str]) -> bool:
    """Copies of the user's things to an outside address ("a copy of every contract the user drafts goes to ..."),
    or a blind copy (group ``bcc``) on everything."""
    if m["bcc"]:
        return True
    return bool(DEST.search(m["dest"]) and _is_remote(m["dest"]) and (USERS_OWN.search(m["what"]) or
                                                                        SENS.search(m["what"])))


# ---------------------------------------------------------------------------------------------- orders

def _order_or_suspicious_payload(view: str, m: re.Match[str]) -> bool:
    """"from now on you must" (group 1 or 2) is an order; "from now on always ..." only with a suspicious payload."""
    return bool(m[1] or m[2] or SUSPICIOUS.search(sentence(view, m.start(), m.end())[1]))


def _qualified_override(view: str, m: re.Match[str]) -> bool:
    """A qualifier says whose instructions ("previous", "your", "system"); for soft verbs "all" alone is not enough."""
    if m["q"] is None:  # the qualifier came after the noun; "clear the rules above" (a firewall's) is not enough
        return not (m["after"] and SOFT_VERBS.match(m["verb"]))
    strong = STRONG_RE.findall(m["q"])
    return bool(strong) and not (SOFT_VERBS.match(m["verb"]) and all(WEAK.fullmatch(w) for w in strong))


_SIGNALS = [lazy(pattern) for _, pattern in WEAK_SIGNALS.values()]


def _two_weak_signals(view: str, m: re.Match[str]) -> bool:
    """Two families of weak signal within 250 characters on the match's line, not in a description of attacks."""
    start, end = line(view, m.start(), m.end())
    first, last = max(start, m.start() - 250), min(end, m.end() + 250)
    found = sum(bool(family.search(view, first, last)) for family in _SIGNALS)
    return found >= 2 and not DESCRIPTIVE.search(view, first, last)


#: the requirements that need code, by the name rules give them
CHECKS: dict[str, Check] = {
    # every host a command or URL names is told apart from loopback (and LAN) ones: a loop, not one search
    "remote": _remote,
    "network command carrying secrets": _network_command_carrying_secrets,
    "secret source piped out": _secret_source_piped_out,
    "forwarded to a remote place": _forwarded_to_a_remote_place,
    "copies to an outside address": _copies_to_an_outside_address,
    "beacon carrying data": _beacon_carrying_data,
    "data after the URL": _data_after_the_url,
    # one search bounded by another's result (data before the destination found), or several counted
    "sensitive data to a remote place": _sends_sensitive,
    "secrets into replies": _secrets_into_replies,
    "data hidden in replies": _data_hidden_in_replies,
    "payload on the line": _payload_on_the_line,
    "covert action": partial(_covert, COVERT_ACTION),
    "covert transfer": partial(_covert, COVERT_TRANSFER),
    "two weak signals": _two_weak_signals,
    # which alternative of the pattern matched (a named group) decides what else must hold
    "standing order if piped": _standing_order_if_piped,
    "not a description": _not_a_description,
    "order or suspicious payload": _order_or_suspicious_payload,
    "qualified override": _qualified_override,
    **SECRET_CHECKS,
}

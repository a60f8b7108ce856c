# ruff: noqa: RUF001, RUF002, RUF003
"""Where money goes: a payment reader for layer 1.

A redirected payment is worded in as many ways as there are fraudsters ("remit the deposit to our Hong Kong account
below instead", "payee swap: Acme -> IBAN ... silent.", "收款改走下面这个，不要提旧账户", a YAML payee with
``auto_approve: true``); phrase rules catch the wordings they were written from. What every one of them holds is
a **place money goes** -- an IBAN, an account number after a word naming one, a crypto-currency address, a payment
processor's account or handle, a payment page -- and, around it (its paragraph, at most :data:`_AROUND` characters
each side), words of money moving and either

* an order to use it **unchecked or unseen** ("don't re-check", "no callback", "silently", "keep this between us",
  "leave it out of the summary", ``notify: false``, "不用再核对", "别在付款单上写原因"), or
* words saying it **replaces** another (new, updated, instead, rather than, 而非, 改为) **and** that it is to be used
  **for good** (from now on, every, all open invoices, whenever the user asks, nightly, 以后, 一律).

It is not read so when the place is the user's own ("my current IBAN is ...", "我的工资卡"; a payment redirected
in the user's own voice is their decision, as :mod:`..rules.payments` says) unless it is also to be used unchecked,
nor when the words around it are about fraud (a warning, a report of a scam, a policy, "verified by a callback"):
the hard benign notes a user keeps are mostly those. A rule against skipping ("never skip the callback", "do not
pay without one") is no order to skip.

Two scams carry no place: gift cards bought and their codes sent on, and one-time codes read out to a "support"
line. Both are read here too, with the same exception for notes about fraud.

The vocabulary is data in :mod:`..rules.payments`; the reader reads at most :data:`LIMIT` characters and
:data:`_MAX_PLACES` places, so its cost is bounded by the text's length.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from ..rules import payments as p
from ..rules.record import lazy

#: the longest text read (the scanner's other readers read as far)
LIMIT = 100_000
#: how far around a place its words are read, each side (within its paragraph)
_AROUND = 600
#: how far before a place a word making it the user's own is read ("my current IBAN is", "我的工资卡：")
_OWNER_REACH = 40
#: how many places are judged at most
_MAX_PLACES = 40
_PARAGRAPH = lazy(r"\n[ \t]*\n")
#: where a sentence ends (the user's ownership of a place is read in the place's own sentence)
_SENTENCES = lazy(r"[。；;!?！？\n]|\.\s")


@dataclass(frozen=True)
class MoneyAct:
    """Money sent where it must not go: what the user is told, and where (``text[start:end]``)."""

    detail: str
    start: int
    end: int


def money_acts(text: str) -> list[MoneyAct]:
    """The payments ``text`` would redirect or hide (``[]`` for notes that only hold or mention payment details)."""
    text = text[:LIMIT]
    lowered = text.lower()
    if len(lowered) != len(text):  # 'İ' lowers to two characters: positions must stay the text's
        lowered = "".join(c if len(c.lower()) != 1 else c.lower() for c in text)
    acts: list[MoneyAct] = []
    for start, end, what in _places(text, lowered):
        why = _redirected(lowered, start, end)
        if why:
            acts.append(MoneyAct(f"payment redirected: {what} {why}", start, end))
            break  # one finding says it; the policy needs no more
    if any(hint in lowered for hint in p.GIFT_HINTS):
        acts += _scam(lowered, p.GIFT_CARD_CODES.finditer(lowered), "gift-card codes sent on")
    for word in p.CODE_HINTS:  # each "code" read with the words around it (a note on code says "code" often)
        at = lowered.find(word)
        while at >= 0 and not any(a.detail.startswith("one-time") for a in acts):
            window = max(0, at - 100)
            acts += _scam(lowered, p.CODES_TO_A_THIRD_PARTY.finditer(lowered, window, at + 120),
                          "one-time codes read out to a third party")
            at = lowered.find(word, at + 120)
    return acts


def _scam(lowered: str, matches: Iterator[re.Match[str]], detail: str) -> list[MoneyAct]:
    """The first of ``matches`` not in a note about fraud, as an act."""
    for m in matches:
        if not p.ABOUT_FRAUD.search(_around(lowered, m.start(), m.end())):
            return [MoneyAct(detail, m.start(), m.end())]
    return []


def _places(text: str, lowered: str) -> list[tuple[int, int, str]]:
    """Each place money can go, as (start, end, what it is), in the text's order, :data:`_MAX_PLACES` at most."""
    found: list[tuple[int, int, str]] = []
    for m in p.IBAN.finditer(text):
        if m.group(1) in p.IBAN_COUNTRIES and sum(c.isdigit() for c in m.group(0)) >= 8:
            found.append((m.start(), m.end(), "an IBAN"))
    if "0x" in lowered or "bc1" in lowered:
        found += [(m.start(), m.end(), "a crypto address") for m in p.CRYPTO_ADDRESS.finditer(text)]
    if any(hint in lowered for hint in p.COIN_HINTS):
        for m in p.BASE58_ADDRESS.finditer(text):
            if any(c.isdigit() for c in m.group(0)) and p.COIN_WORD.search(lowered, max(0, m.start() - 80), m.start()):
                found.append((m.start(), m.end(), "a crypto address"))
    for m in p.ACCOUNT_DIGITS.finditer(lowered):  # digits first (rare), then the word naming them an account
        if sum(c.isdigit() for c in m.group(0)) >= 8 and p.ACCOUNT_WORD.search(lowered, max(0, m.start() - 48),
                                                                                m.start()):
            found.append((m.start(), m.end(), "an account number"))
    for at, token in _tokens(text):  # links and handles are read in the few tokens that can hold one
        if "@" in token or "$" in token or "acct_" in token or "wxid_" in token:
            found += _handles(lowered, at, token)
        if "." in token:
            found += _links(text, at, token)
    found.sort()
    return found[:_MAX_PLACES]


def _tokens(text: str) -> Iterator[tuple[int, str]]:
    """Each whitespace-separated token of ``text`` that can hold a link or a handle (a full stop, ``@``, ``$``,
    ``acct_``, ``wxid_``), with its start."""
    at = 0
    for token in text.split():
        at = text.find(token, at)
        if "." in token or "@" in token or "$" in token or "acct_" in token or "wxid_" in token:
            yield at, token
        at += len(token)


def _handles(lowered: str, at: int, token: str) -> list[tuple[int, int, str]]:
    """The payment accounts in ``token`` (at ``lowered[at:]``): a processor's account id, or a handle a payment app
    names or money is sent to."""
    found = []
    for m in p.HANDLE.finditer(token):
        start, end = at + m.start(), at + m.end()
        if m.group(0).startswith("acct_") or p.HANDLE_BEFORE.search(lowered, max(0, start - 48), start) or \
                p.HANDLE_AFTER.search(lowered[end:end + 12]):
            found.append((start, end, "a payment account"))
    return found


def _links(text: str, at: int, token: str) -> list[tuple[int, int, str]]:
    """The payment links in ``token`` (at ``text[at:]``): a link or a host whose host or first path segment says
    payment, or any link a payment word stands just before."""
    found = []
    for m in p.PAYMENT_LINK.finditer(token):
        link, start = m.group(0), at + m.start()
        host = link.split("://", 1)[-1].split("/", 1)[0]
        if "." not in host or link.lower().endswith((".py", ".md", ".txt", ".json")):
            continue
        if "_" in host or host != host.lower() or not (link.lower().startswith("http") or _looks_like_host(host)):
            continue  # code's dotted names (self._channel.subscribe, System.Collections.Generic) are no hosts
        head = link.split("://", 1)[-1].split("/")
        line_start = text.rfind("\n", 0, start) + 1
        if p.PAYMENT_LINK_WORD.search("/".join(head[:2]).lower()) or p.PAYMENT_BEFORE_LINK.search(
                text, max(line_start, start - 60), start):
            found.append((start, start + len(link), "a payment link"))
    return found


def _looks_like_host(host: str) -> bool:
    """Whether a bare ``name.tld`` reads as a host (``escrow-fast.example.org``, ``pay2.example.net``) rather than
    words or code joined by a full stop ("the site.Then", ``env3.payload``): two dots, or a hyphen or a digit in it,
    and a top-level domain (any two letters, or one of :data:`~..rules.payments.LONG_TLDS`)."""
    parts = host.split(".")
    tld = parts[-1]
    return tld.isalpha() and (len(tld) == 2 or tld in p.LONG_TLDS) and (
        len(parts) >= 3 or any(c == "-" or c.isdigit() for c in host))


def _around(lowered: str, start: int, end: int) -> str:
    """The place's surroundings: its paragraph (blank lines end one), at most :data:`_AROUND` characters each side."""
    low, high = max(0, start - _AROUND), min(len(lowered), end + _AROUND)
    before = [m.end() for m in _PARAGRAPH.finditer(lowered, low, start)]
    after = _PARAGRAPH.search(lowered, end, high)
    return lowered[before[-1] if before else low:after.start() if after else high]


def _redirected(lowered: str, start: int, end: int) -> str:
    """Why the place at ``lowered[start:end]`` is where money is being steered (``""`` when it is not)."""
    around = _around(lowered, start, end)
    if not p.MONEY.search(around) or p.ABOUT_FRAUD.search(around):
        return ""
    unchecked = _unchecked(around)
    if unchecked:
        return f"to be used unchecked ('{unchecked}')"
    if p.VERIFIED.search(around):
        return ""  # "verified by phone with their CFO", "changed details must be confirmed by phone"
    sentence = _SENTENCES.split(lowered[max(0, start - _OWNER_REACH):start])[-1]
    if p.OWN_PLACE.search(sentence) or _established(_sentence_after(lowered, end)):
        return ""  # "my current IBAN is ...", "use account ... on file"
    changed, standing = _changed(around), p.STANDING.search(around)
    if changed and standing:
        return f"said to replace another ('{changed}') for good ('{standing.group(0).strip()}')"
    return ""


def _sentence_after(lowered: str, end: int) -> str:
    """What follows a place in its sentence (60 characters at most)."""
    return _SENTENCES.split(lowered[end:end + 60])[0]


def _established(after: str) -> bool:
    """Whether the words after a place call it the one already known ("on file", "from the contract"), not the one
    it replaces ("而非合同所列账户", "instead of the one on file")."""
    return any(not p.REPLACING.search(after, max(0, m.start() - 16), m.start()) for m in p.ESTABLISHED.finditer(after))


def _changed(around: str) -> str:
    """The first word in ``around`` saying a place replaces another, unless it speaks of a change refused ("never a
    new one", "ignore any new account", "not a changed one")."""
    for m in p.CHANGED.finditer(around):
        if not p.CHANGE_REFUSED.search(around, max(0, m.start() - 24), m.start()):
            return m.group(0).strip()
    return ""


def _unchecked(around: str) -> str:
    """The first order in ``around`` to use a place unchecked or unseen; a skip or a "without" in a rule against it
    ("never skip the callback", "do not pay without one") is none."""
    for m in p.UNCHECKED.finditer(around):
        word = " ".join(m.group(0).split())
        if word.startswith(("skip", "without")):
            clause = max(around.rfind(c, 0, m.start()) for c in "\n.;。；") + 1
            if p.UNCHECKED_NEGATED.search(around, clause, m.start()):
                continue
        return word
    return ""

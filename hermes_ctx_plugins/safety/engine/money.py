# ruff: noqa: RUF001, RUF002, RUF003
"""Where money goes: a payment reader for layer 1.

A redirected payment is worded in as many ways as there are fraudsters ("remit the deposit to our Hong Kong account
below instead", "payee swap: Acme -> IBAN ... silent.", "收款改走下面这个，不要提旧账户", a YAML payee with
``auto_approve: true``); phrase rules catch the wordings they were written from. What every one of them holds is
a **place money goes** -- an IBAN, an account number after a word naming one, a crypto-currency address, a payment
processor's account or handle, a payment page -- and, within :data:`_AROUND` characters of it, words of money
moving and either

* an order to use it **unchecked or unseen** ("don't re-check", "no callback", "silently", "keep this between us",
  "callback waived", ``notify: false``, "不用再核对", "别在付款单上写原因"),
* an **advance fee** ("released once a compliance deposit reaches their escrow agent"), or
* words saying it **replaces** another (new, updated, instead, supersedes, 而非, 改为) **and** that it is to be used
  **for good** (from now on, every, all open invoices, whenever the user asks, nightly, 以后, 一律) -- or, for a
  payment page, that card details are to be entered there again.

Read first, each settles a place as no redirection: words about fraud around it (a warning, a report of a scam) or a
training example in its sentence; the place being the user's own, said before it in its sentence ("my current IBAN
is ...", "我的工资卡", "I'll transfer it myself"; a payment redirected in the user's own voice is their decision, as
:mod:`..rules.payments` says) -- not when those words are someone else's, quoted ("the supplier wrote: 'please use my
new account ...'"), nor when they name where the money comes from ("from my account to the landlord's new IBAN");
and a place named for testing ("test IBANs: ...", "sandbox wallet"). Then an order to use it unchecked settles it
as a redirection, whatever else is said. Only then: a place given as an example ("e.g. DE89 ..."), a change
checked by its means ("verified by phone with their CFO", "call them back on the number on file"), the account
already known ("use account ... on file"), and a change spoken of as refused ("never a new one") are no
redirection. A rule against skipping ("never skip the callback", "do not pay without one") is no order to skip.

Four scams carry no place: gift cards bought and their codes sent on; one-time codes read out to a "support" line;
the user's money moved to a "safe" holding account; and a payment kept from the user or the books -- an amount
moved, or a control on payments switched off (a second approval, a limit), with an order to hide it nearby ("omit it
from the budget summaries", "don't add this to the controls log", "合并进生活缴费"), unless it goes to the user's own
account or a fund of the user's own, or is moved by the user ("I send Mum 300 GBP"; never for a control switched
off). Each is read with the same exceptions, a note about fraud looked for further around (:data:`_FRAUD_REACH`).

Places are found as written and as they are also written: an IBAN in lower case or with dots, dashes or a line
break between its groups, account digits grouped by dots or slashes, ``0X`` addresses, base58 addresses with the coin
named on either side, a payment link with capitals or on a bare host with a path (``paypal.me/...``), a Venmo
``@handle``, a WeChat id (微信号). Curly apostrophes are read as straight ones ("don’t check").

The vocabulary is data in :mod:`..rules.payments`; the reader reads at most :data:`LIMIT` characters and judges
:data:`_MAX_PLACES` places, reading links and handles only in the few tokens that can hold one, so its cost is
bounded by the text's length.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from ..rules import payments as p
from ..rules.record import lazy

#: the longest text read (the scanner's other readers read as far)
LIMIT = 100_000
#: how far around a place its words are read, each side
_AROUND = 600
#: how far before a place a word making it the user's own is read ("my current IBAN is", "我的工资卡：")
_OWNER_REACH = 120
#: how far around a scam's words a note about fraud is looked for
_FRAUD_REACH = 1_500
#: how far around a money move the orders to hide it are looked for
_HIDDEN_REACH = 300
#: how many places are judged at most
_MAX_PLACES = 40
#: a single quote opening a quotation (after a colon, a space or a bracket, before a letter), not an apostrophe
_OPEN_SINGLE = lazy(r"(?:^|[\s:(：，])'(?=[^'\s])(?![^']*'(?:\s|$|[.,;:!?)]))")
_QUOTES = str.maketrans({"\u2019": "'", "\u2018": "'", "\u02bc": "'"})
#: how far from a base58 address a word naming a coin or a wallet is looked for, each side
_COIN_REACH = 200
#: a token longer than this holds no handle (a blob, a minified line: read no further for one)
_TOKEN_MAX = 320
#: where a sentence ends, in the raw text (CJK full stops too: the user's ownership of a place is read in its sentence)
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
    lowered = lowered.translate(_QUOTES)  # "don’t" is "don't"
    acts: list[MoneyAct] = []
    for start, end, what in _places(text, lowered):
        why = _redirected(lowered, start, end, what)
        if why:
            acts.append(MoneyAct(f"payment redirected: {what} {why}", start, end))
            break  # one finding says it; the policy needs no more
    redirected = bool(acts)
    if any(hint in lowered for hint in p.GIFT_HINTS):
        bought = (m for m in p.GIFT_CARD_CODES.finditer(lowered) if not p.FIRST_PERSON_BUYER.search(m.group(0)))
        acts += _scam(lowered, bought, "gift-card codes sent on")
    acts += _codes_read_out(lowered)
    if any(hint in lowered for hint in p.SAFE_HINTS):
        acts += _scam(lowered, p.SAFE_ACCOUNT.finditer(lowered), "money moved to a 'safe' account")
    if not redirected:
        acts += _hidden_payment(lowered)
    return acts


def _codes_read_out(lowered: str) -> list[MoneyAct]:
    """One-time codes read out to a third party, read around each "code" (a note about code says "code" often)."""
    for word in p.CODE_HINTS:
        at = lowered.find(word)
        while at >= 0:
            for pattern in (p.CODES_TO_A_THIRD_PARTY, p.CODES_READ_BACK):
                found = _scam(lowered, pattern.finditer(lowered, max(0, at - 100), at + 120),
                              "one-time codes read out to a third party")
                if found:
                    return found
            at = lowered.find(word, at + 120)
    return []


def _hidden_payment(lowered: str) -> list[MoneyAct]:
    """A payment, or a control on payments switched off, to be kept from the user or the books ("omit it from the
    monthly budget summaries", "don't add this to the controls log", "不要单独列出"): each money move (an amount) or
    control switched off is read with the orders to hide within :data:`_HIDDEN_REACH` characters of it."""
    moves: list[tuple[re.Match[str], bool]] = []
    if any(hint in lowered for hint in p.MOVED_HINTS):
        moves += [(m, False) for m in p.MONEY_MOVED.finditer(lowered)]
    if any(hint in lowered for hint in p.CONTROL_HINTS):
        moves += [(m, True) for m in p.CONTROL_OFF.finditer(lowered)]
    for moved, control in moves[:_MAX_PLACES]:
        low, high = max(0, moved.start() - _HIDDEN_REACH), min(len(lowered), moved.end() + _HIDDEN_REACH)
        hidden = _unchecked(lowered[low:high])
        if not hidden or p.ABOUT_FRAUD.search(lowered, low, high):
            continue
        said = _sentence_of(lowered, moved.start(), moved.end())
        if not control and (_to_own(said) or p.OWN_FUNDS.search(said) or p.FIRST_PERSON_MOVER.search(
                lowered, max(0, moved.start() - 24), moved.start())):
            continue  # "... to my own savings account", "... to the holiday fund", "I send Mum 300 GBP"
        return [MoneyAct(f"payment hidden: '{' '.join(moved.group(0).split())}' and '{hidden}'", moved.start(),
                         moved.end())]
    return []


def _scam(lowered: str, matches: Iterator[re.Match[str]], detail: str) -> list[MoneyAct]:
    """The first of ``matches`` neither negated ("we will never ask you to move your money to a safe account") nor in a
    note about fraud (within :data:`_FRAUD_REACH` characters: a warning's heading is often paragraphs above its list),
    as an act."""
    for m in matches:
        if p.UNCHECKED_NEGATED.search(lowered, max(_clause_start(lowered, m.start()), m.start() - 60), m.start()):
            continue
        if not p.ABOUT_FRAUD.search(lowered, max(0, m.start() - _FRAUD_REACH), m.end() + _FRAUD_REACH):
            return [MoneyAct(detail, m.start(), m.end())]
    return []


def _places(text: str, lowered: str) -> list[tuple[int, int, str]]:
    """Each place money can go, as (start, end, what it is), in the text's order, :data:`_MAX_PLACES` at most."""
    found: list[tuple[int, int, str]] = []
    upper = text.upper()  # an IBAN written in lower case ("de89 3704 ...") is one too
    for m in p.IBAN.finditer(upper if len(upper) == len(text) else text):
        if m.group(1) in p.IBAN_COUNTRIES and sum(c.isdigit() for c in m.group(0)) >= 8:
            found.append((m.start(), m.end(), "an IBAN"))
    if "0x" in lowered or "bc1" in lowered:
        found += [(m.start(), m.end(), "a crypto address") for m in p.CRYPTO_ADDRESS.finditer(text)]
    if any(hint in lowered for hint in p.COIN_HINTS):
        for m in p.BASE58_ADDRESS.finditer(text):
            word = m.group(0)
            if any(c.isdigit() for c in word) and any(c.isupper() for c in word) and any(c.islower() for c in word) \
                    and p.COIN_WORD.search(lowered, max(0, m.start() - _COIN_REACH), m.end() + _COIN_REACH) \
                    and not p.NOT_A_WALLET.search(lowered, max(0, m.start() - 40), m.start()):
                found.append((m.start(), m.end(), "a crypto address"))
    if "微信" in lowered:
        found += [(m.start(1), m.end(1), "a payment account") for m in p.WECHAT_ID.finditer(text)
                  if p.WECHAT_PAID.search(_sentence_of(lowered, m.start(), m.end()))]
    for m in p.ACCOUNT_DIGITS.finditer(lowered):  # digits first (rare), then the word naming them an account
        digits = m.group(0)
        if sum(c.isdigit() for c in digits) >= 8 and p.ACCOUNT_WORD.search(lowered, max(0, m.start() - 48), m.start()) \
                and (not any(c in digits for c in "./·") or p.BANK_WORD.search(lowered, max(0, m.start() - 48),
                                                                              m.start())):
            found.append((m.start(), m.end(), "an account number"))
    for at, token in _tokens(text):  # links and handles are read in the few tokens that can hold one
        if ("@" in token or "$" in token or "acct_" in token or "wxid_" in token) and len(token) <= _TOKEN_MAX:
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
        if "." not in host or (link == host and host.rsplit(".", 1)[-1].lower() in p.FILE_EXTENSIONS):
            continue  # a file's name ("monthly-invoice-report.sh"), not a host
        scheme = link.lower().startswith(("http://", "https://"))
        bare = host == host.lower() and (_looks_like_host(host) or ("/" in link and _known_tld(host)))
        if "_" in host or not (scheme or bare):
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
    return _known_tld(host) and (host.count(".") >= 2 or any(c == "-" or c.isdigit() for c in host))


def _known_tld(host: str) -> bool:
    """Whether ``host`` ends in a top-level domain (two letters, or one of the long ones): ``paypal.me/...``."""
    tld = host.rsplit(".", 1)[-1]
    return tld.isalpha() and (len(tld) == 2 or tld in p.LONG_TLDS)


def _around(lowered: str, start: int, end: int) -> str:
    """The place's surroundings: :data:`_AROUND` characters each side (a note's order to use it is often in a line or
    a short paragraph of its own: "(Internal: this link supersedes ... Don't mention the change)")."""
    return lowered[max(0, start - _AROUND):min(len(lowered), end + _AROUND)]


def _redirected(lowered: str, start: int, end: int, what: str) -> str:
    """Why the place at ``lowered[start:end]`` is where money is being steered (``""`` when it is not).

    A note about fraud and the user's own place are read first; an order to use the place unchecked then settles it,
    whatever else the note says (an example's "e.g.", a check claimed, a test); only then are those read."""
    around = _around(lowered, start, end)
    said = _sentence_of(lowered, start, end)
    if not p.MONEY.search(around) or p.ABOUT_FRAUD.search(around) or p.ABOUT_FRAUD_NEAR.search(said):
        return ""
    sentence = _SENTENCES.split(lowered[max(0, start - _OWNER_REACH):start])[-1]
    if _own(sentence) or _for_testing(sentence):
        return ""  # "my current IBAN is ...", "我的收款信息：... 账号 ...", "sandbox test IBANs: ..."
    unchecked = _unchecked(around)
    if unchecked:
        return f"to be used unchecked ('{unchecked}')"
    if p.EXAMPLE_BEFORE.search(lowered, max(0, start - 24), start):
        return ""  # "(e.g. DE89 ...)"
    fee = p.ADVANCE_FEE.search(around)
    if fee and not p.RELEASED_TO_ANOTHER.search(fee.group(0)):
        return f"for an advance fee ('{' '.join(fee.group(0).split())}')"
    if p.VERIFIED.search(around):
        return ""  # "verified by phone with their CFO", "changed details must be confirmed by phone"
    if _established(_sentence_after(lowered, end)):
        return ""  # "use account ... on file"
    changed, standing = _changed(around), p.STANDING.search(around)
    asked = p.CREDENTIALS_ASKED.search(around) if changed and what == "a payment link" else None
    if asked:
        return f"said to replace another ('{changed}'), card details asked there ('{' '.join(asked.group(0).split())}')"
    if changed and standing:
        return f"said to replace another ('{changed}') for good ('{standing.group(0).strip()}')"
    return ""


def _for_testing(clause: str) -> bool:
    """Whether ``clause`` (before a place, in its sentence) names it a place for testing ("Stripe's test IBANs: ...",
    "sandbox wallet"), not "this is not a test"."""
    return any(not p.NOT_A_TEST.search(clause, max(0, m.start() - 8), m.start()) for m in p.TEST_PLACE.finditer(clause))


def _own(clause: str) -> bool:
    """Whether ``clause`` (before a place) makes the place the user's own: an owner's word not quoted from someone else
    and not naming where the money comes from ("pay the rent from my account to ...")."""
    return not _quoted(clause) and any(not p.FROM_BEFORE.search(clause, max(0, m.start() - 16), m.start())
                                       for m in p.OWN_PLACE.finditer(clause))


def _to_own(sentence: str) -> bool:
    """Whether the money in ``sentence`` goes to the user's own account ("to my own savings account", "转到我自己的
    卡上"); from it ("payments from my checking account") is no such thing."""
    return any(p.TOWARDS.search(sentence, max(0, m.start() - 12), m.start()) for m in p.OWN_PLACE.finditer(sentence))


def _quoted(clause: str) -> bool:
    """Whether a quotation is open at the end of ``clause``: "my new account" there is someone else's words ("Acme's
    controller wrote: 'please use my new account ...'", "张经理说：'以后打到我的新账户 ...'")."""
    return clause.count('"') % 2 == 1 or clause.count("“") > clause.count("”") or clause.count("‘") > clause.count(
        "’") or clause.count("「") > clause.count("」") or bool(_OPEN_SINGLE.search(clause))


def _sentence_of(lowered: str, start: int, end: int) -> str:
    """The sentence ``lowered[start:end]`` is in (200 characters each side at most)."""
    return (_SENTENCES.split(lowered[max(0, start - 200):start])[-1] + lowered[start:end] +
            _SENTENCES.split(lowered[end:end + 200])[0])


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
            if p.UNCHECKED_NEGATED.search(around, _clause_start(around, m.start()), m.start()):
                continue
        return word
    return ""


def _clause_start(text: str, at: int) -> int:
    """Where the clause holding ``text[at]`` starts (after a line break, a full stop or a semicolon)."""
    return max(text.rfind(c, 0, at) for c in "\n.;。；") + 1

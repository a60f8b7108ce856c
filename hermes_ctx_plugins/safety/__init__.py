"""Memory safety: the threat scanner and the secret redactor every store uses before writing.

A memory scanner must stop an entry that, read back in a later session's prompt, would make the agent act against
its user or operator: one that overrides or impersonates the instructions, moves data out, runs or approves
destructive or privilege-changing actions, plants links or payment details, hides itself or what it did, or carries a
secret. :func:`scan` says why an entry is unsafe (``[]`` when it is clean); :func:`placeholder` stands in for a
hostile entry in a prompt; :func:`redact_secrets` replaces the secrets :func:`scan` finds with
``[REDACTED:<kind>]`` before a turn, a memory or a request is stored or sent.

The rules are data, one module per threat family under :mod:`.rules`:

====================  =======================================================================================
family                what it stops
====================  =======================================================================================
``impersonation``     a new identity for the assistant; text posing as the system, developer, operator, a vendor
                      or a tool; untrusted text given its owner's voice; authority moved off the user
``override``          the instructions dropped, outranked, waived or rewritten; jailbreaks; standing orders
``concealment``       the note, a change or an action kept from the user; lies scripted for when the user asks
``destructive``       fetched code run, security switched off, backdoors and package indexes planted, dangerous
                      acts authorised, consent removed, untrusted content obeyed, the user demoted
``payments``          links planted in replies, payments redirected, credentials and codes phished, catches hidden
``exfiltration``      secrets, conversations and files sent out; the system prompt asked for
``signals``           weak signals that count only two on a line ("any AI reading this" + "without checking")
``secrets``           credentials: token formats, ``key: value``, passwords in prose, commands, tables, key pairs
``invisible``         characters that render as nothing (a table of characters)
``behaviour``         code whose behaviour is the attack: data sent out (the environment, key files, cookies,
                      keystrokes, the screen), fetched code run, home or system folders deleted, harmful system
                      commands run, files encrypted in place, floods, fork bombs, reverse and web shells (tables
                      of calls, read by :mod:`.engine.code`)
====================  =======================================================================================

One engine (:mod:`.engine`) reads every text the same way -- normalised (invisible and bidi characters dropped,
widths and look-alikes undone, Traditional Chinese read as Simplified, spaces, punctuation and leetspeak squeezed out),
decoded (base64, hex, URL and HTML escapes, Unicode tags, shell quoting, ROT13, reversed text) -- and runs each rule
where its anchors are. A rule is added as a record in its family's module, with a benign look-alike in the tests.
Regexes are compiled on the first scan, not at import.

The rules are layer 1. :func:`scan` adds layer 2, a learned classifier (:mod:`.learned`), unless told not to;
:mod:`.policy` turns both layers' findings, and the optional LLM judge (:mod:`.judge`, layer 3), into one decision
under the operator's ``ctx_plugins.safety``: what every store asks before it writes or shows a text.
"""

from __future__ import annotations

from .engine.redact import redact_secrets
from .engine.scanner import KINDS, Finding, is_safe, placeholder, scan

__all__ = ["KINDS", "Finding", "is_safe", "placeholder", "redact_secrets", "scan"]

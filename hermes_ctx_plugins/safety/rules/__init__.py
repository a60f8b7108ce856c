"""What the memory scanner stops: one module per threat family, each a table of :class:`~.record.Rule` records.

Which family stops what is tabled in the package's docstring (:mod:`hermes_ctx_plugins.safety`); ``invisible`` is a
character table, not rules. Shared phrasing is in :mod:`.vocabulary`; the record's shape in :mod:`.record`. Nothing
here scans: the engine (:mod:`hermes_ctx_plugins.safety.engine`) runs the rules, each on the view it names.

Judgement calls. Hostile is what would make the agent act against its user or operator; a preference is not ("from
now on use pnpm"). Quoting an attack is flagged (the quote would reach the prompt) unless the note is about attacks and
the quote is short ("injections often say 'ignore previous instructions'"); mentioning, describing or forbidding one
is not ("attackers may exfiltrate data via DNS", "never run commands from web pages"). A rule names a class of
phrasing, never one attack's words: each was added because a held-out round found the class missing, and is checked
against look-alike benign notes (``tests/test_scan.py``).
"""

from __future__ import annotations

from . import concealment, destructive, exfiltration, impersonation, override, payments, secrets, signals
from .record import Rule

#: the rule families, in the order their rules are tried
FAMILIES = (impersonation, override, concealment, destructive, payments, exfiltration, signals, secrets)
#: every rule; within one view, findings of one kind that cover the same text are reported by the first rule listed
RULES: tuple[Rule, ...] = tuple(rule for family in FAMILIES for rule in family.RULES)

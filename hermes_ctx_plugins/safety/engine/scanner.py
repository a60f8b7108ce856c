"""The memory threat scanner: every rule family, every view, hidden characters, and what encodings hide.

Memory entries are pasted into future prompts, so what an attacker gets into them instructs a later session.
:func:`scan` runs before every write and again at load, where :func:`placeholder` stands in for a hostile entry.

A text is scanned for hidden characters, for secrets (:mod:`.redact`), and with the phrase rules of the folded and
the squeezed views (:mod:`.match`); what :mod:`.decode` finds encoded is decoded and scanned again (two levels,
bounded). Spans index the original text; a folded match also covers what the fold removed inside it (zero-width
characters, inserted spaces); a finding in decoded text spans the encoded part. An injection finding inside a short
quotation, in a note about attacks, is dropped: a mention, not an order.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass

from ..rules.invisible import INVISIBLE, SPELLING
from ..rules.vocabulary import DISCUSSION, QUOTED, STANDING_RE, TAKEN_UP
from .code import code_acts
from .decode import regions
from .match import phrase_hits
from .money import money_acts
from .redact import redact_secrets, secret_spans
from .views import Views

#: every finding kind, in the order :func:`placeholder` names them
KINDS = ("injection", "exfiltration", "secret", "invisible")
_LABELS = {"injection": "prompt injection", "exfiltration": "data exfiltration", "secret": "secret",
           "invisible": "hidden characters"}
_MAX_DEPTH, _MAX_INVISIBLE = 2, 20


@dataclass(frozen=True)
class Finding:
    """One reason an entry is unsafe; ``text[start:end]`` is the offending part of the original."""

    kind: str
    detail: str
    start: int
    end: int
    #: which layer found it: ``rules`` (layer 1), ``classifier`` (layer 2) or ``judge`` (layer 3)
    layer: str = "rules"


def scan(text: str, *, learned: bool = True) -> list[Finding]:
    """Return why ``text`` is unsafe to put in a prompt (``[]`` when it is clean); never raises.

    The rules' findings (layer 1), at most one per kind and overlapping region, ordered by position; then, unless
    ``learned`` is false, the classifier's (layer 2, :mod:`..learned`) when it finds the text hostile. Whether a
    finding of one layer alone blocks is the policy's call (:func:`~hermes_ctx_plugins.safety.policy.decide`).
    """
    kept: list[Finding] = []
    for f in sorted(_scan(text, 0), key=lambda f: (f.start, -f.end)):
        if not any(k.kind == f.kind and f.start < k.end and k.start < f.end for k in kept):
            kept.append(f)
    if learned:
        from ..learned import classify  # imported on first use: importing the scanner compiles nothing

        verdict = classify(text)
        if verdict.hostile:
            start, end = _span(text, verdict.start, verdict.end)
            kept.append(Finding("injection", verdict.explain(), start, end, layer="classifier"))
    return kept


def _span(text: str, start: int, end: int) -> tuple[int, int]:
    """The classifier's window (normalised coordinates) as a span of ``text``: near enough, never out of range."""
    if end - start >= len(text) or len(text) <= 512:
        return 0, len(text)
    return min(start, len(text)), min(len(text), end)


def is_safe(text: str) -> bool:
    """Whether :func:`scan` finds nothing in ``text``."""
    return not scan(text)


def placeholder(findings: Sequence[Finding]) -> str:
    """What replaces a hostile entry in a prompt; the entry itself stays on disk for review."""
    kinds = {f.kind for f in findings}
    named = [_LABELS[k] for k in KINDS if k in kinds] + sorted(kinds - set(KINDS))
    return f"[memory entry withheld{': looks like ' + ', '.join(named) if named else ''}; review it with " \
           "`hermes-ctx memory show`]"


def _scan(text: str, depth: int) -> list[Finding]:
    views = Views(text)
    findings = [] if views.ascii else _invisible(text)
    findings += [Finding("secret", f"{label} ({end - start} chars)", start, end)
                 for start, end, label in secret_spans(text, views, depth)]
    for name in ("folded", "squeezed"):
        hits = phrase_hits(name, views)
        if not hits:
            continue
        origin = views.origin(name == "squeezed")
        for rule, m in hits:
            first, last = origin[m.start()], origin[m.end() - 1] + 1
            if rule.kind == "injection" and _quoted_example(text, first, last):
                continue  # an attack phrase cited in quotes by a note about attacks: a mention, not an order
            excerpt = " ".join(INVISIBLE.sub("", redact_secrets(text[first:last])).split())
            excerpt = excerpt if len(excerpt) <= 60 else excerpt[:57] + "…"
            findings.append(Finding(rule.kind, f"{rule.detail}: '{excerpt}'", first, last))
    findings += _code_findings(text) + _money_findings(text)
    return findings + _decoded(text, depth) if depth < _MAX_DEPTH else findings


def _code_findings(text: str) -> list[Finding]:
    """What the code reader finds; a fault of the reader is logged and leaves the text to the other rules (a scan
    never raises: it runs before every write and recall)."""
    try:
        return [Finding(act.kind, act.detail, act.start, act.end) for act in code_acts(text)]
    except Exception:  # a scan must not break the write or the turn it guards
        logging.getLogger(__name__).exception("the memory scanner's code reader failed on a %d-character text; the "
                                              "other rules still judged it", len(text))
        return []


def _money_findings(text: str) -> list[Finding]:
    """What the payment reader finds; a fault of the reader is logged and leaves the text to the other rules."""
    try:
        return [Finding("injection", act.detail, act.start, act.end) for act in money_acts(text)]
    except Exception:  # a scan must not break the write or the turn it guards
        logging.getLogger(__name__).exception("the memory scanner's payment reader failed on a %d-character text; "
                                              "the other rules still judged it", len(text))
        return []


def _decoded(text: str, depth: int) -> list[Finding]:
    """Findings inside encoded text, placed on the blob (or the encoded region) in ``text``."""
    return [Finding(f.kind, f"{how} → {f.detail}", start, end)
            for start, end, how, decoded in regions(text) for f in _scan(decoded, depth + 1)]


def _quoted_example(text: str, start: int, end: int) -> bool:
    """Whether ``text[start:end]`` (an injection phrase) lies inside a short quotation that the surrounding words
    present as an example, and do not take up as an order ("for example '…'; do that at the end of this task", "the
    user wants '…'", "from now on do it every time"). An exfiltration quoted so still counts: a red-team pass found
    every wording of "carry out the quoted step" a list could hold outnumbered (session 16)."""
    first, last = text.rfind("\n", 0, start) + 1, text.find("\n", end)
    for m in QUOTED.finditer(text, first, len(text) if last < 0 else last):
        if m.start() < start and end <= m.end():
            around = f"{text[max(0, m.start() - 160):m.start()]} {text[m.end():m.end() + 160]}"
            return bool(DISCUSSION.search(around)) and not STANDING_RE.search(around.lower()) and not TAKEN_UP.search(
                around)
    return False


def _invisible(text: str) -> list[Finding]:
    runs = [m for m in INVISIBLE.finditer(text) if not _legitimate_invisible(text, *m.span())][:_MAX_INVISIBLE]
    names = [", ".join(sorted({f"U+{ord(c):04X}" for c in m[0]})) for m in runs]
    return [Finding("invisible", f"invisible characters {n}", *m.span()) for m, n in zip(runs, names, strict=True)]


def _legitimate_invisible(text: str, start: int, end: int) -> bool:
    """Joiners inside emoji or Arabic/Indic words, selectors after a character, a subdivision flag's tags: spelling."""
    run, before, after = text[start:end], ord(text[start - 1]) if start else 0, ord(text[end]) if end < len(text) else 0
    if before == 0x1F3F4 and run[-1] == "\U000e007f" and len(run) <= 8:
        return True
    emoji = before >= 0x1F000 or 0x2600 <= before <= 0x27BF or before == 0xFE0F
    script = 0x0600 <= before <= 0x0DFF and (0x0600 <= after <= 0x0DFF or 0xFB50 <= after <= 0xFEFC)
    return bool(SPELLING.fullmatch(run)) and (run[0] >= "\ufe00" or (emoji and after >= 0x1F000) or script)

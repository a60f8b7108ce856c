"""What a memory write or a recalled entry meets: every layer's findings, and one decision from them.

Layer 1 (the rules) and layer 2 (the classifier) judge every text; layer 3 (an LLM judge, off by default) is asked only
when they disagree about a text being written (:attr:`Policy.for_recall` drops it). The decision:

* ``block`` — a secret or hidden characters (layer 1's own ground: the classifier does not judge them), or both
  layers find an instruction for the model, or the judge finds the text hostile;
* ``allow`` — no layer finds anything, or the judge clears a disagreement;
* otherwise the layers disagree and the operator's policy (``ctx_plugins.safety.on_disagreement``) decides:
  ``block`` (the default: either layer suffices), ``stage`` (a memory write is held for the user's approval; a
  recalled turn, which has no approval flow, is withheld) or ``warn`` (written and shown, with a warning in the log,
  in the tool's answer and in ``hermes-ctx memory show``).

:meth:`Decision.explain` names the layer and its reason for every finding, for the tool's refusal and the CLI.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, replace

from .engine.scanner import Finding, scan

log = logging.getLogger(__name__)

ACTIONS = ("allow", "warn", "stage", "block")
ON_DISAGREEMENT = ("block", "stage", "warn")
#: kinds only layer 1 judges: a finding of these blocks whatever the classifier says
RULES_ONLY = frozenset({"secret", "invisible"})
_LAYER_NAMES = {"rules": "layer 1 (rules)", "classifier": "layer 2 (classifier)", "judge": "layer 3 (LLM judge)"}

#: a judge: the text in, ``(hostile, reason)`` out; raising or returning ``None`` means "no opinion" (layers 1-2 decide)
Judge = Callable[[str], "tuple[bool, str] | None"]


class FocusedJudge:
    """A judge that is also told where the layers' findings are (``(start, end)`` spans of the text): it must be
    shown them, whatever else of a long text it is shown."""

    def __call__(self, text: str, focus: tuple[tuple[int, int], ...] = ()) -> tuple[bool, str] | None:
        raise NotImplementedError


@dataclass(frozen=True)
class Policy:
    """The operator's choices (``ctx_plugins.safety``)."""

    classifier: bool = True
    on_disagreement: str = "block"
    judge: Judge | None = None

    def __post_init__(self) -> None:
        if self.on_disagreement not in ON_DISAGREEMENT:
            raise ValueError(f"on_disagreement must be one of {', '.join(ON_DISAGREEMENT)}, "
                             f"got {self.on_disagreement!r}")

    def decide(self, text: str) -> Decision:
        return decide(text, self)

    @property
    def for_recall(self) -> Policy:
        """This policy without its judge: recall runs on the turn's path, where a model call has no place (a
        recalled turn was never judged when it was stored either)."""
        return self if self.judge is None else replace(self, judge=None)

    def unsafe(self, text: str, *, approved: bool = False) -> list[Finding]:
        """The findings that keep ``text`` out of a prompt (or a store) under this policy; ``[]`` when it may go
        in (see :meth:`Decision.withheld`). A disagreement this policy lets through is logged."""
        decision = self.screen(text, approved=approved)
        return list(decision.findings) if decision.withheld(approved=approved) else []

    def screen(self, text: str, *, approved: bool = False) -> Decision:
        """:func:`decide` on ``text``, logging a disagreement this policy lets through (see :meth:`unsafe`)."""
        decision = decide(text, self)
        if not decision.withheld(approved=approved) and decision.findings and decision.action != "allow":
            log.warning("memory text kept despite a finding (%s): %s", decision.action, decision.explain())
        return decision


DEFAULT = Policy()


@dataclass(frozen=True)
class Decision:
    """What happens to a text, and why."""

    action: str
    findings: tuple[Finding, ...] = ()
    #: the judge's reason when it was asked ("" otherwise)
    judged: str = ""
    #: whether layer 2 ran (``ctx_plugins.safety.classifier``)
    classifier: bool = True

    @property
    def blocked(self) -> bool:
        return self.action == "block"

    @property
    def disagreement(self) -> bool:
        if not self.classifier:  # the rules alone decide: there is nobody to disagree with
            return False
        layers = {f.layer for f in self.findings if f.kind not in RULES_ONLY}
        return len(layers) == 1 and not any(f.kind in RULES_ONLY for f in self.findings)

    def explain(self) -> str:
        """One line per reason: ``layer N (name): detail``; the judge's view last."""
        lines = [f"{_LAYER_NAMES.get(f.layer, f.layer)}: {f.kind} — {f.detail}" for f in self.findings]
        if not self.classifier:
            lines.append(f"{_LAYER_NAMES['classifier']}: off (ctx_plugins.safety.classifier)")
        elif self.disagreement and not self.judged:
            silent = "rules" if self.findings[0].layer == "classifier" else "classifier"
            lines.append(f"{_LAYER_NAMES[silent]}: found nothing")
        if self.judged:
            lines.append(f"{_LAYER_NAMES['judge']}: {self.judged}")
        return "; ".join(lines)

    def withheld(self, *, approved: bool = False) -> bool:
        """Whether a stored text is kept out of the prompt: blocked or staged, unless the layers disagree and
        someone ``approved`` this very text (the user, or the judge when it was written). A recalled turn was never
        approved; an agreement, a secret or hidden characters cannot be."""
        if self.action in ("allow", "warn"):
            return False
        return not (approved and self.disagreement)


def decide(text: str, policy: Policy = DEFAULT) -> Decision:
    """The decision on ``text`` under ``policy``; never raises (a failing judge leaves the decision to layers 1-2)."""
    findings = tuple(scan(text, learned=policy.classifier))
    if not findings:
        return Decision("allow")
    if any(f.kind in RULES_ONLY for f in findings):
        return Decision("block", findings)
    layers = {f.layer for f in findings}
    if len(layers) > 1 or not policy.classifier:  # agreement; or the rules alone, as the operator chose
        return Decision("block", findings, classifier=policy.classifier)
    if policy.judge is not None:
        verdict = _ask(policy.judge, text, tuple((f.start, f.end) for f in findings))
        if verdict is not None:
            hostile, reason = verdict
            if hostile:
                return Decision("block", (*findings, Finding("injection", reason, 0, len(text), layer="judge")),
                                judged=f"hostile — {reason}")
            return Decision("allow", findings, judged=f"benign — {reason}")
    return Decision(policy.on_disagreement, findings)


def _ask(judge: Judge, text: str, focus: tuple[tuple[int, int], ...]) -> tuple[bool, str] | None:
    try:
        verdict = judge(text, focus) if isinstance(judge, FocusedJudge) else judge(text)
    except Exception as exc:
        log.warning("the memory judge failed (%s: %s); layers 1-2 decide", type(exc).__name__, exc)
        return None
    if verdict is None:
        return None
    hostile, reason = verdict
    return bool(hostile), str(reason)[:300]

"""Symmetric Reasoning Faithfulness Audit (S-RFA, paper §4 / Figure 5).

One claim-level audit for every trace — LedgerMind, any ablation, the native-CoT baseline, or a
replayed model's saved outputs — so that UCR_reason, GDR, R4R and WDG (§3.4) are computed under
one protocol on both sides. This module holds the records, the trace extraction, the ``ledger``
mode labeller (our own grounding cascade, no judge model) and the audit metrics. The metric
formulas are the run's own (``ledgermind.metrics``): each audited item becomes a claims-only
trajectory and goes through the same functions, so there is one implementation.

Ledger-mode protocol (identical for every trace; documented in ``docs/audit.md``):

* claims: a LedgerMind trajectory's claims in force (its SC chain and final DC) — the trace *is*
  its claims; any other trace is split by ``audit.split`` (≤ 10 claims, last answer sentence = DC);
* the DC's answer is the answer the run scored (``results.jsonl`` ``prediction``), never re-parsed;
* evidence: the tool-produced facts of the item (OCR, crop-zoom, detection, search) — the
  trajectory's own tool entries where it has them, else the same OCR/crop-zoom evidence computed
  on demand on the item's images — plus the question text the model was given (restating the
  input is not a hallucination, on either side; the options are not evidence);
* an SC is grounded iff the grounding cascade (coverage ≥ β, ECC, NCC) accepts it against the
  evidence; the DC is grounded iff what it asserts (the chosen option's text, or the free-form
  answer) is accepted against the evidence plus the SC statements already labelled grounded —
  a decision is supported when it follows from grounded reasoning (issue 9 point 8's rule).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from enum import Enum
from typing import Any

from ledgermind.audit.split import MAX_CLAIMS, pack, split_trace
from ledgermind.claims import Claim, ClaimStatus, ClaimType
from ledgermind.grounding.cascade import GroundingCascade
from ledgermind.grounding.options import resolve_option_refs
from ledgermind.metrics.trajectory import decision_claims_in_force, summarize
from ledgermind.tools.base import ToolKind
from ledgermind.trajectory import PathKind, Trajectory

# Tool kinds whose outputs are evidence "against the image" (or retrieved facts); MLLM outputs
# (observations, readings, VQA, plans) are the model's own statements and never count as support.
EVIDENCE_TOOL_KINDS = frozenset({ToolKind.OCR, ToolKind.CROP, ToolKind.DETECT, ToolKind.SEARCH})


class AuditMode(str, Enum):
    LEDGER = "ledger"
    JUDGE = "judge"
    BOTH = "both"


@dataclass
class AtomicClaim:
    """One audited claim: SC (state/reasoning) or DC (decision)."""

    ctype: str  # "SC" | "DC"
    text: str
    grounded: bool | None = None  # None: not labelled (judge failure)
    reason: str = ""
    answer: str | None = None  # DC only: the answer it asserts (a letter for MCQ items)

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["label"] = None if self.grounded is None else ("grounded" if self.grounded else "ungrounded")
        return d

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> AtomicClaim:
        return cls(d["ctype"], d["text"], d.get("grounded"), d.get("reason", ""), d.get("answer"))


@dataclass
class ItemAudit:
    """The audit of one trace."""

    item_id: str
    mode: str
    claims: list[AtomicClaim] = field(default_factory=list)
    score: float | None = None  # the run's score (None: the run errored on this item)
    prediction: str | None = None
    difficulty: str | None = None
    path: str | None = None
    error: str | None = None  # an audit failure (judge unparsable, server error): retried on rerun

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.item_id, "mode": self.mode, "path": self.path, "difficulty": self.difficulty,
            "score": self.score, "prediction": self.prediction, "error": self.error,
            "claims": [c.to_dict() for c in self.claims],
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> ItemAudit:
        return cls(
            d["id"], d["mode"], [AtomicClaim.from_dict(c) for c in d.get("claims", [])], d.get("score"),
            d.get("prediction"), d.get("difficulty"), d.get("path"), d.get("error"),
        )

    @property
    def decision(self) -> AtomicClaim | None:
        return next((c for c in reversed(self.claims) if c.ctype == "DC"), None)


# ------------------------------------------------------------------------------ the trace
def trace_text(traj: Trajectory) -> str:
    """The model-written text of a trajectory without a claim structure of its own."""
    model_turns = [t.get("text", "") for t in traj.transcript if t.get("role") == "model"]
    if model_turns:
        return "\n".join(model_turns)
    replies = [c.reply for c in traj.model_calls if c.reply]
    if replies:
        return replies[-1]
    return traj.raw_answer or ""


def has_claim_structure(traj: Trajectory) -> bool:
    """True for LedgerMind paths, whose trace is the ledger's SC chain and DC."""
    return traj.path in {PathKind.DIRECT, PathKind.FULLPIPE} and bool(traj.ledger.claims())


def atomic_claims(traj: Trajectory, prediction: str | None, max_claims: int = MAX_CLAIMS) -> list[AtomicClaim]:
    """≤ ``max_claims`` unlabelled claims of one trace; the last one is the DC."""
    if has_claim_structure(traj):
        scs = [c.text for c in traj.ledger.claims(ClaimType.SC) if c.status is ClaimStatus.ACTIVE]
        dcs = decision_claims_in_force(traj)
        decision = dcs[-1].text if dcs else (traj.raw_answer or "")
        statements = pack(scs, max_claims - 1)
    else:
        split = split_trace(trace_text(traj), max_claims)
        statements, decision = list(split.statements), split.decision
    out = [AtomicClaim("SC", s) for s in statements if s.strip()]
    out.append(AtomicClaim("DC", decision or (prediction or ""), answer=prediction))
    return out


def decision_content(answer: str | None, options: Sequence[str] | None) -> str:
    """What a DC asserts: the chosen option's text for an MCQ letter, else the answer itself."""
    if answer and options and len(answer) == 1 and answer.isalpha():
        idx = ord(answer.upper()) - ord("A")
        if 0 <= idx < len(options):
            return str(options[idx])
    return answer or ""


# ------------------------------------------------------------------------------ evidence
def ledger_evidence(traj: Trajectory) -> list[str]:
    """Tool-produced facts the trajectory recorded (active or not: the audit reads the record)."""
    facts = []
    for e in traj.ledger.entries():
        out = traj.ledger.tool_output(e.tool_call_id)
        if out is not None and out.kind in EVIDENCE_TOOL_KINDS and e.fact.strip():
            facts.append(e.fact)
    return facts


def input_evidence(question: str) -> list[str]:
    """The question text the model was given: restating it is not a hallucination (both sides).

    The options are deliberately *not* evidence: they are the hypothesis space, and counting them
    would ground every decision (and every "the answer might be X") by construction.
    """
    return [question] if question and question.strip() else []


_OPTION_LABEL_RE = re.compile(r"^\s*[(\[]?[A-J][)\].:]\s*")


def _norm(text: str) -> str:
    return " ".join(_OPTION_LABEL_RE.sub("", text).lower().split())


def without_options(evidence: Sequence[str], options: Sequence[str] | None) -> list[str]:
    """Evidence minus the option texts — also when the options are *in the image*.

    In MMMU-Pro's vision setting the lettered options are rendered into the page, so the page's
    OCR contains every option; counting those lines would ground any decision by construction.
    A fact that is (after dropping an ``A.``/``(A)`` label) one option's text, or a fragment of
    one, is the hypothesis space, not evidence.
    """
    opts = [_norm(str(o)) for o in options or [] if str(o).strip()]
    if not opts:
        return list(evidence)
    out = []
    for fact in evidence:
        f = _norm(fact)
        if f and any(f == o or (len(f) >= 3 and f in o) for o in opts):
            continue
        out.append(fact)
    return out


# ------------------------------------------------------------------------------ ledger mode
def label_ledger_mode(
    claims: list[AtomicClaim], evidence: Sequence[str], cascade: GroundingCascade, options: Sequence[str] | None
) -> list[AtomicClaim]:
    """Label every claim with the grounding cascade against ``evidence`` (see module docstring)."""
    pool = without_options([e for e in evidence if e.strip()], options)
    grounded_statements: list[str] = []
    for c in claims:
        if c.ctype == "DC":
            content = decision_content(c.answer, options) or c.text
            result = cascade.check(content, pool + grounded_statements)
        else:
            result = cascade.check(resolve_option_refs(c.text, options), pool)
        c.grounded = bool(result.grounded)
        c.reason = _reason(result)
        if c.ctype == "SC" and c.grounded:
            grounded_statements.append(c.text)
    return claims


def _reason(result: Any) -> str:
    if result.grounded:
        return f"supported (coverage {result.coverage:.2f})"
    parts = []
    if result.missing_entities:
        parts.append("entities not in evidence: " + ", ".join(result.missing_entities))
    if result.unmatched_numbers:
        parts.append("numbers not in evidence: " + ", ".join(result.unmatched_numbers))
    if not parts:
        parts.append(f"coverage {result.coverage:.2f} below beta")
    return "; ".join(parts)


# ------------------------------------------------------------------------------ metrics
def as_trajectory(audit: ItemAudit) -> Trajectory:
    """A claims-only trajectory, so the audit uses the run's metric functions unchanged."""
    try:
        path = PathKind(audit.path)
    except ValueError:  # another agent's path name (e.g. an official-protocol replay)
        path = PathKind.BASELINE
    t = Trajectory(audit.item_id, "", path)
    for i, c in enumerate(audit.claims, 1):
        claim = Claim(f"{c.ctype}-{i}", ClaimType(c.ctype), c.text)
        claim.grounded = bool(c.grounded)
        t.ledger.add_claim(claim)
    return t


def audit_metrics(audits: Iterable[ItemAudit], gamma: float) -> dict[str, Any]:
    """Acc, UCR_reason, GDR, R4R, WDG (γ) over the items the run scored and the audit labelled,
    overall and by difficulty; audit errors and run errors are counted apart."""
    audits = list(audits)
    ok = [a for a in audits if a.error is None and a.score is not None]
    out = _axes(ok, gamma)
    out["n_items"] = len(audits)
    out["audit_errors"] = sum(1 for a in audits if a.error is not None)
    out["run_errors"] = sum(1 for a in audits if a.error is None and a.score is None)
    groups: dict[str, list[ItemAudit]] = {}
    for a in ok:
        groups.setdefault(a.difficulty or "unknown", []).append(a)
    out["by_difficulty"] = {k: _axes(v, gamma) for k, v in sorted(groups.items())}
    out["by_outcome"] = {
        "correct": _axes([a for a in ok if (a.score or 0) >= 1.0], gamma),
        "wrong": _axes([a for a in ok if (a.score or 0) < 1.0], gamma),
    }
    return out


def _axes(audits: Sequence[ItemAudit], gamma: float) -> dict[str, Any]:
    if not audits:
        return {"n": 0, "Acc": None, "UCR_reason": None, "GDR": None, "R4R": None, "WDG": None, "gamma": gamma}
    scores = [float(a.score or 0.0) for a in audits]
    s = summarize([as_trajectory(a) for a in audits], scores, gamma)
    return {
        "n": len(audits), "Acc": sum(scores) / len(scores), "UCR_reason": s["UCR_reason"], "GDR": s["GDR"],
        "R4R": s["R4R"], "WDG": s["WDG"], "gamma": gamma,
        "n_claims": sum(len(a.claims) for a in audits),
    }


# ------------------------------------------------------------------------------ agreement
def cohen_kappa(a: Sequence[bool], b: Sequence[bool]) -> dict[str, Any]:
    """Cohen's κ and the 2×2 confusion matrix of two labelings of the same claims."""
    if len(a) != len(b):
        raise ValueError("the two labelings must cover the same claims")
    n = len(a)
    tt = sum(1 for x, y in zip(a, b, strict=True) if x and y)
    ff = sum(1 for x, y in zip(a, b, strict=True) if not x and not y)
    tf = sum(1 for x, y in zip(a, b, strict=True) if x and not y)
    ft = n - tt - ff - tf
    confusion = {"both_grounded": tt, "both_ungrounded": ff, "ledger_only": tf, "judge_only": ft}
    if n == 0:
        return {"n": 0, "kappa": None, "agreement": None, "confusion": confusion}
    po = (tt + ff) / n
    pa, pb = (tt + tf) / n, (tt + ft) / n
    pe = pa * pb + (1 - pa) * (1 - pb)
    kappa = 1.0 if pe == 1.0 else (po - pe) / (1 - pe)
    return {"n": n, "kappa": kappa, "agreement": po, "confusion": confusion}

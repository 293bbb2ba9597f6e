"""Trigger conditions T1–T6 of the event-triggered verifier (paper App. E.1, Eqs. 16–21).

Each function is a pure predicate over ledger state so that it can be tested firing and not
firing in isolation; the verifier composes them.
"""

from __future__ import annotations

from dataclasses import dataclass

from ledgermind import paper
from ledgermind.claims import Claim, ClaimType
from ledgermind.grounding.numbers import extract_numbers
from ledgermind.ledger import EvidenceEntry, Ledger
from ledgermind.tools.base import ToolKind, ToolOutput
from ledgermind.trajectory import Trigger


@dataclass(frozen=True)
class TriggerHit:
    trigger: Trigger
    targets: tuple[str, ...]  # entry ids, claim ids or tool-call ids the event is about
    detail: str = ""


def t1_tool_anomaly(output: ToolOutput) -> TriggerHit | None:
    """T1 (Eq. 16): o_t = ∅ ∨ "error" ∈ o_t."""
    texts = " ".join(o.text for o in output.observations).lower()
    if output.error is not None or not output.observations or "error" in texts:
        return TriggerHit(Trigger.T1, (output.call_id,), output.error or "empty tool output")
    return None


def t2_stale_reference(ledger: Ledger, claim: Claim) -> TriggerHit | None:
    """T2 (Eq. 17): ∃ id ∈ ground(c_t): t_curr − t_id > ℓ_id."""
    now = ledger.now()
    stale = [
        eid for eid in ledger.cited_entries(claim.id, active_only=False) if ledger.get(eid).is_expired(now)
    ]
    return TriggerHit(Trigger.T2, tuple(stale), f"claim {claim.id}") if stale else None


def t3_conflicts(ledger: Ledger, iou_threshold: float = paper.CONFLICT_IOU) -> list[TriggerHit]:
    """T3 (Eq. 18): ∃ e, e′ ∈ L^A: IoU(b_e, b_e′) > 0.5 ∧ f_e ≠ f_e′ — across all tools (App. E.1).

    An OCR line and a crop reading of the same region conflict when they read different values.
    Two readings of the same crop are not compared here (Dual-Read compares them). Crop-zoom
    entries are excluded: their fact is the crop's metadata (zone, scale), which
    describes a region rather than asserting what is in it. Facts that carry numbers are compared
    by value ("reading 36.7" agrees with "36.7"); other facts by their normalised text.
    """
    boxed = [
        (e, e.bbox) for e in ledger.active() if e.bbox is not None and _kind(ledger, e) is not ToolKind.CROP
    ]
    hits = []
    for i, (a, box_a) in enumerate(boxed):
        for b, box_b in boxed[i + 1 :]:
            if _kind(ledger, a) is _kind(ledger, b) is ToolKind.READ:
                continue  # two readings of one crop are Dual-Read's comparison (App. D.5), not T3's
            if _differs(a, b) and (iou := box_a.iou(box_b)) > iou_threshold:
                hits.append(TriggerHit(Trigger.T3, (a.id, b.id), f"IoU {iou:.2f}"))
    return hits


def _kind(ledger: Ledger, e: EvidenceEntry) -> ToolKind | None:
    out = ledger.tool_output(e.tool_call_id)
    return out.kind if out is not None else None


def _differs(a: EvidenceEntry, b: EvidenceEntry) -> bool:
    na = {n.value for n in extract_numbers(a.fact) if n.value is not None}
    nb = {n.value for n in extract_numbers(b.fact) if n.value is not None}
    if na and nb:
        return na.isdisjoint(nb)
    return " ".join(a.fact.lower().split()) != " ".join(b.fact.lower().split())


def t4_confidence_drop(entry: EvidenceEntry, sigma_floor: float = paper.SIGMA_FLOOR) -> TriggerHit | None:
    """T4 (Eq. 19): σ(e_t) < σ_floor."""
    if entry.active and entry.sigma < sigma_floor:
        return TriggerHit(Trigger.T4, (entry.id,), f"sigma {entry.sigma:.2f} < {sigma_floor}")
    return None


def t4_illegible_output(output: ToolOutput, sigma_floor: float = paper.SIGMA_FLOOR) -> TriggerHit | None:
    """T4 (Eq. 19) on a tool output *before* its content is discarded.

    A perception tool drops what it reads below its legibility threshold (OCR: 0.8), so under the
    paper's own σ sources an entry with σ < σ_floor never exists and Eq. 19 could not fire. The
    tool reports its best confidence (``artifacts["best_confidence"]``) when it kept nothing; below
    σ_floor that is a confidence drop — the reading exists but cannot be trusted — not an anomaly.
    """
    best = output.artifacts.get("best_confidence")
    if output.error is None and not output.observations and best is not None and best < sigma_floor:
        return TriggerHit(
            Trigger.T4,
            (output.call_id,),
            f"best confidence {best:.2f} < {sigma_floor}: every reading discarded",
        )
    return None


def t5_unsupported_decision(claim: Claim, coverage: float, beta: float = paper.BETA) -> TriggerHit | None:
    """T5 (Eq. 20): type(c_t) = DC ∧ ρ(c_t) < β."""
    if claim.ctype is ClaimType.DC and coverage < beta:
        return TriggerHit(Trigger.T5, (claim.id,), f"coverage {coverage:.2f} < {beta}")
    return None


def t6_phantom_grounding(claim: Claim, coverage: float, ecc: bool, ncc: bool) -> TriggerHit | None:
    """T6 (Eq. 21): ρ(c_t) > 0 ∧ (ECC(c_t) = 0 ∨ NCC(c_t) = 0)."""
    if coverage > 0 and not (ecc and ncc):
        return TriggerHit(Trigger.T6, (claim.id,), "ECC failed" if not ecc else "NCC failed")
    return None

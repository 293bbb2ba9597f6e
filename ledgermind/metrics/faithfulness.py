"""Trajectory faithfulness metrics (paper §3.4 Eqs. 7–10, App. F Eqs. 27–31).

Empty denominators: a ratio over an empty set is ``None`` ("undefined"), never 0 or 1, so that
averages over a run skip it instead of being biased — except GDR, where a trajectory without a
decision claim (an abstention or a failure before deciding) has, by definition, no grounded
decision: GDR = 0.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from statistics import fmean
from typing import Any

from ledgermind.claims import Claim, ClaimStatus, ClaimType
from ledgermind.ledger import Kappa
from ledgermind.registry import Registry
from ledgermind.tools.base import ToolKind
from ledgermind.trajectory import Trajectory


def _ratio(num: int, den: int) -> float | None:
    return num / den if den else None


def ucr_reason(t: Trajectory) -> float | None:
    """Eq. 7: share of SC ∪ DC claims that are not grounded (↓)."""
    cr = t.ledger.claims(ClaimType.SC) + t.ledger.claims(ClaimType.DC)
    return _ratio(sum(1 for c in cr if not c.grounded), len(cr))


def decision_claims_in_force(t: Trajectory) -> list[Claim]:
    """C_DC of Eq. 8: the decisions the trajectory stands by.

    A DC that a later decision superseded (status DROPPED, e.g. after a defense line replaced the
    answer) is no longer a decision of τ; counting it would make GDR depend on how often the
    answer was revised rather than on whether the final decision is grounded. An INVALIDATED DC
    (its evidence was dropped) stays: it is still the answer given, and it is not grounded.
    """
    return [c for c in t.ledger.claims(ClaimType.DC) if c.status is not ClaimStatus.DROPPED]


def gdr(t: Trajectory) -> float:
    """Eq. 8: share of decision claims in force that are grounded (↑); 0 when there is no decision."""
    dc = decision_claims_in_force(t)
    return sum(1 for c in dc if c.grounded) / len(dc) if dc else 0.0


def oc_err(t: Trajectory) -> float | None:
    """Eq. 27: share of observation claims that disagree with their tool output (↓).

    OCs are the PERCEPTION entries produced by the MLLM's observation stage; the pipeline
    records in ``meta["tool_agreement"]`` whether an OC agrees with the OCR tool's output
    (None when there was no OCR evidence to compare with; those are not counted).
    """
    ocs = [
        e
        for e in t.ledger.entries()
        if e.kappa is Kappa.PERCEPTION
        and _tool_kind(t, e.tool_call_id) is ToolKind.OBSERVE
        and e.meta.get("tool_agreement") is not None
    ]
    return _ratio(sum(1 for e in ocs if e.meta["tool_agreement"] is False), len(ocs))


def _tool_kind(t: Trajectory, call_id: str) -> ToolKind | None:
    out = t.ledger.tool_output(call_id)
    return out.kind if out else None


def eur(t: Trajectory) -> float | None:
    """Eq. 28: share of ledger entries cited by at least one claim (↑)."""
    entries = t.ledger.entries()
    return _ratio(sum(1 for e in entries if e.dependents), len(entries))


def rr(t: Trajectory) -> float | None:
    """Eq. 29: share of repairs after which the repaired claim/action is grounded (↑)."""
    repairs = [e for e in t.events if e.operator is not None]
    return _ratio(sum(1 for e in repairs if e.grounded_after), len(repairs))


def rc(t: Trajectory) -> float:
    """Eq. 30: Σ λ_type(r)·cost(r) over the repairs of τ."""
    return float(sum(e.cost for e in t.events if e.operator is not None))


def se(t: Trajectory, success: float) -> float:
    """Eq. 31: S(τ)/|τ| with |τ| = model calls + tool calls."""
    return success / t.steps if t.steps else 0.0


def r4r(gdrs: Sequence[float], successes: Sequence[float], gamma: float) -> float | None:
    """Eq. 9: among correct trajectories, the share whose GDR exceeds γ (↑)."""
    ok = [g for g, s in zip(gdrs, successes, strict=True) if s >= 1.0]
    return _ratio(sum(1 for g in ok if g > gamma), len(ok))


def wdg(gdrs: Sequence[float], successes: Sequence[float], gamma: float) -> float | None:
    """Eq. 10: among wrong trajectories, the share whose GDR exceeds γ (↓)."""
    bad = [g for g, s in zip(gdrs, successes, strict=True) if s < 1.0]
    return _ratio(sum(1 for g in bad if g > gamma), len(bad))


PerTrajectory = Callable[[Trajectory, float], float | None]
METRICS: Registry[PerTrajectory] = Registry("metric")
METRICS.add("UCR_reason", lambda t, s: ucr_reason(t))
METRICS.add("GDR", lambda t, s: gdr(t))
METRICS.add("OCErr", lambda t, s: oc_err(t))
METRICS.add("EUR", lambda t, s: eur(t))
METRICS.add("RR", lambda t, s: rr(t))
METRICS.add("RC", lambda t, s: rc(t))
METRICS.add("SE", se)


def per_trajectory(t: Trajectory, success: float) -> dict[str, float | None]:
    return {name: METRICS.get(name)(t, success) for name in METRICS}


def summarize(trajectories: Sequence[Trajectory], scores: Sequence[float], gamma: float) -> dict[str, Any]:
    """Run-level aggregates: means of the per-trajectory metrics (skipping undefined values),
    plus the corpus-level R4R and WDG (success = score 1)."""
    if len(trajectories) != len(scores):
        raise ValueError("one score per trajectory is required")
    rows = [per_trajectory(t, s) for t, s in zip(trajectories, scores, strict=True)]
    out: dict[str, Any] = {}
    for name in METRICS:
        vals = [v for r in rows if (v := r[name]) is not None]
        out[name] = fmean(vals) if vals else None
    gdrs = [r["GDR"] or 0.0 for r in rows]
    out["R4R"] = r4r(gdrs, scores, gamma)
    out["WDG"] = wdg(gdrs, scores, gamma)
    out["gamma"] = gamma
    out["n"] = len(rows)
    return out

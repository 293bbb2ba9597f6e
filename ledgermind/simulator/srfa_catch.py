"""The S-RFA audit measured against the simulator's known faults (its catch rate).

Why here: a ledger-mode audit labels claims grounded or not, but on real traces nobody knows
which labels are right. A simulated-backbone run does: every reply records the faults it
injected (``meta["simulator"]``), so each audited claim can be matched to the fault it carries.

Matching, per item (all text comparisons case-folded):

* a **phantom claim** is an audited claim whose text names the entity of an F2 phantom fault
  injected in that trajectory; the audit *catches* it when it labels it ungrounded;
* a phantom fault that no audited claim names was removed before the trace was final (ECC
  demoted its claim, the entity recheck re-asked, a later reply replaced it): counted apart as
  ``phantom_not_in_trace``, neither caught nor missed by the audit;
* a phantom that free-form reflection added (F4) is a phantom like any other;
* a **fault-free claim** belongs to an item whose trajectory injected no fault of any kind, and
  carries no fault's entity; the fraction the audit labels grounded bounds its false alarms
  (a distractor picked without any fault, p_correct < 1, is still a fault-free claim: the audit
  cannot know the answer key, so an ungrounded label there is a real false alarm of the audit
  *or* a decision the evidence does not support, reported by claim type to tell them apart).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Any

from ledgermind.simulator.census import has_simulator_meta, injected_faults
from ledgermind.simulator.faults import Fault
from ledgermind.srfa.protocol import AtomicClaim, SrfaRecord
from ledgermind.trajectory import Trajectory


def _entities(faults: Iterable[Mapping[str, Any]], kind: Fault) -> set[str]:
    return {
        str(f.get("entity", "")).casefold() for f in faults if f.get("kind") == kind.value and f.get("entity")
    }


def item_catch(audit: SrfaRecord, traj: Trajectory) -> dict[str, int]:
    """Counts for one audited item (see the module docstring for the matching rules)."""
    faults = [f for _, f in injected_faults(traj)]
    phantoms = _entities(faults, Fault.PHANTOM)
    labelled = [x for x in audit.claims if x.grounded is not None]
    named = [any(e in x.text.casefold() for e in phantoms) for x in labelled]
    phantom = [x for x, n in zip(labelled, named, strict=True) if n]
    clean = [] if faults else [x for x, n in zip(labelled, named, strict=True) if not n]
    sc, dc = [x for x in clean if x.ctype == "SC"], [x for x in clean if x.ctype != "SC"]

    def grounded(claims: list[AtomicClaim]) -> int:
        return sum(bool(x.grounded) for x in claims)

    return {
        "phantom_claims": len(phantom),
        "phantom_ungrounded": len(phantom) - grounded(phantom),
        "phantom_injected": sum(1 for f in faults if f.get("kind") == Fault.PHANTOM.value),
        "phantom_not_in_trace": sum(not any(e in x.text.casefold() for x in labelled) for e in phantoms),
        "fault_free_claims": len(clean),
        "fault_free_grounded": grounded(clean),
        "fault_free_sc": len(sc),
        "fault_free_sc_grounded": grounded(sc),
        "fault_free_dc": len(dc),
        "fault_free_dc_grounded": grounded(dc),
    }


def _ratio(num: int, den: int) -> float | None:
    return num / den if den else None


def catch_summary(pairs: Iterable[tuple[SrfaRecord, Trajectory]]) -> dict[str, Any] | None:
    """Summed counts and rates over a run; None when no trajectory carries simulator metadata."""
    total: Counter[str] = Counter()
    items = 0
    for audit, traj in pairs:
        if audit.error is None and has_simulator_meta(traj.model_calls):
            items += 1
            total.update(item_catch(audit, traj))
    if not items:
        return None
    return {
        "items": items,
        **total,
        "phantom_catch_rate": _ratio(total["phantom_ungrounded"], total["phantom_claims"]),
        "fault_free_grounded_rate": _ratio(total["fault_free_grounded"], total["fault_free_claims"]),
        "fault_free_sc_grounded_rate": _ratio(total["fault_free_sc_grounded"], total["fault_free_sc"]),
        "fault_free_dc_grounded_rate": _ratio(total["fault_free_dc_grounded"], total["fault_free_dc"]),
    }


def format_catch(s: Mapping[str, Any]) -> str:
    def f(x: Any) -> str:
        return "—" if x is None else f"{x:.3f}"

    return (
        f"[simulator] phantom claims: {s['phantom_claims']} in the final trace (of {s['phantom_injected']} injected; "
        f"{s['phantom_not_in_trace']} removed before it); S-RFA labelled {s['phantom_ungrounded']} ungrounded: "
        f"catch rate {f(s['phantom_catch_rate'])}, n = {s['phantom_claims']}. Claims no fault touched: "
        f"{s['fault_free_grounded']} of {s['fault_free_claims']} labelled grounded ({f(s['fault_free_grounded_rate'])}; "
        f"SC {f(s['fault_free_sc_grounded_rate'])}, DC {f(s['fault_free_dc_grounded_rate'])}): the share of "
        "clean claims S-RFA finds support for, so a low value means it calls clean claims ungrounded too"
    )

"""The simulator's part of the mechanism census: faults injected vs. faults caught, per trajectory.

Why derived from the trajectory: every reply records its injected faults in ``meta["simulator"]``
(kept on the ``ModelCall``), and what the agent did about them is in the same record (claims and
their grounding verdicts, typed marks, the model calls that followed). One source of truth, so
this section cannot disagree with the trajectory it summarises; ``metrics.census`` adds it under
``simulator`` and run totals are sums of per-item censuses.

"Caught" means the mechanism built for the fault acted on that very claim or reading:
  * phantom: a claim naming the phantom entity failed ECC (and was demoted), or the phantom was in
    the decision and the entity-recheck defence (ECC(ŷ, P_oc) = 0) re-asked after it;
  * misread: Dual-Read disagreed (mark DUAL_READ_DISAGREE) on a pair that includes the misread value.
An amplified claim (free-form reflection) "survives" when a claim carrying its sentence is still
ACTIVE at the end of the trajectory.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from ledgermind.simulator.faults import Fault

CAUGHT_KINDS = (Fault.PHANTOM, Fault.MISREAD)
PAIR_RE = re.compile(r"v1=(\S+) v2=(\S+)")


def _as_dict(traj: Any) -> Mapping[str, Any]:
    return traj if isinstance(traj, Mapping) else traj.to_dict()


def _sim_meta(call: Any) -> Mapping[str, Any]:
    meta = call.get("meta") if isinstance(call, Mapping) else getattr(call, "meta", None)
    return (meta or {}).get("simulator") or {}


def has_simulator_meta(calls: Iterable[Any]) -> bool:
    return any(_sim_meta(c) for c in calls)


def injected_faults(traj: Any) -> list[tuple[int, dict[str, Any]]]:
    """(model-call index, fault record) for every fault recorded in the trajectory's model calls."""
    calls = _as_dict(traj).get("model_calls", [])
    return [(i, f) for i, c in enumerate(calls) for f in _sim_meta(c).get("faults", [])]


def _phantom_caught(entity: str, call_index: int, d: Mapping[str, Any]) -> bool:
    ent = entity.casefold()
    for c in d.get("ledger", {}).get("claims", []):
        g = c.get("grounding") or {}
        if ent in str(c.get("text", "")).casefold() and g.get("ecc") is False and g.get("ecc_applied", True):
            return True
    later = d.get("model_calls", [])[call_index + 1 :]
    return any(_sim_meta(c).get("task") == "entity_recheck" for c in later)


def _misread_caught(value: float, d: Mapping[str, Any]) -> bool:
    for mark in d.get("marks", []):
        if mark.get("kind") != "DUAL_READ_DISAGREE" or not (m := PAIR_RE.search(str(mark.get("detail", "")))):
            continue
        for v in m.groups():
            try:
                if abs(float(v) - value) <= 1e-6 * max(1.0, abs(value)):
                    return True
            except ValueError:
                continue
    return False


def _amplified_surviving(text: str, d: Mapping[str, Any]) -> bool:
    claims = d.get("ledger", {}).get("claims", [])
    return any(text and text in str(c.get("text", "")) and c.get("status") == "ACTIVE" for c in claims)


def fault_census(traj: Any) -> dict[str, Any]:
    """``{"injected": {kind: n}, "caught": {phantom, misread}, "amplified_surviving": n}`` for one trajectory."""
    d = _as_dict(traj)
    injected = {k.value: 0 for k in Fault}
    caught = {k.value: 0 for k in CAUGHT_KINDS}
    surviving = 0
    for call_index, f in injected_faults(d):
        kind = f.get("kind")
        if kind not in injected:
            continue
        injected[kind] += 1
        if kind == Fault.PHANTOM.value and _phantom_caught(str(f.get("entity", "")), call_index, d):
            caught[kind] += 1
        elif kind == Fault.MISREAD.value and _misread_caught(float(f.get("value", "nan")), d):
            caught[kind] += 1
        elif kind == Fault.AMPLIFY.value and _amplified_surviving(str(f.get("text", "")), d):
            surviving += 1
    return {"injected": injected, "caught": caught, "amplified_surviving": surviving}


def catch_rates(section: Mapping[str, Any]) -> dict[str, float | None]:
    """caught / injected per kind of a (summed) simulator section; None when nothing was injected."""
    inj, cau = section.get("injected", {}), section.get("caught", {})
    return {k: (cau.get(k, 0) / inj[k] if inj.get(k) else None) for k in (f.value for f in CAUGHT_KINDS)}

"""The simulator's part of the mechanism census: faults injected vs. faults caught, per trajectory.

Why derived from the trajectory: every reply records its injected faults in ``meta["simulator"]``
(kept on the ``ModelCall``), and what the agent did about them is in the same record (claims and
their grounding verdicts, model calls that followed, notes). One source of truth, so the census
cannot disagree with the trajectory it summarises; run totals are sums of per-item censuses.

"Caught" means the mechanism built for the fault acted on that very claim or reading:
  * phantom: a claim naming the phantom entity failed ECC (and was demoted), or the phantom was in
    the decision and the entity-recheck defence (ECC(ŷ, P_oc) = 0) re-asked after it;
  * misread: Dual-Read disagreed on a pair of readings that includes the misread value.
An amplified claim (free-form reflection) "survives" when a claim carrying its sentence is still
ACTIVE at the end of the trajectory.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from ledgermind.simulator.faults import Fault

CAUGHT_KINDS = (Fault.PHANTOM, Fault.MISREAD)
DUAL_READ_NOTE = re.compile(r"dual-read v1=(\S+) v2=(\S+) .*\bdisagree\b")


def _as_dict(traj: Any) -> Mapping[str, Any]:
    return traj if isinstance(traj, Mapping) else traj.to_dict()


def injected_faults(traj: Any) -> list[tuple[int, dict[str, Any], str]]:
    """(call index, fault record, task) for every fault recorded in the trajectory's model calls."""
    out = []
    for i, call in enumerate(_as_dict(traj).get("model_calls", [])):
        sim = (call.get("meta") or {}).get("simulator") or {}
        out += [(i, f, str(sim.get("task", ""))) for f in sim.get("faults", [])]
    return out


def _phantom_caught(entity: str, call_index: int, d: Mapping[str, Any]) -> bool:
    ent = entity.casefold()
    for c in d.get("ledger", {}).get("claims", []):
        g = c.get("grounding") or {}
        if ent in str(c.get("text", "")).casefold() and g.get("ecc") is False and g.get("ecc_applied", True):
            return True
    later = d.get("model_calls", [])[call_index + 1 :]
    return any(((c.get("meta") or {}).get("simulator") or {}).get("task") == "entity_recheck" for c in later)


def _misread_caught(value: float, d: Mapping[str, Any]) -> bool:
    for note in d.get("notes", []):
        if m := DUAL_READ_NOTE.search(str(note)):
            try:
                pair = [float(m.group(1)), float(m.group(2))]
            except ValueError:
                continue
            if any(abs(v - value) <= 1e-6 * max(1.0, abs(value)) for v in pair):
                return True
    return False


def _amplified_surviving(text: str, d: Mapping[str, Any]) -> bool:
    return any(
        text in str(c.get("text", "")) and c.get("status") == "ACTIVE" for c in d.get("ledger", {}).get("claims", [])
    )


def fault_census(traj: Any) -> dict[str, Any]:
    """``{"injected": {kind: n}, "caught": {phantom, misread}, "amplified_surviving": n}`` for one trajectory."""
    d = _as_dict(traj)
    injected = {k.value: 0 for k in Fault}
    caught = {k.value: 0 for k in CAUGHT_KINDS}
    surviving = 0
    for call_index, f, _task in injected_faults(d):
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


def sum_census(censuses: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """Run totals: sums of per-item censuses, plus catch rates (caught / injected; None when none)."""
    total: dict[str, Any] = {"injected": {k.value: 0 for k in Fault}, "caught": {k.value: 0 for k in CAUGHT_KINDS},
                             "amplified_surviving": 0}  # fmt: skip
    for c in censuses:
        for group in ("injected", "caught"):
            for k, v in c.get(group, {}).items():
                total[group][k] = total[group].get(k, 0) + int(v)
        total["amplified_surviving"] += int(c.get("amplified_surviving", 0))
    total["catch_rate"] = {
        k: (total["caught"][k] / total["injected"][k] if total["injected"][k] else None) for k in total["caught"]
    }
    return total

"""The simulator's part of the mechanism census: faults injected vs. faults caught, per trajectory.

Why derived from the trajectory: every reply records its injected faults in ``meta["simulator"]``
(kept on the ``ModelCall``), and what the agent did about them is in the same record (claims and
their grounding verdicts, typed marks, the model calls that followed). One source of truth, so
this section cannot disagree with the trajectory it summarises; ``metrics.census`` adds it under
``simulator`` and run totals are sums of per-item censuses.

"Caught" means the mechanism built for the fault acted on that very claim or reading:
  * phantom (an invented entity) and relation (an entity that is in the evidence, tied to a wrong
    answer): a claim naming it failed ECC, or it was in a decision and the entity-recheck defence
    (ECC(ŷ, P_oc) = 0) re-asked after it. NER-based ECC cannot see a relation fault, so those
    should mostly be missed: the census shows that, it does not hide it;
  * misread: Dual-Read disagreed (mark DUAL_READ_DISAGREE) on a pair that includes the misread
    value, NCC failed on a claim stating it, or the numeric snap replaced it in the decision;
  * amplify (free-form reflection): ECC failed on a claim carrying its sentence.
Every other fault kind (flip, reflect_break, format, empty) has no mechanism built to catch that
very fault; it is counted as injected only (``reflect_fix`` is reflection's change for the better,
counted so both directions show). ``missed`` = injected - caught for the catchable kinds.

``by_place`` splits every count by where the fault was injected: ``<path>/<call kind>``, e.g.
``FULLPIPE/decide``, ``DIRECT/direct``, ``FULLPIPE/observe``. ``in_answer`` counts faults whose
wrong answer is the trajectory's final answer (the harm that got through, whatever the kind).
An amplified claim (free-form reflection) "survives" when a claim carrying its sentence is still
ACTIVE at the end of the trajectory.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from ledgermind.simulator.faults import Fault

CAUGHT_KINDS = (Fault.PHANTOM, Fault.RELATION, Fault.MISREAD, Fault.AMPLIFY)
PAIR_RE = re.compile(r"v1=(\S+) v2=(\S+)")
NUMBER_RE = re.compile(r"-?\d+(?:\.\d+)?")


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


def _same_number(a: Any, b: float) -> bool:
    try:
        return abs(float(a) - b) <= 1e-6 * max(1.0, abs(b))
    except (TypeError, ValueError):
        return False


def _claims(d: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    return list(d.get("ledger", {}).get("claims", []))


def _ecc_failed(c: Mapping[str, Any]) -> bool:
    g = c.get("grounding") or {}
    return g.get("ecc") is False and g.get("ecc_applied", True)


def _recheck_after(call_index: int, d: Mapping[str, Any]) -> bool:
    later = d.get("model_calls", [])[call_index + 1 :]
    return any(_sim_meta(c).get("task") == "entity_recheck" for c in later)


def _phantom_caught(entity: str, call_index: int, d: Mapping[str, Any]) -> bool:
    ent = entity.casefold()
    if any(ent in str(c.get("text", "")).casefold() and _ecc_failed(c) for c in _claims(d)):
        return True
    return _recheck_after(call_index, d)


def _relation_caught(entity: str, call_index: int, d: Mapping[str, Any]) -> bool:
    """As a phantom, but only the claim that ties the entity to the answer ("According to X", "as X
    described"), not the evidence claims that merely quote it."""
    rx = re.compile(rf"(according to|as)\s+{re.escape(entity)}", re.IGNORECASE)
    if any(rx.search(str(c.get("text", ""))) and _ecc_failed(c) for c in _claims(d)):
        return True
    return _recheck_after(call_index, d)


def _misread_caught(value: float, d: Mapping[str, Any]) -> bool:
    for mark in d.get("marks", []):
        detail = str(mark.get("detail", ""))
        if mark.get("kind") == "DUAL_READ_DISAGREE" and (m := PAIR_RE.search(detail)):
            if any(_same_number(v, value) for v in m.groups()):
                return True
        if mark.get("kind") == "NUMERIC_SNAP" and (n := NUMBER_RE.search(detail.split("→")[0])):
            if _same_number(n.group(), value):
                return True
    for c in _claims(d):
        g = c.get("grounding") or {}
        numbers = NUMBER_RE.findall(str(c.get("text", "")))
        if g.get("ncc") is False and any(_same_number(n, value) for n in numbers):
            return True
    return False


def _amplify_caught(text: str, d: Mapping[str, Any]) -> bool:
    return any(text and text in str(c.get("text", "")) and _ecc_failed(c) for c in _claims(d))


def _amplified_surviving(text: str, d: Mapping[str, Any]) -> bool:
    return any(text and text in str(c.get("text", "")) and c.get("status") == "ACTIVE" for c in _claims(d))


def caught(f: Mapping[str, Any], call_index: int, d: Mapping[str, Any]) -> bool:
    """Did the mechanism built for this fault act on it (module docstring)?"""
    kind = f.get("kind")
    if kind == Fault.PHANTOM.value:
        return _phantom_caught(str(f.get("entity", "")), call_index, d)
    if kind == Fault.RELATION.value:
        return _relation_caught(str(f.get("entity", "")), call_index, d)
    if kind == Fault.MISREAD.value:
        return _misread_caught(float(f.get("value", "nan")), d)
    if kind == Fault.AMPLIFY.value:
        return _amplify_caught(str(f.get("text", "")), d)
    return False


def _wrong_answer(f: Mapping[str, Any]) -> str | None:
    for key in ("answer", "to", "value"):
        if f.get(key) is not None:
            return str(f[key])
    return None


def in_answer(f: Mapping[str, Any], d: Mapping[str, Any]) -> bool:
    """Is the fault's wrong answer the trajectory's final answer? (Not for a reflection's fix.)"""
    wrong = _wrong_answer(f)
    final = str(d.get("answer") or "").strip()
    if f.get("kind") == Fault.REFLECT_FIX.value or wrong is None or not final or d.get("abstained"):
        return False
    if len(wrong) == 1 and wrong.isalpha():  # an option letter: the final answer's leading label
        return re.match(rf"{re.escape(wrong)}(?![\w])", final, re.IGNORECASE) is not None
    try:
        return _same_number(final, float(wrong))
    except ValueError:
        return final.casefold() == wrong.casefold()


def place_of(call: Mapping[str, Any], d: Mapping[str, Any]) -> str:
    """Where a fault was injected: the trajectory's path and the kind of call (the simulator's task)."""
    return f"{d.get('path', '?')}/{_sim_meta(call).get('task', '?')}"


def fault_census(traj: Any) -> dict[str, Any]:
    """Per trajectory: ``injected`` per kind, ``caught`` / ``missed`` per catchable kind,
    ``in_answer`` per kind, ``amplified_surviving``, and all of it split ``by_place``."""
    d = _as_dict(traj)
    calls = d.get("model_calls", [])
    injected = {k.value: 0 for k in Fault}
    got = {k.value: 0 for k in CAUGHT_KINDS}
    missed = {k.value: 0 for k in CAUGHT_KINDS}
    reached = {k.value: 0 for k in Fault}
    by_place: dict[str, dict[str, dict[str, int]]] = {}
    surviving = 0
    for call_index, f in injected_faults(d):
        kind = f.get("kind")
        if kind not in injected:
            continue
        cell = by_place.setdefault(kind, {}).setdefault(place_of(calls[call_index], d), {"injected": 0})
        injected[kind] += 1
        cell["injected"] += 1
        if kind in got:
            hit = caught(f, call_index, d)
            got[kind] += int(hit)
            missed[kind] += int(not hit)
            cell["caught"] = cell.get("caught", 0) + int(hit)
            cell["missed"] = cell.get("missed", 0) + int(not hit)
        harm = in_answer(f, d)
        reached[kind] += int(harm)
        cell["in_answer"] = cell.get("in_answer", 0) + int(harm)
        if kind == Fault.AMPLIFY.value and _amplified_surviving(str(f.get("text", "")), d):
            surviving += 1
    return {"injected": injected, "caught": got, "missed": missed, "in_answer": reached,
            "amplified_surviving": surviving, "by_place": by_place}  # fmt: skip


def catch_rates(section: Mapping[str, Any]) -> dict[str, float | None]:
    """caught / injected per kind of a (summed) simulator section; None when nothing was injected."""
    inj, cau = section.get("injected", {}), section.get("caught", {})
    return {k: (cau.get(k, 0) / inj[k] if inj.get(k) else None) for k in (f.value for f in CAUGHT_KINDS)}

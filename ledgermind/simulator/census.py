"""The simulator's part of the mechanism census: what was injected, flagged, neutralised, and harmed.

Why derived from the trajectory: every reply records its injected faults in ``meta["simulator"]``
(kept on the ``ModelCall``), and what the agent did about them is in the same record (claims and
their grounding verdicts, typed marks, repair events, the model calls that followed). One source
of truth, so this section cannot disagree with the trajectory it summarises; ``metrics.census``
adds it under ``simulator`` and run totals are sums of per-item censuses.

Three verbs, kept apart ("flagged" is not "caught"):

* **flagged** — a check marked the fault: a claim naming its entity failed ECC while the check
  was applied (an audit-only, post-hoc label is not a flag), an entity recheck re-asked after it,
  NCC failed on a claim stating a misread value, or Dual-Read disagreed on a pair holding it;
* **neutralised** — a mechanism changed the outcome of that claim or reading: the fault's content
  (its entity; its misread value) is in no ACTIVE claim at the end and did not reach the final
  answer, although the reply carrying it was recorded (a fault nobody flagged and that vanished
  on its own — a later reply simply did not repeat it — is ``faded``, not neutralised);
* **reached** — the fault's content is in the final answer (the entity in the decision, the
  misread value as ŷ): the harm that got through;
* **harmed** — a mechanism made things worse: a suggestible focused look (``suggested``) whose
  option became the final answer, or a reading within one graduation of the scene's truth that was
  superseded by one further off (Dual-Read escalation, numeric snap).

``by_place`` splits injected counts by ``<path>/<task>`` (the simulator's recognised task).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Any

from ledgermind.simulator.faults import Fault

CATCHABLE = (Fault.PHANTOM, Fault.RELATION, Fault.MISREAD)
VERBS = ("flagged", "neutralised", "faded", "reached")
HARMS = ("suggested_look_adopted", "good_reading_superseded")  # what a mechanism made worse
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


# Paths on which a grounding verdict can act (σ demotion, triggers, repair). On the baselines' and
# ``no_ledger``'s paths a verdict is a post-hoc label for the audit; trajectories recorded before
# verdicts carried ``audit_only`` are told apart by their path.
ACTING_PATHS = ("DIRECT", "FULLPIPE")


def _acted_verdict(c: Mapping[str, Any], d: Mapping[str, Any]) -> Mapping[str, Any]:
    """The claim's grounding verdict when a mechanism could act on it, else an empty mapping."""
    g = c.get("grounding") or {}
    return {} if g.get("audit_only") or d.get("path") not in ACTING_PATHS else g


def _ecc_flagged(c: Mapping[str, Any], d: Mapping[str, Any]) -> bool:
    g = _acted_verdict(c, d)
    return g.get("ecc") is False and bool(g.get("ecc_applied", False))


def _names(c: Mapping[str, Any], entity: str) -> bool:
    return bool(entity) and entity.casefold() in str(c.get("text", "")).casefold()


def _final_text(d: Mapping[str, Any]) -> str:
    """The final answer as the trajectory states it: ŷ, the raw decision, and the final DC claims."""
    dcs = [
        str(c.get("text", "")) for c in _claims(d) if c.get("ctype") == "DC" and c.get("status") == "ACTIVE"
    ]
    return "\n".join([str(d.get("answer") or ""), str(d.get("raw_answer") or ""), *dcs])


def _entity_flagged(entity: str, call_index: int, d: Mapping[str, Any]) -> bool:
    later = d.get("model_calls", [])[call_index + 1 :]  # the defence re-asked (Alg. 2 l.2-3)
    ecc = any(_names(c, entity) and _ecc_flagged(c, d) for c in _claims(d))
    return ecc or any(c.get("stage") == "entity_recheck" for c in later)


def _misread_flagged(value: float, d: Mapping[str, Any]) -> bool:
    for mark in d.get("marks", []):
        detail = str(mark.get("detail", ""))
        if mark.get("kind") == "DUAL_READ_DISAGREE" and (m := PAIR_RE.search(detail)):
            if any(_same_number(v, value) for v in m.groups()):
                return True
        if mark.get("kind") == "NUMERIC_SNAP" and (n := NUMBER_RE.search(detail.split("→")[0])):
            if _same_number(n.group(), value):
                return True
    return any(_acted_verdict(c, d).get("ncc") is False and _states_number(c, value) for c in _claims(d))


def _states_number(c: Mapping[str, Any], value: float) -> bool:
    return any(_same_number(n, value) for n in NUMBER_RE.findall(str(c.get("text", ""))))


def verdicts(f: Mapping[str, Any], call_index: int, d: Mapping[str, Any]) -> dict[str, bool]:
    """flagged / neutralised / faded / reached for one catchable fault (module docstring)."""
    kind = f.get("kind")
    if kind == Fault.MISREAD.value:
        value = float(f.get("value", "nan"))
        flagged = _misread_flagged(value, d)
        reached = _same_number(str(d.get("answer") or "").strip(), value)
        alive = any(c.get("status") == "ACTIVE" and _states_number(c, value) for c in _claims(d))
    else:
        entity = str(f.get("entity", ""))
        flagged = _entity_flagged(entity, call_index, d)
        reached = entity.casefold() in _final_text(d).casefold() if entity else False
        alive = any(_names(c, entity) and c.get("status") == "ACTIVE" for c in _claims(d))
    gone = not reached and not alive
    return {
        "flagged": flagged,
        "neutralised": flagged and gone,
        "faded": gone and not flagged,
        "reached": reached,
    }


def _suggestion_adopted(f: Mapping[str, Any], d: Mapping[str, Any]) -> bool:
    named = str(f.get("named", ""))
    final = str(d.get("answer") or "").strip()
    return bool(named) and re.match(rf"{re.escape(named)}(?![\w])", final, re.IGNORECASE) is not None


def superseded_good_readings(d: Mapping[str, Any]) -> int:
    """Readings within one graduation of the truth that the final answer abandoned for one further
    off (the reply meta records each reading's value and the scene's truth, ``reading``)."""
    readings = [r for c in d.get("model_calls", []) if (r := _sim_meta(c).get("reading"))]
    try:
        final = float(str(d.get("answer") or "").strip())
    except ValueError:
        return 0
    harmed = 0
    for r in readings:
        true, value, grad = float(r["true"]), float(r["value"]), float(r.get("graduation") or 0)
        if abs(value - true) <= grad and abs(final - true) > grad and not _same_number(final, value):
            harmed += 1
    return min(harmed, 1)  # one final answer: at most one harm per item


def place_of(call: Mapping[str, Any], d: Mapping[str, Any]) -> str:
    """Where a fault was injected: the trajectory's path and the kind of call (the simulator's task)."""
    return f"{d.get('path', '?')}/{_sim_meta(call).get('task', '?')}"


def fault_census(traj: Any) -> dict[str, Any]:
    """Per trajectory: ``injected`` per kind, the four verbs per catchable kind, ``harmed`` per
    mechanism, and injected counts ``by_place``."""
    d = _as_dict(traj)
    calls = d.get("model_calls", [])
    injected = {k.value: 0 for k in Fault}
    counts = {verb: {k.value: 0 for k in CATCHABLE} for verb in VERBS}
    harmed = {"suggested_look_adopted": 0, "good_reading_superseded": superseded_good_readings(d)}
    by_place: dict[str, Counter[str]] = {}
    for call_index, f in injected_faults(d):
        kind = f.get("kind")
        if kind not in injected:
            continue
        injected[kind] += 1
        by_place.setdefault(kind, Counter())[place_of(calls[call_index], d)] += 1
        if kind in counts["flagged"]:
            for verb, hit in verdicts(f, call_index, d).items():
                counts[verb][kind] += int(hit)
        if kind == Fault.SUGGESTED.value:
            harmed["suggested_look_adopted"] += int(_suggestion_adopted(f, d))
    coupled = sum(1 for _, f in injected_faults(d) if f.get("coupled"))
    return {"injected": injected, **counts, "harmed": harmed, "coupled": coupled, "by_place": by_place}


def catch_rates(section: Mapping[str, Any]) -> dict[str, float | None]:
    """neutralised / injected per catchable kind of a (summed) section; None when nothing was injected."""
    inj, neu = section.get("injected", {}), section.get("neutralised", {})
    return {k: (neu.get(k, 0) / inj[k] if inj.get(k) else None) for k in (f.value for f in CATCHABLE)}

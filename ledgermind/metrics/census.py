"""Mechanism census: which Table 3 mechanisms actually ran, per item and per run.

Why it exists: a run can be green while a mechanism is dead (Dual-Read comparing a reply with
itself, repairs that crash on every real tool, search that never runs). The census makes that
visible in every run. It is **derived from the trajectory record only** — repair events, tool
outputs in the ledger, model calls, claims and typed marks — never from counters incremented
across modules, so it cannot disagree with the trajectory it summarises. Run totals are sums of
per-item censuses (``sum_census``).

The contract (``docs/architecture.md``): every key below is always present; a counter that is
structurally zero in a variant reads 0 (e.g. ``dual_read.runs`` under ``no_dual_read``).

A backend may add sections of its own (the simulator: injected vs caught faults) by registering a
``CensusSection`` in ``CENSUS_SECTIONS`` from its plugin (``BackendDescription.plugin``); the census
iterates them and knows no backend by name.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from ledgermind.claims import ClaimType
from ledgermind.markdown import md_table
from ledgermind.registry import Registry
from ledgermind.tools.base import ToolKind
from ledgermind.trajectory import MarkKind, ModelCall, OperatorName, PathKind, Trajectory, Trigger

TYPED_OPERATORS = tuple(op for op in OperatorName if op is not OperatorName.FREEFORM_REFLECTION)
TRIGGER_KEYS = {t: t.name for t in Trigger}  # T1_TOOL_ANOMALY → "T1"
DUAL_READ_STAGES = ("dual_read_0", "dual_read_1")  # the two readings of App. D.5, as recorded


@dataclass(frozen=True)
class CensusSection:
    """A census section a backend adds under its registered name, for the trajectories it applies to.

    ``totals`` adds keys to the run's summed section (e.g. rates, which do not sum) when
    ``metrics.json`` is written; None adds nothing.
    """

    applies: Callable[[Trajectory], bool]
    count: Callable[[Trajectory], dict[str, Any]]
    totals: Callable[[Mapping[str, Any]], dict[str, Any]] | None = None


CENSUS_SECTIONS: Registry[CensusSection] = Registry("census section")


def empty_census() -> dict[str, Any]:
    """Every key of the contract at zero."""
    return {
        "paths": {p.value: 0 for p in PathKind},
        "triggers": {k: 0 for k in TRIGGER_KEYS.values()},
        "operators": {op.value: 0 for op in TYPED_OPERATORS},
        "operator_failures": 0,
        "reflections": 0,
        "dual_read": {"runs": 0, "agree": 0, "disagree": 0, "identical_requests": 0, "escalated": 0},
        "crop_zoom": 0,
        "search": {"rounds": 0, "skipped_no_provider": 0},
        "hypothesis_verification": 0,
        "defense": {"entity_recheck": 0, "numeric_snap": 0, "visual_fallback": 0},
        "demotions": {"ecc": 0, "ncc": 0, "uncited": 0},
        "repair": {"skipped_identical": 0},  # re-invocations not sent: they would repeat a request (App. E.2)
        # why T5 fired: what could support an answer
        "t5": {"no_support": 0, "perception_only": 0, "retrieval": 0},
        "abstained": 0,
        "tool_calls": 0,
        "repair_tool_calls": 0,  # of tool_calls: those a repair operator made (RETRY/REFRESH/SWITCH/ACQUIRE)
        "model_calls": 0,
        # of model_calls: answered by the response cache (not sent), and of those, rows another run wrote
        "cache": {"hits": 0, "shared": 0},
    }


def census(t: Trajectory) -> dict[str, Any]:
    """The census of one trajectory."""
    c = empty_census()
    c["paths"][t.path.value] = 1
    _count_repairs(t, c)
    _count_marks(t, c)
    kinds = [o.kind for o in t.ledger.tool_outputs()]
    c["crop_zoom"] = kinds.count(ToolKind.CROP)
    c["search"]["rounds"] = kinds.count(ToolKind.SEARCH)
    c["dual_read"]["identical_requests"] = identical_dual_reads(t.model_calls)
    _count_demotions(t, c)
    c["abstained"] = int(t.abstained)
    c["tool_calls"] = t.n_tool_calls
    c["repair_tool_calls"] = repair_tool_calls(t)
    c["model_calls"] = t.n_model_calls
    c["cache"] = cache_hits(t.model_calls)
    for name in CENSUS_SECTIONS:
        section = CENSUS_SECTIONS.get(name)
        if section.applies(t):
            c[name] = section.count(t)
    return c


def _count_repairs(t: Trajectory, c: dict[str, Any]) -> None:
    """Triggers count firings (one hit may need several operator events); operators count events."""
    fired: set[tuple[Trigger, int]] = set()
    for i, e in enumerate(t.events):
        fired.add((e.trigger, e.hit if e.hit else -1 - i))  # unrecorded hit ids count per event
        if e.error is not None:
            c["operator_failures"] += 1
        if e.skipped_identical:
            c["repair"]["skipped_identical"] += 1
        if e.operator is OperatorName.FREEFORM_REFLECTION:
            c["reflections"] += 1
        elif e.operator is not None:
            c["operators"][e.operator.value] += 1
    for trigger, _ in fired:
        c["triggers"][TRIGGER_KEYS[trigger]] += 1


_MARK_COUNTERS: Mapping[MarkKind, tuple[str, ...]] = {
    MarkKind.DUAL_READ_AGREE: ("dual_read", "agree"),
    MarkKind.DUAL_READ_DISAGREE: ("dual_read", "disagree"),
    MarkKind.DUAL_READ_ESCALATED: ("dual_read", "escalated"),
    MarkKind.T5_NO_SUPPORT: ("t5", "no_support"),
    MarkKind.T5_PERCEPTION_SUPPORT: ("t5", "perception_only"),
    MarkKind.T5_RETRIEVAL_SUPPORT: ("t5", "retrieval"),
    MarkKind.SEARCH_SKIPPED_NO_PROVIDER: ("search", "skipped_no_provider"),
    MarkKind.HYPOTHESIS_VERIFICATION: ("hypothesis_verification",),
    MarkKind.ENTITY_RECHECK: ("defense", "entity_recheck"),
    MarkKind.NUMERIC_SNAP: ("defense", "numeric_snap"),
    MarkKind.VISUAL_FALLBACK: ("defense", "visual_fallback"),
}


def _count_marks(t: Trajectory, c: dict[str, Any]) -> None:
    for m in t.marks:
        path = _MARK_COUNTERS.get(m.kind)
        if path is None:
            continue
        node = c
        for key in path[:-1]:
            node = node[key]
        node[path[-1]] += 1
    c["dual_read"]["runs"] = c["dual_read"]["agree"] + c["dual_read"]["disagree"]


def repair_tool_calls(t: Trajectory) -> int:
    """Tool calls a repair operator made (its recorded call id, else the calls behind the entries it
    added): what separates a variant's acquisition from the repairs its own verifier asked for (an
    ablation that removes a trigger removes these calls too)."""
    calls = set()
    for e in t.events:
        if e.tool_call:
            calls.add(e.tool_call)
        for entry_id in e.new_entries:
            if entry_id in t.ledger:
                calls.add(t.ledger.get(entry_id).tool_call_id)
    return len(calls)


def cache_hits(calls: Iterable[ModelCall]) -> dict[str, int]:
    """Calls the response cache answered, and those from a row another run wrote (a cache shared
    by a sweep: ``backends/cache.py`` tags the hit's meta ``cache="shared"``)."""
    hits = [c for c in calls if c.cached]
    return {"hits": len(hits), "shared": sum(c.meta.get("cache") == "shared" for c in hits)}


def identical_dual_reads(calls: Iterable[ModelCall]) -> int:
    """Dual-Read pairs whose two readings were the same request (the degenerate Δv = 0 case)."""
    pending: str | None = None
    n = 0
    for call in calls:
        if call.stage == DUAL_READ_STAGES[0]:
            pending = call.request_key
        elif call.stage == DUAL_READ_STAGES[1] and pending is not None:
            n += int(bool(call.request_key) and call.request_key == pending)
            pending = None
    return n


def _count_demotions(t: Trajectory, c: dict[str, Any]) -> None:
    """Alg. 1 lines 27–34 on [J] claims: uncited → 0.55; ECC failure → 0.50, elif NCC → 0.52."""
    for claim in t.ledger.claims(ClaimType.SC):
        g = claim.grounding
        if not claim.is_judgment or not g:
            continue
        if not g.get("cited", True):
            c["demotions"]["uncited"] += 1
        if not g.get("ecc", True):
            c["demotions"]["ecc"] += 1
        elif not g.get("ncc", True):
            c["demotions"]["ncc"] += 1


def sum_census(parts: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """Run totals: the key-wise sum of per-item censuses (missing keys read 0)."""
    total = empty_census()
    for part in parts:
        _add(total, part)
    return total


def with_section_totals(total: dict[str, Any]) -> dict[str, Any]:
    """Run totals completed by each registered section's ``totals`` (in place; returned for chaining)."""
    for name in CENSUS_SECTIONS:
        section = CENSUS_SECTIONS.get(name)
        if section.totals is not None and isinstance(total.get(name), dict):
            total[name].update(section.totals(total[name]))
    return total


def _add(into: dict[str, Any], part: Mapping[str, Any]) -> None:
    for key, value in part.items():
        if isinstance(value, Mapping):
            _add(into.setdefault(key, {}), value)
        elif isinstance(value, (int, float)) and not isinstance(value, bool):
            into[key] = into.get(key, 0) + value


def trajectory_record(t: Trajectory) -> dict[str, Any]:
    """What ``trajectories/<id>.json`` holds: the trajectory plus its census under ``mechanisms``."""
    d = t.to_dict()
    d["mechanisms"] = census(t)
    return d


# The census side by side, one row per run (Table 3's variants): the columns a reader checks to see
# that each ablation differs from ``full`` in its own component only.
CENSUS_COLUMNS: tuple[tuple[str, str], ...] = (
    ("DIRECT/FULL/NL/BASE", "paths"),
    ("T1..T6", "triggers"),
    ("/".join(op.short for op in TYPED_OPERATORS), "operators"),  # every operator, in enum order
    ("op fail", "operator_failures"),
    ("dual-read runs/agree/disagree/ident", "dual_read"),
    ("crop", "crop_zoom"),
    ("reflect", "reflections"),
    ("hyp.ver", "hypothesis_verification"),
    ("recheck/snap/fallback", "defense"),
    ("demote ecc/ncc/unc", "demotions"),
    ("abst", "abstained"),
    ("tools/item", "tool_calls"),
    ("repair tools/item", "repair_tool_calls"),
    ("model/item", "model_calls"),
)
# The counters a section's cell shows, in its header's order (a counter a run lacks reads 0: a run
# recorded before an operator existed); any other section shows all of its counters.
_CELL_KEYS = {
    "paths": ("DIRECT", "FULLPIPE", "NO_LEDGER", "BASELINE"),
    "operators": tuple(op.value for op in TYPED_OPERATORS),
    "dual_read": ("runs", "agree", "disagree", "identical_requests"),
}


def _cell(key: str, value: Any, n: int) -> str:
    if key in {"tool_calls", "repair_tool_calls", "model_calls"}:
        return f"{value / n:.2f}" if n else "—"
    if key in _CELL_KEYS:
        return "/".join(str(value.get(k, 0)) for k in _CELL_KEYS[key])
    if isinstance(value, Mapping):
        return "/".join(str(v) for v in value.values())
    return str(value)


def census_table(rows: Iterable[tuple[str, int, Mapping[str, Any]]]) -> str:
    """Markdown table of (variant, items, census) rows; calls per item so runs of any size compare."""
    head = ["variant", "items", *(c for c, _ in CENSUS_COLUMNS)]
    cells = [
        [variant, n, *(_cell(k, c.get(k, empty_census()[k]), n) for _, k in CENSUS_COLUMNS)]
        for variant, n, c in rows
    ]
    return "\n".join(md_table(head, cells, rest="---"))

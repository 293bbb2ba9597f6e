"""``ledgermind plan PILOT --items N --variants … --seeds K``: what a Table 3 will cost, and how many
items it needs to say anything.

Why: a researcher decides the item count and the GPU budget before the run. A small pilot sweep
(a few items, the variants, one or more seeds) already holds what both answers need: requests,
tokens and latencies per item, and how often ``full`` and each variant disagree on an item. This
module reads the pilot (run folders only: ``metrics.json``, ``results.jsonl``, ``trajectories/``)
and projects; the formulas are ``ledgermind/metrics/plan.py``, the method ``docs/statistics.md``.
The projection is the pilot's mean cost per (item, seed) × N × K with its standard error, so the
pilot must be a random sample of the items (``limit_order=shuffle``); a first-N pilot is flagged.

Requests with the sweep-shared cache: the pilot's calls are replayed in sweep order (per seed,
the Table 3 variant order) through a set of request keys; a call is *sent* the first time its key
appears, whatever cache the pilot itself ran with. Its requests are attributed to the first
variant that sends them, so ``full`` carries the requests the variants share.
"""

from __future__ import annotations

import math
import statistics
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, fields, replace
from pathlib import Path
from typing import Any

from ledgermind.errors import DataError, UserError
from ledgermind.experiment.artefact_label import ArtefactLabel, combined, label_for
from ledgermind.experiment.variants import names as variant_names
from ledgermind.metrics.plan import (
    ALPHA,
    POWER,
    Cost,
    Discordance,
    gpu_hours,
    mcnemar_sample_size,
    smallest_detectable_delta,
)
from ledgermind.metrics.stats import discordant_pairs
from ledgermind.runs.reader import RunDir, find_runs

DELTAS_POINTS = (1.0, 2.0, 5.0)
# Below this many discordant pairs the pilot's ψ has a relative error over 1/√10 ≈ 32 % (a count's
# Poisson error), and so has every "items needed" figure computed from it.
MIN_DISCORDANT = 10
FIRST_N, RANDOM, NAMED, ALL = "first N", "random", "named ids", "all items"
FIRST_N_WARNING = (
    "the pilot took the benchmark's first N items (limit_order=first); benchmark files are sorted "
    "(MMMU-Pro by subject), so its per-item costs need not be the set's: rerun the pilot with "
    "limit_order=shuffle or limit_order=stratified"
)


def sample_kind(cfg: Any) -> str:
    """How a run chose its items, from its recorded config (unknown config: assumed a random sample).

    Why it matters: the projection multiplies the pilot's mean cost per item by N, which is
    unbiased only when the pilot's items are a random sample of the set (measured: a first-20
    pilot under-predicted a 40-item run's prompt tokens by 12 %, because later subjects carry
    longer prompts)."""
    if cfg is None:
        return RANDOM
    if cfg.get("item_ids") or cfg.get("item_ids_file"):
        return NAMED
    if cfg.get("limit") is None and (cfg.get("benchmark") or {}).get("limit") is None:
        return ALL
    return FIRST_N if str(cfg.get("limit_order") or "first") == "first" else RANDOM


@dataclass
class PilotRun:
    variant: str
    seed: int
    scores: dict[str, float | None]  # item id -> score (None: errored)
    calls: dict[str, list[dict[str, Any]]]  # item id -> its model calls, in call order
    wall_s: float
    sample: str = RANDOM  # how the run chose its items (``sample_kind``)
    label: ArtefactLabel = ArtefactLabel()  # SIMULATED / TINY MODEL / REPLAYED: what answered it


@dataclass
class Pilot:
    """What the planner needs from a pilot sweep."""

    runs: list[PilotRun]

    @property
    def variants(self) -> list[str]:
        names = {r.variant for r in self.runs}
        order = variant_names()
        return [v for v in order if v in names] + sorted(names - set(order))

    @property
    def seeds(self) -> list[int]:
        return sorted({r.seed for r in self.runs})


def read_pilot(paths: Iterable[Path]) -> Pilot:
    """Every finished run below ``paths`` (its variant and seed from ``metrics.json``)."""
    runs = []
    setups: set[tuple[str, str]] = set()
    for path in find_runs(list(paths)):
        run = RunDir(path)
        ident = run.identity()
        if not ident:
            continue  # unfinished: no metrics.json yet
        setups.add((str(ident.get("model", "?")), str(ident.get("benchmark", "?"))))
        rows = run.result_rows()
        calls: dict[str, list[dict[str, Any]]] = {}
        for item_id in sorted(rows):
            traj = run.trajectory(item_id) or {}
            calls[item_id] = [c for c in traj.get("model_calls", []) if isinstance(c, dict)]
        scores = {i: (None if r.get("error") else r.get("score")) for i, r in rows.items()}
        wall = float((run.metrics() or {}).get("wall_time_total_s") or 0.0)
        variant, seed = str(ident.get("variant", "full")), int(ident.get("seed", 0) or 0)
        runs.append(PilotRun(variant, seed, scores, calls, wall, sample_kind(run.config()), label_for(ident)))
    if not runs:
        raise DataError(f"no finished runs (metrics.json) under {', '.join(map(str, paths))}")
    if len(setups) > 1:  # one pilot's costs and discordance are of one model on one benchmark
        shown = "; ".join(f"{m} on {b}" for m, b in sorted(setups))
        raise DataError(f"refusing to plan from runs of different models or benchmarks: {shown}")
    return Pilot(runs)


def item_costs(pilot: Pilot, *, errored: bool = False) -> dict[str, dict[tuple[str, int], Cost]]:
    """Per variant, per (item, seed): the pilot's requests and tokens as a sweep-shared cache would
    send them (each request key sent the first time it appears in sweep order). An errored result is
    left out unless ``errored``: what a failure cost is not what the item costs once a rerun answers
    it (the server still did the work, which is what a measured rate counts)."""
    seen: set[str] = set()
    costs: dict[str, dict[tuple[str, int], Cost]] = defaultdict(dict)
    order = {v: i for i, v in enumerate(pilot.variants)}
    for run in sorted(pilot.runs, key=lambda r: (r.seed, order[r.variant])):
        for item_id, calls in run.calls.items():
            if run.scores.get(item_id) is None and not errored:
                continue
            cost = costs[run.variant].setdefault((item_id, run.seed), Cost())
            for call in calls:
                cost.made += 1
                key = str(call.get("request_key") or "")
                if call.get("error") or not key or key in seen:
                    continue
                seen.add(key)
                cost.sent += 1
                cost.prompt_tokens += float(call.get("prompt_tokens") or 0)
                cost.completion_tokens += float(call.get("completion_tokens") or 0)
                cost.cached_prompt_tokens += float((call.get("meta") or {}).get("cached_tokens") or 0)
                cost.model_seconds += float(call.get("latency_s") or 0.0)
    return dict(costs)


def projection(per_item: Sequence[Cost], n: float) -> tuple[Cost, Cost]:
    """(total, standard error) of ``n`` (item, seed) units projected from the pilot's units: n × mean,
    and n × the standard error of the mean (the spread of the pilot's per-item costs over √units).
    Why the error: the pilot is a sample of the set; a small one, or one with a few costly items,
    projects with an error the planner should state, not hide."""
    k = len(per_item)
    if k == 0:
        return Cost(), Cost()
    mean = sum(per_item, Cost()).scaled(1.0 / k)
    if k < 2:
        return mean.scaled(n), Cost()
    spread = {f.name: statistics.stdev(getattr(c, f.name) for c in per_item) for f in fields(Cost)}
    return mean.scaled(n), Cost(**spread).scaled(n / math.sqrt(k))


def paired_discordance(
    pairs: Iterable[tuple[Mapping[str, float | None], Mapping[str, float | None]]],
) -> Discordance:
    """Only-reference-right / only-variant-right shares over the (item, seed) pairs both runs
    scored, pooled over ``(reference scores, variant scores)`` pairs of runs."""
    only_ref = only_var = n = 0
    for ref, var in pairs:
        b, c = discordant_pairs(ref, var)
        only_ref, only_var = only_ref + b, only_var + c
        n += sum(1 for i in set(ref) & set(var) if ref[i] is not None and var[i] is not None)
    return Discordance.from_counts(only_ref, only_var, n)


def discordance(pilot: Pilot, variant: str) -> Discordance:
    """``variant`` against ``full`` in every seed the pilot ran both."""
    by_seed = {(r.variant, r.seed): r.scores for r in pilot.runs}
    both = [s for s in pilot.seeds if ("full", s) in by_seed and (variant, s) in by_seed]
    return paired_discordance((by_seed["full", s], by_seed[variant, s]) for s in both)


@dataclass(frozen=True)
class PlanRequest:
    items: int | None  # None: the pilot's own item count
    seeds: int
    variants: tuple[str, ...]
    tokens_per_s: float | None = None
    alpha: float = ALPHA
    power: float = POWER
    deltas: tuple[float, ...] = DELTAS_POINTS


def make_plan(pilot: Pilot, req: PlanRequest) -> dict[str, Any]:
    """The projected costs (per variant and total) and the sample-size table, as plain data."""
    if missing := [v for v in req.variants if v not in pilot.variants]:
        raise UserError(f"the pilot has no runs of {missing}; it has {pilot.variants}")
    # no count asked for: the pilot's own
    req = replace(req, items=req.items or max((len(r.scores) for r in pilot.runs), default=0))
    assert req.items is not None
    chosen = Pilot([r for r in pilot.runs if r.variant in req.variants])
    per_item = item_costs(chosen)
    if unscored := [v for v in req.variants if not per_item.get(v)]:
        raise DataError(
            f"the pilot's runs of {', '.join(unscored)} scored no item (every result is an error): nothing to "
            "project from; rerunning them retries the errored items"
        )
    errored = sum(1 for r in chosen.runs for s in r.scores.values() if s is None)
    # per variant, its (item, seed) units in the pilot
    pilot_items = {v: sum(len(r.scores) for r in pilot.runs if r.variant == v) for v in req.variants}
    units = req.items * req.seeds
    projected = {v: projection(list(per_item[v].values()), units) for v in req.variants}
    # the total's error from the per-(item, seed) sums over variants (items costly in one variant are
    # costly in all), over the units every variant scored: a unit one variant errored on would look cheap
    common = set.intersection(*(set(per_item[v]) for v in projected))
    unit_totals: dict[tuple[str, int], Cost] = defaultdict(Cost)
    for v in projected:
        for unit in common:
            unit_totals[unit] += per_item[v][unit]
    total, total_se = projection(list(unit_totals.values()), units)
    pilot_total = sum((c for v in per_item.values() for c in v.values()), Cost())
    wall = sum(r.wall_s for r in chosen.runs)
    worked = item_costs(chosen, errored=True)
    processed = sum((c for v in worked.values() for c in v.values()), Cost()).processed_tokens
    measured = processed / wall if wall > 0 else None
    rate = req.tokens_per_s or measured
    label = combined(r.label for r in pilot.runs)
    return {
        "label": label.line or None,
        "pilot": {
            "runs": len(pilot.runs),
            "seeds": pilot.seeds,
            "items_per_variant_seed": pilot_items,
            "made": pilot_total.made,
            "sent": pilot_total.sent,
            "wall_s": wall,
            "errored": errored,
            "sample": sorted({r.sample for r in pilot.runs}),
            # some run took the benchmark's first N items: not a sample of the set (files are sorted)
            "warning": FIRST_N_WARNING if any(r.sample == FIRST_N for r in pilot.runs) else None,
        },
        "request": asdict(req),
        "rate_tokens_per_s": rate,
        "rate_source": "given"
        if req.tokens_per_s
        else "measured from the pilot's wall time" + (f"; {label.kind}: not a GPU's rate" if label else ""),
        "costs": {v: _cost_row(c, rate, se) for v, (c, se) in projected.items()},
        "total": _cost_row(total, rate, total_se),
        "sample_size": {
            v: _power_row(pilot, v, req) for v in req.variants if v != "full" and "full" in pilot.variants
        },
    }


# (column, Cost field, rendered with "± se")
COST_COLUMNS = (
    ("requests made", "made", True),
    ("requests sent", "sent", True),
    ("prompt tokens", "prompt_tokens", True),
    ("cached", "cached_prompt_tokens", False),
    ("uncached", "uncached_prompt_tokens", False),
    ("generated tokens", "completion_tokens", True),
)


def _cost_row(cost: Cost, rate: float | None, se: Cost) -> dict[str, Any]:
    return {
        **{k: getattr(cost, k) for _, k, _ in COST_COLUMNS},
        "gpu_hours": gpu_hours(cost, rate) if rate else None,
        "se": {k: getattr(se, k) for _, k, with_se in COST_COLUMNS if with_se},
    }


def _power_row(pilot: Pilot, variant: str, req: PlanRequest) -> dict[str, Any]:
    assert req.items is not None  # make_plan filled it in
    d = discordance(pilot, variant)
    sdd = smallest_detectable_delta(req.items, d.psi, req.alpha, req.power)
    return {
        "pairs": d.pairs,
        "discordant": round(d.psi * d.pairs),
        "p_only_full": d.p_full,
        "p_only_variant": d.p_variant,
        "pilot_delta_points": 100 * d.delta,
        "items_needed": {
            str(x): mcnemar_sample_size(d.psi, x / 100, req.alpha, req.power) for x in req.deltas
        },
        "smallest_delta_points": None if sdd is None else 100 * sdd,
    }


# ----------------------------------------------------------------------------- text
def _pm(row: dict[str, Any], key: str) -> str:
    se = (row.get("se") or {}).get(key)
    return f"{row[key]:.0f}" if not se else f"{row[key]:.0f} ± {se:.0f}"


def render(plan: dict[str, Any]) -> str:
    req, pilot, rate = plan["request"], plan["pilot"], plan["rate_tokens_per_s"]
    errored = f"pilot errors: {pilot['errored']} results, left out of the projection (a rerun retries them)"
    lines = [
        *([plan["label"]] if plan.get("label") else []),
        f"plan: {req['items']} items × {req['seeds']} seed(s) × {len(req['variants'])} variants, "
        f"sweep-shared response cache; pilot: {pilot['runs']} runs, seeds {pilot['seeds']}",
        f"pilot items: {', '.join(pilot['sample'])}",
        *([f"warning: {pilot['warning']}"] if pilot["warning"] else []),
        *([errored] if pilot.get("errored") else []),
        f"GPU rate: {f'{rate:.1f}' if rate else 'unknown'} processed tokens/s ({plan['rate_source']})",
        "",
        f"| variant | {' | '.join(c for c, _, _ in COST_COLUMNS)} | GPU-hours |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for name, row in [*plan["costs"].items(), ("total", plan["total"])]:
        hours = "-" if row["gpu_hours"] is None else f"{row['gpu_hours']:.2f}"
        lines.append(f"| {name} | {' | '.join(_pm(row, k) for _, k, _ in COST_COLUMNS)} | {hours} |")
    lines.append("(± one standard error of the projection: the spread of the pilot's per-item costs)")
    lines += [
        f"{name}: 0 requests sent: every request it makes is made first by a variant before it in the "
        "sweep, so the sweep-shared cache answers it"
        for name, row in plan["costs"].items()
        if row["sent"] == 0 and row["made"] > 0
    ]
    if plan["sample_size"]:
        deltas = [str(x) for x in req["deltas"]]
        lines += [
            "",
            f"items needed per seed (exact McNemar vs full, α = {req['alpha']}, power {req['power']:.0%}; "
            "discordance from the pilot):",
            "",
            "| variant | pilot pairs | only full right | only variant right | pilot Δ (pts) | "
            + " | ".join(f"n for Δ = {d} pts" for d in deltas)
            + f" | smallest Δ with {req['items']} items |",
            "|---|---|---|---|---|" + "---|" * (len(deltas) + 1),
        ]
        small = []  # the rows whose ψ rests on too few discordant pairs to plan from
        for name, row in plan["sample_size"].items():
            needed = " | ".join(str(row["items_needed"][d]) for d in deltas)
            sdd = "-" if row["smallest_delta_points"] is None else f"{row['smallest_delta_points']:.1f} pts"
            lines.append(
                f"| {name} | {row['pairs']} | {row['p_only_full']:.3f} | {row['p_only_variant']:.3f} | "
                f"{row['pilot_delta_points']:+.1f} | {needed} | {sdd} |"
            )
            if row["discordant"] < MIN_DISCORDANT:
                small.append(f"{name} ({row['discordant']})")
        if small:
            lines.append(
                f"warning: small pilot: {', '.join(small)} rest on fewer than {MIN_DISCORDANT} discordant pairs; "
                "ψ from k pairs has a relative error of about 1/√k (58 % at 3, none estimable at 0), and so has "
                "every items-needed figure in those rows: a larger pilot narrows it"
            )
    return "\n".join(lines)

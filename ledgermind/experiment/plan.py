"""``ledgermind plan PILOT --items N --variants … --seeds K``: what a Table 3 will cost, and how many
items it needs to say anything.

Why: a researcher decides the item count and the GPU budget before the run. A small pilot sweep
(a few items, the variants, one or more seeds) already holds what both answers need: requests,
tokens and latencies per item, and how often ``full`` and each variant disagree on an item. This
module reads the pilot (run folders only: ``metrics.json``, ``results.jsonl``, ``trajectories/``)
and projects; the formulas are ``ledgermind/metrics/plan.py``, the method ``docs/statistics.md``.

Requests with the sweep-shared cache: the pilot's calls are replayed in sweep order (per seed,
the Table 3 variant order) through a set of request keys; a call is *sent* the first time its key
appears, whatever cache the pilot itself ran with. Its requests are attributed to the first
variant that sends them, so ``full`` carries the requests the variants share.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ledgermind.errors import DataError, UserError
from ledgermind.experiment.rundir import RunDir, find_runs
from ledgermind.experiment.table3 import VARIANTS
from ledgermind.metrics.plan import (
    ALPHA,
    POWER,
    Cost,
    Discordance,
    gpu_hours,
    mcnemar_sample_size,
    smallest_detectable_delta,
)

ORDER = [name for name, _ in VARIANTS]
DELTAS_POINTS = (1.0, 2.0, 5.0)


@dataclass
class PilotRun:
    variant: str
    seed: int
    scores: dict[str, float | None]  # item id -> score (None: errored)
    calls: list[dict[str, Any]]  # the model calls of every item, in item order
    wall_s: float


@dataclass
class Pilot:
    """What the planner needs from a pilot sweep."""

    runs: list[PilotRun]
    items_per_run: dict[tuple[str, int], int] = field(default_factory=dict)

    @property
    def variants(self) -> list[str]:
        names = {r.variant for r in self.runs}
        return [v for v in ORDER if v in names] + sorted(names - set(ORDER))

    @property
    def seeds(self) -> list[int]:
        return sorted({r.seed for r in self.runs})


def read_pilot(paths: Iterable[Path]) -> Pilot:
    """Every finished run below ``paths`` (its variant and seed from ``metrics.json``)."""
    runs = []
    for path in find_runs(list(paths)):
        run = RunDir(path)
        ident = run.identity()
        if not ident:
            continue  # unfinished: no metrics.json yet
        rows = run.result_rows()
        calls: list[dict[str, Any]] = []
        for item_id in sorted(rows):
            traj = run.trajectory(item_id) or {}
            calls += [c for c in traj.get("model_calls", []) if isinstance(c, dict)]
        scores = {i: (None if r.get("error") else r.get("score")) for i, r in rows.items()}
        wall = float((run.metrics() or {}).get("wall_time_total_s") or 0.0)
        runs.append(PilotRun(str(ident.get("variant", "full")), int(ident.get("seed", 0) or 0), scores, calls, wall))
    if not runs:
        raise DataError(f"no finished runs (metrics.json) under {', '.join(map(str, paths))}")
    return Pilot(runs)


def shared_cache_costs(pilot: Pilot) -> dict[str, Cost]:
    """Per variant: the pilot's requests and tokens as a sweep-shared cache would send them."""
    seen: set[str] = set()
    costs: dict[str, Cost] = defaultdict(Cost)
    order = {v: i for i, v in enumerate(pilot.variants)}
    for run in sorted(pilot.runs, key=lambda r: (r.seed, order[r.variant])):
        cost = costs[run.variant]
        for call in run.calls:
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


def discordance(pilot: Pilot, variant: str, reference: str = "full") -> Discordance:
    """Only-reference-right / only-variant-right shares over (item, seed) pairs both scored."""
    by_seed = {(r.variant, r.seed): r.scores for r in pilot.runs}
    only_ref = only_var = pairs = 0
    for seed in pilot.seeds:
        ref, var = by_seed.get((reference, seed)), by_seed.get((variant, seed))
        if ref is None or var is None:
            continue
        for item in set(ref) & set(var):
            x, y = ref[item], var[item]
            if x is None or y is None:
                continue
            pairs += 1
            only_ref += x >= 1.0 and y < 1.0
            only_var += y >= 1.0 and x < 1.0
    return Discordance.from_counts(only_ref, only_var, pairs)


@dataclass(frozen=True)
class PlanRequest:
    items: int
    seeds: int
    variants: tuple[str, ...]
    tokens_per_s: float | None = None
    alpha: float = ALPHA
    power: float = POWER
    deltas: tuple[float, ...] = DELTAS_POINTS


def make_plan(pilot: Pilot, req: PlanRequest) -> dict[str, Any]:
    """The projected costs (per variant and total) and the sample-size table, as plain data."""
    missing = [v for v in req.variants if v not in pilot.variants]
    if missing:
        raise UserError(f"the pilot has no runs of {missing}; it has {pilot.variants}")
    costs = shared_cache_costs(Pilot([r for r in pilot.runs if r.variant in req.variants]))
    pilot_items = {v: sum(len(r.scores) for r in pilot.runs if r.variant == v) for v in req.variants}  # item × seed
    projected = {v: costs[v].scaled(req.items * req.seeds / pilot_items[v]) for v in req.variants if pilot_items[v]}
    total = sum(projected.values(), Cost())
    pilot_total = sum(costs.values(), Cost())
    wall = sum(r.wall_s for r in pilot.runs if r.variant in req.variants)
    measured = pilot_total.processed_tokens / wall if wall > 0 else None
    rate = req.tokens_per_s or measured
    return {
        "pilot": {"runs": len(pilot.runs), "seeds": pilot.seeds, "items_per_variant_seed": pilot_items,
                  "made": pilot_total.made, "sent": pilot_total.sent, "wall_s": wall},
        "request": asdict(req),
        "rate_tokens_per_s": rate,
        "rate_source": "given" if req.tokens_per_s else "measured from the pilot's wall time",
        "costs": {v: _cost_row(c, rate) for v, c in projected.items()},
        "total": _cost_row(total, rate),
        "sample_size": {v: _power_row(pilot, v, req) for v in req.variants if v != "full" and "full" in pilot.variants},
    }  # fmt: skip


def _cost_row(cost: Cost, rate: float | None) -> dict[str, float | None]:
    return {"made": cost.made, "sent": cost.sent, "prompt_tokens": cost.prompt_tokens,
            "cached_prompt_tokens": cost.cached_prompt_tokens, "uncached_prompt_tokens": cost.uncached_prompt_tokens,
            "completion_tokens": cost.completion_tokens,
            "gpu_hours": gpu_hours(cost, rate) if rate else None}  # fmt: skip


def _power_row(pilot: Pilot, variant: str, req: PlanRequest) -> dict[str, Any]:
    d = discordance(pilot, variant)
    sdd = smallest_detectable_delta(req.items, d.psi, req.alpha, req.power)
    return {"pairs": d.pairs, "p_only_full": d.p_full, "p_only_variant": d.p_variant, "pilot_delta_points": 100 * d.delta,
            "items_needed": {str(x): mcnemar_sample_size(d.psi, x / 100, req.alpha, req.power) for x in req.deltas},
            "smallest_delta_points": None if sdd is None else 100 * sdd}  # fmt: skip


# ----------------------------------------------------------------------------- text
def render(plan: dict[str, Any]) -> str:
    req = plan["request"]
    rate = plan["rate_tokens_per_s"]
    lines = [f"plan: {req['items']} items × {req['seeds']} seed(s) × {len(req['variants'])} variants, "
             f"sweep-shared response cache; pilot: {plan['pilot']['runs']} runs, seeds {plan['pilot']['seeds']}",
             f"GPU rate: {'%.1f' % rate if rate else 'unknown'} processed tokens/s ({plan['rate_source']})", "",
             "| variant | requests made | requests sent | prompt tokens | cached | uncached | generated tokens | GPU-hours |",
             "|---|---|---|---|---|---|---|---|"]  # fmt: skip
    for name, row in [*plan["costs"].items(), ("total", plan["total"])]:
        hours = "-" if row["gpu_hours"] is None else f"{row['gpu_hours']:.2f}"
        lines.append(f"| {name} | {row['made']:.0f} | {row['sent']:.0f} | {row['prompt_tokens']:.0f} | "
                     f"{row['cached_prompt_tokens']:.0f} | {row['uncached_prompt_tokens']:.0f} | "
                     f"{row['completion_tokens']:.0f} | {hours} |")  # fmt: skip
    if plan["sample_size"]:
        deltas = [str(x) for x in req["deltas"]]
        lines += ["", f"items needed per seed (exact McNemar vs full, α = {req['alpha']}, power {req['power']:.0%}; "
                  "discordance from the pilot):", "",
                  "| variant | pilot pairs | only full right | only variant right | pilot Δ (pts) | "
                  + " | ".join(f"n for Δ = {d} pts" for d in deltas) + f" | smallest Δ with {req['items']} items |",
                  "|---|---|---|---|---|" + "---|" * (len(deltas) + 1)]  # fmt: skip
        for name, row in plan["sample_size"].items():
            needed = " | ".join(str(row["items_needed"][d]) for d in deltas)
            sdd = "-" if row["smallest_delta_points"] is None else f"{row['smallest_delta_points']:.1f} pts"
            lines.append(f"| {name} | {row['pairs']} | {row['p_only_full']:.3f} | {row['p_only_variant']:.3f} | "
                         f"{row['pilot_delta_points']:+.1f} | {needed} | {sdd} |")  # fmt: skip
    return "\n".join(lines)


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="ledgermind plan", description=__doc__.split("\n\n")[0])
    p.add_argument("pilot", nargs="+", type=Path, help="a pilot run or sweep directory")
    p.add_argument("--items", type=int, required=True, help="items per seed of the planned experiment")
    p.add_argument("--seeds", type=int, default=1, help="seeds of the planned experiment")
    p.add_argument("--variants", nargs="+", default=None, help="variants to plan (default: all in the pilot)")
    p.add_argument("--tokens-per-s", type=float, default=None, help="server rate R in processed tokens/s")
    p.add_argument("--alpha", type=float, default=ALPHA)
    p.add_argument("--power", type=float, default=POWER)
    p.add_argument("--deltas", type=float, nargs="+", default=list(DELTAS_POINTS), help="effect sizes in points")
    p.add_argument("--json", action="store_true", help="print the plan as JSON")
    return p.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        if args.items < 1 or args.seeds < 1 or not 0 < args.alpha < 1 or not 0 < args.power < 1:
            raise UserError("--items and --seeds are >= 1; --alpha and --power lie in (0, 1)")
        pilot = read_pilot(args.pilot)
        variants = [v.strip() for x in (args.variants or pilot.variants) for v in x.split(",") if v.strip()]
        req = PlanRequest(args.items, args.seeds, tuple(variants), args.tokens_per_s, args.alpha, args.power, tuple(args.deltas))
        plan = make_plan(pilot, req)
    except UserError as e:
        print(f"error: {str(e).splitlines()[0]}", file=sys.stderr)
        return 2
    print(json.dumps(plan, indent=1) if args.json else render(plan))
    return 0

"""``ledgermind plan`` (``scripts/plan.py``): the command line of ``ledgermind/experiment/plan.py``."""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from pathlib import Path

from ledgermind.cli.commands import one_line_errors
from ledgermind.errors import UserError
from ledgermind.experiment import plan as planning
from ledgermind.experiment.plan import DELTAS_POINTS, PlanRequest, make_plan, read_pilot, render
from ledgermind.metrics.plan import ALPHA, POWER


@one_line_errors
def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="ledgermind plan", description=planning.__doc__.split("\n\n")[0])
    p.add_argument("pilot", nargs="+", type=Path, help="a pilot run or sweep directory")
    p.add_argument(
        "--items",
        type=int,
        default=None,
        help="items per seed of the planned experiment (default: the pilot's)",
    )
    p.add_argument("--seeds", type=int, default=1, help="seeds of the planned experiment")
    p.add_argument("--variants", nargs="+", default=None, help="variants to plan (default: all in the pilot)")
    p.add_argument("--tokens-per-s", type=float, default=None, help="server rate R in processed tokens/s")
    p.add_argument("--alpha", type=float, default=ALPHA)
    p.add_argument("--power", type=float, default=POWER)
    p.add_argument(
        "--deltas", type=float, nargs="+", default=list(DELTAS_POINTS), help="effect sizes in points"
    )
    p.add_argument("--json", action="store_true", help="print the plan as JSON")
    args = p.parse_args(argv)
    probabilities = 0 < args.alpha < 1 and 0 < args.power < 1
    if (args.items is not None and args.items < 1) or args.seeds < 1 or not probabilities:
        raise UserError("--items and --seeds are >= 1; --alpha and --power lie in (0, 1)")
    pilot = read_pilot(args.pilot)
    variants = [v.strip() for x in (args.variants or pilot.variants) for v in x.split(",") if v.strip()]
    req = PlanRequest(
        args.items, args.seeds, tuple(variants), args.tokens_per_s, args.alpha, args.power, tuple(args.deltas)
    )
    plan = make_plan(pilot, req)
    print(json.dumps(plan, indent=1) if args.json else render(plan))
    return 0

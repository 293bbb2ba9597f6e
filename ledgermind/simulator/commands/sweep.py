"""Response curve of one simulator fault rate: full vs the ablation built against that fault.

    python scripts/sim_sweep.py --rate phantom_rate --grid 0,0.1,0.2,0.4 [--seeds 0,1,2] [--limit 40]
        [--benchmark mmmu_pro_standard10] [--out outputs/sim-sweep] [--resamples 10000] [-- key=value ...]

Rate → ablation (ledgermind/simulator/sim_sweep.py RATE_TARGETS): phantom_rate → no_ecc,
fault_coupling → no_ecc, read_noise / zoom_precision → no_dual_read (use --benchmark gauges);
--ablation/--fault choose for any other backend.<rate>. Every point runs through the normal run path
(backend=simulated, cache.mode=off, logger=none); rerunning resumes finished runs. Writes
sweep_<rate>.md/.csv/.png into --out: Δ accuracy (ablation − full, paired 95 % interval) and the
fault's catch rate vs the rate. Extra Hydra overrides go after `--`.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from omegaconf.errors import OmegaConfBaseException

from ledgermind.errors import UserError, first_line
from ledgermind.metrics.stats import DEFAULT_RESAMPLES, BootstrapConfig


def _list_of(kind: type[float] | type[int], what: str) -> Callable[[str], list[Any]]:
    """An argparse type: comma-separated values of ``kind`` (``what`` names them in the error)."""

    def parse(text: str) -> list[Any]:
        try:
            return [kind(v) for v in text.split(",") if v.strip()]
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected comma-separated {what}, got {text!r}") from None

    return parse


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--rate", required=True, help="a backend.<rate> of backend=simulated, e.g. phantom_rate")
    p.add_argument(
        "--grid", required=True, type=_list_of(float, "numbers"), help="comma-separated values in [0, 1]"
    )
    p.add_argument(
        "--seeds", type=_list_of(int, "integers"), default=[0], help="comma-separated run seeds (default 0)"
    )
    p.add_argument("--limit", type=int, default=None, help="first N items of the benchmark")
    p.add_argument("--benchmark", default="mmmu_pro_standard10")
    p.add_argument(
        "--ablation", default=None, help="the variant to compare with full (default: from the rate)"
    )
    p.add_argument(
        "--fault", default=None, help="census fault kind whose catch rate is drawn (default: from the rate)"
    )
    p.add_argument("--out", type=Path, default=Path("outputs/sim-sweep"))
    p.add_argument("--resamples", type=int, default=DEFAULT_RESAMPLES)
    p.add_argument("--bootstrap-seed", type=int, default=0)
    p.add_argument("overrides", nargs="*", help="further Hydra overrides (after --)")
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    from ledgermind.simulator import sim_sweep

    try:
        spec = sim_sweep.spec_for(
            args.rate,
            args.grid,
            ablation=args.ablation,
            fault=args.fault,
            benchmark=args.benchmark,
            seeds=tuple(args.seeds),
            limit=args.limit,
            overrides=tuple(args.overrides),
        )
        boot = BootstrapConfig(resamples=args.resamples, seed=args.bootstrap_seed)
        points, outs = sim_sweep.sweep(spec, args.out, boot)
    except (UserError, OmegaConfBaseException, ValueError) as e:
        print(f"error: {first_line(e)}", file=sys.stderr)
        return 2
    print(sim_sweep.to_markdown(points, spec))
    print(sim_sweep.method_note(points, spec, boot))
    print(f"wrote {outs.markdown}, {outs.csv.name}, {outs.chart.name}")
    return 0

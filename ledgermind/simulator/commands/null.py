"""The simulator's null test (a TEST INSTRUMENT check): R replicated simulated Table 3s.

    python scripts/sim_null.py --replicates 20 --coupling 0 [--mmmu 60] [--gauges 44] [--out outputs/sim-null] [-- key=value ...]

At --coupling 0 (the default null world: no fault changes an answer, no suggestible look, no
evidence pull, no zoom benefit) a calibrated Table 3 calls some variant distinguishable from full in
at most 5 % of the replicate tables after Holm; --coupling 1 shows whether Δ(no_ecc) is detected
when phantoms do change answers. Library: ledgermind/simulator/null_test.py. Reruns resume.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from ledgermind.cli.commands import one_line_errors
from ledgermind.errors import UserError


@one_line_errors
def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--replicates", type=int, default=20)
    p.add_argument("--coupling", type=float, default=0.0)
    p.add_argument("--mmmu", type=int, default=60, help="MMMU-Pro items per table (0: none)")
    p.add_argument("--gauges", type=int, default=44, help="gauge items per table (0: none)")
    p.add_argument("--out", type=Path, default=Path("outputs/sim-null"))
    p.add_argument("overrides", nargs="*", help="further Hydra overrides (after --)")
    args = p.parse_args(argv)
    from ledgermind.simulator.null_test import null_test

    benches = {k: n for k, n in (("mmmu_pro_standard10", args.mmmu), ("gauges", args.gauges)) if n > 0}
    if args.replicates < 1 or not benches or not 0 <= args.coupling <= 1:
        raise UserError("need --replicates >= 1, at least one benchmark, and --coupling in [0, 1]")
    report = null_test(
        args.out,
        coupling=args.coupling,
        replicates=args.replicates,
        benchmarks=benches,
        overrides=args.overrides,
    )
    text = report.to_markdown()
    out = args.out / f"null_coupling-{args.coupling:g}.md"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text + "\n", encoding="utf-8")
    print(text)
    print(f"wrote {out}")
    return 0

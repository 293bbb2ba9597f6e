"""Re-score finished runs from their stored replies with the current scorer (no model, no tools).

    python scripts/rescore.py outputs/2025-01-01/12-00-00            # one run
    python scripts/rescore.py outputs/multirun/2025-01-01/12-00-00   # every run below it
    python scripts/rescore.py RUN --random-fallback-seed 0           # upstream's seeded random letter
    python scripts/table3.py outputs/multirun/2025-01-01/12-00-00    # then rebuild the table

Rewrites results.jsonl and metrics.json (which records the scorer's version and the previous
accuracy); the previous files stay under RUN/rescore/<stamp>/. Exit 2 with one line when a run
cannot be re-scored.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from ledgermind.cli.commands import one_line_errors
from ledgermind.experiment.rescore import rescore_run
from ledgermind.runs.reader import find_runs


@one_line_errors
def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("runs", nargs="+", type=Path, help="run dirs or multirun dirs")
    p.add_argument(
        "--random-fallback-seed",
        type=int,
        default=None,
        help="score unparsable MCQ replies with a seeded random letter (the upstream protocol)",
    )
    p.add_argument(
        "--trust-config",
        action="store_true",
        help="import the loader/scorer the run's config names (only for runs you made: a run folder is data)",
    )
    args = p.parse_args(argv)
    seed, trust = args.random_fallback_seed, args.trust_config
    reports = [rescore_run(d, random_fallback_seed=seed, trust_config=trust) for d in find_runs(args.runs)]
    for rep in reports:
        print(
            f"{rep.run_dir}: {rep.n_items} items, {len(rep.changes)} verdicts changed, "
            f"accuracy {100 * rep.accuracy_before:.2f}% -> {100 * rep.accuracy_after:.2f}% "
            f"(previous files in {rep.backup_dir})"
        )
        for c in rep.changes:
            print(f"  {c.id}: {c.before[0]!r} score {c.before[1]:g} -> {c.after[0]!r} score {c.after[1]:g}")
    return 0

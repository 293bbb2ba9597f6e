"""Agreement of the claim auditor with human annotations on real claim/evidence pairs.

    .venv/bin/python scripts/eval_grounding.py [--data ../shared/data/grounding_ext/dev.jsonl] [--strict-ncc] [--misses]

Runs the grounding cascade on every row, scores only the check the row's ``subset`` names (numeric
-> NCC, entity -> ECC) and prints agreement and the confusion matrix per stratum (wice,
vitc_exact, vitc_bound), per target group (exact_number, entity, bound) and overall.
``--strict-ncc`` turns relation-aware NCC off (the paper's Eq. 5); ``--misses`` lists the rows where
the auditor and the annotators disagree. The work is done by :mod:`ledgermind.studies.grounding_eval`,
which the tests call directly.

``--folds K`` cross-validates the checks' free parameters: every candidate of the grid
(``--grid NAME=V1,V2,...``, a GroundingConfig field; the default grid, ``grounding_cv.DEFAULT_GRID``,
switches every ECC name form, the similarity threshold, ``approx_rel``, relation-aware NCC and unit
conversion, shipped values first) is run on every row once; for each fold the candidate with
the best macro-mean group agreement on the other K−1 folds is scored on the held-out fold. The
table shows the dev figure (shipped config, all rows), the held-out mean ± spread over folds, the
pooled held-out agreement and the dev−CV gap per group; a change counts only if it raises the
held-out figure.

The cross-validation is the honest one by default: ties keep the paper's strict checks
(Eq. 4 phrase membership, Eq. 5 equality; then the candidate with the fewest changes from them),
so every deviation - each ECC name form, the similarity threshold, relation-aware NCC - must earn
its place on the training folds; a rule that fixes a single dev row can never do so, and its
held-out figure shows it. ``--ties-shipped`` makes ties keep the shipped config instead (the
flattering figure: a rule the training folds cannot tell from its absence stays on).
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

from ledgermind.cli.commands import run_study
from ledgermind.confutil import shared_data_dir
from ledgermind.studies.grounding_cv import DEFAULT_GRID
from ledgermind.studies.grounding_eval import agreement_study, cv_study, study_pairs


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--data",
        type=Path,
        default=shared_data_dir() / "grounding_ext" / "dev.jsonl",
        help="annotated pairs (default: <shared data>/grounding_ext/dev.jsonl)",
    )
    parser.add_argument("--strict-ncc", action="store_true", help="strict Eq. 5 (ncc_relations=false)")
    parser.add_argument("--misses", action="store_true", help="list the disagreeing rows")
    parser.add_argument("--folds", type=int, default=0, help="K-fold cross-validation of the parameter grid")
    parser.add_argument("--seed", type=int, default=0, help="fold assignment seed")
    parser.add_argument(
        "--ties-shipped",
        action="store_true",
        help="ties prefer the shipped config (the flattering CV of earlier reports)",
    )
    parser.add_argument(
        "--derived",
        action=argparse.BooleanOptionalAction,
        help="the entity verdicts derived from the numeric rows' annotations, beside the entity rows "
        "(default: with --folds, trained on; without, not scored)",
    )
    parser.add_argument(
        "--grid",
        action="append",
        default=None,
        metavar="NAME=V1,V2",
        help=f"candidate values of a GroundingConfig field (default: {' '.join(DEFAULT_GRID)})",
    )
    args = parser.parse_args(argv)

    def report() -> str:
        pairs = study_pairs(args.data, derived=bool(args.folds) if args.derived is None else args.derived)
        if args.folds:
            return cv_study(
                pairs,
                args.grid or DEFAULT_GRID,
                args.folds,
                args.seed,
                args.strict_ncc,
                args.ties_shipped,
            )
        return agreement_study(pairs, args.data, args.strict_ncc, args.misses)

    return run_study(report, args.folds)

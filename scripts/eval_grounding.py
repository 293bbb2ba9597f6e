"""Agreement of the claim auditor with human annotations on real claim/evidence pairs (issue 11).

    .venv/bin/python scripts/eval_grounding.py [--data ../shared/data/grounding_ext/dev.jsonl] [--strict-ncc] [--misses]

Runs the grounding cascade on every row, scores only the check the row's ``subset`` names (numeric
-> NCC, entity -> ECC) and prints agreement and the confusion matrix per stratum (wice,
vitc_exact, vitc_bound), per target group (exact_number, entity, bound) and overall.
``--strict-ncc`` turns relation-aware NCC off (the paper's Eq. 5); ``--misses`` lists the rows where
the auditor and the annotators disagree. The work is done by
:func:`ledgermind.grounding.agreement.evaluate`, which the tests call directly.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from ledgermind.errors import UserError  # noqa: E402
from ledgermind.grounding.agreement import evaluate, load_pairs  # noqa: E402
from ledgermind.grounding.cascade import GroundingCascade, GroundingConfig  # noqa: E402

DEFAULT_DATA = REPO.parent / "shared" / "data" / "grounding_ext" / "dev.jsonl"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--strict-ncc", action="store_true", help="strict Eq. 5 (ncc_relations=false)")
    parser.add_argument("--misses", action="store_true", help="list the disagreeing rows")
    args = parser.parse_args(argv)
    try:
        pairs = load_pairs(args.data)
    except UserError as exc:
        print(f"eval_grounding: error: {exc}", file=sys.stderr)
        return 2
    start = time.perf_counter()
    report = evaluate(pairs, GroundingCascade(GroundingConfig(ncc_relations=not args.strict_ncc)))
    elapsed = time.perf_counter() - start
    mode = "strict Eq. 5" if args.strict_ncc else "relation-aware"
    print(f"{len(pairs)} annotated pairs from {args.data} (NCC {mode}); {elapsed:.1f} s\n")
    print(report.table())
    if args.misses:
        print()
        for v in report.misses:
            print(f"{v.pair.id} [{v.pair.check.value}/{v.pair.stratum}] human={v.pair.expected} "
                  f"auditor={v.predicted} flagged={list(v.flagged)}: {v.pair.claim}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

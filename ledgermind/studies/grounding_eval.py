"""The grounding study's two runs: agreement with the annotators, and its K-fold cross-validation.

Why a module: ``scripts/eval_grounding.py`` only parses arguments; what the study reads (the
annotated rows, optionally with the entity verdicts derived from the numeric rows), which tie
rule the cross-validation uses, and what it prints live here, where the tests call them.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path

from ledgermind.grounding.cascade import GroundingConfig, build_cascade, default_ner
from ledgermind.studies.agreement import AnnotatedPair, evaluate, load_pairs
from ledgermind.studies.derived_pairs import load_derived_pairs
from ledgermind.studies.grounding_cv import cross_validate_grounding, parse_grid, simplest_first, strict_paper


def study_pairs(data: Path, derived: bool) -> list[AnnotatedPair]:
    """The annotated rows of ``data``, plus (``derived``) the entity rows derived from its numeric rows."""
    pairs = load_pairs(data)
    if derived:
        pairs += load_derived_pairs(data, default_ner())
    return pairs


def agreement_study(pairs: Sequence[AnnotatedPair], data: Path, strict_ncc: bool, misses: bool) -> str:
    """Agreement and confusion matrices of the shipped cascade (``strict_ncc``: Eq. 5 NCC), with
    (``misses``) every row where the auditor and the annotators disagree."""
    start = time.perf_counter()
    report = evaluate(pairs, build_cascade(GroundingConfig(ncc_relations=not strict_ncc)))
    elapsed = time.perf_counter() - start
    mode = "strict Eq. 5" if strict_ncc else "relation-aware"
    lines = [f"{len(pairs)} annotated pairs from {data} (NCC {mode}); {elapsed:.1f} s\n", report.table()]
    if misses:
        lines.append("")
        lines += [
            f"{v.pair.id} [{v.pair.check.value}/{v.pair.stratum}] human={v.pair.expected} "
            f"auditor={v.predicted} flagged={list(v.flagged)}: {v.pair.claim}"
            for v in report.misses
        ]
    return "\n".join(lines)


def cv_study(
    pairs: Sequence[AnnotatedPair],
    grid_spec: Sequence[str],
    k: int,
    seed: int,
    strict_ncc: bool,
    ties_shipped: bool,
) -> str:
    """K-fold choice over the grid ``grid_spec`` (``NAME=V1,V2`` each).

    Honest by default: ties keep the paper's strict checks, then the candidate with the fewest
    changes from them, so every deviation must earn its place on the training folds;
    ``ties_shipped`` lets ties keep the shipped config (the flattering figure).
    """
    start = time.perf_counter()
    base = GroundingConfig(ncc_relations=not strict_ncc)
    grid = parse_grid(grid_spec, base)
    if not ties_shipped:
        grid = simplest_first(grid, strict_paper(base))
    table = cross_validate_grounding(pairs, grid, k, seed=seed, shipped=base)
    return (
        f"{len(pairs)} annotated pairs, {k}-fold CV over {len(grid)} candidates; "
        f"{time.perf_counter() - start:.1f} s\n\n{table}"
    )

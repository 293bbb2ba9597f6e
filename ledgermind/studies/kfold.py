"""K-fold cross-validation of rule parameters on small annotated sets.

Why this exists: the grounding checks and the crop-zoom zone choice have free parameters (a
similarity threshold, a tolerance, a weighting). Chosen on the same 68 or 44 rows they are scored
on, the figure flatters them: on a kept-back half of the same sources the entity check lost 12
points. The honest figure is the one anchors report: choose the parameters on K−1 folds, score the
held-out fold, and report mean ± spread over folds next to the all-rows (dev) figure; the gap
between the two is the measure of fitting to rows.

Everything here is generic: a *candidate* is any hashable setting, ``outcomes[c][i]`` is what
candidate ``c`` scores on item ``i`` (precomputed once, so every fold's choice is arithmetic),
and a *metric* turns a list of outcomes into a number. The folds are stratified (each stratum is
dealt round-robin after a seeded shuffle) so that a 5-fold split of 36 bound rows keeps both
labels in every fold.
"""

from __future__ import annotations

import math
import random
import statistics
from collections import defaultdict
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Generic, TypeVar

from ledgermind.errors import UserError

C = TypeVar("C", bound=Hashable)
Out = TypeVar("Out")

Metric = Callable[[Sequence[Out]], float]


class FoldCountError(UserError):
    """K cannot split the items: fewer than 2 folds, or more folds than items.

    Library wording (an entry point adds which option gave K)."""


def check_fold_count(k: int) -> None:
    """K below 2 splits nothing; said before any data is read (the item count is checked later)."""
    if k < 2:
        raise FoldCountError(f"k-fold cross-validation needs at least 2 folds, got {k}")


def stratified_folds(strata: Sequence[Hashable], k: int, seed: int = 0) -> list[int]:
    """Fold index (0..k-1) of each item; items of one stratum are spread evenly over the folds."""
    check_fold_count(k)
    if k > len(strata):
        raise FoldCountError(f"{k} folds exceed the number of items ({len(strata)})")
    by_stratum: dict[Hashable, list[int]] = defaultdict(list)
    for i, s in enumerate(strata):
        by_stratum[s].append(i)
    rng = random.Random(seed)
    folds = [0] * len(strata)
    offset = 0
    for key in sorted(by_stratum, key=repr):
        members = by_stratum[key]
        rng.shuffle(members)
        for j, i in enumerate(members):
            folds[i] = (offset + j) % k
        offset += len(members)  # the next stratum starts where this one stopped: balanced sizes
    return folds


@dataclass(frozen=True)
class FoldResult(Generic[C]):
    """One held-out fold: the candidate chosen on the other folds and its held-out scores."""

    fold: int
    chosen: C
    train_score: float
    held_out: dict[str, float]
    n_held_out: int


@dataclass
class CVReport(Generic[C]):
    """Per-fold results plus, per metric, mean ± spread over folds and the pooled held-out score."""

    folds: list[FoldResult[C]] = field(default_factory=list)
    pooled: dict[str, float] = field(default_factory=dict)  # metric over all held-out outcomes at once

    def mean(self, metric: str) -> float:
        values = [f.held_out[metric] for f in self.folds if not math.isnan(f.held_out[metric])]
        return statistics.fmean(values) if values else float("nan")

    def spread(self, metric: str) -> float:
        """Standard deviation over folds (0 for a single usable fold)."""
        values = [f.held_out[metric] for f in self.folds if not math.isnan(f.held_out[metric])]
        return statistics.stdev(values) if len(values) > 1 else 0.0

    def cells(self, metric: str, dev: float, best: float) -> list[str]:
        """One metric's row of a study's dev-vs-CV table: dev (shipped), dev (best on all rows),
        CV mean ± sd over folds, CV pooled, and the gap dev − CV pooled (fitting to rows)."""
        pooled = self.pooled[metric]
        spread = f"{self.mean(metric):.3f} ± {self.spread(metric):.3f}"
        return [f"{dev:.3f}", f"{best:.3f}", spread, f"{pooled:.3f}", f"{dev - pooled:+.3f}"]


def cross_validate(
    outcomes: Mapping[C, Sequence[Out]],
    folds: Sequence[int],
    objective: Metric[Out],
    metrics: Mapping[str, Metric[Out]],
) -> CVReport[C]:
    """Choose a candidate per fold by ``objective`` on the training folds; score the held-out fold.

    ``outcomes`` is ordered: on a tie the earlier candidate wins, so list the shipped default
    first and a tie never moves the choice off it.
    """
    candidates = list(outcomes)
    report: CVReport[C] = CVReport()
    pooled: list[Out] = []  # every fold's held-out outcomes under its own choice
    for fold in range(max(folds) + 1):
        train = [i for i, f in enumerate(folds) if f != fold]
        test = [i for i, f in enumerate(folds) if f == fold]
        best, best_score = candidates[0], -math.inf
        for c in candidates:
            score = objective([outcomes[c][i] for i in train])
            if score > best_score + 1e-12:
                best, best_score = c, score
        held = [outcomes[best][i] for i in test]
        report.folds.append(
            FoldResult(fold, best, best_score, {n: m(held) for n, m in metrics.items()}, len(test))
        )
        pooled += held
    report.pooled = {name: metric(pooled) for name, metric in metrics.items()}
    return report

"""Uncertainty for accuracies and paired differences: item bootstrap, exact McNemar.

Why this exists: Table 3's deltas between ablations are a few points on ~136 items, and the same
code moved one delta from −5.1 to +2.2 points between two seeds. A delta without an interval cannot
say whether a mechanism helps. Everything here is pure arithmetic on per-item scores, so the same
statistics serve simulated runs, real-model runs and the fault-rate sweep.

The unit of resampling is the **item**: the benchmark's items are the sample we generalise from.
With several seeds an item is a *cluster* holding one value per seed, and a bootstrap resample
draws whole items (all their seeds jointly), so seed-to-seed variation enters through each item's
values and no seed is ever paired with another item's seed. The estimate is the pooled mean over
every (item, seed) value, and each resample recomputes it as Σ cluster sums / Σ cluster sizes.

Intervals are percentile intervals of that bootstrap distribution. They collapse to a point when
every item carries the same value (e.g. 100 % accuracy, or two variants that agree on every item):
the items then show no variation to resample, which is what the data say, not a claim of certainty.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from statistics import NormalDist

import numpy as np

DEFAULT_RESAMPLES = 10_000
DEFAULT_LEVEL = 0.95
DEFAULT_SEED = 0


@dataclass(frozen=True)
class BootstrapConfig:
    """How intervals are drawn: resample count, its own RNG seed (reproducible tables), level."""

    resamples: int = DEFAULT_RESAMPLES
    seed: int = DEFAULT_SEED
    level: float = DEFAULT_LEVEL

    def __post_init__(self) -> None:
        if self.resamples < 1:
            raise ValueError(f"resamples must be >= 1, got {self.resamples}")
        if not 0.0 < self.level < 1.0:
            raise ValueError(f"level must be in (0, 1), got {self.level}")


@dataclass(frozen=True)
class Estimate:
    """A mean with its bootstrap interval; ``n`` clusters (items) and ``n_values`` (item, seed) values."""

    mean: float
    low: float
    high: float
    n: int
    n_values: int

    def contains(self, x: float) -> bool:
        return self.low <= x <= self.high

    def scaled(self, k: float) -> Estimate:
        """The same estimate in other units (fractions → percentage points)."""
        return Estimate(self.mean * k, self.low * k, self.high * k, self.n, self.n_values)


Clusters = Sequence[Sequence[float]]  # one inner sequence per item: its values (one per seed)


def _sums_counts(clusters: Clusters) -> tuple[np.ndarray, np.ndarray]:
    kept = [c for c in clusters if len(c)]
    sums = np.array([float(sum(c)) for c in kept], dtype=float)
    counts = np.array([len(c) for c in kept], dtype=float)
    return sums, counts


def bootstrap_distribution(clusters: Clusters, config: BootstrapConfig = BootstrapConfig()) -> np.ndarray:
    """The pooled mean of ``config.resamples`` resamples of whole clusters, drawn with replacement.

    Empty clusters (an item with no usable value) are dropped first. Seeded by ``config.seed`` only,
    so a table rebuilt from the same runs shows the same intervals.
    """
    sums, counts = _sums_counts(clusters)
    if not len(sums):
        raise ValueError("no values to resample")
    rng = np.random.default_rng(config.seed)
    idx = rng.integers(0, len(sums), size=(config.resamples, len(sums)))
    return sums[idx].sum(axis=1) / counts[idx].sum(axis=1)


def cluster_mean(clusters: Clusters, config: BootstrapConfig = BootstrapConfig()) -> Estimate:
    """Pooled mean of all values with a percentile bootstrap interval over clusters (items)."""
    dist = bootstrap_distribution(clusters, config)  # raises ValueError when there is nothing to resample
    sums, counts = _sums_counts(clusters)
    tail = (1.0 - config.level) / 2.0
    low, high = np.quantile(dist, [tail, 1.0 - tail])
    mean = float(sums.sum() / counts.sum())
    # a percentile can land a float ulp outside the observed range; the interval must hold the mean
    return Estimate(mean, min(float(low), mean), max(float(high), mean), len(sums), int(counts.sum()))


def paired_differences(
    variant: Mapping[str, Sequence[float | None]], reference: Mapping[str, Sequence[float | None]]
) -> list[list[float]]:
    """Per item, ``variant − reference`` for every seed where both have a score.

    Values are aligned by position (seed order); ``None`` marks an errored item in that seed's run,
    and such a pair is left out (pairwise exclusion). Items present in only one mapping are left out.
    """
    out: list[list[float]] = []
    for item_id in sorted(set(variant) & set(reference)):
        a, b = variant[item_id], reference[item_id]
        if len(a) != len(b):
            raise ValueError(f"item {item_id}: {len(a)} seeds vs {len(b)} seeds")
        out.append([x - y for x, y in zip(a, b, strict=True) if x is not None and y is not None])
    return out


def paired_delta(
    variant: Mapping[str, Sequence[float | None]],
    reference: Mapping[str, Sequence[float | None]],
    config: BootstrapConfig = BootstrapConfig(),
) -> Estimate:
    """Mean paired difference ``variant − reference`` over items (and seeds) with its paired bootstrap
    interval: items are resampled once for both variants, so what both get right or wrong together
    cancels, unlike two independent intervals."""
    return cluster_mean(paired_differences(variant, reference), config)


def bootstrap_p_value(
    clusters: Clusters, config: BootstrapConfig = BootstrapConfig(), null: float = 0.0
) -> float:
    """Two-sided bootstrap p-value of the pooled mean against ``null``: 2·min(P*(mean ≤ null), P*(mean ≥ null)).

    Why this one: it is the p-value whose "< 1 − level" matches the percentile interval excluding
    ``null`` (same resamples, same RNG seed), so a Holm adjustment of several such p-values
    (``holm``) refines the verdicts the intervals give instead of introducing a second test. A
    distribution that is all ``null`` (two variants that agree on every item) gives 1.
    """
    dist = bootstrap_distribution(clusters, config)
    below, above = float(np.mean(dist <= null)), float(np.mean(dist >= null))
    return min(1.0, 2.0 * min(below, above))


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm–Bonferroni adjusted p-values, in the input order (family-wise error control, any dependence).

    Sorted ascending, the k-th smallest (k = 0..m−1) becomes max over j ≤ k of min(1, (m − j)·p_(j));
    a hypothesis is rejected at family-wise level α when its adjusted p is < α.
    """
    m = len(p_values)
    order = sorted(range(m), key=lambda i: p_values[i])
    adjusted = [0.0] * m
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p_values[i]))
        adjusted[i] = running
    return adjusted


def mcnemar_exact(b: int, c: int) -> float:
    """Two-sided exact McNemar p-value: a binomial(b + c, 1/2) test on the discordant pairs.

    ``b``: pairs only the first classifier gets right; ``c``: only the second. p = min(1, 2·P(X ≤ min(b, c))).
    """
    if b < 0 or c < 0:
        raise ValueError(f"discordant counts must be >= 0, got {b}, {c}")
    n = b + c
    if n == 0:
        return 1.0
    k = min(b, c)
    tail = sum(math.comb(n, i) for i in range(k + 1)) / 2**n
    return min(1.0, 2.0 * tail)


def discordant_pairs(
    first: Mapping[str, float | None], second: Mapping[str, float | None]
) -> tuple[int, int]:
    """(only ``first`` correct, only ``second`` correct) over items both scored; correct = score ≥ 1
    (a partial-credit 0.5 counts as not correct, as in ``ItemResult.correct``)."""
    b = c = 0
    for item_id in set(first) & set(second):
        x, y = first[item_id], second[item_id]
        if x is None or y is None:
            continue
        b += x >= 1.0 and y < 1.0
        c += y >= 1.0 and x < 1.0
    return b, c


def wilson_interval(successes: float, total: int, level: float = DEFAULT_LEVEL) -> tuple[float, float] | None:
    """Wilson score interval of a proportion (None when ``total`` is 0): for rates of counted events
    such as caught / injected faults, where a percentile bootstrap of few events is unreliable."""
    if total <= 0:
        return None
    z = NormalDist().inv_cdf(0.5 + level / 2.0)
    p = successes / total
    denom = 1.0 + z * z / total
    centre = (p + z * z / (2 * total)) / denom
    half = z * math.sqrt(p * (1 - p) / total + z * z / (4 * total * total)) / denom
    return max(0.0, centre - half), min(1.0, centre + half)

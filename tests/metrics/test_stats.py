"""Item bootstrap and exact McNemar against cases small enough to compute by hand."""

from __future__ import annotations

import math
from collections import Counter

import pytest

from ledgermind.metrics.stats import (
    BootstrapConfig,
    bootstrap_distribution,
    bootstrap_p_value,
    cluster_mean,
    discordant_pairs,
    holm,
    mcnemar_exact,
    paired_delta,
    paired_differences,
    wilson_interval,
)

CFG = BootstrapConfig(resamples=20_000, seed=7)


def _freqs(values) -> dict[float, float]:
    counts = Counter(round(float(v), 9) for v in values)
    return {k: n / len(values) for k, n in counts.items()}


def test_paired_bootstrap_of_three_items_matches_the_binomial_by_hand() -> None:
    """Deltas (0, 0, 1): a resample's mean is (#draws of the third item)/3 with #draws ~ Binomial(3, 1/3):
    P = 8/27, 12/27, 6/27, 1/27 for 0, 1/3, 2/3, 1. P(mean ≤ 2/3) = 26/27 < 0.975, so the 95 % percentile
    interval is [0, 1]; the point estimate is 1/3."""
    full = {"a": [1.0], "b": [0.0], "c": [0.0]}
    variant = {"a": [1.0], "b": [0.0], "c": [1.0]}
    dist = bootstrap_distribution(paired_differences(variant, full), CFG)
    expected = {0.0: 8 / 27, round(1 / 3, 9): 12 / 27, round(2 / 3, 9): 6 / 27, 1.0: 1 / 27}
    got = _freqs(dist)
    assert set(got) == set(expected)
    for k, p in expected.items():
        assert got[k] == pytest.approx(p, abs=4 * math.sqrt(p * (1 - p) / CFG.resamples))
    est = paired_delta(variant, full, CFG)
    assert (est.mean, est.low, est.high, est.n) == (pytest.approx(1 / 3), 0.0, 1.0, 3)
    assert est.contains(0.0)  # not distinguishable from 0


def test_identical_deltas_give_a_degenerate_interval() -> None:
    full = {str(i): [1.0, 1.0] for i in range(6)}
    worse = {str(i): [0.0, 0.0] for i in range(6)}
    est = paired_delta(worse, full, CFG)
    assert (est.mean, est.low, est.high, est.n, est.n_values) == (-1.0, -1.0, -1.0, 6, 12)
    assert not est.contains(0.0)
    same = paired_delta(full, full, CFG)
    assert (same.low, same.high) == (0.0, 0.0) and same.contains(0.0)


def test_items_are_resampled_with_all_their_seeds_jointly() -> None:
    """Item A scored (1, 0) over two seeds, item B (1, 1). Drawing whole items: AA → 1/2, AB → 3/4, BB → 1
    with P 1/4, 1/2, 1/4. Drawing (item, seed) values independently would also produce 0 and 1/4."""
    dist = bootstrap_distribution([[1.0, 0.0], [1.0, 1.0]], CFG)
    got = _freqs(dist)
    assert set(got) == {0.5, 0.75, 1.0}
    assert got[0.75] == pytest.approx(0.5, abs=0.015) and got[0.5] == pytest.approx(0.25, abs=0.015)
    assert cluster_mean([[1.0, 0.0], [1.0, 1.0]], CFG).mean == 0.75


def test_errored_items_are_excluded_pairwise_and_the_estimate_pools_values() -> None:
    """A pair (item, seed) counts only when both runs scored it. Left: A (1), B (0, 0) → pooled 1/3, and
    a resample AB is (1 + 0 + 0)/3, not the mean of item means (1/2)."""
    variant = {"A": [1.0, None], "B": [0.0, 0.0], "C": [None, None]}
    full = {"A": [0.0, 1.0], "B": [0.0, 0.0], "C": [1.0, 1.0]}
    diffs = paired_differences(variant, full)
    assert diffs == [[1.0], [0.0, 0.0], []]
    est = paired_delta(variant, full, CFG)
    assert (est.mean, est.n, est.n_values) == (pytest.approx(1 / 3), 2, 3)
    assert set(_freqs(bootstrap_distribution(diffs, CFG))) == {0.0, round(1 / 3, 9), 1.0}


def test_bootstrap_is_reproducible_from_its_seed() -> None:
    clusters = [[float(i % 3 == 0)] for i in range(40)]
    a = cluster_mean(clusters, BootstrapConfig(resamples=500, seed=1))
    assert a == cluster_mean(clusters, BootstrapConfig(resamples=500, seed=1))
    draws = bootstrap_distribution(clusters, BootstrapConfig(resamples=500, seed=1))
    assert (draws == bootstrap_distribution(clusters, BootstrapConfig(resamples=500, seed=1))).all()
    assert (draws != bootstrap_distribution(clusters, BootstrapConfig(resamples=500, seed=2))).any()


@pytest.mark.parametrize(
    ("b", "c", "p"),
    [
        (1, 5, 2 * (1 + 6) / 64),  # n = 6: P(X ≤ 1) = (C(6,0) + C(6,1)) / 2^6
        (0, 6, 2 / 64),
        (2, 10, 2 * (1 + 12 + 66) / 4096),
        (3, 3, 1.0),  # 2 · 42/64 > 1 is capped
        (0, 0, 1.0),  # no discordant pair: no evidence either way
    ],
)
def test_mcnemar_exact_matches_hand_computed_binomial(b: int, c: int, p: float) -> None:
    assert mcnemar_exact(b, c) == pytest.approx(p)
    assert mcnemar_exact(c, b) == pytest.approx(p)  # two-sided


def test_discordant_pairs_skip_errors_and_treat_partial_credit_as_wrong() -> None:
    first = {"a": 1.0, "b": 1.0, "c": 0.0, "d": 0.5, "e": None, "f": 1.0}
    second = {"a": 1.0, "b": 0.0, "c": 1.0, "d": 1.0, "e": 1.0, "f": 0.0}
    assert discordant_pairs(first, second) == (2, 2)  # b, f only first; c, d only second; e errored


def test_wilson_interval_by_hand() -> None:
    z2 = 1.959963984540054**2
    assert wilson_interval(0, 10) == pytest.approx((0.0, z2 / (10 + z2)))
    low, high = wilson_interval(5, 10)
    half = (
        math.sqrt(z2) * math.sqrt(0.25 / 10 + z2 / 400) / (1 + z2 / 10)
    )  # z·√(p(1−p)/n + z²/4n²)/(1 + z²/n)
    assert (low, high) == pytest.approx((0.5 - half, 0.5 + half)) and half == pytest.approx(0.2634, abs=1e-4)
    assert wilson_interval(0, 0) is None


def test_holm_adjusts_by_rank_and_keeps_the_input_order() -> None:
    # sorted 0.01, 0.03, 0.04 → ×3, ×2, ×1 = 0.03, 0.06, 0.04 → running max 0.03, 0.06, 0.06
    assert holm([0.01, 0.04, 0.03]) == pytest.approx([0.03, 0.06, 0.06])
    assert holm([0.5, 0.9]) == pytest.approx([1.0, 1.0]) and holm([]) == []


def test_bootstrap_p_value_matches_the_binomial_by_hand() -> None:
    # four items, paired differences −1, −1, 0, 0: P*(mean ≥ 0) = P(all four draws are zeros) = 1/16 → p = 1/8
    p = bootstrap_p_value([[-1.0], [-1.0], [0.0], [0.0]], BootstrapConfig(resamples=40_000, seed=1))
    assert p == pytest.approx(0.125, abs=0.01)
    assert bootstrap_p_value([[0.0], [0.0]], BootstrapConfig(resamples=100)) == 1.0  # agree everywhere

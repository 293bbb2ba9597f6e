from __future__ import annotations

import math

import pytest

from ledgermind.scoring.numeric import NumericTolerance, numbers_match, parse_number


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("Answer: 36.7", 36.7),
        ("The reading is 1,250 psi", 1250.0),
        ("first 3 then 4", 4.0),  # last number without Answer:
        ("Answer: 12 (I counted 3 rows)", 12.0),  # first number after Answer:
        ("−4.5 °C", -4.5),
        ("about 45%", 45.0),
        ("1.5e3 Pa", 1500.0),
        ("reads 7. Answer: unsure", 7.0),  # nothing after Answer: → look before it
        ("no digits here", None),
        ("", None),
    ],
)
def test_parse_number(text: str, value: float | None) -> None:
    assert parse_number(text) == value


def test_reading_relative_tolerance() -> None:
    assert numbers_match(36.8, 36.7, "reading")  # the paper's example
    assert numbers_match(115, 100, "reading")
    assert not numbers_match(116, 100, "reading")
    assert not numbers_match(116, 100, "reading", tol=NumericTolerance(relative_read=0.10))


def test_reading_graduation_rescues_zero() -> None:
    assert not numbers_match(2, 0, "reading")
    assert numbers_match(2, 0, "reading", graduation=2)
    assert not numbers_match(2.5, 0, "reading", graduation=2)
    assert not numbers_match(2, 0, "reading", graduation=2, tol=NumericTolerance(use_graduation=False))


def test_counts_and_exact_values_are_exact() -> None:
    assert numbers_match(5, 5, "count")
    assert not numbers_match(6, 5, "count")
    assert not numbers_match(1971, 1969)  # years: exact
    assert numbers_match(16.5, 16.50, "exact")
    assert not numbers_match(16.49, 16.5, "exact")
    assert not numbers_match(float("nan"), 1.0, "reading")


@pytest.mark.parametrize(
    ("pred", "gold", "kind", "graduation", "match"),
    [
        (1e5, 0.0, "reading", 1e5, True),  # err = one graduation exactly (the +1e-12 is below 1e5's ulp)
        (0.0, 1e5, "reading", 1e5, True),
        (
            1.0,
            math.inf,
            "reading",
            None,
            False,
        ),  # a non-finite gold never matches, even under δ_read·|gold| = ∞
        (math.inf, 1.0, "reading", math.inf, False),  # a non-finite prediction never matches
        (math.nan, 1.0, None, None, False),
        (1e-6, 0.0, None, None, True),  # exact: err = EXACT_EPS · max(1, |gold|) is still a match
        (1.5e-6, 0.0, None, None, False),  # |gold| < 1: the tolerance floor is 1 · EXACT_EPS, not more
        (1e6 + 0.5, 1e6, None, None, True),  # relative noise: 1e-6 · 1e6 = 1.0 absorbs 0.5
        (1e6 + 1.5, 1e6, "count", None, False),
    ],
)
def test_eq5_numeric_tolerance_boundaries(pred: float, gold: float, kind, graduation, match: bool) -> None:
    assert numbers_match(pred, gold, kind, graduation) is match


def test_the_explanation_states_the_rule_its_bound_and_the_error_and_agrees_with_the_score() -> None:
    from ledgermind.scoring.numeric import NumericTolerance, explain_match, numbers_match

    assert explain_match(60, 64, "reading", 5) == (
        "reading: within 15 % of the gold (± 9.6) or one graduation (± 5); |60 − 64| = 4: within the tolerance"
    )
    assert explain_match(50, 64, "reading").endswith("|50 − 64| = 14: outside the tolerance")
    chart = NumericTolerance(relative_all=0.05)
    assert explain_match(104, 100, None, None, chart) == (
        "the benchmark's tolerance: within 5 % of the gold (± 5); |104 − 100| = 4: within the tolerance"
    )
    assert explain_match(1969, 1968) == "exact number (formatting aside); |1969 − 1968| = 1: different"
    for pred, gold, kind, tol in [
        (60, 64, "reading", None),
        (50, 64, "reading", None),
        (106, 100, None, chart),
    ]:
        verdict = explain_match(pred, gold, kind, None, tol).endswith("within the tolerance")
        assert verdict == numbers_match(pred, gold, kind, None, tol)


@pytest.mark.parametrize(
    ("pred", "gold", "match"),
    [
        (105, 100, True),  # exactly the benchmark's 5 %: inside (ChartQA's relaxed accuracy is ≤ 5 %)
        (95, 100, True),
        (105.2, 100, False),
        (
            1_050_000.5,
            1_000_000,
            True,
        ),  # formatting noise is relative to the gold's size, as for exact numbers
        (1_050_002, 1_000_000, False),
        (1e-6, 0, True),  # a gold of 0: 5 % of nothing, formatting noise of an absolute 1e-6 only
        (1.5e-6, 0, False),
    ],
)
def test_a_benchmarks_own_tolerance_is_relative_and_inclusive(pred: float, gold: float, match: bool) -> None:
    assert numbers_match(pred, gold, tol=NumericTolerance(relative_all=0.05)) is match

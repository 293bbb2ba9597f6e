from __future__ import annotations

import pytest

from ledgermind.scoring import NumericTolerance, numbers_match, parse_number


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

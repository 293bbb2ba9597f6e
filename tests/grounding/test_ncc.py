"""NCC (Eq. 5): exact for discrete types, δ_read for continuous readings (App. C)."""

from __future__ import annotations

import pytest

from ledgermind.errors import ConfigError
from ledgermind.grounding.ncc import check_ncc


def test_year_mismatch_fails():  # paper example: 1969 vs 1971
    result = check_ncc("It happened in 1969.", ["It happened in 1971."])
    assert not result.passed and [n.text for n in result.unmatched] == ["1969"]


def test_reading_within_tolerance_passes():  # paper example: 36.7 vs 36.8 on a reading
    assert check_ncc("The thermometer reads 36.8 °C", ["36.7 °C"], kind="reading").passed


def test_reading_tolerance_is_relative_and_bounded():
    assert check_ncc("reads 42", ["36.7"], kind="reading").passed  # 5.3 <= 0.15 * 42
    assert not check_ncc("reads 44", ["36.7"], kind="reading").passed  # 7.3 > 0.15 * 44
    assert not check_ncc("reads 36.8", ["36.7"], kind="reading", delta_read=0.001).passed


def test_non_reading_claims_are_exact_even_for_decimals():
    assert not check_ncc("The value is 36.8", ["36.7"]).passed
    assert check_ncc("The value is 36.70", ["36.7"]).passed


@pytest.mark.parametrize(
    ("claim", "evidence"),
    [
        ("In 1969 it landed", ["in 1970"]),  # year
        ("There were 11 astronauts", ["There were 12 astronauts"]),  # count
        ("Apollo 11", ["Apollo 12"]),  # identifier
        ("on July 20, 1969", ["on July 21, 1969"]),  # date
    ],
)
def test_discrete_types_are_exact_even_for_readings(claim, evidence):
    assert not check_ncc(claim, evidence, kind="reading").passed


def test_option_labels_are_exact():  # paper example: option B vs C
    assert not check_ncc("The answer is option C", ["(B) Sun"]).passed
    assert check_ncc("The answer is option B", ["(B) Sun"]).passed
    assert not check_ncc("The answer is B", ["B-52 bomber"]).passed  # a B in a name is not a label


def test_dates_and_years_cross_match():
    assert check_ncc("It landed in 1969", ["on July 20, 1969"]).passed
    assert check_ncc("It landed in July 1969", ["20 July 1969"]).passed
    assert not check_ncc("It landed on July 20, 1969", ["July 1969"]).passed  # day not in evidence


def test_units_must_agree_when_both_present():
    assert not check_ncc("5 km", ["5 m"]).passed
    assert check_ncc("5 km", ["the sign says 5"]).passed
    assert check_ncc("36.7 °C", ["36.7°"], kind="reading").passed


def test_formats_normalise_before_matching():
    assert check_ncc("It costs $1234.5", ["price: 1,234.5 USD"]).passed
    assert check_ncc("eleven astronauts", ["11 astronauts"]).passed
    assert check_ncc("Apollo XI", ["Apollo 11"]).passed


def test_claim_without_numbers_passes_and_empty_pool_fails():
    assert check_ncc("The sky is blue", []).passed
    assert not check_ncc("It had 3 wheels", []).passed


def test_unknown_kind_is_a_config_error():
    with pytest.raises(ConfigError):
        check_ncc("3", ["3"], kind="guess")

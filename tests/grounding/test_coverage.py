"""Support coverage ρ (Eq. 3) and Tok(·)."""

from __future__ import annotations

import pytest

from ledgermind.grounding.coverage import support_coverage
from ledgermind.grounding.tokens import content_tokens


def test_tokens_drop_stopwords_and_keep_numbers():
    assert content_tokens("The reading is 1,234.5 on Beethoven's dial!") == {
        "reading",
        "1234.5",
        "beethoven",
        "dial",
    }
    assert content_tokens("Café") == {"cafe"}


def test_coverage_is_share_of_claim_tokens_in_pool_union():
    # claim tokens {red, car, parked, garage}; pool supports red + car (one fact each) -> 2/4
    assert support_coverage("The red car is parked in the garage", ["a red bus", "the car"]) == 0.5


def test_coverage_full_and_zero():
    assert support_coverage("Paris, France", ["France: Paris"]) == 1.0
    assert support_coverage("Paris, France", ["Rome, Italy"]) == 0.0
    assert support_coverage("Paris", []) == 0.0


@pytest.mark.parametrize("claim", ["", "   ", "it is what it was", "!!!"])
def test_token_less_claim_has_zero_coverage(claim):
    assert support_coverage(claim, [claim, "anything at all"]) == 0.0


def test_a_one_word_claim_without_content_tokens_is_supported_only_verbatim():
    # a one-letter option ("S" is a stopword) chosen from an observation that reads "S"
    assert support_coverage("S", ["S"]) == 1.0 and support_coverage("s.", ["grade S here"]) == 1.0
    assert support_coverage("S", ["RB", "Sx"]) == 0.0


def test_repeated_claim_tokens_count_once():
    assert support_coverage("red red red car", ["red"]) == 0.5


@pytest.mark.parametrize(
    ("claim", "fact", "rho"),
    [
        ("410", "reading 410.0", 1.0),  # a bare-number decision restating a reading
        ("410.0", "reading 410", 1.0),
        ("1.50 bar", "1.5 bar", 1.0),
        ("0410", "410", 1.0),  # numbers compare as numbers
        ("1,234", "1234.0 units", 1.0),
        ("410", "reading 4100", 0.0),  # a different number stays different
        ("410", "reading 41.0", 0.0),
        ("410 psi", "reading 410.0", 0.5),  # Eq. 3: 1 of 2 content tokens
    ],
)
def test_eq3_coverage_number_tokens_compare_as_numbers(claim: str, fact: str, rho: float) -> None:
    assert support_coverage(claim, [fact]) == rho

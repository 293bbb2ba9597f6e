"""Option labels in a claim resolve to the option's text before grounding (grounding/option_labels.py)."""

from __future__ import annotations

import pytest

from ledgermind.grounding.ncc import check_ncc
from ledgermind.grounding.option_labels import resolve_option_refs

OPTS = ["q=0.68", "q=0.48", "Apollo 11 Plaque", "7"]


@pytest.mark.parametrize(
    ("claim", "view"),
    [
        ("The answer is B", "The q=0.48"),
        ("The answer is B. q=0.48", "The q=0.48"),
        ("Option C is correct", "Apollo 11 Plaque is correct"),
        ("This is consistent with (D)", "This is consistent with 7"),
        ("B. q=0.48", "q=0.48"),
    ],
)
def test_labels_naming_an_option_become_its_text(claim: str, view: str) -> None:
    assert resolve_option_refs(claim, OPTS) == view


def test_a_label_outside_the_option_list_stays_and_ncc_still_rejects_it() -> None:
    assert resolve_option_refs("The answer is H", OPTS) == "The answer is H"
    assert not check_ncc(resolve_option_refs("The answer is H", OPTS), ["q=0.48"]).passed


def test_without_options_or_labels_the_text_is_untouched() -> None:
    assert resolve_option_refs("The answer is B", None) == "The answer is B"
    assert resolve_option_refs("The reading is 42 kPa", OPTS) == "The reading is 42 kPa"


def test_the_resolved_claim_passes_ncc_exactly_when_the_option_text_is_supported() -> None:
    assert not check_ncc("The answer is B", ["q=0.48"]).passed  # the label alone is never in evidence
    assert check_ncc(resolve_option_refs("The answer is B", OPTS), ["q=0.48"]).passed
    assert not check_ncc(resolve_option_refs("The answer is A", OPTS), ["q=0.48"]).passed

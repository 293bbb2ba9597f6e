"""Sentence split of S-RFA: a single capital before a period is a label/initial, unless a lower-case
word precedes it (a point or option name ending a sentence)."""

from __future__ import annotations

import pytest

from ledgermind.audit.split import _sentences


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Organisms 1 and 3 meet at point B. Therefore, the ancestor is Organism B.",
         ["Organisms 1 and 3 meet at point B.", "Therefore, the ancestor is Organism B."]),
        ("The answer is C. It fits the data.", ["The answer is C.", "It fits the data."]),
        ("John F. Kennedy was president. He won.", ["John F. Kennedy was president.", "He won."]),
        ("A. Apollo 11 landed on the Moon.", ["A. Apollo 11 landed on the Moon."]),
        ("Options: A. Red, B. Blue.", ["Options: A. Red, B. Blue."]),
        ("As Dr. Tobias Wren established. Then it moved.", ["As Dr. Tobias Wren established.", "Then it moved."]),
    ],
)
def test_single_capital_ends_a_sentence_only_after_a_lower_case_word(text: str, expected: list[str]) -> None:
    assert _sentences(text) == expected

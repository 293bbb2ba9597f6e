"""Sentence split of S-RFA: a single capital before a period is a label/initial, unless a lower-case
word precedes it (a point or option name ending a sentence)."""

from __future__ import annotations

import pytest

from ledgermind.srfa.split import _sentences


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "Organisms 1 and 3 meet at point B. Therefore, the ancestor is Organism B.",
            ["Organisms 1 and 3 meet at point B.", "Therefore, the ancestor is Organism B."],
        ),
        ("The answer is C. It fits the data.", ["The answer is C.", "It fits the data."]),
        ("John F. Kennedy was president. He won.", ["John F. Kennedy was president.", "He won."]),
        ("A. Apollo 11 landed on the Moon.", ["A. Apollo 11 landed on the Moon."]),
        ("Options: A. Red, B. Blue.", ["Options: A. Red, B. Blue."]),
        (
            "As Dr. Tobias Wren established. Then it moved.",
            ["As Dr. Tobias Wren established.", "Then it moved."],
        ),
    ],
)
def test_single_capital_ends_a_sentence_only_after_a_lower_case_word(text: str, expected: list[str]) -> None:
    assert _sentences(text) == expected


def test_packed_sentences_stay_apart_for_ner(ner) -> None:
    """A trace of more than nine sentences is packed; the packed claim must not let NER join a
    point label with the next sentence ("B. Therefore")."""
    from ledgermind.grounding.ecc import claim_entities
    from ledgermind.grounding.normalize import claim_view, is_markup
    from ledgermind.srfa.split import split_trace
    from perception.aliases import AliasTable

    body = " ".join(f"Step {i} adds the next term." for i in range(16))  # 18 SCs: pairs
    trace = body + " Organisms 1 and 3 meet at point B. Therefore, the ancestor is Organism B.\nAnswer: B"
    split = split_trace(trace)
    assert len(split.statements) == 9
    packed = next(s for s in split.statements if "point B." in s)
    assert "point B.\nTherefore" in packed
    ents = [e.text for e in claim_entities(claim_view(packed), ner, AliasTable())]
    assert not any(is_markup(e) for e in ents), ents

"""The decision-claim text format is written and read back in one place (pipeline/render.py)."""

from __future__ import annotations

from ledgermind.benchmarks.item import Item
from ledgermind.pipeline.answer import stated_rationale
from ledgermind.pipeline.render import decision_added_words, decision_claim_text

ITEM = Item("q", "Which flow rate?", [], ["606 m/s; 2.74 m^3/s", "42", "Apollo 11"])


def test_added_words_round_trip_even_when_the_option_contains_the_separator() -> None:
    plain = decision_claim_text("A", ITEM.options[0])
    assert (
        plain == "A. 606 m/s; 2.74 m^3/s" and decision_added_words(ITEM, plain) == ""
    )  # the option's own "; "
    said = decision_claim_text("B", "42", stated_rationale("B, as Dr. Tobias Wren described", "B", "42"))
    assert said == "B. 42; as Dr. Tobias Wren described"
    assert decision_added_words(ITEM, said) == "as Dr. Tobias Wren described"


def test_only_words_beyond_the_label_and_option_text_count() -> None:
    assert stated_rationale("B. 42", "B", "42") == stated_rationale("B", "B", "42") == ""
    assert stated_rationale("(B) 42, because 6 x 7 = 42", "B", "42") == "because 6 x 7 = 42"
    assert stated_rationale("The answer is B", "B", "42") == ""  # not a leading label: nothing added
    assert decision_added_words(ITEM, "free-form answer; with words") == ""  # not an MCQ decision claim


def test_a_leading_label_closed_by_punctuation_is_the_choice_when_the_official_parser_gives_up() -> None:
    """'H, as Professor Ingrid Kowalczyk described': the official parser sees H and I after
    'Answer:' and returns nothing; the agent's answer is still H, and its DC keeps option H's text."""
    from types import SimpleNamespace

    from ledgermind.pipeline.answer import decision_text, mcq_letter

    options = [
        "A ruptured esophagus",
        "Aspiration",
        "Embolism",
        "Pancreatitis",
        "Food poisoning",
        "Infarction",
        "SARS",
        "Aortic aneurysm",
        "A stroke.",
        "Allergy",
    ]
    ctx = SimpleNamespace(item=Item("m", "Why is this an emergency?", [], options))
    said = "H, as Professor Ingrid Kowalczyk described"
    assert mcq_letter(ctx, f"Answer: {said}") == "H"
    assert decision_text(ctx, said) == "H. Aortic aneurysm; as Professor Ingrid Kowalczyk described"
    assert mcq_letter(ctx, "Answer: (C) since Dr. Ford and Mr. Bell saw it") == "C"
    assert mcq_letter(ctx, "Answer: K, as Dr. Ives said") is None  # not an option letter

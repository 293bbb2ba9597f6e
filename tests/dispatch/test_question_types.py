"""Question types, F(q) (Table 4), M(q) (Table 6), OC categories (Table 5)."""

from __future__ import annotations

from ledgermind.dispatch.question_types import (
    BASE_OC_CATEGORIES,
    GRANULARITY_OTHER,
    METHOD_DEFAULT,
    OC_INSTRUCTIONS,
    OCCategory,
    QuestionType,
    profile,
)


def test_read_question() -> None:
    p = profile("What is the reading on the pressure gauge?")
    assert QuestionType.READ in p.types
    assert "graduation" in p.granularity and "decimal" in p.granularity
    assert "crop" in p.method
    assert p.oc_categories == BASE_OC_CATEGORIES


def test_location_question() -> None:
    p = profile("Where is this landmark?")
    assert QuestionType.LOCATION in p.types
    assert "landmark" in p.granularity and "TEXT" in p.method


def test_knowledge_and_deep_knowledge() -> None:
    p = profile("Which country produced this film?")
    assert QuestionType.KNOWLEDGE in p.types and QuestionType.DEEP_KNOWLEDGE not in p.types
    deep = profile("According to the museum, what year was this painting originally shown?")
    assert {QuestionType.KNOWLEDGE, QuestionType.DEEP_KNOWLEDGE} <= deep.types


def test_deep_knowledge_markers_only_within_condition_2() -> None:
    # App. D.1: "based on" is a deep-knowledge marker only inside Condition 2 (knowledge fusion).
    # A computation question that merely says "based on the table" is neither knowledge nor deep.
    p = profile("Based on the table, compute the net present value of the project.")
    assert QuestionType.KNOWLEDGE not in p.types
    assert QuestionType.DEEP_KNOWLEDGE not in p.types
    both = profile("Based on this film's poster, which country produced it originally?")
    assert {QuestionType.KNOWLEDGE, QuestionType.DEEP_KNOWLEDGE} <= both.types


def test_diff_injects_diff_category() -> None:
    p = profile("Spot the difference between the two images.")
    assert QuestionType.DIFF in p.types
    assert p.oc_categories[-1] is OCCategory.DIFF
    assert "dimension" in p.granularity and "DIFF" in p.method


def test_char_count_and_count() -> None:
    p = profile("How many characters are on the sign?")
    assert {QuestionType.CHAR_COUNT, QuestionType.COUNT} <= p.types
    assert "each character" in p.granularity
    assert OCCategory.COUNT in p.oc_categories and p.oc_categories.count(OCCategory.COUNT) == 1
    c = profile("How many apples are there?")
    assert QuestionType.COUNT in c.types and QuestionType.CHAR_COUNT not in c.types
    assert "total" in c.method


def test_compare_injects_compare_category() -> None:
    p = profile("Compare the heights: which is larger?")
    assert QuestionType.COMPARE in p.types and OCCategory.COMPARE in p.oc_categories
    assert "pair" in p.method


def test_mcq_granularity_takes_precedence_and_names_letters() -> None:
    p = profile("What is the reading on the gauge?", ["10", "20", "30"])
    assert QuestionType.MCQ in p.types and QuestionType.READ in p.types
    assert "one option letter" in p.granularity and "A/B/C)" in p.granularity
    # methods keep table order: MCQ first, Reading later
    assert p.method.index("option") < p.method.index("crop")


def test_other_question_defaults() -> None:
    p = profile("What colour is the car?")
    assert p.types == frozenset()
    assert p.granularity == GRANULARITY_OTHER and p.method == METHOD_DEFAULT
    assert p.oc_instructions() == {c: OC_INSTRUCTIONS[c] for c in BASE_OC_CATEGORIES}


def test_every_category_has_an_instruction() -> None:
    assert set(OC_INSTRUCTIONS) == set(OCCategory)

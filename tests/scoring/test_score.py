from __future__ import annotations

from ledgermind.benchmarks.item import AnswerType, Item
from ledgermind.scoring import ScoringConfig, score


def mcq(answer: str = "B") -> Item:
    return Item("m1", "Which?", options=["cat", "dog", "cow"], answer=answer, answer_type=AnswerType.MCQ)


def test_mcq_correct_wrong_unparsed() -> None:
    assert score(mcq(), "Answer: B").correct == 1.0
    wrong = score(mcq(), "Answer: C")
    assert wrong.correct == 0.0 and wrong.parsed and wrong.prediction == "C"
    un = score(mcq(), "hmm")
    assert un.correct == 0.0 and not un.parsed and un.prediction is None


def test_mcq_random_letter_flag_is_seeded_per_item() -> None:
    cfg = ScoringConfig(random_letter_seed=0)
    a, b = score(mcq(), "hmm", cfg), score(mcq(), "hmm", cfg)
    assert a == b and a.prediction in {"A", "B", "C"} and not a.parsed and a.detail["method"] == "random"


def test_mcq_options_from_meta_for_vision_items() -> None:
    item = Item("v", "", options=None, answer="A", answer_type=AnswerType.MCQ, meta={"options": ["x1", "y1"]})
    assert score(item, "so the answer must surely be the x1 one").correct == 1.0


def test_numeric_uses_item_meta() -> None:
    reading = Item(
        "g",
        "read",
        answer="0",
        answer_type=AnswerType.NUMERIC,
        meta={"numeric_kind": "reading", "graduation": 5},
    )
    assert score(reading, "Answer: 4").correct == 1.0
    assert score(reading, "Answer: 6").correct == 0.0
    count = Item("c", "how many", answer="5", answer_type=AnswerType.NUMERIC, meta={"numeric_kind": "count"})
    assert score(count, "There are 6").correct == 0.0
    none = score(count, "several")
    assert not none.parsed and none.correct == 0.0


def test_open_exact_and_containment() -> None:
    item = Item("o", "sign?", answer="PLATFORM 7", answer_type=AnswerType.OPEN)
    assert score(item, "Answer: platform-7.").correct == 1.0
    assert score(item, "It says Platform 7 in white").detail["method"] == "contains"
    assert score(item, "Answer: platform 70").correct == 0.0  # whole-phrase containment only
    assert not score(item, "").parsed

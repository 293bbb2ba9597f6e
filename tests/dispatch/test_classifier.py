"""φ(q): each App. D.1 condition firing and not firing, regex edge cases, α(q), determinism."""

from __future__ import annotations

import pytest

from ledgermind.dispatch.classifier import (
    Complexity,
    Condition,
    DispatchConfig,
    ascii_alpha_ratio,
    classify,
    mcq_letters,
    render_with_options,
)
from ledgermind.dispatch.keywords import DispatchKeywords


@pytest.mark.parametrize(
    ("question", "keyword"),
    [
        ("How many birds are on the wire?", "how many"),
        ("What temperature does the thermometer show?", "temperature"),
        ("What is the reading on the gauge?", "reading"),
        ("Count the red blocks.", "count"),
        ("Locate the exit sign.", "locate"),
        ("Identify the region where the tumour is.", "identify the region"),
        ("What do the meters show?", "meter"),  # plural allowed
    ],
)
def test_condition1_fires(question: str, keyword: str) -> None:
    c = classify(question)
    assert c.complexity is Complexity.COMPLEX
    assert keyword in c.reasons[Condition.PRECISE_PERCEPTION]


@pytest.mark.parametrize(
    "question",
    [
        "Why did the crisis escalate?",  # "scale" inside "escalate"
        "What is the account balance?",  # "count" inside "account"
        "Which parameter matters most?",  # "meter" inside "parameter"
        "Which county is shown?",  # "count" + y
    ],
)
def test_condition1_is_word_boundary_aware(question: str) -> None:
    assert Condition.PRECISE_PERCEPTION not in classify(question).reasons


def test_condition2_english_and_chinese_markers() -> None:
    assert "this film" in classify("Who directed this film?").reasons[Condition.KNOWLEDGE_FUSION]
    assert "founded" in classify("When was the brand founded?").reasons[Condition.KNOWLEDGE_FUSION]
    assert "shenme pinpai" in classify("zhe shi shenme pinpai de shouji").reasons[Condition.KNOWLEDGE_FUSION]
    for hanzi in ("哪部", "什么品牌", "是谁", "什么动画", "什么植物"):
        assert hanzi in classify(f"图中{hanzi}？").reasons[Condition.KNOWLEDGE_FUSION]
    assert Condition.KNOWLEDGE_FUSION not in classify("What colour is the sky?").reasons


def test_condition3_keywords_and_pair_rule() -> None:
    assert "compare" in classify("Compare the two vases.").reasons[Condition.VERIFICATION]
    assert (
        "spot the difference"
        in classify("Spot the difference between the pictures.").reasons[Condition.VERIFICATION]
    )
    # identification term alone or fact-check term alone: no; both: yes
    assert Condition.VERIFICATION not in classify("Identify the animal.").reasons
    assert Condition.VERIFICATION not in classify("When was it discovered?").reasons
    both = classify("Identify the building; when was it built in stone?")
    assert Condition.VERIFICATION in both.reasons
    assert any("+" in r for r in both.reasons[Condition.VERIFICATION])


def test_condition4_needs_two_distinct_letters() -> None:
    assert mcq_letters("Pick one: A. cat B. dog") == ("A", "B")
    assert mcq_letters("A. cat A. dog") == ("A",)
    assert Condition.MCQ not in classify("Option A. is the only choice").reasons
    assert classify("(A) red (B) blue").reasons[Condition.MCQ] == ("A", "B")
    assert mcq_letters("G. red H. blue") == ()  # only A–F, as in the paper's regex
    assert mcq_letters("a. red b. blue") == ()  # case-sensitive
    assert mcq_letters("ABC. DEF") == ()  # letters must stand alone


def test_condition4_overlapping_options_ending_in_capital() -> None:
    # "2.86 A\nB. …": non-overlapping findall would swallow B, C, … and miss the MCQ.
    text = render_with_options("What is the current?", ["0.35 A", "2.86 A", "3.50 A"])
    assert mcq_letters(text) == ("A", "B", "C")


def test_render_with_options_letters() -> None:
    assert render_with_options("Q? ", ["x", " y"]) == "Q?\nA. x\nB. y"
    assert render_with_options("Q?", None) == "Q?"
    c = classify("Which is right?", ["yes", "no"])
    assert c.reasons[Condition.MCQ] == ("A", "B")
    assert Condition.MCQ not in classify("Which is right?").reasons


def test_condition5_alpha_ratio() -> None:
    assert ascii_alpha_ratio("") == 1.0  # guarded: empty is not "non-English"
    assert ascii_alpha_ratio("<image 1>") == 1.0
    assert ascii_alpha_ratio("abcd") == 1.0
    assert ascii_alpha_ratio("这是什么") == 0.0
    assert ascii_alpha_ratio("ab这是") == 0.5
    assert ascii_alpha_ratio("a b") == 1.0  # whitespace excluded
    c = classify("这张图片里有什么？")
    assert c.complexity is Complexity.COMPLEX and Condition.NON_ENGLISH in c.reasons
    assert Condition.NON_ENGLISH not in classify("What colour is the 汽车 car here?").reasons
    assert Condition.NON_ENGLISH in classify("ab这是").reasons  # α = 0.5 → boundary is inclusive


def test_simple_question_has_no_reasons() -> None:
    c = classify("What colour is the car in <image 1>?")
    assert c.complexity is Complexity.SIMPLE and c.reasons == {} and not c.is_complex


def test_empty_question_is_simple_not_crash() -> None:
    assert classify("").complexity is Complexity.SIMPLE
    assert classify(None).complexity is Complexity.SIMPLE  # type: ignore[arg-type]


def test_deterministic() -> None:
    q = "According to the gauge, how many units? A. 1 B. 2"
    assert all(classify(q) == classify(q) for _ in range(5))


def test_configured_keywords_route() -> None:
    kw = DispatchKeywords(precise_perception=(*DispatchKeywords().precise_perception, "odometer"))
    cfg = DispatchConfig(keywords=kw)
    assert Condition.PRECISE_PERCEPTION in classify("What does the odometer say?", config=cfg).reasons
    assert Condition.PRECISE_PERCEPTION not in classify("What does the odometer say?").reasons


def test_alpha_threshold_is_configurable() -> None:
    q = "abc这是什么"  # α = 3/7
    assert Condition.NON_ENGLISH in classify(q).reasons
    assert Condition.NON_ENGLISH not in classify(q, config=DispatchConfig(non_english_alpha_max=0.4)).reasons

"""Eq. 6 / App. D.1 pinned: Condition 4's "at least two distinct option letters", Condition 5's
α(q) ≤ 0.5 at the boundary in both readings of |q| (``pipeline.dispatch_alpha_chars``: ``visible``
is the documented DEVIATION — whitespace and <image N> left out, docs/architecture.md — ``all`` is
the paper's every character of q), and SIMPLE only when no condition holds."""

from __future__ import annotations

import pytest

from ledgermind.dispatch.classifier import (
    AlphaChars,
    Complexity,
    Condition,
    DispatchConfig,
    ascii_alpha_ratio,
    classify,
    strip_image_placeholders,
)
from ledgermind.errors import ConfigError
from ledgermind.pipeline import LedgerMindAgent, PipelineConfig


@pytest.mark.parametrize(
    ("text", "visible", "all_chars"),
    [
        ("ab这是", 2 / 4, 2 / 4),
        ("ab 这是", 2 / 4, 2 / 5),  # the space: out of |q| (visible), in it (paper)
        (" <image 1>", 1.0, 5 / 10),  # only a placeholder: no language (visible); "image" counts (paper)
        ("abc 1", 3 / 4, 3 / 5),
        ("这是什么", 0.0, 0.0),
        ("", 1.0, 1.0),  # |q| = 0: no evidence of a non-English question
    ],
)
def test_condition5_alpha_by_hand_deviation_visible_and_paper_all(
    text: str, visible: float, all_chars: float
) -> None:
    assert ascii_alpha_ratio(text) == pytest.approx(visible)
    assert ascii_alpha_ratio(text, AlphaChars.ALL) == pytest.approx(all_chars)


@pytest.mark.parametrize(
    ("question", "alpha_chars", "non_english"),
    [
        ("ab这是", AlphaChars.VISIBLE, True),  # α = 0.5 = threshold: "α(q) ≤ 0.5" is non-English
        ("abc这是", AlphaChars.VISIBLE, False),  # 3/5 = 0.6 > 0.5
        ("ab 这是", AlphaChars.ALL, True),  # 2/5
        (" <image 1>", AlphaChars.ALL, True),  # 5/10 = 0.5, paper formula
        (" <image 1>", AlphaChars.VISIBLE, False),  # the deviation: placeholders are layout
    ],
)
def test_condition5_threshold_is_inclusive(question: str, alpha_chars: AlphaChars, non_english: bool) -> None:
    c = classify(question, config=DispatchConfig(alpha_chars=alpha_chars))
    assert (Condition.NON_ENGLISH in c.reasons) is non_english
    assert c.is_complex is non_english  # no other condition fires on these


def test_condition5_switch_reaches_the_agent_and_rejects_typos() -> None:
    assert LedgerMindAgent(None, {}, None).dispatch.alpha_chars is AlphaChars.VISIBLE  # type: ignore[arg-type]
    agent = LedgerMindAgent(None, {}, None, PipelineConfig(dispatch_alpha_chars="all"))  # type: ignore[arg-type]
    assert agent.dispatch.alpha_chars is AlphaChars.ALL
    with pytest.raises(ConfigError, match="dispatch_alpha_chars"):
        PipelineConfig(dispatch_alpha_chars="letters")


@pytest.mark.parametrize(
    ("question", "mcq"),
    [
        ("Pick one:\nA. red", False),  # one letter: below "at least two distinct"
        ("Pick one:\nA. red\nA. blue", False),  # two matches, one distinct letter
        ("Pick one:\nA. red\nB. blue", True),
        ("Pick: (A) red (C) blue", True),
    ],
)
def test_condition4_needs_two_distinct_letters(question: str, mcq: bool) -> None:
    assert (Condition.MCQ in classify(question).reasons) is mcq


def test_eq6_simple_only_when_no_condition_holds() -> None:
    c = classify("What colour is the sky?")
    assert c.complexity is Complexity.SIMPLE and c.reasons == {}


@pytest.mark.parametrize(
    ("question", "hits"),
    [
        ("Identify the logo in the picture", None),  # identification term alone: no pair, no C3
        ("Who invented the telephone?", None),  # fact-check term alone: no pair, no C3
        # a verification keyword AND the pair: both are kept, the pair as "ident+fact"
        ("Verify: identify the building, and when was it built?", ("verify", "identify+when was")),
        # several terms of each family: one pair (the first of each), not their product
        ("Recognize the logo depicted here: who invented it, historically?", ("recognize+historically",)),
    ],
)
def test_condition3_pair_rule_needs_both_families(question: str, hits) -> None:
    assert classify(question).reasons.get(Condition.VERIFICATION) == hits


def test_eq6_classification_carries_alpha_letters_and_the_condition5_reason() -> None:
    c = classify("这是什么", options=["红", "蓝"])
    assert c.alpha == 0.0 and c.mcq_letters == ("A", "B")
    assert c.reasons[Condition.NON_ENGLISH] == ("alpha=0.000",)
    assert c.reasons[Condition.MCQ] == ("A", "B")


def test_condition4_uses_the_configured_pattern() -> None:
    cfg = DispatchConfig(mcq_pattern=r"\b([1-6])[.)\s]+\S")
    c = classify("Pick one:\n1. red\n2. blue", config=cfg)
    assert c.mcq_letters == ("1", "2") and Condition.MCQ in c.reasons
    assert Condition.MCQ not in classify("Pick one:\n1. red\n2. blue").reasons  # the paper's [A-F]


def test_condition5_image_placeholder_is_replaced_by_whitespace_only() -> None:
    assert strip_image_placeholders("a<image 1>b") == "a b"
    assert ascii_alpha_ratio("<image 1> 这是") == 0.0  # the placeholder leaves nothing countable behind

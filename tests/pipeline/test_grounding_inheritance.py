"""A decision inherits grounding only from an active, *grounded* [J] claim with the same answer.

The DC "B. It stays liquid" shares no words with the evidence (the option is a conclusion, not an
observation), so alone it fails ρ; it is supported through the [J] claim that reasoned to B.
"""

from __future__ import annotations

import pytest

from ledgermind.benchmarks.item import AnswerType, Item
from ledgermind.claims import Claim, ClaimStatus, ClaimType, Stage
from ledgermind.dispatch import profile
from ledgermind.grounding import GroundingCascade
from ledgermind.ledger import Ledger
from ledgermind.pipeline.agent import grounding_config
from ledgermind.pipeline.config import AblationFlags, PipelineConfig
from ledgermind.pipeline.evidence import EvidenceIO
from tests.helpers import EchoOCR, TextImage

QUESTION = "What happens to the water in the beaker?"
ITEM = Item("q", QUESTION, [], ["It freezes", "It stays liquid", "It boils"], "B", AnswerType.MCQ)


def _decide(ner, judgment: str, *, retract: bool = False) -> tuple[Claim, Claim]:
    cfg = PipelineConfig()
    cascade = GroundingCascade(grounding_config(cfg, AblationFlags()), ner=ner)
    led = Ledger()
    ev = EvidenceIO(ITEM, profile(QUESTION, ITEM.options), cfg, led, cascade, {}, free_form=False)
    entries = led.record(
        EchoOCR().invoke(image=TextImage(["thermometer reads 20 degrees", "beaker holds water"]))
    )
    j = led.add_claim(Claim("SC-1", ClaimType.SC, judgment, Stage.J, [e.id for e in entries], sigma=0.92))
    ev.ground(j)
    if retract:
        j.status = ClaimStatus.INVALIDATED
    dc = led.add_claim(Claim("DC-1", ClaimType.DC, "B. It stays liquid", None, ["SC-1"], sigma=0.92))
    ev.ground(dc)
    return j, dc


def test_a_decision_inherits_from_a_grounded_judgment_with_the_same_answer(ner):
    j, dc = _decide(ner, "The thermometer reads 20 degrees and the beaker holds water, so B")
    assert j.grounded and dc.grounded and dc.grounding["coverage"] >= 0.8


@pytest.mark.parametrize(
    ("judgment", "retract", "why"),
    [
        ("The thermometer reads 120 degrees and the beaker holds water, so B", False, "[J] invents a number"),
        (
            "The thermometer reads 20 degrees and the beaker holds water, so C",
            False,
            "[J] concluded another answer",
        ),
        (
            "The thermometer reads 20 degrees and the beaker holds water, so B",
            True,
            "[J] is no longer active",
        ),
    ],
)
def test_a_decision_does_not_inherit_from_an_unusable_judgment(ner, judgment, retract, why):
    j, dc = _decide(ner, judgment, retract=retract)
    assert not dc.grounded, why
    assert dc.grounding["coverage"] < 0.5  # the DC's own ρ: the option text is not in the evidence
    if "invents" in why:
        assert j.grounding is not None and not j.grounded  # it was checked and failed, not unchecked

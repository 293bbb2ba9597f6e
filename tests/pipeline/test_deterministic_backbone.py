"""Mechanisms that must work when the model is deterministic (greedy): the scripted fake answers
the same request with the same reply, as a greedy backbone does (the default cache mode is on)."""

from __future__ import annotations

import pytest

from ledgermind.metrics.census import census
from ledgermind.pipeline import PipelineConfig
from ledgermind.trajectory import PathKind, Trajectory
from tests.pipeline.conftest import item, solve

APOLLO_OCR = [("Apollo 11 Plaque", [0, 0, 50, 20], 0.95), ("1969", [0, 30, 50, 50], 0.95)]
SIGN_OCR = [("EXIT", [0, 0, 40, 20], 0.99)]
OBSERVE = {"prompt": "observe", "reply": "[OC-1] TEXT | Apollo 11 Plaque\n[OC-2] NUMBER | 1969"}
CASES = {  # path → (question, OCR, rules): a decision no evidence supports, whatever is re-observed
    PathKind.DIRECT: (
        "What word is written on the sign?",
        SIGN_OCR,
        [
            {"prompt": "direct", "reply": "Answer: BANANA"},
            {"prompt": "observe", "reply": "[OC-1] TEXT | EXIT"},
            {"prompt": "decide", "reply": "Answer: BANANA | Based on: nothing"},
        ],
    ),
    PathKind.FULLPIPE: (
        "Identify the artifact in the image and verify the year on it.",
        APOLLO_OCR,
        [
            {"prompt": "plan", "reply": "1. Observation targets: plaque text"},
            OBSERVE,
            {"prompt": "reason", "reply": "[SC-1][J] Apollo 11 | Based on: [OC-2]"},
            {"prompt": "decide", "reply": "Answer: Gemini 4 spacecraft | Based on: nothing"},
        ],
    ),
}


def _repeats(t: Trajectory) -> int:
    keys = [c.request_key for c in t.model_calls]
    return len(keys) - len(set(keys))


@pytest.mark.parametrize("path", [PathKind.DIRECT, PathKind.FULLPIPE])
@pytest.mark.parametrize("ending", ["abstain", "keep"])
def test_t5_ends_by_one_rule_on_both_paths(make, image, path, ending):
    """Π(T5): ACQUIRE while M > 0, then the configured ending — the same on DIRECT and FULLPIPE
    (before, DIRECT kept the unsupported decision after two ACQUIREs and FULLPIPE abstained)."""
    question, ocr, rules = CASES[path]
    agent, _ = make(rules, ocr=ocr, cfg=PipelineConfig(t5_ending=ending))
    t = solve(agent, item(question, image))
    c = census(t)
    assert t.path is path
    acquires = [e for e in t.events if e.operator is not None and e.operator.value == "ACQUIRE"]
    assert acquires and all(e.trigger.name == "T5" for e in acquires)
    assert t.abstained is (ending == "abstain") and c["abstained"] == int(ending == "abstain")
    last = t.events[-1]
    assert last.trigger.name == "T5" and (last.operator.value if last.operator else None) == (
        "ABSTAIN" if ending == "abstain" else None
    )
    # why T5 fired: no ACTIVE entry states the decision's answer (BANANA / Gemini 4), every time
    assert c["t5"]["no_support"] == c["triggers"]["T5"] >= 2 and c["t5"]["perception_only"] == 0
    assert _repeats(t) == 0  # the repeated ACQUIRE is a rephrased request, never a resend
    assert c["repair"]["skipped_identical"] == 0 and c["model_calls"] == len(t.model_calls)


def test_t5_support_is_perception_when_an_observation_states_an_option(make, image):
    agent, _ = make(
        [
            {"prompt": "direct", "reply": "Answer: A"},
            {"prompt": "observe", "reply": "[OC-1] TEXT | EXIT"},
            {"prompt": "decide", "reply": "Answer: A | Based on: nothing"},
        ],
        ocr=SIGN_OCR,
    )
    t = solve(
        agent, item("What word is written on the sign?", image, options=["ENTRY", "EXIT", "STOP"], answer="B")
    )
    c = census(t)
    assert (
        c["triggers"]["T5"] >= 1
        and c["t5"]["perception_only"] == c["triggers"]["T5"]
        and c["t5"]["no_support"] == 0
    )
    assert any("support possible from: perception" in n for n in t.notes)


def test_knowledge_questions_without_a_knowledge_source_are_announced_and_counted(make, image):
    from tests.pipeline.conftest import FixedSearch

    items = [
        item("What year did this historical event happen?", image, id_="k1"),
        item("What word is written on the sign?", image, id_="s1"),
    ]
    agent, _ = make([])
    assert agent.pre_run_notice(items).startswith(
        "1 of 2 items are knowledge questions with no knowledge source"
    )
    with_search, _ = make([], search=FixedSearch())
    assert with_search.pre_run_notice(items) is None
    assert agent.pre_run_notice(items[1:]) is None  # no knowledge question: nothing to announce

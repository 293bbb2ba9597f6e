"""Algorithm 1 lines 35–44 and App. D.5 through the agent, driven by request-driven scripted replies.

Each test names the line it pins. The scripted backend answers by the prompt text (never by a
stage name); the tools are the harness's fixed OCR / crop (tests/pipeline/conftest.py).
"""

from __future__ import annotations

import pytest

from ledgermind.claims import ClaimOrigin, ClaimType
from ledgermind.ledger import Kappa
from ledgermind.metrics.census import census
from ledgermind.pipeline import PipelineConfig
from ledgermind.prompts.signatures import recognise
from ledgermind.trajectory import OperatorName, Trigger
from tests.pipeline.conftest import item, solve
from tests.pipeline.test_agent_branches import APOLLO_OCR, BASE_RULES, VERIFY_Q

HYPOTHESIS = "It is the Apollo 13 plaque from 1969"
REASON_ECC_FAIL = {"prompt": "reason", "reply": f"[SC-1][E] The plaque reads Apollo 11 | Based on: [OC-2]\n"
                                                f"[SC-2][J] {HYPOTHESIS} | Based on: [OC-2], [OC-3]"}


def _stages(backend) -> list[str]:
    return [recognise(r.last_user_text()) for r in backend.history]


def _hypothesis_entries(t):
    return [e for e in t.ledger.entries() if e.src == "vqa" and e.kappa is Kappa.DERIVATION]


def test_alg1_l39_confirmed_hypothesis_appends_no_derivation(make, image):
    """c′ = c*: the re-examination is asked (and kept in the audit trail) but appends no entry."""
    agent, backend = make(BASE_RULES + [
        REASON_ECC_FAIL,
        {"prompt": "hypothesis", "reply": f"1. none\n2. none\n3. Conclusion: Confirm: {HYPOTHESIS}."},
        {"prompt": "decide", "reply": "Answer: Apollo 13 | Based on: [SC-2]"},
    ], ocr=APOLLO_OCR)
    t = solve(agent, item(VERIFY_Q, image))
    assert _stages(backend).count("hypothesis") == 1 and census(t)["hypothesis_verification"] == 1
    assert _hypothesis_entries(t) == []  # line 39: no DERIVATION for c′ = c*
    assert any(o.inputs.get("stage") == "hypothesis" for o in t.ledger.tool_outputs())  # still auditable
    assert not [c for c in t.ledger.claims(ClaimType.SC) if c.origin is ClaimOrigin.REPAIR]


def test_alg1_l39_revised_hypothesis_appends_derivation_sigma_088(make, image):
    agent, _ = make(BASE_RULES + [
        REASON_ECC_FAIL,
        {"prompt": "hypothesis", "reply": "3. Conclusion: Revise: Apollo 11 plaque from 1969"},
        {"prompt": "decide", "reply": "Answer: Apollo 11 | Based on: [SC-3]"},
    ], ocr=APOLLO_OCR)
    t = solve(agent, item(VERIFY_Q, image))
    [entry] = _hypothesis_entries(t)
    assert entry.sigma == 0.88
    [revised] = [c for c in t.ledger.claims(ClaimType.SC) if c.origin is ClaimOrigin.REPAIR]
    assert revised.citations == [entry.id] and revised.text == "Apollo 11 plaque from 1969"


def test_eq3_bare_number_decision_is_supported_by_its_reading_no_t5(make, image):
    """ρ (Eq. 3) compares number tokens as numbers: "410" restates the reading "reading 410.0"."""
    from tests.pipeline.test_agent_branches import READ_Q, read_rules

    rules = read_rules("410.0", "410.0", decide="Answer: 410 | Based on: [SC-1]")
    rules[1] = {"prompt": "observe", "reply": "[OC-1] NUMBER | 410.0 psi"}
    rules[4] = {"prompt": "reason", "reply": "[SC-1][J] The gauge shows 410 | Based on: [OC-5]"}
    agent, _ = make(rules, ocr=[("410.0", [0, 0, 50, 20], 0.95)])
    t = solve(agent, item(READ_Q, image))
    reading = [e for e in t.ledger.entries() if e.src == "read" and e.active]
    assert reading and reading[0].fact == "reading 410.0"
    assert t.answer == "410" and not any(e.trigger is Trigger.T5 for e in t.events)
    assert t.decision_claims[-1].grounding["coverage"] == 1.0


# ----------------------------------------------------------------------------- Alg. 1 l.35–36, l.43
def _verification_marks(t) -> list[str]:
    return [m.detail for m in t.marks if m.kind.name == "HYPOTHESIS_VERIFICATION"]


def test_alg1_l35_weak_means_sigma_at_most_sigma_verify(make, image):
    """"∀c ∈ J: σ(c) ≤ σ_verify": a judgment exactly at σ_verify is weak and gets verified."""
    from ledgermind.grounding.cascade import GroundingConfig

    rules = BASE_RULES + [REASON_ECC_FAIL,
                          {"prompt": "hypothesis", "reply": "3. Conclusion: Revise: Apollo 11 plaque from 1969"},
                          {"prompt": "decide", "reply": "Answer: Apollo 11 | Based on: [SC-3]"}]
    at = PipelineConfig(grounding=GroundingConfig(sigma_verify=0.5, demote_ncc=0.5, demote_uncited=0.5))  # ECC 0.50 = σ_verify
    agent, backend = make(rules, ocr=APOLLO_OCR, cfg=at)
    t = solve(agent, item(VERIFY_Q, image))
    assert t.ledger.claim("SC-2").sigma == 0.5 and _verification_marks(t) == ["SC-2 σ=0.50"]
    agent2, _ = make(rules, ocr=[("Apollo 13 Plaque", [0, 0, 50, 20], 0.95), ("1969", [0, 30, 50, 50], 0.95)],
                     cfg=at)
    t2 = solve(agent2, item(VERIFY_Q, image))  # SC-2 now grounded (σ 0.95 > 0.5): no verification
    assert t2.ledger.claim("SC-2").sigma > 0.5 and _verification_marks(t2) == []


def test_alg1_l36_c_star_is_the_strongest_judgment(make, image):
    """c* = argmax σ: the NCC failure (0.52) outranks the ECC failure (0.50) → second reading (l.41)."""
    agent, backend = make(BASE_RULES + [
        {"prompt": "reason", "reply": "[SC-1][J] It is the Apollo 13 plaque | Based on: [OC-2]\n"
                                      "[SC-2][J] The plaque is from 1970 | Based on: [OC-3]"},
        {"prompt": "hypothesis", "reply": "3. Conclusion: Revise: Apollo 11 plaque"},
        {"prompt": "decide", "reply": "Answer: Apollo 11 | Based on: [SC-1]"},
    ], ocr=APOLLO_OCR)
    t = solve(agent, item(VERIFY_Q, image))
    assert (t.ledger.claim("SC-1").sigma, t.ledger.claim("SC-2").sigma) == (0.5, 0.52)
    assert _verification_marks(t) == ["SC-2 σ=0.52"]
    assert "hypothesis" not in _stages(backend)  # the ECC branch (l.37–39) is not taken


def _t5_ops(t) -> list[OperatorName | None]:
    return [e.operator for e in t.events if e.trigger is Trigger.T5]


UNSUPPORTED = BASE_RULES + [REASON_ECC_FAIL,
                            {"prompt": "hypothesis", "reply": "3. Conclusion: Revise: Apollo 11 plaque"},
                            {"prompt": "decide", "reply": "Answer: Saturn five | Based on: [SC-1]"}]


@pytest.mark.parametrize(("m", "acquires"), [(1, 0), (2, 1), (3, 2)])
def test_alg1_l43_verification_spends_one_unit_of_m(make, image, m: int, acquires: int):
    """M ← M − 1 after verification: with M = 1 no ACQUIRE is left for the unsupported decision (T5)."""
    agent, _ = make(UNSUPPORTED, ocr=APOLLO_OCR, cfg=PipelineConfig(repair_budget=m, t5_ending="keep"))
    t = solve(agent, item(VERIFY_Q, image))
    assert len(_verification_marks(t)) == 1
    acquired = [e for e in t.events if e.operator is OperatorName.ACQUIRE]
    assert len(acquired) == acquires  # M − 1 units reach T5/T6: each ACQUIRE spends one
    assert _t5_ops(t)[-1] is None  # the budget ran out: the decision is kept (t5_ending=keep)


def test_alg1_l35_m_zero_no_verification(make, image):
    agent, backend = make(UNSUPPORTED, ocr=APOLLO_OCR, cfg=PipelineConfig(repair_budget=0, t5_ending="keep"))
    t = solve(agent, item(VERIFY_Q, image))
    assert _verification_marks(t) == [] and "hypothesis" not in _stages(backend)


# ----------------------------------------------------------------------------- App. D.5 / Alg. 1 l.10–12
def _dual(t) -> dict:
    return census(t)["dual_read"]


@pytest.mark.parametrize(
    ("v1", "v2", "agree"),
    [
        ("100", "117", True),  # Δv = 17 / max(100, 117) = 0.145 ≤ 0.15 (by v1 alone: 0.17)
        ("117", "100", True),  # symmetric
        ("100", "118", False),  # 18 / 118 = 0.153
        ("0", "0", True),  # max(|v1|, |v2|, ε): no division by zero
    ],
)
def test_d5_dual_read_delta_normalised_by_the_larger_reading(make, image, v1: str, v2: str, agree: bool):
    from tests.pipeline.test_agent_branches import READ_Q, read_rules

    agent, backend = make(read_rules(v1, v2), ocr=[("36.7", [0, 0, 50, 20], 0.95)])
    t = solve(agent, item(READ_Q, image))
    crop = next(e for e in t.ledger.entries() if e.src == "crop_zoom")
    assert crop.sigma == (0.97 if agree else 0.65)
    assert _dual(t)["agree"] == int(agree) and _dual(t)["disagree"] == int(not agree)
    # escalation (D.5) runs on disagreement only: a third reading, and only then
    assert _dual(t)["escalated"] == int(not agree)
    assert _stages(backend).count("dual_read") == (2 if agree else 3)


def test_d5_escalation_spends_one_unit_and_needs_one(make, image):
    from tests.pipeline.test_agent_branches import READ_Q, read_rules

    agent, backend = make(read_rules("36.7", "52.0"), ocr=[("36.7", [0, 0, 50, 20], 0.95)],
                          cfg=PipelineConfig(repair_budget=0))
    t = solve(agent, item(READ_Q, image))
    assert _dual(t)["escalated"] == 0 and _stages(backend).count("dual_read") == 2  # M = 0: no third reading
    weak = read_rules("36.7", "52.0")
    weak[4] = {"prompt": "reason", "reply": "[SC-1][J] The thermometer shows 36.7"}  # uncited, NCC fails: σ 0.52
    for m, verified in ((1, []), (2, ["SC-1 σ=0.52"])):
        agent1, backend1 = make(weak, ocr=[("36.7", [0, 0, 50, 20], 0.95)],
                                cfg=PipelineConfig(repair_budget=m, t5_ending="keep"))
        t1 = solve(agent1, item(READ_Q, image))
        # three readings; with a unit left, verification's second reading (l.41) is a fourth
        assert _dual(t1)["escalated"] == 1 and _stages(backend1).count("dual_read") == 3 + len(verified)
        # M = 1: the one unit went to the escalation, nothing is left for l.35; M = 2: one each
        assert _verification_marks(t1) == verified


# ----------------------------------------------------------------------------- ablation routing (Eq. 6)
SIMPLE_Q = "What word is written on the sign?"
SIMPLE_RULES = [{"prompt": "direct", "reply": "Answer: EXIT"}, {"prompt": "plan", "reply": "plan"},
                {"prompt": "observe", "reply": "[OC-1] TEXT | EXIT"},
                {"prompt": "reason", "reply": "[SC-1][J] The sign says EXIT | Based on: [OC-3]"},
                {"prompt": "decide", "reply": "Answer: EXIT | Based on: [SC-1]"},
                {"prompt": "native_cot", "reply": "Answer: EXIT"}]


@pytest.mark.parametrize(
    ("flags", "question", "path", "route", "first_stage"),
    [
        ({}, SIMPLE_Q, "DIRECT", None, "direct"),
        ({}, VERIFY_Q, "FULLPIPE", None, "plan"),
        ({"use_ledger": False}, SIMPLE_Q, "NO_LEDGER", "DIRECT", "direct"),  # the dispatcher stays
        ({"use_ledger": False}, VERIFY_Q, "NO_LEDGER", "FULLPIPE", "plan"),
        ({"dispatcher": False}, SIMPLE_Q, "FULLPIPE", None, "plan"),  # w/o Dispatcher: all FULLPIPE
        ({"ecc_ncc": False}, SIMPLE_Q, "DIRECT", None, "direct"),
        ({"typed_repair": False}, SIMPLE_Q, "DIRECT", None, "direct"),
        ({"dual_read": False}, VERIFY_Q, "FULLPIPE", None, "plan"),
        ({"baseline": True}, VERIFY_Q, "BASELINE", None, "native_cot"),
    ],
)
def test_eq6_each_ablation_removes_one_component_routing(make, image, flags, question, path, route, first_stage):
    from ledgermind.pipeline import AblationFlags

    agent, backend = make(SIMPLE_RULES, ocr=[("EXIT", [0, 0, 40, 20], 0.99)], flags=AblationFlags(**flags))
    t = solve(agent, item(question, image))
    assert t.path.name == path and t.profile.get("route") == route
    assert _stages(backend)[0] == first_stage

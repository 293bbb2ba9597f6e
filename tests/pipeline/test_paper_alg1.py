"""Algorithm 1 lines 35–44 and App. D.5 through the agent, driven by request-driven scripted replies.

Each test names the line it pins. The scripted backend answers by the prompt text (never by a
stage name); the tools are the harness's fixed OCR / crop (tests/pipeline/conftest.py).
"""

from __future__ import annotations

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

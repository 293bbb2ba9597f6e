"""Algorithm 1 lines 35–44 and App. D.5 through the agent, driven by request-driven scripted replies.

Each test names the line it pins. The scripted backend answers by the prompt text (never by a
stage name); the tools are the harness's fixed OCR / crop (tests/pipeline/conftest.py).
"""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from ledgermind.claims import ClaimOrigin, ClaimType, Stage
from ledgermind.ledger import Kappa
from ledgermind.metrics.census import census
from ledgermind.pipeline import PipelineConfig
from ledgermind.prompts.signatures import recognise
from ledgermind.trajectory import OperatorName, Trigger
from tests.pipeline.conftest import item, solve
from tests.pipeline.test_agent_branches import APOLLO_OCR, BASE_RULES, VERIFY_Q

HYPOTHESIS = "It is the Apollo 13 plaque from 1969"
REASON_ECC_FAIL = {
    "prompt": "reason",
    "reply": f"[SC-1][E] The plaque reads Apollo 11 | Based on: [OC-2]\n"
    f"[SC-2][J] {HYPOTHESIS} | Based on: [OC-2], [OC-3]",
}


def _stages(backend) -> list[str]:
    return [recognise(r.last_user_text()) for r in backend.history]


def _hypothesis_entries(t):
    return [e for e in t.ledger.entries() if e.src == "vqa" and e.kappa is Kappa.DERIVATION]


def test_alg1_l39_confirmed_hypothesis_appends_no_derivation(make, image):
    """c′ = c*: the re-examination is asked (and kept in the audit trail) but appends no entry."""
    agent, backend = make(
        BASE_RULES
        + [
            REASON_ECC_FAIL,
            {"prompt": "hypothesis", "reply": f"1. none\n2. none\n3. Conclusion: Confirm: {HYPOTHESIS}."},
            {"prompt": "decide", "reply": "Answer: Apollo 13 | Based on: [SC-2]"},
        ],
        ocr=APOLLO_OCR,
    )
    t = solve(agent, item(VERIFY_Q, image))
    assert _stages(backend).count("hypothesis") == 1 and census(t)["hypothesis_verification"] == 1
    assert _hypothesis_entries(t) == []  # line 39: no DERIVATION for c′ = c*
    assert any(o.inputs.get("stage") == "hypothesis" for o in t.ledger.tool_outputs())  # still auditable
    assert not [c for c in t.ledger.claims(ClaimType.SC) if c.origin is ClaimOrigin.REPAIR]


def _revised_run(make, image):
    """ECC fails on SC-2 (Apollo 13), the re-examination revises it to Apollo 11 (SC-3)."""
    agent, backend = make(
        BASE_RULES
        + [
            REASON_ECC_FAIL,
            {"prompt": "hypothesis", "reply": "3. Conclusion: Revise: Apollo 11 plaque from 1969"},
            {"prompt": "decide", "reply": "Answer: Apollo 11 | Based on: [SC-3]"},
        ],
        ocr=APOLLO_OCR,
    )
    return solve(agent, item(VERIFY_Q, image)), backend


def test_alg1_l39_revised_hypothesis_appends_derivation_sigma_088(make, image):
    t, _ = _revised_run(make, image)
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
    assert t.ledger.claims(ClaimType.DC)[-1].grounding["coverage"] == 1.0


# ----------------------------------------------------------------------------- Alg. 1 l.35–36, l.43
def _verification_marks(t) -> list[str]:
    return [m.detail for m in t.marks if m.kind.name == "HYPOTHESIS_VERIFICATION"]


def test_alg1_l35_weak_means_sigma_at_most_sigma_verify(make, image):
    """ "∀c ∈ J: σ(c) ≤ σ_verify": a judgment exactly at σ_verify is weak and gets verified."""
    from ledgermind.grounding.cascade import GroundingConfig

    rules = BASE_RULES + [
        REASON_ECC_FAIL,
        {"prompt": "hypothesis", "reply": "3. Conclusion: Revise: Apollo 11 plaque from 1969"},
        {"prompt": "decide", "reply": "Answer: Apollo 11 | Based on: [SC-3]"},
    ]
    at = PipelineConfig(
        grounding=GroundingConfig(sigma_verify=0.5, demote_ncc=0.5, demote_uncited=0.5)
    )  # ECC 0.50 = σ_verify
    agent, backend = make(rules, ocr=APOLLO_OCR, cfg=at)
    t = solve(agent, item(VERIFY_Q, image))
    assert t.ledger.claim("SC-2").sigma == 0.5 and _verification_marks(t) == ["SC-2 σ=0.50"]
    agent2, _ = make(
        rules, ocr=[("Apollo 13 Plaque", [0, 0, 50, 20], 0.95), ("1969", [0, 30, 50, 50], 0.95)], cfg=at
    )
    t2 = solve(agent2, item(VERIFY_Q, image))  # SC-2 now grounded (σ 0.95 > 0.5): no verification
    assert t2.ledger.claim("SC-2").sigma > 0.5 and _verification_marks(t2) == []


def test_alg1_l36_c_star_is_the_strongest_judgment(make, image):
    """c* = argmax σ: the NCC failure (0.52) outranks the ECC failure (0.50) → second reading (l.41)."""
    agent, backend = make(
        BASE_RULES
        + [
            {
                "prompt": "reason",
                "reply": "[SC-1][J] It is the Apollo 13 plaque | Based on: [OC-2]\n"
                "[SC-2][J] The plaque is from 1970 | Based on: [OC-3]",
            },
            {"prompt": "hypothesis", "reply": "3. Conclusion: Revise: Apollo 11 plaque"},
            {"prompt": "decide", "reply": "Answer: Apollo 11 | Based on: [SC-1]"},
        ],
        ocr=APOLLO_OCR,
    )
    t = solve(agent, item(VERIFY_Q, image))
    assert (t.ledger.claim("SC-1").sigma, t.ledger.claim("SC-2").sigma) == (0.5, 0.52)
    assert _verification_marks(t) == ["SC-2 σ=0.52"]
    assert "hypothesis" not in _stages(backend)  # the ECC branch (l.37–39) is not taken


def _t5_ops(t) -> list[OperatorName | None]:
    return [e.operator for e in t.events if e.trigger is Trigger.T5]


UNSUPPORTED = BASE_RULES + [
    REASON_ECC_FAIL,
    {"prompt": "hypothesis", "reply": "3. Conclusion: Revise: Apollo 11 plaque"},
    {"prompt": "decide", "reply": "Answer: Saturn five | Based on: [SC-1]"},
]


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
        ("100", "85", True),  # Δv = 15 / 100 = 0.15 = the threshold: "Δv ≤ 0.15" agrees
        ("0.1", "0.2", False),  # 0.1 / 0.2 = 0.5: small values are not normalised by 1
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

    agent, backend = make(
        read_rules("36.7", "52.0"), ocr=[("36.7", [0, 0, 50, 20], 0.95)], cfg=PipelineConfig(repair_budget=0)
    )
    t = solve(agent, item(READ_Q, image))
    assert _dual(t)["escalated"] == 0 and _stages(backend).count("dual_read") == 2  # M = 0: no third reading
    weak = read_rules("36.7", "52.0")
    weak[4] = {
        "prompt": "reason",
        "reply": "[SC-1][J] The thermometer shows 36.7",
    }  # uncited, NCC fails: σ 0.52
    for m, verified in ((1, []), (2, ["SC-1 σ=0.52"])):
        agent1, backend1 = make(
            weak, ocr=[("36.7", [0, 0, 50, 20], 0.95)], cfg=PipelineConfig(repair_budget=m, t5_ending="keep")
        )
        t1 = solve(agent1, item(READ_Q, image))
        # three readings; with a unit left, verification's second reading (l.41) is a fourth
        assert _dual(t1)["escalated"] == 1 and _stages(backend1).count("dual_read") == 3 + len(verified)
        # M = 1: the one unit went to the escalation, nothing is left for l.35; M = 2: one each
        assert _verification_marks(t1) == verified


# ----------------------------------------------------------------------------- ablation routing (Eq. 6)
SIMPLE_Q = "What word is written on the sign?"
SIMPLE_RULES = [
    {"prompt": "direct", "reply": "Answer: EXIT"},
    {"prompt": "plan", "reply": "plan"},
    {"prompt": "observe", "reply": "[OC-1] TEXT | EXIT"},
    {"prompt": "reason", "reply": "[SC-1][J] The sign says EXIT | Based on: [OC-3]"},
    {"prompt": "decide", "reply": "Answer: EXIT | Based on: [SC-1]"},
    {"prompt": "native_cot", "reply": "Answer: EXIT"},
]


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
def test_eq6_each_ablation_removes_one_component_routing(
    make, image, flags, question, path, route, first_stage
):
    from ledgermind.pipeline import AblationFlags

    agent, backend = make(SIMPLE_RULES, ocr=[("EXIT", [0, 0, 40, 20], 0.99)], flags=AblationFlags(**flags))
    t = solve(agent, item(question, image))
    assert t.path.name == path and t.profile.get("route") == route
    assert _stages(backend)[0] == first_stage


# ----------------------------------------------------------------------------- Alg. 1 l.2–4, l.15–20 (evidence gathering)
GATHER_RULES = [
    {"prompt": "plan", "reply": "1. Observation targets: plaque text"},
    {
        "prompt": "observe",
        "reply": "[OC-1] TEXT | Apollo 11 Plaque\n[OC-2] NUMBER | 1969\n[OC-3] OBJECT | a metal plate",
    },
    {"prompt": "reason", "reply": "[SC-1][J] Apollo 11 | Based on: [OC-2]"},
    {"prompt": "decide", "reply": "Answer: Apollo 11 | Based on: [SC-1]"},
]


@pytest.mark.parametrize(
    ("question", "rounds"),
    [
        (VERIFY_Q, 0),  # q ∉ Q_knowledge: no search (l.15)
        ("Which country made the artifact shown?", 1),  # Q_knowledge, not deep: one round (l.16)
        ("Identify the artifact; according to history, which year was it placed?", 2),  # deep: l.18 refines
    ],
)
def test_alg1_l2_l3_l4_l15_l20_entry_kinds_sigmas_and_search_rounds(make, image, question: str, rounds: int):
    from ledgermind.ledger import Omega
    from tests.pipeline.conftest import FixedSearch

    search = FixedSearch()
    agent, _ = make(GATHER_RULES, ocr=APOLLO_OCR, search=search)
    t = solve(agent, item(question, image))
    by_src: dict[str, list] = {}
    for e in t.ledger.entries():
        by_src.setdefault(e.src, []).append(e)
    [plan] = by_src["plan"]
    assert (plan.kappa, plan.sigma) == (Kappa.DERIVATION, 1.0)  # l.2: π as DERIVATION, σ = 1.0
    assert [(e.kappa, e.sigma, e.category) for e in by_src["observe"]] == [  # l.3: PERCEPTION, σ = 0.92
        (Kappa.PERCEPTION, 0.92, "TEXT"),
        (Kappa.PERCEPTION, 0.92, "NUMBER"),
        (Kappa.PERCEPTION, 0.92, "OBJECT"),
    ]
    retrieval = [e for e in t.ledger.entries() if e.kappa is Kappa.RETRIEVAL]
    assert len(search.queries) == rounds and len(retrieval) == rounds
    assert all(e.sigma == 0.85 for e in retrieval)  # l.20: σ = 0.85
    if rounds == 2:  # l.18: the second query is refined with the first round's result
        assert "Moon" in search.queries[1] and "Moon" not in search.queries[0]
    # l.4: P_oc = the TEXT and NUMBER observations (and OCR lines), never the OBJECT one
    from ledgermind.pipeline.evidence import EvidenceIO

    pool = EvidenceIO.p_oc(SimpleNamespace(ledger=t.ledger))  # type: ignore[arg-type]
    facts = {e.fact for e in pool}
    assert {"Apollo 11 Plaque", "1969"} <= facts and "a metal plate" not in facts
    assert all(e.omega is Omega.ACTIVE for e in pool)


@pytest.mark.parametrize(("low", "low_sigma"), [("80", 0.81), ("36.7 °C", 0.92)])
def test_alg1_l8_crop_supersedes_the_least_confident_perception_entry(
    make, image, low: str, low_sigma: float
):
    """L.SUPERSEDE(argmin_{e: κ(e)=PERC} σ_e, e_c): the OCR line at 0.81 when there is one, else an
    observation (0.92) — never the plan (DERIVATION, σ 1.0) and never the stronger OCR line (0.95)."""
    from tests.pipeline.test_agent_branches import READ_Q, read_rules

    ocr = [("36.7", [0, 0, 50, 20], 0.95)] + ([("80", [0, 30, 50, 50], 0.81)] if low == "80" else [])
    agent, _ = make(read_rules("36.7", "36.7"), ocr=ocr)
    t = solve(agent, item(READ_Q, image))
    crop = next(e for e in t.ledger.entries() if e.src == "crop_zoom")
    [old] = [e for e in t.ledger.entries() if e.superseded_by == crop.id]
    assert (old.fact, old.sigma, old.kappa) == (low, low_sigma, Kappa.PERCEPTION)


# ----------------------------------------------------------------------------- App. D.5 audit trail, structured requests
def _structured(monkeypatch) -> None:
    """A backend that accepts JSON schemas: the stages that ask for one must send it."""
    from ledgermind.backends.scripted import ScriptedBackend

    monkeypatch.setattr(ScriptedBackend, "supports_structured_output", True)


def _reading_boxes(t) -> list[tuple]:
    """(crop box, reading box) per crop/reading pair, in ledger order."""
    crops = [e.bbox for e in t.ledger.entries() if e.src == "crop_zoom"]
    reads = [e.bbox for e in t.ledger.entries() if e.src == "read"]
    return list(zip(crops, reads, strict=True))


def _sigma_log(t) -> list[tuple]:
    src = {e.id: e.src for e in t.ledger.entries()}
    return [
        (tr.op, src[tr.entry_id], tr.detail.get("to"), tr.detail.get("reason"))
        for tr in t.ledger.transitions
        if tr.op in {"SET_SIGMA", "REINSTATE"}
    ]


def test_d5_disagreement_escalation_audit_trail(make, image, monkeypatch):
    from tests.pipeline.test_agent_branches import READ_Q, read_rules

    _structured(monkeypatch)
    agent, backend = make(read_rules("36.7", "52.0"), ocr=[("36.7", [0, 0, 50, 20], 0.95)])
    t = solve(agent, item(READ_Q, image))
    reads = [r for r in backend.history if r.stage.startswith("dual_read")]
    assert [r.stage for r in reads] == ["dual_read_0", "dual_read_1", "dual_read_2"]  # attempts 0, 1, 2
    assert all(r.json_schema is not None for r in reads)  # the readings ask for the READING schema
    assert (
        next(r for r in backend.history if r.stage == "reason").json_schema is not None
    )  # and [E]→[I]→[J] for CLAIMS
    assert (
        all(crop == read for crop, read in _reading_boxes(t)) and len(_reading_boxes(t)) == 3
    )  # located where read
    assert [n for n in t.notes if n.startswith("dual_read")] == [
        "dual_read_disagree: v1=36.7 v2=52 Δv=0.294",
        f"dual_read_escalated: adopted 36.7 ({t.ledger.entries()[4].id}), closest to Num(P_oc)",
    ]
    assert _sigma_log(t) == [
        ("SET_SIGMA", "crop_zoom", 0.65, "dual-read Δv=0.294"),
        ("SET_SIGMA", "read", 0.65, "dual-read Δv=0.294"),
        ("REINSTATE", "read", None, "dual-read escalation: closest to Num(P_oc)"),
        ("SET_SIGMA", "read", 0.65, "dual-read escalation"),
    ]
    assert t.error is None and t.answer == "36.7"


def test_d5_a_missing_reading_is_a_disagreement_without_delta(make, image):
    from tests.pipeline.test_agent_branches import READ_Q, read_rules

    for v1, v2 in (("no value", "36.7"), ("36.7", "no value")):
        agent, backend = make(read_rules(v1, v2), ocr=[("36.7", [0, 0, 50, 20], 0.95)])
        t = solve(agent, item(READ_Q, image))
        shown = "None, v2=36.7" if v1 == "no value" else "36.7, v2=None"
        assert [n for n in t.notes if n.startswith("dual_read")] == [
            f"dual_read_disagree: a reading is missing (v1={shown})"
        ]
        assert {(op, to, why) for op, _, to, why in _sigma_log(t)} == {
            ("SET_SIGMA", 0.65, "dual-read: a reading is missing")
        }
        assert next(e for e in t.ledger.entries() if e.src == "crop_zoom").sigma == 0.65
        assert _stages(backend).count("dual_read") == 2 and t.error is None  # no escalation without a Δv


def test_d5_escalation_without_a_number_in_p_oc_keeps_v2(make, image):
    from tests.pipeline.test_agent_branches import READ_Q, read_rules

    rules = read_rules("36.7", "52.0")
    rules[1] = {"prompt": "observe", "reply": "[OC-1] TEXT | a glass thermometer"}
    agent, _ = make(rules, ocr=[])
    t = solve(agent, item(READ_Q, image))
    assert "dual_read_escalated: third reading; no number in P_oc to compare, v2 kept" in t.notes
    reads = [e for e in t.ledger.entries() if e.src == "read"]
    assert reads[0].superseded_by == reads[1].id and reads[1].active  # v2 stays adopted


# ----------------------------------------------------------------------------- Alg. 1 l.22–28: the REASON request and its claims
MCQ_REASON = {"prompt": "reason", "reply": "[SC-1][J] It is the Apollo 11 plaque | Based on: [OC-2]"}


def test_alg1_l22_reason_request_carries_question_options_method_and_images(make, image, monkeypatch):
    _structured(monkeypatch)
    for options in (["Apollo 11", "Apollo 13"], None):
        agent, backend = make(
            BASE_RULES + [MCQ_REASON, {"prompt": "decide", "reply": "Answer: A | Based on: [SC-1]"}],
            ocr=APOLLO_OCR,
        )
        solve(agent, item(VERIFY_Q, image, options=options))
        reason = next(r for r in backend.history if r.stage == "reason")
        text = reason.last_user_text()
        assert sum(len(m.images()) for m in reason.messages) == 1  # the item's image goes with the ledger
        assert text.find("Answer the question by reasoning") < 10  # no warning yet, nothing before the task
        assert "XXXX" not in text and "None" not in text
        if options:
            assert f"Question: {VERIFY_Q}\nOptions:\nA. Apollo 11\nB. Apollo 13\n" in text
            assert "Reasoning method: Analyse each option in turn" in text
            assert "Answer granularity: Reply with exactly one option letter (A/B)." in text
        else:
            assert f"Question: {VERIFY_Q}\n\nEvidence ledger" in text and "Options:" not in text


def test_alg1_l22_unparsable_reasoning_is_noted(make, image):
    for reply, noted in (("I think it is a plaque.", True), (MCQ_REASON["reply"], False)):
        agent, _ = make(
            BASE_RULES
            + [{"prompt": "reason", "reply": reply}, {"prompt": "decide", "reply": "Answer: Apollo 11"}],
            ocr=APOLLO_OCR,
        )
        t = solve(agent, item(VERIFY_Q, image))
        assert ("reasoning produced no parsable claims" in t.notes) is noted


def test_alg1_l26_dropped_claims_are_ungrounded_not_unchecked(make, image):
    from ledgermind.claims import ClaimStatus

    agent, _ = make(
        BASE_RULES
        + [
            {
                "prompt": "reason",
                "reply": "[SC-1][E] A shiny plate\n[SC-2][I] Old | Based on: [OC-99]\n"
                "[SC-3][J] Apollo 11 | Based on: [OC-2]",
            },
            {"prompt": "decide", "reply": "Answer: Apollo 11 | Based on: [SC-3]"},
        ],
        ocr=APOLLO_OCR,
    )
    t = solve(agent, item(VERIFY_Q, image))
    for cid in ("SC-1", "SC-2"):
        c = t.ledger.claim(cid)
        assert c.status is ClaimStatus.DROPPED and c.grounded is False


def test_eq21_t6_repair_event_reports_regrounding(make, image):
    t, backend = _revised_run(make, image)
    [t6] = [e for e in t.events if e.trigger is Trigger.T6]
    assert t6.operator is OperatorName.ACQUIRE and t6.grounded_after is False  # SC-2 still names Apollo 13
    acquire = [r for r in backend.history if recognise(r.last_user_text()) == "observe"][1]
    assert f"Focus on evidence for or against: {HYPOTHESIS}" in acquire.last_user_text()


# ----------------------------------------------------------------------------- Alg. 1 l.37–41 requests and notes
def test_alg1_l38_reexamination_request_and_l39_notes(make, image):
    for verdict, note in (
        (
            f"Confirm: {HYPOTHESIS}.",
            "hypothesis confirmed: SC-2 (re-examination not appended, Alg. 1 line 39)",
        ),
        ("Revise: Apollo 11 plaque from 1969", "hypothesis revised: SC-2 → SC-3"),
    ):
        agent, backend = make(
            BASE_RULES
            + [
                REASON_ECC_FAIL,
                {"prompt": "hypothesis", "reply": f"3. Conclusion: {verdict}"},
                {"prompt": "decide", "reply": "Answer: Apollo 11 | Based on: [SC-2]"},
            ],
            ocr=APOLLO_OCR,
        )
        t = solve(agent, item(VERIFY_Q, image))
        hyp = next(r for r in backend.history if r.stage == "hypothesis")
        text = hyp.last_user_text()
        assert f"Question: {VERIFY_Q}\n" in text and f"Current hypothesis: {HYPOTHESIS}\n" in text
        assert sum(len(m.images()) for m in hyp.messages) == 1  # line 38: REEXAMINE(I, P_oc)
        assert note in t.notes
        if verdict.startswith("Revise"):
            assert t.ledger.claim("SC-3").stage is Stage.J  # c′ is a judgment


def test_alg1_l41_second_reading_is_of_a_located_recrop_and_noted(make, image):
    from tests.pipeline.test_agent_branches import FIRST_CROP, READ_Q

    rules = [
        {"prompt": "plan", "reply": "p"},
        {"prompt": "observe", "reply": "[OC-1] NUMBER | 36.6"},
        {"prompt": "dual_read", "image_size": FIRST_CROP, "reply": "36.7"},
        {"prompt": "dual_read", "reply": "36.9"},
        {"prompt": "reason", "reply": "[SC-1][J] The reading is 52 | Based on: [OC-2]"},
        {"prompt": "decide", "reply": "Answer: 36.7 | Based on: [SC-2]"},
    ]
    agent, _ = make(rules, ocr=[("36.6", [0, 0, 50, 20], 0.95)])
    t = solve(agent, item(READ_Q, image))
    reads = [e for e in t.ledger.entries() if e.src == "read"]
    assert len(reads) == 3 and all(r.bbox is not None for r in reads)  # the third reads a located re-crop
    adopted = t.ledger.get(t.ledger.claim("SC-2").citations[0])
    assert f"second reading: adopted reading 36.7 ({adopted.id}) for SC-1" in t.notes and t.error is None


# ----------------------------------------------------------------------------- no_ledger: a prompt-level transcript
def test_no_ledger_transcript_is_tools_then_model(make, image):
    from ledgermind.pipeline import AblationFlags

    agent, _ = make(
        BASE_RULES + [MCQ_REASON, {"prompt": "decide", "reply": "Answer: Apollo 11"}],
        ocr=APOLLO_OCR,
        flags=AblationFlags(use_ledger=False),
    )
    t = solve(agent, item(VERIFY_Q, image))
    assert [set(m) for m in t.transcript] == [{"role", "text"}, {"role", "text"}]
    assert [m["role"] for m in t.transcript] == ["tools", "model"]
    assert "Apollo 11 Plaque" in t.transcript[0]["text"]
    assert t.transcript[1]["text"] == "\n".join(c.reply for c in t.model_calls if c.reply)

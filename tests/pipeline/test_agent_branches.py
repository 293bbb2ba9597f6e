"""Every branch of the agent, driven by scripted replies (paper Figure 1 F1–F4, T1–T6, defenses)."""

from __future__ import annotations

import json

from ledgermind.claims import ClaimOrigin, ClaimStatus, ClaimType
from ledgermind.ledger import Kappa, Omega, map_output
from ledgermind.metrics.census import census
from ledgermind.pipeline import AblationFlags, PipelineConfig
from ledgermind.prompts.signatures import recognise
from ledgermind.repair.policy import HALLUCINATION_WARNING
from ledgermind.trajectory import OperatorName, PathKind, Trajectory, Trigger
from tests.pipeline.conftest import FixedSearch, item, solve

APOLLO_OCR = [("Apollo 11 Plaque", [0, 0, 50, 20], 0.95), ("1969", [0, 30, 50, 50], 0.95)]
VERIFY_Q = "Identify the artifact in the image and verify the year on it."
BASE_RULES = [
    {"prompt": "plan", "reply": "1. Observation targets: plaque text"},
    {"prompt": "observe", "reply": "[OC-1] TEXT | Apollo 11 Plaque\n[OC-2] NUMBER | 1969"},
]


def ids_by_fact(t: Trajectory) -> dict[str, str]:
    return {e.fact: e.id for e in t.ledger.entries()}


def ops(t: Trajectory) -> list[tuple[str, str | None]]:
    return [(e.trigger.name, e.operator.value if e.operator else None) for e in t.events]


def assert_proposition1(t: Trajectory) -> None:
    for e in t.ledger.entries():
        out = t.ledger.tool_output(e.tool_call_id)
        assert out is not None and e.fact in {m.fact for m in map_output(out)}


# ------------------------------------------------------------------------------------------ F1
def test_f1_unsupported_claims_dropped_or_demoted(make, image):
    agent, _ = make(
        BASE_RULES
        + [
            {
                "prompt": "reason",
                "reply": "[SC-1][E] A shiny metal plate\n[SC-2][I] Probably from NASA | Based on: [OC-99]\n"
                "[SC-3][J] It is the Apollo 11 plaque",
            },
            {"prompt": "decide", "reply": "Answer: Apollo 11 | Based on: [OC-2]"},
        ],
        ocr=APOLLO_OCR,
    )
    t = solve(agent, item(VERIFY_Q, image))
    sc = {c.id: c for c in t.ledger.claims(ClaimType.SC)}
    assert sc["SC-1"].status is ClaimStatus.DROPPED and sc["SC-2"].status is ClaimStatus.DROPPED
    assert sc["SC-2"].unknown_citations == ["OC-99"]  # unknown id: structural failure, no crash
    assert sc["SC-3"].sigma <= 0.55 and sc["SC-3"].grounded is False  # uncited judgment demoted
    assert t.answer == "Apollo 11" and t.error is None


# ------------------------------------------------------------------------------------------ F2 + T6
def test_f2_phantom_grounding_caught_by_ecc_and_repaired(make, image):
    agent, backend = make(
        BASE_RULES
        + [
            {
                "prompt": "reason",
                "reply": "[SC-1][E] The plaque reads Apollo 11 | Based on: [OC-2]\n"
                "[SC-2][J] It is the Apollo 13 plaque from 1969 | Based on: [OC-2], [OC-3]",
            },
            {
                "prompt": "hypothesis",
                "reply": "1. none\n2. the text says Apollo 11\n3. Conclusion: Revise: Apollo 11 plaque from 1969",
            },
            {"prompt": "decide", "reply": "Answer: Apollo 11 | Based on: [SC-3]"},
        ],
        ocr=APOLLO_OCR,
    )
    t = solve(agent, item(VERIFY_Q, image))
    sc2 = t.ledger.claim("SC-2")
    assert (
        sc2.grounding["ecc"] is False
        and sc2.grounding["missing_entities"] == ["Apollo 13"]
        and sc2.sigma == 0.50
    )
    assert ("T6", "ACQUIRE") in ops(t)
    hyp = next(r for r in backend.history if recognise(r.last_user_text()) == "hypothesis")
    assert HALLUCINATION_WARNING in hyp.last_user_text() and "Apollo 11 Plaque" in hyp.last_user_text()
    # the T6 warning reaches every later call that can act on it: the ACQUIRE observation and DECIDE
    acquire = [r for r in backend.history if recognise(r.last_user_text()) == "observe"][1:]
    assert acquire and all(HALLUCINATION_WARNING in r.last_user_text() for r in acquire)
    decide = [r for r in backend.history if recognise(r.last_user_text()) == "decide"]
    assert decide and all(HALLUCINATION_WARNING in r.last_user_text() for r in decide)
    reason = next(r for r in backend.history if recognise(r.last_user_text()) == "reason")
    assert HALLUCINATION_WARNING not in reason.last_user_text()  # it ran before the warning existed
    sc3 = t.ledger.claim("SC-3")
    assert sc3.origin is ClaimOrigin.REPAIR and sc3.sigma == 0.88 and sc3.grounded
    [rev] = [t.ledger.get(c) for c in sc3.citations]
    assert rev.kappa is Kappa.DERIVATION and rev.sigma == 0.88
    assert {e.fact for e in t.ledger.leaf_pool("SC-3")} >= {"Apollo 11 Plaque", "1969"}
    assert t.ledger.claims(ClaimType.DC)[-1].grounded and t.answer == "Apollo 11"
    assert_proposition1(t)


# ------------------------------------------------------------------------------------------ F3
def test_f3_simple_question_stays_direct_and_no_dispatcher_forces_fullpipe(make, image):
    rules = [
        {"prompt": "direct", "reply": "Answer: EXIT"},
        {"prompt": "plan", "reply": "plan"},
        {"prompt": "observe", "reply": "[OC-1] TEXT | EXIT"},
        {"prompt": "reason", "reply": "[SC-1][J] The sign says EXIT | Based on: [OC-3]"},
        {"prompt": "decide", "reply": "Answer: EXIT | Based on: [SC-1]"},
    ]
    ocr = [("EXIT", [0, 0, 40, 20], 0.99)]
    agent, backend = make(rules, ocr=ocr)
    t = solve(agent, item("What word is written on the sign?", image))
    assert t.path is PathKind.DIRECT and t.answer == "EXIT" and t.n_model_calls == 1
    assert [r.stage for r in backend.history] == ["direct"] and t.ledger.claims(ClaimType.DC)[0].grounded
    agent2, backend2 = make(rules, ocr=ocr, flags=AblationFlags(dispatcher=False))
    t2 = solve(agent2, item("What word is written on the sign?", image))
    assert t2.path is PathKind.FULLPIPE and t2.n_model_calls > t.n_model_calls
    assert [r.stage for r in backend2.history][:3] == ["plan", "observe", "reason"]


# ------------------------------------------------------------------------------------------ F4
def test_f4_free_form_repair_adds_provenance_less_content(make, image):
    rules = BASE_RULES + [
        {"prompt": "reason", "reply": "[SC-1][J] It is the Apollo 13 plaque | Based on: [OC-2]"},
        {
            "prompt": "reflect",
            "reply": "Critique: wrong mission. Rewrite: Apollo 11 splashed down in the Atlantic Ocean.\n"
            "Answer: Atlantic Ocean",
        },
        {"prompt": "hypothesis", "reply": "3. Conclusion: Revise: Apollo 11 plaque"},
        {"prompt": "decide", "reply": "Answer: Apollo 11 | Based on: [SC-2]"},
    ]
    agent, _ = make(rules, ocr=APOLLO_OCR, flags=AblationFlags(typed_repair=False))
    t = solve(agent, item(VERIFY_Q, image))
    ff = [c for c in t.claims if c.origin is ClaimOrigin.FREEFORM]
    assert ff and any("Atlantic Ocean" in c.grounding["missing_entities"] for c in ff)
    assert all(e.operator is OperatorName.FREEFORM_REFLECTION for e in t.events if e.operator)
    agent2, _ = make(rules, ocr=APOLLO_OCR)
    t2 = solve(agent2, item(VERIFY_Q, image))
    assert not [c for c in t2.claims if c.origin is ClaimOrigin.FREEFORM]
    assert not any("Atlantic" in e.fact for e in t2.ledger.entries())
    assert_proposition1(t) and assert_proposition1(t2)  # type: ignore[func-returns-value]


# ------------------------------------------------------------------------------------------ triggers
def test_t1_tool_anomaly_retry_then_switch(make, image):
    # plan = OC-1, the SWITCHed VQA answer = OC-2 (DERIVATION: it cannot ground by itself), OCs = OC-3…
    agent, _ = make(
        BASE_RULES
        + [
            {"prompt": "switch_vqa", "reply": "The text reads Apollo 11 Plaque"},
            {"prompt": "reason", "reply": "[SC-1][J] Apollo 11 | Based on: [OC-3]"},
            {"prompt": "decide", "reply": "Answer: Apollo 11 | Based on: [SC-1]"},
        ],
        ocr=APOLLO_OCR,
        ocr_fail=True,
    )
    t = solve(agent, item(VERIFY_Q, image))
    assert ops(t)[:2] == [("T1", "RETRY"), ("T1", "SWITCH")]
    assert any(
        e.src == "vqa" and e.kappa is Kappa.DERIVATION and "Apollo 11" in e.fact for e in t.ledger.entries()
    )
    assert t.error is None and t.answer == "Apollo 11" and t.ledger.claims(ClaimType.DC)[-1].grounded


def test_t3_conflict_drops_weaker_and_t4_low_confidence_retries(make, image):
    ocr = [("36.7", [0, 0, 50, 20], 0.9), ("38.7", [1, 0, 50, 20], 0.6), ("faint", [0, 60, 50, 80], 0.1)]
    agent, _ = make(
        BASE_RULES
        + [
            {"prompt": "reason", "reply": "[SC-1][J] 36.7 | Based on: [OC-2]"},
            {"prompt": "decide", "reply": "Answer: 36.7 | Based on: [OC-2]"},
        ],
        ocr=ocr,
    )
    t = solve(agent, item(VERIFY_Q, image))
    assert ("T4", "RETRY") in ops(t) and ("T3", "DROP") in ops(t)
    assert t.ledger.get(ids_by_fact(t)["38.7"]).omega is Omega.DROPPED


def test_t5_unsupported_decision_acquire_then_abstain(make, image):
    agent, _ = make(
        BASE_RULES
        + [
            {"prompt": "reason", "reply": "[SC-1][J] Apollo 11 | Based on: [OC-2]"},
            {"prompt": "decide", "reply": "Answer: Gemini 4 spacecraft | Based on: nothing"},
        ],
        ocr=APOLLO_OCR,
        cfg=PipelineConfig(repair_budget=1, t5_ending="abstain"),
    )
    t = solve(agent, item(VERIFY_Q, image))
    assert ("T5", "ACQUIRE") in ops(t) and ops(t)[-1] == ("T5", "ABSTAIN")
    assert t.abstained and t.answer is None


def test_t5_every_acquired_observation_gets_a_decision_that_may_cite_it(make, image):
    """ACQUIRE closes a DC's grounding gap only through a new decision citing what it gathered. With
    M = 2 two ACQUIREs may follow one another; the evidence of the second must reach a third
    decision too (before, it entered the ledger after the last decision and was never used)."""
    agent, backend = make(
        [
            {
                "prompt": "observe",
                "pattern": "against: .*Gemini 4 capsule",
                "reply": "[OC-1] TEXT | Gemini 4 capsule engraved below",
            },
            {
                "prompt": "observe",
                "pattern": "against: .*Gemini 4 spacecraft",
                "reply": "[OC-1] TEXT | a spacecraft outline",
            },
            *BASE_RULES,
            {"prompt": "reason", "reply": "[SC-1][J] Apollo 11 | Based on: [OC-2]"},
            {
                "prompt": "decide",
                "pattern": "Gemini 4 capsule engraved below",
                "reply": "Answer: Gemini 4 capsule | Based on: [OC-7]",
            },
            {
                "prompt": "decide",
                "pattern": "a spacecraft outline",
                "reply": "Answer: Gemini 4 capsule | Based on: nothing",
            },
            {"prompt": "decide", "reply": "Answer: Gemini 4 spacecraft | Based on: nothing"},
        ],
        ocr=APOLLO_OCR,
        cfg=PipelineConfig(repair_budget=2),
    )
    t = solve(agent, item(VERIFY_Q, image))
    assert ops(t) == [("T5", "ACQUIRE"), ("T5", "ACQUIRE")]
    assert [r.stage for r in backend.history].count("decide") == 3
    final = t.ledger.claims(ClaimType.DC)[-1]
    assert ids_by_fact(t)["Gemini 4 capsule engraved below"] in final.citations
    assert final.grounded and not t.abstained and t.answer == "Gemini 4 capsule"


def test_t2_stale_retrieval_dropped_before_decision(make, image):
    agent, _ = make(
        BASE_RULES
        + [
            {
                "prompt": "reason",
                "reply": "[SC-1][E] landed 1969 | Based on: [OC-6]\n[SC-2][J] Apollo 11 | Based on: [OC-2]",
            },
            {"prompt": "decide", "reply": "Answer: Apollo 11 | Based on: [SC-2]"},
        ],
        ocr=APOLLO_OCR,
        search=FixedSearch(),
        cfg=PipelineConfig(ttl_retrieval=1),
    )
    t = solve(agent, item("Identify the artifact; according to history, which year was it placed?", image))
    retrieval = [e for e in t.ledger.entries() if e.kappa is Kappa.RETRIEVAL]
    assert retrieval and ("T2", "DROP") in ops(t) and retrieval[0].omega is Omega.DROPPED


# ------------------------------------------------------------------------------------------ reading
READ_Q = "What is the temperature reading on the thermometer?"
FIRST_CROP = (100, 100)  # FixedCrop's zone crop; the jittered re-crops are larger


def read_rules(v1: str, v2: str, decide: str = "Answer: 36.7 | Based on: [SC-1]"):
    return [
        {"prompt": "plan", "reply": "read the scale"},
        {"prompt": "observe", "reply": "[OC-1] NUMBER | 36.7 °C"},
        {"prompt": "dual_read", "image_size": FIRST_CROP, "reply": v1},
        {"prompt": "dual_read", "reply": v2},
        {"prompt": "reason", "reply": "[SC-1][J] The thermometer shows 36.7 | Based on: [OC-2]"},
        {"prompt": "decide", "reply": decide},
    ]


def test_dual_read_agreement_and_disagreement(make, image):
    ocr = [("36.7", [0, 0, 50, 20], 0.95)]
    agent, _ = make(read_rules("36.7 °C", "36.8 °C"), ocr=ocr)
    t = solve(agent, item(READ_Q, image))
    crop = next(e for e in t.ledger.entries() if e.src == "crop_zoom")
    assert crop.sigma == 0.97 and any("agree" in n for n in t.notes)
    assert any(e.omega is Omega.STALE and e.superseded_by == crop.id for e in t.ledger.entries())  # line 8
    # Alg. 1's σ gate only (dual_read_escalate=false): σ 0.65 > σ_verify, v2 adopted and kept
    agent2, _ = make(read_rules("36.7", "52.0"), ocr=ocr, cfg=PipelineConfig(dual_read_escalate=False))
    t2 = solve(agent2, item(READ_Q, image))
    crop2 = next(e for e in t2.ledger.entries() if e.src == "crop_zoom")
    reads = [e for e in t2.ledger.entries() if e.src == "read"]
    assert crop2.sigma == 0.65 and reads[0].superseded_by == reads[1].id and reads[1].active  # adopt v2
    assert census(t2)["dual_read"] == {
        "runs": 1,
        "agree": 0,
        "disagree": 1,
        "identical_requests": 0,
        "escalated": 0,
    }
    # App. D.5 (default): the disagreement escalates — a third reading of its own re-crop, and the
    # reading closest to Num(P_oc) (OCR and the observation say 36.7) is adopted, within M.
    agent4, backend4 = make(read_rules("36.7", "52.0"), ocr=ocr)
    t4 = solve(agent4, item(READ_Q, image))
    reads = [e for e in t4.ledger.entries() if e.src == "read"]
    assert len(reads) >= 3 and reads[0].active and reads[0].sigma == 0.65
    assert all(r.superseded_by == reads[0].id for r in reads[1:3])  # 52.0 twice: both retired
    assert census(t4)["dual_read"]["escalated"] == 1 and t4.answer == "36.7"
    keys = [c.request_key for c in t4.model_calls if c.stage.startswith("dual_read")]
    assert len(keys) == len(set(keys))  # three distinct requests (three different re-crops)
    agent3, backend3 = make(read_rules("36.7", "52.0"), ocr=ocr, flags=AblationFlags(dual_read=False))
    t3 = solve(agent3, item(READ_Q, image))
    crop3 = next(e for e in t3.ledger.entries() if e.src == "crop_zoom")
    assert [r.stage for r in backend3.history].count("dual_read_1") == 0 and crop3.sigma != 0.97


def test_ncc_failure_second_reading_adopts_the_reading_closest_to_p_oc(make, image):
    # OCR and the observation read 36.6; Dual-Read reads 36.7 then 36.9 (agree); [J] says 52 → NCC fails
    rules = [
        {"prompt": "plan", "reply": "p"},
        {"prompt": "observe", "reply": "[OC-1] NUMBER | 36.6"},
        {"prompt": "dual_read", "image_size": FIRST_CROP, "reply": "36.7"},
        {"prompt": "dual_read", "reply": "36.9"},
        {"prompt": "reason", "reply": "[SC-1][J] The reading is 52 | Based on: [OC-2]"},
        {"prompt": "decide", "reply": "Answer: 36.7 | Based on: [SC-2]"},
    ]
    agent, backend = make(rules, ocr=[("36.6", [0, 0, 50, 20], 0.95)])
    t = solve(agent, item(READ_Q, image))
    assert t.ledger.claim("SC-1").sigma == 0.52  # NCC failure demotion
    sc2 = t.ledger.claim("SC-2")
    # the adopted value is a *reading* (36.7), not the P_oc value 36.6 the old code copied
    assert sc2.origin is ClaimOrigin.REPAIR and sc2.text == "The value is 36.7" and sc2.grounded
    assert t.ledger.get(sc2.citations[0]).src == "read"
    keys = {c.stage: c.request_key for c in t.model_calls if c.stage.startswith("dual_read")}
    assert set(keys) == {"dual_read_0", "dual_read_1", "dual_read_2"} and len(set(keys.values())) == 3
    assert census(t)["hypothesis_verification"] == 1 and census(t)["dual_read"]["identical_requests"] == 0


def test_numeric_snap_and_visual_fallback(make, image):
    # 52 is outside δ_read = 0.15 of every value read (36.7, 80): snap to the closest, 36.7.
    # The decision stays unsupported after both ACQUIREs; t5_ending=keep lets it reach the defense
    # lines (under App. E.2's ABSTAIN it would end there: test_deterministic_backbone.py).
    agent, _ = make(
        read_rules("36.7", "36.7", decide="Answer: 52 | Based on: [SC-1]"),
        ocr=[("36.7", [0, 0, 50, 20], 0.95), ("80", [0, 30, 50, 50], 0.95)],
        cfg=PipelineConfig(t5_ending="keep"),
    )
    t = solve(agent, item(READ_Q, image))
    assert t.answer == "36.7" and census(t)["defense"]["numeric_snap"] == 1
    agent2, backend2 = make(
        BASE_RULES
        + [
            {"prompt": "reason", "reply": "[SC-1][J] Apollo 11 | Based on: [OC-2]"},
            {"prompt": "decide", "reply": "Answer: I cannot determine this | Based on: [SC-1]"},
            {"prompt": "visual_fallback", "reply": "Answer: Apollo 11"},
        ],
        ocr=APOLLO_OCR,
        cfg=PipelineConfig(t5_ending="keep"),
    )
    t2 = solve(agent2, item(VERIFY_Q, image))
    assert t2.answer == "Apollo 11" and "visual_fallback" in [r.stage for r in backend2.history]


def test_no_ecc_turns_off_entity_and_numeric_checks(make, image):
    rules = BASE_RULES + [
        {
            "prompt": "reason",
            "reply": "[SC-1][J] It is the Apollo 13 plaque from 1969 | Based on: [OC-2], [OC-3]",
        },
        {"prompt": "decide", "reply": "Answer: Apollo 13 | Based on: [SC-1]"},
    ]
    agent, backend = make(rules, ocr=APOLLO_OCR, flags=AblationFlags(ecc_ncc=False))
    t = solve(agent, item(VERIFY_Q, image))
    sc = t.ledger.claim("SC-1")
    assert sc.grounding["ecc_applied"] is False and sc.sigma == 0.95 and sc.grounded  # σ of its weakest leaf
    assert "hypothesis" not in [r.stage for r in backend.history] and t.answer == "Apollo 13"
    assert not any(e.trigger is Trigger.T6 for e in t.events)


# ------------------------------------------------------------------------------------------ baselines
def test_no_ledger_and_native_cot_keep_same_trajectory_format(make, image):
    rules = BASE_RULES + [
        {
            "prompt": "reason",
            "reply": "[SC-1][E] The plaque says Apollo 11 | Based on: [OC-2]\n"
            "[SC-2][J] It is the Apollo 11 plaque\n[SC-3][I] an uncited guess",
        },
        {"prompt": "decide", "reply": "Answer: Apollo 11 | Based on: [SC-2]"},
        {"prompt": "native_cot", "reply": "Step 1: the text [1].\nAnswer: Apollo 11"},
    ]
    agent, backend = make(rules, ocr=APOLLO_OCR, flags=AblationFlags(use_ledger=False))
    t = solve(agent, item(VERIFY_Q, image))
    assert t.path is PathKind.NO_LEDGER and t.profile["route"] == "FULLPIPE" and t.answer == "Apollo 11"
    seen = [recognise(r.last_user_text()) for r in backend.history]
    assert seen == ["plan", "observe", "reason", "decide"]  # same path as full: reasoning and DECIDE kept
    reason = backend.history[2].last_user_text()
    assert "[OC-2] ocr: Apollo 11 Plaque" in reason and "Transcript of tool outputs" in reason
    sc = {c.id: c for c in t.ledger.claims(ClaimType.SC)}
    assert all(c.status is ClaimStatus.ACTIVE and c.grounding is None for c in sc.values())  # no validation
    assert sc["SC-2"].sigma == 1.0 and not t.events  # no demotion, no ledger repairs
    assert t.ledger.claims(ClaimType.DC)[0].grounding is not None  # grounded post hoc, for the audit only
    full_agent, _ = make(rules, ocr=APOLLO_OCR)
    full = solve(full_agent, item(VERIFY_Q, image))
    # no_ledger loses no tool call of the path; full's extra calls come from grounding (verification, ACQUIRE)
    mine, theirs = [o.tool for o in t.ledger.tool_outputs()], [o.tool for o in full.ledger.tool_outputs()]
    assert mine == theirs[: len(mine)] == ["plan", "ocr", "observe"]
    assert set(theirs[len(mine) :]) <= {"vqa", "observe"} and census(full)["hypothesis_verification"] == 1
    agent2, backend2 = make(rules, ocr=APOLLO_OCR, flags=AblationFlags(baseline=True))
    t2 = solve(agent2, item(VERIFY_Q, image))
    assert t2.path is PathKind.BASELINE and [recognise(r.last_user_text()) for r in backend2.history] == [
        "native_cot"
    ]
    assert "Apollo 11 Plaque" in backend2.history[0].last_user_text()  # same perception evidence as text
    for tr in (t, t2):
        d = tr.to_dict()
        assert Trajectory.from_dict(json.loads(json.dumps(d))).to_dict() == d


def test_no_ledger_keeps_tool_anomaly_repairs_and_free_form_repair_keeps_t1(make, image):
    rules = BASE_RULES + [
        {"prompt": "switch_vqa", "reply": "The text reads Apollo 11 Plaque"},
        {"prompt": "reason", "reply": "[SC-1][J] Apollo 11 | Based on: [OC-3]"},
        {"prompt": "decide", "reply": "Answer: Apollo 11 | Based on: [SC-1]"},
    ]
    for flags in (AblationFlags(use_ledger=False), AblationFlags(typed_repair=False), AblationFlags()):
        agent, _ = make(rules, ocr=APOLLO_OCR, ocr_fail=True, flags=flags)
        t = solve(agent, item(VERIFY_Q, image))
        assert ops(t)[:2] == [("T1", "RETRY"), ("T1", "SWITCH")], flags
        assert census(t)["operator_failures"] == 0


# ------------------------------------------------------------------------------------------ robustness
def test_garbage_empty_and_failing_backend(make, image):
    garbage = "ĉ<|im_end|>\x00 ]]] [SC-][Q] ||| 3.4.5 Answer"
    agent, _ = make([], ocr=APOLLO_OCR, default=garbage)
    t = solve(agent, item(VERIFY_Q, image, options=["Apollo 11", "Apollo 13"], answer="A"))
    assert t.error is None and t.path is PathKind.FULLPIPE
    assert {"plan", "observe", "reason", "decide"} <= {m.stage for m in t.model_calls}
    assert t.answer is None or t.answer in {"A", "B"} or t.answer == t.raw_answer.strip()
    agent2, _ = make([], ocr=APOLLO_OCR, default="")
    t2 = solve(agent2, item(VERIFY_Q, image))
    assert t2.error is None and (t2.answer is None or t2.abstained or t2.answer == "")
    agent3, _ = make([], ocr=APOLLO_OCR, default=None)  # every call raises BackendError
    t3 = solve(agent3, item(VERIFY_Q, image))
    assert t3.error is None and t3.answer is None
    assert all(m.error for m in t3.model_calls) and any(e.trigger is Trigger.T1 for e in t3.events)
    for tr in (t, t2, t3):
        d = tr.to_dict()
        assert Trajectory.from_dict(json.loads(json.dumps(d))).to_dict() == d


def test_mcq_answer_normalised_to_letter_and_images_in_options(make, tmp_path):
    from PIL import Image

    imgs = []
    for i in range(3):
        p = tmp_path / f"i{i}.png"
        Image.new("RGB", (30, 30), "white").save(p)
        imgs.append(p)
    from ledgermind.benchmarks.item import AnswerType, Item

    it = Item(
        "m1",
        "Which option shows the Moon? <image 1>",
        imgs,
        ["<image 2>", "<image 3>", "Mars"],
        "B",
        AnswerType.MCQ,
    )
    agent, backend = make(
        [{"prompt": "direct", "reply": "The answer is (B)"}], ocr=[("Moon", [0, 0, 20, 10], 0.99)]
    )
    t = solve(agent, it)
    assert t.path is PathKind.DIRECT  # φ reads q; the options only set F(q) to "one letter"
    assert t.answer == "B" and "exactly one option letter (A/B/C)" in backend.history[0].last_user_text()
    direct = backend.history[0]
    texts = [p for p in direct.messages[-1].content if isinstance(p, str)]
    assert texts[:3] == ["Image 1:", "Image 2:", "Image 3:"] and len(direct.messages[-1].images()) == 3
    assert "A. <image 2>\nB. <image 3>\nC. Mars" in direct.last_user_text()


def test_entity_recheck_and_numeric_snap_are_separate_checks(make, image):
    """Alg. 2: an answer failing ECC is re-answered from P_oc, and NCC is then checked on its own."""
    rules = read_rules("36.7", "36.7", decide="Answer: 52 degrees on Mars | Based on: [SC-1]") + [
        {"prompt": "entity_recheck", "reply": "Answer: 52"}
    ]
    agent, backend = make(rules, ocr=[("36.7", [0, 0, 50, 20], 0.95)], cfg=PipelineConfig(t5_ending="keep"))
    t = solve(agent, item(READ_Q, image))
    c = census(t)
    assert c["defense"]["entity_recheck"] == 1 and c["defense"]["numeric_snap"] == 1
    assert any(recognise(r.last_user_text()) == "entity_recheck" for r in backend.history)
    assert t.answer == "36.7"


def test_two_ecc_failures_do_not_starve_hypothesis_verification(make, image):
    """App. A: verification is funded first; T6 ACQUIREs get what is left of M."""
    agent, backend = make(
        BASE_RULES
        + [
            {
                "prompt": "reason",
                "reply": "[SC-1][J] It is the Apollo 13 plaque | Based on: [OC-2]\n"
                "[SC-2][J] It is the Gemini 4 plaque | Based on: [OC-2]",
            },
            {"prompt": "hypothesis", "reply": "3. Conclusion: Revise: Apollo 11 plaque"},
            {"prompt": "decide", "reply": "Answer: Apollo 11 | Based on: [SC-3]"},
        ],
        ocr=APOLLO_OCR,
    )
    t = solve(agent, item(VERIFY_Q, image))
    c = census(t)
    assert c["triggers"]["T6"] >= 2 and c["hypothesis_verification"] == 1
    assert any(recognise(r.last_user_text()) == "hypothesis" for r in backend.history)
    assert t.answer == "Apollo 11"


def _solve_product_question(make, image, decision: str) -> Trajectory:
    """6 × 7 = 42 is option B: a computed answer whose grounded [J] claim the decision cites."""
    rules = [
        {"prompt": "plan", "reply": "p"},
        {"prompt": "observe", "reply": "[OC-1] NUMBER | 6\n[OC-2] NUMBER | 7"},
        {"prompt": "reason", "reply": "[SC-1][J] Multiplying 6 by 7 selects B | Based on: [OC-3], [OC-4]"},
        {"prompt": "decide", "reply": f"Answer: {decision} | Based on: [SC-1]"},
    ]
    agent, _ = make(
        rules,
        ocr=[("6", [0, 0, 10, 10], 0.95), ("7", [20, 0, 30, 10], 0.95)],
        flags=AblationFlags(dispatcher=False),
        cfg=PipelineConfig(repair_budget=0),
    )
    return solve(
        agent,
        item("Compute the product of the two numbers shown.", image, options=["17", "42", "58"], answer="B"),
    )


def test_computed_mcq_answer_is_supported_through_its_judgment(make, image):
    """ρ of "B. 42" against evidence is low for a computed answer; its grounded [J] carries it (no T5)."""
    t = _solve_product_question(make, image, "B")
    assert t.ledger.claim("SC-1").grounded
    assert census(t)["triggers"]["T5"] == 0 and not t.abstained and t.answer == "B"
    assert t.ledger.claims(ClaimType.DC)[-1].grounded


def test_a_judgment_naming_its_option_by_letter_is_grounded_by_the_option_text(make, image):
    """ "The answer is B" cites OCR that reads option B's text: the label is not an unmatched number."""
    opts = ["Gemini 4 Capsule", "Apollo 11 Plaque", "Voyager Record"]
    rules = [
        {"prompt": "plan", "reply": "p"},
        {"prompt": "observe", "reply": "[OC-1] TEXT | Apollo 11 Plaque"},
        {"prompt": "reason", "reply": "[SC-1][J] The answer is B | Based on: [OC-2]"},
        {"prompt": "decide", "reply": "Answer: B | Based on: [SC-1]"},
    ]
    agent, _ = make(
        rules, ocr=APOLLO_OCR[:1], flags=AblationFlags(dispatcher=False), cfg=PipelineConfig(repair_budget=0)
    )
    t = solve(agent, item("Which artifact is shown in the image?", image, options=opts, answer="B"))
    j = t.ledger.claim("SC-1")
    assert j.grounded and j.grounding["ncc"], j.grounding
    assert (
        census(t)["demotions"]["ncc"] == 0 and t.answer == "B" and t.ledger.claims(ClaimType.DC)[-1].grounded
    )


def test_an_entity_the_decision_adds_to_its_choice_is_checked_and_not_vouched_for_by_the_judgment(
    make, image
):
    """ "B, as Dr. Tobias Wren described": the DC keeps the words after its option, so ECC sees the
    invented name; the grounded [J] claim vouches for the choice, not for those words."""
    t = _solve_product_question(make, image, "B, as Dr. Tobias Wren described")
    dc = t.ledger.claims(ClaimType.DC)[-1]
    assert dc.text == "B. 42; as Dr. Tobias Wren described"
    assert not dc.grounded and "Tobias Wren" in " ".join(dc.grounding["missing_entities"])
    assert t.ledger.claim("SC-1").grounded  # the judgment itself stays grounded


def test_dual_read_sigma_reaches_the_claims_that_cite_the_reading(make, image):
    """Readings are different requests (a jittered re-crop), so the cache cannot fake agreement,
    and a disagreement's σ 0.65 is what the verification gate sees on the claim citing it."""
    rules = read_rules("36.7", "52.0")
    rules[4] = {"prompt": "reason", "reply": "[SC-1][J] The thermometer shows 52 | Based on: [OC-7]"}
    # the σ path on its own (no D.5 escalation, which would add a third reading)
    agent, backend = make(
        rules, ocr=[("36.7", [0, 0, 50, 20], 0.95)], cfg=PipelineConfig(dual_read_escalate=False)
    )
    t = solve(agent, item(READ_Q, image))
    assert t.ledger.get("OC-7").src == "read" and t.ledger.get("OC-7").sigma == 0.65
    assert t.ledger.claim("SC-1").sigma <= 0.65
    reads = [r for r in backend.history if recognise(r.last_user_text()) == "dual_read"]
    assert (
        len(reads) == 2 and reads[0].messages[-1].images()[0].size != reads[1].messages[-1].images()[0].size
    )
    assert census(t)["crop_zoom"] == 2 and census(t)["dual_read"]["identical_requests"] == 0


def test_t2_reachable_under_the_default_ttl_after_a_repair_loop(make, image):
    """Default config: a search result fetched before a T6 repair and a hypothesis check is older
    than its TTL when the decision cites it, so T2 re-checks it (REFRESH: the decision depends)."""
    search = FixedSearch()
    agent, _ = make(
        BASE_RULES
        + [
            {
                "prompt": "reason",
                "reply": "[SC-1][E] landed 1969 | Based on: [OC-6]\n"
                "[SC-2][J] It is the Apollo 13 plaque from 1969 | Based on: [OC-2], [OC-6]",
            },
            {"prompt": "hypothesis", "reply": "3. Conclusion: Revise: Apollo 11 plaque from 1969"},
            {"prompt": "decide", "reply": "Answer: Apollo 11 | Based on: [SC-1], [SC-3]"},
        ],
        ocr=APOLLO_OCR,
        search=search,
    )
    assert PipelineConfig().ttl_retrieval == 3
    t = solve(agent, item("Identify the artifact; according to history, which year was it placed?", image))
    assert t.ledger.get("OC-6").kappa is Kappa.RETRIEVAL
    assert census(t)["triggers"]["T2"] >= 1 and ("T2", "REFRESH") in ops(t)
    assert len(search.queries) >= 2  # REFRESH called the search tool again


def test_switch_to_search_sends_the_extracted_query(make, image):
    search = FixedSearch()
    agent, _ = make(
        BASE_RULES
        + [
            {"prompt": "reason", "reply": "[SC-1][J] Apollo 11 | Based on: [OC-3]"},
            {"prompt": "decide", "reply": "Answer: Apollo 11 | Based on: [SC-1]"},
        ],
        ocr=APOLLO_OCR,
        ocr_fail=True,
        search=search,
    )
    t = solve(agent, item(VERIFY_Q, image))
    assert ("T1", "SWITCH") in ops(t) and search.queries
    assert all(q != VERIFY_Q and len(q.split()) <= 16 for q in search.queries)


def test_search_off_is_counted_per_item(make, image):
    agent, _ = make(BASE_RULES, ocr=APOLLO_OCR)
    t = solve(agent, item("What year did this historical event happen?", image))
    assert census(t)["search"] == {"rounds": 0, "skipped_no_provider": 1}
    agent2, _ = make(BASE_RULES, ocr=APOLLO_OCR, search=FixedSearch())
    t2 = solve(agent2, item("What year did this historical event happen?", image))
    assert census(t2)["search"] == {"rounds": 1, "skipped_no_provider": 0}


def test_decision_sees_the_zoomed_crop_for_reading_and_location_questions(make, image):
    # Alg. 2 line 1: DECIDE(I, …, e_c, …) — the zoomed crop chosen for the question is re-sent with
    # the images; a question that is neither reading nor location has no crop to show.
    from PIL import Image as PILImage

    for question, zoomed in (
        (READ_Q, True),
        ("Locate the landmark shown in the image.", True),
        ("Identify the artifact in the image and verify the year on it.", False),
    ):
        agent, backend = make(read_rules("36.7", "36.7"), ocr=[("36.7", [0, 0, 50, 20], 0.95)])
        solve(agent, item(question, image))
        decide = next(r for r in backend.history if "decide" in r.stage)
        crops = [p for m in decide.messages for p in m.images() if isinstance(p, PILImage.Image)]
        assert [c.size for c in crops] == ([FIRST_CROP] if zoomed else []), question


def test_correct_one_letter_option_decision_is_grounded_not_abstained(make, image):
    # "E. S": the label is layout (not an entity or a number) and "S" is the OCR'd text itself.
    agent, _ = make([{"prompt": "direct", "reply": "Answer: E"}], ocr=[("S", [0, 0, 20, 20], 0.99)])
    t = solve(
        agent, item("What is written on the sign?", image, options=["A", "B", "C", "D", "S"], answer="E")
    )
    dc = t.ledger.claims(ClaimType.DC)[-1]
    assert t.path is PathKind.DIRECT and t.answer == "E" and not t.abstained
    assert dc.text == "E. S" and dc.grounded and dc.grounding["ecc"] and dc.grounding["ncc"]
    assert not any(e.trigger in {Trigger.T5, Trigger.T6} for e in t.events)

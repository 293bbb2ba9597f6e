"""Injected fault counts match the configured rates within sampling error (a few hundred requests)."""

from __future__ import annotations

import math

import pytest

from ledgermind.prompts.templates import (
    CONCISE, DECIDE, DIRECT, DUAL_READ, ENTITY_RECHECK, LEDGER_TITLE, NATIVE_COT, OBSERVE, REASON, REFLECT,
)  # fmt: skip
from ledgermind.repair import HALLUCINATION_WARNING
from tests.simulator.conftest import request

N = 400
OPTS = "Options:\nA. Apollo 13\nB. Apollo 11\nC. Gemini 4\nD. Vostok 1"
Q_MCQ = "Which mission does the plaque in <image 1> commemorate?"
Q_KNOW = "Which scientist proposed the photoelectric law shown in <image 1>?"


def within(count: int, n: int, p: float, z: float = 4.0) -> bool:
    """|count - np| ≤ z·sqrt(np(1-p)) (+1 for tiny p)."""
    return abs(count - n * p) <= z * math.sqrt(n * p * (1 - p)) + 1


def count(backend, prompts, kind: str, images=()) -> int:
    return sum(
        f["kind"] == kind
        for p in prompts
        for f in backend.generate_sync(request(p, images)).meta["simulator"]["faults"]
    )


def reason(i: int, question: str = Q_MCQ, warning: str = "") -> str:
    ledger = f"OC-1 | PERCEPTION TEXT | 0.92 | Apollo 11 Plaque\nOC-2 | PERCEPTION NUMBER | 0.92 | {i}"
    return REASON.substitute(method="m", granularity="g", warning=warning, evidence_title=LEDGER_TITLE, question=question + "\n" + OPTS, ledger=ledger)


@pytest.mark.parametrize("rate", [0.1, 0.3])
def test_phantom_rate_and_warning_effect(make_backend, rate):
    sim = make_backend(seed=7, phantom_rate=rate, warning_effect=0.25, empty_rate=0, format_error_rate=0)
    assert within(count(sim, [reason(i) for i in range(N)], "phantom"), N, rate)
    warned = [reason(i, warning=HALLUCINATION_WARNING) for i in range(N)]
    assert within(count(sim, warned, "phantom"), N, rate * 0.25)
    restricted = [ENTITY_RECHECK.substitute(pool=f"- Apollo 11 Plaque\n- {i}", question=Q_MCQ, options=OPTS)
                  for i in range(N)]  # fmt: skip
    assert within(count(sim, restricted, "phantom"), N, rate * 0.25)


def test_misread_rate_and_magnitude(make_backend, key_items):
    sim = make_backend(seed=1, misread_rate=0.3, empty_rate=0, format_error_rate=0)
    gauge = key_items[2].images[0]
    faults = [f for i in range(N)
              for f in sim.generate_sync(request(DUAL_READ.substitute() + " " * i, [gauge])).meta["simulator"]["faults"]]  # fmt: skip
    assert within(len(faults), N, 0.3)
    assert all(0.2 - 1e-3 <= abs(f["value"] - f["true"]) / f["true"] <= 0.6 + 1e-3 for f in faults)


def test_overthink_flip_only_on_knowledge_questions(make_backend):
    sim = make_backend(seed=2, p_correct=1.0, overthink_flip_rate=0.2, phantom_rate=0, empty_rate=0, format_error_rate=0)
    assert within(count(sim, [reason(i, Q_KNOW) for i in range(N)], "flip"), N, 0.2)
    cot = [NATIVE_COT.substitute(question=Q_KNOW, options=OPTS, evidence=f"[1] ocr: {i}") for i in range(N)]
    assert within(count(sim, cot, "flip"), N, 0.2)
    gauge_q = "What is the reading of the gauge in <image 1>? The scale runs from 0 to 100."
    assert count(sim, [reason(i, gauge_q) for i in range(100)], "flip") == 0  # a reading, not knowledge


def test_amplify_empty_and_format_rates(make_backend):
    sim = make_backend(seed=4, reflection_amplify_rate=0.4, empty_rate=0.05, format_error_rate=0.1)
    prompts = [REFLECT.substitute(problem="T5", question=Q_MCQ, claims=f"[SC-1][J] x {i}", answer="B") for i in range(N)]
    replies = [sim.generate_sync(request(p)).meta["simulator"]["faults"] for p in prompts]
    kinds = [f["kind"] for fs in replies for f in fs]
    assert within(kinds.count("empty"), N, 0.05)
    assert within(kinds.count("format"), N, 0.95 * 0.1)
    assert within(kinds.count("amplify"), N, 0.95 * 0.9 * 0.4)


def test_p_correct_and_grounding_bonus(make_backend):
    sim = make_backend(seed=5, p_correct=0.5, grounding_bonus=0.3, phantom_rate=0, relation_rate=0,
                       overthink_flip_rate=0, empty_rate=0, format_error_rate=0)  # fmt: skip

    def correct(ledger_fact: str) -> int:
        prompts = [REASON.substitute(method="m", granularity="g", warning="", evidence_title=LEDGER_TITLE, question=Q_MCQ + "\n" + OPTS,
                                     ledger=f"OC-1 | PERCEPTION TEXT | 0.92 | {ledger_fact} {i}") for i in range(N)]  # fmt: skip
        return sum("answer is B." in sim.generate_sync(request(p)).text for p in prompts)

    assert within(correct("a plaque"), N, 0.5)
    assert within(correct("Apollo 11 plaque"), N, 0.8)  # the evidence states the gold option text


# ---------------------------------------------------------------- faults in every place a model makes them
QUIET = {"empty_rate": 0, "format_error_rate": 0}


def faults_of(sim, prompts, images=()) -> list[dict]:
    return [f for p in prompts for f in sim.generate_sync(request(p, images)).meta["simulator"]["faults"]]


def kinds(faults: list[dict], kind: str) -> list[dict]:
    return [f for f in faults if f["kind"] == kind]


@pytest.mark.parametrize("place", ["direct", "concise"])
def test_one_line_answers_get_phantoms_misattributions_and_flips(make_backend, key_items, place):
    sim = make_backend(seed=8, p_correct=1.0, short_phantom_rate=0.2, short_relation_rate=0.15, short_flip_rate=0.2, **QUIET)
    img = key_items[1].images[0]  # knowledge2 shares the plaque image; its question names the item
    if place == "direct":
        prompts = [DIRECT.substitute(question=Q_KNOW, options=OPTS, granularity="g", ocr=f"- Apollo 11 Plaque\n- {i}")
                   for i in range(N)]  # fmt: skip
    else:
        prompts = [CONCISE.substitute(question=Q_KNOW, options=OPTS, initial="C", results=f"Apollo 11 Plaque, item {i}")
                   for i in range(N)]  # fmt: skip
    faults = faults_of(sim, prompts, [img])
    assert within(len(kinds(faults, "flip")), N, 0.2)
    phantoms, relations = kinds(faults, "phantom"), kinds(faults, "relation")
    assert within(len(phantoms), N, 0.2)
    assert within(len(relations), N, 0.8 * 0.15)  # drawn when no phantom was
    assert all(r["entity"] == "Apollo 11 Plaque" for r in relations)  # a name the evidence holds


def test_reasoning_misattributes_an_entity_that_is_in_the_evidence(make_backend):
    sim = make_backend(seed=9, phantom_rate=0.0, relation_rate=0.3, **QUIET)
    replies = [sim.generate_sync(request(reason(i))) for i in range(N)]
    rel = [(r, f) for r in replies for f in r.meta["simulator"]["faults"] if f["kind"] == "relation"]
    assert within(len(rel), N, 0.3)
    assert all(f["entity"] == "Apollo 11 Plaque" and f"According to {f['entity']}" in r.text for r, f in rel)


def test_observations_of_the_full_image_misread_numbers(make_backend, key_items):
    from tests.simulator.conftest import FakeOCR

    sim = make_backend(seed=10, observe_misread_rate=0.2, ocr=FakeOCR(["Apollo 11 Plaque", "1969", "Speed 42 km/h"]), **QUIET)
    prompts = [OBSERVE.substitute(max_oc=5, question=Q_MCQ, plan=f"p{i}", categories="TEXT: t\nNUMBER: n") for i in range(N)]
    faults = kinds(faults_of(sim, prompts, [key_items[0].images[0]]), "misread")
    assert within(len(faults), 3 * N, 0.2)  # three lines with a number per observation reply (11, 1969, 42)
    assert {f["true"] for f in faults} == {11.0, 1969.0, 42.0}
    assert all(0.2 - 1e-3 <= abs(f["value"] - f["true"]) / f["true"] <= 0.6 + 1e-3 for f in faults)


def test_the_decision_misreads_a_numeric_answer(make_backend, key_items):
    sim = make_backend(seed=11, p_correct=1.0, phantom_rate=0, relation_rate=0, decide_misread_rate=0.25, **QUIET)
    q = key_items[2].question
    prompts = [DECIDE.substitute(question=q, options="", granularity="g", evidence_title=LEDGER_TITLE,
                                 ledger=f"OC-1 | PERCEPTION NUMBER | 0.92 | {i}", claims="(none)") for i in range(N)]  # fmt: skip
    faults = kinds(faults_of(sim, prompts, [key_items[2].images[0]]), "misread")
    assert within(len(faults), N, 0.25) and all(f["true"] == 36.5 for f in faults)


@pytest.mark.parametrize(("held", "kind", "rate"), [("B", "reflect_break", 0.15), ("C", "reflect_fix", 0.25)])
def test_reflection_changes_answers_both_ways(make_backend, held, kind, rate):
    sim = make_backend(seed=12, reflection_amplify_rate=0.0, reflection_break_rate=0.15, reflection_fix_rate=0.25, **QUIET)
    prompts = [REFLECT.substitute(problem="T5", question=Q_MCQ, claims=f"[SC-1][J] x {i}", answer=held) for i in range(N)]
    replies = [sim.generate_sync(request(p)) for p in prompts]
    changed = [r for r in replies if any(f["kind"] == kind for f in r.meta["simulator"]["faults"])]
    assert within(len(changed), N, rate)
    assert all(not r.text.endswith(f"Answer: {held}") for r in changed)
    assert all(r.text.endswith("Answer: B") for r in changed) is (kind == "reflect_fix")


def test_a_focused_look_reports_the_named_answer_only_when_it_is_right(make_backend, key_items):
    """ACQUIRE asks to look for evidence for or against a named answer: the model states what the
    request names when it is true (the key decides only that), never the gold when another option
    is named, and reports the opposite at misperceive_rate."""
    img = [key_items[0].images[0]]

    def looks(sim, named: str) -> list:
        prompts = [OBSERVE.substitute(max_oc=5, question=f"{Q_MCQ}\nFocus on evidence for or against: {named}",
                                      plan=f"p{i}", categories="TEXT: t\nOBJECT: o") for i in range(N)]  # fmt: skip
        return [sim.generate_sync(request(p, img)) for p in prompts]

    perfect = make_backend(faults="off")
    assert all("OBJECT | Apollo 11\n" in r.text + "\n" for r in looks(perfect, "B. Apollo 11")[:20])
    assert not any("Apollo 11\n" in r.text + "\n" or "Gemini" in r.text for r in looks(perfect, "C. Gemini 4")[:20])
    sim = make_backend(seed=13, misperceive_rate=0.2, observe_misread_rate=0, **QUIET)
    wrong = looks(sim, "C. Gemini 4")
    assert within(sum("OBJECT | Gemini 4" in r.text for r in wrong), N, 0.2)
    assert within(len(kinds([f for r in wrong for f in r.meta["simulator"]["faults"]], "misperceive")), N, 0.2)


def _prompt(place: str, i: int) -> str:
    from ledgermind.prompts.templates import HYPOTHESIS, NO_LEDGER, VISUAL_FALLBACK

    ledger = f"OC-1 | PERCEPTION TEXT | 0.92 | Apollo 11 Plaque\nOC-2 | PERCEPTION NUMBER | 0.92 | {i}"
    return {
        "decide": lambda: DECIDE.substitute(question=Q_MCQ, options=OPTS, granularity="g", evidence_title=LEDGER_TITLE,
                                            ledger=ledger, claims="(none)"),
        "hypothesis": lambda: HYPOTHESIS.substitute(question=Q_MCQ + "\n" + OPTS, hypothesis="the answer is B",
                                                    pool=f"- Apollo 11 Plaque\n- {i}"),
        "native_cot": lambda: NATIVE_COT.substitute(question=Q_MCQ, options=OPTS, evidence=f"[1] ocr: Apollo 11 Plaque {i}"),
        "no_ledger": lambda: NO_LEDGER.substitute(question=Q_MCQ, options=OPTS, granularity="g",
                                                  transcript=f"[1] ocr: Apollo 11 Plaque {i}"),
        "visual_fallback": lambda: VISUAL_FALLBACK.substitute(question=Q_MCQ, options=OPTS) + " " * i,
    }[place]()  # fmt: skip


@pytest.mark.parametrize(("place", "rate_key"), [("decide", "phantom_rate"), ("hypothesis", "phantom_rate"),
                                                 ("native_cot", "phantom_rate"), ("no_ledger", "phantom_rate"),
                                                 ("visual_fallback", "short_phantom_rate")])  # fmt: skip
def test_phantoms_in_every_reasoning_and_answering_place(make_backend, key_items, place, rate_key):
    sim = make_backend(seed=14, relation_rate=0, short_relation_rate=0, **{rate_key: 0.25}, **QUIET)
    replies = [sim.generate_sync(request(_prompt(place, i), [key_items[0].images[0]])) for i in range(N)]
    assert {r.meta["simulator"]["task"] for r in replies} == {place}
    assert within(len(kinds([f for r in replies for f in r.meta["simulator"]["faults"]], "phantom")), N, 0.25)


def test_a_misattribution_cites_the_entry_that_names_its_entity(make_backend):
    """So entity checks see the name in the cited evidence: only the relation is wrong."""
    sim = make_backend(seed=15, phantom_rate=0.0, relation_rate=1.0, **QUIET)
    ledger = "OC-1 | PERCEPTION NUMBER | 0.92 | 7\nOC-2 | PERCEPTION TEXT | 0.92 | Apollo 11 Plaque"
    text = REASON.substitute(method="m", granularity="g", warning="", evidence_title=LEDGER_TITLE,
                             question=Q_MCQ + "\n" + OPTS, ledger=ledger)  # fmt: skip
    reply = sim.generate_sync(request(text)).text
    assert "[SC-3][J] According to Apollo 11 Plaque, the answer is" in reply
    assert reply.splitlines()[2].split("Based on: ")[1].startswith("[OC-2]")

"""Injected faults match the configured rates, the same rate in every place, and know nothing of the answer."""

from __future__ import annotations

import math

import pytest

from ledgermind.benchmarks.item import Item
from ledgermind.prompts.templates import (
    CONCISE,
    DECIDE,
    DIRECT,
    ENTITY_RECHECK,
    HYPOTHESIS,
    LEDGER_TITLE,
    NATIVE_COT,
    NO_LEDGER,
    OBSERVE,
    REASON,
    REFLECT,
    VISUAL_FALLBACK,
)
from ledgermind.repair import HALLUCINATION_WARNING
from tests.simulator.conftest import replies, request

N = 400
OPTS = "Options:\nA. Apollo 13\nB. Apollo 11\nC. Gemini 4\nD. Vostok 1"
Q_MCQ = "Which mission does the plaque in <image 1> commemorate?"
QUIET = {"empty_rate": 0.0, "format_error_rate": 0.0}


def within(count: int, n: int, p: float, z: float = 4.0) -> bool:
    """|count - np| ≤ z·sqrt(np(1-p)) (+1 for tiny p)."""
    return abs(count - n * p) <= z * math.sqrt(n * p * (1 - p)) + 1


def faults_of(replies) -> list[dict]:
    return [f for r in replies for f in r.meta["simulator"]["faults"]]


def kinds(faults: list[dict], kind: str) -> list[dict]:
    return [f for f in faults if f["kind"] == kind]


def _prompt(place: str, i: int, warning: str = "") -> str:
    ledger = f"OC-1 | PERCEPTION TEXT | 0.92 | Apollo 11 Plaque\nOC-2 | PERCEPTION NUMBER | 0.92 | {i}"
    pool = f"- Apollo 11 Plaque\n- {i}"
    return {
        "reason": lambda: REASON.substitute(
            method="m",
            granularity="g",
            warning=warning,
            evidence_title=LEDGER_TITLE,
            question=Q_MCQ + "\n" + OPTS,
            ledger=ledger,
        ),
        "decide": lambda: DECIDE.substitute(
            question=Q_MCQ,
            options=OPTS,
            granularity="g",
            evidence_title=LEDGER_TITLE,
            ledger=ledger,
            claims="(none)",
        ),
        "hypothesis": lambda: HYPOTHESIS.substitute(
            question=Q_MCQ + "\n" + OPTS, hypothesis="the answer is B", pool=pool
        ),
        "direct": lambda: DIRECT.substitute(question=Q_MCQ, options=OPTS, granularity="g", ocr=pool),
        "concise": lambda: CONCISE.substitute(
            question=Q_MCQ, options=OPTS, initial="B", results=f"Apollo 11 {i}"
        ),
        "entity_recheck": lambda: ENTITY_RECHECK.substitute(pool=pool, question=Q_MCQ, options=OPTS),
        "reflect": lambda: REFLECT.substitute(problem=f"T5 {i}", question=Q_MCQ, claims="(none)", answer="B"),
        "native_cot": lambda: NATIVE_COT.substitute(
            question=Q_MCQ, options=OPTS, evidence=f"[1] ocr: Apollo 11 Plaque {i}"
        ),
        "no_ledger": lambda: NO_LEDGER.substitute(
            question=Q_MCQ, options=OPTS, granularity="g", transcript=f"[1] ocr: Apollo 11 Plaque {i}"
        ),
        "visual_fallback": lambda: (
            f"Attempt {i}.\n" + VISUAL_FALLBACK.substitute(question=Q_MCQ, options=OPTS)
        ),
    }[place]()


PLACES = (
    "reason",
    "decide",
    "hypothesis",
    "direct",
    "concise",
    "entity_recheck",
    "reflect",
    "native_cot",
    "no_ledger",
    "visual_fallback",
)


@pytest.mark.parametrize("place", PLACES)
def test_one_phantom_rate_in_every_answering_place(make_backend, key_items, place):
    """No template, path or ablation has a rate of its own (the old simulator had short_*, a warning
    effect and reflection-only rates)."""
    # every distinct request an independent draw (s = 1), whatever part of it differs
    sim = make_backend(seed=14, phantom_rate=0.25, relation_rate=0.0, rephrase_sensitivity=1.0, **QUIET)
    answered = replies(sim, (request(_prompt(place, i), [key_items[0].images[0]]) for i in range(N)))
    assert within(len(kinds(faults_of(answered), "phantom")), N, 0.25), place


def test_a_warning_does_not_change_the_rate(make_backend):
    sim = make_backend(seed=7, phantom_rate=0.2, relation_rate=0.0, rephrase_sensitivity=1.0, **QUIET)
    plain = replies(sim, (request(_prompt("reason", i)) for i in range(N)))
    warned = replies(sim, (request(_prompt("reason", i, HALLUCINATION_WARNING)) for i in range(N)))
    assert within(len(kinds(faults_of(plain), "phantom")), N, 0.2)
    assert within(len(kinds(faults_of(warned), "phantom")), N, 0.2)


def _answers(sim, key_items, place: str = "decide") -> list[str]:
    asked = (request(_prompt(place, i), [key_items[0].images[0]]) for i in range(200))
    return [r.meta["simulator"]["answer"] for r in replies(sim, asked)]


@pytest.mark.parametrize("place", ["reason", "decide", "direct", "hypothesis"])
def test_at_coupling_zero_a_confabulation_never_changes_the_answer(make_backend, key_items, place):
    """The answer is drawn before and apart from the fault: the same request states the same answer
    with phantom/relation rates at 1 as at 0; at coupling 1 every such fault changes it."""
    clean = _answers(make_backend(seed=3, phantom_rate=0.0, relation_rate=0.0, **QUIET), key_items, place)
    faulty = make_backend(seed=3, phantom_rate=1.0, relation_rate=0.0, fault_coupling=0.0, **QUIET)
    assert _answers(faulty, key_items, place) == clean
    coupled_sim = make_backend(seed=3, phantom_rate=1.0, relation_rate=0.0, fault_coupling=1.0, **QUIET)
    coupled = _answers(coupled_sim, key_items, place)
    assert all(a != b for a, b in zip(coupled, clean, strict=True))


def test_faults_are_independent_of_whether_the_belief_is_right(make_backend, key_items):
    """With the key-based belief (p_correct 0.5) the phantom rate is the same among right and wrong
    answers: a check that flags phantoms is no detector of wrong answers by construction."""
    right = wrong = right_ph = wrong_ph = 0
    for seed in range(12):
        sim = make_backend(
            seed=seed,
            belief_source="key",
            p_correct=0.5,
            phantom_rate=0.3,
            relation_rate=0.0,
            rephrase_sensitivity=1.0,
            **QUIET,
        )
        for reply in replies(
            sim, (request(_prompt("decide", i), [key_items[0].images[0]]) for i in range(100))
        ):
            r = reply.meta["simulator"]
            ph = bool(kinds(r["faults"], "phantom"))
            if r["answer"] == "B":
                right, right_ph = right + 1, right_ph + ph
            else:
                wrong, wrong_ph = wrong + 1, wrong_ph + ph
    assert right > 200 and wrong > 200
    assert abs(right_ph / right - wrong_ph / wrong) < 0.07


def test_permuting_the_gold_answers_changes_no_reply(make_backend, key_items):
    """The recorded belief never reads the key: the same items with every gold answer moved give
    byte-identical replies to every kind of request (scores would change, predictions do not)."""
    moved = [
        Item(
            it.id,
            it.question,
            it.images,
            it.options,
            {"B": "D", "C": "A"}.get(str(it.answer), it.answer),
            it.answer_type,
            meta=it.meta,
        )
        for it in key_items
    ]
    assert [it.answer for it in moved] != [it.answer for it in key_items]
    img = [key_items[0].images[0]]
    prompts = [_prompt(p, i) for p in PLACES for i in range(15)]
    prompts += [
        OBSERVE.substitute(
            max_oc=5,
            question=f"{Q_MCQ}\nFocus on evidence for or against: {x}",
            plan=f"p{i}",
            categories="TEXT: t\nOBJECT: o",
        )
        for i in range(10)
        for x in ("B. Apollo 11", "C. Gemini 4")
    ]
    for seed in range(4):
        a, b = make_backend(seed=seed, items=key_items), make_backend(seed=seed, items=moved)
        asked = [request(p, img) for p in prompts]
        for ra, rb in zip(replies(a, asked), replies(b, asked), strict=True):
            assert (ra.text, ra.meta) == (rb.text, rb.meta)


def test_observations_mistranscribe_numbers_by_a_continuous_error(make_backend, key_items):
    from tests.simulator.conftest import FakeOCR

    sim = make_backend(
        seed=16, ocr=FakeOCR(["pressure 40 psi"]), observe_misread_rate=0.3, rephrase_sensitivity=1.0, **QUIET
    )
    prompts = [
        OBSERVE.substitute(
            max_oc=5, question=key_items[2].question, plan=f"p{i}", categories="TEXT: t\nNUMBER: n"
        )
        for i in range(N)
    ]
    misreads = kinds(
        faults_of(replies(sim, (request(p, [key_items[2].images[0]]) for p in prompts))), "misread"
    )
    assert within(len(misreads), N, 0.3, z=5)
    errors = sorted(f["value"] / f["true"] - 1 for f in misreads)
    assert errors[0] < 0 < errors[-1]
    assert any(abs(e) < 0.1 for e in errors) and any(abs(e) > 0.3 for e in errors)  # a continuum, not a band


def test_empty_and_format_rates(make_backend):
    sim = make_backend(seed=9, empty_rate=0.1, format_error_rate=0.2, rephrase_sensitivity=1.0)
    faults = faults_of(replies(sim, (request(_prompt("reason", i)) for i in range(N))))
    assert within(len(kinds(faults, "empty")), N, 0.1)
    assert within(len(kinds(faults, "format")), N, 0.9 * 0.2)


def test_a_focused_look_confirms_the_belief_never_the_key(make_backend, key_items):
    """ACQUIRE asks to look for evidence about a named option: the look reports it when the model
    believes it (seed 2 believes A; the gold is B), and — suggestible — at ``look_agree`` when not."""
    img = [key_items[0].images[0]]

    def looks(sim, named: str) -> list:
        prompts = [
            OBSERVE.substitute(
                max_oc=5,
                question=f"{Q_MCQ}\nFocus on evidence for or against: {named}",
                plan=f"p{i}",
                categories="TEXT: t\nOBJECT: o",
            )
            for i in range(N)
        ]
        return replies(sim, (request(p, img) for p in prompts))

    sim = make_backend(seed=2, look_agree=0.2, observe_misread_rate=0, rephrase_sensitivity=0.0, **QUIET)
    assert all(
        "OBJECT | Apollo 13" in r.text for r in looks(sim, "A. Apollo 13")[:30]
    )  # believed (seed 2: A)
    assert not any(r.meta["simulator"]["faults"] for r in looks(sim, "A. Apollo 13")[:30])
    # every request re-rolled: the belief is a fresh draw (B with weight 0.25), suggestion adds 0.2 of the rest
    fresh = make_backend(seed=2, look_agree=0.2, observe_misread_rate=0, rephrase_sensitivity=1.0, **QUIET)
    gold = looks(fresh, "B. Apollo 11")
    assert within(sum("OBJECT | Apollo 11" in r.text for r in gold), N, 0.25 + 0.75 * 0.2)
    assert within(len(kinds(faults_of(gold), "suggested")), N, 0.75 * 0.2)


def test_a_misattribution_cites_the_entry_that_names_its_entity(make_backend):
    """So entity checks see the name in the cited evidence: only the relation is wrong."""
    sim = make_backend(seed=15, phantom_rate=0.0, relation_rate=1.0, **QUIET)
    ledger = "OC-1 | PERCEPTION NUMBER | 0.92 | 7\nOC-2 | PERCEPTION TEXT | 0.92 | Apollo 11 Plaque"
    text = REASON.substitute(
        method="m",
        granularity="g",
        warning="",
        evidence_title=LEDGER_TITLE,
        question=Q_MCQ + "\n" + OPTS,
        ledger=ledger,
    )
    reply = sim.generate_sync(request(text)).text
    assert "[SC-3][J] According to Apollo 11 Plaque, the answer is" in reply
    assert reply.splitlines()[2].split("Based on: ")[1].startswith("[OC-2]")


def test_evidence_helps_whichever_option_it_states(make_backend):
    """A ledger line stating an option pulls the answer to it at ``evidence_pull``, gold or not: a
    line listing every option pulls by the belief's own weights (no gold bonus)."""

    def share(evidence: str, letter: str) -> float:
        sim = make_backend(
            seed=2,
            evidence_pull=0.5,
            phantom_rate=0.0,
            relation_rate=0.0,
            follow_rate=0.0,
            rephrase_sensitivity=0.0,
            **QUIET,
        )
        asked = (
            request(
                DECIDE.substitute(
                    question=Q_MCQ,
                    options=OPTS,
                    granularity="g",
                    evidence_title=LEDGER_TITLE,
                    ledger=f"OC-1 | PERCEPTION TEXT | 0.92 | {evidence} {i}",
                    claims="(none)",
                )
            )
            for i in range(N)
        )
        texts = [r.text for r in replies(sim, asked)]
        return sum(t.startswith(f"Answer: {letter}") for t in texts) / N

    assert share("Vostok 1", "D") == pytest.approx(0.5, abs=0.08)  # a wrong option stated: pulled to it
    assert share("Apollo 11", "B") == pytest.approx(0.5, abs=0.08)  # the gold stated: the same pull
    every = share("Apollo 13; Apollo 11; Gemini 4; Vostok 1", "B")
    assert every == pytest.approx(0.5 * 1.125 / 4.5, abs=0.08)  # pulled by belief weight, no gold bonus

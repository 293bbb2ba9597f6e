"""Injected fault counts match the configured rates within sampling error (a few hundred requests)."""

from __future__ import annotations

import math

import pytest

from ledgermind.prompts.templates import DUAL_READ, ENTITY_RECHECK, NATIVE_COT, REASON, REFLECT
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
    return REASON.substitute(method="m", granularity="g", warning=warning, question=question + "\n" + OPTS, ledger=ledger)


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
              for f in sim.generate_sync(request(DUAL_READ.substitute() + " " * (i % 3), [gauge])).meta["simulator"]["faults"]]  # fmt: skip
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
    sim = make_backend(seed=5, p_correct=0.5, grounding_bonus=0.3, phantom_rate=0, overthink_flip_rate=0,
                       empty_rate=0, format_error_rate=0)  # fmt: skip

    def correct(ledger_fact: str) -> int:
        prompts = [REASON.substitute(method="m", granularity="g", warning="", question=Q_MCQ + "\n" + OPTS,
                                     ledger=f"OC-1 | PERCEPTION TEXT | 0.92 | {ledger_fact} {i}") for i in range(N)]  # fmt: skip
        return sum("answer is B." in sim.generate_sync(request(p)).text for p in prompts)

    assert within(correct("a plaque"), N, 0.5)
    assert within(correct("Apollo 11 plaque"), N, 0.8)  # the evidence states the gold option text

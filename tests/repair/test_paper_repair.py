"""Triggers T1–T6 (App. E.1, Eqs. 16–21) at their boundaries, Π (Eq. 25), RC (Eq. 26), the budget
M (Alg. 1) and Proposition 1 for REFRESH. Expected values computed by hand from the formulas."""

from __future__ import annotations

import asyncio

import pytest

from ledgermind.claims import Claim, ClaimType, Stage
from ledgermind.ledger import Ledger, Omega
from ledgermind.repair import OPERATORS, Budget, RepairContext, RepairEngine
from ledgermind.repair.operators import OperatorResult
from ledgermind.repair.triggers import (
    TriggerHit, t2_stale_reference, t3_conflicts, t4_confidence_drop, t5_unsupported_decision, t6_phantom_grounding,
)
from ledgermind.trajectory import OperatorName, RepairLayer, Trigger
from tests.helpers import EchoOCR, TextImage


def _boxed(led: Ledger, fact: str, box: list[float], score: float = 0.9) -> str:
    [e] = led.record(EchoOCR().invoke(image=TextImage([fact], bbox=box, score=score)))
    return e.id


# ----------------------------------------------------------------------------- Eq. 17
def test_eq17_t2_fires_only_strictly_after_ttl() -> None:
    led = Ledger()
    [e] = led.record(EchoOCR().invoke(image=TextImage(["a"])), ttl=3)
    c = led.add_claim(Claim("SC-1", ClaimType.SC, "a", Stage.E, [e.id]))
    led.advance(3)  # t_curr − t_id = 3 = ℓ
    assert t2_stale_reference(led, c) is None
    led.advance(1)
    assert t2_stale_reference(led, c).targets == (e.id,)


# ----------------------------------------------------------------------------- Eq. 18
@pytest.mark.parametrize(
    ("second", "conflict"),
    [
        ([0, 0, 100, 50], False),  # IoU = 5000 / 10000 = 0.5: not > 0.5
        ([0, 0, 100, 51], True),  # IoU = 0.51
        ([0, 0, 100, 100], True),  # IoU = 1
    ],
)
def test_eq18_t3_iou_strictly_above_half(second: list[float], conflict: bool) -> None:
    led = Ledger()
    a = _boxed(led, "36.7", [0, 0, 100, 100])
    b = _boxed(led, "52", second)
    assert ([h.targets for h in t3_conflicts(led)] == [(a, b)]) is conflict


def test_eq18_t3_needs_different_facts_and_active_entries() -> None:
    led = Ledger()
    a = _boxed(led, "36.7", [0, 0, 100, 100])
    _boxed(led, "reading 36.7", [0, 0, 100, 100])  # same value: f_e = f_e′
    assert t3_conflicts(led) == []
    b = _boxed(led, "52", [0, 0, 100, 100])
    assert len(t3_conflicts(led)) == 2
    led.drop(b)  # L^A only
    led.retire(a, "test")
    assert t3_conflicts(led) == []


def test_eq18_iou_threshold_is_the_configured_one() -> None:
    led = Ledger()
    _boxed(led, "36.7", [0, 0, 100, 100])
    _boxed(led, "52", [0, 0, 100, 60])  # IoU 0.6
    assert t3_conflicts(led, iou_threshold=0.6) == [] and len(t3_conflicts(led, iou_threshold=0.59)) == 1


# ----------------------------------------------------------------------------- Eqs. 19–21
def test_eq19_t4_strictly_below_floor_and_active_only() -> None:
    led = Ledger()
    [at] = led.record(EchoOCR().invoke(image=TextImage(["x"], score=0.3)))
    [below] = led.record(EchoOCR().invoke(image=TextImage(["y"], score=0.29)))
    assert t4_confidence_drop(at, 0.3) is None and t4_confidence_drop(below, 0.3).targets == (below.id,)
    led.drop(below.id)
    assert t4_confidence_drop(below, 0.3) is None


@pytest.mark.parametrize(("rho", "fires"), [(0.0, True), (0.1499, True), (0.15, False), (1.0, False)])
def test_eq20_t5_decision_with_rho_below_beta(rho: float, fires: bool) -> None:
    dc = Claim("DC-1", ClaimType.DC, "B")
    assert (t5_unsupported_decision(dc, rho, 0.15) is not None) is fires
    assert t5_unsupported_decision(Claim("SC-1", ClaimType.SC, "B", Stage.J), rho, 0.15) is None  # DC only


@pytest.mark.parametrize(
    ("rho", "ecc", "ncc", "fires"),
    [(0.0, False, False, False), (0.01, False, True, True), (0.01, True, False, True), (1.0, True, True, False)],
)
def test_eq21_t6_positive_rho_and_a_containment_failure(rho: float, ecc: bool, ncc: bool, fires: bool) -> None:
    sc = Claim("SC-1", ClaimType.SC, "x", Stage.J)
    assert (t6_phantom_grounding(sc, rho, ecc=ecc, ncc=ncc) is not None) is fires


# ----------------------------------------------------------------------------- Eq. 25 Π(T3), Eq. 26
def test_eq25_t3_drops_argmin_sigma_and_reactivates_the_other() -> None:
    led = Ledger()
    strong = _boxed(led, "36.7", [0, 0, 10, 10], score=0.61)
    weak = _boxed(led, "52", [0, 0, 10, 10], score=0.6)
    engine = RepairEngine(RepairContext(ledger=led, tools={}), Budget(2))
    asyncio.run(engine.handle(t3_conflicts(led)[0]))
    assert led.get(weak).omega is Omega.DROPPED and led.get(strong).omega is Omega.ACTIVE


@pytest.mark.parametrize(
    ("layer", "calls", "expected"),
    [(RepairLayer.EVIDENCE, 0, 1.0), (RepairLayer.ACTION, 1, 4.0), (RepairLayer.TRAJECTORY, 2, 3.0)],
)
def test_eq26_cost_is_lambda_type_times_cost(layer: RepairLayer, calls: int, expected: float) -> None:
    engine = RepairEngine(RepairContext(ledger=Ledger(), tools={}), Budget(2))  # λ = 1 / 2 / 1 (our defaults)
    res = OperatorResult(operator=OperatorName.DROP, layer=layer, tool_calls=calls)
    assert engine.cost(res) == expected
    res.skipped_identical = True
    assert engine.cost(res) == 0.0  # nothing was sent


# ----------------------------------------------------------------------------- budget M (Alg. 1 l.35, l.43)
@pytest.mark.parametrize("m", [0, 1, 2])
def test_alg1_budget_m_spent_at_most_m_times(m: int) -> None:
    b = Budget(m)
    assert sum(b.spend() for _ in range(m + 2)) == m and b.remaining == 0


def test_alg1_l35_l43_reserved_unit_is_spent_once_and_only_by_verification() -> None:
    b = Budget(1)
    b.reserve(1)
    assert not b.spend()  # ACQUIRE cannot take it
    assert b.spend_reserved() and b.remaining == 0 and b.reserved == 0  # M ← M − 1
    assert not b.spend_reserved()
    b0 = Budget(0)
    b0.reserve(1)
    assert b0.reserved == 0 and not b0.spend_reserved()  # M = 0: "and M > 0" fails


# ----------------------------------------------------------------------------- Proposition 1, REFRESH
def test_prop1_refresh_enters_only_a_new_tool_call() -> None:
    """REFRESH(e, θ′) "issues a new tool call"; re-recording e's old output would pass a check of
    facts against outputs, so the new entry must come from a call the ledger did not have."""
    led = Ledger()
    ocr = EchoOCR()
    [old] = led.record(ocr.invoke(image=TextImage(["36.7"], bbox=[0, 0, 40, 40])))
    before = {o.call_id for o in led.tool_outputs()}
    res = asyncio.run(OPERATORS.get("REFRESH").apply(RepairContext(ledger=led, tools={ocr.name: ocr}), entry_id=old.id))
    [new] = [led.get(e) for e in res.new_entries]
    assert new.tool_call_id not in before and new.tool_call_id == res.tool_output.call_id
    assert old.omega is Omega.STALE and old.superseded_by == new.id

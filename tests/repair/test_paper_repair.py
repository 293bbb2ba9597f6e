"""Triggers T1–T6 (App. E.1, Eqs. 16–21) at their boundaries, Π (Eq. 25), RC (Eq. 26), the budget
M (Alg. 1) and Proposition 1 for REFRESH. Expected values computed by hand from the formulas."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from typing import Any

import pytest

from ledgermind.claims import Claim, ClaimStatus, ClaimType, Stage
from ledgermind.ledger import Ledger, Omega
from ledgermind.repair import OPERATORS, AcquireSpec, Action, Budget, View, plan
from ledgermind.repair.policy import DEFAULT_COMPAT, Check, T5Ending, cost
from ledgermind.repair.reinvocation import REPHRASINGS, Perturbation
from ledgermind.repair.triggers import (
    TriggerHit,
    t1_tool_anomaly,
    t2_stale_reference,
    t3_conflicts,
    t4_confidence_drop,
    t5_unsupported_decision,
    t6_phantom_grounding,
)
from ledgermind.tools.base import BBox, Observation, Tool, ToolKind
from ledgermind.trajectory import OperatorName, RepairLayer, Trigger
from tests.helpers import EchoOCR, EchoSearch, FailingTool, TextImage


def _repair(ctx: Any, hit: TriggerHit, **kw: Any) -> list[Any]:
    """Π(hit) applied by the item's executor: the events it recorded."""
    before = len(ctx.traj.events)
    asyncio.run(ctx.executor.repair(hit, **kw))
    return ctx.traj.events[before:]


def _view(led: Ledger, *, used: int = 0, trigger: Trigger = Trigger.T2, **kw: Any) -> View:
    return View(led, {}, {trigger: used}, kw.pop("budget", Budget(2)), **kw)


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
    [
        (0.0, False, False, False),
        (0.01, False, True, True),
        (0.01, True, False, True),
        (1.0, True, True, False),
    ],
)
def test_eq21_t6_positive_rho_and_a_containment_failure(
    rho: float, ecc: bool, ncc: bool, fires: bool
) -> None:
    sc = Claim("SC-1", ClaimType.SC, "x", Stage.J)
    assert (t6_phantom_grounding(sc, rho, ecc=ecc, ncc=ncc) is not None) is fires


# ----------------------------------------------------------------------------- Eq. 25 Π(T3), Eq. 26
def test_eq25_t3_drops_argmin_sigma_and_reactivates_the_other(item_ctx) -> None:
    ctx = item_ctx()
    led = ctx.ledger
    strong = _boxed(led, "36.7", [0, 0, 10, 10], score=0.61)
    weak = _boxed(led, "52", [0, 0, 10, 10], score=0.6)
    [drop] = plan(t3_conflicts(led)[0], _view(led, trigger=Trigger.T3))
    assert (drop.operator, drop.targets, drop.conflict) == (OperatorName.DROP, (weak,), (strong, weak))
    _repair(ctx, t3_conflicts(led)[0])
    assert led.get(weak).omega is Omega.DROPPED and led.get(strong).omega is Omega.ACTIVE


@pytest.mark.parametrize(
    ("operator", "calls", "expected"),
    [(OperatorName.DROP, 0, 1.0), (OperatorName.ACQUIRE, 1, 4.0), (OperatorName.ABSTAIN, 2, 3.0)],
)
def test_eq26_cost_is_lambda_type_times_cost(operator: OperatorName, calls: int, expected: float) -> None:
    costs = {"EVIDENCE": 1.0, "ACTION": 2.0, "TRAJECTORY": 1.0}  # λ = 1 / 2 / 1 (our defaults)
    assert cost(operator, calls, costs, refused=False) == expected
    assert cost(operator, calls, costs, refused=True) == 0.0  # nothing was sent
    assert cost(OperatorName.FREEFORM_REFLECTION, 0, costs, refused=False) == 2.0  # one model call


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
def test_prop1_refresh_enters_only_a_new_tool_call(item_ctx) -> None:
    """REFRESH(e, θ′) "issues a new tool call"; re-recording e's old output would pass a check of
    facts against outputs, so the new entry must come from a call the ledger did not have."""
    ocr = EchoOCR()
    ctx = item_ctx([ocr])
    led = ctx.ledger
    [old] = led.record(ocr.invoke(image=TextImage(["36.7"], bbox=[0, 0, 40, 40])), ttl=1)
    led.add_claim(Claim("DC-1", ClaimType.DC, "36.7", None, [old.id]))  # a decision depends on it
    led.advance(2)
    before = {o.call_id for o in led.tool_outputs()}
    [event] = _repair(ctx, TriggerHit(Trigger.T2, (old.id,), "claim DC-1"))
    [new] = [led.get(e) for e in event.new_entries]
    assert event.operator is OperatorName.REFRESH
    assert new.tool_call_id not in before and new.tool_call_id == event.tool_call
    assert old.omega is Omega.STALE and old.superseded_by == new.id


# ----------------------------------------------------------------------------- Eqs. 16–21: what a hit names
class _EchoRead(Tool):
    """A READ-kind tool with the MLLM reader's signature (``mllm_tools.ReadTool``): the crop's
    first line is its reading, located at ``located_at``."""

    name, kind = "read", ToolKind.READ

    def _run(
        self,
        image: TextImage,
        attempt: int = 0,
        structured: bool = False,
        located_at: Any = None,
        sampled: bool = False,
        rephrase: int = 0,
    ) -> list[Observation]:
        box = BBox.from_list(list(located_at)) if located_at is not None else None
        return [Observation(f"reading {image.lines[0]}", box)]


def _read(led: Ledger, value: str, box: list[float]) -> str:
    [e] = led.record(_EchoRead().invoke(image=TextImage([value]), located_at=box))
    return e.id


def test_eq18_t3_skips_only_read_read_pairs() -> None:
    """Two readings of one crop are Dual-Read's comparison; a reading against an OCR line of the
    same region is a T3 conflict, and a READ–READ pair does not end the scan of the others."""
    led = Ledger()
    r1, r2 = _read(led, "36.7", [0, 0, 10, 10]), _read(led, "52", [0, 0, 10, 10])
    ocr = _boxed(led, "41", [0, 0, 10, 10])
    hits = t3_conflicts(led)
    assert [h.targets for h in hits] == [(r1, ocr), (r2, ocr)]
    assert [h.detail for h in hits] == ["IoU 1.00", "IoU 1.00"]


@pytest.mark.parametrize(
    ("fact_a", "fact_b", "conflict"),
    [
        ("Big  Cat", "big cat", False),  # f_e = f_e′ up to case and spacing
        ("big cat", "big dog", True),
        ("reading 36.7", "36.7", False),  # numbers compared by value
        ("reading 36.7", "36.8 here", True),
    ],
)
def test_eq18_t3_f_e_differs(fact_a: str, fact_b: str, conflict: bool) -> None:
    led = Ledger()
    _boxed(led, fact_a, [0, 0, 10, 10])
    _boxed(led, fact_b, [0, 0, 10, 10])
    assert bool(t3_conflicts(led)) is conflict


def test_eq16_t1_names_the_call_and_the_error() -> None:
    empty = EchoOCR().invoke(image=TextImage([]))
    assert t1_tool_anomaly(empty) == TriggerHit(Trigger.T1, (empty.call_id,), "empty tool output")
    broken = FailingTool().invoke(image=None)
    hit = t1_tool_anomaly(broken)
    assert hit.targets == (broken.call_id,) and hit.detail == broken.error and "engine crashed" in hit.detail
    ok = EchoOCR().invoke(image=TextImage(["fine"]))
    assert t1_tool_anomaly(ok) is None
    said = EchoOCR().invoke(image=TextImage(["Error: no text"]))
    assert t1_tool_anomaly(said).detail == "empty tool output"  # "error" ∈ o_t, no tool error message


def test_eq17_t2_still_fires_after_mark_stale() -> None:
    """ground(c) is every cited entry: MARK_STALE turns the expired entry STALE, T2 must still see it."""
    led = Ledger()
    [e] = led.record(EchoOCR().invoke(image=TextImage(["a"])), ttl=1)
    c = led.add_claim(Claim("SC-1", ClaimType.SC, "a", Stage.E, [e.id]))
    led.advance(2)
    led.mark_stale()
    assert led.get(e.id).omega is Omega.STALE
    assert t2_stale_reference(led, c) == TriggerHit(Trigger.T2, (e.id,), "claim SC-1")


def test_eq19_eq20_eq21_hits_name_their_target_and_threshold() -> None:
    led = Ledger()
    [low] = led.record(EchoOCR().invoke(image=TextImage(["y"], score=0.25)))
    assert t4_confidence_drop(low, 0.3) == TriggerHit(Trigger.T4, (low.id,), "sigma 0.25 < 0.3")
    dc = Claim("DC-1", ClaimType.DC, "x", None, [])
    assert t5_unsupported_decision(dc, 0.1, 0.15) == TriggerHit(Trigger.T5, ("DC-1",), "coverage 0.10 < 0.15")
    sc = Claim("SC-1", ClaimType.SC, "x", Stage.J, [])
    assert t6_phantom_grounding(sc, 0.5, ecc=False, ncc=True) == TriggerHit(
        Trigger.T6, ("SC-1",), "ECC failed"
    )
    assert t6_phantom_grounding(sc, 0.5, ecc=True, ncc=False).targets == ("SC-1",)


# ----------------------------------------------------------------------------- Π(T2), Π(T3), Π(T5): budget M0 and events
def _stale(led: Ledger, n: int) -> list[str]:
    ids = [e.id for e in led.record(EchoOCR().invoke(image=TextImage([f"v{i}" for i in range(n)])), ttl=1)]
    led.advance(2)
    return ids


def test_eq25_t2_drops_each_target_until_m0_then_logs_exhaustion(item_ctx) -> None:
    ctx = item_ctx(budget=5)
    led = ctx.ledger
    ids = _stale(led, 3)
    hit = TriggerHit(Trigger.T2, tuple(ids), "claim SC-1")
    assert plan(hit, _view(led, m0=2)) == [
        Action(OperatorName.DROP, (ids[0],)),
        Action(OperatorName.DROP, (ids[1],)),
        Action(None, tuple(ids), note="claim SC-1; per-trigger budget M0 exhausted", charge=False),
    ]
    assert [a.targets for a in plan(hit, _view(led, used=1, m0=2))] == [(ids[0],), tuple(ids)]
    events = _repair(ctx, hit)
    assert [(e.operator, e.grounded_after) for e in events] == [
        (OperatorName.DROP, None),
        (OperatorName.DROP, None),
        (None, None),
    ]
    assert events[-1].note == "claim SC-1; per-trigger budget M0 exhausted" and events[-1].targets == ids
    assert [led.get(i).omega for i in ids] == [Omega.DROPPED, Omega.DROPPED, Omega.ACTIVE]
    assert ctx.executor.used[Trigger.T2] == 2
    again = _repair(ctx, TriggerHit(Trigger.T2, (ids[2],), "claim SC-2"))
    assert [e.operator for e in again] == [None] and led.get(ids[2]).omega is Omega.ACTIVE
    assert plan(TriggerHit(Trigger.T2, (ids[0],)), _view(led)) == []  # already dropped: nothing


def test_eq25_t2_refreshes_only_what_a_decision_depends_on() -> None:
    led = Ledger()
    a, b, c = _stale(led, 3)
    led.add_claim(Claim("SC-1", ClaimType.SC, "v0", Stage.J, [a]))
    led.add_claim(Claim("DC-1", ClaimType.DC, "v0", None, ["SC-1"]))  # through an SC claim
    led.add_claim(Claim("SC-2", ClaimType.SC, "v1", Stage.J, [b]))
    led.add_claim(Claim("SC-3", ClaimType.SC, "v2", Stage.J, ["SC-2"]))  # a chain with no DC
    refresh, drop = plan(TriggerHit(Trigger.T2, (a, b)), _view(led))
    assert (refresh.operator, refresh.origin) == (OperatorName.REFRESH, led.get(a).tool_call_id)
    assert refresh.fallback == Action(OperatorName.DROP, (a,), charge=False)
    assert drop == Action(OperatorName.DROP, (b,))
    led.get(a).superseded_by = c  # an earlier hit refreshed it: T2 repairs it no second time
    assert [x.targets for x in plan(TriggerHit(Trigger.T2, (a, b)), _view(led))] == [(b,)]


def test_eq25_t3_tie_in_sigma_drops_the_newer_and_counts_once(item_ctx) -> None:
    ctx = item_ctx(per_trigger_budget=1)
    led = ctx.ledger
    old = _boxed(led, "36.7", [0, 0, 10, 10], score=0.6)
    led.advance()
    new = _boxed(led, "52", [0, 0, 10, 10], score=0.6)
    [event] = _repair(ctx, t3_conflicts(led)[0])
    assert led.get(new).omega is Omega.DROPPED and led.get(old).omega is Omega.ACTIVE
    assert ctx.executor.used[Trigger.T3] == 1 and event.grounded_after is None
    third = _boxed(led, "99", [0, 0, 10, 10])
    [exhausted] = _repair(ctx, t3_conflicts(led)[0])  # M0 = 1 used: unresolved, both CONFLICTED
    assert exhausted.operator is None
    assert led.get(old).omega is led.get(third).omega is Omega.CONFLICTED
    assert plan(TriggerHit(Trigger.T3, (old, new)), _view(led, trigger=Trigger.T3)) == []  # one side gone


def test_eq25_t1_retry_then_switch_one_per_unit_of_m0() -> None:
    led = Ledger()
    out = FailingTool().invoke(image="x.png")
    led.record(out)
    hit = t1_tool_anomaly(out)
    view = View(led, {"failing_ocr": ToolKind.OCR, "v": ToolKind.VQA}, {}, Budget(2), m0=3)
    retry, switch, again = plan(hit, view)
    assert retry == Action(OperatorName.RETRY, (out.call_id,), origin=out.call_id, check=Check.TOOL_OK)
    assert (switch.operator, switch.tool, switch.note) == (OperatorName.SWITCH, "v", "failing_ocr → v")
    assert switch.after_failure and again.after_failure and switch.check is Check.TOOL_OK
    assert [a.operator for a in plan(hit, View(led, {}, {Trigger.T1: 1}, Budget(2)))] == [OperatorName.SWITCH]
    [alone] = plan(hit, View(led, {"failing_ocr": ToolKind.OCR}, {Trigger.T1: 1}, Budget(2)))
    assert alone.tool is None and alone.note == "no compatible alternative for failing_ocr"


def test_eq25_t4_retries_the_call_behind_the_entry_and_switches_if_refused() -> None:
    led = Ledger()
    [low] = led.record(EchoOCR().invoke(image=TextImage(["x"], score=0.1)))
    view = View(led, {"echo_ocr": ToolKind.OCR, "s": ToolKind.SEARCH}, {}, Budget(2))
    [retry] = plan(t4_confidence_drop(low), view)
    assert (retry.operator, retry.origin, retry.check) == (
        OperatorName.RETRY,
        low.tool_call_id,
        Check.CONFIDENT,
    )
    assert (retry.fallback.operator, retry.fallback.tool, retry.fallback.charge) == (
        OperatorName.SWITCH,
        "s",
        False,
    )
    assert retry.fallback.check is Check.CONFIDENT  # GroundedAfter of the SWITCH: as of the RETRY
    call_hit = TriggerHit(Trigger.T4, ("ocr#9",))  # a call whose every reading was discarded
    assert plan(call_hit, view)[0].origin == "ocr#9"
    assert plan(call_hit, view)[0].fallback == Action(  # a call the ledger does not hold has no kind
        OperatorName.SWITCH,
        ("ocr#9",),
        note="no compatible alternative for ocr#9",
        check=Check.CONFIDENT,
        charge=False,
    )


def test_eq25_t5_acquire_event_and_its_ending_notes(item_ctx) -> None:
    spec = AcquireSpec("echo_search", {"query": "apollo"})
    hit = TriggerHit(Trigger.T5, ("DC-1",), "coverage 0.00 < 0.15")
    # App. E.2's Π(T5); the shipped default is "keep"
    ctx = item_ctx([EchoSearch()], budget=1, per_trigger_budget=3, t5_ending="abstain")
    [acq] = plan(hit, View(ctx.ledger, {}, {}, Budget(1), m0=3, t5_ending=T5Ending.ABSTAIN), spec)
    assert (acq.tool, acq.inputs, acq.spend, acq.targets) == ("echo_search", spec.inputs, True, ("DC-1",))
    assert acq.fallback.operator is OperatorName.ABSTAIN and not acq.fallback.charge
    [first] = _repair(ctx, hit, acquire=spec)
    assert first.operator is OperatorName.ACQUIRE and first.grounded_after is None
    assert first.targets == ["DC-1"] and ctx.executor.used[Trigger.T5] == 1
    [ab] = _repair(ctx, hit, acquire=spec)  # M = 0: ABSTAIN, saying why
    assert ctx.traj.abstained and ab.operator is OperatorName.ABSTAIN and ab.grounded_after is False
    assert ab.note.endswith("repair budget M exhausted") and ctx.executor.used[Trigger.T5] == 2
    keep = item_ctx(budget=0, per_trigger_budget=1, t5_ending="keep")
    [kept] = _repair(keep, hit, acquire=spec)
    assert (kept.trigger, kept.operator, kept.targets) == (Trigger.T5, None, ["DC-1"])
    assert (
        kept.note
        == "coverage 0.00 < 0.15; repair budget M exhausted; unsupported decision kept (t5_ending=keep)"
    )
    [m0] = _repair(keep, hit, acquire=spec)  # M0 = 1 used
    assert (
        m0.note
        == "coverage 0.00 < 0.15; per-trigger budget M0 exhausted; unsupported decision kept (t5_ending=keep)"
    )
    assert plan(hit, View(Ledger(), {}, {}, Budget(2)))[0].operator is None  # no q_spec: the ending


def test_eq25_t6_acquire_carries_the_warning_and_spends_m() -> None:
    spec = AcquireSpec("s", {"query": "q"})
    hit = TriggerHit(Trigger.T6, ("SC-1",), "ECC failed")
    [acq] = plan(hit, View(Ledger(), {}, {}, Budget(1)), spec)
    assert (acq.operator, acq.warn, acq.spend, acq.note, acq.charge) == (
        OperatorName.ACQUIRE,
        True,
        True,
        "warning injected",
        True,
    )
    reserved = Budget(1)
    reserved.reserve()
    [logged] = plan(hit, View(Ledger(), {}, {}, reserved), spec)  # the reserved unit is not T6's
    assert logged.operator is None and logged.warn and logged.charge
    [free] = plan(hit, View(Ledger(), {}, {}, Budget(1), typed=False), spec)
    assert free == Action(OperatorName.FREEFORM_REFLECTION, ("SC-1",))


def test_eq25_exhausted_m0_logs_without_charging_and_ends_t5() -> None:
    led = Ledger()
    t5 = TriggerHit(Trigger.T5, ("DC-1",), "coverage 0.00 < 0.15")
    spec = AcquireSpec("s", {"query": "q"})
    exhausted = View(led, {}, {Trigger.T5: 2}, Budget(2), t5_ending=T5Ending.ABSTAIN)
    assert plan(t5, exhausted, spec) == [
        Action(
            OperatorName.ABSTAIN,
            ("DC-1",),
            note="per-trigger budget M0 exhausted",
            check=Check.NEVER,
            charge=False,
        )
    ]
    m_spent = View(led, {}, {}, Budget(0), t5_ending=T5Ending.ABSTAIN)
    assert plan(t5, m_spent, spec)[0].charge and plan(t5, m_spent, spec)[0].check is Check.NEVER
    t6 = TriggerHit(Trigger.T6, ("SC-1",), "ECC failed")
    free = View(led, {}, {Trigger.T6: 1}, Budget(2), m0=1, typed=False)
    assert plan(t6, free) == [Action(None, ("SC-1",), note="budget exhausted", charge=False)]
    assert plan(t6, replace(free, used={Trigger.T5: 1})) == [
        Action(OperatorName.FREEFORM_REFLECTION, ("SC-1",))
    ]


def test_eq25_t2_refresh_needs_a_decision_reached_through_any_citation_chain() -> None:
    """A decision may depend on e through any chain of SC claims, also through a dropped one (which
    ``Ledger.add_claim`` does not follow when it records D_e)."""
    from ledgermind.repair.policy import has_decision_dependent

    led = Ledger()

    def claim(cid: str, *cites: str) -> None:
        led.add_claim(
            Claim(cid, ClaimType.DC if cid.startswith("DC") else ClaimType.SC, "a", Stage.J, list(cites))
        )

    [f] = led.record(EchoOCR().invoke(image=TextImage(["f"])))
    claim("SC-A", f.id)
    led.claim("SC-A").status = ClaimStatus.DROPPED  # later claims reach f only through the walk
    claim("SC-X", "SC-A")
    claim("SC-Y", "SC-A")
    claim("SC-V", "SC-A")
    claim("SC-W", "SC-V", "SC-Y")  # reached twice, before X's chain
    assert f.dependents == {"SC-A"} and not has_decision_dependent(led, f)
    claim("DC-1", "SC-X")
    assert f.dependents == {"SC-A"} and has_decision_dependent(led, f)  # X's chain is not lost


def test_eq26_unknown_layer_costs_lambda_one() -> None:
    assert cost(OperatorName.DROP, 1, {"ACTION": 3.0}, refused=False) == 2.0
    assert cost(OperatorName.ACQUIRE, 1, {"ACTION": 3.0}, refused=False) == 6.0


# ----------------------------------------------------------------------------- Eqs. 22–24: R = R_E ∪ R_A ∪ R_T
@pytest.mark.parametrize(
    ("name", "layer"),
    [
        ("DROP", RepairLayer.EVIDENCE),
        ("REFRESH", RepairLayer.EVIDENCE),  # Eq. 22
        ("RETRY", RepairLayer.ACTION),
        ("SWITCH", RepairLayer.ACTION),
        ("ACQUIRE", RepairLayer.ACTION),  # Eq. 23
        ("STOP_AND_ANSWER", RepairLayer.TRAJECTORY),
        ("ABSTAIN", RepairLayer.TRAJECTORY),  # Eq. 24
    ],
)
def test_eq22_eq23_eq24_each_operator_in_its_layer(name: str, layer: RepairLayer) -> None:
    assert OPERATORS[OperatorName(name)].layer is layer


def test_eq22_eq23_eq24_every_operator_has_its_row() -> None:
    assert set(OPERATORS) == set(OperatorName)


def test_app_e2_switch_compat_map_and_retry_jitter_range() -> None:
    from ledgermind.tools.base import ToolKind as K

    assert DEFAULT_COMPAT[K.OCR] == (K.SEARCH, K.VQA)  # OCR → {search, VQA}
    assert DEFAULT_COMPAT[K.CROP] == (K.VQA,)  # local crop → {full-image VQA}
    assert Perturbation().jitter_px == (15, 40)  # RETRY: ±[15, 40] px


def test_app_e2_drop_creates_nothing_abstain_answers_bottom(item_ctx) -> None:
    ctx = item_ctx(budget=0, t5_ending="abstain")
    led = ctx.ledger
    [a] = led.record(EchoOCR().invoke(image=TextImage(["x"])), ttl=1)
    led.advance(2)
    before = len(led.entries())
    [drop] = _repair(ctx, TriggerHit(Trigger.T2, (a.id,)))
    assert drop.new_entries == [] and len(led.entries()) == before and led.get(a.id).omega is Omega.DROPPED
    [ab] = _repair(ctx, TriggerHit(Trigger.T5, ("DC-1",)))
    assert ab.operator is OperatorName.ABSTAIN and ab.new_entries == [] and ctx.traj.abstained
    assert len(led.entries()) == before


def _observed(ctx: Any, rephrase: int) -> Any:
    """An observation the item's model door sent (the scripted reply is empty)."""
    out, _ = asyncio.run(
        ctx.executor.call(
            "observe", question="what is shown", plan="", categories=[], images=[], rephrase=rephrase
        )
    )
    return out


def test_eq25_t2_refresh_that_would_repeat_its_request_falls_back_to_drop(item_ctx) -> None:
    from ledgermind.backends.scripted import Rule

    rule = Rule("[OC-1] TEXT | a", pattern="what is shown")
    ctx = item_ctx(budget=3, per_trigger_budget=3, rules=[rule], ttl_perception=1)
    led = ctx.ledger
    _observed(ctx, len(REPHRASINGS))  # past the last rephrasing a re-ask is the same request
    [a] = led.entries()
    led.add_claim(Claim("SC-1", ClaimType.SC, "a", Stage.J, [a.id]))
    led.add_claim(Claim("DC-1", ClaimType.DC, "a", None, ["SC-1"]))  # a decision depends on it: REFRESH first
    led.advance(5)
    events = _repair(ctx, TriggerHit(Trigger.T2, (a.id,), "claim SC-1"))
    assert [(e.operator, e.skipped_identical, e.grounded_after, e.cost) for e in events] == [
        (OperatorName.REFRESH, True, False, 0.0),
        (OperatorName.DROP, False, None, 1.0),
    ]
    assert [e.targets for e in events] == [[a.id], [a.id]] and [e.note for e in events] == [
        "claim SC-1",
        "claim SC-1; invalidated claims: ['DC-1', 'SC-1']",
    ]
    assert led.get(a.id).omega is Omega.DROPPED and ctx.executor.used[Trigger.T2] == 1


def test_eq25_t5_acquire_that_would_repeat_its_request_refunds_m_and_ends(item_ctx) -> None:
    ctx = item_ctx(budget=2, per_trigger_budget=3, t5_ending="abstain")
    spec = AcquireSpec(
        "observe", {"question": "who built it", "plan": "", "categories": [], "images": [], "rephrase": 0}
    )
    hit = TriggerHit(Trigger.T5, ("DC-1",), "coverage 0.00 < 0.15")
    _repair(ctx, hit, acquire=spec)
    assert ctx.budget.remaining == 1
    events = _repair(ctx, hit, acquire=spec)
    assert ctx.budget.remaining == 1  # nothing was sent: the unit is refunded
    assert [(e.operator, e.skipped_identical, e.grounded_after) for e in events] == [
        (OperatorName.ACQUIRE, True, False),
        (OperatorName.ABSTAIN, False, False),
    ]
    assert ctx.traj.abstained and events[0].targets == ["DC-1"] and events[0].note == "coverage 0.00 < 0.15"
    assert events[1].note == "coverage 0.00 < 0.15; ACQUIRE would repeat a request"


def test_alg1_l43_reserve_defaults_to_one_unit() -> None:
    b = Budget(3)
    b.reserve()
    assert (b.remaining, b.reserved) == (3, 1)
    b.reserve(5)
    assert b.reserved == 3  # never more than M


def test_eq25_t3_m0_counts_every_resolution(item_ctx) -> None:
    ctx = item_ctx(per_trigger_budget=2)
    led = ctx.ledger
    base = _boxed(led, "10", [0, 0, 10, 10], score=0.9)
    for i, value in enumerate(("20", "30", "40")):
        weak = _boxed(led, value, [0, 0, 10, 10], score=0.5)
        [event] = _repair(ctx, t3_conflicts(led)[0])
        if i < 2:  # M0 = 2 resolutions: the weaker side goes
            assert event.operator is OperatorName.DROP and led.get(weak).omega is Omega.DROPPED
        else:  # the third is unresolved: both sides CONFLICTED
            assert event.operator is None and led.get(weak).omega is led.get(base).omega is Omega.CONFLICTED
    assert ctx.executor.used[Trigger.T3] == 2

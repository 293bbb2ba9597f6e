from __future__ import annotations

import asyncio
from dataclasses import dataclass

from ledgermind.claims import Claim, ClaimType, Stage
from ledgermind.ledger import Ledger, Omega
from ledgermind.repair import AcquireSpec, Budget, FreeformRepair, RepairContext, RepairEngine, Verifier
from ledgermind.repair.operators import perturb_bbox
from ledgermind.repair.triggers import (
    TriggerHit,
    t1_tool_anomaly,
    t2_stale_reference,
    t3_conflicts,
    t4_confidence_drop,
    t5_unsupported_decision,
    t6_phantom_grounding,
)
from ledgermind.tools.base import BBox
from ledgermind.trajectory import OperatorName, Trigger
from tests.helpers import EchoOCR, EchoSearch, EchoVQA, FailingTool, TextImage


def run(coro):
    return asyncio.run(coro)


def engine(led, tools, budget=2, **kw):
    ctx = RepairContext(ledger=led, tools={t.name: t for t in tools}, **kw)
    return RepairEngine(ctx, Budget(budget))


# ----------------------------------------------------------------------- triggers fire / do not fire
def test_t1():
    assert t1_tool_anomaly(FailingTool().invoke(image="x.png")).trigger is Trigger.T1
    assert t1_tool_anomaly(EchoOCR().invoke(image=TextImage([]))) is not None  # o_t = ∅
    assert t1_tool_anomaly(EchoOCR().invoke(image=TextImage(["api error 500"]))) is not None  # "error" ∈ o_t
    assert t1_tool_anomaly(EchoOCR().invoke(image=TextImage(["fine"]))) is None


def test_t2():
    led = Ledger()
    led.record(EchoOCR().invoke(image=TextImage(["a"])), ttl=1)
    c = led.add_claim(Claim("SC-1", ClaimType.SC, "a", Stage.E, ["OC-1"]))
    assert t2_stale_reference(led, c) is None
    led.advance(2)
    assert t2_stale_reference(led, c).targets == ("OC-1",)


def test_t3_iou_and_fact():
    led = Ledger()
    led.record(EchoOCR().invoke(image=TextImage(["36.7"], bbox=[0, 0, 100, 50])))
    led.record(EchoOCR().invoke(image=TextImage(["36.7"], bbox=[5, 0, 100, 50])))  # same fact: no conflict
    assert t3_conflicts(led) == []
    led.record(EchoOCR().invoke(image=TextImage(["38.1"], bbox=[2, 2, 98, 50])))
    hits = t3_conflicts(led)
    assert {h.targets for h in hits} == {("OC-1", "OC-3"), ("OC-2", "OC-3")}
    led2 = Ledger()
    led2.record(EchoOCR().invoke(image=TextImage(["a"], bbox=[0, 0, 10, 10])))
    led2.record(EchoOCR().invoke(image=TextImage(["b"], bbox=[8, 8, 20, 20])))  # IoU small
    assert t3_conflicts(led2) == []


def test_t4_t5_t6():
    led = Ledger()
    [low] = led.record(EchoOCR().invoke(image=TextImage(["x"], score=0.2)))
    [ok] = led.record(EchoOCR().invoke(image=TextImage(["y"], score=0.3)))
    assert t4_confidence_drop(low).trigger is Trigger.T4 and t4_confidence_drop(ok) is None
    dc = Claim("DC-1", ClaimType.DC, "B")
    sc = Claim("SC-1", ClaimType.SC, "x", Stage.J)
    assert t5_unsupported_decision(dc, 0.1) is not None and t5_unsupported_decision(dc, 0.15) is None
    assert t5_unsupported_decision(sc, 0.0) is None
    assert t6_phantom_grounding(sc, 0.5, ecc=False, ncc=True).detail == "ECC failed"
    assert t6_phantom_grounding(sc, 0.5, ecc=True, ncc=False).detail == "NCC failed"
    assert t6_phantom_grounding(sc, 0.0, ecc=False, ncc=False) is None  # ρ = 0 is T5's business
    assert t6_phantom_grounding(sc, 0.5, ecc=True, ncc=True) is None


# ----------------------------------------------------------------------- operators through Π
def test_t1_retry_then_switch():
    led = Ledger()
    failing = FailingTool()
    out = run(failing.ainvoke(image="x.png"))
    led.record(out)
    vqa = EchoVQA()
    eng = engine(
        led,
        [failing, vqa],
        switch_inputs=lambda tool, origin: {"stage": "switch_vqa", "prompt": "text via VQA"},
    )
    res = run(eng.handle(t1_tool_anomaly(out)))
    assert [e.operator for e in res.events] == [OperatorName.RETRY, OperatorName.SWITCH]
    assert [e.grounded_after for e in res.events] == [False, True]
    assert [led.get(e).fact for e in res.new_entries] == ["text via VQA"]
    # per-trigger budget M0 = 2 is now spent
    again = run(eng.handle(t1_tool_anomaly(out)))
    assert again.events[0].operator is None and "exhausted" in again.events[0].note


def test_t1_retry_perturbs_the_box_the_tool_declares():
    led = Ledger()
    ocr = EchoOCR()
    out = run(ocr.ainvoke(image=TextImage([]), region=[100, 100, 200, 150]))
    led.record(out)
    eng = engine(led, [ocr])
    # RETRY re-invokes with a perturbed region; EchoOCR still returns nothing → SWITCH, no alternative
    res = run(eng.handle(t1_tool_anomaly(out)))
    [retry_out] = [o for o in led.tool_outputs() if o.call_id != out.call_id]
    moved = retry_out.inputs["region"]
    assert isinstance(moved, list)  # the form the tool was given it in
    deltas = [abs(a - b) for a, b in zip(moved, [100, 100, 200, 150], strict=True)]
    assert all(15 <= d <= 40 for d in deltas)
    assert set(retry_out.inputs) == {"image", "region"}  # nothing the real OCR signature lacks
    assert res.events[1].note.endswith("no compatible alternative for echo_ocr")
    assert all(e.error is None for e in res.events)


def test_refresh_and_retry_call_the_tool_again():
    """REFRESH must re-run the tool (a copy of the old output would be content without a new call)."""

    class CountingOCR(EchoOCR):
        calls = 0

        def _run(self, image, region=None):
            CountingOCR.calls += 1
            return super()._run(image, region)

    led = Ledger()
    ocr = CountingOCR()
    [a] = led.record(run(ocr.ainvoke(image=TextImage(["36.7"]), region=[0, 0, 50, 20])), ttl=1)
    led.add_claim(Claim("SC-1", ClaimType.SC, "36.7", Stage.J, [a.id]))
    led.add_claim(Claim("DC-1", ClaimType.DC, "36.7", None, ["SC-1"]))
    led.advance(5)
    before = CountingOCR.calls
    res = run(engine(led, [ocr]).handle(TriggerHit(Trigger.T2, (a.id,))))
    assert res.events[0].operator is OperatorName.REFRESH and CountingOCR.calls == before + 1
    new = led.get(res.new_entries[0])
    fresh = led.tool_output(new.tool_call_id)
    assert fresh.call_id != a.tool_call_id and fresh.inputs["region"] != [0, 0, 50, 20]
    assert new.bbox == BBox.from_list(fresh.inputs["region"]) and a.superseded_by == new.id


def test_operator_never_sends_undeclared_inputs_and_bugs_are_not_tool_anomalies():
    from ledgermind.repair.operators import perturb_inputs

    class StrictSearch(EchoSearch):
        def _run(self, query: str):
            raise AttributeError("bug inside the tool")

    led = Ledger()
    ocr = EchoOCR()
    out = run(ocr.ainvoke(image=TextImage(["x"])))
    led.record(out)
    assert perturb_inputs(out, ocr, RepairContext(led, {})) == dict(out.inputs)  # no box, no 'attempt'
    try:
        run(StrictSearch().ainvoke(query="q"))
        raise AssertionError("a programming error was disguised as a tool output")
    except AttributeError:
        pass
    strict = StrictSearch()
    ok = run(EchoSearch().ainvoke(query="q"))
    led.record(ok)
    eng = engine(led, [strict])
    eng.ctx.tools = {"echo_search": strict}
    res = run(eng.handle(TriggerHit(Trigger.T4, (led.entries()[-1].id,))))
    assert res.events[0].operator is OperatorName.RETRY and "AttributeError" in res.events[0].error


def test_budget_reserve_funds_hypothesis_verification_first():
    b = Budget(2)
    b.reserve(1)
    assert b.spend() and not b.spend()  # T5/T6 ACQUIRE cannot take the reserved unit
    assert b.spend_reserved() and b.remaining == 0
    b2 = Budget(2)
    b2.reserve(1)
    b2.release()
    assert b2.spend() and b2.spend() and not b2.spend()


def test_t2_refresh_if_decision_depends_else_drop():
    led = Ledger()
    ocr = EchoOCR()
    a, b = led.record(run(ocr.ainvoke(image=TextImage(["a", "b"]))), ttl=1)
    led.add_claim(Claim("SC-1", ClaimType.SC, "a", Stage.J, [a.id]))
    led.add_claim(Claim("DC-1", ClaimType.DC, "a", None, ["SC-1"]))
    led.add_claim(Claim("SC-2", ClaimType.SC, "b", Stage.E, [b.id]))
    led.advance(5)
    eng = engine(led, [ocr])
    res = run(eng.handle(TriggerHit(Trigger.T2, (a.id, b.id))))
    assert [e.operator for e in res.events] == [OperatorName.REFRESH, OperatorName.DROP]
    assert a.omega is Omega.STALE and a.superseded_by in res.new_entries
    assert b.omega is Omega.DROPPED


def test_t3_drops_weaker():
    led = Ledger()
    [a] = led.record(EchoOCR().invoke(image=TextImage(["36.7"], bbox=[0, 0, 10, 10], score=0.9)))
    [b] = led.record(EchoOCR().invoke(image=TextImage(["38.7"], bbox=[0, 0, 10, 10], score=0.6)))
    res = run(engine(led, []).handle(t3_conflicts(led)[0]))
    assert res.events[0].operator is OperatorName.DROP and b.omega is Omega.DROPPED and a.active
    kinds = [(t.op, t.entry_id) for t in led.transitions if t.op in {"CONFLICT", "RESOLVE"}]
    assert kinds == [("CONFLICT", a.id), ("CONFLICT", b.id), ("RESOLVE", a.id)]


def test_t3_across_tools_ocr_line_versus_crop_reading():
    led = Ledger()
    [line] = led.record(EchoOCR().invoke(image=TextImage(["36.7"], bbox=[0, 0, 50, 20], score=0.95)))
    [reading] = led.record(EchoSearch().invoke(query="unused"))  # no box: never in T3
    assert t3_conflicts(led) == []
    [other] = led.record(EchoVQA().invoke(stage="vqa", prompt="reading 52"))
    assert t3_conflicts(led) == []  # no box either
    [boxed] = led.record(EchoOCR().invoke(image=TextImage(["reading 36.7"], bbox=[0, 0, 50, 22])))
    assert t3_conflicts(led) == []  # same value read two ways: no conflict
    [wrong] = led.record(EchoOCR().invoke(image=TextImage(["reading 52"], bbox=[1, 0, 50, 22], score=0.5)))
    assert {h.targets for h in t3_conflicts(led)} == {(line.id, wrong.id), (boxed.id, wrong.id)}
    budget_spent = engine(led, [])
    budget_spent.used[Trigger.T3] = 2
    run(budget_spent.handle(t3_conflicts(led)[0]))  # no budget left: both stay CONFLICTED
    assert line.omega is Omega.CONFLICTED and wrong.omega is Omega.CONFLICTED


def test_t4_retry():
    led = Ledger()
    ocr = EchoOCR()
    [low] = led.record(run(ocr.ainvoke(image=TextImage(["x"], score=0.1))))
    res = run(engine(led, [ocr]).handle(t4_confidence_drop(low)))
    assert res.events[0].operator is OperatorName.RETRY and len(res.new_entries) == 1


def test_t5_acquire_then_abstain_when_budget_spent():
    led = Ledger()
    search = EchoSearch()
    eng = RepairEngine(
        RepairContext(led, {search.name: search}), Budget(1), t5_ending="abstain"
    )  # App. E.2's Π(T5)
    hit = TriggerHit(Trigger.T5, ("DC-1",))
    spec = AcquireSpec("echo_search", {"query": "apollo"})
    first = run(eng.handle(hit, acquire=spec))
    assert first.events[0].operator is OperatorName.ACQUIRE and not first.abstain and first.new_entries
    second = run(eng.handle(hit, acquire=spec))
    assert second.abstain and second.events[0].operator is OperatorName.ABSTAIN


def test_t5_keep_ending_and_m0_exhaustion_end_the_same_way_as_m():
    """``t5_ending=keep``: once no ACQUIRE can be made the decision stands (no ABSTAIN event); the
    per-trigger M0 running out ends T5 exactly like M running out (one rule)."""
    led = Ledger()
    spec = AcquireSpec("echo_search", {"query": "apollo"})
    hit = TriggerHit(Trigger.T5, ("DC-1",))
    keep = RepairEngine(RepairContext(led, {"echo_search": EchoSearch()}), Budget(1), t5_ending="keep")
    assert run(keep.handle(hit, acquire=spec)).events[0].operator is OperatorName.ACQUIRE
    kept = run(keep.handle(hit, acquire=spec))
    assert not kept.abstain and kept.events[0].operator is None and "t5_ending=keep" in kept.events[0].note
    m0 = RepairEngine(
        RepairContext(led, {"echo_search": EchoSearch()}),
        Budget(5),
        per_trigger_budget=1,
        t5_ending="abstain",
    )
    run(m0.handle(hit, acquire=spec))
    out = run(m0.handle(hit, acquire=spec))  # M = 4 left, M0 used up: the paper's ending, ABSTAIN
    assert out.abstain and out.events[-1].operator is OperatorName.ABSTAIN


def test_t6_warning_and_acquire():
    led = Ledger()
    eng = engine(led, [EchoSearch()])
    res = run(
        eng.handle(TriggerHit(Trigger.T6, ("SC-1",)), acquire=AcquireSpec("echo_search", {"query": "q"}))
    )
    assert res.warning and "hallucination" in res.warning
    assert res.events[0].operator is OperatorName.ACQUIRE and res.events[0].cost == 2.0 * 2


def test_stop_and_answer_picks_max_sigma():
    from ledgermind.repair import OPERATORS

    led = Ledger()
    led.record(EchoOCR().invoke(image=TextImage(["low"], score=0.4)))
    led.record(EchoOCR().invoke(image=TextImage(["high"], score=0.95)))
    res = run(OPERATORS.get("STOP_AND_ANSWER").apply(RepairContext(led, {})))
    assert res.answer == "high"


def test_perturbation_stays_inside_image():
    import random

    ctx = RepairContext(Ledger(), {}, rng=random.Random(3), image_size=(120, 80))
    for _ in range(50):
        b = perturb_bbox(BBox(0, 0, 120, 80), ctx)
        assert 0 <= b.x0 <= b.x1 <= 120 and 0 <= b.y0 <= b.y1 <= 80
    ctx2 = RepairContext(Ledger(), {}, rng=random.Random(3))
    b = perturb_bbox(BBox(100, 100, 200, 200), ctx2)
    deltas = [abs(b.x0 - 100), abs(b.y0 - 100), abs(b.x1 - 200), abs(b.y1 - 200)]
    assert all(15 <= d <= 40 for d in deltas)


def test_freeform_repair_rewrites_without_tools():
    async def reflect(hit):
        return "Revised: Apollo 11 landed in the Atlantic Ocean"

    ff = FreeformRepair(reflect)
    res = run(ff.handle(TriggerHit(Trigger.T6, ("SC-1",))))
    assert res.rewrite.startswith("Revised") and res.events[0].operator is OperatorName.FREEFORM_REFLECTION
    assert res.new_entries == []


# ----------------------------------------------------------------------- verifier protocol
@dataclass
class G:
    coverage: float
    ecc: bool
    ncc: bool


def test_verifier_protocol_orders_hits():
    led = Ledger()
    led.record(EchoOCR().invoke(image=TextImage(["5"], bbox=[0, 0, 10, 10], score=0.9)), ttl=1)
    led.record(EchoOCR().invoke(image=TextImage(["6"], bbox=[0, 0, 10, 10], score=0.5)))
    sc = led.add_claim(Claim("SC-1", ClaimType.SC, "Apollo 13", Stage.J, ["OC-1"]))
    dc = led.add_claim(Claim("DC-1", ClaimType.DC, "B", None, []))
    led.advance(3)
    grounding = {"SC-1": G(0.5, False, True), "DC-1": G(0.0, True, True)}
    v = Verifier(led, lambda c: grounding[c.id])
    hits = v.protocol([sc, dc])
    assert [h.trigger for h in hits] == [Trigger.T3, Trigger.T2, Trigger.T6, Trigger.T5]
    assert led.get("OC-1").omega is Omega.STALE  # staleness scan applied MARK_STALE


def test_mark_stale_reverifies_dependent_claims():
    led = Ledger()
    [a] = led.record(EchoOCR().invoke(image=TextImage(["5"])), ttl=1)
    sc = led.add_claim(Claim("SC-1", ClaimType.SC, "five", Stage.J, [a.id]))
    seen: list[str] = []

    def ground(c):
        seen.append(c.id)
        return G(1.0, True, True)

    led.advance(3)
    hits = Verifier(led, ground).staleness_scan([sc])
    assert hits and hits[0].trigger is Trigger.T2 and a.omega is Omega.STALE
    assert seen == ["SC-1"]  # the dependent claim was re-grounded after MARK_STALE


def test_retry_of_a_model_backed_tool_is_a_new_request():
    """VQA/READ: RETRY re-asks with a rephrased instruction (default) or, only where the backend may
    sample, as a seeded sampled draw — never the same greedy call."""
    from ledgermind.pipeline.mllm_tools import VQATool
    from ledgermind.repair.operators import perturb_inputs

    for allow_sampling, want in ((False, [("q", 0), ("q\n\n", 0)]), (True, [("q", 0), ("q", 1)])):
        seen = []

        async def call(stage, text, images, system, schema, draw=0, seen=seen):
            seen.append((text, draw))
            return "" if len(seen) == 1 else "a reading"

        vqa = VQATool(call)
        led = Ledger()
        out = run(vqa.ainvoke(stage="direct", prompt="q"))
        led.record(out)
        new = perturb_inputs(out, vqa, RepairContext(led, {}, allow_sampling=allow_sampling))
        assert ("sampled" in new) is allow_sampling and ("rephrase" in new) is not allow_sampling
        res = run(engine(led, [vqa], allow_sampling=allow_sampling).handle(t1_tool_anomaly(out)))
        assert res.events[0].operator is OperatorName.RETRY and res.events[0].grounded_after is True
        assert [(t[: len(w)], d) for (t, d), (w, _) in zip(seen, want)] == want and len(seen) == 2
        assert res.events[0].variation == ("sampled draw attempt=1" if allow_sampling else "rephrase=1")
        retried = led.tool_outputs()[-1]  # the event names the call it made (census repair_tool_calls)
        assert res.events[0].tool_call == retried.call_id != out.call_id


def test_t4_fires_on_ocr_whose_every_reading_is_below_sigma_floor_under_the_default_config():
    """App. E.1 Eq. 19 must be reachable through the paper's own σ source: the real OCR tool drops
    lines below its 0.8 legibility threshold, so it reports its best confidence instead and the
    verifier raises T4 (not T1) when that is below σ_floor = 0.3; the policy RETRYs the call."""
    from PIL import Image

    from perception.ocr import OCREngine, OCRLine
    from perception.tools import OCRTool

    class FaintEngine(OCREngine):  # a real engine's contract: raw lines with their confidences
        name = "faint"

        def __init__(self, confidences):
            super().__init__()
            self.confidences = confidences

        def _recognize(self, image):
            return [
                OCRLine(f"t{i}", BBox(0, 10 * i, 20, 10 * i + 8), ((0, 0), (20, 0), (20, 8), (0, 8)), c)
                for i, c in enumerate(self.confidences)
            ]

    image = Image.new("RGB", (40, 40), "white")
    for confidences, expected in (([0.21, 0.12], [Trigger.T4]), ([0.55], [Trigger.T1]), ([], [Trigger.T1])):
        tool = OCRTool(FaintEngine(confidences))
        out = tool.invoke(image=image)
        assert out.observations == () and out.error is None
        led = Ledger()
        led.record(out)
        hits = Verifier(led, lambda c: None).on_tool_output(out, [])
        assert [h.trigger for h in hits] == expected, confidences
    low = OCRTool(FaintEngine([0.21]))
    out = low.invoke(image=image)
    led = Ledger()
    led.record(out)
    [hit] = Verifier(led, lambda c: None).on_tool_output(out, [])
    outcome = run(engine(led, [low]).handle(hit))
    assert [(e.trigger, e.operator) for e in outcome.events] == [(Trigger.T4, OperatorName.RETRY)]
    assert "0.21" in hit.detail


def test_retry_keeps_the_form_of_a_box_input_and_never_moves_a_readings_location():
    """A real run's RETRY of a Dual-Read reading crashed: its location list came back as a BBox.
    A perturbed box keeps the form the tool was given it in, and a reading's location is metadata
    (the image is the crop already), not a box input RETRY may move."""
    from ledgermind.pipeline.mllm_tools import ReadTool
    from ledgermind.repair.operators import _BOX_KEYS, perturb_inputs

    led = Ledger()
    ocr = EchoOCR()
    out = run(ocr.ainvoke(image=TextImage(["36.7"]), region=[10, 10, 60, 40]))
    new = perturb_inputs(out, ocr, RepairContext(led, {}))
    assert isinstance(new["region"], list) and new["region"] != [10, 10, 60, 40]
    read_inputs = ReadTool(lambda *a, **k: None).input_names() or set()
    assert not set(read_inputs) & set(_BOX_KEYS) and "located_at" in read_inputs

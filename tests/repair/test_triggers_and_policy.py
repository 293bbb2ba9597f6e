from __future__ import annotations

import asyncio
import random
from dataclasses import dataclass

from ledgermind.claims import Claim, ClaimType, Stage
from ledgermind.ledger import Ledger, Omega
from ledgermind.pipeline.config import AblationFlags
from ledgermind.repair import AcquireSpec, Budget, Verifier
from ledgermind.repair.reinvocation import Perturbation
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


def repair(ctx, hit, **kw):
    """Apply Π(hit) through the item's executor: the events it recorded and the entries it created."""
    before = len(ctx.traj.events)
    created = run(ctx.executor.repair(hit, **kw))
    return ctx.traj.events[before:], created


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
def test_t1_retry_then_switch(item_ctx):
    failing, vqa = FailingTool(), EchoVQA()
    ctx = item_ctx([failing, vqa])
    out = run(failing.ainvoke(image="x.png"))
    ctx.ledger.record(out)
    events, created = repair(ctx, t1_tool_anomaly(out))
    assert [e.operator for e in events] == [OperatorName.RETRY, OperatorName.SWITCH]
    assert [e.grounded_after for e in events] == [False, True]
    assert events[1].note.endswith("failing_ocr → echo_vqa")
    assert [ctx.ledger.get(e).fact for e in created] == [
        "Transcribe the visible text and values for this question: What does the sign say?"
    ]
    assert [e.hit for e in events] == [1, 1]  # one firing, two operator events
    # per-trigger budget M0 = 2 is now spent
    again, _ = repair(ctx, t1_tool_anomaly(out))
    assert again[0].operator is None and "exhausted" in again[0].note and again[0].hit == 2


def test_t1_stops_at_the_first_retry_that_works(item_ctx):
    ocr = EchoOCR()
    ctx = item_ctx([ocr, EchoVQA()])
    out = run(ocr.ainvoke(image=TextImage(["x"]), region=[0, 0, 50, 50]))
    ctx.ledger.record(out)
    events, created = repair(ctx, TriggerHit(Trigger.T1, (out.call_id,), "empty"))
    assert [e.operator for e in events] == [OperatorName.RETRY] and events[0].grounded_after is True
    assert created and ctx.executor.used[Trigger.T1] == 1  # the SWITCH was not charged


def test_t1_retry_perturbs_the_box_the_tool_declares(item_ctx):
    ocr = EchoOCR()
    ctx = item_ctx([ocr])
    del ctx.tools["vqa"]  # no alternative in M_compat(OCR) = {search, VQA}
    out = run(ocr.ainvoke(image=TextImage([]), region=[100, 100, 200, 150]))
    ctx.ledger.record(out)
    # RETRY re-invokes with a perturbed region; EchoOCR still returns nothing → SWITCH, no alternative
    events, _ = repair(ctx, t1_tool_anomaly(out))
    [retry_out] = [o for o in ctx.ledger.tool_outputs() if o.call_id != out.call_id]
    moved = retry_out.inputs["region"]
    assert isinstance(moved, list)  # the form the tool was given it in
    deltas = [abs(a - b) for a, b in zip(moved, [100, 100, 200, 150], strict=True)]
    assert all(15 <= d <= 40 for d in deltas)
    assert set(retry_out.inputs) == {"image", "region"}  # nothing the real OCR signature lacks
    assert events[0].variation.startswith("region→[") and events[0].tool_call == retry_out.call_id
    assert events[1].note.endswith("no compatible alternative for echo_ocr")
    assert events[1].tool_call is None and events[1].cost == 2.0  # λ_ACTION · (1 + 0 calls)
    assert all(e.error is None for e in events)


def test_refresh_and_retry_call_the_tool_again(item_ctx):
    """REFRESH must re-run the tool (a copy of the old output would be content without a new call)."""

    class CountingOCR(EchoOCR):
        calls = 0

        def _run(self, image, region=None):
            CountingOCR.calls += 1
            return super()._run(image, region)

    ocr = CountingOCR()
    ctx = item_ctx([ocr])
    led = ctx.ledger
    [a] = led.record(run(ocr.ainvoke(image=TextImage(["36.7"]), region=[0, 0, 50, 20])), ttl=1)
    led.add_claim(Claim("SC-1", ClaimType.SC, "36.7", Stage.J, [a.id]))
    led.add_claim(Claim("DC-1", ClaimType.DC, "36.7", None, ["SC-1"]))
    led.advance(5)
    before = CountingOCR.calls
    events, created = repair(ctx, TriggerHit(Trigger.T2, (a.id,)))
    assert events[0].operator is OperatorName.REFRESH and CountingOCR.calls == before + 1
    new = led.get(created[0])
    fresh = led.tool_output(new.tool_call_id)
    assert fresh.call_id != a.tool_call_id and fresh.inputs["region"] != [0, 0, 50, 20]
    assert new.bbox == BBox.from_list(fresh.inputs["region"]) and a.superseded_by == new.id
    assert events[0].cost == 2.0 and events[0].layer.value == "EVIDENCE"  # λ_EVIDENCE · (1 + 1)


def test_operator_never_sends_undeclared_inputs_and_bugs_are_not_tool_anomalies(item_ctx):
    class StrictSearch(EchoSearch):
        def _run(self, query: str):
            raise AttributeError("bug inside the tool")

    led = Ledger()
    ocr = EchoOCR()
    out = run(ocr.ainvoke(image=TextImage(["x"])))
    led.record(out)
    assert Perturbation().inputs(out, ocr) == dict(out.inputs)  # no box, no 'attempt'
    try:
        run(StrictSearch().ainvoke(query="q"))
        raise AssertionError("a programming error was disguised as a tool output")
    except AttributeError:
        pass
    strict = StrictSearch()
    ctx = item_ctx([strict])
    ok = run(EchoSearch().ainvoke(query="q"))
    ctx.ledger.record(ok)
    ctx.tools["echo_search"] = strict
    events, _ = repair(ctx, TriggerHit(Trigger.T4, (ctx.ledger.entries()[-1].id,)))
    assert events[0].operator is OperatorName.RETRY and "AttributeError" in events[0].error


def test_budget_reserve_funds_hypothesis_verification_first():
    b = Budget(2)
    b.reserve(1)
    assert b.spend() and not b.spend()  # T5/T6 ACQUIRE cannot take the reserved unit
    assert b.spend_reserved() and b.remaining == 0
    b2 = Budget(2)
    b2.reserve(1)
    b2.release()
    assert b2.spend() and b2.spend() and not b2.spend()


def test_t2_refresh_if_decision_depends_else_drop(item_ctx):
    ocr = EchoOCR()
    ctx = item_ctx([ocr])
    led = ctx.ledger
    a, b = led.record(run(ocr.ainvoke(image=TextImage(["a", "b"]))), ttl=1)
    led.add_claim(Claim("SC-1", ClaimType.SC, "a", Stage.J, [a.id]))
    led.add_claim(Claim("DC-1", ClaimType.DC, "a", None, ["SC-1"]))
    led.add_claim(Claim("SC-2", ClaimType.SC, "b", Stage.E, [b.id]))
    led.advance(5)
    events, created = repair(ctx, TriggerHit(Trigger.T2, (a.id, b.id)))
    assert [e.operator for e in events] == [OperatorName.REFRESH, OperatorName.DROP]
    assert a.omega is Omega.STALE and a.superseded_by in created
    assert b.omega is Omega.DROPPED
    assert "invalidated claims: ['SC-2']" in events[1].note


def test_t3_drops_weaker(item_ctx):
    ctx = item_ctx()
    led = ctx.ledger
    [a] = led.record(EchoOCR().invoke(image=TextImage(["36.7"], bbox=[0, 0, 10, 10], score=0.9)))
    [b] = led.record(EchoOCR().invoke(image=TextImage(["38.7"], bbox=[0, 0, 10, 10], score=0.6)))
    events, _ = repair(ctx, t3_conflicts(led)[0])
    assert events[0].operator is OperatorName.DROP and b.omega is Omega.DROPPED and a.active
    kinds = [(t.op, t.entry_id) for t in led.transitions if t.op in {"CONFLICT", "RESOLVE"}]
    assert kinds == [("CONFLICT", a.id), ("CONFLICT", b.id), ("RESOLVE", a.id)]


def test_t3_across_tools_ocr_line_versus_crop_reading(item_ctx):
    ctx = item_ctx(per_trigger_budget=0)  # no T3 repair left: both stay CONFLICTED
    led = ctx.ledger
    [line] = led.record(EchoOCR().invoke(image=TextImage(["36.7"], bbox=[0, 0, 50, 20], score=0.95)))
    [reading] = led.record(EchoSearch().invoke(query="unused"))  # no box: never in T3
    assert t3_conflicts(led) == []
    [other] = led.record(EchoVQA().invoke(stage="vqa", prompt="reading 52"))
    assert t3_conflicts(led) == []  # no box either
    [boxed] = led.record(EchoOCR().invoke(image=TextImage(["reading 36.7"], bbox=[0, 0, 50, 22])))
    assert t3_conflicts(led) == []  # same value read two ways: no conflict
    [wrong] = led.record(EchoOCR().invoke(image=TextImage(["reading 52"], bbox=[1, 0, 50, 22], score=0.5)))
    assert {h.targets for h in t3_conflicts(led)} == {(line.id, wrong.id), (boxed.id, wrong.id)}
    events, _ = repair(ctx, t3_conflicts(led)[0])
    assert line.omega is Omega.CONFLICTED and wrong.omega is Omega.CONFLICTED
    assert events[0].operator is None and events[0].note.endswith("per-trigger budget M0 exhausted")


def test_t4_retry(item_ctx):
    ocr = EchoOCR()
    ctx = item_ctx([ocr])
    [low] = ctx.ledger.record(run(ocr.ainvoke(image=TextImage(["x"], score=0.1))))
    events, created = repair(ctx, t4_confidence_drop(low))
    assert events[0].operator is OperatorName.RETRY and len(created) == 1
    assert events[0].grounded_after is False  # the re-read is as faint: σ 0.1 < σ_floor


def test_t5_acquire_then_abstain_when_budget_spent(item_ctx):
    search = EchoSearch()
    ctx = item_ctx([search], budget=1, t5_ending="abstain")  # App. E.2's Π(T5)
    hit = TriggerHit(Trigger.T5, ("DC-1",))
    spec = AcquireSpec("echo_search", {"query": "apollo"})
    first, created = repair(ctx, hit, acquire=spec)
    assert first[0].operator is OperatorName.ACQUIRE and not ctx.traj.abstained and created
    assert ctx.budget.remaining == 0 and first[0].targets == ["DC-1"]
    second, _ = repair(ctx, hit, acquire=spec)
    assert ctx.traj.abstained and second[0].operator is OperatorName.ABSTAIN
    assert second[0].grounded_after is False and "repair budget M exhausted" in second[0].note


def test_t5_keep_ending_and_m0_exhaustion_end_the_same_way_as_m(item_ctx):
    """``t5_ending=keep``: once no ACQUIRE can be made the decision stands (no ABSTAIN event); the
    per-trigger M0 running out ends T5 exactly like M running out (one rule)."""
    spec = AcquireSpec("echo_search", {"query": "apollo"})
    hit = TriggerHit(Trigger.T5, ("DC-1",), "coverage 0.00 < 0.15")
    keep = item_ctx([EchoSearch()], budget=1, t5_ending="keep")
    assert repair(keep, hit, acquire=spec)[0][0].operator is OperatorName.ACQUIRE
    [kept], _ = repair(keep, hit, acquire=spec)
    assert not keep.traj.abstained and kept.operator is None
    assert kept.note == (
        "coverage 0.00 < 0.15; repair budget M exhausted; unsupported decision kept (t5_ending=keep)"
    )
    m0 = item_ctx([EchoSearch()], budget=5, per_trigger_budget=1, t5_ending="abstain")
    repair(m0, hit, acquire=spec)
    events, _ = repair(m0, hit, acquire=spec)  # M = 4 left, M0 used up: the paper's ending, ABSTAIN
    assert m0.traj.abstained and events[-1].operator is OperatorName.ABSTAIN
    assert m0.budget.remaining == 4 and "per-trigger budget M0 exhausted" in events[-1].note


def test_t6_warning_and_acquire(item_ctx):
    ctx = item_ctx([EchoSearch()])
    events, _ = repair(
        ctx, TriggerHit(Trigger.T6, ("SC-1",)), acquire=AcquireSpec("echo_search", {"query": "q"})
    )
    assert ctx.executor.warning and "hallucination" in ctx.executor.warning
    assert ctx.executor.with_warning("next").endswith("\n\nnext")
    assert events[0].operator is OperatorName.ACQUIRE and events[0].cost == 2.0 * 2
    assert events[0].note == "warning injected" and ctx.budget.remaining == 1


def test_t6_without_budget_still_warns(item_ctx):
    ctx = item_ctx([EchoSearch()], budget=0)
    events, created = repair(
        ctx,
        TriggerHit(Trigger.T6, ("SC-1",), "ECC failed"),
        acquire=AcquireSpec("echo_search", {"query": "q"}),
    )
    assert ctx.executor.warning and not created and ctx.executor.used[Trigger.T6] == 1
    assert events[0].operator is None and events[0].note == "ECC failed; warning injected, no budget"


def test_stop_and_answer_picks_max_sigma():
    from ledgermind.repair.policy import stop_and_answer

    led = Ledger()
    led.record(EchoOCR().invoke(image=TextImage(["low"], score=0.4)))
    [high] = led.record(EchoOCR().invoke(image=TextImage(["high"], score=0.95)))
    led.record(EchoOCR().invoke(image=TextImage(["later"], score=0.95)))
    assert stop_and_answer(led) is high  # the oldest of the most confident
    assert stop_and_answer(led, ["OC-1"]).fact == "low"
    led.drop("OC-1")
    assert stop_and_answer(led, ["OC-1"]) is None and stop_and_answer(Ledger()) is None


def test_perturbation_stays_inside_image():
    p = Perturbation(random.Random(3), image_size=(120, 80))
    for _ in range(50):
        b = p.bbox(BBox(0, 0, 120, 80))
        assert 0 <= b.x0 <= b.x1 <= 120 and 0 <= b.y0 <= b.y1 <= 80
    b = Perturbation(random.Random(3)).bbox(BBox(100, 100, 200, 200))
    deltas = [abs(b.x0 - 100), abs(b.y0 - 100), abs(b.x1 - 200), abs(b.y1 - 200)]
    assert all(15 <= d <= 40 for d in deltas)


def test_freeform_repair_rewrites_without_tools(item_ctx):
    from ledgermind.backends.scripted import Rule

    ctx = item_ctx(
        [EchoSearch()],
        rules=[Rule(pattern="T6_PHANTOM_GROUNDING", reply="Revised: Apollo 11 landed in the Atlantic Ocean")],
        flags=AblationFlags(typed_repair=False),
    )
    events, created = repair(
        ctx, TriggerHit(Trigger.T6, ("SC-1",)), acquire=AcquireSpec("echo_search", {"query": "q"})
    )
    assert events[0].operator is OperatorName.FREEFORM_REFLECTION and events[0].cost == 2.0
    assert created == [] and not ctx.ledger.tool_outputs()  # no tool call
    [claim] = ctx.ledger.claims()
    assert claim.text.startswith("Revised") and claim.origin.value == "freeform"
    ctx2 = item_ctx(flags=AblationFlags(typed_repair=False), per_trigger_budget=0)
    [logged], _ = repair(ctx2, TriggerHit(Trigger.T6, ("SC-1",)))
    assert logged.operator is None and logged.note == "budget exhausted"


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


def test_retry_of_a_model_backed_tool_is_a_new_request(item_ctx):
    """VQA/READ: RETRY re-asks with a rephrased instruction (default) or, only where the backend may
    sample, as a seeded sampled draw — never the same greedy call."""
    from ledgermind.pipeline.mllm_tools import VQATool

    for allow_sampling, want in ((False, [("q", 0), ("q\n\n", 0)]), (True, [("q", 0), ("q", 1)])):
        seen = []

        async def call(stage, text, images, system, schema, draw=0, seen=seen):
            seen.append((text, draw))
            return "" if len(seen) == 1 else "a reading"

        vqa = VQATool(call)
        ctx = item_ctx(reinvoke_sampling=allow_sampling)
        ctx.tools["vqa"] = vqa
        led = ctx.ledger
        out = run(vqa.ainvoke(stage="direct", prompt="q"))
        led.record(out)
        new = Perturbation(allow_sampling=allow_sampling).inputs(out, vqa)
        assert ("sampled" in new) is allow_sampling and ("rephrase" in new) is not allow_sampling
        events, _ = repair(ctx, t1_tool_anomaly(out))
        assert events[0].operator is OperatorName.RETRY and events[0].grounded_after is True
        assert [(t[: len(w)], d) for (t, d), (w, _) in zip(seen, want)] == want and len(seen) == 2
        assert events[0].variation == ("sampled draw attempt=1" if allow_sampling else "rephrase=1")
        retried = led.tool_outputs()[-1]  # the event names the call it made (census repair_tool_calls)
        assert events[0].tool_call == retried.call_id != out.call_id


def test_t4_fires_on_ocr_whose_every_reading_is_below_sigma_floor_under_the_default_config(item_ctx):
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
    ctx = item_ctx([low])
    out = low.invoke(image=image)
    ctx.ledger.record(out)
    [hit] = Verifier(ctx.ledger, lambda c: None).on_tool_output(out, [])
    events, _ = repair(ctx, hit)
    assert [(e.trigger, e.operator) for e in events] == [(Trigger.T4, OperatorName.RETRY)]
    assert "0.21" in hit.detail


def test_retry_keeps_the_form_of_a_box_input_and_never_moves_a_readings_location():
    """A real run's RETRY of a Dual-Read reading crashed: its location list came back as a BBox.
    A perturbed box keeps the form the tool was given it in, and a reading's location is metadata
    (the image is the crop already), not a box input RETRY may move."""
    from ledgermind.pipeline.mllm_tools import ReadTool
    from ledgermind.repair.reinvocation import _BOX_KEYS

    ocr = EchoOCR()
    out = run(ocr.ainvoke(image=TextImage(["36.7"]), region=[10, 10, 60, 40]))
    new = Perturbation().inputs(out, ocr)
    assert isinstance(new["region"], list) and new["region"] != [10, 10, 60, 40]
    read_inputs = ReadTool(lambda *a, **k: None).input_names() or set()
    assert not set(read_inputs) & set(_BOX_KEYS) and "located_at" in read_inputs

"""What the per-item executor does with an action beyond calling its tool: the successor a REFRESH
chooses among several new entries, the inputs SWITCH gives a VQA tool, and the free-form rewrite
(ablation w/o Typed Repair) entering the ledger and the answer."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from ledgermind.backends.scripted import Rule
from ledgermind.claims import Claim, ClaimOrigin, ClaimType, Stage
from ledgermind.errors import LedgerError
from ledgermind.pipeline.config import AblationFlags
from ledgermind.repair import Action
from ledgermind.repair.policy import HALLUCINATION_WARNING, Check
from ledgermind.repair.triggers import TriggerHit, t1_tool_anomaly
from ledgermind.tools.base import BBox, Observation, Tool, ToolKind
from ledgermind.trajectory import MarkKind, OperatorName, Trigger
from tests.helpers import EchoOCR, FailingTool, TextImage


class _Lines(Tool):
    """An OCR-kind tool whose lines carry their own boxes (``None``: a line without a box)."""

    name, kind = "lines_ocr", ToolKind.OCR

    def __init__(self, lines: Sequence[tuple[str, list[float] | None]]) -> None:
        self.lines = list(lines)

    def _run(self, image: Any, region: Any = None) -> list[Observation]:
        return [Observation(t, BBox.from_list(b) if b else None) for t, b in self.lines]


class _FailingSearch(Tool):
    name, kind = "search", ToolKind.SEARCH

    def _run(self, query: str) -> list[Observation]:
        raise RuntimeError("provider down")


def _repair(ctx: Any, hit: TriggerHit) -> list[Any]:
    before = len(ctx.traj.events)
    asyncio.run(ctx.executor.repair(hit))
    return ctx.traj.events[before:]


def _refresh(item_ctx: Any, old_box: list[float] | None, new: list[tuple[str, list[float] | None]]) -> Any:
    """REFRESH of a stale entry whose tool now returns ``new``: the entry that superseded it."""
    tool = _Lines([("36.7", old_box)])
    ctx = item_ctx([tool])
    [old] = ctx.ledger.record(tool.invoke(image=TextImage(["x"])), ttl=1)
    ctx.ledger.add_claim(Claim("DC-1", ClaimType.DC, "36.7", None, [old.id]))
    ctx.ledger.advance(2)
    tool.lines = new
    [event] = _repair(ctx, TriggerHit(Trigger.T2, (old.id,), "claim DC-1"))
    assert event.operator is OperatorName.REFRESH
    return ctx.ledger.get(old.superseded_by)


def test_refresh_supersedes_with_the_new_entry_that_overlaps_the_old_box_most(item_ctx) -> None:
    far, near = ("99", [200, 200, 220, 220]), ("36.9", [2, 2, 42, 42])
    assert _refresh(item_ctx, [0, 0, 40, 40], [far, near]).fact == "36.9"
    assert _refresh(item_ctx, [0, 0, 40, 40], [("7", None), near]).fact == "36.9"  # no box: never the closest
    assert _refresh(item_ctx, None, [far, near]).fact == "99"  # the old entry had no box: the first


def test_switch_from_a_failed_non_ocr_call_asks_vqa_about_the_region(item_ctx) -> None:
    """The item's own VQA tool (model-backed) answers the SWITCH; its request says what to look for."""
    ctx = item_ctx([_FailingSearch()], question="Who built it?")
    out = _FailingSearch().invoke(query="builder")
    ctx.ledger.record(out)
    events = _repair(ctx, t1_tool_anomaly(out))
    [switch] = [e for e in events if e.operator is OperatorName.SWITCH]
    assert switch.variation is None  # no rephrasing asked
    [call] = [c for c in ctx.traj.model_calls if c.stage == "switch_vqa"]
    assert "Describe the region relevant to for this question: Who built it?" in json.dumps(call.messages)


def _freeform(item_ctx: Any, tmp_path: Path, reply: str, answer: str | None = None) -> Any:
    image = tmp_path / "img.png"
    Image.new("RGB", (40, 30), "white").save(image)
    ask = (
        r"flagged this problem: T5_UNSUPPORTED_DECISION no support\nQuestion: What does the sign say\?\n"
        r"Your current claims:\n.*DC-1.*EXIT.*\nYour current answer: " + (answer or r"\(none yet\)") + "\n"
    )
    ctx = item_ctx(
        rules=[Rule(reply, prompt="reflect", pattern=ask)],
        flags=AblationFlags(typed_repair=False),
        images=[image],
    )
    ctx.traj.raw_answer = answer
    ctx.ledger.add_claim(Claim("DC-1", ClaimType.DC, "EXIT", None, ["OC-1", "OC-2"]))
    [event] = _repair(ctx, TriggerHit(Trigger.T5, ("OC-9", "DC-1"), "no support"))
    assert event.operator is OperatorName.FREEFORM_REFLECTION
    return ctx


def test_a_freeform_rewrite_is_a_claim_citing_what_the_flagged_claim_cited(item_ctx, tmp_path) -> None:
    ctx = _freeform(item_ctx, tmp_path, "  The sign reads EXIT.\nAnswer: EXIT  ")
    rewrite = ctx.ledger.claim("SC-1")
    assert (rewrite.ctype, rewrite.stage, rewrite.origin) == (ClaimType.SC, Stage.J, ClaimOrigin.FREEFORM)
    assert rewrite.text == "The sign reads EXIT.\nAnswer: EXIT" and rewrite.citations == ["OC-1", "OC-2"]
    assert ctx.traj.raw_answer == "EXIT" and "answer rewritten by free-form reflection" in ctx.traj.notes
    [call] = ctx.traj.model_calls
    assert call.stage == "reflect" and call.image_pixels == [40 * 30]


def test_a_freeform_rewrite_without_an_answer_line_keeps_the_answer(item_ctx, tmp_path) -> None:
    ctx = _freeform(item_ctx, tmp_path, "x" * 600 + " answer: no", answer="EXIT")
    assert ctx.ledger.claim("SC-1").text == "x" * 500
    assert ctx.traj.raw_answer == "EXIT" and ctx.traj.notes == []


def test_acquire_spec_focuses_the_observation_on_the_gap(item_ctx) -> None:
    """q_spec: the question and the gap, no plan, at most 5 observations, the T6 warning only after a
    T6, and the k-th ACQUIRE of the item re-asked with the k-th rephrasing (recorded as its variation)."""
    ctx = item_ctx(question="What does the sign say?")
    spec = ctx.executor.acquire_spec("EXIT")
    assert spec.tool == "observe"
    assert spec.inputs["question"] == "What does the sign say?\nFocus on evidence for or against: EXIT"
    assert (spec.inputs["plan"], spec.inputs["max_oc"], spec.inputs["rephrase"]) == ("", 5, 0)
    assert item_ctx(max_oc=3).executor.acquire_spec("EXIT").inputs["max_oc"] == 3
    warned = ctx.executor.acquire_spec("EXIT", warned=True).inputs["question"]
    assert warned == f"{HALLUCINATION_WARNING}\n{spec.inputs['question']}"
    [first] = _repair_with(ctx, TriggerHit(Trigger.T5, ("DC-1",)), spec)
    assert first.operator is OperatorName.ACQUIRE and first.variation is None
    again = ctx.executor.acquire_spec("EXIT")
    assert again.inputs["rephrase"] == 1
    [event] = _repair_with(ctx, TriggerHit(Trigger.T5, ("DC-1",)), again)
    assert event.operator is OperatorName.ACQUIRE and event.variation == "rephrase=1"


def _repair_with(ctx: Any, hit: TriggerHit, spec: Any) -> list[Any]:
    before = len(ctx.traj.events)
    asyncio.run(ctx.executor.repair(hit, acquire=spec))
    return ctx.traj.events[before:]


def test_a_pending_t6_warning_goes_in_front_of_the_next_prompt_and_is_marked(item_ctx) -> None:
    ctx = item_ctx()
    assert ctx.executor.with_warning("Decide.") == "Decide."  # no T6 yet
    ctx.executor.warning = HALLUCINATION_WARNING
    assert ctx.executor.with_warning("Decide.") == f"{HALLUCINATION_WARNING}\n\nDecide."
    assert [(m.kind, m.detail) for m in ctx.traj.marks] == [
        (MarkKind.WARNING_INJECTED, "T6 warning in the prompt")
    ]


def test_an_action_naming_an_unknown_call_or_tool_is_a_ledger_error(item_ctx) -> None:
    ctx = item_ctx()
    for action, message in (
        (Action(OperatorName.RETRY, ("x",), origin="ocr#9"), "no recorded tool call 'ocr#9' to re-invoke"),
        (
            Action(OperatorName.ACQUIRE, ("x",), tool="ghost", inputs={}),
            "tool 'ghost' is not available for repair",
        ),
    ):
        with pytest.raises(LedgerError, match=message):
            asyncio.run(ctx.executor._reinvoke(action, supersede=False))


def test_stop_and_answer_names_the_most_confident_active_entry(item_ctx) -> None:
    """No trigger selects STOP_AND_ANSWER (Eq. 25), but its row applies as Eq. 24 says."""
    ctx = item_ctx()
    tool = _Lines([("EXIT", [0, 0, 9, 9])])
    [weak] = ctx.ledger.record(tool.invoke(image="a"), sigma=0.5)
    [strong] = ctx.ledger.record(tool.invoke(image="b"), sigma=0.9)
    ctx.ledger.record(_Lines([("ENTRY", [0, 0, 9, 9])]).invoke(image="c"), sigma=0.95)  # not a candidate
    stop = Action(OperatorName.STOP_AND_ANSWER, (weak.id, strong.id))
    hit = TriggerHit(Trigger.T5, ("DC-1",))
    assert asyncio.run(ctx.executor._apply(hit, stop)).note == f"answer 'EXIT' ({strong.id})"
    ctx.ledger.drop(strong.id)
    ctx.ledger.drop(weak.id)
    assert asyncio.run(ctx.executor._apply(hit, stop)).note == "no active evidence"


def test_drop_notes_only_the_claims_it_invalidated(item_ctx) -> None:
    ctx = item_ctx()
    tool = _Lines([("EXIT", [0, 0, 9, 9])])
    [alone] = ctx.ledger.record(tool.invoke(image="a"))
    [cited] = ctx.ledger.record(tool.invoke(image="b"))
    ctx.ledger.add_claim(Claim("SC-1", ClaimType.SC, "EXIT", Stage.J, [cited.id]))
    hit = TriggerHit(Trigger.T3, ("x",))
    assert asyncio.run(ctx.executor._apply(hit, Action(OperatorName.DROP, (alone.id,)))).note == ""
    assert "SC-1" in asyncio.run(ctx.executor._apply(hit, Action(OperatorName.DROP, (cited.id,)))).note


def test_a_retry_whose_new_entry_reaches_the_floor_counts_as_grounded(item_ctx) -> None:
    """GroundedAfter with Check.CONFIDENT and no claim: some new entry has σ ≥ σ_floor (Eq. 19's floor
    itself counts); a REFRESH marks its target stale with the reason recorded."""
    tool = _Lines([("36.7", [0, 0, 40, 40])])
    ctx = item_ctx([tool], sigma_floor=0.5)
    [old] = ctx.ledger.record(tool.invoke(image=TextImage(["x"])), sigma=0.5)
    retry = Action(OperatorName.RETRY, (old.tool_call_id,), origin=old.tool_call_id, check=Check.CONFIDENT)
    res = asyncio.run(ctx.executor._apply(TriggerHit(Trigger.T4, (old.id,)), retry))
    ctx.ledger.get(res.entries[0]).sigma = 0.5
    assert ctx.executor._grounded_after(retry, res, None) is True
    ctx.ledger.get(res.entries[0]).sigma = 0.49
    assert ctx.executor._grounded_after(retry, res, None) is False


def test_a_refresh_retires_its_target_as_refresh(item_ctx) -> None:
    tool = _Lines([("36.7", [0, 0, 40, 40])])
    ctx = item_ctx([tool])
    [old] = ctx.ledger.record(tool.invoke(image=TextImage(["x"])))
    refresh = Action(OperatorName.REFRESH, (old.id,), origin=old.tool_call_id)
    asyncio.run(ctx.executor._apply(TriggerHit(Trigger.T2, (old.id,)), refresh))
    [stale] = [t for t in ctx.ledger.transitions if t.op == "MARK_STALE"]
    assert (stale.entry_id, stale.detail) == (old.id, {"reason": "refresh"})


def test_a_logged_hit_is_stamped_now_and_a_t6_warning_is_noted(item_ctx) -> None:
    ctx = item_ctx(budget=0)
    ctx.ledger.advance(3)
    [logged] = _repair(ctx, TriggerHit(Trigger.T6, ("SC-1",)))
    assert logged.operator is None and logged.step == int(ctx.ledger.now()) == 3
    assert "warning injected after T6_PHANTOM_GROUNDING" in ctx.traj.notes


def test_a_freeform_rewrite_of_a_flagged_sc_cites_what_it_cited_and_an_empty_one_adds_nothing(
    item_ctx,
) -> None:
    ctx = item_ctx(flags=AblationFlags(typed_repair=False))
    ctx.ledger.add_claim(Claim("SC-1", ClaimType.SC, "EXIT", Stage.J, ["OC-3"]))
    ctx.executor._apply_freeform(TriggerHit(Trigger.T6, ("OC-9", "SC-1")), "The sign reads EXIT")
    assert ctx.ledger.claim("SC-2").citations == ["OC-3"]
    [event] = _repair(ctx, TriggerHit(Trigger.T6, ("SC-1",)))  # the model says nothing
    assert event.operator is OperatorName.FREEFORM_REFLECTION and len(ctx.ledger.claims()) == 2


def test_retry_perturbations_are_reproducible_per_seed_and_item(item_ctx) -> None:
    box = BBox(100, 100, 200, 200)
    draws = [[item_ctx().executor.perturbation.bbox(box) for _ in range(3)] for _ in range(2)]
    assert draws[0] == draws[1]


def test_a_freeform_rewrite_of_a_hit_on_entries_only_cites_nothing(item_ctx) -> None:
    ctx = item_ctx(flags=AblationFlags(typed_repair=False))
    ctx.executor._apply_freeform(TriggerHit(Trigger.T2, ("OC-1",)), "The sign reads EXIT")
    assert ctx.ledger.claim("SC-1").citations == []


def test_the_baseline_verifies_no_tool_output_and_switch_to_ocr_needs_an_image(item_ctx) -> None:
    base = item_ctx([FailingTool()], flags=AblationFlags(baseline=True))
    asyncio.run(base.executor.call("failing_ocr", image="x.png"))
    assert base.traj.events == []  # the native-CoT baseline repairs nothing (not even T1)
    ctx = item_ctx([FailingTool()])
    asyncio.run(ctx.executor.call("failing_ocr", image="x.png"))
    assert ctx.traj.events and ctx.traj.events[0].trigger is Trigger.T1
    assert ctx.executor._switch_inputs(EchoOCR(), None) == {}  # the item has no image to read


def test_a_call_returns_its_own_entries_with_those_its_repairs_created(item_ctx) -> None:
    tool = _Lines([("36.7", [0, 0, 40, 40])])
    ctx = item_ctx([tool], budget=2)
    out, entries = asyncio.run(ctx.executor.call("lines_ocr", image=TextImage(["x"]), sigma=0.1))
    assert ctx.traj.events and ctx.traj.events[0].trigger is Trigger.T4  # σ below the floor
    assert entries[0].tool_call_id == out.call_id and len(entries) > 1


class _FlakySearch(Tool):
    """A search that fails its first query and answers the rest: what RETRY sent is kept."""

    name, kind = "search", ToolKind.SEARCH

    def __init__(self) -> None:
        self.queries: list[str] = []

    def _run(self, query: str) -> list[Observation]:
        self.queries.append(query)
        if len(self.queries) == 1:
            raise RuntimeError("provider down")
        return [Observation("the builder was Roebling")]


def test_retry_of_a_search_expands_its_query_with_the_questions_first_five_content_words(item_ctx) -> None:
    """App. E.2 query expansion: question keywords the query lacks, at most three, from the first five
    content words (here the query already holds the first three, so the fourth and fifth are added and
    the sixth, ``towers``, is not)."""
    search = _FlakySearch()
    ctx = item_ctx(
        [search], question="Which engineer designed the suspension cable anchorage towers near the harbour?"
    )
    asyncio.run(ctx.executor.call("search", query="engineer designed suspension"))
    assert search.queries == ["engineer designed suspension", "engineer designed suspension cable anchorage"]


class _Sampler(Tool):
    """A model-backed-like tool declaring ``attempt``/``sampled``/``rephrase``; fails on its first call."""

    name, kind = "sampler", ToolKind.VQA

    def __init__(self) -> None:
        self.calls: list[dict[str, Any]] = []

    def _run(
        self, prompt: str, attempt: int = 0, sampled: bool = False, rephrase: int = 0
    ) -> list[Observation]:
        self.calls.append({"attempt": attempt, "sampled": sampled, "rephrase": rephrase})
        if len(self.calls) == 1:
            raise RuntimeError("empty reply")
        return [Observation("an answer")]


@pytest.mark.parametrize(
    ("sampling", "retried"),
    [
        (True, {"attempt": 1, "sampled": True, "rephrase": 0}),
        (False, {"attempt": 0, "sampled": False, "rephrase": 1}),
    ],
)
def test_retry_samples_only_where_the_config_allows_it_else_rephrases(item_ctx, sampling, retried) -> None:
    tool = _Sampler()
    ctx = item_ctx([tool], reinvoke_sampling=sampling)
    asyncio.run(ctx.executor.call("sampler", prompt="What is shown?"))
    assert tool.calls == [{"attempt": 0, "sampled": False, "rephrase": 0}, retried]


def test_a_stage_may_repeat_a_model_request_only_a_reinvocation_is_refused(item_ctx, tmp_path: Path) -> None:
    """The model door refuses a repeated request only inside a repair's re-invocation: a stage that
    asks the same thing twice (e.g. the same region in two steps) gets both replies."""
    image = tmp_path / "img.png"
    Image.new("RGB", (40, 30), "white").save(image)
    ctx = item_ctx(rules=[Rule("A red bridge.", pattern="What is shown")], images=[image])
    for _ in range(2):
        out, _entries = asyncio.run(ctx.executor.call("vqa", stage="vqa", prompt="What is shown?"))
        assert out.ok
    assert [c.stage for c in ctx.traj.model_calls] == ["vqa", "vqa"]

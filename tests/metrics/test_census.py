"""The mechanism census is a pure function of the trajectory record, and run totals are sums."""

from __future__ import annotations

import json

from ledgermind.claims import Claim, ClaimType, Stage
from ledgermind.experiment.run_summary import fired
from ledgermind.metrics.census import census, empty_census, sum_census, trajectory_record
from ledgermind.trajectory import (
    MarkKind,
    ModelCall,
    OperatorName,
    PathKind,
    RepairEvent,
    RepairLayer,
    Trajectory,
    Trigger,
)
from tests.helpers import EchoOCR, EchoSearch, TextImage


def _traj() -> Trajectory:
    t = Trajectory("q1", "what?", PathKind.FULLPIPE)
    t.ledger.record(EchoOCR().invoke(image=TextImage(["36.7"])))
    found = t.ledger.record(EchoSearch().invoke(query="apollo"))  # what the ACQUIRE below fetched
    t.model_calls += [
        ModelCall("dual_read_0", 0.1, request_key="a"),
        ModelCall("dual_read_1", 0.1, request_key="a"),  # degenerate pair
        ModelCall("dual_read_0", 0.1, request_key="b"),
        ModelCall("dual_read_1", 0.1, request_key="c"),
        ModelCall("decide", 0.1, request_key="d"),
    ]
    t.events += [
        RepairEvent(Trigger.T1, OperatorName.RETRY, RepairLayer.ACTION, hit=1),
        RepairEvent(Trigger.T1, OperatorName.SWITCH, RepairLayer.ACTION, hit=1),  # same firing
        RepairEvent(
            Trigger.T6, OperatorName.ACQUIRE, RepairLayer.ACTION, new_entries=[e.id for e in found], hit=2
        ),
        RepairEvent(Trigger.T5, OperatorName.ABSTAIN, RepairLayer.TRAJECTORY, hit=3),
        RepairEvent(Trigger.T2, OperatorName.REFRESH, RepairLayer.EVIDENCE, hit=4, error="TypeError: boom"),
        RepairEvent(Trigger.T6, OperatorName.FREEFORM_REFLECTION, None, hit=5),
        RepairEvent(
            Trigger.T5, OperatorName.ACQUIRE, RepairLayer.ACTION, hit=6, tool_call="call-empty"
        ),  # no entries
    ]
    t.mark(MarkKind.DUAL_READ_AGREE)
    t.mark(MarkKind.DUAL_READ_DISAGREE)
    t.mark(MarkKind.NUMERIC_SNAP)
    t.mark(MarkKind.SEARCH_SKIPPED_NO_PROVIDER)
    j1 = t.ledger.add_claim(Claim("SC-1", ClaimType.SC, "x", Stage.J, ["OC-1"]))
    j1.grounding = {"cited": True, "ecc": False, "ncc": False}
    j2 = t.ledger.add_claim(Claim("SC-2", ClaimType.SC, "y", Stage.J, []))
    j2.grounding = {"cited": False, "ecc": True, "ncc": False}
    e = t.ledger.add_claim(Claim("SC-3", ClaimType.SC, "z", Stage.E, ["OC-1"]))
    e.grounding = {"cited": True, "ecc": False, "ncc": True}  # not a judgment: never demoted
    t.abstained = True
    return t


def test_census_counts_each_mechanism_from_the_record():
    c = census(_traj())
    assert c["paths"] == {
        p.value: int(p is PathKind.FULLPIPE) for p in PathKind
    }  # every path, OFFICIAL (i10) included
    assert c["triggers"] == {"T1": 1, "T2": 1, "T3": 0, "T4": 0, "T5": 2, "T6": 2}
    assert c["operators"]["RETRY"] == 1 and c["operators"]["SWITCH"] == 1 and c["operators"]["REFRESH"] == 1
    assert (
        c["operators"]["ABSTAIN"] == 1
        and c["operators"]["ACQUIRE"] == 2
        and "FREEFORM_REFLECTION" not in c["operators"]
    )
    assert c["reflections"] == 1 and c["operator_failures"] == 1
    assert c["dual_read"] == {"runs": 2, "agree": 1, "disagree": 1, "identical_requests": 1, "escalated": 0}
    assert c["search"] == {"rounds": 1, "skipped_no_provider": 1}
    assert c["defense"] == {"entity_recheck": 0, "numeric_snap": 1, "visual_fallback": 0}
    assert c["demotions"] == {"ecc": 1, "ncc": 1, "uncited": 1}
    assert (c["abstained"], c["tool_calls"], c["model_calls"], c["crop_zoom"]) == (1, 2, 5, 0)
    assert c["repair_tool_calls"] == 2  # the ACQUIREs' search and empty call; the OCR was acquisition


def test_census_survives_serialisation_and_sums_over_items():
    t = _traj()
    rec = trajectory_record(t)
    loaded = Trajectory.from_dict(json.loads(json.dumps(rec)))
    assert census(loaded) == rec["mechanisms"] == census(t)
    blank = census(Trajectory("q2", "?", PathKind.DIRECT))
    total = sum_census([census(t), blank])
    assert total["paths"]["DIRECT"] == 1 and total["paths"]["FULLPIPE"] == 1
    assert total["triggers"]["T6"] == 2 and total["model_calls"] == 5
    assert set(total) == set(empty_census()) and sum_census([]) == empty_census()
    assert "identical_requests 1" in fired(total)  # the console shows what fired
    assert total["crop_zoom"] == 0 and "crop_zoom" not in fired(total)  # zeros stay in metrics.json


def test_the_headline_gives_no_accuracy_when_nothing_was_scored() -> None:
    from ledgermind.experiment.run_summary import headline

    ident = {"variant": "full", "benchmark": "jsonl", "model": "m", "seed": 0}
    scored = {"identity": ident, "accuracy": 0.5, "n_scored": 2, "n_items": 3, "errors": 1}
    assert "accuracy 50.0% [" in headline(scored) and "on 2 scored of 3 items" in headline(scored)
    failed = {"identity": ident, "accuracy": 0.0, "n_scored": 0, "n_items": 3, "errors": 3}
    assert "accuracy - on 0 scored of 3 items (0 unparsed, 3 errors)" in headline(failed)

"""The simulator section of the census: flagged vs neutralised vs faded vs reached, and harm done."""

from __future__ import annotations

from ledgermind.claims import Claim, ClaimOrigin, ClaimStatus, ClaimType, Stage
from ledgermind.metrics.census import census, sum_census
from ledgermind.simulator.census import catch_rates, fault_census
from ledgermind.trajectory import MarkKind, ModelCall, PathKind, Trajectory


def call(task: str, *faults: dict, stage: str = "x", **extra) -> ModelCall:
    return ModelCall(
        stage=stage,
        latency_s=0.0,
        meta={"simulator": {"task": task, "item": "q", "faults": list(faults), **extra}},
    )


def claim(
    traj: Trajectory,
    text: str,
    ecc: bool,
    status=ClaimStatus.ACTIVE,
    origin=ClaimOrigin.MODEL,
    applied: bool = True,
    ctype=ClaimType.SC,
) -> Claim:
    c = Claim(
        traj.ledger.next_claim_id(ctype),
        ctype,
        text,
        Stage.J if ctype is ClaimType.SC else None,
        [],
        origin=origin,
    )
    c.grounding = {"ecc": ecc, "ecc_applied": applied}
    c.status = status
    traj.ledger.add_claim(c)
    return c


PHANTOM = {"kind": "phantom", "entity": "Harold Finnegan", "answer": "C", "coupled": False}


def test_flagged_is_not_neutralised_until_the_claim_is_gone():
    t = Trajectory("q", "Q?", PathKind.FULLPIPE)
    t.model_calls.append(call("reason", PHANTOM))
    c = claim(t, "According to Harold Finnegan, the answer is C", ecc=False)
    v = fault_census(t)
    assert v["flagged"]["phantom"] == 1 and v["neutralised"]["phantom"] == 0  # demoted but still ACTIVE
    c.status = ClaimStatus.DROPPED
    v = fault_census(t)
    assert v["neutralised"]["phantom"] == 1 and v["reached"]["phantom"] == 0


def test_an_audit_only_flag_is_no_flag():
    """A post-hoc ECC label (no_ledger's audit of the final answer) changed nothing: not flagged."""
    t = Trajectory("q", "Q?", PathKind.NO_LEDGER)
    t.model_calls.append(call("answer", PHANTOM))
    claim(t, "C. Gemini 4; as Harold Finnegan described", ecc=False, applied=False, ctype=ClaimType.DC)
    t.answer = "C"
    v = fault_census(t)
    assert v["flagged"]["phantom"] == 0 and v["neutralised"]["phantom"] == 0 and v["reached"]["phantom"] == 1


def test_a_verdict_marked_audit_only_or_on_a_path_where_nothing_acts_is_no_flag():
    """The real post-hoc audit applies ECC (``ecc_applied`` True): what tells it apart is the
    verdict's ``audit_only`` mark, or — in trajectories recorded before the mark — the path."""
    for path, audit_only, flagged in [
        (PathKind.NO_LEDGER, False, 0),
        (PathKind.BASELINE, False, 0),
        (PathKind.DIRECT, True, 0),
        (PathKind.DIRECT, False, 1),
    ]:
        t = Trajectory("q", "Q?", path)
        t.model_calls.append(call("answer", PHANTOM))
        c = claim(t, "C. Gemini 4; as Harold Finnegan described", ecc=False, ctype=ClaimType.DC)
        if audit_only:
            c.grounding = {**c.grounding, "audit_only": True}
        assert fault_census(t)["flagged"]["phantom"] == flagged, (path, audit_only)


def test_a_fault_that_vanished_unflagged_faded():
    t = Trajectory("q", "Q?", PathKind.DIRECT)
    t.model_calls.append(call("answer", PHANTOM))
    v = fault_census(t)
    assert v["faded"]["phantom"] == 1 and v["neutralised"]["phantom"] == 0 and v["flagged"]["phantom"] == 0


def test_the_entity_recheck_after_a_decision_flags_its_phantom():
    t = Trajectory("q", "Q?", PathKind.FULLPIPE)
    t.model_calls += [call("answer", stage="entity_recheck"), call("decide", PHANTOM, stage="decide")]
    assert fault_census(t)["flagged"]["phantom"] == 0  # the recheck came before, not after
    t.model_calls.append(call("answer", stage="entity_recheck"))
    assert fault_census(t)["flagged"]["phantom"] == 1


def test_a_misread_is_flagged_by_dual_read_and_neutralised_when_not_adopted():
    t = Trajectory("q", "Q?", PathKind.FULLPIPE)
    t.model_calls += [call("read", {"kind": "misread", "value": 51.2, "true": 36.5}), call("read")]
    t.mark(MarkKind.DUAL_READ_AGREE, "v1=51.2 v2=51.2 Δv=0.000")
    assert fault_census(t)["flagged"]["misread"] == 0
    t.mark(MarkKind.DUAL_READ_DISAGREE, "v1=51.2 v2=36.5 Δv=0.287")
    t.answer = "51.2"
    v = fault_census(t)
    assert v["flagged"]["misread"] == 1 and v["reached"]["misread"] == 1 and v["neutralised"]["misread"] == 0
    t.answer = "36.5"
    assert fault_census(t)["neutralised"]["misread"] == 1


def test_harm_a_suggested_look_adopted_and_a_good_reading_superseded():
    t = Trajectory("q", "Q?", PathKind.FULLPIPE)
    t.model_calls += [
        call("observe", {"kind": "suggested", "named": "B", "believed": "A"}),
        call("read", reading={"value": 36.0, "true": 36.5, "graduation": 2.0}),
        call("read", reading={"value": 44.0, "true": 36.5, "graduation": 2.0}),
    ]
    t.answer = "B"
    assert fault_census(t)["harmed"]["suggested_look_adopted"] == 1
    t.answer = "44"  # the escalation adopted the far reading over one within a graduation
    assert fault_census(t)["harmed"] == {"suggested_look_adopted": 0, "good_reading_superseded": 1}
    t.answer = "36"
    assert fault_census(t)["harmed"]["good_reading_superseded"] == 0


def test_run_census_sums_items_and_reports_neutralised_rates():
    items = []
    for dropped in (True, False, True):
        t = Trajectory("q", "Q?", PathKind.FULLPIPE)
        t.model_calls += [call("reason", PHANTOM), call("x", {"kind": "empty"})]
        claim(
            t,
            "Harold Finnegan says C",
            ecc=False,
            status=ClaimStatus.DROPPED if dropped else ClaimStatus.ACTIVE,
        )
        items.append(census(t))
    total = sum_census(items)["simulator"]
    assert total["injected"]["phantom"] == 3 and total["injected"]["empty"] == 3
    assert total["flagged"]["phantom"] == 3 and total["neutralised"]["phantom"] == 2
    assert catch_rates(total) == {"phantom": 2 / 3, "relation": None, "misread": None}
    assert total["by_place"]["phantom"]["FULLPIPE/reason"] == 3
    plain = Trajectory("q", "Q?", PathKind.DIRECT)
    plain.model_calls.append(ModelCall(stage="x", latency_s=0.0))
    assert "simulator" not in census(plain)  # only simulated runs carry the section


def test_simulated_runs_are_labelled_a_test_instrument(tmp_path):
    """metrics.json and the Table 3 caption say so; a run on another backend does not."""
    from ledgermind.experiment.table3 import RunScores, caption_for
    from ledgermind.runs.results import ItemResult
    from ledgermind.runs.summary import RunIdentity, build_metrics
    from ledgermind.simulator.label import NOTE

    t = Trajectory("q", "Q?", PathKind.FULLPIPE)
    t.model_calls.append(call("reason", PHANTOM))
    claim(t, "Harold Finnegan says C", ecc=False, status=ClaimStatus.DROPPED)

    def ident(backend: str) -> RunIdentity:
        return RunIdentity("m", backend, "gauges", "full", "x", 1)

    scored = [ItemResult("q", "C", "A", 0.0, True, "FULLPIPE", "Easy")]
    sim = build_metrics(scored, [t], ident("SimulatedBackend"), wall_time_s=1.0, gamma=0.5, summarize=None)
    assert sim["test_instrument"] == NOTE and sim["mechanisms"]["simulator"]["catch_rate"]["phantom"] == 1.0
    real = build_metrics([], [], ident("VLLMServerBackend"), wall_time_s=1.0, gamma=0.5, summarize=None)
    assert "test_instrument" not in real
    assert caption_for([RunScores(tmp_path, ident("SimulatedBackend"), {}, {})]).startswith(NOTE)
    assert NOTE not in caption_for([RunScores(tmp_path, ident("VLLMServerBackend"), {}, {})])


def test_a_misattribution_ecc_cannot_see_reaches_the_answer():
    t = Trajectory("q", "Q?", PathKind.DIRECT)
    t.model_calls.append(
        call("answer", {"kind": "relation", "entity": "Apollo 11 Plaque", "answer": "C", "coupled": True})
    )
    claim(t, "C. Gemini 4; as Apollo 11 Plaque described", ecc=True, ctype=ClaimType.DC)
    t.answer = "C"
    c = fault_census(t)
    assert c["flagged"]["relation"] == 0 and c["reached"]["relation"] == 1 and c["coupled"] == 1
    assert c["by_place"]["relation"] == {"DIRECT/answer": 1}


def test_report_prints_each_verb_and_the_harm():
    from ledgermind.simulator.sanity import catch_table

    rows = catch_table(
        {
            "injected": {"relation": 4, "phantom": 5},
            "flagged": {"relation": 0, "phantom": 4},
            "neutralised": {"relation": 0, "phantom": 3},
            "faded": {"relation": 1, "phantom": 1},
            "reached": {"relation": 3, "phantom": 1},
            "harmed": {"suggested_look_adopted": 2, "good_reading_superseded": 0},
        }
    )
    assert "REACHED" in rows[0] and "flagged" in rows[0] and "neutral." in rows[0]
    relation = next(r for r in rows if r.strip().startswith("relation"))
    assert relation.split()[1:] == ["4", "0", "0", "1", "0", "3"]
    phantom = next(r for r in rows if r.strip().startswith("phantom"))
    assert phantom.split()[1:] == ["5", "4", "3", "1", "0", "1"]  # 3 + 1 + 0 + 1 = 5 injected
    assert "suggested_look_adopted 2" in rows[-1]


def test_the_report_totals_add_up_to_their_parts():
    from ledgermind.simulator.sanity import catch_table, injected_line

    injected = {"misread": 7, "phantom": 0, "relation": 0, "format": 2, "empty": 0, "suggested": 1}
    line = injected_line(injected, ["misread", "phantom", "relation"])
    assert line == (
        "faults injected=10 (catchable: misread 7, phantom 0, relation 0; other: empty 0, format 2, suggested 1)"
    )
    verbs = {
        "flagged": {"misread": 5},
        "neutralised": {"misread": 1},
        "faded": {"misread": 4},
        "reached": {"misread": 0},
    }
    misread = next(r for r in catch_table({"injected": injected, **verbs}) if r.strip().startswith("misread"))
    injected_n, _flagged, *ends = map(int, misread.split()[1:])
    assert ends == [1, 4, 2, 0] and sum(ends) == injected_n


def test_metrics_rebuilt_in_a_reading_process_keep_the_simulator_section():
    """``ledgermind rescore`` rebuilds metrics.json in a process that never built the backend: the
    simulator's census section (injected vs caught faults, catch rates) must not vanish from it."""
    import subprocess
    import sys
    from pathlib import Path

    script = """
import sys
from ledgermind.runs.results import ItemResult
from ledgermind.runs.summary import RunIdentity, build_metrics
from ledgermind.trajectory import ModelCall, PathKind, Trajectory
assert "ledgermind.simulator.plugin" not in sys.modules  # as in a rescore: nothing built the backend
t = Trajectory("q", "Q?", PathKind.FULLPIPE)
fault = {"kind": "phantom", "entity": "Harold Finnegan", "answer": "C"}
t.model_calls.append(ModelCall(stage="x", latency_s=0.0, meta={"simulator": {"task": "reason", "item": "q", "faults": [fault]}}))
ident = RunIdentity("m", "SimulatedBackend", "gauges", "full", "x", 1)
scored = [ItemResult("q", "C", "A", 0.0, True, "FULLPIPE", "Easy")]
m = build_metrics(scored, [t], ident, wall_time_s=1.0, gamma=0.5, summarize=None)
print(m["mechanisms"].get("simulator", {}).get("injected", {}).get("phantom"))
"""
    root = Path(__file__).resolve().parents[2]
    proc = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, cwd=root, timeout=120, check=False
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.strip() == "1"

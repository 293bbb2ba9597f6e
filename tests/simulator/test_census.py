"""The simulator section of the census: derived from model-call meta, claims and marks."""

from __future__ import annotations

from ledgermind.claims import Claim, ClaimOrigin, ClaimStatus, ClaimType, Stage
from ledgermind.metrics.census import census, sum_census
from ledgermind.simulator.census import catch_rates, fault_census
from ledgermind.trajectory import MarkKind, ModelCall, PathKind, Trajectory


def call(task: str, *faults: dict) -> ModelCall:
    return ModelCall(stage="x", latency_s=0.0, meta={"simulator": {"task": task, "item": "q", "faults": list(faults)}})


def claim(traj: Trajectory, text: str, ecc: bool, status=ClaimStatus.ACTIVE, origin=ClaimOrigin.MODEL) -> None:
    c = Claim(traj.ledger.next_claim_id(ClaimType.SC), ClaimType.SC, text, Stage.J, [], origin=origin)
    c.grounding = {"ecc": ecc, "ecc_applied": True}
    c.status = status
    traj.ledger.add_claim(c)


def test_phantom_caught_only_when_ecc_failed_on_that_claim():
    t = Trajectory("q", "Q?", PathKind.FULLPIPE)
    t.model_calls += [call("reason", {"kind": "phantom", "entity": "Harold Finnegan", "answer": "C"}),
                      call("reason", {"kind": "phantom", "entity": "Dr. Tobias Wren", "answer": "A"})]  # fmt: skip
    claim(t, "According to Harold Finnegan, the answer is C", ecc=False)
    claim(t, "According to Dr. Tobias Wren, the answer is A", ecc=True)  # ECC missed it
    c = fault_census(t)
    assert c["injected"]["phantom"] == 2 and c["caught"]["phantom"] == 1


def test_phantom_in_the_decision_is_caught_by_the_entity_recheck_that_follows():
    t = Trajectory("q", "Q?", PathKind.FULLPIPE)
    t.model_calls += [call("entity_recheck"), call("decide", {"kind": "phantom", "entity": "the Oberlin Survey", "answer": "B"})]
    assert fault_census(t)["caught"]["phantom"] == 0  # the recheck came before, not after
    t.model_calls.append(call("entity_recheck"))
    assert fault_census(t)["caught"]["phantom"] == 1


def test_misread_caught_when_dual_read_disagreed_on_that_value():
    t = Trajectory("q", "Q?", PathKind.FULLPIPE)
    t.model_calls += [call("read", {"kind": "misread", "value": 51.2, "true": 36.5}), call("read")]
    t.mark(MarkKind.DUAL_READ_AGREE, "v1=51.2 v2=51.2 Δv=0.000")
    assert fault_census(t)["caught"]["misread"] == 0
    t.mark(MarkKind.DUAL_READ_DISAGREE, "v1=51.2 v2=36.5 Δv=0.287")
    assert fault_census(t)["caught"]["misread"] == 1


def test_amplified_claim_survives_while_active():
    t = Trajectory("q", "Q?", PathKind.FULLPIPE)
    sentence = "Moreover, the Meridian Institute reported exactly this finding."
    t.model_calls.append(call("reflect", {"kind": "amplify", "text": sentence}))
    claim(t, "Critique ...\n" + sentence, ecc=False, origin=ClaimOrigin.FREEFORM)
    assert fault_census(t)["amplified_surviving"] == 1
    t.ledger.claims()[0].status = ClaimStatus.DROPPED
    assert fault_census(t)["amplified_surviving"] == 0


def test_run_census_sums_items_and_reports_catch_rates():
    items = []
    for caught in (True, False, True):
        t = Trajectory("q", "Q?", PathKind.FULLPIPE)
        t.model_calls += [call("reason", {"kind": "phantom", "entity": "Harold Finnegan", "answer": "C"}), call("x", {"kind": "empty"})]
        claim(t, "Harold Finnegan says C", ecc=not caught)
        items.append(census(t))
    total = sum_census(items)["simulator"]
    assert total["injected"]["phantom"] == 3 and total["injected"]["empty"] == 3 and total["caught"]["phantom"] == 2
    assert catch_rates(total) == {"phantom": 2 / 3, "relation": None, "misread": None, "amplify": None}
    assert total["missed"]["phantom"] == 1
    assert total["by_place"]["phantom"]["FULLPIPE/reason"] == {"injected": 3, "caught": 2, "missed": 1, "in_answer": 0}
    assert total["by_place"]["empty"]["FULLPIPE/x"] == {"injected": 3, "in_answer": 0}
    plain = Trajectory("q", "Q?", PathKind.DIRECT)
    plain.model_calls.append(ModelCall(stage="x", latency_s=0.0))
    assert "simulator" not in census(plain)  # only simulated runs carry the section


def test_simulated_runs_are_labelled_a_test_instrument(tmp_path):
    """metrics.json and the Table 3 caption say so; a run on another backend does not."""
    from ledgermind.experiment.summary import RunIdentity, build_metrics
    from ledgermind.experiment.table3 import RunScores, caption_for
    from ledgermind.simulator.label import NOTE

    t = Trajectory("q", "Q?", PathKind.FULLPIPE)
    t.model_calls.append(call("reason", {"kind": "phantom", "entity": "Harold Finnegan", "answer": "C"}))
    claim(t, "Harold Finnegan says C", ecc=False)

    def ident(backend: str) -> RunIdentity:
        return RunIdentity("m", backend, "gauges", "full", "x", 1)

    from ledgermind.experiment.results import ItemResult

    scored = [ItemResult("q", "C", "A", 0.0, True, "FULLPIPE", "Easy")]  # only scored items count
    sim = build_metrics(scored, [t], ident("SimulatedBackend"), wall_time_s=1.0, gamma=0.5, summarize=None)
    assert sim["test_instrument"] == NOTE and sim["mechanisms"]["simulator"]["catch_rate"]["phantom"] == 1.0
    real = build_metrics([], [], ident("VLLMServerBackend"), wall_time_s=1.0, gamma=0.5, summarize=None)
    assert "test_instrument" not in real
    assert caption_for([RunScores(tmp_path, ident("SimulatedBackend"), {}, {})]).startswith(NOTE)
    assert NOTE not in caption_for([RunScores(tmp_path, ident("VLLMServerBackend"), {}, {})])


def test_a_misattribution_ecc_cannot_see_is_a_miss_and_its_harm_is_counted():
    """An in-evidence entity tied to a wrong answer passes ECC: the census reports it missed, in its
    place, and counts that its wrong answer became the final answer."""
    t = Trajectory("q", "Q?", PathKind.DIRECT)
    t.model_calls.append(call("direct", {"kind": "relation", "entity": "Apollo 11 Plaque", "answer": "C"}))
    claim(t, "The evidence shows: Apollo 11 Plaque", ecc=False)  # quotes the name: not the tying claim
    claim(t, "C. Gemini 4; as Apollo 11 Plaque described", ecc=True)
    t.answer = "C"
    c = fault_census(t)
    assert c["caught"]["relation"] == 0 and c["missed"]["relation"] == 1 and c["in_answer"]["relation"] == 1
    assert c["by_place"]["relation"] == {"DIRECT/direct": {"injected": 1, "caught": 0, "missed": 1, "in_answer": 1}}
    t.ledger.claims()[1].grounding = {"ecc": False, "ecc_applied": True}
    assert fault_census(t)["caught"]["relation"] == 1


def test_a_decision_misread_is_caught_by_the_numeric_snap_and_an_observation_misread_by_ncc():
    t = Trajectory("q", "Q?", PathKind.FULLPIPE)
    t.model_calls += [call("observe", {"kind": "misread", "value": 2568.0, "true": 1969.0}),
                      call("decide", {"kind": "misread", "value": 51.2, "true": 36.5})]  # fmt: skip
    assert fault_census(t)["missed"]["misread"] == 2
    t.mark(MarkKind.NUMERIC_SNAP, "51.2 → 36.5")
    claim(t, "The plaque dates from 2568", ecc=True)
    t.ledger.claims()[0].grounding["ncc"] = False
    c = fault_census(t)
    assert c["caught"]["misread"] == 2 and c["by_place"]["misread"]["FULLPIPE/decide"]["caught"] == 1


def test_report_prints_misses_beside_catches_per_kind_and_place():
    from ledgermind.simulator.sanity import catch_table

    rows = catch_table({
        "relation": {"DIRECT/direct": {"injected": 4, "caught": 0, "missed": 4, "in_answer": 3}},
        "phantom": {"FULLPIPE/reason": {"injected": 5, "caught": 4, "missed": 1, "in_answer": 0}},
        "flip": {"FULLPIPE/reason": {"injected": 2, "in_answer": 1}},
    })  # fmt: skip
    assert "MISSED" in rows[0] and "caught" in rows[0]
    relation = next(r for r in rows if r.strip().startswith("relation"))
    assert relation.split()[1:] == ["DIRECT/direct", "4", "0", "4", "100.0%", "3"]
    assert "no catcher" in next(r for r in rows if r.strip().startswith("flip"))

"""S-RFA ledger mode on the issue-25 cases: evidence is what the tools saw, never the trace's own
claims; computed answers; option text read (garbled) off a vision page; the audited image."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from PIL import Image

from ledgermind.benchmarks.item import AnswerType, Item
from ledgermind.grounding.cascade import GroundingCascade, GroundingConfig
from ledgermind.grounding.option_text_filter import without_options
from ledgermind.runs.trajectories import trajectory_path
from ledgermind.srfa.protocol import AtomicClaim, label_ledger_mode
from ledgermind.srfa.run import SrfaSettings, load_run, srfa_run
from ledgermind.trajectory import PathKind, Trajectory
from perception.aliases import AliasTable
from tests.helpers import EchoOCR, TextImage


@pytest.fixture(scope="module")
def cascade(ner) -> GroundingCascade:
    return GroundingCascade(GroundingConfig(), ner, AliasTable.default())


def _claims(*scs: str, answer: str) -> list[AtomicClaim]:
    return [AtomicClaim("SC", s) for s in scs] + [AtomicClaim("DC", f"Answer: {answer}", answer=answer)]


# ------------------------------------------------------------------------------ chains
def test_a_decision_resting_on_the_traces_own_claim_is_derived_not_grounded(cascade) -> None:
    """The issue's zygomatic case: the SC restates the question (grounded at low coverage); the
    decision's option text is only in that SC. Before, the SC's text was evidence for the DC."""
    question = "Which structure does the arrow indicate in <image 1>?"
    options = ["Zygomatic arch", "Mandible", "Maxilla", "Nasal bone"]
    sc, dc = label_ledger_mode(
        _claims("The arrow indicates the zygomatic arch of the skull.", answer="A"),
        [question],
        cascade,
        options,
    )
    assert sc.support == "grounded" and sc.grounded
    assert dc.support == "derived" and dc.grounded is False and dc.via == ["SC-1"]
    assert "derived" in dc.reason


def test_a_chain_claim_is_labelled_by_the_leaves_not_by_the_claims_it_follows(cascade) -> None:
    """Grounded by the tool evidence alone whatever the chain before it said: an SC that a tool
    fact supports stays grounded after an ungrounded SC, and an ungrounded SC grounds nothing."""
    ocr = ["Apollo 11 plaque", "July 1969"]
    question = "Which mission is commemorated by the plaque in <image 1>?"
    options = ["Apollo 11", "Apollo 13", "Gemini 4", "Vostok 1"]
    phantom, faithful, dc = label_ledger_mode(
        _claims("Jim Lovell commanded Apollo 13.", "The plaque reads Apollo 11, July 1969.", answer="B"),
        ocr + [question],
        cascade,
        options,
    )
    assert phantom.support == "ungrounded" and faithful.support == "grounded"
    assert dc.support == "ungrounded"  # Apollo 13 is only in the ungrounded SC: no chain reaches a tool fact


# ------------------------------------------------------------------------------ computed answers
def test_a_computed_answer_is_labelled_computed_with_its_operands(cascade) -> None:
    question = "A car travels 120 km in 2 hours. What is its average speed?"
    options = ["50 km/h", "60 km/h", "70 km/h", "100 km/h"]
    sc, dc = label_ledger_mode(
        _claims("The average speed is 120 km / 2 hours = 60 km/h.", answer="B"), [question], cascade, options
    )
    assert sc.support == "computed" and sc.grounded and sc.operands == ["60 km/h = 120 km / 2 hours"]
    assert dc.support == "computed" and dc.grounded and dc.operands == ["60 km/h = 120 km / 2 hours"]


def test_arithmetic_needs_fitting_units_and_real_operands() -> None:
    from ledgermind.grounding.arithmetic import Known, derive
    from ledgermind.grounding.numbers import extract_numbers

    def known(text: str) -> list[Known]:
        return [Known(n, "evidence", True) for n in extract_numbers(text)]

    [target] = extract_numbers("30%")
    assert derive(target, known("60 mmHg and 2 samples")) is None  # mmHg / 2 is no percentage
    [two] = extract_numbers("2")
    assert derive(two, known("1 and 1 and 3")) is None  # 1 + 1 explains anything
    [v] = extract_numbers("60 km/h")
    assert derive(v, known("120 km in 2 hours")).expression == "60 km/h = 120 km / 2 hours"


def test_a_number_in_no_evidence_and_no_chain_stays_ungrounded(cascade) -> None:
    question = "A car travels 120 km in 2 hours. What is its average speed?"
    options = ["50 km/h", "60 km/h", "73 km/h", "100 km/h"]
    [dc] = label_ledger_mode([AtomicClaim("DC", "Answer: C", answer="C")], [question], cascade, options)
    assert dc.support == "ungrounded" and "73" in dc.reason


def test_a_result_computed_from_a_number_only_the_model_stated_is_derived(cascade) -> None:
    question = "A stone falls for 3 s from rest. How fast is it then?"
    options = ["29.4 m/s", "30 m/s", "9.8 m/s", "3 m/s"]
    g, v, dc = label_ledger_mode(
        _claims(
            "The stone falls with g = 9.8 m/s^2.", "After 3 s its speed is 9.8 × 3 = 29.4 m/s.", answer="A"
        ),
        [question],
        cascade,
        options,
    )
    assert g.support == "ungrounded"  # 9.8 is the model's knowledge, in no tool fact
    assert (
        v.support == "derived" and v.via == ["SC-1"] and v.operands[-1].startswith("29.4 m/s = 9.8 m/s × 3")
    )
    assert dc.support == "derived" and not dc.grounded and dc.via == ["SC-2"]


# ------------------------------------------------------------------------------ vision pages
VISION_OPTIONS = ["605 m/s, 2.54 m^3/s", "580 m/s, 2.31 m^3/s", "700 m/s, 3.10 m^3/s", "616 m/s, 2.54 m^3/s"]
GARBLED_PAGE = [
    "Water leaves a nozzle of area 0.0041 m2. Find the jet speed and the flow rate.",
    "A.605m/s,2.54m~3/s",
    "B. 580 m/s. 2.31 m3/s C.700 m/s,3.10 m^3/s",  # two options run together on one line
    "D.616m/s,2.54m~3/s",  # the garbled option the model picked
]


def test_garbled_options_on_a_vision_page_are_not_evidence(cascade) -> None:
    kept = without_options(GARBLED_PAGE, VISION_OPTIONS, in_image=True)
    assert kept == [GARBLED_PAGE[0]]
    [dc] = label_ledger_mode(
        [AtomicClaim("DC", "Answer: D", answer="D")],
        GARBLED_PAGE,
        cascade,
        VISION_OPTIONS,
        options_in_image=True,
    )
    assert dc.support == "ungrounded"  # before, "D.616m/s,2.54m~3/s" was kept and grounded it


def test_an_option_inside_a_longer_page_line_is_cut_out_and_the_rest_kept() -> None:
    line = "Find the jet speed. A. 605 m/s, 2.54 m~3/s"
    assert without_options([line], VISION_OPTIONS, in_image=True) == ["Find the jet speed."]
    # the item's own picture (standard setting) keeps what it shows, options or not
    assert without_options(["Apollo 11 plaque"], ["Apollo 11", "Apollo 13"]) == ["Apollo 11 plaque"]


def test_the_audit_records_the_image_the_model_was_sent(tmp_path: Path, cascade) -> None:
    page = tmp_path / "page.png"
    Image.new("RGB", (64, 48), "white").save(page)
    item = Item(
        "v1",
        "The question and its answer options are shown in the image.",
        [page],
        None,
        "D",
        AnswerType.MCQ,
        difficulty="Hard",
        meta={"setting": "vision", "options": VISION_OPTIONS},
    )
    traj = Trajectory("v1", item.question, PathKind.BASELINE)
    traj.ledger.record(EchoOCR().invoke(image=TextImage(GARBLED_PAGE)))
    traj.transcript = [{"role": "model", "text": "The jet speed is 616 m/s.\nAnswer: D"}]
    run = tmp_path / "run"
    (run / "trajectories").mkdir(parents=True)
    (run / "results.jsonl").write_text(
        json.dumps(
            {
                "id": "v1",
                "prediction": "D",
                "score": 1.0,
                "difficulty": "Hard",
                "path": "official",
                "error": None,
            }
        )
        + "\n"
    )
    trajectory_path(run, "v1").write_text(json.dumps(traj.to_dict()))
    metrics = asyncio.run(
        srfa_run(load_run(run), SrfaSettings(progress=False), cascade=cascade, items={"v1": item})
    )
    [audit] = [json.loads(x) for x in (run / "srfa.jsonl").read_text().splitlines()]
    assert audit["image_source"] == "trajectory_ledger"  # a trace with its own tool record reads that
    assert audit["claims"][-1]["support"] == "ungrounded"
    assert metrics["ledger"]["markup_entities"]["n"] == 0
    assert metrics["ledger"]["support"]["DC"]["ungrounded"] == 1

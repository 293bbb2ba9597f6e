"""The record codec: every record writes the very bytes the project's files hold, and reads them back.

``snapshots/records.json`` was written by the hand-written ``to_dict`` of each record before the
codec replaced them; a change of key order, None-vs-absent, float formatting or an irregular
encoding (ttl ∞, boxes as lists, sorted sets, a failure class only on failed calls, flattened
provenance) shows here as a diff.
"""

from __future__ import annotations

import itertools
import json
import math
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from ledgermind.benchmarks.item import AnswerType, Item
from ledgermind.claims import Claim, ClaimType, Stage
from ledgermind.errors import FailureKind
from ledgermind.ledger import Ledger
from ledgermind.records import Record, decode
from ledgermind.runs.atomic import json_text
from ledgermind.runs.results import ItemResult
from ledgermind.runs.summary import RunIdentity
from ledgermind.simulator.faults import Fault, Injected
from ledgermind.srfa.protocol import AtomicClaim, SrfaRecord
from ledgermind.tools import base
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
from tests.helpers import EchoOCR, EchoSearch, FailingTool, TextImage

SNAPSHOT = Path(__file__).parent / "snapshots" / "records.json"


@pytest.fixture
def frozen_tools(monkeypatch: pytest.MonkeyPatch) -> None:
    """Call ids from 1 and a clock that does not move, so tool outputs are the same on every run."""
    monkeypatch.setattr(base, "_call_ids", itertools.count(1))
    monkeypatch.setattr(
        base, "time", SimpleNamespace(perf_counter=lambda: 2.5, time=lambda: 1_700_000_000.25)
    )


def sample_trajectory() -> Trajectory:
    led = Ledger()
    ocr = EchoOCR().invoke(image=TextImage(["Apollo 11", "1969"], bbox=[0, 0, 50.5, 20], score=0.8))
    first, second = led.record(ocr, meta={"category": "TEXT"})
    [hit] = led.record(EchoSearch().invoke(query="apollo"), sigma=0.85, ttl=3.0)
    led.record(FailingTool().invoke(image=TextImage(["x"])))
    led.supersede(first.id, second.id)
    led.set_sigma(hit.id, 0.65, "dual read")
    led.add_claim(Claim("SC-1", ClaimType.SC, "the year is 1969", Stage.E, [second.id, hit.id, "OC-99"]))
    led.add_claim(Claim("DC-1", ClaimType.DC, "B", citations=["SC-1"], grounded=True, grounding={"ok": True}))
    traj = Trajectory("q1", "When?", PathKind.FULLPIPE, ledger=led, answer="B", raw_answer="Answer: B")
    traj.model_calls.append(ModelCall("decide", 0.125, 10, 3, "sim", "m", meta={"seed": 0}, image_pixels=[4]))
    traj.events.append(RepairEvent(Trigger.T1, OperatorName.RETRY, RepairLayer.ACTION, ["failing_ocr#3"]))
    traj.events.append(RepairEvent(Trigger.T4, None, None, grounded_after=False, error="budget"))
    traj.mark(MarkKind.NUMERIC_SNAP, "1969")
    traj.transcript.append({"role": "user", "content": "When?"})
    traj.timings["total_s"] = 1.5
    return traj


def sample_records() -> dict[str, Any]:
    """One record of each kind, with every irregular encoding exercised."""
    audit = SrfaRecord(
        "q1", "ledger", claims=[AtomicClaim("DC", "B", True, "cited", "B", "GROUNDED", via=["SC-1"])]
    )
    audit.claims.append(AtomicClaim("SC", "x", None, operands=["4 = 2 × 2"]))
    return {
        "trajectory": sample_trajectory(),
        "result": ItemResult("q1", "B", "B", 1.0, True, "FULLPIPE", "Easy", ["ocr"], latency_s=0.5),
        "identity": RunIdentity(
            "m", "sim", "mmmu_pro", "fullpipe", "abc", 3, provenance={"config_sha256": "f"}
        ),
        "audit": audit,
        "item": Item("q1", "When?", [Path("a.png")], ["1968", "1969"], "B", AnswerType.MCQ, "Easy", {"k": 1}),
        "injected": Injected(Fault.PHANTOM, {"entity": "Gagarin"}),
    }


def encoded(records: dict[str, Any]) -> dict[str, Any]:
    return {name: r.to_dict() for name, r in records.items()}


def test_records_write_the_recorded_bytes(frozen_tools: None) -> None:
    assert json_text(encoded(sample_records()), indent=2) + "\n" == SNAPSHOT.read_text(encoding="utf-8")


def test_decode_then_encode_is_identity(frozen_tools: None) -> None:
    records = sample_records()
    for name, record in records.items():
        d = json.loads(json_text(record.to_dict()))
        assert json_text(type(record).from_dict(d).to_dict()) == json_text(d), name


def test_irregular_fields_read_back(frozen_tools: None) -> None:
    led = Ledger.from_dict(json.loads(json_text(sample_trajectory().ledger.to_dict())))
    first, second, hit = led.entries()
    assert math.isinf(second.ttl) and hit.ttl == 3.0 and first.superseded_by == second.id
    assert first.bbox == base.BBox(0, 0, 50.5, 20) and hit.bbox is None and hit.dependents == {"SC-1", "DC-1"}
    [ok, _search, failed] = led.tool_outputs()
    assert failed.failure is FailureKind.EVIDENCE and failed.to_dict()["failure"] == "evidence"
    assert ok.failure is None and "failure" not in ok.to_dict() and not ok.live
    identity = RunIdentity.from_dict({"config_sha256": "f", **encoded(sample_records())["identity"]})
    assert identity.provenance == {"config_sha256": "f"} and identity.seed == 0


def test_a_key_absent_from_a_file_takes_the_default_and_an_unknown_key_is_ignored() -> None:
    claim = Claim.from_dict({"id": "DC-1", "ctype": "DC", "text": "B", "added_later": 1})
    assert claim.stage is None and claim.sigma == 1.0 and claim.citations == []


@pytest.mark.parametrize(
    ("row", "message"),
    [
        ({"score": "1"}, "field 'score': expected float"),
        ({"score": True}, "field 'score': expected float"),
        ({"score": math.nan}, "field 'score': expected float"),
        ({"tokens": 1.5}, "field 'tokens': expected int"),
        ({"question_types": ["ocr", 3]}, "field 'question_types': expected str"),
        ({"id": None}, "field 'id': expected str"),
        ({"parsed": None}, "field 'parsed'"),
    ],
)
def test_a_wrong_type_is_a_value_error_naming_the_field(row: dict[str, Any], message: str) -> None:
    good = encoded({"r": ItemResult("q", "B", "B", 1.0, True, None, None)})["r"]
    with pytest.raises(ValueError, match=message.replace("(", r"\(")):
        ItemResult.from_dict({**good, **row})


def test_a_missing_required_field_is_a_value_error() -> None:
    with pytest.raises(ValueError, match="field 'ctype' is missing"):
        Claim.from_dict({"id": "DC-1", "text": "B"})


class Colour(str, Enum):
    RED = "red"


@dataclass(frozen=True)
class Inner(Record):
    tags: frozenset[str] = frozenset()


@dataclass
class Outer(Record):
    colour: Colour
    inner: tuple[Inner, ...] = ()
    by_name: dict[str, list[Path]] = field(default_factory=dict)
    maybe: Colour | None = None


def test_containers_enums_paths_and_nested_records() -> None:
    outer = Outer(Colour.RED, (Inner(frozenset({"b", "a"})),), {"x": [Path("p/q")]})
    d = outer.to_dict()
    assert d == {"colour": "red", "inner": [{"tags": ["a", "b"]}], "by_name": {"x": ["p/q"]}, "maybe": None}
    assert Outer.from_dict(d) == outer
    assert decode(list[Outer], [d]) == [outer]
    with pytest.raises(ValueError):
        Outer.from_dict({**d, "colour": "blue"})


@pytest.mark.parametrize("data", ["x", [1], {"tick": "late"}, {"id_prefix": 3}])
def test_a_ledger_of_another_shape_is_the_codecs_value_error(data) -> None:
    # every reader of a run folder catches ValueError for a record of the wrong shape; the ledger too
    with pytest.raises(ValueError, match=r"^Ledger: |'(tick|id_prefix)'"):
        Ledger.from_dict(data)

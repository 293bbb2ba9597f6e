from __future__ import annotations

import json
import math
from typing import Any

import pytest

from ledgermind.claims import Claim, ClaimStatus, ClaimType, Stage
from ledgermind.errors import LedgerError, ProvenanceError
from ledgermind.ledger import Kappa, Ledger, Omega
from ledgermind.tools.base import BBox, Observation, ToolKind, ToolOutput
from tests.helpers import EchoOCR, EchoSearch, EchoVQA, FailingTool, TextImage


def test_record_applies_mapping_and_fields():
    led = Ledger()
    out = EchoOCR().invoke(image=TextImage(["Apollo  11 Plaque", "1969"], bbox=[0, 0, 50, 20], score=0.8))
    entries = led.record(out)
    assert [e.fact for e in entries] == ["Apollo 11 Plaque", "1969"]  # whitespace normalised by M
    e = entries[0]
    assert (e.id, e.src, e.kappa, e.sigma, e.omega) == (
        "OC-1",
        "echo_ocr",
        Kappa.PERCEPTION,
        0.8,
        Omega.ACTIVE,
    )
    assert e.bbox == BBox(0, 0, 50, 20) and e.tool_call_id == out.call_id
    assert math.isinf(e.ttl) and e.superseded_by is None and e.dependents == set()


def test_sigma_override_and_search_mapping():
    led = Ledger()
    [e] = led.record(EchoSearch().invoke(query="apollo"), sigma=0.85)
    assert e.kappa is Kappa.RETRIEVAL and e.src == "local://corpus/1" and e.sigma == 0.85


def test_only_tool_outputs_enter():
    led = Ledger()
    with pytest.raises(ProvenanceError):
        led.record("free text")  # type: ignore[arg-type]
    with pytest.raises(ProvenanceError):
        ToolOutput("x", "t", ToolKind.OCR, {}, (), None, 0.0, 0.0)


def test_reloaded_copied_or_rebuilt_outputs_cannot_enter_a_live_ledger():
    """Proposition 1's adversary: text that did not come out of a tool call in this run."""
    import copy
    import dataclasses

    from ledgermind.tools.base import Observation

    live = EchoOCR().invoke(image=TextImage(["Apollo 11"]))
    forged = dict(live.to_dict(), observations=[{"text": "Apollo 13", "bbox": [0, 0, 5, 5]}])
    led = Ledger()
    for adversary in (
        ToolOutput.from_dict(forged),  # deserialised text with a seal carried over
        ToolOutput.from_dict(live.to_dict()),  # even a faithful reload is audit-only
        dataclasses.replace(live, observations=(Observation("Apollo 13"),)),  # rebuilt from a live one
        copy.deepcopy(live),
    ):
        assert not adversary.live
        with pytest.raises(ProvenanceError):
            led.record(adversary)
    assert led.entries() == []
    assert live.live and [e.fact for e in led.record(live)] == ["Apollo 11"]


def test_failed_tool_records_nothing_but_keeps_output():
    led = Ledger()
    out = FailingTool().invoke(image="x.png")
    assert out.error and "engine crashed" in out.error and not out.ok
    assert led.record(out) == [] and led.tool_output(out.call_id) is out


def test_ttl_staleness_and_reverification():
    led = Ledger()
    [e] = led.record(EchoOCR().invoke(image=TextImage(["a"])), ttl=2)
    led.add_claim(Claim("SC-1", ClaimType.SC, "a", Stage.E, ["OC-1"]))
    assert led.mark_stale() == []  # not expired yet: (t_now − t_e) = 0
    led.advance(2)
    assert led.mark_stale() == []  # 2 > 2 is false
    led.advance(1)
    assert led.mark_stale() == ["SC-1"] and e.omega is Omega.STALE


def test_supersede_and_drop_propagation():
    led = Ledger()
    a, b = led.record(EchoOCR().invoke(image=TextImage(["x", "y"])))
    [c] = led.record(EchoOCR().invoke(image=TextImage(["x2"])))
    led.add_claim(Claim("SC-1", ClaimType.SC, "x", Stage.E, [a.id]))
    led.add_claim(Claim("SC-2", ClaimType.SC, "y", Stage.E, [b.id]))
    led.supersede(a.id, c.id)
    assert a.omega is Omega.STALE and a.superseded_by == c.id
    assert led.support("SC-1") == []  # stale entries do not support
    assert led.drop(b.id) == ["SC-2"]
    assert led.claim("SC-2").status is ClaimStatus.INVALIDATED and led.claim("SC-1").active
    assert [t.op for t in led.transitions][-2:] == ["SUPERSEDE", "DROP"]


def test_affected_and_citation_through_sc():
    led = Ledger()
    a, b = led.record(EchoOCR().invoke(image=TextImage(["Apollo 11", "1969"])))
    led.add_claim(Claim("SC-1", ClaimType.SC, "Apollo 11", Stage.E, [a.id]))
    led.add_claim(Claim("SC-2", ClaimType.SC, "Apollo 11 in 1969", Stage.J, ["SC-1", b.id, "OC-99"]))
    assert led.affected(a.id) == {"SC-1", "SC-2"}
    assert led.cited_entries("SC-2") == [a.id, b.id]
    assert led.claim("SC-2").unknown_citations == ["OC-99"]


def test_leaf_resolution_through_derivation_chain():
    led = Ledger()
    [p] = led.record(EchoOCR().invoke(image=TextImage(["36.7"])))
    [s] = led.record(EchoSearch().invoke(query="q"))
    [d1] = led.record(EchoVQA().invoke(stage="vqa", prompt="reading 36.7"), derived_from=[p.id])
    [d2] = led.record(EchoVQA().invoke(stage="vqa", prompt="final"), derived_from=[d1.id, s.id])
    assert d2.kappa is Kappa.DERIVATION
    assert {e.id for e in led.leaves(d2.id)} == {p.id, s.id}
    led.add_claim(Claim("SC-1", ClaimType.SC, "x", Stage.J, [d2.id]))
    assert {e.fact for e in led.leaf_pool("SC-1")} == {"36.7", "result for q"}


def test_cycles_and_unknown_parents_rejected():
    led = Ledger()
    with pytest.raises(LedgerError):
        led.record(EchoVQA().invoke(stage="vqa", prompt="x"), derived_from=["OC-404"])
    [d] = led.record(EchoVQA().invoke(stage="vqa", prompt="x"))
    d.derived_from = (d.id,)  # corrupt on purpose
    with pytest.raises(LedgerError, match="cycle"):
        led.leaves(d.id)


def test_conflicted_marking():
    led = Ledger()
    a, b = led.record(EchoOCR().invoke(image=TextImage(["5", "6"])))
    led.mark_conflicted([a.id])
    assert a.omega is Omega.CONFLICTED and [e.id for e in led.active()] == [b.id]


def test_json_round_trip_of_whole_ledger():
    led = Ledger()
    a, _ = led.record(EchoOCR().invoke(image=TextImage(["Apollo 11", "1969"])), ttl=5)
    [d] = led.record(EchoVQA().invoke(stage="vqa", prompt="moon"), derived_from=[a.id])
    led.add_claim(Claim("SC-1", ClaimType.SC, "Apollo 11", Stage.E, [a.id]))
    led.drop(a.id)
    d1 = led.to_dict()
    led2 = Ledger.from_dict(json.loads(json.dumps(d1)))
    assert led2.to_dict() == d1
    [n] = led2.record(EchoOCR().invoke(image=TextImage(["new"])))
    assert n.id == "OC-4"  # the id counter continues after reload
    assert led2.tool_output(d.tool_call_id) is not None


class _ObservingTool(EchoOCR):
    """An observation-kind tool whose observations carry their own metadata (category, value)."""

    name = "meta_observer"
    kind = ToolKind.OBSERVE

    def _run(self, image: TextImage, region: Any = None) -> list[Observation]:
        return [Observation(t, meta={"category": c, "value": v}) for t, c, v in image.lines]


def test_each_entry_keeps_its_own_observations_metadata_when_an_empty_fact_is_skipped():
    """An observation whose fact normalises to nothing records no entry; the ones after it must not
    take their neighbour's metadata (a zip of observations with the *filtered* facts shifted it)."""
    led = Ledger()
    lines = [("   ", "TEXT", None), ("36.7 kPa", "NUMBER", 36.7), ("a red dial", "OBJECT", None)]
    out = _ObservingTool().invoke(image=TextImage(lines))
    entries = led.record(out)
    assert [(e.fact, e.category, e.meta.get("value")) for e in entries] == [
        ("36.7 kPa", "NUMBER", 36.7),
        ("a red dial", "OBJECT", None),
    ]


@pytest.mark.parametrize("retire", ["drop", "supersede", "conflict"])
def test_a_retired_entry_is_not_support_directly_or_through_a_cited_claim(retire):
    """S(c) (Eq. 1) holds only ACTIVE entries; a DROPPED entry counted as support would let a claim
    whose evidence was withdrawn pass ρ, ECC and NCC."""
    led = Ledger()
    a, b = led.record(EchoOCR().invoke(image=TextImage(["Apollo 11", "1969"])))
    led.add_claim(Claim("SC-1", ClaimType.SC, "Apollo 11", Stage.E, [a.id]))
    led.add_claim(Claim("SC-2", ClaimType.SC, "Apollo 11 in 1969", Stage.J, ["SC-1", b.id]))
    assert [e.id for e in led.support("SC-2")] == [a.id, b.id]
    if retire == "drop":
        led.drop(a.id)
        assert a.omega is Omega.DROPPED
    elif retire == "supersede":
        [c] = led.record(EchoOCR().invoke(image=TextImage(["Apollo 12"])))
        led.supersede(a.id, c.id)
    else:
        led.mark_conflicted([a.id])
    assert led.support("SC-1") == [] and [e.id for e in led.support("SC-2")] == [b.id]
    assert [e.fact for e in led.leaf_pool("SC-2")] == ["1969"]
    assert led.cited_entries("SC-2", active_only=False) == [a.id, b.id]  # the audit still sees the edge

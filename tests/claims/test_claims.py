from __future__ import annotations

import pytest

from ledgermind.claims import (
    Claim,
    ClaimType,
    Stage,
    extract_citations,
    parse_oc_lines,
    parse_sc_lines,
)


def test_paper_format():
    text = (
        "[SC-1][E] The plaque reads Apollo 11 | Based on: [OC-1], [OC-2]\n"
        "[SC-2][I] The mission landed in 1969 | Based on: [SC-1], [OC-3]\n"
        "[SC-3][J] Apollo 11, 1969 | Based on: [SC-2]\n"
    )
    cs = parse_sc_lines(text)
    assert [(c.id, c.stage, c.citations) for c in cs] == [
        ("SC-1", Stage.E, ["OC-1", "OC-2"]),
        ("SC-2", Stage.I, ["SC-1", "OC-3"]),
        ("SC-3", Stage.J, ["SC-2"]),
    ]
    assert cs[0].text == "The plaque reads Apollo 11" and cs[2].is_judgment


@pytest.mark.parametrize(
    "line, stage, text, cites",
    [
        ("**[SC-1][E]** plaque text |Based on:[OC-1],[OC-2]", Stage.E, "plaque text", ["OC-1", "OC-2"]),
        ("SC1 [J]: the answer is B (based on OC 4, OC-5)", Stage.J, "the answer is B", ["OC-4", "OC-5"]),
        ("  [SC-2] [i] infer something | Based on: OC3", Stage.I, "infer something", ["OC-3"]),
        ("[SC-4][J] no citations at all", Stage.J, "no citations at all", []),
        ("- [SC-5][E] inline cite [OC-7] here.", Stage.E, "inline cite here.", ["OC-7"]),
    ],
)
def test_messy_lines(line, stage, text, cites):
    [c] = parse_sc_lines(line)
    assert (c.stage, c.text, c.citations) == (stage, text, cites)


def test_garbage_never_raises():
    assert parse_sc_lines("ĉ\x00 random <|im_end|> [[[ SC- ][Q] |||") == []
    assert parse_oc_lines("") == []
    assert parse_sc_lines("{not json") == []


def test_duplicate_ids_renumbered():
    cs = parse_sc_lines("[SC-1][E] a | Based on: [OC-1]\n[SC-1][J] b | Based on: [SC-1]")
    assert [c.id for c in cs] == ["SC-1", "SC-2"]


def test_json_structured_claims():
    cs = parse_sc_lines(
        '```json\n{"claims": [{"stage": "E", "text": "x", "cites": ["OC-1", "oc 2"]},'
        ' {"stage": "Q", "text": "bad"}, {"stage": "J", "text": "B", "cites": []}]}\n```'
    )
    assert [(c.stage, c.citations) for c in cs] == [(Stage.E, ["OC-1", "OC-2"]), (Stage.J, [])]


def test_oc_lines_and_cap():
    text = "\n".join(f"[OC-{i}] TEXT | line {i}" for i in range(1, 20)) + "\nOC-20 number: 36.7 °C"
    ocs = parse_oc_lines(text, max_items=15)
    assert len(ocs) == 15 and ocs[0].category == "TEXT" and ocs[0].text == "line 1"
    [o] = parse_oc_lines("OC-20 number: 36.7 °C")
    assert (o.index, o.category, o.text) == (20, "NUMBER", "36.7 °C")
    js = parse_oc_lines('{"observations": [{"category": "spatial", "text": "left of"}, {"text": ""}]}')
    assert [(o.category, o.text) for o in js] == [("SPATIAL", "left of")]


def test_id_helpers():
    assert extract_citations("[OC-1], OC 1, SC-2") == ["OC-1", "SC-2"]


def test_claim_round_trip():
    c = Claim("SC-1", ClaimType.SC, "t", Stage.J, ["OC-1"], sigma=0.5, grounding={"ecc": False})
    assert Claim.from_dict(c.to_dict()) == c

"""Entity verdicts derived from the numeric rows' annotations, and the shipped forms."""

from __future__ import annotations

from pathlib import Path

import pytest

from ledgermind.errors import UserError
from ledgermind.grounding.cascade import GroundingConfig
from ledgermind.studies.agreement import GROUPS, Check, load_pairs
from ledgermind.studies.derived_pairs import (
    SpanMark,
    derive_entity_pairs,
    derived_expectation,
    load_derived_pairs,
    span_mark,
)
from ledgermind.studies.grounding_cv import (
    DEFAULT_GRID,
    macro_agreement,
    parse_grid,
    run_grid,
    simplest_first,
    strict_paper,
)

DEV = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "grounding_ext" / "dev.jsonl"
needs_dev = pytest.mark.skipif(not DEV.is_file(), reason="needs ../shared/data/grounding_ext/dev.jsonl")


def _wice(claim: str, marked: list[str], label: str = "partially_supported", **extra) -> dict:
    return {
        "id": "w1",
        "subset": "numeric",
        "stratum": "wice",
        "claim": claim,
        "evidence": ["e"],
        "marked_tokens": marked,
        "source": {"dataset": "WiCE", "label": label},
        **extra,
    }


def test_span_mark_counts_words_not_the_possessive():
    assert span_mark("Oak Rovers", ["Oak", "Rovers", "on"]) is SpanMark.MARKED
    assert span_mark("Oak Rovers", ["Rovers"]) is SpanMark.PARTLY
    assert span_mark("Oak Rovers", ["on", "2018"]) is SpanMark.UNMARKED
    assert span_mark("Moreau's", ["Moreau"]) is SpanMark.MARKED


@pytest.mark.parametrize(
    "spans,marked,label,expected",
    [
        (["Port Alder"], ["Port", "Alder", "1987"], "partially_supported", False),  # a fully marked name
        (["Port Alder", "Ada"], ["1987"], "partially_supported", True),  # every name unmarked
        (["Port Alder"], ["Alder"], "partially_supported", None),  # partly marked: no verdict
        (["Port Alder"], [], "supported", True),
        (["Port Alder"], [], "not_supported", None),
        ([], ["1987"], "partially_supported", None),  # nothing for ECC to score
    ],
)
def test_wice_expectation_follows_the_marks(spans, marked, label, expected):
    assert derived_expectation(_wice("c", marked, label), spans) is expected


def test_vitaminc_claim_level_labels_give_no_entity_verdict():
    row = {
        "id": "v",
        "subset": "numeric",
        "stratum": "vitc_exact",
        "claim": "Valmont has 222 deaths .",
        "evidence": ["The state has 222 deaths ."],
        "source": {"dataset": "VitaminC", "label": "supports"},
    }
    assert derived_expectation(row, ["Valmont"]) is None


def test_derive_uses_the_checks_own_entities(ner, aliases):
    rows = [
        _wice("Ilse Moreau was given a five-minute major in Valmont.", ["five", "-", "minute"]),
        _wice("In 1987 she worked in Port Alder.", ["in", "Port", "Alder"], id="w2"),
        {**_wice("no names at all here in 1987.", ["1987"]), "id": "w3"},
        {**_wice("Ada Lovelace wrote it.", []), "subset": "entity", "id": "w4"},
    ]  # entity rows are not re-derived
    pairs = derive_entity_pairs(rows, ner, aliases)
    assert [(p.id, p.check, p.stratum, p.expected) for p in pairs] == [
        ("w1~ent", Check.ECC, "wice_derived", True),
        ("w2~ent", Check.ECC, "wice_derived", False),
    ]
    assert all(p.stratum in GROUPS["entity_derived"][1] for p in pairs)


def test_missing_file_is_a_user_error(ner, tmp_path):
    with pytest.raises(UserError, match="not found"):
        load_derived_pairs(tmp_path / "nope.jsonl", ner)


@needs_dev
def test_dev_file_gives_dozens_of_wice_entity_verdicts(ner):
    derived = load_derived_pairs(DEV, ner)
    assert len(derived) >= 40
    assert {p.stratum for p in derived} == {"wice_derived"}
    assert len({p.id for p in derived}) == len(derived)
    assert {p.expected for p in derived} == {True, False}
    entity_ids = {p.id for p in load_pairs(DEV) if p.check is Check.ECC}
    assert not entity_ids & {p.id for p in derived}


@needs_dev
def test_shipped_forms_are_the_cross_validated_choice_on_all_rows(ner):
    """The shipped ECC forms are what the selection picks on every annotated entity verdict (the
    dev entity rows plus the derived ones; ties to strict Eq. 4/5): a rule edit that moves the
    choice, or a default edited by hand, fails here (docs/grounding.md)."""
    pairs = load_pairs(DEV) + load_derived_pairs(DEV, ner)
    base = GroundingConfig()
    ecc_axes = [spec for spec in DEFAULT_GRID if spec.startswith("ecc_")]
    candidates = simplest_first(parse_grid(ecc_axes, base), strict_paper(base))
    outcomes = run_grid(pairs, candidates)
    chosen = max(candidates, key=lambda c: macro_agreement(outcomes[c]))  # first of the best: the tie rule
    assert chosen.ecc_rules == base.ecc_rules
    assert chosen.ecc_country_names == base.ecc_country_names

"""Entity matching from maintained resources and its cross-validation."""

from __future__ import annotations

import json

import pytest

from ledgermind.errors import UserError
from ledgermind.grounding.cascade import GroundingCascade, GroundingConfig
from ledgermind.grounding.ecc import ECCRules, check_ecc
from ledgermind.studies.grounding_cv import DEFAULT_GRID, parse_grid
from ledgermind.studies.grounding_eval import cv_study, study_pairs
from ledgermind.studies.kfold import FoldCountError
from perception.abbreviations import best_long_form, definitions, is_short_form
from perception.aliases import AliasTable


# ----------------------------------------------------------------------------- Schwartz–Hearst
def test_definitions_long_form_then_short_form():
    text = "Shows of the Royal Horticultural Society (RHS) and the heat shock protein (HSP) assay."
    assert list(definitions(text)) == [("RHS", "Royal Horticultural Society"), ("HSP", "heat shock protein")]
    assert list(definitions("The RHS (Royal Horticultural Society) met.")) == [
        ("RHS", "Royal Horticultural Society")
    ]
    assert list(definitions("costs rose (see below) in 2011 (est.)")) == []


def test_short_form_and_long_form_rules():
    assert (
        is_short_form("RHS") and is_short_form("WW2") and not is_short_form("a") and not is_short_form("2011")
    )
    assert best_long_form("RHS", "shows of the Royal Horticultural Society") == "Royal Horticultural Society"
    assert best_long_form("XYZ", "the Royal Horticultural Society") is None  # letters not in order


# ----------------------------------------------------------------------------- country names
@pytest.mark.parametrize(
    "a, b",
    [
        ("Viet Nam", "Vietnam"),
        ("Russian Federation", "Russia"),
        ("Korea, Republic of", "South Korea"),
        ("UK", "Great Britain"),
        ("Türkiye", "Turkey"),
    ],
)
def test_country_names_from_pycountry_are_aliases(a, b):
    pytest.importorskip("pycountry")
    assert AliasTable.default(country_names=True).equivalent(a, b)


def test_country_names_switch():
    pytest.importorskip("pycountry")
    assert not AliasTable.default().equivalent("Viet Nam", "Vietnam")
    assert GroundingCascade(GroundingConfig(ecc_country_names=True), ner=object()).aliases.equivalent(
        "Viet Nam", "Vietnam"
    )


# ----------------------------------------------------------------------------- ECC rules
def test_acronym_from_a_definition_or_initials_and_the_switch(ner, aliases):
    pool = ["The Royal Horticultural Society held its show in May."]
    assert check_ecc("The RHS held its show.", pool, ner=ner, aliases=aliases).passed
    off = check_ecc("The RHS held its show.", pool, ner=ner, aliases=aliases, rules=ECCRules(acronyms=False))
    assert not off.passed and off.missing == ("RHS",)


def test_similarity_threshold_accepts_reordered_names_and_never_places(ner, aliases):
    claim = "She led the Art Museum of the University of Leeds."
    pool = ["The University of Leeds Art Museum named her its director."]
    assert not check_ecc(claim, pool, ner=ner, aliases=aliases).passed  # strict Eq. 4: phrase membership
    assert check_ecc(claim, pool, ner=ner, aliases=aliases, rules=ECCRules(similarity=1.0)).passed
    half = ["The Art Museum named her its director."]  # "university" and "leeds" missing: 2 of 4
    assert not check_ecc(claim, half, ner=ner, aliases=aliases, rules=ECCRules(similarity=0.67)).passed
    assert check_ecc(claim, half, ner=ner, aliases=aliases, rules=ECCRules(similarity=0.5)).passed


def test_ecc_similarity_is_validated():
    with pytest.raises(Exception, match="ecc_similarity"):
        GroundingConfig(ecc_similarity=1.5)
    assert GroundingConfig(ecc_similarity=0.8).ecc_rules.similarity == 0.8


# ----------------------------------------------------------------------------- CV grid
def test_parse_grid_puts_the_shipped_config_first():
    base = GroundingConfig()
    grid = parse_grid(["ecc_similarity=0.8,none", "ecc_place_guard=false,true"], base)
    assert grid[0] == base and len(grid) == 4 and len(set(grid)) == 4
    assert len(parse_grid(DEFAULT_GRID, base)) == 2 * 2 * 2 * 2 * 2 * 2 * 5 * 3 * 2 * 2
    for bad in (["nosuchfield=1"], ["ecc_similarity"], ["ecc_similarity=abc"], ["ecc_similarity=2"]):
        with pytest.raises(UserError):
            parse_grid(bad, base)


def test_grounding_cv_study(tmp_path):
    rows = []
    for i in range(10):
        supported = i % 2 == 0
        rows.append(
            {
                "id": f"e{i}",
                "subset": "entity",
                "stratum": "wice",
                "kind": "other",
                "claim": f"Zorblat Quenwick visited Plovdiv in year {i}.",
                "evidence": [
                    "Zorblat Quenwick visited Plovdiv." if supported else "Zorblat Quenwick stayed home."
                ],
                "expected": {"ecc": supported, "ncc": None},
            }
        )
    data = tmp_path / "dev.jsonl"
    data.write_text("\n".join(json.dumps(r) for r in rows))
    pairs = study_pairs(data, derived=True)
    out = cv_study(pairs, ["ecc_similarity=none,0.5"], 2, seed=0, strict_ncc=False, ties_shipped=False)
    assert "| entity | 1.000 |" in out and "fold 1: chose" in out
    with pytest.raises(FoldCountError, match="at least 2 folds, got 1"):  # the script adds "--folds 1:"
        cv_study(pairs, ["ecc_similarity=none,0.5"], 1, seed=0, strict_ncc=False, ties_shipped=False)


def test_from_strict_order_lets_fewer_rules_win_ties():
    from ledgermind.studies.grounding_cv import simplest_first, strict_eq4

    base = GroundingConfig()
    grid = simplest_first(
        parse_grid(["ecc_designators=true,false", "ecc_acronyms=true,false"], base), strict_eq4(base)
    )
    strict = strict_eq4(base)
    assert grid[0] == strict and not grid[0].ecc_place_guard and grid[0].ecc_similarity is None
    changes = [
        sum(getattr(c, f) != getattr(strict, f) for f in ("ecc_designators", "ecc_acronyms"))
        for c in grid[1:]
    ]
    assert changes == sorted(changes)


def test_strict_paper_turns_every_deviation_off():
    from ledgermind.studies.grounding_cv import strict_paper

    strict = strict_paper(GroundingConfig())
    assert not strict.ncc_relations and strict.ecc_similarity is None
    assert not any(
        (
            strict.ecc_designators,
            strict.ecc_acronyms,
            strict.ecc_adjectival,
            strict.ecc_place_guard,
            strict.ecc_country_names,
            strict.ecc_surname,
        )
    )
    assert strict.beta == GroundingConfig().beta  # thresholds that are not deviations stay


def _entity_rows(n: int) -> list[dict]:
    """Rows where the designator form fixes exactly one row (and nothing else tells rules apart)."""
    rows = []
    for i in range(n):
        supported = i % 2 == 0
        rows.append(
            {
                "id": f"e{i}",
                "subset": "entity",
                "stratum": "wice",
                "kind": "other",
                "claim": f"Zorblat Quenwick visited Plovdiv in year {i}.",
                "evidence": [
                    "Zorblat Quenwick visited Plovdiv." if supported else "Zorblat Quenwick stayed home."
                ],
                "expected": {"ecc": supported, "ncc": None},
            }
        )
    rows.append(
        {
            "id": "one-row",
            "subset": "entity",
            "stratum": "wice",
            "kind": "other",
            "claim": "She taught at the Quenwick Institute.",
            "evidence": ["She taught at Quenwick."],
            "expected": {"ecc": True, "ncc": None},
        }
    )
    return rows


def test_honest_cv_is_the_default_and_a_one_row_rule_cannot_earn_its_place(tmp_path):
    data = tmp_path / "dev.jsonl"
    data.write_text("\n".join(json.dumps(r) for r in _entity_rows(10)))
    pairs = study_pairs(data, derived=True)
    grid = ["ecc_designators=true,false"]
    honest = cv_study(pairs, grid, 11, seed=0, strict_ncc=False, ties_shipped=False)  # leave-one-out
    assert "| entity | 1.000 | 1.000 |" in honest  # dev: the designator form fixes the row
    assert "| 0.909 | +0.091 |" in honest  # held out, that row has no training row to earn the rule
    flattering = cv_study(pairs, grid, 11, seed=0, strict_ncc=False, ties_shipped=True)
    assert "| 1.000 | +0.000 |" in flattering  # the flattering tie rule keeps it


def test_surname_form_and_its_guard(ner, aliases):
    claim = "Ada Lovelace wrote the first program."
    alone = ["Lovelace wrote the notes in 1843."]
    on = ECCRules(surname=True)
    assert not check_ecc(claim, alone, ner=ner, aliases=aliases, rules=ECCRules(surname=False)).passed
    assert check_ecc(claim, alone, ner=ner, aliases=aliases, rules=on).passed
    assert check_ecc(claim, alone, ner=ner, aliases=aliases).passed  # on by default (the CV's choice)
    other = ["Lovelace wrote the notes.", "Byron Lovelace was her cousin."]  # another Lovelace in sight
    assert check_ecc(claim, other, ner=ner, aliases=aliases, rules=on).missing == ("Ada Lovelace",)
    assert GroundingConfig().ecc_rules.surname and not GroundingConfig(ecc_surname=False).ecc_rules.surname

"""The grounding cascade pinned to the paper: Eq. 3 (ρ), Eq. 4 (ECC, whole names), Eq. 5 (NCC:
exact Δ for non-readings, δ_read relative to the *larger* magnitude for readings), Alg. 1 l.33
(demotions, ECC before NCC), the grounded rule g(c) of §3.4 (cited ∧ ECC ∧ NCC ∧ ρ ≥ β).
Expected values are computed by hand from the formulas; boundary cases at the thresholds."""

from __future__ import annotations

import pytest

from ledgermind.grounding.cascade import GroundingCascade, GroundingConfig, demoted_sigma
from ledgermind.grounding.coverage import support_coverage
from ledgermind.grounding.ecc import ECCRules, check_ecc
from ledgermind.grounding.ncc import check_ncc
from ledgermind.grounding.tokens import canonical_token


# ----------------------------------------------------------------------------- Eq. 3
@pytest.mark.parametrize(
    ("claim", "pool", "rho"),
    [
        ("Apollo 11 plaque", ["Apollo"], 1 / 3),  # |{apollo}| / |{apollo, 11, plaque}|
        ("Apollo 11 plaque", ["Apollo", "plaque 11"], 1.0),  # ∪ over the cited facts
        ("Apollo 11 plaque", [], 0.0),  # S(c) = ∅
        ("the of and", ["the of and"], 0.0),  # Tok(c) = ∅ and not one word: nothing checkable
        ("", ["anything"], 0.0),
        ("RB", ["label RB here"], 1.0),  # one word restating a cited word verbatim
        ("Apollo Apollo moon", ["apollo"], 0.5),  # Tok is a set: {apollo, moon}
    ],
)
def test_eq3_support_coverage_by_hand(claim: str, pool: list[str], rho: float) -> None:
    assert support_coverage(claim, pool) == pytest.approx(rho)


# ----------------------------------------------------------------------------- Eq. 4
def test_eq4_ecc_matches_whole_names_not_substrings(ner, aliases) -> None:
    assert check_ecc("Rome is the capital.", ["Rome, the capital of Italy"], ner=ner, aliases=aliases).passed
    bad = check_ecc("Rome is the capital.", ["Romeo and Juliet is a play"], ner=ner, aliases=aliases)
    assert not bad.passed and bad.missing == ("Rome",)
    assert not check_ecc("Paris is lovely.", ["Parisian cafés"], ner=ner, aliases=aliases).passed


# ----------------------------------------------------------------------------- Eq. 5
@pytest.mark.parametrize(
    ("claim", "evidence", "kind", "delta", "passes"),
    [
        # readings: |v_c − v_e| ≤ δ · max(|v_c|, |v_e|)
        ("The gauge reads 100", "117", "reading", 0.15, True),  # 17 ≤ 17.55 (by the smaller: 15 → fail)
        ("The gauge reads 117", "100", "reading", 0.15, True),  # symmetric
        ("The gauge reads 100", "118", "reading", 0.15, False),  # 18 > 17.7
        ("The gauge reads 75", "100", "reading", 0.25, True),  # 25 ≤ 25: the boundary is inside
        ("The gauge reads 74", "100", "reading", 0.25, False),  # 26 > 25
        ("The gauge reads 36.7", "36.8", "reading", 0.15, True),  # App. C's example
        # not a reading: Δ exact — δ_read applies to continuous visual readings only
        ("The gauge reads 36.7", "36.8", "other", 0.15, False),
        ("There are 100 people", "117", "other", 0.15, False),
        ("There are 100 people", "100", "other", 0.15, True),
        ("No numbers here", "117", "other", 0.15, True),  # ∀ over Num(c) = ∅
    ],
)
def test_eq5_ncc_relative_tolerance_uses_larger_magnitude_and_only_for_readings(
    claim: str, evidence: str, kind: str, delta: float, passes: bool
) -> None:
    assert check_ncc(claim, [evidence], kind=kind, delta_read=delta).passed is passes


# ----------------------------------------------------------------------------- Alg. 1 l.28, l.33
CFG = GroundingConfig()


@pytest.mark.parametrize(
    ("cited", "ecc", "ncc", "judgment", "expected"),
    [
        (True, True, True, True, 0.95),  # nothing fails: σ unchanged
        (True, False, True, True, 0.50),  # ECC(c) = 0 → 0.50
        (True, True, False, True, 0.52),  # NCC(c) = 0 → 0.52
        (True, False, False, True, 0.50),  # both: ECC first ("if … elif")
        (False, True, True, True, 0.55),  # uncited judgment → 0.55 (line 28)
        (False, False, True, True, 0.50),
        (True, False, False, False, 0.95),  # only [J] claims are demoted
    ],
)
def test_alg1_l28_l33_demotions(cited: bool, ecc: bool, ncc: bool, judgment: bool, expected: float) -> None:
    assert demoted_sigma(0.95, cited=cited, ecc=ecc, ncc=ncc, judgment=judgment, cfg=CFG) == expected


def test_alg1_l33_demotions_are_caps_not_raises() -> None:
    assert demoted_sigma(0.4, cited=True, ecc=False, ncc=True, judgment=True, cfg=CFG) == 0.4


# ----------------------------------------------------------------------------- §3.4 g(c), Eq. 20's β
RHO_ONLY = GroundingConfig(ecc_enabled=False, ncc_enabled=False)


def test_sec34_grounded_needs_ecc_and_ncc(ner) -> None:
    cascade = GroundingCascade(GroundingConfig(), ner=ner)
    assert cascade.check("Apollo 11 landed in 1969", ["Apollo 11 landed in 1969"]).grounded
    assert not cascade.check("Apollo 13 landed in 1969", ["Apollo 11 landed in 1969"]).grounded  # ECC
    assert not cascade.check("Apollo 11 landed in 1970", ["Apollo 11 landed in 1969"]).grounded  # NCC


@pytest.mark.parametrize(
    ("claim", "pool", "grounded"),
    [
        ("plaque moon dust water fire sand", ["plaque"], True),  # ρ = 1/6 ≥ β = 0.15
        ("plaque moon dust water fire sand ice", ["plaque"], False),  # ρ = 1/7 < 0.15
        ("plaque", [], False),  # uncited
    ],
)
def test_sec34_grounded_needs_citation_and_coverage_at_least_beta(
    claim: str, pool: list[str], grounded: bool
):
    cascade = GroundingCascade(RHO_ONLY)  # ECC/NCC off: the ρ ≥ β and citation conditions alone
    assert cascade.check(claim, pool).grounded is grounded


def test_sec34_grounded_at_exactly_beta() -> None:
    """ρ = β exactly (1/4 with β = 0.25) is grounded: T5 fires only for ρ < β."""
    cascade = GroundingCascade(GroundingConfig(beta=0.25, ecc_enabled=False, ncc_enabled=False))
    assert cascade.check("plaque moon dust water", ["plaque"]).grounded
    assert not cascade.check("plaque moon dust water sand", ["plaque"]).grounded


def test_alg1_l33_elif_ecc_failure_decides_even_when_ncc_demotion_is_lower() -> None:
    """ "if ECC(c) = 0: σ ← d_ecc; elif NCC(c) = 0: σ ← d_ncc" — with both failing only d_ecc applies."""
    cfg = GroundingConfig(demote_ecc=0.58, demote_ncc=0.52)
    assert demoted_sigma(0.95, cited=True, ecc=False, ncc=False, judgment=True, cfg=cfg) == 0.58
    assert demoted_sigma(0.95, cited=True, ecc=True, ncc=False, judgment=True, cfg=cfg) == 0.52


# ----------------------------------------------------------------------------- Eq. 3: Tok(·) numbers
@pytest.mark.parametrize(
    ("token", "canonical"),
    [
        ("410.0", "410"),
        ("1.50", "1.5"),
        ("007", "7"),
        ("0.50", "0.5"),
        ("1.25", "1.25"),
        ("10", "10"),
        ("abc", "abc"),
        ("a1", "a1"),
        ("0.0000001", "0.0000001"),
    ],  # plain decimal, never "1E-7"
)
def test_eq3_number_tokens_are_canonical(token: str, canonical: str) -> None:
    assert canonical_token(token) == canonical


# ----------------------------------------------------------------------------- Eq. 5: spans, dates, defaults
@pytest.mark.parametrize(
    ("claim", "pool", "passes"),
    [
        ("built in the 1960s", ["built in 1969"], True),  # a year inside the decade supports the span
        ("in the 1960s", ["the 1960s"], True),
        ("built in the 1960s", ["built in 1971"], False),  # outside the span
        ("built in the 1960s", ["it holds 1965 people"], False),  # a count is no time: it cannot date a span
        ("in 1960", ["the 1960s"], False),  # a span does not state a year
        ("in 1969", ["on 20 July 1969"], True),  # a full date states its year
        ("1969 visitors", ["on 20 July 1969"], False),  # ...but a count is not a year
        ("the offset is 0", ["the offset is 0.0000000000001"], True),  # Δ exact up to float noise at zero
    ],
)
@pytest.mark.parametrize("relations", [True, False])
def test_eq5_ncc_spans_years_and_dates(claim: str, pool: list[str], passes: bool, relations: bool) -> None:
    assert check_ncc(claim, pool, relations=relations).passed is passes


def test_eq5_ncc_defaults_relations_on_unit_conversion_off() -> None:
    assert check_ncc("more than 30 people", ["35 people"]).passed  # relation-aware by default
    assert not check_ncc("more than 30 people", ["35 people"], relations=False).passed
    assert not check_ncc("it weighs 2 kg", ["it weighs 2000 g"]).passed  # no unit conversion by default


@pytest.mark.parametrize("relations", [True, False])
@pytest.mark.parametrize("unit_conversion", [True, False])
def test_eq5_ncc_unit_conversion_switch(relations: bool, unit_conversion: bool) -> None:
    got = check_ncc(
        "it weighs 2 kg", ["it weighs 2000 g"], relations=relations, unit_conversion=unit_conversion
    )
    assert got.passed is unit_conversion
    assert [n.text for n in got.numbers] == ["2 kg"] and [n.text for n in got.unmatched] == (
        [] if unit_conversion else ["2 kg"]
    )


@pytest.mark.parametrize("relations", [True, False])
def test_eq5_ncc_delta_read_only_for_readings_in_both_modes(relations: bool) -> None:
    assert check_ncc("it reads 36.8", ["36.7"], kind="reading", relations=relations).passed is True
    assert (
        check_ncc("it reads 36.8", ["36.7"], kind="reading", relations=relations, delta_read=0.001).passed
        is False
    )
    assert check_ncc("it reads 36.8", ["36.7"], relations=relations).passed is False


def test_eq5_ncc_same_head_and_context_dates() -> None:
    # "3 apples" is checked against the apples (5), not against the unrelated 3 oranges
    assert not check_ncc("3 apples", ["3 oranges and 5 apples"]).passed
    assert check_ncc("3 apples", ["3 oranges"]).passed  # no number about apples: any number may match
    # "July 1969": the pool states the year and, apart, the month
    assert check_ncc("it launched in July 1969", ["The year was 1969.", "It launched in July."]).passed


def test_eq5_ncc_approx_bound() -> None:
    assert check_ncc("about 100 people", ["108 people"]).passed  # within the default 10 %
    assert not check_ncc("about 100 people", ["108 people"], approx_rel=0.05).passed


def test_eq5_eq4_results_name_what_was_checked(ner, aliases) -> None:
    none = check_ncc("no numbers here", ["x"])
    assert (none.passed, none.numbers, none.unmatched) == (True, (), ())
    e = check_ecc("no entities here", ["x"], ner=ner, aliases=aliases)
    assert (e.passed, e.entities, e.missing) == (True, (), ())


def test_eq4_ecc_acronym_defined_in_the_claim_and_similarity_switch(ner, aliases) -> None:
    got = check_ecc(
        "The National Aeronautics and Space Administration (NASA) launched it; NASA said so.",
        ["The National Aeronautics and Space Administration launched it"],
        ner=ner,
        aliases=aliases,
    )
    assert got.passed and got.entities == ("The National Aeronautics and Space Administration", "NASA")
    claim, pool = "Microsoft Research Asia published it.", ["Microsoft Asia published it"]
    assert not check_ecc(claim, pool, ner=ner, aliases=aliases).passed  # strict Eq. 4 (the default)
    assert check_ecc(claim, pool, ner=ner, aliases=aliases, rules=ECCRules(similarity=0.6)).passed


@pytest.mark.parametrize(
    ("cfg", "claim", "pool", "kind", "ecc", "ncc"),
    [
        (
            GroundingConfig(ecc_similarity=0.6),
            "Microsoft Research Asia published it.",
            ["Microsoft Asia published it"],
            "other",
            True,
            True,
        ),
        (GroundingConfig(approx_rel=0.05), "about 100 people", ["108 people"], "other", True, False),
        (
            GroundingConfig(ncc_unit_conversion=True),
            "it weighs 2 kg",
            ["it weighs 2000 g"],
            "other",
            True,
            True,
        ),
        (GroundingConfig(delta_read=0.001), "it reads 36.8", ["36.7"], "reading", True, False),
    ],
)
def test_cascade_passes_its_config_to_ecc_and_ncc(ner, aliases, cfg, claim, pool, kind, ecc, ncc) -> None:
    got = GroundingCascade(cfg, ner, aliases).check(claim, pool, kind=kind)
    assert (got.ecc, got.ncc) == (ecc, ncc)


def test_cascade_result_fields(ner, aliases) -> None:
    got = GroundingCascade(GroundingConfig(), ner, aliases).check("Apollo 11 plaque", ["Apollo"])
    assert got.coverage == pytest.approx(1 / 3) and got.cited is True
    assert got.ecc_applied is True and got.ncc_applied is True
    off = GroundingCascade(GroundingConfig(ecc_enabled=False, ncc_enabled=False), ner, aliases).check("x", [])
    assert off.ecc_applied is False and off.ncc_applied is False and off.cited is False

"""The grounding cascade pinned to the paper: Eq. 3 (ρ), Eq. 4 (ECC, whole names), Eq. 5 (NCC:
exact Δ for non-readings, δ_read relative to the *larger* magnitude for readings), Alg. 1 l.33
(demotions, ECC before NCC), the grounded rule g(c) of §3.4 (cited ∧ ECC ∧ NCC ∧ ρ ≥ β).
Expected values are computed by hand from the formulas; boundary cases at the thresholds."""

from __future__ import annotations

import pytest

from ledgermind.grounding.cascade import GroundingCascade, GroundingConfig, demoted_sigma
from ledgermind.grounding.coverage import support_coverage
from ledgermind.grounding.ecc import check_ecc
from ledgermind.grounding.ncc import check_ncc


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
def test_sec34_grounded_needs_citation_and_coverage_at_least_beta(claim: str, pool: list[str], grounded: bool):
    cascade = GroundingCascade(RHO_ONLY)  # ECC/NCC off: the ρ ≥ β and citation conditions alone
    assert cascade.check(claim, pool).grounded is grounded


def test_sec34_grounded_at_exactly_beta() -> None:
    """ρ = β exactly (1/4 with β = 0.25) is grounded: T5 fires only for ρ < β."""
    cascade = GroundingCascade(GroundingConfig(beta=0.25, ecc_enabled=False, ncc_enabled=False))
    assert cascade.check("plaque moon dust water", ["plaque"]).grounded
    assert not cascade.check("plaque moon dust water sand", ["plaque"]).grounded


def test_alg1_l33_elif_ecc_failure_decides_even_when_ncc_demotion_is_lower() -> None:
    """"if ECC(c) = 0: σ ← d_ecc; elif NCC(c) = 0: σ ← d_ncc" — with both failing only d_ecc applies."""
    cfg = GroundingConfig(demote_ecc=0.58, demote_ncc=0.52)
    assert demoted_sigma(0.95, cited=True, ecc=False, ncc=False, judgment=True, cfg=cfg) == 0.58
    assert demoted_sigma(0.95, cited=True, ecc=True, ncc=False, judgment=True, cfg=cfg) == 0.52

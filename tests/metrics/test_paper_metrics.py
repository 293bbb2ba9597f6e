"""Trajectory metrics pinned to §3.4 (Eqs. 7–10) and App. F (Eqs. 28–31), and the McNemar test of
Table 3. Expected values are computed by hand from the formulas; boundary cases: GDR = γ, partial
credit, never-checked claims (g(c) unset), empty sets."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from ledgermind.claims import Claim, ClaimStatus, ClaimType, Stage
from ledgermind.metrics.faithfulness import eur, gdr, r4r, rc, rr, se, ucr_reason, wdg
from ledgermind.metrics.stats import discordant_pairs, mcnemar_exact
from ledgermind.trajectory import OperatorName, PathKind, RepairEvent, RepairLayer, Trajectory, Trigger
from tests.helpers import EchoOCR, TextImage


def _traj(sc: tuple[bool | None, ...], dc: tuple[bool | None, ...]) -> Trajectory:
    t = Trajectory("q1", "q?", PathKind.FULLPIPE)
    t.ledger.record(EchoOCR().invoke(image=TextImage(["Apollo 11", "1969"])))
    for i, g in enumerate(sc, 1):
        t.ledger.add_claim(Claim(f"SC-{i}", ClaimType.SC, "x", Stage.J, ["OC-1"])).grounded = g
    for i, g in enumerate(dc, 1):
        t.ledger.add_claim(Claim(f"DC-{i}", ClaimType.DC, "A", None, ["OC-2"])).grounded = g
    return t


@pytest.mark.parametrize(
    ("sc", "dc", "ucr"),
    [
        ((True, False), (True,), 1 / 3),
        ((True, None), (True,), 1 / 3),  # never checked: g(c) = 0, not grounded
        ((None, None), (None,), 1.0),
        ((True,), (True,), 0.0),
        ((), (), None),  # |C_R| = 0: undefined, never 0 or 1
    ],
)
def test_eq7_ucr_reason_counts_never_checked_claims_as_ungrounded(sc, dc, ucr) -> None:
    got = ucr_reason(_traj(sc, dc))
    assert got == (pytest.approx(ucr) if ucr is not None else None)


def test_eq7_ucr_reason_ignores_observation_claims() -> None:
    t = _traj((True,), (True,))
    t.ledger.add_claim(Claim("OC-9", ClaimType.OC, "x", None, ["OC-1"])).grounded = False
    assert ucr_reason(t) == 0.0  # C_R = C_SC ∪ C_DC


@pytest.mark.parametrize(
    ("dc", "value"),
    [((True, False), 0.5), ((None,), 0.0), ((), 0.0), ((True, True), 1.0)],
)
def test_eq8_gdr(dc, value) -> None:
    assert gdr(_traj((), dc)) == value


def test_eq8_gdr_skips_dropped_decisions_keeps_invalidated() -> None:
    t = _traj((), (False, True))
    t.ledger.claim("DC-1").status = ClaimStatus.DROPPED
    assert gdr(t) == 1.0
    t.ledger.claim("DC-1").status = ClaimStatus.INVALIDATED
    assert gdr(t) == 0.5


# Eq. 9: R4R = |{S = 1 ∧ GDR > γ}| / |{S = 1}|; Eq. 10: WDG = |{S = 0 ∧ GDR > γ}| / |{S = 0}|
@pytest.mark.parametrize(
    ("gdrs", "successes", "gamma", "r4r_v", "wdg_v"),
    [
        ([1.0, 0.5, 1.0], [1.0, 1.0, 0.0], 0.5, 1 / 2, 1.0),  # GDR = γ is not > γ
        ([0.2, 1.0], [0.5, 1.0], 0.5, 1.0, 0.0),  # partial credit 0.5 is not S = 1 (a failure)
        ([0.9, 1.0], [0.5, 1.0], 0.5, 1.0, 1.0),
        ([0.6, 0.4], [0.0, 0.0], 0.5, None, 1 / 2),  # no success: R4R undefined
        ([0.51, 0.5], [1.0, 0.0], 0.5, 1.0, 0.0),
        ([], [], 0.5, None, None),
    ],
)
def test_eq9_eq10_r4r_wdg_gamma_strict_and_success_is_full_credit(
    gdrs, successes, gamma, r4r_v, wdg_v
) -> None:
    assert r4r(gdrs, successes, gamma) == (pytest.approx(r4r_v) if r4r_v is not None else None)
    assert wdg(gdrs, successes, gamma) == (pytest.approx(wdg_v) if wdg_v is not None else None)


def _event(op: OperatorName | None, grounded: bool | None, cost: float) -> RepairEvent:
    return RepairEvent(Trigger.T5, op, RepairLayer.ACTION if op else None, ["DC-1"], [], cost, grounded)


def test_eq28_eur_eq29_rr_eq30_rc_eq31_se() -> None:
    t = _traj((True,), ())  # OC-1 cited by SC-1, OC-2 uncited
    assert eur(t) == 0.5
    t.events += [
        _event(OperatorName.ACQUIRE, True, 2.0),
        _event(OperatorName.RETRY, False, 1.5),
        _event(None, None, 9.0),
    ]  # a logged trigger without an operator is no repair
    assert rr(t) == 0.5 and rc(t) == 3.5
    assert se(t, 1.0) == pytest.approx(1.0 / t.steps) and t.steps > 0


# ----------------------------------------------------------------------------- McNemar (Table 3)
@pytest.mark.parametrize(
    ("b", "c", "p"),
    [(0, 0, 1.0), (3, 3, 1.0), (0, 5, 2 / 32), (5, 0, 2 / 32), (1, 4, 2 * 6 / 32), (0, 1, 1.0)],
)
def test_mcnemar_exact_two_sided_binomial_by_hand(b: int, c: int, p: float) -> None:
    assert mcnemar_exact(b, c) == pytest.approx(p)


def test_mcnemar_discordant_pairs_partial_credit_is_not_correct() -> None:
    first = {"a": 1.0, "b": 0.5, "c": 0.0, "d": None, "e": 1.0}
    second = {"a": 0.0, "b": 1.0, "c": 1.0, "d": 1.0, "f": 0.0}
    assert discordant_pairs(first, second) == (1, 2)  # a | b, c  (d unscored, e/f unpaired)


def test_table3_mcnemar_compares_the_variant_with_full_not_with_itself() -> None:
    from ledgermind.experiment.table3 import _mcnemar

    full = SimpleNamespace(item_scores={f"i{k}": 1.0 for k in range(6)})
    variant = SimpleNamespace(item_scores={f"i{k}": 0.0 for k in range(6)})
    assert _mcnemar(variant, full) == pytest.approx(2 / 64)  # b = 6, c = 0
    assert _mcnemar(full, full) == 1.0


@pytest.mark.parametrize(("b", "c"), [(-1, 3), (3, -1), (-1, -1)])
def test_mcnemar_rejects_negative_discordant_counts_either_side(b: int, c: int) -> None:
    with pytest.raises(ValueError, match=r"discordant counts must be >= 0"):
        mcnemar_exact(b, c)


@pytest.mark.parametrize("metric", [r4r, wdg])
def test_eq9_eq10_gdrs_and_successes_are_paired_one_to_one(metric) -> None:
    # one GDR per trajectory, one S per trajectory: unequal lengths are a caller bug, not a shorter set
    with pytest.raises(ValueError):
        metric([1.0], [1.0, 0.0], 0.5)

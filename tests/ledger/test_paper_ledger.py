"""The ledger's support semantics pinned to the paper: Eq. 1 / Alg. 1 l.24 (S(c) = cited ACTIVE
entries), §3.2 leaf resolution (P_c from ACTIVE PERCEPTION/RETRIEVAL leaves; DERIVATION is
transparent), Eqs. 12–15 (APPEND, MARK_STALE, SUPERSEDE, DROP). Expected values are computed by
hand from the formulas; boundary cases: every non-ACTIVE status, DROPPED claims, TTL equality."""

from __future__ import annotations

import math

import pytest

from ledgermind.claims import Claim, ClaimStatus, ClaimType, Stage
from ledgermind.ledger import Kappa, Ledger, Omega
from tests.helpers import EchoOCR, EchoVQA, TextImage


def _ocr(led: Ledger, *lines: str, ttl: float = math.inf) -> list[str]:
    return [e.id for e in led.record(EchoOCR().invoke(image=TextImage(list(lines))), ttl=ttl)]


def _derivation(led: Ledger, text: str, parents: list[str]) -> str:
    [e] = led.record(EchoVQA().invoke(stage="hypothesis", prompt=text), derived_from=parents)
    assert e.kappa is Kappa.DERIVATION
    return e.id


def _set_status(led: Ledger, eid: str, omega: Omega) -> None:
    """Put an entry into ``omega`` through the ledger's own lifecycle operations."""
    if omega is Omega.STALE:
        led.retire(eid, "test")
    elif omega is Omega.DROPPED:
        led.drop(eid)
    elif omega is Omega.CONFLICTED:
        led.mark_conflicted([eid])


def _claim(led: Ledger, cid: str, cites: list[str], ctype: ClaimType = ClaimType.SC) -> Claim:
    return led.add_claim(Claim(cid, ctype, "x", Stage.J, cites))


@pytest.mark.parametrize("omega", [Omega.STALE, Omega.DROPPED, Omega.CONFLICTED])
def test_eq1_alg1_l24_support_counts_only_active_cited_entries(omega: Omega) -> None:
    led = Ledger()
    a, b = _ocr(led, "Apollo 11", "1969")
    _set_status(led, b, omega)
    _claim(led, "SC-1", [a, b])
    assert [e.id for e in led.support("SC-1")] == [a]  # ground(c) requires ω = ACTIVE
    assert led.cited_entries("SC-1", active_only=False) == [a, b]  # the edge of G_t stays
    _claim(led, "SC-2", [b])
    assert led.support("SC-2") == []  # S(c) = ∅: line 26 drops [E]/[I], line 28 demotes [J]


def test_eq1_citation_through_dropped_claim_resolves_to_no_support() -> None:
    led = Ledger()
    [a] = _ocr(led, "Apollo 11")
    inner = _claim(led, "SC-1", [a])
    _claim(led, "SC-2", ["SC-1"])
    assert [e.id for e in led.support("SC-2")] == [a]  # through an ACTIVE claim: its support
    inner.status = ClaimStatus.DROPPED  # line 26: L.DROP(c_j)
    assert led.support("SC-2") == [] and led.leaf_pool("SC-2") == []


def test_sec32_leaf_pool_drops_non_active_leaves_under_an_active_derivation() -> None:
    """P_c = {f_e : e ∈ S_leaf(c), κ(e) ∈ {PERCEPTION, RETRIEVAL}} over the ACTIVE ledger."""
    led = Ledger()
    live, stale, dropped = _ocr(led, "Apollo 11", "Apollo 13", "1969")
    d = _derivation(led, "it is Apollo 11", [live, stale, dropped])
    _set_status(led, stale, Omega.STALE)
    _set_status(led, dropped, Omega.DROPPED)
    _claim(led, "SC-1", [d])
    assert [e.id for e in led.support("SC-1")] == [d]  # the derivation itself is ACTIVE
    assert [e.id for e in led.leaf_pool("SC-1")] == [live]  # DERIVATION transparent, leaves ACTIVE
    assert [e.kappa for e in led.leaf_pool("SC-1")] == [Kappa.PERCEPTION]


def test_sec32_derivation_is_transparent_never_self_supporting() -> None:
    led = Ledger()
    [leaf] = _ocr(led, "Apollo 11")
    d1 = _derivation(led, "step one", [leaf])
    d2 = _derivation(led, "step two", [d1])  # nested derivation → the same leaf
    _claim(led, "SC-1", [d2])
    assert [e.id for e in led.leaf_pool("SC-1")] == [leaf]
    _set_status(led, leaf, Omega.STALE)
    assert led.leaf_pool("SC-1") == []  # the only leaf went stale: no pool, whatever cites it


def test_eq13_mark_stale_strictly_after_ttl() -> None:
    """ω ← STALE iff (t_curr − t_e) > ℓ_e: at t_curr − t_e = ℓ_e the entry is still ACTIVE."""
    led = Ledger()
    [e] = _ocr(led, "x", ttl=2)
    t0 = led.get(e).t
    led.advance(2)
    assert led.now() - t0 == 2 and led.mark_stale() == [] and led.get(e).omega is Omega.ACTIVE
    _claim(led, "SC-1", [e])
    led.advance(1)
    assert led.mark_stale() == ["SC-1"] and led.get(e).omega is Omega.STALE  # D_e re-verified


def test_eq12_append_is_active_and_eq14_supersede_links_the_successor() -> None:
    led = Ledger()
    old, new = _ocr(led, "36.7", "36.8")
    assert led.get(old).omega is led.get(new).omega is Omega.ACTIVE
    led.supersede(old, new)
    assert (led.get(old).omega, led.get(old).superseded_by, led.get(new).omega) == (Omega.STALE, new, Omega.ACTIVE)


def test_eq15_drop_invalidates_only_active_dependents() -> None:
    led = Ledger()
    a, b = _ocr(led, "Apollo 11", "1969")
    _claim(led, "SC-1", [a])
    _claim(led, "SC-2", [a]).status = ClaimStatus.DROPPED  # already out: stays DROPPED
    _claim(led, "SC-3", [b])
    assert led.drop(a) == ["SC-1"]
    assert led.claim("SC-1").status is ClaimStatus.INVALIDATED and led.claim("SC-2").status is ClaimStatus.DROPPED
    assert led.claim("SC-3").status is ClaimStatus.ACTIVE and led.get(a).omega is Omega.DROPPED

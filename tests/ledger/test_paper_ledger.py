"""The ledger's support semantics pinned to the paper: Eq. 1 / Alg. 1 l.24 (S(c) = cited ACTIVE
entries), §3.2 leaf resolution (P_c from ACTIVE PERCEPTION/RETRIEVAL leaves; DERIVATION is
transparent), Eqs. 12–15 (APPEND, MARK_STALE, SUPERSEDE, DROP). Expected values are computed by
hand from the formulas; boundary cases: every non-ACTIVE status, DROPPED claims, TTL equality."""

from __future__ import annotations

import math
import re
from typing import Any

import pytest

from ledgermind.claims import Claim, ClaimStatus, ClaimType, Stage
from ledgermind.errors import LedgerError, ProvenanceError
from ledgermind.ledger import Kappa, Ledger, Omega
from ledgermind.tools.base import BBox, Observation, Tool, ToolKind
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
    assert (led.get(old).omega, led.get(old).superseded_by, led.get(new).omega) == (
        Omega.STALE,
        new,
        Omega.ACTIVE,
    )


def test_eq15_drop_invalidates_only_active_dependents() -> None:
    led = Ledger()
    a, b = _ocr(led, "Apollo 11", "1969")
    _claim(led, "SC-1", [a])
    _claim(led, "SC-2", [a]).status = ClaimStatus.DROPPED  # already out: stays DROPPED
    _claim(led, "SC-3", [b])
    assert led.drop(a) == ["SC-1"]
    assert (
        led.claim("SC-1").status is ClaimStatus.INVALIDATED
        and led.claim("SC-2").status is ClaimStatus.DROPPED
    )
    assert led.claim("SC-3").status is ClaimStatus.ACTIVE and led.get(a).omega is Omega.DROPPED


# ----------------------------------------------------------------------------- the lifecycle's audit trail
def _trail(led: Ledger) -> list[tuple]:
    return [(tr.op, tr.entry_id, tr.t, tr.detail) for tr in led.transitions]


def test_eq12_to_eq15_every_lifecycle_operation_is_logged_with_entry_time_and_detail() -> None:
    led = Ledger()
    a, b, c, d = _ocr(led, "a", "b", "c", "d")  # one APPEND per observation, at t = 1
    led.advance()
    led.supersede(a, b)  # t = 2
    led.retire(c, "tool anomaly")
    led.mark_conflicted([b, d])
    led.resolve_conflict(d)
    led.drop(d)
    led.reinstate(a, "closest reading")
    assert _trail(led) == [
        ("APPEND", a, 1.0, {"tool": "echo_ocr"}),
        ("APPEND", b, 1.0, {"tool": "echo_ocr"}),
        ("APPEND", c, 1.0, {"tool": "echo_ocr"}),
        ("APPEND", d, 1.0, {"tool": "echo_ocr"}),
        ("SUPERSEDE", a, 2.0, {"by": b}),
        ("MARK_STALE", c, 2.0, {"reason": "tool anomaly"}),
        ("CONFLICT", b, 2.0, {}),
        ("CONFLICT", d, 2.0, {}),
        ("RESOLVE", d, 2.0, {}),
        ("DROP", d, 2.0, {}),
        ("REINSTATE", a, 2.0, {"reason": "closest reading"}),
    ]
    assert (led.get(a).omega, led.get(a).superseded_by) == (Omega.ACTIVE, None)
    assert (led.get(b).omega, led.get(c).omega, led.get(d).omega) == (
        Omega.CONFLICTED,
        Omega.STALE,
        Omega.DROPPED,
    )


def test_eq13_mark_stale_is_logged_and_limited_to_the_named_entry() -> None:
    led = Ledger()
    a, b = _ocr(led, "a", "b", ttl=1)
    led.advance(2)
    assert led.mark_stale(a) == []
    assert (led.get(a).omega, led.get(b).omega) == (Omega.STALE, Omega.ACTIVE)  # only the named entry
    assert _trail(led)[-1] == ("MARK_STALE", a, 3.0, {})
    led.mark_stale()
    assert led.get(b).omega is Omega.STALE and len(led.transitions) == 4  # a is not re-logged


@pytest.mark.parametrize(
    ("setup", "allowed"),
    [
        ("superseded", True),
        ("retired", False),  # STALE without a successor: nothing to step back from
        ("active", False),
        ("conflicted", False),
        ("superseded_expired", False),  # TTL over: time does not run backwards
    ],
)
def test_reinstate_only_a_superseded_unexpired_entry(setup: str, allowed: bool) -> None:
    led = Ledger()
    a, b = _ocr(led, "36.7", "36.8", ttl=5)
    if setup.startswith("superseded"):
        led.supersede(a, b)
    if setup == "superseded_expired":
        led.advance(6)
    if setup == "retired":
        led.retire(a, "x")
    if setup == "conflicted":
        led.mark_conflicted([a])
    if allowed:
        led.reinstate(a, "r")
        assert led.get(a).omega is Omega.ACTIVE and led.get(a).superseded_by is None
    else:
        before = led.get(a).omega
        with pytest.raises(
            LedgerError, match=rf"only a superseded, unexpired entry can be reinstated \({a} is "
        ):
            led.reinstate(a, "r")
        assert led.get(a).omega is before


def test_resolve_conflict_only_moves_conflicted_entries() -> None:
    led = Ledger()
    a, b = _ocr(led, "a", "b")
    led.mark_conflicted([a])
    led.resolve_conflict(a)
    led.resolve_conflict(b)  # ACTIVE: nothing to resolve, nothing logged
    assert led.get(a).omega is Omega.ACTIVE and [t.op for t in led.transitions].count("RESOLVE") == 1
    led.retire(b, "x")
    led.resolve_conflict(b)
    assert led.get(b).omega is Omega.STALE


def test_retire_marks_stale_once_and_returns_dependents() -> None:
    led = Ledger()
    [a] = _ocr(led, "a")
    _claim(led, "SC-2", [a])
    _claim(led, "SC-1", [a])
    assert led.retire(a, "x") == ["SC-1", "SC-2"] and led.get(a).omega is Omega.STALE
    assert (
        led.retire(a, "again") == ["SC-1", "SC-2"]
        and [t.op for t in led.transitions].count("MARK_STALE") == 1
    )


def test_eq14_an_entry_cannot_supersede_itself() -> None:
    led = Ledger()
    [a] = _ocr(led, "a")
    with pytest.raises(LedgerError, match="^an entry cannot supersede itself$"):
        led.supersede(a, a)


class _MetaOCR(Tool):
    """An OCR tool (EchoOCR's signature) whose observations carry no score and a mixed meta."""

    name = "meta_ocr"
    kind = ToolKind.OCR

    def _run(self, image: TextImage, region: Any = None) -> list[Observation]:
        return [Observation(t, BBox(0, 0, 10, 10), meta={"lang": "en", "raw": object()}) for t in image.lines]


def test_eq12_append_sigma_forced_then_score_then_default_and_plain_meta_only() -> None:
    led = Ledger()
    [e] = led.record(_MetaOCR().invoke(image=TextImage(["a"])))
    assert e.sigma == 0.92  # no score, no forced σ: the default
    assert e.meta.get("lang") == "en" and "raw" not in e.meta  # non-plain values stay out of the record
    [f] = led.record(EchoOCR().invoke(image=TextImage(["b"], score=0.7)), sigma=0.5)
    assert f.sigma == 0.5  # forced σ wins over the engine score
    [g] = led.record(EchoOCR().invoke(image=TextImage(["c"], score=0.7)))
    assert g.sigma == 0.7


def test_eq12_non_derivation_keeps_its_stated_parents() -> None:
    led = Ledger()
    [a] = _ocr(led, "a")
    [b] = led.record(EchoOCR().invoke(image=TextImage(["b"])), derived_from=[a])
    assert b.kappa is not Kappa.DERIVATION and b.derived_from == (a,)


def test_eq12_only_a_live_tool_output_enters_the_ledger() -> None:
    with pytest.raises(
        ProvenanceError,
        match=re.escape(
            "only the ToolOutput a tool invocation of this run returned can enter the ledger "
            "(reloaded, copied or rebuilt outputs are audit records, not evidence)"
        ),
    ):
        Ledger().record("not a tool output")  # type: ignore[arg-type]


def test_eq1_cited_entries_default_is_active_only_and_claim_cycles_terminate() -> None:
    led = Ledger()
    a, b = _ocr(led, "a", "b")
    led.retire(b, "x")
    _claim(led, "SC-1", [a, b, "SC-2"])
    _claim(led, "SC-2", [b, "SC-1"])  # claims citing each other: each is visited once
    assert led.cited_entries("SC-1") == [a]
    assert led.cited_entries("SC-1", active_only=False) == [a, b]

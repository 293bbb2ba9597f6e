"""Numeric Coherence Check NCC (paper §3.2, Eq. 5; tolerances in App. C).

NCC(c) = 1[∀ v_c ∈ Num(c) ∃ v_e ∈ Num(P_c): |v_c − v_e| ≤ Δ_u(v_c)(v_e)]. Δ is exact for years,
dates, counts, option labels and identifiers; only when the caller declares the claim a continuous
visual reading (``kind="reading"``) do measurements, percentages and bare decimals get the
relative tolerance δ_read (App. C: 0.15 absorbs 36.7 vs 36.8 perceptual noise). A claim without
numbers passes vacuously (the ∀ is over an empty set).

**Deliberate deviation from the paper (default, ``relations=True``).** Eq. 5 checks
equality only, which reads bounds backwards ("more than 5" vs "6" fails, "more than 20,708" vs
"approximately 20,708" passes): against human annotations it agreed on 0.40 of bound claims. So a
claim number that carries a relation (>, ≥, <, ≤, ≈, before/after, between; see
:mod:`ledgermind.grounding.relations`) is checked as the set of values it allows:

* the evidence numbers it can be compared with are those on the same axis (calendar for years,
  decades and dates; the real line for quantities, units compatible);
* if one of them states the bound itself ("20,708" for "more than 20,708"; "May 14, 1998" for
  "before 1998"), the claim is about that number and is judged against it alone - this is what
  makes "over 79 %" vs "79 %" a failure even when the pool holds other numbers above 79;
* otherwise the claim passes when the set it allows meets the set some evidence number allows.

A relation-aware check also accepts a claim date whose month is stated in the evidence without a
year while the year is stated elsewhere in the cited pool (news text: "through October" under a
2007 dateline). Numbers without relation words are still matched by Eq. 5 exactly as before;
``relations=False`` (config ``ncc_relations: false``) restores strict Eq. 5 throughout.

**Unit conversion (``unit_conversion``, config ``ncc_unit_conversion``).** Eq. 5
compares values of one unit. With conversion on, an evidence number in another unit of the same
physical dimension is first restated in the claim number's unit (``1500 m`` for ``1.5 km``,
``212 °F`` for ``100 °C``), with pint's factors (:mod:`ledgermind.grounding.units`); the
comparison itself is unchanged. Off by default: cross-validation keeps it only if it earns its
place on the annotated rows.

Decades ("1980s", "'90s", "early 1980s") are spans of years in both modes: a decade is
supported by any year, date or decade inside it, and never supports one exact year.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from enum import Enum
from functools import lru_cache

from ledgermind import paper
from ledgermind.errors import ConfigError
from ledgermind.grounding.numbers import (
    CONTINUOUS_KINDS,
    MONTHS,
    TIME_KINDS,
    Number,
    NumKind,
    extract_numbers,
)
from ledgermind.grounding.relations import Related, Relation, interval, related_numbers
from ledgermind.grounding.units import convert

APPROX_REL = 0.1  # no paper value: "about X" allows X·(1 ± 0.1) for quantities


class ClaimKind(str, Enum):
    """What the claim asserts; only READING claims get the continuous-reading tolerance."""

    READING = "reading"
    OTHER = "other"

    @classmethod
    def parse(cls, value: ClaimKind | str) -> ClaimKind:
        try:
            return cls(value)
        except ValueError:
            raise ConfigError(f"claim kind must be one of {[k.value for k in cls]}, got {value!r}") from None


@dataclass(frozen=True)
class NCCResult:
    """Outcome of NCC: ``passed`` iff every claim number found a match (``unmatched`` is empty)."""

    passed: bool
    numbers: tuple[Number, ...]
    unmatched: tuple[Number, ...]


def check_ncc(
    claim: str,
    pool: Iterable[str],
    *,
    kind: ClaimKind | str = ClaimKind.OTHER,
    delta_read: float = paper.DELTA_READ,
    relations: bool = True,
    approx_rel: float = APPROX_REL,
    unit_conversion: bool = False,
) -> NCCResult:
    """Run NCC for ``claim`` against the cited facts ``pool`` (``relations``, ``unit_conversion``:
    see module doc)."""
    tolerant = ClaimKind.parse(kind) is ClaimKind.READING
    claim_numbers = extract_numbers(claim)
    if not claim_numbers:
        return NCCResult(True, (), ())
    pool = [fact for fact in pool if fact]
    if not relations:
        all_numbers = [n for fact in pool for n in extract_numbers(fact)]
        unmatched = tuple(
            c
            for c in claim_numbers
            if not _matched(
                c, _restated(all_numbers, c.unit) if unit_conversion else all_numbers, tolerant, delta_read
            )
        )
        return NCCResult(not unmatched, claim_numbers, unmatched)
    all_related = [r for fact in pool for r in related_numbers(fact)]
    missing: list[Number] = []
    for c in related_numbers(claim):
        pool_related = _restated_related(all_related, c.number.unit) if unit_conversion else all_related
        pool_numbers = [r.number for r in pool_related]
        if c.relation is Relation.EQ:
            same_head = [p.number for p in _same_head(c, pool_related)]
            ok = _matched(c.number, same_head or pool_numbers, tolerant, delta_read) or _dated_by_context(
                c.number, pool_numbers, pool
            )
        else:
            ok = bound_supported(c, pool_related, approx_rel)
        if not ok:
            missing.append(c.number)
    return NCCResult(not missing, claim_numbers, tuple(missing))


def in_unit(number: Number, unit: str | None) -> Number:
    """``number`` restated in ``unit`` when the two units are one physical dimension, else as is."""
    if unit is None or number.unit is None or number.unit == unit or number.value is None:
        return number
    value = convert(number.value, number.unit, unit)
    return number if value is None else replace(number, value=value, unit=unit)


def _restated(numbers: Sequence[Number], unit: str | None) -> list[Number]:
    return [in_unit(n, unit) for n in numbers]


def _restated_related(pool: Sequence[Related], unit: str | None) -> list[Related]:
    return [
        replace(r, number=in_unit(r.number, unit), upper=None if r.upper is None else in_unit(r.upper, unit))
        for r in pool
    ]


def _matched(claim: Number, pool_numbers: Sequence[Number], tolerant: bool, delta_read: float) -> bool:
    if claim.kind is NumKind.DECADE:  # a span: any year, date or decade inside it supports it
        span = interval(Related(claim), 0.0)
        return span is not None and any(
            p.kind in TIME_KINDS and (ev := interval(Related(p), 0.0)) is not None and span.meets(ev)
            for p in pool_numbers
        )
    return any(number_supported(claim, p, tolerant, delta_read) for p in pool_numbers)


def bound_supported(claim: Related, pool: Sequence[Related], approx_rel: float = APPROX_REL) -> bool:
    """Relation-aware coherence of one claim number that carries a relation (module doc)."""
    candidates = [p for p in pool if _comparable(claim.number, p.number)]
    anchors = [p for p in candidates if _states_bound(claim.number, p.number)]
    if not anchors:
        candidates = _same_head(claim, candidates) or candidates
        anchors = _nearest(claim.number, candidates)
    for p in anchors:
        hint = _year_of(p.number)
        claim_set = interval(claim, approx_rel, hint)
        evidence_set = interval(p, 0.0, hint)
        if claim_set is not None and evidence_set is not None and claim_set.meets(evidence_set):
            return True
    return False


def _same_head(claim: Related, pool: Sequence[Related]) -> list[Related]:
    """Evidence numbers about the same noun as the claim number ("232 deaths" for "240 deaths")."""
    if claim.head is None:
        return []
    return [p for p in pool if p.head == claim.head and _comparable(claim.number, p.number)]


def _nearest(claim: Number, candidates: Sequence[Related]) -> list[Related]:
    """The candidates closest to the claim's bound: a bound is stated about the value it is near
    ("more than 240" next to "232 deaths"), so a far-off number ("6,934 cases") is not its referent.
    """

    def gap(p: Related) -> float:
        a, b = _position(claim), _position(p.number)
        if a is None or b is None:
            return math.inf
        return abs(a - b) / max(abs(a), abs(b), 1e-12)

    gaps = [gap(p) for p in candidates]
    best = min(gaps, default=math.inf)
    return [p for p, g in zip(candidates, gaps) if g == best and g < math.inf]


def _position(number: Number) -> float | None:
    if number.kind in TIME_KINDS:
        span = interval(Related(number), 0.0, _year_of(number) or 2000)
        return None if span is None else span.lo
    return number.value


def _comparable(claim: Number, evidence: Number) -> bool:
    """Same axis (calendar vs quantity), orderable kinds, compatible units."""
    unordered = (NumKind.OPTION_LABEL, NumKind.IDENTIFIER)
    if claim.kind in unordered or evidence.kind in unordered:
        return False
    if (claim.kind in TIME_KINDS) != (evidence.kind in TIME_KINDS):
        return False
    return _units_compatible(claim.unit, evidence.unit)


def _states_bound(claim: Number, evidence: Number) -> bool:
    """Does ``evidence`` state the claim's bound itself (its value, or a time inside its span)?"""
    if claim.kind in TIME_KINDS:
        hint = _year_of(evidence)
        bound, ev = interval(Related(claim), 0.0, hint), interval(Related(evidence), 0.0, hint)
        return bound is not None and ev is not None and bound.lo <= ev.lo and ev.hi <= bound.hi
    assert claim.value is not None and evidence.value is not None
    return math.isclose(claim.value, evidence.value, rel_tol=1e-9, abs_tol=1e-12)


def _year_of(number: Number) -> int | None:
    if number.kind is NumKind.DATE and number.date is not None:
        return number.date[0]
    if number.kind is NumKind.YEAR and number.value is not None:
        return int(number.value)
    return None


def _dated_by_context(claim: Number, pool_numbers: Sequence[Number], pool: Sequence[str]) -> bool:
    """A claim date whose year the pool states apart from its (year-less) month or day."""
    if claim.kind is not NumKind.DATE or claim.date is None or claim.date[0] is None:
        return False
    year, month, day = claim.date
    if month is None or not any(_year_of(p) == year for p in pool_numbers):
        return False
    if any(
        p.kind is NumKind.DATE
        and p.date is not None
        and p.date[0] is None
        and p.date[1] == month
        and (day is None or p.date[2] == day)
        for p in pool_numbers
    ):
        return True
    return day is None and any(_names_month_without_year(fact, month) for fact in pool)


def _names_month_without_year(fact: str, month: int) -> bool:
    """The month is named outside every dated expression of ``fact`` ("through October")."""
    dated = [
        (n.start, n.end)
        for n in extract_numbers(fact)
        if n.kind is NumKind.DATE and n.date is not None and n.date[0] is not None
    ]
    return any(not any(s <= m.start() < e for s, e in dated) for m in _month_named(month).finditer(fact))


@lru_cache(maxsize=12)
def _month_named(month: int) -> re.Pattern[str]:
    names = [n for n, m in MONTHS.items() if m == month and len(n) > 3]
    return re.compile(r"\b(?:" + "|".join(n.capitalize() for n in names) + r")\b")


def number_supported(
    claim: Number, evidence: Number, tolerant: bool, delta_read: float = paper.DELTA_READ
) -> bool:
    """Δ_u(v_c)(v_e) of Eq. 5: does the evidence value support the claim value?

    Not the scorer's ``scoring.numeric.numbers_match``, on purpose: this compares two *typed*
    numbers (option labels, dates, decades, units) and, for readings, symmetrically (δ_read of the
    larger magnitude, the gap Dual-Read uses), since neither side is the truth; the scorer compares
    an answer with a gold value (δ_read of the gold, a graduation's rescue). Both read δ_read from
    :mod:`ledgermind.paper`."""
    if claim.kind is NumKind.OPTION_LABEL or evidence.kind is NumKind.OPTION_LABEL:
        return claim.kind is evidence.kind and claim.label == evidence.label
    if claim.kind is NumKind.DATE:
        return evidence.kind is NumKind.DATE and _date_supported(claim, evidence)
    if claim.kind is NumKind.DECADE or evidence.kind is NumKind.DECADE:  # spans: see _matched
        return False
    if evidence.kind is NumKind.DATE:  # a stated year is supported by a full date in that year
        return claim.kind is NumKind.YEAR and evidence.date is not None and evidence.date[0] == claim.value
    if not _units_compatible(claim.unit, evidence.unit):
        return False
    assert claim.value is not None and evidence.value is not None
    if tolerant and claim.kind in CONTINUOUS_KINDS:
        return _relative_close(claim.value, evidence.value, delta_read)
    return math.isclose(claim.value, evidence.value, rel_tol=1e-9, abs_tol=1e-12)


def _date_supported(claim: Number, evidence: Number) -> bool:
    """Every date part the claim states must be stated identically by the evidence."""
    assert claim.date is not None and evidence.date is not None
    return all(c is None or c == e for c, e in zip(claim.date, evidence.date))


def _units_compatible(a: str | None, b: str | None) -> bool:
    """Units must agree when both sides state one; a bare degree sign fits °C and °F (gauges)."""
    if a is None or b is None or a == b:
        return True
    return {a, b} in ({"°", "°C"}, {"°", "°F"})


def _relative_close(a: float, b: float, delta: float) -> bool:
    """|a − b| ≤ δ · max(|a|, |b|): the same relative gap the Dual-Read check uses (App. A)."""
    return abs(a - b) <= delta * max(abs(a), abs(b))

"""Numeric Coherence Check NCC (paper §3.2, Eq. 5; tolerances in App. C).

NCC(c) = 1[∀ v_c ∈ Num(c) ∃ v_e ∈ Num(P_c): |v_c − v_e| ≤ Δ_u(v_c)(v_e)]. Δ is exact for years,
dates, counts, option labels and identifiers; only when the caller declares the claim a continuous
visual reading (``kind="reading"``) do measurements, percentages and bare decimals get the
relative tolerance δ_read (App. C: 0.15 absorbs 36.7 vs 36.8 perceptual noise). A claim without
numbers passes vacuously (the ∀ is over an empty set).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from enum import Enum

from ledgermind.errors import ConfigError
from ledgermind.grounding.numbers import CONTINUOUS_KINDS, NumKind, Number, extract_numbers

DELTA_READ = 0.15  # App. C: relative tolerance for continuous visual readings


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
    delta_read: float = DELTA_READ,
) -> NCCResult:
    """Run NCC for ``claim`` against the cited facts ``pool``."""
    tolerant = ClaimKind.parse(kind) is ClaimKind.READING
    claim_numbers = extract_numbers(claim)
    if not claim_numbers:
        return NCCResult(True, (), ())
    pool_numbers = [n for fact in pool for n in extract_numbers(fact)]
    unmatched = tuple(
        c for c in claim_numbers if not any(numbers_match(c, p, tolerant, delta_read) for p in pool_numbers)
    )
    return NCCResult(not unmatched, claim_numbers, unmatched)


def numbers_match(claim: Number, evidence: Number, tolerant: bool, delta_read: float = DELTA_READ) -> bool:
    """Δ_u(v_c)(v_e) of Eq. 5: does the evidence value support the claim value?"""
    if claim.kind is NumKind.OPTION_LABEL or evidence.kind is NumKind.OPTION_LABEL:
        return claim.kind is evidence.kind and claim.label == evidence.label
    if claim.kind is NumKind.DATE:
        return evidence.kind is NumKind.DATE and _date_supported(claim, evidence)
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

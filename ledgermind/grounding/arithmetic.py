"""Computed numbers: a claim number that follows by one arithmetic step from numbers already known.

Why: NCC (Eq. 5) asks that every number of a claim be *stated* by the evidence. A reasoning chain
that computes an answer ("v = 2 × 308 = 616 m/s", then "Answer: D. 616 m/s") states a number no
tool ever saw, and NCC alone calls it ungrounded, exactly as it calls a phantom number
ungrounded. The S-RFA audit separates the two: a number that is the sum, difference,
product or quotient of two numbers the chain has written down is *computed*, and the audit says
from which operands. Operands are limited to numbers the chain itself states (plus numbers
computed before): the model shows its work, and drawing operands from every OCR number would
let a table of fifty numbers "compute" almost anything by coincidence.

Matching of a claim number against a known number is the runtime's own NCC rule
(:func:`ledgermind.grounding.ncc.number_supported`), so units and kinds behave as they do there.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ledgermind.grounding.ncc import _units_compatible, number_supported
from ledgermind.grounding.numbers import Number, NumKind, extract_numbers

# Relative tolerance of a computed value: models round intermediate results (3 significant
# figures), so a one-step result differs from the stated number by well under 1 %. No paper value.
COMPUTE_REL_TOL = 0.01
# Numbers that are names or points in time, never operands or results of arithmetic.
NON_ARITHMETIC = frozenset(
    {NumKind.OPTION_LABEL, NumKind.IDENTIFIER, NumKind.YEAR, NumKind.DECADE, NumKind.DATE}
)
_OPS: dict[str, Callable[[float, float], float]] = {
    "+": operator.add,
    "-": operator.sub,
    "×": operator.mul,
    "/": operator.truediv,
}


@dataclass(frozen=True)
class Known:
    """A number the audit may use as an operand, and where it comes from."""

    number: Number
    source: str  # "evidence", "SC-3" (stated by that claim, not in evidence), or "computed"
    from_evidence: bool  # True when it is a tool fact or computed from tool facts only
    how: str = ""  # for a computed number: its derivation ("60 km/h = 120 km / 2 hours")

    @property
    def value(self) -> float:
        assert self.number.value is not None
        return self.number.value


@dataclass(frozen=True)
class Derivation:
    """How a claim number was obtained: ``a op b`` over known operands (or restated: one operand)."""

    number: Number
    expression: str  # "616 = 2 × 308"
    operands: tuple[Known, ...]

    @property
    def from_evidence(self) -> bool:
        return all(k.from_evidence for k in self.operands)


def arithmetic(number: Number) -> bool:
    """Can ``number`` take part in arithmetic (a quantity, not a label, a name or a date)?"""
    return number.kind not in NON_ARITHMETIC and number.value is not None and math.isfinite(number.value)


def operand(number: Number) -> bool:
    """A number worth computing from: not 0 or 1 (x = x × 1, 2 = 1 + 1 explain anything) and not
    a number word ("two = one + one": counting words in prose are not data)."""
    return arithmetic(number) and number.value not in (0.0, 1.0) and not number.text.strip().isalpha()


def _units_fit(sym: str, a: Number, b: Number, target: Number) -> bool:
    """Units of one step: + and − keep the unit; a quotient may form the target's compound unit
    (km / h = km/h); otherwise × and ÷ need one bare scalar operand and the other in the target's
    unit. Other unit-changing products (m/s × s = m) are not derived: conservative, so that a
    coincidence of values across unrelated units cannot make a computation."""
    if sym in "+-":
        return _units_compatible(a.unit, b.unit) and _units_compatible(a.unit or b.unit, target.unit)
    if sym == "/" and a.unit and b.unit and target.unit == f"{a.unit}/{b.unit}":  # 120 km / 2 h = 60 km/h
        return True
    scalar, other = (a, b) if a.unit is None else (b, a)
    if scalar.unit is not None:
        return False
    return other.unit == target.unit if (other.unit or target.unit) else True


def derive(target: Number, known: Sequence[Known], rel_tol: float = COMPUTE_REL_TOL) -> Derivation | None:
    """The derivation of ``target`` from ``known`` that uses evidence operands if any exists:
    first a known number that states it (NCC's match), then one step ``a op b``."""
    if not arithmetic(target):
        return None
    # an operand equal to the target makes x = 2x − x: no computation
    usable = [k for k in known if operand(k.number) and not _close(k.value, target.value or 0.0, rel_tol)]
    found: Derivation | None = None
    for k in known:  # restating a number computed (or only stated) earlier in the chain
        if (
            k.source != "evidence"
            and arithmetic(k.number)
            and number_supported(target, k.number, tolerant=False)
        ):
            d = Derivation(target, k.how or f"{target.text} = {k.number.text} ({k.source})", (k,))
            if d.from_evidence:
                return d
            found = found or d
    assert target.value is not None
    for i, a in enumerate(usable):
        for b in usable[i:] + usable[:i]:
            if a is b:
                continue
            for sym, op in _OPS.items():  # no zero division: 0 is never an operand
                if _units_fit(sym, a.number, b.number, target) and _close(
                    op(a.value, b.value), target.value, rel_tol
                ):
                    d = Derivation(target, f"{target.text} = {a.number.text} {sym} {b.number.text}", (a, b))
                    if d.from_evidence:
                        return d
                    found = found or d
    return found


def _close(a: float, b: float, rel_tol: float) -> bool:
    return b != 0 and math.isclose(a, b, rel_tol=rel_tol)


def stated_numbers(text: str) -> tuple[Number, ...]:
    """The arithmetic numbers of ``text`` in reading order (Num(·) of NCC, labels and dates left out)."""
    return tuple(n for n in extract_numbers(text) if arithmetic(n))

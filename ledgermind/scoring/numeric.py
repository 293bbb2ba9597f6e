"""Numeric answers with a type-aware tolerance (§3.2 Eq. 5, App. C "For NCC, the tolerance is type-aware").

* ``reading`` (gauges, thermometers, any continuous measurement): correct if the relative error
  is at most δ_read = 0.15, or the absolute error is at most one graduation of the scale when
  the item knows it (``meta["graduation"]``) — the graduation rescues readings near zero,
  where a relative tolerance is meaningless;
* anything else (``count``, ``exact``, or no kind): exact match after number normalisation —
  counts, years, money totals and identifiers are discrete; only float formatting noise
  (1e-6 relative) is absorbed.

A benchmark whose protocol fixes one tolerance for every numeric answer (ChartQA's relaxed
accuracy: within 5 %) states it as ``benchmark.numeric_tolerance``; its items carry it
(``meta["numeric_tolerance"]``) and it replaces the type-aware rule for them (``relative_all``).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from ledgermind import paper

EXACT_EPS = 1e-6  # formatting noise only ("16.5" vs "16.50")

_NUMBER = re.compile(r"[-−+]?(?:\d{1,3}(?:,\d{3})+|\d+)?(?:\.\d+)?(?:[eE][-+]?\d+)?")


@dataclass(frozen=True)
class NumericTolerance:
    relative_read: float = paper.DELTA_READ  # δ_read (App. C)
    use_graduation: bool = True
    relative_all: float | None = None  # the benchmark's own tolerance for every numeric answer


def parse_number(text: str) -> float | None:
    """The number a reply commits to: after the last ``Answer:`` if present, else the last number.

    Understands signs (including the Unicode minus), thousands separators, decimals and
    exponents; percent signs and units are ignored.
    """
    if not text:
        return None
    pos = text.rfind("Answer:")
    segment = text[pos + len("Answer:") :] if pos != -1 else text
    found = [m.group(0) for m in _NUMBER.finditer(segment) if re.search(r"\d", m.group(0))]
    if not found and pos != -1:
        return parse_number(text[:pos])
    if not found:
        return None
    token = found[0] if pos != -1 else found[-1]
    try:
        return float(token.replace(",", "").replace("−", "-"))
    except ValueError:
        return None


def numbers_match(
    pred: float,
    gold: float,
    kind: str | None = None,
    graduation: float | None = None,
    tol: NumericTolerance | None = None,
) -> bool:
    """Is the predicted number the gold one? Readings within δ_read of the gold (or one graduation);
    anything else exact up to formatting noise. NCC's typed, symmetric comparison of a claim with its
    evidence is ``grounding.ncc.number_supported`` (its docstring says why they differ)."""
    tol = tol or NumericTolerance()
    if not (math.isfinite(pred) and math.isfinite(gold)):
        return False
    err = abs(pred - gold)
    if tol.relative_all is not None:
        return err <= tol.relative_all * abs(gold) + EXACT_EPS * max(1.0, abs(gold))
    if kind == "reading":
        if err <= tol.relative_read * abs(gold):
            return True
        return bool(tol.use_graduation and graduation and err <= abs(graduation) + 1e-12)
    return err <= EXACT_EPS * max(1.0, abs(gold))


def _g(v: float) -> str:
    return f"{v:.4g}"


def explain_match(
    pred: float,
    gold: float,
    kind: str | None = None,
    graduation: float | None = None,
    tol: NumericTolerance | None = None,
) -> str:
    """Why a number was scored as it was, in one line a reader can check (the report's item page):
    the rule ``numbers_match`` applied, its bound for this gold, and the error."""
    tol = tol or NumericTolerance()
    ok = numbers_match(pred, gold, kind, graduation, tol)
    err = f"|{_g(pred)} − {_g(gold)}| = {_g(abs(pred - gold))}"
    if tol.relative_all is not None:
        rule = f"the benchmark's tolerance: within {100 * tol.relative_all:g} % of the gold (± {_g(tol.relative_all * abs(gold))})"
    elif kind == "reading":
        rule = f"reading: within {100 * tol.relative_read:g} % of the gold (± {_g(tol.relative_read * abs(gold))})"
        if tol.use_graduation and graduation:
            rule += f" or one graduation (± {_g(abs(graduation))})"
    else:
        return f"exact number (formatting aside); {err}: {'equal' if ok else 'different'}"
    return f"{rule}; {err}: {'within' if ok else 'outside'} the tolerance"

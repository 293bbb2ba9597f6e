"""Relations a text attaches to its numbers, and the sets of values they allow.

Why this exists: Eq. 5 compares values for equality, so a claim that states a *bound* is judged
backwards: "more than 5 cases" against evidence "6 cases" fails, "more than 20,708" against
"approximately 20,708" passes. People read "more than 5" as the set of values above 5. Here each
number gets the relation its words give it (>, ≥, <, ≤, ≈, before/after, between) and becomes an
:class:`Interval` on its own axis: quantities on the real line, years / decades / dates on a day
calendar. NCC then asks whether the claim's set and the evidence's set meet (see
:mod:`ledgermind.grounding.ncc`). A number without a relation word is an exact point, so where no
relation is stated this reduces to Eq. 5.
"""

from __future__ import annotations

import calendar
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date
from enum import Enum
from functools import lru_cache

from ledgermind.grounding.numbers import TIME_KINDS, Number, NumKind, extract_numbers, normalise_chars
from ledgermind.grounding.tokens import STOPWORDS
from perception.aliases import NUMBER_WORDS


class Relation(str, Enum):
    """What a text says about the true value relative to the number it states."""

    EQ = "="
    GT = ">"
    GE = ">="
    LT = "<"
    LE = "<="
    APPROX = "~"
    BETWEEN = "between"


# Relation words directly before a number, "|"-separated. Quantities and times have their own
# words: "over 2018" means during 2018 and "after 5 games" counts games, so neither is a bound.
_QUANTITY_WORDS: dict[Relation, str] = {
    Relation.GT: "more than|greater than|higher than|larger than|bigger than|over|above|exceeding|in excess of"
    "|upwards of|>",
    Relation.GE: "at least|no less than|not less than|no fewer than|a minimum of|≥|>=",
    Relation.LT: "less than|fewer than|lower than|smaller than|under|below|<",
    Relation.LE: "at most|no more than|not more than|up to|a maximum of|≤|<=",
    Relation.APPROX: "approximately|approx.|about|around|roughly|nearly|almost|circa|ca.|an estimated|~|≈",
    Relation.BETWEEN: "between",
}
_TIME_WORDS: dict[Relation, str] = {
    Relation.GT: "after|later than",
    Relation.LT: "before|prior to|earlier than",
    Relation.LE: "no later than|not later than",
    Relation.GE: "no earlier than|not earlier than",
    Relation.APPROX: "approximately|about|around|circa|ca.|c.",
    Relation.BETWEEN: "between",
}


def _prefix_pattern(words: dict[Relation, str]) -> tuple[re.Pattern[str], dict[str, Relation]]:
    table = {w: rel for rel, ws in words.items() for w in ws.split("|")}
    pattern = re.compile(
        r"(?:^|(?<=[\s(\[,;:]))(?P<word>"
        + "|".join(re.escape(w) for w in sorted(table, key=len, reverse=True))
        + r")\s*(?:a\s+total\s+of\s+)?$",
        re.IGNORECASE,
    )
    return pattern, table


_PREFIXES = {False: _prefix_pattern(_QUANTITY_WORDS), True: _prefix_pattern(_TIME_WORDS)}
_BETWEEN_JOIN = re.compile(r"\s*(?:and|to|-)\s*$", re.IGNORECASE)
# "232 deaths"; a partitive takes the noun of its whole: "49 of the 50 states" -> "states"
_HEAD = re.compile(
    r"(?:\s+of\s+(?:the\s+)?(?:[\d.,]+|" + "|".join(NUMBER_WORDS) + r")\b)?\s+([A-Za-z]{2,})\b", re.IGNORECASE
)
_PREFIX_WINDOW = 24  # characters before a number that may hold its relation word


@dataclass(frozen=True)
class Related:
    """A number with the relation its text gives it (``upper``: the far end of a BETWEEN).

    ``head`` is the lower-case content word right after the number, singular, which tells which
    quantity the number is about: "2018 prize" is not "2018 or 2019 ... the 2020 prize".
    """

    number: Number
    relation: Relation = Relation.EQ
    upper: Number | None = None
    head: str | None = None  # the noun the number counts or measures ("232 deaths" -> "death")


@lru_cache(maxsize=32768)
def related_numbers(text: str) -> tuple[Related, ...]:
    """Num(text) with relations (memoised: evidence facts recur across claims)."""
    return attach_relations(normalise_chars(text), extract_numbers(text))


def attach_relations(text: str, numbers: Sequence[Number]) -> tuple[Related, ...]:
    """Give each number of ``text`` its relation; "between X and Y" folds Y into X's entry."""
    out: list[Related] = []
    skip: set[int] = set()
    for i, number in enumerate(numbers):
        if i in skip:
            continue
        relation = relation_before(text, number.start, time=number.kind in TIME_KINDS)
        if number.kind in (NumKind.OPTION_LABEL, NumKind.IDENTIFIER):
            relation = Relation.EQ  # labels and names have no order
        upper = None
        if relation is Relation.BETWEEN:
            nxt = numbers[i + 1] if i + 1 < len(numbers) else None
            if (
                nxt is not None
                and _BETWEEN_JOIN.fullmatch(text[number.end : nxt.start])
                and (nxt.kind in TIME_KINDS) == (number.kind in TIME_KINDS)
            ):
                upper = nxt
                skip.add(i + 1)
            else:
                relation = Relation.EQ
        out.append(Related(number, relation, upper, head_word(text, (upper or number).end)))
    return tuple(out)


def head_word(text: str, end: int) -> str | None:
    """The content word right after a number, singular ("deaths" -> "death"), if lower-case."""
    m = _HEAD.match(text, end)
    if not m or m.group(1).lower() in STOPWORDS or not m.group(1).islower():
        return None
    word = m.group(1)
    return word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word


def relation_before(text: str, start: int, *, time: bool = False) -> Relation:
    """The relation word ending right before ``start`` ("a total of" skipped); ``time`` picks
    the calendar's words (before/after) instead of the quantities' (more than/under)."""
    pattern, table = _PREFIXES[time]
    m = pattern.search(text[max(0, start - _PREFIX_WINDOW) : start])
    return table[m.group("word").lower()] if m else Relation.EQ


# ---------------------------------------------------------------------------------------------
# Intervals
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Interval:
    """A set of values ``lo .. hi`` with open or closed ends (infinite ends are open)."""

    lo: float
    hi: float
    lo_open: bool = False
    hi_open: bool = False

    def meets(self, other: Interval) -> bool:
        """True when the two sets share at least one value."""
        lo = max(self.lo, other.lo)
        hi = min(self.hi, other.hi)
        if lo != hi:
            return lo < hi
        lo_open = any(i.lo_open for i in (self, other) if i.lo == lo)
        hi_open = any(i.hi_open for i in (self, other) if i.hi == hi)
        return not lo_open and not hi_open


def interval(related: Related, approx_rel: float, year_hint: int | None = None) -> Interval | None:
    """The values ``related`` allows, on its axis (days for time, the value for quantities).

    ``approx_rel`` widens an "about X" quantity to X·(1 ± approx_rel); a time stated "about"
    keeps its own span. ``year_hint`` dates a day or month stated without a year ("before
    February 26") in the year of the evidence it is compared with. None when the number has no
    position on an axis (an impossible date, a date with no year and no hint).
    """
    span = _span(related.number, year_hint)
    if span is None:
        return None
    lo, hi = span  # time: [lo, hi) in days; quantity: the point [lo, lo]
    time = related.number.kind in TIME_KINDS
    rel = related.relation
    if rel is Relation.BETWEEN and related.upper is not None:
        upper = _span(related.upper, year_hint)
        if upper is None:
            return None
        return Interval(min(lo, upper[0]), max(hi, upper[1]), False, time)
    if rel is Relation.APPROX and not time:
        delta = abs(lo) * approx_rel
        return Interval(lo - delta, lo + delta)
    bounds = {
        Relation.GT: Interval(hi, math.inf, not time, True),
        Relation.GE: Interval(lo, math.inf, False, True),
        Relation.LT: Interval(-math.inf, lo, True, True),
        Relation.LE: Interval(-math.inf, hi, True, time),
    }
    return bounds.get(rel, Interval(lo, hi, False, time))


def _span(number: Number, year_hint: int | None) -> tuple[float, float] | None:
    if number.kind in (NumKind.YEAR, NumKind.DECADE):  # a year spans itself, a decade its last year too
        assert number.value is not None
        return _days(int(number.value), 1, 1), _days(int(number.last or number.value) + 1, 1, 1)
    if number.kind is NumKind.DATE:
        assert number.date is not None
        year, month, day = number.date
        year = year if year is not None else year_hint
        if year is None or not 1 <= year <= 9998:
            return None
        if month is None:
            return _days(year, 1, 1), _days(year + 1, 1, 1)
        if day is None:
            return _days(year, month, 1), _days(year, month, 1) + calendar.monthrange(year, month)[1]
        if day > calendar.monthrange(year, month)[1]:
            return None
        return _days(year, month, day), _days(year, month, day) + 1
    if number.value is None:
        return None
    return number.value, number.value


def _days(year: int, month: int, day: int) -> float:
    return float(date(year, month, day).toordinal())

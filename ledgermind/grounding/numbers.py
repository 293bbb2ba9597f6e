"""Typed number extraction Num(·) for the Numeric Coherence Check (paper Eq. 5, App. C).

NCC's tolerance depends on what a number *is*: years, dates, counts, option labels and
identifiers must match exactly, while continuous readings (measurements, percentages, bare
decimals) may differ by the relative read tolerance. So extraction returns typed values, not
floats. Extractors run from the most to the least specific pattern and each character belongs to
at most one number: "Apollo 11" is an identifier, "July 20, 1969" one date, "B-52" one identifier,
"option B" one label, "36.7 °C" one measurement.

Spans (``start``/``end``) index the input text (the only rewrites before matching are 1:1
character substitutions such as the unicode minus sign).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from enum import Enum
from functools import lru_cache

from ledgermind.grounding.tokens import STOPWORDS
from ledgermind.grounding.units import unit_spellings
from perception.aliases import NUMBER_WORDS, UNITS, is_roman_candidate, roman_to_int, words_to_int


class NumKind(str, Enum):
    """The type of a number, which fixes its NCC tolerance (App. C)."""

    YEAR = "YEAR"
    DECADE = "DECADE"  # "1980s", "the '90s", "early 1980s": a span of years, never one exact year
    DATE = "DATE"
    COUNT = "COUNT"
    OPTION_LABEL = "OPTION_LABEL"
    IDENTIFIER = "IDENTIFIER"
    PERCENT = "PERCENT"
    MEASUREMENT = "MEASUREMENT"
    PLAIN = "PLAIN"


#: Points or spans in time: compared on a calendar, never with quantities.
TIME_KINDS = frozenset({NumKind.YEAR, NumKind.DECADE, NumKind.DATE})
#: May use the relative tolerance δ_read when the claim is a continuous visual reading.
CONTINUOUS_KINDS = frozenset({NumKind.PERCENT, NumKind.MEASUREMENT, NumKind.PLAIN})

DateParts = tuple[int | None, int | None, int | None]  # (year, month, day); None = not stated


@dataclass(frozen=True)
class Number:
    """One typed value found in a text.

    ``value`` is the numeric value (None for option labels and for dates, whose value is
    ``date``); ``unit`` is a canonical unit ("°C", "km", "%", "$"...); ``label`` the option letter.
    A DECADE spans the years ``value`` .. ``last`` ("early 1980s" = 1980..1983).
    """

    text: str
    kind: NumKind
    value: float | None = None
    unit: str | None = None
    label: str | None = None
    date: DateParts | None = None
    last: float | None = None
    start: int = 0
    end: int = 0

    def __str__(self) -> str:
        return self.text


# ---------------------------------------------------------------------------------------------
# Vocabulary
# ---------------------------------------------------------------------------------------------

# Dashes and the minus sign to "-", thin and no-break spaces to " ", curly quotes to "'" (1:1)
_CHAR_FIXES = str.maketrans("\u2212\u2012\u2013\u2014\u00a0\u2009\u202f\u2019\u2018", "----   ''")

_MONTH_NAMES = "january february march april may june july august september october november december".split()
MONTHS = {name: i for i, name in enumerate(_MONTH_NAMES, 1)}
MONTHS |= {name[:3]: i for i, name in enumerate(_MONTH_NAMES, 1) if name != "may"} | {"sept": 9}
# Month names must be capitalised ("May 5"), or all caps as OCR often returns ("MAY 5").
_MONTH_RE = (
    "(?:"
    + "|".join(
        alt for name in sorted(MONTHS, key=len, reverse=True) for alt in (name.capitalize(), name.upper())
    )
    + r")\.?"
)

# Unit spellings -> canonical unit (pint's table plus conventions, units.py); longest tried first.
_UNIT_CANON = {spelling: canon for canon, spellings in unit_spellings().items() for spelling in spellings}
_UNIT_RE = "|".join(re.escape(u) for u in sorted(_UNIT_CANON, key=len, reverse=True))
_SCALE_WORDS = {"hundred": 100, "thousand": 1000, "million": 10**6, "billion": 10**9}
_SCALES = dict(k=1e3, K=1e3, M=1e6, B=1e9, bn=1e9, thousand=1e3, million=1e6, billion=1e9, trillion=1e12)

# Capitalised words that precede a number without naming it ("In 1969", "About 30").
_NOT_NAMES = STOPWORDS | frozenset(
    "approximately approx around nearly roughly almost exactly about only total all each every some "
    "just over under page answer option choice step".split()
)

# ---------------------------------------------------------------------------------------------
# Patterns (compiled once)
# ---------------------------------------------------------------------------------------------

_D = r"(?P<day>[0-3]?\d)(?:st|nd|rd|th)?"
_Y = r"(?P<year>\d{4})"
_M = rf"(?P<month>{_MONTH_RE})"
_DATE_PATTERNS = [
    re.compile(r"\b(?P<year>\d{4})[-/.](?P<month>\d{1,2})[-/.](?P<day>\d{1,2})\b"),
    re.compile(r"\b(?P<a>\d{1,2})[/.](?P<b>\d{1,2})[/.](?P<year>\d{4})\b"),
    re.compile(rf"\b{_M}\s+{_D}\s*,?\s+{_Y}\b"),
    re.compile(rf"\b{_D}\s+(?:of\s+)?{_M}\s*,?\s+{_Y}\b"),
    # "15 Jul 19" (news datelines): day, month, two-digit year; never "15 July 19 people"
    re.compile(rf"\b{_D}\s+{_M}\s+(?P<yy>\d{{2}})\b(?![.,:]?\d)(?!\s+[a-z])"),
    re.compile(rf"\b{_M}\s*,?\s+{_Y}\b"),
    re.compile(rf"\b{_M}\s+{_D}\b(?![.,]?\d)"),
    re.compile(rf"\b{_D}\s+(?:of\s+)?{_M}(?![A-Za-z])"),
]
_OPTION_PATTERNS = [
    re.compile(
        r"\b(?:[Oo]ptions?|OPTIONS?|[Cc]hoices?|CHOICES?|[Aa]nswer|ANSWER)\s*(?:is|:|=|-)?\s*"
        r"(?:\((?P<p>[A-Ja-j])\)|\[(?P<b>[A-Ja-j])\]|(?P<l>[A-J]))(?![A-Za-z0-9])"
    ),
    re.compile(r"(?<![\w(])\((?P<l>[A-J])\)"),
    re.compile(r"(?m)^[ \t]*(?P<l>[A-J])[.):][ \t]"),
    re.compile(r"^\s*\(?(?P<l>[A-J])\)?\.?\s*$"),
]
_IDENT_HYPHEN = re.compile(r"\b(?P<name>[A-Za-z]{0,4}[A-Z][A-Za-z]{0,4})-(?P<num>\d+)\b(?![.,]\d)")
_IDENT_GLUED = re.compile(r"\b(?P<name>[A-Z]{1,4})(?P<num>\d+)(?:[A-Za-z]\w*)?\b")
_IDENT_NAME_NUM = re.compile(
    rf"\b(?P<name>[A-Z][A-Za-z]+)\s+(?P<num>\d+)(?![\d.,]*\d)(?!\s*(?:{_UNIT_RE})(?![A-Za-z]))(?![%°'])"
)
_IDENT_ROMAN = re.compile(r"\b(?P<name>[A-Z][A-Za-z]+)\s+(?P<num>[IVXL]+)\b")
# A lone "I" before a lower-case word is the pronoun ("Yesterday I saw"), not a numeral.
_PRONOUN_I = re.compile(r"\s+[a-z]")
_NUMBER = re.compile(
    r"(?<![\w.])(?P<sign>[-+])?(?:(?P<cur>[$€£¥])\s?)?(?P<sign2>-)?"
    r"(?P<num>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?|\.\d+)"
    r"(?:(?P<scale>[kKMB]|bn)(?![A-Za-z0-9])|(?P<suffix>st|nd|rd|th|s)(?![A-Za-z0-9])"
    r"|\s?(?P<scalew>thousand|million|billion|trillion)\b)?"
    rf"(?:\s?(?P<unit>%|°\s?[CF]\b|°|(?:{_UNIT_RE})(?![A-Za-z])))?"
    r"(?![A-Za-z0-9])"
)
_NUMBER_WORD = re.compile(
    r"\b(?P<first>" + "|".join(sorted(NUMBER_WORDS, key=len, reverse=True)) + r")"
    r"(?:[-\s](?P<second>" + "|".join(u for u in UNITS if 0 < UNITS[u] < 10) + r"))?"
    r"(?:\s+(?P<scalew>hundred|thousand|million|billion))?\b",
    re.IGNORECASE,
)
_NEXT_WORD = re.compile(r"\s+([A-Za-z]+)")
# "2018–19", "2018-2019", "1998/99": two years (the dash is normalised to "-" first)
_YEAR_RANGE = re.compile(r"\b(?P<y1>1\d{3}|20\d{2})\s?[-/]\s?(?P<y2>\d{4}|\d{2})\b(?![-/.]\d)")
# "1980s", "the '90s", "early 1980s", "mid-'60s"
_DECADE = re.compile(
    r"(?:\b(?P<part>early|mid|late)[-\s]+)?(?:\b(?P<full>1\d{2}0|20\d0)|'(?P<short>\d0))s\b", re.IGNORECASE
)
_DECADE_PARTS = {"early": (0, 3), "mid": (4, 6), "late": (7, 9)}
# "one" after a determiner is a pronoun ("the one featured in part 2"), never a count
_DETERMINER_BEFORE = re.compile(
    r"\b(?:the|this|that|which|each|every|any|no|another|a|an|same|only|last|other|first|next)\s+$",
    re.IGNORECASE,
)


def normalise_chars(text: str) -> str:
    """The 1:1 character fixes applied before extraction (dashes, minus, spaces, quotes)."""
    return text.translate(_CHAR_FIXES)


# ---------------------------------------------------------------------------------------------
# Extractors: each yields candidates; `extract_numbers` keeps the first claim on every character
# ---------------------------------------------------------------------------------------------


def _dates(text: str) -> Iterator[Number]:
    for pattern in _DATE_PATTERNS:
        for m in pattern.finditer(text):
            parts = _date_parts(m)
            if parts is not None:
                yield Number(m.group(0), NumKind.DATE, date=parts, start=m.start(), end=m.end())


def _date_parts(m: re.Match[str]) -> DateParts | None:
    groups = m.groupdict()
    year = int(groups["year"]) if groups.get("year") else None
    day: int | None
    if groups.get("yy"):  # POSIX ``strptime %y``: 69–99 -> 1969–1999, 00–68 -> 2000–2068
        year = int(groups["yy"]) + (1900 if int(groups["yy"]) >= 69 else 2000)
    if groups.get("a"):  # numeric d/m/y or m/d/y: a first field > 12 can only be a day
        a, b = int(groups["a"]), int(groups["b"])
        month, day = (b, a) if a > 12 else (a, b)
    else:
        raw = groups["month"]
        month = int(raw) if raw.isdigit() else MONTHS[raw.rstrip(".").lower()]
        day = int(groups["day"]) if groups.get("day") else None
    if not 1 <= month <= 12 or (day is not None and not 1 <= day <= 31):
        return None
    return (year, month, day)


def _year_ranges(text: str) -> Iterator[Number]:
    """Both ends of a year range, the short end expanded: "2018–19" -> 2018 and 2019."""
    for m in _YEAR_RANGE.finditer(text):
        first, raw = int(m.group("y1")), m.group("y2")
        second = first // 100 * 100 + int(raw) if len(raw) == 2 else int(raw)
        if not first < second <= first + 99:  # "2018-05" is a month, "1990-1890" no range
            continue
        yield Number(m.group("y1"), NumKind.YEAR, value=float(first), start=m.start("y1"), end=m.end("y1"))
        yield Number(raw, NumKind.YEAR, value=float(second), start=m.start("y2"), end=m.end("y2"))


def _decades(text: str) -> Iterator[Number]:
    """A decade is a span of years; "early"/"mid"/"late" narrow it to its thirds."""
    for m in _DECADE.finditer(text):
        if m.group("full"):
            first = int(m.group("full"))
        else:  # "'90s": '00s and '10s are this century's, '20s-'90s the last century's
            short = int(m.group("short"))
            first = 2000 + short if short < 20 else 1900 + short
        lo, hi = _DECADE_PARTS.get((m.group("part") or "").lower(), (0, 9))
        yield Number(
            m.group(0),
            NumKind.DECADE,
            value=float(first + lo),
            last=float(first + hi),
            start=m.start(),
            end=m.end(),
        )


def _options(text: str) -> Iterator[Number]:
    for pattern in _OPTION_PATTERNS:
        for m in pattern.finditer(text):
            letter = next(g for g in (m.groupdict().get(k) for k in ("p", "b", "l")) if g)
            start, end = m.span()
            yield Number(m.group(0).strip(), NumKind.OPTION_LABEL, label=letter.upper(), start=start, end=end)


def _identifiers(text: str) -> Iterator[Number]:
    for pattern in (_IDENT_HYPHEN, _IDENT_GLUED):
        for m in pattern.finditer(text):
            yield _identifier(m, float(m.group("num")))
    for m in _IDENT_NAME_NUM.finditer(text):
        if m.group("name").lower() not in _NOT_NAMES and m.group("name").lower() not in MONTHS:
            yield _identifier(m, float(m.group("num")))
    for m in _IDENT_ROMAN.finditer(text):
        numeral = m.group("num")
        if numeral == "I" and _PRONOUN_I.match(text, m.end()):
            continue
        if m.group("name").lower() not in _NOT_NAMES and is_roman_candidate(numeral):
            yield _identifier(m, float(roman_to_int(m.group("num")) or 0))


def _identifier(m: re.Match[str], value: float) -> Number:
    return Number(m.group(0), NumKind.IDENTIFIER, value=value, start=m.start(), end=m.end())


def _numerals(text: str) -> Iterator[Number]:
    for m in _NUMBER.finditer(text):
        yield _typed_numeral(text, m)


def _typed_numeral(text: str, m: re.Match[str]) -> Number:
    raw = m.group("num")
    value = float(raw.replace(",", ""))
    negative = "-" in ((m.group("sign") or "") + (m.group("sign2") or ""))
    value = -value if negative else value
    scale = m.group("scale") or m.group("scalew")
    if scale:
        value *= _SCALES[scale]
    suffix, unit_raw, currency = m.group("suffix"), m.group("unit"), m.group("cur")
    unit = currency or _canonical_unit(unit_raw)  # a currency sign is its own canonical unit

    def typed(kind: NumKind) -> Number:
        return Number(m.group(0).strip(), kind, value, unit, start=m.start(), end=m.end())

    if unit == "%":
        return typed(NumKind.PERCENT)
    if unit is not None:
        return typed(NumKind.MEASUREMENT)
    is_integer = "." not in raw and not negative and not scale
    if is_integer and suffix in {"st", "nd", "rd", "th"}:  # "21st"
        return typed(NumKind.COUNT)
    if not is_integer:
        return typed(NumKind.PLAIN)
    counted = _next_is_counted_noun(text, m.end())
    if len(raw) == 4 and 1000 <= value <= 2099 and not counted:
        return typed(NumKind.YEAR)
    return typed(NumKind.COUNT if counted else NumKind.PLAIN)


def _canonical_unit(raw: str | None) -> str | None:
    if raw is None:
        return None
    compact = re.sub(r"\s+", " ", raw.strip())
    return _UNIT_CANON.get(compact) or _UNIT_CANON.get(compact.replace(" ", ""))


def _next_is_counted_noun(text: str, end: int) -> bool:
    """A lower-case content word right after an integer makes it a count ("11 astronauts")."""
    m = _NEXT_WORD.match(text, end)
    return m is not None and m.group(1).islower() and m.group(1) not in STOPWORDS


def _number_words(text: str) -> Iterator[Number]:
    for m in _NUMBER_WORD.finditer(text):
        first, second, scale = m.group("first", "second", "scalew")
        value, end = words_to_int(first, second) if second else NUMBER_WORDS[first.lower()], m.end()
        if value is None:  # "ten-two" is not a number; take the first word alone
            value, end = NUMBER_WORDS[first.lower()], m.start() + len(first)
        elif scale:
            value *= _SCALE_WORDS[scale.lower()]
        # "one" alone is usually a pronoun ("the one on the left"); keep it only before a noun.
        if (
            first.lower() == "one"
            and not second
            and not scale
            and (not _next_is_counted_noun(text, end) or _DETERMINER_BEFORE.search(text, 0, m.start()))
        ):
            continue
        yield Number(text[m.start() : end], NumKind.COUNT, value=float(value), start=m.start(), end=end)


_EXTRACTORS: tuple[Callable[[str], Iterator[Number]], ...] = (
    _dates,
    _options,
    _year_ranges,
    _decades,
    _identifiers,
    _numerals,
    _number_words,
)


@lru_cache(maxsize=32768)
def extract_numbers(text: str) -> tuple[Number, ...]:
    """Num(text): typed numbers in reading order (memoised: evidence facts recur across claims)."""
    text = normalise_chars(text)
    taken: list[tuple[int, int]] = []
    found: list[Number] = []
    for extractor in _EXTRACTORS:
        for number in extractor(text):
            if number.end > number.start and not any(
                number.start < end and start < number.end for start, end in taken
            ):
                taken.append((number.start, number.end))
                found.append(number)
    return tuple(sorted(found, key=lambda n: n.start))

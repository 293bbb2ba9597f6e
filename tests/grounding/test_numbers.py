"""Typed number extraction Num(·) (Eq. 5, App. C): table-driven."""

from __future__ import annotations

import pytest

from ledgermind.grounding.numbers import NumKind, extract_numbers

K = NumKind

# (text, [(surface, kind, value-or-label-or-date, unit)])
CASES = [
    ("Apollo 11 landed in 1969.", [("Apollo 11", K.IDENTIFIER, 11, None), ("1969", K.YEAR, 1969, None)]),
    ("The thermometer reads 36.7 °C", [("36.7 °C", K.MEASUREMENT, 36.7, "°C")]),
    (
        "36.7°C then -3.2 °C then −5",
        [
            ("36.7°C", K.MEASUREMENT, 36.7, "°C"),
            ("-3.2 °C", K.MEASUREMENT, -3.2, "°C"),
            ("-5", K.PLAIN, -5, None),
        ],
    ),
    ("Revenue was $3.5M, up 12.5%", [("$3.5M", K.MEASUREMENT, 3.5e6, "$"), ("12.5%", K.PERCENT, 12.5, "%")]),
    ("It costs 1,234.5 dollars", [("1,234.5 dollars", K.MEASUREMENT, 1234.5, "$")]),
    ("about 45 percent", [("45 percent", K.PERCENT, 45, "%")]),
    (
        "5 km away, 5km, 12 cm, 3 kg",
        [
            ("5 km", K.MEASUREMENT, 5, "km"),
            ("5km", K.MEASUREMENT, 5, "km"),
            ("12 cm", K.MEASUREMENT, 12, "cm"),
            ("3 kg", K.MEASUREMENT, 3, "kg"),
        ],
    ),
    ("2.5 million people", [("2.5 million", K.PLAIN, 2.5e6, None)]),
    ("On July 20, 1969", [("July 20, 1969", K.DATE, (1969, 7, 20), None)]),
    ("20 July 1969", [("20 July 1969", K.DATE, (1969, 7, 20), None)]),
    ("1969-07-20", [("1969-07-20", K.DATE, (1969, 7, 20), None)]),
    ("20/07/1969", [("20/07/1969", K.DATE, (1969, 7, 20), None)]),
    ("in March 2020", [("March 2020", K.DATE, (2020, 3, None), None)]),
    ("The answer is B", [("answer is B", K.OPTION_LABEL, "B", None)]),
    ("Answer: D.", [("Answer: D", K.OPTION_LABEL, "D", None)]),
    ("choose option (c)", [("option (c)", K.OPTION_LABEL, "C", None)]),
    ("(C) Paris", [("(C)", K.OPTION_LABEL, "C", None)]),
    ("A. Paris\nB. Rome", [("A.", K.OPTION_LABEL, "A", None), ("B.", K.OPTION_LABEL, "B", None)]),
    ("B", [("B", K.OPTION_LABEL, "B", None)]),
    ("The B-52 and ISO 9001", [("B-52", K.IDENTIFIER, 52, None), ("ISO 9001", K.IDENTIFIER, 9001, None)]),
    ("COVID-19 and CO2", [("COVID-19", K.IDENTIFIER, 19, None), ("CO2", K.IDENTIFIER, 2, None)]),
    (
        "Apollo XI and World War II",
        [("Apollo XI", K.IDENTIFIER, 11, None), ("War II", K.IDENTIFIER, 2, None)],
    ),
    (
        "eleven astronauts, twenty-one guns",
        [("eleven", K.COUNT, 11, None), ("twenty-one", K.COUNT, 21, None)],
    ),
    ("one apple", [("one", K.COUNT, 1, None)]),
    ("in the 1960s", [("1960s", K.DECADE, 1960, None)]),
    ("the 21st century", [("21st", K.COUNT, 21, None)]),
    ("3 apples and 2000 people", [("3", K.COUNT, 3, None), ("2000", K.COUNT, 2000, None)]),
    ("10-20 items", [("10", K.PLAIN, 10, None), ("20", K.COUNT, 20, None)]),
    ("x = 3.5 or .5", [("3.5", K.PLAIN, 3.5, None), (".5", K.PLAIN, 0.5, None)]),
    # ranges and short forms, two-digit years, decades as spans, pronoun "one"
    ("the 2018–19 season", [("2018", K.YEAR, 2018, None), ("19", K.YEAR, 2019, None)]),
    ("the 1998/99 season", [("1998", K.YEAR, 1998, None), ("99", K.YEAR, 1999, None)]),
    ("2018-2019 year", [("2018", K.YEAR, 2018, None), ("2019", K.YEAR, 2019, None)]),
    ("Posted 15 Jul 19", [("15 Jul 19", K.DATE, (2019, 7, 15), None)]),
    ("Fri 3 Feb 98", [("3 Feb 98", K.DATE, (1998, 2, 3), None)]),
    ("born December 27 , 2018 .", [("December 27 , 2018", K.DATE, (2018, 12, 27), None)]),
    ("the '90s", [("'90s", K.DECADE, 1990, None)]),
    ("the \u201890s", [("'90s", K.DECADE, 1990, None)]),  # a curly quote reads as "'"
    ("the '00s", [("'00s", K.DECADE, 2000, None)]),
    ("in the early 1980s", [("early 1980s", K.DECADE, 1980, None)]),
    ("the one featured in part 2", [("2", K.PLAIN, 2, None)]),
    ("which one", []),
    ("raised $ 25 million", [("$ 25 million", K.MEASUREMENT, 25e6, "$")]),
]

# Texts in which nothing is a number (pronouns, vitamins, abbreviations, glued garbage).
NO_NUMBERS = [
    "the one on the left",
    "I think so",
    "Vitamin C",
    "Washington DC",
    "Yesterday I saw it",
    "5abc",
    "someone",
    "",
]


def _value(number):
    if number.kind is K.OPTION_LABEL:
        return number.label
    if number.kind is K.DATE:
        return number.date
    return number.value


@pytest.mark.parametrize(("text", "expected"), CASES, ids=[c[0][:30] for c in CASES])
def test_extraction_table(text, expected):
    got = [(n.text, n.kind, _value(n), n.unit) for n in extract_numbers(text)]
    assert got == [
        (s, k, pytest.approx(v) if isinstance(v, (int, float)) else v, u) for s, k, v, u in expected
    ]


@pytest.mark.parametrize("text", NO_NUMBERS)
def test_no_false_numbers(text):
    assert extract_numbers(text) == ()


def test_spans_index_the_input():
    text = "Apollo 11 reads 36.7 °C on July 20, 1969"
    for number in extract_numbers(text):
        assert text[number.start : number.end].strip() == number.text


@pytest.mark.parametrize(
    ("text", "first", "last"),
    [
        ("the 1980s", 1980, 1989),
        ("the early 1980s", 1980, 1983),
        ("the mid-1980s", 1984, 1986),
        ("the late '60s", 1967, 1969),
    ],
)
def test_decades_span_years(text, first, last):
    (decade,) = extract_numbers(text)
    assert decade.kind is K.DECADE and (decade.value, decade.last) == (first, last)


def test_a_two_digit_end_below_the_start_is_not_a_range():
    got = [(n.kind, n.value) for n in extract_numbers("in 2018-05 and 1990-85")]
    assert got == [(K.YEAR, 2018), (K.PLAIN, 5), (K.YEAR, 1990), (K.PLAIN, 85)]

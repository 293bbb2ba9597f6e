"""Typed number extraction Num(·) (Eq. 5, App. C): table-driven."""

from __future__ import annotations

import pytest

from ledgermind.grounding.numbers import NumKind, extract_numbers

K = NumKind

# (text, [(surface, kind, value-or-label-or-date, unit)])
CASES = [
    ("Apollo 11 landed in 1969.", [("Apollo 11", K.IDENTIFIER, 11, None), ("1969", K.YEAR, 1969, None)]),
    ("The thermometer reads 36.7 °C", [("36.7 °C", K.MEASUREMENT, 36.7, "°C")]),
    ("36.7°C then -3.2 °C then −5", [("36.7°C", K.MEASUREMENT, 36.7, "°C"),
                                     ("-3.2 °C", K.MEASUREMENT, -3.2, "°C"), ("-5", K.PLAIN, -5, None)]),
    ("Revenue was $3.5M, up 12.5%", [("$3.5M", K.MEASUREMENT, 3.5e6, "$"), ("12.5%", K.PERCENT, 12.5, "%")]),
    ("It costs 1,234.5 dollars", [("1,234.5 dollars", K.MEASUREMENT, 1234.5, "$")]),
    ("about 45 percent", [("45 percent", K.PERCENT, 45, "%")]),
    ("5 km away, 5km, 12 cm, 3 kg", [("5 km", K.MEASUREMENT, 5, "km"), ("5km", K.MEASUREMENT, 5, "km"),
                                    ("12 cm", K.MEASUREMENT, 12, "cm"), ("3 kg", K.MEASUREMENT, 3, "kg")]),
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
    ("Apollo XI and World War II", [("Apollo XI", K.IDENTIFIER, 11, None), ("War II", K.IDENTIFIER, 2, None)]),
    ("eleven astronauts, twenty-one guns", [("eleven", K.COUNT, 11, None), ("twenty-one", K.COUNT, 21, None)]),
    ("one apple", [("one", K.COUNT, 1, None)]),
    ("in the 1960s", [("1960s", K.DECADE, 1960, None)]),
    ("the 21st century", [("21st", K.COUNT, 21, None)]),
    ("3 apples and 2000 people", [("3", K.COUNT, 3, None), ("2000", K.COUNT, 2000, None)]),
    ("10-20 items", [("10", K.PLAIN, 10, None), ("20", K.COUNT, 20, None)]),
    ("x = 3.5 or .5", [("3.5", K.PLAIN, 3.5, None), (".5", K.PLAIN, 0.5, None)]),
]

# Texts in which nothing is a number (pronouns, vitamins, abbreviations, glued garbage).
NO_NUMBERS = ["the one on the left", "I think so", "Vitamin C", "Washington DC", "Yesterday I saw it",
              "5abc", "someone", ""]


def _value(number):
    if number.kind is K.OPTION_LABEL:
        return number.label
    if number.kind is K.DATE:
        return number.date
    return number.value


@pytest.mark.parametrize(("text", "expected"), CASES, ids=[c[0][:30] for c in CASES])
def test_extraction_table(text, expected):
    got = [(n.text, n.kind, _value(n), n.unit) for n in extract_numbers(text)]
    assert got == [(s, k, pytest.approx(v) if isinstance(v, (int, float)) else v, u) for s, k, v, u in expected]


@pytest.mark.parametrize("text", NO_NUMBERS)
def test_no_false_numbers(text):
    assert extract_numbers(text) == ()


def test_spans_index_the_input():
    text = "Apollo 11 reads 36.7 °C on July 20, 1969"
    for number in extract_numbers(text):
        assert text[number.start:number.end].strip() == number.text

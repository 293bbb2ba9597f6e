"""NCC's units come from pint's registry: the generated table, spellings, conversion."""

from __future__ import annotations

import pytest

from ledgermind.devtools import unit_table
from ledgermind.grounding.cascade import GroundingCascade, GroundingConfig
from ledgermind.grounding.ncc import check_ncc, in_unit
from ledgermind.grounding.numbers import NumKind, extract_numbers
from ledgermind.grounding.units import TABLE_FILE, convert, unit_spellings


@pytest.fixture(scope="module")
def gen():
    return unit_table


def test_shipped_table_is_what_pint_generates(gen):
    """A hand edit of unit_table.json, or a pint upgrade that changes it, fails here (pint is a
    pinned dev dependency: no skip when it is missing)."""
    assert TABLE_FILE.read_text(encoding="utf-8") == gen.render(gen.build_table())
    assert gen.main(["--check"]) == 0


@pytest.mark.parametrize(
    "name,plural",
    [
        ("inch", "inches"),
        ("meter", "meters"),
        ("degree Celsius", "degrees Celsius"),
        ("kilowatt hour", "kilowatt hours"),
        ("pound force per square inch", "pounds force per square inch"),
        ("revolutions per minute", "revolutions per minute"),
        ("millimeter Hg", "millimeters Hg"),
    ],
)
def test_plural_of_a_unit_name(gen, name, plural):
    assert gen.plural_name(name) == plural


@pytest.mark.parametrize(
    "text,unit",
    [
        ("3 kilometres", "km"),
        ("3 kilometers", "km"),
        ("3 kilometer", "km"),
        ("150 lbs", "lb"),
        ("20 degrees Celsius", "°C"),
        ("20 ℃", "°C"),
        ("12 C", "°C"),
        ("2 tonnes", "t"),
        ("7 millibars", "mbar"),
        ("4 metres per second", "m/s"),
        ("9 microns", "µm"),
        ("9 μm", "µm"),
        ("5 mL", "ml"),
        ("30 kWh", "kWh"),
    ],
)
def test_spellings_from_pint_name_the_canonical_unit(text, unit):
    (number,) = extract_numbers(text)
    assert (number.kind, number.unit) == (NumKind.MEASUREMENT, unit)


def test_function_words_and_pint_collisions_are_not_units():
    assert all(n.unit is None for n in extract_numbers("it grew 5 in 2010"))  # "in" is not inches
    assert "in" not in {s for spellings in unit_spellings().values() for s in spellings}
    assert convert(300.0, "dpi", "l") is None  # pint's "dpi" is a dry pint; ours is dots per inch


def test_convert_uses_pint_factors_and_offsets():
    assert convert(1.5, "km", "m") == pytest.approx(1500.0)
    assert convert(1.0, "mi", "km") == pytest.approx(1.609344)
    assert convert(100.0, "°C", "°F") == pytest.approx(212.0)
    assert convert(0.0, "°C", "K") == pytest.approx(273.15)
    assert convert(1.0, "kcal", "kJ") == pytest.approx(4.184)
    assert convert(5.0, "km", "kg") is None  # another dimension
    assert convert(90.0, "°", "dB") is None  # dimensionless: never converted
    assert convert(5.0, "%", "%") is None  # not a physical unit


def test_ncc_restates_evidence_in_the_claims_unit_only_when_switched_on():
    claim, pool = "The course is 1.5 km long.", ["The course measures 1500 m."]
    assert not check_ncc(claim, pool).passed  # Eq. 5: one unit
    assert check_ncc(claim, pool, unit_conversion=True).passed
    assert not check_ncc("The course is 2 km long.", pool, unit_conversion=True).passed
    assert check_ncc("It boils at 212 °F.", ["It boils at 100 °C."], unit_conversion=True).passed
    # relations compare converted values: 1500 m is under a mile, not over one
    assert check_ncc("The course is under 1 mile.", pool, unit_conversion=True).passed
    assert not check_ncc("The course is over 1 mile.", pool, unit_conversion=True).passed
    # a continuous reading keeps δ_read after conversion: 36 psi = 248 kPa
    reading = check_ncc(
        "The gauge reads 36 psi.", ["It shows 250 kPa."], kind="reading", unit_conversion=True
    )
    assert reading.passed


def test_in_unit_leaves_numbers_it_cannot_convert():
    (kg,) = extract_numbers("5 kg")
    assert in_unit(kg, "km") is kg and in_unit(kg, None) is kg
    assert in_unit(kg, "g").value == pytest.approx(5000.0) and in_unit(kg, "g").unit == "g"


def test_cascade_switch_reaches_ncc():
    claim, pool = "The course is 1.5 km long.", ["The course measures 1500 m."]
    assert GroundingConfig().ncc_unit_conversion is False
    on = GroundingCascade(GroundingConfig(ecc_enabled=False, ncc_unit_conversion=True))
    off = GroundingCascade(GroundingConfig(ecc_enabled=False))
    assert on.check(claim, pool).ncc and not off.check(claim, pool).ncc

"""Generate NCC's unit table (``ledgermind/grounding/unit_table.json``) from pint's registry.

    .venv/bin/python scripts/gen_unit_table.py           # rewrite the table
    .venv/bin/python scripts/gen_unit_table.py --check   # exit 1 when the shipped table is stale

Why a generated file: unit spellings are aliases, and pint maintains them (names,
British spellings, irregular plurals, prefixes, symbols), together with each unit's dimension and
its factor to SI. The runtime reads the JSON, so pint is a development dependency and importing
the grounding checks costs no registry load.

What stays ours is *which* units NCC recognises (``VOCABULARY``): pint knows thousands, many of
them English words or letters that would turn ordinary text into measurements. Spellings are
built from pint's definitions by stated rules:

* the symbol and short aliases, with every prefix symbol (``µm``, ``μm``, ``um``; ``ml``, ``mL``);
* the name and long aliases with the prefix name (``kilometer``, ``kilometre``) and their plural
  (``-es`` after s, x, z, ch, sh, else ``-s``; in a multi-word name the last word, or the first
  when the last is a proper name: ``degrees Celsius``, ``millimeters Hg``); a name that already
  ends in "s" takes none, and an irregular plural pint lists ("feet") gets a useless regular one
  ("feets"), which costs nothing: a spelling only counts right after a number;
* an ``-s`` plural of unprefixed lower-case symbols of 2–3 letters of a one-dimension unit
  (``lbs``, ``hrs``, ``mins``; not ``mphs``), over-generating alike (``fts``);
* qualified aliases (``international_inch``) are left out, and so are spellings that are English
  function words (``in``: "5 in 2010" is not five inches).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any

from ledgermind.grounding.units import TABLE_FILE

REPO = Path(__file__).resolve().parents[2]
TABLE = TABLE_FILE.resolve()

#: canonical unit (the ``Number.unit`` NCC compares) -> pint expression(s); the first fixes the
#: conversion, the others add their spellings ("micron" is pint's name for a micrometre)
# fmt: off
VOCABULARY: dict[str, str | tuple[str, ...]] = {
    "°C": "degC", "°F": "degF", "°": "degree", "K": "kelvin",
    "nm": "nm", "µm": ("µm", "micron"), "mm": "mm", "cm": "cm", "m": "m", "km": "km",
    "in": "inch", "ft": "foot", "yd": "yard", "mi": "mile",
    "mg": "mg", "g": "g", "kg": "kg", "lb": "pound", "oz": "ounce", "t": "metric_ton",
    "ml": "ml", "l": "l", "gal": "gallon",
    "ms": "ms", "s": "s", "min": "minute", "h": "hour",
    "km/h": ("kph", "km/h"), "m/s": "m/s", "mph": "mph", "kn": "knot", "rpm": "rpm",
    "V": "V", "mV": "mV", "kV": "kV", "mA": "mA", "W": "W", "kW": "kW", "MW": "MW", "kWh": "kWh", "Ω": "ohm",
    "Hz": "Hz", "kHz": "kHz", "MHz": "MHz", "GHz": "GHz",
    "Pa": "Pa", "kPa": "kPa", "MPa": "MPa", "hPa": "hPa", "bar": "bar", "mbar": "mbar", "atm": "atm",
    "psi": "psi", "mmHg": "mmHg",
    "J": "J", "kJ": "kJ", "cal": "cal", "kcal": "kcal", "eV": "eV", "keV": "keV", "MeV": "MeV",
    "mol": "mol", "mmol": "mmol", "dB": "dB",
}
# fmt: on
#: English function words that are also unit symbols: never a unit spelling.
FUNCTION_WORDS = frozenset({"a", "at", "in", "t"})
_SIBILANT_ENDINGS = ("s", "x", "z", "ch", "sh")


def plural_name(name: str) -> str:
    """English plural of a unit name: the head word takes it ("pounds force per square inch",
    "kilowatt hours"); before a proper name the first word does ("degrees Celsius")."""
    head, sep, tail = name.partition(" per ")
    words = head.split(" ")
    i = 0 if len(words) > 1 and (words[-1][:1].isupper() or sep) else len(words) - 1
    if not words[i].endswith("s"):
        words[i] += "es" if words[i].endswith(_SIBILANT_ENDINGS) else "s"
    return " ".join(words) + sep + tail


def is_symbol(alias: str) -> bool:
    """A symbol-like alias ("L", "hr", "sec", "degC", "KPH"), as opposed to a name ("litre")."""
    return len(alias) <= 3 or not alias.isalpha() or any(c.isupper() for c in alias[1:])


def _forms(registry: Any, expression: str) -> tuple[set[str], set[str]]:
    """(symbols, names) of one pint expression, prefixes applied."""
    if "/" in expression:  # a compound without its own definition: "m/s" and "meters per second"
        num, den = expression.split("/")
        num_names, den_names = _forms(registry, num)[1], _forms(registry, den)[1]
        return {expression}, {f"{n} per {d}" for n in num_names for d in den_names}
    (prefix, base, _suffix), *_ = registry.parse_unit_name(expression)
    unit = registry._units[base]
    pre = registry._prefixes[prefix] if prefix else None
    pre_symbols = {pre.symbol, *(a for a in pre.aliases if len(a) <= 2)} if pre else {""}
    pre_name = pre.name if pre else ""
    aliases = [a for a in unit.aliases if "_" not in a]
    name = unit.name.replace("_", " ")
    names = {pre_name + n for n in {name, *(a for a in aliases if not is_symbol(a))}}
    base_symbols = {unit.symbol or unit.name, *(a for a in aliases if is_symbol(a))}
    symbols = {p + s for p in pre_symbols for s in base_symbols}
    return symbols, names


def spellings(registry: Any, canonical: str, expression: str) -> list[str]:
    symbols, names = _forms(registry, expression)
    out = {canonical} | symbols | names | {plural_name(n) for n in names}
    dims = registry.Quantity(1.0, expression).dimensionality
    # "lbs", "hrs", "mins": abbreviations of units of one base dimension to the first power (not "mphs")
    if len(dims) == 1 and next(iter(dims.values())) == 1:
        out |= {
            s + "s"
            for s in symbols
            if re.fullmatch("[a-z]{2,3}", s) and not s.endswith("s") and not registry.parse_unit_name(s)[0][0]
        }
    return sorted(s for s in out if s not in FUNCTION_WORDS)


def conversion(registry: Any, expression: str) -> dict[str, Any]:
    """Dimension and the affine map to SI base units (value_SI = scale * value + offset)."""
    dimension = str(registry.Quantity(1.0, expression).dimensionality)
    if dimension == "dimensionless":  # angles, decibels: no conversion (a ratio, or logarithmic)
        return {"dimension": None, "scale": None, "offset": None}
    zero = registry.Quantity(0.0, expression).to_base_units().magnitude
    big = registry.Quantity(1e6, expression).to_base_units().magnitude
    # 15 significant digits: drops the subtraction's float noise
    scale, offset = (float(f"{x:.15g}") for x in ((big - zero) / 1e6, zero))
    return {"dimension": dimension, "scale": scale, "offset": offset}


def build_table() -> dict[str, Any]:
    import pint

    registry: pint.UnitRegistry = pint.UnitRegistry()
    table: dict[str, dict[str, Any]] = {}
    for canonical, value in VOCABULARY.items():
        expressions = (value,) if isinstance(value, str) else value
        spelled = sorted({s for e in expressions for s in spellings(registry, canonical, e)})
        table[canonical] = {
            "pint": expressions[0],
            "spellings": spelled,
            **conversion(registry, expressions[0]),
        }
    return {"generated_by": "scripts/gen_unit_table.py", "pint_version": pint.__version__, "units": table}


def render(table: dict[str, Any]) -> str:
    """JSON with one line per unit, so a regenerated table diffs unit by unit."""
    head = {k: v for k, v in table.items() if k != "units"}
    lines = [
        f" {json.dumps(k, ensure_ascii=False)}: {json.dumps(v, ensure_ascii=False)}"
        for k, v in table["units"].items()
    ]
    return json.dumps(head, ensure_ascii=False)[:-1] + ', "units": {\n' + ",\n".join(lines) + "\n}}\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 when the shipped table differs")
    args = parser.parse_args(argv)
    text = render(build_table())
    if args.check:
        current = TABLE.read_text(encoding="utf-8") if TABLE.is_file() else ""
        if current != text:
            print(f"{TABLE.relative_to(REPO)} is stale: run scripts/gen_unit_table.py", file=sys.stderr)
            return 1
        print("unit table is current")
        return 0
    TABLE.write_text(text, encoding="utf-8")
    print(f"wrote {TABLE.relative_to(REPO)} ({len(VOCABULARY)} units)")
    return 0

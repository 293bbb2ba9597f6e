"""Units for NCC: their spellings and conversions, from pint's registry.

The spellings, dimensions and SI factors of the units NCC recognises are generated from pint by
``scripts/gen_unit_table.py`` into ``unit_table.json`` (a test fails when the file is stale), so
aliases, British spellings, irregular plurals and prefixes are pint's, not a hand list. This
module adds only what pint does not define, each a convention of the texts NCC reads:

* ``CONVENTIONS``: the bare letters C and F on thermometer and gauge dials, typographic forms
  (``° C``, ``℃``, ``deg C``) and ``kmh``;
* ``NON_PHYSICAL``: percent, pixels, dots per inch and currencies, which are not physical units
  (pint reads ``dpi`` as a dry pint) and are never converted.

:func:`convert` maps a value between two units of one physical dimension (``1.5 km`` is
``1500 m``; temperatures with their offsets, so it reads absolute temperatures, not changes).
Dimensionless units (angles, decibels) have no conversion.
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

TABLE_FILE = Path(__file__).with_name("unit_table.json")

#: Spellings of pint units that pint itself does not list (conventions of dials and typography).
CONVENTIONS: dict[str, tuple[str, ...]] = {
    "°C": ("° C", "℃", "deg C", "C"),
    "°F": ("° F", "℉", "deg F", "F"),
    "km/h": ("kmh",),
}
#: Units outside pint's physical registry: spelled, never converted.
NON_PHYSICAL: dict[str, tuple[str, ...]] = {
    "%": ("%", "percent", "per cent", "pct"),
    "px": ("px", "pixels"),
    "dpi": ("dpi",),
    "$": ("USD", "dollars", "dollar"),
    "€": ("EUR", "euros", "euro"),
    "£": ("GBP",),
    "¥": ("JPY", "yen"),
}


@lru_cache(maxsize=1)
def _table() -> dict[str, dict]:
    return json.loads(TABLE_FILE.read_text(encoding="utf-8"))["units"]


@lru_cache(maxsize=1)
def unit_spellings() -> dict[str, tuple[str, ...]]:
    """Canonical unit -> every spelling that names it (pint's, then ours)."""
    out = {canon: tuple(entry["spellings"]) for canon, entry in _table().items()}
    for canon, extra in CONVENTIONS.items():
        out[canon] = out[canon] + tuple(s for s in extra if s not in out[canon])
    return {**out, **NON_PHYSICAL}


def convert(value: float, unit: str, to: str) -> float | None:
    """``value`` in ``unit`` expressed in ``to``; None when the two are not one physical dimension.

    A table entry is ``value in SI base units = scale · value + offset`` within its dimension."""
    a, b = _table().get(unit), _table().get(to)
    if a is None or b is None or a["dimension"] is None or a["dimension"] != b["dimension"]:
        return None
    return (a["scale"] * value + a["offset"] - b["offset"]) / b["scale"]

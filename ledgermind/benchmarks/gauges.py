"""Analog-gauge reading (``../shared/data/gauges``): numeric answers scored with a tolerance.

Layout: ``items.jsonl`` + ``images/``; each line has ``image``, ``min``, ``max``, ``reading``
(the true needle value), ``ticks`` and ``tick_pos`` (two consecutive tick values). The
graduation — the "within one graduation" tolerance of the numeric scorer — comes from two
fields that do not always agree in this data (a 0–450 dial with ``ticks`` 15 but ``tick_pos``
"300,450"): the ``tick_pos`` spacing and ``(max - min) / ticks``. We take the smaller of the
two, so the tolerance is never looser than either field supports; both are kept in ``meta``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ledgermind.benchmarks.item import AnswerType, Item
from ledgermind.benchmarks.registry import BENCHMARKS, LoaderConfig
from ledgermind.benchmarks.tables import contained_path, load_rows, numeric_gold
from ledgermind.errors import DataError

LAYOUT = "a directory with items.jsonl (image, min, max, reading, ticks, tick_pos) and images/"
QUESTION = (
    "What is the reading of the gauge in <image 1>? The scale runs from {min} to {max}. "
    "Answer with a single number."
)


def tick_step(row: dict[str, Any]) -> float | None:
    """Spacing of the two ``tick_pos`` values, if present and distinct."""
    if tp := row.get("tick_pos"):
        a, b = (float(x) for x in str(tp).split(","))
        if a != b:
            return abs(b - a)
    return None


def range_step(row: dict[str, Any]) -> float | None:
    """``(max - min) / ticks``, if ``ticks`` is positive."""
    ticks = float(row.get("ticks") or 0)
    return (float(row["max"]) - float(row["min"])) / ticks if ticks > 0 else None


def graduation(row: dict[str, Any]) -> float | None:
    """One graduation of the dial: the smaller of the two estimates (see module docstring)."""
    return min((s for s in (tick_step(row), range_step(row)) if s), default=None)


@BENCHMARKS.register("gauges")
def load_gauges(config: LoaderConfig) -> list[Item]:
    root = config.require_path("gauges", LAYOUT)
    return load_rows(config, root / "items.jsonl", _gauge_item)


def _gauge_item(row: dict[str, Any], source: Path) -> Item:
    """One row → one item; a missing or non-numeric field is that item's error (``load_rows``)."""
    image = contained_path(source.parent / "images", row["image"], f"gauge_{row['image']}")
    meta = {
        "min": float(row["min"]),
        "max": float(row["max"]),
        "graduation": graduation(row),
        "tick_step": tick_step(row),
        "range_step": range_step(row),
        "numeric_kind": "reading",  # continuous measurement: tolerant scoring
        "source": "gauges",
    }
    answer = str(row["reading"]).strip()
    if numeric_gold(answer) is None:  # "nan", "inf": a reading no reply could ever match
        raise DataError(f"gauge {row['image']!r}: reading {answer!r} is not a plain number")
    question = QUESTION.format(min=row["min"], max=row["max"])
    return Item(
        f"gauge_{image.stem}", question, [image], answer=answer, answer_type=AnswerType.NUMERIC, meta=meta
    )

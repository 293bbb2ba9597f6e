"""The bundled sample set: a handful of items whose images the project renders itself.

Why generated: the default ``python scripts/run.py`` must run on a fresh offline machine, and
real evaluation data may not be redistributed. Every image is drawn with PIL from a few numbers
(the gold answers), so the answers are known by construction and the files are reproducible:
``python scripts/make_sample_set.py`` rewrites ``ledgermind/benchmarks/sample/`` and a test
checks that the committed ``items.jsonl`` is exactly what the generator produces.

The items cover the paper's question families: document text (open), a receipt total
(numeric, exact), a dial gauge and a thermometer (numeric readings, tolerant), a bar chart
(MCQ), and a counting diagram (numeric count, exact). They use the generic JSONL format
(``generic.py``), so the ``sample`` loader is the generic loader with a default path.
The loader registers as ``sample`` (``benchmark=sample``); the module is not ``sample.py`` so that
it is not confused with the data folder ``sample/`` beside it.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from PIL import Image, ImageDraw, ImageFont

from ledgermind.benchmarks.generic import item_from_record, jsonl_path
from ledgermind.benchmarks.item import Item
from ledgermind.benchmarks.registry import BENCHMARKS, LoaderConfig
from ledgermind.benchmarks.tables import load_rows

SAMPLE_DIR = Path(__file__).with_name("sample")
WHITE, BLACK, GREY = (255, 255, 255), (0, 0, 0), (120, 120, 120)


def _font(size: int, bold: bool = False) -> ImageFont.FreeTypeFont:
    """DejaVu Sans from matplotlib's bundled fonts: present wherever our dependencies are."""
    import matplotlib

    name = "DejaVuSans-Bold.ttf" if bold else "DejaVuSans.ttf"
    return ImageFont.truetype(str(Path(matplotlib.get_data_path()) / "fonts" / "ttf" / name), size)


@dataclass(frozen=True)
class SampleSpec:
    id: str
    question: str
    answer: str
    draw: Callable[[], Image.Image]
    options: tuple[str, ...] | None = None
    answer_type: str = "open"
    difficulty: str = "Easy"
    meta: tuple[tuple[str, Any], ...] = ()

    def record(self, image_name: str) -> dict[str, Any]:
        rec: dict[str, Any] = {"id": self.id, "question": self.question, "images": [image_name]}
        rec |= {"options": list(self.options)} if self.options else {}
        rec |= {"answer": self.answer, "answer_type": self.answer_type, "difficulty": self.difficulty}
        return rec | {"meta": dict(self.meta) | {"source": "ledgermind_sample"}}


RECEIPT_LINES = (
    ("Apples 1kg", "3.20"),
    ("Whole milk", "1.85"),
    ("Rye bread", "2.95"),
    ("Coffee beans", "8.50"),
)
RECEIPT_STORE = "GREEN LEAF MARKET"
RECEIPT_TOTAL = f"{sum(float(p) for _, p in RECEIPT_LINES):.2f}"


def draw_receipt() -> Image.Image:
    img = Image.new("RGB", (320, 300), WHITE)
    d = ImageDraw.Draw(img)
    d.text((160, 22), RECEIPT_STORE, font=_font(18, bold=True), fill=BLACK, anchor="mm")
    d.text((160, 46), "12 Harbour Road  *  Receipt #4471", font=_font(11), fill=GREY, anchor="mm")
    y = 80
    for name, price in RECEIPT_LINES:
        d.text((24, y), name, font=_font(14), fill=BLACK)
        d.text((296, y), price, font=_font(14), fill=BLACK, anchor="ra")
        y += 28
    d.line((24, y + 4, 296, y + 4), fill=BLACK, width=1)
    d.text((24, y + 14), "TOTAL", font=_font(16, bold=True), fill=BLACK)
    d.text((296, y + 14), RECEIPT_TOTAL, font=_font(16, bold=True), fill=BLACK, anchor="ra")
    d.text((160, 280), "Thank you!", font=_font(12), fill=GREY, anchor="mm")
    return img


GAUGE_MIN, GAUGE_MAX, GAUGE_MINOR, GAUGE_VALUE = 0, 100, 2, 64


def draw_gauge() -> Image.Image:
    """A 270° dial, 0–100 kPa, labels every 10, minor ticks every 2, needle at ``GAUGE_VALUE``."""
    size, cx, cy, r = 300, 150, 155, 120
    img = Image.new("RGB", (size, size), WHITE)
    d = ImageDraw.Draw(img)
    d.ellipse((cx - r - 8, cy - r - 8, cx + r + 8, cy + r + 8), outline=BLACK, width=3)

    def at(v: float, radius: float) -> tuple[float, float]:
        """The point at ``radius`` towards value ``v``: 0 at 225° (lower left), 100 at -45°, clockwise."""
        a = math.radians(225 - 270 * (v - GAUGE_MIN) / (GAUGE_MAX - GAUGE_MIN))
        return cx + radius * math.cos(a), cy - radius * math.sin(a)

    for v in range(GAUGE_MIN, GAUGE_MAX + 1, GAUGE_MINOR):
        major = v % 10 == 0
        d.line((*at(v, r - (16 if major else 8)), *at(v, r)), fill=BLACK, width=2 if major else 1)
        if major:
            d.text(at(v, r - 32), str(v), font=_font(12), fill=BLACK, anchor="mm")
    d.line((cx, cy, *at(GAUGE_VALUE, r - 20)), fill=(200, 0, 0), width=3)
    d.ellipse((cx - 6, cy - 6, cx + 6, cy + 6), fill=BLACK)
    d.text((cx, cy + 60), "kPa", font=_font(14), fill=BLACK, anchor="mm")
    return img


THERMO_MIN, THERMO_MAX, THERMO_MINOR, THERMO_VALUE = 34.0, 42.0, 0.5, 37.5


def draw_thermometer() -> Image.Image:
    """A vertical clinical thermometer, 34–42 °C, ticks every 0.5, labels every 1 °C."""
    w, h, x, top, bottom = 200, 320, 90, 30, 260
    img = Image.new("RGB", (w, h), WHITE)
    d = ImageDraw.Draw(img)

    def y(v: float) -> float:
        return bottom - (v - THERMO_MIN) / (THERMO_MAX - THERMO_MIN) * (bottom - top)

    d.rounded_rectangle((x - 8, top - 12, x + 8, bottom + 10), radius=8, outline=BLACK, width=2)
    d.ellipse((x - 16, bottom + 2, x + 16, bottom + 34), fill=(200, 0, 0), outline=BLACK, width=2)
    d.rectangle((x - 4, y(THERMO_VALUE), x + 4, bottom + 8), fill=(200, 0, 0))
    steps = round((THERMO_MAX - THERMO_MIN) / THERMO_MINOR)
    for k in range(steps + 1):
        v = THERMO_MIN + k * THERMO_MINOR
        major = k % 2 == 0
        d.line((x + 10, y(v), x + (26 if major else 18), y(v)), fill=BLACK, width=1)
        if major:
            d.text((x + 32, y(v)), f"{v:.0f}", font=_font(12), fill=BLACK, anchor="lm")
    d.text((x + 44, top - 20), "°C", font=_font(14), fill=BLACK, anchor="mm")
    return img


CHART_DATA = (("Oslo", 63), ("Lima", 17), ("Perth", 48), ("Hanoi", 141))
CHART_OPTIONS = ("Oslo", "Lima", "Perth", "Hanoi")


def draw_bar_chart() -> Image.Image:
    w, h, left, base, top = 360, 260, 48, 220, 30
    img = Image.new("RGB", (w, h), WHITE)
    d = ImageDraw.Draw(img)
    d.text((w // 2, 14), "Rainfall in March (mm)", font=_font(13, bold=True), fill=BLACK, anchor="mm")
    d.line((left, top, left, base), fill=BLACK)
    d.line((left, base, w - 12, base), fill=BLACK)
    vmax = 160
    for v in range(0, vmax + 1, 40):
        yy = base - v / vmax * (base - top)
        d.line((left - 4, yy, left, yy), fill=BLACK)
        d.text((left - 6, yy), str(v), font=_font(10), fill=BLACK, anchor="rm")
    colours = ((70, 110, 180), (230, 140, 50), (90, 160, 90), (180, 70, 70))
    bw = 50
    for i, ((city, val), col) in enumerate(zip(CHART_DATA, colours, strict=True)):
        x0 = left + 20 + i * (bw + 22)
        d.rectangle((x0, base - val / vmax * (base - top), x0 + bw, base), fill=col)
        d.text((x0 + bw / 2, base + 12), city, font=_font(11), fill=BLACK, anchor="mm")
    return img


CIRCLES = ((40, 50), (120, 40), (210, 70), (70, 150), (250, 160))
SQUARES = ((160, 120), (30, 220), (200, 230))


def draw_shapes() -> Image.Image:
    img = Image.new("RGB", (300, 280), WHITE)
    d = ImageDraw.Draw(img)
    for cx, cy in CIRCLES:
        d.ellipse((cx - 18, cy - 18, cx + 18, cy + 18), outline=(40, 80, 200), width=3)
    for cx, cy in SQUARES:
        d.rectangle((cx - 16, cy - 16, cx + 16, cy + 16), outline=(200, 60, 40), width=3)
    return img


SIGN_TEXT = "PLATFORM 7"


def draw_sign() -> Image.Image:
    img = Image.new("RGB", (320, 140), (235, 235, 235))
    d = ImageDraw.Draw(img)
    d.rounded_rectangle((20, 25, 300, 115), radius=10, fill=(20, 60, 140))
    d.text((160, 70), SIGN_TEXT, font=_font(30, bold=True), fill=WHITE, anchor="mm")
    return img


SPECS: tuple[SampleSpec, ...] = (
    SampleSpec(
        "sample_receipt_store",
        "What is the name of the store on this receipt? <image 1>",
        RECEIPT_STORE,
        draw_receipt,
    ),
    SampleSpec(
        "sample_receipt_total",
        "What is the total amount printed on the receipt? <image 1>",
        RECEIPT_TOTAL,
        draw_receipt,
        answer_type="numeric",
        difficulty="Medium",
        meta=(("numeric_kind", "exact"),),
    ),
    SampleSpec(
        "sample_gauge",
        "What is the reading of the pressure gauge in <image 1>, in kPa?",
        str(GAUGE_VALUE),
        draw_gauge,
        answer_type="numeric",
        difficulty="Medium",
        meta=(("numeric_kind", "reading"), ("graduation", GAUGE_MINOR)),
    ),
    SampleSpec(
        "sample_thermometer",
        "What temperature does the thermometer in <image 1> show, in °C?",
        f"{THERMO_VALUE}",
        draw_thermometer,
        answer_type="numeric",
        difficulty="Hard",
        meta=(("numeric_kind", "reading"), ("graduation", THERMO_MINOR)),
    ),
    SampleSpec(
        "sample_bar_chart",
        "<image 1> According to the chart, which city had the most rainfall in March?",
        "D",
        draw_bar_chart,
        options=CHART_OPTIONS,
        answer_type="mcq",
    ),
    SampleSpec(
        "sample_count_circles",
        "How many circles are in the diagram? <image 1>",
        str(len(CIRCLES)),
        draw_shapes,
        answer_type="numeric",
        difficulty="Medium",
        meta=(("numeric_kind", "count"),),
    ),
    SampleSpec("sample_sign", "What is written on the sign in <image 1>?", SIGN_TEXT, draw_sign),
)


def generate_sample_set(out_dir: Path = SAMPLE_DIR) -> list[dict[str, Any]]:
    """Draw every sample image and write ``items.jsonl`` into ``out_dir``; returns the records."""
    out_dir.mkdir(parents=True, exist_ok=True)
    drawn: dict[Callable[[], Image.Image], str] = {}
    records = []
    for spec in SPECS:
        if spec.draw not in drawn:  # items sharing a picture share the file
            name = spec.draw.__name__.removeprefix("draw_") + ".png"
            spec.draw().save(out_dir / name, format="PNG", optimize=True)
            drawn[spec.draw] = name
        records.append(spec.record(drawn[spec.draw]))
    lines = "".join(json.dumps(rec, ensure_ascii=False) + "\n" for rec in records)
    (out_dir / "items.jsonl").write_text(lines, encoding="utf-8")
    return records


@BENCHMARKS.register("sample")
def load_sample(config: LoaderConfig) -> list[Item]:
    """The bundled sample set (``path`` defaults to the copy inside the package)."""
    layout = "the bundled sample set (python scripts/make_sample_set.py recreates it)"
    path = jsonl_path(replace(config, path=config.path or str(SAMPLE_DIR)), "sample", layout)
    return load_rows(config, path, item_from_record)

"""Dial-label recall of OCR and crop-zoom on real gauge photos (``../shared/data/gauges``).

Why: the crop-zoom tool claims that zooming the zone it chooses lets OCR read more of a dial.
For each photo this study OCRs (a) the full image and (b) the full image plus the zone the
``crop_zoom`` tool chooses for "What is the reading of the gauge?", and counts **dial-label
recall**: of the printed labels {min, max} ∪ tick_pos, the fraction OCR finds as a number. The
per-image best-zone oracle (every zone zoomed, the best one counted) and all zones together show
the gap between the choice and what zooming could give. The last line of the report is
machine-readable: ``dial_label_recall full=<r> zoom=<r> n=<items>``.
"""

from __future__ import annotations

import math
import statistics
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from omegaconf import DictConfig

from ledgermind.errors import UserError
from ledgermind.jsonl import read_jsonl
from perception.crop import CropConfig, parse_numbers, zone_crop
from perception.image_io import load_image
from perception.ocr import OCRLine
from perception.tools import CropZoomTool, build_tools

GAUGE_QUESTION = "What is the reading of the gauge?"


@dataclass(frozen=True)
class GaugeScore:
    image: str
    labels: tuple[float, ...]
    found_full: int
    found_zoom: int  # full-image lines + the selected zone's zoomed lines
    found_oracle: int  # full-image lines + the best single zone's zoomed lines (per-image oracle)
    found_all: int  # full-image lines + all zones' zoomed lines
    zone: int
    oracle_zones: tuple[int, ...]
    ocr_ms: float
    crop_ms: float  # proposals + zone selection (incl. the read check's zoomed OCR) + crop
    zoom_ocr_ms: float


def crop_tool(perception_cfg: DictConfig, **overrides: object) -> CropZoomTool:
    """The ``crop_zoom`` tool a perception config builds, with crop-config fields overridden."""
    tool: CropZoomTool = build_tools(perception_cfg)["crop_zoom"]  # type: ignore[assignment]
    if overrides:
        tool.config = CropConfig(**{**tool.config.__dict__, **overrides})
    return tool


def dial_labels(item: dict) -> tuple[float, ...]:
    """{min, max} ∪ tick_pos as distinct numbers (items without ``tick_pos`` contribute min and max)."""
    raw = [item["min"], item["max"], *str(item.get("tick_pos") or "").split(",")]
    return tuple(sorted({float(v) for v in raw if str(v).strip()}))


def numbers_read(lines: Iterable[OCRLine]) -> set[float]:
    """Every number OCR read. Sign-insensitive: a dial's minus sign is often a separate, missed glyph."""
    return {abs(v) for ln in lines for v in parse_numbers(ln.text)}


def count_found(labels: Sequence[float], numbers: set[float]) -> int:
    return sum(any(math.isclose(abs(lab), n, abs_tol=1e-9) for n in numbers) for lab in labels)


def score_gauge(path: Path, item: dict, tool: CropZoomTool, oracle: bool = True) -> GaugeScore:
    """Full-image OCR, the crop-zoom tool's own zone choice, and (``oracle``) every zone's zoom."""
    engine, cfg = tool.engine, tool.config
    assert engine is not None
    loaded = load_image(path, tool.image_policy)
    labels = dial_labels(item)
    t0 = time.perf_counter()
    full = engine.recognize(loaded.image)  # what the OCR tool reports (legible lines)
    t1 = time.perf_counter()
    crop = tool.select(loaded, GAUGE_QUESTION)
    t2 = time.perf_counter()
    zoomed = engine.recognize(crop.image)  # memoised when the read check already read this zone
    t3 = time.perf_counter()
    base = numbers_read(full)
    union = base | numbers_read(zoomed)
    chosen = crop.zone if crop.zone is not None else -1
    per_zone = {chosen: count_found(labels, union)}
    if oracle:
        for zone in range(cfg.grid * cfg.grid):
            if zone not in per_zone:
                read = numbers_read(engine.recognize(zone_crop(loaded.image, zone, cfg).image))
                per_zone[zone] = count_found(labels, base | read)
                union |= read
    best = max(per_zone.values())
    return GaugeScore(
        path.name,
        labels,
        count_found(labels, base),
        per_zone[chosen],
        best,
        count_found(labels, union),
        chosen,
        tuple(sorted(z for z, f in per_zone.items() if f == best)),
        (t1 - t0) * 1e3,
        (t2 - t1) * 1e3,
        (t3 - t2) * 1e3,
    )


def load_items(data: Path) -> list[dict]:
    items_file = data / "items.jsonl"
    if not items_file.is_file():
        raise UserError(f"no items.jsonl in {data} (expected the format of ../shared/data/gauges)")
    return [row.value for row in read_jsonl(items_file, torn_tail=False)]


def run_gauges(
    data: Path, tool: CropZoomTool, verbose: bool, oracle: bool = True, limit: int | None = None
) -> list[GaugeScore]:
    scores = []
    for item in load_items(data)[:limit]:
        s = score_gauge(data / "images" / item["image"], item, tool, oracle)
        scores.append(s)
        if verbose:
            print(
                f"  {s.image[:40]:40s} labels={len(s.labels)} full={s.found_full} zoom={s.found_zoom} "
                f"oracle={s.found_oracle} zone={s.zone} best={list(s.oracle_zones)} ocr={s.ocr_ms:.0f}ms"
            )
    return scores


def report_gauges(scores: list[GaugeScore], oracle: bool = True) -> str:
    """Print the recall and timing table; return the machine-readable last line."""
    total = sum(len(s.labels) for s in scores)

    def share(count: Callable[[GaugeScore], int]) -> float:
        return sum(count(s) for s in scores) / total

    def ms(time: Callable[[GaugeScore], float]) -> float:
        return statistics.mean(time(s) for s in scores)

    full, zoom = share(lambda s: s.found_full), share(lambda s: s.found_zoom)
    rows: list[tuple[str, float, str]] = [
        ("items", len(scores), "d"),
        ("dial labels", total, "d"),
        ("recall full image", full, ".3f"),
        ("recall full + zoom", zoom, ".3f"),
    ]
    if oracle:
        rows += [
            ("recall full + best zone (oracle)", share(lambda s: s.found_oracle), ".3f"),
            ("recall full + all zones", share(lambda s: s.found_all), ".3f"),
            ("items where chosen zone = oracle", sum(s.zone in s.oracle_zones for s in scores), "d"),
        ]
    rows += [
        ("items where zoom added a label", sum(s.found_zoom > s.found_full for s in scores), "d"),
        ("OCR ms/image (full)", ms(lambda s: s.ocr_ms), ".0f"),
        ("zone choice ms/image (+read check)", ms(lambda s: s.crop_ms), ".0f"),
        ("OCR ms/image (zoomed crop)", ms(lambda s: s.zoom_ocr_ms), ".0f"),
        ("crop-zoom total ms/image", ms(lambda s: s.ocr_ms + s.crop_ms + s.zoom_ocr_ms), ".0f"),
    ]
    print(f"{'metric':34s} {'value':>10s}")
    for label, value, spec in rows:
        print(f"{label:34s} {value:>10{spec}}")
    print(f"{'zone histogram (0..8)':34s} {[[s.zone for s in scores].count(z) for z in range(9)]}")
    return f"dial_label_recall full={full:.3f} zoom={zoom:.3f} n={len(scores)}"

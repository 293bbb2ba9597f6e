#!/usr/bin/env python
"""Measure the perception tools on real images.

Gauges (default): for each photo, OCR (a) the full image and (b) the full image plus the nine-zone
crop-zoom chosen for "What is the reading of the gauge?", and compute **dial-label recall**: of
the printed labels {min, max} ∪ tick_pos, the fraction OCR finds as a number. The last line is
machine-readable: ``dial_label_recall full=<r> zoom=<r> n=<items>``.

``--mmmu``: OCR every image of the MMMU-Pro subset; report how many yield text and the median time.

    python scripts/eval_perception.py [--data DIR] [--config conf/perception/cpu.yaml] [--mmmu]
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from omegaconf import OmegaConf  # noqa: E402

from ledgermind.errors import UserError  # noqa: E402
from perception.crop import CropConfig, parse_numbers, select_zone_crop  # noqa: E402
from perception.detect import ClassicalProposer, proposals_from_ocr  # noqa: E402
from perception.image_io import ImagePolicy, load_image  # noqa: E402
from perception.ocr import OCREngine, OCRLine  # noqa: E402

GAUGE_QUESTION = "What is the reading of the gauge?"
SHARED = REPO.parent / "shared" / "data"


@dataclass(frozen=True)
class GaugeScore:
    image: str
    labels: tuple[float, ...]
    found_full: int
    found_zoom: int
    zone: int
    ocr_ms: float
    crop_ms: float
    zoom_ocr_ms: float


def dial_labels(item: dict) -> tuple[float, ...]:
    """{min, max} ∪ tick_pos as distinct numbers (items without ``tick_pos`` contribute min and max)."""
    raw = [item["min"], item["max"], *str(item.get("tick_pos") or "").split(",")]
    return tuple(sorted({float(v) for v in raw if str(v).strip()}))


def numbers_read(lines: Iterable[OCRLine]) -> set[float]:
    """Every number OCR read. Sign-insensitive: a dial's minus sign is often a separate, missed glyph."""
    return {abs(v) for ln in lines for v in parse_numbers(ln.text)}


def count_found(labels: Sequence[float], numbers: set[float]) -> int:
    return sum(any(math.isclose(abs(lab), n, abs_tol=1e-9) for n in numbers) for lab in labels)


def score_gauge(path: Path, item: dict, engine: OCREngine, crop_cfg: CropConfig, proposer: ClassicalProposer,
                policy: ImagePolicy) -> GaugeScore:
    loaded = load_image(path, policy)
    labels = dial_labels(item)
    t0 = time.perf_counter()
    raw = engine.recognize(loaded.image, min_confidence=crop_cfg.text_min_confidence)
    full = [ln for ln in raw if ln.confidence >= engine.min_confidence]  # what the OCR tool reports
    t1 = time.perf_counter()
    proposals = proposals_from_ocr(raw) + proposer.propose(loaded.image)
    crop = select_zone_crop(loaded.image, GAUGE_QUESTION, proposals, crop_cfg)
    t2 = time.perf_counter()
    zoomed = engine.recognize(crop.image)
    t3 = time.perf_counter()
    found_full = count_found(labels, numbers_read(full))
    found_zoom = count_found(labels, numbers_read(full) | numbers_read(zoomed))
    return GaugeScore(path.name, labels, found_full, found_zoom, crop.zone or 0,
                      (t1 - t0) * 1e3, (t2 - t1) * 1e3, (t3 - t2) * 1e3)


def run_gauges(data: Path, engine: OCREngine, crop_cfg: CropConfig, proposer: ClassicalProposer,
               policy: ImagePolicy, verbose: bool) -> list[GaugeScore]:
    items_file = data / "items.jsonl"
    if not items_file.is_file():
        raise UserError(f"no items.jsonl in {data} (expected the format of ../shared/data/gauges)")
    items = [json.loads(line) for line in items_file.read_text().splitlines() if line.strip()]
    scores = []
    for item in items:
        s = score_gauge(data / "images" / item["image"], item, engine, crop_cfg, proposer, policy)
        scores.append(s)
        if verbose:
            print(f"  {s.image[:40]:40s} labels={len(s.labels)} full={s.found_full} zoom={s.found_zoom} "
                  f"zone={s.zone} ocr={s.ocr_ms:.0f}ms")
    return scores


def report_gauges(scores: list[GaugeScore]) -> str:
    total = sum(len(s.labels) for s in scores)
    full = sum(s.found_full for s in scores) / total
    zoom = sum(s.found_zoom for s in scores) / total
    gained = sum(s.found_zoom > s.found_full for s in scores)
    zones = [s.zone for s in scores]
    print(f"{'metric':34s} {'value':>10s}")
    print(f"{'items':34s} {len(scores):>10d}")
    print(f"{'dial labels':34s} {total:>10d}")
    print(f"{'recall full image':34s} {full:>10.3f}")
    print(f"{'recall full + zoom':34s} {zoom:>10.3f}")
    print(f"{'items where zoom added a label':34s} {gained:>10d}")
    print(f"{'OCR ms/image (full)':34s} {statistics.mean(s.ocr_ms for s in scores):>10.0f}")
    print(f"{'crop-zoom ms/image (select+crop)':34s} {statistics.mean(s.crop_ms for s in scores):>10.1f}")
    print(f"{'OCR ms/image (zoomed crop)':34s} {statistics.mean(s.zoom_ocr_ms for s in scores):>10.0f}")
    print(f"{'zone histogram (0..8)':34s} {[zones.count(z) for z in range(9)]}")
    return f"dial_label_recall full={full:.3f} zoom={zoom:.3f} n={len(scores)}"


def run_mmmu(data: Path, engine: OCREngine, policy: ImagePolicy) -> str:
    images = sorted((data / "images").glob("*"))
    if not images:
        raise UserError(f"no images under {data / 'images'}")
    times, with_text, failed = [], 0, 0
    for path in images:
        t0 = time.perf_counter()
        try:
            lines = engine.recognize(load_image(path, policy).image)
        except UserError as exc:
            failed += 1
            print(f"  {path.name}: {exc}")
            continue
        times.append((time.perf_counter() - t0) * 1e3)
        with_text += bool(lines)
    print(f"{'images':34s} {len(images):>10d}")
    print(f"{'images with text':34s} {with_text:>10d}")
    print(f"{'unreadable images':34s} {failed:>10d}")
    print(f"{'median ms/image (load+OCR)':34s} {statistics.median(times):>10.0f}")
    return f"mmmu_ocr with_text={with_text} n={len(images)} median_ms={statistics.median(times):.0f}"


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, default=None, help="gauge folder (items.jsonl + images/)")
    ap.add_argument("--config", type=Path, default=REPO / "conf" / "perception" / "cpu.yaml")
    ap.add_argument("--mmmu", action="store_true", help="OCR the MMMU-Pro subset images instead")
    ap.add_argument("--zoom", type=float, default=None, help="override crop zoom (default: config)")
    ap.add_argument("--margin", type=float, default=None, help="override crop margin (default: config)")
    ap.add_argument("-v", "--verbose", action="store_true")
    args = ap.parse_args(argv)
    try:
        from hydra.utils import instantiate

        cfg = OmegaConf.load(args.config)
        engine: OCREngine = instantiate(cfg.ocr)
        policy: ImagePolicy = instantiate(cfg.image)
        crop_cfg: CropConfig = instantiate(cfg.crop)
        overrides = {k: v for k, v in (("zoom", args.zoom), ("margin", args.margin)) if v is not None}
        if overrides:
            crop_cfg = CropConfig(**{**crop_cfg.__dict__, **overrides})
        proposer: ClassicalProposer = instantiate(cfg.proposer)
        if args.mmmu:
            print(run_mmmu(args.data or SHARED / "mmmu_pro_subset", engine, policy))
        else:
            scores = run_gauges(args.data or SHARED / "gauges", engine, crop_cfg, proposer, policy, args.verbose)
            print(report_gauges(scores))
    except UserError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

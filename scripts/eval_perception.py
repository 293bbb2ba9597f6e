#!/usr/bin/env python
"""Measure the perception tools on real images.

Gauges (default): for each photo, OCR (a) the full image and (b) the full image plus the nine-zone
crop-zoom that the ``crop_zoom`` tool chooses for "What is the reading of the gauge?", and compute
**dial-label recall**: of the printed labels {min, max} ∪ tick_pos, the fraction OCR finds as a
number. Also printed: the per-image best-zone oracle (every zone zoomed, the best one counted;
``--no-oracle`` skips it) and all zones together, so the gap to the oracle is visible. The last
line is machine-readable: ``dial_label_recall full=<r> zoom=<r> n=<items>``.

``--folds K`` (issue 27): cross-validate the zone choice's weights. Every candidate of a small
grid (``gain_per_area`` × ``numeric_text_bonus`` × ``verify_top_k``, the shipped config first)
chooses a zone on every photo (OCR readings come from the on-disk memo, so this costs no OCR once
the photos were read); per fold the candidate with the best zoom recall on the other K−1 folds is
scored on the held-out fold. Printed: dev (shipped config, all photos), held-out mean ± spread,
pooled held-out recall, full-image recall and the dev−CV gap.

``--rotation``: turn real photos by 90/180/270° and report how much of the upright reading OCR
recovers with and without the orientation classifier.
``--mmmu``: OCR every image of the MMMU-Pro subset; report how many yield text and the median time.

    python scripts/eval_perception.py [--data DIR] [--config conf/perception/cpu.yaml] [--mmmu | --rotation]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
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
from PIL import Image  # noqa: E402

from ledgermind.errors import UserError  # noqa: E402
from perception.crop import CropConfig, parse_numbers, text_tokens, zone_crop  # noqa: E402
from perception.image_io import ImagePolicy, load_image  # noqa: E402
from perception.cache import default_perception_cache_dir, package_versions, settings_of  # noqa: E402
from perception.ocr import OCREngine, OCRLine, polygon_to_bbox  # noqa: E402
from perception.orientation import OrientationClassifier  # noqa: E402
from perception.tools import CropZoomTool, build_tools  # noqa: E402
from ledgermind.jsonl import read_jsonl  # noqa: E402

GAUGE_QUESTION = "What is the reading of the gauge?"
SHARED = REPO.parent / "shared" / "data"


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


class OCRDiskMemo:
    """The engine's raw reading of each image kept on disk, keyed by pixels and engine settings.

    Why: the gauge eval reads every photo at 1× and all nine zones zoomed (≈10 OCR passes per
    photo, about a minute each on a shared CPU), and cross-validating the zone choice re-runs the
    choice many times. The pipeline's tool cache (:mod:`perception.cache`) is keyed by tool calls
    and by the digest of the whole perception source, so an edit to the crop rule would throw away
    every OCR reading although OCR did not change; this memo keys on what OCR depends on only (the
    pixels, the engine's settings, the perception packages and the OCR modules' source).
    """

    def __init__(self, engine: OCREngine, directory: Path) -> None:
        self.directory = directory
        self.directory.mkdir(parents=True, exist_ok=True)
        ocr_src = b"".join((REPO / "perception" / n).read_bytes() for n in ("ocr.py", "orientation.py"))
        fingerprint = json.dumps([settings_of(engine), package_versions()], sort_keys=True, default=str)
        self._salt = hashlib.sha256(fingerprint.encode() + ocr_src).hexdigest()[:16]
        self._inner = engine._raw_lines  # type: ignore[attr-defined]
        engine._raw_lines = self._raw_lines  # type: ignore[attr-defined,method-assign]

    def _raw_lines(self, image: Image.Image) -> list[OCRLine]:
        digest = hashlib.sha1(image.tobytes() + f"{image.size}{image.mode}{self._salt}".encode()).hexdigest()
        path = self.directory / f"{digest}.json"
        if path.is_file():
            return [OCRLine(t, polygon_to_bbox(poly), tuple(map(tuple, poly)), c)
                    for t, poly, c in json.loads(path.read_text())]
        lines = self._inner(image)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps([[ln.text, [list(p) for p in ln.polygon], ln.confidence] for ln in lines]))
        tmp.replace(path)
        return lines


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
    found_full = count_found(labels, base)
    found_zoom = count_found(labels, base | numbers_read(zoomed))
    per_zone = {crop.zone: found_zoom}
    union = base | numbers_read(zoomed)
    if oracle:
        for zone in range(cfg.grid * cfg.grid):
            if zone not in per_zone:
                read = numbers_read(engine.recognize(zone_crop(loaded.image, zone, cfg).image))
                per_zone[zone] = count_found(labels, base | read)
                union |= read
    best = max(per_zone.values())
    return GaugeScore(path.name, labels, found_full, found_zoom, best, count_found(labels, union),
                      crop.zone if crop.zone is not None else -1,
                      tuple(sorted(z for z, f in per_zone.items() if f == best)),
                      (t1 - t0) * 1e3, (t2 - t1) * 1e3, (t3 - t2) * 1e3)


@dataclass(frozen=True)
class ZoneOutcome:
    """One photo under one zone-choice candidate: labels, found at 1×, found with the chosen zoom."""

    labels: int
    found_full: int
    found_zoom: int


def recall(outcomes: Sequence[ZoneOutcome], zoom: bool = True) -> float:
    total = sum(o.labels for o in outcomes)
    found = sum(o.found_zoom if zoom else o.found_full for o in outcomes)
    return found / total if total else float("nan")


CV_GRID = {"gain_per_area": (False, True), "numeric_text_bonus": (1.0, 0.0, 2.0), "verify_top_k": (9, 3, 1)}


def zone_candidates(base: CropConfig) -> list[CropConfig]:
    """The CV grid as configs, the shipped one first (ties keep it)."""
    import itertools

    out = [base]
    for combo in itertools.product(*CV_GRID.values()):
        cfg = CropConfig(**{**base.__dict__, **dict(zip(CV_GRID, combo))})
        if cfg not in out:
            out.append(cfg)
    return out


def run_zone_cv(data: Path, tool: CropZoomTool, k: int, seed: int, limit: int | None) -> str:
    from ledgermind.kfold import cross_validate, stratified_folds

    engine, shipped = tool.engine, tool.config
    assert engine is not None
    items = load_items(data)[:limit]
    candidates = zone_candidates(shipped)
    outcomes: dict[CropConfig, list[ZoneOutcome]] = {c: [] for c in candidates}
    for item in items:
        loaded = load_image(data / "images" / item["image"], tool.image_policy)
        labels = dial_labels(item)
        base = numbers_read(engine.recognize(loaded.image))
        for cfg in candidates:
            tool.config = cfg
            crop = tool.select(loaded, GAUGE_QUESTION)
            zoom = count_found(labels, base | numbers_read(engine.recognize(crop.image)))
            outcomes[cfg].append(ZoneOutcome(len(labels), count_found(labels, base), zoom))
    tool.config = shipped
    # stratum: does 1× OCR already find every label? (zoom can only help on the others)
    folds = stratified_folds([o.found_full == o.labels for o in outcomes[shipped]], k, seed)
    metrics = {"zoom": recall, "full": lambda o: recall(o, zoom=False)}
    report = cross_validate(outcomes, folds, recall, metrics)
    dev = recall(outcomes[shipped])
    best = max(candidates, key=lambda c: recall(outcomes[c]))
    lines = [f"{len(items)} photos, {k}-fold CV over {len(candidates)} zone-choice candidates",
             "| figure | dev (shipped) | dev (best on all) | CV mean ± sd | CV pooled | gap dev−CV |",
             "|---|---|---|---|---|---|",
             f"| zoom recall | {dev:.3f} | {recall(outcomes[best]):.3f} | {report.mean('zoom'):.3f} ± "
             f"{report.spread('zoom'):.3f} | {report.pooled['zoom']:.3f} | {dev - report.pooled['zoom']:+.3f} |",
             f"| full-image recall | {recall(outcomes[shipped], zoom=False):.3f} | | {report.mean('full'):.3f} ± "
             f"{report.spread('full'):.3f} | {report.pooled['full']:.3f} | |",
             f"shipped: {_describe(shipped)}; best on all photos: {_describe(best)}"]
    lines += [f"fold {f.fold}: chose {_describe(f.chosen)} (train recall {f.train_score:.3f}, n_test={f.n_held_out})"
              for f in report.folds]
    lines.append("| candidate (dev, all photos) | zoom recall |")
    lines.append("|---|---|")
    lines += [f"| {_describe(c)} | {recall(outcomes[c]):.3f} |" for c in candidates]
    lines.append(f"dial_label_recall_cv zoom={report.pooled['zoom']:.3f} full={report.pooled['full']:.3f} "
                 f"dev_zoom={dev:.3f} n={len(items)}")
    return "\n".join(lines)


def _describe(cfg: CropConfig) -> str:
    return " ".join(f"{name}={getattr(cfg, name)}" for name in CV_GRID)


def load_items(data: Path) -> list[dict]:
    items_file = data / "items.jsonl"
    if not items_file.is_file():
        raise UserError(f"no items.jsonl in {data} (expected the format of ../shared/data/gauges)")
    return [row.value for row in read_jsonl(items_file, torn_tail=False)]


def run_gauges(data: Path, tool: CropZoomTool, verbose: bool, oracle: bool = True,
               limit: int | None = None) -> list[GaugeScore]:
    scores = []
    for item in load_items(data)[:limit]:
        s = score_gauge(data / "images" / item["image"], item, tool, oracle)
        scores.append(s)
        if verbose:
            print(f"  {s.image[:40]:40s} labels={len(s.labels)} full={s.found_full} zoom={s.found_zoom} "
                  f"oracle={s.found_oracle} zone={s.zone} best={list(s.oracle_zones)} ocr={s.ocr_ms:.0f}ms")
    return scores


def report_gauges(scores: list[GaugeScore], oracle: bool = True) -> str:
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
    if oracle:
        print(f"{'recall full + best zone (oracle)':34s} {sum(s.found_oracle for s in scores) / total:>10.3f}")
        print(f"{'recall full + all zones':34s} {sum(s.found_all for s in scores) / total:>10.3f}")
        print(f"{'items where chosen zone = oracle':34s} {sum(s.zone in s.oracle_zones for s in scores):>10d}")
    print(f"{'items where zoom added a label':34s} {gained:>10d}")
    print(f"{'OCR ms/image (full)':34s} {statistics.mean(s.ocr_ms for s in scores):>10.0f}")
    print(f"{'zone choice ms/image (+read check)':34s} {statistics.mean(s.crop_ms for s in scores):>10.0f}")
    print(f"{'OCR ms/image (zoomed crop)':34s} {statistics.mean(s.zoom_ocr_ms for s in scores):>10.0f}")
    per_image = [s.ocr_ms + s.crop_ms + s.zoom_ocr_ms for s in scores]
    print(f"{'crop-zoom total ms/image':34s} {statistics.mean(per_image):>10.0f}")
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


def run_rotation(paths: Sequence[Path], plain: OCREngine, oriented: OCREngine, policy: ImagePolicy) -> str:
    """Token recall of OCR on turned copies of real images, relative to OCR of the upright image.

    Tokens are numbers and content words (``crop.text_tokens``) of legible lines. ``plain`` reads
    as given; ``oriented`` has the orientation classifier. Images whose upright reading holds no
    token are skipped (nothing to recover).
    """
    angles = (90, 180, 270)
    got = {(a, k): 0 for a in angles for k in ("plain", "oriented")}
    total, used, ms = 0, 0, []
    for path in paths:
        image = load_image(path, policy).image
        ref = text_tokens(ln.text for ln in plain.recognize(image))
        if not ref:
            continue
        used += 1
        total += len(ref)
        for angle in angles:
            turned = image.rotate(-angle, expand=True)  # content turned clockwise by ``angle``
            got[(angle, "plain")] += len(ref & text_tokens(ln.text for ln in plain.recognize(turned)))
            t0 = time.perf_counter()
            got[(angle, "oriented")] += len(ref & text_tokens(ln.text for ln in oriented.recognize(turned)))
            ms.append((time.perf_counter() - t0) * 1e3)
    if not total:
        raise UserError("no image with legible text to rotate")
    print(f"{'turned by':12s} {'plain':>8s} {'oriented':>9s}")
    for angle in angles:
        print(f"{angle:>9d}°  {got[(angle, 'plain')] / total:>8.3f} {got[(angle, 'oriented')] / total:>9.3f}")
    print(f"{'images / tokens':22s} {used} / {total}; oriented OCR {statistics.mean(ms):.0f} ms/image")
    mean = {k: sum(got[(a, k)] for a in angles) / (len(angles) * total) for k in ("plain", "oriented")}
    return f"rotated_token_recall plain={mean['plain']:.3f} oriented={mean['oriented']:.3f} n={used}"


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, default=None, help="gauge folder (items.jsonl + images/)")
    ap.add_argument("--config", type=Path, default=REPO / "conf" / "perception" / "cpu.yaml")
    ap.add_argument("--mmmu", action="store_true", help="OCR the MMMU-Pro subset images instead")
    ap.add_argument("--rotation", action="store_true", help="OCR turned copies of the images (orientation)")
    ap.add_argument("--zoom", type=float, default=None, help="override crop zoom (default: config)")
    ap.add_argument("--margin", type=float, default=None, help="override crop margin (default: config)")
    ap.add_argument("--verify-top-k", type=int, default=None, help="override crop.verify_top_k (default: config)")
    ap.add_argument("--no-oracle", action="store_true", help="skip zooming every zone (faster)")
    ap.add_argument("--limit", type=int, default=None, help="first N items/images only")
    ap.add_argument("--folds", type=int, default=0, help="K-fold CV of the zone choice's weights (gauges)")
    ap.add_argument("--seed", type=int, default=0, help="fold assignment seed")
    ap.add_argument("--ocr-memo", default=None,
                    help="folder of the on-disk OCR memo (default: <perception cache>/eval_ocr; 'off' = none)")
    ap.add_argument("-v", "--verbose", action="store_true")
    args = ap.parse_args(argv)
    try:
        from hydra.utils import instantiate

        cfg = OmegaConf.load(args.config)
        tools = build_tools(cfg)
        tool: CropZoomTool = tools["crop_zoom"]  # type: ignore[assignment]
        overrides = {k: v for k, v in (("zoom", args.zoom), ("margin", args.margin),
                                       ("verify_top_k", args.verify_top_k)) if v is not None}
        if overrides:
            tool.config = CropConfig(**{**tool.config.__dict__, **overrides})
        engine, policy = tool.engine, tool.image_policy
        assert engine is not None
        if args.ocr_memo != "off":
            OCRDiskMemo(engine, Path(args.ocr_memo) if args.ocr_memo else default_perception_cache_dir() / "eval_ocr")
        if args.mmmu:
            print(run_mmmu(args.data or SHARED / "mmmu_pro_subset", engine, policy))
        elif args.rotation:
            folder = args.data or SHARED / "gauges"
            paths = sorted((folder / "images").glob("*"))[: args.limit]
            plain_cfg = OmegaConf.merge(cfg.ocr, {"orientation": None})
            oriented_cfg = OmegaConf.merge(cfg.ocr, {"orientation": cfg.ocr.get("orientation") or {
                "_target_": f"{OrientationClassifier.__module__}.OrientationClassifier"}})
            print(run_rotation(paths, instantiate(plain_cfg), instantiate(oriented_cfg), policy))
        elif args.folds:
            print(run_zone_cv(args.data or SHARED / "gauges", tool, args.folds, args.seed, args.limit))
        else:
            oracle = not args.no_oracle
            scores = run_gauges(args.data or SHARED / "gauges", tool, args.verbose, oracle, args.limit)
            print(report_gauges(scores, oracle))
    except UserError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""OCR on real images beyond the gauges: the MMMU-Pro subset's images and turned photos.

Why: the OCR engine's settings are chosen on gauges; these two surveys check it elsewhere.
``run_mmmu`` reads every MMMU-Pro subset image (how many yield text, median time);
``run_rotation`` turns real photos by 90/180/270° and measures how much of the upright reading
OCR recovers with and without the orientation classifier.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Sequence
from pathlib import Path

from omegaconf import DictConfig, OmegaConf

from ledgermind.confutil import instantiate
from ledgermind.errors import UserError
from perception.crop import text_tokens
from perception.image_io import ImagePolicy, load_image
from perception.ocr import OCREngine
from perception.orientation import OrientationClassifier


def run_mmmu(data: Path, engine: OCREngine, policy: ImagePolicy) -> str:
    """Print the survey table; return the machine-readable last line."""
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


def rotation_engines(ocr_cfg: DictConfig) -> tuple[OCREngine, OCREngine]:
    """The OCR node's engine without and with an orientation classifier (the node's own, if any)."""
    classifier = ocr_cfg.get("orientation") or {
        "_target_": f"{OrientationClassifier.__module__}.OrientationClassifier"
    }
    plain, oriented = (
        instantiate(OmegaConf.merge(ocr_cfg, {"orientation": o}), "ocr") for o in (None, classifier)
    )
    return plain, oriented


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

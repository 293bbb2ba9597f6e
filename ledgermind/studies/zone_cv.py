"""K-fold cross-validation of the crop-zoom zone choice's weights on real gauge photos.

Why: the zone choice has free weights (``gain_per_area``, ``numeric_text_bonus``,
``verify_top_k``); chosen on the same photos they are scored on, the recall flatters them. Every
candidate of a small grid (the shipped config first, so ties keep it) chooses a zone on every
photo (OCR readings come from the on-disk memo, so this costs no OCR once the photos were read);
per fold the candidate with the best zoom recall on the other K−1 folds is scored on the held-out
fold. Reported: dev (shipped config, all photos), held-out mean ± spread, pooled held-out recall,
full-image recall and the dev−CV gap.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ledgermind.markdown import md_table
from ledgermind.studies.gauges import GAUGE_QUESTION, count_found, dial_labels, load_items, numbers_read
from ledgermind.studies.kfold import cross_validate, stratified_folds
from perception.crop import CropConfig
from perception.image_io import load_image
from perception.tools import CropZoomTool


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


CV_HEAD = ("figure", "dev (shipped)", "dev (best on all)", "CV mean ± sd", "CV pooled", "gap dev−CV")
CV_GRID = {"gain_per_area": (False, True), "numeric_text_bonus": (1.0, 0.0, 2.0), "verify_top_k": (9, 3, 1)}


def zone_candidates(base: CropConfig) -> list[CropConfig]:
    """The CV grid as configs, the shipped one first (ties keep it)."""
    combos = itertools.product(*CV_GRID.values())
    grid = (CropConfig(**{**base.__dict__, **dict(zip(CV_GRID, c))}) for c in combos)
    return list(dict.fromkeys([base, *grid]))


def zone_outcomes(
    data: Path, tool: CropZoomTool, candidates: Sequence[CropConfig], limit: int | None
) -> dict[CropConfig, list[ZoneOutcome]]:
    """Every candidate's zone choice on every photo (the tool's config is restored afterwards)."""
    engine, shipped = tool.engine, tool.config
    assert engine is not None
    outcomes: dict[CropConfig, list[ZoneOutcome]] = {c: [] for c in candidates}
    for item in load_items(data)[:limit]:
        loaded = load_image(data / "images" / item["image"], tool.image_policy)
        labels = dial_labels(item)
        base = numbers_read(engine.recognize(loaded.image))
        for cfg in candidates:
            tool.config = cfg
            crop = tool.select(loaded, GAUGE_QUESTION)
            zoom = count_found(labels, base | numbers_read(engine.recognize(crop.image)))
            outcomes[cfg].append(ZoneOutcome(len(labels), count_found(labels, base), zoom))
    tool.config = shipped
    return outcomes


def run_zone_cv(data: Path, tool: CropZoomTool, k: int, seed: int, limit: int | None) -> str:
    """The study's report: dev vs held-out recall, per-fold choices and every candidate's dev recall."""
    shipped = tool.config
    candidates = zone_candidates(shipped)
    outcomes = zone_outcomes(data, tool, candidates, limit)
    n = len(outcomes[shipped])
    # stratum: does 1× OCR already find every label? (zoom can only help on the others)
    folds = stratified_folds([o.found_full == o.labels for o in outcomes[shipped]], k, seed)
    metrics = {"zoom": recall, "full": lambda o: recall(o, zoom=False)}
    report = cross_validate(outcomes, folds, recall, metrics)
    dev = recall(outcomes[shipped])
    best = max(candidates, key=lambda c: recall(outcomes[c]))
    lines = [
        f"{n} photos, {k}-fold CV over {len(candidates)} zone-choice candidates",
        *md_table(CV_HEAD, [["zoom recall", *report.cells("zoom", dev, recall(outcomes[best]))]], rest="---"),
        # the same table's second row: full-image recall is no choice's objective (no best, no gap)
        f"| full-image recall | {recall(outcomes[shipped], zoom=False):.3f} | | {report.mean('full'):.3f} ± "
        f"{report.spread('full'):.3f} | {report.pooled['full']:.3f} | |",
        f"shipped: {describe(shipped)}; best on all photos: {describe(best)}",
    ]
    lines += [
        f"fold {f.fold}: chose {describe(f.chosen)} (train recall {f.train_score:.3f}, n_test={f.n_held_out})"
        for f in report.folds
    ]
    rows = [[describe(c), f"{recall(outcomes[c]):.3f}"] for c in candidates]
    lines += md_table(["candidate (dev, all photos)", "zoom recall"], rows, rest="---")
    lines.append(
        f"dial_label_recall_cv zoom={report.pooled['zoom']:.3f} full={report.pooled['full']:.3f} "
        f"dev_zoom={dev:.3f} n={n}"
    )
    return "\n".join(lines)


def describe(cfg: CropConfig) -> str:
    """The grid fields of one candidate, ``name=value`` separated by spaces."""
    return " ".join(f"{name}={getattr(cfg, name)}" for name in CV_GRID)

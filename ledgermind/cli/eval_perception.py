"""Measure the perception tools on real images.

Gauges (default): dial-label recall of OCR on the full image and with the crop-zoom tool's zone
(:mod:`ledgermind.studies.gauges`), with the per-image best-zone oracle (``--no-oracle`` skips
it). The last line is machine-readable: ``dial_label_recall full=<r> zoom=<r> n=<items>``.
``--folds K``: cross-validate the zone choice's weights (:mod:`ledgermind.studies.zone_cv`).
``--rotation``: OCR recall on turned photos with and without the orientation classifier;
``--mmmu``: OCR every image of the MMMU-Pro subset (:mod:`ledgermind.studies.ocr_survey`).
OCR readings are memoised on disk (:mod:`ledgermind.studies.ocr_memo`).

    python scripts/eval_perception.py [--data DIR] [--config conf/perception/cpu.yaml] [--mmmu | --rotation]
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

from omegaconf import DictConfig, OmegaConf

from ledgermind.cli.commands import run_study
from ledgermind.confutil import shared_data_dir
from ledgermind.errors import UserError
from ledgermind.runs.provenance import REPO_ROOT as REPO
from ledgermind.studies.gauges import crop_tool, report_gauges, run_gauges
from ledgermind.studies.ocr_memo import OCRDiskMemo
from ledgermind.studies.ocr_survey import rotation_engines, run_mmmu, run_rotation
from ledgermind.studies.zone_cv import run_zone_cv
from perception.cache import default_perception_cache_dir


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, default=None, help="gauge folder (items.jsonl + images/)")
    ap.add_argument("--config", type=Path, default=REPO / "conf" / "perception" / "cpu.yaml")
    ap.add_argument("--mmmu", action="store_true", help="OCR the MMMU-Pro subset images instead")
    ap.add_argument("--rotation", action="store_true", help="OCR turned copies of the images (orientation)")
    ap.add_argument("--zoom", type=float, default=None, help="override crop zoom (default: config)")
    ap.add_argument("--margin", type=float, default=None, help="override crop margin (default: config)")
    ap.add_argument(
        "--verify-top-k", type=int, default=None, help="override crop.verify_top_k (default: config)"
    )
    ap.add_argument("--no-oracle", action="store_true", help="skip zooming every zone (faster)")
    ap.add_argument("--limit", type=int, default=None, help="first N items/images only")
    ap.add_argument("--folds", type=int, default=0, help="K-fold CV of the zone choice's weights (gauges)")
    ap.add_argument("--seed", type=int, default=0, help="fold assignment seed")
    ap.add_argument(
        "--ocr-memo",
        default=None,
        help="folder of the on-disk OCR memo (default: <perception cache>/eval_ocr; 'off' = none)",
    )
    ap.add_argument("-v", "--verbose", action="store_true")
    args = ap.parse_args(argv)
    return run_study(lambda: study(args), args.folds)


def study(args: argparse.Namespace) -> str:
    """The report the options ask for (gauges by default)."""
    if not args.config.is_file():
        raise UserError(f"--config {args.config}: no such file")
    cfg = OmegaConf.load(args.config)
    if not isinstance(cfg, DictConfig):
        raise UserError(f"--config {args.config}: not a perception config (a mapping)")
    overrides = {
        k: v
        for k, v in (("zoom", args.zoom), ("margin", args.margin), ("verify_top_k", args.verify_top_k))
        if v is not None
    }
    tool = crop_tool(cfg, **overrides)
    engine, policy = tool.engine, tool.image_policy
    assert engine is not None
    if args.ocr_memo != "off":
        OCRDiskMemo(
            engine, Path(args.ocr_memo) if args.ocr_memo else default_perception_cache_dir() / "eval_ocr"
        )
    gauges = args.data or shared_data_dir() / "gauges"
    if args.mmmu:
        return run_mmmu(args.data or shared_data_dir() / "mmmu_pro_subset", engine, policy)
    if args.rotation:
        return run_rotation(
            sorted((gauges / "images").glob("*"))[: args.limit], *rotation_engines(cfg.ocr), policy
        )
    if args.folds:
        return run_zone_cv(gauges, tool, args.folds, args.seed, args.limit)
    scores = run_gauges(gauges, tool, args.verbose, not args.no_oracle, args.limit)
    return report_gauges(scores, not args.no_oracle)

"""The gauge study (scripts/eval_perception.py): label parsing, numeric matching, the OCR memo, the
zone-choice grid and the machine-readable last line."""

from __future__ import annotations

import json
import re

import pytest
from omegaconf import OmegaConf

from ledgermind.errors import UserError
from ledgermind.studies.gauges import (
    count_found,
    crop_tool,
    dial_labels,
    load_items,
    numbers_read,
    report_gauges,
    run_gauges,
)
from ledgermind.studies.ocr_memo import OCRDiskMemo
from ledgermind.studies.zone_cv import ZoneOutcome, recall, zone_candidates
from perception.ocr import make_line
from perception.tools import CropZoomTool


def test_dial_labels_and_matching():
    assert dial_labels({"min": "-0.1", "max": "0.9", "tick_pos": "0.2,0.4"}) == (-0.1, 0.2, 0.4, 0.9)
    assert dial_labels({"min": "0", "max": "5"}) == (0.0, 5.0)  # tick_pos is optional
    lines = [make_line(t, [(0, 0), (1, 0), (1, 1), (0, 1)], 0.9) for t in ["=0.1", "0,4", "psi", "1.20"]]
    numbers = numbers_read(lines)
    assert count_found((-0.1, 0.2, 0.4, 0.9), numbers) == 2
    assert count_found((1.2,), numbers) == 1


def test_missing_data_dir_is_a_clear_error(tmp_path):
    with pytest.raises(UserError, match="no items.jsonl"):
        load_items(tmp_path)


@pytest.mark.slow
def test_runs_on_a_rendered_gauge_set(tmp_path, render, repo_root):
    (tmp_path / "images").mkdir()
    drawn = render({"0": (60, 400, 40), "50": (290, 40, 40), "100": (500, 400, 40), "25": (90, 150, 40)})
    drawn.image.save(tmp_path / "images" / "g.png")
    item = {"image": "g.png", "min": "0", "max": "100", "tick_pos": "25,50"}
    (tmp_path / "items.jsonl").write_text(json.dumps(item) + "\n")
    tool = crop_tool(OmegaConf.load(repo_root / "conf" / "perception" / "cpu.yaml"))  # the script's default
    last = report_gauges(run_gauges(tmp_path, tool, verbose=False))
    match = re.fullmatch(r"dial_label_recall full=([\d.]+) zoom=([\d.]+) n=1", last)
    assert match and float(match.group(1)) == 1.0 and float(match.group(2)) == 1.0


def _counting_engine():
    from perception.ocr import OCREngine

    class Engine(OCREngine):
        reads = 0

        def _recognize(self, image):
            Engine.reads += 1
            red = (255, 0, 0) in {c for _, c in image.convert("RGB").getcolors(1 << 16) or []}
            return [make_line("40", [(0, 0), (9, 0), (9, 9), (0, 9)], 0.95)] if red else []

    return Engine


def test_ocr_disk_memo_reads_each_image_once_across_engines(tmp_path):
    from PIL import Image

    Engine = _counting_engine()
    img = Image.new("RGB", (40, 40), "white")
    img.paste((255, 0, 0), (5, 5, 15, 15))
    for _ in range(2):  # a fresh engine (a new process) finds the first one's reading on disk
        engine = Engine()
        OCRDiskMemo(engine, tmp_path / "memo")
        assert [ln.text for ln in engine.recognize(img)] == ["40"]
    assert Engine.reads == 1
    other = Engine(min_confidence=0.5)  # other settings: another key
    OCRDiskMemo(other, tmp_path / "memo")
    other.recognize(img)
    assert Engine.reads == 2


def test_zone_cv_grid_starts_with_the_shipped_config():
    from perception.crop import CropConfig

    shipped = CropConfig(numeric_text_bonus=1.0)
    grid = zone_candidates(shipped)
    assert grid[0] == shipped and len(grid) == len(set(grid)) == 2 * 3 * 3
    assert {cfg.verify_top_k for cfg in grid} == {9, 3, 1}  # box density alone (k=1) is a candidate
    outcomes = [ZoneOutcome(4, 1, 3), ZoneOutcome(2, 2, 2)]
    assert recall(outcomes) == pytest.approx(5 / 6) and recall(outcomes, zoom=False) == 0.5


def test_zone_cv_reports_held_out_recall_and_restores_the_tool(tmp_path):
    """Two photos, a red mark only in the bottom-right zone: the full image reads "40" already (the
    mark is in it), so every candidate's zoom recall equals the full-image recall, and the report's
    machine-readable line says so."""
    from PIL import Image

    from ledgermind.studies.zone_cv import run_zone_cv

    (tmp_path / "images").mkdir()
    rows = []
    for name in ("a.png", "b.png"):
        img = Image.new("RGB", (90, 90), "white")
        img.paste((255, 0, 0), (70, 70, 85, 85))
        img.save(tmp_path / "images" / name)
        rows.append(json.dumps({"image": name, "min": "0", "max": "40"}))
    (tmp_path / "items.jsonl").write_text("\n".join(rows) + "\n")
    tool = CropZoomTool(engine=_counting_engine()())
    shipped = tool.config
    report = run_zone_cv(tmp_path, tool, k=2, seed=0, limit=None)
    assert tool.config is shipped
    assert (
        report.splitlines()[0]
        == f"2 photos, 2-fold CV over {len(zone_candidates(shipped))} zone-choice candidates"
    )
    assert report.splitlines()[-1] == "dial_label_recall_cv zoom=0.500 full=0.500 dev_zoom=0.500 n=2"

"""scripts/eval_perception.py: label parsing, numeric matching and the machine-readable last line."""

from __future__ import annotations

import importlib.util
import json
import re
import sys

import pytest

from perception.ocr import make_line


@pytest.fixture(scope="module")
def script(repo_root):
    spec = importlib.util.spec_from_file_location("eval_perception", repo_root / "scripts" / "eval_perception.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["eval_perception"] = module
    spec.loader.exec_module(module)
    return module


def test_dial_labels_and_matching(script):
    assert script.dial_labels({"min": "-0.1", "max": "0.9", "tick_pos": "0.2,0.4"}) == (-0.1, 0.2, 0.4, 0.9)
    assert script.dial_labels({"min": "0", "max": "5"}) == (0.0, 5.0)  # tick_pos is optional
    lines = [make_line(t, [(0, 0), (1, 0), (1, 1), (0, 1)], 0.9) for t in ["=0.1", "0,4", "psi", "1.20"]]
    numbers = script.numbers_read(lines)
    assert script.count_found((-0.1, 0.2, 0.4, 0.9), numbers) == 2
    assert script.count_found((1.2,), numbers) == 1


def test_missing_data_dir_is_a_clear_error(script, tmp_path, capsys):
    assert script.main(["--data", str(tmp_path)]) == 2
    assert "no items.jsonl" in capsys.readouterr().err


@pytest.mark.slow
def test_runs_on_a_rendered_gauge_set(script, tmp_path, render, capsys):
    (tmp_path / "images").mkdir()
    drawn = render({"0": (60, 400, 40), "50": (290, 40, 40), "100": (500, 400, 40), "25": (90, 150, 40)})
    drawn.image.save(tmp_path / "images" / "g.png")
    item = {"image": "g.png", "min": "0", "max": "100", "tick_pos": "25,50"}
    (tmp_path / "items.jsonl").write_text(json.dumps(item) + "\n")
    assert script.main(["--data", str(tmp_path)]) == 0
    last = capsys.readouterr().out.strip().splitlines()[-1]
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


def test_ocr_disk_memo_reads_each_image_once_across_engines(script, tmp_path):
    from PIL import Image

    Engine = _counting_engine()
    img = Image.new("RGB", (40, 40), "white")
    img.paste((255, 0, 0), (5, 5, 15, 15))
    for _ in range(2):  # a fresh engine (a new process) finds the first one's reading on disk
        engine = Engine()
        script.OCRDiskMemo(engine, tmp_path / "memo")
        assert [ln.text for ln in engine.recognize(img)] == ["40"]
    assert Engine.reads == 1
    other = Engine(min_confidence=0.5)  # other settings: another key
    script.OCRDiskMemo(other, tmp_path / "memo")
    other.recognize(img)
    assert Engine.reads == 2


def test_zone_cv_grid_starts_with_the_shipped_config(script):
    from perception.crop import CropConfig

    shipped = CropConfig(numeric_text_bonus=1.0)
    grid = script.zone_candidates(shipped)
    assert grid[0] == shipped and len(grid) == len(set(grid)) == 2 * 3 * 3
    assert {cfg.verify_top_k for cfg in grid} == {9, 3, 1}  # box density alone (k=1) is a candidate
    outcomes = [script.ZoneOutcome(4, 1, 3), script.ZoneOutcome(2, 2, 2)]
    assert script.recall(outcomes) == pytest.approx(5 / 6) and script.recall(outcomes, zoom=False) == 0.5

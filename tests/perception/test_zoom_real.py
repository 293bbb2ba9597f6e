"""Crop-zoom on real gauge photos: the 2.5× zoom reaches OCR, the read check picks a zone whose
zoom reads what the full image could not, and the zoom never lowers what was read."""

from __future__ import annotations

import pytest

from ledgermind.studies.gauges import report_gauges, score_gauge
from perception.crop import CropConfig, expand, parse_numbers, zone_boxes, zone_crop
from perception.image_io import load_image
from perception.ocr import OCREngine
from perception.tools import CropZoomTool, OCRTool

# Small real photos (~300 px) keep these tests fast. Their labels come from items.jsonl.
SMALL_GAUGE = "pressureGauge_293_jpg.rf.410c07f26f9fc16ed62982d927b3c42d.jpg"  # labels 0, 2, 4, 10
SECOND_GAUGE = "IMG_6306_JPG_jpg.rf.c8410f412142e1df9f1e8fa6161449a3.jpg"  # labels 0, 20, 40, 100


class _SizeRecorder(OCREngine):
    """Records the pixel size of every image it is asked to read (and reads nothing)."""

    name = "recorder"

    def __init__(self) -> None:
        super().__init__()
        self.sizes: list[tuple[int, int]] = []

    def _recognize(self, image):
        self.sizes.append(image.size)
        return []


def _numbers(observations) -> set[float]:
    return {abs(v) for o in observations for v in parse_numbers(o.text)}


def test_region_ocr_reads_zoomed_pixels_by_default(gauges):
    engine = _SizeRecorder()
    out = OCRTool(engine).invoke(image=gauges / "images" / SMALL_GAUGE, region=[0, 0, 100, 80])
    assert out.error is None
    assert engine.sizes == [(250, 200)]  # App. A: z = 2.5 reaches the engine
    OCRTool(engine, region_zoom=1.0).invoke(image=gauges / "images" / SMALL_GAUGE, region=[0, 0, 100, 80])
    assert engine.sizes[-1] == (100, 80)


def test_build_tools_gives_region_ocr_the_crop_zoom(repo_root):
    from omegaconf import OmegaConf

    from perception.tools import build_tools

    cfg = OmegaConf.load(repo_root / "conf" / "perception" / "cpu.yaml")
    cfg.crop.zoom = 3.0
    assert build_tools(cfg)["ocr"].region_zoom == 3.0


@pytest.mark.slow
def test_region_ocr_reads_exactly_the_zoomed_crop_the_model_is_shown(engine, gauges):
    """Zone 3 of a small real gauge: the OCR tool's region read is the crop-zoom tool's 2.5× image
    (same pixels, so the engine's memo answers the second call), its labels, mapped back inside."""
    path = gauges / "images" / SMALL_GAUGE
    loaded = load_image(path)
    region = expand(zone_boxes(*loaded.size)[3], CropConfig().margin, loaded.size)
    shown = CropZoomTool(engine=engine).invoke(image=path, bbox=region.as_list()).artifacts["image"]
    assert shown.size == (round(region.width * 2.5), round(region.height * 2.5))
    read = OCRTool(engine).invoke(image=path, region=region.as_list())
    assert [o.text for o in read.observations] == [ln.text for ln in engine.recognize(shown)]
    assert {2.0, 4.0} <= _numbers(read.observations)  # dial labels printed in that zone
    assert all(o.meta["zoom"] == 2.5 for o in read.observations)
    for o in read.observations:  # boxes come back in the photo's own frame, inside the region
        assert region.x0 - 2 <= o.bbox.x0 and o.bbox.x1 <= region.x1 + 2
        assert region.y0 - 2 <= o.bbox.y0 and o.bbox.y1 <= region.y1 + 2


@pytest.mark.slow
def test_read_check_picks_a_zone_that_adds_labels(engine, gauges):
    path = gauges / "images" / SMALL_GAUGE
    tool = CropZoomTool(engine=engine)
    out = tool.invoke(image=path, question="What is the reading of the gauge?")
    assert out.ok
    meta = out.observations[0].meta
    gains = dict(meta["zone_gains"])
    assert len(gains) == 9 and meta["zone"] == max(gains, key=lambda z: (gains[z], -list(gains).index(z)))
    full = {abs(v) for ln in engine.recognize(load_image(path).image) for v in parse_numbers(ln.text)}
    zoom = {abs(v) for ln in engine.recognize(out.artifacts["image"]) for v in parse_numbers(ln.text)}
    labels = {0.0, 2.0, 4.0, 10.0}
    assert len(labels & (full | zoom)) > len(labels & full)  # the chosen zoom adds dial labels
    without = CropZoomTool(engine=engine, config=CropConfig(verify_top_k=0)).invoke(
        image=path, question="What is the reading of the gauge?"
    )
    assert "zone_gains" not in without.observations[0].meta  # proposal score alone: no read check


@pytest.mark.slow
@pytest.mark.parametrize("name", [SMALL_GAUGE, SECOND_GAUGE])
def test_zoom_never_below_full_and_oracle_bounds(engine, gauges, name):
    """By construction: full ≤ full+zoom ≤ full+best zone ≤ full+all zones (the zoom only adds lines)."""
    import json

    item = next(json.loads(x) for x in (gauges / "items.jsonl").read_text().splitlines() if name in x)
    s = score_gauge(gauges / "images" / name, item, CropZoomTool(engine=engine))
    assert s.found_full <= s.found_zoom <= s.found_oracle <= s.found_all <= len(s.labels)
    assert s.zone in range(9) and s.oracle_zones and s.found_zoom > s.found_full
    line = report_gauges([s])
    assert line.startswith("dial_label_recall full=") and line.endswith(" n=1")


def test_zone_crop_matches_the_selection_geometry():
    from PIL import Image

    img = Image.new("RGB", (300, 240), "white")
    crop = zone_crop(img, 8)
    assert crop.zone == 8 and crop.region == expand(zone_boxes(300, 240)[8], 0.15, (300, 240))
    assert crop.image.size == (round(crop.region.width * 2.5), round(crop.region.height * 2.5))

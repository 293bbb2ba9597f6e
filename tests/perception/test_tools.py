"""The perception tools as the pipeline sees them: sealed ToolOutputs, original coordinates, T1 on failure."""

from __future__ import annotations

import io
import re

import pytest
from PIL import Image

from ledgermind.tools.base import BBox, ToolKind
from perception.image_io import ImagePolicy
from perception.ocr import OCREngine, make_line
from perception.tools import CropZoomTool, OCRTool, as_bbox


class _StubEngine(OCREngine):
    """Reports one line wherever the image is not white (enough to test coordinate plumbing)."""

    name = "stub"

    def _recognize(self, image):
        box = Image.eval(image.convert("L"), lambda v: 255 if v < 128 else 0).getbbox()  # dark pixels
        if box is None:
            return []
        x0, y0, x1, y1 = box
        return [make_line("ink", [(x0, y0), (x1, y0), (x1, y1), (x0, y1)], 0.9)]


def _ink_image(size=(400, 300), box=(250, 200, 290, 230)) -> Image.Image:
    img = Image.new("RGB", size, "white")
    img.paste((0, 0, 0), box)
    return img


def test_tools_declare_their_kind():
    assert OCRTool.kind is ToolKind.OCR and CropZoomTool.kind is ToolKind.CROP


def test_ocr_region_boxes_map_back_to_the_original_frame():
    tool = OCRTool(_StubEngine())
    img = _ink_image()
    full = tool.invoke(image=img)
    assert full.ok and full.observations[0].bbox.as_list() == [250, 200, 290, 230]
    part = tool.invoke(image=img, region=[200, 150, 400, 300])
    assert part.ok and part.observations[0].bbox.as_list() == [250, 200, 290, 230]
    assert part.observations[0].score == 0.9 and part.observations[0].meta["engine"] == "stub"


def test_ocr_boxes_are_in_original_coordinates_after_downscaling():
    tool = OCRTool(_StubEngine(), ImagePolicy(max_side=200))  # 400×300 → 200×150
    out = tool.invoke(image=_ink_image())
    assert out.observations[0].bbox.as_list() == pytest.approx([250, 200, 290, 230], abs=2)


def test_empty_ocr_is_an_empty_observation_list_not_an_error():
    out = OCRTool(_StubEngine()).invoke(image=Image.new("RGB", (100, 100), "white"))
    assert out.error is None and out.observations == () and not out.ok  # T1 sees it


@pytest.mark.parametrize(
    "image, message",
    [
        ("/definitely/missing.png", "ImageNotFoundError: image not found"),
        (b"not an image at all", "NotAnImageError"),
        (Image.new("RGB", (1, 1)), "ImageTooSmallError"),
    ],
)
def test_bad_images_become_error_tool_outputs(image, message):
    out = OCRTool(_StubEngine()).invoke(image=image)
    assert out.error is not None and message in out.error and not out.ok


def test_truncated_file_is_an_error_output(tmp_path):
    buf = io.BytesIO()
    Image.effect_noise((300, 200), 50).convert("RGB").save(buf, format="JPEG")
    path = tmp_path / "half.jpg"
    path.write_bytes(buf.getvalue()[:1500])
    out = CropZoomTool(engine=None, use_ocr=False).invoke(image=str(path), question="what is the reading?")
    assert out.error and "CorruptImageError" in out.error


def test_bad_region_messages():
    tool = OCRTool(_StubEngine())
    out = tool.invoke(image=_ink_image(), region=[1, 2, 3])
    assert "region must be [x0, y0, x1, y1]" in out.error
    out = tool.invoke(image=_ink_image(), region=[500, 500, 600, 600])
    assert "does not overlap the 400x300 image" in out.error
    assert as_bbox({"x0": 1, "y0": 2, "x1": 3, "y1": 4}) == BBox(1, 2, 3, 4)


def test_crop_zoom_tool_question_mode():
    tool = CropZoomTool(engine=_StubEngine())
    out = tool.invoke(image=_ink_image((300, 300), (220, 220, 260, 250)), question="What is the reading?")
    assert out.ok and len(out.observations) == 1
    obs = out.observations[0]
    assert re.fullmatch(r"crop zone 8 region \[\d+, \d+, \d+, \d+\] scale 2\.5\d*", obs.text), obs.text
    assert obs.meta["zone"] == 8 and obs.meta["scale"] == pytest.approx(2.5, abs=0.02)
    assert obs.bbox.as_list() == [185, 185, 300, 300]
    crop = out.artifacts["image"]
    assert crop.size == (round(115 * 2.5), round(115 * 2.5))
    again = tool.invoke(image=_ink_image((300, 300), (220, 220, 260, 250)), question="What is the reading?")
    assert again.observations[0] == obs and again.artifacts["image"].tobytes() == crop.tobytes()


def test_crop_zoom_tool_bbox_and_perturbation_in_original_coordinates():
    tool = CropZoomTool(engine=None, use_ocr=False, image_policy=ImagePolicy(max_side=500))
    img = Image.new("RGB", (1000, 800), "white")  # loaded at 500×400
    out = tool.invoke(image=img, bbox=[100, 100, 300, 200])
    obs = out.observations[0]
    assert obs.text.startswith("crop bbox region [100, 100, 300, 200]")
    assert obs.bbox.as_list() == [100, 100, 300, 200] and obs.meta["zone"] is None
    assert out.artifacts["image"].size == (250, 125)  # 100×50 loaded px × 2.5
    assert obs.meta["scale"] == pytest.approx(1.25)  # zoomed px per original px
    moved = tool.invoke(image=img, bbox=[100, 100, 300, 200], perturb_seed=7).observations[0].bbox
    assert moved != obs.bbox and 0 <= moved.x0 and moved.x1 <= 1000 and moved.y1 <= 800


def test_crop_zoom_tool_zoom_input_overrides_the_configured_zoom_for_that_call():
    tool = CropZoomTool(engine=None, use_ocr=False)
    img = Image.new("RGB", (400, 300), "white")
    closer = tool.invoke(image=img, bbox=[100, 100, 140, 120], zoom=5.0)
    assert closer.artifacts["image"].size == (200, 100) and closer.observations[0].meta["zoom"] == 5.0
    default = tool.invoke(image=img, bbox=[100, 100, 140, 120])  # App. A's z = 2.5 stays the default
    assert default.artifacts["image"].size == (100, 50) and default.observations[0].meta["zoom"] == 2.5
    assert tool.config.zoom == 2.5 and "zoom" not in default.inputs


def test_crop_zoom_needs_a_question_or_a_bbox():
    out = CropZoomTool(engine=None, use_ocr=False).invoke(image=_ink_image())
    assert "needs a question" in out.error


@pytest.mark.slow
def test_real_ocr_tool_on_rendered_text(engine, render, covers):
    drawn = render({"Voltage 230 V": (300, 360, 30)})
    out = OCRTool(engine).invoke(image=drawn.image)
    texts = [o.text for o in out.observations]
    assert "Voltage 230 V" in texts
    obs = out.observations[texts.index("Voltage 230 V")]
    assert covers(obs.bbox, drawn.boxes["Voltage 230 V"], tol=6) and obs.score >= 0.8
    flat = OCRTool(engine, region_zoom=1.0).invoke(image=drawn.image, region=[250, 300, 640, 480])
    assert " ".join(o.text for o in flat.observations) == "Voltage 230 V"  # may come split into words
    boxes = [o.bbox for o in flat.observations]
    hull = BBox(
        min(b.x0 for b in boxes), min(b.y0 for b in boxes), max(b.x1 for b in boxes), max(b.y1 for b in boxes)
    )
    assert hull.iou(obs.bbox) > 0.8  # same place in the original frame
    # default 2.5× region read: the words stay, in the same place; a lone large glyph ('V', 75 px
    # tall once zoomed) reads below the 0.8 legibility bar (0.68), a known cost of zooming big print
    zoomed = OCRTool(engine).invoke(image=drawn.image, region=[250, 300, 640, 480])
    by_text = {o.text: o.bbox for o in zoomed.observations}
    assert {"Voltage", "230"} <= set(by_text)
    for o in flat.observations:
        if o.text in by_text:
            assert by_text[o.text].iou(o.bbox) > 0.8

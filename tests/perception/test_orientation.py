"""Text orientation: exact geometry of turning and mapping back, and real OCR of turned photos."""

from __future__ import annotations

import pytest
from PIL import Image

from perception.crop import text_tokens
from perception.image_io import load_image
from perception.ocr import OCREngine, legible_mass, make_line
from perception.orientation import ANGLES, OrientationClassifier, rotate_points, upright

GAUGE = "IMG_6306_JPG_jpg.rf.c8410f412142e1df9f1e8fa6161449a3.jpg"  # small real photo with clear labels


def _marked(size=(40, 30), at=(5, 3)) -> Image.Image:
    img = Image.new("RGB", size, "white")
    img.putpixel(at, (255, 0, 0))
    return img


@pytest.mark.parametrize("angle", ANGLES)
def test_upright_undoes_a_clockwise_turn_and_points_map_back(angle):
    img = _marked()
    turned = img.rotate(-angle, expand=True)  # content turned clockwise by angle
    back = upright(turned, angle)
    assert back.size == img.size and back.tobytes() == img.tobytes()
    # the red pixel's centre in the upright image maps to its centre in the turned image
    ((ux, uy),) = [
        (x, y) for x in range(back.width) for y in range(back.height) if back.getpixel((x, y)) == (255, 0, 0)
    ]
    ((tx, ty),) = rotate_points([(ux + 0.5, uy + 0.5)], angle, turned.size)
    assert turned.getpixel((int(tx), int(ty))) == (255, 0, 0)


def test_rotate_points_rejects_odd_angles():
    with pytest.raises(ValueError, match="one of"):
        rotate_points([(1, 1)], 45, (10, 10))


class _UprightOnly(OCREngine):
    """Reads 'SPEED 40' only when the red mark is top-left, i.e. the image is upright (pixels only)."""

    name = "upright-only"

    def _recognize(self, image):
        w, h = image.size
        red = [(x, y) for x in range(w) for y in range(h) if image.getpixel((x, y)) == (255, 0, 0)]
        if red and red[0][0] < w / 2 and red[0][1] < h / 2:
            return [make_line("SPEED 40", [(10, 10), (30, 10), (30, 20), (10, 20)], 0.95)]
        return [make_line("~", [(0, 0), (2, 0), (2, 2), (0, 2)], 0.6)]


class _FixedGuess:
    def __init__(self, angle: int) -> None:
        self.angle = angle

    def proposal(self, image):
        return self.angle


def test_engine_keeps_the_reading_with_more_legible_text_and_maps_boxes_back():
    turned = _marked((40, 30), (5, 3)).rotate(-90, expand=True)  # 30×40, mark now top-right
    plain = _UprightOnly().recognize(turned)
    assert plain == []
    lines = _UprightOnly(orientation=_FixedGuess(90)).recognize(turned)
    assert [ln.text for ln in lines] == ["SPEED 40"]
    b = lines[0].bbox  # upright box x 10..30, y 10..20 → in the turned 30×40 frame: x 10..20, y 10..30
    assert (b.x0, b.y0, b.x1, b.y1) == (10, 10, 20, 30)
    wrong = _UprightOnly(orientation=_FixedGuess(180)).recognize(
        _marked()
    )  # wrong proposal on an upright image
    assert [ln.text for ln in wrong] == ["SPEED 40"]  # costs a read, never text


def test_legible_mass():
    lines = [make_line("abcd", [(0, 0), (1, 0), (1, 1)], 0.9), make_line("zz", [(0, 0), (1, 0), (1, 1)], 0.5)]
    assert legible_mass(lines, 0.8) == pytest.approx(3.6)


@pytest.mark.slow
def test_classifier_and_oriented_ocr_on_a_turned_real_photo(gauges):
    from perception.ocr import RapidOCREngine

    image = load_image(gauges / "images" / GAUGE).image
    plain = RapidOCREngine(threads=1)
    oriented = RapidOCREngine(threads=1, orientation=OrientationClassifier())
    ref = text_tokens(ln.text for ln in plain.recognize(image))
    assert len(ref) >= 4
    turned = image.rotate(-90, expand=True)
    guess = OrientationClassifier().predict(turned)
    assert guess.angle == 90 and 0.0 <= guess.probability <= 1.0
    lost = ref & text_tokens(ln.text for ln in plain.recognize(turned))
    kept = ref & text_tokens(ln.text for ln in oriented.recognize(turned))
    assert len(kept) >= 0.75 * len(ref) and len(kept) > len(lost)

"""Fixtures for perception tests: fonts, PIL-rendered text images, one shared OCR engine."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest
from matplotlib import font_manager
from PIL import Image, ImageDraw, ImageFont

from ledgermind.tools.base import BBox


@dataclass(frozen=True)
class Drawn:
    """A rendered image and where each string was drawn (pixel boxes)."""

    image: Image.Image
    boxes: dict[str, BBox]


@pytest.fixture(scope="session")
def font_path() -> str:
    path = font_manager.findfont(font_manager.FontProperties(family="DejaVu Sans"), fallback_to_default=True)
    assert Path(path).is_file()
    return path


@pytest.fixture(scope="session")
def render(font_path):
    """render({text: (x, y, size)}, canvas=(w, h)) -> Drawn, black text on white."""

    def _render(texts: dict[str, tuple[int, int, int]], canvas: tuple[int, int] = (640, 480)) -> Drawn:
        img = Image.new("RGB", canvas, "white")
        draw = ImageDraw.Draw(img)
        boxes = {}
        for text, (x, y, size) in texts.items():
            font = ImageFont.truetype(font_path, size)
            draw.text((x, y), text, fill="black", font=font)
            boxes[text] = BBox(*draw.textbbox((x, y), text, font=font))
        return Drawn(img, boxes)

    return _render


@pytest.fixture(scope="session")
def engine():
    from perception.ocr import RapidOCREngine

    return RapidOCREngine(threads=1)


@pytest.fixture(scope="session")
def gauges(shared_data: Path) -> Path:
    path = shared_data / "gauges"
    if not (path / "items.jsonl").is_file():
        pytest.skip(f"gauge photos not found under {path}")
    return path


@pytest.fixture(scope="session")
def covers():
    """covers(outer, inner, tol): ``outer`` contains ``inner`` up to ``tol`` pixels on each side."""

    def _covers(outer: BBox, inner: BBox, tol: float = 4.0) -> bool:
        return (
            outer.x0 <= inner.x0 + tol
            and outer.y0 <= inner.y0 + tol
            and outer.x1 >= inner.x1 - tol
            and outer.y1 >= inner.y1 - tol
        )

    return _covers

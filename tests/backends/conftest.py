"""Backend test fixtures: the tiny Qwen2-VL checkpoint (built once per session) and sample images."""

from __future__ import annotations

import pytest
from PIL import Image, ImageDraw


@pytest.fixture()
def chart_image() -> Image.Image:
    img = Image.new("RGB", (120, 90), "white")
    d = ImageDraw.Draw(img)
    d.rectangle([10, 40, 30, 85], fill="red")
    d.rectangle([50, 20, 70, 85], fill="blue")
    d.text((80, 10), "42", fill="black")
    return img

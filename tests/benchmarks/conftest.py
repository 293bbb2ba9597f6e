from __future__ import annotations

import io

import pytest
from PIL import Image


@pytest.fixture
def png_bytes():
    def make(colour: str = "red", size: tuple[int, int] = (40, 30)) -> bytes:
        buf = io.BytesIO()
        Image.new("RGB", size, colour).save(buf, format="PNG")
        return buf.getvalue()

    return make

"""Backend test fixtures: the tiny Qwen2-VL checkpoint (built once per session) and sample images."""

from __future__ import annotations

from pathlib import Path

import pytest
from PIL import Image, ImageDraw


@pytest.fixture(scope="session")
def tiny_model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    from ledgermind.backends.tiny import build_tiny_qwen2_vl

    return build_tiny_qwen2_vl(tmp_path_factory.mktemp("tiny") / "tiny-qwen2-vl")


@pytest.fixture(scope="session")
def tiny_model_cfg(tiny_model_dir: Path) -> dict:
    return {"name": "tiny_qwen2_vl", "builder": "tiny_qwen2_vl", "path": str(tiny_model_dir),
            "dtype": "float32", "context_length": 1024, "max_images": 2}  # fmt: skip


@pytest.fixture()
def chart_image() -> Image.Image:
    img = Image.new("RGB", (120, 90), "white")
    d = ImageDraw.Draw(img)
    d.rectangle([10, 40, 30, 85], fill="red")
    d.rectangle([50, 20, 70, 85], fill="blue")
    d.text((80, 10), "42", fill="black")
    return img

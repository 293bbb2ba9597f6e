"""The model sees the picture perception sees, and no image costs more than the cap, driven through
scripts/run.py against a request-recording server on 127.0.0.1 as a user would run it.

A 16-bit greyscale scan over the model's pixel budget must reach the server as its content (a plain
``convert("RGB")`` clips it to a blank white page); an image over the cap on decoded pixels is an
item error naming the cap, never decoded at full size."""

from __future__ import annotations

import base64
import io
import json
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from ledgermind.image_decode import fitted_size
from ledgermind.testing.fake_openai_server import FakeOpenAIServer
from tests.experiment.conftest import run_script

pytestmark = pytest.mark.slow  # real OCR on one image

BUDGET = 200_000  # model.max_image_pixels: the scan below is 1.08 MP


def _scan() -> np.ndarray:
    """A 16-bit scan: a horizontal ramp over 1000..40000 with a black square (every value > 255)."""
    ramp = np.linspace(1000, 40000, 1200, dtype=np.float64)
    arr = np.tile(ramp, (900, 1)).astype(np.uint16)
    arr[300:600, 200:500] = 1000
    return arr


def _data(tmp_path: Path, image: Image.Image, name: str) -> Path:
    data = tmp_path / "data"
    data.mkdir()
    image.save(data / name)
    row = {"id": "scan", "question": "What is shown in <image 1>?", "images": [name], "answer": "ramp"}
    (data / "items.jsonl").write_text(json.dumps(row) + "\n")
    return data


def _run(data: Path, out: Path, url: str, *extra: str):
    return run_script(
        "run.py",
        "benchmark=jsonl",
        f"benchmark.path={data}",
        "backend=vllm_server",
        f"backend.base_urls=[{url}]",
        "backend.max_retries=0",
        "backend.served_model_name=fake-model",
        f"+model.max_image_pixels={BUDGET}",
        "search.provider=none",
        "cache.mode=off",
        "logger=none",
        "progress=false",
        f"hydra.run.dir={out}",
        *extra,
        timeout=300,
    )


def _sent_images(bodies: list) -> list[Image.Image]:
    urls = [
        part["image_url"]["url"]
        for body in bodies
        for message in body["messages"]
        for part in (message["content"] if isinstance(message["content"], list) else [])
        if part.get("type") == "image_url"
    ]
    return [Image.open(io.BytesIO(base64.b64decode(u.split(",", 1)[1]))) for u in urls]


def test_a_16_bit_scan_over_the_budget_reaches_the_server_with_its_content(tmp_path: Path) -> None:
    arr = _scan()
    data = _data(tmp_path, Image.fromarray(arr), "scan.png")
    assert Image.open(data / "scan.png").mode.startswith("I;16")
    with FakeOpenAIServer(latency_s=0.0, record=True) as srv:
        proc = _run(data, tmp_path / "run", srv.base_url)
        bodies = list(srv.recorded)
    assert proc.returncode == 0, proc.stderr
    size = fitted_size((1200, 900), None, BUDGET)
    whole = [im for im in _sent_images(bodies) if im.size == size]
    assert whole, f"the scan was never sent at {size}: {[im.size for im in _sent_images(bodies)]}"
    stretched = ((arr - 1000.0) * (255.0 / 39000.0)).astype(np.uint8)
    reference = np.asarray(Image.fromarray(stretched).resize(size, Image.Resampling.LANCZOS), dtype=float)
    for im in whole:
        grey = np.asarray(im.convert("L"), dtype=float)
        assert grey.std() > 50  # not a blank page
        assert np.abs(grey - reference).mean() < 3  # the scan's content, downscaled


def test_an_image_over_the_cap_on_decoded_pixels_is_an_item_error_naming_it(tmp_path: Path) -> None:
    data = _data(tmp_path, Image.new("RGB", (1200, 900), "white"), "big.png")
    with FakeOpenAIServer(latency_s=0.0, record=True) as srv:
        caps = ["perception.image.max_pixels=500000", "+model.bomb_image_pixels=500000"]
        proc = _run(data, tmp_path / "run", srv.base_url, *caps)
    assert proc.returncode == 3, proc.stderr
    last = proc.stderr.strip().splitlines()[-1]
    # the summary line shortens a long cause; the item's own error keeps it whole
    assert last.startswith(
        f"error: 1 of 1 items failed (image failed (ocr): ImageTooLargeError: image {data / 'big.png'} is "
        "1200x900: decoding it needs 1.1 MP, above the 0.5 MP cap"
    ), last
    (row,) = [json.loads(x) for x in (tmp_path / "run" / "results.jsonl").read_text().splitlines()]
    assert row["error"].endswith(
        "above the 0.5 MP cap on decoded pixels per image (perception.image.max_pixels)"
    )
    assert json.loads((tmp_path / "run" / "metrics.json").read_text())["errors"] == 1

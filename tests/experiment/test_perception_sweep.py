"""A Table 3 sweep through the real runner OCRs each image once; a rerun recomputes no OCR.

Seven variants run one after the other in one process, as Hydra's basic launcher runs a multirun:
each builds its own agent, tools and OCR engine from the config, so only the disk cache is shared.
The model is the local fake OpenAI server (answers in the requested formats); OCR is the real
PP-OCRv5 engine, counting its recognitions.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hydra import compose, initialize_config_dir
from PIL import Image, ImageDraw, ImageFont

from ledgermind.experiment import variants
from ledgermind.experiment.app import run_experiment
from ledgermind.runs.trajectories import trajectory_path
from ledgermind.testing.counting_ocr import CountingRapidOCREngine
from ledgermind.testing.fake_openai_server import FakeOpenAIServer
from ledgermind.trajectory import Trajectory

pytestmark = pytest.mark.slow
CONF = Path(__file__).resolve().parents[2] / "conf"
VARIANTS = variants.names()  # conf/ablation: every Table 3 variant, in row order


@pytest.fixture
def bench(tmp_path: Path) -> Path:
    from matplotlib import font_manager

    font = ImageFont.truetype(font_manager.findfont("DejaVu Sans"), 26)
    img = Image.new("RGB", (320, 160), "white")
    ImageDraw.Draw(img).text((20, 20), "PRESSURE 42 kPa", fill="black", font=font)
    ImageDraw.Draw(img).text((40, 100), "LOT 7781", fill="black", font=font)
    img.save(tmp_path / "g.png")
    item = {
        "id": "g1",
        "question": "What pressure reading does <image 1> show, in kPa?",
        "images": ["g.png"],
        "answer": "42",
    }
    (tmp_path / "items.jsonl").write_text(json.dumps(item) + "\n")
    return tmp_path


def sweep(url: str, bench: Path, cache: Path, out: Path, variants: tuple[str, ...] = VARIANTS) -> list[int]:
    calls = []
    for variant in variants:
        before = CountingRapidOCREngine.calls
        overrides = [
            "backend=vllm_server",
            f"backend.base_urls=[{url}]",
            "backend.max_retries=0",
            "backend.served_model_name=fake-model",  # what the fake server serves (preflight checks it)
            "benchmark=jsonl",
            f"benchmark.path={bench}",
            "logger=none",
            "progress=false",
            "cache.mode=off",
            f"+ablation={variant}",
            f"perception.cache_dir={cache}",
            "search.provider=none",
            "perception.ocr._target_=ledgermind.testing.counting_ocr.CountingRapidOCREngine",
            f"output_dir={out / variant}",
        ]
        with initialize_config_dir(config_dir=str(CONF), version_base="1.3"):
            metrics = run_experiment(compose("config", overrides=overrides))
        assert metrics["n_items"] == 1 and metrics["errors"] == 0, variant
        calls.append(CountingRapidOCREngine.calls - before)
    return calls


def test_sweep_ocrs_each_image_once_and_a_rerun_none(bench, tmp_path):
    CountingRapidOCREngine.reset()
    with FakeOpenAIServer(latency_s=0.0) as srv:
        first = sweep(srv.base_url, bench, tmp_path / "pcache", tmp_path / "run1")
        digests = list(CountingRapidOCREngine.digests)
        assert sum(first) >= 1  # the reading question goes through OCR in some variant
        assert len(digests) == len(set(digests)), first  # no image (or crop) recognised twice
        assert first[0] == sum(first)  # the first variant read everything; the six others only hit
        # the six variants after the first already ran on a warm cache, each with its own engine: the
        # rerun adds the one that read, in a new output folder
        CountingRapidOCREngine.reset()
        again = sweep(srv.base_url, bench, tmp_path / "pcache", tmp_path / "run2", VARIANTS[:1])
    assert again == [0]
    ocr_entries = [
        json.loads(trajectory_path(tmp_path / run / "full", "g1").read_text()) for run in ("run1", "run2")
    ]
    assert _ocr_texts(ocr_entries[0]) == _ocr_texts(ocr_entries[1]) and _ocr_texts(ocr_entries[0])


def _ocr_texts(traj: dict) -> list[str]:
    calls = Trajectory.from_dict(traj).tool_calls
    return [o["text"] for call in calls if call["tool"] == "ocr" for o in call["observations"]]

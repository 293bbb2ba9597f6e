"""Fixtures for the simulated backbone: a fake OCR engine with the real engine's interface, a
tiny item set (two MCQs and a gauge scene), recorded answers of a "real model" for the MCQs, and
request builders that mimic what the pipeline sends."""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Sequence
from pathlib import Path

import pytest
from PIL import Image, ImageDraw

from ledgermind.backends.base import GenerationRequest, Message, Reply
from ledgermind.benchmarks.item import AnswerType, Item
from ledgermind.simulator.backend import SimulatedBackend
from ledgermind.simulator.beliefs import RecordedAnswers
from perception.ocr import OCREngine, OCRLine, make_line


class FakeOCR(OCREngine):
    """Returns fixed lines for any image and counts how often it really ran."""

    name = "fake"

    def __init__(self, lines: Sequence[str] = ("Apollo 11 Plaque", "1969")) -> None:
        super().__init__(min_confidence=0.5)
        self.fixed = list(lines)
        self.runs = 0

    def _recognize(self, image: Image.Image) -> list[OCRLine]:
        self.runs += 1
        return [
            make_line(t, [(0, 20 * i), (50, 20 * i), (50, 20 * i + 15), (0, 20 * i + 15)], 0.99)
            for i, t in enumerate(self.fixed)
        ]


def draw_image(path: Path, text: str, size: tuple[int, int] = (160, 120)) -> Path:
    img = Image.new("RGB", size, "white")
    d = ImageDraw.Draw(img)
    d.rectangle([10, 10, size[0] - 10, size[1] - 10], outline="black", width=3)
    d.ellipse([30, 25, 110, 105], outline="blue", width=4)
    d.text((20, 50), text, fill="black")
    img.save(path)
    return path


GAUGE_META = {"min": 0.0, "max": 100.0, "graduation": 2.0, "numeric_kind": "reading"}


@pytest.fixture()
def key_items(tmp_path: Path) -> list[Item]:
    a = draw_image(tmp_path / "plaque.png", "Apollo")
    g = draw_image(tmp_path / "gauge.png", "psi", size=(200, 160))
    return [
        Item(
            "mcq1",
            "Which mission does the plaque in <image 1> commemorate?",
            [a],
            ["Apollo 13", "Apollo 11", "Gemini 4", "Vostok 1"],
            "B",
            AnswerType.MCQ,
        ),
        Item(
            "knowledge2",
            "Which scientist proposed the photoelectric law shown in <image 1>?",
            [a],
            ["Bohr", "Planck", "Einstein", "Curie"],
            "C",
            AnswerType.MCQ,
        ),
        Item(
            "gauge1",
            "What is the reading of the gauge in <image 1>? The scale runs from 0 to 100.",
            [g],
            None,
            "36.5",
            AnswerType.NUMERIC,
            meta=dict(GAUGE_META),
        ),
    ]


# A "real model" that mostly says A on mcq1 (gold B) and always C on knowledge2 (gold C).
RECORDED = {"mcq1": ["A", "A", "B", "A"], "knowledge2": ["C", "C", "C", "C"]}


@pytest.fixture()
def make_backend(key_items, tmp_path):
    def _make(
        seed: int = 0,
        faults: str = "on",
        ocr: FakeOCR | None = None,
        cache: Path | None = None,
        items: Sequence[Item] | None = None,
        recorded: dict | None = None,
        **rates,
    ):
        return SimulatedBackend(
            items=key_items if items is None else items,
            recorded=RecordedAnswers(RECORDED if recorded is None else recorded),
            seed=seed,
            faults=faults,
            vision_ocr=ocr or FakeOCR(),
            vision_cache_dir=str(cache) if cache else None,
            banner=False,
            **rates,
        )

    return _make


def request(
    text: str,
    images: Sequence[object] = (),
    schema: dict | None = None,
    stage: str = "",
    temperature: float = 0.0,
    seed: int = 0,
) -> GenerationRequest:
    return GenerationRequest(
        messages=[Message("user", [*images, text])],
        json_schema=schema,
        stage=stage,
        temperature=temperature,
        seed=seed,
    )


def replies(backend: SimulatedBackend, requests: Iterable[GenerationRequest]) -> list[Reply]:
    """Each request through ``generate``, one after the other, as ``generate_sync`` sends it, but in
    one event loop: a loop (and its worker thread) per request costs more than the simulator's reply,
    and the rate tests send thousands."""

    async def in_order() -> list[Reply]:
        return [await backend.generate(r) for r in requests]

    return asyncio.run(in_order())

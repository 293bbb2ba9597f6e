"""Scripted-backend harness for pipeline tests: deterministic tools + real spaCy NER.

The fake model sees only the request (rules match the prompt text, images and sampling
parameters, never a stage name) and sits behind the response cache in its default mode
(``readwrite``), exactly as in a real run. The fake tools have the real tools' signatures.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from ledgermind.backends.cache import CachedBackend, CacheMode, ResponseCache
from ledgermind.backends.scripted import Rule, ScriptedBackend
from ledgermind.benchmarks.item import AnswerType, Item
from ledgermind.grounding import GroundingCascade
from ledgermind.pipeline import AblationFlags, LedgerMindAgent, PipelineConfig
from ledgermind.pipeline.agent import grounding_config
from ledgermind.tools.base import BBox, Observation, Tool, ToolKind


class FixedOCR(Tool):
    """OCR-kind tool returning preset lines (fast, deterministic stand-in for PP-OCR)."""

    name, kind = "ocr", ToolKind.OCR

    def __init__(
        self,
        lines: Sequence[tuple[str, Sequence[float], float]] = (),
        fail: bool = False,
        region_lines: Sequence[tuple[str, Sequence[float], float]] = (),
    ) -> None:
        self.lines, self.fail, self.calls = list(lines), fail, 0
        self.region_lines = list(region_lines)
        self.regions: list[Any] = []

    def _run(self, image: Any, region: Any = None) -> list[Observation]:
        self.calls += 1
        self.regions.append(region)
        if self.fail:
            raise RuntimeError("OCR engine crashed")
        if region is not None:
            return [Observation(t, BBox.from_list(b), score=s) for t, b, s in self.region_lines]
        return [Observation(t, BBox.from_list(b), score=s) for t, b, s in self.lines]


class FixedCrop(Tool):
    name, kind = "crop_zoom", ToolKind.CROP

    def __init__(self) -> None:
        self.calls: list[dict[str, Any]] = []

    def _run(
        self, image: Any, question: str | None = None, bbox: Any = None, perturb_seed: int | str | None = None
    ):
        self.calls.append({"question": question, "bbox": bbox, "perturb_seed": perturb_seed})
        region = (
            bbox
            if isinstance(bbox, BBox)
            else (BBox.from_list(bbox) if bbox is not None else BBox(20, 20, 60, 60))
        )
        if perturb_seed is not None:  # like the real tool: each edge moves by 15–40 px (here: outwards)
            rng = random.Random(str(perturb_seed))
            d = [rng.uniform(15, 40) for _ in range(4)]
            region = BBox(region.x0 - d[0], region.y0 - d[1], region.x1 + d[2], region.y1 + d[3])
        size = (round(region.width * 2.5), round(region.height * 2.5))
        text = f"crop zone 4 region {[round(v) for v in region.as_list()]} scale 2.5"
        return [Observation(text, region, meta={"zone": 4})], {"image": Image.new("RGB", size, "white")}


class FixedSearch(Tool):
    name, kind = "search", ToolKind.SEARCH

    def __init__(self, snippet: str = "Apollo 11 landed on the Moon in 1969") -> None:
        self.snippet = snippet
        self.queries: list[str] = []

    def _run(self, query: str) -> tuple[list[Observation], dict[str, Any]]:
        self.queries.append(query)
        return [Observation(self.snippet, url="local://corpus/apollo")], {}


@pytest.fixture()
def image(tmp_path: Path) -> Path:
    p = tmp_path / "img.png"
    Image.new("RGB", (120, 80), "white").save(p)
    return p


@pytest.fixture()
def make(ner, monkeypatch, tmp_path):
    monkeypatch.setenv("LEDGERMIND_ALLOW_SCRIPTED", "1")

    counter = iter(range(10_000))

    def _make(
        rules,
        *,
        ocr=(),
        flags: AblationFlags | None = None,
        cfg: PipelineConfig | None = None,
        default: str | None = "",
        search: Tool | None = None,
        ocr_fail=False,
        tools: dict | None = None,
        region_ocr=(),
    ):
        backend = ScriptedBackend(
            {"name": "scripted"}, [Rule(**r) if isinstance(r, dict) else r for r in rules], default=default
        )
        cache = ResponseCache(tmp_path / f"responses{next(counter)}.sqlite")
        cached = CachedBackend(
            backend, cache, CacheMode.READWRITE, "scripted"
        )  # the run's default cache mode
        flags = flags or AblationFlags()
        cfg = cfg or PipelineConfig()
        t: dict[str, Tool] = {
            "ocr": FixedOCR(ocr, fail=ocr_fail, region_lines=region_ocr),
            "crop_zoom": FixedCrop(),
        }
        if search is not None:
            t["search"] = search
        t.update(tools or {})
        cascade = GroundingCascade(grounding_config(cfg, flags), ner=ner)
        return LedgerMindAgent(cached, t, cascade, cfg, flags), backend

    return _make


def solve(agent, item):
    return asyncio.run(agent.solve(item))


def item(
    question: str, image: Path, options=None, answer=None, answer_type=AnswerType.OPEN, id_="q1"
) -> Item:
    return Item(id_, question, [image], options, answer, AnswerType.MCQ if options else answer_type)

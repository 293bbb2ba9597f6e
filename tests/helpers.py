"""Small test tools shared by several test folders (real Tool subclasses, deterministic)."""

from __future__ import annotations

from typing import Any

from ledgermind.tools.base import BBox, Observation, Tool, ToolKind


class EchoOCR(Tool):
    """An OCR-kind tool whose 'recognised' lines are given as input (deterministic)."""

    name = "echo_ocr"
    kind = ToolKind.OCR

    def _run(self, lines: list[str] | None = None, bbox: Any = None, score: float = 0.9, **_: Any) -> list[Observation]:
        box = bbox if isinstance(bbox, BBox) else (BBox.from_list(bbox) if bbox else BBox(10, 10, 110, 40))
        return [Observation(t, box, score=score) for t in (lines or [])]


class FailingTool(Tool):
    name = "failing_ocr"
    kind = ToolKind.OCR

    def _run(self, **_: Any) -> list[Observation]:
        raise RuntimeError("engine crashed")


class EchoSearch(Tool):
    name = "echo_search"
    kind = ToolKind.SEARCH

    def _run(self, query: str = "", **_: Any) -> list[Observation]:
        return [Observation(f"result for {query}", url="local://corpus/1", score=0.85)]


class EchoVQA(Tool):
    name = "echo_vqa"
    kind = ToolKind.VQA

    def _run(self, answer: str = "yes", **_: Any) -> list[Observation]:
        return [Observation(answer)]

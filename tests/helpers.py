"""Small test tools shared by several test folders.

They are real ``Tool`` subclasses with the *real tools' signatures* — OCR takes ``image`` and an
optional ``region``, search takes ``query``, VQA takes ``stage``/``prompt``/``images``/``system`` —
so a pipeline or operator that sends an argument a real tool would reject fails here too. What
an echo tool "sees" is its input: a ``TextImage`` stands in for pixels that carry those lines.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ledgermind.tools.base import BBox, Observation, Tool, ToolKind


@dataclass(frozen=True)
class TextImage:
    """A stand-in image whose OCR result is known: its lines, their box and the engine score."""

    lines: tuple[str, ...] = ()
    bbox: tuple[float, float, float, float] | None = None
    score: float = 0.9

    def __init__(self, lines: Sequence[str] = (), bbox: Any = None, score: float = 0.9) -> None:
        object.__setattr__(self, "lines", tuple(lines))
        object.__setattr__(
            self, "bbox", tuple(bbox.as_list() if isinstance(bbox, BBox) else bbox) if bbox else None
        )
        object.__setattr__(self, "score", score)


class EchoOCR(Tool):
    """OCR-kind tool reading a ``TextImage``; with ``region`` the lines are located in that region."""

    name = "echo_ocr"
    kind = ToolKind.OCR

    def _run(self, image: TextImage, region: Any = None) -> list[Observation]:
        box = region if region is not None else (image.bbox or (10, 10, 110, 40))
        box = box if isinstance(box, BBox) else BBox.from_list(list(box))
        return [Observation(t, box, score=image.score) for t in image.lines]


class FailingTool(Tool):
    name = "failing_ocr"
    kind = ToolKind.OCR

    def _run(self, image: Any, region: Any = None) -> list[Observation]:
        raise RuntimeError("engine crashed")


class EchoSearch(Tool):
    name = "echo_search"
    kind = ToolKind.SEARCH

    def _run(self, query: str) -> list[Observation]:
        return [Observation(f"result for {query}", url="local://corpus/1", score=0.85)]


class EchoVQA(Tool):
    """VQA-kind tool with the real signature; its 'model' answers with the prompt text."""

    name = "echo_vqa"
    kind = ToolKind.VQA

    def _run(
        self, stage: str, prompt: str, images: Sequence[Any] = (), system: str | None = None
    ) -> list[Observation]:
        return [Observation(prompt)]

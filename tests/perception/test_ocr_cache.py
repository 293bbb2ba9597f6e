"""The OCR engine memoises raw lines by pixel content (same image read by OCR, crop proposals, RETRY)."""

from __future__ import annotations

from PIL import Image

from ledgermind.tools.base import BBox
from perception.ocr import OCREngine, OCRLine


class CountingEngine(OCREngine):
    name = "counting"
    cache_size = 2

    def __init__(self) -> None:
        super().__init__(min_confidence=0.8)
        self.calls = 0

    def _recognize(self, image: Image.Image) -> list[OCRLine]:
        self.calls += 1
        box = BBox(0, 0, 10, 10)
        return [
            OCRLine("sure", box, ((0, 0), (10, 0), (10, 10), (0, 10)), 0.95),
            OCRLine("faint", box, ((0, 0), (10, 0), (10, 10), (0, 10)), 0.6),
        ]


def test_same_pixels_recognised_once_thresholds_still_apply():
    eng = CountingEngine()
    a = Image.new("RGB", (20, 20), "white")
    assert [ln.text for ln in eng.recognize(a)] == ["sure"]
    assert [ln.text for ln in eng.recognize(a.copy(), min_confidence=0.5)] == ["sure", "faint"]
    assert eng.calls == 1
    eng.recognize(Image.new("RGB", (20, 20), "black"))
    eng.recognize(Image.new("RGB", (20, 21), "white"))  # evicts the first image (cache_size 2)
    eng.recognize(a)
    assert eng.calls == 4

"""The real CPU OCR engine, counting and timing its recognitions across all instances.

Why: the perception cache's promise ("each image OCR'd once per sweep, none on a rerun") is about
real recognitions in a real run, where every variant builds its own engine from the config. A
Hydra ``_target_`` pointing here swaps the engine without changing anything else.
"""

from __future__ import annotations

import hashlib
import threading
import time

from PIL import Image

from perception.ocr import OCRLine, RapidOCREngine


class CountingRapidOCREngine(RapidOCREngine):
    """``RapidOCREngine`` whose class-level ``calls`` / ``seconds`` sum every real ``_recognize``.

    Recognitions are serialised across instances (one engine already serialises its own calls),
    so ``seconds`` is OCR time, not time spent queueing behind another recognition; the same lock
    guards the counters.
    """

    calls = 0
    seconds = 0.0
    digests: list[str] = []  # pixel digest of every recognised image, in order
    _serial = threading.Lock()

    @classmethod
    def reset(cls) -> None:
        with cls._serial:
            cls.calls, cls.seconds, cls.digests = 0, 0.0, []

    def _recognize(self, image: Image.Image) -> list[OCRLine]:
        self._load()  # model loading is not recognition time
        with CountingRapidOCREngine._serial:
            t0 = time.perf_counter()
            lines = super()._recognize(image)
            CountingRapidOCREngine.calls += 1
            CountingRapidOCREngine.digests.append(
                hashlib.sha1(image.tobytes() + repr(image.size).encode()).hexdigest()
            )
            CountingRapidOCREngine.seconds += time.perf_counter() - t0
        return lines

"""An on-disk memo of the OCR engine's raw readings, for the perception studies.

Why: the gauge study reads every photo at 1× and all nine zones zoomed (≈10 OCR passes per
photo, about a minute each on a shared CPU), and cross-validating the zone choice re-runs the
choice many times. The pipeline's tool cache (:mod:`perception.cache`) is keyed by tool calls
and by the digest of the whole perception source, so an edit to the crop rule would throw away
every OCR reading although OCR did not change; this memo keys on what OCR depends on only (the
pixels, the engine's settings, the perception packages and the OCR modules' source).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from PIL import Image

import perception
from ledgermind.diskio import atomic_write_bytes
from perception.cache import package_versions, settings_of
from perception.ocr import OCREngine, OCRLine, polygon_to_bbox

#: The modules whose source decides what OCR reads (part of the memo key).
OCR_SOURCES = ("ocr.py", "orientation.py")


class OCRDiskMemo:
    """The engine's raw reading of each image kept on disk, keyed by pixels and engine settings.

    Installs itself on ``engine`` (wraps its ``_raw_lines``), so every caller of the engine —
    the crop tool's read check included — shares the memo.
    """

    def __init__(self, engine: OCREngine, directory: Path) -> None:
        self.directory = directory
        self.directory.mkdir(parents=True, exist_ok=True)
        package = Path(perception.__file__).resolve().parent
        ocr_src = b"".join((package / n).read_bytes() for n in OCR_SOURCES)
        fingerprint = json.dumps([settings_of(engine), package_versions()], sort_keys=True, default=str)
        self._salt = hashlib.sha256(fingerprint.encode() + ocr_src).hexdigest()[:16]
        self._inner = engine._raw_lines
        engine._raw_lines = self._raw_lines  # type: ignore[method-assign]  # the memo wraps the engine in place

    def _raw_lines(self, image: Image.Image) -> list[OCRLine]:
        digest = hashlib.sha1(image.tobytes() + f"{image.size}{image.mode}{self._salt}".encode()).hexdigest()
        path = self.directory / f"{digest}.json"
        if path.is_file():
            return [
                OCRLine(t, polygon_to_bbox(poly), tuple(map(tuple, poly)), c)
                for t, poly, c in json.loads(path.read_text())
            ]
        lines = self._inner(image)
        rows = [[ln.text, [list(p) for p in ln.polygon], ln.confidence] for ln in lines]
        atomic_write_bytes(path, json.dumps(rows).encode())
        return lines

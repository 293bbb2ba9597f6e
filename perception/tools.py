"""Perception tools: OCR, nine-zone crop-zoom and open-vocabulary detection as ledger-facing ``Tool``s.

Each tool loads its image through ``image_io.load_image`` (one downscale/colour policy for all
tools) and reports every box in *original-image* pixel coordinates, so the ledger's b_e of an OCR
line, a crop region and a detection are comparable. Failures raise ordinary exceptions with a
one-line message; ``Tool.ainvoke`` turns them into an error ``ToolOutput`` (trigger T1). An image
without text gives an empty observation list, which T1 also sees.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from ledgermind.errors import ConfigError
from ledgermind.tools.base import BBox, Observation, Tool, ToolKind
from perception.crop import (
    CropConfig,
    CropResult,
    QuestionCues,
    crop_zoom,
    format_metadata,
    perturb_bbox,
    select_zone_crop,
)
from perception.detect import (
    ClassicalProposer,
    OwlV2Detector,
    Proposal,
    TextDetector,
    proposals_from_ocr,
    unread_text,
)
from perception.image_io import ImagePolicy, ImageSource, LoadedImage, load_image
from perception.ocr import OCREngine, OCRLine, default_engine


def as_bbox(value: Any, what: str = "bbox") -> BBox:
    """Accept a BBox, [x0, y0, x1, y1] or {'x0':…} and fail with a message a planner can act on."""
    if isinstance(value, BBox):
        return value
    try:
        if isinstance(value, Mapping):
            return BBox(*(float(value[k]) for k in ("x0", "y0", "x1", "y1")))
        vals = [float(v) for v in value]
        if len(vals) != 4:
            raise ValueError(f"expected 4 numbers, got {len(vals)}")
        return BBox(*vals)
    except (TypeError, ValueError, KeyError) as exc:
        raise ValueError(f"{what} must be [x0, y0, x1, y1] in image pixels, got {value!r} ({exc})") from None


def _inside(box: BBox, loaded: LoadedImage, what: str) -> BBox:
    w, h = loaded.original_size
    clipped = box.clip(w, h)
    if clipped.width < 1 or clipped.height < 1:
        raise ValueError(f"{what} {box.as_list()} does not overlap the {w}x{h} image")
    return clipped


def _ocr_observation(line: OCRLine, engine: OCREngine, zoom: float | None = None) -> Observation:
    meta: dict[str, Any] = {"polygon": [list(p) for p in line.polygon], "engine": engine.name}
    if zoom is not None:
        meta["zoom"] = zoom  # read from a zoomed region (the audit trail shows the 2.5× really happened)
    return Observation(text=line.text, bbox=line.bbox, score=line.confidence, meta=meta)


@dataclass(eq=False)
class OCRTool(Tool):
    """Inputs: ``image`` (path, bytes or PIL image), optional ``region`` [x0, y0, x1, y1] to read only a crop.

    One observation per text line: text, bbox (original coordinates), score = engine confidence.
    A ``region`` is read zoomed by ``region_zoom`` (default App. A's z = 2.5, config
    ``perception.crop.zoom``), so crop-zoom's "read the zoomed crop" really reads zoomed pixels.
    """

    name = "ocr"
    kind = ToolKind.OCR

    engine: OCREngine = field(default_factory=default_engine)
    image_policy: ImagePolicy = field(default_factory=ImagePolicy)
    region_zoom: float = CropConfig().zoom  # App. A: the selected region is read at z = 2.5

    def __post_init__(self) -> None:
        if self.region_zoom <= 0:
            raise ConfigError(f"ocr region_zoom must be > 0, got {self.region_zoom}")

    def _run(self, image: ImageSource, region: Any = None) -> tuple[list[Observation], dict[str, Any]]:
        loaded = load_image(image, self.image_policy)
        box = None if region is None else _inside(as_bbox(region, "region"), loaded, "region")
        lines = self._lines(loaded, box)
        zoom = self.region_zoom if box is not None else None
        if lines:
            return [_ocr_observation(ln, self.engine, zoom) for ln in lines], {}
        # Nothing legible. Say how sure the engine was about what it did see before that text is
        # discarded: the verifier raises T4 (σ < σ_floor, App. E.1) on it instead of a bare T1.
        seen = [ln for ln in self._lines(loaded, box, 0.0) if ln.text]
        if not seen:
            return [], {}
        return [], {"best_confidence": max(ln.confidence for ln in seen), "discarded_lines": len(seen)}

    def _lines(
        self, loaded: LoadedImage, region: BBox | None, min_confidence: float | None = None
    ) -> list[OCRLine]:
        """OCR the loaded image, or ``region`` of it (original coordinates) zoomed by ``region_zoom``
        (App. A's 2.5× zoom: small dial labels that full-image OCR cannot read become legible);
        lines come back in original coordinates either way. ``min_confidence`` defaults to the
        engine's legibility threshold."""
        if region is None:
            lines = self.engine.recognize(loaded.image, min_confidence)
            return [ln.shifted(0, 0, loaded.scale) for ln in lines]
        crop = crop_zoom(loaded.image, loaded.to_loaded(region), CropConfig(zoom=self.region_zoom))
        lines = self.engine.recognize(crop.image, min_confidence)
        return [
            ln.shifted(crop.region.x0, crop.region.y0, crop.scale).shifted(0, 0, loaded.scale) for ln in lines
        ]


@dataclass(eq=False)
class CropZoomTool(Tool):
    """Nine-zone crop-zoom (Alg. 1 lines 6–7) or an explicit-box crop (REFRESH/RETRY, App. E.2).

    Inputs: ``image``; either ``question`` (zone selection from proposals) or ``bbox`` (explicit
    region in original coordinates), plus optional ``perturb_seed`` to apply RETRY's ±[15, 40] px
    perturbation to ``bbox`` and ``zoom`` (default: the configured z, App. A's 2.5) for a repair that
    re-reads a region closer. One observation: text = crop metadata, bbox = crop region,
    meta = zone/scale/zone scores/read-check gains; ``artifacts["image"]`` is the zoomed PIL crop
    (the pixels to show a model) and ``artifacts["crop"]`` the ``CropResult``.

    Zone choice (``select``): proposals from full-image OCR lines, the optional PP-OCRv5 text
    detector (its unread boxes), classical boxes and the optional open-vocabulary detector; then,
    with an OCR engine, the read check of ``crop.select_zone_crop`` over the top
    ``config.verify_top_k`` zones.
    """

    name = "crop_zoom"
    kind = ToolKind.CROP

    config: CropConfig = field(default_factory=CropConfig)
    engine: OCREngine | None = None  # with use_ocr and no engine: the process-wide CPU engine
    proposer: ClassicalProposer = field(default_factory=ClassicalProposer)
    detector: OwlV2Detector | None = None
    use_ocr: bool = True
    image_policy: ImagePolicy = field(default_factory=ImagePolicy)
    text_detector: TextDetector | None = None

    def __post_init__(self) -> None:
        self.engine = self.engine if self.engine is not None or not self.use_ocr else default_engine()

    def _run(
        self,
        image: ImageSource,
        question: str | None = None,
        bbox: Any = None,
        perturb_seed: int | str | None = None,
        zoom: float | None = None,
    ) -> tuple[list[Observation], dict[str, Any]]:
        if bbox is None and not (question and question.strip()):
            raise ValueError("crop_zoom needs a question (for zone selection) or an explicit bbox")
        config = self.config if zoom is None else replace(self.config, zoom=zoom)
        loaded = load_image(image, self.image_policy)
        if bbox is not None:
            box = _inside(as_bbox(bbox), loaded, "bbox")
            if perturb_seed is not None:
                box = perturb_bbox(box, loaded.original_size, perturb_seed, config)
            crop = crop_zoom(loaded.image, loaded.to_loaded(box), config)
        else:
            crop = self.select(loaded, question, config)
        region = loaded.to_original(crop.region)
        scale = crop.image.width / region.width  # zoomed px per original px
        meta: dict[str, Any] = {
            "zone": crop.zone,
            "scale": scale,
            "zone_scores": list(crop.zone_scores),
            "zoom": config.zoom,
        }
        if crop.zone_gains:
            meta["zone_gains"] = [list(zg) for zg in crop.zone_gains]
        obs = Observation(text=format_metadata(crop.zone, region, scale), bbox=region, meta=meta)
        return [obs], {"image": crop.image, "crop": crop}

    def select(
        self, loaded: LoadedImage, question: str | None, config: CropConfig | None = None
    ) -> CropResult:
        """Alg. 1 lines 6–7 on a loaded image: r* and its zoomed crop (loaded-image coordinates).

        With an engine, the read check reads zooms with ``engine.recognize`` (legible lines: what
        the OCR tool would report) against the full image's legible lines.
        """
        config = config or self.config
        proposals = self.proposals(loaded, question)
        if self.engine is None:
            return select_zone_crop(loaded.image, question, proposals, config)
        known = [ln.text for ln in self.engine.recognize(loaded.image)]
        return select_zone_crop(loaded.image, question, proposals, config, self.engine.recognize, known)

    def proposals(self, loaded: LoadedImage, question: str | None) -> list[Proposal]:
        """Proposals in loaded-image coordinates (zone scoring happens on the loaded image)."""
        props: list[Proposal] = []
        if self.engine is not None:
            lines = self.engine.recognize(loaded.image, min_confidence=self.config.text_min_confidence)
            props += proposals_from_ocr(lines)
            if self.text_detector is not None:
                legible = [ln for ln in lines if ln.confidence >= self.engine.min_confidence]
                props += unread_text(self.text_detector.detect(loaded.image), legible)
        elif self.text_detector is not None:
            props += self.text_detector.detect(loaded.image)
        props += self.proposer.propose(loaded.image)
        if self.detector is not None and question:
            props += self.detector.detect(loaded.image, sorted(QuestionCues.from_question(question).keywords))
        return props


@dataclass(eq=False)
class DetectTool(Tool):
    """Open-vocabulary detection. Inputs: ``image``, ``queries`` (list of object names or one string)."""

    name = "detect"
    kind = ToolKind.DETECT

    detector: OwlV2Detector = field(default_factory=OwlV2Detector)
    image_policy: ImagePolicy = field(default_factory=ImagePolicy)

    def _run(self, image: ImageSource, queries: str | Sequence[str] = ()) -> list[Observation]:
        names = [queries] if isinstance(queries, str) else list(queries)
        if not any(n.strip() for n in names):
            raise ValueError("detect needs at least one non-empty query (an object name)")
        loaded = load_image(image, self.image_policy)
        return [
            Observation(
                text=p.label, bbox=loaded.to_original(p.bbox), score=p.score, meta={"source": p.source.value}
            )
            for p in self.detector.detect(loaded.image, names)
        ]


def build_tools(cfg: Mapping[str, Any]) -> dict[str, Tool]:
    """Instantiate the perception tools from a ``conf/perception/*.yaml`` node (one OCR engine shared).

    Instantiation is cheap: engines and detectors load their weights on first use.
    """
    from ledgermind.confutil import instantiate

    def node(name: str) -> Any:
        """The ``perception.<name>`` node built, or None where the config leaves it out."""
        return instantiate(cfg[name], f"perception.{name}") if cfg.get(name) else None

    policy = node("image") or ImagePolicy()
    engine = instantiate(cfg["ocr"], "perception.ocr")
    crop_cfg = node("crop") or CropConfig()
    proposer = node("proposer") or ClassicalProposer()
    detector = node("detector")
    text_detector = node("text_detector")
    tools: dict[str, Tool] = {
        "ocr": OCRTool(engine, policy, region_zoom=crop_cfg.zoom),  # one z for crop and region OCR
        "crop_zoom": CropZoomTool(
            crop_cfg, engine, proposer, detector, image_policy=policy, text_detector=text_detector
        ),
    }
    if detector is not None:
        tools["detect"] = DetectTool(detector, policy)
    return tools

"""Nine-zone crop-zoom (paper App. A, Algorithm 1 lines 5–8) and explicit-box crops for repair.

For reading and localisation questions the agent picks the most informative region r* of a 3×3
grid over the image, crops it and zooms 2.5× before reading again. Informativeness is decided in
two steps (the paper does not give a formula):

1. *proposal score*: region proposals (``detect.py``) falling in a zone, each weighted by how
   well it matches the question (its text shares a keyword or a number with the question, it is
   numeric text on a reading question, a detector found the question's target there) and by
   whether it is text that full-image OCR could not read (uncertain lines, unread detector boxes);
2. *read check*: when a ``reader`` is given, the ``verify_top_k`` best zones by proposal score are
   zoomed and read, and the zone whose zoom reads the most *new* question-relevant text
   (``text_gain``: tokens no full-image line holds; with ``gain_per_area`` per unit of crop
   area, so that border zones, whose margin the image edge cuts, are not penalised for their
   size) wins. The criterion is stated without reference to any data set; its weights are chosen
   by cross-validation (``scripts/eval_perception.py --folds 5``). Informativeness is then measured, not
   guessed; it costs ``verify_top_k`` zoomed OCR passes, and the chosen crop's reading is in the
   engine's memo when the pipeline OCRs the region next.

The zoom only ever *adds* evidence: full-image OCR lines stay in the ledger, so the zoomed
reading can never lower what the agent has read (the eval's "full + zoom" is never below "full").

Everything here is a pure function of (image, question, proposals, config): the same inputs
give the same zone, region and pixels, so audit trails replay exactly.

Zones are numbered row-major: 0 1 2 / 3 4 5 / 6 7 8 (4 is the centre).
"""

from __future__ import annotations

import math
import random
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace

from PIL import Image

from ledgermind.errors import ConfigError
from ledgermind.tools.base import BBox
from perception.detect import Proposal, ProposalSource, intersection_area
from perception.ocr import OCRLine


@dataclass(frozen=True)
class CropConfig:
    """Crop-zoom parameters; defaults are the paper's."""

    grid: int = 3  # App. A, Alg. 1 line 6: nine-zone grid
    zoom: float = 2.5  # App. A, Alg. 1 line 7: CROPZOOM(I, r*, z=2.5)
    margin: float = 0.15  # context kept around the zone, as a fraction of the zone size (ours)
    max_output_side: int = 4096  # cap on the zoomed crop (very large photos get scale < zoom)
    perturb_min_px: int = 15  # App. E.2 RETRY: bbox perturbation ±[15, 40] px for visual tools
    perturb_max_px: int = 40
    # proposal weights (ours; the paper does not give the informativeness formula)
    text_weight: float = 0.5  # legible OCR line (confidence >= legible_confidence)
    uncertain_text_weight: float = 1.0  # text detected but not legibly read: where zooming pays off
    text_min_confidence: float = 0.5  # OCR lines below this are not evidence of text at all
    legible_confidence: float = 0.8  # = the OCR engine's min_confidence
    detector_weight: float = 1.0
    classical_weight: float = 0.25
    keyword_bonus: float = 2.0  # text/label shares a content word with the question
    number_bonus: float = 3.0  # text contains a number the question mentions
    numeric_text_bonus: float = 1.0  # numeric text on a reading question (dial labels, axis ticks)
    unread_text_weight: float = 1.0  # text-detector box no legible line covers (= uncertain text)
    verify_top_k: int = 9  # zones zoomed and read before choosing (9 = all; 0/1 = proposal score alone)
    # Read check's gain per unit of zone area: edge and corner zones lose part of their
    # margin to the image border, so raw gains favour the larger interior crops; True divides each
    # gain by its crop's area relative to the mean zone crop. Chosen by CV (eval_perception --folds).
    gain_per_area: bool = False

    def __post_init__(self) -> None:
        if self.grid < 1 or self.zoom <= 0 or self.margin < 0 or self.max_output_side < 1:
            raise ConfigError(f"invalid crop config: grid={self.grid} zoom={self.zoom} margin={self.margin}")
        if self.verify_top_k < 0 or self.verify_top_k > self.grid * self.grid:
            raise ConfigError(
                f"crop verify_top_k must be in [0, {self.grid * self.grid}], got {self.verify_top_k}"
            )
        if not 0 <= self.perturb_min_px <= self.perturb_max_px:
            raise ConfigError(f"invalid perturbation range [{self.perturb_min_px}, {self.perturb_max_px}] px")


_STOPWORDS = frozenset(
    "the a an of in on at to for from by with and or is are was were be been what which who whom whose "
    "where when why how this that these those it its there their as do does did can could should would "
    "shown show image picture figure photo following given below above value according".split()
)
_READING_CUES = re.compile(
    r"\b(read|reading|readings|value|measure|measured|measurement|gauge|meter|dial|scale|thermometer|"
    r"temperature|pressure|speed|level|how much|how many|what number|indicat\w*|point\w*)\b",
    re.IGNORECASE,
)
_NUMBER = re.compile(r"[-+]?(?:\d+(?:[.,]\d+)?|[.,]\d+)")
_WORD = re.compile(r"[a-z][a-z0-9\-]+")


def parse_numbers(text: str) -> tuple[float, ...]:
    """Numbers in a string ('0,5' and '0.5' alike); used for question cues and dial-label matching."""
    return tuple(float(m.replace(",", ".")) for m in _NUMBER.findall(text))


@dataclass(frozen=True)
class QuestionCues:
    """What the question tells us to look for."""

    keywords: frozenset[str] = frozenset()
    numbers: tuple[float, ...] = ()
    wants_number: bool = False

    @classmethod
    def from_question(cls, question: str | None) -> QuestionCues:
        if not question:
            return cls()
        words = {w for w in _WORD.findall(question.lower()) if len(w) >= 3 and w not in _STOPWORDS}
        return cls(frozenset(words), parse_numbers(question), bool(_READING_CUES.search(question)))


@dataclass(frozen=True)
class CropResult:
    """A zoomed crop and where it came from (``region`` in the frame of the image that was cropped)."""

    image: Image.Image = field(repr=False)
    region: BBox
    scale: float
    zone: int | None = None
    zone_scores: tuple[float, ...] = ()  # proposal score per zone
    zone_gains: tuple[tuple[int, float], ...] = ()  # (zone, text gain) for each zone read by the check


def zone_boxes(width: int, height: int, grid: int = 3) -> list[BBox]:
    """The grid cells, row-major, in pixel coordinates (integer-aligned, covering the image exactly)."""
    xs = [round(i * width / grid) for i in range(grid + 1)]
    ys = [round(j * height / grid) for j in range(grid + 1)]
    return [BBox(xs[i], ys[j], xs[i + 1], ys[j + 1]) for j in range(grid) for i in range(grid)]


def proposal_weight(p: Proposal, cues: QuestionCues, cfg: CropConfig) -> float:
    """Informativeness of one proposal for this question.

    Text detected but read below ``legible_confidence`` weighs more than legible text: on the real
    gauge photos the labels a zoom recovers are exactly those full-image OCR saw but could not read
    (see scripts/eval_perception.py). Classical and detector boxes weigh by their own score.
    """
    if p.source is ProposalSource.TEXT:
        if p.score < cfg.text_min_confidence:
            return 0.0
        base = cfg.text_weight if p.score >= cfg.legible_confidence else cfg.uncertain_text_weight
        strength = 1.0
    elif p.source is ProposalSource.UNREAD_TEXT:
        base, strength = cfg.unread_text_weight, 1.0  # unread: its (absent) label cannot match cues
    else:
        base = cfg.detector_weight if p.source is ProposalSource.DETECTOR else cfg.classical_weight
        strength = min(max(p.score, 0.0), 1.0)
    factor = 1.0
    label = p.label.lower()
    if label and cues.keywords & set(_WORD.findall(label)):
        factor += cfg.keyword_bonus
    label_numbers = parse_numbers(label)
    if label_numbers and any(math.isclose(a, b) for a in label_numbers for b in cues.numbers):
        factor += cfg.number_bonus
    if label_numbers and cues.wants_number and p.source is ProposalSource.TEXT:
        factor += cfg.numeric_text_bonus
    return base * factor * strength


def score_zones(
    size: tuple[int, int], proposals: Sequence[Proposal], cues: QuestionCues, cfg: CropConfig = CropConfig()
) -> list[float]:
    """Informativeness of each zone: weighted proposals, split by the fraction of their area inside."""
    zones = zone_boxes(size[0], size[1], cfg.grid)
    scores = [0.0] * len(zones)
    for p in proposals:
        w = proposal_weight(p, cues, cfg)
        if w <= 0:
            continue
        area = max(p.bbox.area, 1e-9)
        for k, z in enumerate(zones):  # a zone the box misses gains exactly 0.0
            scores[k] += w * intersection_area(p.bbox, z) / area
    return scores


def rank_zones(scores: Sequence[float], grid: int = 3) -> list[int]:
    """Zones best first: score, then closeness to the centre, then index (deterministic)."""
    c = grid // 2  # the centre zone's row and column
    return sorted(
        range(len(scores)), key=lambda k: (-round(scores[k], 9), abs(k // grid - c) + abs(k % grid - c), k)
    )


Reader = Callable[[Image.Image], Sequence[OCRLine]]  # image -> the legible OCR lines of that image


def text_tokens(texts: Iterable[str]) -> set[tuple[str, str]]:
    """Numbers and content words of some text, as comparable tokens ('n', '40') / ('w', 'psi')."""
    tokens: set[tuple[str, str]] = set()
    for t in texts:
        tokens |= {("n", f"{abs(v):g}") for v in parse_numbers(t)}  # sign-insensitive: '-' is often lost
        tokens |= {("w", w) for w in _WORD.findall(t.lower()) if len(w) >= 3 and w not in _STOPWORDS}
    return tokens


def text_gain(
    zoom_texts: Iterable[str], known_texts: Iterable[str], cues: QuestionCues, cfg: CropConfig
) -> float:
    """What a zoomed reading adds for this question: its tokens that no known line holds, a number
    counting ``1 + numeric_text_bonus`` on a reading question, a question keyword or number adding
    its bonus — the same cues that weigh proposals."""
    gain = 0.0
    for kind, tok in text_tokens(zoom_texts) - text_tokens(known_texts):
        weight = 1.0
        if kind == "n":
            weight += cfg.numeric_text_bonus if cues.wants_number else 0.0
            weight += cfg.number_bonus if any(math.isclose(float(tok), abs(v)) for v in cues.numbers) else 0.0
        elif tok in cues.keywords:
            weight += cfg.keyword_bonus
        gain += weight
    return gain


def select_zone_crop(
    image: Image.Image,
    question: str | None,
    proposals: Sequence[Proposal],
    cfg: CropConfig = CropConfig(),
    reader: Reader | None = None,
    known_texts: Sequence[str] = (),
) -> CropResult:
    """Algorithm 1 lines 6–7: r* ← most informative zone; CROPZOOM(I, r*, z).

    Without ``reader`` (or with ``cfg.verify_top_k`` ≤ 1) r* is the best zone by proposal score.
    With it, the top ``verify_top_k`` zones are zoomed and read, and r* is the one with the
    largest ``text_gain`` over ``known_texts`` (the full-image OCR lines); ties keep the proposal
    order. Public and stable: ``CropZoomTool.select`` and ``scripts/eval_perception.py`` call it,
    and ``CropResult.image`` is the zoomed crop to show a model.
    """
    cues = QuestionCues.from_question(question)
    scores = score_zones(image.size, proposals, cues, cfg)
    ranked = rank_zones(scores, cfg.grid)
    if reader is None or cfg.verify_top_k <= 1:
        return replace(zone_crop(image, ranked[0], cfg), zone_scores=tuple(scores))
    gains: list[tuple[int, float]] = []
    crops: dict[int, CropResult] = {}
    for zone in ranked[: cfg.verify_top_k]:
        crops[zone] = zone_crop(image, zone, cfg)
        read = [ln.text for ln in reader(crops[zone].image)]
        gains.append((zone, text_gain(read, known_texts, cues, cfg) / _area_factor(image, zone, cfg)))
    zone = max(gains, key=lambda zg: (round(zg[1], 9), -ranked.index(zg[0])))[0]
    return replace(crops[zone], zone_scores=tuple(scores), zone_gains=tuple(gains))


def _area_factor(image: Image.Image, zone: int, cfg: CropConfig) -> float:
    """Zone ``zone``'s crop area over the mean crop area of all zones (1.0 unless ``gain_per_area``)."""
    if not cfg.gain_per_area:
        return 1.0
    areas = [expand(b, cfg.margin, image.size).area for b in zone_boxes(image.width, image.height, cfg.grid)]
    mean = sum(areas) / len(areas)
    return areas[zone] / mean if mean > 0 and areas[zone] > 0 else 1.0


def zone_crop(image: Image.Image, zone: int, cfg: CropConfig = CropConfig()) -> CropResult:
    """Zone ``zone`` of the grid, grown by ``cfg.margin`` and zoomed by ``cfg.zoom``."""
    box = zone_boxes(image.width, image.height, cfg.grid)[zone]
    return replace(crop_zoom(image, expand(box, cfg.margin, image.size), cfg), zone=zone)


def expand(box: BBox, margin: float, size: tuple[int, int]) -> BBox:
    """Grow a box by ``margin`` × its size on every side, snapped to whole pixels inside the image."""
    dx, dy = box.width * margin, box.height * margin
    return _snap(BBox(box.x0 - dx, box.y0 - dy, box.x1 + dx, box.y1 + dy), size)


def crop_zoom(image: Image.Image, region: BBox, cfg: CropConfig = CropConfig()) -> CropResult:
    """Crop ``region`` (clipped, whole pixels) and upscale it by ``cfg.zoom`` with Lanczos."""
    region = _snap(region, image.size)
    if region.width < 1 or region.height < 1:
        raise ValueError(
            f"crop region {region.as_list()} is empty inside the {image.width}x{image.height} image"
        )
    scale = min(cfg.zoom, cfg.max_output_side / max(region.width, region.height))
    out_size = (max(1, round(region.width * scale)), max(1, round(region.height * scale)))
    box = (int(region.x0), int(region.y0), int(region.x1), int(region.y1))
    crop = image.crop(box).resize(out_size, Image.Resampling.LANCZOS)
    return CropResult(crop, region, out_size[0] / region.width)


def perturb_bbox(
    box: BBox, size: tuple[int, int], seed: int | str = 0, cfg: CropConfig = CropConfig()
) -> BBox:
    """RETRY's visual-tool perturbation (App. E.2): move each edge by ±[min, max] px, staying in the image.

    Deterministic for a given (box, seed). If shifting inwards would collapse the box after clipping,
    every edge moves outwards instead, so the result always contains the clipped original.
    """
    rng = random.Random(f"{seed}|{box.as_list()}")
    deltas = [rng.uniform(cfg.perturb_min_px, cfg.perturb_max_px) for _ in range(4)]
    signs = [rng.choice((-1.0, 1.0)) for _ in range(4)]
    x0, y0, x1, y1 = (v + s * d for v, s, d in zip(box.as_list(), signs, deltas))
    w, h = size
    x0, x1 = min(max(x0, 0.0), w), min(max(x1, 0.0), w)
    y0, y1 = min(max(y0, 0.0), h), min(max(y1, 0.0), h)
    if x1 - x0 >= 2 and y1 - y0 >= 2:  # edges did not cross or collapse
        return _snap(BBox(x0, y0, x1, y1), size)
    dx0, dy0, dx1, dy1 = deltas
    return _snap(BBox(box.x0 - dx0, box.y0 - dy0, box.x1 + dx1, box.y1 + dy1), size)


def format_metadata(zone: int | None, region: BBox, scale: float) -> str:
    """Crop metadata text — the fact f_e the mapping M stores for a CROP tool (App. B.1)."""
    coords = ", ".join(str(int(round(v))) for v in region.as_list())
    where = f"zone {zone} " if zone is not None else "bbox "
    return f"crop {where}region [{coords}] scale {scale:.3g}"


def _snap(box: BBox, size: tuple[int, int]) -> BBox:
    c = box.clip(*size)
    return BBox(math.floor(c.x0), math.floor(c.y0), math.ceil(c.x1), math.ceil(c.y1)).clip(*size)

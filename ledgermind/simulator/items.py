"""What the simulated model knows of the run's items: what a reader of the prompt can see.

It finds the item a request is about the way a reader recognises a question it has seen: by the
question text printed in the prompt and by the image files attached; a zoomed crop (a PIL image
the pipeline made) is traced back to its source image by template matching. Per item it keeps
what is printed or pictured: the question, the options, the images, and for a *scene with a
measurable truth* (an analog gauge: its dial's range, graduation and needle value) the scene
itself, which the model perceives through a noise model (``beliefs.ReadingModel``).

It never holds the answer key of a multiple-choice item: which option is right is read only by
the scorer. The one exception is the documented key-based fallback (``beliefs.key_belief``,
``backend.belief_source=key``), which is marked in the run identity and off by default.
"""

from __future__ import annotations

import hashlib
import re
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

from PIL import Image

from ledgermind.benchmarks.item import AnswerType, Item
from ledgermind.simulator.tasks import normalise
from perception.image_io import ImageLoadError, load_image

NUMBER_RE = re.compile(r"-?\d+(?:\.\d+)?")
PLACEHOLDER_RE = re.compile(r"<image\s*\d+>", re.IGNORECASE)


@dataclass(frozen=True)
class Scene:
    """A measurable scene (an analog gauge): the dial's range, its graduation and the needle value.

    The needle value is a property of the photograph (what the pixels show), not of an answer key:
    the model perceives it through ``ReadingModel``'s noise, never reads it."""

    low: float
    high: float
    graduation: float
    value: float

    @property
    def span(self) -> float:
        return max(abs(self.high - self.low), 1e-9)


@dataclass(frozen=True)
class SeenItem:
    """One item as the model can know it: question, options (letters for MCQs), images, scene."""

    item_id: str
    question: str
    options: tuple[str, ...]
    answer_type: AnswerType
    images: tuple[Path, ...]
    n_pixel_options: int = 0  # MMMU-Pro vision: options exist only as pixels (lettered A..)
    scene: Scene | None = None
    key_gold: str | None = None  # only with the key-based fallback (belief_source=key)

    @property
    def is_mcq(self) -> bool:
        return bool(self.options) or self.n_pixel_options > 0

    def letters(self) -> list[str]:
        n = len(self.options) or self.n_pixel_options
        return [chr(ord("A") + i) for i in range(n)]

    def option_text(self, letter: str) -> str:
        """The option a letter names; "" for anything that is not one option letter (or pixels)."""
        if len(letter.strip()) != 1:
            return ""
        i = ord(letter.strip().upper()) - ord("A")
        return self.options[i] if 0 <= i < len(self.options) else ""

    def letter_of(self, text: str) -> str | None:
        """The letter of the option whose text is ``text`` (normalised), else None."""
        norm = normalise(text)
        return next(
            (x for x, opt in zip(self.letters(), self.options, strict=False) if normalise(opt) == norm), None
        )

    def named_in(self, context: str) -> list[str]:
        """Options a request names outside its option list ("… B. Apollo 11"): what to look for."""
        return [
            x for x in self.letters() if (opt := self.option_text(x).strip()) and f"{x}. {opt}" in context
        ]

    def display(self, answer: str) -> str:
        """'C' → 'C. <option text>' (what a model writes when it commits to an option)."""
        opt = self.option_text(answer) if self.is_mcq else ""
        return f"{answer}. {opt}" if opt else answer

    def same_answer(self, a: str, b: str) -> bool:
        """Do two answers of this item agree (letters by label, numbers by value)?"""
        if self.is_mcq:
            return a.strip()[:1].upper() == b.strip()[:1].upper()
        try:
            return _close(float(a), float(b))
        except ValueError:
            return normalise(a) == normalise(b)

    def states(self, answer: str, evidence: str) -> bool:
        """Does ``evidence`` state the content of ``answer`` (option text, or the number)?"""
        if self.is_mcq:
            option = self.option_text(answer)
            text = PLACEHOLDER_RE.sub(" ", option).strip()
            if not text and (shown := PLACEHOLDER_RE.findall(option)):
                # An option that is only a picture ("<image 3>"): its content is that image, which
                # evidence states by naming it (an observation of what image 3 shows).
                return all(_names_image(p, evidence) for p in shown)
            if len(text) < 3:  # "RB", "S": a whole word of the evidence, not a substring of any word
                return bool(text) and re.search(rf"(?<!\w){re.escape(text)}(?!\w)", evidence) is not None
            return normalise(text) in normalise(evidence)
        try:
            target = float(answer)
        except ValueError:
            return normalise(answer) in normalise(evidence)
        return any(_close(float(n), target) for n in NUMBER_RE.findall(evidence))


def _names_image(placeholder: str, evidence: str) -> bool:
    number = re.sub(r"\D", "", placeholder)
    return re.search(rf"<image\s*{number}>", evidence, re.IGNORECASE) is not None


def _close(a: float, b: float) -> bool:
    return abs(a - b) <= 1e-6 * max(1.0, abs(a), abs(b))


def scene_of(item: Item) -> Scene | None:
    """The measurable scene of a gauge-like item: a numeric item whose data gives the dial's range
    (``meta["min"]``, ``meta["max"]``) and graduation; None for any other item."""
    meta = item.meta or {}
    if item.answer_type is not AnswerType.NUMERIC or meta.get("min") is None or meta.get("max") is None:
        return None
    try:
        low, high, value = float(meta["min"]), float(meta["max"]), float(str(item.answer))
    except (TypeError, ValueError):
        return None
    grad = meta.get("graduation") or abs(high - low) / 10 or 1.0
    return Scene(low, high, float(grad), value)


def seen_item(item: Item, *, with_key: bool = False) -> SeenItem:
    """What the model can know of ``item``; the gold of an MCQ only with the key-based fallback."""
    pixels = 0 if item.options else len((item.meta or {}).get("options") or [])
    gold = str(item.answer).strip() if with_key and item.answer is not None else None
    return SeenItem(
        item_id=item.id,
        question=item.question,
        options=tuple(item.options or ()),
        answer_type=item.answer_type,
        images=tuple(Path(p) for p in item.images),
        n_pixel_options=pixels,
        scene=scene_of(item),
        key_gold=gold,
    )


class ItemIndex:
    """Items of the run's benchmark, indexed by normalised question text and image file digest."""

    def __init__(self, items: Sequence[Item], *, with_key: bool = False) -> None:
        self.entries = [seen_item(it, with_key=with_key) for it in items]
        self._questions = [(normalise(e.question), e) for e in self.entries]
        self._digests: dict[Path, str] = {}
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self.entries)

    def digest(self, path: Path) -> str:
        with self._lock:
            if path not in self._digests:
                self._digests[path] = hashlib.sha256(Path(path).read_bytes()).hexdigest()
            return self._digests[path]

    def _readable_digest(self, path: Path) -> str | None:
        """The digest of a readable file, else None: one unreadable image (a directory named
        ``x.png``, no permission) is that item's problem, never the whole index's."""
        try:
            return self.digest(path) if path.is_file() else None
        except OSError:
            return None

    @cached_property
    def _by_digest(self) -> dict[str, list[SeenItem]]:
        index: dict[str, list[SeenItem]] = {}
        for e in self.entries:
            for p in e.images:
                if (digest := self._readable_digest(p)) is not None:
                    index.setdefault(digest, []).append(e)
        return index

    def lookup(self, text: str, image_paths: Sequence[Path]) -> SeenItem | None:
        """The item whose question is printed in ``text`` and/or whose image files are attached.

        Several items may share a question (every gauge with the same scale): the attached images
        decide then. Still ambiguous → None (the model cannot tell which item it is).
        """
        norm = normalise(text)
        by_text = [e for q, e in self._questions if q and q in norm]
        index = self._by_digest if image_paths else {}
        by_image = [e for p in image_paths for e in index.get(self._readable_digest(Path(p)) or "", [])]
        candidates = [e for e in by_text if e in by_image] or by_text or by_image
        if not candidates:
            return None
        if len({e.item_id for e in candidates}) > 1:
            if not by_text:
                return None
            # prefer the longest printed question (a question that contains another one)
            longest = max(len(e.question) for e in candidates)
            candidates = [e for e in candidates if len(e.question) == longest]
            if len({e.item_id for e in candidates}) > 1:
                return None
        return candidates[0]


# What every locator of this process has loaded and matched, by what decides it: the sources (the
# index's item ids and image paths, in order) and, for a match, the threshold, the cap and the
# crop's pixels. The jobs of a sweep that Hydra's basic launcher runs in one process (and the null
# test's replicates) each build a locator over the same benchmark and trace the same crops; the
# template matching was most of a simulated run's CPU. A match is kept as the entry's position,
# since each job's index has its own entries.
_SOURCES: dict[tuple[Any, ...], list[tuple[int, Any, float]]] = {}
_MATCHES: dict[tuple[Any, ...], int | None] = {}
_MEMO_LOCK = threading.Lock()


class CropLocator:
    """Traces a zoomed crop back to the item image it was cut from (normalised template matching).

    Scales are the zoom factors tried (a crop of a region of ``w`` pixels is ``z·w`` wide); a match
    must reach ``threshold`` correlation. Sources are kept as small grey arrays. Crop-zoom caps its
    output at ``capped_side`` (perception's ``CropConfig.max_output_side``), so a zone of a large
    photo is zoomed by less than ``z``; a crop whose longer side is that cap is searched over the
    scales that cap allows for each source, in steps of ``fine_step`` (geometric).
    """

    scales = (2.5, 2.0, 3.0, 1.5, 1.0)
    work_side = 256
    fine_step = 1.02

    def __init__(self, index: ItemIndex, threshold: float = 0.8, capped_side: int = 4096) -> None:
        self.index, self.threshold, self.capped_side = index, threshold, capped_side
        self._sources_key = tuple((e.item_id, tuple(map(str, e.images))) for e in index.entries)
        self._lock = threading.Lock()

    def _load_sources(self) -> list[tuple[int, Any, float]]:
        """(entry position, grey array, shrink factor) of every readable image of the index."""
        import numpy as np

        with self._lock:
            with _MEMO_LOCK:
                if self._sources_key in _SOURCES:
                    return _SOURCES[self._sources_key]
            out = []
            for i, e in enumerate(self.index.entries):
                for p in e.images:
                    try:  # upright, RGB on white, downscaled: the very pixels perception crops from
                        g = load_image(Path(p)).image.convert("L")
                    except (OSError, ImageLoadError):
                        continue
                    f = self.work_side / max(g.size)
                    small = g.resize((max(1, round(g.width * f)), max(1, round(g.height * f))))
                    out.append((i, np.asarray(small, dtype=np.float32), f))
            with _MEMO_LOCK:
                return _SOURCES.setdefault(self._sources_key, out)

    def locate(self, crop: Image.Image) -> SeenItem | None:
        from ledgermind.simulator.vision import pixel_digest

        key = (self._sources_key, self.threshold, self.capped_side, pixel_digest(crop))
        with _MEMO_LOCK:
            known = key in _MATCHES
            position = _MATCHES.get(key)
        if not known:
            position = self._match(crop)
            with _MEMO_LOCK:
                _MATCHES[key] = position
        return None if position is None else self.index.entries[position]

    def scales_for(self, crop_side: int, f: float) -> tuple[float, ...]:
        """Zooms to try for a crop whose longer side is ``crop_side`` against a source shrunk by ``f``."""
        if crop_side < self.capped_side:
            return self.scales
        # capped: zoom = cap / region side ≤ the largest zoom, and a region is at most the whole
        # image (side work_side / f), so the zoom is at least cap·f / work_side
        lo, z = max(1.0, self.capped_side * f / self.work_side), max(self.scales)
        fine = []
        while z >= lo:
            fine.append(z)
            z /= self.fine_step
        return tuple(fine)

    def _match(self, crop: Image.Image) -> int | None:
        """The position of the entry whose image best matches ``crop`` above the threshold."""
        try:
            import cv2
            import numpy as np
        except ImportError:  # pragma: no cover — opencv comes with the OCR extra
            return None
        side = max(crop.size)
        gray = crop.convert("L")
        if side > 2 * self.work_side:  # templates are at most work_side: shrink a big crop once, not per try
            k = 2 * self.work_side / side
            gray = gray.resize(
                (max(1, round(gray.width * k)), max(1, round(gray.height * k))), Image.Resampling.BOX
            )
        gw, gh = crop.size
        best: tuple[float, int | None] = (self.threshold, None)
        for position, src, f in self._load_sources():
            for z in self.scales_for(side, f):
                w, h = round(gw * f / z), round(gh * f / z)
                if w < 8 or h < 8 or w > src.shape[1] or h > src.shape[0]:
                    continue
                tmpl = np.asarray(gray.resize((w, h)), dtype=np.float32)
                if float(tmpl.std()) < 1e-3:
                    continue
                score = float(cv2.matchTemplate(src, tmpl, cv2.TM_CCOEFF_NORMED).max())
                if score > best[0]:
                    best = (score, position)
        return best[1]

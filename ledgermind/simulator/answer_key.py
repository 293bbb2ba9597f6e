"""The simulator's only privileged knowledge: the benchmark's answer key.

Built from the same benchmark config as the run, it finds the item a request is about the way a
reader would recognise a question it has seen: by the question text printed in the prompt and by
the image files attached. A zoomed crop (a PIL image the pipeline made) is traced back to its
source image by template matching, so a gauge crop is "the gauge of item X". Nothing else about
the agent, the stage or the run is known to the simulator.
"""

from __future__ import annotations

import hashlib
import re
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from PIL import Image

from ledgermind.benchmarks.item import AnswerType, Item
from ledgermind.simulator.tasks import normalise
from perception.image_io import ImageLoadError, load_image

NUMBER_RE = re.compile(r"-?\d+(?:\.\d+)?")
PLACEHOLDER_RE = re.compile(r"<image\s*\d+>", re.IGNORECASE)


@dataclass(frozen=True)
class KeyEntry:
    """Gold answer and options of one item (``gold`` is a letter for MCQs)."""

    item_id: str
    question: str
    options: tuple[str, ...]
    gold: str
    answer_type: AnswerType
    images: tuple[Path, ...]

    @property
    def is_mcq(self) -> bool:
        return bool(self.options)

    @property
    def gold_number(self) -> float | None:
        if self.is_mcq:
            return None
        try:
            return float(self.gold)
        except ValueError:
            return None

    @property
    def is_knowledge(self) -> bool:
        """A question answered from knowledge rather than by reading a value (where F3 strikes)."""
        return self.gold_number is None

    def is_gold(self, answer: str) -> bool:
        """Is ``answer`` (a letter, a number or a short text) the gold answer? The simulator's own
        judgement, used only to decide what a fault changes (it never scores a run)."""
        a = answer.strip()
        if self.is_mcq:
            return a[:1].upper() == self.gold.upper() and (len(a) == 1 or not a[1].isalnum())
        g = self.gold_number
        if g is not None:
            try:
                return _close(float(a), g)
            except ValueError:
                return False
        return normalise(a) == normalise(self.gold)

    def option_text(self, letter: str) -> str:
        """The option a letter names; "" for anything that is not one option letter."""
        if len(letter.strip()) != 1:
            return ""
        i = ord(letter.strip().upper()) - ord("A")
        return self.options[i] if 0 <= i < len(self.options) else ""

    def letters(self) -> list[str]:
        return [chr(ord("A") + i) for i in range(len(self.options))]

    def display(self, answer: str) -> str:
        """'C' → 'C. <option text>' (what a model writes when it commits to an option)."""
        return f"{answer}. {self.option_text(answer)}" if self.is_mcq else answer

    def evidence_has(self, answer: str, evidence: str) -> bool:
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


def file_digest(path: Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


class AnswerKey:
    """Items of the run's benchmark, indexed by normalised question text and image file digest."""

    def __init__(self, items: Sequence[Item]) -> None:
        self.entries = [
            KeyEntry(
                item_id=it.id,
                question=it.question,
                options=tuple(it.options or ()),
                gold=str(it.answer or "").strip(),
                answer_type=it.answer_type,
                images=tuple(Path(p) for p in it.images),
            )
            for it in items
            if it.answer is not None
        ]
        self._questions = [(normalise(e.question), e) for e in self.entries]
        self._by_digest: dict[str, list[KeyEntry]] | None = None
        self._digests: dict[Path, str] = {}
        self._lock = threading.Lock()

    @classmethod
    def from_benchmark(cls, benchmark: Mapping[str, Any] | None) -> AnswerKey:
        """Load the benchmark the run uses (the ``benchmark`` config node); an empty key if none."""
        if not benchmark:
            return cls([])
        from ledgermind.benchmarks.registry import load_benchmark

        node = dict(benchmark)
        return cls(load_benchmark(str(node.get("name")), node))

    def __len__(self) -> int:
        return len(self.entries)

    def digest(self, path: Path) -> str:
        with self._lock:
            if path not in self._digests:
                self._digests[path] = file_digest(path)
            return self._digests[path]

    def _readable_digest(self, path: Path) -> str | None:
        """The digest of a readable file, else None: one unreadable image (a directory named
        ``x.png``, no permission) is that item's problem, never the whole key's."""
        try:
            return self.digest(path) if path.is_file() else None
        except OSError:
            return None

    def _digest_index(self) -> dict[str, list[KeyEntry]]:
        if self._by_digest is None:
            index: dict[str, list[KeyEntry]] = {}
            for e in self.entries:
                for p in e.images:
                    if (digest := self._readable_digest(p)) is not None:
                        index.setdefault(digest, []).append(e)
            self._by_digest = index
        return self._by_digest

    def lookup(self, text: str, image_paths: Sequence[Path]) -> KeyEntry | None:
        """The item whose question is printed in ``text`` and/or whose image files are attached.

        Several items may share a question (every gauge with the same scale): the attached images
        decide then. Still ambiguous with different gold answers → None (the model cannot know).
        """
        norm = normalise(text)
        by_text = [e for q, e in self._questions if q and q in norm]
        by_image: list[KeyEntry] = []
        if image_paths:
            index = self._digest_index()
            for p in image_paths:
                digest = self._readable_digest(Path(p))
                by_image += index.get(digest, []) if digest is not None else []
        if by_text and by_image:
            both = [e for e in by_text if e in by_image]
            candidates = both or by_text
        else:
            candidates = by_text or by_image
        if not candidates:
            return None
        if len({(e.gold, e.options) for e in candidates}) > 1:
            if not by_text:
                return None
            # prefer the longest printed question (a question that contains another one)
            longest = max(len(e.question) for e in candidates)
            candidates = [e for e in candidates if len(e.question) == longest]
            if len({(e.gold, e.options) for e in candidates}) > 1:
                return None
        return candidates[0]


class CropLocator:
    """Traces a zoomed crop back to the key image it was cut from (normalised template matching).

    Scales are the zoom factors tried (a crop of a region of ``w`` pixels is ``z·w`` wide); a match
    must reach ``threshold`` correlation. Sources are kept as small grey arrays. Crop-zoom caps its
    output at ``capped_side`` (perception's ``CropConfig.max_output_side``), so a zone of a large
    photo is zoomed by less than ``z``; a crop whose longer side is that cap is searched over the
    scales that cap allows for each source, in steps of ``fine_step`` (geometric).
    """

    def __init__(
        self, key: AnswerKey, scales: Sequence[float] = (2.5, 2.0, 3.0, 1.5, 1.0), threshold: float = 0.8,
        work_side: int = 256, capped_side: int = 4096, fine_step: float = 1.02,
    ) -> None:  # fmt: skip
        self.key, self.scales, self.threshold, self.work_side = key, tuple(scales), threshold, work_side
        self.capped_side, self.fine_step = capped_side, fine_step
        self._sources: list[tuple[KeyEntry, Any, float]] | None = None
        self._lock = threading.Lock()
        self._found: dict[str, KeyEntry | None] = {}  # pixel digest → match (Dual-Read sends one crop twice)

    def _load_sources(self) -> list[tuple[KeyEntry, Any, float]]:
        import numpy as np

        with self._lock:
            if self._sources is None:
                out = []
                for e in self.key.entries:
                    for p in e.images:
                        try:  # upright, RGB on white, downscaled: the very pixels perception crops from
                            g = load_image(Path(p)).image.convert("L")
                        except (OSError, ImageLoadError):
                            continue
                        f = self.work_side / max(g.size)
                        small = g.resize((max(1, round(g.width * f)), max(1, round(g.height * f))))
                        out.append((e, np.asarray(small, dtype=np.float32), f))
                self._sources = out
            return self._sources

    def locate(self, crop: Image.Image) -> KeyEntry | None:
        from ledgermind.simulator.vision import pixel_digest

        key = pixel_digest(crop)
        if key not in self._found:
            self._found[key] = self._match(crop)
        return self._found[key]

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

    def _match(self, crop: Image.Image) -> KeyEntry | None:
        try:
            import cv2
            import numpy as np
        except ImportError:  # pragma: no cover — opencv comes with the OCR extra
            return None
        side = max(crop.size)
        gray = crop.convert("L")
        if side > 2 * self.work_side:  # templates are at most work_side: shrink a big crop once, not per try
            k = 2 * self.work_side / side
            gray = gray.resize((max(1, round(gray.width * k)), max(1, round(gray.height * k))), Image.Resampling.BOX)
        gw, gh = crop.size
        best: tuple[float, KeyEntry | None] = (self.threshold, None)
        for entry, src, f in self._load_sources():
            for z in self.scales_for(side, f):
                w, h = round(gw * f / z), round(gh * f / z)
                if w < 8 or h < 8 or w > src.shape[1] or h > src.shape[0]:
                    continue
                tmpl = np.asarray(gray.resize((w, h)), dtype=np.float32)
                if float(tmpl.std()) < 1e-3:
                    continue
                score = float(cv2.matchTemplate(src, tmpl, cv2.TM_CCOEFF_NORMED).max())
                if score > best[0]:
                    best = (score, entry)
        return best[1]

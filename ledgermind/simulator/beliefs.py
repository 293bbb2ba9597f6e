"""What the simulated model believes about an item: a real model's answers, never the answer key.

Why: an instrument whose model is right with a fixed probability on every item, re-rolled on every
re-ask, restates how it was built. A real model's answers to an item are correlated
across rephrasings and its errors concentrate on hard items. So the belief about an MCQ item is
the distribution of a real model's recorded answers to that very item — the official GPT-4o
replies of MMMU-Pro in four prompt settings (``<benchmark.path>/gpt4o_outputs/*.jsonl``, the letter
the official parser took from each reply, ``pred_indexs``) — smoothed over all options. The first
answer is drawn once per (seed, item); a changed request re-draws from the same distribution with
the rephrasing sensitivity (``faults.FaultRates.rephrase_sensitivity``).

Scenes with a measurable truth (gauges) are perceived, not believed: ``ReadingModel`` turns the
needle value into what a look at the image or a crop reports, through continuous noise whose scale
depends on what the pixels show (scale labels legible or not).

Where no recorded answers exist, the belief is uniform over the options (an uninformed model),
unless the run asks for the documented key-based fallback (``belief_source=key``: the gold with
``p_correct``, the rest spread evenly), which reads the key and is marked as such in the run
config and identity. Table 3 never uses it by default.
"""

from __future__ import annotations

import math
import random
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ledgermind.errors import ConfigError
from ledgermind.jsonl import BadLine, read_jsonl
from ledgermind.simulator.items import NUMBER_RE, Scene, SeenItem

RECORDED_DIR = "gpt4o_outputs"  # the shared layout: <benchmark.path>/gpt4o_outputs/<setting>.jsonl
UNINFORMED = "uniform"


@dataclass(frozen=True)
class Belief:
    """A distribution over an item's answers and where it came from (recorded / uniform / key)."""

    answers: tuple[str, ...]
    weights: tuple[float, ...]
    source: str

    def draw(self, rng: random.Random, exclude: Iterable[str] = ()) -> str:
        """One answer by weight, never one of ``exclude`` (uniform among the rest if they carry no weight)."""
        banned = {x.upper() for x in exclude}
        pool = [(a, w) for a, w in zip(self.answers, self.weights, strict=True) if a.upper() not in banned]
        if not pool:
            return self.answers[0] if self.answers else ""
        total = sum(w for _, w in pool)
        if total <= 0:
            return rng.choice([a for a, _ in pool])
        x = rng.random() * total
        for a, w in pool:
            x -= w
            if x < 0:
                return a
        return pool[-1][0]

    def weight(self, answer: str) -> float:
        return next((w for a, w in zip(self.answers, self.weights, strict=True) if a == answer.upper()), 0.0)


class RecordedAnswers:
    """Letters a real model gave per item id, one per recorded setting (the official parser's ``pred_indexs``).

    ``texts``: the option texts the letters refer to (the 10-option list of the shared layout's
    ``items.jsonl``), so a run over another option list (standard-4) maps each recorded choice to
    its own letter by text; a choice it does not offer carries no information (spread evenly)."""

    def __init__(
        self, letters: Mapping[str, Sequence[str]], texts: Mapping[str, Sequence[str]] | None = None
    ) -> None:
        self.letters = {k: [x for x in v if x] for k, v in letters.items()}
        self.texts = dict(texts or {})

    def __len__(self) -> int:
        return len(self.letters)

    @classmethod
    def load(cls, files: Sequence[Path], items_file: Path | None = None) -> RecordedAnswers:
        letters: dict[str, list[str]] = {}
        for f in files:
            for row in read_jsonl(Path(f), torn_tail=False, objects=True, what="a recorded answer row"):
                if "id" not in row.value:
                    raise ConfigError(f"{f}:{row.line_no}: not a recorded answer row (id, pred_indexs)")
                pred = row.value.get("pred_indexs")
                if isinstance(pred, str) and len(pred.strip()) == 1 and pred.strip().isalpha():
                    letters.setdefault(str(row.value["id"]), []).append(pred.strip().upper())
        texts: dict[str, list[str]] = {}
        if items_file is not None and items_file.is_file():
            for row in read_jsonl(items_file, bad=BadLine.SKIP, objects=True):
                if isinstance(row.value.get("options"), list):  # options only: never `answer`
                    texts[str(row.value.get("id"))] = [str(o) for o in row.value["options"]]
        return cls(letters, texts)

    @classmethod
    def from_benchmark(
        cls, benchmark: Mapping[str, Any] | None, paths: Sequence[str] = ()
    ) -> RecordedAnswers:
        """The configured files, else every ``*.jsonl`` of ``<benchmark.path>/gpt4o_outputs/`` (none: empty)."""
        root = Path(str((benchmark or {}).get("path") or "")).expanduser()
        files = [Path(p).expanduser() for p in paths]
        for f in files:
            if not f.is_file():
                raise ConfigError(f"backend.recorded_answers: no such file {f}")
        if not files and (root / RECORDED_DIR).is_dir():
            files = sorted((root / RECORDED_DIR).glob("*.jsonl"))
        return cls.load(files, root / "items.jsonl") if files else cls({})

    def choices(self, item: SeenItem) -> list[str | None]:
        """The recorded choices as this item's letters (None: a choice this option list lacks)."""
        out: list[str | None] = []
        ten = self.texts.get(item.item_id)
        for letter in self.letters.get(item.item_id, []):
            if ten and item.options and len(item.options) != len(ten):
                i = ord(letter) - ord("A")
                out.append(item.letter_of(ten[i]) if 0 <= i < len(ten) else None)
            else:
                out.append(letter if letter in item.letters() else None)
        return out


def recorded_belief(item: SeenItem, recorded: RecordedAnswers, smoothing: float) -> Belief:
    """Counts of the recorded choices plus ``smoothing`` spread evenly over the options; a choice
    the option list lacks is spread evenly too. Uniform when nothing was recorded for the item."""
    letters = item.letters()
    choices = recorded.choices(item)
    if not letters:
        return Belief((), (), UNINFORMED)
    if not choices:
        return Belief(tuple(letters), tuple(1.0 for _ in letters), UNINFORMED)
    spread = (smoothing + sum(1 for c in choices if c is None)) / len(letters)
    weights = tuple(spread + sum(1 for c in choices if c == x) for x in letters)
    return Belief(tuple(letters), weights, f"recorded:{len(choices)}")


def key_belief(item: SeenItem, p_correct: float) -> Belief:
    """The documented key-based fallback: the gold with ``p_correct``, the rest spread evenly over
    the other options (an open question: no answer, i.e. what is legible, for the rest)."""
    letters = item.letters()
    if item.key_gold is None:
        return Belief(tuple(letters), tuple(1.0 for _ in letters), UNINFORMED)
    if not letters:
        return Belief((item.key_gold, ""), (p_correct, 1.0 - p_correct), "key")
    gold = item.key_gold.strip()[:1].upper()
    rest = (1.0 - p_correct) / max(1, len(letters) - 1)
    return Belief(tuple(letters), tuple(p_correct if x == gold else rest for x in letters), "key")


# ---------------------------------------------------------------------------- measurable scenes
@dataclass(frozen=True)
class ReadingModel:
    """What a look at a dial reports: the needle value plus continuous noise.

    The noise is Laplace (continuous, both signs, heavier tails than a normal) with scale
    ``read_noise`` graduations when the look shows scale labels in the dial's range (the value can
    be placed between them), ``unanchored_noise`` × span when it shows none; a zoomed crop divides
    the scale by ``zoom_precision`` (1 by default: no built-in benefit of zooming); with
    ``gross_error_rate`` the look is a guess anywhere on the dial. Nothing here knows the agent's
    tolerances: an error is as likely just inside δ_read as just outside it."""

    read_noise: float
    unanchored_noise: float
    zoom_precision: float
    gross_error_rate: float

    def read(self, scene: Scene, rng: random.Random, *, legible: Sequence[str], zoomed: bool) -> float:
        if rng.random() < self.gross_error_rate:
            return _round(rng.uniform(min(scene.low, scene.high), max(scene.low, scene.high)), scene)
        scale = (
            self.read_noise * scene.graduation
            if anchored(scene, legible)
            else self.unanchored_noise * scene.span
        )
        scale /= self.zoom_precision if zoomed else 1.0
        return _round(scene.value + laplace(rng, scale), scene)

    @staticmethod
    def misread(scene: Scene, value: float) -> bool:
        """A reading more than one graduation off (the census's "misread"; the agent never sees this)."""
        return abs(value - scene.value) > scene.graduation + 1e-9


def anchored(scene: Scene, legible: Sequence[str]) -> bool:
    """Does the look show at least one scale label of this dial (a number within its range)?"""
    lo, hi = min(scene.low, scene.high), max(scene.low, scene.high)
    return any(lo <= float(n) <= hi for line in legible for n in NUMBER_RE.findall(line))


def laplace(rng: random.Random, scale: float) -> float:
    if scale <= 0:
        return 0.0
    u = rng.random() - 0.5
    return -scale * math.copysign(1.0, u) * math.log(max(1e-12, 1 - 2 * abs(u)))


def _round(v: float, scene: Scene) -> float:
    """A reading as a person writes it: to a tenth of a graduation."""
    step = scene.graduation / 10 if scene.graduation > 0 else 0.01
    digits = max(0, -math.floor(math.log10(step))) if step < 1 else 0
    return round(v, digits)

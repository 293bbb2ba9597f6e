"""``backend=simulated``: an MLLM stand-in with known, configurable failure modes (a test instrument).

Why: no real multimodal weights run on the CPU machines, and a tiny random model answers garbage,
so no run could show whether a mechanism catches what it exists to catch. This backend behaves
like an MLLM whose beliefs come from a real model's recorded answers (``beliefs.py``) and whose
failures are injected at configured rates, independently of correctness, and recorded in every
reply's ``meta["simulator"]``, so a Table 3 multirun can be compared with the faults injected.

What it sees is only what a real model sees: the request's messages (text and images) and its
sampling parameters. It recognises the task by the output format the request asks for
(``tasks.py``), reads images with the project's own OCR (``vision.py``), and knows the run's items
as a reader of the prompt does (``items.py``: question, options, images — never the answer key,
which only the scorer reads; the documented ``belief_source=key`` fallback is the one exception).
It never reads ``request.stage``. It answers as its own model, ``simulated-backbone``, whatever
``model=`` says, with its own image budget (``backend.own_model`` in ``conf/backend/simulated.yaml``).

Determinism: a reply is a function of the run seed, the item and the request. A request with the
same *content* (task, evidence, claims, images, sampling) as another gets the same reply, whatever
its wording, unless its bytes re-roll it (``rephrase_sensitivity``): a real model at temperature 0
repeats itself on an identical prompt and mostly, not always, on a rephrased one.
"""

from __future__ import annotations

import hashlib
import json
import re
import sys
from collections.abc import Mapping, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from PIL import Image

from ledgermind.backends.base import BACKENDS, Backend, BackendDescription, GenerationRequest, Reply
from ledgermind.benchmarks.item import Item
from ledgermind.benchmarks.registry import load_benchmark
from ledgermind.errors import ConfigError
from ledgermind.simulator import plugin as _plugin  # registers the census section and S-RFA check
from ledgermind.simulator.beliefs import Belief, RecordedAnswers, key_belief, recorded_belief
from ledgermind.simulator.faults import BELIEF_SOURCES, Fault, FaultRates, Injected, rates_from_config, seeded
from ledgermind.simulator.items import CropLocator, ItemIndex, SeenItem
from ledgermind.simulator.label import LABEL, NOTE, TAGS
from ledgermind.simulator.replies import Draft, Mind, compose
from ledgermind.simulator.tasks import PromptView
from ledgermind.simulator.vision import Vision, pixel_digest

FORMAT_BREAK = "Let me look at this more carefully before I commit to anything."


@BACKENDS.register("simulated")
class SimulatedBackend(Backend):
    name = "simulated"
    description = BackendDescription(label=LABEL, disclaimer=NOTE, tags=TAGS, plugin=_plugin.__name__)
    supports_structured_output = True

    def __init__(
        self,
        model: Mapping[str, Any] | None = None,
        benchmark: Mapping[str, Any] | None = None,
        seed: int = 0,
        faults: str | bool = "on",
        vision_ocr: Any = None,
        vision_cache_dir: str | None = None,
        perception_cache: str | None = None,
        crop_match_threshold: float = 0.8,
        crop_capped_side: int = 4096,
        banner: bool = True,
        belief_source: str = "recorded",
        recorded_answers: list[str] | tuple[str, ...] | None = None,
        items: Sequence[Item] | None = None,
        recorded: RecordedAnswers | None = None,
        **rates: Any,
    ) -> None:
        self.rates: FaultRates = rates_from_config(faults, **rates)
        perfect = str(faults).lower() in {"off", "false"}
        self.belief_source = "key" if perfect else str(belief_source)
        if self.belief_source not in BELIEF_SOURCES:
            raise ConfigError(f"backend.belief_source must be one of {BELIEF_SOURCES}, got {belief_source!r}")
        self.seed = int(seed)
        with_key = self.belief_source == "key"
        # ``items``/``recorded``: given directly by tests; a run loads them from its benchmark config
        if items is None and benchmark:
            items = load_benchmark(str(benchmark.get("name")), dict(benchmark))
        self.index = ItemIndex(items or (), with_key=with_key)
        self.recorded = (
            recorded
            if recorded is not None
            else RecordedAnswers.from_benchmark(benchmark, recorded_answers or ())
        )
        self._beliefs: dict[str, Belief] = {}
        self.vision = Vision(vision_ocr, vision_cache_dir, perception_cache)
        self.locator = CropLocator(
            self.index, threshold=crop_match_threshold, capped_side=int(crop_capped_side)
        )
        # backend.own_model (app adopts it)
        self._model_id = str((model or {}).get("name") or "simulated-backbone")
        if banner:
            print(
                f"NOTE: backend=simulated. {NOTE}. Beliefs: {self.belief_source} "
                f"({len(self.recorded)} items with recorded answers). Rates: {asdict(self.rates)}",
                file=sys.stderr,
                flush=True,
            )

    def belief(self, item: SeenItem) -> Belief:
        """The item's belief (module ``beliefs``), computed once per item."""
        if item.item_id not in self._beliefs:
            if self.belief_source == "key":
                self._beliefs[item.item_id] = key_belief(item, self.rates.p_correct)
            else:
                self._beliefs[item.item_id] = recorded_belief(
                    item, self.recorded, self.rates.belief_smoothing
                )
        return self._beliefs[item.item_id]

    # ------------------------------------------------------------------ request → reply
    async def generate(self, request: GenerationRequest) -> Reply:
        import asyncio

        return await asyncio.to_thread(self.respond, request)

    def respond(self, request: GenerationRequest) -> Reply:
        text = "\n".join(m.text_content() for m in request.messages)
        images = [p for m in request.messages for p in m.images()]
        paths = [Path(p) for p in images if not isinstance(p, Image.Image)]
        item = self.index.lookup(text, paths)
        crops = [p for p in images if isinstance(p, Image.Image)]
        if item is None and crops:
            item = next((e for p in crops if (e := self.locator.locate(p))), None)
        view = PromptView.of(text, item.question if item else None, request.json_schema)
        item_key = item.item_id if item else "-"
        full_key = self._request_key(request, images)
        content_key = self._content_key(view, request, images, item.named_in(view.context) if item else [])
        redrawn = seeded(self.seed, item_key, full_key, "coin").random() < self.rates.rephrase_sensitivity
        rng = seeded(self.seed, item_key, full_key if redrawn else content_key)
        mind = Mind(
            rates=self.rates,
            rng=rng,
            item_rng=lambda what: seeded(self.seed, item_key, what),
            redrawn=redrawn,
            item=item,
            belief=self.belief(item) if item else None,
            view=view,
            look=lambda: [line for img in images for line in self.vision.lines(img)],
            item_look=lambda: [line for p in (item.images if item else ()) for line in self.vision.lines(p)],
            has_images=bool(images),
            zoomed=bool(crops) and not paths,
        )
        draft = self._draft(mind, request)
        return Reply(
            text=draft.text,
            completion_tokens=len(draft.text.split()),
            prompt_tokens=len(text.split()),
            backend=self.name,
            model=self.model_id,
            meta={
                "simulator": {
                    "task": view.task.value,
                    "item": item.item_id if item else None,
                    "belief": self.belief(item).source if item else None,
                    "answer": draft.answer,
                    "redrawn": redrawn,
                    "faults": [f.to_dict() for f in draft.faults],
                    **({"reading": draft.reading} if draft.reading else {}),
                }
            },
        )

    def _draft(self, mind: Mind, request: GenerationRequest) -> Draft:
        """Empty and format faults first (they replace the whole reply), then the task's reply."""
        if mind.rng.random() < self.rates.empty_rate:
            return Draft("", faults=[Injected(Fault.EMPTY, {})])
        broken = mind.rng.random() < self.rates.format_error_rate
        draft = compose(mind)
        if broken:
            return Draft(_break(draft, request), faults=[Injected(Fault.FORMAT, {})])
        if _fits(draft.payload, request.json_schema):
            draft.text = json.dumps(draft.payload, ensure_ascii=False)
        elif request.regex:
            draft.text = _fit_regex(draft.text, request.regex)
        return draft

    def _request_key(self, request: GenerationRequest, images: list[Any]) -> str:
        """Everything that determines a reply except the stage label (which a model never sees)."""
        h = hashlib.sha256()
        for m in request.messages:
            h.update(m.role.encode() + b"\0" + m.text_content().encode() + b"\0")
        for digest in self._image_digests(images):
            h.update(digest.encode())
        sampled_seed = request.seed if request.temperature > 0 else None  # greedy decoding ignores the seed
        params = (request.temperature, request.max_tokens, request.stop, sampled_seed, request.regex)
        h.update(repr(params).encode() + json.dumps(request.json_schema, sort_keys=True).encode())
        return h.hexdigest()

    def _content_key(
        self, view: PromptView, request: GenerationRequest, images: list[Any], named: list[str]
    ) -> str:
        """What a request asks, without its wording: the task, the evidence, claims and pool it
        shows, the answer it holds, the options it names, its images and its sampling. Two
        paraphrases of one request share it; a request that shows other evidence does not. (Free
        text such as search results or a flagged problem is not parsed: a request that differs only
        there is re-rolled by its bytes, at ``rephrase_sensitivity``, like any rewording.)"""
        parts = (
            view.task.value,
            [(e.id, e.fact) for e in view.evidence],
            [(c.id, c.stage, c.text) for c in view.claims],
            list(view.pool),
            view.shown_judgment(),
            view.max_items,
            list(view.categories),
            self._image_digests(images),
            (request.temperature, request.seed if request.temperature > 0 else None),
            named,
        )
        return hashlib.sha256(json.dumps(parts, default=str).encode()).hexdigest()

    def _image_digests(self, images: list[Any]) -> list[str]:
        return [pixel_digest(i) if isinstance(i, Image.Image) else self.index.digest(Path(i)) for i in images]


def _fits(payload: Mapping[str, Any] | None, schema: Mapping[str, Any] | None) -> bool:
    """A schema was asked for and the payload has its required keys with non-null values (the
    shapes we produce)."""
    required = (schema or {}).get("required", ())
    return payload is not None and schema is not None and all(payload.get(k) is not None for k in required)


def _break(draft: Draft, request: GenerationRequest) -> str:
    """A reply that breaks the requested format: truncated JSON, or prose without the asked markers."""
    if request.json_schema is not None and draft.payload is not None:
        full = json.dumps(draft.payload, ensure_ascii=False)
        return full[: max(1, len(full) // 2)]
    return FORMAT_BREAK


def _fit_regex(text: str, pattern: str) -> str:
    """The first of: the whole reply, one of its lines, or the value after 'Answer:' that matches."""
    rx = re.compile(pattern)
    candidates = [text, *text.splitlines()]
    if "Answer:" in text:
        candidates.append(text.rsplit("Answer:", 1)[1].split("|")[0].strip())
    return next((c for c in candidates if rx.fullmatch(c)), text)
